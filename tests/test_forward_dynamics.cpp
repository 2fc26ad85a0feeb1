// The forward-dynamics family (include/plucker/algorithms/forward_dynamics.hpp, issue 6):
// every method against the ABA and against a dense solve, on chains, branched random trees,
// the humanoid / quadruped / all-joints builders and the shared robots; the mass-matrix
// methods against the CRBA; RNEA by composite inertias against the RNEA; the LTDL / LTL and
// innovations factors multiplied back, with their sparsity patterns; M^-1 M = I; conjugate
// gradient's iteration counts; SingularError on romeo; no heap allocation.
//
// Tolerances. A backward-stable solve of M x = b has forward error of order
// eps cond(M) |x| (Higham ch. 7), and the right-hand side b = tau - C carries rounding of
// order eps (|tau| + |C|). The agreement check is therefore
//   |qdd - qdd_ref| <= c cond(M) eps (|qdd_ref| + (|tau| + |C|) / lambda_max(M)),  c = kC = 10,
// (2-norms) with cond(M) = lambda_max / lambda_min from an eigen-solve of the CRBA's M; the largest
// observed c over every model, method and state is about 0.5 (about 1 for dca_accurate; the basic
// "dca" has its own constant, kCDcaBasic below). Conjugate
// gradient stops on a relative residual rho = |r| / |b| <= 1e-14 (or after 10 nv iterations), and
// its forward error is bounded by cond(M) rho instead: eps is replaced by max(eps, rho) for cg and
// pcg. PLUCKER_TEST_VERBOSE=1 prints the worst observed err / tol per check.
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "alloc_count.hpp"
#include "dynamics_test_support.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;
using Method = ForwardDynamicsMethod;

constexpr double kC = 10.0;  // the constant c of the agreement bound above
// The basic divide-and-conquer algorithm (world-frame handle equations, docs/dca.md) is the
// exception: its error grows with the world-frame lever arms, not with cond(M) alone; its largest
// observed c is about 100 (quadruped_fixed), so it is held to c = 1e3. dca_accurate keeps kC
// (observed c below 1).
constexpr double kCDcaBasic = 1e3;
double method_c(ForwardDynamicsMethod m) { return m == ForwardDynamicsMethod::Dca ? kCDcaBasic : kC; }
constexpr int kStates = 3;

struct ModelCase {
  std::string name;
  std::function<Model()> build;  // null: shared model `urdf`
  std::string urdf;
  RootJoint root = RootJoint::Fixed;
};

const std::vector<ModelCase>& model_cases() {
  static const std::vector<ModelCase> cases = [] {
    std::vector<ModelCase> c;
    auto builder = [&](const std::string& name, std::function<Model()> f) { c.push_back({name, std::move(f), ""}); };
    builder("chain7", [] { return build_chain(7, {Vec3::UnitZ(), Vec3::UnitY()}, 1); });
    builder("chain12_general_axes", [] {
      return build_chain(12, {Vec3(1, 1, 0), Vec3(0, 1, 1), Vec3(1, -0.3, 0.5), Vec3::UnitX()}, 2);
    });
    builder("chain32", [] { return build_chain(32, {Vec3::UnitZ(), Vec3::UnitY()}, 3); });
    builder("tree_bf1p5", [] { return build_random_tree(30, 1.5, 0.4, 0.95, 4); });
    builder("tree_bf2", [] { return build_random_tree(31, 2.0, 0.7, 0.9, 5); });
    builder("tree_bf3", [] { return build_random_tree(40, 3.0, 0.3, 0.95, 6); });
    builder("tree_bf2_planar", [] { return build_random_tree(20, 2.0, 0.0, 1.0, 7); });
    builder("humanoid_floating", [] { return build_humanoid(8, true); });
    builder("humanoid_fixed", [] { return build_humanoid(9, false); });
    builder("quadruped_floating", [] { return build_quadruped(10, true); });
    builder("quadruped_fixed", [] { return build_quadruped(11, false); });
    builder("all_joints", [] { return build_all_joints_tree(12); });
    for (const char* arm : {"ur5", "panda", "iiwa14", "chain32"})
      c.push_back({std::string("zoo_") + arm, nullptr, arm});
    for (const char* robot : {"talos_full", "simple_humanoid", "romeo_small", "anymal", "solo12", "hyq", "icub", "pr2"})
      c.push_back({std::string("zoo_") + robot + "_ff", nullptr, robot, RootJoint::FreeFlyer});
    return c;
  }();
  return cases;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& c : model_cases()) names.push_back(c.name);
  return names;
}

