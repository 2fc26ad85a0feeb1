// Identities between independent routes through the dynamics (paper 000 §3.1-3.3), on
// every procedural builder model and every model of the shared zoo.
//
// What each test proves is in its name and comment. Each runs kStates = 5 random states
// (random_configuration, v, a, tau uniform in [-1, 1]) from a fixed seed, so a failure is
// reproducible; the failing state is printed (MassMatrixFromBodyJacobians runs one state
// on chain1024, whose sum of 1024 Jacobian products costs ~3 s per state).
// PLUCKER_TEST_VERBOSE=1 prints the worst observed error / tolerance of each check.
//
// Tolerances (every one is "error <= factor * scale" with the scale printed on failure):
//  * Identities that involve a solve with M (aba vs rnea, aba vs CRBA + Cholesky, aba with
//    external forces): forward error <= kSolveTol * cond(M) * (|x| + |b| / lambda_max),
//    kSolveTol = 1e-12 (see dynamics_test_support.hpp for the justification), cond(M) from
//    SelfAdjointEigenSolver; plus the cond-free backward error (residual) of the ABA:
//    |rnea(q, v, aba(q, v, tau)) - tau| <= kSumTol * (|M| |qdd| + |C| + |tau|).
//  * Identities without a solve (CRBA vs RNEA columns, M from Jacobians, f_ext through J^T,
//    kinetic energy): kSumTol = 1e-12 (~4.5e3 eps) times the magnitude of the summed terms
//    (sum of absolute values), which bounds the rounding error of the sums; observed worst
//    0.04 of the tolerance (chain1024, 1024 bodies deep), < 0.005 on every other model.
//  * Same recursion, different entry point (rnea(q, v, 0) vs nonlinear_effects): kSameTol =
//    1e-13 relative; the only possible difference is floating-point contraction (FMA)
//    chosen differently in two template instantiations.
//  * Central finite differences along q(t) = integrate(q, v t), step h = kFdStep = 1e-5:
//    truncation ~ h^2 |f'''| / 6 ~ 1e-11 relative, rounding ~ eps |f| / h ~ 1e-11 relative;
//    tolerance kFdTol = 1e-6 relative (observed worst: 0.002 of it, on chain1024).
//  * Energy balance along an RK4 simulation (dt = 1e-5): see EnergyRateEqualsPower.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dynamics_test_support.hpp"

namespace plucker::test {
Spectrum spectrum(const MatX& M) {
  Eigen::SelfAdjointEigenSolver<MatX> es(M, Eigen::EigenvaluesOnly);
  return {es.eigenvalues().minCoeff(), es.eigenvalues().maxCoeff()};
}
}  // namespace plucker::test

namespace {

using namespace plucker;
using namespace plucker::test;

constexpr int kStates = 5;
constexpr double kSumTol = 1e-12;
constexpr double kSameTol = 1e-13;
constexpr double kFdStep = 1e-5;
constexpr double kFdTol = 1e-6;

// ------------------------------------------------------------------------- the models
struct ModelCase {
  std::string name;              // gtest parameter name
  std::function<Model()> build;  // procedural builders
  std::string urdf;              // zoo file stem, "" for builders
  RootJoint root = RootJoint::Fixed;
  bool singular = false;  // massless moving links: M singular, FD undefined
};

const std::vector<ModelCase>& model_cases() {
  static const std::vector<ModelCase> cases = [] {
    std::vector<ModelCase> c;
    auto builder = [&](const std::string& name, std::function<Model()> f) {
      c.push_back({name, std::move(f), "", RootJoint::Fixed, false});
    };
    builder("chain7", [] { return build_chain(7, {Vec3::UnitZ(), Vec3::UnitY()}, 1); });
    builder("chain12_general_axes", [] {
      return build_chain(12, {Vec3(1, 1, 0), Vec3(0, 1, 1), Vec3(1, -0.3, 0.5), Vec3::UnitX()}, 2);
    });
    builder("tree_chain20_skew", [] { return build_random_tree(20, 1.0, 0.4, 0.95, 3); });
    builder("tree_binary31_skew", [] { return build_random_tree(31, 2.0, 0.7, 0.9, 4); });
    builder("tree_bf1p5_planar", [] { return build_random_tree(25, 1.5, 0.0, 1.0, 5); });
    builder("humanoid_floating", [] { return build_humanoid(6, true); });
    builder("humanoid_fixed", [] { return build_humanoid(7, false); });
    builder("quadruped_floating", [] { return build_quadruped(8, true); });
    builder("quadruped_fixed", [] { return build_quadruped(9, false); });
    builder("all_joints", [] { return build_all_joints_tree(10); });
    // Zoo: arms with a fixed base; legged robots and humanoids with a free-flyer root and
    // also welded to the world.
    for (const char* arm : {"ur5", "panda", "iiwa14", "chain32", "chain1024"})
      c.push_back({arm, nullptr, arm, RootJoint::Fixed, false});
    for (const char* robot :
         {"talos_full", "simple_humanoid", "romeo", "romeo_small", "anymal", "solo12", "hyq", "icub", "pr2"}) {
      const bool singular = std::string(robot) == "romeo";  // 24 massless finger links
      c.push_back({std::string(robot) + "_free", nullptr, robot, RootJoint::FreeFlyer, singular});
      c.push_back({std::string(robot) + "_fixed", nullptr, robot, RootJoint::Fixed, singular});
    }
    return c;
  }();
  return cases;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& c : model_cases()) names.push_back(c.name);
  return names;
}

