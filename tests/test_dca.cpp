// The divide-and-conquer algorithm (forward_dynamics_dca, docs/dca.md), beyond the family test
// of test_forward_dynamics.cpp (which checks "dca" and "dca_accurate" against the ABA and a
// dense solve of the CRBA's M on every builder and shared robot, with external forces, SingularError
// on romeo and no allocation):
//   - threads: the levels of the assembly tree on 2-4 threads give the serial result bit for bit
//     (each node runs the same operations in the same order whichever thread runs it);
//   - long chains and trees (N = 256) against the ABA, tolerance scaled by cond(M);
//   - the assembly tree: height ceil(log2(N + 1)) on chains, and a critical path that grows by a
//     constant per doubling of N while the total work doubles (O(log N) depth, O(N) work);
//   - bodies of singular inertia (a massless link, a massless floating base, a point mass): the
//     result agrees with the ABA; a massless subtree raises SingularError naming the joint, as the
//     ABA; threads < 1 is refused.
#include <gtest/gtest.h>

#include <cmath>

#include "alloc_count.hpp"
#include "dynamics_test_support.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

/// The DCA's agreement constant: |qdd - qdd_aba| <= kDcaC cond(M) eps (|qdd_aba| + (|tau| + |C|) /
/// lambda_max), the bound of test_forward_dynamics.cpp with a larger constant: the DCA forms
/// inverse inertias and subtracts them (docs/dca.md, accuracy). Observed worst ratios are logged
/// with PLUCKER_TEST_VERBOSE=1.
constexpr double kDcaC = 1e3;

struct Case {
  std::string name;
  Model model;
};

std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"chain64", build_chain(64, {Vec3::UnitZ(), Vec3::UnitY()}, 1)});
  c.push_back({"tree60_bf2", build_random_tree(60, 2.0, 0.5, 0.95, 2)});
  c.push_back({"humanoid_floating", build_humanoid(3, true)});
  c.push_back({"all_joints", build_all_joints_tree(4)});
  return c;
}

double tolerance(const Model& model, Data& data, const VecX& q, const VecX& v, const VecX& tau, const VecX& ref) {
  const VecX C = nonlinear_effects(model, data, q, v);
  const Spectrum sp = spectrum(crba(model, data, q));
  return kDcaC * sp.cond() * kEps * (ref.norm() + (tau.norm() + C.norm()) / sp.max);
}

TEST(Dca, ThreadsGiveTheSerialResultBitForBit) {
  for (const Case& c : cases()) {
    Data data(c.model);
    Rng rng(701);
    for (int s = 0; s < 2; ++s) {
      const VecX q = random_configuration(c.model, rng), v = random_vector(c.model.nv(), rng),
                 tau = random_vector(c.model.nv(), rng, 10.0);
      const VecX ref = aba(c.model, data, q, v, tau);
      const double tol = tolerance(c.model, data, q, v, tau, ref);
      for (DcaVariant variant : {DcaVariant::Basic, DcaVariant::Accurate}) {
        const VecX serial = forward_dynamics_dca(c.model, data, q, v, tau, variant, 1);
        EXPECT_LE((serial - ref).norm(), tol) << c.name << " variant " << static_cast<int>(variant);
        for (int threads : {2, 3, 4}) {
          const VecX parallel = forward_dynamics_dca(c.model, data, q, v, tau, variant, threads);
          EXPECT_TRUE(parallel == serial)
              << c.name << " threads " << threads << ": |diff| " << (parallel - serial).norm();
        }
      }
    }
  }
}

