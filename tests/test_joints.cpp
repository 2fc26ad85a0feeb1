// Tests of the joint library (include/plucker/model/joints.hpp), the model's
// configuration-space functions and construction checks (model.hpp), and the
// procedural builders (builders.hpp).
//
// Conventions under test (paper 000 §3.1, RBDA ch. 4): X_J(q) maps joint-frame
// (parent side) coordinates to body coordinates; its homogeneous matrix T(q) =
// X_J(q).homogeneous() is the pose of the body frame in the joint frame. The joint
// velocity v_J = S v is the velocity of the body relative to the joint frame, in body
// coordinates, i.e. the body twist  T^-1 dT/dt = [omega^ , v_lin; 0 0].
//
// Every property runs on kSamples random states from std::mt19937_64 with a fixed seed
// per test; the failing case and sample index are printed.
//
// Tolerances:
//  * kTol = 1e-12, relative to the size of the operands: identities evaluated in a few
//    dozen flops of O(1..10) numbers (rounding ~1e-15), e.g. motion(v) == S v.
//  * kFdTol = 1e-8 (absolute): central differences with step kDt = 1e-6 of transforms
//    whose entries are O(1..10): truncation O(dt^2 |v|^3) ~ 1e-11, rounding
//    O(eps |T| / dt) ~ 1e-9.
//  * kBiasFdTol = 1e-7 (absolute): the same for the derivative of S seen from the joint
//    frame (one more transform application, |r| up to ~5 in the lever arm).
//  * kRoundTripTol = 1e-10: integrate/difference round trips through exp/log of SO(3),
//    SE(3), SE(2) with rotation angles up to ~2.6 rad (the left-Jacobian inverse has
//    1/sin(theta) ~ 2 there).
//  * kUnitTol = 1e-14: quaternion norms after integrate/normalize (both normalise).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "plucker/errors.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/model/joints.hpp"
#include "plucker/model/model.hpp"

namespace {

using namespace plucker;
using Rng = std::mt19937_64;

constexpr int kSamples = 64;  // >= 50 per property and joint kind
constexpr double kTol = 1e-12;
constexpr double kDt = 1e-6;
constexpr double kFdTol = 1e-8;
constexpr double kBiasFdTol = 1e-7;
constexpr double kRoundTripTol = 1e-10;
constexpr double kUnitTol = 1e-14;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;

double uniform(Rng& g, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); }

// ----------------------------------------------------------------- the joints under test
struct JointCase {
  std::string name;
  JointModel joint;
};

MatS6 general_rot_trans_z() {
  MatS6 S = MatS6::Zero(6, 2);
  S(2, 0) = 1.0;  // rotation about z
  S(5, 1) = 1.0;  // translation along z
  return S;
}

std::vector<JointCase> joint_cases() {
  std::vector<JointCase> c;
  c.push_back({"fixed", JointFixed{}});
  c.push_back({"revolute_x", JointRevoluteX{}});
  c.push_back({"revolute_y", JointRevoluteY{}});
  c.push_back({"revolute_z", JointRevoluteZ{}});
  c.push_back({"revolute_general", make_revolute(Vec3(0.3, -0.5, 0.8))});
  c.push_back({"revolute_minus_x", make_revolute(Vec3(-1.0, 0.0, 0.0))});
  c.push_back({"prismatic_x", JointPrismaticX{}});
  c.push_back({"prismatic_y", JointPrismaticY{}});
  c.push_back({"prismatic_z", JointPrismaticZ{}});
  c.push_back({"prismatic_general", make_prismatic(Vec3(1.0, 2.0, -0.5))});
  c.push_back({"helical_general", make_helical(Vec3(0.2, 0.7, -0.4), 0.05)});
  c.push_back({"helical_z_negative_pitch", make_helical(Vec3::UnitZ(), -0.3)});
  c.push_back({"cylindrical_general", make_cylindrical(Vec3(-0.6, 0.1, 0.5))});
  c.push_back({"planar_z", make_planar()});
  c.push_back({"planar_tilted", make_planar(Vec3(0.3, -1.0, 0.4))});
  c.push_back({"spherical", JointSpherical{}});
  c.push_back({"free_flyer", JointFreeFlyer{}});
  c.push_back({"general_rot_trans_z", make_general_joint(general_rot_trans_z())});
  {
    // Cylindrical about the z axis through (0.2, -0.1, 0): [z; p x z] and [0; z] commute.
    const Vec3 p(0.2, -0.1, 0.0), u = Vec3::UnitZ();
    MatS6 S = MatS6::Zero(6, 2);
    S.col(0) << u, p.cross(u);
    S.col(1) << Vec3::Zero(), u;
    c.push_back({"general_offset_cylinder", make_general_joint(S)});
  }
  {
    // 1 column: a screw about a general axis through a point, pitch 0.1.
    const Vec3 u = Vec3(0.4, 0.5, -0.3).normalized(), p(0.1, 0.3, -0.2);
    MatS6 S = MatS6::Zero(6, 1);
    S.col(0) << u, p.cross(u) + 0.1 * u;
    c.push_back({"general_screw", make_general_joint(S)});
  }
  {
    // 3 pure translations commute.
    MatS6 S = MatS6::Zero(6, 3);
    S.bottomRows<3>() = Mat3::Identity();
    c.push_back({"general_translations", make_general_joint(S)});
  }
  return c;
}

// ----------------------------------------------------------------- joint-level wrappers
int jnq(const JointModel& j) { return joint_nq(j); }
int jnv(const JointModel& j) { return joint_nv(j); }

Transform XJ(const JointModel& j, const VecX& q) {
  return std::visit([&](const auto& jj) { return jj.transform(q.data()); }, j);
}
Transform compose(const JointModel& j, const VecX& q, const Transform& X_tree) {
  return std::visit([&](const auto& jj) { return jj.compose(q.data(), X_tree); }, j);
}
Motion motion(const JointModel& j, const VecX& v) {
  return std::visit([&](const auto& jj) { return jj.motion(v.data()); }, j);
}
VecX project(const JointModel& j, const Force& f) {
  VecX out(jnv(j));
  std::visit([&](const auto& jj) { jj.project(f, out.data()); }, j);
  return out;
}
MatX S_of(const JointModel& j) {
  return std::visit([&](const auto& jj) { return MatX(jj.S()); }, j);
}
MatX times_S(const JointModel& j, const Mat6& M) {
  return std::visit([&](const auto& jj) { return MatX(jj.times_S(M)); }, j);
}
VecX integrate(const JointModel& j, const VecX& q, const VecX& v, double dt) {
  VecX out(jnq(j));
  std::visit([&](const auto& jj) { jj.integrate(q.data(), v.data(), dt, out.data()); }, j);
  return out;
}
VecX difference(const JointModel& j, const VecX& q0, const VecX& q1) {
  VecX v(jnv(j));
  std::visit([&](const auto& jj) { jj.difference(q0.data(), q1.data(), v.data()); }, j);
  return v;
}
VecX neutral(const JointModel& j) {
  VecX q(jnq(j));
  std::visit([&](const auto& jj) { jj.neutral(q.data()); }, j);
  return q;
}
void normalize(const JointModel& j, VecX& q) {
  std::visit([&](const auto& jj) { jj.normalize(q.data()); }, j);
}
VecX random_q(const JointModel& j, Rng& rng, const VecX& lower, const VecX& upper, double fallback) {
  VecX q(jnq(j));
  std::visit([&](const auto& jj) { jj.random(rng, lower.data(), upper.data(), fallback, q.data()); }, j);
  return q;
}
VecX random_q(const JointModel& j, Rng& rng) {
  return random_q(j, rng, VecX::Constant(jnq(j), -kInf), VecX::Constant(jnq(j), kInf), kPi);
}
/// Tangent vector with components in [-h, h]; h = 1.5 keeps |omega| < 2.6 < pi.
VecX random_v(const JointModel& j, Rng& rng, double h = 1.5) {
  VecX v(jnv(j));
  for (int k = 0; k < v.size(); ++k) v[k] = uniform(rng, -h, h);
  return v;
}