const ModelCase& find_case(const std::string& name) {
  for (const auto& c : model_cases())
    if (c.name == name) return c;
  throw std::logic_error("unknown model case " + name);
}

// Built once per process (chain1024 and talos take a moment to load).
const Model* cached_model(const ModelCase& c) {
  static std::map<std::string, std::unique_ptr<Model>> cache;
  auto it = cache.find(c.name);
  if (it != cache.end()) return it->second.get();
  std::unique_ptr<Model> m;
  if (c.build) {
    m = std::make_unique<Model>(c.build());
  } else {
    const std::string path = shared_model_path(c.urdf);
    if (!path.empty()) m = std::make_unique<Model>(load_shared_model(path, c.root));
  }
  return (cache[c.name] = std::move(m)).get();
}

struct State {
  VecX q, v, a, tau;
};

State random_state(const Model& model, Rng& rng) {
  State s;
  s.q = random_configuration(model, rng);
  s.v = random_vector(model.nv(), rng);
  s.a = random_vector(model.nv(), rng);
  s.tau = random_vector(model.nv(), rng);
  return s;
}

/// Bodies to probe one at a time: all moving ones, or 16 spread out on very large models.
std::vector<int> probe_bodies(const Model& model) {
  std::vector<int> out;
  const int n = model.nbodies() - 1;
  if (n <= 100) {
    for (int i = 1; i <= n; ++i) out.push_back(i);
  } else {
    for (int k = 0; k < 16; ++k) out.push_back(1 + static_cast<int>(static_cast<long>(k) * (n - 1) / 15));
  }
  return out;
}

/// v indices of the joints on the support path of body b (the columns J_b can fill).
std::vector<int> support_columns(const Model& model, int b) {
  std::vector<int> cols;
  for (int j : model.support(b))
    for (int k = 0; k < model.joint_nv(j); ++k) cols.push_back(model.idx_v(j) + k);
  return cols;
}

std::string at(const std::string& model, int state) { return model + " state " + std::to_string(state); }

// GTEST_SKIP must run in the test body itself (it returns from the enclosing function).
#define SKIP_IF_SINGULAR()                                                          \
  if (singular_)                                                                    \
  GTEST_SKIP() << name_                                                             \
               << " has massless moving links: forward dynamics is undefined (see " \
                  "DynamicsSingular.RomeoThrowsSingularError)"

class DynamicsIdentities : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const ModelCase& c = find_case(GetParam());
    model_ = cached_model(c);
    if (!model_) GTEST_SKIP() << "shared model " << c.urdf << ".urdf not found (PLUCKER_SHARED_DIR)";
    singular_ = c.singular;
    name_ = c.name;
  }
  const Model& model() const { return *model_; }

  const Model* model_ = nullptr;
  bool singular_ = false;
  std::string name_;
};

// The singular flag is a fact about the model, not an assumption: romeo (and only romeo)
// has joints whose whole subtree is massless.
TEST_P(DynamicsIdentities, SingularFlagMatchesModel) {
  const auto massless = massless_subtree_joints(model());
  EXPECT_EQ(!massless.empty(), singular_) << name_ << ": " << massless.size() << " joints move massless subtrees";
}

// Forward dynamics inverts inverse dynamics: aba(q, v, rnea(q, v, a)) == a (forward error,
// scaled by cond(M)), and rnea(q, v, aba(q, v, tau)) == tau (backward error: the residual of
// the ABA's solution, independent of cond(M)).
TEST_P(DynamicsIdentities, AbaInvertsRnea) {
  SKIP_IF_SINGULAR();
  RatioLog log{name_ + " aba(rnea(a)) == a"}, log_res{name_ + " rnea(aba(tau)) == tau"};
  Data data(model());
  Rng rng(101);
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    const VecX tau = rnea(model(), data, x.q, x.v, x.a);
    const VecX C = nonlinear_effects(model(), data, x.q, x.v);
    const MatX M = crba(model(), data, x.q);
    const Spectrum sp = spectrum(M);
    const VecX qdd = aba(model(), data, x.q, x.v, tau);
    ASSERT_TRUE(qdd.allFinite()) << at(name_, s);
    const double err = (qdd - x.a).norm();
    const double tol = solve_tol(sp, x.a.norm(), tau.norm() + C.norm());
    log.add(err, tol, at(name_, s));
    EXPECT_LE(err, tol) << at(name_, s) << ": cond(M) = " << sp.cond() << ", |a| = " << x.a.norm();

    const VecX qdd2 = aba(model(), data, x.q, x.v, x.tau);
    const VecX residual = rnea(model(), data, x.q, x.v, qdd2) - x.tau;
    const double res_tol =
        kSumTol * ((M.cwiseAbs() * qdd2.cwiseAbs()).maxCoeff() + C.cwiseAbs().maxCoeff() + x.tau.cwiseAbs().maxCoeff());
    log_res.add(residual.cwiseAbs().maxCoeff(), res_tol, at(name_, s));
    EXPECT_LE(residual.cwiseAbs().maxCoeff(), res_tol) << at(name_, s) << ": ABA residual";
  }
}

