// Operational-space dynamics: plucker.operational_space and its result type.
#include "plucker/algorithms/operational_space.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

using plucker::OperationalTask;
using plucker::TaskRows;

PyObject* g_result_type = nullptr;  // namedtuple OperationalSpaceResult

std::string repr_text(py::handle h) { return py::repr(h).cast<std::string>(); }

/// One task's rows: "all", "position", "orientation" or a sequence of 1 to 6 row indices
/// (0-2 angular, 3-5 linear; range and repeats are checked by the C++ call).
OperationalTask with_rows(const OperationalTask& task, py::handle rows, const std::string& where) {
  if (py::isinstance<py::str>(rows)) {
    const std::string r = rows.cast<std::string>();
    if (r == "all") return task;
    if (r == "position") return task.with_rows(std::vector<int>{3, 4, 5});
    if (r == "orientation") return task.with_rows(std::vector<int>{0, 1, 2});
    value_error(where + ": rows must be 'all', 'position', 'orientation' or a list of row indices, got '" + r + "'");
  }
  std::vector<int> out;
  PyObject* it = PyObject_GetIter(rows.ptr());
  if (!it) {
    PyErr_Clear();
    value_error(where + ": rows must be 'all', 'position', 'orientation' or a list of row indices, got " +
                repr_text(rows));
  }
  for (py::handle item : py::reinterpret_steal<py::iterator>(it)) {
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr()))
      value_error(where + ": row indices must be integers in [0, 6), got " + repr_text(item));
    const long long r = item.cast<long long>();
    if (r < 0 || r > 5)
      value_error(where + ": row " + std::to_string(r) + " out of range [0, 6) (0-2 angular, 3-5 linear)");
    out.push_back(static_cast<int>(r));
  }
  if (out.empty() || out.size() > 6)
    value_error(where + ": " + std::to_string(out.size()) + " row indices, expected 1 to 6");
  return task.with_rows(out);
}

std::vector<OperationalTask> tasks_arg(const PyModel& m, py::handle tasks,
                                       const std::string& fn = "operational_space") {
  if (py::isinstance<py::str>(tasks))
    value_error(fn + ": tasks must be a list of names or (name, rows) pairs, got the str " + repr_text(tasks) +
                " (use [" + repr_text(tasks) + "])");
  PyObject* it = PyObject_GetIter(tasks.ptr());
  if (!it) {
    PyErr_Clear();
    value_error(fn + ": tasks must be a list of names or (name, rows) pairs, got " + repr_text(tasks));
  }
  std::vector<OperationalTask> out;
  for (py::handle item : py::reinterpret_steal<py::iterator>(it)) {
    const std::string where = fn + ": tasks[" + std::to_string(out.size()) + "]";
    py::handle name = item, rows;
    if (!py::isinstance<py::str>(item)) {
      if (!py::isinstance<py::tuple>(item) && !py::isinstance<py::list>(item))
        value_error(where + " must be a name or a (name, rows) pair, got " + repr_text(item));
      const py::sequence pair = py::reinterpret_borrow<py::sequence>(item);
      if (pair.size() != 2 || !py::isinstance<py::str>(pair[0]))
        value_error(where + " must be a name or a (name, rows) pair, got " + repr_text(item));
      name = pair[0];
      rows = pair[1];
    }
    const auto [body, frame] = body_or_frame(m, name.cast<std::string>(), where.c_str());
    const OperationalTask task =
        frame >= 0 ? OperationalTask::of_frame(m.model(), frame) : OperationalTask::of_body(body);
    out.push_back(rows ? with_rows(task, rows, where) : task);
  }
  if (out.empty()) value_error(fn + ": no tasks given");
  return out;
}

PyObject* g_choice_type = nullptr;  // namedtuple OperationalSpaceChoice

