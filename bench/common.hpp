// What the modes of plucker_bench share: options, the state pools, the algorithm registry,
// the models, the peers' set-up and agreement check, the benchmark reporter, and the
// formatting and JSON helpers. Each mode is a file of its own (declared at the end); main.cpp
// parses the options and dispatches. How the bench measures, and why: docs/benchmark_notes.md.
#pragma once

#include <benchmark/benchmark.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#include <sched.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "peers.hpp"
#include "plucker/plucker.hpp"

namespace plucker_bench {

using plucker::MatX;
using plucker::VecX;

constexpr int kPoolSize = 1000;
constexpr std::uint64_t kSeed = 20240601;

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------
struct Options {
  enum class Mode { Models, Scaling, Micro, ForwardDynamics, Batch } mode = Mode::Models;
  int reps = 5;
  double min_time = 0.05;
  std::string models = "";
  bool peers = true;
  std::string out;
};

std::string default_out_dir();
std::string shared_dir();

// ---------------------------------------------------------------------------
// Formatting, files and JSON
// ---------------------------------------------------------------------------
std::string one_line(std::string s, std::size_t max = 200);
std::string fmt_e(double x);
std::string fmt_ns(double ns);
std::string fmt_ratio(double r);
std::string json_escape(const std::string& s);
std::string compiler_string();
std::string build_flags();
std::string loadavg();
std::string now_utc();
double median(std::vector<double> t);
double seconds_since(std::chrono::steady_clock::time_point t0);
/// `dir` absolute and normalised, for the closing "wrote ..." lines.
std::string display_dir(const std::string& dir);
/// dir/file, the directory created if missing.
std::string output_path(const std::string& dir, const std::string& file);

/// A JSON array written one record a line: "[\n", records separated by ",\n", "\n]\n".
class JsonArray {
 public:
  explicit JsonArray(const std::string& path) : out_(path) { out_ << "[\n"; }
  ~JsonArray() { close(); }
  JsonArray(const JsonArray&) = delete;
  JsonArray& operator=(const JsonArray&) = delete;
  void add(const std::string& record) {
    out_ << (first_ ? "" : ",\n") << record;
    first_ = false;
  }
  void close() {
    if (!out_.is_open()) return;
    out_ << "\n]\n";
    out_.close();
  }

 private:
  std::ofstream out_;
  bool first_ = true;
};

/// Captures stdout/stderr while alive: the loaders (ours, urdfdom, kdl_parser, DART, MuJoCo)
/// print warnings about the robot files, kept out of the report unless something fails.
class Quiet {
 public:
  Quiet();
  /// Restores stdout/stderr; returns what was printed meanwhile.
  std::string release();
  ~Quiet() { release(); }
  Quiet(const Quiet&) = delete;
  Quiet& operator=(const Quiet&) = delete;

 private:
  FILE* file_ = nullptr;
  int saved_out_ = -1, saved_err_ = -1;
  std::string captured_;
};

// ---------------------------------------------------------------------------
// URDF copies without <visual>/<collision> (MuJoCo and DART open the absent meshes)
// ---------------------------------------------------------------------------
std::string strip_geometry(std::string xml);

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A copy of the URDF without <visual>/<collision> in tmp (what the peers load); its path.
std::string stripped_copy(const std::string& urdf, const TempDir& tmp);

// ---------------------------------------------------------------------------
// A model under test with its state pool, workspace and peers
// ---------------------------------------------------------------------------
struct PeerEntry {
  std::unique_ptr<Peer> peer;
  std::set<Task> timed;  // tasks that agreed and are timed
};

struct Bundle {
  std::string name;
  std::string source;  // "shared/models/ur5.urdf" or "build_chain(32)"
  plucker::Model model;
  std::unique_ptr<plucker::Data> data;
  MatX Q, V, A, TAU;  // one state per column
  int n = 0;
  std::string singular;                        // non-empty: forward dynamics undefined, why
  std::map<std::string, std::string> skipped;  // algorithm -> why (plucker side)
  std::vector<PeerEntry> peers;
  /// The task frames of the operational-space rows (make_pool): talos_full's soles and wrist
  /// tools (issue #18's 4 end-effectors), else the last body; 6 rows each.
  std::vector<plucker::OperationalTask> tasks;

