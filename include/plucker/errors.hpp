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

/// The dynamics are undefined at this state (e.g. a singular joint-space inertia).
class SingularError : public Error {
 public:
  using Error::Error;
};

}  // namespace plucker
