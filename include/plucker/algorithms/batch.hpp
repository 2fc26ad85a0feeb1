// Batched evaluation: RNEA, ABA and CRBA over B states in one call, split across threads.
//
// Layout (column-major, one state per column, as Eigen stores a MatX):
//   Q: nq x B;  V, A, Tau: nv x B;  the result of crba_batch: nv x (nv B), M(q_b) in
//   columns [b nv, (b + 1) nv), so each state's matrix is contiguous.
// (A row-major B x nq array, e.g. a C-ordered numpy array of shape (B, nq), has exactly
// this memory layout: it can be mapped without a copy.)
//
// Every input is validated once, before any computation (sizes, finiteness, unit
// quaternions; errors name the state and the joint). The states are then split into one
// contiguous range per thread, and each thread evaluates its range in groups of W
// consecutive states at once, one state per SIMD lane (the same recursions as rnea and aba,
// on W-wide vectors; the CRBA's Eqs. 9-10 in the frame of each subtree's top body, where
// the force transforms up the support path that crba applies per entry of M are identities;
// W = batch_lanes() is fixed by the instruction set the library is compiled for: 8 with
// AVX-512, 4 with AVX, else 2, e.g. 2 in a default x86-64 build and 8 with
// PLUCKER_NATIVE=ON on an AVX-512 machine). Every joint kind runs in the lanes. Evaluated
// per state instead, by the single-state functions: the last (range size mod W) states of
// each thread's range; and a group of W states in which the ABA meets a singular articulated
// inertia, or a derivative is singular or not finite (so the error names the first failing
// state and its joint, as the single-state function does).
//
// Results: equal to calling rnea/aba/crba on each state up to rounding, not bit for bit (the
// lanes evaluate the same equations in a different order, with different fused
// multiply-adds, the CRBA in other frames; the zeros of branch-induced sparsity are exact);
// the test suite (tests/test_batch.cpp of the source tree) checks a relative agreement of 1e-12 for RNEA and
// CRBA (relative to the result's norm) and, for ABA, the forward-error bound of a solve,
// 1e-12 cond(M) (|qdd| + |tau - c(q, v)| / |M|). A state's
// result does not depend on its lane, only on whether it was evaluated in a group or on its
// own, which for a given B can change with the thread count (the ranges' tails move).
//
// Reuse the workspace across calls: it holds each thread's Data and lane scratch, so a warm
// batched call allocates nothing on one thread.
#pragma once

#include <exception>
#include <memory>
#include <vector>

#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/data.hpp"

namespace plucker {

namespace detail {
struct LaneScratch;
class ThreadPool;
}  // namespace detail

/// W, the number of states the batched functions evaluate at once (8, 4 or 2, by the
/// instruction set the library was compiled for). Batches of a multiple of W states per
/// thread avoid the per-state tails.
int batch_lanes();

/// The most threads a BatchWorkspace takes: 4 per hardware thread (at least 8).
int max_batch_threads();

/// One Data and one lane scratch per thread, and threads - 1 worker threads, made once for a
/// model (between calls the workers wait: spinning for up to 200 us after a call, so that
/// back-to-back calls skip the kernel's wake-up, then blocked). threads = 0:
/// std::thread::hardware_concurrency(); more than max_batch_threads() is an InvalidArgument;
/// when the system cannot start a thread, plucker::Error (the started ones are joined first).
/// A workspace is not itself thread-safe: one batched call at a time per workspace. Movable,
/// not copyable.
class BatchWorkspace {
 public:
  explicit BatchWorkspace(const Model& model, int threads = 0);
  ~BatchWorkspace();
  BatchWorkspace(BatchWorkspace&&) noexcept;
  BatchWorkspace& operator=(BatchWorkspace&&) noexcept;

  int threads() const { return static_cast<int>(data_.size()); }
  Data& data(int thread) { return data_[static_cast<std::size_t>(thread)]; }
  /// jsim_pattern(model): the order of crba_batch_packed's rows.
  const JsimPattern& jsim_pattern() const { return jsim_pattern_; }

 private:
  friend struct BatchAccess;
  std::vector<Data> data_;
  std::vector<std::unique_ptr<detail::LaneScratch>> lanes_;  ///< per thread (lane_kernels.hpp)
  std::unique_ptr<detail::ThreadPool> pool_;                 ///< threads() - 1 parked workers
  std::vector<std::exception_ptr> errors_;                   ///< per thread, the first error it met
  JsimPattern jsim_pattern_;
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
/// Mp.col(b) = the nonzeros of M(Q.col(b)) in jsim_pattern(model) order, as pack_jsim(crba(...))
/// gives them. Mp must be nnz x B. Same information as crba_batch, in nnz instead of nv^2
/// doubles per state (talos_full with a free-flyer: 567 instead of 2,500): the form to use when
/// many states' matrices are kept, since writing the dense ones is limited by memory bandwidth.
void crba_batch_packed(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                       Eigen::Ref<MatX> Mp);

/// The derivatives, block b = middleCols(b nv, nv) of each nv x (nv B) result that of
/// rnea_derivatives(Q.col(b), V.col(b), A.col(b)): dTau_dq, dTau_dv. In groups of W states:
/// the RNEA and the derivatives' per-body passes in SIMD lanes, each entry one W-wide dot
/// product. Equal to the single-state results up to rounding (tests/test_batch.cpp: 1e-12
/// relative to each matrix's norm).
void rnea_derivatives_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                            const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& A, Eigen::Ref<MatX> dTau_dq,
                            Eigen::Ref<MatX> dTau_dv);
/// ... and of aba_derivatives(Q.col(b), V.col(b), Tau.col(b)): dQdd_dq, dQdd_dv, dQdd_dtau (M^-1).
/// The bias forces and the per-body passes in lanes; M^-1, qdd = M^-1 (tau - C) and
/// -M^-1 d tau / d x per state (the same minv as aba_derivatives). Equal up to the forward-error
/// bound of a solve with M.
void aba_derivatives_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                           const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& Tau, Eigen::Ref<MatX> dQdd_dq,
                           Eigen::Ref<MatX> dQdd_dv, Eigen::Ref<MatX> dQdd_dtau);

// Convenience forms: a workspace of `threads` threads and the result matrix made per call.
MatX rnea_batch(const Model& model, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
                const Eigen::Ref<const MatX>& A, int threads = 0);
MatX aba_batch(const Model& model, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
               const Eigen::Ref<const MatX>& Tau, int threads = 0);
MatX crba_batch(const Model& model, const Eigen::Ref<const MatX>& Q, int threads = 0,
                Triangle triangle = Triangle::Full);
MatX crba_batch_packed(const Model& model, const Eigen::Ref<const MatX>& Q, int threads = 0);

}  // namespace plucker
