// Dynamics against closed-form solutions, conservation laws of free motion, and the
// handling of bad input and singular models.
//
//  * Closed forms (single pendulum on every 1-DoF rotational joint kernel, helical screw,
//    planar double pendulum after Spong, prismatic joint under gravity): each quantity is a
//    few dozen flops on O(1)..O(10) numbers, so rounding is a few ulp of the largest term;
//    kClosedTol = 1e-12 relative to the magnitude of the terms (~4.5e3 eps, ~100x margin)
//    and any modelling error (a missing term, a sign, a wrong lever arm) is O(1).
//  * Free rigid body without gravity, integrated with 4th-order Runge-Kutta-Munthe-Kaas
//    (RKMK4) on SE(3): spatial momentum (world frame) and kinetic energy are conserved up to
//    the integrator's global error O(dt^4) (see FreeBody* for the budget).
//  * Bad input throws plucker::InvalidArgument naming the size / joint; singular models throw
//    plucker::SingularError naming the joint (never NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "dynamics_test_support.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

constexpr double kClosedTol = 1e-12;
constexpr double kG = 9.81;

double rel_err(double value, double expected, double scale) { return std::abs(value - expected) / scale; }

// =========================================================================== closed forms
// --------------------------------------------------------------------- single pendulum
// A body hinged about the world y axis at pivot p, COM at distance l below the hinge (body
// coordinates (0, 0, -l)), rotational inertia Ic about the COM (with products of inertia,
// which only produce reaction moments). Gravity (0, 0, -g):
//   COM (world) = p + (-l sin q, 0, -l cos q),  V = m g (p_z - l cos q),
//   M = Ic_yy + m l^2,  (Ic_yy + m l^2) qdd + m g l sin q = tau  (no velocity terms in 1 DoF).
struct PendulumCase {
  std::string name;
  JointModel joint;
};

std::vector<PendulumCase> pendulum_joints() {
  MatS6 S = MatS6::Zero(6, 1);
  S(1, 0) = 1.0;
  return {{"revolute_y (fast path)", JointRevoluteY{}},
          {"revolute (general axis kernel)", JointRevolute(Vec3::UnitY())},
          {"helical, pitch 0", make_helical(Vec3::UnitY(), 0.0)},
          {"general joint, S = [e_y; 0]", make_general_joint(S)}};
}

TEST(DynamicsClosedForm, SinglePendulumOnEveryRotationalKernel) {
  const double m = 1.7, l = 0.6;
  Mat3 Ic;
  Ic << 0.03, 0.002, -0.001, 0.002, 0.05, 0.003, -0.001, 0.003, 0.04;
  const Vec3 pivot(0.3, -0.2, 1.0);
  const double I_axis = Ic(1, 1) + m * l * l;
  for (const PendulumCase& pc : pendulum_joints()) {
    Model model;
    model.add_body(0, pc.joint, Transform::translation(pivot),
                   RigidBodyInertia::from_mass_com_inertia(m, Vec3(0, 0, -l), Ic), "bob", "hinge");
    Data data(model);
    Rng rng(201);
    for (int s = 0; s < 8; ++s) {
      const VecX q = random_vector(1, rng, 3.0), v = random_vector(1, rng, 2.0), a = random_vector(1, rng, 5.0),
                 tau = random_vector(1, rng, 10.0);
      const double sq = std::sin(q[0]), cq = std::cos(q[0]);
      const double gravity = m * kG * l * sq;
      const double scale = I_axis * std::abs(a[0]) + std::abs(gravity) + I_axis * v[0] * v[0] + 1e-3;
      const std::string ctx = pc.name + " state " + std::to_string(s);

      EXPECT_LE(rel_err(crba(model, data, q)(0, 0), I_axis, I_axis), kClosedTol) << ctx;
      EXPECT_LE(rel_err(rnea(model, data, q, v, a)[0], I_axis * a[0] + gravity, scale), kClosedTol) << ctx;
      EXPECT_LE(rel_err(gravity_torques(model, data, q)[0], gravity, m * kG * l), kClosedTol) << ctx;
      const double qdd = (tau[0] - gravity) / I_axis;
      EXPECT_LE(rel_err(aba(model, data, q, v, tau)[0], qdd, (std::abs(tau[0]) + m * kG * l) / I_axis), kClosedTol)
          << ctx;
      EXPECT_LE(
          rel_err(forward_dynamics_crba(model, data, q, v, tau)[0], qdd, (std::abs(tau[0]) + m * kG * l) / I_axis),
          kClosedTol)
          << ctx;
      const double V = m * kG * (pivot.z() - l * cq);
      EXPECT_LE(rel_err(potential_energy(model, data, q), V, m * kG * (std::abs(pivot.z()) + l)), kClosedTol) << ctx;
      EXPECT_LE(rel_err(kinetic_energy(model, data, q, v), 0.5 * I_axis * v[0] * v[0], I_axis * v[0] * v[0] + 1e-3),
                kClosedTol)
          << ctx;
      const Vec3 com = pivot + Vec3(-l * sq, 0.0, -l * cq);
      EXPECT_LE((center_of_mass(model, data, q) - com).norm(), kClosedTol * (pivot.norm() + l)) << ctx;
    }
  }
}

