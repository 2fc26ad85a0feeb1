// The divide-and-conquer algorithm (forward_dynamics_dca, docs/dca.md), beyond the family test
// of test_forward_dynamics.cpp (which checks "dca" and "dca_accurate" against the ABA and a
// dense solve of the CRBA's M on every builder and shared robot, with external forces, SingularError
// on romeo and no allocation):
//   - threads: the levels of the assembly tree on 2-4 threads give the serial result bit for bit
//     (each node runs the same operations in the same order whichever thread runs it);
//   - long chains and trees (N = 256) against the ABA, tolerance scaled by cond(M);
//   - the assembly tree: height ceil(log2(N + 1)) on chains, and a critical path that grows by a
//     constant per doubling of N while the total work doubles (O(log N) depth, O(N) work); the
//     kinematics prefix's depth grows by one round per doubling;
//   - bodies of singular inertia (a massless link, a massless floating base, a point mass): the
//     result agrees with the ABA; a massless subtree raises SingularError naming the joint, as the
//     ABA; threads < 1 is refused.
#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <cmath>
#include <map>

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
    if (n > 16) {  // the kinematics prefix: one more round per doubling (a serial pass would double)
      EXPECT_GT(cost.kinematics, previous.kinematics) << n;
      EXPECT_LT(cost.kinematics - previous.kinematics, previous.kinematics / 2) << n;
    }
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

