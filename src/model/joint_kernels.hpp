// The joint library's kinematics (paper 000 §3.1; paper 002 §2), written once over the state
// scalar S (double for one state, simd::Pack for W states), for every joint kind of
// include/plucker/model/joints.hpp (which holds the kinds' descriptions and their
// configuration-space operations):
//
//   compose(joint, q, X_tree)        X_up = X_J(q) X_tree, of the cheapest transform type
//   add_motion(joint, m, x)          m += S x  (a joint velocity or acceleration, Eqs. 3-4)
//   velocity_product(joint, v, qd)   v x (S qd), the velocity-product term of Eq. 4 (c_J = 0)
//   project(joint, f, out)           out = S^T f  (Eq. 8)
//   column(joint, k)                 column k of S as a typed column (a unit vector e_row, an
//                                    angular or linear direction, or a general 6-vector)
//
// Every motion subspace is constant in the body frame, so c_J = 0.
//
// visit_joint(model, i, f) is the one dispatch: f(joint, X_tree) with the joint as its kind and
// X_tree as a Translation when it has no rotation (the URDF loader's usual case: then a revolute
// joint about a body axis composes to an AxisTransform, whose products turn one plane only).
#pragma once

#include <cmath>
#include <type_traits>
#include <variant>

#include "plucker/model/model.hpp"
#include "spatial/inertia_ops.hpp"

