// URDF loader: a URDF robot description -> plucker::Model.
//
// Mapping (details and examples: documentation, Loading URDF)
//   * Bodies are numbered depth-first from the root link, visiting each link's child
//     joints in document order, so every subtree occupies a contiguous index range.
//   * Root link. RootJoint::Fixed: the root link is body 0 and the model's base is named
//     after it. RootJoint::FreeFlyer: body 0 is "world" (or "universe" if the URDF itself
//     has a link named "world"), the root link is body 1, moved by a JointFreeFlyer named
//     "root_joint" with X_tree = identity.
//   * <joint type="fixed"> is merged: the child link's inertia is added to the body of the
//     nearest movable ancestor, and the child link becomes a named Frame on that body
//     (Model::frames()); chains of fixed joints compose. Body 0 also collects the inertia
//     of the root link and its fixed descendants (for reference: no algorithm uses the
//     inertia of the fixed base, and Model::total_mass() excludes it).
//   * revolute -> make_revolute(axis) with the <limit>s; continuous -> make_revolute with
//     infinite position limits; prismatic -> make_prismatic(axis); planar ->
//     make_planar(axis as the normal); floating -> JointFreeFlyer (keeping its name).
//     X_tree = Transform::from_rpy_xyz(rpy, xyz) of the joint <origin>.
//   * <inertial>: mass, COM = origin xyz, tensor given in the frame rotated by origin rpy
//     (I_link = R I R^T). No <inertial> = massless link.
//   * <mimic> joints stay independent coordinates; the relation is recorded with
//     Model::add_mimic() and a warning says that tree algorithms do not enforce it.
//   * Ignored: <dynamics> (damping/friction are not rigid-body dynamics), <visual>,
//     <collision> (except spheres, when UrdfOptions::collision_spheres asks for them),
//     <material>, <transmission>, <gazebo>, <safety_controller>, <calibration>, and any
//     other element.
//   * <loop_joint> (plucker's extension; documentation: Closed kinematic loops): Model::add_loop_joint with its
//     predecessor/successor frames resolved to bodies (merged links included).
//
// Validation policy
//   Always refused (plucker::ModelError "<file>: <what> (link 'X' / joint 'Y')"):
//     malformed XML; a missing <robot>, name, type, parent or child; unknown joint type;
//     duplicate link/joint names; a joint naming a link that does not exist; a link with
//     two parents; a cycle of joints (URDF cannot express kinematic loops: declare the
//     loop-closing joint as <loop_joint>); no root or several roots; an unparsable or
//     non-finite number (origin, axis, mass, inertia, limits, mimic); a negative mass;
//     an inertia tensor that is not positive semi-definite; a zero-length axis on a
//     movable joint; a missing <limit> on a revolute/prismatic joint, or a <limit>
//     without effort/velocity; lower > upper; a negative velocity or effort limit; a
//     <mimic> naming an unknown joint, itself, or a joint without exactly one DoF.
//   Loaded by default, with one warning per link (or joint) naming it, refused with
//   options.strict = true ("defects" found in real robot files):
//     point masses (mass > 0, zero tensor); tensors violating the triangle inequality;
//     rank-deficient positive semi-definite tensors (e.g. 1e-6 "dummy" inertias); a
//     massless link with a nonzero tensor; a movable joint that carries no inertia at all
//     (its joint-space inertia is singular); a joint axis whose norm differs from 1 by
//     more than 1e-6 (it is normalised in any case); a <mimic> on a fixed joint (ignored).
//   A <loop_joint> without name, type, <predecessor>/<successor> link, with an unknown type
//   or link, a zero axis, or both links on one body is refused.
//   Also always refused: a document beyond urdf_limits (below), checked before it is parsed;
//   a name (robot, link, joint, loop joint, or one naming them) that is not valid UTF-8;
//   values outside the physical range (plucker/model/physical_range.hpp): a joint origin,
//   COM offset, loop-joint frame or composed pose of a merged link farther than kMaxLength,
//   a mass above kMaxMass, an inertia entry above kMaxInertia; a path that is not a regular
//   file (directory, device, FIFO).
//   Notices, never refused: the mimic summary (once per model).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "plucker/model/model.hpp"

