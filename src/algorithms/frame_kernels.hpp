// What every function that takes a ReferenceFrame shares (DEVELOPERS.md "External forces and
// Jacobians"): the change of coordinates from world spatial coordinates to those of a frame,
// and the time derivative d/dt (J v) of a frame's velocity in them.
#pragma once

#include "plucker/spatial/acceleration.hpp"
#include "plucker/spatial/frames.hpp"
#include "plucker/spatial/transform.hpp"

namespace plucker::detail {

/// X with X v_world = v in `rf` coordinates of the frame whose pose is F_X_0 (world -> frame):
/// World the identity, Local F_X_0, LocalWorldAligned the translation to the frame origin.
inline Transform world_to(ReferenceFrame rf, const Transform& F_X_0) {
  switch (rf) {
    case ReferenceFrame::Local:
      return F_X_0;
    case ReferenceFrame::LocalWorldAligned:
      return Transform(Mat3::Identity(), F_X_0.r);
    case ReferenceFrame::World:
      break;
  }
  return Transform();
}

/// d/dt (J v) in `rf` coordinates for a frame fixed to a body (F_X_B = frame_X_body, B_X_0 the
/// body's pose), from the body's velocity v_B and acceleration a_B in body coordinates. Local:
/// the frame is body-fixed, so d/dt (F_X_B v_B) = F_X_B a_B. World: 0_X_B a_B (the derivative
/// of 0_X_B contributes v x v = 0). LocalWorldAligned: [omega_dot; the classical acceleration
/// of the frame origin], in world axes.
inline Motion frame_velocity_derivative(ReferenceFrame rf, const Transform& F_X_B, const Transform& B_X_0,
                                        const Motion& v_B, const Motion& a_B) {
  if (rf == ReferenceFrame::Local) return F_X_B.apply(a_B);
  const Motion v_w = B_X_0.apply_inverse(v_B), a_w = B_X_0.apply_inverse(a_B);
  if (rf == ReferenceFrame::World) return a_w;
  const Vec3 origin = (F_X_B * B_X_0).r;
  return {a_w.angular, classical_acceleration(v_w, a_w, origin)};
}

}  // namespace plucker::detail
