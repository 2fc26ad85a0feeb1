// Compliant contact and the Simulator (docs/contact.md), each against an independent reference:
// a bouncing sphere against a 1-D RK4 integration of m xdd = -f(x, xdot) written here (tiny
// step) and against the closed-form coefficients of restitution; resting contact against the
// static penetration m g = k x^n; a block on an inclined plane against tan(theta) = mu (creep
// speed bounded by the regularisation) and the sliding acceleration g (sin - mu cos); energy
// conservation to the integrator's order and its monotone decay with damping; a loop-closed
// model; no heap allocation once warm; bad input; the speed of the solo12 world.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "alloc_count.hpp"  // the allocation counter of test_no_allocation.cpp (same executable)
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"

using namespace plucker;

namespace {

constexpr double kRadius = 0.1, kMass = 1.0;

/// A free-flying ball: the free-flyer's body carries mass kMass, a solid-sphere inertia.
Model ball_model(double gravity = 9.81) {
  Model m("world");
  const double I = 0.4 * kMass * kRadius * kRadius;
  m.add_body(0, JointFreeFlyer{}, Transform(),
             RigidBodyInertia::from_mass_com_inertia(kMass, Vec3::Zero(), I * Mat3::Identity()), "ball", "root_joint");
  m.set_gravity(Vec3(0, 0, -gravity));
  return m;
}

VecX ball_q(double z) {
  VecX q(7);
  q << 0, 0, z, 0, 0, 0, 1;
  return q;
}

NormalForceModel law(ContactLaw kind) {
  NormalForceModel n;
  n.law = kind;
  n.stiffness = 1e5;
  n.exponent = 1.5;
  switch (kind) {
    case ContactLaw::Linear:
      n.damping = 2.0 * 0.1 * std::sqrt(n.stiffness * kMass);  // zeta = 0.1
      break;
    case ContactLaw::HuntCrossley:
      n.damping = 1.5 * 0.2 * n.stiffness;  // Marhefka & Orin: lambda = 3/2 alpha k, alpha = 0.2 s/m
      break;
    case ContactLaw::AzadFeatherstone:
      n.damping = 200.0;
      break;
    case ContactLaw::Rigid:  // test_contact_rigid.cpp
      break;
  }
  return n;
}

HalfSpace ground(const NormalForceModel& n, double mu = 0.0, Vec3 normal = Vec3::UnitZ()) {
  HalfSpace h;
  h.normal = normal;
  h.normal_force = n;
  h.friction.static_coefficient = h.friction.dynamic_coefficient = mu;
  return h;
}

/// The independent reference: exit velocity of m xdd = -f(x, xdot) (f clamped at 0) from x = 0,
/// xdot = v_in, by RK4 with h = 1e-7 s, the crossing of x = 0 interpolated in the last step;
/// returns the rebound speed -xdot > 0.
double reference_exit_velocity(const NormalForceModel& n, double v_in) {
  auto f = [&](double x, double xd) {
    if (x < 0) return 0.0;
    double F = 0;
    if (n.law == ContactLaw::Linear) F = n.stiffness * x + n.damping * xd;
    if (n.law == ContactLaw::HuntCrossley)
      F = n.stiffness * std::pow(x, n.exponent) + n.damping * std::pow(x, n.exponent) * xd;
    if (n.law == ContactLaw::AzadFeatherstone)
      F = n.stiffness * std::pow(x, n.exponent) + n.damping * std::pow(x, n.exponent - 1) * xd;
    return std::max(F, 0.0) / kMass;
  };
  double x = 0, v = v_in;
  const double h = 1e-7;
  for (int k = 0; k < 100000000; ++k) {
    const double a1 = -f(x, v), x2 = x + 0.5 * h * v, v2 = v + 0.5 * h * a1;
    const double a2 = -f(x2, v2), x3 = x + 0.5 * h * v2, v3 = v + 0.5 * h * a2;
    const double a3 = -f(x3, v3), x4 = x + h * v3, v4 = v + h * a3;
    const double a4 = -f(x4, v4);
    const double xn = x + h / 6 * (v + 2 * v2 + 2 * v3 + v4), vn = v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
    if (k > 0 && xn <= 0) return -(v + (x / (x - xn)) * (vn - v));  // the rebound speed
    x = xn;
    v = vn;
  }
  return NAN;
}

/// Simulates the ball (no gravity) hitting the ground at v_in; returns its normal velocity once
/// it has left.
double simulated_exit_velocity(const NormalForceModel& n, double v_in, Integrator integrator, double dt) {
  Simulator sim(ball_model(0.0), dt, integrator);
  sim.add_ground(ground(n));
  sim.add_sphere("ball", Vec3::Zero(), kRadius);
  VecX q = ball_q(kRadius), v = VecX::Zero(6), tau = VecX::Zero(6);
  v[5] = -v_in;
  bool touched = false;
  for (int k = 0; k < 1000000; ++k) {
    sim.step(q, v, tau);
    const double x = kRadius - q[2];
    if (x > 0) touched = true;
    if (touched && x < -1e-3) return v[5];
  }
  return NAN;
}

constexpr ContactLaw kLaws[] = {ContactLaw::Linear, ContactLaw::HuntCrossley, ContactLaw::AzadFeatherstone};

}  // namespace

