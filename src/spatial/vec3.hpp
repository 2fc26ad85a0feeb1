// 3-vectors and 3x3 rotations of any scalar: the primitives that every spatial operation of
// ops.hpp is written with, once, for one state (double) and for W states at once (Pack).
//
// A spatial operation loads its operands into "register" values, computes, and stores the
// result. The register types are chosen here, once:
//   * one state with AVX2: a 3-vector is the low three lanes of a 4-lane register (lane 3 is a
//     copy of lane 2 and is never read), E x is three lane broadcasts and multiply-adds, a x b
//     four lane permutations (callgrind, talos_full RNEA with -march=haswell: 17.4k instead of
//     27.2k instructions with Eigen's 3x3 products);
//   * one state otherwise: three doubles, scalar formulas (an SSE2 build splitting the 4-lane
//     permutations into 2-lane pieces cost more than it saved: 41.0k against 32.2k);
//   * W states (Pack): three Packs, the same scalar formulas on every lane.
// Constants of the model (X_tree, inertias, axes) stay double when the state is a Pack and are
// broadcast inside the arithmetic (GCC vector extensions take a scalar operand).
//
// Rotations are types: a general matrix, the transpose of one, a plane rotation about one
// coordinate axis (the X_J of a revolute joint about a body axis: 4 multiplications per
// product instead of 9), or the identity. Operations on transforms are written against mul()
// and mul_t(), so the cheap product is chosen by overload, not by a branch in an algorithm.
#pragma once

#include <type_traits>

#include "plucker/spatial/types.hpp"
#include "simd.hpp"

