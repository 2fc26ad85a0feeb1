// Derivatives of the constrained forward dynamics (constrained_forward_dynamics_derivatives)
// against finite differences of constrained_forward_dynamics itself, on the loop mechanisms
// (four-bar, slider-crank, Delta, every loop-joint type) and mimic relations (a gripper, a
// geared elbow), with each of the three methods, with and without Baumgarte terms, at assembled
// configurations and off the constraint manifold (where phi != 0 enters through beta^2 phi);
// also with the divide-and-conquer methods (dca, dca_accurate) on the four-bar, slider-crank and
// geared elbow, assembled.
//
// Finite differences: Richardson-extrapolated central differences (h = 1e-4, O(h^4)) along
// integrate(q, e_k t), v + e_k t and tau + e_k t. Tolerance kFdTol = 1e-7 x (1 + largest entry
// of the finite-difference matrix + largest |qdd| or |lambda|): the constrained solve loses
// digits to cond(L M^-1 L^T), and the finite differences with it; observed worst errors are
// printed with PLUCKER_TEST_VERBOSE=1.
//
// d lambda is compared on every mechanism, also where L is rank-deficient and lambda is the
// minimum-norm multiplier (differentiable while the rank stays the same: every finite-difference
// evaluation checks that it does): the 3-D model of the planar four-bar (three rows of L
// identically zero), a weld across a fixed tree joint (rank 0), and a pendulum locked by two loop
// joints at once, whose redundancy spans both loops and whose null(L^T) turns with q (so the
// (I - Pi) dL nu term of the derivative is exercised: checked below).
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "dynamics_test_support.hpp"
#include "plucker/constraints/constrained_dynamics.hpp"
#include "plucker/constraints/loop_constraints.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

constexpr double kFdStep = 1e-4;
constexpr double kFdTol = 1e-7;

Model gripper_mimic() {
  Model m("palm");
  const RigidBodyInertia I = RigidBodyInertia::from_mass_com_inertia(0.2, Vec3(0, 0, 0.05), Mat3::Identity() * 1e-4);
  m.add_body(0, JointPrismaticY{}, Transform::translation(Vec3(0, 0.02, 0)), I, "finger_left", "left_joint");
  m.add_body(0, JointPrismaticY{}, Transform::translation(Vec3(0, -0.02, 0)), I, "finger_right", "right_joint");
  m.add_mimic({2, 1, -1.0, 0.0});
  return m;
}

/// A pendulum (revolute about z at the origin, 0.5 long along x) held to the ground by two loop
/// joints at once: a revolute about z at its tip and a spherical joint at its middle. Either
/// alone locks it, so L (8 rows) has rank 1 for every q, its redundancy spans both loops, and
/// null(L^T) turns with q. A second link, free (revolute about y at the tip), keeps qdd nonzero.
Model locked_pendulum() {
  Model m("locked_pendulum");
  const RigidBodyInertia I =
      RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0.25, 0, 0), Vec3(0.01, 0.02, 0.02).asDiagonal());
  m.add_body(0, make_revolute(Vec3::UnitZ()), Transform(), I, "link", "hinge");
  m.add_body(1, make_revolute(Vec3::UnitY()), Transform::translation(Vec3(0.5, 0, 0)), I, "free", "wrist");
  for (const auto& [name, type, x] :
       {std::tuple{"tip", LoopJointType::Revolute, 0.5}, std::tuple{"middle", LoopJointType::Spherical, 0.25}}) {
    LoopJoint joint;
    joint.name = name;
    joint.type = type;
    joint.predecessor = 0;
    joint.successor = 1;
    joint.X_predecessor = joint.X_successor = Transform::translation(Vec3(x, 0, 0));
    m.add_loop_joint(joint);
  }
  return m;
}

struct Mechanism {
  std::string name;
  std::function<Model()> build;
};

