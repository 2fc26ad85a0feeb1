// Argument and result conversion, written once for every binding file.
//
// Arguments. Arrays accept real numbers only: integer and floating dtypes, and array-likes of
// them (lists, tuples, non-contiguous slices, float32, ...); bool, complex, datetime/timedelta,
// object and str arrays are refused with a ValueError naming the argument and the dtype. They
// are converted to C-contiguous float64 (no copy when they already are) of the right
// dimensionality. Sizes and finiteness are left to the C++ function that receives them: its
// errors name the function, the argument and the joint; call() adds the index and value of a
// non-finite entry. Only what the C++ API cannot see is checked here: the fixed-size vectors
// that become C++ values (gravity, axes, forces: size and finiteness), the keys of f_ext, the
// layout of batches (the C++ API takes them transposed), names, seeds, thread counts.
//
// Results are fresh copies (never views into the workspace). Every string from C++ (names,
// messages) is decoded as UTF-8 with errors='backslashreplace' (to_str), so a name from a file
// in another encoding still arrives.
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"

// Argument types that accept any Python object (converted by hand) but show a meaningful type
// in the generated signatures instead of "handle".
namespace plucker_py {
inline int any_object(PyObject*) { return 1; }
#define PLUCKER_PY_ANY(Name)                              \
  class Name : public py::object {                        \
   public:                                                \
    PYBIND11_OBJECT_DEFAULT(Name, py::object, any_object) \
  };
PLUCKER_PY_ANY(ArrayLike)
PLUCKER_PY_ANY(OptArrayLike)
PLUCKER_PY_ANY(ForceDict)
PLUCKER_PY_ANY(OptSeed)
PLUCKER_PY_ANY(Seed)
PLUCKER_PY_ANY(OptInt)
PLUCKER_PY_ANY(PathLike)
PLUCKER_PY_ANY(Axes)
PLUCKER_PY_ANY(Names)
PLUCKER_PY_ANY(Tasks)
#undef PLUCKER_PY_ANY
}  // namespace plucker_py
namespace pybind11::detail {
#define PLUCKER_PY_NAME(Name, Text)                \
  template <>                                      \
  struct handle_type_name<plucker_py::Name> {      \
    static constexpr auto name = const_name(Text); \
  };
PLUCKER_PY_NAME(ArrayLike, "numpy.typing.ArrayLike")
PLUCKER_PY_NAME(OptArrayLike, "Optional[numpy.typing.ArrayLike]")
PLUCKER_PY_NAME(ForceDict, "Optional[Dict[str, numpy.typing.ArrayLike]]")
PLUCKER_PY_NAME(OptSeed, "Optional[int]")
PLUCKER_PY_NAME(Seed, "int")
PLUCKER_PY_NAME(OptInt, "Optional[int]")
PLUCKER_PY_NAME(PathLike, "Union[str, os.PathLike]")
PLUCKER_PY_NAME(Axes, "Optional[Sequence[numpy.typing.ArrayLike]]")
PLUCKER_PY_NAME(Names, "Iterable[str]")
PLUCKER_PY_NAME(Tasks, "Sequence[Union[str, Tuple[str, Union[str, Sequence[int]]]]]")
#undef PLUCKER_PY_NAME
}  // namespace pybind11::detail

namespace plucker_py {

using plucker::Force;
using plucker::MatX;
using plucker::Model;
using plucker::ReferenceFrame;
using plucker::VecX;

/// A C-contiguous float64 array.
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

// ------------------------------------------------------------------ errors and strings
/// A Python str from UTF-8 bytes; invalid bytes become \xNN escapes (never fails).
py::str to_str(const std::string& s);
py::list str_list(const std::vector<std::string>& v);
/// Raises `type` (a Python exception class) with message `msg` (decoded by to_str).
[[noreturn]] void raise(PyObject* type, const std::string& msg);
[[noreturn]] inline void value_error(const std::string& msg) { raise(PyExc_ValueError, msg); }
/// Issues a plucker.ModelWarning (warnings filters apply; raises when one turns it into an error).
void issue_warning(const std::string& msg);

// ------------------------------------------------------------------ arrays
/// An expected size, spelled out in messages only: "nq = 7", "6 ([moment; force])", "3".
struct Size {
  Eigen::Index n = 0;
  const char* name = nullptr;  ///< "nq", "num_constraints", ...
  const char* note = nullptr;  ///< "[moment; force]", ...
  std::string text() const;
};

/// A 1-D array argument, passed to the C++ API as an Eigen::Ref: `obj` as a C-contiguous float64
/// array, refusing None, what numpy cannot convert and dtypes other than integer and floating,
/// naming the argument. A float64 C-contiguous array is taken as is (no copy, no string built).
class Vector {
 public:
  Vector(py::handle obj, std::string name, const Size& expected);
  const std::string& name() const { return name_; }
  const double* data() const { return array_.data(); }
  Eigen::Index size() const { return static_cast<Eigen::Index>(array_.size()); }
  Eigen::Map<const VecX> map() const { return {data(), size()}; }
  operator Eigen::Ref<const VecX>() const { return map(); }

