// Analytical derivatives of inverse and forward dynamics (plucker/algorithms/derivatives.hpp)
// against finite differences of the functions they differentiate, on the procedural builders
// (every joint kind, fixed and floating bases, branched trees) and the shared robots.
//
// Finite differences: column k of d f / d q is the derivative of f(integrate(q, e_k t)) at
// t = 0 (the tangent-space convention of the header); of d f / d v, of f(v + e_k t). Central
// differences D(h) with Richardson extrapolation R = (4 D(h/2) - D(h)) / 3 (truncation
// O(h^4)), h = 1e-3: truncation ~ h^4 |f^(5)| / 30 ~ 3e-14 relative for O(1) derivatives, and
// rounding ~ eps |f| / h ~ 2e-13 |f|. Tolerance: kFdTol = 1e-9 times (1 + the largest entry of
// the finite-difference matrix and of |f|). Observed worst (PLUCKER_TEST_VERBOSE=1 prints
// each): 3e-14 of that scale for the RNEA derivatives, 4e-13 for the ABA's (chain32 with
// external forces, where the finite differences of aba lose digits to cond(M)): a margin of
// 25x.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "alloc_count.hpp"
#include "dynamics_test_support.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

constexpr double kFdStep = 1e-3;
constexpr double kFdTol = 1e-9;

struct DerivativeCase {
  std::string name;
  std::function<Model()> build;  // procedural builders
  std::string urdf;              // zoo file stem, "" for builders
  RootJoint root = RootJoint::Fixed;
};

std::vector<DerivativeCase> derivative_cases() {
  std::vector<DerivativeCase> c;
  c.push_back({"chain7", [] { return build_chain(7, {Vec3::UnitZ(), Vec3::UnitY()}, 1); }, ""});
  c.push_back({"chain9_general_axes",
               [] {
                 return build_chain(9, {Vec3(1, 1, 0), Vec3(0, 1, 1), Vec3(1, -0.3, 0.5), Vec3::UnitX()}, 2);
               },
               ""});
  c.push_back({"tree_binary15_skew", [] { return build_random_tree(15, 2.0, 0.7, 0.9, 4); }, ""});
  c.push_back({"humanoid_floating", [] { return build_humanoid(6, true); }, ""});
  c.push_back({"quadruped_fixed", [] { return build_quadruped(9, false); }, ""});
  c.push_back({"all_joints", [] { return build_all_joints_tree(10); }, ""});
  for (const char* arm : {"ur5", "panda", "iiwa14", "chain32"}) c.push_back({arm, nullptr, arm, RootJoint::Fixed});
  for (const char* robot : {"talos_full", "solo12", "anymal", "simple_humanoid"})
    c.push_back({std::string(robot) + "_free", nullptr, robot, RootJoint::FreeFlyer});
  return c;
}

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  for (const auto& c : derivative_cases()) names.push_back(c.name);
  return names;
}

/// Richardson-extrapolated central difference of g(t) at t = 0 (g: R -> R^n).
VecX richardson(const std::function<VecX(double)>& g, double h) {
  auto central = [&](double step) -> VecX { return (g(step) - g(-step)) / (2.0 * step); };
  return (4.0 * central(h / 2.0) - central(h)) / 3.0;
}

/// Finite-difference Jacobians of f(q, v) in the tangent space of q and in v.
struct FdJacobians {
  MatX dq, dv;
};
FdJacobians finite_differences(const Model& model, const VecX& q, const VecX& v,
                               const std::function<VecX(const VecX&, const VecX&)>& f) {
  const int nv = model.nv();
  FdJacobians out{MatX(nv, nv), MatX(nv, nv)};
  for (int k = 0; k < nv; ++k) {
    const VecX e = VecX::Unit(nv, k);
    out.dq.col(k) = richardson([&](double t) { return f(integrate(model, q, e, t), v); }, kFdStep);
    out.dv.col(k) = richardson([&](double t) { return f(q, v + t * e); }, kFdStep);
  }
  return out;
}

/// max |A - B| <= kFdTol (1 + max |B| + f_scale), reported with its ratio.
void expect_close(const MatX& analytic, const MatX& fd, double f_scale, const std::string& what) {
  const double err = (analytic - fd).cwiseAbs().maxCoeff();
  const double tol = kFdTol * (1.0 + fd.cwiseAbs().maxCoeff() + f_scale);
  if (verbose()) std::cout << what << ": error " << err << " = " << err / tol << " of the tolerance\n";
  EXPECT_LE(err, tol) << what << " (largest entry " << fd.cwiseAbs().maxCoeff() << ")";
}

class Derivatives : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const auto& c : derivative_cases()) {
      if (c.name != GetParam()) continue;
      if (c.build) {
        model_ = std::make_unique<Model>(c.build());
      } else {
        const std::string path = shared_model_path(c.urdf);
        if (path.empty()) GTEST_SKIP() << "shared model " << c.urdf << ".urdf not found (PLUCKER_SHARED_DIR)";
        model_ = std::make_unique<Model>(load_shared_model(path, c.root));
      }
    }
    ASSERT_TRUE(model_) << GetParam();
  }
  const Model& model() const { return *model_; }
  std::unique_ptr<Model> model_;
};