namespace plucker::ops {

/// A joint's coordinates: q, and sin q and cos q of every coordinate (evaluated once per call
/// for all of q), at the joint's first coordinate.
template <class S>
struct JointQ {
  const S* q;
  const S* sin;
  const S* cos;
};

// ------------------------------------------------------------------ typed columns of S
/// e_row (row 0-2 angular, 3-5 linear).
struct UnitColumn {
  int row;
};
/// [a; 0] or [0; a] with a constant direction a.
struct AngularColumn {
  Vec3 a;
};
struct LinearColumn {
  Vec3 a;
};
/// A general constant 6-vector [angular; linear].
struct SixColumn {
  Vec3 angular, linear;
};

template <class S, class F>
PLUCKER_HOT inline auto project_column(const UnitColumn& s, const F& f) {
  return comp(f, s.row);
}
template <class S, class F>
PLUCKER_HOT inline auto project_column(const AngularColumn& s, const F& f) {
  return dot(load<S>(s.a), load<S>(f.angular));
}
template <class S, class F>
PLUCKER_HOT inline auto project_column(const LinearColumn& s, const F& f) {
  return dot(load<S>(s.a), load<S>(f.linear));
}
template <class S, class F>
PLUCKER_HOT inline auto project_column(const SixColumn& s, const F& f) {
  return dot(load<S>(s.angular), load<S>(f.angular)) + dot(load<S>(s.linear), load<S>(f.linear));
}

/// m += s x.
template <class S, class M, class X>
PLUCKER_HOT inline void add_column(M& m, const UnitColumn& s, const X& x) {
  if constexpr (std::is_same_v<M, MotionT<S>>) {  // registers: a multiply-add with e_row
    auto& half = s.row < 3 ? m.angular : m.linear;
    half += unit_times<S>(s.row % 3, x);
  } else {
    comp(m, s.row) += x;
  }
}
template <class S, class M, class X>
PLUCKER_HOT inline void add_column(M& m, const AngularColumn& s, const X& x) {
  store_into(m.angular, load<S>(m.angular) + load<S>(s.a) * x);
}
template <class S, class M, class X>
PLUCKER_HOT inline void add_column(M& m, const LinearColumn& s, const X& x) {
  store_into(m.linear, load<S>(m.linear) + load<S>(s.a) * x);
}
template <class S, class M, class X>
PLUCKER_HOT inline void add_column(M& m, const SixColumn& s, const X& x) {
  store_into(m.angular, load<S>(m.angular) + load<S>(s.angular) * x);
  store_into(m.linear, load<S>(m.linear) + load<S>(s.linear) * x);
}

/// I s for an articulated or rigid-body inertia.
template <class S, class I6>
PLUCKER_HOT inline force_t<S> times_column(const I6& I, const UnitColumn& s) {
  if constexpr (is_rigid_inertia<I6>)
    return rigid_column<S>(I, s.row);
  else
    return column6<S>(I, s.row);
}
template <class S, class I6, class C>
PLUCKER_HOT inline force_t<S> times_column(const I6& I, const C& s) {
  MotionT<S> m{};
  add_column<S>(m, s, S{} + 1.0);
  if constexpr (is_rigid_inertia<I6>)
    return times(I, m);
  else
    return times6(I, m);
}

// ------------------------------------------------------------------ per joint kind
template <class J>
inline constexpr int unit_axis_row = -1;  ///< k when S = e_k (a body-axis joint), else -1
template <int A>
inline constexpr int unit_axis_row<JointRevoluteAxis<A>> = A;
template <int A>
inline constexpr int unit_axis_row<JointPrismaticAxis<A>> = 3 + A;

/// Column k of the joint's motion subspace.
template <class J>
PLUCKER_HOT inline auto column(const J& joint, int k) {
  if constexpr (unit_axis_row<J> >= 0)
    return UnitColumn{unit_axis_row<J>};
  else if constexpr (std::is_same_v<J, JointSpherical> || std::is_same_v<J, JointFreeFlyer>)
    return UnitColumn{k};  // S = [1; 0] or the identity
  else if constexpr (std::is_same_v<J, JointRevolute>)
    return AngularColumn{joint.axis};
  else if constexpr (std::is_same_v<J, JointPrismatic>)
    return LinearColumn{joint.axis};
  else if constexpr (std::is_same_v<J, JointHelical>)
    return SixColumn{joint.axis, joint.pitch * joint.axis};
  else if constexpr (std::is_same_v<J, JointCylindrical>)
    return k == 0 ? SixColumn{joint.axis, Vec3::Zero()} : SixColumn{Vec3::Zero(), joint.axis};
  else if constexpr (std::is_same_v<J, JointPlanar>)
    return k < 2 ? SixColumn{Vec3::Zero(), joint.basis.col(k)} : SixColumn{joint.basis.col(2), Vec3::Zero()};
  else if constexpr (std::is_same_v<J, JointGeneral>)
    return SixColumn{joint.subspace.col(k).template head<3>(), joint.subspace.col(k).template tail<3>()};
  else
    return UnitColumn{-1};  // JointFixed: no columns
}

/// The joint's number of velocity variables, at compile time where fixed.
template <class J>
PLUCKER_HOT inline int joint_dofs(const J& joint) {
  if constexpr (J::NV == Eigen::Dynamic)
    return joint.nv();
  else
    return J::NV;
}

/// out[k] = s_k^T f (Eq. 8).
template <class J, class F, class S>
PLUCKER_HOT inline void project(const J& joint, const F& f, S* out) {
  for (int k = 0; k < joint_dofs(joint); ++k) out[k] = project_column<S>(column(joint, k), f);
}
/// m += S x.
template <class S, class J, class M>
PLUCKER_HOT inline void add_motion(const J& joint, M& m, const S* x) {
  for (int k = 0; k < joint_dofs(joint); ++k) add_column<S>(m, column(joint, k), x[k]);
}

/// v x (S qd), the velocity-product acceleration of Eq. 4 (crm(v) v_J). For S = e_k the cross
/// product with a unit vector (cross_unit).
template <class S, class J, class M>
PLUCKER_HOT inline MotionT<S> velocity_product(const J& joint, const M& v, const S* qd) {
  constexpr int k = unit_axis_row<J>;
  if constexpr (k >= 0) {
    constexpr int A = k % 3;
    MotionT<S> out{};
    if constexpr (k < 3) {
      out.angular = cross_unit<A>(load<S>(v.angular), qd[0]);
      out.linear = cross_unit<A>(load<S>(v.linear), qd[0]);
    } else {
      out.linear = cross_unit<A>(load<S>(v.angular), qd[0]);
    }
    return out;
  } else {
    MotionT<S> vJ{};
    add_motion<S>(joint, vJ, qd);
    return crm(v, vJ);
  }
}

/// I c for c = velocity_product(joint, v, qd) of the same joint (Eq. 12-13's I^a c): for a unit
/// axis e_A the cross products have no component along A (and a prismatic joint's c has no
/// angular part), so those columns of I are skipped: 24 (revolute) or 48 (prismatic) flops
/// fewer than times6.
template <class J, class I6, class Mo>
PLUCKER_HOT inline auto times_velocity_product(const J&, const I6& I, const Mo& c) {
  constexpr int k = unit_axis_row<J>;
  if constexpr (k >= 0) {
    constexpr int A = k % 3;
    constexpr auto zero = [](int col) { return col % 3 == A || (k >= 3 && col < 3); };
    constexpr int first = zero(0) ? (zero(1) ? (zero(2) ? 3 + (A == 0) : 2) : 1) : 0;
    force_t<scalar_t<Mo>> f;
    for (int r = 0; r < 6; ++r) {
      auto s = entry(I, r, first) * comp(c, first);
      for (int col = first + 1; col < 6; ++col)
        if (!zero(col)) s += entry(I, r, col) * comp(c, col);
      comp(f, r) = s;
    }
    return f;
  } else {
    return times6(I, c);
  }
}

// ------------------------------------------------------------------ X_J(q) X_tree
/// A general transform of state scalar S.
template <class S>
using transform_t = typename Types<S>::Transform;

PLUCKER_HOT inline V3<double> v3(const Vec3& x) { return {{x[0], x[1], x[2]}}; }

/// X_J X_tree = (E_J E_tree, r_tree) for X_J = (E_J, 0) as a transform_t<S> (stored form).
template <class S, class EJ>
PLUCKER_HOT inline transform_t<S> compose_rotation_general(const EJ& E_J, const Transform& X_tree) {
  const M3<double> Et = as_m3(X_tree.E);
  transform_t<S> X;
  for (int c = 0; c < 3; ++c) {  // column c of E_J E_tree = E_J (column c of E_tree)
    const auto col = mul(E_J, V3<double>{{Et(0, c), Et(1, c), Et(2, c)}});
    for (int r = 0; r < 3; ++r) X.E(r, c) = widen<S>(col[r]);
  }
  for (int k = 0; k < 3; ++k) X.r[k] = widen<S>(X_tree.r[k]);
  return X;
}
/// The same, E_J of any rotation type, as the general transform of state scalar S that the
/// recursions apply: in registers for one state with AVX2 (RegisterTransform).
template <class S, class EJ>
PLUCKER_HOT inline auto compose_rotation(const EJ& E_J, const Transform& X_tree) {
#if defined(__AVX2__)
  if constexpr (std::is_same_v<S, double>) {
    const auto E = rot<S>(E_J);
    const double* t = X_tree.E.data();  // column c of E_J E_tree = E_J (column c of E_tree)
    return RegisterTransform{Cols4{mul(E, load3(t)), mul(E, load3(t + 3)), mul(E, load3(t + 6))},
                             load3(X_tree.r.data())};
  } else
#endif
    return compose_rotation_general<S>(E_J, X_tree);
}
/// X_J X_tree = (E_J E_tree, r_tree + E_tree^T p) for X_J = (E_J, p).
template <class S, class EJ, class P>
PLUCKER_HOT inline auto compose_rotation(const EJ& E_J, const V3<P>& p, const Transform& X_tree) {
  auto X = compose_rotation<S>(E_J, X_tree);
  const auto r = v3(X_tree.r) + mul_t(as_m3(X_tree.E), p);
  if constexpr (is_register_transform<decltype(X)>)
    X.r = make3<S>(r[0], r[1], r[2]);
  else
    for (int k = 0; k < 3; ++k) X.r[k] = r[k];
  return X;
}
/// A transform of W states from a constant one.
inline XformT<Pack> to_xform(const Transform& X) {
  XformT<Pack> out;
  for (int r = 0; r < 3; ++r) {
    out.r[r] = simd::splat(X.r[r]);
    for (int c = 0; c < 3; ++c) out.E(r, c) = simd::splat(X.E(r, c));
  }
  return out;
}

/// The rotation matrix E_J = R^T of a unit quaternion [x y z w] (body to parent).
template <class S>
PLUCKER_HOT inline M3<S> quaternion_rotation_t(const S* q) {
  const S x = q[0], y = q[1], z = q[2], w = q[3];
  const S tx = 2.0 * x, ty = 2.0 * y, tz = 2.0 * z;
  const S twx = tx * w, twy = ty * w, twz = tz * w, txx = tx * x, txy = ty * x, txz = tz * x, tyy = ty * y,
          tyz = tz * y, tzz = tz * z;
  M3<S> Rt;  // R^T
  Rt(0, 0) = 1.0 - (tyy + tzz);
  Rt(1, 0) = txy - twz;
  Rt(2, 0) = txz + twy;
  Rt(0, 1) = txy + twz;
  Rt(1, 1) = 1.0 - (txx + tzz);
  Rt(2, 1) = tyz - twx;
  Rt(0, 2) = txz - twy;
  Rt(1, 2) = tyz + twx;
  Rt(2, 2) = 1.0 - (txx + tyy);
  return Rt;
}
/// E_J = R^T for a rotation by angle (sin s, cos c) about the unit axis a (Rodrigues):
/// E_J = c 1 - s [a]x + (1 - c) a a^T.
template <class S>
PLUCKER_HOT inline M3<S> axis_rotation_t(const Vec3& a, const S& s, const S& c) {
  const S omc = 1.0 - c;
  M3<S> E;
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) E(r, k) = omc * (a[r] * a[k]);
  for (int r = 0; r < 3; ++r) E(r, r) += c;
  E(0, 1) += s * a.z();
  E(0, 2) -= s * a.y();
  E(1, 0) -= s * a.z();
  E(1, 2) += s * a.x();
  E(2, 0) += s * a.y();
  E(2, 1) -= s * a.x();
  return E;
}

