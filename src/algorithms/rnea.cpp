// The public RNEA entry points (plucker/algorithms/rnea.hpp): argument checks, sin/cos of q,
// external forces, and the recursion of algorithms/rnea.hpp on one state.
#include "algorithms/rnea.hpp"

#include "plucker/algorithms/rnea.hpp"

namespace plucker {
namespace {

using detail::ForceInput;

template <bool WithVelocity, bool WithAcceleration, ForceInput F>
void rnea_impl(const Model& model, Data& data, const double* q, const double* qd, const double* qdd,
               const Force* f_ext) {
  detail::evaluate_sincos(data, q);
  if constexpr (F == ForceInput::World || F == ForceInput::LocalWorldAligned) data.X_base[0] = Transform();
  const detail::RneaState<double> st{data.X_up.data(), data.v.data(),     data.a.data(),
                                     data.f.data(),    data.sin_q.data(), data.cos_q.data()};
  detail::rnea_passes<WithVelocity, WithAcceleration>(
      model, st, q, qd, qdd, data.tau.data(),
      [&](int i, int p, Force& f) { detail::subtract_external_force<F>(data, i, p, f_ext, f); });
}

/// The recursion with the external forces of f_ext (none when empty) in `frame`.
template <bool WithVelocity, bool WithAcceleration>
void rnea_dispatch(const Model& model, Data& data, const double* q, const double* qd, const double* qdd,
                   ExternalForces f_ext, ReferenceFrame frame) {
  if (f_ext.empty()) {
    rnea_impl<WithVelocity, WithAcceleration, ForceInput::None>(model, data, q, qd, qdd, nullptr);
  } else if (frame == ReferenceFrame::World) {
    data.X_base.resize(static_cast<std::size_t>(model.nbodies()));
    rnea_impl<WithVelocity, WithAcceleration, ForceInput::World>(model, data, q, qd, qdd, f_ext.data());
  } else if (frame == ReferenceFrame::LocalWorldAligned) {
    data.X_base.resize(static_cast<std::size_t>(model.nbodies()));
    rnea_impl<WithVelocity, WithAcceleration, ForceInput::LocalWorldAligned>(model, data, q, qd, qdd, f_ext.data());
  } else {
    rnea_impl<WithVelocity, WithAcceleration, ForceInput::Local>(model, data, q, qd, qdd, f_ext.data());
  }
}

template <bool WithVelocity, bool WithAcceleration>
const VecX& rnea_checked(const char* fn, const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                         const Eigen::Ref<const VecX>* v, const Eigen::Ref<const VecX>* a, ExternalForces f_ext,
                         ReferenceFrame frame) {
  const detail::DataUse use(model, data, fn);
  detail::check_arguments(fn, [&] {
    model.check_configuration(q, "q");
    if (v) model.check_tangent(*v, "v");
    if (a) model.check_tangent(*a, "a");
  });
  if (!f_ext.empty()) detail::check_forces(model, f_ext, fn);
  rnea_dispatch<WithVelocity, WithAcceleration>(model, data, q.data(), v ? v->data() : nullptr, a ? a->data() : nullptr,
                                                f_ext, frame);
  detail::check_finite_result(model, data, data.tau, fn, "tau");
  return data.tau;
}

}  // namespace

void detail::rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  rnea_impl<true, true, ForceInput::None>(model, data, q, v, a, nullptr);
}

void detail::rnea_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* a,
                            ExternalForces f_ext, ReferenceFrame frame) {
  rnea_dispatch<true, true>(model, data, q, v, a, f_ext, frame);
}

void detail::bias_forces_unchecked(const Model& model, Data& data, const double* q, const double* v,
                                   ExternalForces f_ext, ReferenceFrame frame) {
  rnea_dispatch<true, false>(model, data, q, v, nullptr, f_ext, frame);
}

const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a) {
  return rnea_checked<true, true>("rnea", model, data, q, &v, &a, {}, ReferenceFrame::World);
}

const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a, ExternalForces f_ext, ReferenceFrame frame) {
  return rnea_checked<true, true>("rnea", model, data, q, &v, &a, f_ext, frame);
}

const VecX& nonlinear_effects(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                              const Eigen::Ref<const VecX>& v) {
  return rnea_checked<true, false>("nonlinear_effects", model, data, q, &v, nullptr, {}, ReferenceFrame::World);
}

const VecX& gravity_torques(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  return rnea_checked<false, false>("gravity_torques", model, data, q, nullptr, nullptr, {}, ReferenceFrame::World);
}

}  // namespace plucker