// Paper 000 §3.2 method 1: column i of M is D(q, 0, e_i) - D(q, 0, 0), D = rnea. The CRBA
// (composite inertias, Eqs. 9-10) and the RNEA share no code beyond the joint kernels.
TEST_P(DynamicsIdentities, CrbaEqualsRneaColumns) {
  RatioLog log{name_ + " crba == rnea columns"};
  Data data(model());
  Rng rng(102);
  const int nv = model().nv();
  const VecX zero = VecX::Zero(nv);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const VecX g = rnea(model(), data, q, zero, zero);
    MatX M_id(nv, nv);
    VecX e = VecX::Zero(nv);
    for (int i = 0; i < nv; ++i) {
      e[i] = 1.0;
      M_id.col(i) = rnea(model(), data, q, zero, e) - g;
      e[i] = 0.0;
    }
    const MatX& M = crba(model(), data, q);
    const double err = (M - M_id).cwiseAbs().maxCoeff();
    // Each column is a difference of two RNEA results of size |g| + |M|.
    const double tol = kSumTol * (M.cwiseAbs().maxCoeff() + g.cwiseAbs().maxCoeff());
    log.add(err, tol, at(name_, s));
    EXPECT_LE(err, tol) << at(name_, s);
  }
}

// M is symmetric (exactly: the lower triangle is mirrored), positive definite (except on a
// model with massless moving subtrees, where exactly those rows/columns vanish and the
// rest is positive definite), and Triangle::Upper computes the same upper triangle.
TEST_P(DynamicsIdentities, CrbaSymmetricPositiveDefiniteUpperTriangle) {
  Data data(model());
  Rng rng(103);
  const int nv = model().nv();
  const auto massless = massless_subtree_joints(model());
  std::vector<bool> zero_col(nv, false);
  for (int j : massless)
    for (int k = 0; k < model().joint_nv(j); ++k) zero_col[model().idx_v(j) + k] = true;
  std::vector<int> keep;
  for (int k = 0; k < nv; ++k)
    if (!zero_col[k]) keep.push_back(k);

  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const MatX M = crba(model(), data, q, Triangle::Full);
    EXPECT_TRUE(M == M.transpose()) << at(name_, s) << ": crba(Full) is not exactly symmetric";

    const MatX M_upper = crba(model(), data, q, Triangle::Upper);
    const MatX a = M.triangularView<Eigen::Upper>(), b = M_upper.triangularView<Eigen::Upper>();
    EXPECT_TRUE(a == b) << at(name_, s) << ": Triangle::Upper differs from Full in the upper triangle by "
                        << (a - b).cwiseAbs().maxCoeff();

    for (int k = 0; k < nv; ++k) {
      if (zero_col[k]) {
        EXPECT_EQ(M.col(k).cwiseAbs().maxCoeff(), 0.0) << at(name_, s) << " column " << k;
      }
    }
    const MatX M_kept = M(keep, keep);
    Eigen::LLT<MatX> llt(M_kept);
    EXPECT_EQ(llt.info(), Eigen::Success) << at(name_, s) << ": M (massless rows removed) not positive definite";
    const Spectrum sp = spectrum(M_kept);
    EXPECT_GT(sp.min, 0.0) << at(name_, s) << ": lambda_min = " << sp.min << ", lambda_max = " << sp.max;
  }
}

// The RNEA special cases: rnea(q, v, 0) == nonlinear_effects(q, v), rnea(q, 0, 0) ==
// gravity_torques(q); C(q, v) - g(q) is a quadratic form in v; and g = dV/dq, checked as
// d/dt V(integrate(q, v t)) == g . v by central differences.
TEST_P(DynamicsIdentities, RneaSpecialCases) {
  RatioLog log_fd{name_ + " dV/dt == g.v"};
  Data data(model());
  Rng rng(104);
  const int nv = model().nv();
  const VecX zero = VecX::Zero(nv);
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    const VecX c1 = rnea(model(), data, x.q, x.v, zero);
    const VecX c2 = nonlinear_effects(model(), data, x.q, x.v);
    EXPECT_LE((c1 - c2).cwiseAbs().maxCoeff(), kSameTol * c1.cwiseAbs().maxCoeff()) << at(name_, s);
    const VecX g1 = rnea(model(), data, x.q, zero, zero);
    const VecX g2 = gravity_torques(model(), data, x.q);
    EXPECT_LE((g1 - g2).cwiseAbs().maxCoeff(), kSameTol * g1.cwiseAbs().maxCoeff()) << at(name_, s);

    // Quadratic in v: C(q, 2v) - g = 4 (C(q, v) - g), up to the rounding of |C|.
    const VecX v2 = 2.0 * x.v;
    const VecX c_double = nonlinear_effects(model(), data, x.q, v2);
    const double err_quad = ((c_double - g1) - 4.0 * (c1 - g1)).cwiseAbs().maxCoeff();
    EXPECT_LE(err_quad,
              kSumTol * (c_double.cwiseAbs().maxCoeff() + 4.0 * c1.cwiseAbs().maxCoeff() + g1.cwiseAbs().maxCoeff()))
        << at(name_, s);

    // Gravity torques are the gradient of the potential energy.
    const VecX qp = integrate(model(), x.q, x.v, kFdStep), qm = integrate(model(), x.q, x.v, -kFdStep);
    const double dV = (potential_energy(model(), data, qp) - potential_energy(model(), data, qm)) / (2 * kFdStep);
    const double gv = g1.dot(x.v);
    const double scale = g1.cwiseAbs().dot(x.v.cwiseAbs());
    log_fd.add(std::abs(dV - gv), kFdTol * scale, at(name_, s));
    EXPECT_LE(std::abs(dV - gv), kFdTol * scale) << at(name_, s) << ": dV/dt = " << dV << ", g.v = " << gv;
  }
}

