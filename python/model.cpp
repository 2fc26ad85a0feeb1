// plucker.Model: URDF loading, properties, loop joints; the model builders.
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "plucker/io/model_text.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"

namespace plucker_py {

plucker::Model& PyModel::mutable_model(const char* what) {
  if (!running_.empty()) {
    std::string calls;
    for (const char* c : running_) {
      if (!calls.empty()) calls += ", ";
      calls += c;
    }
    raise(PyExc_RuntimeError, std::string(what) + ": the model is in use by " + calls +
                                  " (running in another thread without the GIL); a model cannot change during a call");
  }
  return model_;
}

Running::~Running() {
  for (auto it = model_.running_.begin(); it != model_.running_.end(); ++it)
    if (*it == call_) {
      model_.running_.erase(it);
      break;
    }
}

namespace {

plucker::UrdfOptions urdf_options(bool floating_base, bool strict) {
  plucker::UrdfOptions opt;
  opt.root = floating_base ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
  opt.strict = strict;
  opt.on_warning = issue_warning;
  return opt;
}

/// Raises OSError(errno, text, path) of class `type` (FileNotFoundError, ...).
[[noreturn]] void os_error(const char* type, const char* errno_name, const char* text, const py::object& path) {
  const py::object err =
      py::module_::import("builtins").attr(type)(py::module_::import("errno").attr(errno_name), text, path);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(err.ptr())), err.ptr());
  throw py::error_already_set();
}

std::unique_ptr<PyModel> from_urdf(PathLike path, bool floating_base, bool strict) {
  py::module_ os = py::module_::import("os");
  const py::object fspath = os.attr("fspath")(path);
  if (!py::isinstance<py::str>(fspath)) value_error("from_urdf: path must be a str or os.PathLike of str");
  // What is wrong with the path, before the loader tries to read it.
  py::object st;
  try {
    st = os.attr("stat")(fspath);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_FileNotFoundError)) os_error("FileNotFoundError", "ENOENT", "No such URDF file", fspath);
    throw;
  }
  const py::module_ stat = py::module_::import("stat");
  const py::object mode = st.attr("st_mode");
  if (stat.attr("S_ISDIR")(mode).cast<bool>())
    os_error("IsADirectoryError", "EISDIR", "Is a directory, not a URDF file", fspath);
  if (!stat.attr("S_ISREG")(mode).cast<bool>()) {
    const char* kind = stat.attr("S_ISCHR")(mode).cast<bool>()    ? "Not a regular file (a character device)"
                       : stat.attr("S_ISBLK")(mode).cast<bool>()  ? "Not a regular file (a block device)"
                       : stat.attr("S_ISFIFO")(mode).cast<bool>() ? "Not a regular file (a named pipe)"
                       : stat.attr("S_ISSOCK")(mode).cast<bool>() ? "Not a regular file (a socket)"
                                                                  : "Not a regular file";
    os_error("OSError", "EINVAL", kind, fspath);
  }
  return wrap(plucker::load_urdf(fspath.cast<std::string>(), urdf_options(floating_base, strict)));
}

std::unique_ptr<PyModel> from_urdf_string(const std::string& xml, bool floating_base, bool strict,
                                          const std::string& source_name) {
  return wrap(plucker::load_urdf_string(xml, urdf_options(floating_base, strict), source_name));
}

py::str repr(const PyModel& m) {
  const Model& md = m.model();
  char mass[64];
  std::snprintf(mass, sizeof mass, "%.6g", md.total_mass());
  return to_str("<plucker.Model '" + md.name() + "': nbodies=" + std::to_string(md.nbodies()) +
                ", nq=" + std::to_string(md.nq()) + ", nv=" + std::to_string(md.nv()) + ", total_mass=" + mass + " kg" +
                (md.has_floating_base() ? ", floating base" : "") + ">");
}

