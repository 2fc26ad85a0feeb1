#include "plucker/version.hpp"

// PLUCKER_VERSION_STRING is set by CMake from project(VERSION ...).
#ifndef PLUCKER_VERSION_STRING
#define PLUCKER_VERSION_STRING "0.1.0"
#endif

namespace plucker {

const char* version() { return PLUCKER_VERSION_STRING; }

}  // namespace plucker