namespace plucker {

/// How the URDF root link is attached to the world.
enum class RootJoint {
  Fixed,      ///< the root link is the fixed base (body 0)
  FreeFlyer,  ///< the root link is body 1, moved by a 6-DoF JointFreeFlyer "root_joint"
};

/// Caps on a URDF document (documentation: Loading URDF, "Limits"), checked by one linear pass over its bytes
/// before the XML is parsed, so that no input costs more than a bounded time and memory: beyond
/// any of them load_urdf / load_urdf_string throw ModelError naming the cap, the value found
/// and the line. Real robot files stay far below (the largest of the shared models: 133 KB,
/// 2,314 elements, 12 attributes on one element, nesting depth 7); a 100,000-link chain
/// (37 MB, 1,000,000 elements, 1,900,000 attributes) passes.
namespace urdf_limits {
inline constexpr std::size_t kMaxBytes = std::size_t{64} << 20;  ///< document size, bytes (64 MiB)
inline constexpr long kMaxNodes = 2'000'000;                     ///< elements, comments, CDATA sections, declarations
inline constexpr long kMaxAttributes = 4'000'000;                ///< attributes in the whole document
inline constexpr long kMaxAttributesPerElement = 64;
inline constexpr int kMaxDepth = 64;  ///< nesting depth of elements
/// `<loop_joint>` elements (each adds up to 6 constraint rows; Model::add_loop_joint's
/// duplicate-name check is linear, so many of them cost quadratic time)
inline constexpr long kMaxLoopJoints = 1'000;
}  // namespace urdf_limits

/// A `<collision>` sphere of a link (UrdfOptions::collision_spheres): the centre is the collision
/// `<origin>` xyz in the link's frame.
struct UrdfCollisionSphere {
  std::string link;
  Vec3 center = Vec3::Zero();
  double radius = 0.0;
  int line = 0;  ///< of the `<collision>` element
};

/// A `<collision>` sphere, box or cylinder of a link (UrdfOptions::collision_geometry). The pose is
/// the collision `<origin>` (xyz, rpy) of the geometry in the link's frame: rotation R (the
/// geometry's axes in link coordinates) and position; a cylinder's axis is its z axis.
struct UrdfCollisionGeometry {
  enum class Kind : int { Sphere, Box, Cylinder };
  Kind kind = Kind::Sphere;
  std::string link;
  Mat3 rotation = Mat3::Identity();
  Vec3 position = Vec3::Zero();
  double radius = 0.0;       ///< sphere, cylinder
  Vec3 size = Vec3::Zero();  ///< box: the full edge lengths (URDF `size`)
  double length = 0.0;       ///< cylinder
  int line = 0;              ///< of the `<collision>` element
};

struct UrdfOptions {
  RootJoint root = RootJoint::Fixed;
  /// Refuse (ModelError) the defects that are otherwise loaded with a warning.
  bool strict = false;
  /// Receives each warning (already prefixed with the file name). Empty: print
  /// "plucker: warning: <msg>" to stderr.
  std::function<void(const std::string&)> on_warning;
  /// When set, receives every `<collision>` whose `<geometry>` is a `<sphere radius=".."/>`, in document
  /// order (other geometries are skipped). A sphere without a finite radius >= 0 is refused
  /// (ModelError naming the link), as is a centre beyond the physical range.
  std::vector<UrdfCollisionSphere>* collision_spheres = nullptr;
  /// When set, receives every `<collision>` whose `<geometry>` is a sphere, box or cylinder, in
  /// document order (meshes are skipped). Sizes must be finite, >= 0 and within the physical range
  /// (ModelError naming the link and line otherwise).
  std::vector<UrdfCollisionGeometry>* collision_geometry = nullptr;
};

/// Loads a URDF file (a regular file: not a directory, device or FIFO). Throws ModelError
/// naming the file and the link/joint on any error.
Model load_urdf(const std::string& path, const UrdfOptions& options = {});
Model load_urdf(const std::string& path, RootJoint root);

/// Loads a URDF document held in memory; `source_name` is used in messages.
Model load_urdf_string(const std::string& xml, const UrdfOptions& options = {},
                       const std::string& source_name = "<string>");
Model load_urdf_string(const std::string& xml, RootJoint root, const std::string& source_name = "<string>");

}  // namespace plucker