// --------------------------------------------------------------------- helical screw
// Screw about the world z axis with pitch p (m/rad), COM at radius r from the axis: the COM
// moves with horizontal speed r qd and vertical speed p qd, so
//   M = Ic_zz + m r^2 + m p^2,   M qdd + m g p = tau,   V = m g (p q + c_z).
TEST(DynamicsClosedForm, HelicalScrewUnderGravity) {
  const double m = 2.3, r = 0.25, pitch = 0.08, cz = 0.1;
  Mat3 Ic;
  Ic << 0.02, 0.001, 0.0, 0.001, 0.03, -0.002, 0.0, -0.002, 0.045;
  const double M = Ic(2, 2) + m * r * r + m * pitch * pitch;
  for (const JointModel& joint : {make_helical(Vec3::UnitZ(), pitch), [&] {
                                    MatS6 S = MatS6::Zero(6, 1);
                                    S(2, 0) = 1.0;
                                    S(5, 0) = pitch;
                                    return make_general_joint(S);
                                  }()}) {
    Model model;
    model.add_body(0, joint, Transform(), RigidBodyInertia::from_mass_com_inertia(m, Vec3(r, 0, cz), Ic), "nut",
                   "screw");
    Data data(model);
    Rng rng(202);
    for (int s = 0; s < 8; ++s) {
      const VecX q = random_vector(1, rng, 3.0), v = random_vector(1, rng, 2.0), a = random_vector(1, rng, 5.0),
                 tau = random_vector(1, rng, 10.0);
      const std::string ctx = std::string(joint_kind(joint)) + " state " + std::to_string(s);
      const double scale = M * (std::abs(a[0]) + v[0] * v[0]) + m * kG * pitch;
      EXPECT_LE(rel_err(crba(model, data, q)(0, 0), M, M), kClosedTol) << ctx;
      EXPECT_LE(rel_err(rnea(model, data, q, v, a)[0], M * a[0] + m * kG * pitch, scale), kClosedTol) << ctx;
      EXPECT_LE(rel_err(aba(model, data, q, v, tau)[0], (tau[0] - m * kG * pitch) / M,
                        (std::abs(tau[0]) + m * kG * pitch) / M),
                kClosedTol)
          << ctx;
      EXPECT_LE(rel_err(potential_energy(model, data, q), m * kG * (pitch * q[0] + cz), m * kG * (3 * pitch + cz)),
                kClosedTol)
          << ctx;
    }
  }
}

// --------------------------------------------------------------------- double pendulum
// Planar elbow manipulator of Spong, Hutchinson & Vidyasagar, "Robot Modeling and Control"
// (2006), §7.4.2 / Example 7.3: two links turning about z, angles from the x axis, gravity
// g along -y; link i has mass m_i, length l_i, COM at lc_i along the link, inertia I_i
// about the z axis through its COM. With h = -m2 l1 lc2 sin q2:
//   d11 = m1 lc1^2 + m2 (l1^2 + lc2^2 + 2 l1 lc2 cos q2) + I1 + I2
//   d12 = d21 = m2 (lc2^2 + l1 lc2 cos q2) + I2,        d22 = m2 lc2^2 + I2
//   C1 = h (2 q1d q2d + q2d^2),                          C2 = -h q1d^2
//   phi1 = (m1 lc1 + m2 l1) g cos q1 + m2 lc2 g cos(q1 + q2),  phi2 = m2 lc2 g cos(q1 + q2)
//   D qdd + C + phi = tau,   V = (m1 lc1 + m2 l1) g sin q1 + m2 lc2 g sin(q1 + q2).
// (Christoffel symbols re-derived from d(q): c121 = c211 = c221 = h, c112 = -h, others 0.)
// The links also get products of inertia and an out-of-plane COM offset along z, which
// produce only out-of-plane reaction moments and must not change the planar equations.
struct DoublePendulum {
  double m1, m2, l1, lc1, lc2, I1, I2;
  Eigen::Matrix2d D(double q2) const {
    const double c2 = std::cos(q2);
    Eigen::Matrix2d d;
    d(0, 0) = m1 * lc1 * lc1 + m2 * (l1 * l1 + lc2 * lc2 + 2 * l1 * lc2 * c2) + I1 + I2;
    d(0, 1) = d(1, 0) = m2 * (lc2 * lc2 + l1 * lc2 * c2) + I2;
    d(1, 1) = m2 * lc2 * lc2 + I2;
    return d;
  }
  Eigen::Vector2d C(const Eigen::Vector2d& q, const Eigen::Vector2d& qd) const {
    const double h = -m2 * l1 * lc2 * std::sin(q[1]);
    return {h * (2 * qd[0] * qd[1] + qd[1] * qd[1]), -h * qd[0] * qd[0]};
  }
  Eigen::Vector2d phi(const Eigen::Vector2d& q) const {
    const double c12 = std::cos(q[0] + q[1]);
    return {(m1 * lc1 + m2 * l1) * kG * std::cos(q[0]) + m2 * lc2 * kG * c12, m2 * lc2 * kG * c12};
  }
  double V(const Eigen::Vector2d& q) const {
    return (m1 * lc1 + m2 * l1) * kG * std::sin(q[0]) + m2 * lc2 * kG * std::sin(q[0] + q[1]);
  }
};

