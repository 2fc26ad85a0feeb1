// The public ABA entry points (plucker/algorithms/aba.hpp): argument checks, sin/cos of q,
// external forces, and the recursion of algorithms/aba.hpp on one state.
#include "algorithms/aba.hpp"

#include "plucker/algorithms/aba.hpp"

namespace plucker {
namespace {

using detail::AbaWorkspace;
using detail::ForceInput;

template <ForceInput F>
void aba_impl(const Model& model, Data& data, const double* q, const double* qd, const double* tau,
              const Force* f_ext) {
  AbaWorkspace& ws = detail::workspace<AbaWorkspace>(model, data);
  detail::evaluate_sincos(data, q);
  if constexpr (F == ForceInput::World) data.X_base[0] = Transform();
  const detail::AbaState<double> st{data.X_up.data(),         data.v.data(),           data.a.data(),
                                    ws.c.data(),              ws.I_articulated.data(), ws.p_articulated.data(),
                                    ws.U.data(),              ws.D_inv.data(),         ws.u.data(),
                                    data.sin_q.data(),        data.cos_q.data()};
  detail::aba_passes(
      model, st, q, qd, tau, data.qdd.data(),
      [&](int i, int p, Force& f) { detail::subtract_external_force<F>(data, i, p, f_ext, f); },
      [&](int i, double pivot, double scale) { detail::throw_singular(model, i, "aba", pivot, scale); });
}

const VecX& aba_checked(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau, ExternalForces f_ext,
                        ReferenceFrame frame) {
  const detail::DataUse use(model, data, "aba");
  detail::check_arguments("aba", [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
    model.check_tangent(tau, "tau");
  });
  if (f_ext.empty()) {
    aba_impl<ForceInput::None>(model, data, q.data(), v.data(), tau.data(), nullptr);
  } else {
    detail::check_forces(model, f_ext, "aba");
    if (frame == ReferenceFrame::World) {
      data.X_base.resize(static_cast<std::size_t>(model.nbodies()));
      aba_impl<ForceInput::World>(model, data, q.data(), v.data(), tau.data(), f_ext.data());
    } else {
      aba_impl<ForceInput::Local>(model, data, q.data(), v.data(), tau.data(), f_ext.data());
    }
  }
  detail::check_finite_result(model, data, data.qdd, "aba", "qdd");
  return data.qdd;
}

}  // namespace

void detail::aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau) {
  aba_impl<ForceInput::None>(model, data, q, v, tau, nullptr);
}

const VecX& aba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                const Eigen::Ref<const VecX>& tau) {
  return aba_checked(model, data, q, v, tau, {}, ReferenceFrame::World);
}

const VecX& aba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                const Eigen::Ref<const VecX>& tau, ExternalForces f_ext, ReferenceFrame frame) {
  return aba_checked(model, data, q, v, tau, f_ext, frame);
}

}  // namespace plucker