const Model* cached_model(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Model>> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second.get();
  std::unique_ptr<Model> m;
  for (const auto& c : model_cases()) {
    if (c.name != name) continue;
    if (c.build) {
      m = std::make_unique<Model>(c.build());
    } else if (const std::string path = shared_model_path(c.urdf); !path.empty()) {
      m = std::make_unique<Model>(load_shared_model(path, c.root));
    }
  }
  return (cache[name] = std::move(m)).get();
}

/// Whether `m` covers the model's topology: the CFA covers chains with short branches only (and
/// refuses the others with InvalidArgument, tested in test_global.cpp); every other method, any tree.
bool covers(Method m, const Model& model) { return m != Method::Cfa || cfa_topology(model).covered; }

/// The CFA needs I^-1 of every main-chain body and refuses a singular one with SingularError naming
/// it (icub's wrist links are point masses). Checks that the body it names has a singular spatial
/// inertia: its smallest eigenvalue at most 1e-12 of its largest.
void expect_singular_chain_body(const Model& model, const std::string& message) {
  const std::size_t at = message.find("body '");
  ASSERT_NE(at, std::string::npos) << message;
  const std::size_t end = message.find('\'', at + 6);
  const std::string body = message.substr(at + 6, end - at - 6);
  int i = 0;
  while (i < model.nbodies() && model.body_name(i) != body) ++i;
  ASSERT_LT(i, model.nbodies()) << message;
  const VecX ev = Eigen::SelfAdjointEigenSolver<MatX>(MatX(model.inertia(i).matrix())).eigenvalues();
  EXPECT_LE(ev.minCoeff(), 1e-12 * ev.maxCoeff()) << message;
}

std::string at(const std::string& model, int state) { return model + " state " + std::to_string(state); }

/// True when j is a DoF-level ancestor of i (lambda applied to i zero or more times reaches j).
bool dof_ancestor_or_self(const std::vector<int>& lambda, int i, int j) {
  for (int k = i; k >= 0; k = lambda[static_cast<std::size_t>(k)])
    if (k == j) return true;
  return false;
}

class ForwardDynamicsFamily : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    model_ = cached_model(GetParam());
    if (!model_) GTEST_SKIP() << GetParam() << ": shared model not found (PLUCKER_SHARED_DIR)";
  }
  const Model& model() const { return *model_; }
  const Model* model_ = nullptr;
};

// Every method agrees with the ABA and with a dense solve of the CRBA's M (bound in the header).
TEST_P(ForwardDynamicsFamily, EveryMethodAgreesWithAbaAndDenseSolve) {
  const std::string name = GetParam();
  std::map<Method, std::unique_ptr<RatioLog>> logs;
  for (Method m : forward_dynamics_methods())
    logs[m] = std::make_unique<RatioLog>(name + " " + std::string(to_string(m)) + " vs aba/dense");
  Data data(model());
  Rng rng(601);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const VecX v = random_vector(model().nv(), rng), tau = random_vector(model().nv(), rng, 10.0);
    const VecX C = nonlinear_effects(model(), data, q, v);
    const MatX M = crba(model(), data, q);
    const Spectrum sp = spectrum(M);
    const VecX dense = M.llt().solve(tau - C);
    const VecX qdd_aba = aba(model(), data, q, v, tau);
    ASSERT_TRUE(qdd_aba.allFinite()) << at(name, s);
    const double scale = (tau.norm() + C.norm()) / sp.max;
    for (Method m : forward_dynamics_methods()) {
      if (!covers(m, model())) {
        EXPECT_THROW(forward_dynamics(model(), data, q, v, tau, m), InvalidArgument) << at(name, s);
        continue;
      }
      VecX qdd;
      if (m == Method::Cfa) {
        try {
          qdd = forward_dynamics(model(), data, q, v, tau, m);
        } catch (const SingularError& e) {
          expect_singular_chain_body(model(), e.what());
          continue;
        }
      }
      ASSERT_NO_THROW(qdd = forward_dynamics(model(), data, q, v, tau, m)) << at(name, s) << " " << to_string(m);
      ASSERT_TRUE(qdd.allFinite()) << at(name, s) << " " << to_string(m);
      double eps = kEps;
      if (m == Method::ConjugateGradient || m == Method::PreconditionedCG) {
        EXPECT_GT(data.cg.iterations, 0) << at(name, s);
        EXPECT_LE(data.cg.iterations, 10 * model().nv()) << at(name, s);
        eps = std::max(eps, data.cg.relative_residual);
        if (verbose() && !data.cg.converged)
          std::cerr << "[cg] " << at(name, s) << " " << to_string(m) << ": not converged after " << data.cg.iterations
                    << " iterations, residual " << data.cg.relative_residual << ", cond " << sp.cond() << "\n";
      }
      for (const VecX* ref : {&qdd_aba, &dense}) {
        const double err = (qdd - *ref).norm();
        const double tol = method_c(m) * sp.cond() * eps * (ref->norm() + scale);
        logs[m]->add(err, tol, at(name, s));
        EXPECT_LE(err, tol) << at(name, s) << " " << to_string(m) << " vs " << (ref == &dense ? "dense" : "aba")
                            << ": cond(M) = " << sp.cond();
      }
    }
  }
}