TEST(Contact, NormalForceLawsAndClamp) {
  for (ContactLaw kind : kLaws) {
    const NormalForceModel n = law(kind);
    EXPECT_EQ(normal_force(n, -1e-3, 1.0), 0.0);
    EXPECT_EQ(normal_force(n, 0.0, 1.0), kind == ContactLaw::Linear ? n.damping : 0.0);
    EXPECT_EQ(normal_force(n, 1e-3, -1e6), 0.0) << "no pulling";
    EXPECT_GT(normal_force(n, 1e-3, 0.0), 0.0);
    EXPECT_EQ(parse_contact_law(to_string(kind)), kind);
  }
  NormalForceModel af = law(ContactLaw::AzadFeatherstone);
  EXPECT_NEAR(normal_force(af, 0.01, 0.5), 1e5 * std::pow(0.01, 1.5) + 200.0 * std::sqrt(0.01) * 0.5, 1e-12);
  EXPECT_THROW(parse_contact_law("hertz"), InvalidArgument);
}

// Post-impact normal velocity of the simulated ball (RK4, dt = 1e-5 s) against the 1-D
// reference to 1e-4 relative, and the coefficient of restitution against the closed forms
// (linear, Hunt-Crossley) or the quadrature (Azad-Featherstone) to 1e-4, for four impact speeds.
TEST(ContactBouncingSphere, PostImpactVelocityMatchesTheOneDimensionalReference) {
  for (ContactLaw kind : kLaws) {
    const NormalForceModel n = law(kind);
    for (double v_in : {0.3, 1.0, 2.0, 4.0}) {
      const double ref = reference_exit_velocity(n, v_in);
      const double sim = simulated_exit_velocity(n, v_in, Integrator::Rk4, 1e-5);
      const double e = coefficient_of_restitution(n, kMass, v_in);
      SCOPED_TRACE(std::string(to_string(kind)) + " v_in " + std::to_string(v_in));
      EXPECT_GT(ref, 0.0);
      EXPECT_LT(ref, v_in);
      EXPECT_NEAR(sim, ref, 1e-4 * ref);
      EXPECT_NEAR(e, ref / v_in, 1e-4 * ref / v_in);
      std::printf("%-18s v_in %.1f  reference e %.8f  simulated %.8f  closed form %.8f\n",
                  std::string(to_string(kind)).c_str(), v_in, ref / v_in, sim / v_in, e);
    }
  }
  // Hunt-Crossley: e falls with the impact speed; linear: e is the same at every speed.
  const NormalForceModel hc = law(ContactLaw::HuntCrossley), lin = law(ContactLaw::Linear);
  EXPECT_GT(coefficient_of_restitution(hc, kMass, 0.5), coefficient_of_restitution(hc, kMass, 2.0));
  EXPECT_NEAR(coefficient_of_restitution(lin, kMass, 0.5), coefficient_of_restitution(lin, kMass, 2.0), 1e-14);
  // Semi-implicit Euler at dt = 1e-5 s: first order, within 1e-2 here.
  const double ref = reference_exit_velocity(hc, 1.0);
  EXPECT_NEAR(simulated_exit_velocity(hc, 1.0, Integrator::SemiImplicitEuler, 1e-5), ref, 1e-2 * ref);
}