TEST(DynamicsClosedForm, PlanarDoublePendulumMatchesSpong) {
  Rng rng(203);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  for (int params = 0; params < 4; ++params) {
    DoublePendulum dp;
    dp.m1 = 0.5 + 2 * U(rng);
    dp.m2 = 0.5 + 2 * U(rng);
    dp.l1 = 0.3 + 0.7 * U(rng);
    dp.lc1 = dp.l1 * (0.2 + 0.6 * U(rng));
    dp.lc2 = 0.1 + 0.5 * U(rng);
    dp.I1 = 0.01 + 0.1 * U(rng);
    dp.I2 = 0.01 + 0.1 * U(rng);
    auto inertia = [&](double m, double lc, double Izz, double z_offset) {
      Mat3 Ic;
      Ic << 1.5 * Izz, 0.1 * Izz, 0.05 * Izz, 0.1 * Izz, 1.2 * Izz, -0.08 * Izz, 0.05 * Izz, -0.08 * Izz, Izz;
      return RigidBodyInertia::from_mass_com_inertia(m, Vec3(lc, 0.0, z_offset), Ic);
    };
    for (int variant = 0; variant < 2; ++variant) {  // fast-path z kernel, general-axis kernel
      const JointModel joint = variant == 0 ? JointModel(JointRevoluteZ{}) : JointModel(JointRevolute(Vec3::UnitZ()));
      Model model;
      model.set_gravity(Vec3(0.0, -kG, 0.0));
      const int b1 = model.add_body(0, joint, Transform(), inertia(dp.m1, dp.lc1, dp.I1, 0.0), "link1", "joint1");
      model.add_body(b1, joint, Transform::translation(Vec3(dp.l1, 0.0, 0.0)), inertia(dp.m2, dp.lc2, dp.I2, 0.05),
                     "link2", "joint2");
      Data data(model);
      for (int s = 0; s < 6; ++s) {
        const VecX q = random_vector(2, rng, 3.0), qd = random_vector(2, rng, 2.0), qdd = random_vector(2, rng, 5.0),
                   tau = random_vector(2, rng, 10.0);
        const std::string ctx =
            "params " + std::to_string(params) + " variant " + std::to_string(variant) + " state " + std::to_string(s);
        const Eigen::Matrix2d D = dp.D(q[1]);
        const Eigen::Vector2d C = dp.C(q, qd), phi = dp.phi(q);
        const double d_scale = D.cwiseAbs().maxCoeff();
        EXPECT_LE((crba(model, data, q) - D).cwiseAbs().maxCoeff(), kClosedTol * d_scale) << ctx;
        // Scale of C + phi: the magnitudes of its terms.
        const double c_scale =
            d_scale * qd.squaredNorm() + phi.cwiseAbs().maxCoeff() + (dp.m1 * dp.lc1 + dp.m2 * dp.l1) * kG;
        EXPECT_LE((nonlinear_effects(model, data, q, qd) - (C + phi)).cwiseAbs().maxCoeff(), kClosedTol * c_scale)
            << ctx;
        EXPECT_LE((gravity_torques(model, data, q) - phi).cwiseAbs().maxCoeff(), kClosedTol * c_scale) << ctx;
        EXPECT_LE((rnea(model, data, q, qd, qdd) - (D * qdd + C + phi)).cwiseAbs().maxCoeff(),
                  kClosedTol * (c_scale + d_scale * qdd.cwiseAbs().maxCoeff()))
            << ctx;
        // Forward dynamics: the 2x2 solve is well conditioned (cond(D) < 1e3 here), so the
        // error is ~cond(D) eps relative to |D^-1| |tau - C - phi|.
        const Eigen::Vector2d rhs = tau - C - phi;
        const Eigen::Vector2d expected = D.inverse() * rhs;
        const double fd_scale = D.inverse().cwiseAbs().maxCoeff() * (tau.cwiseAbs().maxCoeff() + c_scale);
        EXPECT_LE((aba(model, data, q, qd, tau) - expected).cwiseAbs().maxCoeff(), 1e3 * kClosedTol * fd_scale) << ctx;
        EXPECT_LE((forward_dynamics_crba(model, data, q, qd, tau) - expected).cwiseAbs().maxCoeff(),
                  1e3 * kClosedTol * fd_scale)
            << ctx;
        EXPECT_LE(std::abs(kinetic_energy(model, data, q, qd) - 0.5 * qd.dot(D * qd)),
                  kClosedTol * d_scale * qd.squaredNorm())
            << ctx;
        EXPECT_LE(std::abs(potential_energy(model, data, q) - dp.V(q)),
                  kClosedTol * (dp.m1 * dp.lc1 + dp.m2 * (dp.l1 + dp.lc2)) * kG)
            << ctx;
      }
    }
  }
}