// The same with external forces, in both frames (they enter every method through C).
TEST_P(ForwardDynamicsFamily, ExternalForcesAgreeWithAba) {
  const std::string name = GetParam();
  Data data(model());
  Rng rng(602);
  const VecX q = random_configuration(model(), rng);
  const VecX v = random_vector(model().nv(), rng), tau = random_vector(model().nv(), rng, 10.0);
  std::vector<Force> f(model().nbodies());
  for (auto& fi : f) fi = random_force(rng);
  const Spectrum sp = spectrum(crba(model(), data, q));
  for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
    const VecX ref = aba(model(), data, q, v, tau, f, frame);
    VecX zero = VecX::Zero(model().nv());
    const VecX C = rnea(model(), data, q, v, zero, f, frame);
    for (Method m : forward_dynamics_methods()) {
      if (!covers(m, model())) continue;
      VecX qdd;
      try {
        qdd = forward_dynamics(model(), data, q, v, tau, m, f, frame);
      } catch (const SingularError& e) {
        if (m != Method::Cfa) throw;
        expect_singular_chain_body(model(), e.what());
        continue;
      }
      double eps = kEps;
      if (m == Method::ConjugateGradient || m == Method::PreconditionedCG)
        eps = std::max(eps, data.cg.relative_residual);
      EXPECT_LE((qdd - ref).norm(), method_c(m) * sp.cond() * eps * (ref.norm() + (tau.norm() + C.norm()) / sp.max))
          << name << " " << to_string(m);
    }
  }
}

// M by the direct and the symmetry-based methods equals the CRBA's; mass_times is M y.
TEST_P(ForwardDynamicsFamily, MassMatrixMethodsMatchCrba) {
  const std::string name = GetParam();
  Data data(model());
  Rng rng(603);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const MatX M = crba(model(), data, q);
    const double tol = 16.0 * model().nbodies() * kEps * M.cwiseAbs().maxCoeff();
    const MatX Md = mass_matrix_direct(model(), data, q);
    EXPECT_LE((Md - M).cwiseAbs().maxCoeff(), tol) << at(name, s) << " direct";
    const MatX Ms = mass_matrix_symmetry(model(), data, q);
    EXPECT_LE((Ms - M).cwiseAbs().maxCoeff(), tol) << at(name, s) << " symmetry";
    EXPECT_TRUE(Ms.isApprox(Ms.transpose(), 0.0)) << "symmetry-based M is exactly symmetric";
    const VecX y = random_vector(model().nv(), rng);
    const VecX My = mass_times(model(), data, q, y);
    EXPECT_LE((My - M * y).norm(), tol * model().nv() * (y.norm() + 1.0)) << at(name, s) << " mass_times";
  }
}

// RNEA by composite inertias (Lemma 3.2 with the bias terms) equals the RNEA.
TEST_P(ForwardDynamicsFamily, RneaCompositeMatchesRnea) {
  const std::string name = GetParam();
  Data data(model());
  Rng rng(604);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const VecX v = random_vector(model().nv(), rng), a = random_vector(model().nv(), rng);
    const VecX tau = rnea(model(), data, q, v, a);
    const double scale = crba(model(), data, q).norm() * a.norm() + nonlinear_effects(model(), data, q, v).norm() +
                         gravity_torques(model(), data, q).norm();
    const VecX tau_c = rnea_composite(model(), data, q, v, a);
    EXPECT_LE((tau_c - tau).norm(), 16.0 * model().nbodies() * kEps * scale) << at(name, s);
  }
}