/// Offset of the unit quaternion inside q, or -1.
int quaternion_offset(const JointModel& j) {
  if (std::holds_alternative<JointSpherical>(j)) return 0;
  if (std::holds_alternative<JointFreeFlyer>(j)) return 3;
  return -1;
}
bool is_planar(const JointModel& j) { return std::holds_alternative<JointPlanar>(j); }

double max_abs(const VecX& x) { return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff(); }
double max_abs(const MatX& x) { return x.size() == 0 ? 0.0 : x.cwiseAbs().maxCoeff(); }

/// max |a - b| over coordinates, identifying q and -q for the quaternion part.
double config_distance(const JointModel& j, const VecX& a, const VecX& b) {
  const int off = quaternion_offset(j);
  if (off < 0) return max_abs(VecX(a - b));
  double d = off > 0 ? (a.head(off) - b.head(off)).cwiseAbs().maxCoeff() : 0.0;
  const Eigen::Vector4d qa = a.segment<4>(off), qb = b.segment<4>(off);
  d = std::max(d, std::min((qa - qb).cwiseAbs().maxCoeff(), (qa + qb).cwiseAbs().maxCoeff()));
  return d;
}
double transform_distance(const Transform& a, const Transform& b) {
  return std::max((a.E - b.E).cwiseAbs().maxCoeff(), (a.r - b.r).cwiseAbs().maxCoeff());
}

Transform random_transform(Rng& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  // One draw per statement, in the order g++ 12 evaluated the arguments (right to left): the
  // same transforms under every compiler, and g++'s unchanged.
  const double w_z = n(rng), w_y = n(rng), w_x = n(rng), w = n(rng);
  Quat q(w, w_x, w_y, w_z);
  q.normalize();
  const double r_z = uniform(rng, -2, 2), r_y = uniform(rng, -2, 2), r_x = uniform(rng, -2, 2);
  return Transform::from_quaternion(q, Vec3(r_x, r_y, r_z));
}

/// Body twist T^-1 dT/dt (body coordinates) by a central difference of X_J along
/// q(t) = integrate(q, v, t).
Motion fd_body_velocity(const JointModel& j, const VecX& q, const VecX& v) {
  const Eigen::Matrix4d Tinv = XJ(j, q).inverse().homogeneous();
  const Eigen::Matrix4d Tp = XJ(j, integrate(j, q, v, kDt)).homogeneous();
  const Eigen::Matrix4d Tm = XJ(j, integrate(j, q, v, -kDt)).homogeneous();
  const Eigen::Matrix4d D = Tinv * (Tp - Tm) / (2.0 * kDt);
  const Mat3 W = D.topLeftCorner<3, 3>();
  const Vec3 omega(0.5 * (W(2, 1) - W(1, 2)), 0.5 * (W(0, 2) - W(2, 0)), 0.5 * (W(1, 0) - W(0, 1)));
  return Motion(omega, D.topRightCorner<3, 1>());
}

// ================================================================= S spans the joint motion
TEST(Joints, MotionSubspaceColumnsMatchFiniteDifference) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(11);
    const MatX S = S_of(c.joint);
    ASSERT_EQ(S.rows(), 6) << c.name;
    ASSERT_EQ(S.cols(), jnv(c.joint)) << c.name;
    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_q(c.joint, rng);
      for (int k = 0; k < jnv(c.joint); ++k) {
        const VecX e = VecX::Unit(jnv(c.joint), k);
        const Motion fd = fd_body_velocity(c.joint, q, e);
        ASSERT_LE((fd.vector() - S.col(k)).cwiseAbs().maxCoeff(), kFdTol)
            << c.name << " sample " << s << " column " << k << "\nfd = " << fd.vector().transpose()
            << "\nS  = " << S.col(k).transpose();
      }
    }
  }
}

TEST(Joints, JointVelocityMatchesFiniteDifference) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(12);
    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_q(c.joint, rng);
      const VecX v = random_v(c.joint, rng);
      const Motion fd = fd_body_velocity(c.joint, q, v);
      ASSERT_LE((fd.vector() - motion(c.joint, v).vector()).cwiseAbs().maxCoeff(), kFdTol) << c.name << " sample " << s;
    }
  }
}

// d/dt (X_J^-1 s) = X_J^-1 (v_J x s) for a body-fixed s: S is constant in the body frame,
// so the velocity-product term of the joint is v_J x S v (and c_J = 0).
TEST(Joints, SubspaceSeenFromJointFrameMovesWithCrossProduct) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(13);
    const MatX S = S_of(c.joint);
    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_q(c.joint, rng);
      const VecX v = random_v(c.joint, rng);
      const Transform X0 = XJ(c.joint, q);
      const Transform Xp = XJ(c.joint, integrate(c.joint, q, v, kDt));
      const Transform Xm = XJ(c.joint, integrate(c.joint, q, v, -kDt));
      const Motion vJ = motion(c.joint, v);
      for (int k = 0; k < S.cols(); ++k) {
        const Motion sk{Vec6(S.col(k))};
        const Vec6 fd = (Xp.apply_inverse(sk).vector() - Xm.apply_inverse(sk).vector()) / (2.0 * kDt);
        const Vec6 expected = X0.apply_inverse(cross(vJ, sk)).vector();
        ASSERT_LE((fd - expected).cwiseAbs().maxCoeff(), kBiasFdTol) << c.name << " sample " << s << " column " << k;
      }
    }
  }
}

// ================================================================= algebraic identities
TEST(Joints, MotionProjectTimesSAgreeWithS) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(14);
    const MatX S = S_of(c.joint);
    for (int s = 0; s < kSamples; ++s) {
      const VecX v = random_v(c.joint, rng, 3.0);
      Vec6 fv;
      for (int k = 0; k < 6; ++k) fv[k] = uniform(rng, -5, 5);
      const Force f(fv);
      Mat6 M;
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) M(a, b) = uniform(rng, -5, 5);
      ASSERT_LE(max_abs(VecX(motion(c.joint, v).vector() - S * v)), kTol * 3.0 * 6) << c.name << " sample " << s;
      ASSERT_LE(max_abs(VecX(project(c.joint, f) - S.transpose() * fv)), kTol * 5.0 * 6) << c.name << " sample " << s;
      const MatX MS = times_S(c.joint, M);
      ASSERT_EQ(MS.rows(), 6) << c.name;
      ASSERT_EQ(MS.cols(), S.cols()) << c.name;
      ASSERT_LE(max_abs(MatX(MS - M * S)), kTol * 5.0 * 6) << c.name << " sample " << s;
    }
  }
}

