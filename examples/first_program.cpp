// The first C++ program of the documentation ("Getting started" includes this file): load a
// URDF, evaluate forward dynamics, inverse dynamics and the joint-space inertia matrix at a
// random state, and check that they agree: M(q) qdd + C(q, v) = tau, and rnea(q, v, qdd) = tau.
// The ABA, the CRBA and the RNEA are three separate recursions, so the agreement is a check.
//
//   first_program [model.urdf]      (default: examples/models/plucker_arm.urdf)
//
// Exit status 0 when both residuals are below 1e-9 (relative to |M qdd| + |C| + |tau|), else 1.
#include <cstdio>
#include <iostream>
#include <plucker/io/urdf.hpp>
#include <plucker/plucker.hpp>
#include <random>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "examples/models/plucker_arm.urdf";
  const plucker::Model model = plucker::load_urdf(path);  // fixed base (RootJoint::FreeFlyer: floating)
  plucker::Data data(model);                              // the algorithms' workspace, one per thread
  std::cout << model.name() << ": nq = " << model.nq() << ", nv = " << model.nv() << "\n";

  std::mt19937_64 rng(1);
  const Eigen::VectorXd q = plucker::random_configuration(model, rng);   // within the joint limits
  const Eigen::VectorXd v = Eigen::VectorXd::Constant(model.nv(), 0.5);  // rad/s (m/s if prismatic)
  const Eigen::VectorXd tau = Eigen::VectorXd::Zero(model.nv());         // no torque: it falls

  // The results are references into data: copy them before the next call overwrites them.
  const Eigen::VectorXd qdd = plucker::aba(model, data, q, v, tau);         // forward dynamics, O(N)
  const Eigen::MatrixXd M = plucker::crba(model, data, q);                  // joint-space inertia
  const Eigen::VectorXd C = plucker::nonlinear_effects(model, data, q, v);  // Coriolis + gravity
  const Eigen::VectorXd tau_id = plucker::rnea(model, data, q, v, qdd);     // inverse dynamics

  const double scale = (M * qdd).norm() + C.norm() + tau.norm();
  const double r_crba = (M * qdd + C - tau).norm() / scale;
  const double r_rnea = (tau_id - tau).norm() / scale;
  std::cout << "qdd = " << qdd.transpose() << "\n";
  std::printf("relative residual |M qdd + C - tau|     = %.3g\n", r_crba);
  std::printf("relative residual |rnea(q, v, qdd) - tau| = %.3g\n", r_rnea);
  return r_crba < 1e-9 && r_rnea < 1e-9 ? 0 : 1;
}
