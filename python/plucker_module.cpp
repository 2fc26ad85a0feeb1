// Python bindings of plucker (pybind11): module `plucker`.
//
// Design
//  * plucker.Model owns a plucker::Model and the one plucker::Data workspace sized for it.
//    Every function holds the GIL for its whole (single-state) call, so sharing that Data
//    between calls and Python threads is safe. The batched functions (rnea_batch, ...) do
//    not use that Data: they make their own per-thread workspace and release the GIL.
//  * Array arguments accept any float64 array-like (lists, integer arrays, non-contiguous
//    slices): they are converted with numpy to a contiguous float64 1-D array (no copy when
//    the input already is one), their size and finiteness are checked here, and a
//    ValueError names the argument and the expected size ("q has size 5, expected nq = 7").
//  * Every returned array is a fresh copy (never a view into the Data workspace).
//  * Errors: plucker::InvalidArgument -> ValueError, plucker::ModelError -> plucker.ModelError
//    (a ValueError), plucker::SingularError -> plucker.SingularError (an ArithmeticError),
//    any other plucker::Error -> RuntimeError. URDF loader warnings are issued as Python
//    warnings of category plucker.ModelWarning (a UserWarning), so `warnings` filters apply.
//
// pybind11/eigen.h and pybind11/stl.h are deliberately not used (compile time): the few
// conversions are written out below.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "plucker/errors.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"
#include "plucker/version.hpp"

namespace py = pybind11;

// Argument types that accept any Python object (converted and checked by hand below) but
// show a meaningful type in the generated signatures instead of "handle".
namespace plucker_py {
inline int any_object(PyObject*) { return 1; }
#define PLUCKER_PY_ANY(Name)                                    \
  class Name : public py::object {                              \
   public:                                                      \
    PYBIND11_OBJECT_DEFAULT(Name, py::object, any_object)       \
  };
PLUCKER_PY_ANY(ArrayLike)
PLUCKER_PY_ANY(ForceDict)
PLUCKER_PY_ANY(OptSeed)
PLUCKER_PY_ANY(Seed)
PLUCKER_PY_ANY(PathLike)
PLUCKER_PY_ANY(Axes)
#undef PLUCKER_PY_ANY
}  // namespace plucker_py
namespace pybind11::detail {
#define PLUCKER_PY_NAME(Name, Text) \
  template <>                       \
  struct handle_type_name<plucker_py::Name> { static constexpr auto name = const_name(Text); };
PLUCKER_PY_NAME(ArrayLike, "numpy.typing.ArrayLike")
PLUCKER_PY_NAME(ForceDict, "Optional[Dict[str, numpy.typing.ArrayLike]]")
PLUCKER_PY_NAME(OptSeed, "Optional[int]")
PLUCKER_PY_NAME(Seed, "int")
PLUCKER_PY_NAME(PathLike, "Union[str, os.PathLike]")
PLUCKER_PY_NAME(Axes, "Optional[Sequence[numpy.typing.ArrayLike]]")
#undef PLUCKER_PY_NAME
}  // namespace pybind11::detail