// --------------------------------------------------------------------- prismatic joint
// A body on a prismatic joint translates without turning, so whatever its rotational
// inertia and COM offset:  M = m,  rnea = m (qdd - g . u),  qdd = tau / m + g . u,
// with u the joint axis in world coordinates (u = +z: qdd = tau/m - 9.81).
TEST(DynamicsClosedForm, PrismaticJointUnderGravity) {
  const double m = 3.2;
  Mat3 Ic;
  Ic << 0.05, 0.01, 0.0, 0.01, 0.07, 0.02, 0.0, 0.02, 0.06;
  const Mat3 R = Eigen::AngleAxisd(0.7, Vec3(0.2, -0.5, 0.8).normalized()).toRotationMatrix();
  struct Case {
    std::string name;
    JointModel joint;
    Transform X_tree;
    Vec3 axis_world;
  };
  const Vec3 general = Vec3(1.0, 2.0, 2.0) / 3.0;
  const std::vector<Case> cases = {
      {"prismatic_z (vertical)", JointPrismaticZ{}, Transform(), Vec3::UnitZ()},
      {"prismatic, general axis", JointPrismatic(general), Transform::translation(Vec3(0.1, 0.2, 0.3)), general},
      {"prismatic_x, rotated joint frame", JointPrismaticX{}, Transform::from_pose(R, Vec3(-0.4, 0.1, 0.5)),
       R * Vec3::UnitX()},
  };
  const Vec3 g(0.0, 0.0, -kG);
  for (const Case& c : cases) {
    Model model;
    model.add_body(0, c.joint, c.X_tree, RigidBodyInertia::from_mass_com_inertia(m, Vec3(0.1, -0.2, 0.05), Ic),
                   "slider", "rail");
    Data data(model);
    Rng rng(204);
    const double gu = g.dot(c.axis_world);
    for (int s = 0; s < 8; ++s) {
      const VecX q = random_vector(1, rng, 1.0), v = random_vector(1, rng, 2.0), a = random_vector(1, rng, 5.0),
                 tau = random_vector(1, rng, 50.0);
      const std::string ctx = c.name + " state " + std::to_string(s);
      EXPECT_LE(rel_err(crba(model, data, q)(0, 0), m, m), kClosedTol) << ctx;
      EXPECT_LE(rel_err(rnea(model, data, q, v, a)[0], m * (a[0] - gu), m * (std::abs(a[0]) + kG)), kClosedTol) << ctx;
      EXPECT_LE(rel_err(aba(model, data, q, v, tau)[0], tau[0] / m + gu, std::abs(tau[0]) / m + kG), kClosedTol) << ctx;
      EXPECT_LE(rel_err(forward_dynamics_crba(model, data, q, v, tau)[0], tau[0] / m + gu, std::abs(tau[0]) / m + kG),
                kClosedTol)
          << ctx;
    }
  }
}

// --------------------------------------------------------------------- free rigid body
// A free-flyer body with an asymmetric inertia (products of inertia, COM off the body
// origin) and gravity switched off. Integrated with RKMK4 on SE(3):
//   q(t) = q0 exp(u(t)) via plucker::integrate, u' = dexp^-1_{-u}(v) = v + [u, v]/2 + [u,[u,v]]/12,
// the se(3) bracket being the motion cross product. Order 4 (Munthe-Kaas 1998), so the
// global error after T = 3 s with dt = 1e-3 is ~T dt^4 |w|^5 ~ 1e-10 relative.
Model free_body() {
  Model model;
  model.set_gravity(Vec3::Zero());
  const Mat3 R = Eigen::AngleAxisd(0.4, Vec3(1.0, 2.0, -1.0).normalized()).toRotationMatrix();
  const Mat3 Ic = R * Vec3(0.1, 0.2, 0.27).asDiagonal() * R.transpose();
  model.add_body(0, JointFreeFlyer{}, Transform(),
                 RigidBodyInertia::from_mass_com_inertia(2.5, Vec3(0.1, -0.05, 0.2), Ic), "body", "root_joint");
  return model;
}

void rkmk4_step(const Model& model, Data& data, VecX& q, VecX& v, double dt) {
  const VecX tau = VecX::Zero(6);
  auto accel = [&](const VecX& qq, const VecX& vv) -> VecX { return aba(model, data, qq, vv, tau); };
  auto dexpinv = [](const VecX& u, const VecX& xi) -> VecX {
    const Motion U{Vec6(u)}, X{Vec6(xi)};
    const Motion c1 = cross(U, X), c2 = cross(U, c1);
    return (X + 0.5 * c1 + (1.0 / 12.0) * c2).vector();
  };
  const VecX k1 = v, a1 = accel(q, v);
  const VecX u2 = 0.5 * dt * k1, v2 = v + 0.5 * dt * a1;
  const VecX k2 = dexpinv(u2, v2), a2 = accel(integrate(model, q, u2), v2);
  const VecX u3 = 0.5 * dt * k2, v3 = v + 0.5 * dt * a2;
  const VecX k3 = dexpinv(u3, v3), a3 = accel(integrate(model, q, u3), v3);
  const VecX u4 = dt * k3, v4 = v + dt * a3;
  const VecX k4 = dexpinv(u4, v4), a4 = accel(integrate(model, q, u4), v4);
  q = integrate(model, q, (dt / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4));
  v += (dt / 6.0) * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
}

/// Spatial momentum in world coordinates (about the world origin).
Force world_momentum(const Model& model, Data& data, const VecX& q, const VecX& v) {
  forward_kinematics(model, data, q, v);
  return data.X_base[1].apply_inverse(model.inertia(1) * data.v[1]);
}

