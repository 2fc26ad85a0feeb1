// Operational-space dynamics (plucker/algorithms/operational_space.hpp): four methods for
// Lambda^-1 = J M^-1 J^T and Jbar = M^-1 J^T Lambda, one shared tail.
//
// Khatib (1987), with the joint-space dynamics M qdd + C = tau and a task Jacobian J:
//   Lambda^-1 = J M^-1 J^T                          (operational-space inertia, inverse)
//   Jbar      = M^-1 J^T Lambda                     (dynamically consistent inverse)
//   N         = I - Jbar J                          (null-space projector; N^T acts on torques)
//   mu + p    = Jbar^T C - Lambda Jdot v            (task-space Coriolis/centrifugal + gravity)
// so that tau = J^T F gives Lambda xdd + mu + p = F with xdd = J qdd + Jdot v.
//
// Dense (Featherstone 2010's "basic matrix method"): CRBA, dense Cholesky M = L^T L, W = L^-T J^T,
// Lambda^-1 = W^T W, Jbar = L^-1 (W Lambda).
// Sparse (Featherstone 2010, with the LTDL of Featherstone 2005): M = L^T D L on the tree's
// pattern; W = D^-1/2 L^-T J^T column by column on each row's support path (a column of J^T is
// zero outside its body's support, and so is L^-T of it); Lambda^-1 = W^T W over the shared
// supports; Jbar = L^-1 D^-1/2 (W Lambda).
// Recursive (Rodriguez, Jain, Kreutz-Delgado 1991; Chang and Khatib 2000) and Efpa (Wensing,
// Featherstone, Orin 2012): the articulated-body U_i, D_i^-1 (innovations factorisation), the
// propagators P_i = (1 - S_i D_i^-1 U_i^T) iX_p and Omega_i = P_i Omega_p P_i^T + S_i D_i^-1 S_i^T
// outward on the task paths; the block of tasks a, b is K_a^T Omega_c K_b at their nearest common
// ancestor c, with K the task force carried from the task body to c by the P^T: Recursive walks
// each pair's paths, Efpa carries each task's K inward once and forms the pairs at the branch
// points. Jbar = Z Lambda with Z = M^-1 J^T by the ABA's outward pass on m columns, and
// mu + p = -Lambda (J qdd0 + Jdot v), qdd0 = -M^-1 C by the same factors.
// Shared: Lambda^-1 (+ damping^2 I) = G E G^T in task-row order, where a pivot E_k that vanishes
// names row k as dependent on the rows before it (the library's one criterion, DEVELOPERS.md
// "Singularity"); Lambda = G^-T E^-1 G^-1; N = I - Jbar J on the columns J moves.
#include "plucker/algorithms/operational_space.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "algorithms/fd_kernels.hpp"
#include "algorithms/frame_kernels.hpp"
#include "algorithms/operational_space_dca.hpp"
#include "base/text.hpp"
#include "plucker/algorithms/kinematics.hpp"
#include "plucker/algorithms/rnea.hpp"

namespace plucker {
namespace {

constexpr const char* kFn = "operational_space";
constexpr const char* kRowNames[6] = {"angular x", "angular y", "angular z", "linear x", "linear y", "linear z"};

struct OperationalSpaceWorkspace : detail::WorkspaceOf<OperationalSpaceWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::OperationalSpace;
  explicit OperationalSpaceWorkspace(const Model& model)
      : S_world(Matrix6X::Zero(6, model.nv())),
        C(VecX::Zero(model.nv())),
        sqrt_D(VecX::Zero(model.nv())),
        S_body(Matrix6X::Zero(6, model.nv())),
        qdd0(VecX::Zero(model.nv())),
        P(static_cast<std::size_t>(model.nbodies()), Mat6::Zero()),
        Omega(static_cast<std::size_t>(model.nbodies()), Mat6::Zero()),
        on_path(static_cast<std::size_t>(model.nbodies()), 0),
        head(static_cast<std::size_t>(model.nbodies()), -1) {}
  OperationalSpaceResults results;
  Matrix6X S_world;      ///< every motion-subspace column in world coordinates (column = velocity index)
  VecX C;                ///< nonlinear_effects(q, v)
  VecX sqrt_D;           ///< sqrt of LTDL's D
  MatX W;                ///< nv x m: D^-1/2 L^-T J^T (column k zero below row top[k])
  MatX G;                ///< m x m: Lambda^-1 = G E G^T (G unit lower triangular), then G^-1
  VecX E;                ///< m: the pivots E
  VecX row_scale;        ///< m: the zero-row test's reference
  VecX t;                ///< m: scratch
  std::vector<int> top;  ///< m: the last DoF of each row's support path (-1: none)
  // Recursive and Efpa (articulated-body quantities; no M).
  Matrix6X S_body;                                          ///< every motion-subspace column in body coordinates
  VecX qdd0;                                                ///< qdd at tau = 0 (= -M^-1 C)
  Matrix6X E6;                                              ///< 6 x m: each row's unit task force on its body
  Matrix6X K, OK;                                           ///< 6 x m: Efpa's propagated forces; Omega K
  std::vector<Mat6, Eigen::aligned_allocator<Mat6>> P;      ///< per body: acceleration propagator
  std::vector<Mat6, Eigen::aligned_allocator<Mat6>> Omega;  ///< per body: inverse inertia seen at it
  std::vector<char> on_path;                                ///< per body: an ancestor-or-self of a task body
  std::vector<int> head, next, origin, list, segend;        ///< Efpa's task lists
  std::vector<int> row0;                                    ///< per task: its first stacked row
  MatX Y, Z;                                                ///< nv x m: innovations S^T f; M^-1 J^T
  MatX A;                                                   ///< 6 x (m nbodies): accelerations of the Z sweep
  MatX tmp;                                                 ///< 6 x m scratch
  detail::OsDcaHolder dca;                                  ///< Dca's assembly tree and Phi blocks
};

std::string task_name(const Model& model, const OperationalTask& task) {
  return task.frame >= 0 ? "frame '" + model.frames()[static_cast<std::size_t>(task.frame)].name + "'"
                         : "body '" + model.body_name(task.body) + "'";
}

/// Checks the tasks (frames in range, rows valid and distinct); returns the number of rows. The
/// messages are built only on failure (a call allocates nothing once warm).
int check_tasks(const Model& model, std::span<const OperationalTask> tasks) {
  if (tasks.empty()) throw InvalidArgument(std::string(kFn) + ": no tasks given");
  const int nframes = static_cast<int>(model.frames().size());
  int m = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const OperationalTask& task = tasks[t];
    auto fail = [&](bool named, const std::string& what) {
      throw InvalidArgument(std::string(kFn) + ": task " + std::to_string(t) +
                            (named ? " (" + task_name(model, task) + ")" : std::string()) + ": " + what);
    };
    if (task.frame < -1 || task.frame >= nframes)
      fail(false, "frame index " + std::to_string(task.frame) + " out of range [0, " + std::to_string(nframes) +
                      ") (or -1: the body's own frame)");
    if (task.frame < 0 && (task.body < 0 || task.body >= model.nbodies()))
      fail(false,
           "body index " + std::to_string(task.body) + " out of range [0, " + std::to_string(model.nbodies()) + ")");
    if (task.frame >= 0 && model.frames()[static_cast<std::size_t>(task.frame)].body != task.body)
      fail(true, "body " + std::to_string(task.body) +
                     " is not the frame's body (make tasks with OperationalTask::of_frame)");
    if (task.num_rows < 1 || task.num_rows > 6) fail(true, std::to_string(task.num_rows) + " rows, expected 1 to 6");
    int seen = 0;
    for (int i = 0; i < task.num_rows; ++i) {
      const int r = task.rows[static_cast<std::size_t>(i)];
      if (r < 0 || r > 5) fail(true, "row " + std::to_string(r) + " out of range [0, 6) (0-2 angular, 3-5 linear)");
      if (seen & (1 << r)) fail(true, "row " + std::to_string(r) + " (" + kRowNames[r] + ") given twice");
      seen |= 1 << r;
    }
    m += task.num_rows;
  }
  return m;
}

