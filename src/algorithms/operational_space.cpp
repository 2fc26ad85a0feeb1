// Operational-space dynamics (plucker/algorithms/operational_space.hpp), the dense method.
//
// Khatib (1987), with the joint-space dynamics M qdd + C = tau and a task Jacobian J:
//   Lambda^-1 = J M^-1 J^T                          (operational-space inertia, inverse)
//   Jbar      = M^-1 J^T Lambda                     (dynamically consistent inverse)
//   N         = I - Jbar J                          (null-space projector; N^T acts on torques)
//   mu + p    = Jbar^T C - Lambda Jdot v            (task-space Coriolis/centrifugal + gravity)
// so that tau = J^T F gives Lambda xdd + mu + p = F with xdd = J qdd + Jdot v.
//
// The dense method (Featherstone 2010's "basic matrix method", with the factorisation that keeps
// branch-induced sparsity): M by the CRBA and M = L^T D L by LTDL on the tree's pattern
// (jsim_factorisation.cpp; Featherstone 2005). Then W = D^-1/2 L^-T J^T: a task's column of J^T
// is zero outside its body's support, and so is L^-T of it (only descendants feed a DoF in the
// sweep of L^T), so each column costs O(d^2) for a support of d DoFs. Lambda^-1 = W^T W
// (symmetric and positive semi-definite by construction). Lambda^-1 = G E G^T (G unit lower
// triangular) in task-row order, where a pivot E_k that vanishes names row k as dependent on the
// rows before it (the library's one criterion, DEVELOPERS.md "Singularity"); Lambda =
// G^-T E^-1 G^-1. Jbar = L^-1 D^-1/2 (W Lambda) (W Lambda on the supports' rows only), then
// N = I - Jbar J on the columns J moves, and mu + p = Jbar^T C - Lambda Jdot v.
#include "plucker/algorithms/operational_space.hpp"

#include <cmath>
#include <sstream>

#include "algorithms/fd_kernels.hpp"
#include "algorithms/frame_kernels.hpp"
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
      : S_world(Matrix6X::Zero(6, model.nv())), C(VecX::Zero(model.nv())), sqrt_D(VecX::Zero(model.nv())) {}
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

