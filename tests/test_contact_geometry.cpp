// Contact geometry beyond spheres (docs/contact.md, "Geometry and narrow phase"): the signed
// distances of the obstacles against formulas written differently here, the slots of capsules and
// boxes against brute-force scans, the pair layout, the box-vs-box refusal, and a rigid box and a
// compliant box at rest against m g (Python: python/tests/test_contact_geometry.py has the rolling,
// fixed-sphere, fixed-box and URDF tests).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"

using namespace plucker;

namespace {

Model free_body(double mass = 1.0) {
  Model m("world");
  m.add_body(0, JointFreeFlyer{}, Transform(),
             RigidBodyInertia::from_mass_com_inertia(mass, Vec3::Zero(), 0.01 * Mat3::Identity()), "b", "root_joint");
  m.set_gravity(Vec3(0, 0, -9.81));
  return m;
}

Mat3 random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> n;
  // One draw per statement, in g++ 12's order of the arguments (right to left): the same
  // rotations under every compiler.
  const double z = n(rng), y = n(rng), x = n(rng), w = n(rng);
  return Quat(w, x, y, z).normalized().toRotationMatrix();
}

/// The box's signed distance written as max(|p| - e) inside and |max(|p| - e, 0)| outside.
double box_distance_reference(const Vec3& e, const Vec3& p) {
  const Vec3 d = p.cwiseAbs() - e;
  return d.cwiseMax(0.0).norm() + std::min(d.maxCoeff(), 0.0);
}

}  // namespace

TEST(ContactGeometry, SignedDistancesAgainstReferenceFormulas) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Obstacle box;
  box.kind = ObstacleKind::Box;
  box.center = Vec3(0.1, -0.2, 0.3);
  box.rotation = random_rotation(rng);
  box.half_extents = Vec3(0.3, 0.2, 0.1);
  Obstacle ball;
  ball.kind = ObstacleKind::Sphere;
  ball.center = Vec3(0.2, 0.1, -0.1);
  ball.radius = 0.25;
  double worst_box = 0.0, worst_normal = 0.0, worst_ball = 0.0;
  for (int i = 0; i < 2000; ++i) {
    const double y_z = u(rng), y_y = u(rng), y_x = u(rng);  // g++'s order, as random_rotation
    const Vec3 y(y_x, y_y, y_z);
    Vec3 n;
    const double d = signed_distance(box, y, n);
    worst_box = std::max(
        worst_box, std::abs(d - box_distance_reference(box.half_extents, box.rotation.transpose() * (y - box.center))));
    // The normal is the gradient of the distance: a central difference along it.
    const double h = 1e-6;
    Vec3 dummy;
    const double slope = (signed_distance(box, y + h * n, dummy) - signed_distance(box, y - h * n, dummy)) / (2 * h);
    worst_normal = std::max(worst_normal, std::abs(slope - 1.0) + std::abs(n.norm() - 1.0));
    worst_ball = std::max(worst_ball, std::abs(signed_distance(ball, y, n) - ((y - ball.center).norm() - 0.25)));
  }
  EXPECT_LT(worst_box, 1e-15);
  EXPECT_LT(worst_normal, 1e-8);
  EXPECT_LT(worst_ball, 1e-15);
}

