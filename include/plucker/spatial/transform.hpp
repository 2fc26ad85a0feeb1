// Plucker coordinate transforms, stored compactly as (E, r) — never as a 6x6
// product in the hot path (Featherstone, "Rigid Body Dynamics Algorithms", Springer 2008, §2.8).
//
// A Transform named B_X_A maps coordinates in frame A to coordinates in frame B:
//   E: 3x3 rotation taking A-coordinates to B-coordinates (E = R^T where the
//      columns of R are B's axes expressed in A);
//   r: position of B's origin relative to A's origin, in A-coordinates.
// As 6x6 matrices: motion  X  = [E 0; -E rx E],  force  X* = [E -E rx; 0 E] = X^-T.
#pragma once

#include <algorithm>
#include <iosfwd>

#include "plucker/spatial/vectors.hpp"

namespace plucker {

struct Transform {
  Mat3 E = Mat3::Identity();
  Vec3 r = Vec3::Zero();

  Transform() = default;
  Transform(const Mat3& E_, const Vec3& r_) : E(E_), r(r_) {}

  static Transform Identity() { return Transform(); }

  // ---- constructors (coordinate transforms, as Featherstone's rotx/xlt) ----
  /// Frame B = frame A rotated by angle about A's x axis.
  static Transform rot_x(double angle);
  static Transform rot_y(double angle);
  static Transform rot_z(double angle);
  /// Frame B = frame A rotated by angle about the unit axis (in A); throws on a zero axis.
  static Transform axis_angle(const Vec3& axis, double angle);
  /// Frame B has orientation q (body-to-A rotation, must be unit to 1e-9) and origin p in A.
  static Transform from_quaternion(const Quat& q, const Vec3& p = Vec3::Zero());
  /// Frame B = frame A translated by p (in A).
  static Transform translation(const Vec3& p);
  /// From the pose of B in A: rotation R (B's axes in A) and origin p. No check of R.
  static Transform from_pose(const Mat3& R, const Vec3& p) { return Transform(R.transpose(), p); }
  /// From roll-pitch-yaw (URDF: R = Rz(yaw) Ry(pitch) Rx(roll)) and xyz of B in A.
  static Transform from_rpy_xyz(const Vec3& rpy, const Vec3& xyz);

  // ---- action on spatial vectors (one implementation, in the library: src/spatial/ops.hpp of the source tree) ----
  /// X m: motion in A -> motion in B.
  Motion apply(const Motion& m) const;
  /// X* f: force in A -> force in B.
  Force apply(const Force& f) const;
  /// X^-1 m: motion in B -> motion in A.
  Motion apply_inverse(const Motion& m) const;
  /// X*^-1 f = X^T f: force in B -> force in A.
  Force apply_inverse(const Force& f) const;

  // ---- algebra ----
  /// Composition: (C_X_B * B_X_A) = C_X_A.
  Transform operator*(const Transform& a) const { return Transform(E * a.E, a.r + a.E.transpose() * r); }
  Transform inverse() const { return Transform(E.transpose(), -(E * r)); }

  // ---- conversions ----
  Mat6 matrix_motion() const;  ///< X as a 6x6 matrix
  Mat6 matrix_force() const;   ///< X* as a 6x6 matrix
  /// Pose of B in A as a 4x4 homogeneous matrix [R p; 0 1] with R = E^T, p = r.
  Eigen::Matrix4d homogeneous() const;
  Mat3 rotation() const { return E.transpose(); }  ///< B's axes in A
  const Vec3& translation() const { return r; }    ///< B's origin in A

  bool isApprox(const Transform& o, double tol = 1e-12) const {
    return E.isApprox(o.E, tol) && (r - o.r).norm() <= tol * std::max(1.0, r.norm());
  }
};

std::ostream& operator<<(std::ostream& os, const Transform& X);

}  // namespace plucker
