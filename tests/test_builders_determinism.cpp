// Golden values of the random procedural builders (plucker/model/builders.hpp).
//
// Why this test exists: the builders once drew several random numbers inside one expression
// (Vec3(uniform(rng, ..), uniform(rng, ..), uniform(rng, ..)), random_unit(rng) * uniform(rng, ..),
// add_body(.., xlt(..L()..), box(M()..))). C++ leaves the order of evaluation of function
// arguments unspecified, and g++ 12 (right to left) and clang++ 14 (left to right) built
// different models from the same seed. Every draw is now its own statement, in the order g++ 12
// used, so the models every test, table and study was computed with are unchanged. The values
// below were recorded from the g++ 12 build (-O3, x86-64) before that change and must hold
// under every compiler.
//
// Each model is flattened into a list v of all its seed-dependent numbers (per body: X_tree's
// rotation and translation, mass, first moment, rotational inertia about the origin; per loop
// joint: both frames and the axis; per frame: its transform). Two checksums: sum(v), and
// sum((k + 1) v_k), which changes when two numbers trade places (the symptom of a changed draw
// order: e.g. x and y of an offset swapped). A few individual entries pin single draws.
//
// Tolerance: 1e-13 relative (for a checksum: relative to sum(|v_k|) or sum((k + 1) |v_k|)).
// The draws are the same numbers under both compilers, but the arithmetic after them (and
// std::uniform_real_distribution's a + u (b - a)) may be contracted into FMAs by clang++
// (-ffp-contract=on) with -march=native, which changes last bits (~1e-16 relative); a
// changed draw order changes entries by 1e-3 or more.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "plucker/model/builders.hpp"
#include "plucker/model/model.hpp"