TEST(Joints, ComposeEqualsTransformTimesTree) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(15);
    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_q(c.joint, rng);
      const Transform X = XJ(c.joint, q);
      // X_J is a proper rigid transform.
      ASSERT_LE((X.E * X.E.transpose() - Mat3::Identity()).cwiseAbs().maxCoeff(), kTol) << c.name;
      ASSERT_NEAR(X.E.determinant(), 1.0, kTol) << c.name;
      ASSERT_LE(transform_distance(compose(c.joint, q, Transform::Identity()), X), kTol * (1.0 + X.r.norm()))
          << c.name << " sample " << s;
      const Transform Xt = random_transform(rng);
      const Transform expected = X * Xt;
      ASSERT_LE(transform_distance(compose(c.joint, q, Xt), expected), kTol * (1.0 + X.r.norm() + Xt.r.norm()))
          << c.name << " sample " << s;
    }
  }
}

TEST(Joints, NeutralIsIdentityAndValid) {
  for (const JointCase& c : joint_cases()) {
    const VecX q0 = neutral(c.joint);
    ASSERT_EQ(q0.size(), jnq(c.joint)) << c.name;
    EXPECT_LE(transform_distance(XJ(c.joint, q0), Transform()), 1e-15) << c.name;
    const int off = quaternion_offset(c.joint);
    if (off >= 0) {
      EXPECT_EQ(q0.segment<4>(off).norm(), 1.0) << c.name;
    }
    if (is_planar(c.joint)) {
      EXPECT_EQ(std::hypot(q0[2], q0[3]), 1.0) << c.name;
    }
    // integrate by zero and difference to itself.
    EXPECT_LE(config_distance(c.joint, integrate(c.joint, q0, VecX::Zero(jnv(c.joint)), 1.0), q0), kUnitTol) << c.name;
    EXPECT_LE(max_abs(difference(c.joint, q0, q0)), kUnitTol) << c.name;
  }
}

// ================================================================= configuration space
TEST(Joints, DifferenceInvertsIntegrate) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(16);
    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_q(c.joint, rng);
      const VecX v = random_v(c.joint, rng);  // |omega| < pi: inside the injectivity radius
      const VecX q1 = integrate(c.joint, q, v, 1.0);
      ASSERT_LE(max_abs(VecX(difference(c.joint, q, q1) - v)), kRoundTripTol) << c.name << " sample " << s;
    }
  }
}

TEST(Joints, IntegrateInvertsDifference) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(17);
    for (int s = 0; s < kSamples; ++s) {
      const VecX q0 = random_q(c.joint, rng), q1 = random_q(c.joint, rng);
      const VecX v = difference(c.joint, q0, q1);
      ASSERT_TRUE(v.allFinite()) << c.name << " sample " << s;
      const VecX q1b = integrate(c.joint, q0, v, 1.0);
      ASSERT_LE(config_distance(c.joint, q1b, q1), kRoundTripTol) << c.name << " sample " << s;
      ASSERT_LE(transform_distance(XJ(c.joint, q1b), XJ(c.joint, q1)), kRoundTripTol) << c.name << " sample " << s;
    }
  }
}

/// exp of a 4x4 matrix by scaling and squaring of its Taylor series (independent reference).
Eigen::Matrix4d expm(const Eigen::Matrix4d& A) {
  int squarings = 0;
  double norm = A.cwiseAbs().rowwise().sum().maxCoeff();
  while (norm > 0.25) {
    norm *= 0.5;
    ++squarings;
  }
  const Eigen::Matrix4d B = A / std::ldexp(1.0, squarings);
  Eigen::Matrix4d term = Eigen::Matrix4d::Identity(), sum = Eigen::Matrix4d::Identity();
  for (int k = 1; k <= 20; ++k) {
    term = term * B / k;
    sum += term;
  }
  for (int k = 0; k < squarings; ++k) sum = sum * sum;
  return sum;
}
Eigen::Matrix4d twist_hat(const Motion& m) {
  Eigen::Matrix4d T = Eigen::Matrix4d::Zero();
  T.topLeftCorner<3, 3>() = skew(m.angular);
  T.topRightCorner<3, 1>() = m.linear;
  return T;
}

// q (+) v is the body moving for unit time with the constant joint twist S v:
// T(integrate(q, v, 1)) = T(q) expm([S v]^). Angular components are scaled down to
// 1e-3 .. 1e-10 (and 0) with O(1) linear ones, to exercise the small-angle series of the
// exponential/log maps and their switch-over thresholds (1e-5 .. 1e-8), where a wrong
// first-order term would show as an error ~ angle * |linear|.
TEST(Joints, IntegrateIsTheExponentialOfTheJointTwist) {
  const std::vector<double> angle_scales = {1.0, 1e-3, 3e-5, 8e-6, 9e-7, 2e-8, 5e-9, 1e-10, 0.0};
  for (const JointCase& c : joint_cases()) {
    Rng rng(22);
    const MatX S = S_of(c.joint);
    for (int s = 0; s < kSamples; ++s) {
      for (double scale : angle_scales) {
        const VecX q = random_q(c.joint, rng);
        VecX v = random_v(c.joint, rng);
        for (int k = 0; k < v.size(); ++k)
          if (S.col(k).head<3>().norm() > 0.0) v[k] *= scale;
        const VecX q1 = integrate(c.joint, q, v, 1.0);
        const Eigen::Matrix4d expected = XJ(c.joint, q).homogeneous() * expm(twist_hat(motion(c.joint, v)));
        ASSERT_LE((XJ(c.joint, q1).homogeneous() - expected).cwiseAbs().maxCoeff(), kRoundTripTol)
            << c.name << " sample " << s << " angle scale " << scale;
        ASSERT_LE(max_abs(VecX(difference(c.joint, q, q1) - v)), kRoundTripTol)
            << c.name << " sample " << s << " angle scale " << scale;
      }
    }
  }
}

// Constant-velocity integration is a one-parameter group: q (+) v a (+) v b == q (+) v (a + b).
TEST(Joints, IntegrateIsAOneParameterGroup) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(18);
    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_q(c.joint, rng);
      const VecX v = random_v(c.joint, rng, 3.0);
      const double a = uniform(rng, -1, 1), b = uniform(rng, -1, 1);
      const VecX two_steps = integrate(c.joint, integrate(c.joint, q, v, a), v, b);
      const VecX one_step = integrate(c.joint, q, v, a + b);
      ASSERT_LE(transform_distance(XJ(c.joint, two_steps), XJ(c.joint, one_step)), kRoundTripTol)
          << c.name << " sample " << s;
    }
  }
}

TEST(Joints, QuaternionsAndPlanarAnglesStayUnitUnderIntegration) {
  for (const JointCase& c : joint_cases()) {
    const int off = quaternion_offset(c.joint);
    if (off < 0 && !is_planar(c.joint)) continue;
    Rng rng(19);
    VecX q = random_q(c.joint, rng);
    for (int step = 0; step < 10000; ++step) {
      q = integrate(c.joint, q, random_v(c.joint, rng, 5.0), 0.01);
      const double n = off >= 0 ? q.segment<4>(off).norm() : std::hypot(q[2], q[3]);
      ASSERT_LE(std::abs(n - 1.0), kUnitTol) << c.name << " step " << step;
    }
  }
}

TEST(Joints, NormalizeRestoresUnitQuaternionsAndPlanarAngles) {
  for (const JointCase& c : joint_cases()) {
    const int off = quaternion_offset(c.joint);
    Rng rng(20);
    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_q(c.joint, rng);
      VecX scaled = q;
      const double factor = uniform(rng, 0.2, 5.0);
      if (off >= 0) scaled.segment<4>(off) *= factor;
      if (is_planar(c.joint)) scaled.segment<2>(2) *= factor;
      normalize(c.joint, scaled);
      ASSERT_LE(config_distance(c.joint, scaled, q), 4 * kUnitTol) << c.name << " sample " << s;
      if (off >= 0) {
        ASSERT_LE(std::abs(scaled.segment<4>(off).norm() - 1.0), kUnitTol) << c.name;
      }
      if (is_planar(c.joint)) {
        ASSERT_LE(std::abs(std::hypot(scaled[2], scaled[3]) - 1.0), kUnitTol) << c.name;
      }
    }
  }
}

