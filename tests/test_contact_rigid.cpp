// Rigid contact (docs/contact.md, "Rigid contact"), each result against an independent reference:
// Lemke's LCP solutions against a brute-force enumeration of the active sets (small random
// problems) and the complementarity conditions; a box resting on a plane (zero acceleration,
// normal forces summing to m g); a ball's bounce against Newton's restitution law; a block on an
// inclined plane against tan(theta) = mu and g (sin - mu cos); a falling chain coming to rest;
// a loop-closed model whose contact impulses keep the loop's velocity constraint; errors; no
// allocation once warm.
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "alloc_count.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"

using namespace plucker;

namespace {

// ------------------------------------------------------------------ LCP reference
/// Every solution of LCP(M, q) found by enumerating the 2^n active sets A (z_A solves
/// M_AA z_A = -q_A by a rank-revealing least-squares solve, z = 0 off A; kept when the residual
/// is zero and z >= 0, w >= 0 to `tol`).
std::vector<VecX> enumerate_lcp(const MatX& M, const VecX& q, double tol) {
  const int n = static_cast<int>(q.size());
  std::vector<VecX> out;
  for (int mask = 0; mask < (1 << n); ++mask) {
    std::vector<int> A;
    for (int i = 0; i < n; ++i)
      if (mask & (1 << i)) A.push_back(i);
    const int a = static_cast<int>(A.size());
    VecX z = VecX::Zero(n);
    if (a > 0) {
      MatX Maa(a, a);
      VecX qa(a);
      for (int i = 0; i < a; ++i) {
        qa[i] = q[A[i]];
        for (int j = 0; j < a; ++j) Maa(i, j) = M(A[i], A[j]);
      }
      const VecX za = Maa.completeOrthogonalDecomposition().solve(-qa);
      if ((Maa * za + qa).lpNorm<Eigen::Infinity>() > tol) continue;
      for (int i = 0; i < a; ++i) z[A[i]] = za[i];
    }
    const VecX w = M * z + q;
    if (z.minCoeff() >= -tol && w.minCoeff() >= -tol) out.push_back(z);
  }
  return out;
}

// ------------------------------------------------------------------ models
/// A free-flying box (mass m, half extents a, b, c) with its centre at the body origin.
Model box_model(double m, double a, double b, double c, const Vec3& gravity = Vec3(0, 0, -9.81)) {
  Model model("world");
  const Mat3 I = (m / 3.0) * Vec3(b * b + c * c, a * a + c * c, a * a + b * b).asDiagonal();
  model.add_body(0, JointFreeFlyer{}, Transform(), RigidBodyInertia::from_mass_com_inertia(m, Vec3::Zero(), I), "box",
                 "root");
  model.set_gravity(gravity);
  return model;
}

VecX free_q(double z) {
  VecX q(7);
  q << 0, 0, z, 0, 0, 0, 1;
  return q;
}

HalfSpace rigid_ground(double restitution = 0.0, double mu = 0.0, Vec3 normal = Vec3::UnitZ()) {
  HalfSpace h;
  h.normal = normal;
  h.normal_force.law = ContactLaw::Rigid;
  h.normal_force.restitution = restitution;
  h.friction.static_coefficient = h.friction.dynamic_coefficient = mu;
  return h;
}

void add_corners(Simulator& sim, double a, double b, double c) {
  for (double sx : {-1.0, 1.0})
    for (double sy : {-1.0, 1.0}) sim.add_point("box", Vec3(sx * a, sy * b, -c));
}

double sum_normal(const Simulator& sim) {
  double s = 0.0;
  for (const ContactPair& p : sim.last_contacts()) s += p.normal_force;
  return s;
}

}  // namespace

