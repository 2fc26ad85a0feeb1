// One entry point for every forward-dynamics method (forward_dynamics.hpp), and the choice that
// `auto` makes from the model's topology.
#include <algorithm>
#include <array>
#include <cstdio>

#include "algorithms/fd_kernels.hpp"

namespace plucker {
namespace {

using Method = ForwardDynamicsMethod;

constexpr std::array<Method, 14> kMethods = {Method::Aba,
                                             Method::CrbaCholesky,
                                             Method::CrbaLtdl,
                                             Method::DirectCholesky,
                                             Method::SymmetryCholesky,
                                             Method::ConjugateGradient,
                                             Method::PreconditionedCG,
                                             Method::Innovations,
                                             Method::Minv,
                                             Method::GlobalSparse,
                                             Method::Cfa,
                                             Method::Dca,
                                             Method::DcaAccurate,
                                             Method::Auto};
constexpr std::array<std::string_view, 14> kNames = {"aba",
                                                     "crba_cholesky",
                                                     "crba_ltdl",
                                                     "direct_cholesky",
                                                     "symmetry_cholesky",
                                                     "cg",
                                                     "pcg",
                                                     "innovations",
                                                     "minv",
                                                     "global_sparse",
                                                     "cfa",
                                                     "dca",
                                                     "dca_accurate",
                                                     "auto"};

// ---- Auto: predicted time of the two candidates, ns ----
// The features are the terms of the cost formulas: bodies, DoFs, sum over the joints of nv_j^2
// (the d x d blocks of multi-DoF joints), the sums over the DoFs of the DoF depth d_k (the entries
// of M below its diagonal: the CRBA's support-path walk and the back-substitution) and of
// d_k (d_k + 1) / 2 (LTDL's multiply-subtracts, ltdl_cost), and nv^2 (the dense M the CRBA clears).
struct Features {
  double bodies = 0, dofs = 0, joint_dof2 = 0, depth_sum = 0, ltdl_mul = 0, dofs2 = 0;
};

Features features(const Model& model) {
  Features f;
  f.bodies = model.nbodies() - 1;
  f.dofs = model.nv();
  f.dofs2 = f.dofs * f.dofs;
  for (int i = 1; i < model.nbodies(); ++i) f.joint_dof2 += model.joint_nv(i) * model.joint_nv(i);
  const FactorisationCost c = ltdl_cost(model);
  f.depth_sum = static_cast<double>(c.factor_div);
  f.ltdl_mul = static_cast<double>(c.factor_mul);
  return f;
}

// Per-term costs in ns: non-negative least-squares fit (bench/fd_calibrate.py) to the median
// times of forward_dynamics(Aba) and forward_dynamics(CrbaLtdl) measured by `plucker_bench --fd`
// (Release, -march=native, on the 2-core development machine) on 44 models: chains and random
// trees (bf 1.5, 2, 3, 5; N = 4..128), the humanoid, quadruped and all-joints builders, 1-16
// free-floating bodies and chains of 2-16 ball joints. Fit residuals: aba 13 % rms, crba_ltdl
// 16 % rms; the predicted winner is the measured one on all 44. Measured, the ABA wins on every
// chain, tree and robot (crba_ltdl 1.0-7.5x slower), CRBA + LTDL on sets of free-floating bodies
// (block-diagonal M; 10-30 % faster) and on the 2-ball chain.
constexpr double kAbaConst = 0, kAbaPerBody = 138.2, kAbaPerDof = 105.6, kAbaPerJointDof2 = 0;
constexpr double kLtdlConst = 25.78, kLtdlPerBody = 276.3, kLtdlPerDof = 0, kLtdlPerJointDof2 = 0.8196,
                 kLtdlPerDepth = 12.33, kLtdlPerMul = 0.3315, kLtdlPerDof2 = 0.3154;

// The divide-and-conquer algorithm on one thread (Accurate): ns per operation of dca_cost (total
// plus the kinematics pass), least-squares fit to the one-thread times of `plucker_bench
// --dca_timing` (Release, no -march, the shared 2-core machine at load 3) on 16 chains, trees,
// chain1024 and talos_full: 0.18 ns per operation, 8.5 % rms residual; measured, the DCA takes
// 3-9x the ABA's time on every one of them (docs/dca.md).
constexpr double kDcaConst = 0, kDcaPerOp = 0.18;

double predict_aba(const Features& f) {
  return kAbaConst + kAbaPerBody * f.bodies + kAbaPerDof * f.dofs + kAbaPerJointDof2 * f.joint_dof2;
}
double predict_crba_ltdl(const Features& f) {
  return kLtdlConst + kLtdlPerBody * f.bodies + kLtdlPerDof * f.dofs + kLtdlPerJointDof2 * f.joint_dof2 +
         kLtdlPerDepth * f.depth_sum + kLtdlPerMul * f.ltdl_mul + kLtdlPerDof2 * f.dofs2;
}

// C = rnea(q, v, 0, f_ext) into data.tau; leaves the poses in data.X_up.
void bias_forces(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 ExternalForces f_ext, ReferenceFrame frame, const VecX& zero) {
  if (f_ext.empty())
    nonlinear_effects(model, data, q, v);
  else
    rnea(model, data, q, v, zero, f_ext, frame);
}

}  // namespace

std::span<const ForwardDynamicsMethod> forward_dynamics_methods() { return kMethods; }

std::string_view to_string(ForwardDynamicsMethod method) {
  for (std::size_t k = 0; k < kMethods.size(); ++k)
    if (kMethods[k] == method) return kNames[k];
  return "unknown";
}

ForwardDynamicsMethod parse_forward_dynamics_method(std::string_view name) {
  std::string valid;
  for (std::size_t k = 0; k < kNames.size(); ++k) {
    if (kNames[k] == name) return kMethods[k];
    valid += (k ? ", '" : "'") + std::string(kNames[k]) + "'";
  }
  throw InvalidArgument("unknown forward-dynamics method '" + std::string(name) + "' (expected one of " + valid + ")");
}

ForwardDynamicsChoice forward_dynamics_choice(const Model& model) {
  const Features f = features(model);
  ForwardDynamicsChoice c;
  c.predicted_ns_aba = predict_aba(f);
  c.predicted_ns_crba_ltdl = predict_crba_ltdl(f);
  const DcaCost dca = dca_cost(model, DcaVariant::Accurate);
  c.predicted_ns_dca = kDcaConst + kDcaPerOp * static_cast<double>(dca.total + dca.kinematics);
  c.method = c.predicted_ns_crba_ltdl < c.predicted_ns_aba ? Method::CrbaLtdl : Method::Aba;
  const double best = std::min(c.predicted_ns_aba, c.predicted_ns_crba_ltdl);
  if (c.predicted_ns_dca < best) c.method = Method::DcaAccurate;  // not seen on any model (docs/dca.md)
  const double chain_depth_sum = f.dofs * (f.dofs - 1) / 2;       // an unbranched chain of the same nv
  // global_sparse and cfa are O(N) like the ABA but with dense 6 x 6 blocks per body and joint: on one
  // core they measured 12-21x the ABA's time (chain64: 185 and 214 us vs 15.8 us; anymal: 34 vs 1.6 us;
  // docs/algorithms/global_formulation.md), and the CFA's O(log N) depth needs O(N) processors. Auto
  // never picks them; the reason says so.
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "%s: predicted %.0f ns for aba vs %.0f ns for crba_ltdl (nv = %.0f, %.0f bodies; branch-induced "
                "sparsity: the sum of DoF depths is %.0f (%.0f%% of an unbranched chain's %.0f), LTDL needs %.0f "
                "multiply-subtracts vs %.0f dense); global_sparse and cfa (O(N) with 6x6 blocks, measured 12-21x "
                "the aba's time on one core) are not candidates",
                std::string(to_string(c.method)).c_str(), c.predicted_ns_aba, c.predicted_ns_crba_ltdl, f.dofs,
                f.bodies, f.depth_sum, chain_depth_sum > 0 ? 100.0 * f.depth_sum / chain_depth_sum : 100.0,
                chain_depth_sum, f.ltdl_mul, static_cast<double>(dense_cholesky_cost(model.nv()).factor_mul));
  c.reason = buf;
  std::snprintf(buf, sizeof buf,
                "; dca_accurate on one thread: predicted %.0f ns (%lld operations; %d levels, critical path %lld "
                "operations: its threads=k evaluation needs k > %.0f processors to beat the serial aba)",
                c.predicted_ns_dca, dca.total + dca.kinematics, dca.levels, dca.critical_path,
                c.predicted_ns_dca / std::max(c.predicted_ns_aba, 1.0));
  c.reason += buf;
  return c;
}