TEST(Joints, RandomRespectsLimits) {
  for (const JointCase& c : joint_cases()) {
    Rng rng(21);
    const int nq = jnq(c.joint), off = quaternion_offset(c.joint);
    for (int s = 0; s < kSamples; ++s) {
      VecX lower(nq), upper(nq);
      for (int k = 0; k < nq; ++k) {
        lower[k] = uniform(rng, -2, 0.5);
        upper[k] = lower[k] + uniform(rng, 0.0, 2.0);
      }
      const VecX q = random_q(c.joint, rng, lower, upper, 10.0);
      // Coordinates that are plain numbers: x, y of planar, position of free-flyer, all of the rest.
      for (int k = 0; k < nq; ++k) {
        const bool in_quat = off >= 0 && k >= off;
        const bool planar_angle = is_planar(c.joint) && k >= 2;
        if (in_quat || planar_angle) continue;
        ASSERT_GE(q[k], lower[k]) << c.name << " coordinate " << k;
        ASSERT_LE(q[k], upper[k]) << c.name << " coordinate " << k;
      }
      if (off >= 0) {
        ASSERT_LE(std::abs(q.segment<4>(off).norm() - 1.0), kUnitTol) << c.name;
      }
      if (is_planar(c.joint)) {
        ASSERT_LE(std::abs(std::hypot(q[2], q[3]) - 1.0), kUnitTol) << c.name;
      }
      // Infinite limits: the fallback bound is used.
      const VecX qi = random_q(c.joint, rng, VecX::Constant(nq, -kInf), VecX::Constant(nq, kInf), 0.75);
      for (int k = 0; k < nq; ++k) {
        const bool in_quat = off >= 0 && k >= off;
        const bool planar_angle = is_planar(c.joint) && k >= 2;
        if (!in_quat && !planar_angle) {
          ASSERT_LE(std::abs(qi[k]), 0.75) << c.name << " coordinate " << k;
        }
      }
      ASSERT_TRUE(qi.allFinite()) << c.name;
    }
  }
}

// The spherical joint's q is body-to-parent: X_J(q).E = R(q)^T; the free-flyer's position
// is the body origin in the parent frame.
TEST(Joints, QuaternionConventionIsBodyToParent) {
  const Quat Q(Eigen::AngleAxisd(0.7, Vec3(1, 2, 3).normalized()));
  VecX q(4);
  q << Q.x(), Q.y(), Q.z(), Q.w();
  EXPECT_LE((XJ(JointSpherical{}, q).rotation() - Q.toRotationMatrix()).cwiseAbs().maxCoeff(), kTol);
  VecX qf(7);
  qf << 0.1, -0.2, 0.3, Q.x(), Q.y(), Q.z(), Q.w();
  const Transform Xf = XJ(JointFreeFlyer{}, qf);
  EXPECT_LE((Xf.rotation() - Q.toRotationMatrix()).cwiseAbs().maxCoeff(), kTol);
  EXPECT_LE((Xf.translation() - Vec3(0.1, -0.2, 0.3)).cwiseAbs().maxCoeff(), 0.0);
  // Revolute about +z by 0.3 equals Transform::rot_z(0.3).
  EXPECT_LE(transform_distance(XJ(JointRevoluteZ{}, VecX::Constant(1, 0.3)), Transform::rot_z(0.3)), kTol);
  EXPECT_LE(transform_distance(XJ(make_revolute(Vec3(0, 0, 2)), VecX::Constant(1, 0.3)), Transform::rot_z(0.3)), kTol);
  EXPECT_LE(transform_distance(XJ(make_revolute(Vec3(0, 1, 1)), VecX::Constant(1, 0.3)),
                               Transform::axis_angle(Vec3(0, 1, 1), 0.3)),
            kTol);
}

// ================================================================= factories
template <class F>
void expect_invalid_argument(F&& f, const std::string& fragment, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << what << ": message '" << e.what() << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
}

TEST(JointFactories, RefuseZeroAndNonFiniteAxes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Vec3> zero = {Vec3::Zero(), Vec3(1e-14, 0, 0)};
  const std::vector<Vec3> nonfinite = {Vec3(nan, 0, 1), Vec3(kInf, 0, 0), Vec3(0, -kInf, 1)};
  for (const Vec3& a : zero) {
    expect_invalid_argument([&] { make_revolute(a); }, "zero-length axis", "make_revolute");
    expect_invalid_argument([&] { make_prismatic(a); }, "zero-length axis", "make_prismatic");
    expect_invalid_argument([&] { make_helical(a, 0.1); }, "zero-length axis", "make_helical");
    expect_invalid_argument([&] { make_cylindrical(a); }, "zero-length axis", "make_cylindrical");
    expect_invalid_argument([&] { make_planar(a); }, "zero-length axis", "make_planar");
  }
  for (const Vec3& a : nonfinite) {
    expect_invalid_argument([&] { make_revolute(a); }, "non-finite axis", "make_revolute");
    expect_invalid_argument([&] { make_prismatic(a); }, "non-finite axis", "make_prismatic");
    expect_invalid_argument([&] { make_helical(a, 0.1); }, "non-finite axis", "make_helical");
    expect_invalid_argument([&] { make_cylindrical(a); }, "non-finite axis", "make_cylindrical");
    expect_invalid_argument([&] { make_planar(a); }, "non-finite axis", "make_planar");
  }
  expect_invalid_argument([&] { make_helical(Vec3::UnitZ(), nan); }, "non-finite pitch", "make_helical pitch");
}

