// The global formulation (paper 000 §3.5): the Newton-Euler factorisation M = H^T P^-T I P^-1 H
// against the CRBA; Baraff's sparse method (global_sparse) and the Constraint-Force Algorithm (cfa,
// serial and by cyclic reduction) against the ABA and each other, on chains, trees, floating bases,
// every joint kind, massless links and the shared robots; their errors; the CFA's operation counts.
// (test_forward_dynamics.cpp runs both through the family tests on every model as well.)
//
// Tolerance of an agreement, as in test_forward_dynamics.cpp (the forward error of a backward-stable
// solve): |qdd - qdd_ref| <= kC cond(M) eps (|qdd_ref| + (|tau| + |C|) / lambda_max(M)), kC = 10.
#include <gtest/gtest.h>

#include "dynamics_test_support.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

std::vector<std::pair<std::string, Model>> models() {
  std::vector<std::pair<std::string, Model>> out;
  out.emplace_back("chain9", build_chain(9, {Vec3(1, 1, 0), Vec3::UnitZ()}, 2));
  out.emplace_back("tree31", build_random_tree(31, 2.0, 0.7, 0.9, 4));
  out.emplace_back("humanoid_floating", build_humanoid(6, true));
  out.emplace_back("all_joints", build_all_joints_tree(10));
  for (const char* name : {"panda", "talos_full"}) {
    const std::string path = shared_model_path(name);
    if (!path.empty())
      out.emplace_back(
          name, load_shared_model(path, std::string(name) == "talos_full" ? RootJoint::FreeFlyer : RootJoint::Fixed));
  }
  return out;
}

// M from the operators of Eq. 29 equals the CRBA's (a different recursion, link coordinates) to
// rounding: 1e-12 relative to the largest entry.
TEST(GlobalFormulation, NewtonEulerFactorisationIsTheCrbaMassMatrix) {
  for (const auto& [name, model] : models()) {
    Data data(model);
    Rng rng(501);
    const VecX q = random_configuration(model, rng);
    const MatX M_ne = mass_matrix_newton_euler(model, data, q);
    const MatX M = crba(model, data, q);
    EXPECT_LE((M_ne - M).cwiseAbs().maxCoeff(), 1e-12 * M.cwiseAbs().maxCoeff()) << name;
  }
}

constexpr double kC = 10.0;

// One random draw per statement: the order of a call's arguments is unspecified (g++ 12
// evaluates them right to left, clang++ 14 left to right), so draws in one call made other
// models under each compiler. The order is g++'s (its GIMPLE dump), so its models are unchanged.
RigidBodyInertia random_inertia(Rng& rng, double mass_scale = 1.0) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double m = mass_scale * (0.5 + 1.5 * u(rng));
  const double com_z = 0.2 * u(rng) - 0.1, com_y = 0.2 * u(rng) - 0.1, com_x = 0.2 * u(rng) - 0.1;
  const Vec3 com(com_x, com_y, com_z);
  const double box_z = 0.05 + 0.2 * u(rng), box_y = 0.05 + 0.2 * u(rng), box_x = 0.05 + 0.2 * u(rng);
  const Vec3 box(box_x, box_y, box_z);  // a box's moments
  const Vec3 d = Vec3(box.y() * box.y() + box.z() * box.z(), box.x() * box.x() + box.z() * box.z(),
                      box.x() * box.x() + box.y() * box.y()) /
                 12.0;
  const double axis_z = u(rng) + 0.1, axis_y = u(rng), axis_x = u(rng), angle = 3.0 * u(rng);
  const Mat3 R = Eigen::AngleAxisd(angle, Vec3(axis_x, axis_y, axis_z).normalized()).toRotationMatrix();
  return RigidBodyInertia::from_mass_com_inertia(m, com, m * R * d.asDiagonal() * R.transpose());
}

