// Batched algorithms (include/plucker/algorithms/batch.hpp): each column agrees with the
// single-state algorithm to rounding, for any thread count and batch size (groups of W
// states in SIMD lanes, tails and unsupported joint kinds per state); the batched results
// also satisfy identities of their own (ABA inverts RNEA; CRBA columns are RNEA
// differences); bad batches are refused before any work with errors that name the state.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dynamics_test_support.hpp"

namespace plucker::test {
namespace {

struct States {
  MatX Q, V, A;
};

States random_states(const Model& model, int B, std::uint64_t seed) {
  Rng rng(seed);
  States s{MatX(model.nq(), B), MatX(model.nv(), B), MatX(model.nv(), B)};
  for (int b = 0; b < B; ++b) {
    s.Q.col(b) = random_configuration(model, rng);
    s.V.col(b) = random_vector(model.nv(), rng);
    s.A.col(b) = random_vector(model.nv(), rng);
  }
  return s;
}

/// aba_batch(s) (A as tau) raises a SingularError whose text contains `state` and `joint`.
void expect_aba_batch_singular(const Model& model, BatchWorkspace& ws, const States& s, const std::string& state,
                               const std::string& joint) {
  MatX qdd(model.nv(), s.Q.cols());
  try {
    aba_batch(model, ws, s.Q, s.V, s.A, qdd);
    ADD_FAILURE() << "no SingularError";
  } catch (const SingularError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(state), std::string::npos) << what;
    EXPECT_NE(what.find(joint), std::string::npos) << what;
  }
}

// Tolerances. The lanes evaluate the formulas of the single-state recursions in a different
// order and with different fused multiply-adds, so the two differ by rounding only:
//  * RNEA and CRBA are sums of products accumulated along the tree: each result differs by a
//    few eps times the magnitude of the terms summed, which the norm of the result (plus, for
//    RNEA, the gravity and velocity terms it contains) bounds up to a factor growing with the
//    depth. kBatchTol = 1e-12 relative to the norm of the whole result vector / matrix is
//    ~4500 eps: observed errors are below 1e-14 relative, and a wrong term is O(1).
//  * ABA solves M qdd = tau - c: its forward error is bounded by c eps cond(M) (|qdd| +
//    |tau - c| / |M|) (dynamics_test_support.hpp's solve_tol), so two backward-stable
//    evaluations may differ by twice that.
constexpr double kBatchTol = 1e-12;

/// A model of every joint kind that has a lane kernel: free-flyer root, fixed, revolute and
/// prismatic about x, y, z and a general axis, spherical. depth_first = false numbers the
/// bodies breadth-first, so that the subtrees' velocities are not contiguous (the CRBA then
/// runs per state).
Model build_lane_kinds(bool depth_first) {
  Rng rng(42);
  auto inertia = [&] {
    const Vec3 c = random_vector(3, rng, 0.1);
    const Vec3 d = Vec3(0.02, 0.03, 0.04) + random_vector(3, rng, 0.01).cwiseAbs();
    return RigidBodyInertia::from_mass_com_inertia(1.0 + static_cast<double>(rng() % 3), c, Mat3(d.asDiagonal()));
  };
  auto place = [&] { return Transform::from_rpy_xyz(random_vector(3, rng, 0.4), random_vector(3, rng, 0.3)); };
  const std::vector<JointModel> kinds = {
      JointRevoluteX{},  JointRevoluteY{},  JointRevoluteZ{},  make_revolute(Vec3(1, 2, 3)),
      JointPrismaticX{}, JointPrismaticY{}, JointPrismaticZ{}, make_prismatic(Vec3(-1, 0.5, 2)),
      JointSpherical{},  JointFixed{}};
  Model model;
  const int root = model.add_body(0, JointFreeFlyer{}, Transform(), inertia(), "root", "root_joint");
  if (depth_first) {  // two chains of five, one after the other
    for (int chain = 0; chain < 2; ++chain) {
      int parent = root;
      for (int k = 0; k < 5; ++k) {
        const std::string name = "c" + std::to_string(chain) + "_" + std::to_string(k);
        parent = model.add_body(parent, kinds[5 * chain + k], place(), inertia(), name, name + "_joint");
      }
    }
  } else {  // the same two chains, bodies added alternately
    int parent[2] = {root, root};
    for (int k = 0; k < 5; ++k)
      for (int chain = 0; chain < 2; ++chain) {
        const std::string name = "c" + std::to_string(chain) + "_" + std::to_string(k);
        parent[chain] = model.add_body(parent[chain], kinds[5 * chain + k], place(), inertia(), name, name + "_joint");
      }
  }
  return model;
}

struct BatchCase {
  std::string name;
  Model model;
};

/// Builders (chains with axis-aligned and general axes, random trees, humanoid and
/// quadruped with free-flyer roots), the lane-kinds models, the all-joint-kinds model (which
/// runs per state) and the zoo robots, when the shared models are present.
std::vector<BatchCase> batch_cases() {
  std::vector<BatchCase> c;
  c.push_back({"chain7", build_chain(7)});
  c.push_back({"chain12_general_axes", build_chain(12, {Vec3(1, 1, 0), Vec3(0, 1, 1), Vec3::UnitX()}, 2)});
  c.push_back({"tree_binary15_skew", build_random_tree(15, 2.0, 0.7, 0.9, 4)});
  c.push_back({"humanoid_floating", build_humanoid(3)});
  c.push_back({"quadruped_floating", build_quadruped(8)});
  c.push_back({"quadruped_fixed", build_quadruped(9, false)});
  c.push_back({"lane_kinds", build_lane_kinds(true)});
  c.push_back({"lane_kinds_breadth_first", build_lane_kinds(false)});
  c.push_back({"all_joints", build_all_joints_tree(5)});
  for (const char* arm : {"ur5", "panda", "iiwa14", "chain32"})
    if (const std::string path = shared_model_path(arm); !path.empty())
      c.push_back({arm, load_shared_model(path, RootJoint::Fixed)});
  for (const char* robot : {"talos_full", "solo12", "anymal", "hyq", "icub", "simple_humanoid", "romeo_small"})
    if (const std::string path = shared_model_path(robot); !path.empty())
      c.push_back({std::string(robot) + "_free", load_shared_model(path, RootJoint::FreeFlyer)});
  return c;
}

std::vector<int> batch_sizes() {
  const int W = batch_lanes();
  return {0, 1, W - 1, W, 2 * W + 3};
}

template <class F>
void expect_message(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected one mentioning '" << needle << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

/// The single-state results of every state, and the bounds the batched ones are held to.
struct Reference {
  MatX tau, qdd, M;
  VecX aba_tol;  ///< per state
};

Reference single_state_reference(const Model& model, const States& s) {
  Data data(model);
  const int nv = model.nv(), B = static_cast<int>(s.Q.cols());
  Reference r{MatX(nv, B), MatX(nv, B), MatX(nv, nv * B), VecX(B)};
  for (int b = 0; b < B; ++b) {
    r.tau.col(b) = rnea(model, data, s.Q.col(b), s.V.col(b), s.A.col(b));
    r.qdd.col(b) = aba(model, data, s.Q.col(b), s.V.col(b), s.A.col(b));  // A used as tau
    r.M.middleCols(b * nv, nv) = crba(model, data, s.Q.col(b));
    const VecX rhs = s.A.col(b) - nonlinear_effects(model, data, s.Q.col(b), s.V.col(b));
    r.aba_tol[b] = 2.0 * solve_tol(spectrum(r.M.middleCols(b * nv, nv)), r.qdd.col(b).norm(), rhs.norm());
  }
  return r;
}

/// Max over the states of |batched - single| / |single| (RNEA, CRBA: by norms of whole
/// results) or |batched - single| / aba_tol (ABA), logged for PLUCKER_TEST_VERBOSE.
void expect_agreement(const Model& model, const Reference& r, const MatX& tau, const MatX& qdd, const MatX& M,
                      const std::string& where) {
  static RatioLog log_rnea("batch rnea vs rnea"), log_aba("batch aba vs aba"), log_crba("batch crba vs crba");
  const int nv = model.nv();
  for (int b = 0; b < static_cast<int>(tau.cols()); ++b) {
    const std::string at = where + " state " + std::to_string(b);
    const double e_tau = (tau.col(b) - r.tau.col(b)).norm(), t_tau = kBatchTol * std::max(1.0, r.tau.col(b).norm());
    EXPECT_LE(e_tau, t_tau) << at;
    log_rnea.add(e_tau, t_tau, at);
    const double e_qdd = (qdd.col(b) - r.qdd.col(b)).norm();
    EXPECT_LE(e_qdd, r.aba_tol[b]) << at;
    log_aba.add(e_qdd, r.aba_tol[b], at);
    const auto Mb = M.middleCols(b * nv, nv), Mr = r.M.middleCols(b * nv, nv);
    const double e_M = (Mb - Mr).norm(), t_M = kBatchTol * Mr.norm();
    EXPECT_LE(e_M, t_M) << at;
    log_crba.add(e_M, t_M, at);
  }
}

TEST(Batch, AgreesWithTheSingleStateLoopForAnyThreadCountAndBatchSize) {
  for (const BatchCase& c : batch_cases()) {
    const Model& model = c.model;
    const int nv = model.nv();
    for (int B : batch_sizes()) {
      const States s = random_states(model, B, 100 + B);
      const Reference ref = single_state_reference(model, s);
      MatX first_tau, first_qdd, first_M;  // with 1 thread
      for (int threads : {1, 2, 3}) {
        const std::string where = c.name + " B=" + std::to_string(B) + " threads=" + std::to_string(threads);
        SCOPED_TRACE(where);
        BatchWorkspace ws(model, threads);
        EXPECT_EQ(ws.threads(), threads);
        MatX tau(nv, B), qdd(nv, B), M(nv, nv * B);
        for (int repeat = 0; repeat < 2; ++repeat) {  // the workspace is reusable: the same bits again
          const double nan = std::numeric_limits<double>::quiet_NaN();  // every output entry is written
          tau.setConstant(nan);
          qdd.setConstant(nan);
          M.setConstant(nan);
          rnea_batch(model, ws, s.Q, s.V, s.A, tau);
          aba_batch(model, ws, s.Q, s.V, s.A, qdd);  // A used as tau
          crba_batch(model, ws, s.Q, M);
          expect_agreement(model, ref, tau, qdd, M, where);
          if (repeat == 0) {
            first_tau = tau;
            first_qdd = qdd;
            first_M = M;
          } else {
            EXPECT_TRUE(tau == first_tau && qdd == first_qdd && M == first_M);
          }
        }
        // The convenience forms run the same code on a workspace of their own.
        EXPECT_TRUE(rnea_batch(model, s.Q, s.V, s.A, threads) == tau);
        EXPECT_TRUE(aba_batch(model, s.Q, s.V, s.A, threads) == qdd);
        EXPECT_TRUE(crba_batch(model, s.Q, threads) == M);
      }
    }
  }
}

// The lanes reduce the angles by pi/2 themselves: every quadrant, ties between quadrants,
// and angles past kSinCosLarge (libm lane by lane).
TEST(Batch, AnglesOfAnySizeAndQuadrant) {
  const Model model = build_chain(5, {Vec3::UnitZ(), Vec3(1, 2, 3)}, 3);  // axis-aligned and general axes
  const int nv = model.nv(), B = 4 * batch_lanes();
  States s = random_states(model, B, 11);
  const double quarter = std::acos(-1.0) / 4.0;
  for (int b = 0; b < B; ++b)
    for (int k = 0; k < nv; ++k) s.Q(k, b) = quarter * (b - B / 2) + 1e-3 * k;  // near odd multiples of pi/4
  s.Q(0, 1) = 3e5;
  s.Q(2, B - 2) = -7.25e5;
  s.Q(1, B / 2) = 1234.5;
  const Reference ref = single_state_reference(model, s);
  MatX tau = rnea_batch(model, s.Q, s.V, s.A, 1), qdd = aba_batch(model, s.Q, s.V, s.A, 1);
  MatX M = crba_batch(model, s.Q, 1);
  expect_agreement(model, ref, tau, qdd, M, "angles");
}

// Every joint kind runs in the lanes (one joint library for one state and for W states): the
// helical, cylindrical, planar and general joints too, with the lane tolerance of every other
// model (until the architecture step they ran state by state and agreed bit for bit).
TEST(Batch, EveryJointKindRunsInLanes) {
  const Model model = build_all_joints_tree(5);  // helical, cylindrical, planar, general joints
  const int B = 2 * batch_lanes() + 3;
  const States s = random_states(model, B, 17);
  const Reference ref = single_state_reference(model, s);
  const MatX tau = rnea_batch(model, s.Q, s.V, s.A, 2), qdd = aba_batch(model, s.Q, s.V, s.A, 2);
  const MatX M = crba_batch(model, s.Q, 2);
  expect_agreement(model, ref, tau, qdd, M, "all joint kinds");
}

// Identities of the batched functions alone: qdd = ABA(q, v, RNEA(q, v, a)) returns a (within
// the solve bound), and M(q) e_k = RNEA(q, 0, e_k) - RNEA(q, 0, 0) for every column k.
TEST(Batch, AbaInvertsRneaAndCrbaColumnsAreRneaDifferences) {
  static RatioLog log_inv("batch aba(rnea(a)) vs a"), log_col("batch crba columns vs rnea differences");
  for (const BatchCase& c : batch_cases()) {
    const Model& model = c.model;
    const int nv = model.nv(), B = 2 * batch_lanes() + 3;
    const States s = random_states(model, B, 7);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(c.name + " threads=" + std::to_string(threads));
      BatchWorkspace ws(model, threads);
      MatX tau(nv, B), a(nv, B), M(nv, nv * B), g(nv, B), col(nv, B);
      rnea_batch(model, ws, s.Q, s.V, s.A, tau);
      aba_batch(model, ws, s.Q, s.V, tau, a);
      crba_batch(model, ws, s.Q, M);
      const MatX zero = MatX::Zero(nv, B);
      rnea_batch(model, ws, s.Q, zero, zero, g);
      for (int b = 0; b < B; ++b) {
        const auto Mb = M.middleCols(b * nv, nv);
        const double err = (a.col(b) - s.A.col(b)).norm();
        const double tol = solve_tol(spectrum(Mb), s.A.col(b).norm(), tau.col(b).norm());
        EXPECT_LE(err, tol) << "state " << b;
        log_inv.add(err, tol, c.name + " state " + std::to_string(b));
      }
      for (int k = 0; k < nv; ++k) {
        MatX ek = MatX::Zero(nv, B);
        ek.row(k).setOnes();
        rnea_batch(model, ws, s.Q, zero, ek, col);
        for (int b = 0; b < B; ++b) {
          const double err = (col.col(b) - g.col(b) - M.col(b * nv + k)).norm();
          const double tol = kBatchTol * (M.middleCols(b * nv, nv).norm() + g.col(b).norm());
          EXPECT_LE(err, tol) << "state " << b << " column " << k;
          log_col.add(err, tol, c.name + " state " + std::to_string(b) + " column " + std::to_string(k));
        }
      }
    }
  }
}

// Both triangles' layouts; the zeros of branch-induced sparsity (entries outside
// jsim_pattern, which JsimPatternIsEachDofsSupportPath checks) are exact zeros, and so are,
// for Upper, the strict lower entries outside the multi-DoF joints' own blocks.
TEST(Batch, TrianglesMatchSingleStateWithExactStructuralZeros) {
  for (const Model& model : {build_humanoid(4), build_lane_kinds(true), build_lane_kinds(false)}) {
    Data data(model);
    const int nv = model.nv(), B = 2 * batch_lanes() + 3;
    const JsimPattern pattern = jsim_pattern(model);
    MatX in_pattern = MatX::Zero(nv, nv);  // symmetric
    for (int k = 0; k < nv; ++k)
      for (int e = pattern.row_start[k]; e < pattern.row_start[k + 1]; ++e)
        in_pattern(k, pattern.col[e]) = in_pattern(pattern.col[e], k) = 1.0;
    const States s = random_states(model, B, 9);
    for (Triangle triangle : {Triangle::Upper, Triangle::Full})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(model.name() + (triangle == Triangle::Upper ? " Upper" : " Full") + " threads " +
                     std::to_string(threads));
        MatX M = MatX::Constant(nv, nv * B, std::numeric_limits<double>::quiet_NaN());  // every entry is written
        BatchWorkspace ws(model, threads);
        crba_batch(model, ws, s.Q, M, triangle);
        for (int b = 0; b < B; ++b) {
          const MatX& ref = crba(model, data, s.Q.col(b), triangle);
          const auto Mb = M.middleCols(b * nv, nv);
          EXPECT_LE((Mb - ref).norm(), kBatchTol * ref.norm()) << "state " << b;
          for (int col = 0; col < nv; ++col)
            for (int r = 0; r < nv; ++r) {
              const bool lower_outside_block =
                  triangle == Triangle::Upper && r > col && model.joint_of_v(r) != model.joint_of_v(col);
              if (in_pattern(r, col) == 0.0 || lower_outside_block) {
                EXPECT_EQ(Mb(r, col), 0.0) << r << ", " << col;
                EXPECT_EQ(ref(r, col), 0.0) << r << ", " << col;
              }
            }
        }
      }
  }
}