// LTDL and LTL: factors multiply back to M, with no fill-in outside the predicted pattern
// (L(i, j) != 0 only when j is a DoF-level ancestor of i: exact zeros elsewhere), and the
// back-substitutions solve M x = b.
TEST_P(ForwardDynamicsFamily, SparseFactorisationsMultiplyBackWithoutFillIn) {
  const std::string name = GetParam();
  const int nv = model().nv();
  Data data(model());
  const std::vector<int> lambda = dof_parents(model());
  for (int k = 0; k < nv; ++k) ASSERT_LT(lambda[k], k);
  Rng rng(605);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const MatX M = crba(model(), data, q);
    const Spectrum sp = spectrum(M);
    const double tol = 16.0 * nv * kEps * M.diagonal().maxCoeff();
    // The CRBA's M already has the pattern (branch-induced sparsity).
    for (int i = 0; i < nv; ++i)
      for (int j = 0; j < i; ++j)
        if (!dof_ancestor_or_self(lambda, i, j)) {
          ASSERT_EQ(M(i, j), 0.0) << at(name, s) << " M(" << i << "," << j << ")";
        }
    const VecX b = random_vector(nv, rng);
    const VecX x_ref = M.llt().solve(b);
    for (bool with_d : {true, false}) {
      crba(model(), data, q);
      if (with_d)
        factorize_ltdl(model(), data);
      else
        factorize_ltl(model(), data);
      MatX L = data.M.transpose().triangularView<Eigen::Lower>();  // L(i, j) is stored in M(j, i)
      VecX D = VecX::Ones(nv);
      if (with_d) {
        D = L.diagonal();
        L.diagonal().setOnes();
      }
      for (int i = 0; i < nv; ++i)
        for (int j = 0; j < i; ++j)
          if (!dof_ancestor_or_self(lambda, i, j)) {
            ASSERT_EQ(L(i, j), 0.0) << at(name, s) << (with_d ? " LTDL" : " LTL") << " fill-in at (" << i << "," << j
                                    << ")";
          }
      const MatX back = L.transpose() * D.asDiagonal() * L;
      EXPECT_LE((back - M).cwiseAbs().maxCoeff(), tol) << at(name, s) << (with_d ? " L^T D L" : " L^T L");
      EXPECT_TRUE(data.M.triangularView<Eigen::StrictlyLower>().toDenseMatrix().isApprox(
          M.triangularView<Eigen::StrictlyLower>().toDenseMatrix(), 0.0))
          << "the strict lower triangle is untouched";
      VecX x = b;
      if (with_d)
        solve_ltdl(model(), data, x);
      else
        solve_ltl(model(), data, x);
      EXPECT_LE((x - x_ref).norm(), kC * sp.cond() * kEps * (x_ref.norm() + b.norm() / sp.max)) << at(name, s);
    }
  }
}

// Innovations factors (Lemma 6.2): L D L^T = M, L = I + H phi K unit upper triangular with
// L(i, j) != 0 only when joint(i) is an ancestor of joint(j), D block diagonal; for 1-DoF joints
// L^T is the LTDL factor (the unique unit-triangular factorisation in that order).
TEST_P(ForwardDynamicsFamily, InnovationsFactorsMultiplyBackToM) {
  const std::string name = GetParam();
  const int nv = model().nv();
  Data data(model());
  Rng rng(606);
  bool all_1dof = true;
  for (int i = 1; i < model().nbodies(); ++i) all_1dof = all_1dof && model().joint_nv(i) <= 1;
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const MatX M = crba(model(), data, q);
    const Spectrum sp = spectrum(M);
    const InnovationsFactors F = innovations_factors(model(), data, q);
    EXPECT_LE((F.L * F.D * F.L.transpose() - M).cwiseAbs().maxCoeff(), 16.0 * nv * kEps * M.diagonal().maxCoeff())
        << at(name, s);
    for (int i = 0; i < nv; ++i) {
      EXPECT_EQ(F.L(i, i), 1.0);
      for (int j = 0; j < nv; ++j) {
        const int ji = model().joint_of_v(i), jj = model().joint_of_v(j);
        const std::vector<int> support = model().support(jj);  // returned by value: one copy
        const bool strict_ancestor = ji != jj && std::count(support.begin(), support.end(), ji);
        if (i != j && !strict_ancestor) {
          ASSERT_EQ(F.L(i, j), 0.0) << at(name, s) << " L(" << i << "," << j << ")";
        }
        if (ji != jj) {
          ASSERT_EQ(F.D(i, j), 0.0);
        }
      }
    }
    if (all_1dof) {
      crba(model(), data, q);
      factorize_ltdl(model(), data);
      MatX L = data.M.transpose().triangularView<Eigen::StrictlyLower>();
      L.diagonal().setOnes();
      EXPECT_LE((F.L - L.transpose()).cwiseAbs().maxCoeff(), kC * sp.cond() * kEps) << at(name, s) << " L";
      EXPECT_LE((F.D.diagonal() - data.M.diagonal()).cwiseAbs().maxCoeff(),
                kC * sp.cond() * kEps * M.diagonal().maxCoeff())
          << at(name, s) << " D";
    }
    // The O(N) triangular recursions solve M x = b.
    const VecX b = random_vector(nv, rng);
    const VecX x_ref = M.llt().solve(b);
    const VecX x = solve_innovations(model(), data, q, b);
    EXPECT_LE((x - x_ref).norm(), kC * sp.cond() * kEps * (x_ref.norm() + b.norm() / sp.max)) << at(name, s);
  }
}