TEST(JointFactories, CoordinateAxesTakeTheFastPath) {
  EXPECT_TRUE(std::holds_alternative<JointRevoluteX>(make_revolute(Vec3::UnitX())));
  EXPECT_TRUE(std::holds_alternative<JointRevoluteY>(make_revolute(Vec3::UnitY())));
  EXPECT_TRUE(std::holds_alternative<JointRevoluteZ>(make_revolute(Vec3::UnitZ())));
  EXPECT_TRUE(std::holds_alternative<JointRevoluteZ>(make_revolute(Vec3(0, 0, 3.5))));
  EXPECT_TRUE(std::holds_alternative<JointPrismaticX>(make_prismatic(Vec3::UnitX())));
  EXPECT_TRUE(std::holds_alternative<JointPrismaticY>(make_prismatic(Vec3(0, 0.2, 0))));
  EXPECT_TRUE(std::holds_alternative<JointPrismaticZ>(make_prismatic(Vec3::UnitZ())));
  EXPECT_EQ(joint_kind(make_revolute(Vec3::UnitY())), "revolute_y");

  // A general (or negative) axis gives the general joint with a normalised axis.
  const JointModel r = make_revolute(Vec3(1.0, 2.0, 2.0));
  ASSERT_TRUE(std::holds_alternative<JointRevolute>(r));
  EXPECT_LE((std::get<JointRevolute>(r).axis - Vec3(1.0, 2.0, 2.0) / 3.0).cwiseAbs().maxCoeff(), kTol);
  EXPECT_EQ(joint_kind(r), "revolute");
  const JointModel rn = make_revolute(-Vec3::UnitX());
  ASSERT_TRUE(std::holds_alternative<JointRevolute>(rn));
  EXPECT_EQ(std::get<JointRevolute>(rn).axis, -Vec3::UnitX());
  const JointModel p = make_prismatic(Vec3(0.0, 3.0, 4.0));
  ASSERT_TRUE(std::holds_alternative<JointPrismatic>(p));
  EXPECT_LE((std::get<JointPrismatic>(p).axis - Vec3(0.0, 0.6, 0.8)).cwiseAbs().maxCoeff(), kTol);
  const JointModel h = make_helical(Vec3(0.0, 0.0, -2.0), 0.25);
  ASSERT_TRUE(std::holds_alternative<JointHelical>(h));
  EXPECT_EQ(std::get<JointHelical>(h).axis, -Vec3::UnitZ());
  EXPECT_EQ(std::get<JointHelical>(h).pitch, 0.25);
  const JointModel c = make_cylindrical(Vec3(2.0, 0.0, 0.0));
  ASSERT_TRUE(std::holds_alternative<JointCylindrical>(c));
  EXPECT_EQ(std::get<JointCylindrical>(c).axis, Vec3::UnitX());

  // Planar: orthonormal right-handed basis whose third column is the normal.
  for (const Vec3& n : {Vec3(0, 0, 1), Vec3(0.3, -1.0, 0.4), Vec3(-1, 0, 0), Vec3(0, 0, -2)}) {
    const JointModel pl = make_planar(n);
    ASSERT_TRUE(std::holds_alternative<JointPlanar>(pl));
    const Mat3& B = std::get<JointPlanar>(pl).basis;
    EXPECT_LE((B.transpose() * B - Mat3::Identity()).cwiseAbs().maxCoeff(), kTol) << n.transpose();
    EXPECT_NEAR(B.determinant(), 1.0, kTol) << n.transpose();
    EXPECT_LE((B.col(2) - n.normalized()).cwiseAbs().maxCoeff(), kTol) << n.transpose();
  }
  EXPECT_EQ(std::get<JointPlanar>(make_planar()).basis, Mat3::Identity());

  // Sizes reported through the variant.
  EXPECT_EQ(joint_nq(JointModel(JointFreeFlyer{})), 7);
  EXPECT_EQ(joint_nv(JointModel(JointFreeFlyer{})), 6);
  EXPECT_EQ(joint_nq(make_planar()), 4);
  EXPECT_EQ(joint_nv(make_planar()), 3);
  EXPECT_EQ(joint_nq(JointModel(JointSpherical{})), 4);
  EXPECT_EQ(joint_nv(JointModel(JointSpherical{})), 3);
  EXPECT_EQ(joint_nq(JointModel(JointFixed{})), 0);
}

TEST(JointFactories, GeneralJointValidation) {
  // Accepts rotation about z + translation along z (commuting, independent).
  const JointModel g = make_general_joint(general_rot_trans_z());
  ASSERT_TRUE(std::holds_alternative<JointGeneral>(g));
  EXPECT_EQ(joint_nq(g), 2);
  EXPECT_EQ(joint_nv(g), 2);
  EXPECT_EQ(joint_kind(g), "general");

  // Two rotations about different axes do not commute.
  MatS6 rots = MatS6::Zero(6, 2);
  rots(0, 0) = 1.0;
  rots(1, 1) = 1.0;
  expect_invalid_argument([&] { make_general_joint(rots); }, "do not commute", "two rotations");
  // Rotations about parallel but distinct axes do not commute either.
  MatS6 par = MatS6::Zero(6, 2);
  par.col(0) << 0, 0, 1, 0, 0, 0;
  par.col(1) << 0, 0, 1, 0.5, 0, 0;
  expect_invalid_argument([&] { make_general_joint(par); }, "do not commute", "parallel rotations");
  // Dependent columns.
  MatS6 dep = MatS6::Zero(6, 2);
  dep(2, 0) = 1.0;
  dep(2, 1) = -2.0;
  expect_invalid_argument([&] { make_general_joint(dep); }, "linearly dependent", "dependent columns");
  MatS6 zero_col = MatS6::Zero(6, 2);
  zero_col(5, 0) = 1.0;
  expect_invalid_argument([&] { make_general_joint(zero_col); }, "linearly dependent", "zero column");
  // 0 columns. (7 columns cannot even be represented: MatS6 has at most 6 columns.)
  static_assert(MatS6::MaxColsAtCompileTime == 6);
  expect_invalid_argument([&] { make_general_joint(MatS6(6, 0)); }, "1 to 6 columns", "0 columns");
  // Non-finite.
  MatS6 nf = general_rot_trans_z();
  nf(0, 0) = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { make_general_joint(nf); }, "non-finite", "NaN column");
  // Six translations/rotations that commute cannot exceed 3 translations + ...: the full
  // 6-column identity does not commute (rotations), refused.
  expect_invalid_argument([&] { make_general_joint(MatS6::Identity(6, 6)); }, "do not commute", "identity");
}

// ================================================================= model-level configuration space
/// Every joint of the model at q0 and q1 has the same X_J, to tol.
double model_config_distance(const Model& m, const VecX& q0, const VecX& q1) {
  double d = 0.0;
  for (int i = 1; i < m.nbodies(); ++i) {
    const VecX a = q0.segment(m.idx_q(i), m.joint_nq(i)), b = q1.segment(m.idx_q(i), m.joint_nq(i));
    d = std::max(d, transform_distance(XJ(m.joint(i), a), XJ(m.joint(i), b)));
  }
  return d;
}

TEST(ModelConfiguration, AllJointsTreeUsesEveryJointKind) {
  const Model m = build_all_joints_tree(3);
  std::set<std::size_t> kinds;
  bool tilted_planar = false;
  for (int i = 1; i < m.nbodies(); ++i) {
    kinds.insert(m.joint(i).index());
    if (const auto* p = std::get_if<JointPlanar>(&m.joint(i)); p && p->basis != Mat3::Identity()) tilted_planar = true;
  }
  EXPECT_EQ(kinds.size(), std::variant_size_v<JointModel>);
  EXPECT_TRUE(tilted_planar);
  EXPECT_TRUE(m.has_floating_base());
  EXPECT_EQ(m.nbodies(), 18);
  EXPECT_EQ(m.nq(), 33);
  EXPECT_EQ(m.nv(), 29);
  int general1 = 0, general2 = 0;
  for (int i = 1; i < m.nbodies(); ++i)
    if (std::holds_alternative<JointGeneral>(m.joint(i))) (m.joint_nv(i) == 1 ? general1 : general2)++;
  EXPECT_EQ(general1, 1);
  EXPECT_EQ(general2, 1);
}

