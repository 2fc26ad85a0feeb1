// The spatial operations of the recursions (paper 000 §3; RBDA ch. 2), written once over the
// state scalar S: double for one state (the public types Motion, Force, Transform,
// RigidBodyInertia, ArticulatedBodyInertia) or simd::Pack for W states at once (MotionT<Pack>,
// ... below). Each operation loads its operands into the registers of vec3.hpp, computes, and
// stores; which products are cheap is decided by the types of the operands: a transform's
// rotation may be a general matrix, a plane rotation about a body axis (AxisTransform, the
// X_up of a revolute joint whose X_tree is a pure translation), or the identity (Translation).
//
//   apply(X, m) = X m            apply(X, f) = X* f            (B_X_A: A -> B)
//   apply_inverse(X, m) = X^-1 m apply_inverse(X, f) = X^T f   (B -> A)
//   compose(X2, X1) = X2 X1      crm(m, n) = m x n, crf(m, f) = m x* f
//   times(I, m) = I m            body_force(I, a, v) = I a + v x* I v    (Eq. 5)
//   add_congruence(X, I, I_A): I_A += X^T I X  (Eq. 9 rigid; Eq. 12 articulated)
//   dot(m, f)
#pragma once

#include <type_traits>

#include "plucker/spatial/inertia.hpp"
#include "plucker/spatial/transform.hpp"
#include "plucker/spatial/vectors.hpp"
#include "vec3.hpp"