// Compliant contact settles to the static penetration m g = k x^n (k x for linear).
TEST(ContactRestingSphere, SettlesToTheStaticPenetration) {
  for (ContactLaw kind : kLaws) {
    NormalForceModel n = law(kind);
    Simulator sim(ball_model(), 1e-4, Integrator::SemiImplicitEuler);
    sim.add_ground(ground(n, 0.5));
    sim.add_sphere("ball", Vec3::Zero(), kRadius);
    VecX q = ball_q(kRadius + 0.01), v = VecX::Zero(6), tau = VecX::Zero(6);
    for (int k = 0; k < 100000; ++k) sim.step(q, v, tau);  // 10 s
    const double x = kRadius - q[2], expected = static_penetration(n, kMass * 9.81);
    SCOPED_TRACE(std::string(to_string(kind)));
    EXPECT_NEAR(x, expected, 1e-6 * expected);
    EXPECT_LT(v.norm(), 1e-6);
    const auto pairs = sim.last_contacts();
    ASSERT_EQ(pairs.size(), 1u);
    EXPECT_TRUE(pairs[0].active);
    EXPECT_NEAR(pairs[0].normal_force, kMass * 9.81, 1e-5 * kMass * 9.81);
  }
}

namespace {
/// A 1 kg block (0.2 x 0.2 x 0.1 m) with a point at each bottom corner, resting on a ground
/// tilted by theta about y; returns the block's velocity along the slope (downhill positive) at
/// times t1 and t2.
struct SlopeResult {
  double v1, v2, max_rotation_rate;
};
SlopeResult slide(double theta, double mu, double eps, double t1, double t2,
                  Integrator integrator = Integrator::SemiImplicitEuler, double dt = 1e-4) {
  Model m("world");
  const double a = 0.1, b = 0.1, c = 0.05;
  const Mat3 I =
      Vec3(kMass / 3 * (b * b + c * c), kMass / 3 * (a * a + c * c), kMass / 3 * (a * a + b * b)).asDiagonal();
  m.add_body(0, JointFreeFlyer{}, Transform(), RigidBodyInertia::from_mass_com_inertia(kMass, Vec3::Zero(), I), "block",
             "root_joint");
  Simulator sim(m, dt, integrator);
  const Vec3 n(std::sin(theta), 0, std::cos(theta));
  NormalForceModel nf = law(ContactLaw::Linear);
  nf.damping = 2.0 * std::sqrt(nf.stiffness * kMass / 4);  // each corner critically damped
  HalfSpace h = ground(nf, mu, n);
  h.friction.regularization = eps;
  sim.add_ground(h);
  for (double sx : {-a, a})
    for (double sy : {-b, b}) sim.add_point("block", Vec3(sx, sy, -c));
  // Block rotated by theta about y (its bottom face on the plane), at the static penetration.
  const double x0 = kMass * 9.81 * std::cos(theta) / (4 * nf.stiffness);
  const Vec3 p = (c - x0) * n;
  VecX q(7), v = VecX::Zero(6), tau = VecX::Zero(6);
  q << p, 0, std::sin(theta / 2), 0, std::cos(theta / 2);
  const Vec3 downhill(std::cos(theta), 0, -std::sin(theta));
  SlopeResult r{0, 0, 0};
  const int n1 = static_cast<int>(std::lround(t1 / dt)), n2 = static_cast<int>(std::lround(t2 / dt));
  for (int k = 1; k <= n2; ++k) {
    sim.step(q, v, tau);
    const Mat3 R = Quat(q[6], q[3], q[4], q[5]).toRotationMatrix();
    const double along = downhill.dot(R * v.tail<3>());
    if (k == n1) r.v1 = along;
    if (k == n2) r.v2 = along;
    r.max_rotation_rate = std::max(r.max_rotation_rate, v.head<3>().norm());
  }
  return r;
}
}  // namespace

