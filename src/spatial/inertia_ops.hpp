// The spatial operations on inertias (paper 000 §3; RBDA §2.13), written once over the state
// scalar as those of ops.hpp:
//   times(I, m) = I m            body_force(I, a, v) = I a + v x* I v    (Eq. 5)
//   add_congruence(X, I, I_A): I_A += X^T I X  (Eq. 9 rigid; Eq. 12 articulated)
// with the rotation of X a general matrix, a plane rotation or the identity (by overload).
#pragma once

#include <algorithm>

#include "ops.hpp"

namespace plucker::ops {

// ------------------------------------------------------------------ rigid-body inertia
/// I m = (Ibar w + h x v, m v - h x w).
template <class In, class Mo>
PLUCKER_HOT inline ForceT<scalar_t<Mo>> times(const In& I, const Mo& m) requires is_rigid_inertia<In> {
  using S = scalar_t<Mo>;
  const auto h = load<S>(I.first_moment());
  const auto w = load<S>(m.angular), v = load<S>(m.linear);
  return {mul(rot<S>(I.inertia_origin()), w) + cross(h, v), I.mass() * v - cross(h, w)};
}
/// I e_k, column k of I = [Ibar hx; hx^T m1], read entry by entry (a composite inertia just
/// updated entry by entry is not read back as packets: that stalled store forwarding).
template <class S, class In>
PLUCKER_HOT inline force_t<S> rigid_column(const In& I, int k) {
  const auto& Ib = I.inertia_origin();
  const auto& h = I.first_moment();
  force_t<S> f{};
  const int a = k % 3, i = (a + 1) % 3, j = (a + 2) % 3;
  if (k < 3) {  // [Ibar e_k; e_k x h]
    for (int r = 0; r < 3; ++r) f.angular[r] = Ib(r, k);
    f.linear[i] = -h[j];
    f.linear[j] = h[i];
  } else {  // [h x e_a; m e_a]
    f.angular[i] = h[j];
    f.angular[j] = -h[i];
    f.linear[a] = I.mass();
  }
  return f;
}

/// I a + v x* (I v): the force on a body of inertia I moving with v and accelerating with a (Eq. 5).
template <bool WithVelocity, class In, class Mo>
PLUCKER_HOT inline ForceT<scalar_t<Mo>> body_force(const In& I, const Mo& a, const Mo& v) {
  using S = scalar_t<Mo>;
  const auto Ib = rot<S>(I.inertia_origin());
  const auto h = load<S>(I.first_moment());
  const auto m = I.mass();
  const auto aw = load<S>(a.angular), al = load<S>(a.linear);
  auto fa = mul(Ib, aw) + cross(h, al);
  auto fl = m * al - cross(h, aw);
  if constexpr (WithVelocity) {
    const auto vw = load<S>(v.angular), vl = load<S>(v.linear);
    const auto Iv_ang = mul(Ib, vw) + cross(h, vl), Iv_lin = m * vl - cross(h, vw);
    fa = fa + cross(vw, Iv_ang) + cross(vl, Iv_lin);
    fl = fl + cross(vw, Iv_lin);
  }
  return {fa, fl};
}

// ------------------------------------------------------------------ congruences X^T I X
/// The rotation of a transform as a matrix-like value for the congruences: a row-major copy of
/// a general matrix (or the lane matrix itself), or the structured rotation unchanged.
PLUCKER_HOT inline M3<double> as_m3(const Mat3& E) {
  M3<double> out;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out(r, c) = E(r, c);
  return out;
}
template <class S>
PLUCKER_HOT inline const M3<S>& as_m3(const M3<S>& E) {
  return E;
}
template <int A, class T>
PLUCKER_HOT inline const PlaneRot<A, T>& as_m3(const PlaneRot<A, T>& E) {
  return E;
}
PLUCKER_HOT inline IdentityRot as_m3(IdentityRot) { return {}; }

/// The six distinct entries (00, 11, 22, 01, 02, 12) of a symmetric 3x3 matrix.
template <class S>
struct Sym3 {
  S xx, yy, zz, xy, xz, yz;
  // Entries (a, b) and (b, a) are one member. (A pointer-to-member helper shared by the two
  // accessors was tried: g++ 12 then kept the packed ABA 20-50 % slower.)
  PLUCKER_HOT S operator()(int a, int b) const {
    if (a > b) std::swap(a, b);
    return a == b ? (a == 0 ? xx : a == 1 ? yy : zz) : (a == 0 ? (b == 1 ? xy : xz) : yz);
  }
  PLUCKER_HOT S& ref(int a, int b) {
    if (a > b) std::swap(a, b);
    return a == b ? (a == 0 ? xx : a == 1 ? yy : zz) : (a == 0 ? (b == 1 ? xy : xz) : yz);
  }
};

/// The scalar of a 3x3 matrix given as M3 or Sym3.
template <class Mat>
using entry_t = std::decay_t<decltype(std::declval<const Mat&>()(0, 0))>;

/// E^T B E for a symmetric B (as M3 or Sym3), its six distinct entries: (B E) then the upper
/// entries of E^T (B E), 27 + 18 multiplications.
template <class EA, class Mat>
PLUCKER_HOT inline Sym3<sum_t<EA, entry_t<Mat>>> sandwich_sym(const M3<EA>& E, const Mat& B) {
  M3<sum_t<EA, entry_t<Mat>>> BE;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) BE(r, c) = B(r, 0) * E(0, c) + B(r, 1) * E(1, c) + B(r, 2) * E(2, c);
  auto entry = [&](int a, int b) { return E(0, a) * BE(0, b) + E(1, a) * BE(1, b) + E(2, a) * BE(2, b); };
  return {entry(0, 0), entry(1, 1), entry(2, 2), entry(0, 1), entry(0, 2), entry(1, 2)};
}
/// The same for E = rot_A(q): only the entries in the (i, j) plane change, by the double angle
/// C = c^2 - s^2, S = 2 s c (19 multiplications, 12 additions instead of 54 and 36).
template <int A, class T, class Mat>
PLUCKER_HOT inline Sym3<sum_t<T, entry_t<Mat>>> sandwich_sym(const PlaneRot<A, T>& E, const Mat& B) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
  using BB = entry_t<Mat>;
  using S = sum_t<T, BB>;
  const T s = E.s, c = E.c;
  const T C = c * c - s * s, S2 = 2.0 * s * c;
  const BB mean = 0.5 * (B(i, i) + B(j, j)), half_diff = 0.5 * (B(i, i) - B(j, j));
  S R[3][3];  // upper entries only; (p, q) and (q, p) name the same entry
  auto set = [&R](int p, int q, const S& x) { R[std::min(p, q)][std::max(p, q)] = x; };
  set(A, A, widen<S>(B(A, A)));
  set(A, i, c * B(A, i) - s * B(A, j));
  set(A, j, s * B(A, i) + c * B(A, j));
  set(i, i, mean + half_diff * C - B(i, j) * S2);
  set(j, j, mean - half_diff * C + B(i, j) * S2);
  set(i, j, half_diff * S2 + B(i, j) * C);
  return {R[0][0], R[1][1], R[2][2], R[0][1], R[0][2], R[1][2]};
}
template <class Mat>
PLUCKER_HOT inline Sym3<entry_t<Mat>> sandwich_sym(IdentityRot, const Mat& B) {
  return {B(0, 0), B(1, 1), B(2, 2), B(0, 1), B(0, 2), B(1, 2)};
}