// Torque-free tumbling (spin mostly about the intermediate principal axis, the unstable
// one, so the motion is far from a steady rotation): world-frame spatial momentum
// (angular momentum about the world origin and linear momentum) and kinetic energy are
// conserved, and the COM moves on a straight line at constant velocity p/m.
// Tolerance 1e-8 relative (brief), ~100x above the RKMK4 global error.
TEST(DynamicsClosedForm, FreeBodyConservesMomentumAndEnergy) {
  const Model model = free_body();
  Data data(model);
  VecX q(7);
  q << 0.3, -0.2, 1.1, 0.0, 0.0, 0.0, 1.0;
  q.tail<4>() = Quat(Eigen::AngleAxisd(1.0, Vec3(0.3, 0.5, 0.2).normalized())).coeffs();
  VecX v(6);
  v << 0.3, 2.0, -0.4, 0.5, -0.2, 0.1;
  const double m = model.inertia(1).mass();
  const Force h0 = world_momentum(model, data, q, v);
  const double T0 = kinetic_energy(model, data, q, v);
  const Vec3 c0 = center_of_mass(model, data, q);
  const Vec3 vc = h0.linear / m;
  const double dt = 1e-3;
  double max_h = 0.0, max_T = 0.0, max_c = 0.0;
  for (int k = 1; k <= 3000; ++k) {
    rkmk4_step(model, data, q, v, dt);
    if (k % 100 != 0) continue;
    const Force h = world_momentum(model, data, q, v);
    max_h = std::max(max_h, (h - h0).vector().norm() / h0.vector().norm());
    max_T = std::max(max_T, std::abs(kinetic_energy(model, data, q, v) - T0) / T0);
    max_c =
        std::max(max_c, (center_of_mass(model, data, q) - (c0 + k * dt * vc)).norm() / (c0.norm() + 3.0 * vc.norm()));
  }
  if (verbose())
    std::cerr << "[ratio] free body: max rel momentum drift " << max_h << ", energy " << max_T << ", COM line " << max_c
              << "\n";
  EXPECT_LE(max_h, 1e-8);
  EXPECT_LE(max_T, 1e-8);
  EXPECT_LE(max_c, 1e-8);
}

// Pure translation (w = 0): no torque arises, the orientation stays put and the COM moves
// exactly on c0 + t R0 v_lin. The only rounding is in the bias force
// v x* (I v) = v_lin x (m v_lin) (not exactly 0 in floating point) and in the sums of
// positions: 1e-12 relative.
TEST(DynamicsClosedForm, FreeBodyPureTranslationIsUniform) {
  const Model model = free_body();
  Data data(model);
  VecX q(7);
  q << -0.5, 0.4, 0.2, 0.0, 0.0, 0.0, 1.0;
  q.tail<4>() = Quat(Eigen::AngleAxisd(-0.8, Vec3(1.0, -0.2, 0.4).normalized())).coeffs();
  const Quat Q0(q[6], q[3], q[4], q[5]);
  VecX v(6);
  v << 0.0, 0.0, 0.0, 0.4, -0.3, 0.2;
  const Vec3 c0 = center_of_mass(model, data, q);
  const Vec3 vc = Q0.toRotationMatrix() * v.tail<3>();
  const double dt = 1e-2;
  for (int k = 1; k <= 300; ++k) {
    rkmk4_step(model, data, q, v, dt);
    const Vec3 expected = c0 + (k * dt) * vc;
    ASSERT_LE((center_of_mass(model, data, q) - expected).norm(), kClosedTol * (c0.norm() + 3.0 * vc.norm()))
        << "step " << k;
    ASSERT_LE(v.head<3>().norm(), kClosedTol) << "step " << k;
    ASSERT_LE((q.tail<4>() - Q0.coeffs()).norm(), kClosedTol) << "step " << k;
  }
}