// Below tan(theta) = mu the block sticks: it creeps at the speed where the regularised friction
// balances gravity, eps r / sqrt(1 - r^2) with r = tan(theta) / mu. Above, it slides with
// g (sin(theta) - mu cos(theta)).
TEST(ContactFriction, BlockOnAnInclineSticksBelowTheFrictionAngleAndSlidesAbove) {
  const double mu = 0.5, eps = 1e-3, g = 9.81;
  {
    const double theta = std::atan(0.8 * mu), r = 0.8;
    const SlopeResult s = slide(theta, mu, eps, 1.0, 2.0);
    const double creep = eps * r / std::sqrt(1 - r * r);
    std::printf("stick: creep speed %.6e (bound %.6e)\n", s.v2, creep);
    EXPECT_NEAR(s.v2, creep, 2e-2 * creep);
    EXPECT_LT(s.v2, creep * 1.02);
  }
  {
    const double theta = std::atan(1.5 * mu);
    const SlopeResult s = slide(theta, mu, eps, 0.5, 1.0);
    const double a = (s.v2 - s.v1) / 0.5, expected = g * (std::sin(theta) - mu * std::cos(theta));
    std::printf("slide: acceleration %.8f (closed form %.8f)\n", a, expected);
    EXPECT_NEAR(a, expected, 1e-4 * expected);
    EXPECT_LT(s.max_rotation_rate, 0.05);  // it slides flat on its face (measured 0.012 rad/s, transient)
  }
}

// The linearly implicit Euler step takes the same incline at dt = 1e-3 s with eps = 1e-3 m/s,
// where the explicit step is unstable (dt mu g / eps = 4.9 > 2): the same creep speed and
// sliding acceleration; semi-implicit Euler at that dt tumbles.
TEST(ContactImplicit, StiffFrictionAtALargeStep) {
  const double mu = 0.5, eps = 1e-3, g = 9.81;
  const double stick = std::atan(0.8 * mu), slip = std::atan(1.5 * mu);
  const SlopeResult s1 = slide(stick, mu, eps, 1.0, 2.0, Integrator::ImplicitEuler, 1e-3);
  const double creep = eps * 0.8 / 0.6;
  EXPECT_NEAR(s1.v2, creep, 1e-6 * creep);
  const SlopeResult s2 = slide(slip, mu, eps, 1.0, 2.0, Integrator::ImplicitEuler, 1e-3);
  const double a = (s2.v2 - s2.v1) / 1.0, expected = g * (std::sin(slip) - mu * std::cos(slip));
  std::printf("implicit, dt = 1 ms: creep %.9e (closed form %.9e), acceleration %.8f (%.8f)\n", s1.v2, creep, a,
              expected);
  EXPECT_NEAR(a, expected, 1e-4 * expected);
  EXPECT_LT(std::max(s1.max_rotation_rate, s2.max_rotation_rate), 0.05);
  const SlopeResult explicit_run = slide(stick, mu, eps, 1.0, 2.0, Integrator::SemiImplicitEuler, 1e-3);
  EXPECT_GT(std::abs(explicit_run.v2 - creep), 100 * creep);  // the explicit step does not hold it
}

TEST(ContactImplicit, RestsAtTheStaticPenetrationAndRefusesLoops) {
  for (ContactLaw kind : kLaws) {
    Simulator sim(ball_model(), 1e-3, Integrator::ImplicitEuler);
    sim.add_ground(ground(law(kind), 0.5));
    sim.add_sphere("ball", Vec3::Zero(), kRadius);
    VecX q = ball_q(kRadius + 0.01), v = VecX::Zero(6), tau = VecX::Zero(6);
    for (int k = 0; k < 10000; ++k) sim.step(q, v, tau);  // 10 s
    const double x = kRadius - q[2], expected = static_penetration(law(kind), kMass * 9.81);
    SCOPED_TRACE(std::string(to_string(kind)));
    EXPECT_NEAR(x, expected, 1e-6 * expected);
  }
  Simulator loops(build_four_bar(), 1e-3, Integrator::ImplicitEuler);
  const Model fb = build_four_bar();
  VecX q = neutral(fb), v = VecX::Zero(fb.nv());
  EXPECT_THROW(loops.step(q, v, v), InvalidArgument);
  EXPECT_EQ(parse_integrator("implicit"), Integrator::ImplicitEuler);
}

