// Operational-space dynamics (include/plucker/algorithms/operational_space.hpp), the dense
// method: the identities of Khatib's quantities, Lambda^-1 against J M^-1 J^T with M^-1 from
// minv (the innovations operator, an independent O(N^2) path), the operational-space equation
// closed through forward dynamics (ABA), Jdot v against finite differences of J(q(t)) v in both
// task frames, frames offset from their body, row subsets, the two task frames related by the
// rotation, Featherstone's (1997) load independence of Jbar, errors, fixed and floating bases
// and the shared robots.
//
// Tolerances. Every quantity is a product of J, M^-1 and Lambda: a solve with M has relative
// forward error of order eps cond(M), the inverse of Lambda^-1 of order eps cond(Lambda^-1), and
// to first order the errors add. The identity checks are relative (to the norms of the terms, or
// to 1 + |N| for N, which is a projector or zero),
//   err <= kC eps cond,  kC = 100,  cond = cond(M) + cond(Lambda^-1)
// (cond(Lambda^-1) alone for Lambda Lambda^-1 = I, cond(M) alone for Lambda^-1 = J minv J^T),
// with the condition numbers from an eigen-solve; the largest observed err/tol over every model
// and state is printed with PLUCKER_TEST_VERBOSE=1 (RatioLog). The finite differences of
// J(q(t)) v are central with h = 1e-5: truncation h^2 |d^3(Jv)/dt^3| / 6 and rounding
// eps |J v| / h, both below 1e-9 for the states drawn (|v| <= 1); the tolerance is 1e-7 (1 + |Jdot v|).
#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <functional>
#include <map>
#include <memory>

#include "alloc_count.hpp"  // the allocation counter of test_no_allocation.cpp (same executable)
#include "dynamics_test_support.hpp"
#include "plucker/algorithms/operational_space.hpp"

namespace {

using namespace plucker;
using namespace plucker::test;

constexpr double kC = 100.0;
// Dca's tolerance is kDcaFactor times the others': its assembly subtracts the large inverse inertia
// of a light body from itself (Phi^B - G Y G^T), so its error grows with the mass ratio between a
// light body and the rest, which cond(M) + cond(Lambda^-1) does not fully capture; on the panda's
// 15 g fingers it reached 2.7x the common tolerance (measured), elsewhere below it.
constexpr double kDcaFactor = 10.0;
constexpr int kNumMethods = 5;
constexpr OperationalSpaceMethod kAllMethods[kNumMethods] = {
    OperationalSpaceMethod::Dense, OperationalSpaceMethod::Sparse, OperationalSpaceMethod::Recursive,
    OperationalSpaceMethod::Efpa, OperationalSpaceMethod::Dca};

// ------------------------------------------------------------------------------ models and tasks

/// A model and its tasks (by name, so that each case reads as what it controls).
struct TaskCase {
  std::string name;
  std::function<Model()> build;  // null: shared model `urdf`
  std::string urdf;
  RootJoint root = RootJoint::Fixed;
  std::vector<std::pair<std::string, TaskRows>> tasks;
};

/// The chain of build_chain(n) with a tool frame turned and offset from the last body.
Model chain_with_tool(int n) {
  Model model = build_chain(n, {Vec3::UnitZ(), Vec3::UnitY(), Vec3::UnitX()}, 21);
  model.add_frame("tool", model.nbodies() - 1,
                  Transform::axis_angle(Vec3(1.0, 2.0, -0.5), 0.7) * Transform::translation(Vec3(0.05, -0.12, 0.3)));
  return model;
}

const std::vector<TaskCase>& task_cases() {
  static const std::vector<TaskCase> cases = [] {
    std::vector<TaskCase> c;
    using TR = TaskRows;
    c.push_back({"chain7_tip", [] { return chain_with_tool(7); }, "", RootJoint::Fixed, {{"link6", TR::All}}});
    c.push_back({"chain7_tool", [] { return chain_with_tool(7); }, "", RootJoint::Fixed, {{"tool", TR::All}}});
    c.push_back({"chain9_tool_and_elbow",
                 [] { return chain_with_tool(9); },
                 "",
                 RootJoint::Fixed,
                 {{"tool", TR::All}, {"link5", TR::Position}}});
    c.push_back({"humanoid_floating_feet_hand",
                 [] { return build_humanoid(8, true); },
                 "",
                 RootJoint::Fixed,
                 {{"l_sole", TR::All}, {"r_sole", TR::All}, {"l_hand_tip", TR::Position}, {"head", TR::Orientation}}});
    c.push_back({"humanoid_fixed_hands",
                 [] { return build_humanoid(9, false); },
                 "",
                 RootJoint::Fixed,
                 {{"l_hand_tip", TR::All}, {"r_hand", TR::Position}}});
    c.push_back(
        {"quadruped_floating_feet",
         [] { return build_quadruped(10, true); },
         "",
         RootJoint::Fixed,
         {{"LF_FOOT", TR::Position}, {"RF_FOOT", TR::Position}, {"LH_FOOT", TR::Position}, {"trunk", TR::All}}});
    c.push_back({"chain30_tool_and_link12",
                 [] { return chain_with_tool(30); },
                 "",
                 RootJoint::Fixed,
                 {{"tool", TR::All}, {"link12", TR::Position}}});
    c.push_back({"binary_tree31_three_leaves",
                 [] { return build_random_tree(31, 2.0, 0.4, 0.9, 5); },
                 "",
                 RootJoint::Fixed,
                 {{"link16", TR::Position}, {"link23", TR::Position}, {"link31", TR::Position}}});
    c.push_back({"all_joints_tree",  // multi-DoF joints: free-flyer, spherical, planar, cylindrical, general
                 [] { return build_all_joints_tree(3); },
                 "",
                 RootJoint::Fixed,
                 {{"link_general2", TR::All},
                  {"link_prismatic", TR::Position},
                  {"link_helical", TR::All},
                  {"link_planar_tilted", TR::Orientation}}});
    c.push_back({"zoo_panda", nullptr, "panda", RootJoint::Fixed, {{"panda_hand_tcp", TR::All}}});
    // The panda with both finger joints (nv = 9; the hand branches into the two fingers).
    c.push_back({"zoo_panda_left_finger", nullptr, "panda", RootJoint::Fixed, {{"panda_leftfinger", TR::All}}});
    c.push_back({"zoo_panda_hand_and_right_finger",
                 nullptr,
                 "panda",
                 RootJoint::Fixed,
                 {{"panda_hand_tcp", TR::Orientation}, {"panda_rightfinger", TR::Position}}});
    c.push_back({"zoo_anymal_ff_feet",
                 nullptr,
                 "anymal",
                 RootJoint::FreeFlyer,
                 {{"LF_FOOT", TR::Position},
                  {"RF_FOOT", TR::Position},
                  {"LH_FOOT", TR::Position},
                  {"RH_FOOT", TR::Position},
                  {"base", TR::Orientation}}});
    c.push_back({"zoo_pr2_grippers",
                 nullptr,
                 "pr2",
                 RootJoint::Fixed,
                 {{"l_gripper_tool_frame", TR::All}, {"r_gripper_tool_frame", TR::All}}});
    c.push_back({"zoo_ur5", nullptr, "ur5", RootJoint::Fixed, {{"tool0", TR::All}}});
    c.push_back({"zoo_talos_full_ff",
                 nullptr,
                 "talos_full",
                 RootJoint::FreeFlyer,
                 {{"left_sole_link", TR::All},
                  {"right_sole_link", TR::All},
                  {"wrist_left_ft_tool_link", TR::All},
                  {"wrist_right_ft_tool_link", TR::Position}}});
    return c;
  }();
  return cases;
}

const Model* cached_model(const TaskCase& c) {
  static std::map<std::string, std::unique_ptr<Model>> cache;
  auto& m = cache[c.name];
  if (!m) {
    if (c.build) {
      m = std::make_unique<Model>(c.build());
    } else if (const std::string path = shared_model_path(c.urdf); !path.empty()) {
      m = std::make_unique<Model>(load_shared_model(path, c.root));
    }
  }
  return m.get();
}

std::vector<OperationalTask> make_tasks(const Model& model, const TaskCase& c) {
  std::vector<OperationalTask> tasks;
  for (const auto& [name, rows] : c.tasks) tasks.push_back(OperationalTask::named(model, name, rows));
  return tasks;
}

/// Random state away from the joint limits' corners: q random, |v| <= 1.
struct State {
  VecX q, v;
};
State random_state(const Model& model, Rng& rng) {
  return {random_configuration(model, rng), random_vector(model.nv(), rng)};
}

double rel(const MatX& a, const MatX& b) { return (a - b).norm() / std::max({a.norm(), b.norm(), 1e-300}); }

/// The 6x6 [R 0; 0 R] of a rotation.
Mat6 block_rotation(const Mat3& R) {
  Mat6 out = Mat6::Zero();
  out.topLeftCorner<3, 3>() = R;
  out.bottomRightCorner<3, 3>() = R;
  return out;
}

/// World -> task frame of a task (after forward_kinematics).
Transform task_transform(const Model& model, const Data& data, const OperationalTask& task) {
  return task.frame >= 0 ? frame_transform(model, data, task.frame) : data.X_base[task.body];
}

class OperationalSpace : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const auto& c : task_cases())
      if (c.name == GetParam()) case_ = &c;
    ASSERT_NE(case_, nullptr);
    model_ = cached_model(*case_);
    if (!model_) GTEST_SKIP() << "shared model " << case_->urdf << ".urdf not found (PLUCKER_SHARED_DIR)";
    tasks_ = make_tasks(*model_, *case_);
  }
  const Model& model() const { return *model_; }
  const TaskCase* case_ = nullptr;
  const Model* model_ = nullptr;
  std::vector<OperationalTask> tasks_;
};