// Long chains and trees, where the assembly tree has 8-9 levels; external forces in the three frames.
TEST(Dca, LongChainsAndTreesAgreeWithAba) {
  for (const Case& c : {Case{"chain256", build_chain(256, {Vec3::UnitZ(), Vec3::UnitY()}, 5)},
                        Case{"tree256_bf3", build_random_tree(256, 3.0, 0.5, 0.97, 6)}}) {
    Data data(c.model);
    Rng rng(702);
    const VecX q = random_configuration(c.model, rng), v = random_vector(c.model.nv(), rng),
               tau = random_vector(c.model.nv(), rng, 10.0);
    std::vector<Force> f(c.model.nbodies());
    for (auto& fi : f) fi = random_force(rng);
    for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
      const VecX ref = aba(c.model, data, q, v, tau, f, frame);
      const double tol = tolerance(c.model, data, q, v, tau, ref);
      for (DcaVariant variant : {DcaVariant::Basic, DcaVariant::Accurate}) {
        const VecX qdd = forward_dynamics_dca(c.model, data, q, v, tau, variant, 2, f, frame);
        EXPECT_LE((qdd - ref).norm(), tol) << c.name << " variant " << static_cast<int>(variant);
        if (verbose())
          std::cerr << "[ratio] " << c.name << " variant " << static_cast<int>(variant)
                    << ": err/tol = " << (qdd - ref).norm() / tol << "\n";
      }
    }
  }
}

// The assembly tree of a chain of N bodies (N + 1 leaves with the base) is a balanced binary
// tree: ceil(log2(N + 1)) levels, at most 2 handles on a subassembly (3 on a leaf), and each
// doubling of N adds one level: the critical path grows by about one node's operations while the
// total work doubles.
TEST(Dca, AssemblyTreeHasLogarithmicDepth) {
  DcaCost previous;
  for (int n = 16; n <= 1024; n *= 2) {
    const Model chain = build_chain(n);
    const DcaCost cost = dca_cost(chain);
    EXPECT_EQ(cost.levels, static_cast<int>(std::ceil(std::log2(n + 1.0)))) << n;
    EXPECT_LE(cost.max_handles, 2) << n;
    if (n > 32) {  // the total's ratio tends to 2 from above (the root's few handles)
      EXPECT_GT(static_cast<double>(cost.total) / previous.total, 1.9) << n;
      EXPECT_LT(static_cast<double>(cost.total) / previous.total, 2.1) << n;
    }
    if (n > 16) {
      EXPECT_LT(cost.critical_path - previous.critical_path, previous.critical_path / 2) << n;
      EXPECT_GT(cost.critical_path, previous.critical_path) << n;
    }
    EXPECT_EQ(cost.kinematics, dca_cost(chain, DcaVariant::Basic).kinematics);
    previous = cost;
  }
  // Random trees of branching factor 2: within twice the chain's depth.
  DcaCost tree_previous;
  for (int n : {64, 256, 1024}) {
    const DcaCost cost = dca_cost(build_random_tree(n, 2.0, 0.5, 1.0, 7));
    EXPECT_LE(cost.levels, 2 * static_cast<int>(std::ceil(std::log2(n + 1.0)))) << n;
    if (n > 64) {  // 4x the bodies: about 4x the work, well under 2x the critical path
      EXPECT_GT(static_cast<double>(cost.total) / tree_previous.total, 3.5) << n;
      EXPECT_LT(static_cast<double>(cost.critical_path) / tree_previous.critical_path, 2.0) << n;
    }
    tree_previous = cost;
  }
}

TEST(Dca, BadThreadCountIsRefused) {
  const Model model = build_chain(4);
  Data data(model);
  const VecX z = VecX::Zero(model.nv());
  EXPECT_THROW(forward_dynamics_dca(model, data, neutral(model), z, z, DcaVariant::Accurate, 0), InvalidArgument);
}

/// A 3-link chain whose middle link has no inertia: with the axes z, y, z and the tip's mass off
/// every axis, M is regular (the ABA solves it) but the middle body has no inverse inertia. With
/// `massless_tip` joints 2 and 3 move nothing: M is singular.
Model chain_with_massless_middle(bool massless_tip) {
  Model m;
  const RigidBodyInertia I = RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0.3, 0.1, 0), Mat3::Identity() * 0.01);
  const RigidBodyInertia none = RigidBodyInertia::Zero();
  m.add_body(0, JointRevoluteZ{}, Transform(), I, "link1", "joint1");
  m.add_body(1, JointRevoluteY{}, Transform::translation(Vec3(0.5, 0, 0)), none, "link2", "joint2");
  m.add_body(2, JointRevoluteZ{}, Transform::translation(Vec3(0.5, 0, 0)), massless_tip ? none : I, "link3", "joint3");
  return m;
}

