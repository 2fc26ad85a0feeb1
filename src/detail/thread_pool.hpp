// The worker threads of a BatchWorkspace: started once with the workspace and parked between
// calls, so that a batched call pays a wake-up (microseconds) instead of creating and joining
// threads (tens of microseconds on a VM, as much as a whole batch of a few hundred states).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace plucker::detail {

class ThreadPool {
 public:
  /// Workers 1 .. threads - 1 (the calling thread is worker 0).
  explicit ThreadPool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { work(t); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread& w : workers_) w.join();
  }
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
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = [](const void* f, int t) { (*static_cast<const Job*>(f))(t); };
      job_arg_ = &job;
      pending_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    start_.notify_all();
    job(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  void work(int t) {
    std::uint64_t seen = 0;
    for (;;) {
      void (*job)(const void*, int);
      const void* arg;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        start_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        job = job_;
        arg = job_arg_;
      }
      job(arg, t);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  void (*job_)(const void*, int) = nullptr;
  const void* job_arg_ = nullptr;
  int pending_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace plucker::detail