  auto q(int i) const { return Q.col(i); }
  auto v(int i) const { return V.col(i); }
  auto a(int i) const { return A.col(i); }
  auto tau(int i) const { return TAU.col(i); }
};

/// n random states drawn with kSeed (q within the joint limits, v and a in [-1, 1], tau in
/// [-10, 10]), and the workspace.
void make_pool(Bundle& b, int n);
/// The pool as the peers take it (no Eigen).
StatePool pool_of(const Bundle& b);

/// Pins the calling thread to one CPU (the last of its affinity mask) while alive, then restores
/// its affinity (the single-thread rounds of --batch and --derivatives).
class PinnedToOneCpu {
 public:
  PinnedToOneCpu() {
    if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &saved_)) last = c;
    if (last < 0) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    pinned_ = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  ~PinnedToOneCpu() {
    if (pinned_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  PinnedToOneCpu(const PinnedToOneCpu&) = delete;
  PinnedToOneCpu& operator=(const PinnedToOneCpu&) = delete;
  bool pinned() const { return pinned_; }

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
};

// ---------------------------------------------------------------------------
// The algorithm registry: one line per algorithm. `fd` marks forward-dynamics methods
// (skipped on models whose joint-space inertia is singular); `peer` is the peers' task
// reported in the same row.
// ---------------------------------------------------------------------------
struct Algorithm {
  const char* name;
  bool fd;
  std::optional<Task> peer;
  void (*run)(Bundle&, int);
};
extern const std::vector<Algorithm> kAlgorithms;
const char* task_algorithm(Task t);

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------
/// Models whose joint-space inertia is singular (massless moving links): no forward dynamics.
extern const std::map<std::string, std::string> kSingular;

struct Spec {
  std::string name, source, urdf;  // urdf empty for builders
  bool floating = false;
  std::function<plucker::Model()> build;
};

/// The robots of shared/models in display order, then the builders; `notes` says what is missing.
std::vector<Spec> model_specs(std::vector<std::string>& notes);
/// The spec's model: built, or loaded from its URDF with the loader's warnings silenced.
plucker::Model load_model(const Spec& spec);

// ---------------------------------------------------------------------------
// Peers
// ---------------------------------------------------------------------------
ModelDesc describe(const Bundle& b, const std::string& stripped, bool floating);

/// The peer's adapter, its library's printing silenced; nullptr with `why` (the factory's
/// reason, the exception, or else what the library printed) when it cannot be made.
std::unique_ptr<Peer> create_peer(PeerFactory factory, const ModelDesc& desc, std::string& why);

/// Agreement of a peer with plucker on one task, on the first states of the pool.
struct Check {
  Task task;
  double err = 0.0;      // max relative error (FD: normwise backward error)
  double qdd_err = 0.0;  // FD only: relative difference of the accelerations (information)
  bool ok = false;       // err finite and within tolerance(library)
};
double tolerance(const std::string& library);
Check check_task(Bundle& b, Peer& peer, Task task, int nstates);

/// The tasks of a peer compared with plucker, in the order ID, M, FD.
struct PeerComparison {
  std::vector<Check> checks;
  std::vector<std::string> unsupported;  // "task: why" of the tasks not compared
  std::map<Task, std::string> methods;   // what the peer times, per compared task
};
/// Compares every task the peer supports (FD not on a singular model). With
/// stop_if_id_disagrees, nothing after a disagreeing ID is compared.
PeerComparison compare_peer(Bundle& b, Peer& peer, int nstates, bool stop_if_id_disagrees);

// ---------------------------------------------------------------------------
// Reference figures (Pinocchio 3.7, median ns, same kind of machine) and targets
// ---------------------------------------------------------------------------
struct Ref3 {
  double id, m, fd;
};
extern const std::map<std::string, Ref3> kPinocchioNs;
/// MuJoCo time / Pinocchio time (ID, M, FD) on the same machine; our target is
/// mujoco/plucker >= kTargetFactor x mujoco/pinocchio.
extern const std::map<std::string, Ref3> kMujocoOverPinocchio;
constexpr double kTargetFactor = 1.25;
extern const std::vector<std::string> kHeadline;
double ref_of(const Ref3& r, const std::string& algorithm);
/// Pinocchio 3.7's clang build, computeRNEADerivatives / computeABADerivatives (issue #23), ns
/// for "rnea_derivatives" / "aba_derivatives"; NaN for a model the issue does not give.
double pinocchio_clang_derivative_ns(const std::string& model, const std::string& algorithm);

// ---------------------------------------------------------------------------
// Google Benchmark: registration and the collecting reporter
// ---------------------------------------------------------------------------
struct Key {
  std::string model, algorithm, library;
};

/// Keeps the per-repetition times, prints compact progress.
class Collector : public benchmark::BenchmarkReporter {
 public:
  explicit Collector(std::map<std::string, Key> keys) : keys_(std::move(keys)) {}
  bool ReportContext(const Context& ctx) override;
  void ReportRuns(const std::vector<Run>& runs) override;
  void Finalize() override;
  /// Median over the repetitions, ns; NaN if not run.
  double median(const std::string& name) const;
  const std::map<std::string, std::string>& errors() const { return errors_; }
  int num_cpus_ = 0;
  double mhz_ = 0;
  bool scaling_ = false;

 private:
  std::map<std::string, Key> keys_;
  std::map<std::string, std::vector<double>> times_;
  std::map<std::string, std::string> errors_;
  std::string current_;
};

/// VZEROUPPER before a timed loop: the legacy-SSE peers ran slower after this binary's
/// AVX-512 code until one (docs/benchmark_notes.md, "Clean SIMD state").
inline void clean_simd_state() {
#if defined(__AVX__)
  _mm256_zeroupper();
#endif
}

template <class F>
benchmark::internal::Benchmark* register_bench(const std::string& name, const Options& opt, F&& f) {
  auto* bm = benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f));
  bm->Unit(benchmark::kNanosecond)->MinTime(opt.min_time)->Repetitions(opt.reps);
  return bm;
}