namespace {
/// max |E(t) - E(0)| over a bounce (gravity, no damping, no friction).
double energy_drift(Integrator integrator, double dt, double z0, double seconds) {
  NormalForceModel n = law(ContactLaw::HuntCrossley);
  n.damping = 0;
  Simulator sim(ball_model(), dt, integrator);
  sim.add_ground(ground(n, 0.0));
  sim.add_sphere("ball", Vec3::Zero(), kRadius);
  VecX q = ball_q(z0), v = VecX::Zero(6), tau = VecX::Zero(6);
  v[1] = 0.3;  // a horizontal velocity (and spin) too
  v[3] = 0.2;
  const double E0 = sim.energy(q, v).total();
  double drift = 0;
  const int steps = static_cast<int>(std::lround(seconds / dt));
  for (int k = 0; k < steps; ++k) {
    sim.step(q, v, tau);
    drift = std::max(drift, std::abs(sim.energy(q, v).total() - E0));
  }
  return drift;
}
}  // namespace

// Without damping and friction the energy (kinetic + gravity + contact elastic) is conserved to
// the integrator's order: halving dt divides the drift by 2 (semi-implicit Euler) or by at least
// 16 (RK4) while the ball stays in contact (oscillating about its rest penetration).
TEST(ContactEnergy, ConservedToTheIntegratorsOrderWithoutDamping) {
  const double x_rest = static_penetration(law(ContactLaw::HuntCrossley), kMass * 9.81);
  const double z_in_contact = kRadius - 0.5 * x_rest;  // stays in contact: x in (0.5, 1.5) x_rest
  const double d1 = energy_drift(Integrator::Rk4, 1e-3, z_in_contact, 0.5);
  const double d2 = energy_drift(Integrator::Rk4, 5e-4, z_in_contact, 0.5);
  const double s1 = energy_drift(Integrator::SemiImplicitEuler, 1e-4, z_in_contact, 0.5);
  const double s2 = energy_drift(Integrator::SemiImplicitEuler, 5e-5, z_in_contact, 0.5);
  std::printf("in contact: rk4 drift %.3e -> %.3e (ratio %.2f); semi-implicit Euler %.3e -> %.3e (ratio %.2f)\n", d1,
              d2, d1 / d2, s1, s2, s1 / s2);
  // RK4's energy error on an oscillator is O(h^5) over a fixed time (|R(i h w)|^2 = 1 - (h w)^6 / 72):
  // measured ratio 31.4.
  EXPECT_GT(d1 / d2, 14.0);
  EXPECT_LT(d1 / d2, 40.0);
  EXPECT_GT(s1 / s2, 1.8);
  EXPECT_LT(s1 / s2, 2.2);
  const double b1 = energy_drift(Integrator::Rk4, 1e-4, kRadius + 0.05, 0.4);
  const double b2 = energy_drift(Integrator::Rk4, 5e-5, kRadius + 0.05, 0.4);
  std::printf("bouncing: rk4 drift %.3e -> %.3e (ratio %.2f), energy %.3f J\n", b1, b2, b1 / b2, kMass * 9.81 * 0.15);
  // Through an impact, f ~ x^(3/2) has an unbounded second derivative at x = 0: RK4's observed
  // order drops to ~2 (measured ratio 3.8), the drift stays below 1e-7 of the energy.
  EXPECT_GT(b1 / b2, 3.0);
  EXPECT_LT(b1, 1e-7 * kMass * 9.81 * 0.15);
}

// With damping (and friction) the energy never increases beyond RK4's error (dt = 1e-4 s).
TEST(ContactEnergy, DecreasesMonotonicallyWithDamping) {
  for (ContactLaw kind : kLaws) {
    Simulator sim(ball_model(), 1e-4, Integrator::Rk4);
    sim.add_ground(ground(law(kind), 0.5));
    sim.add_sphere("ball", Vec3::Zero(), kRadius);
    VecX q = ball_q(kRadius + 0.1), v = VecX::Zero(6), tau = VecX::Zero(6);
    v[3] = 1.0;  // sliding: friction dissipates too
    double E = sim.energy(q, v).total();
    const double E0 = E;
    double max_increase = 0;
    for (int k = 0; k < 10000; ++k) {
      sim.step(q, v, tau);
      const double En = sim.energy(q, v).total();
      max_increase = std::max(max_increase, En - E);
      E = En;
    }
    SCOPED_TRACE(std::string(to_string(kind)));
    std::printf("%s: largest one-step energy increase %.3e J of %.3f J\n", std::string(to_string(kind)).c_str(),
                max_increase, E0);
    // Linear and Azad-Featherstone: rounding only (4e-16 J). Hunt-Crossley's damping vanishes as
    // x^n at the onset, where RK4's own error through the impact (8e-8 J in the undamped test at
    // this dt) exceeds the dissipation: 9e-9 J measured, bounded by 1e-8 of the energy.
    EXPECT_LE(max_increase, 1e-8 * E0);
    EXPECT_LT(E, E0 - 0.5);
  }
}

