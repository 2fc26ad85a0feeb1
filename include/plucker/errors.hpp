// Errors raised by plucker. Every error names what is wrong and where
// (argument, joint, link or file) so that a user can act on it.
#pragma once

#include <stdexcept>
#include <string>

namespace plucker {

/// Base class of every error plucker throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value given to a function is unusable: wrong size, non-finite, out of domain.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// A model (hand-built or loaded) is malformed or physically impossible.
class ModelError : public Error {
 public:
  using Error::Error;
};

/// The dynamics are undefined at this state: the joint-space inertia matrix (or a reduced
/// system built from it) is singular. One criterion for every method (documentation:
/// Conventions, "Singularity"): joint k is singular when its articulated pivot D_k (the pivot of M's
/// factorisation leaves first) is at most kSingularPivot times M_kk.
class SingularError : public Error {
 public:
  using Error::Error;
};

/// An iterative solver stopped at its iteration cap before reaching its tolerance.
class ConvergenceError : public Error {
 public:
  ConvergenceError(const std::string& what, int iterations, double residual)
      : Error(what), iterations_(iterations), residual_(residual) {}
  int iterations() const { return iterations_; }  ///< iterations done
  double residual() const { return residual_; }   ///< relative residual at exit

 private:
  int iterations_ = 0;
  double residual_ = 0.0;
};

/// A result is not finite although the inputs were: the state is outside the range of double
/// precision (e.g. velocities of 1e200). The message names the quantity and the joint where
/// the first non-finite value appeared.
class NumericalError : public Error {
 public:
  using Error::Error;
};

}  // namespace plucker