Transform random_placement(Rng& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const double axis_y = u(rng), axis_x = u(rng), angle = 0.5 * u(rng);
  const Mat3 R = Eigen::AngleAxisd(angle, Vec3(axis_x, axis_y, 1.0).normalized()).toRotationMatrix();
  const double r_z = 0.1 * u(rng), r_y = 0.1 * u(rng), r_x = 0.2 + 0.1 * u(rng);
  return Transform::from_pose(R, Vec3(r_x, r_y, r_z));
}

/// A floating base, then one joint of every kind in one unbranched chain.
Model floating_chain_of_every_joint(std::uint64_t seed) {
  Rng rng(seed);
  Model model("world");
  const Vec3 axis = Vec3(0.3, -0.5, 0.8).normalized();
  MatS6 S2 = MatS6::Zero(6, 2);
  S2.col(0) << Vec3::UnitZ(), Vec3(0.05, -0.03, 0.0).cross(Vec3::UnitZ());
  S2.col(1) << Vec3::Zero(), Vec3::UnitZ();
  const std::vector<JointModel> joints = {JointFreeFlyer{},
                                          JointRevoluteX{},
                                          JointRevoluteY{},
                                          JointFixed{},
                                          make_revolute(axis),
                                          JointPrismaticZ{},
                                          make_prismatic(Vec3(-0.2, 0.9, 0.4)),
                                          make_helical(Vec3(0.6, 0.2, -0.7), 0.05),
                                          make_cylindrical(Vec3(0.1, 0.7, 0.7)),
                                          make_planar(Vec3(1.0, 1.0, 0.5)),
                                          JointSpherical{},
                                          make_general_joint(S2),
                                          JointRevoluteZ{}};
  int parent = 0;
  for (std::size_t k = 0; k < joints.size(); ++k) {
    const RigidBodyInertia inertia = random_inertia(rng);  // drawn first, as g++ did
    const Transform placement = k == 0 ? Transform() : random_placement(rng);
    parent =
        model.add_body(parent, joints[k], placement, inertia, "body" + std::to_string(k), "joint" + std::to_string(k));
  }
  return model;
}

/// A chain of `n` revolute links with a branch of `branch` bodies at every `every`-th link.
Model chain_with_branches(int n, int every, int branch, std::uint64_t seed, bool floating = false) {
  Rng rng(seed);
  Model model("world");
  int parent = 0;
  if (floating) parent = model.add_body(0, JointFreeFlyer{}, Transform(), random_inertia(rng), "base", "root");
  for (int k = 0; k < n; ++k) {
    const JointModel j = k % 2 ? JointModel(JointRevoluteY{}) : JointModel(JointRevoluteZ{});
    const RigidBodyInertia inertia = random_inertia(rng);
    parent = model.add_body(parent, j, random_placement(rng), inertia, "link" + std::to_string(k),
                            "joint" + std::to_string(k));
    if (every > 0 && k % every == every - 1) {
      int b = parent;
      for (int m = 0; m < branch; ++m) {
        const RigidBodyInertia twig = random_inertia(rng, 0.3);
        b = model.add_body(b, JointRevoluteX{}, random_placement(rng), twig,
                           "twig" + std::to_string(k) + "_" + std::to_string(m),
                           "twig_joint" + std::to_string(k) + "_" + std::to_string(m));
      }
    }
  }
  return model;
}

/// A chain of universal joints: two revolutes with a massless link between them.
Model chain_of_universal_joints(int n, std::uint64_t seed) {
  Rng rng(seed);
  Model model("world");
  int parent = 0;
  for (int k = 0; k < n; ++k) {
    parent = model.add_body(parent, JointRevoluteX{}, random_placement(rng), RigidBodyInertia(),
                            "cross" + std::to_string(k), "u" + std::to_string(k) + "_x");
    parent = model.add_body(parent, JointRevoluteY{}, Transform(), random_inertia(rng), "link" + std::to_string(k),
                            "u" + std::to_string(k) + "_y");
  }
  return model;
}