const VecX& forward_dynamics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                             const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                             ForwardDynamicsMethod method, ExternalForces f_ext, ReferenceFrame frame) {
  const detail::DataUse use(model, data, "forward_dynamics");
  detail::check_state(model, "forward_dynamics", q, v, tau, "tau", f_ext);  // here: errors name the function called
  detail::FactorWorkspace& ws = detail::workspace<detail::FactorWorkspace>(model, data);
  if (method == Method::Auto) {
    if (ws.auto_method < 0) ws.auto_method = static_cast<int>(forward_dynamics_choice(model).method);
    method = static_cast<Method>(ws.auto_method);
  }

  switch (method) {
    case Method::Aba:
      return f_ext.empty() ? aba(model, data, q, v, tau) : aba(model, data, q, v, tau, f_ext, frame);
    case Method::CrbaCholesky:
      return f_ext.empty() ? forward_dynamics_crba(model, data, q, v, tau)
                           : forward_dynamics_crba(model, data, q, v, tau, f_ext, frame);
    case Method::GlobalSparse:
      return forward_dynamics_global_sparse(model, data, q, v, tau, f_ext, frame);
    case Method::Cfa:
      return forward_dynamics_cfa(model, data, q, v, tau, f_ext, frame);
    case Method::Dca:
    case Method::DcaAccurate:
      return forward_dynamics_dca(model, data, q, v, tau,
                                  method == Method::Dca ? DcaVariant::Basic : DcaVariant::Accurate, 1, f_ext, frame);
    default:
      break;
  }

  // Every other method solves M qdd = tau - C (Eq. 22).
  bias_forces(model, data, q, v, f_ext, frame, ws.zero);  // leaves the poses in data.X_up
  ws.rhs = tau - data.tau;
  switch (method) {
    case Method::CrbaLtdl:
      detail::crba_unchecked(model, data, q.data(), Triangle::Upper);
      detail::factorize_ltdl_unchecked(model, data);
      data.qdd = ws.rhs;
      detail::solve_ltdl_unchecked(model, data, data.qdd);
      break;
    case Method::DirectCholesky:
    case Method::SymmetryCholesky:
      if (method == Method::DirectCholesky)
        mass_matrix_direct(model, data, q);
      else
        mass_matrix_symmetry(model, data, q);
      detail::factorize_ltl_dense(model, data);
      data.qdd = ws.rhs;
      detail::solve_ltl_dense(data.M, data.qdd);
      break;
    case Method::ConjugateGradient:
    case Method::PreconditionedCG:
      data.qdd = detail::conjugate_gradient_impl("forward_dynamics", model, data, ws.rhs.data(),
                                                 method == Method::PreconditionedCG, 1e-14,
                                                 detail::kConjugateGradientCap * std::max(model.nv(), 1));
      break;
    case Method::Innovations:
      detail::innovations_factor(model, data);
      data.qdd = detail::innovations_solve(model, data, ws.rhs.data());
      break;
    case Method::Minv:
      detail::minv_impl(model, data);
      data.qdd.noalias() = data.Minv * ws.rhs;  // qdd = M^-1 (tau - C)
      break;
    default:
      throw InvalidArgument("forward_dynamics: invalid method");
  }
  detail::check_finite_result(model, data, data.qdd, "forward_dynamics", "qdd");
  return data.qdd;
}

}  // namespace plucker
