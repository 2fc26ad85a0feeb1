// Argument and result conversion (see convert.hpp).
#include "convert.hpp"

#include <cctype>
#include <cmath>
#include <cstring>

namespace plucker_py {

// ------------------------------------------------------------------ errors and strings
py::str to_str(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace");
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

py::list str_list(const std::vector<std::string>& v) {
  py::list out;
  for (const auto& s : v) out.append(to_str(s));
  return out;
}

void raise(PyObject* type, const std::string& msg) {
  PyErr_SetObject(type, to_str(msg).ptr());
  throw py::error_already_set();
}

void issue_warning(const std::string& msg) {
  if (PyErr_WarnFormat(g_model_warning, 1, "%U", to_str(msg).ptr()) < 0) throw py::error_already_set();
}

std::unique_ptr<PyModel> wrap(Model&& m) { return std::make_unique<PyModel>(std::move(m)); }

// ------------------------------------------------------------------ arrays
namespace {

std::string repr_of(py::handle h) { return py::repr(h).cast<std::string>(); }

/// "bool", "complex128", "<U3", ... and what it is, for the dtype error.
std::string describe_dtype(const py::dtype& dt) {
  const std::string name = py::str(static_cast<const py::handle&>(dt)).cast<std::string>();
  switch (dt.kind()) {
    case 'b':
      return name;
    case 'c':
      return name + " (complex)";
    case 'M':
      return name + " (datetime)";
    case 'm':
      return name + " (timedelta)";
    case 'O':
      return name + " (Python objects)";
    case 'U':
    case 'S':
      return name + " (strings)";
    default:
      return name;
  }
}

/// `obj` as a C-contiguous float64 array of any shape; refuses None, what numpy cannot convert
/// and dtypes other than integer and floating. expected() completes "expected an array of ..."
/// in the errors ("size nq = 7", "shape (B, nq = 7)"); it is only called for an error.
template <class Expected>
Array float_array(py::handle obj, const std::string& name, const Expected& expected) {
  if (Array::check_(obj)) return py::reinterpret_borrow<Array>(obj);  // float64, C-contiguous: as is
  if (obj.is_none()) value_error(name + " is None, expected an array of " + expected());
  py::array a = py::array::ensure(obj);
  if (!a) {
    // Ask numpy again for its reason (e.g. a ragged list).
    std::string why = "numpy cannot make an array of it";
    try {
      py::module_::import("numpy").attr("asarray")(obj);
    } catch (py::error_already_set& e) {
      why = py::str(e.value()).cast<std::string>();
    }
    value_error(name + " cannot be converted to an array of numbers (" + why + "); expected an array of " + expected());
  }
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u' && kind != 'f')
    value_error(name + " has dtype " + describe_dtype(a.dtype()) +
                ", expected real numbers (an integer or floating dtype): an array of " + expected());
  Array out = Array::ensure(a);  // clears the error when it fails (memory)
  if (!out) value_error(name + " cannot be converted to float64");
  return out;
}

}  // namespace

std::string Size::text() const {
  std::string s = name ? std::string(name) + " = " + std::to_string(n) : std::to_string(n);
  if (note) s += std::string(" (") + note + ")";
  return s;
}

Vector::Vector(py::handle obj, std::string name, const Size& expected)
    : array_(float_array(obj, name, [&] { return "size " + expected.text(); })), name_(std::move(name)) {
  if (array_.ndim() != 1)
    value_error(name_ + " must be 1-D, got shape " + repr_of(array_.attr("shape")) + " (expected size " +
                expected.text() + ")");
}

Vector q_arg(const PyModel& m, py::handle obj, const char* name) { return Vector(obj, name, {m.model().nq(), "nq"}); }
Vector v_arg(const PyModel& m, py::handle obj, const char* name) { return Vector(obj, name, {m.model().nv(), "nv"}); }

namespace {

std::string number_text(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return std::to_string(x);
}

/// Index of the first non-finite entry, or -1.
Eigen::Index first_non_finite(const double* p, Eigen::Index n) {
  for (Eigen::Index k = 0; k < n; ++k)
    if (!std::isfinite(p[k])) return k;
  return -1;
}

}  // namespace

void rethrow_invalid_argument(const plucker::InvalidArgument& e, std::initializer_list<const Vector*> args) {
  const std::string msg = e.what();
  for (const Vector* v : args) {
    // The C++ checks say "<function>: <name> is not finite at joint '<joint>'".
    const std::string pattern = v->name() + " is not finite";
    std::size_t pos = msg.find(pattern);
    while (pos != std::string::npos && pos > 0 && msg[pos - 1] != ' ') pos = msg.find(pattern, pos + 1);
    if (pos == std::string::npos) continue;
    const Eigen::Index k = first_non_finite(v->data(), v->size());
    if (k < 0) continue;
    value_error(msg.substr(0, pos) + v->name() + "[" + std::to_string(k) + "] is not finite (" +
                number_text(v->data()[k]) + ")" + msg.substr(pos + pattern.size()));
  }
  throw;  // the original, translated by module.cpp
}

void require_finite(const PyModel& m, const Vector& v, bool tangent) {
  const Eigen::Index k = first_non_finite(v.data(), v.size());
  if (k < 0) return;
  std::string msg = v.name() + "[" + std::to_string(k) + "] is not finite (" + number_text(v.data()[k]) + ")";
  const Model& model = m.model();
  for (int i = 1; i < model.nbodies(); ++i) {
    const int start = tangent ? model.idx_v(i) : model.idx_q(i);
    const int size = tangent ? model.joint_nv(i) : model.joint_nq(i);
    if (k >= start && k < start + size) msg += " at joint '" + model.joint_name(i) + "'";
  }
  value_error(msg);
}

Eigen::VectorXd fixed_vector(py::handle obj, const std::string& name, const Size& size) {
  const Vector v(obj, name, size);
  if (v.size() != size.n) value_error(name + " has size " + std::to_string(v.size()) + ", expected " + size.text());
  const Eigen::Index k = first_non_finite(v.data(), size.n);
  if (k >= 0) value_error(name + "[" + std::to_string(k) + "] is not finite (" + number_text(v.data()[k]) + ")");
  return v.map();
}

Eigen::MatrixXd fixed_matrix(py::handle obj, const std::string& name, py::ssize_t rows, py::ssize_t cols) {
  const std::string shape = "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
  const Array a = float_array(obj, name, [&] { return "shape " + shape; });
  if (a.ndim() != 2 || a.shape(0) != rows || a.shape(1) != cols)
    value_error(name + " has shape " + repr_of(a.attr("shape")) + ", expected " + shape);
  const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> m(a.data(), rows,
                                                                                                   cols);
  for (py::ssize_t i = 0; i < rows; ++i)
    for (py::ssize_t j = 0; j < cols; ++j)
      if (!std::isfinite(m(i, j)))
        value_error(name + "[" + std::to_string(i) + ", " + std::to_string(j) + "] is not finite (" +
                    number_text(m(i, j)) + ")");
  return m;
}

Array batch_arg(py::handle obj, const std::string& name, py::ssize_t cols, const std::string& cols_what,
                py::ssize_t rows) {
  const std::string expected = "(B, " + cols_what + ")";
  Array a = float_array(obj, name, [&] { return "shape " + expected; });
  if (a.ndim() != 2 || a.shape(1) != cols || (rows >= 0 && a.shape(0) != rows))
    value_error(
        name + " has shape " + repr_of(a.attr("shape")) + ", expected " +
        (rows >= 0 ? "(" + std::to_string(rows) + ", " + cols_what + ") (B from the first argument)" : expected));
  return a;
}

// ------------------------------------------------------------------ other arguments
ReferenceFrame frame_arg(const std::string& frame) {
  std::string lower = frame;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "world" || lower == "local" || lower == "local_world_aligned")
    return plucker::parse_reference_frame(lower);
  value_error("frame must be 'world', 'local' or 'local_world_aligned', got '" + frame + "'");
}

std::uint64_t seed_arg(py::handle obj) {
  PyObject* idx = PyNumber_Index(obj.ptr());
  if (!idx) {
    PyErr_Clear();
    value_error("seed must be an integer in [0, 2**64)");
  }
  const unsigned long long s = PyLong_AsUnsignedLongLong(idx);
  Py_DECREF(idx);
  if (s == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    value_error("seed must be an integer in [0, 2**64)");
  }
  return static_cast<std::uint64_t>(s);
}

int threads_arg(int threads) {
  if (threads < 0) value_error("threads must be >= 0 (0: one per hardware thread), got " + std::to_string(threads));
  return threads;
}

double real_arg(py::handle obj, const std::string& name) {
  if (obj.is_none() || PyBool_Check(obj.ptr()) || !PyNumber_Check(obj.ptr()) || PyComplex_Check(obj.ptr()))
    value_error(name + " must be a real number, got " + repr_of(obj));
  const double x = PyFloat_AsDouble(obj.ptr());
  if (x == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    value_error(name + " must be a real number, got " + repr_of(obj));
  }
  return x;
}

std::vector<std::string> names_arg(py::handle obj, const char* name) {
  if (py::isinstance<py::str>(obj))
    value_error(std::string(name) + " must be an iterable of names, got the str " + repr_of(obj) + " (use [" +
                repr_of(obj) + "])");
  std::vector<std::string> out;
  PyObject* it = PyObject_GetIter(obj.ptr());
  if (!it) {
    PyErr_Clear();
    value_error(std::string(name) + " must be an iterable of names (str), got " + repr_of(obj));
  }
  py::iterator items = py::reinterpret_steal<py::iterator>(it);
  for (py::handle item : items) {
    if (!py::isinstance<py::str>(item)) value_error(std::string(name) + " must hold names (str), got " + repr_of(item));
    out.push_back(item.cast<std::string>());
  }
  return out;
}

std::vector<int> joints_arg(const PyModel& m, py::handle obj, const char* name) {
  std::vector<int> out;
  for (const std::string& n : names_arg(obj, name)) out.push_back(m.model().joint_index(n));
  return out;
}

std::pair<int, int> body_or_frame(const PyModel& m, const std::string& name, const char* fn) {
  const Model& model = m.model();
  if (model.has_body(name)) return {model.body_index(name), -1};
  if (model.has_frame(name)) {
    const int f = model.frame_index(name);
    return {model.frames()[static_cast<std::size_t>(f)].body, f};
  }
  value_error(std::string(fn) + ": unknown body or frame '" + name + "'");
}

plucker::Vec3 frame_offset_in_world(PyModel& m, const Vector& q, const plucker::Frame& fr) {
  call({&q}, [&] { plucker::forward_kinematics(m.model(), m.data(), q); });
  return m.data().X_base[static_cast<std::size_t>(fr.body)].E.transpose() * fr.X_body.r;
}

void warn_if_constrained(PyModel& m, const char* fn) {
  if (!m.first_tree_call_on_constrained_model()) return;
  const Model& model = m.model();
  issue_warning(std::string(fn) + ": model '" + model.name() + "' has " + std::to_string(model.loop_joints().size()) +
                " loop joint(s) and " + std::to_string(model.mimics().size()) +
                " mimic relation(s), which this tree algorithm ignores (it treats the model as the spanning "
                "tree); constrained_forward_dynamics and constrained_inverse_dynamics enforce them. Warned once "
                "per model.");
}

const char* const f_ext_doc =
    "f_ext: None or a dict name -> 6-vector [moment; force], a name being a body's (Model.body_names)\n"
    "or a frame's (Model.frame_names: the force acts on the frame's body). frame='world': world\n"
    "coordinates, moment about the world origin (bodies and frames alike). frame='local': a body's\n"
    "force in body coordinates about the body origin, a frame's in the frame's coordinates about\n"
    "the frame's origin. frame='local_world_aligned': world axes, moment about the body's (or the\n"
    "frame's) origin.";

std::vector<Force> forces_arg(PyModel& m, py::handle f_ext, ReferenceFrame frame, const Vector* q) {
  std::vector<Force> out;
  if (f_ext.is_none()) return out;
  if (!py::hasattr(f_ext, "items"))
    value_error("f_ext must be a dict mapping body or frame names to 6-vectors [moment; force], or None, got " +
                repr_of(py::type::handle_of(f_ext)));
  const Model& model = m.model();
  const py::object items = f_ext.attr("items")();
  PyObject* it = PyObject_GetIter(items.ptr());
  if (!it) {
    PyErr_Clear();
    value_error("f_ext.items() must return an iterable of (name, force) pairs, got " + repr_of(items));
  }
  for (py::handle item : py::reinterpret_steal<py::iterator>(it)) {
    // (name, force): any 2-sequence, as `for name, force in f_ext.items()` would unpack it.
    PyObject* pair = py::isinstance<py::str>(item) ? nullptr : PySequence_Fast(item.ptr(), "");
    if (!pair) PyErr_Clear();
    const py::object kv = py::reinterpret_steal<py::object>(pair);
    if (!pair || PySequence_Fast_GET_SIZE(pair) != 2)
      value_error("f_ext.items() must yield (name, force) pairs, got " + repr_of(item));
    const py::handle key = PySequence_Fast_GET_ITEM(pair, 0), value = PySequence_Fast_GET_ITEM(pair, 1);
    if (!py::isinstance<py::str>(key)) value_error("f_ext keys must be body or frame names (str), got " + repr_of(key));
    const std::string name = key.cast<std::string>();
    int body = -1;
    const plucker::Frame* fr = nullptr;
    if (model.has_body(name)) {
      body = model.body_index(name);
    } else if (model.has_frame(name)) {
      fr = &model.frames()[static_cast<std::size_t>(model.frame_index(name))];
      body = fr->body;
    } else {
      value_error("f_ext: unknown body '" + name + "' (no body or frame of the model has this name)");
    }
    Force f(plucker::Vec6(fixed_vector(value, "f_ext['" + name + "']", {6, nullptr, "[moment; force]"})));
    if (fr && frame == ReferenceFrame::Local) f = fr->X_body.apply_inverse(f);  // frame -> body: X_body^T
    if (fr && frame == ReferenceFrame::LocalWorldAligned && !fr->X_body.r.isZero(0.0)) {
      // About the frame origin -> about the body origin: n_B = n_F + (p_F - p_B) x f, world axes.
      if (!q)
        value_error("f_ext['" + name +
                    "']: a world-aligned force on a frame away from its body's origin is not supported here; give it "
                    "on the body or in frame='world'");
      const plucker::Vec3 offset = frame_offset_in_world(m, *q, *fr);
      f.angular += offset.cross(f.linear);
    }
    if (out.empty()) out.assign(static_cast<std::size_t>(model.nbodies()), Force::Zero());
    out[static_cast<std::size_t>(body)] += f;
  }
  return out;
}

// ------------------------------------------------------------------ results
py::array_t<double> to_numpy(const double* p, py::ssize_t n) {
  py::array_t<double> out(n);
  if (n) std::memcpy(out.mutable_data(), p, static_cast<std::size_t>(n) * sizeof(double));
  return out;
}

PyObject* named_tuple(py::module_& mod, const char* name, py::tuple fields, const char* doc) {
  py::object type = py::module_::import("collections").attr("namedtuple")(name, fields);
  type.attr("__doc__") = doc;
  type.attr("__module__") = "plucker";
  mod.attr(name) = type;
  return type.release().ptr();
}

}  // namespace plucker_py