// M^-1 from the operator form (Lemma 6.4) times M from the CRBA is the identity:
// |M^-1 M - I|_max <= c cond(M) eps.
TEST_P(ForwardDynamicsFamily, MinvTimesMIsIdentity) {
  const std::string name = GetParam();
  const int nv = model().nv();
  RatioLog log{name + " minv * M == I"};
  Data data(model());
  Rng rng(607);
  for (int s = 0; s < kStates; ++s) {
    const VecX q = random_configuration(model(), rng);
    const MatX M = crba(model(), data, q);
    const Spectrum sp = spectrum(M);
    const MatX Mi = minv(model(), data, q);
    ASSERT_TRUE(Mi.allFinite());
    EXPECT_TRUE(Mi.isApprox(Mi.transpose(), 0.0));
    const double err = (Mi * M - MatX::Identity(nv, nv)).cwiseAbs().maxCoeff();
    const double tol = kC * sp.cond() * kEps;
    log.add(err, tol, at(name, s));
    EXPECT_LE(err, tol) << at(name, s) << ": cond(M) = " << sp.cond();
  }
}

// Conjugate gradient through the public solver: iterations reported, residual reached.
TEST_P(ForwardDynamicsFamily, ConjugateGradientReportsIterations) {
  const std::string name = GetParam();
  const int nv = model().nv();
  Data data(model());
  Rng rng(608);
  const VecX q = random_configuration(model(), rng);
  const VecX b = random_vector(nv, rng);
  const MatX M = crba(model(), data, q);
  for (bool pre : {false, true}) {
    const VecX x = solve_conjugate_gradient(model(), data, q, b, pre);
    EXPECT_GT(data.cg.iterations, 0);
    // It returns only when converged (else ConvergenceError): the true residual within the
    // default tolerance 1e-14, or at the floor of rounding (backward error 10 eps). The solver used
    // to stop on the recursively updated residual, up to 1e-10 away from the true one (tree_bf2).
    EXPECT_TRUE(data.cg.converged);
    EXPECT_TRUE(data.cg.relative_residual <= 1e-14 || data.cg.backward_error <= 10 * kEps);
    // The reported residual is the true one at exit (to rounding, eps |M| |x|).
    EXPECT_LE((M * x - b).norm(),
              std::max(data.cg.relative_residual, kEps) * b.norm() + kC * kEps * M.norm() * x.norm())
        << name << (pre ? " pcg" : " cg");
    if (verbose())
      std::cerr << "[cg] " << name << (pre ? " pcg" : " cg") << ": " << data.cg.iterations << " iterations (nv = " << nv
                << "), residual " << data.cg.relative_residual << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, ForwardDynamicsFamily, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The diagonal preconditioner diag(H R H*) pays off on a 64-link chain whose links shrink along
// the chain (autoTree's taper 0.95, as in Featherstone's JSIM condition-number study): there M's
// ill-conditioning is mostly the spread of its diagonal (cond(M) ~ 2e7, ~5e4 after diagonal
// scaling) and pcg needs about half the iterations of cg. On a chain of equal-sized links the
// diagonal scaling barely changes cond(M) (~2e5 before and after) and pcg does not help (printed).
TEST(ConjugateGradient, PreconditionerReducesIterationsOnChain64) {
  const Model tapered = build_random_tree(64, 1.0, 0.5, 0.95, 21);
  const Model uniform = build_chain(64, {Vec3::UnitZ(), Vec3::UnitY()}, 21);
  for (const Model* model : {&tapered, &uniform}) {
    Data data(*model);
    Rng rng(609);
    for (int s = 0; s < 3; ++s) {
      const VecX q = random_configuration(*model, rng);
      const VecX b = random_vector(model->nv(), rng);
      solve_conjugate_gradient(*model, data, q, b, false);
      const Data::CgReport cg = data.cg;
      solve_conjugate_gradient(*model, data, q, b, true);
      const Data::CgReport pcg = data.cg;
      std::cerr << (model == &tapered ? "tapered" : "uniform") << " chain64 state " << s << ": cg " << cg.iterations
                << " iterations (residual " << cg.relative_residual << "), pcg " << pcg.iterations << " (residual "
                << pcg.relative_residual << ")\n";
      EXPECT_TRUE(pcg.converged);
      if (model == &tapered) {
        EXPECT_LT(pcg.iterations, cg.iterations);
      }
    }
  }
}

// Cost formulas: a chain's LTDL costs the dense factorisation; branching makes it cheaper; the
// sum of DoF depths counts the structurally nonzero entries below M's diagonal.
TEST(JsimFactorisation, CostFormulasFollowTheTopology) {
  const Model chain = build_chain(30);
  EXPECT_EQ(ltdl_cost(chain).factor_mul, dense_cholesky_cost(30).factor_mul);
  EXPECT_EQ(ltl_cost(chain).factor(), dense_cholesky_cost(30).factor());
  const Model tree = build_random_tree(30, 2.0, 0.5, 1.0);
  EXPECT_LT(3 * ltdl_cost(tree).factor_mul, ltdl_cost(chain).factor_mul);
  const Model humanoid = build_humanoid(0, false);  // 30 DoF, Featherstone 2005's example size
  EXPECT_LT(2 * ltdl_cost(humanoid).factor_mul, dense_cholesky_cost(30).factor_mul);
  for (const Model* m : {&chain, &tree, &humanoid}) {
    const std::vector<int> lambda = dof_parents(*m);
    long long pattern = 0;
    for (int i = 0; i < m->nv(); ++i)
      for (int j = 0; j < i; ++j) pattern += dof_ancestor_or_self(lambda, i, j);
    EXPECT_EQ(pattern, ltdl_cost(*m).factor_div);
  }
  // A free-flyer's 6 DoFs are a chain of DoFs: the root block is dense.
  const Model floating = build_humanoid(0, true);
  const std::vector<int> lambda = dof_parents(floating);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(lambda[k], k - 1);
}

TEST(ForwardDynamicsMethods, NamesRoundTrip) {
  const std::vector<std::string> expected = {"aba",
                                             "crba_cholesky",
                                             "crba_ltdl",
                                             "direct_cholesky",
                                             "symmetry_cholesky",
                                             "cg",
                                             "pcg",
                                             "innovations",
                                             "minv",
                                             "global_sparse",
                                             "cfa",
                                             "dca",
                                             "dca_accurate",
                                             "auto"};
  ASSERT_EQ(forward_dynamics_methods().size(), expected.size());
  for (std::size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(to_string(forward_dynamics_methods()[k]), expected[k]);
    EXPECT_EQ(parse_forward_dynamics_method(expected[k]), forward_dynamics_methods()[k]);
  }
  try {
    parse_forward_dynamics_method("cholesky");
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("crba_ltdl"), std::string::npos) << e.what();
  }
}

// Auto runs the method forward_dynamics_choice names, and says why.
TEST(ForwardDynamicsMethods, AutoRunsTheChosenMethod) {
  for (const Model& model : {build_chain(32), build_humanoid(0, true), build_random_tree(64, 3.0, 0.5, 1.0)}) {
    const ForwardDynamicsChoice choice = forward_dynamics_choice(model);
    EXPECT_TRUE(choice.method == Method::Aba || choice.method == Method::CrbaLtdl);
    EXPECT_NE(choice.reason.find(to_string(choice.method)), std::string::npos) << choice.reason;
    EXPECT_NE(choice.reason.find("global_sparse and cfa"), std::string::npos) << choice.reason;  // considered
    EXPECT_GT(choice.predicted_ns_aba, 0.0);
    EXPECT_GT(choice.predicted_ns_crba_ltdl, 0.0);
    // The divide-and-conquer algorithm is considered and never chosen: on one thread its
    // predicted time (dca_cost's operations) exceeds the ABA's (measured 3-9x, docs/dca.md).
    EXPECT_GT(choice.predicted_ns_dca, choice.predicted_ns_aba);
    EXPECT_NE(choice.reason.find("dca_accurate on one thread: predicted"), std::string::npos) << choice.reason;
    Data data(model);
    Rng rng(610);
    const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
               tau = random_vector(model.nv(), rng);
    const VecX qdd_auto = forward_dynamics(model, data, q, v, tau, Method::Auto);
    const VecX qdd = forward_dynamics(model, data, q, v, tau, choice.method);
    EXPECT_EQ(qdd_auto, qdd) << "bit-identical: the same code runs";
    if (verbose()) std::cerr << "[auto] " << model.name() << ": " << choice.reason << "\n";
  }
  // Measured on the development machine (bench/fd_calibrate.py): the ABA wins on chains, trees and
  // robots; CRBA + LTDL wins when every body has its own free-flyer (block-diagonal M, where the
  // ABA's 6 x 6 articulated-inertia work per joint buys nothing).
  EXPECT_EQ(forward_dynamics_choice(build_chain(64)).method, Method::Aba);
  EXPECT_EQ(forward_dynamics_choice(build_humanoid(0, true)).method, Method::Aba);
  Model free_bodies;
  for (int k = 0; k < 8; ++k)
    free_bodies.add_body(
        0, JointFreeFlyer{}, Transform::translation(Vec3(0.2 * k, 0.0, 0.0)),
        RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0.1, 0.0, 0.0), Vec3(0.01, 0.02, 0.03).asDiagonal()),
        "body" + std::to_string(k), "joint" + std::to_string(k));
  const ForwardDynamicsChoice choice = forward_dynamics_choice(free_bodies);
  EXPECT_EQ(choice.method, Method::CrbaLtdl) << choice.reason;
  Data data(free_bodies);
  Rng rng(613);
  const VecX q = random_configuration(free_bodies, rng), v = random_vector(free_bodies.nv(), rng),
             tau = random_vector(free_bodies.nv(), rng);
  EXPECT_EQ(forward_dynamics(free_bodies, data, q, v, tau, Method::Auto),
            forward_dynamics(free_bodies, data, q, v, tau, Method::CrbaLtdl));
  EXPECT_LE((forward_dynamics(free_bodies, data, q, v, tau, Method::Auto) - aba(free_bodies, data, q, v, tau)).norm(),
            1e-9 * aba(free_bodies, data, q, v, tau).norm());
}

