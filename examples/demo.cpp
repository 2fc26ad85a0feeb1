// plucker demo: load the project's example arm, print its summary, evaluate the core
// dynamics at one state, then simulate passive motion from rest under gravity and write
// the trajectory (CSV) for examples/plot_demo.py.
//
//   demo [model.urdf] [output_dir]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "plucker/io/urdf.hpp"
#include "plucker/plucker.hpp"

using namespace plucker;

namespace {

struct State {
  VecX q, v;
};

// One classical Runge-Kutta step on (q, v), with q advanced on the configuration manifold.
State rk4_step(const Model& model, Data& data, const State& s, const VecX& tau, double dt) {
  auto accel = [&](const VecX& q, const VecX& v) -> VecX { return aba(model, data, q, v, tau); };
  const VecX k1v = s.v, k1a = accel(s.q, s.v);
  const VecX q2 = integrate(model, s.q, k1v, dt / 2), v2 = s.v + dt / 2 * k1a;
  const VecX k2v = v2, k2a = accel(q2, v2);
  const VecX q3 = integrate(model, s.q, k2v, dt / 2), v3 = s.v + dt / 2 * k2a;
  const VecX k3v = v3, k3a = accel(q3, v3);
  const VecX q4 = integrate(model, s.q, k3v, dt), v4 = s.v + dt * k3a;
  const VecX k4v = v4, k4a = accel(q4, v4);
  return {integrate(model, s.q, (k1v + 2 * k2v + 2 * k3v + k4v) / 6, dt),
          s.v + dt / 6 * (k1a + 2 * k2a + 2 * k3a + k4a)};
}

// Semi-implicit (symplectic) Euler, for comparison of energy behaviour.
State euler_step(const Model& model, Data& data, const State& s, const VecX& tau, double dt) {
  const VecX v = s.v + dt * aba(model, data, s.q, s.v, tau);
  return {integrate(model, s.q, v, dt), v};
}

double energy(const Model& model, Data& data, const State& s) {
  return kinetic_energy(model, data, s.q, s.v) + potential_energy(model, data, s.q);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "examples/models/plucker_arm.urdf";
  const std::filesystem::path out = argc > 2 ? argv[2] : "build/demo";
  std::filesystem::create_directories(out);

  const Model model = load_urdf(path);
  Data data(model);
  std::cout << summary(model) << "\n";

  // ---- the core dynamics at one state ----
  std::mt19937_64 rng(7);
  const VecX q = random_configuration(model, rng);
  const VecX v = VecX::LinSpaced(model.nv(), 0.5, -0.5);
  const VecX a = VecX::LinSpaced(model.nv(), -1.0, 1.0);
  const Eigen::IOFormat fmt(6, 0, ", ", "\n", "  [", "]");
  std::cout << "State: q = " << q.transpose().format(fmt) << "\n       v = " << v.transpose().format(fmt) << "\n\n";
  const MatX M = crba(model, data, q);
  std::cout << "Joint-space inertia M(q) (CRBA):\n" << M.format(fmt) << "\n\n";
  const VecX C = nonlinear_effects(model, data, q, v);
  std::cout << "Bias forces C(q, v) (RNEA with qdd = 0):\n" << C.transpose().format(fmt) << "\n";
  const VecX tau = rnea(model, data, q, v, a);
  std::cout << "Inverse dynamics tau = ID(q, v, a) for a = " << a.transpose().format(fmt) << ":\n"
            << tau.transpose().format(fmt) << "\n";
  const VecX qdd = aba(model, data, q, v, tau);
  std::cout << "Forward dynamics FD(q, v, tau) by the ABA:\n" << qdd.transpose().format(fmt) << "\n";
  std::cout << "  |FD(ID(a)) - a| = " << (qdd - a).norm()
            << ",  |ABA - CRBA/Cholesky| = " << (forward_dynamics_crba(model, data, q, v, tau) - qdd).norm() << "\n";
  const int tool = model.frame_index("tool0");
  forward_kinematics(model, data, q);
  std::cout << "Tool frame 'tool0' position in world: "
            << frame_pose(model, data, tool).topRightCorner<3, 1>().transpose().format(fmt) << "\n\n";

  // ---- passive motion from rest under gravity ----
  const double dt = 1e-3, duration = 5.0;
  const int steps = static_cast<int>(duration / dt);
  VecX q0 = neutral(model);
  q0[model.idx_q(model.joint_index("shoulder_lift"))] = -0.4;
  q0[model.idx_q(model.joint_index("elbow"))] = 0.8;
  q0[model.idx_q(model.joint_index("wrist_1"))] = 0.3;
  const VecX zero = VecX::Zero(model.nv());
  State rk{q0, zero}, eu{q0, zero};
  const double E0 = energy(model, data, rk);
  std::ofstream csv(out / "trajectory.csv");
  csv << std::setprecision(12) << "t";
  for (const std::string& name : model.movable_joint_names()) csv << ",q_" << name;
  csv << ",kinetic,potential,total_rk4,total_symplectic_euler\n";
  double max_drift_rk = 0.0, max_drift_eu = 0.0;
  for (int k = 0; k <= steps; ++k) {
    const double T = kinetic_energy(model, data, rk.q, rk.v), V = potential_energy(model, data, rk.q);
    const double Eeu = energy(model, data, eu);
    max_drift_rk = std::max(max_drift_rk, std::abs(T + V - E0));
    max_drift_eu = std::max(max_drift_eu, std::abs(Eeu - E0));
    csv << k * dt;
    for (int i = 0; i < model.nq(); ++i) csv << "," << rk.q[i];
    csv << "," << T << "," << V << "," << T + V << "," << Eeu << "\n";
    if (k < steps) {
      rk = rk4_step(model, data, rk, zero, dt);
      eu = euler_step(model, data, eu, zero, dt);
    }
  }
  std::cout << "Simulated " << duration << " s of passive motion from rest (dt = " << dt << " s, " << steps
            << " steps).\n"
            << "  initial total energy " << E0 << " J\n"
            << "  max |E(t) - E(0)|: RK4 " << max_drift_rk << " J, semi-implicit Euler " << max_drift_eu << " J\n"
            << "  trajectory written to " << (out / "trajectory.csv").string() << "\n";
  return 0;
}