// Two forward-dynamics routes: O(N) articulated-body algorithm (Eqs. 11-14) and the CRBA
// mass matrix + RNEA bias + Cholesky solve.
TEST_P(DynamicsIdentities, AbaEqualsCrbaForwardDynamics) {
  SKIP_IF_SINGULAR();
  RatioLog log{name_ + " aba == fd_crba"};
  Data data(model());
  Rng rng(105);
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    const VecX C = nonlinear_effects(model(), data, x.q, x.v);
    const Spectrum sp = spectrum(crba(model(), data, x.q));
    const VecX qdd_aba = aba(model(), data, x.q, x.v, x.tau);
    const VecX qdd_crba = forward_dynamics_crba(model(), data, x.q, x.v, x.tau);
    const double err = (qdd_aba - qdd_crba).norm();
    const double tol = solve_tol(sp, qdd_aba.norm(), x.tau.norm() + C.norm());
    log.add(err, tol, at(name_, s));
    EXPECT_LE(err, tol) << at(name_, s) << ": cond(M) = " << sp.cond();
  }
}

// External forces enter the equations of motion as J^T f: with f_b on body b,
//   rnea(q, v, a, f) = rnea(q, v, a) - sum_b J_b^T f_b
//   aba(q, v, tau, f) = aba(q, v, tau) + M^-1 sum_b J_b^T f_b   (and the same for FD-CRBA)
// with body_jacobian(World) for world-frame forces (about the world origin) and
// body_jacobian(Local) for body-frame forces. f[0] (the base) must be ignored, so it is set
// to a nonzero force on purpose.
TEST_P(DynamicsIdentities, ExternalForcesEnterAsJacobianTranspose) {
  RatioLog log_id{name_ + " rnea f_ext"}, log_fd{name_ + " aba f_ext"};
  Data data(model());
  Rng rng(106);
  const int nb = model().nbodies(), nv = model().nv();
  const std::vector<int> loaded = probe_bodies(model());
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    const VecX tau0 = rnea(model(), data, x.q, x.v, x.a);
    const VecX qdd0 = singular_ ? VecX() : VecX(aba(model(), data, x.q, x.v, x.tau));
    const VecX C = nonlinear_effects(model(), data, x.q, x.v);
    const MatX M = crba(model(), data, x.q);
    const Spectrum sp = singular_ ? Spectrum{} : spectrum(M);
    for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local}) {
      const char* fname = frame == ReferenceFrame::World ? "World" : "Local";
      // Forces on every body (on 16 spread-out bodies of chain1024, to keep it cheap), and
      // on the base.
      std::vector<Force> f(nb);
      f[0] = random_force(rng, 5.0);
      for (int b : loaded) f[b] = random_force(rng, 5.0);
      VecX JTf = VecX::Zero(nv), JTf_abs = VecX::Zero(nv);
      for (int b : loaded) {
        const Matrix6X& J = body_jacobian(model(), data, x.q, b, frame);
        JTf.noalias() += J.transpose() * f[b].vector();
        JTf_abs.noalias() += J.cwiseAbs().transpose() * f[b].vector().cwiseAbs();
      }
      const VecX tau_f = rnea(model(), data, x.q, x.v, x.a, f, frame);
      const double err = (tau_f - (tau0 - JTf)).cwiseAbs().maxCoeff();
      const double tol = kSumTol * (tau0.cwiseAbs().maxCoeff() + JTf_abs.maxCoeff());
      log_id.add(err, tol, at(name_, s) + " " + fname);
      EXPECT_LE(err, tol) << at(name_, s) << " frame " << fname;

      if (singular_) continue;
      const VecX shift = M.llt().solve(JTf);
      const VecX qdd_f = aba(model(), data, x.q, x.v, x.tau, f, frame);
      const double err_aba = (qdd_f - (qdd0 + shift)).norm();
      const double tol_aba = solve_tol(sp, qdd_f.norm() + qdd0.norm(), x.tau.norm() + C.norm() + JTf.norm());
      log_fd.add(err_aba, tol_aba, at(name_, s) + " " + fname);
      EXPECT_LE(err_aba, tol_aba) << at(name_, s) << " frame " << fname << ": cond(M) = " << sp.cond();
      const VecX qdd_crba = forward_dynamics_crba(model(), data, x.q, x.v, x.tau, f, frame);
      EXPECT_LE((qdd_crba - qdd_f).norm(), tol_aba) << at(name_, s) << " frame " << fname << " (FD-CRBA)";
    }
  }
}