TEST(ContactGeometry, CapsuleAndBoxSlotsAgainstBruteForce) {
  // A capsule and a box on a tilted free body near a fixed box and a fixed sphere: each slot's
  // penetration against a scan of 20,001 points along the (half) segment / over the box surface.
  const Model m = free_body();
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    ContactScene scene;
    const Mat3 Rc = random_rotation(rng);
    scene.add_capsule(m, "b", Vec3(0.01, 0.02, 0.0), Rc, 0.05, 0.4);
    Obstacle box;
    box.kind = ObstacleKind::Box;
    box.center = Vec3(0.0, 0.0, -0.5);
    box.rotation = random_rotation(rng);
    box.half_extents = Vec3(0.4, 0.3, 0.45);
    scene.add_obstacle(box);
    Obstacle ball;
    ball.kind = ObstacleKind::Sphere;
    ball.center = Vec3(0.1, 0.0, -0.4);
    ball.radius = 0.35;
    scene.add_obstacle(ball);
    ASSERT_EQ(scene.num_pairs(), 3);  // capsule: 2 against the box, 1 against the sphere
    Data d(m);
    VecX q(7), v = VecX::Zero(6);
    const Quat qb(random_rotation(rng));
    q << 0.0, 0.0, 0.05, qb.x(), qb.y(), qb.z(), qb.w();
    contact_forces(m, d, scene, q, v);
    const auto pairs = contact_pairs(d);
    const Mat3 Rb = qb.toRotationMatrix();
    const Vec3 c = q.head<3>() + Rb * Vec3(0.01, 0.02, 0.0), axis = Rb * Rc.col(2);
    const Vec3 a = c - 0.2 * axis, b = c + 0.2 * axis;
    auto scan = [&](const Obstacle& o, double t0, double t1) {
      double best = -1e300;
      for (int k = 0; k <= 20000; ++k) {
        Vec3 n;
        const double t = t0 + (t1 - t0) * k / 20000.0;
        best = std::max(best, 0.05 - signed_distance(o, a + t * (b - a), n));
      }
      return best;
    };
    // The slots are the maxima over the half segments: never shallower than a scan point, and
    // deeper by at most the scan's step (2e-5 m along the segment) times the slope (<= 1).
    const double scans[3] = {scan(box, 0.0, 0.5), scan(box, 0.5, 1.0), scan(ball, 0.0, 1.0)};
    for (int p = 0; p < 3; ++p) {
      EXPECT_GE(pairs[static_cast<std::size_t>(p)].penetration, scans[p] - 1e-12) << "slot " << p;
      EXPECT_LE(pairs[static_cast<std::size_t>(p)].penetration, scans[p] + 1e-5) << "slot " << p;
    }
    EXPECT_GE(pairs[2].penetration, scan(ball, 0.0, 1.0) - 1e-15);  // exact: the closest point
  }
  // A body box against the fixed sphere: the penetration against a scan of the box's surface.
  ContactScene scene;
  const Vec3 e(0.1, 0.2, 0.05);
  const Mat3 Rbox = random_rotation(rng);
  scene.add_box(m, "b", Vec3::Zero(), Rbox, e);
  Obstacle ball;
  ball.kind = ObstacleKind::Sphere;
  ball.center = Vec3(0.05, 0.1, -0.25);
  ball.radius = 0.2;
  scene.add_obstacle(ball);
  ASSERT_EQ(scene.num_pairs(), 1);
  Data d(m);
  VecX q(7);
  q << 0, 0, 0, 0, 0, 0, 1;
  const VecX v0 = VecX::Zero(6);
  contact_forces(m, d, scene, q, v0);
  const auto pairs = contact_pairs(d);
  double best = -1e300;
  const int N = 200;
  for (int face = 0; face < 6; ++face)
    for (int i = 0; i <= N; ++i)
      for (int j = 0; j <= N; ++j) {
        Vec3 s;
        const int ax = face / 2;
        s[ax] = (face % 2) ? 1.0 : -1.0;
        s[(ax + 1) % 3] = -1.0 + 2.0 * i / N;
        s[(ax + 2) % 3] = -1.0 + 2.0 * j / N;
        const Vec3 p = Rbox * s.cwiseProduct(e);
        best = std::max(best, ball.radius - (p - ball.center).norm());
      }
  EXPECT_NEAR(pairs[0].penetration, best, 2e-4);  // the scan's grid spacing 2e-3 m
  EXPECT_GE(pairs[0].penetration, best - 1e-15);  // exact: no surface point goes deeper
  EXPECT_LT((pairs[0].normal - (pairs[0].point - ball.center).normalized()).norm(), 1e-12);
}