// crba_batch_packed holds each state's nonzeros: unpacked, they are crba's matrix.
TEST(Batch, PackedCrbaHoldsTheNonzerosOfEachState) {
  static RatioLog log_packed("batch packed crba vs crba");
  for (const BatchCase& c : batch_cases()) {
    const Model& model = c.model;
    const int nv = model.nv();
    const JsimPattern pattern = jsim_pattern(model);
    Data data(model);
    MatX unpacked(nv, nv);
    for (int B : batch_sizes()) {
      const States s = random_states(model, B, 300 + B);
      for (int threads : {1, 2, 3}) {
        const std::string where = c.name + " B=" + std::to_string(B) + " threads=" + std::to_string(threads);
        SCOPED_TRACE(where);
        BatchWorkspace ws(model, threads);
        ASSERT_EQ(ws.jsim_pattern().row_start, pattern.row_start);
        ASSERT_EQ(ws.jsim_pattern().col, pattern.col);
        MatX Mp = MatX::Constant(pattern.nnz(), B, std::numeric_limits<double>::quiet_NaN());  // every entry is written
        crba_batch_packed(model, ws, s.Q, Mp);
        for (int b = 0; b < B; ++b) {
          const MatX& ref = crba(model, data, s.Q.col(b));
          unpack_jsim(pattern, Mp.col(b), unpacked);
          const double err = (unpacked - ref).norm(), tol = kBatchTol * ref.norm();
          EXPECT_LE(err, tol) << "state " << b;
          log_packed.add(err, tol, where + " state " + std::to_string(b));
        }
        EXPECT_TRUE(crba_batch_packed(model, s.Q, threads) == Mp);
      }
    }
  }
}