TEST(ModelConfiguration, NeutralRandomIntegrateDifferenceNormalize) {
  for (std::uint64_t seed : {0u, 1u, 2u}) {
    const Model m = build_all_joints_tree(seed);
    Rng rng(100 + seed);
    const VecX q0 = neutral(m);
    ASSERT_EQ(q0.size(), m.nq());
    EXPECT_NO_THROW(m.check_configuration(q0));
    for (int i = 1; i < m.nbodies(); ++i)
      EXPECT_LE(transform_distance(XJ(m.joint(i), q0.segment(m.idx_q(i), m.joint_nq(i))), Transform()), 1e-15)
          << m.joint_name(i);

    for (int s = 0; s < kSamples; ++s) {
      const VecX q = random_configuration(m, rng);
      ASSERT_NO_THROW(m.check_configuration(q)) << "sample " << s;
      // Limits are respected where finite; unlimited angles in [-pi, pi], lengths in [-1, 1].
      for (int k = 0; k < m.nq(); ++k) {
        if (std::isfinite(m.lower_position_limit()[k])) {
          ASSERT_GE(q[k], m.lower_position_limit()[k]) << k;
        }
        if (std::isfinite(m.upper_position_limit()[k])) {
          ASSERT_LE(q[k], m.upper_position_limit()[k]) << k;
        }
      }
      ASSERT_LE(std::abs(q[m.idx_q(m.joint_index("link_ry_joint"))]), kPi);
      ASSERT_LE(std::abs(q[m.idx_q(m.joint_index("link_py_joint"))]), 1.0);

      VecX v(m.nv());
      for (int k = 0; k < m.nv(); ++k) v[k] = uniform(rng, -1.5, 1.5);
      const VecX q1 = integrate(m, q, v);
      ASSERT_NO_THROW(m.check_configuration(q1));
      ASSERT_LE(max_abs(VecX(difference(m, q, q1) - v)), kRoundTripTol) << "sample " << s;
      // Model-level integrate is the joint-level one, joint by joint.
      const VecX qh = integrate(m, integrate(m, q, v, 0.5), v, 0.5);
      ASSERT_LE(model_config_distance(m, qh, q1), kRoundTripTol) << "sample " << s;
      for (int i = 1; i < m.nbodies(); ++i) {
        const VecX qi = q.segment(m.idx_q(i), m.joint_nq(i)), vi = v.segment(m.idx_v(i), m.joint_nv(i));
        ASSERT_EQ(VecX(q1.segment(m.idx_q(i), m.joint_nq(i))), integrate(m.joint(i), qi, vi, 1.0)) << m.joint_name(i);
      }

      const VecX qb = random_configuration(m, rng);
      const VecX d = difference(m, q, qb);
      ASSERT_EQ(d.size(), m.nv());
      ASSERT_LE(model_config_distance(m, integrate(m, q, d), qb), kRoundTripTol) << "sample " << s;

      // normalize undoes a scaling of quaternions and planar (cos, sin) pairs.
      VecX scaled = q;
      for (int i = 1; i < m.nbodies(); ++i) {
        const int off = quaternion_offset(m.joint(i));
        if (off >= 0) scaled.segment<4>(m.idx_q(i) + off) *= 1.7;
        if (is_planar(m.joint(i))) scaled.segment<2>(m.idx_q(i) + 2) *= 0.6;
      }
      normalize(m, scaled);
      ASSERT_LE(max_abs(VecX(scaled - q)), 4 * kUnitTol) << "sample " << s;
    }
  }
}

TEST(ModelConfiguration, CheckConfigurationRefusesBadInput) {
  const Model m = build_all_joints_tree(5);
  Rng rng(7);
  const VecX q = random_configuration(m, rng);
  expect_invalid_argument([&] { m.check_configuration(VecX(q.head(m.nq() - 1))); }, "expected nq = 33", "short q");
  expect_invalid_argument([&] { m.check_configuration(VecX::Zero(m.nq() + 1), "q_in"); }, "q_in has size 34", "long q");
  VecX bad = q;
  bad[m.idx_q(m.joint_index("link_rev_joint"))] = std::numeric_limits<double>::quiet_NaN();
  expect_invalid_argument([&] { m.check_configuration(bad); }, "link_rev_joint", "NaN");
  bad = q;
  bad[m.idx_q(m.joint_index("link_pz_joint"))] = kInf;
  expect_invalid_argument([&] { m.check_configuration(bad); }, "not finite at joint 'link_pz_joint'", "inf");
  bad = q;
  bad.segment<4>(m.idx_q(m.joint_index("link_spherical_joint"))) *= 1.01;
  expect_invalid_argument([&] { m.check_configuration(bad); }, "link_spherical_joint", "non-unit quaternion");
  expect_invalid_argument([&] { m.check_configuration(bad); }, "not unit", "non-unit quaternion");
  bad = q;
  bad.segment<4>(m.idx_q(m.joint_index("root_joint")) + 3).setZero();
  expect_invalid_argument([&] { m.check_configuration(bad); }, "root_joint", "zero quaternion");
  bad = q;
  bad.segment<2>(m.idx_q(m.joint_index("link_planar_joint")) + 2) *= 1.5;
  expect_invalid_argument([&] { m.check_configuration(bad); }, "link_planar_joint", "non-unit planar angle");
  // The configuration-space functions check their inputs too.
  expect_invalid_argument([&] { integrate(m, q, VecX::Zero(m.nv() - 1)); }, "expected nv", "integrate v size");
  expect_invalid_argument([&] { integrate(m, q, VecX::Zero(m.nv()), std::nan("")); }, "non-finite dt", "dt");
  expect_invalid_argument([&] { difference(m, q, VecX(q.head(3))); }, "difference: q1", "difference size");
  VecX tmp(3);
  expect_invalid_argument([&] { normalize(m, tmp); }, "expected nq", "normalize size");
}

// ================================================================= model construction errors
template <class F>
void expect_model_error(F&& f, const std::string& fragment, const std::string& what) {
  try {
    f();
    ADD_FAILURE() << what << ": no exception";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << what << ": message '" << e.what() << "'";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": wrong exception type: " << e.what();
  }
}

TEST(ModelConstruction, RefusesMalformedBodies) {
  const RigidBodyInertia I = RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Mat3::Identity() * 0.01);
  Model m;
  m.add_body(0, JointRevoluteZ{}, Transform(), I, "a", "ja");
  expect_model_error([&] { m.add_body(2, JointRevoluteZ{}, Transform(), I, "b", "jb"); }, "unknown parent", "parent 2");
  expect_model_error([&] { m.add_body(-1, JointRevoluteZ{}, Transform(), I, "b", "jb"); }, "unknown parent",
                     "parent -1");
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "a", "jb"); }, "duplicate body name 'a'",
                     "dup body");
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "world", "jb"); }, "duplicate body name",
                     "dup base name");
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "b", "ja"); }, "duplicate joint name 'ja'",
                     "dup joint");
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "", "jb"); }, "empty body name",
                     "empty body");
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "b", ""); }, "empty joint name",
                     "empty joint");
  JointLimits wrong;
  wrong.lower = VecX::Zero(2);
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "b", "jb", wrong); },
                     "lower limit has size 2", "lower size");
  wrong = {};
  wrong.velocity = VecX::Ones(4);  // spherical: nq = 4 but nv = 3
  expect_model_error([&] { m.add_body(1, JointSpherical{}, Transform(), I, "b", "jb", wrong); },
                     "velocity limit has size 4", "velocity size");
  wrong = {};
  wrong.lower = VecX::Constant(1, 0.5);
  wrong.upper = VecX::Constant(1, -0.5);
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "b", "jb", wrong); },
                     "lower limit > upper limit", "lower > upper");
  wrong.upper = VecX::Constant(1, std::nan(""));
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, Transform(), I, "b", "jb", wrong); }, "jb", "NaN limit");
  Transform skewed;
  skewed.E(0, 1) = 0.1;
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, skewed, I, "b", "jb"); }, "not orthonormal", "X_tree");
  Transform nonfinite;
  nonfinite.r.x() = kInf;
  expect_model_error([&] { m.add_body(1, JointRevoluteZ{}, nonfinite, I, "b", "jb"); }, "non-finite", "X_tree inf");
  // Nothing was added by the refused calls.
  EXPECT_EQ(m.nbodies(), 2);
  EXPECT_EQ(m.nq(), 1);
  EXPECT_EQ(m.lower_position_limit().size(), 1);
  // A good one still works and is numbered next.
  EXPECT_EQ(m.add_body(1, JointSpherical{}, Transform(), I, "b", "jb"), 2);
  EXPECT_EQ(m.nq(), 5);
  EXPECT_EQ(m.nv(), 4);
  EXPECT_EQ(m.idx_q(2), 1);
  EXPECT_EQ(m.idx_v(2), 1);
}