namespace {

using plucker::Force;
using plucker::MatX;
using plucker::Model;
using plucker::ReferenceFrame;
using plucker::VecX;
using namespace plucker_py;

// Python exception / warning classes (owned by the module; never freed).
PyObject* g_model_error = nullptr;
PyObject* g_singular_error = nullptr;
PyObject* g_model_warning = nullptr;

/// The Python Model: the C++ model plus its workspace.
struct PyModel {
  Model model;
  plucker::Data data;
  explicit PyModel(Model&& m) : model(std::move(m)), data(model) {}
};

// ------------------------------------------------------------------ argument conversion
using InArray = py::array_t<double, py::array::c_style | py::array::forcecast>;
using CMap = Eigen::Map<const VecX>;

[[noreturn]] void value_error(const std::string& msg) { throw py::value_error(msg); }

/// Name of the joint that owns q index k (or v index k when `tangent`).
std::string joint_of_index(const Model& m, py::ssize_t k, bool tangent) {
  for (int i = 1; i < m.nbodies(); ++i) {
    const int start = tangent ? m.idx_v(i) : m.idx_q(i);
    const int size = tangent ? m.joint_nv(i) : m.joint_nq(i);
    if (k >= start && k < start + size) return m.joint_name(i);
  }
  return {};
}

/// Converts `obj` to a contiguous float64 1-D array of size `expected` with finite entries.
/// `expected_what` is how the expected size is described ("nq = 7"). With `model`, a
/// non-finite entry is attributed to its joint (q indices, or v indices when `tangent`).
InArray vector_arg(py::handle obj, const std::string& name, py::ssize_t expected, const std::string& expected_what,
                   const Model* model = nullptr, bool tangent = false) {
  if (obj.is_none()) value_error(name + " is None, expected an array of size " + expected_what);
  InArray a = InArray::ensure(obj);
  if (!a) {
    PyErr_Clear();
    value_error(name + " cannot be converted to a float64 array (expected an array of size " + expected_what + ")");
  }
  if (a.ndim() != 1) {
    const std::string shape = py::repr(a.attr("shape"));
    value_error(name + " must be 1-D, got shape " + shape + " (expected size " + expected_what + ")");
  }
  if (a.size() != expected)
    value_error(name + " has size " + std::to_string(a.size()) + ", expected " + expected_what);
  const double* p = a.data();
  for (py::ssize_t k = 0; k < a.size(); ++k) {
    if (!std::isfinite(p[k])) {
      std::string msg = name + "[" + std::to_string(k) + "] is not finite (" + std::to_string(p[k]) + ")";
      if (model) {
        const std::string j = joint_of_index(*model, k, tangent);
        if (!j.empty()) msg += " at joint '" + j + "'";
      }
      value_error(msg);
    }
  }
  return a;
}

CMap cmap(const InArray& a) { return CMap(a.data(), a.size()); }

InArray q_arg(const PyModel& m, py::handle obj, const char* name = "q") {
  return vector_arg(obj, name, m.model.nq(), "nq = " + std::to_string(m.model.nq()), &m.model, false);
}
InArray v_arg(const PyModel& m, py::handle obj, const char* name) {
  return vector_arg(obj, name, m.model.nv(), "nv = " + std::to_string(m.model.nv()), &m.model, true);
}

ReferenceFrame frame_arg(const std::string& frame) {
  if (frame == "world" || frame == "WORLD" || frame == "World") return ReferenceFrame::World;
  if (frame == "local" || frame == "LOCAL" || frame == "Local") return ReferenceFrame::Local;
  value_error("frame must be 'world' or 'local', got '" + frame + "'");
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

/// f_ext: None, or a mapping body_name -> 6-vector [moment; force]. Returns an empty vector
/// for None or an empty mapping, else one Force per body (zeros where none is given).
std::vector<Force> forces_arg(const PyModel& m, py::handle f_ext) {
  std::vector<Force> out;
  if (f_ext.is_none()) return out;
  if (!py::hasattr(f_ext, "items"))
    value_error("f_ext must be a dict mapping body names to 6-vectors [moment; force], or None");
  py::iterable items = f_ext.attr("items")();
  for (py::handle item : items) {
    py::tuple kv = py::reinterpret_borrow<py::tuple>(item);
    if (!py::isinstance<py::str>(kv[0])) value_error("f_ext keys must be body names (str), got " + std::string(py::repr(kv[0])));
    const std::string name = kv[0].cast<std::string>();
    if (!m.model.has_body(name)) value_error("f_ext: unknown body '" + name + "'");
    if (out.empty()) out.assign(static_cast<std::size_t>(m.model.nbodies()), Force::Zero());
    const InArray a = vector_arg(kv[1], "f_ext['" + name + "']", 6, "6 ([moment; force])");
    out[static_cast<std::size_t>(m.model.body_index(name))] += Force(plucker::Vec6(cmap(a)));
  }
  return out;
}

// ------------------------------------------------------------------ results (fresh copies)
py::array_t<double> to_numpy(const double* p, py::ssize_t n) {
  py::array_t<double> out(n);
  if (n) std::memcpy(out.mutable_data(), p, static_cast<std::size_t>(n) * sizeof(double));
  return out;
}
template <class V>
py::array_t<double> vec_out(const V& v) {
  const Eigen::Matrix<double, Eigen::Dynamic, 1> tmp = v;
  return to_numpy(tmp.data(), tmp.size());
}
/// Any Eigen matrix -> C-contiguous (rows, cols) float64 array.
template <class M>
py::array_t<double> mat_out(const M& m) {
  py::array_t<double> out({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
  Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(out.mutable_data(), m.rows(),
                                                                                       m.cols()) = m;
  return out;
}

py::list str_list(const std::vector<std::string>& v) {
  py::list out;
  for (const auto& s : v) out.append(py::str(s));
  return out;
}

// ------------------------------------------------------------------ model construction
void issue_warning(const std::string& msg) {
  if (PyErr_WarnEx(g_model_warning, msg.c_str(), 1) < 0) throw py::error_already_set();
}

plucker::UrdfOptions urdf_options(bool floating_base, bool strict) {
  plucker::UrdfOptions opt;
  opt.root = floating_base ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
  opt.strict = strict;
  opt.on_warning = issue_warning;
  return opt;
}

std::unique_ptr<PyModel> wrap(Model&& m) { return std::make_unique<PyModel>(std::move(m)); }

std::unique_ptr<PyModel> from_urdf(PathLike path, bool floating_base, bool strict) {
  py::module_ os = py::module_::import("os");
  const py::object fspath = os.attr("fspath")(path);
  if (!py::isinstance<py::str>(fspath)) value_error("from_urdf: path must be a str or os.PathLike of str");
  if (!os.attr("path").attr("isfile")(fspath).cast<bool>()) {
    py::object exc = py::module_::import("builtins").attr("FileNotFoundError")(2, "No such URDF file", fspath);
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
  }
  return wrap(plucker::load_urdf(fspath.cast<std::string>(), urdf_options(floating_base, strict)));
}

std::unique_ptr<PyModel> from_urdf_string(const std::string& xml, bool floating_base, bool strict,
                                          const std::string& source_name) {
  return wrap(plucker::load_urdf_string(xml, urdf_options(floating_base, strict), source_name));
}

std::string repr(const PyModel& m) {
  const Model& md = m.model;
  char mass[64];
  std::snprintf(mass, sizeof mass, "%.6g", md.total_mass());
  return "<plucker.Model '" + md.name() + "': nbodies=" + std::to_string(md.nbodies()) +
         ", nq=" + std::to_string(md.nq()) + ", nv=" + std::to_string(md.nv()) + ", total_mass=" + mass +
         " kg" + (md.has_floating_base() ? ", floating base" : "") + ">";
}

int joint_arg(const PyModel& m, const std::string& name) { return m.model.joint_index(name); }

// ------------------------------------------------------------------ algorithms
py::array_t<double> rnea_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike a, ForceDict f_ext,
                            const std::string& frame) {
  const InArray qa = q_arg(m, q), va = v_arg(m, v, "v"), aa = v_arg(m, a, "a");
  const std::vector<Force> f = forces_arg(m, f_ext);
  const ReferenceFrame rf = frame_arg(frame);
  if (f.empty()) return vec_out(plucker::rnea(m.model, m.data, cmap(qa), cmap(va), cmap(aa)));
  return vec_out(plucker::rnea(m.model, m.data, cmap(qa), cmap(va), cmap(aa), f, rf));
}

py::array_t<double> aba_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, ForceDict f_ext,
                           const std::string& frame) {
  const InArray qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const std::vector<Force> f = forces_arg(m, f_ext);
  const ReferenceFrame rf = frame_arg(frame);
  if (f.empty()) return vec_out(plucker::aba(m.model, m.data, cmap(qa), cmap(va), cmap(ta)));
  return vec_out(plucker::aba(m.model, m.data, cmap(qa), cmap(va), cmap(ta), f, rf));
}

py::array_t<double> fd_crba_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, ForceDict f_ext,
                               const std::string& frame) {
  const InArray qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const std::vector<Force> f = forces_arg(m, f_ext);
  const ReferenceFrame rf = frame_arg(frame);
  if (f.empty()) return vec_out(plucker::forward_dynamics_crba(m.model, m.data, cmap(qa), cmap(va), cmap(ta)));
  return vec_out(plucker::forward_dynamics_crba(m.model, m.data, cmap(qa), cmap(va), cmap(ta), f, rf));
}

PyObject* g_fd_choice_type = nullptr;  // collections.namedtuple ForwardDynamicsChoice(method, reason)

py::array_t<double> forward_dynamics_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, const std::string& method,
                                        ForceDict f_ext, const std::string& frame) {
  const plucker::ForwardDynamicsMethod meth = plucker::parse_forward_dynamics_method(method);
  const InArray qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
  const std::vector<Force> f = forces_arg(m, f_ext);
  const ReferenceFrame rf = frame_arg(frame);
  if (f.empty()) return vec_out(plucker::forward_dynamics(m.model, m.data, cmap(qa), cmap(va), cmap(ta), meth));
  return vec_out(plucker::forward_dynamics(m.model, m.data, cmap(qa), cmap(va), cmap(ta), meth, f, rf));
}