// The outputs may be blocks of larger matrices (Eigen::Ref with an outer stride, or a range of
// columns): the same bits as into a matrix of their own, and nothing outside the block is
// written (the dense CRBA zeroes whole matrices and prefetches the next group's, so both must
// stay inside M).
TEST(Batch, OutputsMayBeBlocksOfLargerMatrices) {
  const Model model = build_humanoid(4);
  const int nv = model.nv(), B = 2 * batch_lanes() + 3, pad = 3;
  const States s = random_states(model, B, 41);
  const double sentinel = -7.25;
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    BatchWorkspace ws(model, threads);
    for (Triangle triangle : {Triangle::Upper, Triangle::Full}) {
      MatX M(nv, nv * B);
      crba_batch(model, ws, s.Q, M, triangle);
      MatX strided = MatX::Constant(nv + pad, nv * B, sentinel);  // outer stride nv + pad
      crba_batch(model, ws, s.Q, strided.topRows(nv), triangle);
      EXPECT_TRUE(strided.topRows(nv) == M);
      EXPECT_TRUE((strided.bottomRows(pad).array() == sentinel).all());
      MatX wider = MatX::Constant(nv, nv * (B + 2), sentinel);  // columns of one more state each side
      crba_batch(model, ws, s.Q, wider.middleCols(nv, nv * B), triangle);
      EXPECT_TRUE(wider.middleCols(nv, nv * B) == M);
      EXPECT_TRUE((wider.leftCols(nv).array() == sentinel).all());
      EXPECT_TRUE((wider.rightCols(nv).array() == sentinel).all());
    }
    const Eigen::Index nnz = ws.jsim_pattern().nnz();
    MatX Mp(nnz, B);
    crba_batch_packed(model, ws, s.Q, Mp);
    MatX strided = MatX::Constant(nnz + pad, B, sentinel);
    crba_batch_packed(model, ws, s.Q, strided.topRows(nnz));
    EXPECT_TRUE(strided.topRows(nnz) == Mp);
    EXPECT_TRUE((strided.bottomRows(pad).array() == sentinel).all());
  }
}