/// Evaluates a double-only kernel lane by lane (JointGeneral's exponential map).
template <class F>
inline XformT<Pack> per_lane(F&& f) {
  XformT<Pack> X;
  for (int l = 0; l < simd::W; ++l) {
    const Transform Xl = f(l);
    for (int r = 0; r < 3; ++r) {
      X.r[r][l] = Xl.r[r];
      for (int c = 0; c < 3; ++c) X.E(r, c)[l] = Xl.E(r, c);
    }
  }
  return X;
}

/// X_J(q) X_tree. Returns an AxisTransform (revolute about a body axis, X_tree a translation), a
/// Translation (prismatic along a body axis, X_tree a translation; a fixed joint's Translation),
/// the constant X_tree of a fixed joint, or a general transform. visit_joint passes X_tree as a
/// Translation only to the kinds that have a structured form.
template <class S, class J, class Tree>
PLUCKER_HOT inline auto compose(const J& joint, const JointQ<S>& q, const Tree& X_tree) {
  constexpr bool translation = std::is_same_v<Tree, Translation<Vec3>>;
  static_assert(translation || std::is_same_v<Tree, Transform>);
  if constexpr (std::is_same_v<J, JointFixed>) {
    if constexpr (std::is_same_v<S, double>)
      return X_tree;
    else
      return to_xform(X_tree);  // lanes keep transforms of lane scalar
  } else if constexpr (unit_axis_row<J> >= 0 && unit_axis_row<J> < 3) {
    constexpr int A = unit_axis_row<J>;
    const PlaneRot<A, S> E_J{q.sin[0], q.cos[0]};
    if constexpr (translation)
      return AxisTransform<A, S>{E_J, X_tree.r};
    else  // rows i, j of E_tree mix; r unchanged
      return compose_rotation<S>(E_J, X_tree);
  } else if constexpr (unit_axis_row<J> >= 3) {
    constexpr int A = unit_axis_row<J> - 3;
    // X_J = (1, d e_A): r = r_tree + d E_tree^T e_A (row A of E_tree).
    if constexpr (translation) {
      using R = std::conditional_t<std::is_same_v<S, double>, Vec3, V3<Pack>>;
      R r;
      for (int k = 0; k < 3; ++k) r[k] = widen<S>(X_tree.r[k]);
      r[A] += q.q[0];
      return Translation<R>{IdentityRot{}, r};
    } else {
      V3<S> p{};
      p[A] = q.q[0];
      return compose_rotation<S>(IdentityRot{}, p, X_tree);
    }
  } else if constexpr (std::is_same_v<J, JointRevolute>) {
    return compose_rotation<S>(axis_rotation_t<S>(joint.axis, q.sin[0], q.cos[0]), X_tree);
  } else if constexpr (std::is_same_v<J, JointPrismatic>) {
    return compose_rotation<S>(IdentityRot{}, v3(joint.axis) * q.q[0], X_tree);
  } else if constexpr (std::is_same_v<J, JointHelical>) {
    return compose_rotation<S>(axis_rotation_t<S>(joint.axis, q.sin[0], q.cos[0]),
                               v3(joint.axis) * (joint.pitch * q.q[0]), X_tree);
  } else if constexpr (std::is_same_v<J, JointCylindrical>) {
    return compose_rotation<S>(axis_rotation_t<S>(joint.axis, q.sin[0], q.cos[0]), v3(joint.axis) * q.q[1], X_tree);
  } else if constexpr (std::is_same_v<J, JointPlanar>) {
    // q = [x, y, cos, sin]: the pose is R = B Rz B^T, p = B (x, y, 0), so E_J = B Rz^T B^T.
    const M3<double> B = as_m3(joint.basis);
    M3<S> RzT{};
    RzT(0, 0) = q.q[2], RzT(0, 1) = q.q[3], RzT(1, 0) = -q.q[3], RzT(1, 1) = q.q[2], RzT(2, 2) = S{} + 1.0;
    M3<double> Bt;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) Bt(r, c) = B(c, r);
    return compose_rotation<S>(mul(mul(B, RzT), Bt), mul(B, V3<S>{{q.q[0], q.q[1], S{}}}), X_tree);
  } else if constexpr (std::is_same_v<J, JointSpherical>) {
    return compose_rotation<S>(quaternion_rotation_t<S>(q.q), X_tree);
  } else if constexpr (std::is_same_v<J, JointFreeFlyer>) {
    return compose_rotation<S>(quaternion_rotation_t<S>(q.q + 3), V3<S>{{q.q[0], q.q[1], q.q[2]}}, X_tree);
  } else {
    static_assert(std::is_same_v<J, JointGeneral>);
    if constexpr (std::is_same_v<S, double>) {
      return joint.exp(q.q) * X_tree;
    } else {
      const int d = joint.nv();
      return per_lane([&](int l) {
        double ql[6];
        for (int k = 0; k < d; ++k) ql[k] = q.q[k][l];
        return joint.exp(ql) * X_tree;
      });
    }
  }
}

