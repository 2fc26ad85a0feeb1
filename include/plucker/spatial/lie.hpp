// SO(3) and SE(3): exponential, logarithm and their Jacobians; quaternion helpers.
//
// Conventions (documentation: Conventions): a twist is [omega; v] (angular first); a pose is a 4x4
// homogeneous matrix T = [R p; 0 1]; quaternions are stored [x y z w]. exp(xi) is the pose
// reached by moving with the constant body twist xi for unit time: R = exp(omega x),
// p = J_l(omega) v. The Jacobians are those of the exponential:
//   exp(xi + d) ~ exp(J_l(xi) d) exp(xi) ~ exp(xi) exp(J_r(xi) d),   J_r(xi) = J_l(-xi),
// and the inverses are the Jacobians of the logarithm: log(exp(d) T) ~ log(T) + J_l^-1 d.
// Closed forms: Barfoot, "State Estimation for Robotics" (2017), §7.1.3-7.1.5 (the SE(3)
// Jacobian's off-diagonal block Q); its series, sum_k ad(xi)^k / (k+1)!, for small rotations.
#pragma once

#include "plucker/spatial/types.hpp"

namespace plucker {

/// R = exp(omega x) (Rodrigues), exact and small-angle safe.
Mat3 so3_exp(const Vec3& omega);
/// omega with exp(omega x) = R, |omega| in [0, pi]. R must be a rotation (not checked here).
Vec3 so3_log(const Mat3& R);
/// J_l(omega) = I + (1 - cos t)/t^2 W + (t - sin t)/t^3 W^2 (W = omega x, t = |omega|) and inverse.
Mat3 so3_left_jacobian(const Vec3& omega);
Mat3 so3_left_jacobian_inverse(const Vec3& omega);
/// J_r(omega) = J_l(-omega) = J_l(omega)^T, and inverse.
Mat3 so3_right_jacobian(const Vec3& omega);
Mat3 so3_right_jacobian_inverse(const Vec3& omega);

/// T = exp([omega; v]) as a 4x4 pose.
Eigen::Matrix4d se3_exp(const Vec6& twist);
/// The twist [omega; v] with exp(twist) = T, |omega| in [0, pi]. T must be a pose (not checked).
Vec6 se3_log(const Eigen::Matrix4d& T);
/// The SE(3) Jacobians (6 x 6, rows and columns [angular; linear]) and their inverses.
Mat6 se3_left_jacobian(const Vec6& twist);
Mat6 se3_left_jacobian_inverse(const Vec6& twist);
Mat6 se3_right_jacobian(const Vec6& twist);
Mat6 se3_right_jacobian_inverse(const Vec6& twist);

/// Unit quaternion exp(omega / 2) (the rotation exp(omega x)) and its log, |omega| in [0, pi].
Quat quaternion_exp(const Vec3& omega);
Vec3 quaternion_log(const Quat& q);

}  // namespace plucker
