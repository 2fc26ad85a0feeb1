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
// Methods (the documentation page "Operational-space dynamics" states the source of each formula and the measured
// costs):
//   Dense ("basic matrix method" of Featherstone, "Exploiting Sparsity in Operational-space
//     Dynamics", IJRR 29(10) 2010): M by the CRBA, a dense Cholesky factor M = L^T L, W = L^-T J^T
//     and Lambda^-1 = W^T W with dense products. O(nv^3 + nv^2 m + nv m^2).
//   Sparse (the sparse method of the same paper, with the factorisation of Featherstone,
//     "Efficient Factorization of the Joint-Space Inertia Matrix for Branched Kinematic Trees",
//     IJRR 2005): M = L^T D L on the tree's pattern (branch-induced sparsity), W = D^-1/2 L^-T J^T
//     on the task bodies' supports only (the sparsity of J). O(nv d^2 + m d^2 + m^2 d).
//   Recursive (Rodriguez, Jain and Kreutz-Delgado 1991; Kreutz-Delgado, Jain and Rodriguez 1992;
//     Chang and Khatib 2000): articulated-body quantities of the ABA (no M), the end-effector
//     inverse inertias Omega_i = P_i Omega_parent P_i^T + S_i D_i^-1 S_i^T outward, and each pair
//     of tasks by propagating both to their nearest common ancestor. O(N + d m^2).
//   Efpa (Wensing, Featherstone and Orin, "A Reduced-Order Recursive Algorithm for the Computation
//     of the Operational-Space Inertia Matrix", ICRA 2012): as Recursive, but each task's extended
//     force propagator is carried inward once and every pair is formed at its common ancestor.
//     O(N + m d + m^2).
//   Dca (the hybrid divide-and-conquer method listed by the specification for 2014; the
//     documentation page derives its formulas): Lambda^-1 is the inverse articulated inertia of
//     the whole tree seen at the task bodies, built by the DCA's assembly formula over a binary
//     assembly tree whose leaves are subchains assembled serially; O(log N) critical path on
//     O(N / log N) threads (OperationalSpaceOptions::threads, bit-identical for any count).
//     Jbar, N and the bias follow the recursive method's serial sweeps.
//   Auto: the cheapest of the four for the model and tasks by operation-count formulas calibrated
//     by measurement (operational_space_choice says which and why).
// (N: bodies, nv: DoFs, m: task rows, d: the depth of the task bodies.) The rest (Lambda from
// Lambda^-1, Jbar, N, the bias) is shared or follows each method's factors; see the .cpp.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

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
  Dense,      ///< "dense": CRBA, dense Cholesky of M, dense products
  Sparse,     ///< "sparse": CRBA, LTDL of M on the tree's pattern, sparse products (Featherstone 2010)
  Recursive,  ///< "recursive": articulated-body propagation, pairwise (Rodriguez et al., Chang-Khatib)
  Efpa,       ///< "efpa": extended-force-propagator algorithm (Wensing, Featherstone, Orin 2012)
  Dca,        ///< "dca": hybrid divide-and-conquer assembly of Lambda^-1 (serial subchains, DCA across them)
  Auto,       ///< "auto": the method operational_space_choice picks for the model and tasks
};

/// Every method, in the order above (Auto last).
std::span<const OperationalSpaceMethod> operational_space_methods();

/// Which results operational_space computes (bit flags, OR-ed). J, Jdot_v, Lambda_inv, Lambda and
/// dependent_rows are always computed; a result not asked for is left empty (0 x 0), so a
/// script asking only for Lambda pays for Lambda only.
enum OperationalSpaceOutput : unsigned {
  kOutputLambda = 0,      ///< J, Jdot_v, Lambda_inv, Lambda only
  kOutputJbar = 1u,       ///< Jbar
  kOutputNullSpace = 2u,  ///< N (implies Jbar)
  kOutputBias = 4u,       ///< bias (with Dense and Sparse it implies Jbar)
  kOutputAll = 7u,
};

/// Options of operational_space beyond the frame and the method.
struct OperationalSpaceOptions {
  unsigned outputs = kOutputAll;  ///< OperationalSpaceOutput flags
  /// 0: a rank-deficient J M^-1 J^T throws SingularError naming the dependent rows. > 0: damped
  /// (regularised) Lambda = (J M^-1 J^T + damping^2 I)^-1 and Jbar = M^-1 J^T Lambda, which are
  /// finite whatever the rank (N = I - Jbar J is then not exactly a projector); the dependent rows
  /// are still reported in OperationalSpaceResults::dependent_rows. Must be finite and >= 0.
  double damping = 0.0;
  /// Dca only: threads for the assembly levels (>= 1); the results do not depend on it (bit-identical).
  int threads = 1;
  /// Dca only: bodies per serially assembled subchain, 0: ceil(log2(bodies)). 1 is the pure DCA.
  int dca_segment = 0;
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
  /// Stacked rows k whose J_k is (to the library's pivot test) a linear combination of the rows
  /// before it in the metric M^-1, or zero; empty for a full-rank task. Non-empty only with
  /// damping > 0 (without damping such a task throws SingularError).
  std::vector<int> dependent_rows;
  OperationalSpaceMethod method = OperationalSpaceMethod::Dense;  ///< the method that ran (Auto resolved)
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
                                                 OperationalSpaceMethod method = OperationalSpaceMethod::Auto,
                                                 const OperationalSpaceOptions& options = {});

/// "dense", "sparse", "recursive", "efpa", "dca", "auto", and the inverse (throws InvalidArgument
/// listing the names).
std::string to_string(OperationalSpaceMethod method);
OperationalSpaceMethod parse_operational_space_method(const std::string& name);

/// What Auto picks for the model, the tasks and the outputs asked for, and why: each method's
/// operation-count formula (in counts the model and tasks determine: DoFs, bodies, the task
/// bodies' depths and common ancestors) times per-operation times calibrated by measurement
/// (documentation: "Operational-space dynamics", "Cost study"). predicted_ns is indexed by the method's enum value
/// (Dense..Efpa). Checks the tasks as operational_space does; allocates (the reason string).
struct OperationalSpaceChoice {
  OperationalSpaceMethod method = OperationalSpaceMethod::Sparse;
  std::string reason;
  std::array<double, 4> predicted_ns{};
  std::array<double, 4> operations{};  ///< the operation counts (multiply-adds) the formulas give
};
OperationalSpaceChoice operational_space_choice(const Model& model, std::span<const OperationalTask> tasks,
                                                unsigned outputs = kOutputAll);

/// The cost of the Dca method's assembly of Lambda^-1 for the model and tasks (multiply-adds,
/// counted per step as implemented): `total` over all steps, `critical_path` the largest sum
/// along one leaf-to-root path of the assembly tree (the time with unlimited threads), `levels`
/// the tree's height, `subchains` the number of serially assembled subchains, `max_handles` the
/// most handles on one subassembly. segment as OperationalSpaceOptions::dca_segment.
struct OperationalSpaceDcaCost {
  int segment = 0;
  int subchains = 0;
  int levels = 0;
  int max_handles = 0;
  long long total = 0;
  long long critical_path = 0;
};
OperationalSpaceDcaCost operational_space_dca_cost(const Model& model, std::span<const OperationalTask> tasks,
                                                   int segment = 0);

}  // namespace plucker
