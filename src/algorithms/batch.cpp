// Batched RNEA / ABA / CRBA (include/plucker/algorithms/batch.hpp): validate every state
// once, then split the states into one contiguous range per thread; thread t evaluates its
// range in groups of W states by the lane kernels (detail/lane_kernels.hpp) with its lane
// scratch, and the rest state by state by the unchecked recursions (detail/recursion.hpp)
// with workspace Data t.
#include "plucker/algorithms/batch.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "algorithms/lanes.hpp"
#include "algorithms/thread_pool.hpp"
#include "plucker/algorithms/derivatives.hpp"

namespace plucker {

namespace {

constexpr int kThreadsPerCore = 4;

int resolve_threads(int threads) {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int cap = max_batch_threads();
  if (threads < 0) throw InvalidArgument("BatchWorkspace: threads = " + std::to_string(threads) + " (expected >= 0)");
  if (threads > cap)
    throw InvalidArgument("BatchWorkspace: threads = " + std::to_string(threads) + " is more than " +
                          std::to_string(cap) + " (" + std::to_string(kThreadsPerCore) + " per hardware thread, " +
                          std::to_string(hardware) + " here): more would only wait on each other");
  return threads == 0 ? hardware : threads;
}

[[noreturn]] void rethrow_for_state(const char* fn, Eigen::Index b, const Error& e) {
  const std::string what = std::string(fn) + ": state " + std::to_string(b) + ": " + e.what();
  if (dynamic_cast<const SingularError*>(&e)) throw SingularError(what);
  throw InvalidArgument(what);
}

void check_batch_sizes(const char* fn, const char* name, const Eigen::Ref<const MatX>& X, Eigen::Index rows,
                       const char* rows_what, Eigen::Index cols) {
  if (X.rows() != rows || X.cols() != cols)
    throw InvalidArgument(std::string(fn) + ": " + name + " is " + std::to_string(X.rows()) + " x " +
                          std::to_string(X.cols()) + ", expected " + rows_what + " = " + std::to_string(rows) + " x " +
                          std::to_string(cols) + " (one state per column)");
}

void check_states(const Model& model, const char* fn, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>* V,
                  const Eigen::Ref<const MatX>* A, const char* a_name) {
  for (Eigen::Index b = 0; b < Q.cols(); ++b) {
    try {
      model.check_configuration(Q.col(b), "q");
      if (V) model.check_tangent(V->col(b), "v");
      if (A) model.check_tangent(A->col(b), a_name);
    } catch (const InvalidArgument& e) {
      rethrow_for_state(fn, b, e);
    }
  }
}

}  // namespace

int batch_lanes() { return simd::W; }

int max_batch_threads() {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return std::max(kThreadsPerCore * hardware, kThreadsPerCore * 2);
}

BatchWorkspace::BatchWorkspace(const Model& model, int threads) {
  const int t = resolve_threads(threads);
  data_.reserve(static_cast<std::size_t>(t));
  lanes_.reserve(static_cast<std::size_t>(t));
  jsim_pattern_ = plucker::jsim_pattern(model);
  for (int k = 0; k < t; ++k) {
    data_.emplace_back(model);
    lanes_.push_back(std::make_unique<detail::LaneScratch>(model));
  }
  errors_.resize(static_cast<std::size_t>(t));
  pool_ = std::make_unique<detail::ThreadPool>(t);
}

BatchWorkspace::~BatchWorkspace() = default;
BatchWorkspace::BatchWorkspace(BatchWorkspace&&) noexcept = default;
BatchWorkspace& BatchWorkspace::operator=(BatchWorkspace&&) noexcept = default;

struct BatchAccess {
  /// Evaluates states 0..B-1, split evenly over the threads in contiguous ranges (the calling
  /// thread takes the first). Within a range, each full group of W
  /// states starting at b is evaluated by group(scratch, data, b), which returns false to have
  /// those W states evaluated one by one instead; the other states by state(data, b). The
  /// first error (in state order) is rethrown, naming its state: once a state has failed,
  /// the threads skip the states after it, but still evaluate the ones before it.
  template <class Group, class State>
  static void for_each_state(const char* fn, const Model& model, BatchWorkspace& ws, Eigen::Index B, const Group& group,
                             const State& state) {
    constexpr int W = simd::W;
    for (Data& d : ws.data_) detail::check_data(model, d, fn);
    const int T = static_cast<int>(std::min<Eigen::Index>(ws.threads(), B));
    std::atomic<Eigen::Index> first_failed{B};  // the lowest state known to have failed
    auto failed_before = [&](Eigen::Index b) { return first_failed.load(std::memory_order_relaxed) <= b; };
    auto record_failure = [&](Eigen::Index b) {
      Eigen::Index f = first_failed.load(std::memory_order_relaxed);
      while (b < f && !first_failed.compare_exchange_weak(f, b, std::memory_order_relaxed)) {}
    };
    // States [begin, end) on thread t; throws the first error, naming its state.
    auto evaluate = [&](int t, Eigen::Index begin, Eigen::Index end) {
      Data& data = ws.data_[static_cast<std::size_t>(t)];
      auto one = [&](Eigen::Index b) {
        try {
          state(data, b);
        } catch (const Error& e) {
          record_failure(b);
          rethrow_for_state(fn, b, e);
        } catch (...) {
          record_failure(b);
          throw;
        }
      };
      Eigen::Index b = begin;
      for (; b + W <= end && !failed_before(b); b += W)
        if (!group(*ws.lanes_[static_cast<std::size_t>(t)], data, b))
          for (int k = 0; k < W; ++k) one(b + k);
      for (; b < end && !failed_before(b); ++b) one(b);
    };
    if (T <= 1) {
      evaluate(0, 0, B);
      return;
    }
    auto run_range = [&](int t) {
      try {
        evaluate(t, B * t / T, B * (t + 1) / T);
      } catch (...) {
        ws.errors_[static_cast<std::size_t>(t)] = std::current_exception();
      }
    };
    std::fill(ws.errors_.begin(), ws.errors_.end(), nullptr);
    ws.pool_->run([&](int t) {
      if (t < T) run_range(t);
    });
    for (const std::exception_ptr& e : ws.errors_)
      if (e) std::rethrow_exception(e);
  }
};

void rnea_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& A, Eigen::Ref<MatX> Tau) {
  const char* fn = "rnea_batch";
  const Eigen::Index B = Q.cols();
  check_batch_sizes(fn, "Q", Q, model.nq(), "nq x B", B);
  check_batch_sizes(fn, "V", V, model.nv(), "nv x B", B);
  check_batch_sizes(fn, "A", A, model.nv(), "nv x B", B);
  check_batch_sizes(fn, "Tau (output)", Tau, model.nv(), "nv x B", B);
  check_states(model, fn, Q, &V, &A, "a");
  BatchAccess::for_each_state(
      fn, model, workspace, B,
      [&](detail::LaneScratch& s, Data&, Eigen::Index b) {
        detail::rnea_lanes(model, s, Q, V, A, b, Tau);
        return true;
      },
      [&](Data& data, Eigen::Index b) {
        detail::rnea_unchecked(model, data, Q.col(b).data(), V.col(b).data(), A.col(b).data());
        Tau.col(b) = data.tau;
      });
}

