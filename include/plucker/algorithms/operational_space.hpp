// Operational-space dynamics (Khatib, "A Unified Approach for Motion and Force Control of Robot Manipulators: The
// Operational Space Formulation", IEEE J. Robotics and Automation 1987): the task Jacobian J of a set of task frames,
// the operational-space inertia Lambda = (J M^-1 J^T)^-1 and its inverse, the dynamically consistent generalised
// inverse Jbar = M^-1 J^T Lambda, the null-space projector N = I - Jbar J and the task-space bias force mu + p, such
// that the joint-space dynamics M qdd + C = tau with tau = J^T F become, in task space,
//
//   Lambda xdd + mu + p = F,   mu + p = Lambda (J M^-1 C - Jdot v) = Jbar^T C - Lambda Jdot v,
//
// with xdd = d/dt (J v) = J qdd + Jdot v and C = nonlinear_effects(q, v) (Coriolis, centrifugal
// and gravity). The documentation's page "Operational-space dynamics" gives the conventions, references and timings.
//
// Method `Dense` (the "basic matrix method" of Featherstone, "Exploiting Sparsity in Operational-space
// Dynamics", IJRR 2010, with the sparsity-keeping factorisation of Featherstone, "Efficient Factorization of the
// Joint-Space Inertia Matrix for Branched Kinematic Trees", IJRR 2005): M by the CRBA, M = L^T D L by LTDL on the
// tree's pattern, W = D^-1/2 L^-T J^T (nonzero only on the task bodies' supports), Lambda^-1 = W^T W, Lambda by an
// LDL^T of Lambda^-1 in task-row order, Jbar = L^-1 D^-1/2 (W Lambda). O(nv^2 m) for N, O(nv (d + m) m) for the rest
// (d: the depth of the task bodies in DoFs).
#pragma once

#include <array>
#include <span>
#include <string>

#include "plucker/algorithms/data.hpp"

namespace plucker {

/// Which of a task frame's six motion rows [angular x y z; linear x y z] a task controls.
enum class TaskRows {
  All,          ///< rows 0..5: the full spatial motion
  Position,     ///< rows 3..5: the velocity of the frame origin
  Orientation,  ///< rows 0..2: the angular velocity
};

/// One task: a body or a named frame of the model (Model::frames(), e.g. a URDF link merged by a
/// fixed joint) and the rows of its 6-D motion that the task controls, in the order given.
struct OperationalTask {
  int body = 0;                               ///< the body the task frame moves with
  int frame = -1;                             ///< index in Model::frames(), or -1: the body's own frame
  std::array<int, 6> rows{0, 1, 2, 3, 4, 5};  ///< rows[0..num_rows): 0-2 angular, 3-5 linear
  int num_rows = 6;

  /// The frame of body `body` (its origin and axes).
  static OperationalTask of_body(int body, TaskRows rows = TaskRows::All);
  /// The frame Model::frames()[frame] (attached to its body by Frame::X_body).
  static OperationalTask of_frame(const Model& model, int frame, TaskRows rows = TaskRows::All);
  /// A body or a frame by name (bodies take precedence, as everywhere in the Python API);
  /// throws InvalidArgument naming an unknown name.
  static OperationalTask named(const Model& model, const std::string& name, TaskRows rows = TaskRows::All);
  /// The same frame with the given rows (1 to 6 distinct indices in [0, 6), checked by
  /// operational_space), in this order.
  OperationalTask with_rows(std::span<const int> rows) const;
};


/// How the quantities are computed.
enum class OperationalSpaceMethod {
  Dense,  ///< "dense": CRBA, LTDL of M, dense products (see above)
};

/// The results of operational_space, with m = the total number of task rows.
struct OperationalSpaceResults {
  MatX J;           ///< m x nv task Jacobian: J v = the task velocity
  VecX Jdot_v;      ///< m: d/dt(J v) at qdd = 0 (Jdot v), the task's velocity-product acceleration
  MatX Lambda_inv;  ///< m x m: J M^-1 J^T
  MatX Lambda;      ///< m x m: (J M^-1 J^T)^-1, the operational-space inertia
  MatX Jbar;        ///< nv x m: M^-1 J^T Lambda, the dynamically consistent generalised inverse
  MatX N;           ///< nv x nv: I - Jbar J (N^T projects joint forces into the task's null space)
  VecX bias;        ///< m: mu + p = Lambda (J M^-1 C - Jdot v)
};

/// Operational-space quantities of `tasks` (stacked in the order given) at (q, v). The task
/// acceleration is xdd = d/dt (J v) = J qdd + Jdot v in the coordinates of `frame`: with
/// ReferenceFrame::Local its linear rows are the derivative of the origin's velocity in the
/// moving frame's axes (the spatial acceleration), with LocalWorldAligned the classical
/// acceleration of the origin in world axes, with World the spatial acceleration in world
/// coordinates (rows about the world origin). Throws InvalidArgument for bad sizes, non-finite q or v, an empty
/// task list, a body or frame out of range, or bad rows (naming the task); SingularError when M
/// is singular (naming the joint) or when J M^-1 J^T is (naming the first task row that depends
/// on the rows before it, and those rows): two tasks constraining the same motion, a task at a
/// kinematic singularity, or a task on a frame no joint moves. Results are in a workspace of
/// `data` (valid until the next call); a second call with the same number of task rows
/// allocates nothing.
const OperationalSpaceResults& operational_space(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                                 const Eigen::Ref<const VecX>& v,
                                                 std::span<const OperationalTask> tasks,
                                                 ReferenceFrame frame = ReferenceFrame::Local,
                                                 OperationalSpaceMethod method = OperationalSpaceMethod::Dense);

/// "dense", and the inverse (throws InvalidArgument listing the names).
std::string to_string(OperationalSpaceMethod method);
OperationalSpaceMethod parse_operational_space_method(const std::string& name);

}  // namespace plucker