// ---------------------------------------------------------------------- identities and paths

TEST_P(OperationalSpace, IdentitiesAndIndependentPaths) {
  static RatioLog log_inv("Lambda Lambda^-1 = I"), log_jjbar("J Jbar = I"), log_nn("N^2 = N"), log_jn("J N = 0"),
      log_nminv("N M^-1 = M^-1 N^T"), log_minv("Lambda^-1 vs J minv J^T"), log_sym("symmetry");
  Data data(model()), ref(model());
  Rng rng(31);
  for (int s = 0; s < 3 * kNumMethods; ++s) {
    const OperationalSpaceMethod method = kAllMethods[s % kNumMethods];
    const State st = random_state(model(), rng);
    const OperationalSpaceResults& r =
        operational_space(model(), data, st.q, st.v, tasks_, ReferenceFrame::Local, method);
    EXPECT_EQ(r.method, method);
    const int m = static_cast<int>(r.J.rows()), nv = model().nv();
    const MatX Im = MatX::Identity(m, m);
    const double cond_L = spectrum(r.Lambda_inv).cond();
    const Spectrum spM = spectrum(crba(model(), ref, st.q));
    const MatX M = ref.M;
    const MatX Minv = minv(model(), ref, st.q);
    const double cond_sum = cond_L + spM.cond();
    const double kc = method == OperationalSpaceMethod::Dca ? kDcaFactor * kC : kC;
    const std::string at = GetParam() + " " + to_string(method) + " state " + std::to_string(s);
    auto check = [&](RatioLog& log, double err, double tol, const char* what) {
      log.add(err, tol, at);
      EXPECT_LE(err, tol) << at << ": " << what;
    };
    check(log_sym, (r.Lambda - r.Lambda.transpose()).norm() + (r.Lambda_inv - r.Lambda_inv.transpose()).norm(), 0.0,
          "Lambda and Lambda^-1 exactly symmetric");
    check(log_inv, (r.Lambda * r.Lambda_inv - Im).norm(), kc * kEps * cond_L, "Lambda Lambda^-1 = I");
    check(log_jjbar, (r.J * r.Jbar - Im).norm(), kc * kEps * cond_sum, "J Jbar = I");
    // N is a projector (|N| >= 1) or zero (a square, regular J): errors relative to 1 + |N|.
    const double scale_N = 1.0 + r.N.norm();
    const MatX NN = r.N * r.N;
    check(log_nn, (NN - r.N).norm() / scale_N, kc * kEps * cond_sum, "N^2 = N");
    check(log_jn, (r.J * r.N).norm() / (r.J.norm() * scale_N), kc * kEps * cond_sum, "J N = 0");
    // N^T is the dynamically consistent projector: N M^-1 = M^-1 N^T (N M^-1 is symmetric).
    check(log_nminv, (r.N * Minv - Minv * r.N.transpose()).norm() / (Minv.norm() * scale_N), kc * kEps * cond_sum,
          "N M^-1 = M^-1 N^T");
    // Jbar = M^-1 J^T Lambda, i.e. M Jbar = J^T Lambda.
    check(log_jjbar, rel(M * r.Jbar, r.J.transpose() * r.Lambda), kc * kEps * cond_sum, "M Jbar = J^T Lambda");
    // Lambda^-1 against J M^-1 J^T with M^-1 from minv (paper 002 Lemma 6.4, no LTDL).
    check(log_minv, rel(r.Lambda_inv, r.J * Minv * r.J.transpose()), kc * kEps * spM.cond(), "Lambda^-1 = J minv J^T");
    EXPECT_EQ(r.N.rows(), nv);
  }
}