void aba_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
               const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& Tau, Eigen::Ref<MatX> Qdd) {
  const char* fn = "aba_batch";
  const Eigen::Index B = Q.cols();
  check_batch_sizes(fn, "Q", Q, model.nq(), "nq x B", B);
  check_batch_sizes(fn, "V", V, model.nv(), "nv x B", B);
  check_batch_sizes(fn, "Tau", Tau, model.nv(), "nv x B", B);
  check_batch_sizes(fn, "Qdd (output)", Qdd, model.nv(), "nv x B", B);
  check_states(model, fn, Q, &V, &Tau, "tau");
  BatchAccess::for_each_state(
      fn, model, workspace, B,
      [&](detail::LaneScratch& s, Data&, Eigen::Index b) { return detail::aba_lanes(model, s, Q, V, Tau, b, Qdd); },
      [&](Data& data, Eigen::Index b) {
        detail::aba_unchecked(model, data, Q.col(b).data(), V.col(b).data(), Tau.col(b).data());
        Qdd.col(b) = data.qdd;
      });
}

void crba_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q, Eigen::Ref<MatX> M,
                Triangle triangle) {
  const char* fn = "crba_batch";
  const Eigen::Index B = Q.cols(), nv = model.nv();
  check_batch_sizes(fn, "Q", Q, model.nq(), "nq x B", B);
  if (M.rows() != nv || M.cols() != nv * B)
    throw InvalidArgument(std::string(fn) + ": M (output) is " + std::to_string(M.rows()) + " x " +
                          std::to_string(M.cols()) + ", expected nv x (nv B) = " + std::to_string(nv) + " x " +
                          std::to_string(nv * B));
  check_states(model, fn, Q, nullptr, nullptr, nullptr);
  const auto out = triangle == Triangle::Full ? detail::CrbaOut::Full : detail::CrbaOut::Upper;
  BatchAccess::for_each_state(
      fn, model, workspace, B,
      [&](detail::LaneScratch& s, Data&, Eigen::Index b) {
        detail::crba_lanes(model, workspace.jsim_pattern(), s, Q, b, out, M);
        return true;
      },
      [&](Data& data, Eigen::Index b) {
        detail::crba_unchecked(model, data, Q.col(b).data(), triangle);
        M.middleCols(b * nv, nv) = data.M;
      });
}