// Lemke's solutions of random LCPs equal the unique solution that enumeration finds (positive
// definite M, symmetric or not: P-matrices) and satisfy complementarity; on positive
// semidefinite (singular) M with a feasible q, w = M z + q equals the constructed one.
TEST(RigidLcp, LemkeAgainstEnumerationOfActiveSets) {
  std::mt19937 rng(7);
  std::normal_distribution<double> N(0.0, 1.0);
  double worst_z = 0.0, worst_violation = 0.0, worst_w_psd = 0.0;
  int max_pivots = 0, problems = 0;
  for (int n = 1; n <= 6; ++n)
    for (int trial = 0; trial < 150; ++trial) {
      MatX A(n, n), B(n, n);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          A(i, j) = N(rng);
          B(i, j) = N(rng);
        }
      VecX q(n);
      for (int i = 0; i < n; ++i) q[i] = N(rng);
      MatX M = A * A.transpose() + 0.1 * MatX::Identity(n, n);
      if (trial % 2 == 1) M += 0.5 * (B - B.transpose());  // nonsymmetric, still positive definite
      LemkeSolver lemke(n);
      VecX z(n);
      const int pivots = lemke.solve(M, q, z);
      max_pivots = std::max(max_pivots, pivots);
      const std::vector<VecX> ref = enumerate_lcp(M, q, 1e-9);
      ASSERT_EQ(ref.size(), 1U) << "a P-matrix LCP has exactly one solution";
      worst_z = std::max(worst_z, (z - ref[0]).lpNorm<Eigen::Infinity>() / (1.0 + ref[0].lpNorm<Eigen::Infinity>()));
      worst_violation = std::max(worst_violation, lcp_violation(M, q, z));
      ++problems;
      // Positive semidefinite, rank n - 1 (the box's four corners make such a G): q built from a
      // complementary pair (z*, w*), so the problem is feasible.
      if (n >= 2) {
        const MatX C = A.leftCols(n - 1);
        const MatX S = C * C.transpose();
        VecX zs = VecX::Zero(n), ws = VecX::Zero(n);
        for (int i = 0; i < n; ++i) (N(rng) > 0 ? zs[i] : ws[i]) = std::abs(N(rng));
        const VecX qs = ws - S * zs;
        VecX zp(n);
        lemke.solve(S, qs, zp);
        const VecX wp = S * zp + qs;
        worst_violation = std::max(worst_violation, lcp_violation(S, qs, zp));
        // For symmetric PSD M the solutions minimise 1/2 z'Mz + q'z on z >= 0: M z is unique.
        worst_w_psd = std::max(worst_w_psd, (wp - ws).lpNorm<Eigen::Infinity>() / (1.0 + ws.lpNorm<Eigen::Infinity>()));
      }
    }
  std::printf("Lemke: %d problems, max |z - z_enum| %.2e, max violation %.2e, PSD max |w - w*| %.2e, max pivots %d\n",
              problems, worst_z, worst_violation, worst_w_psd, max_pivots);
  EXPECT_LT(worst_z, 1e-10);
  EXPECT_LT(worst_violation, 1e-10);
  EXPECT_LT(worst_w_psd, 1e-10);
}

// Infeasible and degenerate problems: a clear SingularError (enumeration finds no solution),
// a ConvergenceError at the pivot cap, InvalidArgument for bad input; the four equal rows of a
// box (all ties) solve.
TEST(RigidLcp, InfeasibleDegenerateAndBadInput) {
  MatX M(2, 2);
  M << 1, -1, -1, 1;  // positive semidefinite; w1 + w2 = -2 for q = (-1, -1): infeasible
  const VecX q = VecX::Constant(2, -1.0);
  EXPECT_TRUE(enumerate_lcp(M, q, 1e-9).empty());
  EXPECT_THROW(solve_lcp(M, q), SingularError);
  // All ties: four identical rows of a rank-1 matrix (a point mass on four coincident contacts).
  const MatX G = MatX::Ones(4, 4);
  const VecX b = VecX::Constant(4, -1.0);
  const VecX z = solve_lcp(G, b);
  EXPECT_LT(lcp_violation(G, b, z), 1e-14);
  EXPECT_NEAR(z.sum(), 1.0, 1e-15);
  // The pivot cap.
  std::mt19937 rng(3);
  std::normal_distribution<double> N(0.0, 1.0);
  MatX A = MatX::Zero(6, 6);
  for (int i = 0; i < 36; ++i) A(i % 6, i / 6) = N(rng);
  const MatX P = A * A.transpose() + MatX::Identity(6, 6);
  const VecX qn = VecX::Constant(6, -1.0);
  EXPECT_THROW(solve_lcp(P, qn, 1), ConvergenceError);
  EXPECT_THROW(solve_lcp(MatX::Identity(3, 2), VecX::Zero(3)), InvalidArgument);
  MatX Nan = MatX::Identity(2, 2);
  Nan(0, 1) = NAN;
  EXPECT_THROW(solve_lcp(Nan, VecX::Constant(2, -1.0)), InvalidArgument);
}

