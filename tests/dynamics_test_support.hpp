// Shared helpers of the dynamics tests (test_dynamics_identities.cpp,
// test_dynamics_closed_form.cpp, test_no_allocation.cpp): test models, random states,
// and the numbers the tolerances are scaled by. Not a test file itself (the CMake glob
// only picks up tests/test_*.cpp).
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>

#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"

namespace plucker::test {

using Rng = std::mt19937_64;
constexpr double kEps = std::numeric_limits<double>::epsilon();  // 2.2e-16

/// Uniform in [-scale, scale]^n.
inline VecX random_vector(int n, Rng& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  VecX x(n);
  for (int k = 0; k < n; ++k) x[k] = u(rng);
  return x;
}

inline Force random_force(Rng& rng, double scale = 1.0) {
  const VecX f = random_vector(6, rng, scale);
  return Force(Vec6(f));
}

/// Path of a model of the shared model zoo, "" when the zoo is absent.
inline std::string shared_model_path(const std::string& name) {
#ifdef PLUCKER_SHARED_DIR
  const std::string path = std::string(PLUCKER_SHARED_DIR) + "/models/" + name + ".urdf";
  if (std::filesystem::exists(path)) return path;
#endif
  (void)name;
  return "";
}

/// Loads a zoo model with its warnings swallowed (the URDF tests check those).
inline Model load_shared_model(const std::string& path, RootJoint root) {
  UrdfOptions options;
  options.root = root;
  options.on_warning = [](const std::string&) {};
  return load_urdf(path, options);
}

/// A 3-link chain with a tip welded to its last link by a fixed tree joint and again by a fixed
/// loop joint: every row of L is zero (rank 0), so the constrained dynamics are the tree's.
inline Model chain_with_redundant_weld() {
  Model m = build_chain(3);
  const RigidBodyInertia I = RigidBodyInertia::from_mass_com_inertia(0.5, Vec3(0.1, 0, 0), Mat3::Identity() * 1e-3);
  const int tip = m.add_body(3, JointFixed{}, Transform::translation(Vec3(0.2, 0, 0)), I, "tip", "tip_fixed");
  LoopJoint weld;
  weld.name = "weld";
  weld.type = LoopJointType::Fixed;
  weld.predecessor = 3;
  weld.successor = tip;
  weld.X_predecessor = Transform::translation(Vec3(0.2, 0, 0));
  m.add_loop_joint(weld);
  return m;
}

/// A two-link arm whose elbow is geared to its shoulder: the mimic relation
/// q_elbow = 2 q_shoulder + 0.1.
inline Model geared_elbow() {
  Model m("geared_elbow");
  const RigidBodyInertia I =
      RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0.25, 0, 0), Vec3(0.01, 0.02, 0.02).asDiagonal());
  m.add_body(0, make_revolute(Vec3::UnitY()), Transform(), I, "upper", "shoulder");
  m.add_body(1, make_revolute(Vec3::UnitY()), Transform::translation(Vec3(0.5, 0, 0)), I, "fore", "elbow");
  m.add_mimic({2, 1, 2.0, 0.1});
  return m;
}

/// Eigenvalue extremes of a symmetric matrix (for cond(M) = lambda_max / lambda_min).
struct Spectrum {
  double min = 0.0, max = 0.0;
  double cond() const { return max / min; }
};
/// Defined once, in test_dynamics_identities.cpp: instantiating Eigen's
/// SelfAdjointEigenSolver costs ~8 s of compile time per translation unit.
Spectrum spectrum(const MatX& M);

/// Forward-error tolerance of a solve M x = b. A backward-stable solve has forward error
/// <= c eps cond(M) (|x| + |b| / |M|) (Higham, Accuracy and Stability of Numerical
/// Algorithms, ch. 7), c growing slowly with the size. kSolveTol = 1e-12 is c ~ 4.5e3; over
/// every builder and zoo model the observed c is below 3 (ABA vs CRBA + Cholesky; below 0.2
/// for ABA after RNEA), so the margin is > 1000x while any wrong term (an O(1) relative
/// error) is still caught whenever cond(M) < 1e11.
constexpr double kSolveTol = 1e-12;
inline double solve_tol(const Spectrum& sp, double x_norm, double b_norm) {
  return kSolveTol * sp.cond() * (x_norm + b_norm / sp.max);
}

/// Movable joints (bodies) whose whole subtree carries no mass and no inertia: their
/// column of M is zero, so forward dynamics is undefined there.
inline std::vector<int> massless_subtree_joints(const Model& model) {
  std::vector<int> out;
  for (int i = 1; i < model.nbodies(); ++i) {
    if (model.joint_nv(i) == 0) continue;
    double total = 0.0;
    for (int k : model.subtree(i)) total += model.inertia(k).matrix().cwiseAbs().sum();
    if (total == 0.0) out.push_back(i);
  }
  return out;
}

/// Joint (body) index owning configuration coordinate k.
inline int joint_of_q(const Model& model, int k) {
  for (int i = 1; i < model.nbodies(); ++i)
    if (k >= model.idx_q(i) && k < model.idx_q(i) + model.joint_nq(i)) return i;
  return -1;
}

/// PLUCKER_TEST_VERBOSE=1 prints the observed error / tolerance ratios (for reports).
inline bool verbose() {
  static const bool v = std::getenv("PLUCKER_TEST_VERBOSE") != nullptr;
  return v;
}

/// Largest observed err/tol ratio per check, printed at exit in verbose mode.
struct RatioLog {
  explicit RatioLog(std::string n) : name(std::move(n)) {}
  RatioLog(const RatioLog&) = delete;
  RatioLog& operator=(const RatioLog&) = delete;
  std::string name;
  double worst = 0.0;
  std::string where;
  void add(double err, double tol, const std::string& at) {
    const double r = tol > 0.0 ? err / tol : (err > 0.0 ? INFINITY : 0.0);
    if (r > worst || where.empty()) {
      worst = r;
      where = at;
    }
  }
  ~RatioLog() {
    if (verbose() && !where.empty())
      std::cerr << "[ratio] " << name << ": worst err/tol = " << worst << " at " << where << "\n";
  }
};

}  // namespace plucker::test
