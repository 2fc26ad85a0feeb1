// What the binding files of module `plucker` share: the Python Model, the exception classes,
// and one bind_* function per area (each in its own file, called by module.cpp).
//
//   module.cpp            module, exception classes, the C++ -> Python error translator
//   convert.hpp/.cpp      argument and result conversion (written once, used by every area)
//   model.cpp             plucker.Model, URDF loading, the model builders
//   dynamics.cpp          rnea, crba, aba, nonlinear effects, gravity torques, energies
//   forward_dynamics.cpp  forward_dynamics family, minv, solve_conjugate_gradient
//   loops.cpp             closed loops (constraints, assembly, constrained dynamics)
//   batch.cpp             the batched functions (they and the batched derivatives release the GIL)
//   derivatives.cpp       derivatives of rnea and aba, one state and batched (these release it too)
//   kinematics.cpp        poses, Jacobians and their derivatives, frame velocity and acceleration,
//                         centre of mass, centroidal momentum, configuration space
//   operational_space.cpp operational-space dynamics (task Jacobian, Lambda, Jbar, N, bias)
//   contact.cpp           compliant contact and the Simulator (its rollout releases the GIL)
//   lie.cpp               SO(3) / SE(3) exp, log and Jacobians, quaternion helpers
//
// pybind11/eigen.h and pybind11/stl.h are deliberately not used (compile time): the few
// conversions are written out in convert.cpp.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "plucker/plucker.hpp"

namespace plucker_py {

namespace py = pybind11;

/// The Python Model: a plucker::Model and the workspace of the single-state functions.
///
/// Threads: the single-state functions hold the GIL for their whole call, so they share one
/// Data safely. The batched functions release the GIL; while one runs, the model is marked in
/// use (Running, taken and dropped with the GIL held) and every mutator refuses to change it
/// (mutable_model), so that one call sees one model.
class PyModel {
 public:
  explicit PyModel(plucker::Model&& model) : model_(std::move(model)) {}

  const plucker::Model& model() const { return model_; }
  /// The workspace of the single-state functions, made on first use (GIL held).
  plucker::Data& data() {
    if (!data_) data_ = std::make_unique<plucker::Data>(model_);
    return *data_;
  }
  bool has_data() const { return data_ != nullptr; }

  /// The model, for a mutator named `what` (e.g. "setting Model.gravity"): raises RuntimeError
  /// naming the running call(s) while a call that released the GIL uses the model.
  plucker::Model& mutable_model(const char* what);
  /// Drops the workspace (after a change of the model's sizes); the next use makes a new one.
  void reset_data() { data_.reset(); }
  /// True the first time it is called on a model with loop joints or mimic relations.
  bool first_tree_call_on_constrained_model() {
    if (constrained_warned_ || (model_.loop_joints().empty() && model_.mimics().empty())) return false;
    constrained_warned_ = true;
    return true;
  }

 private:
  friend class Running;
  plucker::Model model_;
  std::unique_ptr<plucker::Data> data_;
  std::vector<const char*> running_;  ///< names of the calls running without the GIL
  bool constrained_warned_ = false;
};

/// A tree algorithm called on a model with loop joints or mimic relations: warns once per
/// model (plucker.ModelWarning) that it ignores them.
void warn_if_constrained(PyModel& m, const char* fn);

/// Marks a PyModel in use by `call` for the scope (make and destroy it with the GIL held, and
/// release the GIL inside its scope).
class Running {
 public:
  Running(PyModel& model, const char* call) : model_(model), call_(call) { model_.running_.push_back(call); }
  ~Running();
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;

 private:
  PyModel& model_;
  const char* call_;
};

// Python exception and warning classes (created by module.cpp, never freed).
extern PyObject* g_model_error;        // plucker.ModelError(ValueError)
extern PyObject* g_singular_error;     // plucker.SingularError(ArithmeticError)
extern PyObject* g_convergence_error;  // plucker.ConvergenceError(ArithmeticError)
extern PyObject* g_numerical_error;    // plucker.NumericalError(FloatingPointError)
extern PyObject* g_model_warning;      // plucker.ModelWarning(UserWarning)

// One per area, in the order module.cpp calls them (Model first: the others' signatures name it).
void bind_model(py::module_& mod);
void bind_dynamics(py::module_& mod);
void bind_forward_dynamics(py::module_& mod);
void bind_loops(py::module_& mod);
void bind_batch(py::module_& mod);
void bind_derivatives(py::module_& mod);
void bind_kinematics(py::module_& mod);
void bind_operational_space(py::module_& mod);
void bind_contact(py::module_& mod);
void bind_lie(py::module_& mod);

}  // namespace plucker_py
