// Pieces shared by the O(N) recursions (rnea.cpp, aba.cpp), and their entry points without
// argument checks, for callers that validated once up front (batch.cpp).
#pragma once

#include <array>
#include <utility>
#include <variant>

#include "checks.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker::detail {

/// Where the external forces of a call are given, if any (a template parameter, so the
/// recursions without external forces carry no test for them).
enum class ForceInput { None, World, Local };

/// Start of pass 1: v_0 = 0, a_0 = -g (the fictitious base acceleration of paper 000),
/// 0_X_0 = 1 when world-frame forces must be mapped to the bodies, and sin/cos of q.
template <ForceInput F>
inline void begin_outward_pass(const Model& model, Data& data, const double* q) {
  data.v[0].setZero();
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());
  if constexpr (F == ForceInput::World) data.X_base[0] = Transform();
  evaluate_sincos(data, q);
}

/// f -= f^x_i, the external force on body i in body coordinates (Eq. 7). World-frame forces
/// are moved to the body by i_X_0 = i_X_p p_X_0, which is kept in data.X_base.
template <ForceInput F>
inline void subtract_external_force(Data& data, int i, int p, const Force* f_ext, Force& f) {
  if constexpr (F == ForceInput::World) {
    data.X_base[i] = data.X_up[i] * data.X_base[p];
    f -= data.X_base[i].apply(f_ext[i]);
  } else if constexpr (F == ForceInput::Local) {
    f -= f_ext[i];
  }
}

// Joints whose motion subspace is one coordinate axis of the body frame (most URDF joints
// after the constant frame change X_tree): h_i = e_k with k = A (revolute) or 3 + A
// (prismatic); -1 for every other kind. The kernels below skip the multiplications by the
// zeros of such an h (which the compiler may not drop: 0 * x is not 0 for x = inf).
template <class J>
inline constexpr int unit_axis_row = -1;
template <int A>
inline constexpr int unit_axis_row<JointRevoluteAxis<A>> = A;
template <int A>
inline constexpr int unit_axis_row<JointPrismaticAxis<A>> = 3 + A;

/// unit_axis_row of every alternative of JointModel, by variant index: loops test a joint's
/// kind with one table load instead of a std::visit.
template <std::size_t... K>
constexpr std::array<int, sizeof...(K)> unit_axis_rows(std::index_sequence<K...>) {
  return {unit_axis_row<std::variant_alternative_t<K, JointModel>>...};
}
inline constexpr auto kUnitAxisRow = unit_axis_rows(std::make_index_sequence<std::variant_size_v<JointModel>>{});

/// X_J(q) X_tree of a revolute joint about body axis k (its kUnitAxisRow, 0..2), from
/// s = sin q and c = cos q.
inline Transform compose_revolute_axis(int k, double s, double c, const Transform& X_tree) {
  switch (k) {
    case 0: return JointRevoluteAxis<0>{}.compose_sc(s, c, X_tree);
    case 1: return JointRevoluteAxis<1>{}.compose_sc(s, c, X_tree);
    default: return JointRevoluteAxis<2>{}.compose_sc(s, c, X_tree);
  }
}

/// a x (s e_A) for a 3-vector a.
template <int A>
inline Vec3 cross_unit(const Vec3& a, double s) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
  Vec3 out;
  out[A] = 0.0;
  out[i] = a[j] * s;
  out[j] = -a[i] * s;
  return out;
}

/// v x (S qd), the velocity-product acceleration of Eq. 4 (crm(v) v_J).
template <class J>
inline Motion velocity_product(const J& joint, const Motion& v, const double* qd) {
  constexpr int k = unit_axis_row<J>;
  if constexpr (k >= 0 && k < 3)
    return Motion(cross_unit<k>(v.angular, qd[0]), cross_unit<k>(v.linear, qd[0]));
  else if constexpr (k >= 3)
    return Motion(Vec3::Zero(), cross_unit<k - 3>(v.angular, qd[0]));
  else
    return cross(v, joint.motion(qd));
}

/// m += S x (a joint velocity or acceleration x in the body frame, Eqs. 3-4).
template <class J>
inline void add_joint_motion(const J& joint, Motion& m, const double* x) {
  constexpr int k = unit_axis_row<J>;
  if constexpr (k >= 0 && k < 3)
    m.angular[k] += x[0];
  else if constexpr (k >= 3)
    m.linear[k - 3] += x[0];
  else
    m += joint.motion(x);
}

// Unchecked entry points: q, v, a/tau point to nq / nv finite values, quaternions unit,
// data made for model. Results in data.tau, data.qdd, data.M as for the checked functions.
void rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a);
void aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau);
void crba_unchecked(const Model& model, Data& data, const double* q, Triangle triangle);

}  // namespace plucker::detail