// Energy balance: along a motion under constant generalised forces tau (no other forces),
// d/dt (T + V) = v . tau. Simulated with RK4 (positions advanced by integrate, which is
// exact on the Lie-group joints), and d/dt (T + V) taken as the central difference of the
// simulated energies at steps k +- 1 against v_k . tau.
//   tau = rnea(q0, v0, a) with a random a, so the accelerations start O(1) on every model
//   (a raw random tau on a robot with 1e-6 kg links gives 1e6 rad/s^2).
//   Error budget, relative to sum_i |v_i tau_i|, with dt = 1e-5: central difference
//   dt^2/6 |E'''| ~ 1e-10 (icub, whose point-mass links make the motion stiff: ~1e-8);
//   the RK4 step (order 4 on vector joints, order 2 for the Lie-group ones, whose stages
//   ignore dexp) ~ dt^2 ~ 1e-10; rounding eps |E| / dt ~ 2e-11 |E|. Tolerance 1e-6.
//   chain1024 (a 100 m chain, cond(M) ~ 1e9) is stiff at random states: its joint jerk
//   reaches ~5e8 rad/s^3 (measured), so |E'''| ~ 1e15 and it needs dt = 1e-8 (rounding
//   then eps |E| / dt ~ 2e-3 against sum |v tau| ~ 1e7: 2e-10 relative).
TEST_P(DynamicsIdentities, EnergyRateEqualsPower) {
  SKIP_IF_SINGULAR();
  const double dt = model().nv() > 200 ? 1e-8 : 1e-5;
  constexpr double kEnergyTol = 1e-6;
  constexpr int steps = 20;
  RatioLog log{name_ + " dE/dt == v.tau"};
  Data data(model());
  Rng rng(107);
  auto energy = [&](const VecX& q, const VecX& v) {
    return kinetic_energy(model(), data, q, v) + potential_energy(model(), data, q);
  };
  for (int s = 0; s < kStates; ++s) {
    const State x0 = random_state(model(), rng);
    const VecX tau = rnea(model(), data, x0.q, x0.v, x0.a);
    auto accel = [&](const VecX& q, const VecX& v) -> VecX { return aba(model(), data, q, v, tau); };
    std::vector<VecX> qs{x0.q}, vs{x0.v};
    std::vector<double> E{energy(x0.q, x0.v)};
    for (int k = 0; k < steps; ++k) {
      const VecX& q = qs.back();
      const VecX& v = vs.back();
      const VecX k1v = v, k1a = accel(q, v);
      const VecX k2v = v + 0.5 * dt * k1a, k2a = accel(integrate(model(), q, k1v, 0.5 * dt), k2v);
      const VecX k3v = v + 0.5 * dt * k2a, k3a = accel(integrate(model(), q, k2v, 0.5 * dt), k3v);
      const VecX k4v = v + dt * k3a, k4a = accel(integrate(model(), q, k3v, dt), k4v);
      const VecX dq = (k1v + 2.0 * k2v + 2.0 * k3v + k4v) / 6.0;
      qs.push_back(integrate(model(), q, dq, dt));
      vs.push_back(v + dt / 6.0 * (k1a + 2.0 * k2a + 2.0 * k3a + k4a));
      E.push_back(energy(qs.back(), vs.back()));
    }
    for (int k : {1, steps / 2, steps - 1}) {
      const double dE = (E[k + 1] - E[k - 1]) / (2.0 * dt);
      const double power = vs[k].dot(tau);
      const double scale = vs[k].cwiseAbs().dot(tau.cwiseAbs());
      log.add(std::abs(dE - power), kEnergyTol * scale, at(name_, s) + " step " + std::to_string(k));
      EXPECT_LE(std::abs(dE - power), kEnergyTol * scale)
          << at(name_, s) << " step " << k << ": dE/dt = " << dE << ", v.tau = " << power;
    }
  }
}

// An independent route to M: M = sum_b J_b^T I_b J_b with J_b the body Jacobian in body
// coordinates and I_b the body's spatial inertia in body coordinates (kinetic energy of
// each body summed; no composite inertias, no recursion over forces).
TEST_P(DynamicsIdentities, MassMatrixFromBodyJacobians) {
  RatioLog log{name_ + " M == sum J^T I J"};
  Data data(model());
  Rng rng(108);
  const int nv = model().nv();
  const int states = model().nv() > 200 ? 1 : kStates;  // chain1024: O(n^3) per state
  for (int s = 0; s < states; ++s) {
    const VecX q = random_configuration(model(), rng);
    MatX M_J = MatX::Zero(nv, nv), M_abs = MatX::Zero(nv, nv);
    for (int b = 1; b < model().nbodies(); ++b) {
      const std::vector<int> cols = support_columns(model(), b);
      if (cols.empty()) continue;
      const Matrix6X& J = body_jacobian(model(), data, q, b, ReferenceFrame::Local);
      const Matrix6X Jb = J(Eigen::all, cols);
      const Mat6 I = model().inertia(b).matrix();
      M_J(cols, cols) += Jb.transpose() * I * Jb;
      M_abs(cols, cols) += Jb.cwiseAbs().transpose() * I.cwiseAbs() * Jb.cwiseAbs();
    }
    const MatX& M = crba(model(), data, q);
    const double err = (M - M_J).cwiseAbs().maxCoeff();
    const double tol = kSumTol * M_abs.maxCoeff();
    log.add(err, tol, at(name_, s));
    EXPECT_LE(err, tol) << at(name_, s);
  }
}

// kinetic_energy (sum of body energies 1/2 v_i . I_i v_i) == 1/2 v^T M v.
TEST_P(DynamicsIdentities, KineticEnergyIsQuadraticFormOfM) {
  RatioLog log{name_ + " T == 1/2 v'Mv"};
  Data data(model());
  Rng rng(109);
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    const MatX M = crba(model(), data, x.q);
    const double T = kinetic_energy(model(), data, x.q, x.v);
    const double vMv = 0.5 * x.v.dot(M * x.v);
    const double scale = 0.5 * x.v.cwiseAbs().dot(M.cwiseAbs() * x.v.cwiseAbs());
    log.add(std::abs(T - vMv), kSumTol * scale, at(name_, s));
    EXPECT_LE(std::abs(T - vMv), kSumTol * scale) << at(name_, s) << ": T = " << T << ", v'Mv/2 = " << vMv;
  }
}