// ============================================================================================
// Closed loops: constrained_forward_dynamics(method = dca / dca_accurate) against the three
// global methods (kkt, range_space, null_space) on the loop mechanisms.
// ============================================================================================
namespace {

/// Expects f() to throw E with `part` in its message.
template <class E, class F>
void expect_throw_containing(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one containing: " << part;
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

/// cond(L) over its nonzero singular values (above 1e-10 of the largest), as test_loops.cpp.
double condition(const MatX& L) {
  const Eigen::VectorXd s = Eigen::JacobiSVD<MatX>(L).singularValues();
  Eigen::Index r = 0;
  while (r < s.size() && s[r] > 1e-10 * s[0]) ++r;
  return r ? s[0] / s[r - 1] : 1.0;
}

/// A copy of `m` with every loop joint actuated (to test loop_joint_forces).
Model with_actuated_loops(const Model& m) {
  Model out(m.body_name(0));
  for (int i = 1; i < m.nbodies(); ++i)
    out.add_body(m.parent(i), m.joint(i), m.X_tree(i), m.inertia(i), m.body_name(i), m.joint_name(i));
  out.set_gravity(m.gravity());
  for (LoopJoint lj : m.loop_joints()) {
    lj.actuated = true;
    out.add_loop_joint(lj);
  }
  return out;
}

/// A copy of `m` with one more body, on body `on`, whose joint is geared to joint `leader` (a
/// mimic relation q_new = 1.5 q_leader + 0.2): loops and gears together.
Model with_gear(const Model& m, int on, int leader) {
  Model out(m.body_name(0));
  for (int i = 1; i < m.nbodies(); ++i)
    out.add_body(m.parent(i), m.joint(i), m.X_tree(i), m.inertia(i), m.body_name(i), m.joint_name(i));
  out.set_gravity(m.gravity());
  for (const LoopJoint& lj : m.loop_joints()) out.add_loop_joint(lj);
  const RigidBodyInertia I =
      RigidBodyInertia::from_mass_com_inertia(0.3, Vec3(0.1, 0.02, 0), Vec3(0.002, 0.003, 0.004).asDiagonal());
  const int geared = out.add_body(on, make_revolute(Vec3(0.2, 0.3, 1.0).normalized()),
                                  Transform::translation(Vec3(0.05, 0.1, 0)), I, "geared", "gear");
  out.add_mimic({geared, leader, 1.5, 0.2});
  return out;
}

std::vector<Case> loop_cases() {
  std::vector<Case> c;
  c.push_back({"geared_elbow", geared_elbow()});
  c.push_back({"four_bar_geared", with_gear(build_four_bar(), 2, 1)});
  c.push_back({"delta_geared", with_gear(build_delta(), 4, 1)});
  c.push_back({"four_bar", build_four_bar()});
  FourBarParams pg;
  pg.ground = pg.coupler = 0.8, pg.crank = pg.rocker = 0.35, pg.crank_angle = 1.2, pg.branch = -1;
  c.push_back({"parallelogram", build_four_bar(pg)});
  c.push_back({"slider_crank", build_slider_crank()});
  c.push_back({"delta", build_delta()});
  c.push_back({"delta_actuated", with_actuated_loops(build_delta())});
  for (LoopJointType t : {LoopJointType::Revolute, LoopJointType::Prismatic, LoopJointType::Cylindrical,
                          LoopJointType::Planar, LoopJointType::Spherical, LoopJointType::Fixed})
    c.push_back(
        {"random_" + std::string(to_string(t)), build_random_loops(t == LoopJointType::Fixed ? 24 : 16, 2, t, 1.2, 7)});
  c.push_back({"random_revolute_4_loops", build_random_loops(40, 4, LoopJointType::Revolute, 1.5, 11)});
  return c;
}

/// The DCA's loop agreement: |x - x_kkt| <= kDcaC cond(M) eps (|x_kkt| + scale), scale the size of
/// the right-hand side (|tau| + |C| over lambda_min(M) for qdd; |tau| + |C| for lambda). lambda
/// solves K lambda = r with K = L M^-1 L^T, whose entries carry the relative error of M^-1
/// (cond(M) eps): to first order its error is cond(K) times that, cond(K) over K's rank.
struct LoopTolerance {
  double qdd, lambda;
};
LoopTolerance loop_tolerance(const Model& m, Data& d, const VecX& q, const VecX& v, const VecX& tau, const VecX& qdd,
                             const VecX& lambda) {
  const VecX C = nonlinear_effects(m, d, q, v);
  const MatX M = crba(m, d, q);
  const Spectrum sp = spectrum(M);
  const MatX L = constraint_jacobian(m, d, q);
  const double cond_K = condition(L * M.llt().solve(L.transpose()));
  const double rhs = tau.norm() + C.norm();
  return {kDcaC * sp.cond() * kEps * (qdd.norm() + rhs / sp.min),
          kDcaC * sp.cond() * cond_K * kEps * (lambda.norm() + rhs)};
}

}  // namespace

TEST(DcaLoops, AgreesWithKktRangeSpaceAndNullSpace) {
  // Assembled states (phi = 0, L v = 0) and perturbed ones (phi, L v != 0) with Baumgarte terms:
  // the same function as the three methods. qdd, lambda (minimum norm), the rank and the
  // acceleration residual agree.
  double worst_qdd = 0.0, worst_lambda = 0.0;
  std::map<std::string, int> compared;
  int inconsistent = 0;
  for (const Case& c : loop_cases()) {
    Data d(c.model);
    Rng rng(731);
    std::mt19937_64 mt(17);
    for (int s = 0; s < 3; ++s) {
      VecX q = neutral(c.model), v = VecX::Zero(c.model.nv());
      try {
        q = assemble(c.model, d, integrate(c.model, neutral(c.model), random_vector(c.model.nv(), rng, 0.3)));
      } catch (const SingularError&) {
        continue;
      }
      // Near a singular configuration (cond(L) > 1e4, as test_loops.cpp) the rank is a matter of
      // tolerance and lambda of rounding: such states are skipped.
      if (condition(constraint_jacobian(c.model, d, q)) > 1e4) continue;
      v = project_velocity(c.model, d, q, random_vector(c.model.nv(), rng));
      ConstrainedOptions opt;
      if (s == 2) {  // off the constraint manifold, stabilised
        q = integrate(c.model, q, random_vector(c.model.nv(), rng, 1e-3));
        v += random_vector(c.model.nv(), rng, 1e-2);
        opt.baumgarte_alpha = 3.0, opt.baumgarte_beta = 5.0;
      }
      if (c.model.num_loop_actuators() > 0) opt.loop_joint_forces = random_vector(c.model.num_loop_actuators(), rng);
      const VecX tau = random_vector(c.model.nv(), rng, 2.0);
      opt.method = ConstrainedMethod::Kkt;
      const VecX qdd_ref = constrained_forward_dynamics(c.model, d, q, v, tau, opt);
      const VecX lambda_ref = d.loops.lambda;
      const int rank_ref = d.loops.rank;
      // Redundant rows made inconsistent (off the manifold, a random loop's redundant directions):
      // kkt keeps the independent rows its QR picks, the DCA those its eigen-decompositions keep,
      // and the results differ by design. Not compared.
      if (d.loops.acceleration_residual > 1e-9 * (1.0 + qdd_ref.norm())) {
        ++inconsistent;
        continue;
      }
      ++compared[c.name];
      const LoopTolerance tol = loop_tolerance(c.model, d, q, v, tau, qdd_ref, lambda_ref);
      for (ConstrainedMethod other : {ConstrainedMethod::RangeSpace, ConstrainedMethod::NullSpace}) {
        opt.method = other;
        const VecX qdd = constrained_forward_dynamics(c.model, d, q, v, tau, opt);
        EXPECT_LE((qdd - qdd_ref).norm(), tol.qdd) << c.name << " " << to_string(other);
      }
      for (ConstrainedMethod dca : {ConstrainedMethod::Dca, ConstrainedMethod::DcaAccurate}) {
        opt.method = dca;
        const VecX qdd = constrained_forward_dynamics(c.model, d, q, v, tau, opt);
        const double eq = (qdd - qdd_ref).norm(), el = (d.loops.lambda - lambda_ref).norm();
        worst_qdd = std::max(worst_qdd, eq / tol.qdd);
        worst_lambda = std::max(worst_lambda, el / tol.lambda);
        EXPECT_LE(eq, tol.qdd) << c.name << " " << to_string(dca) << " state " << s;
        EXPECT_LE(el, tol.lambda) << c.name << " " << to_string(dca) << " state " << s << "\n"
                                  << d.loops.lambda.transpose() << "\n"
                                  << lambda_ref.transpose();
        EXPECT_EQ(d.loops.rank, rank_ref) << c.name << " " << to_string(dca);
        EXPECT_LE(d.loops.acceleration_residual, std::max(1e-6 * (1.0 + qdd_ref.norm()), tol.qdd))
            << c.name << " " << to_string(dca) << " state " << s << " |dqdd| " << eq << " tol " << tol.qdd;
      }
    }
  }
  for (const Case& c : loop_cases()) EXPECT_GE(compared[c.name], 1) << c.name << ": no state compared";
  if (verbose()) {
    std::printf("[ dca loops ] worst |dqdd| / tol = %.3g, worst |dlambda| / tol = %.3g; %d inconsistent states\n",
                worst_qdd, worst_lambda, inconsistent);
    for (const auto& [name, n] : compared) std::printf("[ dca loops ] %s: %d states compared\n", name.c_str(), n);
  }
}

TEST(DcaLoops, ThreadsGiveTheSerialResultBitForBit) {
  // A state the serial calls solve: assemble may not close from a guess (SingularError), and on
  // a hard state the basic DCA refuses T^T Phi T negative beyond rounding (NumericalError; the
  // threaded calls must refuse it too). Such states are replaced, at most 10 tries per model.
  for (const Case& c : {Case{"delta", build_delta()}, Case{"delta_geared", with_gear(build_delta(), 4, 1)},
                        Case{"random_revolute_4_loops", build_random_loops(40, 4, LoopJointType::Revolute, 1.5, 11)}}) {
    Data d(c.model);
    Rng rng(732);
    bool compared = false;
    for (int attempt = 0; attempt < 10 && !compared; ++attempt) {
      VecX q;
      try {
        q = assemble(c.model, d, integrate(c.model, neutral(c.model), random_vector(c.model.nv(), rng, 0.2)));
      } catch (const SingularError&) {
        continue;
      }
      const VecX v = project_velocity(c.model, d, q, random_vector(c.model.nv(), rng));
      const VecX tau = random_vector(c.model.nv(), rng);
      ConstrainedOptions opt;
      opt.baumgarte_alpha = 1.0, opt.baumgarte_beta = 2.0;
      bool refused = false;
      for (ConstrainedMethod dca : {ConstrainedMethod::Dca, ConstrainedMethod::DcaAccurate}) {
        opt.method = dca;
        opt.threads = 1;
        try {
          constrained_forward_dynamics(c.model, d, q, v, tau, opt);
        } catch (const NumericalError&) {
          refused = true;
          for (int threads : {2, 3}) {
            opt.threads = threads;
            EXPECT_THROW(constrained_forward_dynamics(c.model, d, q, v, tau, opt), NumericalError) << c.name;
          }
        }
      }
      if (refused) continue;
      for (ConstrainedMethod dca : {ConstrainedMethod::Dca, ConstrainedMethod::DcaAccurate}) {
        opt.method = dca;
        opt.threads = 1;
        const VecX serial = constrained_forward_dynamics(c.model, d, q, v, tau, opt);
        const VecX lambda = d.loops.lambda;
        for (int threads : {2, 3}) {
          opt.threads = threads;
          const VecX parallel = constrained_forward_dynamics(c.model, d, q, v, tau, opt);
          EXPECT_TRUE(parallel == serial) << c.name << " threads " << threads;
          EXPECT_TRUE(d.loops.lambda == lambda) << c.name << " threads " << threads;
        }
      }
      compared = true;
    }
    EXPECT_TRUE(compared) << c.name << ": no state in 10 tries that the serial DCA solves";
  }
}

TEST(DcaLoops, NoAllocationOnceWarm) {
  for (const Model& m : {build_delta(), with_gear(build_delta(), 4, 1)}) {
    Data d(m);
    Rng rng(733);
    const VecX q = assemble(m, d, integrate(m, neutral(m), random_vector(m.nv(), rng, 0.2)));
    const VecX v = project_velocity(m, d, q, random_vector(m.nv(), rng)), tau = random_vector(m.nv(), rng);
    ConstrainedOptions opt;
    opt.method = ConstrainedMethod::DcaAccurate;
    constrained_forward_dynamics(m, d, q, v, tau, opt);
#ifdef PLUCKER_COUNT_ALLOCATIONS
    EXPECT_EQ(alloc_count::allocations([&] { constrained_forward_dynamics(m, d, q, v, tau, opt); }), 0) << m.name();
#endif
  }
}

TEST(DcaLoops, BadInputIsRefusedWithClearErrors) {
  const Model m = build_four_bar();
  Data d(m);
  const VecX q = neutral(m), z = VecX::Zero(m.nv());
  ConstrainedOptions opt;
  opt.method = ConstrainedMethod::Dca;
  EXPECT_THROW(constrained_forward_dynamics(m, d, q, VecX::Zero(2), z, opt), InvalidArgument);
  EXPECT_THROW(constrained_forward_dynamics(m, d, q, z, VecX::Zero(4), opt), InvalidArgument);
  VecX bad = z;
  bad[1] = std::nan("");
  EXPECT_THROW(constrained_forward_dynamics(m, d, q, z, bad, opt), InvalidArgument);
  opt.threads = 0;
  expect_throw_containing<InvalidArgument>([&] { constrained_forward_dynamics(m, d, q, z, z, opt); },
                                           "threads must be at least 1");
  opt.threads = 1;
  EXPECT_EQ(parse_constrained_method("dca"), ConstrainedMethod::Dca);
  EXPECT_EQ(parse_constrained_method("dca_accurate"), ConstrainedMethod::DcaAccurate);
  // A body of singular inertia in a loop model: refused, naming the body.
  Model massless = build_four_bar();
  Model mm(massless.body_name(0));
  for (int i = 1; i < massless.nbodies(); ++i)
    mm.add_body(massless.parent(i), massless.joint(i), massless.X_tree(i),
                i == 2 ? RigidBodyInertia() : massless.inertia(i), massless.body_name(i), massless.joint_name(i));
  for (const LoopJoint& lj : massless.loop_joints()) mm.add_loop_joint(lj);
  Data dm(mm);
  expect_throw_containing<InvalidArgument>(
      [&] { constrained_forward_dynamics(mm, dm, neutral(mm), VecX::Zero(3), VecX::Zero(3), opt); },
      "'" + mm.body_name(2) + "' has a singular spatial inertia");
}