/// Task and row of stacked row k.
std::pair<std::size_t, int> locate_row(std::span<const OperationalTask> tasks, int k) {
  std::size_t t = 0;
  while (k >= tasks[t].num_rows) k -= tasks[t++].num_rows;
  return {t, tasks[t].rows[static_cast<std::size_t>(k)]};
}

std::string row_name(const Model& model, std::span<const OperationalTask> tasks, int k) {
  const auto [t, r] = locate_row(tasks, k);
  return "row " + std::to_string(k) + " (task " + std::to_string(t) + ", " + task_name(model, tasks[t]) + ", " +
         kRowNames[r] + ")";
}

/// The SingularError of stacked row k: zero (no joint moves the frame along it) or, with the
/// coefficients c of the rows before it (J_k = sum_j c_j J_j in the metric M^-1), dependent.
[[noreturn]] void throw_singular_row(const Model& model, std::span<const OperationalTask> tasks, int k, double pivot,
                                     double scale, const MatX* Lambda_inv, const VecX* c) {
  std::ostringstream s;
  s << kFn << ": the task is singular (J M^-1 J^T is rank-deficient): " << row_name(model, tasks, k);
  bool any = false;
  if (c) {
    for (int j = 0; j < k; ++j) {  // coefficients that matter, scaled to the rows' sizes
      const double w = std::abs((*c)[j]) * std::sqrt((*Lambda_inv)(j, j) / (*Lambda_inv)(k, k));
      if (!(w > 1e-6)) continue;
      s << (any ? ", " : " is a linear combination of the rows before it: ") << text::number((*c)[j]) << " x "
        << row_name(model, tasks, j);
      any = true;
    }
  }
  if (!any)
    s << " is zero: no joint moves the task frame along it";
  else
    s << " (pivot " << text::number(pivot) << ", scale " << text::number(scale) << ")";
  s << "; remove the row or move away from the kinematic singularity";
  throw SingularError(s.str());
}

/// Fills rows [row, row + task.num_rows) of J and Jdot_v for one task.
void task_rows(const Model& model, const Data& data, OperationalSpaceWorkspace& ws, const OperationalTask& task,
               ReferenceFrame axes, int row) {
  OperationalSpaceResults& res = ws.results;
  const int b = task.body, nr = task.num_rows;
  const Transform X_FB = task.frame >= 0 ? model.frames()[static_cast<std::size_t>(task.frame)].X_body : Transform();
  const Transform X_F0 = X_FB * data.X_base[b];      // world -> task frame
  const Transform X = detail::world_to(axes, X_F0);  // world -> task coordinates
  const Vec6 jdv = detail::frame_velocity_derivative(axes, X_FB, data.X_base[b], data.v[b], data.a[b]).vector();
  res.J.middleRows(row, nr).setZero();
  double scale = 0.0;  // sum over the support's columns of |column of the full 6-D Jacobian|^2
  for (int j = b; j > 0; j = model.parent(j)) {
    for (int c = model.idx_v(j); c < model.idx_v(j) + model.joint_nv(j); ++c) {
      const Vec6 s6 = X.apply(Motion(Vec6(ws.S_world.col(c)))).vector();
      scale += s6.squaredNorm();
      for (int i = 0; i < nr; ++i) res.J(row + i, c) = s6[task.rows[static_cast<std::size_t>(i)]];
    }
  }
  for (int i = 0; i < nr; ++i) {
    res.Jdot_v[row + i] = jdv[task.rows[static_cast<std::size_t>(i)]];
    ws.row_scale[row + i] = scale;
  }
}

}  // namespace

OperationalTask OperationalTask::of_body(int body, TaskRows rows) {
  OperationalTask t;
  t.body = body;
  if (rows == TaskRows::Position) t = t.with_rows(std::array<int, 3>{3, 4, 5});
  if (rows == TaskRows::Orientation) t = t.with_rows(std::array<int, 3>{0, 1, 2});
  return t;
}

OperationalTask OperationalTask::of_frame(const Model& model, int frame, TaskRows rows) {
  if (frame < 0 || frame >= static_cast<int>(model.frames().size()))
    throw InvalidArgument("OperationalTask::of_frame: frame index " + std::to_string(frame) + " out of range [0, " +
                          std::to_string(model.frames().size()) + ")");
  OperationalTask t = of_body(model.frames()[static_cast<std::size_t>(frame)].body, rows);
  t.frame = frame;
  return t;
}

OperationalTask OperationalTask::named(const Model& model, const std::string& name, TaskRows rows) {
  if (model.has_body(name)) return of_body(model.body_index(name), rows);
  if (model.has_frame(name)) return of_frame(model, model.frame_index(name), rows);
  throw InvalidArgument("OperationalTask: no body or frame named '" + text::printable(name) + "' in model '" +
                        text::printable(model.name()) + "'");
}

OperationalTask OperationalTask::with_rows(std::span<const int> rows) const {
  OperationalTask t = *this;
  if (rows.size() > 6)
    throw InvalidArgument("OperationalTask::with_rows: " + std::to_string(rows.size()) + " rows, expected 1 to 6");
  t.num_rows = static_cast<int>(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) t.rows[i] = rows[i];
  return t;
}