// center_of_mass_jacobian(q) v == d/dt center_of_mass(integrate(q, v t)) at t = 0, and
// center_of_mass_jacobian's byproduct data.com == center_of_mass.
TEST_P(DynamicsIdentities, ComJacobianMatchesFiniteDifference) {
  RatioLog log{name_ + " J_com v == d com/dt"};
  Data data(model());
  Rng rng(110);
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    const Vec3 c = center_of_mass(model(), data, x.q);
    const Matrix3X J = center_of_mass_jacobian(model(), data, x.q);
    EXPECT_LE((data.com - c).norm(), kSumTol * c.norm() + kSumTol) << at(name_, s);
    const VecX qp = integrate(model(), x.q, x.v, kFdStep), qm = integrate(model(), x.q, x.v, -kFdStep);
    const Vec3 fd = (center_of_mass(model(), data, qp) - center_of_mass(model(), data, qm)) / (2 * kFdStep);
    const double err = (J * x.v - fd).norm();
    const double tol = kFdTol * J.norm() * x.v.norm();
    log.add(err, tol, at(name_, s));
    EXPECT_LE(err, tol) << at(name_, s) << ": J v = " << (J * x.v).transpose() << ", fd = " << fd.transpose();
  }
}

// Twists from finite differences of 4x4 poses T(t) = body_pose(q(t)):
//   body (Local):  T^-1 dT/dt = [w_b^ v_b; 0 0]
//   world:         dT/dt T^-1 = [w^ v_o; 0 0]  (v_o: velocity of the body point at the world origin)
struct Twists {
  Motion local, world;
};
Twists twists_from_poses(const Eigen::Matrix4d& Tm, const Eigen::Matrix4d& T0, const Eigen::Matrix4d& Tp, double h) {
  const Eigen::Matrix4d dT = (Tp - Tm) / (2 * h);
  const Mat3 R = T0.topLeftCorner<3, 3>();
  const Vec3 p = T0.topRightCorner<3, 1>();
  const Mat3 dR = dT.topLeftCorner<3, 3>();
  const Vec3 dp = dT.topRightCorner<3, 1>();
  auto vee = [](const Mat3& W) {  // axial vector of the skew part
    return Vec3(0.5 * (W(2, 1) - W(1, 2)), 0.5 * (W(0, 2) - W(2, 0)), 0.5 * (W(1, 0) - W(0, 1)));
  };
  Twists t;
  t.local = Motion(vee(R.transpose() * dR), R.transpose() * dp);
  const Vec3 w = vee(dR * R.transpose());
  t.world = Motion(w, dp - w.cross(p));
  return t;
}

// body_jacobian(World / Local) v == twist from finite differences of body poses.
TEST_P(DynamicsIdentities, BodyJacobianMatchesFiniteDifference) {
  RatioLog log{name_ + " J v == pose FD"};
  Data data(model());
  Rng rng(111);
  const std::vector<int> bodies = probe_bodies(model());
  const int nb = model().nbodies();
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    std::vector<Eigen::Matrix4d> Tm(nb), T0(nb), Tp(nb);
    auto poses = [&](const VecX& q, std::vector<Eigen::Matrix4d>& out) {
      forward_kinematics(model(), data, q);
      for (int b = 0; b < nb; ++b) out[b] = body_pose(data, b);
    };
    poses(integrate(model(), x.q, x.v, -kFdStep), Tm);
    poses(x.q, T0);
    poses(integrate(model(), x.q, x.v, kFdStep), Tp);
    for (int b : bodies) {
      const Twists fd = twists_from_poses(Tm[b], T0[b], Tp[b], kFdStep);
      for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local}) {
        const Matrix6X& J = body_jacobian(model(), data, x.q, b, frame);
        const Vec6 Jv = J * x.v;
        const Vec6 ref = (frame == ReferenceFrame::World ? fd.world : fd.local).vector();
        const double err = (Jv - ref).norm(), tol = kFdTol * J.norm() * x.v.norm();
        log.add(err, tol, at(name_, s) + " body " + model().body_name(b));
        EXPECT_LE(err, tol) << at(name_, s) << " body " << model().body_name(b)
                            << (frame == ReferenceFrame::World ? " World" : " Local") << "\n J v = " << Jv.transpose()
                            << "\n fd  = " << ref.transpose();
      }
    }
  }
}

// jacobian_dot_times_v == d/dt (J(q(t)) v) along q(t) = integrate(q, v t) (on which the
// velocity stays v, so this is exactly dJ/dt v), both frames.
TEST_P(DynamicsIdentities, JacobianDotTimesVMatchesFiniteDifference) {
  RatioLog log{name_ + " Jdot v == FD"};
  Data data(model());
  Rng rng(112);
  const std::vector<int> bodies = probe_bodies(model());
  for (int s = 0; s < kStates; ++s) {
    const State x = random_state(model(), rng);
    const VecX qp = integrate(model(), x.q, x.v, kFdStep), qm = integrate(model(), x.q, x.v, -kFdStep);
    for (int b : bodies) {
      for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local}) {
        const Vec6 Jp = body_jacobian(model(), data, qp, b, frame) * x.v;
        const Vec6 Jm = body_jacobian(model(), data, qm, b, frame) * x.v;
        const Vec6 fd = (Jp - Jm) / (2 * kFdStep);
        const Vec6 dJv = jacobian_dot_times_v(model(), data, x.q, x.v, b, frame).vector();
        // Scale: |dJ/dt v| <= |J| |v|^2 (each column turns at most as fast as |v|).
        const double J_norm = body_jacobian(model(), data, x.q, b, frame).norm();
        const double err = (dJv - fd).norm(), tol = kFdTol * J_norm * x.v.squaredNorm();
        log.add(err, tol, at(name_, s) + " body " + model().body_name(b));
        EXPECT_LE(err, tol) << at(name_, s) << " body " << model().body_name(b)
                            << (frame == ReferenceFrame::World ? " World" : " Local")
                            << "\n Jdot v = " << dJv.transpose() << "\n fd     = " << fd.transpose();
      }
    }
  }
}