// d tau / d q, d tau / d v against finite differences of rnea, and d tau / d a = M against
// the CRBA (a different recursion: composite inertias in link coordinates).
TEST_P(Derivatives, RneaDerivativesMatchFiniteDifferences) {
  Data data(model()), fd_data(model());
  Rng rng(301);
  for (int s = 0; s < 2; ++s) {
    const VecX q = random_configuration(model(), rng), v = random_vector(model().nv(), rng),
               a = random_vector(model().nv(), rng);
    rnea_derivatives(model(), data, q, v, a);
    const auto f = [&](const VecX& qq, const VecX& vv) -> VecX { return rnea(model(), fd_data, qq, vv, a); };
    const FdJacobians fd = finite_differences(model(), q, v, f);
    const double scale = f(q, v).cwiseAbs().maxCoeff();
    const std::string at = GetParam() + " state " + std::to_string(s);
    expect_close(data.dtau_dq, fd.dq, scale, at + " d tau / d q");
    expect_close(data.dtau_dv, fd.dv, scale, at + " d tau / d v");
    const MatX M = crba(model(), fd_data, q);
    EXPECT_LE((data.M - M).cwiseAbs().maxCoeff(), 1e-12 * M.cwiseAbs().maxCoeff()) << at << " d tau / d a = M";
    EXPECT_LE((data.tau - f(q, v)).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + scale)) << at << " tau";
  }
}

// With external forces, given in world coordinates (fixed in the world while q moves) and in
// body coordinates (moving with their bodies): the two differ in d tau / d q.
TEST_P(Derivatives, RneaDerivativesWithExternalForces) {
  Data data(model()), fd_data(model());
  Rng rng(302);
  const VecX q = random_configuration(model(), rng), v = random_vector(model().nv(), rng),
             a = random_vector(model().nv(), rng);
  std::vector<Force> f_ext(static_cast<std::size_t>(model().nbodies()));
  for (Force& f : f_ext) f = random_force(rng, 3.0);
  for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
    rnea_derivatives(model(), data, q, v, a, f_ext, frame);
    const auto f = [&](const VecX& qq, const VecX& vv) -> VecX {
      return rnea(model(), fd_data, qq, vv, a, f_ext, frame);
    };
    const FdJacobians fd = finite_differences(model(), q, v, f);
    const double scale = f(q, v).cwiseAbs().maxCoeff();
    const std::string at = GetParam() + " " + to_string(frame) + " f_ext";
    expect_close(data.dtau_dq, fd.dq, scale, at + " d tau / d q");
    expect_close(data.dtau_dv, fd.dv, scale, at + " d tau / d v");
  }
}

// d qdd / d q, d qdd / d v against finite differences of aba; d qdd / d tau = M^-1 against the
// inverse of the CRBA's M; and the implicit-function identity M d qdd / d x = -d tau / d x
// (at a = qdd) with M from the CRBA.
TEST_P(Derivatives, AbaDerivativesMatchFiniteDifferences) {
  Data data(model()), fd_data(model());
  Rng rng(303);
  const VecX q = random_configuration(model(), rng), v = random_vector(model().nv(), rng),
             tau = random_vector(model().nv(), rng);
  aba_derivatives(model(), data, q, v, tau);
  const auto f = [&](const VecX& qq, const VecX& vv) -> VecX { return aba(model(), fd_data, qq, vv, tau); };
  const FdJacobians fd = finite_differences(model(), q, v, f);
  const double scale = f(q, v).cwiseAbs().maxCoeff();
  const std::string at = GetParam();
  expect_close(data.dqdd_dq, fd.dq, scale, at + " d qdd / d q");
  expect_close(data.dqdd_dv, fd.dv, scale, at + " d qdd / d v");
  EXPECT_LE((data.qdd - f(q, v)).cwiseAbs().maxCoeff(), 1e-9 * (1.0 + scale)) << at << " qdd";

  const MatX M = crba(model(), fd_data, q);
  const MatX Minv = M.llt().solve(MatX::Identity(model().nv(), model().nv()));
  const double cond_scale = M.cwiseAbs().maxCoeff() * Minv.cwiseAbs().maxCoeff();
  EXPECT_LE((data.Minv - Minv).cwiseAbs().maxCoeff(), 1e-11 * cond_scale * Minv.cwiseAbs().maxCoeff())
      << at << " d qdd / d tau = M^-1";
  const MatX qdd = data.qdd, dqdd_dq = data.dqdd_dq, dqdd_dv = data.dqdd_dv;
  rnea_derivatives(model(), fd_data, q, v, qdd);
  const double dq_scale =
      M.cwiseAbs().maxCoeff() * dqdd_dq.cwiseAbs().maxCoeff() + fd_data.dtau_dq.cwiseAbs().maxCoeff();
  const double dv_scale =
      M.cwiseAbs().maxCoeff() * dqdd_dv.cwiseAbs().maxCoeff() + fd_data.dtau_dv.cwiseAbs().maxCoeff();
  EXPECT_LE((M * dqdd_dq + fd_data.dtau_dq).cwiseAbs().maxCoeff(), 1e-11 * cond_scale * dq_scale) << at;
  EXPECT_LE((M * dqdd_dv + fd_data.dtau_dv).cwiseAbs().maxCoeff(), 1e-11 * cond_scale * dv_scale) << at;
}