py::object forward_dynamics_choice_py(const PyModel& m) {
  const plucker::ForwardDynamicsChoice c = plucker::forward_dynamics_choice(m.model);
  return py::reinterpret_borrow<py::object>(g_fd_choice_type)(std::string(plucker::to_string(c.method)), c.reason);
}

/// Body or frame name -> (body index, frame index or -1). Bodies take precedence.
std::pair<int, int> body_or_frame(const PyModel& m, const std::string& name, const char* fn) {
  if (m.model.has_body(name)) return {m.model.body_index(name), -1};
  if (m.model.has_frame(name)) {
    const int f = m.model.frame_index(name);
    return {m.model.frames()[static_cast<std::size_t>(f)].body, f};
  }
  value_error(std::string(fn) + ": unknown body or frame '" + name + "'");
}

py::array_t<double> body_jacobian_py(PyModel& m, ArrayLike q, const std::string& name, const std::string& frame) {
  const InArray qa = q_arg(m, q);
  const ReferenceFrame rf = frame_arg(frame);
  const auto [body, f] = body_or_frame(m, name, "body_jacobian");
  const plucker::Matrix6X& J = plucker::body_jacobian(m.model, m.data, cmap(qa), body, rf);
  // A frame moves with its body: same spatial velocity in world coordinates; in local
  // coordinates the body's is mapped by frame_X_body.
  if (f >= 0 && rf == ReferenceFrame::Local)
    return mat_out(m.model.frames()[static_cast<std::size_t>(f)].X_body.matrix_motion() * J);
  return mat_out(J);
}

py::array_t<double> jdot_v_py(PyModel& m, ArrayLike q, ArrayLike v, const std::string& name,
                              const std::string& frame) {
  const InArray qa = q_arg(m, q), va = v_arg(m, v, "v");
  const ReferenceFrame rf = frame_arg(frame);
  const auto [body, f] = body_or_frame(m, name, "jacobian_dot_times_v");
  plucker::Motion a = plucker::jacobian_dot_times_v(m.model, m.data, cmap(qa), cmap(va), body, rf);
  if (f >= 0 && rf == ReferenceFrame::Local) a = m.model.frames()[static_cast<std::size_t>(f)].X_body.apply(a);
  return vec_out(a.vector());
}

py::dict forward_kinematics_py(PyModel& m, ArrayLike q) {
  const InArray qa = q_arg(m, q);
  plucker::forward_kinematics(m.model, m.data, cmap(qa));
  py::dict out;
  for (int i = 0; i < m.model.nbodies(); ++i) out[py::str(m.model.body_name(i))] = mat_out(plucker::body_pose(m.data, i));
  return out;
}

py::array_t<double> frame_pose_py(PyModel& m, ArrayLike q, const std::string& name) {
  const InArray qa = q_arg(m, q);
  const auto [body, f] = body_or_frame(m, name, "frame_pose");
  plucker::forward_kinematics(m.model, m.data, cmap(qa));
  if (f >= 0) return mat_out(plucker::frame_pose(m.model, m.data, f));
  return mat_out(plucker::body_pose(m.data, body));
}

py::array_t<double> normalize_py(const PyModel& m, ArrayLike q) {
  const InArray qa = q_arg(m, q);
  VecX out = cmap(qa);
  plucker::normalize(m.model, out);
  // A zero quaternion is left as is (Eigen) and a zero planar (cos, sin) pair becomes NaN:
  // refuse both, naming the joint.
  for (int i = 1; i < m.model.nbodies(); ++i) {
    const std::string_view kind = plucker::joint_kind(m.model.joint(i));
    const int off = kind == "free_flyer" ? 3 : kind == "spherical" ? 0 : kind == "planar" ? 2 : -1;
    if (off < 0) continue;
    const double n = out.segment(m.model.idx_q(i) + off, kind == "planar" ? 2 : 4).norm();
    if (!(std::abs(n - 1.0) < 1e-9))
      value_error("normalize: cannot normalize q at joint '" + m.model.joint_name(i) + "' (zero " +
                  (kind == "planar" ? "(cos, sin) pair" : "quaternion") + ")");
  }
  return vec_out(out);
}

// ------------------------------------------------------------------ batched algorithms
/// A (B, cols) array of states, one per row, as a C-contiguous float64 array. Its memory is
/// the column-major cols x B matrix that the C++ batch API takes (no copy). Finiteness and
/// unit quaternions are checked by the C++ call (errors name the state and joint).
InArray batch_arg(py::handle obj, const std::string& name, py::ssize_t cols, const std::string& cols_what,
                  py::ssize_t rows = -1) {
  const std::string expected = "(B, " + cols_what + ")";
  if (obj.is_none()) value_error(name + " is None, expected an array of shape " + expected);
  InArray a = InArray::ensure(obj);
  if (!a) {
    PyErr_Clear();
    value_error(name + " cannot be converted to a float64 array (expected shape " + expected + ")");
  }
  if (a.ndim() != 2 || a.shape(1) != cols || (rows >= 0 && a.shape(0) != rows)) {
    const std::string shape = py::repr(a.attr("shape"));
    value_error(name + " has shape " + shape + ", expected " +
                (rows >= 0 ? "(" + std::to_string(rows) + ", " + cols_what + ") (B from the first argument)" : expected));
  }
  return a;
}

Eigen::Map<const plucker::MatX> states_map(const InArray& a) {
  return {a.data(), static_cast<Eigen::Index>(a.shape(1)), static_cast<Eigen::Index>(a.shape(0))};
}

int threads_arg(int threads) {
  if (threads < 0) value_error("threads must be >= 0 (0: one per hardware thread), got " + std::to_string(threads));
  return threads;
}