// Frames (URDF links merged by fixed joints; builder frames such as soles): frame_pose is
// the body pose composed with the frame's fixed offset, and frame_transform is its inverse.
TEST_P(DynamicsIdentities, FramePosesComposeBodyPoses) {
  if (model().frames().empty()) GTEST_SKIP() << name_ << " has no frames";
  Data data(model());
  Rng rng(113);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    forward_kinematics(model(), data, q);
    for (int f = 0; f < static_cast<int>(model().frames().size()); ++f) {
      const Frame& fr = model().frames()[f];
      const Eigen::Matrix4d expected = body_pose(data, fr.body) * fr.X_body.homogeneous();
      const Eigen::Matrix4d pose = frame_pose(model(), data, f);
      const double scale = 1.0 + expected.topRightCorner<3, 1>().norm();
      EXPECT_LE((pose - expected).cwiseAbs().maxCoeff(), kSumTol * scale) << at(name_, s) << " frame " << fr.name;
      const Eigen::Matrix4d from_transform = frame_transform(model(), data, f).homogeneous();
      EXPECT_LE((pose - from_transform).cwiseAbs().maxCoeff(), kSumTol * scale) << at(name_, s) << " frame " << fr.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DynamicsIdentities, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ------------------------------------------------------------------ merged URDF links
// A URDF with two chained fixed joints (merged into body l1 as frames "tool" and "tip", a
// movable joint after them) against the same URDF with those joints made revolute and held
// at q = 0: frame poses must equal the unmerged body poses, and the merged model's
// rnea / crba must equal the unmerged model's restricted to the common joints (the merged
// inertias are the fixed links' inertias moved into l1's frame).
const char* kMergeUrdf = R"(<?xml version="1.0"?>
<robot name="merge_test">
  <link name="base"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.5"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <link name="l1">
    <inertial><origin xyz="0.05 0 0.1" rpy="0.1 0.2 0.3"/><mass value="1.5"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.025"/></inertial>
  </link>
  <joint name="f1" type="FIXED_OR_REVOLUTE_1">
    <parent link="l1"/><child link="tool"/>
    <origin xyz="0.2 -0.1 0.05" rpy="0.7 0.1 -0.4"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <link name="tool">
    <inertial><origin xyz="0.01 0.02 -0.03" rpy="-0.2 0.4 0.1"/><mass value="0.7"/>
      <inertia ixx="0.004" ixy="0.0002" ixz="-0.0001" iyy="0.005" iyz="0.0003" izz="0.006"/></inertial>
  </link>
  <joint name="f2" type="FIXED_OR_REVOLUTE_2">
    <parent link="tool"/><child link="tip"/>
    <origin xyz="0 0.03 0.15" rpy="0 0.5 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <link name="tip">
    <inertial><origin xyz="0 0 0.02"/><mass value="0.2"/>
      <inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.0003" iyz="0" izz="0.0001"/></inertial>
  </link>
  <joint name="j2" type="revolute">
    <parent link="tip"/><child link="l2"/>
    <origin xyz="0.05 0.0 0.1" rpy="-0.3 0.2 0.1"/><axis xyz="0.3 0.4 0.5"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/>
  </joint>
  <link name="l2">
    <inertial><origin xyz="0.1 0.0 0.0"/><mass value="0.9"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.004"/></inertial>
  </link>
</robot>
)";

std::string merge_urdf(bool fixed) {
  std::string s = kMergeUrdf;
  for (const char* key : {"FIXED_OR_REVOLUTE_1", "FIXED_OR_REVOLUTE_2"})
    s.replace(s.find(key), std::string(key).size(), fixed ? "fixed" : "revolute");
  return s;
}

TEST(DynamicsMergedLinks, FixedJointsMergeIntoFramesAndInertia) {
  UrdfOptions options;
  options.on_warning = [](const std::string&) {};
  const Model merged = load_urdf_string(merge_urdf(true), options, "merged");
  const Model full = load_urdf_string(merge_urdf(false), options, "full");
  ASSERT_EQ(merged.nv(), 2);
  ASSERT_EQ(full.nv(), 4);
  const int tool_f = merged.frame_index("tool"), tip_f = merged.frame_index("tip");
  const int l1 = merged.body_index("l1");
  EXPECT_EQ(merged.frames()[tool_f].body, l1);
  EXPECT_EQ(merged.frames()[tip_f].body, l1);
  // Coordinates of the common joints j1, j2 in the full model (f1, f2 held at 0).
  const int vj1 = full.idx_v(full.joint_index("j1")), vj2 = full.idx_v(full.joint_index("j2"));
  const std::vector<int> common{vj1, vj2};

  Data dm(merged), df(full);
  Rng rng(114);
  for (int s = 0; s < kStates; ++s) {
    const VecX qm = random_configuration(merged, rng), vm = random_vector(2, rng), am = random_vector(2, rng);
    VecX qf = VecX::Zero(4), vf = VecX::Zero(4), af = VecX::Zero(4);
    for (int k = 0; k < 2; ++k) {
      qf[common[k]] = qm[k];  // revolute: idx_q == idx_v
      vf[common[k]] = vm[k];
      af[common[k]] = am[k];
    }
    forward_kinematics(merged, dm, qm);
    forward_kinematics(full, df, qf);
    for (const char* link : {"tool", "tip"}) {
      const Eigen::Matrix4d frame = frame_pose(merged, dm, merged.frame_index(link));
      const Eigen::Matrix4d body = body_pose(df, full.body_index(link));
      EXPECT_LE((frame - body).cwiseAbs().maxCoeff(), kSumTol) << "state " << s << " frame " << link;
    }
    EXPECT_LE((body_pose(dm, merged.body_index("l2")) - body_pose(df, full.body_index("l2"))).cwiseAbs().maxCoeff(),
              kSumTol)
        << "state " << s;

    const VecX tau_m = rnea(merged, dm, qm, vm, am);
    const VecX tau_f = rnea(full, df, qf, vf, af);
    EXPECT_LE((tau_m - tau_f(common)).cwiseAbs().maxCoeff(), kSumTol * tau_f.cwiseAbs().maxCoeff()) << "state " << s;
    const MatX M_m = crba(merged, dm, qm);
    const MatX M_f = crba(full, df, qf);
    EXPECT_LE((M_m - M_f(common, common)).cwiseAbs().maxCoeff(), kSumTol * M_f.cwiseAbs().maxCoeff()) << "state " << s;
  }
}

// The CRBA's plane-rotation path (a joint about a body axis whose X_tree is a pure
// translation: Eq. 9 and the force transforms by the double angle) against the general
// transform path: the same tree with the same axes given as general revolute joints
// (JointRevolute, which the fast paths do not take) must have the same M, both triangles,
// on a branched tree with a free-flyer root and a child of the base.
TEST(CrbaPlaneRotation, MatchesGeneralRevoluteJoints) {
  Rng rng(121);
  auto inertia = [&] {
    const Vec3 c = random_vector(3, rng, 0.1);
    const Mat3 A = random_vector(9, rng, 0.01).reshaped(3, 3);
    const Mat3 I = Mat3(Vec3(0.02, 0.03, 0.04).asDiagonal()) + A * A.transpose();
    return RigidBodyInertia::from_mass_com_inertia(0.5 + static_cast<double>(rng() % 3), c, I);
  };
  Model fast, general;
  auto add = [&](int parent, const JointModel& fast_joint, const JointModel& general_joint, const Transform& X,
                 const RigidBodyInertia& I, const std::string& name) {
    const int a = fast.add_body(parent, fast_joint, X, I, name, name + "_joint");
    const int b = general.add_body(parent, general_joint, X, I, name, name + "_joint");
    EXPECT_EQ(a, b);
    return a;
  };
  const int root = add(0, JointFreeFlyer{}, JointFreeFlyer{}, Transform(), inertia(), "root");
  int translated = 0;
  for (int leg = 0; leg < 3; ++leg) {
    int parent = root;
    for (int k = 0; k < 4; ++k) {
      const Vec3 axis = Vec3::Unit((leg + k) % 3);
      // One joint in each leg gets a rotated X_tree, so both paths meet in one chain.
      const Transform X = k == 2 ? Transform::from_rpy_xyz(random_vector(3, rng, 0.5), random_vector(3, rng, 0.3))
                                 : Transform::translation(random_vector(3, rng, 0.3));
      std::string name = "l";  // appended piecewise: GCC 12 flags "l" + to_string (-Wrestrict, a false positive)
      name += std::to_string(leg) + "_" + std::to_string(k);
      parent = add(parent, make_revolute(axis), JointRevolute(axis), X, inertia(), name);
      translated += fast.X_tree_is_translation(parent) ? 1 : 0;
    }
  }
  add(0, make_revolute(Vec3::UnitY()), JointRevolute(Vec3::UnitY()), Transform::translation(Vec3(0.1, 0.2, 0.3)),
      inertia(), "on_base");
  ASSERT_EQ(translated, 9);
  ASSERT_FALSE(fast.X_tree_is_translation(fast.body_index("l0_2")));
  ASSERT_TRUE(std::holds_alternative<JointRevoluteX>(fast.joint(fast.body_index("l0_0"))));
  ASSERT_TRUE(std::holds_alternative<JointRevolute>(general.joint(general.body_index("l0_0"))));

  Data df(fast), dg(general);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(fast, rng);
    for (Triangle triangle : {Triangle::Upper, Triangle::Full}) {
      const MatX M_fast = crba(fast, df, q, triangle);
      const MatX M_general = crba(general, dg, q, triangle);
      // Different roundings of the same products: a few eps of the largest entry.
      EXPECT_LE((M_fast - M_general).cwiseAbs().maxCoeff(), kSumTol * M_general.cwiseAbs().maxCoeff())
          << "state " << s << (triangle == Triangle::Upper ? " Upper" : " Full");
    }
  }
}

}  // namespace
