// Dynamics of closed-loop mechanisms (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000,
// §3.4): the spanning tree's equation of motion with loop-closure forces,
//     M qdd + C = tau + tau_c,   tau_c = L^T lambda + tau_a            (Eqs. 15, 19)
//     L qdd = c                                                      (Eq. 18)
// combined into the system of Eq. 20, solved by one of the paper's three methods. L may be
// rank-deficient (redundant constraints: a planar linkage modelled in 3D; singular
// configurations) and its rank may change with q: every method takes a rank-revealing step
// with a relative tolerance (ConstrainedOptions::rank_tolerance), so that qdd and tau_c = L^T
// lambda are unique; the returned lambda is the minimum-norm one.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "plucker/constraints/loop_constraints.hpp"

namespace plucker {

enum class ConstrainedMethod : int {
  Kkt,         ///< "kkt": Eq. 20 solved directly (LU of the KKT matrix), O((n + nc)^3)
  RangeSpace,  ///< "range_space": lambda first by Eq. 21 with O(n) tree solves, O(n nc^2 + nc^3); a state
               ///< where L M^-1 L^T has cond > 1 / (1e3 eps) is solved as kkt (data.loops.range_space_fell_back)
  NullSpace,   ///< "null_space": qdd = K y + qdd0 with L K = 0, then Eq. 22, for few independent DoF
  /// "dca": the divide-and-conquer algorithm (Featherstone 1999) with each loop joint closed by the
  /// assembly formula at the subassembly where its two bodies first meet; world coordinates
  /// (DcaVariant::Basic). Mimic relations (gears) are closed around it by the range-space
  /// method, with one more DCA solve per relation.
  Dca,
  DcaAccurate,  ///< "dca_accurate": as "dca", each handle in its own frame (DcaVariant::Accurate)
};
std::string_view to_string(ConstrainedMethod method);
/// "kkt", "range_space" (also "range"), "null_space" (also "null"), "dca", "dca_accurate"; throws
/// InvalidArgument.
ConstrainedMethod parse_constrained_method(std::string_view name);

struct ConstrainedOptions {
  ConstrainedMethod method = ConstrainedMethod::RangeSpace;
  /// Baumgarte stabilisation (Featherstone & Orin 2000, footnote 3): the acceleration constraint becomes
  /// phi'' + 2 alpha phi' + beta^2 phi = 0, i.e. L qdd = c - 2 alpha L v - beta^2 phi.
  double baumgarte_alpha = 0.0, baumgarte_beta = 0.0;
  /// A pivot of the rank-revealing decomposition counts as zero when |pivot| <= rank_tolerance
  /// * |largest pivot|.
  double rank_tolerance = 1e-10;
  /// Actuator forces of the actuated loop joints, size Model::num_loop_actuators() (empty:
  /// zero), in their joint's motion subspace (e.g. the torque about a revolute loop joint's axis).
  VecX loop_joint_forces;
  /// Threads of the methods dca and dca_accurate (as forward_dynamics_dca's); ignored by the others.
  int threads = 1;
};

/// qdd and lambda of Eq. 20 (lambda: size num_constraints, minimum norm). Results in data.qdd
/// and data.loops.lambda; data.loops.rank and data.loops.acceleration_residual (max |L qdd -
/// c_stabilised| over all rows, nonzero only when redundant rows are inconsistent) report on
/// the solve. Throws SingularError when M is singular (naming the joint) or the reduced system
/// cannot be solved. Without loop joints or mimics it is the tree's forward dynamics. No heap
/// allocation once warm (while the rank of L stays the same; up to 48 constraint rows).
const VecX& constrained_forward_dynamics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                         const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                         const ConstrainedOptions& options = {});

/// The derivatives of constrained_forward_dynamics(q, v, tau, options) (the same function: its
/// method, Baumgarte terms and loop-joint forces), by the implicit function theorem on Eqs. 15
/// and 18 with analytical partial derivatives (the RNEA's, and those of the loop closures'
/// kinematics). Derivatives with respect to q in the tangent space, as rnea_derivatives. Results
/// in data.loops: dqdd_dq, dqdd_dv, dqdd_dtau (nv x nv), dlambda_dq, dlambda_dv, dlambda_dtau
/// (nc x nv); data.qdd and data.loops.lambda as constrained_forward_dynamics leaves them. With
/// redundant constraints (data.loops.rank < nc) d qdd is that of the solve on the rows the
/// solver keeps, and d lambda that of the minimum-norm lambda = (L^T)^+ tau_c, which is
/// differentiable while the rank stays the same: d lambda = Pi e + (I - Pi) dL (L^+ lambda), with
/// Pi the projector onto range(L), e the kept rows' multiplier changes and dL (L^+ lambda) the
/// change of L(q) at a fixed vector (the pseudo-inverse's derivative, Golub & Pereyra 1973). With
/// the methods dca / dca_accurate: the derivatives of the exact solve at the state (the same
/// function; their own rounding errors are not differentiated).
/// Without loop joints or mimics, aba_derivatives (d lambda empty, 0 x nv). No heap allocation
/// once warm (while the rank of L stays the same; up to 48 constraint rows).
void constrained_forward_dynamics_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                              const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                              const ConstrainedOptions& options = {});

/// tau_a = L_a^T u for the actuated loop joints (nv): L_a = S_k^T C_X_0 (J_s - J_p), so that u
/// drives the joint's own motion.
VecX loop_actuator_torques(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                           const Eigen::Ref<const VecX>& u);

/// Inverse dynamics of a closed-loop mechanism whose actuated coordinates are a subset: finds
/// the actuator forces u (tree joints `actuated_joints`, in order and by their DoFs, then the
/// actuated loop joints) and lambda with
///     M qdd + C = B u + L^T lambda    (B: the actuated joints' unit columns, and L_a^T)
/// Throws InvalidArgument when qdd violates the constraints (max |L qdd - c| above 1e-8 of the
/// scale), and SingularError when the actuation cannot produce the motion (the least-squares
/// residual is not zero: an unactuated direction would need a force), naming the residual.
/// When the actuation is redundant, u is the minimum-norm solution.
struct ClosedLoopInverseDynamics {
  VecX u;       ///< actuator forces
  VecX lambda;  ///< constraint multipliers (minimum norm)
};
ClosedLoopInverseDynamics constrained_inverse_dynamics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                                       const Eigen::Ref<const VecX>& v,
                                                       const Eigen::Ref<const VecX>& qdd,
                                                       const std::vector<int>& actuated_joints,
                                                       double rank_tolerance = 1e-10);

}  // namespace plucker
