// Forward and inverse dynamics of closed-loop mechanisms (paper 000 §3.4, Eqs. 15-22).
#include "plucker/constraints/constrained_dynamics.hpp"

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <cmath>
#include <limits>

#include "algorithms/fd_kernels.hpp"
#include "base/text.hpp"
#include "constraints/loop_kernels.hpp"
#include "plucker/algorithms/aba.hpp"
#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/rnea.hpp"
#include "plucker/errors.hpp"

namespace plucker {

std::string_view to_string(ConstrainedMethod method) {
  switch (method) {
    case ConstrainedMethod::Kkt:
      return "kkt";
    case ConstrainedMethod::RangeSpace:
      return "range_space";
    case ConstrainedMethod::NullSpace:
      return "null_space";
    case ConstrainedMethod::Dca:
      return "dca";
    case ConstrainedMethod::DcaAccurate:
      return "dca_accurate";
  }
  return "?";
}

ConstrainedMethod parse_constrained_method(std::string_view name) {
  if (name == "kkt") return ConstrainedMethod::Kkt;
  if (name == "range_space" || name == "range") return ConstrainedMethod::RangeSpace;
  if (name == "null_space" || name == "null") return ConstrainedMethod::NullSpace;
  if (name == "dca") return ConstrainedMethod::Dca;
  if (name == "dca_accurate") return ConstrainedMethod::DcaAccurate;
  throw InvalidArgument("unknown constrained forward-dynamics method '" + std::string(name) +
                        "' (valid: kkt, range_space, null_space, dca, dca_accurate)");
}

LoopsWorkspace::LoopsWorkspace(const Model& model) : n(model.nv()), nc(model.num_constraints()) {
  const int na = model.num_loop_actuators();
  S_world = Matrix6X::Zero(6, n);
  for (VecX* x : {&rhs, &qdd, &tau_c, &tmp_n, &tmp_n2, &hh, &y, &b}) *x = VecX::Zero(n);
  for (VecX* x : {&c_stab, &g, &mu, &lambda_r, &tmp_nc}) *x = VecX::Zero(nc);
  kkt_b = kkt_x = VecX::Zero(n + nc);
  Q = MatX::Zero(n, n);
  Lr = MatX::Zero(nc, n);
  Rr = MatX::Zero(nc, nc);
  G = MatX::Zero(nc, nc);
  K = MatX::Zero(n + nc, n + nc);
  Y = MatX::Zero(n, nc);
  A = MatX::Zero(nc, nc);
  MK = MatX::Zero(n, n);
  KtMK = MatX::Zero(n, n);
  La = MatX::Zero(na, n);
  pivots.assign(static_cast<std::size_t>(n) + static_cast<std::size_t>(nc), 0);
  // Size the decompositions by computing them once (Eigen leaves their status enum
  // uninitialised until the first compute, and copying a workspace copies them).
  if (n > 0 && nc > 0) {  // (nothing to solve otherwise; Eigen asserts on empty inputs)
    qr.compute(MatX::Zero(n, nc));
    ldlt.compute(MatX::Identity(nc, nc));
    llt_G.compute(MatX::Identity(nc, nc));
  }
}

namespace detail {

/// constrained_forward_dynamics by the divide-and-conquer algorithm (constrained_dca.cpp).
const VecX& constrained_forward_dynamics_dca(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                             const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                             const ConstrainedOptions& options);

namespace {

/// A = L L^T in place on A's lower triangle (A symmetric), without allocating. Returns -1, or
/// the first column whose pivot is not pivot_accepted against A's original diagonal entry.
int cholesky_in_place(Eigen::Ref<MatX> A) {
  const int m = static_cast<int>(A.rows());
  for (int k = 0; k < m; ++k) {
    const double diagonal = A(k, k);  // untouched until column k is reached
    const double pivot = diagonal - A.row(k).head(k).squaredNorm();
    if (!pivot_accepted(pivot, diagonal)) return k;
    A(k, k) = std::sqrt(pivot);
    for (int r = k + 1; r < m; ++r) A(r, k) = (A(r, k) - A.row(r).head(k).dot(A.row(k).head(k))) / A(k, k);
  }
  return -1;
}

}  // namespace

void solve_on_free_motions(const Model& model, const Eigen::Ref<const MatX>& K, Eigen::Ref<MatX> KtMK,
                           Eigen::Ref<VecX> y,  // NOLINT(performance-unnecessary-value-param): a view
                           const char* what) {
  if (const int k = cholesky_in_place(KtMK); k >= 0) {
    Eigen::Index dof = 0;  // the DoF that free motion k moves most
    K.col(k).cwiseAbs().maxCoeff(&dof);
    throw SingularError(std::string(what) +
                        ": the mass matrix is singular on the mechanism's free motions (K^T M K), at joint '" +
                        model.joint_name(model.joint_of_v(static_cast<int>(dof))) + "'");
  }
  KtMK.triangularView<Eigen::Lower>().solveInPlace(y);
  KtMK.triangularView<Eigen::Lower>().transpose().solveInPlace(y);
}

int lu_solve_in_place(Eigen::Ref<MatX> A, std::vector<int>& pivots, Eigen::Ref<VecX> b, VecX& scale) {
  // Doolittle LU with partial pivoting, in place (Eigen's PartialPivLU allocates a temporary for
  // its condition estimate). Column k is singular unless pivot_accepted(its pivot, the column's
  // largest entry) (DEVELOPERS.md, "Singularity").
  const int m = static_cast<int>(A.rows());
  for (int k = 0; k < m; ++k) scale[k] = A.col(k).cwiseAbs().maxCoeff();
  for (int k = 0; k < m; ++k) {
    Eigen::Index p = 0;
    const double pivot = A.col(k).tail(m - k).cwiseAbs().maxCoeff(&p);
    p += k;
    if (!pivot_accepted(pivot, scale[k])) return k;
    pivots[k] = static_cast<int>(p);
    if (p != k) {
      A.row(k).swap(A.row(p));
      std::swap(b[k], b[p]);
    }
    A.col(k).tail(m - k - 1) /= A(k, k);
    A.bottomRightCorner(m - k - 1, m - k - 1).noalias() -= A.col(k).tail(m - k - 1) * A.row(k).tail(m - k - 1);
  }
  A.triangularView<Eigen::UnitLower>().solveInPlace(b);
  A.triangularView<Eigen::Upper>().solveInPlace(b);
  return -1;
}

int reveal_rank(LoopsWorkspace& ws, const MatX& L, double tolerance, bool form_Q) {
  ws.qr.setThreshold(tolerance);
  ws.qr.compute(L.transpose());
  const int r = static_cast<int>(ws.qr.rank());
  if (form_Q) ws.qr.householderQ().evalTo(ws.Q, ws.hh);
  const auto& perm = ws.qr.colsPermutation().indices();
  for (int k = 0; k < r; ++k) ws.Lr.row(k) = L.row(perm[k]);
  ws.Rr.topRows(r) = ws.qr.matrixQR().topRows(r).template triangularView<Eigen::Upper>();
  return r;
}

void min_norm_multipliers(LoopsWorkspace& ws, int r, const VecX& tau_c, VecX& lambda) {
  lambda.setZero();
  if (r == 0) return;
  const auto Rr = ws.Rr.topRows(r);
  // Q^T tau_c = H_{m-1} ... H_0 tau_c with the reflectors H_k = I - h_k v_k v_k^T stored in the
  // QR (v_k = [0; 1; essential part below the diagonal of column k]), O(n nc), in place.
  VecX& x = ws.tmp_n2;
  x = tau_c;
  const MatX& H = ws.qr.matrixQR();
  const int n = static_cast<int>(H.rows()), reflectors = static_cast<int>(std::min(H.rows(), H.cols()));
  for (int k = 0; k < reflectors; ++k) {
    const auto essential = H.col(k).tail(n - k - 1);
    const double s = ws.qr.hCoeffs()[k] * (x[k] + essential.dot(x.tail(n - k - 1)));
    x[k] -= s;
    x.tail(n - k - 1) -= s * essential;
  }
  ws.g.head(r) = x.head(r);  // R mu = Q^T tau_c, first r rows
  ws.G.topLeftCorner(r, r).noalias() = Rr * Rr.transpose();
  ws.llt_G.compute(ws.G.topLeftCorner(r, r));
  ws.lambda_r.head(r) = ws.llt_G.solve(ws.g.head(r));
  ws.mu.noalias() = Rr.transpose() * ws.lambda_r.head(r);  // minimum-norm mu
  const auto& perm = ws.qr.colsPermutation().indices();
  for (int k = 0; k < ws.nc; ++k) lambda[perm[k]] = ws.mu[k];  // lambda = P mu
}

namespace {

// Rows S_k^T C_X_0 (J_s - J_p) of the actuated loop joints (data.X_base and S_world set).
void actuator_jacobian(const Model& model, const Data& data, const Matrix6X& S_world, MatX& La) {
  La.setZero();
  int row = 0;
  for (const LoopJoint& joint : model.loop_joints()) {
    if (!joint.actuated) continue;
    const LoopFrames f = loop_frames(data, joint);
    const LoopMotionSubspace S = loop_motion_subspace(joint, loop_directions(joint));
    for_each_loop_path_dof(model, joint.successor, joint.predecessor, [&](int k, double sign) {
      const Vec6 w = f.C.apply(Motion(Vec6(S_world.col(k)))).vector();  // C_X_0 S
      La.block(row, k, S.cols(), 1) = sign * (S.transpose() * w);
    });
    row += static_cast<int>(S.cols());
  }
}

std::string constraint_name(const Model& model, int row) {
  std::string name;
  for_each_constraint_block(model, [&](const std::string& what, int first, int rows) {
    if (row >= first && row < first + rows) name = what;
  });
  return name;
}

}  // namespace
}  // namespace detail

VecX loop_actuator_torques(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                           const Eigen::Ref<const VecX>& u) {
  detail::check_loop_data(model, data, "loop_actuator_torques");
  if (u.size() != model.num_loop_actuators() || !u.allFinite())
    throw InvalidArgument("loop_actuator_torques: u must be finite with size num_loop_actuators = " +
                          std::to_string(model.num_loop_actuators()) + ", got size " + std::to_string(u.size()));
  constraint_jacobian(model, data, q);
  MatX La(model.num_loop_actuators(), model.nv());
  detail::actuator_jacobian(model, data, detail::workspace<LoopsWorkspace>(model, data).S_world, La);
  return La.transpose() * u;
}

const VecX& constrained_forward_dynamics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                         const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                         const ConstrainedOptions& options) {
  detail::check_loop_data(model, data, "constrained_forward_dynamics");
  model.check_configuration(q, "constrained_forward_dynamics: q");
  model.check_tangent(v, "constrained_forward_dynamics: v");
  model.check_tangent(tau, "constrained_forward_dynamics: tau");
  const int n = model.nv(), nc = model.num_constraints(), na = model.num_loop_actuators();
  if (options.loop_joint_forces.size() != 0 && options.loop_joint_forces.size() != na)
    throw InvalidArgument("constrained_forward_dynamics: loop_joint_forces has size " +
                          std::to_string(options.loop_joint_forces.size()) +
                          ", expected num_loop_actuators = " + std::to_string(na) + " (or empty)");
  if (!options.loop_joint_forces.allFinite())
    throw InvalidArgument("constrained_forward_dynamics: loop_joint_forces is not finite");
  if (!std::isfinite(options.baumgarte_alpha) || !std::isfinite(options.baumgarte_beta) ||
      !(options.rank_tolerance > 0.0) || !(options.rank_tolerance < 1.0))
    throw InvalidArgument("constrained_forward_dynamics: Baumgarte gains must be finite and rank_tolerance in (0, 1)");

  if (options.method == ConstrainedMethod::Dca || options.method == ConstrainedMethod::DcaAccurate)
    return detail::constrained_forward_dynamics_dca(model, data, q, v, tau, options);
  if (nc == 0) {  // a tree: ordinary forward dynamics
    data.loops.rank = 0;
    data.loops.acceleration_residual = 0.0;
    return aba(model, data, q, v, tau);
  }
  LoopsWorkspace& ws = detail::workspace<LoopsWorkspace>(model, data);
  // Right-hand side of Eq. 15: tau - C + tau_a.
  ws.rhs = tau;
  ws.rhs -= nonlinear_effects(model, data, q, v);
  constraint_terms(model, data, q, v);  // phi, L, c (Eqs. 16-18); poses of q in data.X_up
  const MatX& L = data.loops.L;
  if (na > 0 && options.loop_joint_forces.size() == na) {
    detail::actuator_jacobian(model, data, ws.S_world, ws.La);
    ws.rhs.noalias() += ws.La.transpose() * options.loop_joint_forces;
  }
  // Baumgarte: L qdd = c - 2 alpha phi' - beta^2 phi, with phi' = L v.
  ws.c_stab.noalias() = L * v;
  ws.c_stab *= -2.0 * options.baumgarte_alpha;
  ws.c_stab += data.loops.c - options.baumgarte_beta * options.baumgarte_beta * data.loops.phi;

  // The rank-revealing step of every method: r independent rows L_r (Eq. 18).
  const int r = detail::reveal_rank(ws, L, options.rank_tolerance, options.method == ConstrainedMethod::NullSpace);
  const auto& perm = ws.qr.colsPermutation().indices();
  auto Lr = ws.Lr.topRows(r);
  VecX& qdd = data.qdd;
  auto solve_kkt = [&] {
    // Method kkt, and range_space's fallback. Eq. 20 with the independent rows:
    // [M L_r^T; L_r 0] [qdd; -lambda_r] = [tau - C + tau_a; c_r], nonsingular, by LU with
    // partial pivoting, O((n + r)^3).
    const MatX& M = crba(model, data, q);
    auto K = ws.K.topLeftCorner(n + r, n + r);
    K.topLeftCorner(n, n) = M;
    K.topRightCorner(n, r) = Lr.transpose();
    K.bottomLeftCorner(r, n) = Lr;
    K.bottomRightCorner(r, r).setZero();
    ws.kkt_b.head(n) = ws.rhs;
    for (int k = 0; k < r; ++k) ws.kkt_b[n + k] = ws.c_stab[perm[k]];
    const int bad = detail::lu_solve_in_place(K, ws.pivots, ws.kkt_b.head(n + r), ws.kkt_x);
    if (bad >= 0)
      throw SingularError(
          "constrained_forward_dynamics (" + std::string(to_string(options.method)) +
          (options.method == ConstrainedMethod::Kkt ? "" : ", by Eq. 20") +
          "): the KKT matrix of Eq. 20 is singular at " +
          (bad < n ? "joint '" + model.joint_name(model.joint_of_v(bad)) + "'"
                   : detail::constraint_name(model, perm[bad - n])) +
          " (pivot below 1e-12 of its column): the mass matrix is singular on the constraints' free motions");
    ws.kkt_x.head(n + r) = ws.kkt_b.head(n + r);
    qdd = ws.kkt_x.head(n);
    ws.tau_c.noalias() = Lr.transpose() * ws.kkt_x.segment(n, r);  // the unknowns are -lambda_r
    ws.tau_c = -ws.tau_c;                                          // tau_c = L_r^T lambda_r
  };
  data.loops.range_space_fell_back = false;
  switch (options.method) {
    case ConstrainedMethod::Kkt: {
      solve_kkt();
      break;
    }
    case ConstrainedMethod::RangeSpace: {
      // Eq. 21: L M^-1 L^T lambda = c - L M^-1 (tau - C + tau_a). M^-1 by the innovations
      // factorisation: factored once (O(n)), one O(n) solve per right-hand side. A singular M
      // (a massless link inside a loop) leaves the constrained system possibly regular: solved by
      // Eq. 20, which decides.
      try {
        detail::innovations_factor(model, data);
      } catch (const SingularError&) {
        data.loops.range_space_fell_back = true;
        solve_kkt();
        break;
      }
      for (int k = 0; k < r; ++k) {
        ws.b = Lr.row(k).transpose();
        ws.Y.col(k) = detail::innovations_solve(model, data, ws.b.data());  // M^-1 L_r^T
      }
      ws.tmp_n = detail::innovations_solve(model, data, ws.rhs.data());  // qdd0 = M^-1 (tau - C + tau_a)
      for (int k = 0; k < r; ++k) ws.g[k] = ws.c_stab[perm[k]];
      ws.g.head(r).noalias() -= Lr * ws.tmp_n;
      if (r > 0) {
        ws.A.topLeftCorner(r, r).noalias() = Lr * ws.Y.leftCols(r);
        ws.ldlt.compute(ws.A.topLeftCorner(r, r));
        // L M^-1 L^T squares the condition number of L_r: near a singular configuration (L_r
        // independent by the rank test, but only just) its pivots say cond > 1 / (1e3 eps),
        // lambda would keep fewer than ~3 digits, and this state is solved by Eq. 20 instead.
        const auto& D = ws.ldlt.vectorD();
        if (ws.ldlt.info() != Eigen::Success ||
            !(D.minCoeff() > 1e3 * std::numeric_limits<double>::epsilon() * D.cwiseAbs().maxCoeff())) {
          data.loops.range_space_fell_back = true;
          solve_kkt();
          break;
        }
        ws.y.head(r) = ws.ldlt.solve(ws.g.head(r));  // lambda_r
      }
      qdd = ws.tmp_n;
      qdd.noalias() += ws.Y.leftCols(r) * ws.y.head(r);  // Eq. 15 with tau_c = L_r^T lambda_r
      if (r > 0) {
        // One step of iterative refinement on Eq. 18: the solve with L M^-1 L^T leaves L_r qdd - c_r
        // at eps cond(M) (1.4e-9 on the delta robot, cond(M) = 1.5e6, against 1e-14 by kkt);
        // the residual's correction costs one more r x r solve.
        auto correction = ws.g.head(r);
        for (int k = 0; k < r; ++k) correction[k] = ws.c_stab[perm[k]];
        correction.noalias() -= Lr * qdd;
        ws.ldlt.solveInPlace(correction);
        ws.y.head(r) += correction;
        qdd.noalias() += ws.Y.leftCols(r) * correction;
      }
      ws.tau_c.noalias() = Lr.transpose() * ws.y.head(r);
      break;
    }
    case ConstrainedMethod::NullSpace: {
      // K = the last nv - r columns of Q (L K = 0); qdd0 = Q_1 R_11^-T c_r, the minimum-norm
      // solution of the independent rows; Eq. 22: K^T M K y = K^T (tau - C + tau_a - M qdd0).
      for (int k = 0; k < r; ++k) ws.g[k] = ws.c_stab[perm[k]];
      ws.Rr.topLeftCorner(r, r).template triangularView<Eigen::Upper>().transpose().solveInPlace(ws.g.head(r));
      ws.tmp_n.noalias() = ws.Q.leftCols(r) * ws.g.head(r);  // qdd0
      const MatX& M = crba(model, data, q);
      const int f = n - r;
      const auto K = ws.Q.rightCols(f);
      ws.MK.leftCols(f).noalias() = M * K;
      ws.KtMK.topLeftCorner(f, f).noalias() = K.transpose() * ws.MK.leftCols(f);
      ws.tau_c = ws.rhs;
      ws.tau_c.noalias() -= M * ws.tmp_n;
      ws.y.head(f).noalias() = K.transpose() * ws.tau_c;
      if (f > 0) {
        // Singular unless every pivot is pivot_accepted (DEVELOPERS.md, "Singularity").
        detail::solve_on_free_motions(model, K, ws.KtMK.topLeftCorner(f, f), ws.y.head(f),
                                      "constrained_forward_dynamics (null_space)");
      }
      qdd = ws.tmp_n;
      qdd.noalias() += K * ws.y.head(f);
      ws.tau_c.noalias() = M * qdd;  // tau_c = M qdd + C - tau - tau_a = L^T lambda
      ws.tau_c -= ws.rhs;
      break;
    }
    case ConstrainedMethod::Dca:
    case ConstrainedMethod::DcaAccurate:
      break;  // dispatched to constrained_forward_dynamics_dca above
  }
  detail::min_norm_multipliers(ws, r, ws.tau_c, data.loops.lambda);
  ws.tmp_nc.noalias() = L * qdd;
  ws.tmp_nc -= ws.c_stab;
  data.loops.acceleration_residual = ws.tmp_nc.cwiseAbs().maxCoeff();
  data.loops.rank = r;
  return data.qdd;
}