// ================================================================= builders
void expect_identical(const Model& a, const Model& b) {
  ASSERT_EQ(a.nbodies(), b.nbodies());
  ASSERT_EQ(a.nq(), b.nq());
  ASSERT_EQ(a.nv(), b.nv());
  for (int i = 0; i < a.nbodies(); ++i) {
    EXPECT_EQ(a.parent(i), b.parent(i));
    EXPECT_EQ(a.body_name(i), b.body_name(i));
    EXPECT_EQ(a.joint_name(i), b.joint_name(i));
    EXPECT_EQ(a.joint(i).index(), b.joint(i).index());
    EXPECT_EQ(a.X_tree(i).E, b.X_tree(i).E);
    EXPECT_EQ(a.X_tree(i).r, b.X_tree(i).r);
    EXPECT_EQ(a.inertia(i).matrix(), b.inertia(i).matrix());
    EXPECT_EQ(S_of(a.joint(i)), S_of(b.joint(i)));
  }
  EXPECT_EQ(a.lower_position_limit(), b.lower_position_limit());
  EXPECT_EQ(a.upper_position_limit(), b.upper_position_limit());
  EXPECT_EQ(a.frames().size(), b.frames().size());
}

void expect_well_formed(const Model& m) {
  for (int i = 1; i < m.nbodies(); ++i) {
    EXPECT_LT(m.parent(i), i) << m.name() << " body " << i;
    EXPECT_GE(m.parent(i), 0) << m.name() << " body " << i;
    const RigidBodyInertia& I = m.inertia(i);
    EXPECT_TRUE(check_inertia(I.mass(), I.com(), I.inertia_com()).valid()) << m.name() << " " << m.body_name(i);
  }
  for (int k = 0; k < m.nq(); ++k) EXPECT_LE(m.lower_position_limit()[k], m.upper_position_limit()[k]) << m.name();
  const std::string s = summary(m);
  for (int i = 0; i < m.nbodies(); ++i) EXPECT_NE(s.find(m.body_name(i)), std::string::npos) << m.body_name(i);
  EXPECT_NE(s.find("nq = " + std::to_string(m.nq())), std::string::npos) << s;
  EXPECT_NE(s.find("nv = " + std::to_string(m.nv())), std::string::npos) << s;
}

double subtree_mass(const Model& m, int i) {
  double total = 0.0;
  for (int k : m.subtree(i)) total += m.inertia(k).mass();
  return total;
}

TEST(Builders, DeterministicForASeedAndVaryAcrossSeeds) {
  expect_identical(build_chain(9, {Vec3::UnitZ(), Vec3::UnitY()}, 4),
                   build_chain(9, {Vec3::UnitZ(), Vec3::UnitY()}, 4));
  expect_identical(build_random_tree(20, 1.7, 0.4, 0.9, 4), build_random_tree(20, 1.7, 0.4, 0.9, 4));
  expect_identical(build_humanoid(4), build_humanoid(4));
  expect_identical(build_quadruped(4, false), build_quadruped(4, false));
  expect_identical(build_all_joints_tree(4), build_all_joints_tree(4));
  EXPECT_NE(build_chain(9, {Vec3::UnitZ()}, 1).total_mass(), build_chain(9, {Vec3::UnitZ()}, 2).total_mass());
  EXPECT_NE(build_random_tree(9, 2, 0, 1, 1).total_mass(), build_random_tree(9, 2, 0, 1, 2).total_mass());
  EXPECT_NE(build_humanoid(1).total_mass(), build_humanoid(2).total_mass());
  EXPECT_NE(build_quadruped(1).total_mass(), build_quadruped(2).total_mass());
  EXPECT_NE(build_all_joints_tree(1).total_mass(), build_all_joints_tree(2).total_mass());
}

TEST(Builders, Chain) {
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const Model m = build_chain(12, {Vec3::UnitZ(), Vec3::UnitY()}, seed);
    expect_well_formed(m);
    EXPECT_EQ(m.nbodies(), 13);
    EXPECT_EQ(m.nq(), 12);
    EXPECT_EQ(m.nv(), 12);
    EXPECT_FALSE(m.has_floating_base());
    for (int i = 1; i < m.nbodies(); ++i) {
      EXPECT_EQ(m.parent(i), i - 1);
      EXPECT_EQ(joint_kind(m.joint(i)), i % 2 == 1 ? "revolute_z" : "revolute_y");
      EXPECT_GE(m.inertia(i).mass(), 0.5);
      EXPECT_LE(m.inertia(i).mass(), 2.0);
      // Joint offsets are slightly rotated, and links are 0.1-0.3 m long.
      const double angle = Eigen::AngleAxisd(m.X_tree(i).rotation()).angle();
      EXPECT_LE(angle, 0.1 + 1e-12);
      if (i > 1) {
        EXPECT_GE(m.X_tree(i).r.norm(), 0.1);
        EXPECT_LE(m.X_tree(i).r.norm(), 0.3);
      }
    }
  }
  const Model g = build_chain(4, {Vec3(1.0, 1.0, 0.0), Vec3::UnitX()}, 0);
  EXPECT_EQ(joint_kind(g.joint(1)), "revolute");
  EXPECT_EQ(joint_kind(g.joint(2)), "revolute_x");
  EXPECT_EQ(joint_kind(g.joint(3)), "revolute");
  EXPECT_EQ(build_chain(0).nbodies(), 1);
  expect_invalid_argument([] { build_chain(-1); }, "n = -1", "negative n");
  expect_invalid_argument([] { build_chain(3, {}); }, "empty", "no axes");
  expect_invalid_argument([] { build_chain(3, {Vec3::Zero()}); }, "zero-length axis", "zero axis");
}

