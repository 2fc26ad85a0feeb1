// Module `plucker`: its docstring, the exception classes and the translation of C++ errors.
//
// Errors: plucker::InvalidArgument -> ValueError, plucker::ModelError -> plucker.ModelError
// (a ValueError), plucker::SingularError -> plucker.SingularError (an ArithmeticError),
// plucker::ConvergenceError -> plucker.ConvergenceError (an ArithmeticError, with .iterations and
// .residual), plucker::NumericalError -> plucker.NumericalError (a FloatingPointError), any other
// plucker::Error -> RuntimeError. Messages are decoded with errors='backslashreplace', so they
// always arrive (a name quoted from a file need not be UTF-8). URDF loader warnings are Python
// warnings of category plucker.ModelWarning (a UserWarning), so `warnings` filters apply.
#include <pybind11/eval.h>

#include <exception>

#include "bindings.hpp"
#include "convert.hpp"
#include "plucker/version.hpp"

namespace plucker_py {

PyObject* g_model_error = nullptr;
PyObject* g_singular_error = nullptr;
PyObject* g_convergence_error = nullptr;
PyObject* g_numerical_error = nullptr;
PyObject* g_model_warning = nullptr;

namespace {

// ConvergenceError carries the solver's report; defined in Python for its __init__ (the
// attributes exist however it is made) and __reduce__ (they survive pickling).
const char* const convergence_error_source = R"(
class ConvergenceError(ArithmeticError):
    """An iterative solver stopped at its iteration cap before reaching its tolerance.

    Attributes: iterations (iterations done) and residual (relative residual at exit)."""

    def __init__(self, message, iterations=None, residual=None):
        super().__init__(message)
        self.iterations = iterations
        self.residual = residual

    def __reduce__(self):
        return (type(self), (str(self), self.iterations, self.residual))
)";

PyObject* new_exception(const char* name, const char* doc, PyObject* base) {
  PyObject* e = PyErr_NewExceptionWithDoc(name, doc, base, nullptr);
  if (!e) throw py::error_already_set();
  return e;
}

void set_error(PyObject* type, const char* what) { PyErr_SetObject(type, to_str(what).ptr()); }

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const plucker::InvalidArgument& e) {
    set_error(PyExc_ValueError, e.what());
  } catch (const plucker::ModelError& e) {
    set_error(g_model_error, e.what());
  } catch (const plucker::SingularError& e) {
    set_error(g_singular_error, e.what());
  } catch (const plucker::ConvergenceError& e) {
    py::object exc =
        py::reinterpret_borrow<py::object>(g_convergence_error)(to_str(e.what()), e.iterations(), e.residual());
    PyErr_SetObject(g_convergence_error, exc.ptr());
  } catch (const plucker::NumericalError& e) {
    set_error(g_numerical_error, e.what());
  } catch (const plucker::Error& e) {
    set_error(PyExc_RuntimeError, e.what());
  }
}

}  // namespace

}  // namespace plucker_py

PYBIND11_MODULE(plucker, mod) {
  using namespace plucker_py;
  mod.doc() =
      "plucker: rigid-body dynamics (RNEA, CRBA, ABA, kinematics) of kinematic trees.\n\n"
      "Conventions: spatial vectors are [angular; linear]; external forces are [moment; force]\n"
      "in world coordinates about the world origin (frame='world', default) or in body (frame)\n"
      "coordinates about the body (frame) origin (frame='local'). Quaternions in q are [x, y, z, w];\n"
      "a free-flyer's q is [x, y, z, qx, qy, qz, qw] and its v = [omega; v] in the body frame.\n\n"
      "Threads: the single-state functions hold the GIL; the batched ones (rnea_batch, ...) release\n"
      "it, and while one runs on a Model that Model cannot be changed (RuntimeError).";
  mod.attr("__version__") = plucker::version();

  g_model_error = new_exception("plucker.ModelError",
                                "A model (loaded or built) is malformed or physically impossible.", PyExc_ValueError);
  g_singular_error = new_exception("plucker.SingularError",
                                   "The dynamics are undefined at this state (e.g. a singular joint-space inertia).",
                                   PyExc_ArithmeticError);
  g_numerical_error =
      new_exception("plucker.NumericalError",
                    "A result is not finite although the inputs were (a state outside the range of double precision).",
                    PyExc_FloatingPointError);
  g_model_warning =
      new_exception("plucker.ModelWarning", "A defect found while loading a model (loaded anyway).", PyExc_UserWarning);
  {
    py::dict ns;
    ns["__builtins__"] = py::module_::import("builtins");
    ns["__name__"] = "plucker";
    py::exec(convergence_error_source, ns);
    g_convergence_error = py::object(ns["ConvergenceError"]).release().ptr();
  }
  mod.attr("ModelError") = py::handle(g_model_error);
  mod.attr("SingularError") = py::handle(g_singular_error);
  mod.attr("ConvergenceError") = py::handle(g_convergence_error);
  mod.attr("NumericalError") = py::handle(g_numerical_error);
  mod.attr("ModelWarning") = py::handle(g_model_warning);
  // The module attributes keep their own references; the globals keep one more (never freed).

  py::register_exception_translator(&translate);

  bind_model(mod);
  bind_dynamics(mod);
  bind_forward_dynamics(mod);
  bind_loops(mod);
  bind_batch(mod);
  bind_derivatives(mod);
  bind_kinematics(mod);
  bind_operational_space(mod);
  bind_contact(mod);
  bind_lie(mod);
}