/// rnea_batch (inverse = true) or aba_batch: (B, nq), (B, nv), (B, nv) -> (B, nv).
py::array_t<double> dynamics_batch_py(const PyModel& m, ArrayLike q, ArrayLike v, ArrayLike x, int threads,
                                      bool inverse) {
  const Model& model = m.model;
  const std::string nq = "nq = " + std::to_string(model.nq()), nv = "nv = " + std::to_string(model.nv());
  const InArray Q = batch_arg(q, "Q", model.nq(), nq);
  const py::ssize_t B = Q.shape(0);
  const InArray V = batch_arg(v, "V", model.nv(), nv, B);
  const InArray X = batch_arg(x, inverse ? "A" : "TAU", model.nv(), nv, B);
  threads_arg(threads);
  py::array_t<double> out({B, static_cast<py::ssize_t>(model.nv())});
  Eigen::Map<plucker::MatX> out_map(out.mutable_data(), model.nv(), static_cast<Eigen::Index>(B));
  {
    py::gil_scoped_release release;
    plucker::BatchWorkspace workspace(model, threads);
    if (inverse)
      plucker::rnea_batch(model, workspace, states_map(Q), states_map(V), states_map(X), out_map);
    else
      plucker::aba_batch(model, workspace, states_map(Q), states_map(V), states_map(X), out_map);
  }
  return out;
}

py::array_t<double> crba_batch_py(const PyModel& m, ArrayLike q, int threads) {
  const Model& model = m.model;
  const InArray Q = batch_arg(q, "Q", model.nq(), "nq = " + std::to_string(model.nq()));
  const py::ssize_t B = Q.shape(0), nv = model.nv();
  threads_arg(threads);
  py::array_t<double> out({B, nv, nv});
  // Row-major (B, nv, nv) is the column-major nv x (nv B) layout of crba_batch with each
  // block transposed, which M's symmetry makes the same matrix.
  Eigen::Map<plucker::MatX> out_map(out.mutable_data(), nv, static_cast<Eigen::Index>(nv * B));
  {
    py::gil_scoped_release release;
    plucker::BatchWorkspace workspace(model, threads);
    plucker::crba_batch(model, workspace, states_map(Q), out_map);
  }
  return out;
}

