// Spatial algebra over W states at once, one state per SIMD lane (structure of arrays), for
// the batched recursions (batch_lanes.cpp). A Pack holds one quantity of W states; a lane
// 3-vector is three Packs, a lane rotation nine, and so on, so that every operation below is
// the scalar formula of include/plucker/spatial/* written once and executed W times by
// each vector instruction. Model constants (X_tree, inertias, joint axes) stay scalar and are
// broadcast into the arithmetic (GCC vector extensions accept a scalar operand).
//
// W = 8 with AVX-512, 4 with AVX, 2 otherwise (SSE2, or the target's 128-bit vectors).
#pragma once

#include <cmath>
#include <type_traits>

#include "plucker/model/joints.hpp"
#include "plucker/spatial.hpp"
#include "recursion.hpp"  // unit_axis_row
#include "sincos.hpp"     // kSinCosLanes, sincos_batch

namespace plucker::detail::lanes {

inline constexpr int W = kSinCosLanes;  // 8 with AVX-512, 4 with AVX, else 2 (sincos.hpp)

/// One double per state (lane).
typedef double Pack __attribute__((vector_size(8 * W)));

inline Pack splat(double x) { return Pack{} + x; }
inline Pack max(Pack a, Pack b) { return a > b ? a : b; }
/// x > y in every lane (false where either is NaN).
inline bool all_greater(Pack x, Pack y) {
  bool ok = true;
  for (int l = 0; l < W; ++l) ok &= x[l] > y[l];
  return ok;
}

// ---- 3-vectors and 3x3 matrices --------------------------------------------------------

struct V3 {
  Pack x[3];
  Pack& operator[](int k) { return x[k]; }
  const Pack& operator[](int k) const { return x[k]; }
  static V3 zero() { return {{Pack{}, Pack{}, Pack{}}}; }
  static V3 splat(const Vec3& v) { return {{lanes::splat(v[0]), lanes::splat(v[1]), lanes::splat(v[2])}}; }
  V3 operator+(const V3& o) const { return {{x[0] + o[0], x[1] + o[1], x[2] + o[2]}}; }
  V3 operator-(const V3& o) const { return {{x[0] - o[0], x[1] - o[1], x[2] - o[2]}}; }
  V3 operator-() const { return {{-x[0], -x[1], -x[2]}}; }
  V3 operator*(Pack s) const { return {{x[0] * s, x[1] * s, x[2] * s}}; }
  V3& operator+=(const V3& o) {
    for (int k = 0; k < 3; ++k) x[k] += o[k];
    return *this;
  }
  V3& operator-=(const V3& o) {
    for (int k = 0; k < 3; ++k) x[k] -= o[k];
    return *this;
  }
};

inline V3 cross(const V3& a, const V3& b) {
  return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
/// a x b with a constant a.
inline V3 cross(const Vec3& a, const V3& b) {
  return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
inline Pack dot(const V3& a, const V3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Pack dot(const Vec3& a, const V3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/// A constant vector times a lane scalar.
inline V3 scaled(const Vec3& a, Pack s) { return {{a[0] * s, a[1] * s, a[2] * s}}; }

/// Lane 3x3 matrix, row-major: m[row][col].
struct M3 {
  Pack m[3][3];
  static M3 splat(const Mat3& A) {
    M3 out;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) out.m[r][c] = lanes::splat(A(r, c));
    return out;
  }
  V3 operator*(const V3& v) const {  // M v
    V3 out;
    for (int r = 0; r < 3; ++r) out[r] = m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2];
    return out;
  }
  V3 transpose_times(const V3& v) const {  // M^T v
    V3 out;
    for (int c = 0; c < 3; ++c) out[c] = m[0][c] * v[0] + m[1][c] * v[1] + m[2][c] * v[2];
    return out;
  }
};

/// A B with lane A and B.
inline M3 operator*(const M3& A, const M3& B) {
  M3 out;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out.m[r][c] = A.m[r][0] * B.m[0][c] + A.m[r][1] * B.m[1][c] + A.m[r][2] * B.m[2][c];
  return out;
}

/// A B with a lane A and a constant B.
inline M3 operator*(const M3& A, const Mat3& B) {
  M3 out;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) out.m[r][c] = A.m[r][0] * B(0, c) + A.m[r][1] * B(1, c) + A.m[r][2] * B(2, c);
  return out;
}

// ---- spatial vectors and transforms (include/plucker/spatial/*) --------------------------

/// Lane motion vector [angular; linear].
struct MotionL {
  V3 ang, lin;
  static MotionL zero() { return {V3::zero(), V3::zero()}; }
  Pack& at(int k) { return k < 3 ? ang[k] : lin[k - 3]; }
  const Pack& at(int k) const { return k < 3 ? ang[k] : lin[k - 3]; }
  MotionL operator+(const MotionL& o) const { return {ang + o.ang, lin + o.lin}; }
  MotionL& operator+=(const MotionL& o) {
    ang += o.ang;
    lin += o.lin;
    return *this;
  }
};

/// Lane force vector [moment; force].
struct ForceL {
  V3 ang, lin;
  static ForceL zero() { return {V3::zero(), V3::zero()}; }
  Pack& at(int k) { return k < 3 ? ang[k] : lin[k - 3]; }
  const Pack& at(int k) const { return k < 3 ? ang[k] : lin[k - 3]; }
  ForceL operator+(const ForceL& o) const { return {ang + o.ang, lin + o.lin}; }
  ForceL& operator+=(const ForceL& o) {
    ang += o.ang;
    lin += o.lin;
    return *this;
  }
};

/// Motion cross product m x n (crm(m) n).
inline MotionL cross(const MotionL& m, const MotionL& n) {
  return {cross(m.ang, n.ang), cross(m.ang, n.lin) + cross(m.lin, n.ang)};
}
/// Force cross product m x* f (crf(m) f).
inline ForceL cross(const MotionL& m, const ForceL& f) {
  return {cross(m.ang, f.ang) + cross(m.lin, f.lin), cross(m.ang, f.lin)};
}

/// Lane Plucker transform B_X_A = (E, r), as Transform.
struct XformL {
  M3 E;
  V3 r;
  static XformL splat(const Transform& X) { return {M3::splat(X.E), V3::splat(X.r)}; }
  /// X m = [E w; E (v - r x w)].
  MotionL apply(const MotionL& m) const { return {E * m.ang, E * (m.lin - cross(r, m.ang))}; }
  /// X^T f = [E^T n + r x E^T f; E^T f] (force from B to A).
  ForceL apply_inverse(const ForceL& f) const {
    const V3 fl = E.transpose_times(f.lin);
    return {E.transpose_times(f.ang) + cross(r, fl), fl};
  }
  /// X^-1 m = [E^T w; E^T v + r x E^T w] (motion from B to A).
  MotionL apply_inverse(const MotionL& m) const {
    const V3 w = E.transpose_times(m.ang);
    return {w, E.transpose_times(m.lin) + cross(r, w)};
  }
  /// Composition (C_X_B this) * (B_X_A a) = C_X_A, as Transform::operator*.
  PLUCKER_HOT XformL operator*(const XformL& a) const { return {E * a.E, a.r + a.E.transpose_times(r)}; }
};

/// m^T f, the power of a force on a motion (the scalar product of the dual spaces M6 x F6).
inline Pack dot(const MotionL& m, const ForceL& f) { return dot(m.ang, f.ang) + dot(m.lin, f.lin); }

/// I v for a constant rigid-body inertia (m, h, Ibar): [Ibar w + h x v; m v - h x w].
inline ForceL mul(const RigidBodyInertia& I, const MotionL& v) {
  const Mat3& Ib = I.inertia_origin();
  const Vec3& h = I.first_moment();
  const double m = I.mass();
  ForceL f;
  const V3 hv = cross(h, v.lin), hw = cross(h, v.ang);
  for (int r = 0; r < 3; ++r) {
    f.ang[r] = Ib(r, 0) * v.ang[0] + Ib(r, 1) * v.ang[1] + Ib(r, 2) * v.ang[2] + hv[r];
    f.lin[r] = m * v.lin[r] - hw[r];
  }
  return f;
}

/// Lane rigid-body inertia (m, h, Ibar), for the composite inertias of the CRBA.
struct InertiaL {
  Pack m;
  V3 h;
  M3 Ibar;
  static InertiaL splat(const RigidBodyInertia& I) {
    return {lanes::splat(I.mass()), V3::splat(I.first_moment()), M3::splat(I.inertia_origin())};
  }
  static InertiaL zero() { return {Pack{}, V3::zero(), M3{}}; }
  InertiaL& operator+=(const InertiaL& o) {
    m += o.m;
    h += o.h;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) Ibar.m[r][c] += o.Ibar.m[r][c];
    return *this;
  }
  /// I v = [Ibar w + h x v; m v - h x w].
  ForceL operator*(const MotionL& v) const {
    ForceL f;
    f.ang = Ibar * v.ang + cross(h, v.lin);
    f.lin = v.lin * m - cross(h, v.ang);
    return f;
  }
  /// I e_k, column k of [Ibar hx; hx^T m1] (as crba.cpp's inertia_column).
  ForceL column(int k) const {
    ForceL f = ForceL::zero();
    if (k < 3) {  // [Ibar e_k; e_k x h]
      for (int r = 0; r < 3; ++r) f.ang[r] = Ibar.m[r][k];
      const int i = (k + 1) % 3, j = (k + 2) % 3;
      f.lin[i] = -h[j];
      f.lin[j] = h[i];
    } else {  // [h x e_a; m e_a]
      const int a = k - 3, i = (a + 1) % 3, j = (a + 2) % 3;
      f.ang[i] = h[j];
      f.ang[j] = -h[i];
      f.lin[a] = m;
    }
    return f;
  }
  /// target += X^T I X (Eq. 9; RBDA §2.13): h' = h1 + m r with h1 = E^T h,
  /// Ibar' = E^T Ibar E - (h1 r^T + r h'^T) + (r.h1 + r.h') 1; only the upper entries, mirrored.
  PLUCKER_HOT void add_transformed_inverse_to(const XformL& X, InertiaL& target) const {
    const V3 h1 = X.E.transpose_times(h);
    const V3 hA = h1 + X.r * m;
    const Pack d = dot(X.r, h1) + dot(X.r, hA);
    Pack IE[3][3];  // Ibar E
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        IE[r][c] = Ibar.m[r][0] * X.E.m[0][c] + Ibar.m[r][1] * X.E.m[1][c] + Ibar.m[r][2] * X.E.m[2][c];
    for (int b = 0; b < 3; ++b)
      for (int a = 0; a <= b; ++a) {
        Pack s = X.E.m[0][a] * IE[0][b] + X.E.m[1][a] * IE[1][b] + X.E.m[2][a] * IE[2][b] -
                 (h1[a] * X.r[b] + X.r[a] * hA[b]);
        if (a == b) s += d;
        target.Ibar.m[a][b] += s;
        if (a != b) target.Ibar.m[b][a] += s;
      }
    target.h += hA;
    target.m += m;
  }
};

/// Lane articulated-body inertia: a symmetric 6x6 matrix, stored in full, rows/columns
/// [angular; linear] (paper 000 Eq. 11-12).
struct Sym6L {
  Pack m[6][6];
  /// [Ibar hx; hx^T m1] of a constant rigid-body inertia.
  static Sym6L splat(const RigidBodyInertia& I) {
    const Mat6 M = I.matrix();
    Sym6L out;
    for (int r = 0; r < 6; ++r)
      for (int c = 0; c < 6; ++c) out.m[r][c] = lanes::splat(M(r, c));
    return out;
  }
  ForceL operator*(const MotionL& v) const {
    ForceL f;
    for (int r = 0; r < 6; ++r) {
      Pack s = m[r][0] * v.ang[0];
      for (int c = 1; c < 6; ++c) s += m[r][c] * v.at(c);
      f.at(r) = s;
    }
    return f;
  }
  ForceL column(int k) const {
    ForceL f;
    for (int r = 0; r < 6; ++r) f.at(r) = m[r][k];
    return f;
  }
  /// target += X^T I X (the parent update of Eq. 12), as ArticulatedBodyInertia's: with
  /// blocks [A B; B^T C] rotated by E (A1 = E^T A E, ...), then shifted by r:
  ///   A' = A1 + rx B1^T - B' rx,  B' = B1 + rx C1,  C' = C1.
  void add_transformed_inverse_to(const XformL& X, Sym6L& target) const {
    Pack A1[3][3], B1[3][3], C1[3][3];
    rotate_block(X.E, 0, 0, A1);
    rotate_block(X.E, 0, 3, B1);
    rotate_block(X.E, 3, 3, C1);
    const V3& r = X.r;
    Pack B2[3][3];
    for (int c = 0; c < 3; ++c) {  // column c of rx C1: r x C1(:, c)
      const V3 col = cross(r, V3{{C1[0][c], C1[1][c], C1[2][c]}});
      for (int k = 0; k < 3; ++k) B2[k][c] = B1[k][c] + col[k];
    }
    for (int c = 0; c < 3; ++c) {
      // column c of rx B1^T: r x (row c of B1)
      const V3 rxBt = cross(r, V3{{B1[c][0], B1[c][1], B1[c][2]}});
      // column c of B2 rx = B2 (r x e_c)
      const int i = (c + 1) % 3, j = (c + 2) % 3;  // r x e_c = r_j e_i - r_i e_j
      for (int k = 0; k < 3; ++k) {
        const Pack B2rx = B2[k][i] * r[j] - B2[k][j] * r[i];
        target.m[k][c] += A1[k][c] + rxBt[k] - B2rx;
        target.m[k][3 + c] += B2[k][c];
        target.m[3 + c][k] += B2[k][c];
        target.m[3 + k][3 + c] += C1[k][c];
      }
    }
  }