/// target += the rigid-body inertia with parameters (m, h, Ibar), Ibar by its six entries (added
/// entry by entry: a 3x3 temporary written as scalars and added as packets stalls store
/// forwarding).
template <class S, class H>
PLUCKER_HOT inline void add_parameters(RigidBodyInertia& target, double m, const H& h, const Sym3<double>& I) {
  target.add_parameters(m, store(h), I.xx, I.yy, I.zz, I.xy, I.xz, I.yz);
}
template <class S, class M, class H>
PLUCKER_HOT inline void add_parameters(InertiaT<S>& target, const M& m, const H& h, const Sym3<S>& I) {
  target.m += m;
  target.h += h;
  M3<S>& T = target.Ibar;
  T(0, 0) += I.xx, T(1, 1) += I.yy, T(2, 2) += I.zz;
  T(0, 1) += I.xy, T(1, 0) += I.xy, T(0, 2) += I.xz, T(2, 0) += I.xz, T(1, 2) += I.yz, T(2, 1) += I.yz;
}

/// Eq. 9: I_A += X^T I X for a rigid-body inertia I given in B (X = B_X_A). With h1 = E^T h and
/// R = E^T Ibar E (RBDA §2.13):  h_A = h1 + m r,  Ibar_A = R - (h1 r^T + r h_A^T) + (r.h1 + r.h_A) 1.
/// Entry-wise, so in the array form of the 3-vectors (array3).
template <class Xf, class In, class Out>
PLUCKER_HOT inline void add_congruence(const Xf& X, const In& I, Out& target) requires is_rigid_inertia<In> {
  using S = scalar_t<Out>;
  const auto E = as_m3(X.E);
  const auto R = sandwich_sym(E, as_m3(I.inertia_origin()));
  const auto h1 = mul_t(E, array3(I.first_moment()));
  const auto r = array3(X.r);
  const auto hA = h1 + I.mass() * r;
  const auto d = dot(r, h1) + dot(r, hA);
  auto entry = [&](int a, int b) { return R(a, b) - (h1[a] * r[b] + r[a] * hA[b]); };
  add_parameters<S>(target, I.mass(), hA,
                    Sym3<S>{entry(0, 0) + d, entry(1, 1) + d, entry(2, 2) + d, entry(0, 1), entry(0, 2), entry(1, 2)});
}

