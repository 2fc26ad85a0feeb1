// The worker threads of a BatchWorkspace: started once with the workspace and parked between
// calls, so that a batched call pays a wake-up instead of creating and joining threads (tens
// of microseconds on a VM, as much as a whole batch of a few hundred states).
//
// A wake-up through the kernel (futex) also costs tens of microseconds on a VM (the idle
// virtual CPU is halted in the host), more than a batched call of a small model takes: with
// blocking only, two threads took longer than one for ur5 (1,000 states, rnea: 157 against
// 81 ns per state of wall time). So a worker that has finished a job, and the calling thread
// waiting for the workers, first spin for up to kSpin (as OpenMP runtimes do), and block
// only after that: back-to-back calls then find the workers awake. The spin costs CPU time
// of an otherwise idle core, and only within kSpin of a call; it yields the CPU every few
// microseconds, so that with more threads than cores it does not hold up the others.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "plucker/errors.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace plucker::detail {

class ThreadPool {
 public:
  static constexpr std::chrono::microseconds kSpin{200};

  /// Workers 1 .. threads - 1 (the calling thread is worker 0). When the system cannot start
  /// one (threads or memory exhausted), the workers already started are stopped and joined,
  /// and plucker::Error says which thread failed.
  explicit ThreadPool(int threads) {
    workers_.reserve(static_cast<std::size_t>(threads > 1 ? threads - 1 : 0));
    for (int t = 1; t < threads; ++t) {
      try {
        workers_.emplace_back([this, t] { work(t); });
      } catch (const std::system_error& e) {
        stop();
        throw Error("BatchWorkspace: could not start worker thread " + std::to_string(t) + " of " +
                    std::to_string(threads - 1) + " (" + e.what() + "); ask for fewer threads");
      }
    }
  }
  ~ThreadPool() { stop(); }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Runs job(t) on every worker t = 0 .. threads - 1 (0 on the calling thread) and returns
  /// when all have finished. job must not throw. Not reentrant: one run at a time.
  template <class Job>
  void run(const Job& job) {
    if (workers_.empty()) {
      job(0);
      return;
    }
    // The job is published by the release of generation_ (the workers acquire it); no worker
    // reads job_ between runs, since the previous run returned only after all had finished.
    job_ = [](const void* f, int t) { (*static_cast<const Job*>(f))(t); };
    job_arg_ = &job;
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mutex_);  // a worker about to block sees it (no lost wake-up)
      generation_.fetch_add(1, std::memory_order_release);
    }
    start_.notify_all();
    job(0);
    if (spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; })) return;
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
  }

 private:
  /// Stops and joins the workers started so far.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true, std::memory_order_release);
    }
    start_.notify_all();
    for (std::thread& w : workers_) w.join();
    workers_.clear();
  }

  /// Polls ready() for up to kSpin; true as soon as it holds.
  template <class Ready>
  static bool spin_until(const Ready& ready) {
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
      for (int k = 0; k < 64; ++k) {
        if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
      }
      if (std::chrono::steady_clock::now() >= deadline) return ready();
      std::this_thread::yield();  // to a thread of this process waiting for the CPU, if any
    }
  }

  void work(int t) {
    std::uint64_t seen = 0;
    auto has_news = [&] {
      return stop_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen;
    };
    for (;;) {
      if (!spin_until(has_news)) {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, has_news);
      }
      if (stop_.load(std::memory_order_acquire)) return;
      seen = generation_.load(std::memory_order_acquire);
      job_(job_arg_, t);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);  // the caller, if blocked, checks under the mutex
        done_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  void (*job_)(const void*, int) = nullptr;
  const void* job_arg_ = nullptr;
  std::atomic<int> pending_{0};
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace plucker::detail