 private:
  Array array_;
  std::string name_;
};

/// q-sized and v-sized arguments of `m` (the size is checked by the C++ call).
Vector q_arg(const PyModel& m, py::handle obj, const char* name = "q");
Vector v_arg(const PyModel& m, py::handle obj, const char* name);

/// Runs `f`, a call of the C++ API on the arguments `args`, and returns its result. The C++
/// function checks their sizes and finiteness; when it refuses a non-finite entry of one of
/// them, the message gets the entry's index and value ("rnea: v is not finite at joint 'elbow'"
/// becomes "rnea: v[8] is not finite (nan) at joint 'elbow'").
[[noreturn]] void rethrow_invalid_argument(const plucker::InvalidArgument& e,
                                           std::initializer_list<const Vector*> args);
template <class F>
decltype(auto) call(std::initializer_list<const Vector*> args, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const plucker::InvalidArgument& e) {
    rethrow_invalid_argument(e, args);
  }
}

/// Refuses a non-finite entry of `v` ("q[3] is not finite (nan) at joint 'elbow'"), for the
/// few C++ functions that do not check (normalize).
void require_finite(const PyModel& m, const Vector& v, bool tangent);

/// A fixed-size vector that becomes a C++ value: size and finiteness checked here.
Eigen::VectorXd fixed_vector(py::handle obj, const std::string& name, const Size& size);
/// A (rows, cols) matrix argument: shape and finiteness checked here.
Eigen::MatrixXd fixed_matrix(py::handle obj, const std::string& name, py::ssize_t rows, py::ssize_t cols);
inline plucker::Vec3 vec3_arg(py::handle obj, const std::string& name) { return fixed_vector(obj, name, {3}); }

/// A (B, cols) array of states, one per row (C-contiguous float64). Its memory is the
/// column-major cols x B matrix that the C++ batch API takes (no copy). rows >= 0: B must be
/// `rows` (the B of the first argument).
Array batch_arg(py::handle obj, const std::string& name, py::ssize_t cols, const std::string& cols_what,
                py::ssize_t rows = -1);
inline Eigen::Map<const MatX> states_map(const Array& a) {
  return {a.data(), static_cast<Eigen::Index>(a.shape(1)), static_cast<Eigen::Index>(a.shape(0))};
}

// ------------------------------------------------------------------ other arguments
ReferenceFrame frame_arg(const std::string& frame);
std::uint64_t seed_arg(py::handle obj);
/// `threads` >= 0 (0: one per hardware thread).
int threads_arg(int threads);
/// A float (int, float or numpy scalar); refuses bool, None, str, ... naming the argument.
double real_arg(py::handle obj, const std::string& name);
/// Names: an iterable of str (a single str is refused: it would iterate over its characters).
std::vector<std::string> names_arg(py::handle obj, const char* name);
/// Joint indices of the joints named in `obj` (names_arg; unknown names raise ValueError).
std::vector<int> joints_arg(const PyModel& m, py::handle obj, const char* name);

/// Body or frame name -> (body index, frame index or -1). Bodies take precedence.
std::pair<int, int> body_or_frame(const PyModel& m, const std::string& name, const char* fn);

/// f_ext: None, or a mapping name -> 6-vector [moment; force] where a name is a body's or a
/// frame's (a frame's force acts on its body). With frame World every force is in world
/// coordinates about the world origin; with Local a body's is in body coordinates about the
/// body origin and a frame's in frame coordinates about the frame origin (converted here to its
/// body's). Returns one Force per body (zeros where none is given), or an empty vector for None
/// or an empty mapping.
/// With LocalWorldAligned world axes about the body's (frame's) origin; a frame's force then
/// needs the pose at q (forward kinematics on m's workspace) unless the frame shares its body's
/// origin, so q = nullptr (the derivatives) refuses such a force.
std::vector<Force> forces_arg(PyModel& m, py::handle f_ext, ReferenceFrame frame, const Vector* q = nullptr);
/// The frame's origin minus its body's origin, in world axes, at q.
plucker::Vec3 frame_offset_in_world(PyModel& m, const Vector& q, const plucker::Frame& fr);
/// The f_ext / frame paragraph of the docstrings.
extern const char* const f_ext_doc;

// ------------------------------------------------------------------ results (fresh copies)
py::array_t<double> to_numpy(const double* p, py::ssize_t n);
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

/// A namedtuple class, attribute `name` of the module; one reference kept for good.
PyObject* named_tuple(py::module_& mod, const char* name, py::tuple fields, const char* doc);

/// Wraps a new C++ model.
std::unique_ptr<PyModel> wrap(Model&& m);

}  // namespace plucker_py
