// Out-of-line parts of the spatial algebra: constructors with checks, 6x6 conversions,
// printing, and the operations on the public types, which are those of src/spatial/ops.hpp
// (the algorithms use ops.hpp directly, inline).
#include "plucker/spatial.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <ostream>
#include <sstream>

#include "base/text.hpp"
#include "plucker/errors.hpp"
#include "plucker/spatial/frames.hpp"
#include "spatial/inertia_ops.hpp"

namespace plucker {

namespace {
const Eigen::IOFormat kRow(Eigen::FullPrecision, Eigen::DontAlignCols, ", ", ", ", "", "", "[", "]");
}

std::ostream& operator<<(std::ostream& os, const Motion& m) {
  return os << "Motion(angular=" << m.angular.transpose().format(kRow)
            << ", linear=" << m.linear.transpose().format(kRow) << ")";
}
std::ostream& operator<<(std::ostream& os, const Force& f) {
  return os << "Force(moment=" << f.angular.transpose().format(kRow) << ", force=" << f.linear.transpose().format(kRow)
            << ")";
}
std::ostream& operator<<(std::ostream& os, const Transform& X) {
  return os << "Transform(E=" << X.E.format(kRow) << ", r=" << X.r.transpose().format(kRow) << ")";
}
std::ostream& operator<<(std::ostream& os, const RigidBodyInertia& I) {
  return os << "RigidBodyInertia(mass=" << I.mass() << ", com=" << I.com().transpose().format(kRow)
            << ", inertia_origin=" << I.inertia_origin().format(kRow) << ")";
}

// ---------------------------------------------------------------- Transform
Transform Transform::rot_x(double a) {
  const double c = std::cos(a), s = std::sin(a);
  Mat3 E;
  E << 1, 0, 0, 0, c, s, 0, -s, c;
  return Transform(E, Vec3::Zero());
}
Transform Transform::rot_y(double a) {
  const double c = std::cos(a), s = std::sin(a);
  Mat3 E;
  E << c, 0, -s, 0, 1, 0, s, 0, c;
  return Transform(E, Vec3::Zero());
}
Transform Transform::rot_z(double a) {
  const double c = std::cos(a), s = std::sin(a);
  Mat3 E;
  E << c, s, 0, -s, c, 0, 0, 0, 1;
  return Transform(E, Vec3::Zero());
}
Transform Transform::axis_angle(const Vec3& axis, double angle) {
  const double n = axis.norm();
  if (!axis.allFinite() || !std::isfinite(angle))
    throw InvalidArgument("Transform::axis_angle: non-finite axis or angle");
  if (n < 1e-12) throw InvalidArgument("Transform::axis_angle: zero-length axis");
  const Mat3 R = Eigen::AngleAxisd(angle, axis / n).toRotationMatrix();
  return Transform(R.transpose(), Vec3::Zero());
}
Transform Transform::from_quaternion(const Quat& q, const Vec3& p) {
  if (!q.coeffs().allFinite() || !p.allFinite()) throw InvalidArgument("Transform::from_quaternion: non-finite value");
  if (std::abs(q.norm() - 1.0) > 1e-9) {
    std::ostringstream msg;
    msg << "Transform::from_quaternion: quaternion is not unit (norm " << q.norm() << ")";
    throw InvalidArgument(msg.str());
  }
  return Transform(q.toRotationMatrix().transpose(), p);
}
Transform Transform::translation(const Vec3& p) { return Transform(Mat3::Identity(), p); }
Transform Transform::from_rpy_xyz(const Vec3& rpy, const Vec3& xyz) {
  const Mat3 R = (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
                  Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
                     .toRotationMatrix();
  return from_pose(R, xyz);
}
Mat6 Transform::matrix_motion() const {
  Mat6 X = Mat6::Zero();
  X.topLeftCorner<3, 3>() = E;
  X.bottomLeftCorner<3, 3>() = -E * skew(r);
  X.bottomRightCorner<3, 3>() = E;
  return X;
}
Mat6 Transform::matrix_force() const {
  Mat6 X = Mat6::Zero();
  X.topLeftCorner<3, 3>() = E;
  X.topRightCorner<3, 3>() = -E * skew(r);
  X.bottomRightCorner<3, 3>() = E;
  return X;
}
Eigen::Matrix4d Transform::homogeneous() const {
  Eigen::Matrix4d T = Eigen::Matrix4d::Identity();
  T.topLeftCorner<3, 3>() = E.transpose();
  T.topRightCorner<3, 1>() = r;
  return T;
}

// ---------------------------------------------------------------- inertia
std::string InertiaCheck::describe() const {
  std::ostringstream s;
  auto add = [&](const char* what) { s << (s.tellp() > 0 ? "; " : "") << what; };
  // With a NaN/inf input the other checks were not evaluated (check_inertia sets their
  // flags to false), so listing them would blame e.g. a NaN mass as "negative mass".
  if (!finite) return "non-finite value (mass, COM or inertia tensor)";
  if (!mass_non_negative)
    add("negative mass");
  else if (!mass_positive)
    add("zero mass");
  if (!symmetric) add("inertia tensor not symmetric");
  if (!positive_semidefinite)
    add("inertia tensor not positive semi-definite");
  else if (!positive_definite)
    add("inertia tensor singular (point mass or rank-deficient)");
  if (!triangle_inequality) add("principal moments violate the triangle inequality");
  return s.str();
}

InertiaCheck check_inertia(double mass, const Vec3& com, const Mat3& inertia_com, double tol) {
  InertiaCheck c;
  c.finite = std::isfinite(mass) && com.allFinite() && inertia_com.allFinite();
  if (!c.finite) {
    c.mass_non_negative = c.mass_positive = c.symmetric = c.positive_semidefinite = c.positive_definite =
        c.triangle_inequality = false;
    return c;
  }
  c.mass_non_negative = mass >= 0.0;
  c.mass_positive = mass > 0.0;
  const double scale = inertia_com.cwiseAbs().maxCoeff();
  c.symmetric = (inertia_com - inertia_com.transpose()).cwiseAbs().maxCoeff() <= tol * scale;
  const Mat3 sym = 0.5 * (inertia_com + inertia_com.transpose());
  Eigen::SelfAdjointEigenSolver<Mat3> eig(sym, Eigen::EigenvaluesOnly);
  c.principal_moments = eig.eigenvalues();  // ascending
  const Vec3& p = c.principal_moments;
  c.positive_semidefinite = p(0) >= -tol * scale;
  c.positive_definite = p(0) > tol * scale;
  c.triangle_inequality = p(2) <= p(0) + p(1) + tol * scale;
  return c;
}

RigidBodyInertia RigidBodyInertia::from_mass_com_inertia(double mass, const Vec3& com, const Mat3& inertia_com) {
  const InertiaCheck c = check_inertia(mass, com, inertia_com);
  if (!c.valid()) throw InvalidArgument("RigidBodyInertia: invalid rigid body: " + c.describe());
  return unchecked(mass, com, inertia_com);
}
RigidBodyInertia RigidBodyInertia::unchecked(double mass, const Vec3& com, const Mat3& inertia_com) {
  // Parallel-axis theorem: Ibar = inertia_com + m cx cx^T = inertia_com - m cx cx.
  const Mat3 cx = skew(com);
  return from_parameters(mass, mass * com, inertia_com - mass * cx * cx);
}
RigidBodyInertia RigidBodyInertia::from_matrix(const Mat6& M, double tol) {
  const double m = M(3, 3);
  const Mat3 hx = M.topRightCorner<3, 3>();
  const Vec3 h(hx(2, 1), hx(0, 2), hx(1, 0));
  Mat6 expected = Mat6::Zero();
  expected.topLeftCorner<3, 3>() = M.topLeftCorner<3, 3>();
  expected.topRightCorner<3, 3>() = skew(h);
  expected.bottomLeftCorner<3, 3>() = skew(h).transpose();
  expected.bottomRightCorner<3, 3>() = m * Mat3::Identity();
  const double scale = std::max(1.0, M.cwiseAbs().maxCoeff());
  if (!M.allFinite() || (M - expected).cwiseAbs().maxCoeff() > tol * scale ||
      (M - M.transpose()).cwiseAbs().maxCoeff() > tol * scale)
    throw InvalidArgument("RigidBodyInertia::from_matrix: not of the form [Ibar hx; hx^T m1]");
  return from_parameters(m, h, M.topLeftCorner<3, 3>());
}
Mat3 RigidBodyInertia::inertia_com() const {
  if (m_ <= 0.0) return Ibar_;
  const Mat3 cx = skew(com());
  return Ibar_ + m_ * cx * cx;
}
Mat6 RigidBodyInertia::matrix() const {
  Mat6 M;
  const Mat3 hx = skew(h_);
  M.topLeftCorner<3, 3>() = Ibar_;
  M.topRightCorner<3, 3>() = hx;
  M.bottomLeftCorner<3, 3>() = hx.transpose();
  M.bottomRightCorner<3, 3>() = m_ * Mat3::Identity();
  return M;
}
// ---------------------------------------------------------------- operations (ops.hpp)
Motion Transform::apply(const Motion& m) const { return ops::apply(*this, m); }
Force Transform::apply(const Force& f) const { return ops::apply(*this, f); }
Motion Transform::apply_inverse(const Motion& m) const { return ops::apply_inverse(*this, m); }
Force Transform::apply_inverse(const Force& f) const { return ops::apply_inverse(*this, f); }
Motion cross(const Motion& m, const Motion& n) { return ops::crm(m, n); }
Force cross(const Motion& m, const Force& f) { return ops::crf(m, f); }
Force RigidBodyInertia::operator*(const Motion& v) const { return ops::times(*this, v); }
RigidBodyInertia RigidBodyInertia::transformed_inverse(const Transform& X) const {
  RigidBodyInertia out;
  ops::add_congruence(X, *this, out);
  return out;
}
void RigidBodyInertia::add_transformed_inverse_to(const Transform& X, RigidBodyInertia& target) const {
  ops::add_congruence(X, *this, target);
}
Force ArticulatedBodyInertia::operator*(const Motion& v) const { return ops::times6(*this, v); }
void ArticulatedBodyInertia::add_transformed_inverse_to(const Transform& X, ArticulatedBodyInertia& target) const {
  ops::add_congruence(X, *this, target);
}
ArticulatedBodyInertia ArticulatedBodyInertia::transformed_inverse(const Transform& X) const {
  ArticulatedBodyInertia out;
  ops::add_congruence(X, *this, out);
  return out;
}

RigidBodyInertia RigidBodyInertia::transformed(const Transform& X) const {
  // RBDA Table 2.8: h' = E(h - m r); Ibar' = E(Ibar + rx hx + (h - m r)x rx) E^T, with the
  // skew products expanded by a x b x = b a^T - (a.b) 1.
  const Vec3 hr = h_ - m_ * X.r;
  Mat3 inner = Ibar_;
  inner.noalias() += h_ * X.r.transpose() + X.r * hr.transpose();
  inner.diagonal().array() -= X.r.dot(h_) + X.r.dot(hr);
  return from_parameters(m_, X.E * hr, X.E * inner * X.E.transpose());
}

}  // namespace plucker

namespace plucker {

std::string to_string(ReferenceFrame frame) {
  switch (frame) {
    case ReferenceFrame::World:
      return "world";
    case ReferenceFrame::Local:
      return "local";
    case ReferenceFrame::LocalWorldAligned:
      return "local_world_aligned";
  }
  return "unknown";
}

ReferenceFrame parse_reference_frame(const std::string& name) {
  if (name == "world") return ReferenceFrame::World;
  if (name == "local") return ReferenceFrame::Local;
  if (name == "local_world_aligned") return ReferenceFrame::LocalWorldAligned;
  throw InvalidArgument("unknown reference frame '" + text::printable(name) +
                        "' (expected 'world', 'local' or 'local_world_aligned')");
}

}  // namespace plucker