TEST(ForwardDynamicsMethods, ChecksArguments) {
  const Model model = build_humanoid(0, true);
  Data data(model);
  const VecX q = neutral(model), v = VecX::Zero(model.nv());
  EXPECT_THROW(forward_dynamics(model, data, q, v, VecX::Zero(model.nv() + 1), Method::Minv), InvalidArgument);
  std::vector<Force> too_few(2);
  EXPECT_THROW(forward_dynamics(model, data, q, v, v, Method::Innovations, too_few), InvalidArgument);
  VecX x = VecX::Zero(3);
  EXPECT_THROW(solve_ltdl(model, data, x), InvalidArgument);
  const Model other = build_chain(3);
  EXPECT_THROW(minv(other, data, neutral(other)), InvalidArgument);
}

// A bad q or v given to forward_dynamics is reported under that name, whatever the method
// computes first (the CRBA-based methods start with nonlinear_effects, the ABA with aba).
TEST(ForwardDynamicsMethods, ArgumentErrorsNameTheFunctionCalled) {
  const Model model = build_chain(4);
  Data data(model);
  const VecX q = neutral(model), v = VecX::Zero(model.nv()), tau = VecX::Zero(model.nv());
  VecX bad_q = q, bad_v = v;
  bad_q[1] = std::numeric_limits<double>::quiet_NaN();
  bad_v[2] = std::numeric_limits<double>::infinity();
  auto message = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  };
  for (Method m : forward_dynamics_methods()) {
    SCOPED_TRACE(std::string(to_string(m)));
    const std::string mq = message([&] { forward_dynamics(model, data, bad_q, v, tau, m); });
    EXPECT_EQ(mq.rfind("forward_dynamics: q is not finite at joint 'joint2'", 0), 0u) << mq;
    const std::string mv = message([&] { forward_dynamics(model, data, q, bad_v, tau, m); });
    EXPECT_EQ(mv.rfind("forward_dynamics: v is not finite at joint 'joint3'", 0), 0u) << mv;
  }
  const std::string crba = message([&] { forward_dynamics_crba(model, data, bad_q, v, tau); });
  EXPECT_EQ(crba.rfind("forward_dynamics_crba: q is not finite at joint 'joint2'", 0), 0u) << crba;
}