namespace plucker::ops {

using simd::Pack;

// ------------------------------------------------------------------ arrays of any scalar
template <class S>
struct V3 {
  S x[3];
  PLUCKER_HOT S& operator[](int k) { return x[k]; }
  PLUCKER_HOT const S& operator[](int k) const { return x[k]; }
};

/// Row-major 3x3 matrix.
template <class S>
struct M3 {
  S m[3][3];
  PLUCKER_HOT S& operator()(int r, int c) { return m[r][c]; }
  PLUCKER_HOT const S& operator()(int r, int c) const { return m[r][c]; }
};

template <class A, class B>
using sum_t = std::decay_t<decltype(std::declval<A>() + std::declval<B>())>;

/// x as a value of R: itself, or a double broadcast into a Pack's lanes (never a flop for doubles).
template <class R, class X>
PLUCKER_HOT inline R widen(const X& x) {
  if constexpr (std::is_same_v<R, X>)
    return x;
  else
    return x - R{};  // a broadcast (see simd::splat)
}

template <class A, class B>
PLUCKER_HOT inline V3<sum_t<A, B>> operator+(const V3<A>& a, const V3<B>& b) {
  return {{a[0] + b[0], a[1] + b[1], a[2] + b[2]}};
}
template <class A, class B>
PLUCKER_HOT inline V3<sum_t<A, B>> operator-(const V3<A>& a, const V3<B>& b) {
  return {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}};
}
template <class A>
PLUCKER_HOT inline V3<A> operator-(const V3<A>& a) {
  return {{-a[0], -a[1], -a[2]}};
}
template <class A, class B>
PLUCKER_HOT inline V3<A>& operator+=(V3<A>& a, const V3<B>& b) {
  a[0] += b[0], a[1] += b[1], a[2] += b[2];
  return a;
}
template <class A, class B>
PLUCKER_HOT inline V3<A>& operator-=(V3<A>& a, const V3<B>& b) {
  a[0] -= b[0], a[1] -= b[1], a[2] -= b[2];
  return a;
}
template <class A, class B, class = std::enable_if_t<!std::is_class_v<B>>>
PLUCKER_HOT inline V3<sum_t<A, B>> operator*(const V3<A>& a, const B& s) {
  return {{a[0] * s, a[1] * s, a[2] * s}};
}
template <class A, class B, class = std::enable_if_t<!std::is_class_v<B>>>
PLUCKER_HOT inline V3<sum_t<A, B>> operator*(const B& s, const V3<A>& a) {
  return {{s * a[0], s * a[1], s * a[2]}};
}
/// a x b.
template <class A, class B>
PLUCKER_HOT inline V3<sum_t<A, B>> cross(const V3<A>& a, const V3<B>& b) {
  return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
template <class A, class B>
PLUCKER_HOT inline sum_t<A, B> dot(const V3<A>& a, const V3<B>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

// ------------------------------------------------------------------ AVX2: one 3-vector per register
#if defined(__AVX2__)
typedef double R4 __attribute__((vector_size(32)));

template <int K>
PLUCKER_HOT inline R4 splat(const R4& x) {
  return __builtin_shufflevector(x, x, K, K, K, K);
}
/// a x b = a_yzx b_zxy - a_zxy b_yzx.
PLUCKER_HOT inline R4 cross(const R4& a, const R4& b) {
  return __builtin_shufflevector(a, a, 1, 2, 0, 3) * __builtin_shufflevector(b, b, 2, 0, 1, 3) -
         __builtin_shufflevector(a, a, 2, 0, 1, 3) * __builtin_shufflevector(b, b, 1, 2, 0, 3);
}
PLUCKER_HOT inline double dot(const R4& a, const R4& b) {
  const R4 p = a * b;
  return p[0] + p[1] + p[2];
}
/// A 3x3 matrix by three register columns: M x = c0 x0 + c1 x1 + c2 x2. Loaded from the columns
/// of E it multiplies by E, from the rows by E^T.
struct Cols4 {
  R4 c0, c1, c2;
};
PLUCKER_HOT inline R4 mul(const Cols4& M, const R4& x) {
  return splat<0>(x) * M.c0 + splat<1>(x) * M.c1 + splat<2>(x) * M.c2;
}

/// Three doubles at p into lanes 0-2 (lane 3 a copy of lane 2), and back, in the same two
/// pieces, a 16-byte and an 8-byte access: a recursion reads a parent's motion right after
/// storing it, and a load is forwarded from a store only when one store holds all of it
/// (a 48-byte Motion copied as 32 + 16 bytes and read back as 16 + 8 cost the forwarding).
typedef double R2 __attribute__((vector_size(16)));
typedef double R2u __attribute__((vector_size(16), aligned(8), may_alias));  // NOLINT
PLUCKER_HOT inline R4 load3(const double* p) {
  const R2 lo = *reinterpret_cast<const R2u*>(p);
  const R4 hi = p[2] - R4{};  // a broadcast (see simd::splat)
  return __builtin_shufflevector(__builtin_shufflevector(lo, lo, 0, 1, -1, -1), hi, 0, 1, 6, 7);
}
PLUCKER_HOT inline void store3(const R4& x, double* p) {
  *reinterpret_cast<R2u*>(p) = __builtin_shufflevector(x, x, 0, 1);
  p[2] = x[2];
}
#endif

// ------------------------------------------------------------------ rotations as types
/// E x and E^T x for a row-major matrix.
template <class S, class B>
PLUCKER_HOT inline V3<sum_t<S, B>> mul(const M3<S>& E, const V3<B>& x) {
  return {{E(0, 0) * x[0] + E(0, 1) * x[1] + E(0, 2) * x[2], E(1, 0) * x[0] + E(1, 1) * x[1] + E(1, 2) * x[2],
           E(2, 0) * x[0] + E(2, 1) * x[1] + E(2, 2) * x[2]}};
}
template <class S, class B>
PLUCKER_HOT inline V3<sum_t<S, B>> mul_t(const M3<S>& E, const V3<B>& x) {
  return {{E(0, 0) * x[0] + E(1, 0) * x[1] + E(2, 0) * x[2], E(0, 1) * x[0] + E(1, 1) * x[1] + E(2, 1) * x[2],
           E(0, 2) * x[0] + E(1, 2) * x[1] + E(2, 2) * x[2]}};
}
/// A B.
template <class A, class B>
PLUCKER_HOT inline M3<sum_t<A, B>> mul(const M3<A>& a, const M3<B>& b) {
  M3<sum_t<A, B>> out;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out(r, c) = a(r, 0) * b(0, c) + a(r, 1) * b(1, c) + a(r, 2) * b(2, c);
  return out;
}

/// The rotation of a frame turned by angle q about its own axis A, from s = sin q, c = cos q
/// (as a coordinate transform, E = rot_A(q)): with i, j = A+1, A+2 (mod 3),
/// (E x)_A = x_A, (E x)_i = c x_i + s x_j, (E x)_j = c x_j - s x_i.
template <int A, class T>
struct PlaneRot {
  static_assert(A >= 0 && A < 3);
  static constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
  T s, c;
  PlaneRot<A, T> transpose() const { return {-s, c}; }
};
template <int A, class T, class B>
PLUCKER_HOT inline V3<sum_t<T, B>> mul(const PlaneRot<A, T>& E, const V3<B>& x) {
  using R = sum_t<T, B>;
  V3<R> out;
  out[A] = widen<R>(x[A]);
  out[E.i] = E.c * x[E.i] + E.s * x[E.j];
  out[E.j] = E.c * x[E.j] - E.s * x[E.i];
  return out;
}
template <int A, class T, class B>
PLUCKER_HOT inline V3<sum_t<T, B>> mul_t(const PlaneRot<A, T>& E, const V3<B>& x) {
  return mul(E.transpose(), x);
}
#if defined(__AVX2__)
/// x with lanes i = A+1 and j = A+2 (mod 3) exchanged.
template <int A>
PLUCKER_HOT inline R4 swap_ij(const R4& x) {
  if constexpr (A == 0)
    return __builtin_shufflevector(x, x, 0, 2, 1, 3);
  else if constexpr (A == 1)
    return __builtin_shufflevector(x, x, 2, 1, 0, 3);
  else
    return __builtin_shufflevector(x, x, 1, 0, 2, 3);
}
/// The signs that go with swap_ij: +1 at i, -1 at j, 0 at A (lane 3: +1). A plane rotation's
/// E x and the cross product x x e_A both multiply the swapped x by them (times s or a speed).
template <int A>
PLUCKER_HOT inline R4 plane_signs() {
  R4 sign{1.0, 1.0, 1.0, 1.0};
  sign[A] = 0.0;
  sign[(A + 2) % 3] = -1.0;
  return sign;
}
/// E x = cv x + sv (x with i, j exchanged): cv = (c, c, c) but 1 at A, sv = (s, -s) at (i, j)
/// and 0 at A. The lane vectors are made once per transform (rot<double>), not per product.
template <int A>
struct PlaneRot4 {
  R4 cv, sv;
};
template <int A>
PLUCKER_HOT inline PlaneRot4<A> lanes_of(const PlaneRot<A, double>& E) {
  // Constant lane patterns times broadcasts (lane inserts would take the shuffle unit).
  R4 not_a{1.0, 1.0, 1.0, 1.0}, unit_a{};
  not_a[A] = 0.0, unit_a[A] = 1.0;
  return {(E.c - R4{}) * not_a + unit_a, (E.s - R4{}) * plane_signs<A>()};
}
template <int A>
PLUCKER_HOT inline R4 mul(const PlaneRot4<A>& E, const R4& x) {
  return E.cv * x + E.sv * swap_ij<A>(x);
}
template <int A>
PLUCKER_HOT inline R4 mul(const PlaneRot<A, double>& E, const R4& x) {
  return mul(lanes_of(E), x);
}
#endif

/// The identity rotation (a pure translation's E).
struct IdentityRot {};
template <class X>
PLUCKER_HOT inline const X& mul(IdentityRot, const X& x) {
  return x;
}
template <class X>
PLUCKER_HOT inline const X& mul_t(IdentityRot, const X& x) {
  return x;
}

// ------------------------------------------------------------------ registers of a scalar
/// Reg<S>::V3: the register 3-vector of state scalar S. Reg<S>::Const: a model constant's.
template <class S>
struct Reg;
template <>
struct Reg<double> {
#if defined(__AVX2__)
  using V3 = R4;
#else
  using V3 = ops::V3<double>;
#endif
  using Const = V3;
};
template <>
struct Reg<Pack> {
  using V3 = ops::V3<Pack>;
  using Const = ops::V3<double>;
};
template <class S>
using reg3 = typename Reg<S>::V3;

/// A register 3-vector of S from three values.
template <class S, class A>
PLUCKER_HOT inline reg3<S> make3(const A& a, const A& b, const A& c) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<reg3<S>, R4>)
    return R4{a, b, c, c};
  else
#endif
    return reg3<S>{{a, b, c}};
}