TEST(ContactGeometry, LayoutAndBadInput) {
  const Model m = free_body();
  ContactScene scene;
  scene.add_obstacle(HalfSpace{});
  scene.add_sphere(m, "b", Vec3::Zero(), 0.1);
  scene.add_box(m, "b", Vec3::Zero(), Mat3::Identity(), Vec3(0.1, 0.1, 0.1));
  scene.add_capsule(m, "b", Vec3::Zero(), Mat3::Identity(), 0.1, 0.2);
  Obstacle ball;
  ball.kind = ObstacleKind::Sphere;
  ball.radius = 1.0;
  ball.center = Vec3(0, 0, -2);
  scene.add_obstacle(ball);
  // sphere: 1 + 1; box: 8 + 1; capsule: 2 + 1.
  ASSERT_EQ(scene.num_pairs(), 14);
  EXPECT_EQ(scene.pair_layout()[2].shape, 1);
  EXPECT_EQ(scene.pair_layout()[9].slot, 7);
  EXPECT_EQ(scene.pair_layout()[10].obstacle, 1);
  Obstacle box;
  box.kind = ObstacleKind::Box;
  box.half_extents = Vec3(1, 1, 1);
  EXPECT_THROW(scene.add_obstacle(box), InvalidArgument);  // a body box is in the scene
  EXPECT_EQ(scene.num_half_spaces(), 2);
  EXPECT_THROW(scene.add_box(m, "b", Vec3::Zero(), Mat3::Identity(), Vec3(0.1, -0.1, 0.1)), InvalidArgument);
  EXPECT_THROW(scene.add_box(m, "nope", Vec3::Zero(), Mat3::Identity(), Vec3(0.1, 0.1, 0.1)), InvalidArgument);
  EXPECT_THROW(scene.add_capsule(m, "b", Vec3::Zero(), 2.0 * Mat3::Identity(), 0.1, 0.1), InvalidArgument);
  EXPECT_THROW(scene.add_capsule(m, "b", Vec3::Zero(), Mat3::Identity(), 0.1, -0.1), InvalidArgument);
  ball.radius = -1.0;
  EXPECT_THROW(scene.add_obstacle(ball), InvalidArgument);
  EXPECT_EQ(scene.num_pairs(), 14);
}

TEST(ContactGeometry, BoxRestsOnItsCornersRigidAndCompliant) {
  const Vec3 e(0.1, 0.05, 0.05);
  // Rigid, frictionless (Lemke) and with friction (PGS): zero acceleration, forces sum to m g.
  for (const double mu : {0.0, 0.7}) {
    Simulator sim(free_body(2.5), 1e-3);
    HalfSpace g;
    g.normal_force.law = ContactLaw::Rigid;
    g.friction.static_coefficient = g.friction.dynamic_coefficient = mu;
    sim.add_ground(g);
    sim.add_box("b", Vec3::Zero(), Mat3::Identity(), e);
    VecX q(7), v = VecX::Zero(6), tau = VecX::Zero(6);
    q << 0, 0, e.z(), 0, 0, 0, 1;
    for (int k = 0; k < 200; ++k) sim.step(q, v, tau);
    double fz = 0.0;
    for (const ContactPair& p : sim.last_contacts()) fz += p.force.z();
    EXPECT_NEAR(fz, 2.5 * 9.81, 1e-10 * 2.5 * 9.81) << "mu " << mu;
    EXPECT_LT(v.norm(), 1e-12) << "mu " << mu;
  }
  // Compliant Hunt-Crossley: the static penetration of a quarter of the weight per corner.
  Simulator sim(free_body(2.5), 2e-4, Integrator::SemiImplicitEuler);
  HalfSpace g;
  g.normal_force.stiffness = 1e5;
  g.normal_force.damping = 3e6;
  sim.add_ground(g);
  sim.add_box("b", Vec3::Zero(), Mat3::Identity(), e);
  VecX q(7), v = VecX::Zero(6), tau = VecX::Zero(6);
  q << 0, 0, e.z(), 0, 0, 0, 1;
  for (int k = 0; k < 2500; ++k) sim.step(q, v, tau);
  const double x = static_penetration(g.normal_force, 2.5 * 9.81 / 4.0);
  EXPECT_NEAR(e.z() - q[2], x, 1e-6 * x);
}