/// Registers a benchmark of call(i), one call per iteration, i cycling through a pool of n
/// states; each repetition goes on with the state after the last one of the previous (DART
/// skips its recomputation when given the state it already holds). clean_simd: the loop
/// starts with VZEROUPPER.
template <class Call>
void register_pool_bench(const std::string& name, const Options& opt, int n, bool clean_simd, Call call) {
  auto next = std::make_shared<int>(0);
  register_bench(name, opt, [n, clean_simd, call, next](benchmark::State& st) {
    int i = *next;
    try {
      if (clean_simd) clean_simd_state();
      for (auto _ : st) {
        call(i);
        if (++i == n) i = 0;
      }
    } catch (const std::exception& e) {
      st.SkipWithError(e.what());
    }
    *next = i;
  });
}

// ---------------------------------------------------------------------------
// The modes, one file each
// ---------------------------------------------------------------------------
int run_models(const Options& opt);                                           // table.cpp
int run_batch(const Options& opt);                                            // batched.cpp
int run_scaling(const Options& opt);                                          // scaling.cpp
int run_fd(const Options& opt);                                               // fd_study.cpp
int run_fd_ops(const std::string& spec);                                      // fd_study.cpp
int run_fd_accuracy(const std::string& out_dir, const std::string& models);   // fd_study.cpp
int run_fd_global(const std::string& out_dir);                                // fd_study.cpp
int run_dca_accuracy(const std::string& out_dir, const std::string& models);  // fd_study.cpp
int run_dca_timing(const Options& opt);                                       // dca_study.cpp
int run_large_model(int links, const std::string& out_dir);                   // large_model.cpp
int run_contact(const Options& opt);                                          // contact.cpp
int run_derivatives_peer(const Options& opt);                                 // derivatives_peer.cpp

}  // namespace plucker_bench
