// The three reference frames of the C++ API (plucker/spatial/frames.hpp), dJ/dt, the centroidal
// momentum, and SO(3) / SE(3) (plucker/spatial/lie.hpp), each against a computation written out
// here: the change of coordinates of a world force, finite differences, the momentum balance
// of a floating robot, Rodrigues' formula. (The Python tests, test_frames.py, cover the same
// through the bindings, with frames.)
#include <gtest/gtest.h>

#include <cmath>

#include "dynamics_test_support.hpp"
#include "plucker/model/builders.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

/// A world-aligned force (about the body origin p) as a world force (about the world origin).
Force to_world(const Force& f, const Vec3& p) { return Force(f.angular + p.cross(f.linear), f.linear); }

TEST(Frames, WorldAlignedForcesAreWorldForcesAboutTheBodyOrigin) {
  const Model model = build_humanoid(5, true);
  Data data(model);
  Rng rng(11);
  const VecX q = random_configuration(model, rng);
  const VecX v = random_vector(model.nv(), rng), a = random_vector(model.nv(), rng);
  std::vector<Force> lwa(static_cast<std::size_t>(model.nbodies())), world = lwa;
  forward_kinematics(model, data, q);
  for (int i = 1; i < model.nbodies(); ++i) {
    lwa[i] = random_force(rng);
    world[i] = to_world(lwa[i], data.X_base[i].r);
  }
  const VecX tau = rnea(model, data, q, v, a, lwa, ReferenceFrame::LocalWorldAligned);
  const VecX expected = rnea(model, data, q, v, a, world, ReferenceFrame::World);
  EXPECT_LE((tau - expected).cwiseAbs().maxCoeff(), 1e-10 * (1.0 + expected.cwiseAbs().maxCoeff()));
  const VecX qdd = aba(model, data, q, v, tau, lwa, ReferenceFrame::LocalWorldAligned);
  EXPECT_LE((qdd - a).cwiseAbs().maxCoeff(), 1e-9 * (1.0 + a.cwiseAbs().maxCoeff()));
}

TEST(Frames, JacobianTimeVariationMatchesFiniteDifferences) {
  const Model model = build_humanoid(2, true);
  Data data(model);
  Rng rng(12);
  const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng);
  const Transform tool = Transform::from_rpy_xyz(Vec3(0.3, -0.2, 0.5), Vec3(0.07, -0.03, 0.11));
  const int body = model.nbodies() - 1;
  const double h = 1e-6;
  for (ReferenceFrame rf : {ReferenceFrame::World, ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
    const Matrix6X dJ = jacobian_time_variation(model, data, q, v, body, rf, tool);
    const Matrix6X Jp = body_jacobian(model, data, integrate(model, q, v, h), body, rf, tool);
    const Matrix6X Jm = body_jacobian(model, data, integrate(model, q, v, -h), body, rf, tool);
    const Matrix6X fd = (Jp - Jm) / (2.0 * h);
    EXPECT_LE((dJ - fd).cwiseAbs().maxCoeff(), 1e-7 * (1.0 + dJ.cwiseAbs().maxCoeff())) << to_string(rf);
    const Vec6 dJv = dJ * v;
    EXPECT_LE((dJv - jacobian_dot_times_v(model, data, q, v, body, rf, tool).vector()).cwiseAbs().maxCoeff(), 1e-12)
        << to_string(rf);
  }
}

TEST(Frames, CentroidalMomentumBalanceOfAFloatingRobot) {
  // d h_G / dt = A_G qdd + dA_G/dt v = [0; m g] for any joint torques (internal forces).
  const Model model = build_quadruped(4, true);
  Data data(model);
  Rng rng(13);
  const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng);
  VecX tau = random_vector(model.nv(), rng);
  tau.head<6>().setZero();
  const VecX qdd = aba(model, data, q, v, tau);
  const CentroidalMomentum& c = centroidal_momentum_time_variation(model, data, q, v);
  const Vec6 hdot = c.A * qdd + c.dA_v.vector();
  Vec6 expected;
  expected << Vec3::Zero(), c.mass * model.gravity();
  EXPECT_LE((hdot - expected).cwiseAbs().maxCoeff(), 1e-9 * c.mass);
  EXPECT_LE((c.A.bottomRows<3>() - c.mass * center_of_mass_jacobian(model, data, q)).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(Lie, ExpLogAndRodrigues) {
  Rng rng(14);
  for (double scale : {1e-10, 1e-4, 0.7, 1.0, 2.5, 3.1}) {
    Vec3 w = random_vector(3, rng);
    w *= scale / w.norm();
    const double t = w.norm();
    const Mat3 W = skew(w);
    const Mat3 rodrigues = Mat3::Identity() + std::sin(t) / t * W + (1.0 - std::cos(t)) / (t * t) * W * W;
    EXPECT_LE((so3_exp(w) - rodrigues).cwiseAbs().maxCoeff(), 1e-14) << scale;
    EXPECT_LE((so3_log(so3_exp(w)) - w).cwiseAbs().maxCoeff(), 1e-14) << scale;
    Vec6 xi;
    xi << w, random_vector(3, rng);
    EXPECT_LE((se3_log(se3_exp(xi)) - xi).cwiseAbs().maxCoeff(), 1e-13) << scale;
    // J_l^-1 grows as 1 / (pi - t) towards pi (1 / sin t): rounding ~ 1e-16 x 25 at t = 3.1.
    EXPECT_LE((so3_left_jacobian(w) * so3_left_jacobian_inverse(w) - Mat3::Identity()).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LE((se3_right_jacobian(xi) * se3_right_jacobian_inverse(xi) - Mat6::Identity()).cwiseAbs().maxCoeff(),
              1e-12);
  }
}

TEST(Lie, Se3RightJacobianMatchesFiniteDifferences) {
  // exp(xi + d) = exp(xi) exp(J_r(xi) d + O(d^2)): column k = log(exp(xi)^-1 exp(xi + h e_k)) / h.
  // h = 1e-4: the rounding of log near the identity, ~1e-14 / h, dominates below it (measured
  // 2.5e-10 at h = 1e-4, 7.5e-8 at 1e-6 against the 60-term series of J_r).
  Rng rng(15);
  const double h = 1e-4;
  for (double scale : {1e-3, 0.999, 1.001, 2.0}) {
    Vec6 xi = random_vector(6, rng);
    xi.head<3>() *= scale / xi.head<3>().norm();
    const Eigen::Matrix4d T_inv = se3_exp(xi).inverse();
    Mat6 fd;
    for (int k = 0; k < 6; ++k) {
      const Vec6 e = Vec6::Unit(k) * h;
      fd.col(k) = (se3_log(T_inv * se3_exp(xi + e)) - se3_log(T_inv * se3_exp(xi - e))) / (2.0 * h);
    }
    EXPECT_LE((se3_right_jacobian(xi) - fd).cwiseAbs().maxCoeff(), 1e-8 * (1.0 + xi.cwiseAbs().maxCoeff())) << scale;
  }
}

}  // namespace
