// Forward and inverse dynamics of closed-loop mechanisms (paper 000 §3.4, Eqs. 15-22).
#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <cmath>
#include <sstream>

#include "detail/checks.hpp"
#include "detail/forward_dynamics_kernels.hpp"
#include "detail/loop_kernels.hpp"
#include "plucker/algorithms/aba.hpp"
#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/rnea.hpp"
#include "plucker/constraints/constrained_dynamics.hpp"
#include "plucker/errors.hpp"

namespace plucker {

std::string_view to_string(ConstrainedMethod method) {
  switch (method) {
    case ConstrainedMethod::Kkt: return "kkt";
    case ConstrainedMethod::RangeSpace: return "range_space";
    case ConstrainedMethod::NullSpace: return "null_space";
  }
  return "?";
}

ConstrainedMethod parse_constrained_method(std::string_view name) {
  if (name == "kkt") return ConstrainedMethod::Kkt;
  if (name == "range_space" || name == "range") return ConstrainedMethod::RangeSpace;
  if (name == "null_space" || name == "null") return ConstrainedMethod::NullSpace;
  throw InvalidArgument("unknown constrained forward-dynamics method '" + std::string(name) +
                        "' (valid: kkt, range_space, null_space)");
}

namespace detail {

RangeSpace::RangeSpace(const Model& model, Data& data, const MatX& L, double rank_tolerance)
    : model_(model), data_(data), cod_(L.cols(), L.rows()) {
  cod_.setThreshold(rank_tolerance);
  cod_.compute(L.transpose());
  rank_ = static_cast<int>(cod_.rank());
  const auto& perm = cod_.colsPermutation().indices();
  rows_.assign(perm.data(), perm.data() + rank_);  // Eq. 18: r linearly independent rows of L
  Lr_.resize(rank_, L.cols());
  for (int k = 0; k < rank_; ++k) Lr_.row(k) = L.row(rows_[k]);
  innovations_factor(model_, data_);  // M = [I + H phi K] D [I + H phi K]*, O(n)
  Y_.resize(L.cols(), rank_);
  for (int k = 0; k < rank_; ++k) {
    data_.fd_b = Lr_.row(k).transpose();
    Y_.col(k) = innovations_solve(model_, data_, data_.fd_b.data());  // M^-1 L_r^T, one O(n) solve per row
  }
  if (rank_ == 0) return;  // no independent constraint: qdd = M^-1 (tau - C + tau_a)
  A_.compute(Lr_ * Y_);    // L M^-1 L^T (Eq. 21)
  if (A_.info() != Eigen::Success || !(A_.vectorD().minCoeff() > 0.0))
  {
    std::ostringstream os;
    os << "range-space method: L M^-1 L^T (which squares the condition number of L) is numerically singular "
          "although L passed the rank test with tolerance "
       << rank_tolerance << ": nearly dependent constraints (a near-singular configuration); raise the rank "
          "tolerance or use the kkt / null_space method";
    throw SingularError(os.str());
  }
}

VecX RangeSpace::reduced_rows(const VecX& x) const { return Lr_ * x; }

VecX RangeSpace::reduced(const VecX& c) const {
  VecX out(rank_);
  for (int k = 0; k < rank_; ++k) out[k] = c[rows_[k]];
  return out;
}

VecX RangeSpace::solve_A(const VecX& b) const { return rank_ == 0 ? VecX() : VecX(A_.solve(b)); }

VecX RangeSpace::minv(const VecX& b) {
  data_.fd_b = b;
  return innovations_solve(model_, data_, data_.fd_b.data());
}

VecX RangeSpace::full_multipliers(const VecX& lambda_r) const {
  const VecX tau_c = Lr_.transpose() * lambda_r;
  return cod_.solve(tau_c);  // minimum-norm lambda with L^T lambda = tau_c
}

namespace {

// Rows S_k^T C_X_0 (J_s - J_p) of the actuated loop joints (data.X_base, data.loops.S_world set).
MatX actuator_jacobian(const Model& model, const Data& data) {
  MatX La = MatX::Zero(model.num_loop_actuators(), model.nv());
  int row = 0;
  for (const LoopJoint& joint : model.loop_joints()) {
    if (!joint.actuated) continue;
    const LoopFrames f = loop_frames(data, joint);
    const MatX S = loop_joint_motion_subspace(joint);
    for_each_loop_path_dof(model, joint.successor, joint.predecessor, [&](int k, double sign) {
      const Vec6 w = f.C.apply(Motion(Vec6(data.loops.S_world.col(k)))).vector();  // C_X_0 S
      La.block(row, k, S.cols(), 1) = sign * (S.transpose() * w);
    });
    row += static_cast<int>(S.cols());
  }
  return La;
}

std::string constraint_name(const Model& model, int row) {
  for (const LoopJoint& j : model.loop_joints()) {
    const int n = loop_joint_constraints(j.type);
    if (row < n) return "loop joint '" + j.name + "'";
    row -= n;
  }
  return "mimic joint '" + model.joint_name(model.mimics()[row].follower) + "'";
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
  return detail::actuator_jacobian(model, data).transpose() * u;
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
                          std::to_string(options.loop_joint_forces.size()) + ", expected num_loop_actuators = " +
                          std::to_string(na) + " (or empty)");
  if (!options.loop_joint_forces.allFinite())
    throw InvalidArgument("constrained_forward_dynamics: loop_joint_forces is not finite");
  if (!std::isfinite(options.baumgarte_alpha) || !std::isfinite(options.baumgarte_beta) ||
      !(options.rank_tolerance > 0.0) || !(options.rank_tolerance < 1.0))
    throw InvalidArgument("constrained_forward_dynamics: Baumgarte gains must be finite and rank_tolerance in (0, 1)");