// A box on four corner points resting on a rigid plane: zero acceleration and normal forces
// summing to m g exactly, frictionless (Lemke) and with friction (PGS).
TEST(RigidContact, BoxRestsWithForcesSummingToWeight) {
  const double m = 2.5, a = 0.2, b = 0.15, c = 0.05, g = 9.81;
  for (double mu : {0.0, 0.7}) {
    Simulator sim(box_model(m, a, b, c), 1e-3);
    sim.add_ground(rigid_ground(0.5, mu));
    add_corners(sim, a, b, c);
    VecX q = free_q(c), v = VecX::Zero(6), tau = VecX::Zero(6);
    double worst_v = 0.0, worst_f = 0.0;
    for (int k = 0; k < 500; ++k) {
      sim.step(q, v, tau);
      worst_v = std::max(worst_v, v.lpNorm<Eigen::Infinity>());
      worst_f = std::max(worst_f, std::abs(sum_normal(sim) - m * g) / (m * g));
    }
    std::printf("box at rest, mu %.1f: max |v| %.2e (acceleration %.2e), max |sum f_n - m g| / m g %.2e, drift %.2e\n",
                mu, worst_v, worst_v / 1e-3, worst_f, std::abs(q[2] - c));
    EXPECT_LT(worst_v / 1e-3, 1e-10);  // |acceleration| in m/s^2
    EXPECT_LT(worst_f, 1e-10);
    EXPECT_LT(std::abs(q[2] - c), 1e-12);
    EXPECT_EQ(sim.rigid_report().active, 4);
    EXPECT_EQ(sim.rigid_report().friction, mu > 0.0);
    if (mu == 0.0) {
      EXPECT_LT(sim.rigid_report().complementarity, 1e-12);
    }
  }
}

// A ball dropped onto the plane: the normal speed after the impact step is e times the speed
// before it (Newton's law, to rounding); with e = 0 it stays on the plane.
TEST(RigidContact, BallBouncesWithTheRestitutionCoefficient) {
  const double r = 0.1;
  for (double e : {0.0, 0.3, 0.8, 1.0}) {
    Model ball = box_model(1.0, r, r, r);
    Simulator sim(ball, 1e-3);
    sim.add_ground(rigid_ground(e));
    sim.add_sphere("box", Vec3::Zero(), r);
    VecX q = free_q(r + 0.5), v = VecX::Zero(6), tau = VecX::Zero(6);
    double before = 0.0, after = 0.0, max_after = -1.0, impact_gap = 0.0;
    bool bounced = false;
    for (int k = 0; k < 3000; ++k) {
      const double vz = v[5], gap = q[2] - r;
      sim.step(q, v, tau);
      if (!bounced && sim.rigid_report().active > 0) {
        bounced = true;
        before = vz;
        after = v[5];
        impact_gap = gap;
      } else if (bounced && e == 0.0) {
        max_after = std::max(max_after, q[2] - r);
      }
    }
    ASSERT_TRUE(bounced);
    std::printf("ball e = %.1f: v- = %.12f, v+ = %.12f, |v+ + e v-| = %.1e; ", e, before, after,
                std::abs(after + e * before));
    EXPECT_LE(std::abs(after + e * before), 4e-16 * std::abs(before));
    if (e == 0.0) {
      std::printf("gap at impact %.2e m, max gap after %.2e m, final gap %.1e m, |v| %.1e\n", impact_gap, max_after,
                  q[2] - r, v.norm());
      EXPECT_LE(max_after, std::max(impact_gap, 0.0) + 1e-15);  // no rebound
      EXPECT_LT(std::abs(q[2] - r), 1e-12);
      EXPECT_LT(v.norm(), 1e-12);
    } else {
      std::printf("\n");
    }
  }
}