std::vector<Mechanism> mechanisms() {
  std::vector<Mechanism> out = {{"four_bar", [] { return build_four_bar(); }},
                                {"slider_crank", [] { return build_slider_crank(); }},
                                {"delta", [] { return build_delta(); }},
                                {"gripper_mimic", gripper_mimic},
                                {"geared_elbow", geared_elbow},
                                {"redundant_weld", chain_with_redundant_weld},
                                {"locked_pendulum", locked_pendulum}};
  for (LoopJointType t : {LoopJointType::Revolute, LoopJointType::Prismatic, LoopJointType::Cylindrical,
                          LoopJointType::Planar, LoopJointType::Spherical, LoopJointType::Fixed})
    out.push_back({"random_" + std::string(to_string(t)),
                   [t] { return build_random_loops(t == LoopJointType::Fixed ? 24 : 16, 2, t, 1.2, 7); }});
  return out;
}

std::vector<std::string> mechanism_names() {
  std::vector<std::string> names;
  for (const auto& m : mechanisms()) names.push_back(m.name);
  return names;
}

VecX richardson(const std::function<VecX(double)>& g, double h) {
  auto central = [&](double step) -> VecX { return (g(step) - g(-step)) / (2.0 * step); };
  return (4.0 * central(h / 2.0) - central(h)) / 3.0;
}

void expect_close(const MatX& analytic, const MatX& fd, double f_scale, const std::string& what) {
  const double err = (analytic - fd).cwiseAbs().maxCoeff();
  const double tol = kFdTol * (1.0 + fd.cwiseAbs().maxCoeff() + f_scale);
  if (verbose()) std::cout << what << ": error " << err << " = " << err / tol << " of the tolerance\n";
  EXPECT_LE(err, tol) << what << " (largest entry " << fd.cwiseAbs().maxCoeff() << ")";
}

class ConstrainedDerivatives : public ::testing::TestWithParam<std::string> {};