template <class S>
PLUCKER_HOT inline InertiaT<S>& operator+=(InertiaT<S>& a, const InertiaT<S>& b) {
  a.m += b.m;
  a.h += b.h;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) a.Ibar(r, c) += b.Ibar(r, c);
  return a;
}
/// A constant inertia as the lane inertia of W states.
inline InertiaT<Pack> splat(const RigidBodyInertia& I) {
  InertiaT<Pack> out;
  out.m = simd::splat(I.mass());
  for (int r = 0; r < 3; ++r) {
    out.h[r] = simd::splat(I.first_moment()[r]);
    for (int c = 0; c < 3; ++c) out.Ibar(r, c) = simd::splat(I.inertia_origin()(r, c));
  }
  return out;
}

// ------------------------------------------------------------------ articulated-body inertia
/// Component k of a spatial vector ([angular; linear]).
template <class V>
PLUCKER_HOT inline auto& comp(V& v, int k) {
  return k < 3 ? v.angular[k] : v.linear[k - 3];
}
template <class V>
PLUCKER_HOT inline auto comp(const V& v, int k) {  // by value: a register lane has no address
  return k < 3 ? v.angular[k] : v.linear[k - 3];
}
/// Entry (r, c) of an articulated inertia.
PLUCKER_HOT inline double& entry(ArticulatedBodyInertia& I, int r, int c) { return I.matrix()(r, c); }
PLUCKER_HOT inline double entry(const ArticulatedBodyInertia& I, int r, int c) { return I.matrix()(r, c); }
/// I m for an articulated inertia.
template <class I6, class Mo>
PLUCKER_HOT inline force_t<scalar_t<Mo>> times6(const I6& I, const Mo& m) {
  force_t<scalar_t<Mo>> f;
  for (int r = 0; r < 6; ++r) {
    auto s = entry(I, r, 0) * comp(m, 0);
    for (int c = 1; c < 6; ++c) s += entry(I, r, c) * comp(m, c);
    comp(f, r) = s;
  }
  return f;
}
/// I e_k: column k of an articulated inertia, as a force.
template <class S, class I6>
PLUCKER_HOT inline force_t<S> column6(const I6& I, int k) {
  force_t<S> f;
  for (int r = 0; r < 6; ++r) comp(f, r) = entry(I, r, k);
  return f;
}