namespace {

using Mat6D = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;
using MatD6 = Eigen::Matrix<double, Eigen::Dynamic, 6, Eigen::RowMajor, 6, 6>;
using MatDD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor, 6, 6>;

constexpr std::array<OperationalSpaceMethod, 6> kMethods{
    OperationalSpaceMethod::Dense, OperationalSpaceMethod::Sparse, OperationalSpaceMethod::Recursive,
    OperationalSpaceMethod::Efpa,  OperationalSpaceMethod::Dca,    OperationalSpaceMethod::Auto};
constexpr const char* kMethodNames[6] = {"dense", "sparse", "recursive", "efpa", "dca", "auto"};

/// A = G E G^T + (rows judged dependent) for A + shift I, in task-row order (G unit lower
/// triangular, E the pivots). A pivot E_k failing the test against A(k, k) + shift makes row k
/// dependent on the rows before it: without `dependent` the scan stops and returns k; with it,
/// k is recorded, dropped (E_k = 0, G(., k) = 0) and the scan goes on. Returns -1 otherwise.
int ldl_rows(const MatX& A, double shift, MatX& G, VecX& E, std::vector<int>* dependent) {
  const int m = static_cast<int>(A.rows());
  G.setIdentity();
  for (int k = 0; k < m; ++k) {
    for (int j = 0; j < k; ++j) {
      if (E[j] == 0.0) {
        G(k, j) = 0.0;
        continue;
      }
      double s = A(k, j);
      for (int l = 0; l < j; ++l) s -= G(k, l) * G(j, l) * E[l];
      G(k, j) = s / E[j];
    }
    const double ref = A(k, k) + shift;
    double e = ref;
    for (int l = 0; l < k; ++l) e -= G(k, l) * G(k, l) * E[l];
    if (!detail::pivot_accepted(e, ref)) {
      if (!dependent) return k;
      dependent->push_back(k);
      e = 0.0;
    }
    E[k] = e;
  }
  return -1;
}

/// Lambda = (Lambda_inv + damping^2 I)^-1 by ldl_rows, with the dependent rows in
/// res.dependent_rows (damping > 0) or a SingularError naming them (damping = 0).
void lambda_from_inverse(const Model& model, std::span<const OperationalTask> tasks, OperationalSpaceWorkspace& ws,
                         double damping) {
  OperationalSpaceResults& res = ws.results;
  const int m = static_cast<int>(res.Lambda_inv.rows());
  MatX& G = ws.G;
  res.dependent_rows.clear();
  if (damping > 0.0) {
    ldl_rows(res.Lambda_inv, 0.0, G, ws.E, &res.dependent_rows);
    const int k = ldl_rows(res.Lambda_inv, damping * damping, G, ws.E, nullptr);
    if (k >= 0)
      throw SingularError(std::string(kFn) + ": damping " + text::number(damping) +
                          " is too small to regularise J M^-1 J^T at " + row_name(model, tasks, k) +
                          " (its pivot is below the singularity test's threshold); use a larger damping");
  } else if (const int k = ldl_rows(res.Lambda_inv, 0.0, G, ws.E, nullptr); k >= 0) {
    double e = res.Lambda_inv(k, k);
    for (int l = 0; l < k; ++l) e -= G(k, l) * G(k, l) * ws.E[l];
    // J_k = sum_j c_j J_j + (residual) with G(0:k, 0:k)^T c = G(k, 0:k)^T (error path: allocates).
    VecX c = G.row(k).head(k).transpose();
    G.topLeftCorner(k, k).transpose().triangularView<Eigen::UnitUpper>().solveInPlace(c);
    throw_singular_row(model, tasks, k, e, res.Lambda_inv(k, k), &res.Lambda_inv, &c);
  }
  // G <- G^-1 (unit lower triangular, in place, column by column from the right).
  for (int j = m - 1; j >= 0; --j)
    for (int i = m - 1; i > j; --i) {
      double s = -G(i, j);
      for (int l = j + 1; l < i; ++l) s -= G(i, l) * G(l, j);
      G(i, j) = s;
    }
  // Lambda = G^-T E^-1 G^-1 (lower triangle, mirrored).
  for (int k = 0; k < m; ++k) ws.E[k] = ws.E[k] == 0.0 ? 0.0 : 1.0 / ws.E[k];
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) {
      double s = 0.0;
      for (int l = i; l < m; ++l) s += G(l, i) * G(l, j) * ws.E[l];
      res.Lambda(i, j) = res.Lambda(j, i) = s;
    }
}

// ------------------------------------------------------------------------------ dense and sparse

/// Lambda^-1 by the dense method: M = L^T L by a dense Cholesky factorisation (every entry), in
/// place on data.M's upper triangle (U = L^T there, M = U U^T), W = U^-1 J^T, Lambda^-1 = W^T W.
void dense_lambda_inv(const Model& model, Data& data, OperationalSpaceWorkspace& ws) {
  OperationalSpaceResults& res = ws.results;
  const int m = static_cast<int>(res.J.rows()), nv = model.nv();
  try {
    detail::factorize_ltl_dense(model, data);
  } catch (const SingularError& e) {
    throw SingularError(std::string(kFn) + ": " + e.what());
  }
  for (int k = 0; k < m; ++k) {
    auto w = ws.W.col(k);
    w = res.J.row(k).transpose();
    data.M.triangularView<Eigen::Upper>().solveInPlace(w);
    ws.top[static_cast<std::size_t>(k)] = nv - 1;
  }
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) res.Lambda_inv(i, j) = res.Lambda_inv(j, i) = ws.W.col(i).dot(ws.W.col(j));
}

