// The kinematics of loop constraints (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000, §3.4,
// Eqs. 16-18): the constraint function phi(q), the loop Jacobian L (phi-dot = L v) and the bias c (L qdd = c), the
// assembly of a consistent configuration (Newton projection onto phi(q) = 0) and the projection of a velocity onto the
// constraint tangent space.
//
// Rows of phi: for each loop joint k (in Model order) 6 - dof_k rows, then one row per mimic
// relation (q_follower - multiplier q_leader - offset).
//
// A loop joint k with predecessor body p and successor body s. Its constraint velocity is the
// relative spatial velocity of the successor, v_s - v_p, expressed in the frame C_k that has the
// orientation of the predecessor's joint frame and its origin at the successor's joint frame:
//     w_k = C_X_0 (v_s - v_p) = C_X_0 (J_s - J_p) v
// (J_s, J_p: world body Jacobians). The loop is closed when the relative motion lies in the
// joint's motion subspace S_k, i.e. T_k^T w_k = 0 with T_k the complement of S_k (a basis of
// the joint's constraint-force subspace), so
//     L_k = T_k^T C_X_0 (J_s - J_p),       c_k = -T_k^T d/dt(C_X_0) ... (see loop_constraints.cpp).
// phi_k is chosen so that d(phi_k)/dt = L_k v exactly for its translational rows and at every
// closed configuration for its rotational rows (swing angle / rotation vector), which is what
// Newton assembly and Baumgarte stabilisation need.
#pragma once

#include <string>
#include <vector>

#include "plucker/algorithms/data.hpp"

namespace plucker {

/// The constraint-force subspace T_k (6 x (6 - dof)) of a loop joint in its joint frame:
/// orthonormal columns spanning the complement of the motion subspace S_k (T^T S = 0).
/// Angular rows first ([moment; force]).
MatX loop_joint_constraint_subspace(const LoopJoint& joint);
/// Its motion subspace S_k (6 x dof), orthonormal columns.
MatX loop_joint_motion_subspace(const LoopJoint& joint);

/// phi(q) (size Model::num_constraints()). Returns data.loops.phi.
const VecX& constraint_residual(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);
/// L(q) (num_constraints x nv): phi-dot = L v. Returns data.loops.L.
const MatX& constraint_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);
/// c(q, v) = -(d/dt L) v, so that the acceleration-level constraint is L qdd = c (Eq. 18).
/// Returns data.loops.c.
const VecX& constraint_bias(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                            const Eigen::Ref<const VecX>& v);

/// phi, L and c in one pass (forward kinematics once); results in data.loops.
void constraint_terms(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v);

struct AssembleOptions {
  double tolerance = 1e-12;  ///< stop when max |phi_i| <= tolerance
  int max_iterations = 50;
  double rank_tolerance = 1e-10;  ///< relative pivot threshold of the rank-revealing step
  /// Joints (tree joint indices = body indices) whose coordinates are held at their value in
  /// q_guess (e.g. the actuated joints of a parallel robot, or a four-bar's crank).
  std::vector<int> fixed_joints;
};

struct AssembleReport {
  int iterations = 0;
  double residual = 0.0;  ///< max |phi_i| at exit
  int rank = 0;           ///< rank of L at the solution
};

/// Newton projection onto phi(q) = 0 from q_guess: q <- q (+) dq with dq = -L^+ phi (the
/// minimum-norm step, through a rank-revealing complete orthogonal decomposition of L, so
/// redundant constraints and singular configurations are fine), halving the step while max
/// |phi| does not decrease. Throws SingularError when it cannot reach the tolerance (the loops
/// cannot be closed from there, e.g. links too short), with the residual of each violated
/// loop joint named.
VecX assemble(const Model& model, Data& data, const Eigen::Ref<const VecX>& q_guess,
              const AssembleOptions& options = {}, AssembleReport* report = nullptr);

/// The velocity closest to v in the kinetic-energy metric that satisfies L v = 0 (computed on a
/// null-space basis of L, O(nv^3)):
/// v - M^-1 L^T (L M^-1 L^T)^+ L v (the position-and-velocity projection step of constraint
/// stabilisation, Featherstone & Orin 2000, footnote 3). q must be (close to) assembled.
VecX project_velocity(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      double rank_tolerance = 1e-10);

/// The spatial force that each loop joint transmits to its successor body (the predecessor
/// receives the opposite), from constraint multipliers lambda (size num_constraints) as
/// returned by constrained_forward_dynamics: f_k = T_k lambda_k in frame C_k (moment about the
/// successor's joint-frame origin), returned in world coordinates (frame World: spatial, about
/// the world origin), in C_k (Local) or in world axes about C_k's origin (LocalWorldAligned). Needs q; one entry per loop joint.
std::vector<Force> loop_joint_forces(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                     const Eigen::Ref<const VecX>& lambda,
                                     ReferenceFrame frame = ReferenceFrame::Local);

}  // namespace plucker