/// Whether compose gives a structured transform for this joint kind and X_tree kind: then
/// re-composing is cheaper than reading a stored general X_up.
template <class J>
inline constexpr bool has_structured_form = unit_axis_row<J> >= 0 || std::is_same_v<J, JointFixed>;

/// A transform as stored per body: the general form of state scalar S.
template <class S, class X>
PLUCKER_HOT inline transform_t<S> to_stored(const X& x) {
  if constexpr (std::is_same_v<S, double>)
    return to_transform(x);
  else
    return to_xform(x);
}

/// X_up = X_J(q) X_tree, stored in `up` in its general form; returns `up` itself when the
/// composition is general (later products read it from there, as they would a stored one), or
/// the structured transform.
template <class S, class J, class Tree>
PLUCKER_HOT inline decltype(auto) compose_up(const J& joint, const JointQ<S>& q, const Tree& X_tree,
                                             transform_t<S>& up) {
  using X = std::decay_t<decltype(compose(joint, q, X_tree))>;
  if constexpr (std::is_same_v<X, transform_t<S>>) {
    up = compose(joint, q, X_tree);
    return static_cast<const transform_t<S>&>(up);
  } else {
    X x = compose(joint, q, X_tree);
    if constexpr (is_register_transform<X>)
      store_into(up, x);
    else
      up = to_stored<S>(x);
    return x;
  }
}