/// Lambda^-1 by the sparse method (see the file's comment): M = L^T D L on the tree's pattern,
/// W = D^-1/2 L^-T J^T on each row's support path, Lambda^-1 = W^T W over the shared supports.
void sparse_lambda_inv(const Model& model, Data& data, OperationalSpaceWorkspace& ws,
                       std::span<const OperationalTask> tasks) {
  OperationalSpaceResults& res = ws.results;
  const int m = static_cast<int>(res.J.rows()), nv = model.nv();
  try {
    detail::factorize_ltdl_unchecked(model, data);
  } catch (const SingularError& e) {
    throw SingularError(std::string(kFn) + ": " + e.what());
  }
  for (int i = 0; i < nv; ++i) ws.sqrt_D[i] = std::sqrt(data.M(i, i));
  int row = 0;
  for (const OperationalTask& task : tasks) {
    int j = task.body;
    while (j > 0 && model.joint_nv(j) == 0) j = model.parent(j);
    const int top = model.idx_v(j) + model.joint_nv(j) - 1;
    for (int i = 0; i < task.num_rows; ++i, ++row) {
      auto w = ws.W.col(row);
      w = res.J.row(row).transpose();
      if (top >= 0) {
        detail::solve_ltdl_transposed_path_unchecked(model, data, w.data(), top);
        w.head(top + 1).array() /= ws.sqrt_D.head(top + 1).array();
      }
      ws.top[static_cast<std::size_t>(row)] = top;
    }
  }
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) {
      const int len = std::min(ws.top[static_cast<std::size_t>(i)], ws.top[static_cast<std::size_t>(j)]) + 1;
      res.Lambda_inv(i, j) = res.Lambda_inv(j, i) = ws.W.col(i).head(len).dot(ws.W.col(j).head(len));
    }
}

/// Jbar = M^-1 J^T Lambda from the dense or sparse factors, column by column.
void factor_jbar(const Model& model, Data& data, OperationalSpaceWorkspace& ws, bool dense) {
  OperationalSpaceResults& res = ws.results;
  const int m = static_cast<int>(res.J.rows());
  for (int k = 0; k < m; ++k) {
    auto jbar = res.Jbar.col(k);
    jbar.setZero();
    for (int l = 0; l < m; ++l) {
      const int len = ws.top[static_cast<std::size_t>(l)] + 1;
      jbar.head(len) += ws.W.col(l).head(len) * res.Lambda(l, k);
    }
    if (dense) {
      data.M.triangularView<Eigen::Upper>().transpose().solveInPlace(jbar);  // L^-1 (W Lambda), L = U^T
    } else {
      jbar.array() /= ws.sqrt_D.array();
      detail::solve_ltdl_unit_unchecked(model, data, jbar.data());
    }
  }
}

// ------------------------------------------------------------------------------ recursive and EFPA

/// The articulated-body quantities on the poses forward_kinematics left in data: U_i = P_i S_i
/// and D_i^-1 = (S_i^T P_i S_i)^-1 with P_i the articulated inertia, by the innovations
/// factorisation (paper 002 Eq. 45: the ABA's inward pass without velocity terms), the motion
/// subspaces in body coordinates, and, for every body on a task body's path to the root, the
/// acceleration propagator P_i = (1 - S_i D_i^-1 U_i^T) iX_p and the inverse inertia
/// Omega_i = P_i Omega_p P_i^T + S_i D_i^-1 S_i^T (Omega_0 = 0: the fixed world), outward.
void articulated_quantities(const Model& model, Data& data, OperationalSpaceWorkspace& ws,
                            std::span<const OperationalTask> tasks) {
  detail::InnovationsWorkspace* factors = nullptr;
  try {
    factors = &detail::innovations_factor(model, data);
  } catch (const SingularError& e) {
    throw SingularError(std::string(kFn) + ": " + e.what());
  }
  const detail::InnovationsWorkspace& aw = *factors;
  const int nb = model.nbodies();
  for (int j = 1; j < nb; ++j)
    ops::visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int k = 0; k < ops::joint_dofs(joint); ++k) {
        Motion s;
        ops::add_column<double>(s, ops::column(joint, k), 1.0);
        ws.S_body.col(model.idx_v(j) + k) = s.vector();
      }
    });
  std::fill(ws.on_path.begin(), ws.on_path.end(), 0);
  for (const OperationalTask& task : tasks)
    for (int j = task.body; j > 0 && !ws.on_path[static_cast<std::size_t>(j)]; j = model.parent(j))
      ws.on_path[static_cast<std::size_t>(j)] = 1;
  for (int i = 1; i < nb; ++i) {
    if (!ws.on_path[static_cast<std::size_t>(i)]) continue;
    const Mat6 X6 = data.X_up[i].matrix_motion();
    const int d = model.joint_nv(i), iv = model.idx_v(i), p = model.parent(i);
    Mat6& P = ws.P[static_cast<std::size_t>(i)];
    Mat6& Om = ws.Omega[static_cast<std::size_t>(i)];
    if (d > 0) {
      const Eigen::Map<const MatDD> Dinv(aw.D_inv.data() + 6 * iv, d, d);
      const auto S = ws.S_body.middleCols(iv, d);
      Mat6D U(6, d);
      for (int k = 0; k < d; ++k) U.col(k) = aw.U[static_cast<std::size_t>(iv + k)].vector();
      const Mat6D SDinv = S * Dinv;
      const MatD6 UtX = U.transpose() * X6;
      P.noalias() = X6 - SDinv * UtX;
      Om.noalias() = SDinv * S.transpose();
    } else {
      P = X6;
      Om.setZero();
    }
    if (p > 0) {
      const Mat6 PO = P * ws.Omega[static_cast<std::size_t>(p)];
      Om.noalias() += PO * P.transpose();
    }
  }
}

/// E6: each task row's unit force on its task body, in that body's coordinates (the transposed
/// row of the motion transform body -> task coordinates), so that J_row = E6_row^T J_body.
void task_forces(const Model& model, const Data& data, OperationalSpaceWorkspace& ws,
                 std::span<const OperationalTask> tasks, ReferenceFrame axes) {
  int row = 0;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const OperationalTask& task = tasks[t];
    const int b = task.body;
    ws.row0[t] = row;
    const Transform X_FB = task.frame >= 0 ? model.frames()[static_cast<std::size_t>(task.frame)].X_body : Transform();
    const Transform X_c0 = detail::world_to(axes, X_FB * data.X_base[b]);  // world -> task coordinates
    const Mat6 X6 = (X_c0 * data.X_base[b].inverse()).matrix_motion();     // body -> task coordinates
    for (int i = 0; i < task.num_rows; ++i, ++row)
      ws.E6.col(row) = X6.row(task.rows[static_cast<std::size_t>(i)]).transpose();
  }
}