// The batched derivatives (W states per SIMD lane group, the rest state by state): each
// state's blocks agree with rnea_derivatives / aba_derivatives (checked against finite
// differences in test_derivatives.cpp) to rounding. d tau / d x: kBatchTol relative to the norm
// of the whole matrix, as the RNEA. d qdd / d x = -M^-1 d tau / d x and M^-1: twice the
// forward-error bound of a solve with M (solve_tol), with d tau / d x at a = qdd as its right
// side. Every entry is written (NaN-filled outputs), and a reused workspace gives the same bits.
TEST(Batch, DerivativesAgreeWithTheSingleStateFunctions) {
  static RatioLog log_dtau("batch rnea_derivatives vs rnea_derivatives"),
      log_dqdd("batch aba_derivatives vs aba_derivatives");
  for (const BatchCase& c : batch_cases()) {
    const Model& model = c.model;
    const int nv = model.nv(), B = 2 * batch_lanes() + 3;
    const States s = random_states(model, B, 61);
    Data data(model);
    for (int threads : {1, 2}) {
      const std::string where = c.name + " threads=" + std::to_string(threads);
      SCOPED_TRACE(where);
      BatchWorkspace ws(model, threads);
      const double nan = std::numeric_limits<double>::quiet_NaN();
      MatX dq[2], dv[2], fq[2], fv[2], ft[2];
      for (int repeat = 0; repeat < 2; ++repeat) {
        for (MatX* X : {&dq[repeat], &dv[repeat], &fq[repeat], &fv[repeat], &ft[repeat]})
          *X = MatX::Constant(nv, nv * B, nan);
        rnea_derivatives_batch(model, ws, s.Q, s.V, s.A, dq[repeat], dv[repeat]);
        aba_derivatives_batch(model, ws, s.Q, s.V, s.A, fq[repeat], fv[repeat], ft[repeat]);  // A as tau
      }
      EXPECT_TRUE(dq[1] == dq[0] && dv[1] == dv[0] && fq[1] == fq[0] && fv[1] == fv[0] && ft[1] == ft[0]);
      for (int b = 0; b < B; ++b) {
        const std::string at = where + " state " + std::to_string(b);
        rnea_derivatives(model, data, s.Q.col(b), s.V.col(b), s.A.col(b));
        const MatX* single_tau[2] = {&data.dtau_dq, &data.dtau_dv};
        const MatX* batched_tau[2] = {&dq[0], &dv[0]};
        for (int x = 0; x < 2; ++x) {
          const double e = (batched_tau[x]->middleCols(b * nv, nv) - *single_tau[x]).norm();
          const double t = kBatchTol * std::max(1.0, single_tau[x]->norm());
          EXPECT_LE(e, t) << at;
          log_dtau.add(e, t, at);
        }
        aba_derivatives(model, data, s.Q.col(b), s.V.col(b), s.A.col(b));
        const MatX dqdd_dq = data.dqdd_dq, dqdd_dv = data.dqdd_dv, Minv = data.Minv;
        const VecX qdd = data.qdd;
        const Spectrum sp = spectrum(crba(model, data, s.Q.col(b)));
        rnea_derivatives(model, data, s.Q.col(b), s.V.col(b), qdd);  // the right sides, at a = qdd
        const MatX* single_qdd[3] = {&dqdd_dq, &dqdd_dv, &Minv};
        const MatX* batched_qdd[3] = {&fq[0], &fv[0], &ft[0]};
        const double rhs[3] = {data.dtau_dq.norm(), data.dtau_dv.norm(), std::sqrt(static_cast<double>(nv))};
        for (int x = 0; x < 3; ++x) {
          const double e = (batched_qdd[x]->middleCols(b * nv, nv) - *single_qdd[x]).norm();
          const double t = 2.0 * solve_tol(sp, single_qdd[x]->norm(), rhs[x]);
          EXPECT_LE(e, t) << at << " output " << x;
          log_dqdd.add(e, t, at);
        }
      }
    }
  }
}

