// SO(3) / SE(3) exponential, logarithm and Jacobians (plucker/spatial/lie.hpp).
#include "plucker/spatial/lie.hpp"

#include <cmath>

#include "plucker/spatial/vectors.hpp"

namespace plucker {
namespace {

/// Q(omega, v), the lower-left block of the SE(3) left Jacobian [J_l 0; Q J_l].
Mat3 se3_jacobian_block(const Vec3& omega, const Vec3& v) {
  const double t = omega.norm();
  const Mat3 W = skew(omega), V = skew(v);
  if (t < 1.0) {
    // sum_k L_k / (k+1)!, L_k the lower-left block of ad^k, ad = [W 0; V W]:
    // L_1 = V, L_k = V W^(k-1) + W L_(k-1). For t < 1 the k-th term is below |v| / (k+1)!.
    Mat3 Q = Mat3::Zero(), L = V, Wpow = Mat3::Identity();
    double factorial = 2.0;  // (k+1)!
    for (int k = 1; k <= 22; ++k) {
      Q += L / factorial;
      Wpow = Wpow * W;       // W^k
      L = V * Wpow + W * L;  // L_(k+1)
      factorial *= k + 2.0;
    }
    return Q;
  }
  // Barfoot (2017) Eq. 7.86, in the angular-first order.
  const double t2 = t * t, s = std::sin(t), c = std::cos(t);
  const double a = (t - s) / (t2 * t);
  const double b = (t2 + 2.0 * c - 2.0) / (2.0 * t2 * t2);
  const double d = (2.0 * t - 3.0 * s + t * c) / (2.0 * t2 * t2 * t);
  const Mat3 WV = W * V, VW = V * W, WVW = WV * W;
  return 0.5 * V + a * (WV + VW + WVW) + b * (W * WV + VW * W - 3.0 * WVW) + d * (WVW * W + W * WVW);
}

}  // namespace

Quat quaternion_exp(const Vec3& w) {
  const double t = w.norm();
  const double half = 0.5 * t;
  // sin(t/2)/t, with its Taylor series near 0.
  const double k = t < 1e-6 ? 0.5 - t * t / 48.0 : std::sin(half) / t;
  return Quat(std::cos(half), k * w.x(), k * w.y(), k * w.z());
}

Vec3 quaternion_log(const Quat& q_in) {
  Quat q = q_in;
  if (q.w() < 0.0) q.coeffs() = -q.coeffs();  // shortest rotation: angle in [0, pi]
  const Vec3 v = q.vec();
  const double s = v.norm();
  const double t = 2.0 * std::atan2(s, q.w());
  // k = t / s = 2 atan(s / w) / s, with its series 2/w (1 - s^2 / (3 w^2)) near s = 0
  // (= 2 (1 + t^2/24) = t / sin(t/2) for a unit quaternion).
  const double k = s < 1e-8 ? 2.0 / q.w() * (1.0 - s * s / (3.0 * q.w() * q.w())) : t / s;
  return k * v;
}

Mat3 so3_exp(const Vec3& omega) { return quaternion_exp(omega).toRotationMatrix(); }

Vec3 so3_log(const Mat3& R) { return quaternion_log(Quat(R)); }

Mat3 so3_left_jacobian(const Vec3& w) {
  const double t = w.norm();
  const Mat3 W = skew(w);
  double a, b;
  if (t < 1e-5) {
    a = 0.5 - t * t / 24.0;
    b = 1.0 / 6.0 - t * t / 120.0;
  } else {
    const double s = std::sin(0.5 * t);
    a = 2.0 * s * s / (t * t);  // (1 - cos t) / t^2 without the cancellation of 1 - cos t
    b = (t - std::sin(t)) / (t * t * t);
  }
  return Mat3::Identity() + a * W + b * W * W;
}

Mat3 so3_left_jacobian_inverse(const Vec3& w) {
  const double t = w.norm();
  const Mat3 W = skew(w);
  const double c =
      t < 1e-5 ? 1.0 / 12.0 + t * t / 720.0 : 1.0 / (t * t) - (1.0 + std::cos(t)) / (2.0 * t * std::sin(t));
  return Mat3::Identity() - 0.5 * W + c * W * W;
}

Mat3 so3_right_jacobian(const Vec3& w) { return so3_left_jacobian(-w); }
Mat3 so3_right_jacobian_inverse(const Vec3& w) { return so3_left_jacobian_inverse(-w); }

Eigen::Matrix4d se3_exp(const Vec6& twist) {
  const Vec3 w = twist.head<3>(), v = twist.tail<3>();
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T.topLeftCorner<3, 3>() = so3_exp(w);
  T.topRightCorner<3, 1>() = so3_left_jacobian(w) * v;
  return T;
}

Vec6 se3_log(const Eigen::Matrix4d& T) {
  const Vec3 w = so3_log(T.topLeftCorner<3, 3>());
  Vec6 out;
  out << w, so3_left_jacobian_inverse(w) * T.topRightCorner<3, 1>();
  return out;
}

Mat6 se3_left_jacobian(const Vec6& twist) {
  const Vec3 w = twist.head<3>();
  Mat6 J = Mat6::Zero();
  J.topLeftCorner<3, 3>() = J.bottomRightCorner<3, 3>() = so3_left_jacobian(w);
  J.bottomLeftCorner<3, 3>() = se3_jacobian_block(w, twist.tail<3>());
  return J;
}

Mat6 se3_left_jacobian_inverse(const Vec6& twist) {
  const Vec3 w = twist.head<3>();
  const Mat3 Ainv = so3_left_jacobian_inverse(w);
  Mat6 J = Mat6::Zero();
  J.topLeftCorner<3, 3>() = J.bottomRightCorner<3, 3>() = Ainv;
  J.bottomLeftCorner<3, 3>() = -Ainv * se3_jacobian_block(w, twist.tail<3>()) * Ainv;
  return J;
}

Mat6 se3_right_jacobian(const Vec6& twist) { return se3_left_jacobian(-twist); }
Mat6 se3_right_jacobian_inverse(const Vec6& twist) { return se3_left_jacobian_inverse(-twist); }

}  // namespace plucker