int add_loop_joint(PyModel& m, const std::string& name, const std::string& type, const std::string& predecessor,
                   const std::string& successor, ArrayLike pred_xyz, ArrayLike pred_rpy, ArrayLike succ_xyz,
                   ArrayLike succ_rpy, ArrayLike axis, bool actuated) {
  const Model& model = m.model();
  plucker::LoopJoint lj;
  lj.name = name;
  lj.type = plucker::parse_loop_joint_type(type);
  lj.predecessor = model.body_index(predecessor);
  lj.successor = model.body_index(successor);
  lj.X_predecessor =
      plucker::Transform::from_rpy_xyz(vec3_arg(pred_rpy, "predecessor_rpy"), vec3_arg(pred_xyz, "predecessor_xyz"));
  lj.X_successor =
      plucker::Transform::from_rpy_xyz(vec3_arg(succ_rpy, "successor_rpy"), vec3_arg(succ_xyz, "successor_xyz"));
  lj.axis = vec3_arg(axis, "axis");
  lj.actuated = actuated;
  const int k = m.mutable_model("add_loop_joint").add_loop_joint(lj);
  m.reset_data();  // the workspace is sized for the constraints
  return k;
}

/// A body or frame name -> (body, X_body of the point of attachment: identity for a body).
std::pair<int, plucker::Transform> attachment_arg(const PyModel& m, const std::string& name, const char* fn) {
  const Model& model = m.model();
  if (model.has_body(name)) return {model.body_index(name), plucker::Transform()};
  if (model.has_frame(name)) {
    const plucker::Frame& f = model.frames()[static_cast<std::size_t>(model.frame_index(name))];
    return {f.body, f.X_body};
  }
  value_error(std::string(fn) + ": unknown body or frame '" + name + "'");
}

int add_frame(PyModel& m, const std::string& name, const std::string& parent, ArrayLike xyz, ArrayLike rpy) {
  const auto [body, X_parent] = attachment_arg(m, parent, "add_frame");
  const plucker::Transform X = plucker::Transform::from_rpy_xyz(vec3_arg(rpy, "rpy"), vec3_arg(xyz, "xyz"));
  // frame_X_body = frame_X_parent * parent_X_body
  const int k = m.mutable_model("add_frame").add_frame(name, body, X * X_parent);
  m.reset_data();
  return k;
}

void add_payload(PyModel& m, const std::string& name, double mass, ArrayLike com, py::handle inertia) {
  const auto [body, X_frame] = attachment_arg(m, name, "add_payload");
  const plucker::Vec3 c = vec3_arg(com, "com");
  const plucker::Mat3 I =
      inertia.is_none() ? plucker::Mat3::Zero() : plucker::Mat3(fixed_matrix(inertia, "inertia", 3, 3));
  if (!std::isfinite(mass) || !(mass > 0.0))
    value_error("add_payload on '" + name + "': mass must be finite and > 0, got " + std::to_string(mass));
  // A point mass (inertia zero) is a valid payload: positive semi-definite suffices.
  const plucker::InertiaCheck check = plucker::check_inertia(mass, c, I);
  if (!(check.finite && check.symmetric && check.positive_semidefinite && check.triangle_inequality))
    value_error("add_payload on '" + name + "': " + check.describe());
  // Given in the frame's coordinates: move it to the body's (transformed_inverse: frame -> body).
  const plucker::RigidBodyInertia payload =
      plucker::RigidBodyInertia::unchecked(mass, c, I).transformed_inverse(X_frame);
  m.mutable_model("add_payload").add_inertia(body, payload);
  m.reset_data();
}