// romeo: 24 massless finger links. Every method throws SingularError naming one of the joints
// whose subtree is massless; none returns NaN.
TEST(ForwardDynamicsSingular, RomeoEveryMethodThrowsSingularError) {
  const std::string path = shared_model_path("romeo");
  if (path.empty()) GTEST_SKIP() << "romeo.urdf not found";
  for (RootJoint root : {RootJoint::FreeFlyer, RootJoint::Fixed}) {
    const Model model = load_shared_model(path, root);
    std::vector<std::string> singular;
    for (int j : massless_subtree_joints(model)) singular.push_back(model.joint_name(j));
    ASSERT_FALSE(singular.empty());
    Data data(model);
    Rng rng(611);
    const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
               tau = random_vector(model.nv(), rng);
    auto expect_singular = [&](const std::function<void()>& f, const std::string& what) {
      try {
        f();
        ADD_FAILURE() << "romeo " << what << ": no SingularError";
      } catch (const SingularError& e) {
        bool named = false;
        for (const std::string& j : singular)
          named = named || std::string(e.what()).find("'" + j + "'") != std::string::npos;
        EXPECT_TRUE(named) << what << ": " << e.what();
      }
    };
    for (Method m : forward_dynamics_methods()) {
      if (!covers(m, model)) {  // romeo is no chain: the CFA refuses its topology before any arithmetic
        EXPECT_THROW(forward_dynamics(model, data, q, v, tau, m), InvalidArgument);
        continue;
      }
      expect_singular([&] { forward_dynamics(model, data, q, v, tau, m); }, std::string(to_string(m)));
    }
    expect_singular([&] { minv(model, data, q); }, "minv");
    expect_singular([&] { solve_innovations(model, data, q, tau); }, "solve_innovations");
    expect_singular([&] { innovations_factors(model, data, q); }, "innovations_factors");
    expect_singular([&] { solve_conjugate_gradient(model, data, q, tau, true); }, "pcg");
    expect_singular(
        [&] {
          crba(model, data, q);
          factorize_ltdl(model, data);
        },
        "factorize_ltdl");
    expect_singular(
        [&] {
          crba(model, data, q);
          factorize_ltl(model, data);
        },
        "factorize_ltl");
    // The mass matrix itself is defined (and singular).
    EXPECT_TRUE(mass_matrix_symmetry(model, data, q).allFinite());
  }
}