// A state whose M is singular inside a group of W (the turntable of SingularLaneIsReported...)
// or whose derivatives overflow: the batched derivatives name the state, as aba_batch does.
TEST(Batch, DerivativesNameTheFailingState) {
  Model model;
  const int turn = model.add_body(0, JointRevoluteZ{}, Transform(), RigidBodyInertia::Zero(), "turntable", "spin");
  model.add_body(turn, JointPrismaticX{}, Transform(), RigidBodyInertia::unchecked(1.0, Vec3::Zero(), Mat3::Zero()),
                 "slider", "slide");
  const int W = batch_lanes(), B = 2 * W + 3, nv = model.nv();
  States s = random_states(model, B, 3);
  for (int b = 0; b < B; ++b) s.Q(1, b) = 0.5 + 0.1 * b;
  MatX fq(nv, nv * B), fv(nv, nv * B), ft(nv, nv * B), dq(nv, nv * B), dv(nv, nv * B);
  for (int threads : {1, 2}) {
    BatchWorkspace ws(model, threads);
    const int singular = W + 1;
    s.Q(1, singular) = 0.0;
    try {
      aba_derivatives_batch(model, ws, s.Q, s.V, s.A, fq, fv, ft);
      ADD_FAILURE() << "no SingularError";
    } catch (const SingularError& e) {
      EXPECT_NE(std::string(e.what()).find("aba_derivatives_batch: state " + std::to_string(singular) + ": "),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("'spin'"), std::string::npos) << e.what();
    }
    s.Q(1, singular) = 0.5;
    const int overflowing = W + 2;
    s.V(0, overflowing) = 1e200;  // v^2 overflows: tau, and its derivatives, are not finite
    for (int which = 0; which < 2; ++which) {
      try {
        if (which == 0)
          rnea_derivatives_batch(model, ws, s.Q, s.V, s.A, dq, dv);
        else
          aba_derivatives_batch(model, ws, s.Q, s.V, s.A, fq, fv, ft);
        ADD_FAILURE() << "no error";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("state " + std::to_string(overflowing) + ": "), std::string::npos)
            << e.what();
      }
    }
    s.V(0, overflowing) = 0.5;
    rnea_derivatives_batch(model, ws, s.Q, s.V, s.A, dq, dv);
    aba_derivatives_batch(model, ws, s.Q, s.V, s.A, fq, fv, ft);
    EXPECT_TRUE(dq.allFinite() && dv.allFinite() && fq.allFinite() && fv.allFinite() && ft.allFinite());
  }
}

