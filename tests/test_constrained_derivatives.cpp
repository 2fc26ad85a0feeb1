// Derivatives of the constrained forward dynamics (constrained_forward_dynamics_derivatives)
// against finite differences of constrained_forward_dynamics itself, on the loop mechanisms
// (four-bar, slider-crank, Delta, every loop-joint type) and mimic relations (a gripper, a
// geared elbow), with each of the three methods, with and without Baumgarte terms, at assembled
// configurations and off the constraint manifold (where phi != 0 enters through beta^2 phi).
//
// Finite differences: Richardson-extrapolated central differences (h = 1e-4, O(h^4)) along
// integrate(q, e_k t), v + e_k t and tau + e_k t. Tolerance kFdTol = 1e-7 x (1 + largest entry
// of the finite-difference matrix + largest |qdd| or |lambda|): the constrained solve loses
// digits to cond(L M^-1 L^T), and the finite differences with it; observed worst errors are
// printed with PLUCKER_TEST_VERBOSE=1. d lambda is compared only where L has full row rank
// (otherwise lambda is the minimum-norm one and its derivative is not unique).
#include <gtest/gtest.h>

#include <Eigen/QR>
#include <functional>
#include <string>
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

struct Mechanism {
  std::string name;
  std::function<Model()> build;
};

std::vector<Mechanism> mechanisms() {
  std::vector<Mechanism> out = {{"four_bar", [] { return build_four_bar(); }},
                                {"slider_crank", [] { return build_slider_crank(); }},
                                {"delta", [] { return build_delta(); }},
                                {"gripper_mimic", gripper_mimic},
                                {"geared_elbow", geared_elbow}};
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
    for (ConstrainedMethod method :
         {ConstrainedMethod::Kkt, ConstrainedMethod::RangeSpace, ConstrainedMethod::NullSpace}) {
      ConstrainedOptions opt;
      opt.method = method;
      if (off_manifold) opt.baumgarte_alpha = 3.0, opt.baumgarte_beta = 5.0;
      constrained_forward_dynamics_derivatives(model, data, q, v, tau, opt);
      const Data::LoopResults d = data.loops;
      const bool full_rank = d.rank == nc;
      auto solve = [&](const VecX& qq, const VecX& vv, const VecX& tt) -> VecX {
        VecX out(nv + nc);
        out.head(nv) = constrained_forward_dynamics(model, fd_data, qq, vv, tt, opt);
        out.tail(nc) = fd_data.loops.lambda;
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
                             (off_manifold ? " off the manifold, Baumgarte" : " assembled");
      const double qdd_scale = x.head(nv).cwiseAbs().maxCoeff();
      expect_close(d.dqdd_dq, fd_q.topRows(nv), qdd_scale, at + " d qdd / d q");
      expect_close(d.dqdd_dv, fd_v.topRows(nv), qdd_scale, at + " d qdd / d v");
      expect_close(d.dqdd_dtau, fd_t.topRows(nv), qdd_scale, at + " d qdd / d tau");
      if (!full_rank || nc == 0) continue;
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
// no d lambda (lambda = 0 is the minimum-norm multiplier of six redundant rows).
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
  EXPECT_EQ(data.loops.dlambda_dq.rows(), 0);
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