/// Lambda^-1 by pairs (Recursive): the block of tasks a, b is E_a^T Phi_a,c Omega_c Phi_b,c^T E_b
/// with c their nearest common ancestor and Phi the product of the propagators P on the path,
/// each pair walking its own paths: O(d) 6x6 products per pair.
void recursive_lambda_inv(const Model& model, OperationalSpaceWorkspace& ws, std::span<const OperationalTask> tasks) {
  OperationalSpaceResults& res = ws.results;
  for (std::size_t a = 0; a < tasks.size(); ++a)
    for (std::size_t b = a; b < tasks.size(); ++b) {
      const int na = tasks[a].num_rows, nb = tasks[b].num_rows, ra = ws.row0[a], rb = ws.row0[b];
      MatD6 Ra = ws.E6.middleCols(ra, na).transpose(), Rb = ws.E6.middleCols(rb, nb).transpose();
      int ia = tasks[a].body, ib = tasks[b].body;
      while (ia != ib) {
        if (ia > ib) {
          Ra = Ra * ws.P[static_cast<std::size_t>(ia)];
          ia = model.parent(ia);
        } else {
          Rb = Rb * ws.P[static_cast<std::size_t>(ib)];
          ib = model.parent(ib);
        }
      }
      auto block = res.Lambda_inv.block(ra, rb, na, nb);
      if (ia == 0) {
        block.setZero();
      } else {
        const MatD6 RO = Ra * ws.Omega[static_cast<std::size_t>(ia)];
        block.noalias() = RO * Rb.transpose();
      }
      if (a == b) {
        const MatDD sym = 0.5 * (block + block.transpose());
        block = sym;
      } else {
        res.Lambda_inv.block(rb, ra, nb, na) = block.transpose();
      }
    }
}

/// The innovations Y (nv x m): row block of joint i, column of task row r = S_i^T (the force at
/// body i that task r's unit force, carried inward through the articulated bodies, applies),
/// zero where the task body is not in i's subtree. For Recursive, walking each task's path.
void innovations_by_paths(const Model& model, OperationalSpaceWorkspace& ws, std::span<const OperationalTask> tasks) {
  ws.Y.setZero();
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const int nr = tasks[t].num_rows, r0 = ws.row0[t];
    Mat6D f = ws.E6.middleCols(r0, nr);
    for (int j = tasks[t].body; j > 0; j = model.parent(j)) {
      const int d = model.joint_nv(j), iv = model.idx_v(j);
      if (d > 0) ws.Y.block(iv, r0, d, nr).noalias() = ws.S_body.middleCols(iv, d).transpose() * f;
      const Mat6D g = ws.P[static_cast<std::size_t>(j)].transpose() * f;
      f = g;
    }
  }
}

/// Lambda^-1 by the EFPA: bodies leaves first; the tasks whose bodies lie in body i's subtree
/// are in a list at i with their forces K carried to i (extended force propagators applied once
/// per task and body); the pairs whose nearest common ancestor is i (from different children,
/// or on i itself) give K_a^T Omega_i K_b; then every force moves to the parent through P_i^T
/// and the list joins the parent's. With `innovations`, Y's blocks are S_i^T K on the way.
void efpa_lambda_inv(const Model& model, OperationalSpaceWorkspace& ws, std::span<const OperationalTask> tasks,
                     bool innovations) {
  OperationalSpaceResults& res = ws.results;
  const int nb = model.nbodies(), T = static_cast<int>(tasks.size());
  std::fill(ws.head.begin(), ws.head.end(), -1);
  res.Lambda_inv.setZero();
  if (innovations) ws.Y.setZero();
  for (int t = 0; t < T; ++t) {
    const int b = tasks[static_cast<std::size_t>(t)].body, r0 = ws.row0[static_cast<std::size_t>(t)];
    ws.K.middleCols(r0, tasks[static_cast<std::size_t>(t)].num_rows) =
        ws.E6.middleCols(r0, tasks[static_cast<std::size_t>(t)].num_rows);
    ws.next[static_cast<std::size_t>(t)] = ws.head[static_cast<std::size_t>(b)];
    ws.head[static_cast<std::size_t>(b)] = t;
    ws.origin[static_cast<std::size_t>(t)] = b;
  }
  auto nr = [&](int t) { return tasks[static_cast<std::size_t>(t)].num_rows; };
  auto r0 = [&](int t) { return ws.row0[static_cast<std::size_t>(t)]; };
  for (int i = nb - 1; i > 0; --i) {
    if (ws.head[static_cast<std::size_t>(i)] < 0) continue;
    int n = 0, last = -1;
    for (int t = ws.head[static_cast<std::size_t>(i)]; t >= 0; t = ws.next[static_cast<std::size_t>(t)])
      ws.list[static_cast<std::size_t>(n++)] = last = t;
    // Segments: same origin (a child's subtree) are contiguous; the tasks on i itself pair with all.
    bool pairs = false;
    for (int x = n - 1; x >= 0; --x) {
      const int o = ws.origin[static_cast<std::size_t>(ws.list[static_cast<std::size_t>(x)])];
      const bool same =
          x + 1 < n && o != i && ws.origin[static_cast<std::size_t>(ws.list[static_cast<std::size_t>(x + 1)])] == o;
      ws.segend[static_cast<std::size_t>(x)] = same ? ws.segend[static_cast<std::size_t>(x + 1)] : x + 1;
      pairs = pairs || o == i || ws.segend[static_cast<std::size_t>(x)] < n;
    }
    if (pairs) {
      const Mat6& Om = ws.Omega[static_cast<std::size_t>(i)];
      for (int x = 0; x < n; ++x) {
        const int t = ws.list[static_cast<std::size_t>(x)];
        ws.OK.middleCols(r0(t), nr(t)).noalias() = Om * ws.K.middleCols(r0(t), nr(t));
      }
      for (int x = 0; x < n; ++x) {
        const int a = ws.list[static_cast<std::size_t>(x)];
        const bool own = ws.origin[static_cast<std::size_t>(a)] == i;
        if (own) {
          auto block = res.Lambda_inv.block(r0(a), r0(a), nr(a), nr(a));
          block.noalias() = ws.K.middleCols(r0(a), nr(a)).transpose() * ws.OK.middleCols(r0(a), nr(a));
          const MatDD sym = 0.5 * (block + block.transpose());
          block = sym;
        }
        for (int y = own ? x + 1 : ws.segend[static_cast<std::size_t>(x)]; y < n; ++y) {
          const int b = ws.list[static_cast<std::size_t>(y)];
          auto block = res.Lambda_inv.block(r0(a), r0(b), nr(a), nr(b));
          block.noalias() = ws.K.middleCols(r0(a), nr(a)).transpose() * ws.OK.middleCols(r0(b), nr(b));
          res.Lambda_inv.block(r0(b), r0(a), nr(b), nr(a)) = block.transpose();
        }
      }
    }
    const int d = model.joint_nv(i), iv = model.idx_v(i), p = model.parent(i);
    const Mat6 Pt = ws.P[static_cast<std::size_t>(i)].transpose();
    for (int x = 0; x < n; ++x) {
      const int t = ws.list[static_cast<std::size_t>(x)];
      auto Kt = ws.K.middleCols(r0(t), nr(t));
      if (innovations && d > 0)
        ws.Y.block(iv, r0(t), d, nr(t)).noalias() = ws.S_body.middleCols(iv, d).transpose() * Kt;
      if (p > 0) {
        const Mat6D g = Pt * Kt;
        Kt = g;
        ws.origin[static_cast<std::size_t>(t)] = i;
      }
    }
    if (p > 0) {
      ws.next[static_cast<std::size_t>(last)] = ws.head[static_cast<std::size_t>(p)];
      ws.head[static_cast<std::size_t>(p)] = ws.head[static_cast<std::size_t>(i)];
    }
  }
}