// No heap allocation once Data exists (the counter of test_no_allocation.cpp).
using alloc_count::allocations;

TEST(ForwardDynamicsNoAllocation, EveryMethodAndKernel) {
#ifndef PLUCKER_COUNT_ALLOCATIONS
  GTEST_SKIP() << "allocation counting needs glibc and no ASan/TSan";
#endif
  for (const Model& model : {build_humanoid(0, true), build_all_joints_tree(0), build_random_tree(20, 2.0, 0.5, 1.0)}) {
    Data data(model);
    Rng rng(612);
    const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
               tau = random_vector(model.nv(), rng), y = random_vector(model.nv(), rng);
    VecX x = y;
    std::vector<Force> f(model.nbodies());
    for (auto& fi : f) fi = random_force(rng);
    std::vector<std::pair<std::string, std::function<void()>>> calls;
    for (Method m : forward_dynamics_methods()) {
      if (!covers(m, model)) continue;
      calls.emplace_back(std::string(to_string(m)), [&, m] { forward_dynamics(model, data, q, v, tau, m); });
      calls.emplace_back(std::string(to_string(m)) + " f_ext",
                         [&, m] { forward_dynamics(model, data, q, v, tau, m, f); });
    }
    calls.emplace_back("mass_matrix_direct", [&] { mass_matrix_direct(model, data, q); });
    calls.emplace_back("mass_matrix_symmetry", [&] { mass_matrix_symmetry(model, data, q); });
    calls.emplace_back("mass_times", [&] { mass_times(model, data, q, y); });
    calls.emplace_back("rnea_composite", [&] { rnea_composite(model, data, q, v, y); });
    calls.emplace_back("minv", [&] { minv(model, data, q); });
    calls.emplace_back("solve_innovations", [&] { solve_innovations(model, data, q, y); });
    calls.emplace_back("solve_conjugate_gradient", [&] { solve_conjugate_gradient(model, data, q, y, true); });
    calls.emplace_back("ltdl", [&] {
      crba(model, data, q);
      factorize_ltdl(model, data);
      solve_ltdl(model, data, x);
    });
    calls.emplace_back("ltl", [&] {
      crba(model, data, q);
      factorize_ltl(model, data);
      solve_ltl(model, data, x);
    });
    for (const auto& [what, run] : calls) run();  // each algorithm's first call makes its scratch
    for (int round = 0; round < 2; ++round)
      for (const auto& [what, run] : calls)
        EXPECT_EQ(allocations(run), 0) << model.name() << ": " << what << " allocates (round " << round << ")";
  }
}

}  // namespace