// A block on an inclined plane (gravity tilted by theta; flat block, four corners, mu = 0.5):
// it sticks below tan(theta) = mu and slides with g (sin - mu cos) above.
TEST(RigidContact, BlockOnAnInclineSticksOrSlides) {
  const double m = 1.0, a = 0.1, b = 0.1, c = 0.01, g = 9.81, mu = 0.5, h = 1e-3;
  for (double ratio : {0.8, 1.5}) {
    const double theta = std::atan(ratio * mu);
    Simulator sim(box_model(m, a, b, c, Vec3(g * std::sin(theta), 0, -g * std::cos(theta))), h);
    sim.add_ground(rigid_ground(0.0, mu));
    add_corners(sim, a, b, c);
    VecX q = free_q(c), v = VecX::Zero(6), tau = VecX::Zero(6);
    const int steps = 300;
    double worst_fn = 0.0;
    int max_sweeps = 0;
    for (int k = 0; k < steps; ++k) {
      sim.step(q, v, tau);
      worst_fn = std::max(worst_fn, std::abs(sum_normal(sim) - m * g * std::cos(theta)) / (m * g));
      max_sweeps = std::max(max_sweeps, sim.rigid_report().pgs.iterations);
      EXPECT_TRUE(sim.rigid_report().pgs.converged);
    }
    const double accel = v[3] / (steps * h);  // v[3]: body x velocity (the box does not rotate)
    if (ratio < 1.0) {
      std::printf("incline tan = %.1f mu: slip speed %.2e m/s, max |sum f_n - m g cos| / m g %.1e, PGS sweeps <= %d\n",
                  ratio, v.head<6>().norm(), worst_fn, max_sweeps);
      EXPECT_LT(v.norm(), 1e-9);
    } else {
      const double ref = g * (std::sin(theta) - mu * std::cos(theta));
      std::printf("incline tan = %.1f mu: acceleration %.12f against %.12f (rel %.1e), PGS sweeps <= %d\n", ratio,
                  accel, ref, std::abs(accel - ref) / ref, max_sweeps);
      EXPECT_LT(std::abs(accel - ref), 1e-8 * ref);
      EXPECT_LT(std::abs(v[4]) + v.head<3>().norm(), 1e-9);  // no sideways slip, no rotation
    }
    EXPECT_LT(worst_fn, 1e-9);
  }
}

namespace {
/// A free-flying chain of `links` rods (length l, mass 0.5 kg) joined by revolute joints about
/// y.
Model chain_model(int links, double l) {
  Model m("world");
  const double mass = 0.5, rod = mass * l * l / 12.0;
  const RigidBodyInertia I =
      RigidBodyInertia::from_mass_com_inertia(mass, Vec3(l / 2, 0, 0), Vec3(1e-3, rod, rod).asDiagonal());
  int parent = m.add_body(0, JointFreeFlyer{}, Transform(), I, "link0", "root");
  for (int i = 1; i < links; ++i)
    parent = m.add_body(parent, JointRevoluteY{}, Transform(Mat3::Identity(), Vec3(l, 0, 0)), I,
                        "link" + std::to_string(i), "j" + std::to_string(i));
  return m;
}
}  // namespace