std::vector<std::pair<std::string, Model>> fd_models() {
  std::vector<std::pair<std::string, Model>> out;
  out.emplace_back("chain9", build_chain(9, {Vec3(1, 1, 0), Vec3::UnitZ()}, 2));
  out.emplace_back("chain64", build_chain(64, {Vec3::UnitZ(), Vec3::UnitY()}, 3));
  out.emplace_back("floating_every_joint", floating_chain_of_every_joint(5));
  out.emplace_back("all_joints_tree", build_all_joints_tree(10));
  out.emplace_back("humanoid_floating", build_humanoid(6, true));
  out.emplace_back("quadruped_fixed", build_quadruped(7, false));
  out.emplace_back("chain_with_branches", chain_with_branches(24, 3, 2, 8, true));
  out.emplace_back("tree31", build_random_tree(31, 2.0, 0.7, 0.9, 4));
  for (const char* name : {"ur5", "panda", "iiwa14", "talos_full", "anymal", "icub", "pr2"}) {
    const std::string path = shared_model_path(name);
    const bool fixed = std::string(name) == "ur5" || std::string(name) == "panda" || std::string(name) == "iiwa14";
    if (!path.empty()) out.emplace_back(name, load_shared_model(path, fixed ? RootJoint::Fixed : RootJoint::FreeFlyer));
  }
  return out;
}

// Baraff's method and the CFA (cyclic reduction and serial) agree with the ABA and with each other,
// with and without external forces in every frame. The CFA runs where cfa_topology covers the model.
TEST(GlobalFormulation, GlobalSparseAndCfaAgreeWithAbaAndEachOther) {
  double worst = 0.0;
  for (const auto& [name, model] : fd_models()) {
    Data data(model);
    Rng rng(502);
    const bool cfa = cfa_topology(model).covered && name != "icub";  // icub: MasslessLinks below
    std::vector<Force> f_ext(static_cast<std::size_t>(model.nbodies()));
    for (Force& f : f_ext) f = random_force(rng, 5.0);
    for (int variant = 0; variant < 4; ++variant) {
      const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
                 tau = random_vector(model.nv(), rng, 10.0);
      const ReferenceFrame frame = variant == 2   ? ReferenceFrame::Local
                                   : variant == 3 ? ReferenceFrame::LocalWorldAligned
                                                  : ReferenceFrame::World;
      const ExternalForces forces = variant == 0 ? ExternalForces{} : ExternalForces(f_ext);
      const VecX ref = aba(model, data, q, v, tau, forces, frame);
      const VecX C = rnea(model, data, q, v, VecX::Zero(model.nv()), forces, frame);
      const Spectrum sp = spectrum(crba(model, data, q));
      const double tol = kC * sp.cond() * kEps * (ref.norm() + (tau.norm() + C.norm()) / sp.max);
      const std::string at = name + " variant " + std::to_string(variant);
      const VecX gs = forward_dynamics_global_sparse(model, data, q, v, tau, forces, frame);
      EXPECT_LE((gs - ref).norm(), tol) << at << " global_sparse, cond(M) = " << sp.cond();
      worst = std::max(worst, (gs - ref).norm() / tol);
      if (!cfa) continue;
      const VecX cr = forward_dynamics_cfa(model, data, q, v, tau, forces, frame, CfaSolver::CyclicReduction);
      const VecX serial = forward_dynamics_cfa(model, data, q, v, tau, forces, frame, CfaSolver::Serial);
      EXPECT_LE((cr - ref).norm(), tol) << at << " cfa, cond(M) = " << sp.cond();
      EXPECT_LE((serial - ref).norm(), tol) << at << " cfa serial, cond(M) = " << sp.cond();
      EXPECT_LE((cr - gs).norm(), 2 * tol) << at << " cfa vs global_sparse";
      EXPECT_LE((cr - serial).norm(), 2 * tol) << at << " cfa: cyclic reduction vs serial";
      worst = std::max({worst, (cr - ref).norm() / tol, (serial - ref).norm() / tol});
    }
  }
  if (verbose()) std::cerr << "[global] worst err / tol = " << worst << "\n";
}