TEST_P(ConstrainedDerivatives, MatchFiniteDifferencesOfTheSolve) {
  Model model;
  for (const auto& m : mechanisms())
    if (m.name == GetParam()) model = m.build();
  Data data(model), fd_data(model);
  const int nv = model.nv(), nc = model.num_constraints();
  Rng rng(401);
  const VecX q_closed = assemble(model, data, integrate(model, neutral(model), random_vector(nv, rng, 0.2)));
  for (const bool off_manifold : {false, true}) {
    // Off the manifold, phi != 0 enters through the Baumgarte term beta^2 phi.
    const VecX q = off_manifold ? integrate(model, q_closed, random_vector(nv, rng, 0.02)) : q_closed;
    const VecX v = random_vector(nv, rng), tau = random_vector(nv, rng);
    std::vector<ConstrainedMethod> methods = {ConstrainedMethod::Kkt, ConstrainedMethod::RangeSpace,
                                              ConstrainedMethod::NullSpace};
    // The divide-and-conquer solves on two linkages and the geared elbow, assembled. Not on the
    // Delta: there the divide-and-conquer qdd is off the KKT solve's by up to 5e-5 (dca) and 1e-6
    // (dca_accurate) of |qdd| = 92, varying irregularly with q, which finite differences with h =
    // 1e-4 turn into O(1) (dca) and 0.03 (dca_accurate) errors of their own.
    for (const char* name : {"four_bar", "slider_crank", "geared_elbow"})
      if (GetParam() == name && !off_manifold)
        methods.insert(methods.end(), {ConstrainedMethod::Dca, ConstrainedMethod::DcaAccurate});
    for (ConstrainedMethod method : methods) {
      ConstrainedOptions opt;
      opt.method = method;
      if (off_manifold) opt.baumgarte_alpha = 3.0, opt.baumgarte_beta = 5.0;
      constrained_forward_dynamics_derivatives(model, data, q, v, tau, opt);
      const Data::LoopResults d = data.loops;
      int rank_changes = 0;  // d lambda of the minimum-norm lambda: at constant rank only
      auto solve = [&](const VecX& qq, const VecX& vv, const VecX& tt) -> VecX {
        VecX out(nv + nc);
        out.head(nv) = constrained_forward_dynamics(model, fd_data, qq, vv, tt, opt);
        out.tail(nc) = fd_data.loops.lambda;
        rank_changes += fd_data.loops.rank != d.rank;
        return out;
      };
      MatX fd_q(nv + nc, nv), fd_v(nv + nc, nv), fd_t(nv + nc, nv);
      for (int k = 0; k < nv; ++k) {
        const VecX e = VecX::Unit(nv, k);
        fd_q.col(k) = richardson([&](double t) { return solve(integrate(model, q, e, t), v, tau); }, kFdStep);
        fd_v.col(k) = richardson([&](double t) { return solve(q, v + t * e, tau); }, kFdStep);
        fd_t.col(k) = richardson([&](double t) { return solve(q, v, tau + t * e); }, kFdStep);
      }
      const VecX x = solve(q, v, tau);
      const std::string at = GetParam() + " " + std::string(to_string(method)) +
                             (off_manifold ? " off the manifold, Baumgarte" : " assembled") + " (rank " +
                             std::to_string(d.rank) + " of " + std::to_string(nc) + ")";
      const double qdd_scale = x.head(nv).cwiseAbs().maxCoeff();
      expect_close(d.dqdd_dq, fd_q.topRows(nv), qdd_scale, at + " d qdd / d q");
      expect_close(d.dqdd_dv, fd_v.topRows(nv), qdd_scale, at + " d qdd / d v");
      expect_close(d.dqdd_dtau, fd_t.topRows(nv), qdd_scale, at + " d qdd / d tau");
      EXPECT_EQ(rank_changes, 0) << at << ": the rank of L changed over the finite-difference steps";
      if (nc == 0) continue;
      ASSERT_EQ(d.dlambda_dq.rows(), nc) << at;
      const double lambda_scale = x.tail(nc).cwiseAbs().maxCoeff();
      expect_close(d.dlambda_dq, fd_q.bottomRows(nc), lambda_scale, at + " d lambda / d q");
      expect_close(d.dlambda_dv, fd_v.bottomRows(nc), lambda_scale, at + " d lambda / d v");
      expect_close(d.dlambda_dtau, fd_t.bottomRows(nc), lambda_scale, at + " d lambda / d tau");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, ConstrainedDerivatives, ::testing::ValuesIn(mechanism_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Rank 0 (a weld across a fixed tree joint: every row of L is zero): the tree's derivatives, and
// d lambda = 0 (lambda = 0 is the minimum-norm multiplier of six redundant rows, for every state).
TEST(ConstrainedDerivativesRankZero, WeldAcrossAFixedJointIsTheTree) {
  const Model m = chain_with_redundant_weld();
  Data data(m), tree_data(m);
  Rng rng(403);
  const VecX q = random_vector(3, rng), v = random_vector(3, rng), tau = random_vector(3, rng);
  constrained_forward_dynamics_derivatives(m, data, q, v, tau);
  EXPECT_EQ(data.loops.rank, 0);
  aba_derivatives(m, tree_data, q, v, tau);
  EXPECT_LE((data.loops.dqdd_dq - tree_data.dqdd_dq).cwiseAbs().maxCoeff(),
            1e-10 * (1.0 + tree_data.dqdd_dq.cwiseAbs().maxCoeff()));
  EXPECT_LE((data.loops.dqdd_dtau - tree_data.Minv).cwiseAbs().maxCoeff(),
            1e-10 * (1.0 + tree_data.Minv.cwiseAbs().maxCoeff()));
  for (const MatX* dl : {&data.loops.dlambda_dq, &data.loops.dlambda_dv, &data.loops.dlambda_dtau}) {
    EXPECT_EQ(dl->rows(), m.num_constraints());
    EXPECT_EQ(dl->cols(), 3);
    EXPECT_EQ(dl->cwiseAbs().maxCoeff(), 0.0);
  }
}

// The locked pendulum's redundancy: lambda (minimum norm) lies in range(L) for every state, so
// d lambda / d v and d lambda / d tau do too (L depends on q alone); d lambda / d q does not,
// because range(L) turns with q: its component in null(L^T) is the (I - Pi) dL nu term, and it
// is not small (else the finite-difference test above would not test that term). The projector
// onto range(L) comes from a complete orthogonal decomposition of L, not the solver's QR.
TEST(ConstrainedDerivativesRedundant, MinimumNormLambdaLeavesRangeOfLOnlyWithQ) {
  const Model m = locked_pendulum();
  Data data(m);
  Rng rng(404);
  const int nv = m.nv(), nc = m.num_constraints();
  const VecX q = assemble(m, data, integrate(m, neutral(m), random_vector(nv, rng, 0.2)));
  const VecX v = random_vector(nv, rng), tau = random_vector(nv, rng);
  for (ConstrainedMethod method :
       {ConstrainedMethod::Kkt, ConstrainedMethod::RangeSpace, ConstrainedMethod::NullSpace}) {
    ConstrainedOptions opt;
    opt.method = method;
    constrained_forward_dynamics_derivatives(m, data, q, v, tau, opt);
    ASSERT_EQ(data.loops.rank, 1);
    ASSERT_EQ(nc, 8);
    const MatX L = data.loops.L;
    Eigen::CompleteOrthogonalDecomposition<MatX> cod(L);
    cod.setThreshold(1e-10);
    ASSERT_EQ(cod.rank(), 1);
    const MatX off_range = MatX::Identity(nc, nc) - L * cod.pseudoInverse();  // I - projector onto range(L)
    const double scale = 1.0 + data.loops.lambda.cwiseAbs().maxCoeff();
    EXPECT_LE((off_range * data.loops.lambda).cwiseAbs().maxCoeff(), 1e-12 * scale);
    const double dq_scale = 1.0 + data.loops.dlambda_dq.cwiseAbs().maxCoeff();
    EXPECT_LE((off_range * data.loops.dlambda_dv).cwiseAbs().maxCoeff(), 1e-10 * dq_scale) << to_string(method);
    EXPECT_LE((off_range * data.loops.dlambda_dtau).cwiseAbs().maxCoeff(), 1e-10 * dq_scale) << to_string(method);
    const double null_part = (off_range * data.loops.dlambda_dq).cwiseAbs().maxCoeff();
    if (verbose())
      std::cout << to_string(method) << ": |(I - Pi) d lambda / d q| = " << null_part << " of " << dq_scale << "\n";
    EXPECT_GE(null_part, 0.05 * dq_scale) << to_string(method);
  }
}

/// `base` with its loop joints actuated (the same tree and loops).
Model with_actuated_loops(const Model& base) {
  Model m(base.body_name(0));
  m.set_gravity(base.gravity());
  for (int i = 1; i < base.nbodies(); ++i)
    m.add_body(base.parent(i), base.joint(i), base.X_tree(i), base.inertia(i), base.body_name(i), base.joint_name(i));
  for (LoopJoint lj : base.loop_joints()) {
    lj.actuated = true;
    m.add_loop_joint(lj);
  }
  return m;
}

// Actuated loop joints: the actuator forces tau_a(q) = L_a(q)^T u move with the mechanism.
TEST(ConstrainedDerivativesActuated, ActuatedLoopJoints) {
  for (const Model& model : {with_actuated_loops(build_four_bar()),
                             with_actuated_loops(build_random_loops(16, 2, LoopJointType::Cylindrical, 1.2, 7))}) {
    Data data(model), fd_data(model);
    Rng rng(402);
    const int nv = model.nv();
    const VecX q = assemble(model, data, integrate(model, neutral(model), random_vector(nv, rng, 0.1)));
    const VecX v = random_vector(nv, rng), tau = random_vector(nv, rng);
    ConstrainedOptions opt;
    opt.loop_joint_forces = random_vector(model.num_loop_actuators(), rng, 2.0);
    constrained_forward_dynamics_derivatives(model, data, q, v, tau, opt);
    MatX fd_q(nv, nv);
    for (int k = 0; k < nv; ++k)
      fd_q.col(k) = richardson(
          [&](double t) -> VecX {
            return constrained_forward_dynamics(model, fd_data, integrate(model, q, VecX::Unit(nv, k), t), v, tau, opt);
          },
          kFdStep);
    expect_close(data.loops.dqdd_dq, fd_q, data.qdd.cwiseAbs().maxCoeff(),
                 model.name() + " actuated loops d qdd / d q");
  }
}

}  // namespace