// =========================================================================== bad input
// Every argument check happens at the API boundary and throws plucker::InvalidArgument
// whose message lets the user act: the expected size, or the joint / body at fault.
template <class Fn>
void expect_invalid(Fn&& fn, const std::vector<std::string>& needles, const std::string& ctx) {
  try {
    fn();
    ADD_FAILURE() << ctx << ": no exception";
  } catch (const InvalidArgument& e) {
    for (const auto& n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << ctx << ": message \"" << e.what() << "\" does not contain \"" << n << "\"";
  } catch (const std::exception& e) {
    ADD_FAILURE() << ctx << ": threw something other than InvalidArgument: " << e.what();
  }
}

struct Inputs {
  VecX q, v, a, tau;
  std::vector<Force> f;
};

// Every entry point, applied to (model, data, inputs), with the tangent arguments it takes.
struct EntryPoint {
  std::string name;
  bool uses_v, uses_a, uses_tau;
  std::function<void(const Model&, Data&, const Inputs&)> call;
};

std::vector<EntryPoint> entry_points() {
  using W = ReferenceFrame;
  using M = const Model&;
  using X = const Inputs&;
  return {
      {"rnea", true, true, false, [](M m, Data& d, X x) { rnea(m, d, x.q, x.v, x.a); }},
      {"rnea f_ext", true, true, false, [](M m, Data& d, X x) { rnea(m, d, x.q, x.v, x.a, x.f, W::Local); }},
      {"nonlinear_effects", true, false, false, [](M m, Data& d, X x) { nonlinear_effects(m, d, x.q, x.v); }},
      {"gravity_torques", false, false, false, [](M m, Data& d, X x) { gravity_torques(m, d, x.q); }},
      {"crba", false, false, false, [](M m, Data& d, X x) { crba(m, d, x.q); }},
      {"aba", true, false, true, [](M m, Data& d, X x) { aba(m, d, x.q, x.v, x.tau); }},
      {"aba f_ext", true, false, true, [](M m, Data& d, X x) { aba(m, d, x.q, x.v, x.tau, x.f); }},
      {"forward_dynamics_crba", true, false, true,
       [](M m, Data& d, X x) { forward_dynamics_crba(m, d, x.q, x.v, x.tau); }},
      {"forward_dynamics_crba f_ext", true, false, true,
       [](M m, Data& d, X x) { forward_dynamics_crba(m, d, x.q, x.v, x.tau, x.f); }},
      {"forward_kinematics(q)", false, false, false, [](M m, Data& d, X x) { forward_kinematics(m, d, x.q); }},
      {"forward_kinematics(q, v)", true, false, false, [](M m, Data& d, X x) { forward_kinematics(m, d, x.q, x.v); }},
      {"forward_kinematics(q, v, a)", true, true, false,
       [](M m, Data& d, X x) { forward_kinematics(m, d, x.q, x.v, x.a); }},
      {"body_jacobian", false, false, false, [](M m, Data& d, X x) { body_jacobian(m, d, x.q, m.nbodies() - 1); }},
      {"jacobian_dot_times_v", true, false, false,
       [](M m, Data& d, X x) { jacobian_dot_times_v(m, d, x.q, x.v, m.nbodies() - 1); }},
      {"center_of_mass", false, false, false, [](M m, Data& d, X x) { center_of_mass(m, d, x.q); }},
      {"center_of_mass_jacobian", false, false, false, [](M m, Data& d, X x) { center_of_mass_jacobian(m, d, x.q); }},
      {"kinetic_energy", true, false, false, [](M m, Data& d, X x) { kinetic_energy(m, d, x.q, x.v); }},
      {"potential_energy", false, false, false, [](M m, Data& d, X x) { potential_energy(m, d, x.q); }},
  };
}

Inputs valid_inputs(const Model& model, Rng& rng) {
  Inputs x;
  x.q = random_configuration(model, rng);
  x.v = random_vector(model.nv(), rng);
  x.a = random_vector(model.nv(), rng);
  x.tau = random_vector(model.nv(), rng);
  x.f.assign(model.nbodies(), Force());
  return x;
}

// Valid inputs are accepted by every entry point (so that the failures below are caused by
// the one bad argument).
TEST(DynamicsBadInput, ValidInputsAreAccepted) {
  for (const Model& model : {build_humanoid(0, true), build_all_joints_tree(1)}) {
    Data data(model);
    Rng rng(301);
    const Inputs x = valid_inputs(model, rng);
    for (const EntryPoint& e : entry_points()) EXPECT_NO_THROW(e.call(model, data, x)) << model.name() << " " << e.name;
  }
}

// Wrong sizes: the message states the expected size (nq = 37 and nv = 36 differ on the
// floating humanoid, so the check cannot pass by confusing them).
TEST(DynamicsBadInput, WrongSizeNamesExpectedSize) {
  const Model model = build_humanoid(0, true);
  ASSERT_NE(model.nq(), model.nv());
  Data data(model);
  Rng rng(302);
  const Inputs good = valid_inputs(model, rng);
  for (const EntryPoint& e : entry_points()) {
    for (int delta : {-1, 1}) {
      Inputs x = good;
      x.q = VecX::Zero(model.nq() + delta);
      expect_invalid([&] { e.call(model, data, x); }, {"expected", std::to_string(model.nq())}, e.name + ": q size");
      // Each tangent argument the entry point takes, in turn.
      const std::vector<std::pair<bool, VecX Inputs::*>> tangents = {
          {e.uses_v, &Inputs::v}, {e.uses_a, &Inputs::a}, {e.uses_tau, &Inputs::tau}};
      for (const auto& [uses, member] : tangents) {
        if (!uses) continue;
        x = good;
        x.*member = VecX::Zero(model.nv() + delta);
        expect_invalid([&] { e.call(model, data, x); }, {"expected", std::to_string(model.nv())},
                       e.name + ": tangent argument size");
      }
    }
  }
}

// NaN or infinity in any coordinate of q, v, a or tau: the message names the joint owning
// that coordinate. Checked for every coordinate of a model with every joint kind.
TEST(DynamicsBadInput, NonFiniteNamesTheJoint) {
  const Model model = build_all_joints_tree(2);
  Data data(model);
  Rng rng(303);
  const Inputs good = valid_inputs(model, rng);
  const double bad_values[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()};
  for (int k = 0; k < model.nq(); ++k) {
    Inputs x = good;
    x.q[k] = bad_values[k % 2];
    const std::string joint = "'" + model.joint_name(joint_of_q(model, k)) + "'";
    for (const EntryPoint& e : entry_points())
      expect_invalid([&] { e.call(model, data, x); }, {joint}, e.name + ": q[" + std::to_string(k) + "] not finite");
  }
  for (int k = 0; k < model.nv(); ++k) {
    const std::string joint = "'" + model.joint_name(model.joint_of_v(k)) + "'";
    const std::string at = "[" + std::to_string(k) + "] not finite";
    Inputs x = good;
    x.v[k] = bad_values[k % 2];
    expect_invalid([&] { rnea(model, data, x.q, x.v, x.a); }, {joint}, "rnea: v" + at);
    expect_invalid([&] { aba(model, data, x.q, x.v, x.tau); }, {joint}, "aba: v" + at);
    expect_invalid([&] { kinetic_energy(model, data, x.q, x.v); }, {joint}, "kinetic_energy: v" + at);
    x = good;
    x.a[k] = bad_values[k % 2];
    expect_invalid([&] { rnea(model, data, x.q, x.v, x.a); }, {joint}, "rnea: a" + at);
    x = good;
    x.tau[k] = bad_values[k % 2];
    expect_invalid([&] { aba(model, data, x.q, x.v, x.tau); }, {joint}, "aba: tau" + at);
    expect_invalid([&] { forward_dynamics_crba(model, data, x.q, x.v, x.tau); }, {joint},
                   "forward_dynamics_crba: tau" + at);
  }
}

// Quaternions (free-flyer, spherical) and planar (cos, sin) pairs must be unit (to 1e-6).
TEST(DynamicsBadInput, NonUnitQuaternionNamesTheJoint) {
  const Model model = build_all_joints_tree(3);
  Data data(model);
  Rng rng(304);
  const Inputs good = valid_inputs(model, rng);
  struct Bad {
    std::string joint;
    int first, count;
  };
  std::vector<Bad> bad;
  for (int i = 1; i < model.nbodies(); ++i) {
    const auto kind = joint_kind(model.joint(i));
    if (kind == "free_flyer") bad.push_back({model.joint_name(i), model.idx_q(i) + 3, 4});
    if (kind == "spherical") bad.push_back({model.joint_name(i), model.idx_q(i), 4});
    if (kind == "planar") bad.push_back({model.joint_name(i), model.idx_q(i) + 2, 2});
  }
  ASSERT_EQ(bad.size(), 4u);  // free-flyer, spherical, two planar joints
  for (const Bad& b : bad) {
    for (double factor : {1.01, 0.5, 0.0}) {
      Inputs x = good;
      x.q.segment(b.first, b.count) *= factor;
      for (const EntryPoint& e : entry_points())
        expect_invalid([&] { e.call(model, data, x); }, {"'" + b.joint + "'"},
                       e.name + ": joint " + b.joint + " scaled by " + std::to_string(factor));
    }
  }
}

// A Data made for another model is refused (it would be indexed out of bounds).
TEST(DynamicsBadInput, DataFromAnotherModel) {
  const Model model = build_humanoid(0, true);
  const Model other = build_chain(5);
  Data wrong(other);
  Rng rng(305);
  const Inputs x = valid_inputs(model, rng);
  for (const EntryPoint& e : entry_points())
    expect_invalid([&] { e.call(model, wrong, x); }, {"model"}, e.name + " with another model's Data");
}

// External forces: one per body (nbodies entries, the message says so), all finite (the
// message names the body).
TEST(DynamicsBadInput, ExternalForcesWrongSizeOrNonFinite) {
  const Model model = build_quadruped(0, true);
  Data data(model);
  Rng rng(306);
  const Inputs good = valid_inputs(model, rng);
  const std::string nb = std::to_string(model.nbodies());
  for (int delta : {-1, 1}) {
    const std::vector<Force> f(model.nbodies() + delta);
    for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local}) {
      expect_invalid([&] { rnea(model, data, good.q, good.v, good.a, f, frame); }, {nb}, "rnea f_ext size");
      expect_invalid([&] { aba(model, data, good.q, good.v, good.tau, f, frame); }, {nb}, "aba f_ext size");
      expect_invalid([&] { forward_dynamics_crba(model, data, good.q, good.v, good.tau, f, frame); }, {nb},
                     "forward_dynamics_crba f_ext size");
    }
  }
  std::vector<Force> f(model.nbodies());
  const int body = model.body_index("LH_THIGH");
  f[body].linear.y() = std::numeric_limits<double>::quiet_NaN();
  const std::string name = "'LH_THIGH'";
  expect_invalid([&] { rnea(model, data, good.q, good.v, good.a, f); }, {name}, "rnea f_ext NaN");
  expect_invalid([&] { aba(model, data, good.q, good.v, good.tau, f); }, {name}, "aba f_ext NaN");
  expect_invalid([&] { forward_dynamics_crba(model, data, good.q, good.v, good.tau, f); }, {name},
                 "forward_dynamics_crba f_ext NaN");
}