ClosedLoopInverseDynamics constrained_inverse_dynamics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                                       const Eigen::Ref<const VecX>& v,
                                                       const Eigen::Ref<const VecX>& qdd,
                                                       const std::vector<int>& actuated_joints, double rank_tolerance) {
  detail::check_loop_data(model, data, "constrained_inverse_dynamics");
  model.check_configuration(q, "constrained_inverse_dynamics: q");
  model.check_tangent(v, "constrained_inverse_dynamics: v");
  model.check_tangent(qdd, "constrained_inverse_dynamics: qdd");
  const int n = model.nv(), nc = model.num_constraints();
  int n_tree = 0;
  for (int j : actuated_joints) {
    if (j <= 0 || j >= model.nbodies())
      throw InvalidArgument("constrained_inverse_dynamics: actuated joint index " + std::to_string(j) +
                            " out of range");
    if (model.joint_nv(j) == 0)
      throw InvalidArgument("constrained_inverse_dynamics: actuated joint '" + model.joint_name(j) + "' has no DoF");
    n_tree += model.joint_nv(j);
  }
  const int nu = n_tree + model.num_loop_actuators();
  constraint_terms(model, data, q, v);
  const MatX L = data.loops.L;
  if (nc > 0) {
    const VecX viol = L * qdd - data.loops.c;
    Eigen::Index worst = 0;
    const double err = viol.cwiseAbs().maxCoeff(&worst);
    const double scale = 1.0 + L.cwiseAbs().maxCoeff() * qdd.cwiseAbs().maxCoeff() + data.loops.c.cwiseAbs().maxCoeff();
    if (err > 1e-8 * scale)
      throw InvalidArgument(
          "constrained_inverse_dynamics: qdd violates the loop constraints (|L qdd - c| = " + text::number(err) +
          " at " + detail::constraint_name(model, static_cast<int>(worst)) + "); project it first");
  }
  MatX G = MatX::Zero(n, nu + nc);  // [B  L^T]
  int col = 0;
  for (int j : actuated_joints)
    for (int k = 0; k < model.joint_nv(j); ++k) G(model.idx_v(j) + k, col++) = 1.0;
  if (model.num_loop_actuators() > 0) {
    MatX La(model.num_loop_actuators(), n);
    detail::actuator_jacobian(model, data, detail::workspace<LoopsWorkspace>(model, data).S_world, La);
    G.middleCols(n_tree, model.num_loop_actuators()) = La.transpose();
  }
  G.rightCols(nc) = L.transpose();
  const VecX tau_id = rnea(model, data, q, v, qdd);  // M qdd + C
  Eigen::CompleteOrthogonalDecomposition<MatX> cod(n, nu + nc);
  cod.setThreshold(rank_tolerance);
  cod.compute(G);
  const VecX x = cod.solve(tau_id);
  const VecX residual = G * x - tau_id;
  Eigen::Index worst = 0;
  const double err = residual.cwiseAbs().maxCoeff(&worst);
  if (err > 1e-9 * (1.0 + tau_id.cwiseAbs().maxCoeff()))
    throw SingularError(
        "constrained_inverse_dynamics: the actuated joints cannot produce this motion: a generalised "
        "force of " +
        text::number(err) + " is missing at joint '" + model.joint_name(model.joint_of_v(static_cast<int>(worst))) +
        "' that neither the actuators nor the loop constraints can supply");
  data.loops.lambda = x.tail(nc);
  return {x.head(nu), x.tail(nc)};
}

}  // namespace plucker