// A loop-closed model (the four-bar) with a point contact: the simulator takes the constrained
// path with Baumgarte stabilisation; the loop stays closed and the tree path agrees with aba
// where there is no constraint.
TEST(ContactSimulator, ConstrainedModelsUseConstrainedDynamics) {
  Model fb = build_four_bar();
  ASSERT_GT(fb.num_constraints(), 0);
  Simulator sim(fb, 1e-3, Integrator::Rk4);
  sim.add_ground(ground(law(ContactLaw::HuntCrossley), 0.5, Vec3::UnitY()));
  Data data(fb);
  sim.add_point(fb.body_name(1), Vec3(0.3, 0, 0));
  VecX q = neutral(fb), v = VecX::Zero(fb.nv()), tau = VecX::Zero(fb.nv());
  int touching = 0;
  for (int k = 0; k < 3000; ++k) {
    sim.step(q, v, tau);
    touching += sim.last_contacts()[0].active ? 1 : 0;
  }
  std::printf("four-bar: crank tip in contact in %d of 3000 steps\n", touching);
  EXPECT_GT(touching, 1000);  // the crank tip falls onto the ground
  EXPECT_LT(constraint_residual(fb, data, q).lpNorm<Eigen::Infinity>(), 1e-6);
  // Without constraints, the contact forces as generalised forces equal aba's f_ext path.
  Model ball = ball_model();
  Simulator s2(ball, 1e-3);
  s2.add_ground(ground(law(ContactLaw::HuntCrossley), 0.5));
  s2.add_sphere("ball", Vec3(0.01, 0, 0), kRadius);
  VecX qb = ball_q(kRadius - 1e-3), vb = VecX::Zero(6), tb = VecX::Zero(6);
  vb << 0.3, -0.2, 0.1, 0.2, 0.1, -0.4;
  const VecX a1 = s2.acceleration(qb, vb, tb);
  Data db(ball);
  const std::span<const Force> f = contact_forces(ball, db, s2.scene(), qb, vb);
  const std::vector<Force> forces(f.begin(), f.end());
  VecX jt = gravity_torques(ball, db, qb);
  jt -= rnea(ball, db, qb, VecX::Zero(6), VecX::Zero(6), forces);
  const VecX a2 = forward_dynamics_crba(ball, db, qb, vb, tb + jt);
  EXPECT_LT((a1 - a2).norm(), 1e-10 * a1.norm());
}

// Bad input raises clear errors, never crashes.
TEST(ContactSimulator, BadInputRaisesClearErrors) {
  Simulator sim(ball_model());
  EXPECT_THROW(sim.add_sphere("nope", Vec3::Zero(), 0.1), InvalidArgument);
  EXPECT_THROW(sim.add_sphere("ball", Vec3::Zero(), -0.1), InvalidArgument);
  EXPECT_THROW(sim.add_sphere("ball", Vec3(NAN, 0, 0), 0.1), InvalidArgument);
  HalfSpace h;
  h.normal_force.stiffness = -1;
  EXPECT_THROW(sim.add_ground(h), InvalidArgument);
  h = HalfSpace{};
  h.normal = Vec3::Zero();
  EXPECT_THROW(sim.add_ground(h), InvalidArgument);
  h = HalfSpace{};
  h.friction.regularization = 0;
  EXPECT_THROW(sim.add_ground(h), InvalidArgument);
  EXPECT_THROW(Simulator(ball_model(), 0.0), InvalidArgument);
  EXPECT_THROW(Simulator(ball_model(), NAN), InvalidArgument);
  EXPECT_THROW(parse_integrator("backward_differentiation"), InvalidArgument);
  sim.add_ground(HalfSpace{});
  sim.add_sphere("ball", Vec3::Zero(), 0.1);
  VecX q = ball_q(1.0), v = VecX::Zero(6), tau = VecX::Zero(6);
  VecX bad = v;
  bad[2] = NAN;
  EXPECT_THROW(sim.step(q, bad, tau), InvalidArgument);
  VecX short_tau = VecX::Zero(5);
  EXPECT_THROW(sim.step(q, v, short_tau), InvalidArgument);
  VecX qbad = q;
  qbad[6] = 2.0;  // not a unit quaternion
  EXPECT_THROW(sim.step(qbad, v, tau), InvalidArgument);
  MatX Q(7, 11), V(6, 11), F(3, 10), TAU = MatX::Zero(5, 10);
  EXPECT_THROW(sim.rollout(q, v, TAU, Q, V, F), InvalidArgument);
  TAU = MatX::Zero(6, 10);
  MatX Fwrong(3, 11);
  EXPECT_THROW(sim.rollout(q, v, TAU, Q, V, Fwrong), InvalidArgument);
  try {
    sim.add_sphere("FL_FOOT", Vec3::Zero(), 0.02);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("FL_FOOT"), std::string::npos);
  }
  // A state beyond double precision: NumericalError, not a crash.
  Simulator wild(ball_model(), 100.0);
  wild.add_ground(HalfSpace{});
  wild.add_sphere("ball", Vec3::Zero(), 0.1);
  VecX qs = ball_q(1.0), vs = VecX::Zero(6);
  vs << 1e200, 0, 0, 0, 0, -1e307;
  EXPECT_THROW(wild.step(qs, vs, tau), NumericalError);
}