// A chain of four links dropped tilted from 0.3 m onto a rigid plane with friction (e = 0.2,
// mu = 0.8) comes to rest lying on it: velocities vanish, the normal forces carry its weight.
TEST(RigidContact, FallingChainComesToRest) {
  const int links = 4;
  const double l = 0.2, r = 0.02, g = 9.81;
  const Model m = chain_model(links, l);
  Simulator sim(m, 1e-3);
  sim.add_ground(rigid_ground(0.2, 0.8));
  // Spheres in pairs beside each joint (y = +-0.03 m: a ladder, which cannot roll like a log).
  for (int i = 0; i < links; ++i)
    for (double y : {-0.03, 0.03}) {
      sim.add_sphere("link" + std::to_string(i), Vec3(0, y, 0), r);
      if (i == links - 1) sim.add_sphere("link" + std::to_string(i), Vec3(l, y, 0), r);
    }
  VecX q = VecX::Zero(m.nq()), v = VecX::Zero(m.nv()), tau = VecX::Zero(m.nv());
  // Tilted by -0.3 rad about y (the chain rises along x), links bent by +-0.4 rad, moving at
  // 0.5 m/s along x and turning about z at 1 rad/s: it lands and slides to rest by friction.
  const double th = -0.15;
  q << 0, 0, 0.3, 0, std::sin(th), 0, std::cos(th), 0.4, -0.4, 0.4;
  v[2] = 1.0;
  v[3] = 0.5;
  double min_gap = 1.0, max_impact = 0.0;
  for (int k = 0; k < 3000; ++k) {
    sim.step(q, v, tau);
    for (const ContactPair& p : sim.last_contacts()) {
      min_gap = std::min(min_gap, -p.penetration);
      max_impact = std::max(max_impact, p.penetration_rate);
    }
  }
  double final_gap = 0.0;
  for (const ContactPair& p : sim.contacts(q, v)) final_gap = std::max(final_gap, std::abs(p.penetration));
  const double weight = links * 0.5 * g;
  std::printf(
      "chain after 3 s: |v| %.2e, sum f_n / weight - 1 = %.2e, active %d, final max |gap| %.1e m, min gap over the "
      "run %.2e m (impact speeds up to %.2f m/s)\n",
      v.norm(), sum_normal(sim) / weight - 1.0, sim.rigid_report().active, final_gap, min_gap, max_impact);
  EXPECT_LT(v.norm(), 1e-9);
  EXPECT_LT(std::abs(sum_normal(sim) / weight - 1.0), 1e-9);
  EXPECT_EQ(sim.rigid_report().active, 2 * (links + 1));
  EXPECT_LT(final_gap, sim.rigid_options().contact_tolerance);  // resting pairs are active within it
  // Moreau's midpoint rule lets a pair that is not yet active penetrate within one step (by less
  // than dt times its speed; it is projected out the next step): the only penetration allowed.
  EXPECT_GT(min_gap, -1e-3 * max_impact);
}

// Loop joints: the contact impulses act through the constrained response, so they add no
// violation of the loop's velocity constraint (L dv = 0), and the crank tip does not
// penetrate.
TEST(RigidContact, LoopModelCombinesEqualityRows) {
  Model fb = build_four_bar();
  ASSERT_GT(fb.num_constraints(), 0);
  Simulator sim(fb, 1e-3);
  sim.add_ground(rigid_ground(0.0, 0.0, Vec3::UnitY()));
  sim.add_point(fb.body_name(1), Vec3(0.3, 0, 0));
  Data data(fb);
  VecX q = neutral(fb), v = VecX::Zero(fb.nv()), tau = VecX::Zero(fb.nv());
  int touching = 0;
  double worst_gap = 0.0, worst_loop = 0.0;
  for (int k = 0; k < 3000; ++k) {
    const VecX q0 = q, v0 = v;
    sim.step(q, v, tau);
    if (sim.rigid_report().active == 0) continue;
    ++touching;
    // The same step without the ground: the impulse's effect is v - v_free.
    Simulator free(fb, 1e-3);
    VecX qf = q0, vf = v0;
    free.step(qf, vf, tau);
    constraint_jacobian(fb, data, q0);
    worst_loop = std::max(worst_loop, (data.loops.L * (v - vf)).lpNorm<Eigen::Infinity>() / (v - vf).norm());
    worst_gap = std::min(worst_gap, -sim.last_contacts()[0].penetration);
  }
  std::printf("four-bar, rigid: tip in contact in %d of 3000 steps, max |L dv| / |dv| %.1e, min gap %.1e m\n", touching,
              worst_loop, worst_gap);
  EXPECT_GT(touching, 1000);
  EXPECT_LT(worst_loop, 1e-10);
  EXPECT_GT(worst_gap, -5e-5);  // the projection's linearisation error, O(dt^2)
  EXPECT_LT(constraint_residual(fb, data, q).lpNorm<Eigen::Infinity>(), 1e-6);
}