 private:
  /// out = E^T M E for the 3x3 block of this matrix at (r0, c0).
  void rotate_block(const M3& E, int r0, int c0, Pack out[3][3]) const {
    Pack T[3][3];  // M E
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        T[r][c] = m[r0 + r][c0] * E.m[0][c] + m[r0 + r][c0 + 1] * E.m[1][c] + m[r0 + r][c0 + 2] * E.m[2][c];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) out[r][c] = E.m[0][r] * T[0][c] + E.m[1][r] * T[1][c] + E.m[2][r] * T[2][c];
  }
};

// ---- joints ----------------------------------------------------------------------------
// The joint kinds evaluated in lanes; a model with any other kind is evaluated per state.

template <class J>
inline constexpr bool supported = false;
template <>
inline constexpr bool supported<JointFixed> = true;
template <int A>
inline constexpr bool supported<JointRevoluteAxis<A>> = true;
template <int A>
inline constexpr bool supported<JointPrismaticAxis<A>> = true;
template <>
inline constexpr bool supported<JointRevolute> = true;
template <>
inline constexpr bool supported<JointPrismatic> = true;
template <>
inline constexpr bool supported<JointSpherical> = true;
template <>
inline constexpr bool supported<JointFreeFlyer> = true;

/// Column k of a joint's motion subspace S: the unit vector e_row (row >= 0), or a constant
/// direction in the angular (linear = false) or linear part.
struct SColumn {
  int row = -1;
  Vec3 dir = Vec3::Zero();
  bool linear = false;
};