/// The limit violations of (q, v, tau), each given or None, one message per entry.
py::list check_limits(const PyModel& m, OptArrayLike q, OptArrayLike v, OptArrayLike tau, double tolerance,
                      bool raise_error) {
  const Model& model = m.model();
  if (!std::isfinite(tolerance) || tolerance < 0.0)
    value_error("check_limits: tolerance must be finite and >= 0, got " + std::to_string(tolerance));
  std::vector<std::string> found;
  const auto number = [](double x) {
    std::ostringstream s;
    s << std::setprecision(10) << x;
    return s.str();
  };
  const auto check = [&](py::handle obj, const char* name, bool tangent) {
    if (obj.is_none()) return;
    const Vector x = tangent ? v_arg(m, obj, name) : q_arg(m, obj, name);
    const Eigen::Index n = tangent ? model.nv() : model.nq();
    if (x.size() != n)
      value_error(std::string("check_limits: ") + name + " has size " + std::to_string(x.size()) + ", expected " +
                  std::to_string(n));
    require_finite(m, x, tangent);
    for (int i = 1; i < model.nbodies(); ++i) {
      const int start = tangent ? model.idx_v(i) : model.idx_q(i),
                size = tangent ? model.joint_nv(i) : model.joint_nq(i);
      for (int k = 0; k < size; ++k) {
        const Eigen::Index e = start + k;
        const double value = x.data()[e];
        const std::string where = std::string(name) + "[" + std::to_string(e) + "] = " + number(value) + " at joint '" +
                                  model.joint_name(i) + "'";
        if (!tangent) {
          const double lo = model.lower_position_limit()[e], hi = model.upper_position_limit()[e];
          if (value < lo - tolerance) found.push_back(where + " is below its lower limit " + number(lo));
          if (value > hi + tolerance) found.push_back(where + " is above its upper limit " + number(hi));
        } else {
          const bool effort = std::string(name) == "tau";
          const double limit = effort ? model.effort_limit()[e] : model.velocity_limit()[e];
          if (std::abs(value) > limit + tolerance)
            found.push_back(where + " exceeds its " + (effort ? "effort" : "velocity") + " limit " + number(limit));
        }
      }
    }
  };
  check(q, "q", false);
  check(v, "v", true);
  check(tau, "tau", true);
  if (raise_error && !found.empty()) {
    std::string msg = "check_limits: " + std::to_string(found.size()) + " limit violation(s): ";
    for (std::size_t k = 0; k < found.size(); ++k) msg += (k ? "; " : "") + found[k];
    value_error(msg);
  }
  return str_list(found);
}

void set_gravity(PyModel& m, ArrayLike g) {
  const plucker::Vec3 gravity = vec3_arg(g, "gravity");
  m.mutable_model("setting Model.gravity").set_gravity(gravity);
}

int joint_arg(const PyModel& m, const std::string& name) { return m.model().joint_index(name); }

void bind_builders(py::module_& mod) {
  mod.def(
      "build_chain",
      [](int n, Seed seed, Axes axes) {
        std::vector<plucker::Vec3> ax;
        if (axes.is_none()) {
          ax = {plucker::Vec3::UnitZ(), plucker::Vec3::UnitY()};
        } else {
          for (py::handle a : py::reinterpret_borrow<py::iterable>(axes))
            ax.emplace_back(vec3_arg(a, "axes[" + std::to_string(ax.size()) + "]"));
        }
        return wrap(plucker::build_chain(n, ax, seed_arg(seed)));
      },
      py::arg("n"), py::arg("seed") = 0, py::arg("axes") = py::none(),
      "Fixed-base serial chain of n revolute joints ('joint1'..), axes cycling through `axes`\n"
      "(default [z, y]).");
  mod.def(
      "build_random_tree",
      [](int n, double bf, double skew, double taper, Seed seed) {
        return wrap(plucker::build_random_tree(n, bf, skew, taper, seed_arg(seed)));
      },
      py::arg("n"), py::arg("branching_factor") = 1.0, py::arg("skew") = 0.0, py::arg("taper") = 1.0,
      py::arg("seed") = 0,
      "Fixed-base tree of n revolute bodies, as Featherstone's autoTree (spatial_v2) builds them:\n"
      "branching_factor 1 is a chain, 2 a binary tree; successive joint axes turned by skew about the\n"
      "link; link i of length and mass taper^(i-1); masses perturbed by 3 % from the seed.");
  mod.def(
      "build_humanoid",
      [](Seed seed, bool floating_base) { return wrap(plucker::build_humanoid(seed_arg(seed), floating_base)); },
      py::arg("seed") = 0, py::arg("floating_base") = true, "Humanoid-like tree (30 actuated DoF).");
  mod.def(
      "build_quadruped",
      [](Seed seed, bool floating_base) { return wrap(plucker::build_quadruped(seed_arg(seed), floating_base)); },
      py::arg("seed") = 0, py::arg("floating_base") = true, "Quadruped (12 actuated DoF).");
  mod.def(
      "build_all_joints_tree", [](Seed seed) { return wrap(plucker::build_all_joints_tree(seed_arg(seed))); },
      py::arg("seed") = 0, "Small floating-base tree using every joint kind (nq = 33, nv = 29).");
}

}  // namespace