namespace plucker::ops {

// ------------------------------------------------------------------ lane containers
/// Spatial motion / force of W states: [angular; linear], as Motion / Force.
template <class S>
struct MotionT {
  V3<S> angular, linear;
  static MotionT Zero() { return {}; }
};
template <class S>
struct ForceT {
  V3<S> angular, linear;
  static ForceT Zero() { return {}; }
};
/// Plucker transform B_X_A = (E, r) of W states, as Transform.
template <class S>
struct XformT {
  M3<S> E;
  V3<S> r;
};
/// Rigid-body inertia (m, h = m c, Ibar about the origin) of W states, as RigidBodyInertia.
template <class S>
struct InertiaT {
  S m{};
  V3<S> h{};
  M3<S> Ibar{};
  const S& mass() const { return m; }
  const V3<S>& first_moment() const { return h; }
  const M3<S>& inertia_origin() const { return Ibar; }
};
/// Articulated-body inertia (symmetric 6x6, [angular; linear]) of W states.
template <class S>
struct Sym6T {
  S m[6][6];
  S& operator()(int r, int c) { return m[r][c]; }
  const S& operator()(int r, int c) const { return m[r][c]; }
};

/// The container of each kind for a state scalar: the public types for one state.
template <class S>
struct Types {
  using Motion = MotionT<S>;
  using Force = ForceT<S>;
  using Transform = XformT<S>;
  using Inertia = InertiaT<S>;
  using Articulated = Sym6T<S>;
};
template <>
struct Types<double> {
  using Motion = plucker::Motion;
  using Force = plucker::Force;
  using Transform = plucker::Transform;
  using Inertia = RigidBodyInertia;
  using Articulated = ArticulatedBodyInertia;
};
template <class S>
using motion_t = typename Types<S>::Motion;
template <class S>
using force_t = typename Types<S>::Force;

/// The state scalar of a container.
template <class T>
struct scalar_of;
template <>
struct scalar_of<Motion> {
  using type = double;
};
template <>
struct scalar_of<Force> {
  using type = double;
};
template <class S>
struct scalar_of<MotionT<S>> {
  using type = S;
};
template <class S>
struct scalar_of<ForceT<S>> {
  using type = S;
};
template <class T>
using scalar_t = typename scalar_of<std::decay_t<T>>::type;

template <class T>
inline constexpr bool is_rigid_inertia = std::is_same_v<T, RigidBodyInertia>;
template <class S>
inline constexpr bool is_rigid_inertia<InertiaT<S>> = true;

template <class T>
inline constexpr bool is_motion = std::is_same_v<std::decay_t<T>, Motion>;
template <class S>
inline constexpr bool is_motion<MotionT<S>> = true;
template <class T>
inline constexpr bool is_force = std::is_same_v<std::decay_t<T>, Force>;
template <class S>
inline constexpr bool is_force<ForceT<S>> = true;

// Lane arithmetic (the public types have their own operators).
template <class S>
PLUCKER_HOT inline MotionT<S> operator+(const MotionT<S>& a, const MotionT<S>& b) {
  return {a.angular + b.angular, a.linear + b.linear};
}
template <class S>
PLUCKER_HOT inline MotionT<S>& operator+=(MotionT<S>& a, const MotionT<S>& b) {
  a.angular += b.angular, a.linear += b.linear;
  return a;
}
template <class S>
PLUCKER_HOT inline ForceT<S> operator+(const ForceT<S>& a, const ForceT<S>& b) {
  return {a.angular + b.angular, a.linear + b.linear};
}
template <class S>
PLUCKER_HOT inline ForceT<S> operator-(const ForceT<S>& a, const ForceT<S>& b) {
  return {a.angular - b.angular, a.linear - b.linear};
}
template <class S>
PLUCKER_HOT inline ForceT<S> operator*(const ForceT<S>& a, const S& x) {
  return {a.angular * x, a.linear * x};
}
template <class S>
PLUCKER_HOT inline ForceT<S>& operator+=(ForceT<S>& a, const ForceT<S>& b) {
  a.angular += b.angular, a.linear += b.linear;
  return a;
}
template <class S>
PLUCKER_HOT inline ForceT<S>& operator-=(ForceT<S>& a, const ForceT<S>& b) {
  a.angular -= b.angular, a.linear -= b.linear;
  return a;
}

// ------------------------------------------------------------------ typed transforms
/// A transform with a structured rotation: E of type Rot, r a constant of the model.
template <class Rot, class R = Vec3>
struct RotTranslation {
  Rot E;
  R r;
};
/// X_J(q) X_tree of a revolute joint about body axis A whose X_tree is a pure translation r.
template <int A, class S>
using AxisTransform = RotTranslation<PlaneRot<A, S>>;
/// A pure translation (E = 1), e.g. a joint frame X_tree with no rotation; R = V3<Pack> for
/// translations that differ between lanes (a prismatic joint's).
template <class R = Vec3>
using Translation = RotTranslation<IdentityRot, R>;

/// As a general Transform (for storage, or an operation without a structured form).
inline const Transform& to_transform(const Transform& X) { return X; }
template <int A>
inline Transform to_transform(const AxisTransform<A, double>& X) {
  Mat3 E = Mat3::Identity();
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
  E(i, i) = E(j, j) = X.E.c;
  E(i, j) = X.E.s;
  E(j, i) = -X.E.s;
  return Transform(E, X.r);
}
inline Transform to_transform(const Translation<Vec3>& X) { return Transform(Mat3::Identity(), X.r); }
/// The same for W states.
inline const XformT<Pack>& to_xform(const XformT<Pack>& X) { return X; }
template <class Rot, class R>
inline XformT<Pack> to_xform(const RotTranslation<Rot, R>& X) {
  XformT<Pack> out;
  const V3<Pack> e[3] = {{{simd::splat(1.0), Pack{}, Pack{}}}, {{Pack{}, simd::splat(1.0), Pack{}}},
                         {{Pack{}, Pack{}, simd::splat(1.0)}}};
  for (int c = 0; c < 3; ++c) {  // column c of E
    const V3<Pack> col = mul(X.E, e[c]);
    for (int r = 0; r < 3; ++r) out.E(r, c) = col[r];
  }
  const auto r = load<Pack>(X.r);
  for (int k = 0; k < 3; ++k) out.r[k] = widen<Pack>(r[k]);
  return out;
}

// ------------------------------------------------------------------ motions and forces
/// X m = (E w, E (v - r x w)).
template <class Xf, class Mo>
PLUCKER_HOT inline std::decay_t<Mo> apply(const Xf& X, const Mo& m) requires is_motion<Mo> {
  using S = scalar_t<Mo>;
  const auto E = rot<S>(X.E);
  const auto w = load<S>(m.angular);
  return {store(mul(E, w)), store(mul(E, load<S>(m.linear) - cross(load<S>(X.r), w)))};
}
/// The state scalar of a transform.
template <class T>
struct xform_scalar {
  using type = double;  // Transform, and the structured ones with double parameters
};
template <class S>
struct xform_scalar<XformT<S>> {
  using type = S;
};
template <int A>
struct xform_scalar<AxisTransform<A, Pack>> {
  using type = Pack;
};
template <>
struct xform_scalar<Translation<V3<Pack>>> {
  using type = Pack;
};
template <class X>
using xform_scalar_t = typename xform_scalar<std::decay_t<X>>::type;

/// A value of scalar S from a constant (broadcast into the lanes) or from a value of S.
template <class S>
PLUCKER_HOT inline Vec3 as(const Vec3& x) requires std::is_same_v<S, double> {
  return x;
}
#if defined(__AVX2__)
template <class S>
PLUCKER_HOT inline Vec3 as(const R4& x) requires std::is_same_v<S, double> {
  return store(x);
}
#endif
template <class S>
PLUCKER_HOT inline Vec3 as(const V3<double>& x) requires std::is_same_v<S, double> {
  return store(x);
}
template <class S, class T>
PLUCKER_HOT inline V3<Pack> as(const V3<T>& x) requires std::is_same_v<S, Pack> {
  return {{x[0] + Pack{}, x[1] + Pack{}, x[2] + Pack{}}};
}

/// A motion with no angular part, (0, v): the base's acceleration a_0 = (0, -g).
struct LinearMotion {
  Vec3 linear;
};
/// X (0, v) = (0, E v).
template <class Xf>
PLUCKER_HOT inline motion_t<xform_scalar_t<Xf>> apply(const Xf& X, const LinearMotion& m) {
  using S = xform_scalar_t<Xf>;
  motion_t<S> out{};
  out.linear = as<S>(mul(rot<S>(X.E), load<S>(m.linear)));
  return out;
}

/// X^-1 m = (E^T w, E^T v + r x E^T w).
template <class Xf, class Mo>
PLUCKER_HOT inline std::decay_t<Mo> apply_inverse(const Xf& X, const Mo& m) requires is_motion<Mo> {
  using S = scalar_t<Mo>;
  const auto Et = rot_t<S>(X.E);
  const auto w = mul(Et, load<S>(m.angular));
  return {store(w), store(mul(Et, load<S>(m.linear)) + cross(load<S>(X.r), w))};
}
/// X* f = (E (n - r x f), E f).
template <class Xf, class Fo>
PLUCKER_HOT inline std::decay_t<Fo> apply(const Xf& X, const Fo& f) requires is_force<Fo> {
  using S = scalar_t<Fo>;
  const auto E = rot<S>(X.E);
  const auto fl = load<S>(f.linear);
  return {store(mul(E, load<S>(f.angular) - cross(load<S>(X.r), fl))), store(mul(E, fl))};
}
/// X^T f = (E^T n + r x E^T f, E^T f): a force from B to A.
template <class Xf, class Fo>
PLUCKER_HOT inline std::decay_t<Fo> apply_inverse(const Xf& X, const Fo& f) requires is_force<Fo> {
  using S = scalar_t<Fo>;
  const auto Et = rot_t<S>(X.E);
  const auto fl = mul(Et, load<S>(f.linear));
  return {store(mul(Et, load<S>(f.angular)) + cross(load<S>(X.r), fl)), store(fl)};
}
/// out += X^T f.
template <class Xf, class Fo>
PLUCKER_HOT inline void add_apply_inverse(const Xf& X, const Fo& f, Fo& out) requires is_force<Fo> {
  using S = scalar_t<Fo>;
  const auto Et = rot_t<S>(X.E);
  const auto fl = mul(Et, load<S>(f.linear));
  out.angular = store(load<S>(out.angular) + mul(Et, load<S>(f.angular)) + cross(load<S>(X.r), fl));
  out.linear = store(load<S>(out.linear) + fl);
}

/// Motion cross product m x n (Featherstone's crm(m) n).
template <class Mo>
PLUCKER_HOT inline std::decay_t<Mo> crm(const Mo& m, const Mo& n) requires is_motion<Mo> {
  using S = scalar_t<Mo>;
  const auto mw = load<S>(m.angular), mv = load<S>(m.linear), nw = load<S>(n.angular);
  return {store(cross(mw, nw)), store(cross(mw, load<S>(n.linear)) + cross(mv, nw))};
}
/// Force cross product m x* f (crf(m) f).
template <class Mo, class Fo>
PLUCKER_HOT inline std::decay_t<Fo> crf(const Mo& m, const Fo& f) requires(is_motion<Mo>&& is_force<Fo>) {
  using S = scalar_t<Fo>;
  const auto mw = load<S>(m.angular), fl = load<S>(f.linear);
  return {store(cross(mw, load<S>(f.angular)) + cross(load<S>(m.linear), fl)), store(cross(mw, fl))};
}
/// m^T f.
template <class Mo, class Fo>
PLUCKER_HOT inline auto dot(const Mo& m, const Fo& f) requires(is_motion<Mo>&& is_force<Fo>) {
  using S = scalar_t<Fo>;
  return dot(load<S>(m.angular), load<S>(f.angular)) + dot(load<S>(m.linear), load<S>(f.linear));
}

/// Composition X2 X1 = (E2 E1, r1 + E1^T r2) (as Transform::operator*), X1 a lane transform.
template <class X2T, class S>
PLUCKER_HOT inline XformT<S> compose(const X2T& X2, const XformT<S>& X1) {
  XformT<S> out;
  const auto E2 = rot<S>(X2.E);
  for (int c = 0; c < 3; ++c) {  // column c of E2 E1 = E2 (column c of E1)
    const auto col = mul(E2, V3<S>{{X1.E(0, c), X1.E(1, c), X1.E(2, c)}});
    for (int r = 0; r < 3; ++r) out.E(r, c) = col[r];
  }
  out.r = X1.r + mul_t(X1.E, load<S>(X2.r));
  return out;
}
inline Transform compose(const Transform& X2, const Transform& X1) { return X2 * X1; }

// ------------------------------------------------------------------ rigid-body inertia
/// I m = (Ibar w + h x v, m v - h x w).
template <class In, class Mo>
PLUCKER_HOT inline force_t<scalar_t<Mo>> times(const In& I, const Mo& m) requires is_rigid_inertia<In> {
  using S = scalar_t<Mo>;
  const auto h = load<S>(I.first_moment()), w = load<S>(m.angular), v = load<S>(m.linear);
  return {store(mul(rot<S>(I.inertia_origin()), w) + cross(h, v)), store(I.mass() * v - cross(h, w))};
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
PLUCKER_HOT inline force_t<scalar_t<Mo>> body_force(const In& I, const Mo& a, const Mo& v) {
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
  return {store(fa), store(fl)};
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
  PLUCKER_HOT S operator()(int a, int b) const {
    if (a > b) std::swap(a, b);
    return a == b ? (a == 0 ? xx : a == 1 ? yy : zz) : (a == 0 ? (b == 1 ? xy : xz) : yz);
  }
};

/// E^T B E for a symmetric B, its six distinct entries: (B E) then the upper entries of
/// E^T (B E), 27 + 18 multiplications.
template <class EA, class BB>
PLUCKER_HOT inline Sym3<sum_t<EA, BB>> sandwich_sym(const M3<EA>& E, const M3<BB>& B) {
  const auto BE = mul(B, E);
  auto entry = [&](int a, int b) { return E(0, a) * BE(0, b) + E(1, a) * BE(1, b) + E(2, a) * BE(2, b); };
  return {entry(0, 0), entry(1, 1), entry(2, 2), entry(0, 1), entry(0, 2), entry(1, 2)};
}
/// The same for E = rot_A(q): only the entries in the (i, j) plane change, by the double angle
/// C = c^2 - s^2, S = 2 s c (19 multiplications, 12 additions instead of 54 and 36).
template <int A, class T, class BB>
PLUCKER_HOT inline Sym3<sum_t<T, BB>> sandwich_sym(const PlaneRot<A, T>& E, const M3<BB>& B) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
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
template <class BB>
PLUCKER_HOT inline Sym3<BB> sandwich_sym(IdentityRot, const M3<BB>& B) {
  return {B(0, 0), B(1, 1), B(2, 2), B(0, 1), B(0, 2), B(1, 2)};
}

/// The state scalar of an inertia container.
template <>
struct scalar_of<RigidBodyInertia> {
  using type = double;
};
template <class S>
struct scalar_of<InertiaT<S>> {
  using type = S;
};
template <>
struct scalar_of<ArticulatedBodyInertia> {
  using type = double;
};
template <class S>
struct scalar_of<Sym6T<S>> {
  using type = S;
};

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
template <class Xf, class In, class Out>
PLUCKER_HOT inline void add_congruence(const Xf& X, const In& I, Out& target) requires is_rigid_inertia<In> {
  using S = scalar_t<Out>;
  const auto R = sandwich_sym(as_m3(X.E), as_m3(I.inertia_origin()));
  const auto h1 = mul(rot_t<S>(X.E), load<S>(I.first_moment()));
  const auto r = load<S>(X.r);
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
PLUCKER_HOT inline const auto& comp(const V& v, int k) {
  return k < 3 ? v.angular[k] : v.linear[k - 3];
}
/// Entry (r, c) of an articulated inertia.
PLUCKER_HOT inline double& entry(ArticulatedBodyInertia& I, int r, int c) { return I.matrix()(r, c); }
PLUCKER_HOT inline double entry(const ArticulatedBodyInertia& I, int r, int c) { return I.matrix()(r, c); }
template <class S>
PLUCKER_HOT inline S& entry(Sym6T<S>& I, int r, int c) {
  return I(r, c);
}
template <class S>
PLUCKER_HOT inline const S& entry(const Sym6T<S>& I, int r, int c) {
  return I(r, c);
}
/// The articulated inertia of W states that starts as the rigid-body inertia I (Eq. 12's I^A_i = I_i).
inline Sym6T<Pack> articulated_splat(const RigidBodyInertia& I) {
  const Mat6 M = I.matrix();
  Sym6T<Pack> out;
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) out(r, c) = simd::splat(M(r, c));
  return out;
}

/// The articulated inertia that starts as the rigid-body inertia I (Eq. 12's I^A_i = I_i).
template <class S>
inline typename Types<S>::Articulated articulated_of(const RigidBodyInertia& I) {
  if constexpr (std::is_same_v<S, double>)
    return ArticulatedBodyInertia(I);
  else
    return articulated_splat(I);
}

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
    for (int c = 0; c < 3; ++c) Ab(r, c) = entry(I, r, c), Bb(r, c) = entry(I, r, 3 + c), Cb(r, c) = entry(I, 3 + r, 3 + c);
  const auto E = as_m3(X.E);
  const auto A1 = left_mul_t(E, right_mul(Ab, E)), B1 = left_mul_t(E, right_mul(Bb, E)),
             C1 = left_mul_t(E, right_mul(Cb, E));
  const auto r = load<S>(X.r);
  M3<S> B2;
  for (int c = 0; c < 3; ++c) {  // column c of rx C1: r x C1(:, c)
    const auto col = cross(r, make3<S>(C1(0, c), C1(1, c), C1(2, c)));
    for (int k = 0; k < 3; ++k) B2(k, c) = B1(k, c) + col[k];
  }
  for (int c = 0; c < 3; ++c) {
    const auto rxBt = cross(r, make3<S>(B1(c, 0), B1(c, 1), B1(c, 2)));  // column c of rx B1^T
    const int i = (c + 1) % 3, j = (c + 2) % 3;                         // r x e_c = r_j e_i - r_i e_j
    for (int k = 0; k < 3; ++k) {
      entry(target, k, c) += A1(k, c) + rxBt[k] - (B2(k, i) * r[j] - B2(k, j) * r[i]);
      entry(target, k, 3 + c) += B2(k, c);
      entry(target, 3 + c, k) += B2(k, c);
      entry(target, 3 + k, 3 + c) += C1(k, c);
    }
  }
}

}  // namespace plucker::ops