/// M E and E^T M for a 3x3 block M (any rotation type).
template <class EA, class MM>
PLUCKER_HOT inline M3<sum_t<EA, MM>> right_mul(const M3<MM>& M, const M3<EA>& E) {
  return mul(M, E);
}
template <class EA, class MM>
PLUCKER_HOT inline M3<sum_t<EA, MM>> left_mul_t(const M3<EA>& E, const M3<MM>& M) {
  M3<sum_t<EA, MM>> out;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out(r, c) = E(0, r) * M(0, c) + E(1, r) * M(1, c) + E(2, r) * M(2, c);
  return out;
}
template <int A, class T, class MM>
PLUCKER_HOT inline M3<sum_t<T, MM>> right_mul(const M3<MM>& M, const PlaneRot<A, T>& E) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;  // columns i, j of M E mix
  M3<sum_t<T, MM>> out;
  for (int k = 0; k < 3; ++k) {
    out(k, A) = M(k, A);
    out(k, i) = E.c * M(k, i) - E.s * M(k, j);
    out(k, j) = E.s * M(k, i) + E.c * M(k, j);
  }
  return out;
}
template <int A, class T, class MM>
PLUCKER_HOT inline M3<sum_t<T, MM>> left_mul_t(const PlaneRot<A, T>& E, const M3<MM>& M) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;  // rows i, j of E^T M mix
  M3<sum_t<T, MM>> out;
  for (int k = 0; k < 3; ++k) {
    out(A, k) = M(A, k);
    out(i, k) = E.c * M(i, k) - E.s * M(j, k);
    out(j, k) = E.s * M(i, k) + E.c * M(j, k);
  }
  return out;
}
template <class MM>
PLUCKER_HOT inline const M3<MM>& right_mul(const M3<MM>& M, IdentityRot) {
  return M;
}
template <class MM>
PLUCKER_HOT inline const M3<MM>& left_mul_t(IdentityRot, const M3<MM>& M) {
  return M;
}

/// Eq. 12's parent update: I_A += X^T I X for an articulated inertia I = [A B; B^T C] given in B
/// (X = B_X_A): the blocks rotated, A1 = E^T A E, B1 = E^T B E, C1 = E^T C E, then shifted by r:
///   A' = A1 + rx B1^T - B2 rx,  B' = B2 = B1 + rx C1,  C' = C1.
template <class Xf, class I6, class T6>
PLUCKER_HOT inline void add_congruence(const Xf& X, const I6& I, T6& target) requires(!is_rigid_inertia<I6>) {
  using S = scalar_t<T6>;
  using B3 = M3<std::decay_t<decltype(entry(I, 0, 0))>>;
  B3 Ab, Bb, Cb;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      Ab(r, c) = entry(I, r, c), Bb(r, c) = entry(I, r, 3 + c), Cb(r, c) = entry(I, 3 + r, 3 + c);
  const auto E = as_m3(X.E);
  const auto A1 = left_mul_t(E, right_mul(Ab, E)), B1 = left_mul_t(E, right_mul(Bb, E)),
             C1 = left_mul_t(E, right_mul(Cb, E));
  const auto r = array3(X.r);  // entry-wise, as in the rigid-body congruence
  M3<S> B2;
  for (int c = 0; c < 3; ++c) {  // column c of rx C1: r x C1(:, c)
    const auto col = cross(r, V3<S>{{C1(0, c), C1(1, c), C1(2, c)}});
    for (int k = 0; k < 3; ++k) B2(k, c) = B1(k, c) + col[k];
  }
  for (int c = 0; c < 3; ++c) {
    const auto rxBt = cross(r, V3<S>{{B1(c, 0), B1(c, 1), B1(c, 2)}});  // column c of rx B1^T
    const int i = (c + 1) % 3, j = (c + 2) % 3;                         // r x e_c = r_j e_i - r_i e_j
    for (int k = 0; k < 3; ++k) {
      entry(target, k, c) += A1(k, c) + rxBt[k] - (B2(k, i) * r[j] - B2(k, j) * r[i]);
      entry(target, k, 3 + c) += B2(k, c);
      entry(target, 3 + c, k) += B2(k, c);
      entry(target, 3 + k, 3 + c) += C1(k, c);
    }
  }
}