/// outputs='all' | 'lambda' | a list of 'jbar', 'null_space', 'bias' (J, Lambda always).
unsigned outputs_arg(py::handle obj, const std::string& fn) {
  auto one = [&](const std::string& o) -> unsigned {
    if (o == "all") return plucker::kOutputAll;
    if (o == "lambda") return plucker::kOutputLambda;
    if (o == "jbar") return plucker::kOutputJbar;
    if (o == "null_space") return plucker::kOutputNullSpace;
    if (o == "bias") return plucker::kOutputBias;
    value_error(fn + ": unknown output '" + o + "' (expected 'all', 'lambda', 'jbar', 'null_space' or 'bias')");
  };
  if (py::isinstance<py::str>(obj)) return one(obj.cast<std::string>());
  unsigned out = 0;
  PyObject* it = PyObject_GetIter(obj.ptr());
  if (!it) {
    PyErr_Clear();
    value_error(fn + ": outputs must be a name or a list of names, got " + repr_text(obj));
  }
  for (py::handle item : py::reinterpret_steal<py::iterator>(it)) {
    if (!py::isinstance<py::str>(item)) value_error(fn + ": outputs must be names, got " + repr_text(item));
    out |= one(item.cast<std::string>());
  }
  return out;
}

py::list rows_list(const std::vector<int>& rows) {
  py::list out;
  for (const int r : rows) out.append(r);
  return out;
}

double damping_arg(double damping, const std::string& fn) {
  if (!std::isfinite(damping) || damping < 0.0)
    value_error(fn + ": damping must be finite and >= 0, got " + repr_text(py::float_(damping)));
  return damping;
}

/// The C++ call for the Python functions; `v` may be null (zero velocity: Lambda, Jbar, N do
/// not depend on it).
template <class F>
py::object run(PyModel& m, ArrayLike q, const py::object* v, Tasks tasks, const std::string& frame,
               const std::string& method, double damping, unsigned outputs, const std::string& fn, F&& convert,
               int threads = 1, int dca_segment = 0) {
  warn_if_constrained(m, fn.c_str());
  const Vector qa = q_arg(m, q);
  py::array_t<double> zeros(static_cast<py::ssize_t>(v ? 0 : m.model().nv()));
  if (!v) std::fill_n(zeros.mutable_data(), m.model().nv(), 0.0);
  const Vector va = v_arg(m, v ? py::handle(*v) : py::handle(zeros), "v");
  const plucker::ReferenceFrame tf = plucker::parse_reference_frame(frame);
  const plucker::OperationalSpaceMethod meth = plucker::parse_operational_space_method(method);
  plucker::OperationalSpaceOptions options;
  options.damping = damping_arg(damping, fn);
  options.outputs = outputs;
  options.threads = threads;
  options.dca_segment = dca_segment;
  const std::vector<OperationalTask> t = tasks_arg(m, tasks, fn);
  return call({&qa, &va},
              [&] { return convert(plucker::operational_space(m.model(), m.data(), qa, va, t, tf, meth, options)); });
}

py::object operational_space_py(PyModel& m, ArrayLike q, ArrayLike v, Tasks tasks, const std::string& frame,
                                const std::string& method, double damping, py::object outputs, int threads,
                                int dca_segment) {
  const py::object vo = v;
  return run(
      m, q, &vo, tasks, frame, method, damping, outputs_arg(outputs, "operational_space"), "operational_space",
      [](const plucker::OperationalSpaceResults& r) {
        return py::reinterpret_borrow<py::object>(g_result_type)(
            mat_out(r.J), vec_out(r.Jdot_v), mat_out(r.Lambda), mat_out(r.Lambda_inv), mat_out(r.Jbar), mat_out(r.N),
            vec_out(r.bias), rows_list(r.dependent_rows), plucker::to_string(r.method));
      },
      threads, dca_segment);
}

}  // namespace

