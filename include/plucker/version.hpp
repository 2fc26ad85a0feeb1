#pragma once

namespace plucker {

/// Library version string, e.g. "0.1.0" (the CMake project version).
const char* version();

}  // namespace plucker