// --------------------------------------------------------------------- singular models
template <class Fn>
void expect_singular(Fn&& fn, const std::vector<std::string>& joints, const std::string& ctx) {
  try {
    const VecX qdd = fn();
    ADD_FAILURE() << ctx << ": no exception; returned " << qdd.transpose();
  } catch (const SingularError& e) {
    bool named = false;
    for (const auto& j : joints) named |= std::string(e.what()).find("'" + j + "'") != std::string::npos;
    EXPECT_TRUE(named) << ctx << ": message \"" << e.what() << "\" names none of the singular joints";
  } catch (const std::exception& e) {
    ADD_FAILURE() << ctx << ": threw something other than SingularError: " << e.what();
  }
}

// A leaf body that moves but has no mass (or a point mass on its revolute axis): its
// joint-space inertia is zero, forward dynamics is undefined, and both FD routes must
// throw SingularError naming the joint, for 1-DoF and multi-DoF (LLT path) joints.
TEST(DynamicsSingular, MasslessMovingLeafThrows) {
  MatS6 S2 = MatS6::Zero(6, 2);
  S2(0, 0) = 1.0;
  S2(3, 1) = 1.0;
  struct Case {
    std::string name;
    JointModel joint;
    RigidBodyInertia leaf;
  };
  const std::vector<Case> cases = {
      {"revolute_y, massless", JointRevoluteY{}, RigidBodyInertia::Zero()},
      {"revolute (general axis), massless", JointRevolute(Vec3(0.6, 0.0, 0.8)), RigidBodyInertia::Zero()},
      {"prismatic_x, massless", JointPrismaticX{}, RigidBodyInertia::Zero()},
      {"spherical, massless", JointSpherical{}, RigidBodyInertia::Zero()},
      {"free_flyer, massless", JointFreeFlyer{}, RigidBodyInertia::Zero()},
      {"general 2-column, massless", make_general_joint(S2), RigidBodyInertia::Zero()},
      {"revolute_z, point mass on the axis", JointRevoluteZ{},
       RigidBodyInertia::unchecked(1.0, Vec3(0.0, 0.0, 0.3), Mat3::Zero())},
  };
  for (const Case& c : cases) {
    Model model;
    const int b1 = model.add_body(
        0, JointRevoluteX{}, Transform(),
        RigidBodyInertia::from_mass_com_inertia(2.0, Vec3(0.0, 0.3, 0.0), Mat3::Identity() * 0.01), "arm", "shoulder");
    model.add_body(b1, c.joint, Transform::translation(Vec3(0.0, 0.5, 0.0)), c.leaf, "leaf", "leaf_joint");
    Data data(model);
    Rng rng(401);
    const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
               tau = random_vector(model.nv(), rng);
    expect_singular([&]() -> VecX { return aba(model, data, q, v, tau); }, {"leaf_joint"}, "aba: " + c.name);
    expect_singular([&]() -> VecX { return forward_dynamics_crba(model, data, q, v, tau); }, {"leaf_joint"},
                    "forward_dynamics_crba: " + c.name);
    // Inverse dynamics and the mass matrix stay defined.
    EXPECT_TRUE(rnea(model, data, q, v, tau).allFinite()) << c.name;
    EXPECT_TRUE(crba(model, data, q).allFinite()) << c.name;
  }
}