// Which models the CFA covers: chains (fixed or floating) with short branches, and the builders'
// humanoid / quadruped / all-joints tree (limbs of at most kCfaMaxBranchBodies); a random tree is
// refused with InvalidArgument naming the joint where the long branch starts.
TEST(GlobalFormulation, CfaTopology) {
  EXPECT_TRUE(cfa_topology(build_chain(100)).covered);
  EXPECT_TRUE(cfa_topology(build_humanoid(0, true)).covered);
  EXPECT_TRUE(cfa_topology(build_all_joints_tree(0)).covered);
  const Model branched = chain_with_branches(20, 5, kCfaMaxBranchBodies, 1);
  const CfaTopology t = cfa_topology(branched);
  EXPECT_TRUE(t.covered) << t.reason;
  ASSERT_EQ(t.chain.size(), 20u + kCfaMaxBranchBodies);  // the last branch continues the chain's tip
  for (std::size_t k = 1; k < t.chain.size(); ++k) EXPECT_EQ(branched.parent(t.chain[k]), t.chain[k - 1]);
  const Model too_long = chain_with_branches(40, 10, kCfaMaxBranchBodies + 1, 1);
  const CfaTopology t2 = cfa_topology(too_long);
  EXPECT_FALSE(t2.covered);
  EXPECT_NE(t2.reason.find("'twig_joint9_0'"), std::string::npos) << t2.reason;
  EXPECT_NE(t2.reason.find("13 bodies"), std::string::npos) << t2.reason;
  Data data(too_long);
  const VecX q = neutral(too_long), z = VecX::Zero(too_long.nv());
  try {
    forward_dynamics_cfa(too_long, data, q, z, z);
    ADD_FAILURE() << "no InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("forward_dynamics_cfa: joint 'twig_joint9_0' starts a branch"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(forward_dynamics(too_long, data, q, z, z, ForwardDynamicsMethod::Cfa), InvalidArgument);
}

// icub's wrist links are point masses (zero rotational inertia): global_sparse solves it (checked
// above), the CFA refuses it naming the first such body on its main chain.
TEST(GlobalFormulation, CfaRefusesIcubsPointMassWrist) {
  const std::string path = shared_model_path("icub");
  if (path.empty()) GTEST_SKIP() << "icub.urdf not found";
  const Model model = load_shared_model(path, RootJoint::FreeFlyer);
  ASSERT_TRUE(cfa_topology(model).covered);
  Data data(model);
  Rng rng(505);
  const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng);
  try {
    forward_dynamics_cfa(model, data, q, v, v);
    ADD_FAILURE() << "no SingularError";
  } catch (const SingularError& e) {
    EXPECT_NE(std::string(e.what()).find("body 'l_wrist_1' (joint 'l_wrist_pitch') has a singular spatial inertia"),
              std::string::npos)
        << e.what();
  }
}

// Massless links between revolute joints (universal joints): the ABA's articulated inertia of the
// massless link has rank 5, so Baraff's elimination needs the augmentation (global_kernels.hpp); with
// it global_sparse agrees with the ABA. The CFA needs I^-1 of every chain body and refuses the
// massless link with SingularError naming it.
TEST(GlobalFormulation, MasslessLinks) {
  const Model model = chain_of_universal_joints(8, 3);
  Data data(model);
  Rng rng(503);
  const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
             tau = random_vector(model.nv(), rng, 10.0);
  const VecX ref = aba(model, data, q, v, tau);
  const VecX C = nonlinear_effects(model, data, q, v);
  const Spectrum sp = spectrum(crba(model, data, q));
  const VecX gs = forward_dynamics_global_sparse(model, data, q, v, tau);
  EXPECT_LE((gs - ref).norm(), kC * sp.cond() * kEps * (ref.norm() + (tau.norm() + C.norm()) / sp.max))
      << "cond(M) = " << sp.cond();
  try {
    forward_dynamics_cfa(model, data, q, v, tau);
    ADD_FAILURE() << "no SingularError";
  } catch (const SingularError& e) {
    EXPECT_NE(std::string(e.what()).find("body 'cross0' (joint 'u0_x')"), std::string::npos) << e.what();
  }
}