/// X_up[i] for a later pass: re-composed when that gives a structured transform (cheaper to
/// rebuild from sin/cos than to apply as a general one), else the general one stored by pass 1
/// (by reference).
template <class S, class J, class Tree, class Stored>
PLUCKER_HOT inline decltype(auto) x_up(const J& joint, const JointQ<S>& q, const Tree& X_tree, const Stored& stored) {
  using X = decltype(compose(joint, q, X_tree));
  if constexpr (std::is_same_v<X, Stored> || is_register_transform<X>)
    return static_cast<const Stored&>(stored);
  else
    return compose(joint, q, X_tree);
}

/// Calls f(joint, X_tree) for joint kind J, with X_tree as a Translation when it has no rotation
/// and the kind has a structured form, else as the Transform.
template <class J, class F>
PLUCKER_HOT inline void visit_kind(const Model& model, int i, const J& joint, F& f) {
  const Transform& X_tree = model.X_tree(i);
  if constexpr (has_structured_form<J>) {
    if (model.X_tree_is_translation(i)) {
      f(joint, Translation<Vec3>{IdentityRot{}, X_tree.r});
      return;
    }
  }
  f(joint, X_tree);
}

/// The one dispatch on the joint kind: f(joint, X_tree) (see visit_kind). A switch on the
/// variant's index, expanded in the caller: the kinds' kernels inline into the recursion's loop
/// (std::visit calls them through a table of functions, which costs the loop its registers).
template <class F>
PLUCKER_HOT inline void visit_joint(const Model& model, int i, F&& f) {
  const JointModel& joint = model.joint(i);
  static_assert(std::variant_size_v<JointModel> == 15, "one case per joint kind below");
#define PLUCKER_JOINT_CASE(K) \
  case K:                     \
    return visit_kind(model, i, *std::get_if<K>(&joint), f);
  switch (joint.index()) {
    PLUCKER_JOINT_CASE(0)
    PLUCKER_JOINT_CASE(1)
    PLUCKER_JOINT_CASE(2)
    PLUCKER_JOINT_CASE(3)
    PLUCKER_JOINT_CASE(4)
    PLUCKER_JOINT_CASE(5)
    PLUCKER_JOINT_CASE(6)
    PLUCKER_JOINT_CASE(7)
    PLUCKER_JOINT_CASE(8)
    PLUCKER_JOINT_CASE(9)
    PLUCKER_JOINT_CASE(10)
    PLUCKER_JOINT_CASE(11)
    PLUCKER_JOINT_CASE(12)
    PLUCKER_JOINT_CASE(13)
    PLUCKER_JOINT_CASE(14)
    default:
      __builtin_unreachable();
  }
#undef PLUCKER_JOINT_CASE
}

}  // namespace plucker::ops