TEST_P(Derivatives, AbaDerivativesWithExternalForces) {
  Data data(model()), fd_data(model());
  Rng rng(304);
  const VecX q = random_configuration(model(), rng), v = random_vector(model().nv(), rng),
             tau = random_vector(model().nv(), rng);
  std::vector<Force> f_ext(static_cast<std::size_t>(model().nbodies()));
  for (Force& f : f_ext) f = random_force(rng, 3.0);
  for (ReferenceFrame frame : {ReferenceFrame::World, ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
    aba_derivatives(model(), data, q, v, tau, f_ext, frame);
    const auto f = [&](const VecX& qq, const VecX& vv) -> VecX {
      return aba(model(), fd_data, qq, vv, tau, f_ext, frame);
    };
    const FdJacobians fd = finite_differences(model(), q, v, f);
    const double scale = f(q, v).cwiseAbs().maxCoeff();
    const std::string at = GetParam() + " " + to_string(frame) + " f_ext";
    expect_close(data.dqdd_dq, fd.dq, scale, at + " d qdd / d q");
    expect_close(data.dqdd_dv, fd.dv, scale, at + " d qdd / d v");
  }
}

INSTANTIATE_TEST_SUITE_P(Models, Derivatives, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// A single pendulum in closed form: tau = (I_o) qdd + m g l sin(q) about a horizontal axis,
// so d tau / d q = m g l cos(q) and d tau / d v = 0.
TEST(DerivativesClosedForm, Pendulum) {
  Model model;
  const double m = 2.0, l = 0.7;
  const int body = model.add_body(0, make_revolute(Vec3::UnitX()), Transform(),
                                  RigidBodyInertia::unchecked(m, Vec3(0, 0, -l), Mat3::Zero()), "link", "hinge");
  ASSERT_EQ(body, 1);
  Data data(model);
  const double q = 0.4, g = model.gravity().norm();
  rnea_derivatives(model, data, VecX::Constant(1, q), VecX::Constant(1, 1.3), VecX::Constant(1, -0.2));
  EXPECT_NEAR(data.dtau_dq(0, 0), m * g * l * std::cos(q), 1e-12 * m * g * l);
  EXPECT_NEAR(data.dtau_dv(0, 0), 0.0, 1e-14);
  EXPECT_NEAR(data.M(0, 0), m * l * l, 1e-14);
}

TEST(DerivativesErrors, BadArgumentsAreNamed) {
  const Model model = build_chain(4);
  Data data(model);
  const VecX q = VecX::Zero(4), v = VecX::Zero(4);
  try {
    rnea_derivatives(model, data, VecX::Zero(3), v, v);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("rnea_derivatives: q has size 3"), std::string::npos) << e.what();
  }
  VecX bad = v;
  bad[2] = std::nan("");
  EXPECT_THROW(aba_derivatives(model, data, q, bad, v), InvalidArgument);
  const Model other = build_chain(5);
  EXPECT_THROW(rnea_derivatives(other, data, VecX::Zero(5), VecX::Zero(5), VecX::Zero(5)),
               InvalidArgument);  // Data of another model
}

// Once the workspace exists, a call allocates nothing (alloc_count.hpp counts operator new).
TEST(DerivativesNoAllocation, WarmCallsAllocateNothing) {
  const Model model = build_humanoid(3, true);
  Data data(model);
  Rng rng(305);
  const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng),
             a = random_vector(model.nv(), rng);
  std::vector<Force> f_ext(static_cast<std::size_t>(model.nbodies()), Force(Vec3(0.1, 0, 0), Vec3(0, 1, 0)));
  rnea_derivatives(model, data, q, v, a, f_ext);
  aba_derivatives(model, data, q, v, a, f_ext, ReferenceFrame::Local);
#ifdef PLUCKER_COUNT_ALLOCATIONS
  const long n = alloc_count::allocations([&] {
    rnea_derivatives(model, data, q, v, a);
    rnea_derivatives(model, data, q, v, a, f_ext);
    aba_derivatives(model, data, q, v, a);
    aba_derivatives(model, data, q, v, a, f_ext, ReferenceFrame::Local);
  });
  EXPECT_EQ(n, 0);
#else
  GTEST_SKIP() << "allocations are not counted in this build (sanitizer or non-glibc)";
#endif
}

}  // namespace