void crba_batch_packed(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                       Eigen::Ref<MatX> Mp) {
  const char* fn = "crba_batch_packed";
  const Eigen::Index B = Q.cols();
  check_batch_sizes(fn, "Q", Q, model.nq(), "nq x B", B);
  const Eigen::Index nnz = workspace.jsim_pattern().nnz();
  check_batch_sizes(fn, "Mp (output)", Mp, nnz, "nnz x B", B);
  check_states(model, fn, Q, nullptr, nullptr, nullptr);
  BatchAccess::for_each_state(
      fn, model, workspace, B,
      [&](detail::LaneScratch& s, Data&, Eigen::Index b) {
        detail::crba_lanes(model, workspace.jsim_pattern(), s, Q, b, detail::CrbaOut::Packed, Mp);
        return true;
      },
      [&](Data& data, Eigen::Index b) {
        detail::crba_unchecked(model, data, Q.col(b).data(), Triangle::Upper);
        pack_jsim(workspace.jsim_pattern(), data.M, Mp.col(b));
      });
}

namespace {
void check_square_blocks(const char* fn, const char* name, const Eigen::Ref<MatX>& X, Eigen::Index nv, Eigen::Index B) {
  if (X.rows() != nv || X.cols() != nv * B)
    throw InvalidArgument(std::string(fn) + ": " + name + " (output) is " + std::to_string(X.rows()) + " x " +
                          std::to_string(X.cols()) + ", expected nv x (nv B) = " + std::to_string(nv) + " x " +
                          std::to_string(nv * B));
}
}  // namespace

