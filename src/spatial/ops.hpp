// The spatial operations of the recursions (paper 000 §3; RBDA ch. 2), written once over the
// state scalar S: double for one state (the public types Motion, Force, Transform,
// RigidBodyInertia, ArticulatedBodyInertia) or simd::Pack for W states at once (MotionT<Pack>,
// ... below). Each operation loads its operands into the registers of vec3.hpp (a no-op for an
// operand that is already a register motion or force, MotionT / ForceT) and returns its result
// in registers; a recursion keeps a body's v, a, f there and stores them once into Data
// (store_into). Which products are cheap is decided by the types of the operands: a transform's
// rotation may be a general matrix, a plane rotation about a body axis (AxisTransform, the
// X_up of a revolute joint whose X_tree is a pure translation), or the identity (Translation).
//
//   apply(X, m) = X m            apply(X, f) = X* f            (B_X_A: A -> B)
//   apply_inverse(X, m) = X^-1 m apply_inverse(X, f) = X^T f   (B -> A)
//   compose(X2, X1) = X2 X1      crm(m, n) = m x n, crf(m, f) = m x* f
//   dot(m, f)
// The inertias' operations are in inertia_ops.hpp.
#pragma once

#include <type_traits>

#include "plucker/spatial/inertia.hpp"
#include "plucker/spatial/transform.hpp"
#include "plucker/spatial/vectors.hpp"
#include "vec3.hpp"