/// Z = M^-1 J^T from the innovations Y by the ABA's outward pass, m columns at once:
/// a'_i = iX_p a_p, qdd_i = D_i^-1 (Y_i - U_i^T a'_i), a_i = a'_i + S_i qdd_i (a_0 = 0).
void articulated_solve(const Model& model, const Data& data, OperationalSpaceWorkspace& ws) {
  const detail::InnovationsWorkspace& aw = *detail::find_workspace<detail::InnovationsWorkspace>(data);
  const int nb = model.nbodies(), m = static_cast<int>(ws.Y.cols());
  for (int i = 1; i < nb; ++i) {
    const int d = model.joint_nv(i), iv = model.idx_v(i), p = model.parent(i);
    auto Ai = ws.A.middleCols(static_cast<Eigen::Index>(i) * m, m);
    if (p > 0)
      Ai.noalias() = data.X_up[i].matrix_motion().lazyProduct(ws.A.middleCols(static_cast<Eigen::Index>(p) * m, m));
    else
      Ai.setZero();
    if (d == 0) continue;
    const Eigen::Map<const MatDD> Dinv(aw.D_inv.data() + 6 * iv, d, d);
    Mat6D U(6, d);
    for (int k = 0; k < d; ++k) U.col(k) = aw.U[static_cast<std::size_t>(iv + k)].vector();
    auto rhs = ws.tmp.topRows(d);
    rhs = ws.Y.middleRows(iv, d);
    rhs.noalias() -= U.transpose().lazyProduct(Ai);
    ws.Z.middleRows(iv, d).noalias() = Dinv.lazyProduct(rhs);
    Ai.noalias() += ws.S_body.middleCols(iv, d).lazyProduct(ws.Z.middleRows(iv, d));
  }
}

// ------------------------------------------------------------------------------ costs (Auto)

/// Per-method calibration: predicted ns = ns_per_op * operations + overhead_ns. Fitted to the
/// timings of scripts/operational_space_costs.py (docs/operational_space.md, "Cost study").
struct Calibration {
  double ns_per_op, overhead_ns;
};
// Fitted by scripts/operational_space_costs.py to docs/operational_space_costs.json (46 timings per
// method on the shared 2-vCPU development machine; order dense, sparse, recursive, efpa). Kept
// after a quiet rerun, on which it picks better than a refit (docs/operational_space.md, "Auto").
constexpr Calibration kCalibration[4] = {{0.4233, 983.6}, {0.512, 515.0}, {0.4997, 254.9}, {0.5013, 1385.0}};

/// Operation counts (multiply-adds, approximate) of each method for the model, the tasks and
/// the outputs; `mark` is per-body scratch. Allocation-free for a warm `mark`.
std::array<double, 4> operation_counts(const Model& model, std::span<const OperationalTask> tasks, unsigned outputs,
                                       std::vector<char>& mark) {
  const int nb = model.nbodies();
  const double nv = model.nv();
  double m = 0.0;
  for (const OperationalTask& t : tasks) m += t.num_rows;
  auto dof_depth = [&](int b) {
    int d = 0;
    for (int j = b; j > 0; j = model.parent(j)) d += model.joint_nv(j);
    return static_cast<double>(d);
  };
  auto body_depth = [&](int b) {
    int d = 0;
    for (int j = b; j > 0; j = model.parent(j)) ++d;
    return static_cast<double>(d);
  };
  // Sums over the tree: D2 = sum over DoFs of their depth (CRBA; L^-1 sweeps), D3 = sum of
  // depth^2 / 2 (LTDL).
  double D2 = 0.0, D3 = 0.0;
  for (int i = 1; i < nb; ++i) {
    const double di = dof_depth(i);
    for (int k = 0; k < model.joint_nv(i); ++k) {
      const double dk = di - k;
      D2 += dk;
      D3 += 0.5 * dk * dk;
    }
  }
  mark.assign(static_cast<std::size_t>(nb), 0);
  double on_path = 0.0;
  for (const OperationalTask& t : tasks)
    for (int j = t.body; j > 0 && !mark[static_cast<std::size_t>(j)]; j = model.parent(j)) {
      mark[static_cast<std::size_t>(j)] = 1;
      on_path += 1.0;
    }
  double sparse_w = 0.0, sparse_pairs = 0.0, rec_pairs = 0.0, efpa_prop = 0.0, efpa_pairs = 0.0, support = 0.0;
  for (std::size_t a = 0; a < tasks.size(); ++a) {
    const double ra = tasks[a].num_rows, da = dof_depth(tasks[a].body), ba = body_depth(tasks[a].body);
    sparse_w += ra * 0.5 * da * da;
    support += ra * da;
    efpa_prop += 36.0 * ra * ba;
    efpa_pairs += 36.0 * ra;
    for (std::size_t b = a; b < tasks.size(); ++b) {
      const double rb = tasks[b].num_rows, db = dof_depth(tasks[b].body), bb = body_depth(tasks[b].body);
      int ia = tasks[a].body, ib = tasks[b].body;
      while (ia != ib) (ia > ib ? ia : ib) = model.parent(ia > ib ? ia : ib);
      const double bc = body_depth(ia);
      sparse_pairs += ra * rb * std::min(da, db);
      rec_pairs += 36.0 * (ra * (ba - bc) + rb * (bb - bc)) + 36.0 * ra + 6.0 * ra * rb;
      efpa_pairs += 6.0 * ra * rb;
    }
  }
  // aba: the innovations factorisation (the ABA's inward pass without velocity terms).
  const double crba = 100.0 * (nb - 1) + 30.0 * D2, aba = 120.0 * (nb - 1), omega = 600.0 * on_path;
  const double shared = 1.5 * m * m * m;  // G E G^T, G^-1, Lambda
  std::array<double, 4> ops{};
  ops[0] = crba + nv * nv * nv / 6.0 + 0.5 * m * nv * nv + 0.5 * m * m * nv + shared;
  ops[1] = crba + D3 + sparse_w + sparse_pairs + shared;
  ops[2] = aba + omega + rec_pairs + shared;
  ops[3] = aba + omega + efpa_prop + efpa_pairs + shared;
  const bool jbar = outputs & (kOutputJbar | kOutputNullSpace), bias = outputs & kOutputBias;
  if (jbar || bias) {
    ops[0] += m * m * nv + 0.5 * m * nv * nv;
    ops[1] += m * support + m * D2 + m * nv;
  }
  if (jbar) {
    ops[2] += efpa_prop + 50.0 * m * (nb - 1) + m * m * nv;
    ops[3] += 6.0 * support + 50.0 * m * (nb - 1) + m * m * nv;
  }
  if (bias) {
    ops[0] += 150.0 * (nb - 1) + m * nv;
    ops[1] += 150.0 * (nb - 1) + m * nv;
    ops[2] += 190.0 * (nb - 1) + m * nv + m * m;  // RNEA C, then qdd0 = -M^-1 C by the factors
    ops[3] += 190.0 * (nb - 1) + m * nv + m * m;
  }
  if (outputs & kOutputNullSpace)
    for (double& o : ops) o += m * nv * nv;
  return ops;
}