void rnea_derivatives_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                            const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& A, Eigen::Ref<MatX> dTau_dq,
                            Eigen::Ref<MatX> dTau_dv) {
  const char* fn = "rnea_derivatives_batch";
  const Eigen::Index B = Q.cols(), nv = model.nv();
  check_batch_sizes(fn, "Q", Q, model.nq(), "nq x B", B);
  check_batch_sizes(fn, "V", V, nv, "nv x B", B);
  check_batch_sizes(fn, "A", A, nv, "nv x B", B);
  check_square_blocks(fn, "dTau_dq", dTau_dq, nv, B);
  check_square_blocks(fn, "dTau_dv", dTau_dv, nv, B);
  check_states(model, fn, Q, &V, &A, "a");
  BatchAccess::for_each_state(
      fn, model, workspace, B,
      [&](detail::LaneScratch& s, Data&, Eigen::Index b) {
        return detail::rnea_derivatives_lanes(model, s, Q, V, A, b, dTau_dq, dTau_dv);
      },
      [&](Data& data, Eigen::Index b) {
        rnea_derivatives(model, data, Q.col(b), V.col(b), A.col(b));
        dTau_dq.middleCols(b * nv, nv) = data.dtau_dq;
        dTau_dv.middleCols(b * nv, nv) = data.dtau_dv;
      });
}

void aba_derivatives_batch(const Model& model, BatchWorkspace& workspace, const Eigen::Ref<const MatX>& Q,
                           const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& Tau, Eigen::Ref<MatX> dQdd_dq,
                           Eigen::Ref<MatX> dQdd_dv, Eigen::Ref<MatX> dQdd_dtau) {
  const char* fn = "aba_derivatives_batch";
  const Eigen::Index B = Q.cols(), nv = model.nv();
  check_batch_sizes(fn, "Q", Q, model.nq(), "nq x B", B);
  check_batch_sizes(fn, "V", V, nv, "nv x B", B);
  check_batch_sizes(fn, "Tau", Tau, nv, "nv x B", B);
  check_square_blocks(fn, "dQdd_dq", dQdd_dq, nv, B);
  check_square_blocks(fn, "dQdd_dv", dQdd_dv, nv, B);
  check_square_blocks(fn, "dQdd_dtau", dQdd_dtau, nv, B);
  check_states(model, fn, Q, &V, &Tau, "tau");
  BatchAccess::for_each_state(
      fn, model, workspace, B,
      [&](detail::LaneScratch& s, Data& data, Eigen::Index b) {
        return detail::aba_derivatives_lanes(model, s, data, Q, V, Tau, b, dQdd_dq, dQdd_dv, dQdd_dtau);
      },
      [&](Data& data, Eigen::Index b) {
        aba_derivatives(model, data, Q.col(b), V.col(b), Tau.col(b));
        dQdd_dq.middleCols(b * nv, nv) = data.dqdd_dq;
        dQdd_dv.middleCols(b * nv, nv) = data.dqdd_dv;
        dQdd_dtau.middleCols(b * nv, nv) = data.Minv;
      });
}

MatX rnea_batch(const Model& model, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
                const Eigen::Ref<const MatX>& A, int threads) {
  BatchWorkspace workspace(model, threads);
  MatX Tau(model.nv(), Q.cols());
  rnea_batch(model, workspace, Q, V, A, Tau);
  return Tau;
}

MatX aba_batch(const Model& model, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
               const Eigen::Ref<const MatX>& Tau, int threads) {
  BatchWorkspace workspace(model, threads);
  MatX Qdd(model.nv(), Q.cols());
  aba_batch(model, workspace, Q, V, Tau, Qdd);
  return Qdd;
}

MatX crba_batch(const Model& model, const Eigen::Ref<const MatX>& Q, int threads, Triangle triangle) {
  BatchWorkspace workspace(model, threads);
  MatX M(model.nv(), model.nv() * Q.cols());
  crba_batch(model, workspace, Q, M, triangle);
  return M;
}

MatX crba_batch_packed(const Model& model, const Eigen::Ref<const MatX>& Q, int threads) {
  BatchWorkspace workspace(model, threads);
  MatX Mp(workspace.jsim_pattern().nnz(), Q.cols());
  crba_batch_packed(model, workspace, Q, Mp);
  return Mp;
}

}  // namespace plucker
