// Which coordinates a Jacobian, a frame velocity or acceleration, or an external force is
// expressed in (documentation: Conventions). One enum, used by every function that takes a frame.
#pragma once

#include <span>
#include <string>

#include "plucker/spatial/vectors.hpp"

namespace plucker {

enum class ReferenceFrame {
  World,              ///< "world": world axes, about the world origin (spatial) — Featherstone's convention
  Local,              ///< "local": the body's (or frame's) own axes, about its origin
  LocalWorldAligned,  ///< "local_world_aligned": world axes, about the body's (or frame's) origin
};

/// "world" / "local" / "local_world_aligned", and the inverse (throws InvalidArgument listing
/// the names).
std::string to_string(ReferenceFrame frame);
ReferenceFrame parse_reference_frame(const std::string& name);

/// External forces, one per body (index 0, the base, is ignored), size Model::nbodies().
using ExternalForces = std::span<const Force>;

}  // namespace plucker