/// Loads: from a public Eigen 3-vector (a state for S = double, a constant for S = Pack), or
/// from a lane vector (identity).
template <class S>
PLUCKER_HOT inline typename Reg<S>::Const load(const Vec3& x) {
  using C = typename Reg<S>::Const;
#if defined(__AVX2__)
  if constexpr (std::is_same_v<C, R4>)
    return load3(x.data());
  else
#endif
    return C{{x[0], x[1], x[2]}};
}
/// A register 3-vector is already loaded (the operand of one operation being the result of another).
template <class S>
PLUCKER_HOT inline const reg3<S>& load(const reg3<S>& x) {
  return x;
}
template <class S>
PLUCKER_HOT inline const V3<Pack>& load(const V3<Pack>& x) requires(!std::is_same_v<S, Pack>) {
  return x;
}
/// The array form of a 3-vector (three scalars), for entry-wise formulas that would otherwise
/// take the lanes of a register apart: a public 3-vector copied, an array one unchanged.
PLUCKER_HOT inline V3<double> array3(const Vec3& x) { return {{x[0], x[1], x[2]}}; }
template <class T>
PLUCKER_HOT inline const V3<T>& array3(const V3<T>& x) {
  return x;
}

/// Stores a register 3-vector of one state into a public 3-vector; lane vectors stay as they are.
#if defined(__AVX2__)
PLUCKER_HOT inline Vec3 store(const R4& x) { return Vec3(x[0], x[1], x[2]); }
#endif
PLUCKER_HOT inline Vec3 store(const V3<double>& x) { return Vec3(x[0], x[1], x[2]); }
PLUCKER_HOT inline const V3<Pack>& store(const V3<Pack>& x) { return x; }
/// dst = x, for dst a public 3-vector (stored) or a register one.
template <class X>
PLUCKER_HOT inline void store_into(Vec3& dst, const X& x) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<X, R4>) {
    store3(x, dst.data());
    return;
  }