/// crba_batch_packed: (B, nq) -> (B, nnz), row b = M(Q[b])'s nonzeros in jsim_pattern order.
py::array_t<double> crba_batch_packed_py(const PyModel& m, ArrayLike q, int threads) {
  const Model& model = m.model;
  const InArray Q = batch_arg(q, "Q", model.nq(), "nq = " + std::to_string(model.nq()));
  const py::ssize_t B = Q.shape(0);
  threads_arg(threads);
  plucker::BatchWorkspace workspace(model, threads);
  const py::ssize_t nnz = workspace.jsim_pattern().nnz();
  py::array_t<double> out({B, nnz});  // row-major (B, nnz) = column-major nnz x B
  Eigen::Map<plucker::MatX> out_map(out.mutable_data(), nnz, static_cast<Eigen::Index>(B));
  {
    py::gil_scoped_release release;
    plucker::crba_batch_packed(model, workspace, states_map(Q), out_map);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(plucker, mod) {
  mod.doc() =
      "plucker: rigid-body dynamics (RNEA, CRBA, ABA, kinematics) of kinematic trees.\n\n"
      "Conventions: spatial vectors are [angular; linear]; external forces are [moment; force]\n"
      "in world coordinates about the world origin (frame='world', default) or in body\n"
      "coordinates about the body origin (frame='local'). Quaternions in q are [x, y, z, w];\n"
      "a free-flyer's q is [x, y, z, qx, qy, qz, qw] and its v = [omega; v] in the body frame.";
  mod.attr("__version__") = plucker::version();

  g_model_error = PyErr_NewExceptionWithDoc("plucker.ModelError",
                                            "A model (loaded or built) is malformed or physically impossible.",
                                            PyExc_ValueError, nullptr);
  g_singular_error = PyErr_NewExceptionWithDoc(
      "plucker.SingularError", "The dynamics are undefined at this state (e.g. a singular joint-space inertia).",
      PyExc_ArithmeticError, nullptr);
  g_model_warning = PyErr_NewExceptionWithDoc("plucker.ModelWarning",
                                              "A defect found while loading a model (loaded anyway).",
                                              PyExc_UserWarning, nullptr);
  if (!g_model_error || !g_singular_error || !g_model_warning) throw py::error_already_set();
  mod.attr("ModelError") = py::handle(g_model_error);
  mod.attr("SingularError") = py::handle(g_singular_error);
  mod.attr("ModelWarning") = py::handle(g_model_warning);
  // The module attributes keep their own references; the globals keep one more (never freed).

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const plucker::InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const plucker::ModelError& e) {
      PyErr_SetString(g_model_error, e.what());
    } catch (const plucker::SingularError& e) {
      PyErr_SetString(g_singular_error, e.what());
    } catch (const plucker::Error& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  // ---------------------------------------------------------------- Model
  py::class_<PyModel> model(mod, "Model",
                            "A kinematic-tree robot model and its computation workspace.\n\n"
                            "Create one with Model.from_urdf(), Model.from_urdf_string() or a build_*() function.");
  model
      .def_static("from_urdf", &from_urdf, py::arg("path"), py::arg("floating_base") = false,
                  py::arg("strict") = false,
                  "Loads a URDF file. floating_base=True attaches the root link to the world with a free-flyer\n"
                  "joint named 'root_joint' (first in q: nq += 7, nv += 6). strict=True refuses the defects\n"
                  "that are otherwise loaded with a plucker.ModelWarning. Raises FileNotFoundError for a\n"
                  "missing file and plucker.ModelError for an invalid one.")
      .def_static("from_urdf_string", &from_urdf_string, py::arg("xml"), py::arg("floating_base") = false,
                  py::arg("strict") = false, py::arg("source_name") = "<string>",
                  "Loads a URDF document held in a string (see from_urdf).")
      .def_property_readonly("name", [](const PyModel& m) { return m.model.name(); })
      .def_property_readonly("nq", [](const PyModel& m) { return m.model.nq(); }, "Size of q.")
      .def_property_readonly("nv", [](const PyModel& m) { return m.model.nv(); }, "Size of v, a, tau.")
      .def_property_readonly("nbodies", [](const PyModel& m) { return m.model.nbodies(); },
                             "Number of bodies including the fixed base (body 0).")
      .def_property(
          "gravity", [](const PyModel& m) { return vec_out(m.model.gravity()); },
          [](PyModel& m, ArrayLike g) {
            const InArray a = vector_arg(g, "gravity", 3, "3");
            m.model.set_gravity(plucker::Vec3(cmap(a)));
          },
          "Gravity acceleration in world coordinates (3-vector; default [0, 0, -9.81]).")
      .def_property_readonly("joint_names", [](const PyModel& m) { return str_list(m.model.movable_joint_names()); },
                             "Names of the movable joints (nv > 0), in model (q/v) order.")
      .def_property_readonly("loop_joint_names", [](const PyModel& m) { return str_list(m.model.loop_joint_names()); },
                             "Names of the loop-closing joints (docs/loops.md), in constraint-row order.")
      .def_property_readonly("num_constraints", [](const PyModel& m) { return m.model.num_constraints(); },
                             "Rows of phi(q) = 0: 6 - dof per loop joint, then one per mimic joint.")
      .def(
          "add_loop_joint",
          [](PyModel& m, const std::string& name, const std::string& type, const std::string& predecessor,
             const std::string& successor, ArrayLike pred_xyz, ArrayLike pred_rpy, ArrayLike succ_xyz,
             ArrayLike succ_rpy, ArrayLike axis, bool actuated) {
            plucker::LoopJoint lj;
            lj.name = name;
            lj.type = plucker::parse_loop_joint_type(type);
            lj.predecessor = m.model.body_index(predecessor);
            lj.successor = m.model.body_index(successor);
            auto v3 = [](ArrayLike a, const char* what) { return plucker::Vec3(cmap(vector_arg(a, what, 3, "3"))); };
            lj.X_predecessor = plucker::Transform::from_rpy_xyz(v3(pred_rpy, "predecessor_rpy"), v3(pred_xyz, "predecessor_xyz"));
            lj.X_successor = plucker::Transform::from_rpy_xyz(v3(succ_rpy, "successor_rpy"), v3(succ_xyz, "successor_xyz"));
            lj.axis = v3(axis, "axis");
            lj.actuated = actuated;
            const int k = m.model.add_loop_joint(lj);
            m.data = plucker::Data(m.model);  // the workspace is sized for the constraints
            return k;
          },
          py::arg("name"), py::arg("type"), py::arg("predecessor"), py::arg("successor"),
          py::arg("predecessor_xyz") = py::make_tuple(0.0, 0.0, 0.0),
          py::arg("predecessor_rpy") = py::make_tuple(0.0, 0.0, 0.0),
          py::arg("successor_xyz") = py::make_tuple(0.0, 0.0, 0.0),
          py::arg("successor_rpy") = py::make_tuple(0.0, 0.0, 0.0), py::arg("axis") = py::make_tuple(0.0, 0.0, 1.0),
          py::arg("actuated") = false,
          "Adds a loop-closing joint between a frame on body `predecessor` and one on body `successor`\n"
          "(frames given as URDF-style xyz/rpy in the body frames), as the <loop_joint> element does.\n"
          "type: revolute, prismatic, cylindrical, planar, spherical (ball) or fixed (weld). Returns its index.")
      .def_property_readonly("all_joint_names", [](const PyModel& m) { return str_list(m.model.joint_names()); },
                             "Names of the joints of bodies 1..nbodies-1, fixed ones included.")
      .def_property_readonly("body_names", [](const PyModel& m) { return str_list(m.model.body_names()); },
                             "Body names, base (body 0) first.")
      .def_property_readonly("frame_names",
                             [](const PyModel& m) {
                               py::list out;
                               for (const auto& f : m.model.frames()) out.append(py::str(f.name));
                               return out;
                             },
                             "Names of the frames attached to bodies (e.g. URDF links merged by fixed joints).")
      .def_property_readonly("parents",
                             [](const PyModel& m) {
                               py::list out;
                               for (int p : m.model.parents()) out.append(p);
                               return out;
                             },
                             "Parent body index of each body (-1 or 0 for the base).")
      .def_property_readonly("total_mass", [](const PyModel& m) { return m.model.total_mass(); },
                             "Mass of the moving bodies (kg).")
      .def_property_readonly("has_floating_base", [](const PyModel& m) { return m.model.has_floating_base(); })
      .def_property_readonly("lower_position_limit", [](const PyModel& m) { return vec_out(m.model.lower_position_limit()); })
      .def_property_readonly("upper_position_limit", [](const PyModel& m) { return vec_out(m.model.upper_position_limit()); })
      .def_property_readonly("velocity_limit", [](const PyModel& m) { return vec_out(m.model.velocity_limit()); })
      .def_property_readonly("effort_limit", [](const PyModel& m) { return vec_out(m.model.effort_limit()); })
      .def_property_readonly("mimics",
                             [](const PyModel& m) {
                               py::list out;
                               for (const auto& r : m.model.mimics())
                                 out.append(py::make_tuple(m.model.joint_name(r.follower), m.model.joint_name(r.leader),
                                                           r.multiplier, r.offset));
                               return out;
                             },
                             "Recorded (not enforced) mimic relations: (follower, leader, multiplier, offset) with\n"
                             "q_follower = multiplier * q_leader + offset.")
      .def("joint_q_index", [](const PyModel& m, const std::string& n) { return m.model.idx_q(joint_arg(m, n)); },
           py::arg("name"), "Index of the joint's first coordinate in q.")
      .def("joint_v_index", [](const PyModel& m, const std::string& n) { return m.model.idx_v(joint_arg(m, n)); },
           py::arg("name"), "Index of the joint's first coordinate in v.")
      .def("joint_nq", [](const PyModel& m, const std::string& n) { return m.model.joint_nq(joint_arg(m, n)); },
           py::arg("name"))
      .def("joint_nv", [](const PyModel& m, const std::string& n) { return m.model.joint_nv(joint_arg(m, n)); },
           py::arg("name"))
      .def("joint_kind",
           [](const PyModel& m, const std::string& n) {
             return std::string(plucker::joint_kind(m.model.joint(joint_arg(m, n))));
           },
           py::arg("name"), "Kind of the joint: 'revolute_z', 'prismatic', 'free_flyer', ...")
      .def("body_index", [](const PyModel& m, const std::string& n) { return m.model.body_index(n); }, py::arg("name"))
      .def("summary", [](const PyModel& m) { return plucker::summary(m.model); },
           "Human-readable table of bodies, joints, sizes and masses.")
      .def("__repr__", &repr)
      .def("__str__", [](const PyModel& m) { return plucker::summary(m.model); });

  // ---------------------------------------------------------------- dynamics
  const char* f_ext_doc =
      "f_ext: None or a dict body_name -> 6-vector [moment; force] (world coordinates about the\n"
      "world origin when frame='world', body coordinates about the body origin when frame='local').";
  mod.def("rnea", &rnea_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"), py::arg("f_ext") = py::none(),
          py::arg("frame") = "world",
          (std::string("Inverse dynamics tau = ID(q, v, a) (recursive Newton-Euler), gravity included.\n") + f_ext_doc)
              .c_str());
  mod.def("aba", &aba_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("f_ext") = py::none(),
          py::arg("frame") = "world",
          (std::string("Forward dynamics qdd = FD(q, v, tau) (articulated-body algorithm). Raises\n"
                       "plucker.SingularError naming the joint when the dynamics are undefined.\n") +
           f_ext_doc)
              .c_str());
  mod.def("forward_dynamics_crba", &fd_crba_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"),
          py::arg("f_ext") = py::none(), py::arg("frame") = "world",
          "Forward dynamics by CRBA + dense Cholesky (the O(n^3) reference path); same arguments as aba.");
  {
    py::tuple names(plucker::forward_dynamics_methods().size());
    std::size_t k = 0;
    for (plucker::ForwardDynamicsMethod meth : plucker::forward_dynamics_methods())
      names[k++] = py::str(std::string(plucker::to_string(meth)));
    mod.attr("FORWARD_DYNAMICS_METHODS") = names;
    py::object choice = py::module_::import("collections").attr("namedtuple")("ForwardDynamicsChoice",
                                                                               py::make_tuple("method", "reason"));
    choice.attr("__doc__") = "The method forward_dynamics(method='auto') runs on a model, and why.";
    choice.attr("__module__") = "plucker";
    mod.attr("ForwardDynamicsChoice") = choice;
    g_fd_choice_type = choice.release().ptr();  // one reference kept for good (like the exception types)
  }
  mod.def("forward_dynamics", &forward_dynamics_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"),
          py::arg("method") = "auto", py::arg("f_ext") = py::none(), py::arg("frame") = "world",
          (std::string("Forward dynamics qdd = FD(q, v, tau) by any method of FORWARD_DYNAMICS_METHODS:\n"
                       "'aba' (articulated-body algorithm, O(N)), 'crba_cholesky' (CRBA + dense Cholesky),\n"
                       "'crba_ltdl' (CRBA + LTDL on the tree's sparsity), 'direct_cholesky' / 'symmetry_cholesky'\n"
                       "(M by the direct / symmetry-based method + dense Cholesky), 'cg' / 'pcg' (conjugate\n"
                       "gradient on O(N) products M y, plain / preconditioned by diag(H R H*)), 'innovations'\n"
                       "(M = [I + H phi K] D [I + H phi K]*, two O(N) triangular sweeps), 'minv' (M^-1 from\n"
                       "its operator form times tau - C), 'auto' (see forward_dynamics_choice). Raises ValueError\n"
                       "for an unknown method and plucker.SingularError naming the joint where M is singular.\n") +
           f_ext_doc)
              .c_str());
  mod.def(
      "minv",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return mat_out(plucker::minv(m.model, m.data, cmap(qa)));
      },
      py::arg("model"), py::arg("q"),
      "M(q)^-1, (nv, nv), from the operator form [I - H psi K]* D^-1 [I - H psi K] (Jain Lemma 6.4),\n"
      "O(N^2) without forming or factorising M. Raises plucker.SingularError naming the joint.");
  // ---- closed loops (docs/loops.md) ----
  mod.def(
      "constrained_forward_dynamics",
      [](PyModel& m, ArrayLike q, ArrayLike v, ArrayLike tau, const std::string& method, py::tuple baumgarte,
         double rank_tolerance, py::object loop_joint_forces) {
        const InArray qa = q_arg(m, q), va = v_arg(m, v, "v"), ta = v_arg(m, tau, "tau");
        plucker::ConstrainedOptions opt;
        opt.method = plucker::parse_constrained_method(method);
        if (baumgarte.size() != 2) value_error("baumgarte must be a pair (alpha, beta)");
        opt.baumgarte_alpha = baumgarte[0].cast<double>();
        opt.baumgarte_beta = baumgarte[1].cast<double>();
        opt.rank_tolerance = rank_tolerance;
        if (!loop_joint_forces.is_none()) {
          const int na = m.model.num_loop_actuators();
          opt.loop_joint_forces = cmap(vector_arg(loop_joint_forces, "loop_joint_forces", na, std::to_string(na)));
        }
        const VecX qdd = plucker::constrained_forward_dynamics(m.model, m.data, cmap(qa), cmap(va), cmap(ta), opt);
        return py::make_tuple(vec_out(qdd), vec_out(m.data.loops.lambda));
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("method") = "kkt",
      py::arg("baumgarte") = py::make_tuple(0.0, 0.0), py::arg("rank_tolerance") = 1e-10,
      py::arg("loop_joint_forces") = py::none(),
      "(qdd, lam) of the closed-loop system M qdd + C = tau + L^T lam, L qdd = c (paper 000 Eq. 20) by\n"
      "method 'kkt' (Eq. 20 directly), 'range_space' (Eq. 21, lambda first with O(n) tree solves) or\n"
      "'null_space' (Eq. 22). baumgarte=(alpha, beta): phi'' + 2 alpha phi' + beta^2 phi = 0. Rank-deficient\n"
      "constraints are handled by a rank-revealing step (rank_tolerance); lam is the minimum-norm one.");
  mod.def(
      "constraint_residual",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return vec_out(plucker::constraint_residual(m.model, m.data, cmap(qa)));
      },
      py::arg("model"), py::arg("q"), "phi(q), (num_constraints,): zero when every loop (and mimic) is closed.");
  mod.def(
      "constraint_jacobian",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return mat_out(plucker::constraint_jacobian(m.model, m.data, cmap(qa)));
      },
      py::arg("model"), py::arg("q"), "L(q), (num_constraints, nv): phi' = L v.");
  mod.def(
      "constraint_bias",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const InArray qa = q_arg(m, q), va = v_arg(m, v, "v");
        return vec_out(plucker::constraint_bias(m.model, m.data, cmap(qa), cmap(va)));
      },
      py::arg("model"), py::arg("q"), py::arg("v"), "c(q, v) = -(dL/dt) v: the constraints read L qdd = c.");
  mod.def(
      "assemble",
      [](PyModel& m, ArrayLike q_guess, py::iterable fixed_joints, double tolerance, int max_iterations) {
        const InArray qa = q_arg(m, q_guess, "q_guess");
        plucker::AssembleOptions opt;
        opt.tolerance = tolerance;
        opt.max_iterations = max_iterations;
        for (py::handle j : fixed_joints) opt.fixed_joints.push_back(m.model.joint_index(j.cast<std::string>()));
        return vec_out(plucker::assemble(m.model, m.data, cmap(qa), opt));
      },
      py::arg("model"), py::arg("q_guess"), py::arg("fixed_joints") = py::tuple(),
      py::arg("tolerance") = 1e-12, py::arg("max_iterations") = 50,
      "q with phi(q) = 0 near q_guess (Newton projection with minimum-norm steps), holding the joints\n"
      "named in fixed_joints. Raises plucker.SingularError naming the loops it cannot close.");
  mod.def(
      "project_velocity",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const InArray qa = q_arg(m, q), va = v_arg(m, v, "v");
        return vec_out(plucker::project_velocity(m.model, m.data, cmap(qa), cmap(va)));
      },
      py::arg("model"), py::arg("q"), py::arg("v"),
      "The velocity closest to v in the kinetic-energy metric with L v = 0.");
  mod.def(
      "loop_joint_forces",
      [](PyModel& m, ArrayLike q, ArrayLike lam, const std::string& frame) {
        const InArray qa = q_arg(m, q);
        const int nc = m.model.num_constraints();
        const InArray la = vector_arg(lam, "lam", nc, "num_constraints = " + std::to_string(nc));
        const std::vector<Force> f = plucker::loop_joint_forces(m.model, m.data, cmap(qa), cmap(la), frame_arg(frame));
        py::dict out;
        for (size_t k = 0; k < f.size(); ++k) out[py::str(m.model.loop_joints()[k].name)] = vec_out(f[k].vector());
        return out;
      },
      py::arg("model"), py::arg("q"), py::arg("lam"), py::arg("frame") = "local",
      "Dict loop_joint_name -> spatial force [moment; force] (6,) that the loop joint transmits to its\n"
      "successor body (the predecessor receives the opposite), from the multipliers lam of\n"
      "constrained_forward_dynamics: 'local' = in the joint frame (moment about its origin), 'world'.");
  mod.def(
      "constrained_inverse_dynamics",
      [](PyModel& m, ArrayLike q, ArrayLike v, ArrayLike qdd, py::iterable actuated_joints) {
        const InArray qa = q_arg(m, q), va = v_arg(m, v, "v"), aa = v_arg(m, qdd, "qdd");
        std::vector<int> act;
        for (py::handle j : actuated_joints) act.push_back(m.model.joint_index(j.cast<std::string>()));
        const plucker::ClosedLoopInverseDynamics r =
            plucker::constrained_inverse_dynamics(m.model, m.data, cmap(qa), cmap(va), cmap(aa), act);
        return py::make_tuple(vec_out(r.u), vec_out(r.lambda));
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("qdd"), py::arg("actuated_joints"),
      "(u, lam): actuator forces of the named joints (then of actuated loop joints) and constraint\n"
      "multipliers producing qdd. Raises plucker.SingularError when the actuators cannot produce it.");
  mod.def(
      "build_four_bar",
      [](double ground, double crank, double coupler, double rocker, double crank_angle) {
        plucker::FourBarParams p;
        p.ground = ground, p.crank = crank, p.coupler = coupler, p.rocker = rocker, p.crank_angle = crank_angle;
        return wrap(plucker::build_four_bar(p));
      },
      py::arg("ground") = 1.0, py::arg("crank") = 0.3, py::arg("coupler") = 0.9, py::arg("rocker") = 0.7,
      py::arg("crank_angle") = 1.0, "Planar four-bar linkage (see plucker/model/builders.hpp); q = 0 is assembled.");
  mod.def("build_slider_crank", []() { return wrap(plucker::build_slider_crank()); },
          "Planar slider-crank; q = 0 is assembled.");
  mod.def("build_delta", []() { return wrap(plucker::build_delta()); },
          "3-DoF Delta-type translational parallel robot; q = 0 is assembled.");
  mod.def("forward_dynamics_choice", &forward_dynamics_choice_py, py::arg("model"),
          "ForwardDynamicsChoice(method, reason): the method that forward_dynamics(method='auto') runs\n"
          "on this model ('aba' or 'crba_ltdl', by predicted time from the topology) and why.");
  mod.def(
      "crba",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return mat_out(plucker::crba(m.model, m.data, cmap(qa)));
      },
      py::arg("model"), py::arg("q"), "Joint-space inertia matrix M(q), (nv, nv), full symmetric.");
  mod.def(
      "nonlinear_effects",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const InArray qa = q_arg(m, q), va = v_arg(m, v, "v");
        return vec_out(plucker::nonlinear_effects(m.model, m.data, cmap(qa), cmap(va)));
      },
      py::arg("model"), py::arg("q"), py::arg("v"), "C(q, v) = rnea(q, v, 0): Coriolis, centrifugal and gravity terms.");
  mod.def(
      "gravity_torques",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return vec_out(plucker::gravity_torques(m.model, m.data, cmap(qa)));
      },
      py::arg("model"), py::arg("q"), "g(q) = rnea(q, 0, 0).");
  mod.def(
      "kinetic_energy",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const InArray qa = q_arg(m, q), va = v_arg(m, v, "v");
        return plucker::kinetic_energy(m.model, m.data, cmap(qa), cmap(va));
      },
      py::arg("model"), py::arg("q"), py::arg("v"), "1/2 v^T M(q) v (float).");
  mod.def(
      "potential_energy",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return plucker::potential_energy(m.model, m.data, cmap(qa));
      },
      py::arg("model"), py::arg("q"), "-sum m_i g . c_i in the model's gravity (float; zero at the world origin).");

  // ---------------------------------------------------------------- batched
  mod.def(
      "rnea_batch",
      [](const PyModel& m, ArrayLike Q, ArrayLike V, ArrayLike A, int threads) {
        return dynamics_batch_py(m, Q, V, A, threads, true);
      },
      py::arg("model"), py::arg("Q"), py::arg("V"), py::arg("A"), py::arg("threads") = 0,
      "rnea over B states: Q (B, nq), V and A (B, nv) -> tau (B, nv), row b = rnea(Q[b], V[b], A[b]).\n"
      "Runs on `threads` threads (0: one per hardware thread) without the GIL; every state is\n"
      "validated first (ValueError naming the state and joint).");
  mod.def(
      "aba_batch",
      [](const PyModel& m, ArrayLike Q, ArrayLike V, ArrayLike TAU, int threads) {
        return dynamics_batch_py(m, Q, V, TAU, threads, false);
      },
      py::arg("model"), py::arg("Q"), py::arg("V"), py::arg("TAU"), py::arg("threads") = 0,
      "aba over B states: Q (B, nq), V and TAU (B, nv) -> qdd (B, nv). See rnea_batch.");
  mod.def("crba_batch", &crba_batch_py, py::arg("model"), py::arg("Q"), py::arg("threads") = 0,
          "crba over B states: Q (B, nq) -> M (B, nv, nv), full symmetric. See rnea_batch.");
  mod.def("crba_batch_packed", &crba_batch_packed_py, py::arg("model"), py::arg("Q"), py::arg("threads") = 0,
          "crba over B states, only the nonzeros the tree allows: Q (B, nq) -> (B, nnz), row b =\n"
          "M(Q[b])'s lower-triangle nonzeros in the order of jsim_pattern(model) (e.g.\n"
          "scipy.sparse.csr_matrix((row, col, row_start)) is M's lower triangle). See rnea_batch.");
  mod.def(
      "jsim_pattern",
      [](const PyModel& m) {
        const plucker::JsimPattern p = plucker::jsim_pattern(m.model);
        return py::make_tuple(py::array_t<int>(static_cast<py::ssize_t>(p.row_start.size()), p.row_start.data()),
                              py::array_t<int>(static_cast<py::ssize_t>(p.col.size()), p.col.data()));
      },
      py::arg("model"),
      "(row_start, col): the nonzero pattern of M's lower triangle in compressed sparse rows. Row k\n"
      "holds the DoF-level ancestors of DoF k in ascending order, then k (the diagonal last), as\n"
      "entries row_start[k]:row_start[k + 1] of col (branch-induced sparsity).");

  // ---------------------------------------------------------------- kinematics
  mod.def("forward_kinematics", &forward_kinematics_py, py::arg("model"), py::arg("q"),
          "Dict body_name -> 4x4 homogeneous pose of the body in the world.");
  mod.def("frame_pose", &frame_pose_py, py::arg("model"), py::arg("q"), py::arg("frame_name"),
          "4x4 world pose of a frame (Model.frame_names) or of a body (Model.body_names).");
  mod.def("body_jacobian", &body_jacobian_py, py::arg("model"), py::arg("q"), py::arg("body_name"),
          py::arg("frame") = "world",
          "(6, nv) Jacobian J with J v = spatial velocity [omega; v] of the body (or frame). frame='world':\n"
          "world coordinates, v = velocity of the body point at the world origin (so J^T f maps a world\n"
          "force [moment about origin; force] to joint forces). frame='local': coordinates of the body\n"
          "(or frame), v = velocity of its origin.");
  mod.def("jacobian_dot_times_v", &jdot_v_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("body_name"),
          py::arg("frame") = "world", "(d/dt J) v for body_jacobian(model, q, body_name, frame): a 6-vector.");
  mod.def(
      "center_of_mass",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return vec_out(plucker::center_of_mass(m.model, m.data, cmap(qa)));
      },
      py::arg("model"), py::arg("q"), "Centre of mass of the moving bodies (world coordinates).");
  mod.def(
      "center_of_mass_jacobian",
      [](PyModel& m, ArrayLike q) {
        const InArray qa = q_arg(m, q);
        return mat_out(plucker::center_of_mass_jacobian(m.model, m.data, cmap(qa)));
      },
      py::arg("model"), py::arg("q"), "(3, nv) Jacobian of the centre of mass (world coordinates).");

  // ---------------------------------------------------------------- configuration space
  mod.def(
      "neutral", [](const PyModel& m) { return vec_out(plucker::neutral(m.model)); }, py::arg("model"),
      "Neutral configuration (zeros, identity quaternions).");
  mod.def(
      "random_configuration",
      [](const PyModel& m, OptSeed seed) {
        std::uint64_t s;
        if (seed.is_none()) {
          std::random_device rd;
          s = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
        } else {
          s = seed_arg(seed);
        }
        std::mt19937_64 rng(s);
        return vec_out(plucker::random_configuration(m.model, rng));
      },
      py::arg("model"), py::arg("seed") = py::none(),
      "Random configuration within the position limits (deterministic for a given integer seed;\n"
      "seed=None draws one from the OS).");
  mod.def(
      "integrate",
      [](const PyModel& m, ArrayLike q, ArrayLike v, double dt) {
        const InArray qa = q_arg(m, q), va = v_arg(m, v, "v");
        if (!std::isfinite(dt)) value_error("dt is not finite");
        return vec_out(plucker::integrate(m.model, cmap(qa), cmap(va), dt));
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("dt") = 1.0,
      "q (+) v dt, exact on the quaternion joints (quaternions stay unit).");
  mod.def(
      "difference",
      [](const PyModel& m, ArrayLike q0, ArrayLike q1) {
        const InArray a = q_arg(m, q0, "q0"), b = q_arg(m, q1, "q1");
        return vec_out(plucker::difference(m.model, cmap(a), cmap(b)));
      },
      py::arg("model"), py::arg("q0"), py::arg("q1"), "v such that integrate(q0, v, 1) == q1.");
  mod.def("normalize", &normalize_py, py::arg("model"), py::arg("q"),
          "A copy of q with unit quaternions (and planar (cos, sin) pairs).");

  // ---------------------------------------------------------------- builders
  mod.def(
      "build_chain",
      [](int n, Seed seed, Axes axes) {
        std::vector<plucker::Vec3> ax;
        if (axes.is_none()) {
          ax = {plucker::Vec3::UnitZ(), plucker::Vec3::UnitY()};
        } else {
          for (py::handle a : py::reinterpret_borrow<py::iterable>(axes)) {
            const InArray arr = vector_arg(a, "axes[" + std::to_string(ax.size()) + "]", 3, "3");
            ax.emplace_back(cmap(arr));
          }
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
      py::arg("seed") = 0, "Featherstone autoTree-like fixed-base tree of n revolute bodies.");
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
