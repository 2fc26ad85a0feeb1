// Basic Eigen aliases and 3-D helpers shared by the spatial layer.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace plucker {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
using Quat = Eigen::Quaterniond;

/// The 3x3 cross-product matrix: skew(a) * b == a.cross(b).
inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0.0, -a.z(), a.y(),  //
      a.z(), 0.0, -a.x(),   //
      -a.y(), a.x(), 0.0;
  return s;
}

/// True when every coefficient is finite (no NaN, no infinity).
template <class Derived>
inline bool all_finite(const Eigen::MatrixBase<Derived>& m) {
  return m.allFinite();
}

}  // namespace plucker