#endif
  dst = store(x);
}
template <class T>
PLUCKER_HOT inline void store_into(T& dst, const T& x) {
  dst = x;
}

/// x e_k, as a register 3-vector of S (k a constant after inlining).
template <class S, class X>
PLUCKER_HOT inline reg3<S> unit_times(int k, const X& x) {
  if constexpr (std::is_same_v<reg3<S>, V3<S>>) {
    reg3<S> out{};
    out[k] = x;
    return out;
  } else {
    return make3<S>(k == 0 ? 1.0 : 0.0, k == 1 ? 1.0 : 0.0, k == 2 ? 1.0 : 0.0) * x;
  }
}
/// x x (s e_A) = (x_j s at i, -x_i s at j, 0 at A) with i, j = A+1, A+2 (mod 3).
template <int A, class S>
PLUCKER_HOT inline V3<S> cross_unit(const V3<S>& x, const S& s) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
  V3<S> out{};
  out[i] = x[j] * s;
  out[j] = -x[i] * s;
  return out;
}
#if defined(__AVX2__)
template <int A>
PLUCKER_HOT inline R4 cross_unit(const R4& x, double s) {
  return swap_ij<A>(x) * (plane_signs<A>() * s);
}
#endif

/// A public (column-major) matrix read in place, as E or as E^T: the entries are broadcast
/// from where they are (a copy into an M3 was re-made for every product in the column loops).
/// A view: the matrix must outlive it (callers pass a transform's or an inertia's member).
struct ColMajorRef {
  const double* p;
  PLUCKER_HOT double operator()(int r, int c) const { return p[r + 3 * c]; }
};
struct ColMajorRefT {
  const double* p;
  PLUCKER_HOT double operator()(int r, int c) const { return p[c + 3 * r]; }
};
template <class M, class B>
PLUCKER_HOT inline V3<sum_t<double, B>> mul(const M& E, const V3<B>& x) requires(std::is_same_v<M, ColMajorRef> ||
                                                                                 std::is_same_v<M, ColMajorRefT>) {
  return {{E(0, 0) * x[0] + E(0, 1) * x[1] + E(0, 2) * x[2], E(1, 0) * x[0] + E(1, 1) * x[1] + E(1, 2) * x[2],
           E(2, 0) * x[0] + E(2, 1) * x[1] + E(2, 2) * x[2]}};
}

