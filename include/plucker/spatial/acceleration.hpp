// Spatial vs conventional (classical) acceleration (Featherstone, "The
// Acceleration Vector of a Rigid Body", IJRR 2001; Featherstone & Orin, "Robot Dynamics: Equations and Algorithms",
// ICRA 2000, footnote 1).
//
// The spatial acceleration a = [omega_dot; nu_dot] differentiates the velocity
// *field* nu (velocity of whichever body point is at the origin now), so it is
// not the acceleration of any one body point. The classical acceleration of the
// body point at p is  nu_dot + omega_dot x p + omega x (nu + omega x p).
#pragma once

#include "plucker/spatial/vectors.hpp"

namespace plucker {

/// Velocity of the body-fixed point at position p (same coordinates as v).
inline Vec3 point_velocity(const Motion& v, const Vec3& p = Vec3::Zero()) { return v.linear + v.angular.cross(p); }

/// Classical (conventional) linear acceleration of the body-fixed point at p, given the
/// body's spatial velocity v and spatial acceleration a (all in the same coordinates).
inline Vec3 classical_acceleration(const Motion& v, const Motion& a, const Vec3& p = Vec3::Zero()) {
  return a.linear + a.angular.cross(p) + v.angular.cross(point_velocity(v, p));
}

/// Spatial acceleration from the classical one: angular acceleration omega_dot and the
/// classical linear acceleration of the body point at the origin.
inline Motion spatial_acceleration(const Motion& v, const Vec3& omega_dot, const Vec3& classical_linear) {
  return {omega_dot, classical_linear - v.angular.cross(v.linear)};
}

}  // namespace plucker
