// Batched algorithms (include/plucker/algorithms/batch.hpp): each column equals the
// single-state algorithm bit for bit, for any thread count and batch size; bad batches
// are refused before any work with errors that name the state.
#include <gtest/gtest.h>

#include <string>

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

std::vector<Model> batch_models() {
  std::vector<Model> models;
  models.push_back(build_chain(7));
  models.push_back(build_humanoid(3));        // free-flyer root: quaternions in q
  models.push_back(build_all_joints_tree(5)); // every joint kind, multi-DoF blocks
  return models;
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

TEST(Batch, EqualsTheSingleStateLoopForAnyThreadCountAndBatchSize) {
  for (const Model& model : batch_models()) {
    Data data(model);
    const int nv = model.nv();
    for (int B : {0, 1, 2, 7, 33}) {
      const States s = random_states(model, B, 100 + B);
      MatX tau_ref(nv, B), qdd_ref(nv, B), M_ref(nv, nv * B);
      for (int b = 0; b < B; ++b) {
        tau_ref.col(b) = rnea(model, data, s.Q.col(b), s.V.col(b), s.A.col(b));
        qdd_ref.col(b) = aba(model, data, s.Q.col(b), s.V.col(b), s.A.col(b));
        M_ref.middleCols(b * nv, nv) = crba(model, data, s.Q.col(b));
      }
      for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(model.name() + " B=" + std::to_string(B) + " threads=" + std::to_string(threads));
        BatchWorkspace ws(model, threads);
        EXPECT_EQ(ws.threads(), threads);
        MatX tau(nv, B), qdd(nv, B), M(nv, nv * B);
        for (int repeat = 0; repeat < 2; ++repeat) {  // the workspace is reusable
          rnea_batch(model, ws, s.Q, s.V, s.A, tau);
          aba_batch(model, ws, s.Q, s.V, s.A, qdd);  // A used as tau
          crba_batch(model, ws, s.Q, M);
          EXPECT_TRUE(tau == tau_ref);
          EXPECT_TRUE(qdd == qdd_ref);
          EXPECT_TRUE(M == M_ref);
        }
        EXPECT_TRUE(rnea_batch(model, s.Q, s.V, s.A, threads) == tau_ref);
        EXPECT_TRUE(aba_batch(model, s.Q, s.V, s.A, threads) == qdd_ref);
        EXPECT_TRUE(crba_batch(model, s.Q, threads) == M_ref);
      }
    }
  }
}

TEST(Batch, UpperTriangleMatchesSingleState) {
  const Model model = build_humanoid(4);
  Data data(model);
  const int nv = model.nv(), B = 5;
  const States s = random_states(model, B, 9);
  const MatX M = crba_batch(model, s.Q, 2, Triangle::Upper);
  for (int b = 0; b < B; ++b) EXPECT_TRUE(M.middleCols(b * nv, nv) == crba(model, data, s.Q.col(b), Triangle::Upper));
}

TEST(Batch, DefaultThreadCountIsHardwareConcurrency) {
  const Model model = build_chain(3);
  BatchWorkspace ws(model);
  EXPECT_GE(ws.threads(), 1);
  EXPECT_THROW(BatchWorkspace(model, -1), InvalidArgument);
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
  const int b1 = model.add_body(0, JointRevoluteX{}, Transform(),
                                RigidBodyInertia::from_mass_com_inertia(2.0, Vec3(0.0, 0.3, 0.0), Mat3::Identity() * 0.01),
                                "arm", "shoulder");
  model.add_body(b1, JointRevoluteY{}, Transform::translation(Vec3(0.0, 0.5, 0.0)), RigidBodyInertia::Zero(), "leaf",
                 "leaf_joint");
  const States s = random_states(model, 6, 2);
  for (int threads : {1, 2}) {
    BatchWorkspace ws(model, threads);
    MatX qdd(model.nv(), 6);
    try {
      aba_batch(model, ws, s.Q, s.V, s.A, qdd);
      ADD_FAILURE() << "no SingularError";
    } catch (const SingularError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("aba_batch: state 0: "), std::string::npos) << what;
      EXPECT_NE(what.find("leaf_joint"), std::string::npos) << what;
    }
    EXPECT_TRUE(rnea_batch(model, s.Q, s.V, s.A, threads).allFinite());  // still defined
  }
}

}  // namespace
}  // namespace plucker::test