// ------------------------------------------------------------------ packed articulated-body inertia
/// An articulated-body inertia [A B; B^T C] ([angular; linear]) by its 21 distinct entries: the
/// symmetric A and C by six each, B by nine. The ABA and the innovations factorisation work on
/// this form, so that Eq. 12's products compute each distinct entry once, as the hand count does
/// (docs/flops.md), and no entry is stored twice.
template <class S>
struct ArticulatedT {
  Sym3<S> A;
  M3<S> B;
  Sym3<S> C;
};
/// Entry (r, c), by value.
template <class S>
PLUCKER_HOT inline S entry(const ArticulatedT<S>& I, int r, int c) {
  if (r < 3) return c < 3 ? I.A(r, c) : I.B(r, c - 3);
  return c < 3 ? I.B(c, r - 3) : I.C(r - 3, c - 3);
}

/// The packed articulated inertia that starts as the rigid-body inertia I = [Ibar hx; hx^T m1]
/// (Eq. 12's I^A_i = I_i).
template <class S>
inline ArticulatedT<S> articulated_packed(const RigidBodyInertia& I) {
  const Mat3& Ib = I.inertia_origin();
  const Vec3& h = I.first_moment();
  auto w = [](double x) { return widen<S>(x); };
  const S m = w(I.mass()), z = w(0.0);
  ArticulatedT<S> out;
  out.A = {w(Ib(0, 0)), w(Ib(1, 1)), w(Ib(2, 2)), w(Ib(0, 1)), w(Ib(0, 2)), w(Ib(1, 2))};
  out.B = M3<S>{{{z, w(-h[2]), w(h[1])}, {w(h[2]), z, w(-h[0])}, {w(-h[1]), w(h[0]), z}}};
  out.C = {m, m, m, z, z, z};
  return out;
}

/// P -= sum_k A_k B_k^T over a joint's d columns, for a sum that is symmetric (Eq. 12's
/// U D^-1 U^T): its 21 distinct entries.
template <class S, class F>
PLUCKER_HOT inline void subtract_symmetric_products(ArticulatedT<S>& P, const F* A, const F* B, int d) {
  auto product = [&](int r, int c) {
    auto s = comp(A[0], r) * comp(B[0], c);
    for (int k = 1; k < d; ++k) s += comp(A[k], r) * comp(B[k], c);
    return s;
  };
  for (int a = 0; a < 3; ++a)
    for (int b = a; b < 3; ++b) {
      P.A.ref(a, b) -= product(a, b);
      P.C.ref(a, b) -= product(3 + a, 3 + b);
    }
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) P.B(a, b) -= product(a, 3 + b);
}

/// Eq. 12's parent update on packed inertias, target += X^T I X (X = B_X_A): A1 = E^T A E and
/// C1 = E^T C E by their six entries (sandwich_sym), B1 = E^T B E, then the shift by r,
///   B' = B1 + rx C1,  A' = A1 + rx B1^T - B' rx  (symmetric: its upper entries),  C' = C1:
/// 186 multiplications and 159 additions for a general rotation, the hand count's.
template <class Xf, class S, class T>
PLUCKER_HOT inline void add_congruence(const Xf& X, const ArticulatedT<S>& I, ArticulatedT<T>& target) {
  const auto E = as_m3(X.E);
  const auto A1 = sandwich_sym(E, I.A), C1 = sandwich_sym(E, I.C);
  const auto B1 = left_mul_t(E, right_mul(I.B, E));
  const auto r = array3(X.r);
  M3<T> B2;  // B1 + rx C1, column c: r x C1(:, c)
  for (int c = 0; c < 3; ++c) {
    const auto col = cross(r, V3<T>{{widen<T>(C1(0, c)), widen<T>(C1(1, c)), widen<T>(C1(2, c))}});
    for (int k = 0; k < 3; ++k) B2(k, c) = B1(k, c) + col[k];
  }
  for (int c = 0; c < 3; ++c) {
    const int i = (c + 1) % 3, j = (c + 2) % 3;  // r x e_c = r_j e_i - r_i e_j
    for (int k = 0; k <= c; ++k) {
      const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;  // (rx B1^T)(k, c) = (r x B1(c, :))_k
      target.A.ref(k, c) += A1(k, c) + (r[k1] * B1(c, k2) - r[k2] * B1(c, k1)) - (B2(k, i) * r[j] - B2(k, j) * r[i]);
      target.C.ref(k, c) += C1(k, c);
    }
    for (int k = 0; k < 3; ++k) target.B(k, c) += B2(k, c);
  }
}

}  // namespace plucker::ops
