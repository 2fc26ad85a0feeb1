// Batched evaluation: RNEA, ABA and CRBA over B states in one call, split across threads.
//
// Layout (column-major, one state per column, as Eigen stores a MatX):
//   Q: nq x B;  V, A, Tau: nv x B;  the result of crba_batch: nv x (nv B), M(q_b) in
//   columns [b nv, (b + 1) nv), so each state's matrix is contiguous.
// (A row-major B x nq array, e.g. a C-ordered numpy array of shape (B, nq), has exactly
// this memory layout: it can be mapped without a copy.)
//
// Every input is validated once, before any computation (sizes, finiteness, unit
// quaternions; errors name the state and the joint). The states are then evaluated by the
// unchecked recursions, the b-th state by one thread's Data of a BatchWorkspace: reuse the
// workspace across calls and the per-state path allocates nothing. Results are identical
// (bit for bit) to calling rnea/aba/crba on each state in turn, whatever the thread count.
#pragma once

#include <exception>
#include <vector>

#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/data.hpp"

namespace plucker {

/// One Data per thread, made once for a model. threads = 0: std::thread::hardware_concurrency().
/// A workspace is not itself thread-safe: one batched call at a time per workspace.
class BatchWorkspace {
 public:
  explicit BatchWorkspace(const Model& model, int threads = 0);

  int threads() const { return static_cast<int>(data_.size()); }
  Data& data(int thread) { return data_[static_cast<std::size_t>(thread)]; }

 private:
  friend struct BatchAccess;
  std::vector<Data> data_;
  std::vector<std::exception_ptr> errors_;  ///< per thread, the first error it met
};

/// Tau.col(b) = rnea(Q.col(b), V.col(b), A.col(b)). Tau must be nv x B.
void rnea_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& A, Eigen::Ref<MatX> Tau);
/// Qdd.col(b) = aba(Q.col(b), V.col(b), Tau.col(b)). Qdd must be nv x B. A SingularError of any
/// state is rethrown (naming the state) after all threads stop.
void aba_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
               const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& Tau, Eigen::Ref<MatX> Qdd);
/// M.middleCols(b nv, nv) = crba(Q.col(b), triangle). M must be nv x (nv B).
void crba_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q, Eigen::Ref<MatX> M,
                Triangle triangle = Triangle::Full);

// Convenience forms: a workspace of `threads` threads and the result matrix made per call.
MatX rnea_batch(const Model& model, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
                const Eigen::Ref<const MatX>& A, int threads = 0);
MatX aba_batch(const Model& model, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
               const Eigen::Ref<const MatX>& Tau, int threads = 0);
MatX crba_batch(const Model& model, const Eigen::Ref<const MatX>& Q, int threads = 0,
                Triangle triangle = Triangle::Full);

}  // namespace plucker