// The pattern is the support path of each DoF, found here from the body tree (not from
// dof_parents): the DoFs of every ancestor body, then those of the DoF's own joint up to it.
// crba leaves every lower-triangle entry outside it zero, and pack/unpack are exact inverses.
TEST(Batch, JsimPatternIsEachDofsSupportPath) {
  for (const BatchCase& c : batch_cases()) {
    SCOPED_TRACE(c.name);
    const Model& model = c.model;
    const int nv = model.nv();
    const JsimPattern pattern = jsim_pattern(model);
    ASSERT_EQ(static_cast<int>(pattern.row_start.size()), nv + 1);
    for (int i = 1; i < model.nbodies(); ++i)
      for (int k = model.idx_v(i); k < model.idx_v(i) + model.joint_nv(i); ++k) {
        std::vector<int> expected;
        for (int a = model.parent(i); a > 0; a = model.parent(a))
          for (int j = model.idx_v(a) + model.joint_nv(a) - 1; j >= model.idx_v(a); --j) expected.push_back(j);
        std::reverse(expected.begin(), expected.end());
        for (int j = model.idx_v(i); j <= k; ++j) expected.push_back(j);
        const std::vector<int> row(pattern.col.begin() + pattern.row_start[k],
                                   pattern.col.begin() + pattern.row_start[k + 1]);
        EXPECT_EQ(row, expected) << "DoF " << k;
      }
    Data data(model);
    Rng rng(5);
    const MatX M = crba(model, data, random_configuration(model, rng));
    MatX in_pattern = MatX::Zero(nv, nv);
    for (int k = 0; k < nv; ++k)
      for (int e = pattern.row_start[k]; e < pattern.row_start[k + 1]; ++e) in_pattern(k, pattern.col[e]) = 1.0;
    for (int k = 0; k < nv; ++k)
      for (int j = 0; j < k; ++j)
        if (in_pattern(k, j) == 0.0) {
          EXPECT_EQ(M(k, j), 0.0) << k << ", " << j;
        }
    VecX packed(pattern.nnz());
    pack_jsim(pattern, M, packed);
    MatX back(nv, nv);
    unpack_jsim(pattern, packed, back);
    EXPECT_TRUE(back == M);
  }
  const Model model = build_chain(3);
  const JsimPattern pattern = jsim_pattern(model);
  VecX packed(pattern.nnz());
  expect_message([&] { pack_jsim(pattern, MatX::Zero(3, 2), packed); }, "M is 3 x 2");
  MatX M(3, 3);
  expect_message([&] { unpack_jsim(pattern, VecX::Zero(pattern.nnz() - 1), M); }, "packed has 5 entries");
  MatX Mp_bad(pattern.nnz() + 1, 2);
  BatchWorkspace ws(model, 1);
  expect_message([&] { crba_batch_packed(model, ws, MatX::Zero(model.nq(), 2), Mp_bad); }, "Mp (output)");
}