void bind_model(py::module_& mod) {
  py::class_<PyModel> model(mod, "Model",
                            "A kinematic-tree robot model and its computation workspace (made on first use).\n\n"
                            "Create one with Model.from_urdf(), Model.from_urdf_string() or a build_*() function.\n\n"
                            "Threads: while a call that releases the GIL (rnea_batch, aba_batch, crba_batch,\n"
                            "crba_batch_packed) runs on a Model, the Model cannot change: setting gravity or adding a\n"
                            "loop joint raises RuntimeError naming the running call, so that one call sees one model.");
  model
      .def_static("from_urdf", &from_urdf, py::arg("path"), py::arg("floating_base") = false, py::arg("strict") = false,
                  "Loads a URDF file. floating_base=True attaches the root link to the world with a free-flyer\n"
                  "joint named 'root_joint' (first in q: nq += 7, nv += 6). strict=True refuses the defects\n"
                  "that are otherwise loaded with a plucker.ModelWarning. Raises FileNotFoundError for a\n"
                  "missing file, IsADirectoryError for a directory, OSError for another kind of file that is\n"
                  "not a regular file (a device, a pipe) and plucker.ModelError for an invalid one.")
      .def_static("from_urdf_string", &from_urdf_string, py::arg("xml"), py::arg("floating_base") = false,
                  py::arg("strict") = false, py::arg("source_name") = "<string>",
                  "Loads a URDF document held in a string (see from_urdf).")
      .def(
          "to_text", [](const PyModel& m) { return to_str(plucker::model_to_text(m.model())); },
          "The complete model as text (every number exact: hexadecimal floating point), read back by\n"
          "Model.from_text into the same model to the last bit. Pickling and copy.copy use it.")
      .def_static(
          "from_text", [](const std::string& text) { return wrap(plucker::model_from_text(text)); }, py::arg("text"),
          "The model of a text from Model.to_text. Raises plucker.ModelError naming the line of a\n"
          "malformed text.")
      .def(py::pickle([](const PyModel& m) { return py::bytes(plucker::model_to_text(m.model())); },
                      [](const py::bytes& text) { return wrap(plucker::model_from_text(std::string(text))); }))
      .def("__copy__", [](const PyModel& m) { return wrap(Model(m.model())); })
      .def(
          "__deepcopy__", [](const PyModel& m, const py::dict&) { return wrap(Model(m.model())); }, py::arg("memo"),
          "A copy of the model (not of its workspace, which the copy makes on first use).")
      .def_property_readonly("name", [](const PyModel& m) { return to_str(m.model().name()); })
      .def_property_readonly(
          "nq", [](const PyModel& m) { return m.model().nq(); }, "Size of q.")
      .def_property_readonly(
          "nv", [](const PyModel& m) { return m.model().nv(); }, "Size of v, a, tau.")
      .def_property_readonly(
          "nbodies", [](const PyModel& m) { return m.model().nbodies(); },
          "Number of bodies including the fixed base (body 0).")
      .def_property(
          "gravity", [](const PyModel& m) { return vec_out(m.model().gravity()); }, &set_gravity,
          "Gravity acceleration in world coordinates (3-vector; default [0, 0, -9.81]). Cannot be set\n"
          "while a batched call runs on the model (RuntimeError).")
      .def_property_readonly(
          "joint_names", [](const PyModel& m) { return str_list(m.model().movable_joint_names()); },
          "Names of the movable joints (nv > 0), in model (q/v) order.")
      .def_property_readonly(
          "loop_joint_names", [](const PyModel& m) { return str_list(m.model().loop_joint_names()); },
          "Names of the loop-closing joints (documentation: Closed kinematic loops), in constraint-row order.")
      .def_property_readonly(
          "num_constraints", [](const PyModel& m) { return m.model().num_constraints(); },
          "Rows of phi(q) = 0: 6 - dof per loop joint, then one per mimic joint.")
      .def("add_loop_joint", &add_loop_joint, py::arg("name"), py::arg("type"), py::arg("predecessor"),
           py::arg("successor"), py::arg("predecessor_xyz") = py::make_tuple(0.0, 0.0, 0.0),
           py::arg("predecessor_rpy") = py::make_tuple(0.0, 0.0, 0.0),
           py::arg("successor_xyz") = py::make_tuple(0.0, 0.0, 0.0),
           py::arg("successor_rpy") = py::make_tuple(0.0, 0.0, 0.0), py::arg("axis") = py::make_tuple(0.0, 0.0, 1.0),
           py::arg("actuated") = false,
           "Adds a loop-closing joint between a frame on body `predecessor` and one on body `successor`\n"
           "(frames given as URDF-style xyz/rpy in the body frames), as the <loop_joint> element does.\n"
           "type: revolute, prismatic, cylindrical, planar, spherical (ball) or fixed (weld). Returns its\n"
           "index. Raises RuntimeError while a batched call runs on the model.")
      .def("add_frame", &add_frame, py::arg("name"), py::arg("parent"), py::arg("xyz") = py::make_tuple(0.0, 0.0, 0.0),
           py::arg("rpy") = py::make_tuple(0.0, 0.0, 0.0),
           "Attaches a named frame to a body or to an existing frame (`parent`), placed URDF-style by xyz\n"
           "and rpy in the parent's coordinates. It moves with the parent's body; use its name wherever\n"
           "a body or frame name is taken. Returns its index in frame_names.")
      .def("add_payload", &add_payload, py::arg("name"), py::arg("mass"),
           py::arg("com") = py::make_tuple(0.0, 0.0, 0.0), py::arg("inertia") = py::none(),
           "Adds a rigid payload to the body of `name` (a body or frame): mass [kg], com and the 3x3\n"
           "inertia about the com [kg m^2] (None: a point mass) in the coordinates of `name`.")
      .def("check_limits", &check_limits, py::arg("q") = py::none(), py::arg("v") = py::none(),
           py::arg("tau") = py::none(), py::arg("tolerance") = 0.0, py::arg("raise_error") = false,
           "Joint-limit check on request: the entries of q (position limits), v (|v| <= velocity limit)\n"
           "and tau (|tau| <= effort limit) outside their limits by more than `tolerance`, one message\n"
           "each naming the entry and the joint (an empty list: none). raise_error=True raises\n"
           "ValueError listing them instead. Entries without a limit (+-inf) never violate.")
      .def(
          "frame_body",
          [](const PyModel& m, const std::string& name) {
            const auto [body, X] = attachment_arg(m, name, "frame_body");
            return to_str(m.model().body_name(body));
          },
          py::arg("name"), "Name of the body a frame (or a body: itself) moves with.")
      .def(
          "frame_placement",
          [](const PyModel& m, const std::string& name) {
            const auto [body, X] = attachment_arg(m, name, "frame_placement");
            return mat_out(X.homogeneous());
          },
          py::arg("name"), "4x4 pose of a frame in the coordinates of its body (identity for a body).")
      .def_property_readonly(
          "all_joint_names", [](const PyModel& m) { return str_list(m.model().joint_names()); },
          "Names of the joints of bodies 1..nbodies-1, fixed ones included.")
      .def_property_readonly(
          "body_names", [](const PyModel& m) { return str_list(m.model().body_names()); },
          "Body names, base (body 0) first.")
      .def_property_readonly(
          "frame_names",
          [](const PyModel& m) {
            py::list out;
            for (const auto& f : m.model().frames()) out.append(to_str(f.name));
            return out;
          },
          "Names of the frames attached to bodies (e.g. URDF links merged by fixed joints).")
      .def_property_readonly(
          "parents",
          [](const PyModel& m) {
            py::list out;
            for (int p : m.model().parents()) out.append(p);
            return out;
          },
          "Parent body index of each body (-1 or 0 for the base).")
      .def_property_readonly(
          "total_mass", [](const PyModel& m) { return m.model().total_mass(); }, "Mass of the moving bodies (kg).")
      .def_property_readonly("has_floating_base", [](const PyModel& m) { return m.model().has_floating_base(); })
      .def_property_readonly("lower_position_limit",
                             [](const PyModel& m) { return vec_out(m.model().lower_position_limit()); })
      .def_property_readonly("upper_position_limit",
                             [](const PyModel& m) { return vec_out(m.model().upper_position_limit()); })
      .def_property_readonly("velocity_limit", [](const PyModel& m) { return vec_out(m.model().velocity_limit()); })
      .def_property_readonly("effort_limit", [](const PyModel& m) { return vec_out(m.model().effort_limit()); })
      .def_property_readonly(
          "mimics",
          [](const PyModel& m) {
            const Model& md = m.model();
            py::list out;
            for (const auto& r : md.mimics())
              out.append(py::make_tuple(to_str(md.joint_name(r.follower)), to_str(md.joint_name(r.leader)),
                                        r.multiplier, r.offset));
            return out;
          },
          "Recorded (not enforced) mimic relations: (follower, leader, multiplier, offset) with\n"
          "q_follower = multiplier * q_leader + offset.")
      .def_property_readonly("_has_workspace", &PyModel::has_data,
                             "Whether the single-state workspace exists yet (made on first use; a testing aid).")
      .def(
          "joint_q_index", [](const PyModel& m, const std::string& n) { return m.model().idx_q(joint_arg(m, n)); },
          py::arg("name"), "Index of the joint's first coordinate in q.")
      .def(
          "joint_v_index", [](const PyModel& m, const std::string& n) { return m.model().idx_v(joint_arg(m, n)); },
          py::arg("name"), "Index of the joint's first coordinate in v.")
      .def(
          "joint_nq", [](const PyModel& m, const std::string& n) { return m.model().joint_nq(joint_arg(m, n)); },
          py::arg("name"))
      .def(
          "joint_nv", [](const PyModel& m, const std::string& n) { return m.model().joint_nv(joint_arg(m, n)); },
          py::arg("name"))
      .def(
          "joint_kind",
          [](const PyModel& m, const std::string& n) {
            return std::string(plucker::joint_kind(m.model().joint(joint_arg(m, n))));
          },
          py::arg("name"), "Kind of the joint: 'revolute_z', 'prismatic', 'free_flyer', ...")
      .def(
          "body_index", [](const PyModel& m, const std::string& n) { return m.model().body_index(n); }, py::arg("name"))
      .def(
          "summary", [](const PyModel& m) { return to_str(plucker::summary(m.model())); },
          "Human-readable table of bodies, joints, sizes and masses.")
      .def("__repr__", &repr)
      .def("__str__", [](const PyModel& m) { return to_str(plucker::summary(m.model())); });

  bind_builders(mod);
}

}  // namespace plucker_py
