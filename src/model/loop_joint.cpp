// Loop-joint types (include/plucker/model/loop_joint.hpp): their degrees of freedom and names.
// Part of the model layer: a Model holds its loop joints, the constraints layer solves them.
#include "plucker/model/loop_joint.hpp"

#include <string>

#include "plucker/errors.hpp"

namespace plucker {

int loop_joint_dof(LoopJointType type) {
  switch (type) {
    case LoopJointType::Revolute:
    case LoopJointType::Prismatic:
      return 1;
    case LoopJointType::Cylindrical:
      return 2;
    case LoopJointType::Planar:
    case LoopJointType::Spherical:
      return 3;
    case LoopJointType::Fixed:
      return 0;
  }
  return 0;
}

std::string_view to_string(LoopJointType type) {
  switch (type) {
    case LoopJointType::Revolute:
      return "revolute";
    case LoopJointType::Prismatic:
      return "prismatic";
    case LoopJointType::Cylindrical:
      return "cylindrical";
    case LoopJointType::Planar:
      return "planar";
    case LoopJointType::Spherical:
      return "spherical";
    case LoopJointType::Fixed:
      return "fixed";
  }
  return "?";
}

LoopJointType parse_loop_joint_type(std::string_view name) {
  for (LoopJointType t : {LoopJointType::Revolute, LoopJointType::Prismatic, LoopJointType::Cylindrical,
                          LoopJointType::Planar, LoopJointType::Spherical, LoopJointType::Fixed})
    if (name == to_string(t)) return t;
  if (name == "ball") return LoopJointType::Spherical;
  if (name == "weld") return LoopJointType::Fixed;
  throw InvalidArgument("unknown loop joint type '" + std::string(name) +
                        "' (valid: revolute, prismatic, cylindrical, planar, spherical (ball), fixed (weld))");
}

}  // namespace plucker