TEST(RigidContact, BadInputRaisesClearErrors) {
  EXPECT_EQ(parse_contact_law("rigid"), ContactLaw::Rigid);
  Simulator sim(box_model(1, 0.1, 0.1, 0.1), 1e-3, Integrator::Rk4);
  EXPECT_THROW(sim.add_ground(rigid_ground(1.5)), InvalidArgument);
  EXPECT_THROW(sim.add_ground(rigid_ground(-0.1)), InvalidArgument);
  sim.add_ground(rigid_ground(0.5));
  sim.add_sphere("box", Vec3::Zero(), 0.1);
  VecX q = free_q(0.1), v = VecX::Zero(6), tau = VecX::Zero(6);
  try {
    sim.step(q, v, tau);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rigid"), std::string::npos) << e.what();
  }
  NormalForceModel n;
  n.law = ContactLaw::Rigid;
  n.restitution = 0.4;
  EXPECT_EQ(coefficient_of_restitution(n, 1.0, 2.0), 0.4);
  EXPECT_EQ(static_penetration(n, 10.0), 0.0);
  EXPECT_EQ(normal_force(n, 0.1, 1.0), 0.0);
}

namespace {
Model solo12(bool& found) {
  const std::string path = std::string(PLUCKER_SHARED_DIR) + "/models/solo12.urdf";
  found = std::filesystem::exists(path);
  if (!found) return build_quadruped(0, true);
  UrdfOptions options;
  options.root = RootJoint::FreeFlyer;
  options.on_warning = [](const std::string&) {};
  return load_urdf(path, options);
}
}  // namespace

// A warm rigid step allocates nothing on a tree (frictionless and with friction), in a rollout too.
TEST(RigidContact, NoAllocationOnceWarm) {
#ifndef PLUCKER_COUNT_ALLOCATIONS
  GTEST_SKIP() << "allocation counting needs glibc without sanitizers";
#else
  bool found = false;
  const Model m = solo12(found);
  if (!found) GTEST_SKIP() << "solo12.urdf absent";
  for (double mu : {0.0, 0.8}) {
    Simulator sim(m, 1e-3);
    sim.add_ground(rigid_ground(0.0, mu));
    for (const char* foot : {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"}) sim.add_sphere(foot, Vec3::Zero(), 0.02);
    VecX q = VecX::Zero(m.nq()), v = VecX::Zero(m.nv()), tau = VecX::Zero(m.nv());
    q[2] = 0.3;
    q[6] = 1.0;
    MatX TAU = MatX::Zero(m.nv(), 600), Q(m.nq(), 601), V(m.nv(), 601), F(12, 600);
    sim.rollout(q, v, TAU, Q, V, F);  // lands: every pair active at some step
    q = Q.col(600);
    v = V.col(600);
    EXPECT_EQ(alloc_count::allocations([&] {
                for (int k = 0; k < 10; ++k) sim.step(q, v, tau);
              }),
              0);
    EXPECT_EQ(alloc_count::allocations([&] { sim.rollout(q, v, TAU, Q, V, F); }), 0);
  }
#endif
}