std::array<double, 4> predicted_ns(const std::array<double, 4>& ops) {
  std::array<double, 4> ns{};
  for (std::size_t k = 0; k < 4; ++k) ns[k] = kCalibration[k].ns_per_op * ops[k] + kCalibration[k].overhead_ns;
  return ns;
}

OperationalSpaceMethod cheapest(const std::array<double, 4>& ns) {
  return static_cast<OperationalSpaceMethod>(std::min_element(ns.begin(), ns.end()) - ns.begin());
}

}  // namespace

std::span<const OperationalSpaceMethod> operational_space_methods() { return kMethods; }

OperationalSpaceChoice operational_space_choice(const Model& model, std::span<const OperationalTask> tasks,
                                                unsigned outputs) {
  check_tasks(model, tasks);
  if (outputs > kOutputAll)
    throw InvalidArgument("operational_space_choice: outputs " + std::to_string(outputs) +
                          " has bits outside kOutputAll (7)");
  std::vector<char> mark;
  OperationalSpaceChoice c;
  c.operations = operation_counts(model, tasks, outputs, mark);
  c.predicted_ns = predicted_ns(c.operations);
  c.method = cheapest(c.predicted_ns);
  std::ostringstream s;
  s << "'" << kMethodNames[static_cast<int>(c.method)] << "': predicted";
  for (int k = 0; k < 4; ++k)
    s << (k ? ", " : " ") << kMethodNames[k] << " " << text::number(std::round(c.predicted_ns[k])) << " ns ("
      << text::number(std::round(c.operations[k])) << " ops)";
  int m = 0;
  for (const OperationalTask& t : tasks) m += t.num_rows;
  s << " for nv = " << model.nv() << ", " << model.nbodies() - 1 << " bodies, " << tasks.size() << " tasks, m = " << m
    << " rows (operation counts x calibrated ns per operation, docs/operational_space.md)";
  c.reason = s.str();
  return c;
}