/// E x-capable and E^T x-capable forms of a rotation: rot<S>(E), rot_t<S>(E).
template <class S>
PLUCKER_HOT inline auto rot(const Mat3& E) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<S, double>) {
    const double* p = E.data();  // column-major: column k at p + 3k
    return Cols4{R4{p[0], p[1], p[2], p[2]}, R4{p[3], p[4], p[5], p[5]}, R4{p[6], p[7], p[8], p[8]}};
  } else
#endif
    return ColMajorRef{E.data()};
}
/// An object whose mul() is E^T x.
template <class S>
PLUCKER_HOT inline auto rot_t(const Mat3& E) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<S, double>) {
    const double* p = E.data();  // row k: p[k], p[k + 3], p[k + 6]
    return Cols4{R4{p[0], p[3], p[6], p[6]}, R4{p[1], p[4], p[7], p[7]}, R4{p[2], p[5], p[8], p[8]}};
  } else
#endif
    return ColMajorRefT{E.data()};
}
template <class S>
PLUCKER_HOT inline const M3<Pack>& rot(const M3<Pack>& E) {
  return E;
}
/// A row-major matrix of one state (a joint's E_J): register columns with AVX2.
template <class S>
PLUCKER_HOT inline auto rot(const M3<double>& E) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<S, double>)
    return Cols4{make3<S>(E(0, 0), E(1, 0), E(2, 0)), make3<S>(E(0, 1), E(1, 1), E(2, 1)),
                 make3<S>(E(0, 2), E(1, 2), E(2, 2))};
  else
#endif
    return E;
}
#if defined(__AVX2__)
/// Register columns are already loaded; their transpose is taken lane by lane (not on a hot path).
template <class S>
PLUCKER_HOT inline const Cols4& rot(const Cols4& E) {
  return E;
}
template <class S>
PLUCKER_HOT inline Cols4 rot_t(const Cols4& E) {
  return {make3<S>(E.c0[0], E.c1[0], E.c2[0]), make3<S>(E.c0[1], E.c1[1], E.c2[1]),
          make3<S>(E.c0[2], E.c1[2], E.c2[2])};
}
#endif
/// Column c of a stored 3x3 matrix in registers (a public, column-major one for S = double, a
/// lane one for S = Pack), and column c set from registers.
template <class S>
PLUCKER_HOT inline reg3<S> column3(const Mat3& E, int c) {
  const double* p = E.data() + 3 * c;
  return make3<S>(p[0], p[1], p[2]);
}
template <class S>
PLUCKER_HOT inline V3<Pack> column3(const M3<Pack>& E, int c) {
  return {{E(0, c), E(1, c), E(2, c)}};
}
PLUCKER_HOT inline void set_column3(Mat3& E, int c, const reg3<double>& x) {
#if defined(__AVX2__)
  store3(x, E.data() + 3 * c);  // column-major: column c at 3c
#else
  for (int r = 0; r < 3; ++r) E(r, c) = x[r];
#endif
}
PLUCKER_HOT inline void set_column3(M3<Pack>& E, int c, const V3<Pack>& x) {
  for (int r = 0; r < 3; ++r) E(r, c) = x[r];
}
/// Lane matrices are transposed in the product instead (no copy).
template <class T>
struct Transposed {
  const T& m;
};
template <class S>
PLUCKER_HOT inline Transposed<M3<Pack>> rot_t(const M3<Pack>& E) {
  return {E};
}
template <class B>
PLUCKER_HOT inline auto mul(const Transposed<M3<Pack>>& E, const V3<B>& x) {
  return mul_t(E.m, x);
}
template <class S, int A, class T>
PLUCKER_HOT inline auto rot(const PlaneRot<A, T>& E) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<S, double>)
    return lanes_of(E);
  else
#endif
    return E;
}
template <class S, int A, class T>
PLUCKER_HOT inline auto rot_t(const PlaneRot<A, T>& E) {
  return rot<S>(E.transpose());
}
template <class S>
PLUCKER_HOT inline IdentityRot rot(IdentityRot) {
  return {};
}
template <class S>
PLUCKER_HOT inline IdentityRot rot_t(IdentityRot) {
  return {};
}

}  // namespace plucker::ops
