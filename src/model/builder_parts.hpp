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

// Draw order. C++ leaves unspecified the order in which a call's arguments (and the operands
// of * and +) are evaluated, so Vec3(uniform(rng, ..), uniform(rng, ..), uniform(rng, ..)) fills
// x, y, z in a compiler-dependent order: g++ 12 evaluated such arguments right to left (z drawn
// first), clang++ 14 left to right, and the two built different models from one seed. Every
// draw in the builders is therefore its own statement, in the order g++ 12 used, so that the
// models of every earlier test, table and study (all built with g++) stay bit-identical.

/// Three draws from U(lo, hi), sequenced z, then y, then x.
inline Vec3 uniform_vec3(Rng& rng, double lo, double hi) {
  const double z = uniform(rng, lo, hi);
  const double y = uniform(rng, lo, hi);
  const double x = uniform(rng, lo, hi);
  return Vec3(x, y, z);
}

/// A random unit vector (normalised standard normal draws, sequenced z, then y, then x).
inline Vec3 random_unit(Rng& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vec3 v;
  do {
    const double z = n(rng);
    const double y = n(rng);
    const double x = n(rng);
    v = Vec3(x, y, z);
  } while (v.norm() < 1e-3);
  return v.normalized();
}

/// random_unit(rng) * U(lo, hi): the magnitude is drawn first, then the direction.
inline Vec3 random_vector(Rng& rng, double lo, double hi) {
  const double magnitude = uniform(rng, lo, hi);
  const Vec3 direction = random_unit(rng);
  return direction * magnitude;
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
