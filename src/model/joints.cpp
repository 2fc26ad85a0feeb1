// Out-of-line joint code: Lie-group operations of the quaternion/planar joints,
// factories with validation.
#include "plucker/model/joints.hpp"

#include <Eigen/SVD>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

#include "model/joint_kernels.hpp"
#include "plucker/errors.hpp"

namespace plucker {
namespace detail {

void se3_exp(const Motion& twist, Mat3& R, Vec3& p) {
  R = quat_exp(twist.angular).toRotationMatrix();
  p = so3_left_jacobian(twist.angular) * twist.linear;
}

Quat random_quaternion(std::mt19937_64& rng) {
  // Shoemake's uniform sampling of SO(3).
  const double u1 = uniform(rng, 0.0, 1.0), u2 = uniform(rng, 0.0, 2.0 * std::numbers::pi),
               u3 = uniform(rng, 0.0, 2.0 * std::numbers::pi);
  const double a = std::sqrt(1.0 - u1), b = std::sqrt(u1);
  return Quat(a * std::cos(u2), a * std::sin(u2), b * std::sin(u3), b * std::cos(u3));
}

double sample_bound(double limit, double fallback) { return std::isfinite(limit) ? limit : fallback; }

}  // namespace detail

// ---------------------------------------------------------------- planar
namespace {
// SE(2) left Jacobian V(t) = a 1 + b J, J = [0 -1; 1 0]: displacement of a body moving
// with constant body twist (vx, vy, omega) for unit time is V(omega) (vx, vy).
void se2_coeffs(double t, double& a, double& b) {
  if (std::abs(t) < 1e-6) {
    a = 1.0 - t * t / 6.0;
    b = 0.5 * t;
  } else {
    a = std::sin(t) / t;
    b = (1.0 - std::cos(t)) / t;
  }
}
}  // namespace

void JointPlanar::integrate(const double* q, const double* v, double dt, double* out) const {
  const double t = v[2] * dt;
  double a, b;
  se2_coeffs(t, a, b);
  const double dx = (a * v[0] - b * v[1]) * dt, dy = (b * v[0] + a * v[1]) * dt;
  const double c = q[2], s = q[3];
  out[0] = q[0] + c * dx - s * dy;
  out[1] = q[1] + s * dx + c * dy;
  const double ct = std::cos(t), st = std::sin(t);
  out[2] = c * ct - s * st;
  out[3] = s * ct + c * st;
}

void JointPlanar::difference(const double* q0, const double* q1, double* v) const {
  const double t = std::atan2(q0[2] * q1[3] - q0[3] * q1[2], q0[2] * q1[2] + q0[3] * q1[3]);
  const double px = q1[0] - q0[0], py = q1[1] - q0[1];
  const double dx = q0[2] * px + q0[3] * py, dy = -q0[3] * px + q0[2] * py;  // R(theta0)^T dp
  double a, b;
  se2_coeffs(t, a, b);
  const double n = a * a + b * b;  // V^-1 = (a 1 - b J) / (a^2 + b^2)
  v[0] = (a * dx + b * dy) / n;
  v[1] = (-b * dx + a * dy) / n;
  v[2] = t;
}

void JointPlanar::random(std::mt19937_64& rng, const double* lower, const double* upper, double fallback,
                         double* q) const {
  q[0] = detail::uniform(rng, detail::sample_bound(lower[0], -fallback), detail::sample_bound(upper[0], fallback));
  q[1] = detail::uniform(rng, detail::sample_bound(lower[1], -fallback), detail::sample_bound(upper[1], fallback));
  const double t = detail::uniform(rng, -std::numbers::pi, std::numbers::pi);
  q[2] = std::cos(t);
  q[3] = std::sin(t);
}

// ---------------------------------------------------------------- spherical, free-flyer
void JointSpherical::integrate(const double* q, const double* v, double dt, double* out) const {
  const Vec3 w(v[0] * dt, v[1] * dt, v[2] * dt);
  detail::quat_to((detail::quat_from(q) * detail::quat_exp(w)).normalized(), out);
}

void JointSpherical::difference(const double* q0, const double* q1, double* v) const {
  Eigen::Map<Vec3>{v} = detail::quat_log(detail::quat_from(q0).conjugate() * detail::quat_from(q1));
}

void JointFreeFlyer::integrate(const double* q, const double* v, double dt, double* out) const {
  const Motion twist(Vec3(v[0], v[1], v[2]) * dt, Vec3(v[3], v[4], v[5]) * dt);
  const Quat Q = detail::quat_from(q + 3);
  const Vec3 dp = so3_left_jacobian(twist.angular) * twist.linear;
  Eigen::Map<Vec3>{out} = Vec3(q[0], q[1], q[2]) + Q.toRotationMatrix() * dp;
  detail::quat_to((Q * detail::quat_exp(twist.angular)).normalized(), out + 3);
}

void JointFreeFlyer::difference(const double* q0, const double* q1, double* v) const {
  const Quat Q0 = detail::quat_from(q0 + 3);
  const Quat Qrel = Q0.conjugate() * detail::quat_from(q1 + 3);
  const Vec3 w = detail::quat_log(Qrel);
  const Vec3 p_rel = Q0.toRotationMatrix().transpose() * (Vec3(q1[0], q1[1], q1[2]) - Vec3(q0[0], q0[1], q0[2]));
  Eigen::Map<Vec3>{v} = w;
  Eigen::Map<Vec3>{v + 3} = so3_left_jacobian_inverse(w) * p_rel;
}

void JointFreeFlyer::random(std::mt19937_64& rng, const double* lower, const double* upper, double fallback,
                            double* q) const {
  for (int k = 0; k < 3; ++k)
    q[k] = detail::uniform(rng, detail::sample_bound(lower[k], -fallback), detail::sample_bound(upper[k], fallback));
  detail::quat_to(detail::random_quaternion(rng), q + 3);
}

// ---------------------------------------------------------------- general
Transform JointGeneral::exp(const double* q) const {
  Mat3 R;
  Vec3 p;
  detail::se3_exp(Motion(Vec6(subspace * Eigen::Map<const VecX>(q, subspace.cols()))), R, p);
  return Transform::from_pose(R, p);
}

// ---------------------------------------------------------------- kinematics on double
// The members of JointKinematics, from the generic kernels (one joint library).
namespace {
/// compose() of the kernels for one state, with sin/cos of the joint's coordinates.
template <class J, class Tree>
Transform compose_one(const J& joint, const double* q, const Tree& X_tree) {
  double s[7] = {}, c[7] = {};
  for (int k = 0; k < joint.nq(); ++k) s[k] = std::sin(q[k]), c[k] = std::cos(q[k]);
  return ops::to_transform(ops::compose(joint, ops::JointQ<double>{q, s, c}, X_tree));
}
}  // namespace

template <class J>
Transform JointKinematics<J>::transform(const double* q) const {
  return compose_one(static_cast<const J&>(*this), q, Transform());
}
template <class J>
Transform JointKinematics<J>::compose(const double* q, const Transform& X_tree) const {
  return compose_one(static_cast<const J&>(*this), q, X_tree);
}
template <class J>
Motion JointKinematics<J>::motion(const double* v) const {
  Motion m;
  ops::add_motion(static_cast<const J&>(*this), m, v);
  return m;
}
template <class J>
void JointKinematics<J>::project(const Force& f, double* out) const {
  ops::project(static_cast<const J&>(*this), f, out);
}
template <class J>
MatS6 JointKinematics<J>::S() const {
  const J& joint = static_cast<const J&>(*this);
  MatS6 out = MatS6::Zero(6, joint.nv());
  for (int k = 0; k < joint.nv(); ++k) {
    double x[6] = {};
    x[k] = 1.0;
    out.col(k) = motion(x).vector();
  }
  return out;
}
template <class J>
MatS6 JointKinematics<J>::times_S(const Mat6& I6) const {
  return I6 * S();
}

template struct JointKinematics<JointFixed>;
template struct JointKinematics<JointRevoluteX>;
template struct JointKinematics<JointRevoluteY>;
template struct JointKinematics<JointRevoluteZ>;
template struct JointKinematics<JointRevolute>;
template struct JointKinematics<JointPrismaticX>;
template struct JointKinematics<JointPrismaticY>;
template struct JointKinematics<JointPrismaticZ>;
template struct JointKinematics<JointPrismatic>;
template struct JointKinematics<JointHelical>;
template struct JointKinematics<JointCylindrical>;
template struct JointKinematics<JointPlanar>;
template struct JointKinematics<JointSpherical>;
template struct JointKinematics<JointFreeFlyer>;
template struct JointKinematics<JointGeneral>;

// ---------------------------------------------------------------- factories
namespace {
Vec3 unit_axis(const Vec3& axis, const char* what) {
  if (!axis.allFinite()) {
    std::ostringstream m;
    m << what << ": non-finite axis";
    throw InvalidArgument(m.str());
  }
  const double n = axis.norm();
  if (n < 1e-12) {
    std::ostringstream m;
    m << what << ": zero-length axis";
    throw InvalidArgument(m.str());
  }
  return axis / n;
}
// Index of the coordinate axis `a` equals (exactly, after normalisation), or -1.
int coordinate_axis(const Vec3& a) {
  for (int k = 0; k < 3; ++k)
    if (a[k] == 1.0 && a[(k + 1) % 3] == 0.0 && a[(k + 2) % 3] == 0.0) return k;
  return -1;
}
}  // namespace

JointModel make_revolute(const Vec3& axis) {
  const Vec3 a = unit_axis(axis, "revolute joint");
  switch (coordinate_axis(a)) {
    case 0:
      return JointRevoluteX{};
    case 1:
      return JointRevoluteY{};
    case 2:
      return JointRevoluteZ{};
    default:
      return JointRevolute(a);
  }
}

JointModel make_prismatic(const Vec3& axis) {
  const Vec3 a = unit_axis(axis, "prismatic joint");
  switch (coordinate_axis(a)) {
    case 0:
      return JointPrismaticX{};
    case 1:
      return JointPrismaticY{};
    case 2:
      return JointPrismaticZ{};
    default:
      return JointPrismatic(a);
  }
}

JointModel make_helical(const Vec3& axis, double pitch) {
  if (!std::isfinite(pitch)) throw InvalidArgument("helical joint: non-finite pitch");
  JointHelical j;
  j.axis = unit_axis(axis, "helical joint");
  j.pitch = pitch;
  return j;
}

JointModel make_cylindrical(const Vec3& axis) {
  JointCylindrical j;
  j.axis = unit_axis(axis, "cylindrical joint");
  return j;
}

JointModel make_planar(const Vec3& normal) {
  const Vec3 n = unit_axis(normal, "planar joint");
  JointPlanar j;
  if (n != Vec3::UnitZ()) {
    // Any orthonormal basis (u, w, n): u orthogonal to n, w = n x u.
    Vec3 u = n.unitOrthogonal();
    j.basis.col(0) = u;
    j.basis.col(1) = n.cross(u);
    j.basis.col(2) = n;
  }
  return j;
}

JointModel make_general_joint(const MatS6& S) {
  const int d = static_cast<int>(S.cols());
  if (d < 1 || d > 6) throw InvalidArgument("general joint: the motion subspace needs 1 to 6 columns");
  if (!S.allFinite()) throw InvalidArgument("general joint: non-finite motion subspace");
  Eigen::JacobiSVD<MatS6> svd(S);
  const auto& sv = svd.singularValues();
  if (sv(d - 1) <= 1e-9 * sv(0)) throw InvalidArgument("general joint: the columns of S are linearly dependent");
  const double scale = S.cwiseAbs().maxCoeff();
  for (int i = 0; i < d; ++i)
    for (int j = i + 1; j < d; ++j) {
      const Motion c = cross(Motion(Vec6(S.col(i))), Motion(Vec6(S.col(j))));
      if (c.vector().cwiseAbs().maxCoeff() > 1e-9 * scale * scale) {
        std::ostringstream m;
        m << "general joint: columns " << i << " and " << j
          << " of S do not commute (crm(s_i) s_j != 0), so S cannot be constant in the body frame; use a "
             "spherical, planar or free-flyer joint or a chain of joints";
        throw InvalidArgument(m.str());
      }
    }
  JointGeneral j;
  j.subspace = S;
  return j;
}

std::string_view joint_kind(const JointModel& j) {
  return std::visit([](const auto& jj) { return std::decay_t<decltype(jj)>::kind; }, j);
}
int joint_nq(const JointModel& j) {
  return std::visit([](const auto& jj) { return jj.nq(); }, j);
}
int joint_nv(const JointModel& j) {
  return std::visit([](const auto& jj) { return jj.nv(); }, j);
}

}  // namespace plucker
