// The physical range a model must lie in (documentation: Loading URDF, "Physical range"). Values outside it
// are refused when a model is built (Model::add_body and friends) or loaded, in strict and
// default mode alike: they are not robots, and they overflow the dynamics (a joint origin
// of 1e308 m makes every torque infinite).
#pragma once

namespace plucker::physical_range {

/// Largest distance, m: joint origins (X_tree translations), frame offsets, centres of mass,
/// loop-joint frames.
inline constexpr double kMaxLength = 1e6;
/// Largest mass of one body, kg.
inline constexpr double kMaxMass = 1e9;
/// Largest entry of a rotational inertia, kg m^2 (kMaxMass kMaxLength^2).
inline constexpr double kMaxInertia = 1e21;
/// Largest |multiplier| of a mimic relation (a gear ratio); its |offset| is bounded by
/// kMaxLength (m or rad).
inline constexpr double kMaxMimicMultiplier = 1e6;

}  // namespace plucker::physical_range
