// The pieces the procedural builders share (builders.cpp, loop_builders.cpp): the solid shapes'
// inertias, random perturbations, joint limits.
#pragma once

#include <cmath>
#include <limits>
#include <random>

#include "plucker/model/builders.hpp"

namespace plucker::builder_parts {
constexpr double kInf = std::numeric_limits<double>::infinity();
using Rng = std::mt19937_64;

inline double uniform(Rng& rng, double lo, double hi) { return detail::uniform(rng, lo, hi); }
/// 1 +- fraction.
inline double perturb(Rng& rng, double fraction) { return 1.0 + uniform(rng, -fraction, fraction); }

/// Solid cylinder (rod) of mass m, length L and radius rad along unit direction dir, COM at com.
inline RigidBodyInertia rod(double m, double L, double rad, const Vec3& dir, const Vec3& com) {
  const Vec3 d = dir.normalized();
  const Mat3 ddT = d * d.transpose();
  const double axial = 0.5 * m * rad * rad;
  const double transverse = m * (3.0 * rad * rad + L * L) / 12.0;
  const Mat3 Ic = axial * ddT + transverse * (Mat3::Identity() - ddT);
  return RigidBodyInertia::from_mass_com_inertia(m, com, Ic);
}

/// Solid box of mass m and edge lengths dims (along the body x, y, z axes), COM at com.
inline RigidBodyInertia box(double m, const Vec3& dims, const Vec3& com) {
  const Vec3 s = dims.cwiseProduct(dims);
  const Mat3 Ic = (m / 12.0) * Vec3(s.y() + s.z(), s.x() + s.z(), s.x() + s.y()).asDiagonal().toDenseMatrix();
  return RigidBodyInertia::from_mass_com_inertia(m, com, Ic);
}

/// Rotation matrix exp(w) of a rotation vector.
inline Mat3 rotation(const Vec3& w) { return detail::quat_exp(w).toRotationMatrix(); }

inline Vec3 random_unit(Rng& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vec3 v;
  do v = Vec3(n(rng), n(rng), n(rng));
  while (v.norm() < 1e-3);
  return v.normalized();
}

/// Limits of a 1-DoF joint.
inline JointLimits limits1(double lower, double upper, double velocity, double effort) {
  JointLimits l;
  l.lower = VecX::Constant(1, lower);
  l.upper = VecX::Constant(1, upper);
  l.velocity = VecX::Constant(1, velocity);
  l.effort = VecX::Constant(1, effort);
  return l;
}

/// Limits (lower, upper) mirrored for the right side of the body: roll/yaw ranges swap sign.
inline JointLimits mirrored(const JointLimits& l, bool mirror) {
  if (!mirror) return l;
  JointLimits m = l;
  m.lower = -l.upper;
  m.upper = -l.lower;
  return m;
}

/// A small link between co-located joints (e.g. inside a 3-DoF hip).
inline RigidBodyInertia small_link(double m, double size) { return box(m, Vec3::Constant(size), Vec3::Zero()); }

inline Transform xlt(const Vec3& p) { return Transform::translation(p); }

}  // namespace plucker::builder_parts