const OperationalSpaceResults& operational_space(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                                 const Eigen::Ref<const VecX>& v,
                                                 std::span<const OperationalTask> tasks, ReferenceFrame frame,
                                                 OperationalSpaceMethod method) {
  const detail::DataUse use(model, data, kFn);
  detail::check_arguments(kFn, [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
  });
  if (method != OperationalSpaceMethod::Dense)
    throw InvalidArgument(std::string(kFn) + ": unknown method " + std::to_string(static_cast<int>(method)));
  const int m = check_tasks(model, tasks), nv = model.nv();
  OperationalSpaceWorkspace& ws = detail::workspace<OperationalSpaceWorkspace>(model, data);
  OperationalSpaceResults& res = ws.results;
  detail::sized(res.J, m, nv);
  detail::sized(res.Jdot_v, m);
  detail::sized(res.Lambda_inv, m, m);
  detail::sized(res.Lambda, m, m);
  detail::sized(res.Jbar, nv, m);
  detail::sized(res.N, nv, nv);
  detail::sized(res.bias, m);
  detail::sized(ws.W, nv, m);
  ws.top.resize(static_cast<std::size_t>(m));
  detail::sized(ws.G, m, m);
  detail::sized(ws.E, m);
  detail::sized(ws.row_scale, m);
  detail::sized(ws.t, m);

  // C = Coriolis, centrifugal and gravity terms (the RNEA with qdd = 0).
  ws.C = nonlinear_effects(model, data, q, v);

  // Poses, velocities and the accelerations at qdd = 0 without gravity; S in world coordinates.
  forward_kinematics(model, data, q, v);
  for (int j = 1; j < model.nbodies(); ++j) {
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
  // the kinematic counterpart of the pivot test below (a pivot is a squared size).
  int row = 0;
  for (const OperationalTask& task : tasks) {
    task_rows(model, data, ws, task, frame, row);
    row += task.num_rows;
  }
  for (int k = 0; k < m; ++k) {
    const double size = res.J.row(k).squaredNorm();
    if (!detail::pivot_accepted(size, ws.row_scale[k]))
      throw_singular_row(model, tasks, k, size, ws.row_scale[k], nullptr, nullptr);
  }

  // M = L^T D L in place on data.M (SingularError naming the joint when M is singular).
  detail::crba_unchecked(model, data, q.data(), Triangle::Upper);
  try {
    detail::factorize_ltdl_unchecked(model, data);
  } catch (const SingularError& e) {
    throw SingularError(std::string(kFn) + ": " + e.what());
  }
  for (int i = 0; i < nv; ++i) ws.sqrt_D[i] = std::sqrt(data.M(i, i));

  // W = D^-1/2 L^-T J^T, column by column on the task body's support (the DoF path up from the
  // last DoF of the body or of its nearest ancestor with DoFs); zero below that DoF.
  row = 0;
  for (const OperationalTask& task : tasks) {
    int j = task.body;
    while (j > 0 && model.joint_nv(j) == 0) j = model.parent(j);
    const int top = model.idx_v(j) + model.joint_nv(j) - 1;
    for (int i = 0; i < task.num_rows; ++i, ++row) {
      auto w = ws.W.col(row);
      w = res.J.row(row).transpose();
      detail::solve_ltdl_transposed_path_unchecked(model, data, w.data(), top);
      w.head(top + 1).array() /= ws.sqrt_D.head(top + 1).array();
      ws.top[static_cast<std::size_t>(row)] = top;
    }
  }
  // Lambda^-1 = J M^-1 J^T = W^T W (lower triangle, mirrored: exactly symmetric).
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) {
      const int len = std::min(ws.top[static_cast<std::size_t>(i)], ws.top[static_cast<std::size_t>(j)]) + 1;
      res.Lambda_inv(i, j) = res.Lambda_inv(j, i) = ws.W.col(i).head(len).dot(ws.W.col(j).head(len));
    }

  // Lambda^-1 = G E G^T in task-row order. E_k is the part of row k (in the metric M^-1) that the
  // rows before it do not reach; E_k <= kSingularPivot Lambda^-1(k, k) makes row k dependent.
  MatX& G = ws.G;
  G.setIdentity();
  for (int k = 0; k < m; ++k) {
    for (int j = 0; j < k; ++j) {
      double s = res.Lambda_inv(k, j);
      for (int l = 0; l < j; ++l) s -= G(k, l) * G(j, l) * ws.E[l];
      G(k, j) = s / ws.E[j];
    }
    double e = res.Lambda_inv(k, k);
    for (int l = 0; l < k; ++l) e -= G(k, l) * G(k, l) * ws.E[l];
    if (!detail::pivot_accepted(e, res.Lambda_inv(k, k))) {
      // J_k = sum_j c_j J_j + (residual) with G(0:k, 0:k)^T c = G(k, 0:k)^T (error path: allocates).
      VecX c = G.row(k).head(k).transpose();
      G.topLeftCorner(k, k).transpose().triangularView<Eigen::UnitUpper>().solveInPlace(c);
      throw_singular_row(model, tasks, k, e, res.Lambda_inv(k, k), &res.Lambda_inv, &c);
    }
    ws.E[k] = e;
  }
  // G <- G^-1 (unit lower triangular, in place, column by column from the right).
  for (int j = m - 1; j >= 0; --j)
    for (int i = m - 1; i > j; --i) {
      double s = -G(i, j);
      for (int l = j + 1; l < i; ++l) s -= G(i, l) * G(l, j);
      G(i, j) = s;
    }
  // Lambda = G^-T E^-1 G^-1 (lower triangle, mirrored).
  ws.E = ws.E.cwiseInverse();
  for (int j = 0; j < m; ++j)
    for (int i = j; i < m; ++i) {
      double s = 0.0;
      for (int l = i; l < m; ++l) s += G(l, i) * G(l, j) * ws.E[l];
      res.Lambda(i, j) = res.Lambda(j, i) = s;
    }

  // Jbar = M^-1 J^T Lambda = L^-1 D^-1/2 (W Lambda), column by column: W Lambda on the rows of
  // the supports (axpy on contiguous columns), then the root-first sweep of L^-1.
  for (int k = 0; k < m; ++k) {
    auto jbar = res.Jbar.col(k);
    jbar.setZero();
    for (int l = 0; l < m; ++l) {
      const int len = ws.top[static_cast<std::size_t>(l)] + 1;
      jbar.head(len) += ws.W.col(l).head(len) * res.Lambda(l, k);
    }
    jbar.array() /= ws.sqrt_D.array();
    detail::solve_ltdl_unit_unchecked(model, data, jbar.data());
  }
  // N = I - Jbar J: column c is e_c where no task row moves joint c (J's column is zero).
  res.N.setIdentity();
  for (int c = 0; c < nv; ++c)
    for (int k = 0; k < m; ++k)
      if (res.J(k, c) != 0.0) res.N.col(c) -= res.Jbar.col(k) * res.J(k, c);
  // mu + p = Lambda (J M^-1 C - Jdot v) = Jbar^T C - Lambda Jdot v.
  ws.t.noalias() = res.Lambda.lazyProduct(res.Jdot_v);
  res.bias.noalias() = res.Jbar.transpose().lazyProduct(ws.C);
  res.bias -= ws.t;

  detail::check_finite_result(model, data, res.Jdot_v, kFn, "Jdot_v");
  detail::check_finite_result(model, data, res.bias, kFn, "bias");
  // As check_finite_result: the sums are finite unless an entry is inf or NaN (or they overflow).
  if (!std::isfinite(res.Lambda.sum() + res.N.sum()) && (!res.Lambda.allFinite() || !res.N.allFinite()))
    throw NumericalError(std::string(kFn) +
                         ": Lambda or N is not finite: the state or the model is outside the range of double "
                         "precision");
  return res;
}

std::string to_string(OperationalSpaceMethod) { return "dense"; }

OperationalSpaceMethod parse_operational_space_method(const std::string& name) {
  if (name == "dense") return OperationalSpaceMethod::Dense;
  throw InvalidArgument("unknown operational-space method '" + text::printable(name) + "' (expected 'dense')");
}

}  // namespace plucker