const OperationalSpaceResults& operational_space(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                                 const Eigen::Ref<const VecX>& v,
                                                 std::span<const OperationalTask> tasks, ReferenceFrame frame,
                                                 OperationalSpaceMethod method,
                                                 const OperationalSpaceOptions& options) {
  const detail::DataUse use(model, data, kFn);
  detail::check_arguments(kFn, [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
  });
  if (static_cast<unsigned>(method) > static_cast<unsigned>(OperationalSpaceMethod::Auto))
    throw InvalidArgument(std::string(kFn) + ": unknown method " + std::to_string(static_cast<int>(method)));
  if (options.outputs > kOutputAll)
    throw InvalidArgument(std::string(kFn) + ": outputs " + std::to_string(options.outputs) +
                          " has bits outside kOutputAll (7)");
  if (!(options.damping >= 0.0) || !std::isfinite(options.damping))
    throw InvalidArgument(std::string(kFn) + ": damping must be finite and >= 0, got " + text::number(options.damping));
  if (options.threads < 1)
    throw InvalidArgument(std::string(kFn) + ": threads must be at least 1, got " + std::to_string(options.threads));
  if (options.dca_segment < 0)
    throw InvalidArgument(std::string(kFn) + ": dca_segment must be >= 0 (0: ceil(log2(bodies))), got " +
                          std::to_string(options.dca_segment));
  const int m = check_tasks(model, tasks), nv = model.nv(), nb = model.nbodies();
  OperationalSpaceWorkspace& ws = detail::workspace<OperationalSpaceWorkspace>(model, data);
  OperationalSpaceResults& res = ws.results;
  if (method == OperationalSpaceMethod::Auto)
    method = cheapest(predicted_ns(operation_counts(model, tasks, options.outputs, ws.on_path)));
  res.method = method;
  const bool factor_method = method == OperationalSpaceMethod::Dense || method == OperationalSpaceMethod::Sparse;
  const bool want_N = options.outputs & kOutputNullSpace, want_bias = options.outputs & kOutputBias;
  const bool want_jbar = want_N || (options.outputs & kOutputJbar) || (want_bias && factor_method);
  detail::sized(res.J, m, nv);
  detail::sized(res.Jdot_v, m);
  detail::sized(res.Lambda_inv, m, m);
  detail::sized(res.Lambda, m, m);
  if (want_jbar)
    detail::sized(res.Jbar, nv, m);
  else
    res.Jbar.resize(0, 0);
  if (want_N)
    detail::sized(res.N, nv, nv);
  else
    res.N.resize(0, 0);
  if (want_bias)
    detail::sized(res.bias, m);
  else
    res.bias.resize(0);
  res.dependent_rows.reserve(static_cast<std::size_t>(m));
  detail::sized(ws.G, m, m);
  detail::sized(ws.E, m);
  detail::sized(ws.row_scale, m);
  detail::sized(ws.t, m);
  ws.top.resize(static_cast<std::size_t>(m));
  ws.row0.resize(tasks.size());
  if (factor_method) {
    detail::sized(ws.W, nv, m);
  } else {
    detail::sized(ws.E6, 6, m);
    detail::sized(ws.K, 6, m);
    detail::sized(ws.OK, 6, m);
    detail::sized(ws.tmp, 6, m);
    if (want_jbar) {
      detail::sized(ws.Y, nv, m);
      detail::sized(ws.Z, nv, m);
      detail::sized(ws.A, 6, static_cast<Eigen::Index>(m) * nb);
    }
    ws.next.resize(tasks.size());
    ws.origin.resize(tasks.size());
    ws.list.resize(tasks.size());
    ws.segend.resize(tasks.size());
  }

  // C = Coriolis, centrifugal and gravity terms (the RNEA with qdd = 0), for the bias.
  if (want_bias) ws.C = nonlinear_effects(model, data, q, v);

  // Poses, velocities and the accelerations at qdd = 0 without gravity; S in world coordinates.
  forward_kinematics(model, data, q, v);
  for (int j = 1; j < nb; ++j) {
    ops::visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int k = 0; k < ops::joint_dofs(joint); ++k) {
        Motion s;
        ops::add_column<double>(s, ops::column(joint, k), 1.0);
        ws.S_world.col(model.idx_v(j) + k) = data.X_base[j].apply_inverse(s).vector();
      }
    });
  }

  // J and Jdot v, task by task; a row that is zero (to rounding) is singular whatever M is:
  // |J_k|^2 <= kSingularPivot sum_c |s_c|^2 over the 6-D columns s_c of the task's support,
  // the kinematic counterpart of the pivot test below (a pivot is a squared size). With damping
  // such a row is reported in dependent_rows instead (its pivot is zero).
  int row = 0;
  for (const OperationalTask& task : tasks) {
    task_rows(model, data, ws, task, frame, row);
    row += task.num_rows;
  }
  if (options.damping == 0.0)
    for (int k = 0; k < m; ++k) {
      const double size = res.J.row(k).squaredNorm();
      if (!detail::pivot_accepted(size, ws.row_scale[k]))
        throw_singular_row(model, tasks, k, size, ws.row_scale[k], nullptr, nullptr);
    }

  // Lambda^-1 by the method.
  switch (method) {
    case OperationalSpaceMethod::Dense:
    case OperationalSpaceMethod::Sparse:
      detail::crba_unchecked(model, data, q.data(), Triangle::Upper);
      if (method == OperationalSpaceMethod::Dense)
        dense_lambda_inv(model, data, ws);
      else
        sparse_lambda_inv(model, data, ws, tasks);
      break;
    case OperationalSpaceMethod::Dca:
      // Lambda^-1 by the hybrid assembly (operational_space_dca.cpp); Jbar and the bias by the
      // recursive method's serial sweeps (U, D^-1, the propagators on the task paths).
      task_forces(model, data, ws, tasks, frame);
      detail::dca_lambda_inv(model, data, ws.dca, tasks, ws.E6, ws.row0, res.Lambda_inv, options.threads,
                             options.dca_segment);
      // A task row that no joint moves (J's row exactly zero) has Lambda^-1's row and column
      // exactly zero, as the other methods give it; the assembly leaves rounding there.
      for (int k = 0; k < m; ++k)
        if (res.J.row(k).isZero(0.0)) res.Lambda_inv.row(k).setZero(), res.Lambda_inv.col(k).setZero();
      if (want_jbar || want_bias) articulated_quantities(model, data, ws, tasks);
      if (want_jbar) innovations_by_paths(model, ws, tasks);
      break;
    default:
      // U, D^-1 and, on the task paths, P and Omega (on the poses of forward_kinematics).
      articulated_quantities(model, data, ws, tasks);
      task_forces(model, data, ws, tasks, frame);
      if (method == OperationalSpaceMethod::Recursive) {
        recursive_lambda_inv(model, ws, tasks);
        if (want_jbar) innovations_by_paths(model, ws, tasks);
      } else {
        efpa_lambda_inv(model, ws, tasks, want_jbar);
      }
      break;
  }
  lambda_from_inverse(model, tasks, ws, options.damping);

  // Jbar = M^-1 J^T Lambda.
  if (want_jbar) {
    if (factor_method) {
      factor_jbar(model, data, ws, method == OperationalSpaceMethod::Dense);
    } else {
      articulated_solve(model, data, ws);
      res.Jbar.noalias() = ws.Z.lazyProduct(res.Lambda);
    }
  }
  // N = I - Jbar J: column c is e_c where no task row moves joint c (J's column is zero).
  if (want_N) {
    res.N.setIdentity();
    for (int c = 0; c < nv; ++c)
      for (int k = 0; k < m; ++k)
        if (res.J(k, c) != 0.0) res.N.col(c) -= res.Jbar.col(k) * res.J(k, c);
  }
  // mu + p = Lambda (J M^-1 C - Jdot v): Jbar^T C - Lambda Jdot v from the factors, or
  // -Lambda (J qdd0 + Jdot v) with qdd0 = -M^-1 C by the innovations solve (O(N)).
  if (want_bias) {
    if (factor_method) {
      ws.t.noalias() = res.Lambda.lazyProduct(res.Jdot_v);
      res.bias.noalias() = res.Jbar.transpose().lazyProduct(ws.C);
      res.bias -= ws.t;
    } else {
      ws.qdd0 = detail::innovations_solve(model, data, ws.C.data());  // M^-1 C (= -qdd at tau = 0)
      ws.qdd0 = -ws.qdd0;
      ws.t.noalias() = res.J.lazyProduct(ws.qdd0);
      ws.t += res.Jdot_v;
      res.bias.noalias() = res.Lambda.lazyProduct(ws.t);
      res.bias = -res.bias;
    }
    detail::check_finite_result(model, data, res.bias, kFn, "bias");
  }

  detail::check_finite_result(model, data, res.Jdot_v, kFn, "Jdot_v");
  // As check_finite_result: the sums are finite unless an entry is inf or NaN (or they overflow).
  const double sum = res.Lambda.sum() + (want_N ? res.N.sum() : 0.0) + (want_jbar ? res.Jbar.sum() : 0.0);
  if (!std::isfinite(sum) && (!res.Lambda.allFinite() || !res.N.allFinite() || !res.Jbar.allFinite()))
    throw NumericalError(std::string(kFn) +
                         ": Lambda, Jbar or N is not finite: the state or the model is outside the range of double "
                         "precision");
  return res;
}

std::string to_string(OperationalSpaceMethod method) {
  const auto k = static_cast<std::size_t>(method);
  return k < kMethods.size() ? kMethodNames[k] : "unknown";
}

OperationalSpaceMethod parse_operational_space_method(const std::string& name) {
  for (std::size_t k = 0; k < kMethods.size(); ++k)
    if (name == kMethodNames[k]) return kMethods[k];
  throw InvalidArgument("unknown operational-space method '" + text::printable(name) +
                        "' (expected 'dense', 'sparse', 'recursive', 'efpa', 'dca' or 'auto')");
}

}  // namespace plucker