// A massless leaf: every method names its joint (the library's one criterion); global_sparse's pivot
// is the ABA's, so it refuses exactly what the ABA refuses. A light leaf (1e-9 of the others) is
// regular for both.
TEST(GlobalFormulation, SingularJointIsNamed) {
  for (double mass : {0.0, 1e-9}) {
    Model model = build_chain(5);
    const RigidBodyInertia I =
        mass > 0 ? RigidBodyInertia::from_mass_com_inertia(mass, Vec3(0.1, 0, 0), Mat3::Identity() * mass * 1e-2)
                 : RigidBodyInertia();
    model.add_body(5, JointRevoluteZ{}, Transform::translation(Vec3(0.1, 0, 0)), I, "leaf", "leaf_joint");
    Data data(model);
    const VecX q = neutral(model), v = VecX::Constant(model.nv(), 0.3), tau = VecX::Ones(model.nv());
    for (auto method : {ForwardDynamicsMethod::Aba, ForwardDynamicsMethod::GlobalSparse, ForwardDynamicsMethod::Cfa}) {
      if (mass == 0.0) {
        try {
          forward_dynamics(model, data, q, v, tau, method);
          ADD_FAILURE() << to_string(method) << ": no SingularError";
        } catch (const SingularError& e) {
          EXPECT_NE(std::string(e.what()).find("leaf_joint"), std::string::npos) << e.what();
        }
      } else {
        const VecX ref = aba(model, data, q, v, tau);
        EXPECT_LE((forward_dynamics(model, data, q, v, tau, method) - ref).norm(), 1e-6 * ref.norm())
            << to_string(method);
      }
    }
  }
}

// The CFA's operation counts: cyclic reduction takes ceil(log2 L) levels, its critical path grows by
// a constant per doubling of the chain (O(log N) depth) while its work and the serial solver's
// critical path grow linearly (per body, within 10 % of their value at N = 1024 from N = 64 on).
TEST(GlobalFormulation, CfaCriticalPathIsLogarithmic) {
  std::vector<double> cr_path, serial_path, work;
  for (int k = 4; k <= 10; ++k) {
    const int n = 1 << k;
    const Model model = build_chain(n, {Vec3::UnitZ(), Vec3::UnitY()}, 9);
    Data data(model);
    Rng rng(504);
    const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
               tau = random_vector(model.nv(), rng);
    forward_dynamics_cfa(model, data, q, v, tau, {}, ReferenceFrame::World, CfaSolver::CyclicReduction);
    const CfaOperationCounts cr = cfa_operation_counts(data);
    EXPECT_EQ(cr.chain_bodies, n);
    EXPECT_EQ(cr.levels, k);
    cr_path.push_back(cr.critical_path);
    work.push_back(cr.total);
    forward_dynamics_cfa(model, data, q, v, tau, {}, ReferenceFrame::World, CfaSolver::Serial);
    serial_path.push_back(cfa_operation_counts(data).critical_path);
  }
  const double work_per_body = work.back() / 1024, serial_per_body = serial_path.back() / 1024;
  for (std::size_t k = 0; k < cr_path.size(); ++k) {
    const double n = 1 << (k + 4);
    if (k >= 2) {  // the same cost for every full level
      const double step = cr_path[k] - cr_path[k - 1], prev = cr_path[k - 1] - cr_path[k - 2];
      EXPECT_NEAR(step, prev, 1e-9 * prev) << "N = " << n;
    }
    if (k < 2) continue;  // below N = 64 the per-call constants still show
    EXPECT_NEAR(work[k] / n, work_per_body, 0.1 * work_per_body) << "N = " << n;  // O(N)
    EXPECT_NEAR(serial_path[k] / n, serial_per_body, 0.1 * serial_per_body) << "N = " << n;
  }
  EXPECT_LT(cr_path.back() * 20, serial_path.back());  // N = 1024
}

}  // namespace