  // Right-hand side of Eq. 15: tau - C + tau_a.
  VecX rhs = tau - nonlinear_effects(model, data, q, v);
  if (nc == 0) {  // a tree: ordinary forward dynamics
    data.loops.rank = 0;
    data.loops.acceleration_residual = 0.0;
    return aba(model, data, q, v, tau);
  }
  constraint_terms(model, data, q, v);  // phi, L, c (Eqs. 16-18); poses of q in data.X_up
  if (na > 0 && options.loop_joint_forces.size() == na)
    rhs += detail::actuator_jacobian(model, data).transpose() * options.loop_joint_forces;
  const MatX& L = data.loops.L;
  // Baumgarte: L qdd = c - 2 alpha phi' - beta^2 phi, with phi' = L v.
  const VecX c = data.loops.c - 2.0 * options.baumgarte_alpha * (L * v) -
                 options.baumgarte_beta * options.baumgarte_beta * data.loops.phi;

  VecX qdd(n), lambda(nc);
  switch (options.method) {
    case ConstrainedMethod::Kkt: {
      // Eq. 20 with Eq. 18's full-rank L: the rank-revealing decomposition of L^T (the same step
      // as the other methods, so that the rank decision does not depend on the scale of M)
      // selects r independent rows; [M L_r^T; L_r 0] [qdd; -lambda_r] = [tau - C + tau_a; c_r]
      // is then nonsingular and solved by LU with partial pivoting, O((n + r)^3).
      Eigen::CompleteOrthogonalDecomposition<MatX> cod(n, nc);
      cod.setThreshold(options.rank_tolerance);
      cod.compute(L.transpose());
      const int r = static_cast<int>(cod.rank());
      const auto& perm = cod.colsPermutation().indices();
      const MatX& M = crba(model, data, q);
      MatX K = MatX::Zero(n + r, n + r);
      VecX b(n + r);
      K.topLeftCorner(n, n) = M;
      b.head(n) = rhs;
      for (int k = 0; k < r; ++k) {
        K.block(n + k, 0, 1, n) = L.row(perm[k]);
        K.block(0, n + k, n, 1) = L.row(perm[k]).transpose();
        b[n + k] = c[perm[k]];
      }
      const VecX x = K.partialPivLu().solve(b);
      qdd = x.head(n);
      lambda = cod.solve(VecX(-(K.topRightCorner(n, r) * x.tail(r))));  // minimum norm, L^T lambda = L_r^T lambda_r
      data.loops.rank = r;
      break;
    }
    case ConstrainedMethod::RangeSpace: {
      // Eq. 21: L M^-1 L^T lambda = c - L M^-1 (tau - C + tau_a), M^-1 by O(n) tree solves.
      detail::RangeSpace rs(model, data, L, options.rank_tolerance);
      const VecX qdd0 = rs.minv(rhs);
      const VecX lambda_r = rs.solve_A(rs.reduced(c) - rs.reduced_rows(qdd0));
      qdd = qdd0 + rs.minv_LT() * lambda_r;  // Eq. 15 with tau_c = L_r^T lambda_r
      lambda = rs.full_multipliers(lambda_r);
      data.loops.rank = rs.rank();
      break;
    }
    case ConstrainedMethod::NullSpace: {
      // Rank test on L (complete orthogonal decomposition of L^T = Q R P^T): K = the last nv - r
      // columns of Q (L K = 0); qdd0 the minimum-norm solution of the independent rows; Eq. 22.
      Eigen::CompleteOrthogonalDecomposition<MatX> cod(n, nc);
      cod.setThreshold(options.rank_tolerance);
      cod.compute(L.transpose());
      const int r = static_cast<int>(cod.rank());
      const MatX Q = cod.householderQ();
      const MatX K = Q.rightCols(n - r);
      const auto& perm = cod.colsPermutation().indices();
      MatX Lr(r, n);
      VecX cr(r);
      for (int k = 0; k < r; ++k) Lr.row(k) = L.row(perm[k]), cr[k] = c[perm[k]];
      const MatX Q1 = Q.leftCols(r);  // range of L_r^T: qdd0 = Q1 y0 with (L_r Q1) y0 = c_r
      const VecX qdd0 = r == 0 ? VecX(VecX::Zero(n)) : VecX(Q1 * (Lr * Q1).partialPivLu().solve(cr));
      const MatX& M = crba(model, data, q);
      Eigen::LLT<MatX> reduced(K.transpose() * M * K);  // K^T M K y = K^T (tau - C + tau_a - M qdd0)
      if (reduced.info() != Eigen::Success)
        throw SingularError("constrained_forward_dynamics (null_space): K^T M K is not positive definite "
                            "(the mechanism's mass matrix is singular on its free motions)");
      qdd = K * reduced.solve(K.transpose() * (rhs - M * qdd0)) + qdd0;
      lambda = cod.solve(M * qdd - rhs);  // tau_c = L^T lambda, minimum norm
      data.loops.rank = r;
      break;
    }
  }
  data.loops.acceleration_residual = (L * qdd - c).cwiseAbs().maxCoeff();
  data.loops.lambda = lambda;
  data.qdd = qdd;
  return data.qdd;
}

ClosedLoopInverseDynamics constrained_inverse_dynamics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                                       const Eigen::Ref<const VecX>& v,
                                                       const Eigen::Ref<const VecX>& qdd,
                                                       const std::vector<int>& actuated_joints,
                                                       double rank_tolerance) {
  detail::check_loop_data(model, data, "constrained_inverse_dynamics");
  model.check_configuration(q, "constrained_inverse_dynamics: q");
  model.check_tangent(v, "constrained_inverse_dynamics: v");
  model.check_tangent(qdd, "constrained_inverse_dynamics: qdd");
  const int n = model.nv(), nc = model.num_constraints();
  int n_tree = 0;
  for (int j : actuated_joints) {
    if (j <= 0 || j >= model.nbodies())
      throw InvalidArgument("constrained_inverse_dynamics: actuated joint index " + std::to_string(j) + " out of range");
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
      throw InvalidArgument("constrained_inverse_dynamics: qdd violates the loop constraints (|L qdd - c| = " +
                            std::to_string(err) + " at " + detail::constraint_name(model, static_cast<int>(worst)) +
                            "); project it first");
  }
  MatX G = MatX::Zero(n, nu + nc);  // [B  L^T]
  int col = 0;
  for (int j : actuated_joints)
    for (int k = 0; k < model.joint_nv(j); ++k) G(model.idx_v(j) + k, col++) = 1.0;
  if (model.num_loop_actuators() > 0) G.middleCols(n_tree, model.num_loop_actuators()) = detail::actuator_jacobian(model, data).transpose();
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
    throw SingularError("constrained_inverse_dynamics: the actuated joints cannot produce this motion: a generalised "
                        "force of " + std::to_string(err) + " is missing at joint '" +
                        model.joint_name(model.joint_of_v(static_cast<int>(worst))) +
                        "' that neither the actuators nor the loop constraints can supply");
  data.loops.lambda = x.tail(nc);
  return {x.head(nu), x.tail(nc)};
}

}  // namespace plucker