TEST(Builders, RandomTreeParentStructure) {
  const Model chain = build_random_tree(15, 1.0, 0.0, 1.0, 3);
  expect_well_formed(chain);
  EXPECT_EQ(chain.nq(), 15);
  EXPECT_EQ(chain.nv(), 15);
  for (int i = 1; i < chain.nbodies(); ++i) {
    EXPECT_EQ(chain.parent(i), i - 1);
    EXPECT_EQ(joint_kind(chain.joint(i)), "revolute_z");  // skew = 0: all z, fast path
  }
  const Model binary = build_random_tree(31, 2.0, 0.3, 0.95, 3);
  expect_well_formed(binary);
  for (int i = 1; i < binary.nbodies(); ++i) EXPECT_EQ(binary.parent(i), i / 2) << i;
  EXPECT_EQ(binary.children(1).size(), 2u);
  EXPECT_EQ(binary.depth(31), 5);
  const std::vector<int> expected_15 = {0, 1, 2, 2, 3, 4, 4, 5};  // floor(i / 1.5)
  const std::vector<int> expected_3 = {0, 1, 1, 1, 2, 2, 2, 3};   // floor((i + 1) / 3)
  const Model t15 = build_random_tree(8, 1.5, 0.0, 1.0, 0), t3 = build_random_tree(8, 3.0, 0.0, 1.0, 0);
  for (int i = 1; i <= 8; ++i) {
    EXPECT_EQ(t15.parent(i), expected_15[i - 1]) << i;
    EXPECT_EQ(t3.parent(i), expected_3[i - 1]) << i;
  }
  // Skew rotates successive axes: the axis at depth d is Rx(skew (d - 1)) z.
  for (int i = 1; i < binary.nbodies(); ++i) {
    const MatX S = S_of(binary.joint(i));
    const double a = 0.3 * (binary.depth(i) - 1);
    EXPECT_LE((S.col(0).head<3>() - Vec3(0.0, -std::sin(a), std::cos(a))).cwiseAbs().maxCoeff(), kTol) << i;
    EXPECT_EQ(joint_kind(binary.joint(i)), binary.depth(i) == 1 ? "revolute_z" : "revolute") << i;
  }
  // Taper: masses and lengths scale like taper^(i-1) (+-3 %).
  const Model tapered = build_random_tree(10, 1.0, 0.1, 0.8, 9);
  for (int i = 1; i < tapered.nbodies(); ++i) {
    EXPECT_NEAR(tapered.inertia(i).mass() / std::pow(0.8, i - 1), 1.0, 0.03 + 1e-12) << i;
    if (i > 1) {
      EXPECT_NEAR(tapered.X_tree(i).r.x() / std::pow(0.8, i - 2), 1.0, 0.03 + 1e-12) << i;
    }
  }
  expect_invalid_argument([] { build_random_tree(5, 0.5, 0, 1, 0); }, "branching factor", "bf < 1");
  expect_invalid_argument([] { build_random_tree(5, 2, 0, 0.0, 0); }, "taper", "taper 0");
  expect_invalid_argument([] { build_random_tree(-2, 2, 0, 1.0, 0); }, "n = -2", "negative n");
}

TEST(Builders, Humanoid) {
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    for (bool floating : {true, false}) {
      const Model m = build_humanoid(seed, floating);
      expect_well_formed(m);
      EXPECT_EQ(m.nbodies(), 32);
      EXPECT_EQ(m.nq(), floating ? 37 : 30);
      EXPECT_EQ(m.nv(), floating ? 36 : 30);
      EXPECT_EQ(m.has_floating_base(), floating);
      EXPECT_GE(m.total_mass(), 60.0);
      EXPECT_LE(m.total_mass(), 75.0);
      const int pelvis = m.body_index("pelvis");
      EXPECT_EQ(pelvis, 1);
      EXPECT_EQ(joint_kind(m.joint(pelvis)), floating ? "free_flyer" : "fixed");
      for (const char* name :
           {"torso_z", "torso_y",   "neck_z",    "neck_y",    "l_shoulder_y", "l_shoulder_x", "l_shoulder_z",
            "l_elbow", "l_wrist_z", "l_wrist_x", "l_wrist_y", "r_elbow",      "l_hip_z",      "l_hip_x",
            "l_hip_y", "l_knee",    "l_ankle_y", "l_ankle_x", "r_hip_y",      "r_knee",       "r_ankle_x"}) {
        ASSERT_TRUE(m.has_joint(name)) << name;
        const int j = m.joint_index(name);
        const std::string kind(joint_kind(m.joint(j)));
        EXPECT_TRUE(kind == "revolute_x" || kind == "revolute_y" || kind == "revolute_z") << name << " " << kind;
        EXPECT_LE(m.limits(j).lower[0], 0.0) << name;
        EXPECT_GE(m.limits(j).upper[0], 0.0) << name;
        EXPECT_LT(m.limits(j).lower[0], m.limits(j).upper[0]) << name;
        EXPECT_TRUE(std::isfinite(m.limits(j).velocity[0]) && m.limits(j).velocity[0] > 0) << name;
        EXPECT_TRUE(std::isfinite(m.limits(j).effort[0]) && m.limits(j).effort[0] > 0) << name;
      }
      EXPECT_EQ(m.movable_joint_names().size(), floating ? 31u : 30u);
      // Limbs: 7-DoF arms, 6-DoF legs, symmetric masses within the perturbation.
      EXPECT_EQ(m.depth(m.body_index("l_hand")) - m.depth(m.body_index("torso")), 7);
      EXPECT_EQ(m.depth(m.body_index("r_foot")) - m.depth(pelvis), 6);
      EXPECT_NEAR(subtree_mass(m, m.body_index("l_hip_link1")), subtree_mass(m, m.body_index("r_hip_link1")), 1.5);
      EXPECT_TRUE(m.has_frame("l_sole") && m.has_frame("r_sole") && m.has_frame("l_hand_tip") &&
                  m.has_frame("r_hand_tip"));
      // Right-side roll limits mirror the left ones.
      EXPECT_EQ(m.limits(m.joint_index("r_hip_x")).lower[0], -m.limits(m.joint_index("l_hip_x")).upper[0]);
      // Feet below the pelvis at q = neutral: sum of the leg X_tree z offsets.
      double z = 0.0;
      for (int b : m.support(m.body_index("l_foot")))
        if (b != pelvis) z += m.X_tree(b).r.z();
      EXPECT_LT(z, -0.8);
    }
  }
  const std::string s = summary(build_humanoid(0));
  EXPECT_NE(s.find("l_hip_y"), std::string::npos);
  EXPECT_NE(s.find("r_knee"), std::string::npos);
}

TEST(Builders, Quadruped) {
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    for (bool floating : {true, false}) {
      const Model m = build_quadruped(seed, floating);
      expect_well_formed(m);
      EXPECT_EQ(m.nbodies(), 14);
      EXPECT_EQ(m.nq(), floating ? 19 : 12);
      EXPECT_EQ(m.nv(), floating ? 18 : 12);
      EXPECT_EQ(m.has_floating_base(), floating);
      const int trunk = m.body_index("trunk");
      EXPECT_GE(m.inertia(trunk).mass(), 20.0);
      EXPECT_LE(m.inertia(trunk).mass(), 30.0);
      for (const char* leg : {"LF", "RF", "LH", "RH"}) {
        const std::string p(leg);
        const int hip = m.body_index(p + "_HIP");
        EXPECT_EQ(m.parent(hip), trunk);
        EXPECT_GE(subtree_mass(m, hip), 2.0) << leg;
        EXPECT_LE(subtree_mass(m, hip), 3.0) << leg;
        EXPECT_EQ(joint_kind(m.joint(m.joint_index(p + "_HAA"))), "revolute_x");
        EXPECT_EQ(joint_kind(m.joint(m.joint_index(p + "_HFE"))), "revolute_y");
        EXPECT_EQ(joint_kind(m.joint(m.joint_index(p + "_KFE"))), "revolute_y");
        EXPECT_EQ(m.subtree(hip).size(), 3u);
        EXPECT_TRUE(m.has_frame(p + "_FOOT"));
        for (const char* j : {"_HAA", "_HFE", "_KFE"}) {
          const JointLimits& l = m.limits(m.joint_index(p + j));
          EXPECT_LE(l.lower[0], 0.0);
          EXPECT_GE(l.upper[0], 0.0);
          EXPECT_TRUE(std::isfinite(l.effort[0]));
        }
      }
    }
  }
}

TEST(Builders, AllJointsTreeIsWellFormed) {
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const Model m = build_all_joints_tree(seed);
    expect_well_formed(m);
    EXPECT_EQ(m.nq(), 33);
    EXPECT_EQ(m.nv(), 29);
    for (int i = 1; i < m.nbodies(); ++i) {
      EXPECT_GE(m.inertia(i).mass(), 0.5);
      EXPECT_LE(m.inertia(i).mass(), 2.0);
    }
  }
}

}  // namespace
