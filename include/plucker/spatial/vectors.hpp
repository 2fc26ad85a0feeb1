// Spatial motion (M6) and force (F6) vectors, Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA
// 2000, §3, and Featherstone, "Plucker Basis Vectors", ICRA 2006. The two are dual spaces: the only inner product
// between them is dot(Motion, Force), the power of a force on a motion.
//
// Storage convention everywhere: [angular; linear].
//   Motion: [omega; v]   v = velocity of the body-fixed point at the frame origin
//   Force:  [n; f]       n = moment about the frame origin
#pragma once

#include <iosfwd>

#include "plucker/spatial/types.hpp"

namespace plucker {

/// A spatial motion vector (velocity, acceleration, motion-subspace column), in M6.
struct Motion {
  Vec3 angular = Vec3::Zero();
  Vec3 linear = Vec3::Zero();

  Motion() = default;
  Motion(const Vec3& angular_, const Vec3& linear_) : angular(angular_), linear(linear_) {}
  /// From a 6-vector [angular; linear].
  explicit Motion(const Vec6& v) : angular(v.head<3>()), linear(v.tail<3>()) {}

  static Motion Zero() { return Motion(); }
  Vec6 vector() const {
    Vec6 out;
    out << angular, linear;
    return out;
  }
  void setZero() {
    angular.setZero();
    linear.setZero();
  }

  Motion operator+(const Motion& o) const { return {angular + o.angular, linear + o.linear}; }
  Motion operator-(const Motion& o) const { return {angular - o.angular, linear - o.linear}; }
  Motion operator-() const { return {-angular, -linear}; }
  Motion operator*(double s) const { return {angular * s, linear * s}; }
  Motion& operator+=(const Motion& o) {
    angular += o.angular;
    linear += o.linear;
    return *this;
  }
  Motion& operator-=(const Motion& o) {
    angular -= o.angular;
    linear -= o.linear;
    return *this;
  }
  bool isApprox(const Motion& o, double tol = 1e-12) const { return vector().isApprox(o.vector(), tol); }
};

/// A spatial force vector (force, momentum, impulse), in F6.
struct Force {
  Vec3 angular = Vec3::Zero();  ///< moment about the frame origin
  Vec3 linear = Vec3::Zero();   ///< force

  Force() = default;
  Force(const Vec3& moment, const Vec3& force) : angular(moment), linear(force) {}
  /// From a 6-vector [moment; force].
  explicit Force(const Vec6& f) : angular(f.head<3>()), linear(f.tail<3>()) {}

  static Force Zero() { return Force(); }
  Vec6 vector() const {
    Vec6 out;
    out << angular, linear;
    return out;
  }
  void setZero() {
    angular.setZero();
    linear.setZero();
  }

  Force operator+(const Force& o) const { return {angular + o.angular, linear + o.linear}; }
  Force operator-(const Force& o) const { return {angular - o.angular, linear - o.linear}; }
  Force operator-() const { return {-angular, -linear}; }
  Force operator*(double s) const { return {angular * s, linear * s}; }
  Force& operator+=(const Force& o) {
    angular += o.angular;
    linear += o.linear;
    return *this;
  }
  Force& operator-=(const Force& o) {
    angular -= o.angular;
    linear -= o.linear;
    return *this;
  }
  bool isApprox(const Force& o, double tol = 1e-12) const { return vector().isApprox(o.vector(), tol); }
};

inline Motion operator*(double s, const Motion& m) { return m * s; }
inline Force operator*(double s, const Force& f) { return f * s; }

/// The scalar product M6 x F6 -> R (power of f on m). The only one there is.
inline double dot(const Motion& m, const Force& f) { return m.angular.dot(f.angular) + m.linear.dot(f.linear); }
inline double dot(const Force& f, const Motion& m) { return dot(m, f); }

/// Motion cross product m x n (crm(m) n): the derivative of n moving with velocity m.
Motion cross(const Motion& m, const Motion& n);
/// Force cross product m x* f (crf(m) f).
Force cross(const Motion& m, const Force& f);

/// 6x6 matrix of the motion cross product: crm(m) * n == cross(m, n).
inline Mat6 crm(const Motion& m) {
  Mat6 out = Mat6::Zero();
  out.topLeftCorner<3, 3>() = skew(m.angular);
  out.bottomLeftCorner<3, 3>() = skew(m.linear);
  out.bottomRightCorner<3, 3>() = skew(m.angular);
  return out;
}

/// 6x6 matrix of the force cross product: crf(m) * f == cross(m, f); crf(m) == -crm(m)^T.
inline Mat6 crf(const Motion& m) {
  Mat6 out = Mat6::Zero();
  out.topLeftCorner<3, 3>() = skew(m.angular);
  out.topRightCorner<3, 3>() = skew(m.linear);
  out.bottomRightCorner<3, 3>() = skew(m.angular);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Motion& m);
std::ostream& operator<<(std::ostream& os, const Force& f);

}  // namespace plucker