// Batched rollouts on two threads equal the single rollouts bit for bit; an error names the state.
TEST(ContactSimulator, RolloutBatchEqualsSingleRollouts) {
  Simulator sim(ball_model(), 1e-3, Integrator::Rk4);
  sim.add_ground(ground(law(ContactLaw::HuntCrossley), 0.5));
  sim.add_sphere("ball", Vec3::Zero(), kRadius);
  const int B = 5, T = 300;
  MatX Q0(7, B), V0 = MatX::Zero(6, B), TAU = MatX::Zero(6, T * B);
  for (int b = 0; b < B; ++b) {
    Q0.col(b) = ball_q(kRadius + 0.02 * b);
    V0(0, b) = 0.3 * b;
    TAU.block(5, b * T, 1, T).setConstant(0.1 * b);
  }
  MatX Q(7, (T + 1) * B), V(6, (T + 1) * B), F(3, T * B);
  rollout_batch(sim, Q0, V0, TAU, Q, V, F, 2);
  for (int b = 0; b < B; ++b) {
    MatX q(7, T + 1), v(6, T + 1), f(3, T);
    sim.rollout(Q0.col(b), V0.col(b), TAU.middleCols(b * T, T), q, v, f);
    EXPECT_EQ(q, Q.middleCols(b * (T + 1), T + 1));
    EXPECT_EQ(v, V.middleCols(b * (T + 1), T + 1));
    EXPECT_EQ(f, F.middleCols(b * T, T));
  }
  Q0(6, 3) = 2.0;  // not a unit quaternion
  try {
    rollout_batch(sim, Q0, V0, TAU, Q, V, F, 2);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("state 3"), std::string::npos) << e.what();
  }
}