void bind_operational_space(py::module_& mod) {
  g_result_type = named_tuple(
      mod, "OperationalSpaceResult",
      py::make_tuple("J", "Jdot_v", "Lambda", "Lambda_inv", "Jbar", "N", "bias", "dependent_rows", "method"),
      "The result of operational_space, with m task rows: J (m, nv) the task Jacobian, Jdot_v (m,) the task\n"
      "acceleration at qdd = 0, Lambda (m, m) = (J M^-1 J^T)^-1, Lambda_inv (m, m), Jbar (nv, m) = M^-1 J^T\n"
      "Lambda, N (nv, nv) = I - Jbar J, bias (m,) = mu + p = Lambda (J M^-1 C - Jdot v), dependent_rows\n"
      "(the task rows that depend on the rows before them; non-empty only with damping > 0), method\n"
      "(the method that ran).");
  mod.def("operational_space", &operational_space_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tasks"),
          py::arg("frame") = "local", py::arg("method") = "auto", py::arg("damping") = 0.0,
          py::arg("outputs") = py::str("all"), py::arg("threads") = 1, py::arg("dca_segment") = 0,
          "Operational-space dynamics (Khatib, \"A Unified Approach for Motion and Force Control of Robot\n"
          "Manipulators: The Operational Space Formulation\", IEEE J. Robotics and Automation 1987) of a\n"
          "list of tasks: OperationalSpaceResult(J, Jdot_v, Lambda, Lambda_inv, Jbar, N, bias) such that\n"
          "tau = J^T F gives Lambda xdd + bias = F with\n"
          "xdd = J qdd + Jdot_v. A task is a body or frame name (Model.body_names, Model.frame_names; all\n"
          "six rows [angular; linear]) or a (name, rows) pair, rows being 'all', 'position' (rows 3-5),\n"
          "'orientation' (rows 0-2) or a list of row indices (0-2 angular x y z, 3-5 linear x y z); the\n"
          "tasks' rows are stacked in order. frame='local': the task frame's own axes at its origin;\n"
          "'local_world_aligned': world axes at the frame origin (Jdot_v's linear rows are then the\n"
          "origin's classical acceleration); 'world': world axes about the world origin (spatial).\n"
          "method: 'dense' (CRBA, dense Cholesky of M, dense products: Featherstone 2010's basic matrix\n"
          "method), 'sparse' (LTDL of M on the tree's pattern and the sparsity of J: Featherstone 2010),\n"
          "'recursive' (articulated-body propagation without M, task pairs walked separately: Rodriguez\n"
          "et al. 1991, Chang & Khatib 2000), 'efpa' (extended force propagators: Wensing, Featherstone &\n"
          "Orin 2012), 'dca' (the hybrid divide-and-conquer method: Lambda^-1 as the inverse articulated\n"
          "inertia at the task bodies, assembled serially within subchains of dca_segment bodies (0:\n"
          "ceil(log2(bodies))) and by the DCA's binary tree across them, the levels on `threads` threads,\n"
          "bit-identical for any thread count; Jbar and bias as 'recursive') or 'auto' (the cheapest by\n"
          "calibrated operation counts among the first four; see operational_space_choice). damping > 0: Lambda = (J "
          "M^-1 J^T + damping^2 I)^-1 (and Jbar with\n"
          "it), finite whatever the rank, with the dependent task rows listed in dependent_rows.\n"
          "outputs: 'all', 'lambda' (J, Jdot_v, Lambda, Lambda_inv only) or a list of 'jbar',\n"
          "'null_space', 'bias'; results not asked for are empty. The result's method field names the\n"
          "method that ran. Raises plucker.SingularError (damping = 0) naming the task row that depends\n"
          "on the rows before it (two tasks on the same motion, a kinematic singularity) or the joint\n"
          "where M is singular.");
  const std::string common =
      "tasks as in operational_space (names, or (name, rows) pairs with rows 'all', 'position',\n"
      "'orientation' or a list of indices 0-5); frame, method and damping as there.";
  mod.def(
      "operational_space_inertia",
      [](PyModel& m, ArrayLike q, Tasks frames, const std::string& method, const std::string& frame, double damping) {
        return run(m, q, nullptr, frames, frame, method, damping, plucker::kOutputLambda, "operational_space_inertia",
                   [](const plucker::OperationalSpaceResults& r) { return py::object(mat_out(r.Lambda)); });
      },
      py::arg("model"), py::arg("q"), py::arg("frames"), py::arg("method") = "auto", py::arg("frame") = "local",
      py::arg("damping") = 0.0,
      ("Lambda = (J M^-1 J^T)^-1 (m x m, 6k x 6k for k full tasks), the operational-space inertia; " + common).c_str());
  mod.def(
      "dynamically_consistent_inverse",
      [](PyModel& m, ArrayLike q, Tasks frames, const std::string& method, const std::string& frame, double damping) {
        return run(m, q, nullptr, frames, frame, method, damping, plucker::kOutputJbar,
                   "dynamically_consistent_inverse",
                   [](const plucker::OperationalSpaceResults& r) { return py::object(mat_out(r.Jbar)); });
      },
      py::arg("model"), py::arg("q"), py::arg("frames"), py::arg("method") = "auto", py::arg("frame") = "local",
      py::arg("damping") = 0.0,
      ("Jbar = M^-1 J^T Lambda (nv x m), the dynamically consistent generalised inverse of J; " + common).c_str());
  mod.def(
      "task_null_space_projector",
      [](PyModel& m, ArrayLike q, Tasks frames, const std::string& method, const std::string& frame, double damping) {
        return run(m, q, nullptr, frames, frame, method, damping, plucker::kOutputNullSpace,
                   "task_null_space_projector",
                   [](const plucker::OperationalSpaceResults& r) { return py::object(mat_out(r.N)); });
      },
      py::arg("model"), py::arg("q"), py::arg("frames"), py::arg("method") = "auto", py::arg("frame") = "local",
      py::arg("damping") = 0.0,
      ("N = I - Jbar J (nv x nv); N^T tau0 adds joint torques that do not disturb the tasks; " + common).c_str());
  mod.def(
      "operational_space_bias",
      [](PyModel& m, ArrayLike q, py::object v, Tasks frames, const std::string& method, const std::string& frame,
         double damping) {
        return run(m, q, &v, frames, frame, method, damping, plucker::kOutputBias, "operational_space_bias",
                   [](const plucker::OperationalSpaceResults& r) { return py::object(vec_out(r.bias)); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("frames"), py::arg("method") = "auto",
      py::arg("frame") = "local", py::arg("damping") = 0.0,
      ("mu + p = Lambda (J M^-1 C - Jdot v) (m,), the task-space Coriolis, centrifugal and gravity force, so\n"
       "that Lambda xdd + mu + p = F; " +
       common)
          .c_str());
  g_choice_type = named_tuple(mod, "OperationalSpaceChoice", py::make_tuple("method", "reason", "predicted_ns"),
                              "The method operational_space(method='auto') runs for a model and tasks, why, and\n"
                              "the predicted time of each method in ns (a dict).");
  mod.def(
      "operational_space_choice",
      [](PyModel& m, Tasks frames, py::object outputs) {
        const std::vector<OperationalTask> t = tasks_arg(m, frames, "operational_space_choice");
        const plucker::OperationalSpaceChoice c =
            plucker::operational_space_choice(m.model(), t, outputs_arg(outputs, "operational_space_choice"));
        py::dict ns;
        for (int k = 0; k < 4; ++k)
          ns[py::str(plucker::to_string(static_cast<plucker::OperationalSpaceMethod>(k)))] = c.predicted_ns[k];
        return py::reinterpret_borrow<py::object>(g_choice_type)(plucker::to_string(c.method), to_str(c.reason), ns);
      },
      py::arg("model"), py::arg("frames"), py::arg("outputs") = py::str("all"),
      "OperationalSpaceChoice(method, reason, predicted_ns): what operational_space(method='auto') runs\n"
      "for these tasks and outputs ('dense', 'sparse', 'recursive' or 'efpa'), by operation counts\n"
      "times per-operation times calibrated by measurement, and why.");
  mod.def(
      "operational_space_dca_cost",
      [](PyModel& m, Tasks frames, int segment) {
        const std::vector<OperationalTask> t = tasks_arg(m, frames, "operational_space_dca_cost");
        const plucker::OperationalSpaceDcaCost c = plucker::operational_space_dca_cost(m.model(), t, segment);
        py::dict d;
        d["segment"] = c.segment;
        d["subchains"] = c.subchains;
        d["levels"] = c.levels;
        d["max_handles"] = c.max_handles;
        d["total"] = c.total;
        d["critical_path"] = c.critical_path;
        return d;
      },
      py::arg("model"), py::arg("frames"), py::arg("segment") = 0,
      "The operation counts (multiply-adds) of operational_space(method='dca')'s assembly of Lambda^-1:\n"
      "a dict with segment (bodies per serial subchain; 0 asks for ceil(log2(bodies))), subchains,\n"
      "levels (the assembly tree's height), max_handles, total (all steps) and critical_path (the\n"
      "longest leaf-to-root sum: the cost with unlimited threads).");
}

}  // namespace plucker_py