// Every method against the dense one (the basic matrix method), in all three frames: Lambda^-1,
// Lambda, Jbar, N and the bias. Each result carries a forward error of order eps cond (cond(M)
// for the solves with M, cond(Lambda^-1) for the inversion), so the tolerance is
// kC eps (cond(M) + cond(Lambda^-1)) relative to the larger norm (1 + |N| for N). Auto runs one of
// the four and says which.
TEST_P(OperationalSpace, AllMethodsAgreeWithDense) {
  static RatioLog log("methods vs dense");
  Data data(model()), ref(model()), dense_data(model());
  Rng rng(35);
  for (const ReferenceFrame frame : {ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned, ReferenceFrame::World}) {
    for (int s = 0; s < 2; ++s) {
      const State st = random_state(model(), rng);
      const OperationalSpaceResults d =
          operational_space(model(), dense_data, st.q, st.v, tasks_, frame, OperationalSpaceMethod::Dense);
      const double cond = spectrum(d.Lambda_inv).cond() + spectrum(crba(model(), ref, st.q)).cond();
      const double tol = kC * kEps * cond;
      for (const OperationalSpaceMethod method : kAllMethods) {
        const OperationalSpaceResults& r = operational_space(model(), data, st.q, st.v, tasks_, frame, method);
        const std::string at =
            GetParam() + " " + to_string(frame) + " " + to_string(method) + " state " + std::to_string(s);
        EXPECT_EQ(r.J, d.J) << at;  // the same code builds J
        const double errs[5] = {rel(r.Lambda_inv, d.Lambda_inv), rel(r.Lambda, d.Lambda), rel(r.Jbar, d.Jbar),
                                (r.N - d.N).norm() / (1.0 + d.N.norm()),
                                (r.bias - d.bias).norm() / (1.0 + d.bias.norm())};
        const char* names[5] = {"Lambda^-1", "Lambda", "Jbar", "N", "bias"};
        const double tol_m = method == OperationalSpaceMethod::Dca ? kDcaFactor * tol : tol;
        for (int k = 0; k < 5; ++k) {
          log.add(errs[k], tol_m, at + " " + names[k]);
          EXPECT_LE(errs[k], tol_m) << at << ": " << names[k];
        }
      }
      const OperationalSpaceResults& a = operational_space(model(), data, st.q, st.v, tasks_, frame);
      EXPECT_NE(a.method, OperationalSpaceMethod::Auto);
      EXPECT_EQ(a.method, operational_space_choice(model(), tasks_).method);
      EXPECT_LE(rel(a.Lambda, d.Lambda), tol) << GetParam() << " auto";
    }
  }
}