// The lane CRBA works in the frame of each subtree's top body (for a floating base, the
// floating body): M does not depend on the base's pose, so far from the origin the batched
// matrices still agree with the link-coordinate crba to the same relative tolerance.
TEST(Batch, CrbaFarFromTheOriginKeepsItsDigits) {
  const Model model = build_humanoid(6);
  const int nv = model.nv(), B = 2 * batch_lanes() + 3;
  States s = random_states(model, B, 21);
  Rng rng(8);
  for (int b = 0; b < B; ++b) s.Q.col(b).head<3>() = 1e6 * random_vector(3, rng);  // free-flyer position
  const MatX M = crba_batch(model, s.Q, 1);
  Data data(model);
  for (int b = 0; b < B; ++b) {
    const MatX& ref = crba(model, data, s.Q.col(b));
    EXPECT_LE((M.middleCols(b * nv, nv) - ref).norm(), kBatchTol * ref.norm()) << "state " << b;
  }
}

TEST(Batch, ModelWithoutDegreesOfFreedom) {
  Model model;
  model.add_body(0, JointFixed{}, Transform::translation(Vec3(0, 0, 1)),
                 RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Mat3::Identity()), "block", "weld");
  const int B = 2 * batch_lanes() + 3;
  const MatX Q(0, B), V(0, B);
  for (int threads : {1, 2}) {
    EXPECT_EQ(rnea_batch(model, Q, V, V, threads).size(), 0);
    EXPECT_EQ(aba_batch(model, Q, V, V, threads).size(), 0);
    EXPECT_EQ(crba_batch(model, Q, threads, Triangle::Upper).size(), 0);
    const MatX Mp = crba_batch_packed(model, Q, threads);
    EXPECT_EQ(Mp.rows(), 0);
    EXPECT_EQ(Mp.cols(), B);
    BatchWorkspace ws(model, threads);  // 0 x 0 results: nothing to write, and no error
    MatX d1(0, 0), d2(0, 0), d3(0, 0);
    EXPECT_NO_THROW(rnea_derivatives_batch(model, ws, Q, V, V, d1, d2));
    EXPECT_NO_THROW(aba_derivatives_batch(model, ws, Q, V, V, d1, d2, d3));
  }
}

TEST(Batch, DefaultThreadCountIsHardwareConcurrency) {
  const Model model = build_chain(3);
  BatchWorkspace ws(model);
  EXPECT_GE(ws.threads(), 1);
  EXPECT_THROW(BatchWorkspace(model, -1), InvalidArgument);
  const int W = batch_lanes();
  EXPECT_TRUE(W == 2 || W == 4 || W == 8) << W;
}

