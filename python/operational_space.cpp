// Operational-space dynamics: plucker.operational_space and its result type.
#include "plucker/algorithms/operational_space.hpp"

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

std::vector<OperationalTask> tasks_arg(const PyModel& m, py::handle tasks) {
  if (py::isinstance<py::str>(tasks))
    value_error("operational_space: tasks must be a list of names or (name, rows) pairs, got the str " +
                repr_text(tasks) + " (use [" + repr_text(tasks) + "])");
  PyObject* it = PyObject_GetIter(tasks.ptr());
  if (!it) {
    PyErr_Clear();
    value_error("operational_space: tasks must be a list of names or (name, rows) pairs, got " + repr_text(tasks));
  }
  std::vector<OperationalTask> out;
  for (py::handle item : py::reinterpret_steal<py::iterator>(it)) {
    const std::string where = "operational_space: tasks[" + std::to_string(out.size()) + "]";
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
  if (out.empty()) value_error("operational_space: no tasks given");
  return out;
}

py::object operational_space_py(PyModel& m, ArrayLike q, ArrayLike v, Tasks tasks, const std::string& frame,
                                const std::string& method) {
  warn_if_constrained(m, "operational_space");
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
  const plucker::ReferenceFrame tf = plucker::parse_reference_frame(frame);
  const plucker::OperationalSpaceMethod meth = plucker::parse_operational_space_method(method);
  const std::vector<OperationalTask> t = tasks_arg(m, tasks);
  return call({&qa, &va}, [&] {
    const plucker::OperationalSpaceResults& r = plucker::operational_space(m.model(), m.data(), qa, va, t, tf, meth);
    return py::reinterpret_borrow<py::object>(g_result_type)(mat_out(r.J), vec_out(r.Jdot_v), mat_out(r.Lambda),
                                                             mat_out(r.Lambda_inv), mat_out(r.Jbar), mat_out(r.N),
                                                             vec_out(r.bias));
  });
}

}  // namespace

void bind_operational_space(py::module_& mod) {
  g_result_type = named_tuple(
      mod, "OperationalSpaceResult", py::make_tuple("J", "Jdot_v", "Lambda", "Lambda_inv", "Jbar", "N", "bias"),
      "The result of operational_space, with m task rows: J (m, nv) the task Jacobian, Jdot_v (m,) the task\n"
      "acceleration at qdd = 0, Lambda (m, m) = (J M^-1 J^T)^-1, Lambda_inv (m, m), Jbar (nv, m) = M^-1 J^T\n"
      "Lambda, N (nv, nv) = I - Jbar J, bias (m,) = mu + p = Lambda (J M^-1 C - Jdot v).");
  mod.def("operational_space", &operational_space_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tasks"),
          py::arg("frame") = "local", py::arg("method") = "dense",
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
          "method='dense': CRBA, LTDL of M and dense products.\n"
          "Raises plucker.SingularError naming the task row that depends on the rows before it (two\n"
          "tasks on the same motion, a kinematic singularity) or the joint where M is singular.");
}

}  // namespace plucker_py