// A massless link in the middle of a chain is fine as long as its subtree has inertia along
// its motion: small or zero body inertias are not singular pivots.
TEST(DynamicsSingular, MasslessIntermediateLinkAndTinyInertiaDoNotThrow) {
  Model model;
  const int b1 = model.add_body(0, JointRevoluteZ{}, Transform(), RigidBodyInertia::Zero(), "massless_link", "j1");
  const int b2 = model.add_body(
      b1, JointRevoluteY{}, Transform::translation(Vec3(0.3, 0.0, 0.0)),
      RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0.2, 0.0, 0.0), Mat3::Identity() * 1e-3), "link2", "j2");
  // A tiny but valid body (1 g, 1e-9 kg m^2) at the tip.
  model.add_body(b2, JointRevoluteX{}, Transform::translation(Vec3(0.4, 0.0, 0.0)),
                 RigidBodyInertia::from_mass_com_inertia(1e-3, Vec3(0.0, 0.01, 0.0), Mat3::Identity() * 1e-9), "tip",
                 "j3");
  Data data(model);
  Rng rng(402);
  for (int s = 0; s < 5; ++s) {
    const VecX q = random_configuration(model, rng), v = random_vector(3, rng), tau = random_vector(3, rng);
    const VecX qdd = aba(model, data, q, v, tau);
    ASSERT_TRUE(qdd.allFinite());
    const VecX C = nonlinear_effects(model, data, q, v);
    const Spectrum sp = spectrum(crba(model, data, q));
    const VecX qdd_crba = forward_dynamics_crba(model, data, q, v, tau);
    EXPECT_LE((qdd - qdd_crba).norm(), solve_tol(sp, qdd.norm(), tau.norm() + C.norm())) << "state " << s;
  }
}

// romeo.urdf: 24 massless finger links (leaves). Both FD routes throw SingularError naming
// one of the joints whose subtree is massless; inverse dynamics is still defined.
TEST(DynamicsSingular, RomeoThrowsSingularError) {
  const std::string path = shared_model_path("romeo");
  if (path.empty()) GTEST_SKIP() << "romeo.urdf not found";
  for (RootJoint root : {RootJoint::FreeFlyer, RootJoint::Fixed}) {
    const Model model = load_shared_model(path, root);
    std::vector<std::string> singular;
    for (int j : massless_subtree_joints(model)) singular.push_back(model.joint_name(j));
    ASSERT_FALSE(singular.empty());
    Data data(model);
    Rng rng(403);
    for (int s = 0; s < 3; ++s) {
      const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
                 tau = random_vector(model.nv(), rng);
      expect_singular([&]() -> VecX { return aba(model, data, q, v, tau); }, singular, "romeo aba");
      expect_singular([&]() -> VecX { return forward_dynamics_crba(model, data, q, v, tau); }, singular,
                      "romeo forward_dynamics_crba");
      EXPECT_TRUE(rnea(model, data, q, v, tau).allFinite());
    }
  }
}

// Genuinely small pivots are not singular: icub (point masses, 1e-20 principal moments on
// r_ankle_1, 1e-6 dummy root) and talos_full with a free-flyer root: ABA succeeds at
// random states and agrees with CRBA + Cholesky.
TEST(DynamicsSingular, SmallPivotsInZooModelsDoNotThrow) {
  for (const char* robot : {"icub", "talos_full"}) {
    const std::string path = shared_model_path(robot);
    if (path.empty()) {
      std::cerr << robot << ".urdf not found, skipped\n";
      continue;
    }
    const Model model = load_shared_model(path, RootJoint::FreeFlyer);
    Data data(model);
    Rng rng(404);
    for (int s = 0; s < 5; ++s) {
      const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
                 tau = random_vector(model.nv(), rng);
      VecX qdd;
      ASSERT_NO_THROW(qdd = aba(model, data, q, v, tau)) << robot << " state " << s;
      ASSERT_TRUE(qdd.allFinite()) << robot << " state " << s;
      VecX qdd_crba;
      ASSERT_NO_THROW(qdd_crba = forward_dynamics_crba(model, data, q, v, tau)) << robot << " state " << s;
      const VecX C = nonlinear_effects(model, data, q, v);
      const Spectrum sp = spectrum(crba(model, data, q));
      EXPECT_LE((qdd - qdd_crba).norm(), solve_tol(sp, qdd.norm(), tau.norm() + C.norm()))
          << robot << " state " << s << ": cond(M) = " << sp.cond();
    }
  }
}

}  // namespace