TEST(Batch, BadBatchesAreRefusedNamingTheStateAndJoint) {
  const Model model = build_humanoid(3);
  const int nq = model.nq(), nv = model.nv(), B = 4;
  States s = random_states(model, B, 1);
  BatchWorkspace ws(model, 2);
  MatX out(nv, B);
  expect_message([&] { rnea_batch(model, ws, s.Q.topRows(nq - 1), s.V, s.A, out); }, "Q is");
  expect_message([&] { rnea_batch(model, ws, s.Q, s.V.leftCols(B - 1), s.A, out); }, "V is");
  expect_message([&] { aba_batch(model, ws, s.Q, s.V, s.A.topRows(nv - 1), out); }, "Tau is");
  MatX small(nv, B - 1);
  expect_message([&] { rnea_batch(model, ws, s.Q, s.V, s.A, small); }, "Tau (output)");
  MatX M_bad(nv, nv * B - 1);
  expect_message([&] { crba_batch(model, ws, s.Q, M_bad); }, "M (output)");

  States bad = s;
  bad.V(nv - 1, 2) = std::numeric_limits<double>::quiet_NaN();
  expect_message([&] { rnea_batch(model, ws, bad.Q, bad.V, bad.A, out); }, "state 2: v is not finite at joint");
  bad = s;
  bad.Q(3, 3) *= 2.0;  // the free-flyer quaternion [x y z qx qy qz qw]
  expect_message([&] { crba_batch(model, bad.Q, 1); }, "state 3: q: quaternion");
  bad = s;
  bad.A(0, 1) = std::numeric_limits<double>::infinity();
  expect_message([&] { aba_batch(model, ws, bad.Q, bad.V, bad.A, out); }, "state 1: tau is not finite");

  const Model other = build_chain(4);
  BatchWorkspace wrong(other, 1);
  expect_message([&] { rnea_batch(model, wrong, s.Q, s.V, s.A, out); }, "different model");
}

TEST(Batch, SingularStateIsReportedAfterAllThreadsStop) {
  Model model;  // a massless moving leaf: every state's ABA is singular at 'leaf_joint'
  const int b1 = model.add_body(
      0, JointRevoluteX{}, Transform(),
      RigidBodyInertia::from_mass_com_inertia(2.0, Vec3(0.0, 0.3, 0.0), Mat3::Identity() * 0.01), "arm", "shoulder");
  model.add_body(b1, JointRevoluteY{}, Transform::translation(Vec3(0.0, 0.5, 0.0)), RigidBodyInertia::Zero(), "leaf",
                 "leaf_joint");
  for (int B : {6, 2 * batch_lanes() + 3}) {
    const States s = random_states(model, B, 2);
    for (int threads : {1, 2}) {
      BatchWorkspace ws(model, threads);
      expect_aba_batch_singular(model, ws, s, "aba_batch: state 0: ", "leaf_joint");
      EXPECT_TRUE(rnea_batch(model, s.Q, s.V, s.A, threads).allFinite());  // still defined
    }
  }
}

// A singularity of one state inside a group of W: a massless body turning about z carries a
// point mass on a slider along its x axis, so D = m x^2 of the turning joint vanishes exactly
// when the slider is at x = 0. The error names that state and joint, whatever lane it is in.
TEST(Batch, SingularLaneIsReportedWithItsStateAndJoint) {
  Model model;
  const int turn = model.add_body(0, JointRevoluteZ{}, Transform(), RigidBodyInertia::Zero(), "turntable", "spin");
  model.add_body(turn, JointPrismaticX{}, Transform(), RigidBodyInertia::unchecked(1.0, Vec3::Zero(), Mat3::Zero()),
                 "slider", "slide");
  const int W = batch_lanes(), B = 2 * W + 3;
  for (int singular : {W + 1, 2 * W - 1, B - 1}) {
    States s = random_states(model, B, 3);
    for (int b = 0; b < B; ++b) s.Q(1, b) = 0.5 + 0.1 * b;
    s.Q(1, singular) = 0.0;
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE("singular state " + std::to_string(singular) + ", threads " + std::to_string(threads));
      BatchWorkspace ws(model, threads);
      expect_aba_batch_singular(model, ws, s, "aba_batch: state " + std::to_string(singular) + ": ", "'spin'");
      MatX qdd(model.nv(), B);
      s.Q(1, singular) = 0.25;  // regular again: every state solves
      aba_batch(model, ws, s.Q, s.V, s.A, qdd);
      EXPECT_TRUE(qdd.allFinite());
      s.Q(1, singular) = 0.0;
    }
  }
}

// A zoo robot with massless finger links (romeo): the lanes meet the singular joint in
// every group; the error is the single-state aba's, for state 0.
TEST(Batch, SingularZooRobotNamesTheSameJointAsAba) {
  const std::string path = shared_model_path("romeo");
  if (path.empty()) GTEST_SKIP() << "shared model romeo.urdf not found (PLUCKER_SHARED_DIR)";
  const Model model = load_shared_model(path, RootJoint::FreeFlyer);
  const int B = 2 * batch_lanes() + 3;
  const States s = random_states(model, B, 5);
  Data data(model);
  std::string expected;
  try {
    aba(model, data, s.Q.col(0), s.V.col(0), s.A.col(0));
  } catch (const SingularError& e) {
    expected = e.what();
  }
  ASSERT_FALSE(expected.empty());
  for (int threads : {1, 2}) {
    try {
      aba_batch(model, s.Q, s.V, s.A, threads);
      ADD_FAILURE() << "no SingularError";
    } catch (const SingularError& e) {
      EXPECT_EQ(std::string(e.what()), "aba_batch: state 0: " + expected);
    }
  }
}

}  // namespace
}  // namespace plucker::test
