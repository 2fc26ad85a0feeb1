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
  if constexpr (F == ForceInput::World || F == ForceInput::LocalWorldAligned) data.X_base[0] = Transform();
  const detail::AbaState<double> st{data.X_up.data(),  data.v.data(),           data.a.data(),
                                    ws.c.data(),       ws.I_articulated.data(), ws.p_articulated.data(),
                                    ws.U.data(),       ws.D_inv.data(),         ws.u.data(),
                                    data.sin_q.data(), data.cos_q.data()};
  detail::aba_passes(
      model, st, q, qd, tau, data.qdd.data(),
      [&](int i, int p, Force& f) { detail::subtract_external_force<F>(data, i, p, f_ext, f); },
      [&](int i, const ops::ArticulatedT<double>& P) {
        return detail::PivotTest{model, data.X_up, i, "aba", detail::pivot_scale(P)};
      });
}

/// The recursion with the external forces of f_ext (none when empty) in `frame`.
void aba_dispatch(const Model& model, Data& data, const double* q, const double* qd, const double* tau,
                  ExternalForces f_ext, ReferenceFrame frame) {
  if (f_ext.empty()) {
    aba_impl<ForceInput::None>(model, data, q, qd, tau, nullptr);
  } else if (frame == ReferenceFrame::World) {
    data.X_base.resize(static_cast<std::size_t>(model.nbodies()));
    aba_impl<ForceInput::World>(model, data, q, qd, tau, f_ext.data());
  } else if (frame == ReferenceFrame::LocalWorldAligned) {
    data.X_base.resize(static_cast<std::size_t>(model.nbodies()));
    aba_impl<ForceInput::LocalWorldAligned>(model, data, q, qd, tau, f_ext.data());
  } else {
    aba_impl<ForceInput::Local>(model, data, q, qd, tau, f_ext.data());
  }
}

const VecX& aba_checked(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau, ExternalForces f_ext,
                        ReferenceFrame frame) {
  const detail::DataUse use(model, data, "aba");
  detail::check_state(model, "aba", q, v, tau, "tau", f_ext);
  aba_dispatch(model, data, q.data(), v.data(), tau.data(), f_ext, frame);
  detail::check_finite_result(model, data, data.qdd, "aba", "qdd");
  return data.qdd;
}

}  // namespace

namespace detail {

double joint_space_diagonal(const Model& model, const std::vector<Transform>& X_up, int i, int k) {
  const std::vector<int> nu = model.subtree(i);  // ascending; the slow path may allocate
  std::vector<RigidBodyInertia> I_C(nu.size());
  std::vector<int> slot(static_cast<std::size_t>(model.nbodies()), -1);
  for (std::size_t m = 0; m < nu.size(); ++m) slot[nu[m]] = static_cast<int>(m), I_C[m] = model.inertia(nu[m]);
  for (std::size_t m = nu.size(); m-- > 1;)  // Eq. 9 over the subtree, leaves first
    ops::add_congruence(X_up[nu[m]], I_C[m], I_C[slot[model.parent(nu[m])]]);
  double M_kk = 0.0;
  ops::visit_joint(model, i, [&](const auto& joint, const auto&) {
    using J = std::decay_t<decltype(joint)>;
    if constexpr (J::NV != 0) {  // a fixed joint has no column k (and no pivot to test)
      const Force f = ops::times_column<double>(I_C[0], ops::column(joint, k));
      M_kk = ops::project_column<double>(ops::column(joint, k), f);
    }
  });
  return M_kk;
}

void throw_singular(const Model& model, int i, int k, const char* fn, double pivot, double M_kk) {
  std::ostringstream m;
  m << fn << ": forward dynamics undefined: joint '" << model.joint_name(i) << "' (body '" << model.body_name(i) << "'";
  if (model.joint_nv(i) > 1) m << ", DoF " << k;
  m << ") has a singular articulated inertia (pivot " << pivot << " of M_kk = " << M_kk
    << "): the subtree it moves has no mass or inertia along its motion";
  throw SingularError(m.str());
}

}  // namespace detail

void detail::aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau) {
  aba_impl<ForceInput::None>(model, data, q, v, tau, nullptr);
}

void detail::aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau,
                           ExternalForces f_ext, ReferenceFrame frame) {
  aba_dispatch(model, data, q, v, tau, f_ext, frame);
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