template <class J>
inline SColumn s_column(const J& joint, int k) {
  if constexpr (std::is_same_v<J, JointRevolute>)
    return {-1, joint.axis, false};
  else if constexpr (std::is_same_v<J, JointPrismatic>)
    return {-1, joint.axis, true};
  else if constexpr (std::is_same_v<J, JointSpherical> || std::is_same_v<J, JointFreeFlyer>)
    return {k, Vec3::Zero(), false};  // S = [1; 0] or the identity
  else
    return {unit_axis_row<J>, Vec3::Zero(), false};
}

/// s^T f (Eq. 8).
inline Pack project(const SColumn& s, const ForceL& f) {
  if (s.row >= 0) return f.at(s.row);
  return dot(s.dir, s.linear ? f.lin : f.ang);
}
/// X^-1 s: column s of body i's motion subspace in the coordinates of frame A, X = i_X_A.
PLUCKER_HOT inline MotionL column_in(const XformL& X, const SColumn& s) {
  MotionL m = MotionL::zero();
  if (s.row >= 0) {  // e_row: row `row % 3` of E (a column of E^T)
    const int k = s.row % 3;
    const V3 e{{X.E.m[k][0], X.E.m[k][1], X.E.m[k][2]}};
    if (s.row < 3) {
      m.ang = e;
      m.lin = cross(X.r, e);
    } else {
      m.lin = e;
    }
    return m;
  }
  (s.linear ? m.lin : m.ang) = V3::splat(s.dir);
  return X.apply_inverse(m);
}
/// m += s x.
inline void add_motion(const SColumn& s, MotionL& m, Pack x) {
  if (s.row >= 0)
    m.at(s.row) += x;
  else
    (s.linear ? m.lin : m.ang) += scaled(s.dir, x);
}
/// The column s itself, as a lane motion.
inline MotionL motion_column(const SColumn& s) {
  MotionL m = MotionL::zero();
  add_motion(s, m, splat(1.0));
  return m;
}
/// I s for a lane articulated or rigid-body inertia.
template <class Inertia>
inline ForceL times(const Inertia& I, const SColumn& s) {
  if (s.row >= 0) return I.column(s.row);
  MotionL m = MotionL::zero();
  (s.linear ? m.lin : m.ang) = V3::splat(s.dir);
  return I * m;
}