/// A free-floating massless base (as iCub's base_link) with two legs and an arm, one leg ending in
/// a point mass (no rotational inertia) off its joint axis: M is regular.
Model floating_massless_base() {
  Model m;
  const RigidBodyInertia I = RigidBodyInertia::from_mass_com_inertia(2.0, Vec3(0, 0, -0.2), Mat3::Identity() * 0.02);
  const RigidBodyInertia point = RigidBodyInertia::unchecked(0.5, Vec3(0.1, 0.0, -0.3), Mat3::Zero());
  m.add_body(0, JointFreeFlyer{}, Transform(), RigidBodyInertia::Zero(), "base", "root");
  m.add_body(1, JointRevoluteY{}, Transform::translation(Vec3(0, 0.1, 0)), I, "thigh_l", "hip_l");
  m.add_body(2, JointRevoluteY{}, Transform::translation(Vec3(0, 0, -0.4)), point, "foot_l", "knee_l");
  m.add_body(1, JointRevoluteX{}, Transform::translation(Vec3(0, -0.1, 0)), I, "thigh_r", "hip_r");
  m.add_body(1, JointRevoluteZ{}, Transform::translation(Vec3(0, 0, 0.3)), I, "arm", "shoulder");
  return m;
}

// Bodies of singular inertia are regularised and their regularising inertia cancelled by a solved
// force at the root (docs/dca.md): the result agrees with the ABA when M is regular, and a
// singular M raises SingularError naming the joint, as the ABA does.
TEST(Dca, BodiesOfSingularInertia) {
  for (DcaVariant variant : {DcaVariant::Basic, DcaVariant::Accurate}) {
    for (const Case& c : {Case{"massless_middle", chain_with_massless_middle(false)},
                          Case{"floating_massless_base", floating_massless_base()}}) {
      Data data(c.model);
      Rng rng(703);
      for (int s = 0; s < 3; ++s) {
        const VecX q = random_configuration(c.model, rng), v = random_vector(c.model.nv(), rng),
                   tau = random_vector(c.model.nv(), rng);
        const VecX ref = aba(c.model, data, q, v, tau);
        const double tol = tolerance(c.model, data, q, v, tau, ref);
        for (int threads : {1, 2}) {
          const VecX qdd = forward_dynamics_dca(c.model, data, q, v, tau, variant, threads);
          EXPECT_LE((qdd - ref).norm(), tol) << c.name << " variant " << static_cast<int>(variant);
        }
      }
    }
    // The root's solve for the cancelling forces allocates nothing once warm either.
#ifdef PLUCKER_COUNT_ALLOCATIONS
    {
      const Model model = floating_massless_base();
      Data data(model);
      Rng rng(704);
      const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
                 tau = random_vector(model.nv(), rng);
      for (int threads : {1, 2}) {
        forward_dynamics_dca(model, data, q, v, tau, variant, threads);
        EXPECT_EQ(alloc_count::allocations([&] { forward_dynamics_dca(model, data, q, v, tau, variant, threads); }), 0)
            << "threads " << threads;
      }
    }
#endif
    // Joints 2 and 3 move a massless subtree: SingularError naming joint3 (the ABA's pivot, leaves first).
    const Model model = chain_with_massless_middle(true);
    Data data(model);
    const VecX q = VecX::Constant(model.nq(), 0.3), v = VecX::Zero(model.nv()), tau = VecX::Ones(model.nv());
    try {
      forward_dynamics_dca(model, data, q, v, tau, variant);
      ADD_FAILURE() << "no SingularError";
    } catch (const SingularError& e) {
      EXPECT_NE(std::string(e.what()).find("joint 'joint3'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