namespace plucker::ops {

// ------------------------------------------------------------------ register containers
/// Spatial motion / force in registers, [angular; linear]: the register 3-vectors of vec3.hpp
/// for one state (S = double; what the operations return, converted to the public Motion /
/// Force where a recursion stores it), three Packs for W states (also their stored form).
template <class S>
struct MotionT {
  reg3<S> angular, linear;
  static MotionT Zero() { return {}; }
  PLUCKER_HOT operator plucker::Motion() const requires std::is_same_v<S, double> {
    return plucker::Motion(store(angular), store(linear));
  }
};
template <class S>
struct ForceT {
  reg3<S> angular, linear;
  static ForceT Zero() { return {}; }
  PLUCKER_HOT operator plucker::Force() const requires std::is_same_v<S, double> {
    return plucker::Force(store(angular), store(linear));
  }
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

/// The container of each kind for a state scalar: the public types for one state.
template <class S>
struct Types {
  using Motion = MotionT<S>;
  using Force = ForceT<S>;
  using Transform = XformT<S>;
  using Inertia = InertiaT<S>;
};
template <>
struct Types<double> {
  using Motion = plucker::Motion;
  using Force = plucker::Force;
  using Transform = plucker::Transform;
  using Inertia = RigidBodyInertia;
};
template <class S>
using motion_t = typename Types<S>::Motion;
template <class S>
using force_t = typename Types<S>::Force;

/// The state scalar of a container: double for the public types, the lane containers' S.
template <class T>
struct scalar_of;
template <class T>
requires(std::is_same_v<T, Motion> || std::is_same_v<T, Force> || std::is_same_v<T, RigidBodyInertia> ||
         std::is_same_v<T, ArticulatedBodyInertia>) struct scalar_of<T> {
  using type = double;
};
template <template <class> class Lanes, class S>
struct scalar_of<Lanes<S>> {
  using type = S;  // MotionT, ForceT, InertiaT, ArticulatedT
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

/// dst = m for a motion or force in registers: stored into a public one 3-vector by 3-vector
/// (store3), or copied as a lane container.
PLUCKER_HOT inline void store_into(Motion& dst, const MotionT<double>& m) {
  store_into(dst.angular, m.angular);
  store_into(dst.linear, m.linear);
}
PLUCKER_HOT inline void store_into(Force& dst, const ForceT<double>& f) {
  store_into(dst.angular, f.angular);
  store_into(dst.linear, f.linear);
}

// Register arithmetic (the public types have their own operators); the right operand may be
// a stored motion.
template <class S, class Mo>
PLUCKER_HOT inline MotionT<S> operator+(const MotionT<S>& a, const Mo& b) requires is_motion<Mo> {
  return {a.angular + load<S>(b.angular), a.linear + load<S>(b.linear)};
}
template <class S, class Mo>
PLUCKER_HOT inline MotionT<S> operator-(const MotionT<S>& a, const Mo& b) requires is_motion<Mo> {
  return {a.angular - load<S>(b.angular), a.linear - load<S>(b.linear)};
}
template <class S, class Mo>
PLUCKER_HOT inline MotionT<S>& operator+=(MotionT<S>& a, const Mo& b) requires is_motion<Mo> {
  a.angular += load<S>(b.angular), a.linear += load<S>(b.linear);
  return a;
}
template <class S, class Fo>
PLUCKER_HOT inline ForceT<S> operator+(const ForceT<S>& a, const Fo& b) requires is_force<Fo> {
  return {a.angular + load<S>(b.angular), a.linear + load<S>(b.linear)};
}
template <class S, class Fo>
PLUCKER_HOT inline ForceT<S> operator-(const ForceT<S>& a, const Fo& b) requires is_force<Fo> {
  return {a.angular - load<S>(b.angular), a.linear - load<S>(b.linear)};
}
template <class S>
PLUCKER_HOT inline ForceT<S> operator*(const ForceT<S>& a, const S& x) {
  return {a.angular * x, a.linear * x};
}
template <class S, class Fo>
PLUCKER_HOT inline ForceT<S>& operator+=(ForceT<S>& a, const Fo& b) requires is_force<Fo> {
  a.angular += load<S>(b.angular), a.linear += load<S>(b.linear);
  return a;
}
template <class S, class Fo>
PLUCKER_HOT inline ForceT<S>& operator-=(ForceT<S>& a, const Fo& b) requires is_force<Fo> {
  a.angular -= load<S>(b.angular), a.linear -= load<S>(b.linear);
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

/// A general transform of one state in registers (the columns of E, and r): what X_J(q) X_tree
/// composes to without a structured form, applied at once and stored column by column (AVX2).
template <class X>
inline constexpr bool is_register_transform = false;
#if defined(__AVX2__)
using RegisterTransform = RotTranslation<Cols4, R4>;
template <>
inline constexpr bool is_register_transform<RegisterTransform> = true;
PLUCKER_HOT inline void store_into(Transform& dst, const RegisterTransform& X) {
  store3(X.E.c0, dst.E.data());  // column-major: column c at 3c
  store3(X.E.c1, dst.E.data() + 3);
  store3(X.E.c2, dst.E.data() + 6);
  store3(X.r, dst.r.data());
}
inline Transform to_transform(const RegisterTransform& X) {
  Transform out;
  store_into(out, X);
  return out;
}
#endif
/// The same for W states.
inline const XformT<Pack>& to_xform(const XformT<Pack>& X) { return X; }
template <class Rot, class R>
inline XformT<Pack> to_xform(const RotTranslation<Rot, R>& X) {
  XformT<Pack> out;
  const V3<Pack> e[3] = {
      {{simd::splat(1.0), Pack{}, Pack{}}}, {{Pack{}, simd::splat(1.0), Pack{}}}, {{Pack{}, Pack{}, simd::splat(1.0)}}};
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
PLUCKER_HOT inline MotionT<scalar_t<Mo>> apply(const Xf& X, const Mo& m) requires is_motion<Mo> {
  using S = scalar_t<Mo>;
  const auto E = rot<S>(X.E);
  const auto w = load<S>(m.angular);
  return {mul(E, w), mul(E, load<S>(m.linear) - cross(load<S>(X.r), w))};
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

/// A register 3-vector of scalar S from a constant (broadcast into the lanes) or from a value of S.
template <class S>
PLUCKER_HOT inline reg3<S> as(const reg3<S>& x) {
  return x;
}
template <class S, class T>
PLUCKER_HOT inline V3<Pack> as(const V3<T>& x) requires(std::is_same_v<S, Pack> && !std::is_same_v<T, Pack>) {
  return {{x[0] - Pack{}, x[1] - Pack{}, x[2] - Pack{}}};  // broadcasts (simd::splat)
}

/// A motion with no angular part, (0, v): the base's acceleration a_0 = (0, -g).
struct LinearMotion {
  Vec3 linear;
};
/// X (0, v) = (0, E v).
template <class Xf>
PLUCKER_HOT inline MotionT<xform_scalar_t<Xf>> apply(const Xf& X, const LinearMotion& m) {
  using S = xform_scalar_t<Xf>;
  MotionT<S> out{};
  out.linear = as<S>(mul(rot<S>(X.E), load<S>(m.linear)));
  return out;
}

/// X^-1 m = (E^T w, E^T v + r x E^T w).
template <class Xf, class Mo>
PLUCKER_HOT inline MotionT<scalar_t<Mo>> apply_inverse(const Xf& X, const Mo& m) requires is_motion<Mo> {
  using S = scalar_t<Mo>;
  const auto Et = rot_t<S>(X.E);
  const auto w = mul(Et, load<S>(m.angular));
  return {w, mul(Et, load<S>(m.linear)) + cross(load<S>(X.r), w)};
}
/// X* f = (E (n - r x f), E f).
template <class Xf, class Fo>
PLUCKER_HOT inline ForceT<scalar_t<Fo>> apply(const Xf& X, const Fo& f) requires is_force<Fo> {
  using S = scalar_t<Fo>;
  const auto E = rot<S>(X.E);
  const auto fl = load<S>(f.linear);
  return {mul(E, load<S>(f.angular) - cross(load<S>(X.r), fl)), mul(E, fl)};
}
/// X^T f = (E^T n + r x E^T f, E^T f): a force from B to A.
template <class Xf, class Fo>
PLUCKER_HOT inline ForceT<scalar_t<Fo>> apply_inverse(const Xf& X, const Fo& f) requires is_force<Fo> {
  using S = scalar_t<Fo>;
  const auto Et = rot_t<S>(X.E);
  const auto fl = mul(Et, load<S>(f.linear));
  return {mul(Et, load<S>(f.angular)) + cross(load<S>(X.r), fl), fl};
}
/// out += X^T f.
template <class Xf, class Fo>
PLUCKER_HOT inline void add_apply_inverse(const Xf& X, const Fo& f, Fo& out) requires is_force<Fo> {
  using S = scalar_t<Fo>;
  const auto Et = rot_t<S>(X.E);
  const auto fl = mul(Et, load<S>(f.linear));
  store_into(out.angular, load<S>(out.angular) + mul(Et, load<S>(f.angular)) + cross(load<S>(X.r), fl));
  store_into(out.linear, load<S>(out.linear) + fl);
}

/// Motion cross product m x n (Featherstone's crm(m) n).
template <class Mo, class No>
PLUCKER_HOT inline MotionT<scalar_t<Mo>> crm(const Mo& m, const No& n) requires(is_motion<Mo>&& is_motion<No>) {
  using S = scalar_t<Mo>;
  const auto mw = load<S>(m.angular), mv = load<S>(m.linear), nw = load<S>(n.angular);
  return {cross(mw, nw), cross(mw, load<S>(n.linear)) + cross(mv, nw)};
}
/// Force cross product m x* f (crf(m) f).
template <class Mo, class Fo>
PLUCKER_HOT inline ForceT<scalar_t<Fo>> crf(const Mo& m, const Fo& f) requires(is_motion<Mo>&& is_force<Fo>) {
  using S = scalar_t<Fo>;
  const auto mw = load<S>(m.angular), fl = load<S>(f.linear);
  return {cross(mw, load<S>(f.angular)) + cross(load<S>(m.linear), fl), cross(mw, fl)};
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

}  // namespace plucker::ops