/// X_J(q) X_tree for W states: q, sn, cs point to the joint's first coordinate, its sine and
/// cosine (SoA, one Pack per coordinate), as joint_compose / Joint*::compose.
template <class J>
inline XformL compose(const J& joint, const Pack* q, const Pack* sn, const Pack* cs, const Transform& X_tree) {
  const Mat3& Et = X_tree.E;
  XformL X;
  if constexpr (std::is_same_v<J, JointFixed>) {
    X = XformL::splat(X_tree);
  } else if constexpr (unit_axis_row<J> >= 0 && unit_axis_row<J> < 3) {
    // Plane rotation about e_A mixes rows i and j of E_tree; r unchanged.
    constexpr int A = unit_axis_row<J>, i = (A + 1) % 3, j = (A + 2) % 3;
    const Pack s = sn[0], c = cs[0];
    for (int k = 0; k < 3; ++k) {
      X.E.m[A][k] = splat(Et(A, k));
      X.E.m[i][k] = c * Et(i, k) + s * Et(j, k);
      X.E.m[j][k] = c * Et(j, k) - s * Et(i, k);
    }
    X.r = V3::splat(X_tree.r);
  } else if constexpr (unit_axis_row<J> >= 3) {
    // Translation d e_A: r = r_tree + d E_tree^T e_A.
    constexpr int A = unit_axis_row<J> - 3;
    X.E = M3::splat(Et);
    for (int k = 0; k < 3; ++k) X.r[k] = X_tree.r[k] + q[0] * Et(A, k);
  } else if constexpr (std::is_same_v<J, JointRevolute>) {
    // E_J = c 1 - s [a]x + (1 - c) a a^T (Rodrigues), E = E_J E_tree.
    const Vec3& a = joint.axis;
    const Pack s = sn[0], c = cs[0], omc = 1.0 - cs[0];
    M3 EJ;
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k) EJ.m[r][k] = omc * (a[r] * a[k]) + (r == k ? c : Pack{});
    EJ.m[0][1] += s * a.z();
    EJ.m[0][2] -= s * a.y();
    EJ.m[1][0] -= s * a.z();
    EJ.m[1][2] += s * a.x();
    EJ.m[2][0] += s * a.y();
    EJ.m[2][1] -= s * a.x();
    X.E = EJ * Et;
    X.r = V3::splat(X_tree.r);
  } else if constexpr (std::is_same_v<J, JointPrismatic>) {
    // r = r_tree + E_tree^T (a d).
    const Vec3 Eta = Et.transpose() * joint.axis;
    X.E = M3::splat(Et);
    for (int k = 0; k < 3; ++k) X.r[k] = X_tree.r[k] + q[0] * Eta[k];
  } else if constexpr (std::is_same_v<J, JointSpherical> || std::is_same_v<J, JointFreeFlyer>) {
    // Quaternion [x y z w] (body to parent) -> R; X_J = (R^T, p), X = X_J X_tree:
    // E = R^T E_tree, r = r_tree + E_tree^T p.
    constexpr int o = std::is_same_v<J, JointFreeFlyer> ? 3 : 0;
    const Pack x = q[o], y = q[o + 1], z = q[o + 2], w = q[o + 3];
    const Pack tx = 2.0 * x, ty = 2.0 * y, tz = 2.0 * z;
    const Pack twx = tx * w, twy = ty * w, twz = tz * w, txx = tx * x, txy = ty * x, txz = tz * x, tyy = ty * y,
               tyz = tz * y, tzz = tz * z;
    M3 Rt;  // R^T
    Rt.m[0][0] = 1.0 - (tyy + tzz);
    Rt.m[1][0] = txy - twz;
    Rt.m[2][0] = txz + twy;
    Rt.m[0][1] = txy + twz;
    Rt.m[1][1] = 1.0 - (txx + tzz);
    Rt.m[2][1] = tyz - twx;
    Rt.m[0][2] = txz - twy;
    Rt.m[1][2] = tyz + twx;
    Rt.m[2][2] = 1.0 - (txx + tyy);
    X.E = Rt * Et;
    X.r = V3::splat(X_tree.r);
    if constexpr (std::is_same_v<J, JointFreeFlyer>)
      for (int k = 0; k < 3; ++k) X.r[k] += Et(0, k) * q[0] + Et(1, k) * q[1] + Et(2, k) * q[2];
  } else {
    static_assert(!supported<J>, "a supported joint kind without a lane compose");
  }
  return X;
}

/// v x (S qd), the velocity-product acceleration of Eq. 4, as detail::velocity_product.
template <class J>
inline MotionL velocity_product(const J& joint, const MotionL& v, const Pack* qd) {
  constexpr int k = unit_axis_row<J>;
  if constexpr (k >= 0) {
    constexpr int A = k % 3, i = (A + 1) % 3, j = (A + 2) % 3;  // a x (s e_A) = (.., a_j s, -a_i s)
    MotionL out = MotionL::zero();
    if constexpr (k < 3) {
      out.ang[i] = v.ang[j] * qd[0];
      out.ang[j] = -v.ang[i] * qd[0];
      out.lin[i] = v.lin[j] * qd[0];
      out.lin[j] = -v.lin[i] * qd[0];
    } else {
      out.lin[i] = v.ang[j] * qd[0];
      out.lin[j] = -v.ang[i] * qd[0];
    }
    return out;
  } else {
    MotionL vJ = MotionL::zero();
    for (int c = 0; c < J::NV; ++c) add_motion(s_column(joint, c), vJ, qd[c]);
    return cross(v, vJ);
  }
}

}  // namespace plucker::detail::lanes