// URDF <collision> spheres: on the link's body, or on a merged link's frame; other geometries
// are skipped; a bad radius is refused with the link named.
TEST(ContactSimulator, CollisionSpheresFromUrdf) {
  const std::string urdf = R"(<robot name="r">
  <link name="ball"><inertial><mass value="1"/><inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.004"/></inertial>
    <collision><origin xyz="0 0 0"/><geometry><sphere radius="0.1"/></geometry></collision>
    <collision><geometry><box size="1 1 1"/></geometry></collision></link>
  <link name="nose"><collision><origin xyz="0.01 0 0" rpy="0 1 0"/><geometry><sphere radius="0.02"/></geometry></collision></link>
  <joint name="fix" type="fixed"><parent link="ball"/><child link="nose"/><origin xyz="0.1 0 0"/></joint>
</robot>)";
  const std::string path = testing::TempDir() + "contact_spheres.urdf";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(urdf.c_str(), f);
    std::fclose(f);
  }
  const Model m = load_urdf(path, RootJoint::FreeFlyer);
  Simulator sim(m);
  EXPECT_EQ(sim.add_collision_spheres_from_urdf(path), 2);
  ASSERT_EQ(sim.scene().shapes().size(), 2u);
  EXPECT_EQ(sim.scene().shapes()[0].body, 1);
  EXPECT_DOUBLE_EQ(sim.scene().shapes()[0].radius, 0.1);
  EXPECT_EQ(sim.scene().shapes()[1].body, 1);  // the merged link's frame is on body 1
  EXPECT_LT((sim.scene().shapes()[1].center - Vec3(0.11, 0, 0)).norm(), 1e-15);
  // A model without the links refuses, adding nothing.
  Simulator other(ball_model());
  EXPECT_THROW(other.add_collision_spheres_from_urdf(path), InvalidArgument);
  EXPECT_TRUE(other.scene().shapes().empty());
  std::string bad = urdf;
  bad.replace(bad.find("0.02"), 4, "-0.2");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(bad.c_str(), f);
    std::fclose(f);
  }
  try {
    sim.add_collision_spheres_from_urdf(path);
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("nose"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

namespace {
Model solo12_or_quadruped(bool& is_solo) {
  const std::string path = std::string(PLUCKER_SHARED_DIR) + "/models/solo12.urdf";
  is_solo = std::filesystem::exists(path);
  if (!is_solo) return build_quadruped(0, true);
  UrdfOptions options;
  options.root = RootJoint::FreeFlyer;
  options.on_warning = [](const std::string&) {};
  return load_urdf(path, options);
}
}  // namespace

// No heap allocation per step once warm (both integrators, and a rollout into sized outputs).
TEST(ContactSimulator, NoAllocationOnceWarm) {
#ifndef PLUCKER_COUNT_ALLOCATIONS
  GTEST_SKIP() << "allocation counting needs glibc without sanitizers";
#else
  bool solo = false;
  const Model m = solo12_or_quadruped(solo);
  if (!solo) GTEST_SKIP() << "solo12.urdf absent";
  for (Integrator integrator : {Integrator::SemiImplicitEuler, Integrator::Rk4, Integrator::ImplicitEuler}) {
    Simulator sim(m, 1e-3, integrator);
    sim.add_ground(HalfSpace{});
    for (const char* foot : {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"}) sim.add_sphere(foot, Vec3::Zero(), 0.02);
    VecX q = neutral(m), v = VecX::Zero(m.nv()), tau = VecX::Zero(m.nv());
    q[2] = 0.3;
    sim.step(q, v, tau);
    EXPECT_EQ(alloc_count::allocations([&] {
                for (int k = 0; k < 10; ++k) sim.step(q, v, tau);
              }),
              0);
    MatX TAU = MatX::Zero(m.nv(), 20), Q(m.nq(), 21), V(m.nv(), 21), F(12, 20);
    sim.rollout(q, v, TAU, Q, V, F);
    EXPECT_EQ(alloc_count::allocations([&] { sim.rollout(q, v, TAU, Q, V, F); }), 0);
  }
#endif
}

// Steps per second of the solo12 world (4 foot spheres, one thread), reported in docs/contact.md.
TEST(ContactSimulator, Solo12Speed) {
  bool solo = false;
  const Model m = solo12_or_quadruped(solo);
  if (!solo) GTEST_SKIP() << "solo12.urdf absent";
  for (Integrator integrator : {Integrator::SemiImplicitEuler, Integrator::Rk4, Integrator::ImplicitEuler}) {
    Simulator sim(m, 1e-3, integrator);
    HalfSpace h;
    h.normal_force.damping = 1.5 * 0.2 * h.normal_force.stiffness;
    sim.add_ground(h);
    for (const char* foot : {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"}) sim.add_sphere(foot, Vec3::Zero(), 0.02);
    VecX q0 = neutral(m), v0 = VecX::Zero(m.nv());
    q0[2] = 0.3;
    const int T = 3000;
    MatX TAU = MatX::Zero(m.nv(), T), Q(m.nq(), T + 1), V(m.nv(), T + 1), F(12, T);
    sim.rollout(q0, v0, TAU, Q, V, F);  // warm
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      sim.rollout(q0, v0, TAU, Q, V, F);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::printf("solo12 %s: %.0f steps/s (%.2f us/step)\n", std::string(to_string(integrator)).c_str(), T / best,
                1e6 * best / T);
    EXPECT_TRUE(Q.allFinite());
  }
}
