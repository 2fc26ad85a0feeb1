// Loop-closing joints (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000, §3.4): a mechanism
// with kinematic loops is modelled as a spanning tree (the Model's bodies and tree joints) plus loop joints. A loop
// joint connects a frame on a predecessor body to a frame on a successor body; when the loop is closed the two frames
// coincide up to the joint's own motion (rotation about its axis for a revolute,
// ...). It removes 6 - dof(type) degrees of freedom.
#pragma once

#include <string>
#include <string_view>

#include "plucker/spatial/transform.hpp"

namespace plucker {

enum class LoopJointType {
  Revolute,     ///< rotation about `axis`                              (1 DoF, 5 constraints)
  Prismatic,    ///< translation along `axis`                           (1 DoF, 5 constraints)
  Cylindrical,  ///< rotation about and translation along `axis`        (2 DoF, 4 constraints)
  Planar,       ///< rotation about `axis`, translation normal to it    (3 DoF, 3 constraints)
  Spherical,    ///< any rotation about the common origin ("ball")      (3 DoF, 3 constraints)
  Fixed,        ///< no relative motion ("weld")                         (0 DoF, 6 constraints)
};

struct LoopJoint {
  std::string name;
  LoopJointType type = LoopJointType::Revolute;
  int predecessor = 0;        ///< body carrying the predecessor frame (0: the fixed base)
  int successor = 0;          ///< body carrying the successor frame
  Transform X_predecessor;    ///< joint frame on the predecessor: frame_X_body (as Frame::X_body)
  Transform X_successor;      ///< joint frame on the successor: frame_X_body
  Vec3 axis = Vec3::UnitZ();  ///< joint axis in the joint frames (revolute, prismatic, cylindrical; planar: normal)
  bool actuated = false;      ///< carries actuator forces tau_a (Eq. 19), one per DoF of the joint
};

/// Degrees of freedom the joint allows (columns of its motion subspace).
int loop_joint_dof(LoopJointType type);
/// Constraints it imposes: 6 - dof.
inline int loop_joint_constraints(LoopJointType type) { return 6 - loop_joint_dof(type); }
/// "revolute", "prismatic", "cylindrical", "planar", "spherical", "fixed".
std::string_view to_string(LoopJointType type);
/// The inverse of to_string; also accepts "ball" (spherical) and "weld" (fixed). Throws
/// InvalidArgument listing the valid names.
LoopJointType parse_loop_joint_type(std::string_view name);

}  // namespace plucker