namespace plucker {
namespace {

constexpr double kRelTol = 1e-13;

void append(std::vector<double>& v, const Transform& X) {
  const Mat3 R = X.rotation();
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < 3; ++r) v.push_back(R(r, c));
  for (int r = 0; r < 3; ++r) v.push_back(X.translation()[r]);
}

std::vector<double> seeded_numbers(const Model& m) {
  std::vector<double> v;
  for (int i = 1; i < m.nbodies(); ++i) {
    append(v, m.X_tree(i));
    const RigidBodyInertia& I = m.inertia(i);
    v.push_back(I.mass());
    for (int r = 0; r < 3; ++r) v.push_back(I.first_moment()[r]);
    for (int c = 0; c < 3; ++c)
      for (int r = 0; r < 3; ++r) v.push_back(I.inertia_origin()(r, c));
  }
  for (const LoopJoint& lj : m.loop_joints()) {
    append(v, lj.X_predecessor);
    append(v, lj.X_successor);
    for (int r = 0; r < 3; ++r) v.push_back(lj.axis[r]);
  }
  for (const Frame& f : m.frames()) append(v, f.X_body);
  return v;
}

struct Golden {
  double sum;           ///< sum(v)
  double weighted_sum;  ///< sum((k + 1) v_k)
};

void expect_golden(const Model& m, const Golden& g, const std::string& what) {
  const std::vector<double> v = seeded_numbers(m);
  double sum = 0.0, weighted = 0.0, scale = 0.0, weighted_scale = 0.0;
  for (std::size_t k = 0; k < v.size(); ++k) {
    sum += v[k];
    weighted += static_cast<double>(k + 1) * v[k];
    scale += std::abs(v[k]);
    weighted_scale += static_cast<double>(k + 1) * std::abs(v[k]);
  }
  std::printf("%s: %zu numbers, sum %.17g, weighted sum %.17g\n", what.c_str(), v.size(), sum, weighted);
  EXPECT_NEAR(sum, g.sum, kRelTol * scale) << what;
  EXPECT_NEAR(weighted, g.weighted_sum, kRelTol * weighted_scale) << what;
}

void expect_entry(double value, double golden, const std::string& what) {
  std::printf("%s = %.17g\n", what.c_str(), value);
  EXPECT_NEAR(value, golden, kRelTol * std::abs(golden)) << what;
}

TEST(BuildersDeterminism, Chain) {
  const Model m = build_chain(12, {Vec3::UnitZ(), Vec3::UnitY()}, 7);
  expect_golden(m, {54.821911844863806, 7809.297548896523}, "build_chain(12, {z, y}, 7)");
  const Vec3 h = m.inertia(1).first_moment();  // m (0.5 len dir + U(-0.01, 0.01)^3)
  expect_entry(h.y(), -0.013803524464835423, "chain link1 first moment y");
  expect_entry(h.z(), 0.015080441269603699, "chain link1 first moment z");
}

TEST(BuildersDeterminism, RandomTree) {
  expect_golden(build_random_tree(15, 1.5, 0.5, 0.95, 3), {75.197197726466911, 13052.683853516837},
                "build_random_tree(15, 1.5, 0.5, 0.95, 3)");
}

TEST(BuildersDeterminism, Humanoid) {
  const Model m = build_humanoid(5, true);
  expect_golden(m, {176.2553306617605, 63223.618629571436}, "build_humanoid(5, true)");
  expect_golden(build_humanoid(5, false), {177.2553306617605, 63235.618629571436}, "build_humanoid(5, false)");
  const Vec3 hip = m.X_tree(m.body_index("r_hip_link1")).translation();
  expect_entry(hip.y(), -0.090638635368367373, "humanoid r_hip_link1 X_tree y");
  expect_entry(hip.z(), -0.082018481178922478, "humanoid r_hip_link1 X_tree z");
  expect_entry(m.inertia(m.body_index("head")).mass(), 4.5845006223630778, "humanoid head mass");
}

TEST(BuildersDeterminism, Quadruped) {
  const Model m = build_quadruped(5, true);
  expect_golden(m, {83.984865674863798, 11361.273646536591}, "build_quadruped(5, true)");
  expect_golden(build_quadruped(5, false), {84.584865674863806, 11368.473646536591}, "build_quadruped(5, false)");
  const Vec3 hip = m.X_tree(m.body_index("RH_HIP")).translation();
  expect_entry(hip.x(), -0.2729649838000236, "quadruped RH_HIP X_tree x");
  expect_entry(hip.y(), -0.12254759270112557, "quadruped RH_HIP X_tree y");
  expect_entry(m.inertia(m.body_index("RH_HIP")).mass(), 1.2225769020808785, "quadruped RH_HIP mass");
}

TEST(BuildersDeterminism, AllJointsTree) {
  const Model m = build_all_joints_tree(11);
  expect_golden(m, {72.900506748702099, 15264.04460069022}, "build_all_joints_tree(11)");
  const int rx = m.body_index("link_rx");
  expect_entry(m.X_tree(rx).translation().x(), 0.079909454121701765, "all_joints link_rx X_tree x");
  expect_entry(m.inertia(rx).first_moment().z(), -0.082854938680487988, "all_joints link_rx first moment z");
  // The joints' own samplers (random_configuration) draw in sequenced statements too.
  std::mt19937_64 rng(3);
  const VecX q = random_configuration(m, rng);
  double qsum = 0.0, qweighted = 0.0;
  for (Eigen::Index k = 0; k < q.size(); ++k) {
    qsum += q[k];
    qweighted += static_cast<double>(k + 1) * q[k];
  }
  expect_entry(qsum, -7.6687588337577566, "all_joints random_configuration sum");
  expect_entry(qweighted, -113.30722653424648, "all_joints random_configuration weighted sum");
}

TEST(BuildersDeterminism, RandomLoops) {
  for (LoopJointType type : {LoopJointType::Revolute, LoopJointType::Spherical}) {
    const Model m = build_random_loops(24, 3, type, 2.0, 4);
    const std::string what = "build_random_loops(24, 3, " + std::to_string(static_cast<int>(type)) + ", 2, 4)";
    const Golden g = type == LoopJointType::Revolute ? Golden{160.41768272657339, 54075.061414160395}
                                                     : Golden{150.00669125127175, 47243.626232538154};
    expect_golden(m, g, what);
    if (type == LoopJointType::Revolute) {
      const LoopJoint& lj = m.loop_joints().at(0);
      expect_entry(lj.axis.x(), 0.072820692256613292, "random_loops loop1 axis x");
      expect_entry(lj.X_predecessor.translation().z(), -0.019416692593998253, "random_loops loop1 X_predecessor z");
    }
  }
}

}  // namespace
}  // namespace plucker
