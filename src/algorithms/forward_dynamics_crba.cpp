// Forward dynamics by the O(N^3) path: M from the CRBA, C from the RNEA, then a dense
// Cholesky factorisation M = L^T L in place on M (jsim_factorisation.cpp: leaves first, so its
// pivots are those of every other method, DEVELOPERS.md "Singularity") and two triangular solves.
#include "algorithms/fd_kernels.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker {
namespace {

const VecX& forward_dynamics_crba_impl(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                       const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                       ExternalForces f_ext, ReferenceFrame frame) {
  detail::check_state(model, "forward_dynamics_crba", q, v, tau, "tau", f_ext);  // errors name the function called
  detail::FactorWorkspace& ws = detail::workspace<detail::FactorWorkspace>(model, data);
  if (f_ext.empty())
    nonlinear_effects(model, data, q, v);
  else
    rnea(model, data, q, v, ws.zero, f_ext, frame);  // C including the external forces
  data.qdd = tau - data.tau;
  crba(model, data, q, Triangle::Upper);
  detail::factorize_ltl_dense(model, data);
  detail::solve_ltl_dense(data.M, data.qdd);
  detail::check_finite_result(model, data, data.qdd, "forward_dynamics_crba", "qdd");
  return data.qdd;
}

}  // namespace

const VecX& forward_dynamics_crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau) {
  return forward_dynamics_crba_impl(model, data, q, v, tau, {}, ReferenceFrame::World);
}

const VecX& forward_dynamics_crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                  ExternalForces f_ext, ReferenceFrame frame) {
  return forward_dynamics_crba_impl(model, data, q, v, tau, f_ext, frame);
}

}  // namespace plucker
