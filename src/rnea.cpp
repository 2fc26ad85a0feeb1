// Recursive Newton-Euler algorithm, link coordinates (paper 000 §3.1):
//   forward:  v_i = iX_p v_p + h_i qd_i                      (Eq. 3)
//             a_i = iX_p a_p + h_i qdd_i + v_i x h_i qd_i     (Eq. 4; c_J = 0, S constant in body frame)
//             f_i = I_i a_i + v_i x* I_i v_i - f^x_i          (Eq. 5, 7)
//   backward: tau_i = h_i^T f_i                               (Eq. 8)
//             f_p += pX_i* f_i                                (Eq. 7)
// Gravity enters as the fictitious base acceleration a_0 = -g.
#include "detail/recursion.hpp"
#include "plucker/algorithms/rnea.hpp"

namespace plucker {
namespace {

using detail::ForceInput;

template <bool WithVelocity, bool WithAcceleration, ForceInput F>
void rnea_impl(const Model& model, Data& data, const double* q, const double* v, const double* a,
               const Force* f_ext) {
  const int n = model.nbodies();
  detail::begin_outward_pass<F>(model, data, q);

  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      const Transform& X = data.X_up[i] = detail::joint_compose(joint, data, q, model.idx_q(i), model.X_tree(i));
      // Children of the base: v_0 = 0 and a_0 = -g (linear), so X v_0 vanishes and X a_0 = (0, E a_0).
      const bool on_base = p == 0;
      const Motion a_p = on_base ? Motion(Vec3::Zero(), X.E * data.a[0].linear) : X.apply(data.a[p]);
      if constexpr (WithVelocity) {
        const double* qd = v + model.idx_v(i);
        if (on_base)
          data.v[i].setZero();
        else
          data.v[i] = X.apply(data.v[p]);
        detail::add_joint_motion(joint, data.v[i], qd);                         // Eq. 3
        data.a[i] = a_p + detail::velocity_product(joint, data.v[i], qd);  // Eq. 4, v x h qd
      } else {
        data.v[i].setZero();
        data.a[i] = a_p;
      }
      if constexpr (WithAcceleration) detail::add_joint_motion(joint, data.a[i], a + model.idx_v(i));  // Eq. 4, h qdd
    });
    const RigidBodyInertia& I = model.inertia(i);
    data.f[i] = I * data.a[i];  // Eq. 5
    if constexpr (WithVelocity) data.f[i] += cross(data.v[i], I * data.v[i]);
    detail::subtract_external_force<F>(data, i, p, f_ext, data.f[i]);
  }

  for (int i = n - 1; i > 0; --i) {
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      joint.project(data.f[i], data.tau.data() + model.idx_v(i));  // Eq. 8
    });
    const int p = model.parent(i);
    if (p > 0) data.f[p] += data.X_up[i].apply_inverse(data.f[i]);  // Eq. 7
  }
}

}  // namespace

void detail::rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  rnea_impl<true, true, ForceInput::None>(model, data, q, v, a, nullptr);
}

const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a) {
  detail::check_data(model, data, "rnea");
  model.check_configuration(q, "rnea: q");
  model.check_tangent(v, "rnea: v");
  model.check_tangent(a, "rnea: a");
  rnea_impl<true, true, ForceInput::None>(model, data, q.data(), v.data(), a.data(), nullptr);
  return data.tau;
}

const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a, ExternalForces f_ext, ReferenceFrame frame) {
  detail::check_data(model, data, "rnea");
  model.check_configuration(q, "rnea: q");
  model.check_tangent(v, "rnea: v");
  model.check_tangent(a, "rnea: a");
  detail::check_forces(model, f_ext, "rnea");
  if (frame == ReferenceFrame::World)
    rnea_impl<true, true, ForceInput::World>(model, data, q.data(), v.data(), a.data(), f_ext.data());
  else
    rnea_impl<true, true, ForceInput::Local>(model, data, q.data(), v.data(), a.data(), f_ext.data());
  return data.tau;
}

const VecX& nonlinear_effects(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                              const Eigen::Ref<const VecX>& v) {
  detail::check_data(model, data, "nonlinear_effects");
  model.check_configuration(q, "nonlinear_effects: q");
  model.check_tangent(v, "nonlinear_effects: v");
  rnea_impl<true, false, ForceInput::None>(model, data, q.data(), v.data(), nullptr, nullptr);
  return data.tau;
}

const VecX& gravity_torques(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_data(model, data, "gravity_torques");
  model.check_configuration(q, "gravity_torques: q");
  rnea_impl<false, false, ForceInput::None>(model, data, q.data(), nullptr, nullptr, nullptr);
  return data.tau;
}

}  // namespace plucker