// The operational-space equation closed through forward dynamics: F = Lambda xdd + (mu + p),
// tau = J^T F, qdd = ABA(q, v, tau) gives J qdd + Jdot v = xdd, in both task frames.
TEST_P(OperationalSpace, EquationThroughForwardDynamics) {
  static RatioLog log("J qdd + Jdot v = xdd_des");
  Data data(model()), ref(model());
  Rng rng(32);
  for (const ReferenceFrame frame : {ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
    for (int s = 0; s < 2 * kNumMethods; ++s) {
      const OperationalSpaceMethod method = kAllMethods[s % kNumMethods];
      const State st = random_state(model(), rng);
      const OperationalSpaceResults& r = operational_space(model(), data, st.q, st.v, tasks_, frame, method);
      const VecX xdd = random_vector(static_cast<int>(r.J.rows()), rng, 2.0);
      const VecX F = r.Lambda * xdd + r.bias;
      const VecX tau = r.J.transpose() * F;
      const VecX qdd = aba(model(), ref, st.q, st.v, tau);
      const VecX got = r.J * qdd + r.Jdot_v;
      const double cond = spectrum(r.Lambda_inv).cond() + spectrum(crba(model(), ref, st.q)).cond();
      const double err = (got - xdd).norm() / (xdd.norm() + r.Jdot_v.norm() + 1.0);
      const double tol = std::max(1e-9, kC * kEps * cond);
      log.add(err, tol, GetParam() + " " + to_string(frame) + " " + to_string(method));
      EXPECT_LE(err, tol) << GetParam() << " " << to_string(frame) << " " << to_string(method) << " state " << s;
    }
  }
}

// Jdot v is d/dt (J(q(t)) v) along q(t) = integrate(q, v t) (v constant: qdd = 0), by central
// differences, in both task frames. With Local the linear rows are the spatial (not classical)
// acceleration of the frame origin in the frame's axes; with LocalWorldAligned the classical one.
TEST_P(OperationalSpace, JdotVIsTheDerivativeOfJv) {
  static RatioLog log("Jdot v vs finite differences");
  Data data(model());
  Rng rng(33);
  const double h = 1e-5;
  for (const ReferenceFrame frame : {ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
    for (int s = 0; s < 2; ++s) {
      const State st = random_state(model(), rng);
      const VecX jdv = operational_space(model(), data, st.q, st.v, tasks_, frame).Jdot_v;
      const VecX qp = integrate(model(), st.q, st.v, h), qm = integrate(model(), st.q, st.v, -h);
      const VecX jp = operational_space(model(), data, qp, st.v, tasks_, frame).J * st.v;
      const VecX jm = operational_space(model(), data, qm, st.v, tasks_, frame).J * st.v;
      const VecX fd = (jp - jm) / (2.0 * h);
      const double err = (fd - jdv).norm(), tol = 1e-7 * (1.0 + jdv.norm());
      log.add(err, tol, GetParam() + " " + to_string(frame));
      EXPECT_LE(err, tol) << GetParam() << " " << to_string(frame) << " state " << s << "\nfd   " << fd.transpose()
                          << "\ngot  " << jdv.transpose();
    }
  }
}

// The two task frames: J_lwa = R6 J_local with R6 = diag(R, R), R the frame's axes in the world;
// Lambda_lwa = R6^-T Lambda R6^-1 = R6 Lambda R6^T (row-wise for subsets), Jbar_lwa = Jbar R6^T,
// N the same.
TEST_P(OperationalSpace, LocalWorldAlignedIsTheRotatedLocal) {
  Data data(model()), ref(model());
  Rng rng(34);
  const State st = random_state(model(), rng);
  const OperationalSpaceResults local = operational_space(model(), data, st.q, st.v, tasks_, ReferenceFrame::Local);
  const OperationalSpaceResults lwa =
      operational_space(model(), data, st.q, st.v, tasks_, ReferenceFrame::LocalWorldAligned);
  const int m = static_cast<int>(local.J.rows());
  // T maps local rows to world-aligned rows: rows of R6 selected on both sides (a subset of the
  // angular or linear rows is closed under R only when complete, so build T on full 6-D rows).
  MatX T = MatX::Zero(m, m);
  int row = 0;
  bool all_complete = true;
  for (const OperationalTask& task : tasks_) {
    const int nr = task.num_rows;
    // Row-wise: lwa row i = R6 row rows[i] applied to the full 6-D local Jacobian of the frame,
    // F_X_B times body_jacobian's (the full 6-D task may be singular, so not operational_space).
    const Mat6 X_FB = task.frame >= 0 ? model().frames()[task.frame].X_body.matrix_motion() : Mat6::Identity();
    const MatX J6 = X_FB * body_jacobian(model(), ref, st.q, task.body, ReferenceFrame::Local);
    const Mat6 R6 = block_rotation(task_transform(model(), ref, task).rotation());
    for (int i = 0; i < nr; ++i)
      EXPECT_LE((lwa.J.row(row + i) - R6.row(task.rows[i]) * J6).norm(), 1e-12 * (1.0 + J6.norm()))
          << GetParam() << " row " << row + i;
    if (nr == 6) T.block(row, row, 6, 6) = R6;
    all_complete = all_complete && (nr == 6 || nr == 3);
    if (nr == 3) T.block(row, row, 3, 3) = R6.topLeftCorner<3, 3>();
    row += nr;
  }
  if (!all_complete) return;
  EXPECT_LE(rel(lwa.J, T * local.J), 1e-12);
  EXPECT_LE(rel(lwa.Lambda, T * local.Lambda * T.transpose()), 1e-8);
  EXPECT_LE(rel(lwa.Jbar, local.Jbar * T.transpose()), 1e-8);
  EXPECT_LE((lwa.N - local.N).norm(), 1e-8 * (1.0 + local.N.norm()));
}

const std::vector<std::string> kCaseNames = [] {
  std::vector<std::string> names;
  for (const auto& c : task_cases()) names.push_back(c.name);
  return names;
}();
INSTANTIATE_TEST_SUITE_P(Models, OperationalSpace, ::testing::ValuesIn(kCaseNames),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// ------------------------------------------------------------------------------ specific cases

// A frame offset from its body: J_F = F_X_B J_B (local axes), Jdot_v likewise, and the
// operational-space inertia transforms as an inertia, Lambda_F = F_X_B^-T Lambda_B F_X_B^-1.
TEST(OperationalSpaceFrames, OffsetFrameIsTheTransformedBody) {
  const Model model = chain_with_tool(7);
  Data data(model);
  Rng rng(40);
  const State st = random_state(model, rng);
  const int tool = model.frame_index("tool");
  const Transform X_FB = model.frames()[tool].X_body;
  const OperationalTask body[1] = {OperationalTask::of_body(model.frames()[tool].body)};
  const OperationalTask frame[1] = {OperationalTask::of_frame(model, tool)};
  const OperationalSpaceResults B = operational_space(model, data, st.q, st.v, body);
  const OperationalSpaceResults F = operational_space(model, data, st.q, st.v, frame);
  const Mat6 X = X_FB.matrix_motion(), Xf = X_FB.matrix_force();  // Xf = X^-T
  EXPECT_LE(rel(F.J, X * B.J), 1e-13);
  EXPECT_LE((F.Jdot_v - X * B.Jdot_v).norm(), 1e-13 * (1.0 + B.Jdot_v.norm()));
  EXPECT_LE(rel(F.Lambda, Xf * B.Lambda * Xf.transpose()), 1e-10);
  EXPECT_LE(rel(F.Jbar, B.Jbar * Xf.transpose()), 1e-10);
  EXPECT_LE(rel(F.bias, Xf * B.bias), 1e-10);
  EXPECT_LE((F.N - B.N).norm(), 1e-10 * B.N.norm());
}

// Row subsets: the rows of J and of Lambda^-1 are those of the full task, and Lambda of the subset
// is (S Lambda^-1 S^T)^-1, not S Lambda S^T. Given row indices keep their order.
TEST(OperationalSpaceRows, SubsetsSelectRowsOfTheFullTask) {
  const Model model = chain_with_tool(7);
  Data data(model);
  Rng rng(41);
  const State st = random_state(model, rng);
  const OperationalTask full_task = OperationalTask::named(model, "tool");
  const OperationalTask full[1] = {full_task};
  const OperationalSpaceResults R = operational_space(model, data, st.q, st.v, full);
  const std::vector<std::pair<OperationalTask, std::vector<int>>> subsets = {
      {OperationalTask::named(model, "tool", TaskRows::Position), {3, 4, 5}},
      {OperationalTask::named(model, "tool", TaskRows::Orientation), {0, 1, 2}},
      {full_task.with_rows(std::vector<int>{5, 0, 3}), {5, 0, 3}},
      {full_task.with_rows(std::vector<int>{4}), {4}},
  };
  for (const auto& [task, rows] : subsets) {
    const int k = static_cast<int>(rows.size());
    MatX S = MatX::Zero(k, 6);
    for (int i = 0; i < k; ++i) S(i, rows[i]) = 1.0;
    const OperationalTask one[1] = {task};
    const OperationalSpaceResults r = operational_space(model, data, st.q, st.v, one);
    EXPECT_TRUE(r.J == MatX(S * R.J));
    EXPECT_TRUE(r.Jdot_v == VecX(S * R.Jdot_v));
    EXPECT_LE(rel(r.Lambda_inv, S * R.Lambda_inv * S.transpose()), 1e-14);
    const MatX Lsub = (S * R.Lambda_inv * S.transpose()).inverse();
    EXPECT_LE(rel(r.Lambda, Lsub), 1e-10);
    if (k < 6) {
      EXPECT_GT(rel(r.Lambda, S * R.Lambda * S.transpose()), 1e-3) << "a subset's Lambda is not a block";
    }
  }
}

// Featherstone (1997): the dynamically consistent inverse is independent of the load. A payload
// on the body of a full 6-D task changes M by J_b^T I_L J_b; then Lambda gains exactly the
// payload's inertia in task coordinates (X^-T I_L X^-1) and Jbar does not change: M' Jbar =
// J^T Lambda + J^T A J Jbar = J^T (Lambda + A) = J^T Lambda'. With position rows only, the
// payload's rotational inertia is not reached by the task, and Jbar does change.
TEST(OperationalSpaceLoad, JbarIsIndependentOfTheLoad) {
  static RatioLog log("Jbar load-independence");
  const auto payload =
      RigidBodyInertia::from_mass_com_inertia(2.5, Vec3(0.03, -0.02, 0.11), Vec3(0.02, 0.015, 0.01).asDiagonal());
  struct Arm {
    std::string name;
    Model model;
    std::string frame;
  };
  std::vector<Arm> arms;
  arms.push_back({"chain7", chain_with_tool(7), "tool"});
  arms.push_back({"humanoid_fixed", build_humanoid(9, false), "l_hand_tip"});
  if (const std::string p = shared_model_path("panda"); !p.empty())
    arms.push_back({"panda", load_shared_model(p, RootJoint::Fixed), "panda_hand_tcp"});
  for (const Arm& arm : arms) {
    const Model& model = arm.model;
    Model loaded = model;
    const OperationalTask task = OperationalTask::named(model, arm.frame);
    loaded.add_inertia(task.body, payload);
    Data data(model), data_loaded(loaded);
    Rng rng(42);
    for (int s = 0; s < 3; ++s) {
      const State st = random_state(model, rng);
      for (const ReferenceFrame frame : {ReferenceFrame::Local, ReferenceFrame::LocalWorldAligned}) {
        const OperationalTask one[1] = {task};
        const OperationalSpaceMethod method = kAllMethods[(2 * s + (frame == ReferenceFrame::Local)) % kNumMethods];
        const OperationalSpaceResults r = operational_space(model, data, st.q, st.v, one, frame, method);
        const OperationalSpaceResults rl = operational_space(loaded, data_loaded, st.q, st.v, one, frame, method);
        const double cond = spectrum(r.Lambda_inv).cond() + spectrum(crba(model, data, st.q)).cond();
        const double err = rel(rl.Jbar, r.Jbar), tol = kC * kEps * cond;
        log.add(err, tol, arm.name);
        EXPECT_LE(err, tol) << arm.name << ": Jbar changed with the load";
        // Lambda' - Lambda is the payload inertia in task coordinates: the task rows are
        // T (body velocity), T = F_X_B (local) or R6 F_X_B (world-aligned), so A = T^-T I_L T^-1.
        forward_kinematics(model, data, st.q);
        Mat6 T = task.frame >= 0 ? model.frames()[task.frame].X_body.matrix_motion() : Mat6::Identity();
        if (frame == ReferenceFrame::LocalWorldAligned)
          T = block_rotation(frame_transform(model, data, task.frame).rotation()) * T;
        const Mat6 Tinv = T.inverse();
        const Mat6 A = Tinv.transpose() * payload.matrix() * Tinv;
        EXPECT_LE((rl.Lambda - r.Lambda - A).norm(), kC * kEps * cond * (r.Lambda.norm() + rl.Lambda.norm()))
            << arm.name;
        EXPECT_GT(rel(rl.Lambda, r.Lambda), 1e-3) << arm.name << ": Lambda should change with the load";
      }
      // Position rows only: the load's rotational inertia is not in the task; Jbar changes.
      const OperationalTask pos[1] = {OperationalTask::named(model, arm.frame, TaskRows::Position)};
      const MatX Jbar = operational_space(model, data, st.q, st.v, pos).Jbar;
      const MatX Jbar_loaded = operational_space(loaded, data_loaded, st.q, st.v, pos).Jbar;
      EXPECT_GT(rel(Jbar_loaded, Jbar), 1e-4) << arm.name << ": a position task's Jbar should depend on the load";
    }
  }
}

// ------------------------------------------------------------------------------ errors

/// A planar arm of n revolute joints about z with unit links along x, and a tip frame.
Model planar_arm(int n) {
  Model model("base");
  int parent = 0;
  for (int k = 0; k < n; ++k) {
    const auto I =
        RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0.5, 0.0, 0.0), Vec3(0.01, 0.08, 0.08).asDiagonal());
    parent =
        model.add_body(parent, JointRevoluteZ{}, k == 0 ? Transform() : Transform::translation(Vec3(1.0, 0.0, 0.0)), I,
                       "link" + std::to_string(k), "joint" + std::to_string(k));
  }
  model.add_frame("tip", parent, Transform::translation(Vec3(1.0, 0.0, 0.0)));
  model.add_frame("base_marker", 0, Transform::translation(Vec3(0.0, 1.0, 0.0)));
  return model;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OperationalSpaceErrors, SingularTasksNameTheRows) {
  const Model model = planar_arm(3);
  Data data(model);
  const VecX q = VecX::Constant(3, 0.3), v = VecX::Constant(3, 0.1);
  const OperationalTask tip = OperationalTask::named(model, "tip");
  // Two tasks on one frame: the second's row (linear x) repeats row 1 of the first.
  {
    const OperationalTask t[2] = {tip.with_rows(std::vector<int>{2, 3, 4}), tip.with_rows(std::vector<int>{3})};
    EXPECT_THROW(operational_space(model, data, q, v, t), SingularError);
    const std::string msg = error_of([&] { operational_space(model, data, q, v, t); });
    EXPECT_NE(msg.find("row 3 (task 1, frame 'tip', linear x) is a linear combination"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 x row 1 (task 0, frame 'tip', linear x)"), std::string::npos) << msg;
  }
  // A planar arm's out-of-plane rows are zero: no joint moves the tip along z or about x.
  {
    const OperationalTask t[1] = {tip};
    const std::string msg = error_of([&] { operational_space(model, data, q, v, t); });
    EXPECT_NE(msg.find("row 0 (task 0, frame 'tip', angular x) is zero"), std::string::npos) << msg;
  }
  // A frame on the base: nothing moves it.
  {
    const OperationalTask t[1] = {OperationalTask::named(model, "base_marker", TaskRows::Position)};
    const std::string msg = error_of([&] { operational_space(model, data, q, v, t); });
    EXPECT_NE(msg.find("frame 'base_marker', linear x) is zero"), std::string::npos) << msg;
  }
  // Dependent rows: a one-link arm's tip moves along local y exactly as fast as it turns about z
  // (unit lever arm): linear y = 1 x angular z.
  {
    const Model one = planar_arm(1);
    Data d1(one);
    const OperationalTask t[1] = {OperationalTask::named(one, "tip").with_rows(std::vector<int>{2, 4})};
    const std::string msg = error_of([&] { operational_space(one, d1, VecX::Zero(1), VecX::Zero(1), t); });
    EXPECT_NE(msg.find("row 1 (task 0, frame 'tip', linear y) is a linear combination of the rows before it: 1 x row 0 "
                       "(task 0, frame 'tip', angular z)"),
              std::string::npos)
        << msg;
  }
  // A kinematic singularity: the stretched two-link arm at q = (0.4, 0) moves its tip only
  // perpendicular to the arm; in world-aligned axes linear y = -cot(0.4) linear x (-2.365...).
  {
    const Model two = planar_arm(2);
    Data d2(two);
    const OperationalTask t[1] = {OperationalTask::named(two, "tip").with_rows(std::vector<int>{3, 4})};
    const VecX q2 = (VecX(2) << 0.4, 0.0).finished();
    const std::string msg =
        error_of([&] { operational_space(two, d2, q2, VecX::Zero(2), t, ReferenceFrame::LocalWorldAligned); });
    EXPECT_NE(msg.find("row 1 (task 0, frame 'tip', linear y) is a linear combination of the rows before it: "
                       "-2.36522"),
              std::string::npos)
        << msg;
    // In the tip's own axes the same singularity shows as a zero row (the arm is along local x).
    const std::string msg_local = error_of([&] { operational_space(two, d2, q2, VecX::Zero(2), t); });
    EXPECT_NE(msg_local.find("row 0 (task 0, frame 'tip', linear x) is zero"), std::string::npos) << msg_local;
    // Near (not at) the singularity the task is regular.
    const VecX qn = (VecX(2) << 0.4, 1e-3).finished();
    EXPECT_NO_THROW(operational_space(two, d2, qn, VecX::Zero(2), t, ReferenceFrame::LocalWorldAligned));
  }
  // Results are never left half-made: a regular call after a singular one is right.
  const OperationalTask ok[1] = {tip.with_rows(std::vector<int>{2, 3, 4})};
  const OperationalSpaceResults& r = operational_space(model, data, q, v, ok);
  EXPECT_LE((r.Lambda * r.Lambda_inv - MatX::Identity(3, 3)).norm(), 1e-10);
}

// Damping: Lambda = (J M^-1 J^T + damping^2 I)^-1 and Jbar = M^-1 J^T Lambda, checked against
// those formulas with M^-1 from minv (an independent path) and an Eigen LDLT, for every method,
// on a rank-deficient task (zero and dependent rows, reported in dependent_rows) and a regular
// one (no rows reported; Lambda -> the undamped one as damping -> 0). Tolerance: the damped
// matrix has cond <= (|Lambda^-1| + damping^2) / damping^2, so kC eps times that (plus cond(M)).
TEST(OperationalSpaceDamping, DampedLambdaIsTheRegularisedInverse) {
  const Model model = planar_arm(3);
  Data data(model), ref(model);
  const VecX q = VecX::Constant(3, 0.3), v = VecX::Constant(3, 0.1);
  const OperationalTask tip = OperationalTask::named(model, "tip");
  const MatX Minv = minv(model, ref, q);
  const double condM = spectrum(crba(model, ref, q)).cond();
  struct Case {
    std::vector<OperationalTask> tasks;
    std::vector<int> dependent;
  };
  const std::vector<Case> cases = {
      {{tip}, {0, 1, 5}},  // angular x, y and linear z of a planar arm's tip are zero
      {{tip.with_rows(std::vector<int>{2, 3, 4}), tip.with_rows(std::vector<int>{3})}, {3}},  // row 3 repeats row 1
      {{tip.with_rows(std::vector<int>{2, 3, 4})}, {}},                                       // regular
  };
  for (const Case& c : cases) {
    for (const double damping : {1e-3, 0.1, 2.0}) {
      OperationalSpaceOptions o;
      o.damping = damping;
      for (const OperationalSpaceMethod method : kAllMethods) {
        const OperationalSpaceResults& r =
            operational_space(model, data, q, v, c.tasks, ReferenceFrame::Local, method, o);
        const int m = static_cast<int>(r.J.rows());
        const MatX A = r.J * Minv * r.J.transpose() + damping * damping * MatX::Identity(m, m);
        const MatX Lambda = A.ldlt().solve(MatX::Identity(m, m));
        const double tol = kC * kEps * (condM + (A.norm() / (damping * damping)));
        const std::string at = to_string(method) + " damping " + std::to_string(damping);
        EXPECT_EQ(r.dependent_rows, c.dependent) << at;
        EXPECT_TRUE(r.Lambda.allFinite() && r.Jbar.allFinite() && r.N.allFinite() && r.bias.allFinite()) << at;
        EXPECT_LE(rel(r.Lambda, Lambda), tol) << at;
        EXPECT_LE(rel(r.Jbar, Minv * r.J.transpose() * Lambda), tol) << at;
      }
    }
  }
  // Regular task: damping -> 0 gives the undamped Lambda (the difference is O(damping^2)).
  const OperationalTask reg[1] = {tip.with_rows(std::vector<int>{2, 3, 4})};
  const MatX L0 = operational_space(model, data, q, v, reg).Lambda;
  OperationalSpaceOptions small;
  small.damping = 1e-6;
  const OperationalSpaceResults& r =
      operational_space(model, data, q, v, reg, ReferenceFrame::Local, OperationalSpaceMethod::Efpa, small);
  EXPECT_LE(rel(r.Lambda, L0), 1e-9);
  // A damping too small to lift a dependent row's pivot (rounding-sized) above the singularity
  // test is refused, by name (zero rows are regularised by any damping > 0: their pivot is
  // damping^2 against a reference of damping^2).
  OperationalSpaceOptions tiny;
  tiny.damping = 1e-12;
  const OperationalTask sing[2] = {tip.with_rows(std::vector<int>{2, 3, 4}), tip.with_rows(std::vector<int>{3})};
  const std::string msg = error_of(
      [&] { operational_space(model, data, q, v, sing, ReferenceFrame::Local, OperationalSpaceMethod::Sparse, tiny); });
  EXPECT_NE(msg.find("is too small to regularise"), std::string::npos) << msg;
}

// Outputs: asking for Lambda only leaves Jbar, N and bias empty and Lambda unchanged; asking
// for the bias alone with a recursive method needs no Jbar.
TEST(OperationalSpaceOutputs, OnlyWhatIsAskedFor) {
  const Model model = build_humanoid(4, true);
  Data data(model);
  Rng rng(7);
  const VecX q = random_configuration(model, rng), v = random_vector(model.nv(), rng);
  const OperationalTask t[2] = {OperationalTask::named(model, "l_sole"), OperationalTask::named(model, "r_hand_tip")};
  for (const OperationalSpaceMethod method : kAllMethods) {
    const OperationalSpaceResults full = operational_space(model, data, q, v, t, ReferenceFrame::Local, method);
    OperationalSpaceOptions o;
    o.outputs = kOutputLambda;
    const OperationalSpaceResults& r = operational_space(model, data, q, v, t, ReferenceFrame::Local, method, o);
    EXPECT_EQ(r.Jbar.size(), 0);
    EXPECT_EQ(r.N.size(), 0);
    EXPECT_EQ(r.bias.size(), 0);
    EXPECT_EQ(r.Lambda, full.Lambda) << to_string(method);
    o.outputs = kOutputBias;
    const OperationalSpaceResults& b = operational_space(model, data, q, v, t, ReferenceFrame::Local, method, o);
    EXPECT_EQ(b.bias, full.bias) << to_string(method);
    EXPECT_EQ(b.N.size(), 0);
  }
}

// The choice: Auto runs what operational_space_choice names; the reason names every method's
// prediction; to_string / parse round-trip.
TEST(OperationalSpaceChoice, AutoRunsTheChoice) {
  const Model model = build_humanoid(4, true);
  Data data(model);
  const OperationalTask t[4] = {OperationalTask::named(model, "l_sole"), OperationalTask::named(model, "r_sole"),
                                OperationalTask::named(model, "l_hand_tip"),
                                OperationalTask::named(model, "r_hand_tip")};
  const OperationalSpaceChoice c = operational_space_choice(model, t);
  for (const char* name : {"dense", "sparse", "recursive", "efpa"})
    EXPECT_NE(c.reason.find(name), std::string::npos) << c.reason;
  Rng rng(3);
  const VecX q = random_configuration(model, rng);
  EXPECT_EQ(operational_space(model, data, q, VecX::Zero(model.nv()), t).method, c.method);
  for (const OperationalSpaceMethod m : operational_space_methods())
    EXPECT_EQ(parse_operational_space_method(to_string(m)), m);
  EXPECT_EQ(operational_space_methods().size(), 6u);
}

TEST(OperationalSpaceErrors, SingularMassMatrixNamesTheJoint) {
  Model model = planar_arm(2);
  model.add_body(2, JointRevoluteX{}, Transform(), RigidBodyInertia(), "massless", "massless_joint");
  Data data(model);
  const OperationalTask t[1] = {
      OperationalTask::named(model, "tip", TaskRows::Position).with_rows(std::vector<int>{3, 4})};
  const std::string msg = error_of([&] { operational_space(model, data, VecX::Constant(3, 0.2), VecX::Zero(3), t); });
  EXPECT_NE(msg.find("operational_space"), std::string::npos) << msg;
  EXPECT_NE(msg.find("massless_joint"), std::string::npos) << msg;
}

TEST(OperationalSpaceErrors, BadArguments) {
  const Model model = planar_arm(3);
  Data data(model);
  const VecX q = VecX::Constant(3, 0.3), v = VecX::Zero(3);
  const OperationalTask t[1] = {OperationalTask::named(model, "tip").with_rows(std::vector<int>{2, 3, 4})};
  auto expect_invalid = [&](auto&& f, const std::string& needle) {
    const std::string msg = error_of(f);
    EXPECT_NE(msg.find(needle), std::string::npos) << "'" << msg << "' should contain '" << needle << "'";
    EXPECT_THROW(f(), InvalidArgument);
  };
  expect_invalid([&] { OperationalTask::named(model, "nowhere"); }, "no body or frame named 'nowhere'");
  expect_invalid([&] { operational_space(model, data, VecX::Zero(2), v, t); }, "operational_space: q has size 2");
  expect_invalid([&] { operational_space(model, data, q, VecX::Zero(4), t); }, "operational_space: v has size 4");
  VecX bad = v;
  bad[1] = NAN;
  expect_invalid([&] { operational_space(model, data, q, bad, t); }, "operational_space: v");
  expect_invalid([&] { operational_space(model, data, q, v, std::span<const OperationalTask>{}); }, "no tasks given");
  const OperationalTask far = OperationalTask::of_body(9);
  expect_invalid([&] { operational_space(model, data, q, v, std::span(&far, 1)); }, "task 0: body index 9");
  OperationalTask badrow = t[0];
  badrow.rows[1] = 6;
  expect_invalid([&] { operational_space(model, data, q, v, std::span(&badrow, 1)); },
                 "task 0 (frame 'tip'): row 6 out of range");
  OperationalTask twice = t[0];
  twice.rows[1] = 2;
  expect_invalid([&] { operational_space(model, data, q, v, std::span(&twice, 1)); },
                 "task 0 (frame 'tip'): row 2 (angular z) given twice");
  OperationalTask norows = t[0];
  norows.num_rows = 0;
  expect_invalid([&] { operational_space(model, data, q, v, std::span(&norows, 1)); }, "0 rows, expected 1 to 6");
  OperationalTask badframe = t[0];
  badframe.frame = 7;
  expect_invalid([&] { operational_space(model, data, q, v, std::span(&badframe, 1)); },
                 "task 0: frame index 7 out of range");
  expect_invalid([&] { OperationalTask::of_frame(model, -2); }, "frame index -2 out of range");
  expect_invalid([&] { parse_reference_frame("spatial"); }, "unknown reference frame 'spatial'");
  expect_invalid([&] { parse_operational_space_method("banana"); }, "unknown operational-space method 'banana'");
  for (const double bad_damping : {-1.0, double(NAN), double(INFINITY)}) {
    OperationalSpaceOptions o;
    o.damping = bad_damping;
    expect_invalid(
        [&] { operational_space(model, data, q, v, t, ReferenceFrame::Local, OperationalSpaceMethod::Auto, o); },
        "damping must be finite and >= 0");
  }
  OperationalSpaceOptions bad_outputs;
  bad_outputs.outputs = 8;
  expect_invalid(
      [&] {
        operational_space(model, data, q, v, t, ReferenceFrame::Local, OperationalSpaceMethod::Auto, bad_outputs);
      },
      "outputs 8 has bits outside");
  expect_invalid([&] { operational_space(model, data, q, v, t, ReferenceFrame::Local, OperationalSpaceMethod(9)); },
                 "unknown method 9");
  Data other(planar_arm(2));
  EXPECT_THROW(operational_space(model, other, q, v, t), InvalidArgument);
}

// ------------------------------------------------------------------------------ the hybrid DCA

/// Lambda^-1 and Lambda of Dca against Dense, relative error <= 100 eps (cond(M) + cond(Lambda^-1)).
/// With damping > 0 both are damped (tasks with more rows than the chain has DoFs).
void expect_dca_matches_dense(const Model& model, std::span<const OperationalTask> tasks, int segment, Rng& rng,
                              const std::string& at, double damping = 0.0) {
  static RatioLog log("dca vs dense");
  Data data(model), ref(model);
  const State st = random_state(model, rng);
  OperationalSpaceOptions o;
  o.damping = damping;
  const OperationalSpaceResults d =
      operational_space(model, ref, st.q, st.v, tasks, ReferenceFrame::Local, OperationalSpaceMethod::Dense, o);
  o.dca_segment = segment;
  const OperationalSpaceResults& r =
      operational_space(model, data, st.q, st.v, tasks, ReferenceFrame::Local, OperationalSpaceMethod::Dca, o);
  const MatX A = d.Lambda_inv + damping * damping * MatX::Identity(d.Lambda_inv.rows(), d.Lambda_inv.rows());
  const double tol = kC * kEps * (spectrum(crba(model, ref, st.q)).cond() + spectrum(A).cond());
  EXPECT_EQ(r.method, OperationalSpaceMethod::Dca);
  EXPECT_LE(rel(r.Lambda_inv, d.Lambda_inv), tol) << at;
  EXPECT_LE(rel(r.Lambda, d.Lambda), tol) << at;
  EXPECT_LE(rel(r.Jbar, d.Jbar), tol) << at;
  EXPECT_LE((r.bias - d.bias).norm() / (1.0 + d.bias.norm()), tol) << at;
  log.add(rel(r.Lambda_inv, d.Lambda_inv), tol, at);
}

// Chains of several lengths (1 to 64 DoFs; with fewer DoFs than task rows both are damped), the task on
// the tip and on the middle, with the
// pure DCA (segment 1), the default segment and one serial subchain (segment = N).
TEST(OperationalSpaceDca, ChainsOfSeveralLengthsAgreeWithDense) {
  Rng rng(41);
  for (const int n : {1, 2, 3, 5, 8, 17, 33, 64}) {
    const Model model = chain_with_tool(n);
    std::vector<OperationalTask> tasks{OperationalTask::named(model, "tool")};
    if (n >= 3) tasks.push_back(OperationalTask::named(model, "link" + std::to_string(n / 2), TaskRows::Position));
    const int rows = n >= 3 ? 9 : 6;
    for (const int segment : {1, 0, 3, n + 1})
      expect_dca_matches_dense(model, tasks, segment, rng,
                               "chain " + std::to_string(n) + " segment " + std::to_string(segment),
                               n < rows ? 0.05 : 0.0);  // fewer DoFs than task rows: damped
  }
}

// Every joint kind in one serial chain (free-flyer base, spherical, planar, cylindrical, helical,
// revolute and prismatic about general axes, a general 2-DoF joint), and a massless link in the
// middle (a body of singular inertia: the virtual handle's correction at the root).
TEST(OperationalSpaceDca, SerialChainOfEveryJointKindAndAMasslessLink) {
  const RigidBodyInertia I = RigidBodyInertia::from_mass_com_inertia(
      1.3, Vec3(0.02, -0.01, 0.1), (Mat3() << 0.02, 0.001, 0, 0.001, 0.025, 0.002, 0, 0.002, 0.01).finished());
  const Transform X = Transform::axis_angle(Vec3(0.3, 1.0, 0.2), 0.4) * Transform::translation(Vec3(0.05, 0.0, 0.3));
  JointHelical helical;
  helical.axis = Vec3(0.6, 0.0, 0.8);
  helical.pitch = 0.1;
  JointCylindrical cylindrical;
  cylindrical.axis = Vec3(0.0, 0.6, -0.8);
  Model model;
  int b = model.add_body(0, JointFreeFlyer{}, Transform(), I, "b1", "j1");
  b = model.add_body(b, JointSpherical{}, X, I, "b2", "j2");
  b = model.add_body(b, JointRevolute(Vec3(0.3, -0.4, 0.866).normalized()), X, I, "b3", "j3");
  b = model.add_body(b, JointRevoluteY{}, X, RigidBodyInertia(), "massless", "j4");
  b = model.add_body(b, JointPlanar{}, X, I, "b5", "j5");
  b = model.add_body(b, cylindrical, X, I, "b6", "j6");
  b = model.add_body(b, helical, X, I, "b7", "j7");
  b = model.add_body(b, JointPrismatic(Vec3(1.0, 2.0, -0.5).normalized()), X, I, "b8", "j8");
  b = model.add_body(b, JointPrismaticZ{}, X, I, "b9", "j9");
  b = model.add_body(b, JointRevoluteX{}, X, I, "b10", "j10");
  Rng rng(43);
  const std::vector<OperationalTask> tip{OperationalTask::named(model, "b10")};
  const std::vector<OperationalTask> several{OperationalTask::named(model, "b10"),
                                             OperationalTask::named(model, "b6", TaskRows::Position),
                                             OperationalTask::named(model, "massless", TaskRows::Orientation)};
  for (const int segment : {1, 0, 4, 20}) {
    expect_dca_matches_dense(model, tip, segment, rng, "every joint, tip, segment " + std::to_string(segment));
    expect_dca_matches_dense(model, several, segment, rng, "every joint, 3 tasks, segment " + std::to_string(segment));
  }
  // The builders' tree of every joint kind (free-flyer, spherical, planar, cylindrical, helical,
  // general joints), with branches.
  const Model tree = build_all_joints_tree(3);
  const std::vector<OperationalTask> tt{OperationalTask::named(tree, "link_general2"),
                                        OperationalTask::named(tree, "link_helical", TaskRows::Position)};
  for (const int segment : {1, 0, 100}) expect_dca_matches_dense(tree, tt, segment, rng, "all_joints_tree");
}

// threads = k gives results bit-identical to threads = 1 (the same arithmetic per node).
TEST(OperationalSpaceDca, ThreadsGiveBitIdenticalResults) {
  for (const Model& model : {chain_with_tool(64), build_humanoid(8, true)}) {
    std::vector<OperationalTask> tasks;
    if (model.nv() == 64) {
      tasks = {OperationalTask::named(model, "tool"), OperationalTask::named(model, "link20", TaskRows::Position)};
    } else {
      for (const char* name : {"l_sole", "r_sole", "l_hand_tip", "r_hand_tip"})
        tasks.push_back(OperationalTask::named(model, name));
    }
    Data data(model);
    Rng rng(47);
    const State st = random_state(model, rng);
    for (const int segment : {1, 0}) {
      OperationalSpaceOptions o;
      o.dca_segment = segment;
      const OperationalSpaceResults one =
          operational_space(model, data, st.q, st.v, tasks, ReferenceFrame::Local, OperationalSpaceMethod::Dca, o);
      for (const int threads : {2, 3, 4, 8}) {
        o.threads = threads;
        for (int rep = 0; rep < 3; ++rep) {
          const OperationalSpaceResults& r =
              operational_space(model, data, st.q, st.v, tasks, ReferenceFrame::Local, OperationalSpaceMethod::Dca, o);
          EXPECT_EQ(r.Lambda_inv, one.Lambda_inv) << threads;
          EXPECT_EQ(r.Lambda, one.Lambda) << threads;
          EXPECT_EQ(r.Jbar, one.Jbar) << threads;
        }
      }
    }
  }
}

// The critical path grows as log N for the default segment (ceil(log2 N) bodies per subchain):
// from N = 64 to N = 1024 (log2 N from 6 to 10) it grows by less than 10/6 x 1.5, while the
// total work grows about 16x; with one serial subchain (segment > N) it grows as N.
TEST(OperationalSpaceDca, CriticalPathGrowsAsLogN) {
  auto cost = [](int n, int segment) {
    const Model model = build_chain(n, {Vec3::UnitZ(), Vec3::UnitY()}, 3);
    const OperationalTask t[1] = {OperationalTask::of_body(n)};
    return operational_space_dca_cost(model, t, segment);
  };
  const OperationalSpaceDcaCost c64 = cost(64, 0), c1024 = cost(1024, 0);
  EXPECT_EQ(c64.segment, 7);  // ceil(log2 65)
  EXPECT_EQ(c1024.segment, 11);
  EXPECT_LT(static_cast<double>(c1024.critical_path) / c64.critical_path, 1.5 * 10.0 / 6.0);
  EXPECT_GT(static_cast<double>(c1024.total) / c64.total, 12.0);
  EXPECT_LE(c1024.levels, 11 + 8);  // the subchain's steps + log2(subchains) + 1
  const OperationalSpaceDcaCost s64 = cost(64, 1000), s1024 = cost(1024, 2000);
  EXPECT_EQ(s64.subchains, 1);
  EXPECT_GT(static_cast<double>(s1024.critical_path) / s64.critical_path, 12.0);
  EXPECT_THROW(cost(8, -1), InvalidArgument);
}

TEST(OperationalSpaceDca, BadOptionsAreRefusedByName) {
  const Model model = chain_with_tool(5);
  Data data(model);
  const OperationalTask t[1] = {OperationalTask::named(model, "tool")};
  const VecX q = VecX::Constant(5, 0.3), v = VecX::Zero(5);
  OperationalSpaceOptions o;
  o.threads = 0;
  const std::string msg =
      error_of([&] { operational_space(model, data, q, v, t, ReferenceFrame::Local, OperationalSpaceMethod::Dca, o); });
  EXPECT_NE(msg.find("threads must be at least 1, got 0"), std::string::npos) << msg;
  o.threads = 1;
  o.dca_segment = -2;
  const std::string msg2 =
      error_of([&] { operational_space(model, data, q, v, t, ReferenceFrame::Local, OperationalSpaceMethod::Dca, o); });
  EXPECT_NE(msg2.find("dca_segment must be >= 0"), std::string::npos) << msg2;
  EXPECT_EQ(parse_operational_space_method("dca"), OperationalSpaceMethod::Dca);
}

// A warm call allocates nothing: one thread and four, Lambda only and all outputs, damped.
TEST(OperationalSpaceDca, WarmCallsAllocateNothing) {
#if PLUCKER_COUNT_ALLOCATIONS
  const Model model = build_humanoid(6, true);
  Data data(model);
  Rng rng(53);
  const State st = random_state(model, rng);
  const OperationalTask t[3] = {OperationalTask::named(model, "l_sole"), OperationalTask::named(model, "r_hand_tip"),
                                OperationalTask::named(model, "head", TaskRows::Orientation)};
  for (const int threads : {1, 4})
    for (const unsigned outputs : {unsigned{kOutputLambda}, unsigned{kOutputAll}}) {
      OperationalSpaceOptions o;
      o.threads = threads;
      o.outputs = outputs;
      o.damping = threads == 4 ? 0.01 : 0.0;
      auto call = [&] {
        operational_space(model, data, st.q, st.v, t, ReferenceFrame::Local, OperationalSpaceMethod::Dca, o);
      };
      call();
      EXPECT_EQ(alloc_count::allocations(call), 0) << threads << " threads, outputs " << outputs;
    }
#else
  GTEST_SKIP() << "allocation counting needs glibc without a sanitizer";
#endif
}

// A singular M (a massless body at the tip of a planar arm) is refused by name, not NaN.
TEST(OperationalSpaceDca, SingularMassMatrixIsNamed) {
  Model model = planar_arm(2);
  model.add_body(2, JointRevoluteX{}, Transform(), RigidBodyInertia(), "massless", "massless_joint");
  Data data(model);
  const OperationalTask t[1] = {
      OperationalTask::named(model, "tip", TaskRows::Position).with_rows(std::vector<int>{3, 4})};
  const std::string msg = error_of([&] {
    operational_space(model, data, VecX::Constant(3, 0.2), VecX::Zero(3), t, ReferenceFrame::Local,
                      OperationalSpaceMethod::Dca);
  });
  EXPECT_NE(msg.find("method 'dca'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("massless"), std::string::npos) << msg;
  EXPECT_THROW(operational_space(model, data, VecX::Constant(3, 0.2), VecX::Zero(3), t, ReferenceFrame::Local,
                                 OperationalSpaceMethod::Dca),
               SingularError);
}

}  // namespace
