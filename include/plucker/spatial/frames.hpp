// Which coordinates a Jacobian or an external force is expressed in (documentation: Conventions).
#pragma once

#include <span>

#include "plucker/spatial/vectors.hpp"

namespace plucker {

enum class ReferenceFrame {
  World,  ///< world coordinates, spatial (about the world origin) — Featherstone's convention
  Local,  ///< body coordinates, about the body origin
};

/// External forces, one per body (index 0, the base, is ignored), size Model::nbodies().
using ExternalForces = std::span<const Force>;

}  // namespace plucker
