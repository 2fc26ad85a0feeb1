// plucker_bench: one binary for every benchmark of the project (`plucker_bench --help`; the
// modes, their options, how they measure and why: docs/benchmark_notes.md).
#include <benchmark/benchmark.h>
#if defined(__AVX__)
#include <immintrin.h>
#endif
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fd_models.hpp"
#include "peers.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"

namespace {

namespace fs = std::filesystem;
using plucker::MatX;
using plucker::VecX;
using plucker_bench::Peer;
using plucker_bench::Task;

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

std::string default_out_dir() {
  if (const char* e = std::getenv("PLUCKER_BENCH_OUT"); e && *e) return e;
#ifdef PLUCKER_SOURCE_DIR
  return std::string(PLUCKER_SOURCE_DIR) + "/build/bench";
#else
  return "build/bench";
#endif
}

std::string shared_dir() {
  if (const char* e = std::getenv("PLUCKER_SHARED_DIR"); e && *e) return e;
#ifdef PLUCKER_SHARED_DIR
  return PLUCKER_SHARED_DIR;
#else
  return "";
#endif
}

// ---------------------------------------------------------------------------
// Output capture: the loaders (ours, urdfdom, kdl_parser, DART, MuJoCo) print warnings
// about the robot files; keep them out of the report unless something fails.
// ---------------------------------------------------------------------------
class Quiet {
 public:
  Quiet() {
    std::fflush(stdout);
    std::fflush(stderr);
    std::cout.flush();
    std::cerr.flush();
    file_ = std::tmpfile();
    if (!file_) return;
    saved_out_ = dup(1);
    saved_err_ = dup(2);
    dup2(fileno(file_), 1);
    dup2(fileno(file_), 2);
  }
  /// Restores stdout/stderr; returns what was printed meanwhile.
  std::string release() {
    if (!file_) return captured_;
    std::fflush(stdout);
    std::fflush(stderr);
    std::cout.flush();
    std::cerr.flush();
    dup2(saved_out_, 1);
    dup2(saved_err_, 2);
    close(saved_out_);
    close(saved_err_);
    std::rewind(file_);
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), file_)) > 0) captured_.append(buf, n);
    std::fclose(file_);
    file_ = nullptr;
    return captured_;
  }
  ~Quiet() { release(); }

 private:
  FILE* file_ = nullptr;
  int saved_out_ = -1, saved_err_ = -1;
  std::string captured_;
};

std::string one_line(std::string s, std::size_t max = 200) {
  for (char& c : s)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  s.erase(std::unique(s.begin(), s.end(), [](char a, char b) { return a == ' ' && b == ' '; }), s.end());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.size() > max) s = s.substr(0, max) + "...";
  return s;
}

std::string fmt_e(double x) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1e", x);
  return b;
}

// ---------------------------------------------------------------------------
// URDF copy without <visual>/<collision> (MuJoCo and DART open the absent meshes).
// ---------------------------------------------------------------------------
std::string strip_geometry(std::string xml) {
  for (const std::string tag : {"visual", "collision"}) {
    std::size_t pos = 0;
    while ((pos = xml.find("<" + tag, pos)) != std::string::npos) {
      const char next = pos + tag.size() + 1 < xml.size() ? xml[pos + tag.size() + 1] : '\0';
      if (!(next == '>' || next == '/' || std::isspace(static_cast<unsigned char>(next)))) {
        ++pos;  // e.g. <collision_checking>
        continue;
      }
      const std::size_t gt = xml.find('>', pos);
      if (gt == std::string::npos) break;
      std::size_t end;
      if (xml[gt - 1] == '/') {
        end = gt + 1;
      } else {
        const std::size_t close = xml.find("</" + tag, gt);
        if (close == std::string::npos) break;
        end = xml.find('>', close);
        if (end == std::string::npos) break;
        ++end;
      }
      xml.erase(pos, end - pos);
    }
  }
  return xml;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/plucker_bench_XXXXXX";
    if (mkdtemp(tmpl)) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// A copy of the URDF without <visual>/<collision> in tmp (what the peers load); its path.
std::string stripped_copy(const std::string& urdf, const TempDir& tmp) {
  std::ifstream in(urdf);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string stripped = tmp.path() + "/" + fs::path(urdf).filename().string();
  std::ofstream(stripped) << strip_geometry(ss.str());
  return stripped;
}

// ---------------------------------------------------------------------------
// A model under test with its state pool, workspace and peers.
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
  std::string singular;  // non-empty: forward dynamics undefined, why
  std::map<std::string, std::string> skipped;  // algorithm -> why (plucker side)
  std::vector<PeerEntry> peers;

  auto q(int i) const { return Q.col(i); }
  auto v(int i) const { return V.col(i); }
  auto a(int i) const { return A.col(i); }
  auto tau(int i) const { return TAU.col(i); }
};

void make_pool(Bundle& b, int n) {
  std::mt19937_64 rng(kSeed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const int nq = b.model.nq(), nv = b.model.nv();
  b.n = n;
  b.Q.resize(nq, n);
  b.V.resize(nv, n);
  b.A.resize(nv, n);
  b.TAU.resize(nv, n);
  for (int i = 0; i < n; ++i) {
    b.Q.col(i) = plucker::random_configuration(b.model, rng);
    for (int k = 0; k < nv; ++k) b.V(k, i) = unit(rng);
    for (int k = 0; k < nv; ++k) b.A(k, i) = unit(rng);
    for (int k = 0; k < nv; ++k) b.TAU(k, i) = 10.0 * unit(rng);
  }
  b.data = std::make_unique<plucker::Data>(b.model);
}

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

void fd(Bundle& b, int i, plucker::ForwardDynamicsMethod m) {
  plucker::forward_dynamics(b.model, *b.data, b.q(i), b.v(i), b.tau(i), m);
}

// clang-format off
const Algorithm kAlgorithms[] = {
  {"rnea", false, Task::InverseDynamics, [](Bundle& b, int i) { plucker::rnea(b.model, *b.data, b.q(i), b.v(i), b.a(i)); }},
  {"crba", false, Task::MassMatrix, [](Bundle& b, int i) { plucker::crba(b.model, *b.data, b.q(i)); }},
  {"crba_upper", false, std::nullopt, [](Bundle& b, int i) { plucker::crba(b.model, *b.data, b.q(i), plucker::Triangle::Upper); }},
  {"aba", true, Task::ForwardDynamics, [](Bundle& b, int i) { plucker::aba(b.model, *b.data, b.q(i), b.v(i), b.tau(i)); }},
  {"forward_dynamics_crba", true, std::nullopt, [](Bundle& b, int i) { plucker::forward_dynamics_crba(b.model, *b.data, b.q(i), b.v(i), b.tau(i)); }},
  {"nonlinear_effects", false, std::nullopt, [](Bundle& b, int i) { plucker::nonlinear_effects(b.model, *b.data, b.q(i), b.v(i)); }},
  {"forward_kinematics", false, std::nullopt, [](Bundle& b, int i) { plucker::forward_kinematics(b.model, *b.data, b.q(i)); }},
  {"jacobian", false, std::nullopt, [](Bundle& b, int i) { plucker::body_jacobian(b.model, *b.data, b.q(i), b.model.nbodies() - 1); }},
  {"mass_matrix_direct", false, std::nullopt, [](Bundle& b, int i) { plucker::mass_matrix_direct(b.model, *b.data, b.q(i)); }},
  {"mass_matrix_symmetry", false, std::nullopt, [](Bundle& b, int i) { plucker::mass_matrix_symmetry(b.model, *b.data, b.q(i)); }},
  {"rnea_composite", false, std::nullopt, [](Bundle& b, int i) { plucker::rnea_composite(b.model, *b.data, b.q(i), b.v(i), b.a(i)); }},
  {"minv", true, std::nullopt, [](Bundle& b, int i) { plucker::minv(b.model, *b.data, b.q(i)); }},
  {"fd_aba", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Aba); }},
  {"fd_crba_cholesky", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::CrbaCholesky); }},
  {"fd_crba_ltdl", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::CrbaLtdl); }},
  {"fd_direct_cholesky", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::DirectCholesky); }},
  {"fd_symmetry_cholesky", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::SymmetryCholesky); }},
  {"fd_cg", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::ConjugateGradient); }},
  {"fd_pcg", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::PreconditionedCG); }},
  {"fd_innovations", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Innovations); }},
  {"fd_minv", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Minv); }},
  {"fd_auto", true, std::nullopt, [](Bundle& b, int i) { fd(b, i, plucker::ForwardDynamicsMethod::Auto); }},
};
// clang-format on

const char* task_algorithm(Task t) {
  for (const Algorithm& a : kAlgorithms)
    if (a.peer == t) return a.name;
  return "?";
}

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------
// Robots meant to be used with a free-flyer root (models/README.md); the others are fixed-base.
const std::set<std::string> kFloating = {"talos_full", "simple_humanoid", "romeo_small", "romeo", "anymal",
                                         "solo12",     "hyq",             "icub",        "pr2"};
// Models whose joint-space inertia is singular (massless moving links): no forward dynamics.
const std::map<std::string, std::string> kSingular = {
    {"romeo_ff", "singular joint-space inertia (24 massless finger links)"}};
// Display order (others follow alphabetically).
const std::vector<std::string> kOrder = {"ur5",       "iiwa14",        "panda",
                                         "chain32",   "chain1024",     "solo12_ff",
                                         "anymal_ff", "hyq_ff",        "talos_full_ff",
                                         "simple_humanoid_ff", "romeo_small_ff", "romeo_ff",
                                         "icub_ff",   "pr2_ff"};

struct Spec {
  std::string name, source, urdf;  // urdf empty for builders
  bool floating = false;
  std::function<plucker::Model()> build;
};

std::vector<Spec> model_specs(std::vector<std::string>& notes) {
  std::vector<Spec> specs;
  const std::string shared = shared_dir();
  const fs::path models = fs::path(shared) / "models";
  std::error_code ec;
  if (shared.empty() || !fs::is_directory(models, ec)) {
    notes.push_back("shared models directory not found ('" + models.string() +
                    "'): robot models skipped (set PLUCKER_SHARED_DIR)");
  } else {
    std::vector<Spec> robots;
    for (const auto& e : fs::directory_iterator(models, ec)) {
      if (e.path().extension() != ".urdf") continue;
      const std::string stem = e.path().stem().string();
      Spec s;
      s.floating = kFloating.count(stem) > 0;
      s.name = stem + (s.floating ? "_ff" : "");
      s.source = "models/" + e.path().filename().string() + (s.floating ? " + free-flyer root" : " (fixed base)");
      s.urdf = e.path().string();
      robots.push_back(s);
    }
    auto rank = [](const std::string& n) {
      auto it = std::find(kOrder.begin(), kOrder.end(), n);
      return it == kOrder.end() ? kOrder.size() : static_cast<std::size_t>(it - kOrder.begin());
    };
    std::sort(robots.begin(), robots.end(), [&](const Spec& a, const Spec& b) {
      return std::make_pair(rank(a.name), a.name) < std::make_pair(rank(b.name), b.name);
    });
    specs = robots;
  }
  specs.push_back({"builder_chain32", "build_chain(32)", "", false, [] { return plucker::build_chain(32); }});
  specs.push_back({"builder_tree32", "build_random_tree(32, bf=2, skew=0.5, taper=0.95)", "", false,
                   [] { return plucker::build_random_tree(32, 2.0, 0.5, 0.95); }});
  specs.push_back({"builder_humanoid_ff", "build_humanoid(floating)", "", true, [] { return plucker::build_humanoid(0, true); }});
  specs.push_back({"builder_quadruped_ff", "build_quadruped(floating)", "", true, [] { return plucker::build_quadruped(0, true); }});
  specs.push_back({"free_bodies8", "8 bodies, each with a free-flyer to the world (bench_main.cpp)", "", true,
                   [] { return plucker_bench::multi_dof_bodies(8, false); }});
  return specs;
}

plucker_bench::ModelDesc describe(const Bundle& b, const std::string& stripped, bool floating) {
  plucker_bench::ModelDesc d;
  d.name = b.name;
  d.urdf = stripped;
  d.floating = floating;
  d.root_link = floating ? b.model.body_name(1) : b.model.body_name(0);
  d.nq = b.model.nq();
  d.nv = b.model.nv();
  for (int i = 1; i < b.model.nbodies(); ++i) {
    if (b.model.joint_nv(i) == 0) continue;
    plucker_bench::JointDesc j;
    j.name = b.model.joint_name(i);
    j.idx_q = b.model.idx_q(i);
    j.idx_v = b.model.idx_v(i);
    j.nq = b.model.joint_nq(i);
    j.nv = b.model.joint_nv(i);
    j.free_flyer = plucker::joint_kind(b.model.joint(i)) == "free_flyer";
    d.joints.push_back(j);
  }
  for (int k = 0; k < 3; ++k) d.gravity[k] = b.model.gravity()[k];
  return d;
}

/// The peer's adapter, its library's printing silenced; nullptr with `why` (the factory's
/// reason, the exception, or else what the library printed) when it cannot be made.
std::unique_ptr<Peer> create_peer(plucker_bench::PeerFactory factory, const plucker_bench::ModelDesc& desc,
                                  std::string& why) {
  std::unique_ptr<Peer> peer;
  std::string printed;
  {
    Quiet quiet;
    try {
      peer = factory(desc, why);
    } catch (const std::exception& e) {
      why = std::string("exception: ") + e.what();
    }
    printed = quiet.release();
  }
  if (!peer && why.empty()) why = printed;
  return peer;
}

plucker_bench::StatePool pool_of(const Bundle& b) {
  plucker_bench::StatePool p;
  p.n = b.n;
  p.nq = b.model.nq();
  p.nv = b.model.nv();
  p.q.assign(b.Q.data(), b.Q.data() + b.Q.size());
  p.v.assign(b.V.data(), b.V.data() + b.V.size());
  p.a.assign(b.A.data(), b.A.data() + b.A.size());
  p.tau.assign(b.TAU.data(), b.TAU.data() + b.TAU.size());
  return p;
}

// ---------------------------------------------------------------------------
// Agreement of a peer with plucker on the first states of the pool.
// ---------------------------------------------------------------------------
struct Check {
  Task task;
  double err = 0.0;  // max relative error (FD: normwise backward error, see below)
  double qdd_err = 0.0;  // FD only: relative difference of the accelerations (information)
  bool ok = false;
};

double inf_norm(const Eigen::Ref<const MatX>& m) { return m.size() ? m.cwiseAbs().maxCoeff() : 0.0; }

Check check_task(Bundle& b, Peer& peer, Task task, int nstates) {
  Check c{task};
  const int nv = b.model.nv();
  plucker::Data& d = *b.data;
  for (int i = 0; i < nstates; ++i) {
    switch (task) {
      case Task::InverseDynamics: {
        VecX theirs(nv);
        peer.compute(task, i, theirs.data());
        const VecX ours = plucker::rnea(b.model, d, b.q(i), b.v(i), b.a(i));
        c.err = std::max(c.err, inf_norm(theirs - ours) / std::max(inf_norm(ours), 1e-300));
        break;
      }
      case Task::MassMatrix: {
        MatX theirs(nv, nv);
        peer.compute(task, i, theirs.data());
        const MatX ours = plucker::crba(b.model, d, b.q(i));
        c.err = std::max(c.err, inf_norm(theirs - ours) / std::max(inf_norm(ours), 1e-300));
        break;
      }
      case Task::ForwardDynamics: {
        // Normwise backward error of the peer's qdd for M qdd = tau - c (plucker's M and
        // c): |ID(q, v, qdd) - tau| / (|M| |qdd| + |tau| + |c|), infinity norms. It is the
        // relative size of the smallest perturbation of (M, tau - c) that makes the peer's
        // qdd exact, so it is not inflated by the conditioning of M the way the forward
        // difference of qdd (recorded for information) is.
        VecX theirs(nv);
        peer.compute(task, i, theirs.data());
        const VecX bias = plucker::nonlinear_effects(b.model, d, b.q(i), b.v(i));
        const double normM = plucker::crba(b.model, d, b.q(i)).cwiseAbs().rowwise().sum().maxCoeff();
        const VecX tau_back = plucker::rnea(b.model, d, b.q(i), b.v(i), theirs);
        const double scale = std::max(normM * inf_norm(theirs) + inf_norm(b.tau(i)) + inf_norm(bias), 1e-300);
        c.err = std::max(c.err, inf_norm(tau_back - b.tau(i)) / scale);
        const VecX ours = plucker::aba(b.model, d, b.q(i), b.v(i), b.tau(i));
        c.qdd_err = std::max(c.qdd_err, inf_norm(theirs - ours) / std::max(inf_norm(ours), 1e-300));
        break;
      }
    }
  }
  return c;
}

double tolerance(const std::string& library) { return library == "mujoco" ? 1e-7 : 1e-8; }

// ---------------------------------------------------------------------------
// Collecting reporter: keeps the per-repetition times, prints compact progress.
// ---------------------------------------------------------------------------
struct Key {
  std::string model, algorithm, library;
};

class Collector : public benchmark::BenchmarkReporter {
 public:
  explicit Collector(std::map<std::string, Key> keys) : keys_(std::move(keys)) {}
  bool ReportContext(const Context& ctx) override {
    num_cpus_ = ctx.cpu_info.num_cpus;
    mhz_ = ctx.cpu_info.cycles_per_second / 1e6;
    scaling_ = ctx.cpu_info.scaling == benchmark::CPUInfo::ENABLED;
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration) continue;
      const std::string name = r.run_name.function_name;
      if (r.error_occurred) {
        errors_[name] = r.error_message;
        continue;
      }
      times_[name].push_back(r.GetAdjustedCPUTime());
      auto it = keys_.find(name);
      const std::string model = it == keys_.end() ? name : it->second.model;
      if (model != current_) {
        if (!current_.empty()) std::cerr << "\n";
        current_ = model;
        std::cerr << "  " << model << " " << std::flush;
      }
      if (r.repetition_index <= 0) std::cerr << "." << std::flush;
    }
  }
  void Finalize() override {
    if (!current_.empty()) std::cerr << "\n";
  }
  /// Median over the repetitions, ns; NaN if not run.
  double median(const std::string& name) const {
    auto it = times_.find(name);
    if (it == times_.end() || it->second.empty()) return std::nan("");
    std::vector<double> t = it->second;
    std::sort(t.begin(), t.end());
    const std::size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  }
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

// ---------------------------------------------------------------------------
// Reference figures (Pinocchio 3.7, median ns, same kind of machine) and targets.
// ---------------------------------------------------------------------------
struct Ref3 {
  double id, m, fd;
};
const std::map<std::string, Ref3> kPinocchioNs = {
    {"ur5", {758, 428, 1721}},       {"iiwa14", {953, 535, 2004}},         {"panda", {1207, 674, 2696}},
    {"solo12_ff", {1845, 948, 4108}}, {"talos_full_ff", {5753, 3996, 13335}}, {"chain32", {4298, 4090, 9670}}};
// MuJoCo time / Pinocchio time (ID, M, FD) on the same machine; our target is
// mujoco/plucker >= 1.25 x mujoco/pinocchio.
const std::map<std::string, Ref3> kMujocoOverPinocchio = {
    {"ur5", {1.73, 2.27, 0.90}},       {"iiwa14", {1.54, 2.08, 0.88}},        {"panda", {1.51, 2.01, 0.85}},
    {"solo12_ff", {1.56, 2.49, 1.04}}, {"talos_full_ff", {1.62, 2.07, 1.18}}, {"chain32", {1.56, 1.59, 1.40}}};
constexpr double kTargetFactor = 1.25;
const std::vector<std::string> kHeadline = {"ur5", "iiwa14", "panda", "solo12_ff", "talos_full_ff", "chain32"};

double ref_of(const Ref3& r, const std::string& algorithm) {
  return algorithm == "rnea" ? r.id : algorithm == "crba" ? r.m : algorithm == "aba" ? r.fd : std::nan("");
}

std::string fmt_ns(double ns) {
  if (!std::isfinite(ns)) return "-";
  char b[32];
  if (ns < 1e7) {
    std::snprintf(b, sizeof(b), "%.0f", ns);
  } else {
    const int e = static_cast<int>(std::floor(std::log10(ns)));
    std::snprintf(b, sizeof(b), "%.2fe%d", ns / std::pow(10.0, e), e);
  }
  return b;
}
std::string fmt_ratio(double r) {
  if (!std::isfinite(r)) return "-";
  char b[32];
  std::snprintf(b, sizeof(b), "%.2f", r);
  return b;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) o += ' ';
    else o += c;
  }
  return o;
}

std::string compiler_string() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("g++ ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string build_flags() {
  std::string f;
#ifdef __OPTIMIZE__
  f += "optimized";
#else
  f += "not optimized";
#endif
#ifdef PLUCKER_BENCH_FLAGS
  f = PLUCKER_BENCH_FLAGS;
#endif
#ifdef __AVX512F__
  f += " [AVX-512]";
#elif defined(__AVX2__)
  f += " [AVX2]";
#elif defined(__AVX__)
  f += " [AVX]";
#else
  f += " [no AVX: not built with -march=native?]";
#endif
  return f;
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(f >> a >> b >> c)) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f %.2f %.2f", a, b, c);
  return buf;
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  char b[64];
  std::strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&t));
  return b;
}

// ---------------------------------------------------------------------------
// Default mode: models x algorithms x libraries
// ---------------------------------------------------------------------------
int run_models(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string load_start = loadavg();
  std::vector<std::string> notes, agreement;
  TempDir tmp;
  std::vector<std::unique_ptr<Bundle>> bundles;
  std::map<std::string, Key> keys;
  std::vector<std::string> libraries = {"plucker"};
  std::vector<std::pair<std::string, plucker_bench::PeerFactory>> factories;
  if (opt.peers) {
#ifdef PLUCKER_HAVE_MUJOCO
    factories.emplace_back("mujoco", &plucker_bench::make_mujoco_peer);
#endif
#ifdef PLUCKER_HAVE_KDL
    factories.emplace_back("kdl", &plucker_bench::make_kdl_peer);
#endif
#ifdef PLUCKER_HAVE_DART
    factories.emplace_back("dart", &plucker_bench::make_dart_peer);
#endif
  }
  for (auto& f : factories) libraries.push_back(f.first);
  std::map<std::string, std::map<std::string, std::string>> methods;  // library -> algorithm -> method
  methods["plucker"] = {{"rnea", "plucker::rnea"}, {"crba", "plucker::crba (full symmetric M)"}, {"aba", "plucker::aba"}};

  const std::regex filter(opt.models.empty() ? std::string(".*") : opt.models);
  std::cerr << "plucker_bench: preparing models (" << kPoolSize << " random states each) and checking peers\n";
  for (const Spec& spec : model_specs(notes)) {
    if (!std::regex_search(spec.name, filter)) continue;
    auto b = std::make_unique<Bundle>();
    b->name = spec.name;
    b->source = spec.source;
    std::string stripped;
    try {
      if (spec.urdf.empty()) {
        b->model = spec.build();
      } else {
        plucker::UrdfOptions uo;
        uo.root = spec.floating ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
        uo.on_warning = [](const std::string&) {};
        b->model = plucker::load_urdf(spec.urdf, uo);
        stripped = stripped_copy(spec.urdf, tmp);
      }
    } catch (const std::exception& e) {
      notes.push_back(spec.name + ": not loaded by plucker (" + one_line(e.what()) + "), skipped");
      continue;
    }
    make_pool(*b, kPoolSize);
    if (auto it = kSingular.find(b->name); it != kSingular.end()) b->singular = it->second;
    // Every algorithm must run on the first states (forward dynamics may be singular).
    for (const Algorithm& a : kAlgorithms) {
      if (a.fd && !b->singular.empty()) {
        b->skipped[a.name] = b->singular;
        continue;
      }
      try {
        for (int i = 0; i < std::min(b->n, 10); ++i) a.run(*b, i);
      } catch (const std::exception& e) {
        b->skipped[a.name] = one_line(e.what());
        if (a.fd && b->singular.empty()) b->singular = one_line(e.what());
      }
    }
    for (const auto& [alg, why] : b->skipped) notes.push_back(b->name + " " + alg + ": not timed (" + why + ")");

    // Peers: only on URDF models (they load the same file).
    if (!spec.urdf.empty()) {
      const plucker_bench::ModelDesc desc = describe(*b, stripped, spec.floating);
      const plucker_bench::StatePool pool = pool_of(*b);
      const int nstates = b->model.nv() > 200 ? 3 : 10;
      for (auto& [lib, factory] : factories) {
        std::string why;
        std::unique_ptr<Peer> peer = create_peer(factory, desc, why);
        const std::string head = "agreement " + lib + " " + b->name + ": ";
        if (!peer) {
          agreement.push_back(head + "not compared, not timed (" + one_line(why) + ")");
          continue;
        }
        peer->set_pool(pool);
        std::vector<Check> checks;
        std::vector<std::string> unsupported;
        for (Task t : {Task::InverseDynamics, Task::MassMatrix, Task::ForwardDynamics}) {
          std::string why_not;
          const std::string m = peer->method(t, why_not);
          if (m.empty()) {
            unsupported.push_back(std::string(plucker_bench::task_name(t)) + ": " + why_not);
            continue;
          }
          if (t == Task::ForwardDynamics && !b->singular.empty()) {
            unsupported.push_back(std::string("FD: ") + b->singular);
            continue;
          }
          methods[lib][task_algorithm(t)] = m;
          Check c = check_task(*b, *peer, t, nstates);
          c.ok = std::isfinite(c.err) && c.err <= tolerance(lib);
          checks.push_back(c);
          if (t == Task::InverseDynamics && !c.ok) break;  // nothing else is comparable
        }
        double worst = 0.0;
        bool id_ok = false, all_ok = true;
        std::ostringstream detail;
        for (const Check& c : checks) {
          worst = std::max(worst, c.err);
          all_ok = all_ok && c.ok;
          if (c.task == Task::InverseDynamics) id_ok = c.ok;
          detail << (detail.tellp() > 0 ? ", " : "") << plucker_bench::task_name(c.task) << " " << fmt_e(c.err);
          if (c.task == Task::ForwardDynamics) detail << " (backward err; qdd rel diff " << fmt_e(c.qdd_err) << ")";
          if (!c.ok) detail << " FAIL";
        }
        std::ostringstream line;
        line << head << "max rel err " << fmt_e(worst) << " " << (all_ok ? "OK" : id_ok ? "PARTIAL" : "DISAGREE")
             << " [" << detail.str() << "; tol " << fmt_e(tolerance(lib)) << "; " << nstates << " states]";
        if (!unsupported.empty()) {
          line << " not timed: ";
          for (std::size_t k = 0; k < unsupported.size(); ++k) line << (k ? "; " : "") << unsupported[k];
        }
        if (!id_ok) line << " -> inverse dynamics disagrees: " << lib << " not timed on " << b->name;
        agreement.push_back(line.str());
        if (!id_ok) continue;
        PeerEntry entry{std::move(peer), {}};
        for (const Check& c : checks)
          if (c.ok) entry.timed.insert(c.task);
        b->peers.push_back(std::move(entry));
      }
    }
    bundles.push_back(std::move(b));
  }
  for (const std::string& l : agreement) std::cout << l << "\n";
  for (const std::string& n : notes) std::cout << "note: " << n << "\n";
  std::cout << std::flush;

  // Registration: per model, per algorithm, plucker then the peers (interleaved in time).
  for (auto& bp : bundles) {
    Bundle* b = bp.get();
    for (const Algorithm& a : kAlgorithms) {
      if (!b->skipped.count(a.name)) {
        const std::string name = "model/" + b->name + "/" + a.name + "/plucker";
        keys[name] = {b->name, a.name, "plucker"};
        auto fn = a.run;
        auto next = std::make_shared<int>(0);
        register_bench(name, opt, [b, fn, next](benchmark::State& st) {
          int i = *next;
          const int n = b->n;
          try {
            clean_simd_state();
            for (auto _ : st) {
              fn(*b, i);
              if (++i == n) i = 0;
            }
          } catch (const std::exception& e) {
            st.SkipWithError(e.what());
          }
          *next = i;
        });
      }
      if (!a.peer) continue;
      const Task task = *a.peer;
      for (PeerEntry& pe : b->peers) {
        if (!pe.timed.count(task)) continue;
        Peer* peer = pe.peer.get();
        const std::string name = "model/" + b->name + "/" + a.name + "/" + peer->library();
        keys[name] = {b->name, a.name, peer->library()};
        auto next = std::make_shared<int>(0);
        register_bench(name, opt, [b, peer, task, next](benchmark::State& st) {
          int i = *next;
          const int n = b->n;
          try {
            clean_simd_state();
            for (auto _ : st) {
              peer->run(task, i);
              if (++i == n) i = 0;
            }
          } catch (const std::exception& e) {
            st.SkipWithError(e.what());
          }
          *next = i;
        });
      }
    }
  }

  const double t_prep = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cerr << "plucker_bench: prepared in " << static_cast<int>(t_prep) << " s; running " << keys.size()
            << " benchmarks (" << opt.reps << " repetitions x " << opt.min_time << " s)\n";
  Collector collector(keys);
  benchmark::RunSpecifiedBenchmarks(&collector);
  for (const auto& [name, err] : collector.errors()) notes.push_back(name + ": error: " + err);

  // ---- results ----
  struct Row {
    std::string model, algorithm;
    std::map<std::string, double> ns;
  };
  std::vector<Row> rows;
  for (auto& bp : bundles)
    for (const Algorithm& a : kAlgorithms) {
      Row r{bp->name, a.name, {}};
      bool any = false;
      for (const std::string& lib : libraries) {
        const double t = collector.median("model/" + bp->name + "/" + a.name + "/" + lib);
        if (std::isfinite(t)) r.ns[lib] = t, any = true;
      }
      if (any) rows.push_back(r);
    }
  auto get = [](const Row& r, const std::string& lib) {
    auto it = r.ns.find(lib);
    return it == r.ns.end() ? std::nan("") : it->second;
  };

  // Table
  std::ostringstream table;
  {
    std::vector<std::string> header = {"model", "algorithm", "plucker ns"};
    for (std::size_t k = 1; k < libraries.size(); ++k) {
      header.push_back(libraries[k] + " ns");
      header.push_back(libraries[k] + "/pl");
    }
    header.push_back("pinocchio ns");
    header.push_back("pin/pl");
    std::vector<std::vector<std::string>> cells;
    for (const Row& r : rows) {
      const double ours = get(r, "plucker");
      std::vector<std::string> c = {r.model, r.algorithm, fmt_ns(ours)};
      for (std::size_t k = 1; k < libraries.size(); ++k) {
        const double t = get(r, libraries[k]);
        c.push_back(fmt_ns(t));
        c.push_back(fmt_ratio(t / ours));
      }
      double pin = std::nan("");
      if (auto it = kPinocchioNs.find(r.model); it != kPinocchioNs.end()) pin = ref_of(it->second, r.algorithm);
      c.push_back(fmt_ns(pin));
      c.push_back(fmt_ratio(pin / ours));
      cells.push_back(c);
    }
    std::vector<std::size_t> w(header.size());
    for (std::size_t k = 0; k < header.size(); ++k) {
      w[k] = header[k].size();
      for (const auto& c : cells) w[k] = std::max(w[k], c[k].size());
    }
    auto line = [&](const std::vector<std::string>& c) {
      for (std::size_t k = 0; k < c.size(); ++k) {
        if (k < 2)
          table << (k ? "  " : "") << c[k] << std::string(w[k] - c[k].size(), ' ');
        else
          table << "  " << std::string(w[k] - c[k].size(), ' ') << c[k];
      }
      table << "\n";
    };
    line(header);
    std::size_t total = 0;
    for (std::size_t k = 0; k < w.size(); ++k) total += w[k] + (k ? 2 : 0);
    table << std::string(total, '-') << "\n";
    std::string last;
    for (std::size_t k = 0; k < cells.size(); ++k) {
      if (!last.empty() && cells[k][0] != last) table << "\n";
      last = cells[k][0];
      line(cells[k]);
    }
  }

  // MuJoCo targets
  std::ostringstream targets;
  for (const std::string& m : kHeadline) {
    const Ref3& ref = kMujocoOverPinocchio.at(m);
    for (const char* alg : {"rnea", "crba", "aba"}) {
      const Row* row = nullptr;
      for (const Row& r : rows)
        if (r.model == m && r.algorithm == alg) row = &r;
      const double goal = kTargetFactor * ref_of(ref, alg);
      const char* task = std::string(alg) == "rnea" ? "ID" : std::string(alg) == "crba" ? "M " : "FD";
      char buf[256];
      const double ours = row ? get(*row, "plucker") : std::nan("");
      const double mj = row ? get(*row, "mujoco") : std::nan("");
      if (!std::isfinite(ours) || !std::isfinite(mj)) {
        std::snprintf(buf, sizeof(buf), "target %-14s %s (%s): no same-run MuJoCo figure  N/A\n", m.c_str(), task, alg);
      } else {
        const double ratio = mj / ours;
        std::snprintf(buf, sizeof(buf), "target %-14s %s (%s): mujoco/plucker %.2f, goal >= %.2f (1.25 x %.2f)  %s\n",
                      m.c_str(), task, alg, ratio, goal, ref_of(ref, alg), ratio >= goal ? "PASS" : "MISS");
      }
      targets << buf;
    }
  }

  // Forward dynamics: what `auto` picked vs the fastest single method (fd_* rows) per model.
  std::ostringstream fdsum;
  for (auto& bp : bundles) {
    std::string best;
    double best_ns = std::nan(""), auto_ns = std::nan(""), aba_ns = std::nan(""), fd_aba_ns = std::nan("");
    for (const Row& r : rows) {
      if (r.model != bp->name) continue;
      const double t = get(r, "plucker");
      if (r.algorithm == "aba") aba_ns = t;
      if (r.algorithm.rfind("fd_", 0) != 0) continue;
      if (r.algorithm == "fd_aba") fd_aba_ns = t;
      if (r.algorithm == "fd_auto") auto_ns = t;
      else if (std::isfinite(t) && !(t >= best_ns)) best_ns = t, best = r.algorithm.substr(3);
    }
    if (!std::isfinite(auto_ns) || !std::isfinite(best_ns)) continue;
    const auto choice = plucker::forward_dynamics_choice(bp->model);
    char buf[320];
    std::snprintf(buf, sizeof(buf),
                  "fd auto %-22s picks %-10s %9s ns; fastest single method %-17s %9s ns; auto/best %s "
                  "(noise: fd_aba/aba, the same code, %s)\n",
                  bp->name.c_str(), std::string(plucker::to_string(choice.method)).c_str(), fmt_ns(auto_ns).c_str(),
                  best.c_str(), fmt_ns(best_ns).c_str(), fmt_ratio(auto_ns / best_ns).c_str(),
                  fmt_ratio(fd_aba_ns / aba_ns).c_str());
    fdsum << buf;
  }

  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "\nMedian CPU ns per call (" << opt.reps << " repetitions, pool of " << kPoolSize
            << " random states); <lib>/pl = that library's time / plucker's (> 1: plucker faster).\n"
            << "Rows rnea / crba / aba: peers time their inverse dynamics / mass matrix / forward dynamics.\n"
            << "pinocchio ns: reference figures of Pinocchio 3.7 on the same kind of machine (not measured here).\n\n"
            << table.str() << "\n"
            << "MuJoCo targets (same-run mujoco/plucker >= 1.25 x mujoco/pinocchio):\n"
            << targets.str()
            << "\nForward dynamics (forward_dynamics.hpp): the method `auto` runs vs the fastest fd_* row:\n"
            << fdsum.str();
  for (const std::string& n : notes)
    if (n.find(": error: ") != std::string::npos) std::cout << "note: " << n << "\n";
  char eb[64];
  std::snprintf(eb, sizeof(eb), "%.0f", elapsed);
  std::cout << "\nplucker_bench: " << keys.size() << " benchmarks in " << eb << " s\n";

  // ---- files ----
  std::error_code ec;
  fs::create_directories(opt.out, ec);
  {
    std::ofstream js(opt.out + "/results.json");
    js << "[\n";
    bool first = true;
    for (const Row& r : rows)
      for (const std::string& lib : libraries) {
        const double t = get(r, lib);
        if (!std::isfinite(t)) continue;
        char b[64];
        std::snprintf(b, sizeof(b), "%.1f", t);
        js << (first ? "" : ",\n") << "  {\"model\": \"" << json_escape(r.model) << "\", \"algorithm\": \""
           << json_escape(r.algorithm) << "\", \"library\": \"" << lib << "\", \"ns\": " << b << "}";
        first = false;
      }
    js << "\n]\n";
  }
  {
    std::ofstream ag(opt.out + "/agreement.txt");
    for (const std::string& l : agreement) ag << l << "\n";
    for (const std::string& n : notes) ag << "note: " << n << "\n";
  }
  {
    std::ofstream mt(opt.out + "/meta.json");
    mt << "{\n  \"date\": \"" << now_utc() << "\",\n  \"compiler\": \"" << json_escape(compiler_string())
       << "\",\n  \"flags\": \"" << json_escape(build_flags()) << "\",\n  \"repetitions\": " << opt.reps
       << ",\n  \"timer\": \"process CPU time\",\n  \"min_time_s\": " << opt.min_time << ",\n  \"pool_size\": " << kPoolSize
       << ",\n  \"elapsed_s\": " << eb << ",\n  \"loadavg_start\": \"" << load_start
       << "\",\n  \"loadavg_end\": \"" << loadavg() << "\",\n  \"num_cpus\": " << collector.num_cpus_
       << ",\n  \"mhz\": " << collector.mhz_ << ",\n  \"cpu_scaling\": " << (collector.scaling_ ? "true" : "false")
       << ",\n  \"libraries\": [";
    for (std::size_t k = 0; k < libraries.size(); ++k) mt << (k ? ", " : "") << "\"" << libraries[k] << "\"";
    mt << "],\n  \"methods\": {";
    bool f1 = true;
    for (const auto& [lib, m] : methods) {
      mt << (f1 ? "\n" : ",\n") << "    \"" << lib << "\": {";
      bool f2 = true;
      for (const auto& [alg, how] : m) {
        mt << (f2 ? "" : ", ") << "\"" << alg << "\": \"" << json_escape(how) << "\"";
        f2 = false;
      }
      mt << "}";
      f1 = false;
    }
    mt << "\n  },\n  \"models\": [";
    for (std::size_t k = 0; k < bundles.size(); ++k) {
      const Bundle& b = *bundles[k];
      mt << (k ? ",\n" : "\n") << "    {\"model\": \"" << b.name << "\", \"source\": \"" << json_escape(b.source)
         << "\", \"nbodies\": " << b.model.nbodies() - 1 << ", \"nq\": " << b.model.nq() << ", \"nv\": " << b.model.nv()
         << "}";
    }
    mt << "\n  ]\n}\n";
  }
  std::cout << "plucker_bench: wrote " << fs::absolute(opt.out).lexically_normal().string()
            << "/{results.json,agreement.txt,meta.json}\n";
  return 0;
}

// ---------------------------------------------------------------------------
// --scaling: time vs number of bodies
// ---------------------------------------------------------------------------
int run_scaling(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Bundle>> bundles;
  std::map<std::string, Key> keys;
  struct Item {
    std::string topology;
    int n;
    Bundle* b;
  };
  std::vector<Item> items;
  const char* algs[] = {"rnea", "crba", "aba"};
  for (const std::string topo : {"chain", "tree"}) {
    for (int n = 4; n <= 1024; n *= 2) {
      auto b = std::make_unique<Bundle>();
      // taper 1: build_random_tree scales link i by taper^(i-1), which would leave the
      // last links of a large tree (nearly) massless.
      b->model = topo == "chain" ? plucker::build_chain(n) : plucker::build_random_tree(n, 2.0, 0.5, 1.0);
      b->name = topo + std::to_string(n);
      make_pool(*b, kPoolSize);
      items.push_back({topo, n, b.get()});
      for (const Algorithm& a : kAlgorithms) {
        if (std::find_if(std::begin(algs), std::end(algs), [&](const char* x) { return std::string(x) == a.name; }) ==
            std::end(algs))
          continue;
        const std::string name = "scaling/" + b->name + "/" + a.name;
        keys[name] = {b->name, a.name, "plucker"};
        Bundle* bb = b.get();
        auto fn = a.run;
        auto next = std::make_shared<int>(0);
        register_bench(name, opt, [bb, fn, next](benchmark::State& st) {
          int i = *next;
          try {
            for (auto _ : st) {
              fn(*bb, i);
              if (++i == bb->n) i = 0;
            }
          } catch (const std::exception& e) {
            st.SkipWithError(e.what());
          }
          *next = i;
        });
      }
      bundles.push_back(std::move(b));
    }
  }
  std::cerr << "plucker_bench --scaling: running " << keys.size() << " benchmarks\n";
  Collector collector(keys);
  benchmark::RunSpecifiedBenchmarks(&collector);

  std::error_code ec;
  fs::create_directories(opt.out, ec);
  std::ofstream js(opt.out + "/scaling.json");
  js << "[\n";
  bool first = true;
  for (const auto& [name, err] : collector.errors()) std::printf("note: %s: error: %s\n", name.c_str(), err.c_str());
  std::printf("\nMedian CPU ns per call vs number of moving bodies N (chains: build_chain(N); trees: "
              "build_random_tree(N, bf=2, skew=0.5, taper=1))\n\n%-8s %6s %12s %12s %12s\n",
              "topology", "N", "rnea", "crba", "aba");
  for (const Item& it : items) {
    std::printf("%-8s %6d", it.topology.c_str(), it.n);
    for (const char* alg : algs) {
      const double t = collector.median("scaling/" + it.b->name + "/" + alg);
      std::printf(" %12s", fmt_ns(t).c_str());
      if (!std::isfinite(t)) continue;
      char b[64];
      std::snprintf(b, sizeof(b), "%.1f", t);
      js << (first ? "" : ",\n") << "  {\"topology\": \"" << it.topology << "\", \"n\": " << it.n
         << ", \"model\": \"builder_" << it.b->name << "\", \"algorithm\": \"" << alg
         << "\", \"library\": \"plucker\", \"ns\": " << b << "}";
      first = false;
    }
    std::printf("\n");
  }
  js << "\n]\n";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\nplucker_bench --scaling: %zu benchmarks in %.0f s; wrote %s/scaling.json\n", keys.size(), elapsed,
              fs::absolute(opt.out).lexically_normal().string().c_str());
  return 0;
}

// ---------------------------------------------------------------------------
// --batch: rnea_batch / crba_batch / aba_batch throughput on the headline models
// ---------------------------------------------------------------------------
// Each figure: the pool of kPoolSize states evaluated by one batched call (workspace made
// once), repeated for about min_time; wall time and the process's CPU time (all threads) per
// state, median over the repetitions. Why the modes are timed in interleaved rounds, pinned,
// beside MuJoCo: docs/benchmark_notes.md, "Batched section".
double process_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct BatchTiming {
  double wall_ns = 0, cpu_ns = 0;  // per state, medians
};

/// Pins the calling thread to one CPU while alive (if it can), then restores its affinity.
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

 private:
  cpu_set_t saved_{};
  bool pinned_ = false;
};

struct BatchMode {
  std::string name;  // "single", "batch/1", ...
  int threads;
  std::function<void()> pass;  // evaluates the whole pool once
};

/// Each round times every mode once, so a slow spell of the VM falls on all of them alike; the
/// one-thread modes run pinned to one CPU (the last of the process's affinity mask).
std::vector<BatchTiming> time_interleaved(const Options& opt, int states, const std::vector<BatchMode>& modes) {
  std::vector<std::vector<double>> wall(modes.size()), cpu(modes.size());
  for (const BatchMode& m : modes) m.pass();  // warm up
  for (int r = 0; r < opt.reps; ++r)
    for (std::size_t k = 0; k < modes.size(); ++k) {
      std::optional<PinnedToOneCpu> pin;
      if (modes[k].threads == 1) pin.emplace();
      long passes = 0;
      const auto w0 = std::chrono::steady_clock::now();
      const double c0 = process_cpu_s();
      double elapsed = 0;
      do {
        modes[k].pass();
        ++passes;
        elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      } while (elapsed < opt.min_time);
      const double c = process_cpu_s() - c0;
      wall[k].push_back(1e9 * elapsed / static_cast<double>(passes * states));
      cpu[k].push_back(1e9 * c / static_cast<double>(passes * states));
    }
  auto median = [](std::vector<double> t) {
    std::sort(t.begin(), t.end());
    const std::size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  };
  std::vector<BatchTiming> out;
  for (std::size_t k = 0; k < modes.size(); ++k) out.push_back({median(wall[k]), median(cpu[k])});
  return out;
}

int run_batch(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> notes;
  const std::regex filter(opt.models.empty() ? std::string(".*") : opt.models);
  std::error_code ec;
  fs::create_directories(opt.out, ec);
  std::ofstream js(opt.out + "/batch.json");
  js << "[\n";
  bool first = true;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  TempDir tmp;
  std::printf("Batched throughput, pool of %d states per call; ns per state (wall / process CPU), states per "
              "second per core (= per CPU-second); load average at start %s; %u hardware threads; modes of a "
              "row group timed in %d interleaved rounds, one-thread modes pinned to one CPU; x pinocchio: "
              "against the issue's figure; x pin (mj): against MuJoCo's time in the same rounds / the "
              "issue's MuJoCo/Pinocchio ratio\n\n",
              kPoolSize, loadavg().c_str(), hw, opt.reps);
  std::printf("%-14s %-5s %-9s %10s %10s %14s %12s %12s %12s\n", "model", "alg", "mode", "wall ns", "cpu ns",
              "states/s/core", "pinocchio/s", "x pinocchio", "x pin (mj)");
  for (const Spec& spec : model_specs(notes)) {
    if (std::find(kHeadline.begin(), kHeadline.end(), spec.name) == kHeadline.end()) continue;
    if (!std::regex_search(spec.name, filter)) continue;
    Bundle b;
    b.name = spec.name;
    plucker::UrdfOptions uo;
    uo.root = spec.floating ? plucker::RootJoint::FreeFlyer : plucker::RootJoint::Fixed;
    uo.on_warning = [](const std::string&) {};
    b.model = spec.urdf.empty() ? spec.build() : plucker::load_urdf(spec.urdf, uo);
    make_pool(b, kPoolSize);
    const int nv = b.model.nv();
    MatX out(nv, b.n), M(nv, nv * b.n);
    const Ref3 pin = kPinocchioNs.at(b.name);
    // MuJoCo on the same pool (URDF models, when built with it and it agrees with plucker).
    const plucker_bench::StatePool pool = pool_of(b);  // the peer keeps a pointer to it
    std::unique_ptr<Peer> mujoco;
    std::set<Task> mujoco_tasks;
#ifdef PLUCKER_HAVE_MUJOCO
    if (!spec.urdf.empty()) {
      const std::string stripped = stripped_copy(spec.urdf, tmp);
      std::string why;
      mujoco = create_peer(&plucker_bench::make_mujoco_peer, describe(b, stripped, spec.floating), why);
      if (mujoco) {
        mujoco->set_pool(pool);
        for (Task t : {Task::InverseDynamics, Task::MassMatrix, Task::ForwardDynamics}) {
          std::string why_not;
          if (mujoco->method(t, why_not).empty()) continue;
          const Check c = check_task(b, *mujoco, t, 10);
          if (std::isfinite(c.err) && c.err <= tolerance("mujoco")) mujoco_tasks.insert(t);
          else notes.push_back(b.name + ": mujoco " + plucker_bench::task_name(t) + " disagrees (" + fmt_e(c.err) +
                               "), not timed");
        }
      } else {
        notes.push_back(b.name + ": mujoco not loaded (" + one_line(why) + ")");
      }
    }
#endif
    // Made unpinned, so that the two-thread workspaces' workers may run on either CPU.
    plucker::BatchWorkspace ws1(b.model, 1), ws2(b.model, 2);
    MatX Mp(ws1.jsim_pattern().nnz(), b.n);
    for (const char* alg : {"rnea", "crba", "aba"}) {
      const std::string a = alg;
      // Pinocchio's ns in these rounds by the MuJoCo yardstick (NaN without MuJoCo).
      double pin_mj_ns = std::nan("");
      auto record = [&](const std::string& mode, int threads, const BatchTiming& t) {
        const double per_core = 1e9 / t.cpu_ns, pin_rate = 1e9 / ref_of(pin, a);
        const double x_mj = pin_mj_ns / t.cpu_ns;
        std::printf("%-14s %-5s %-9s %10.1f %10.1f %14.0f %12.0f %12.2f %12.2f\n", b.name.c_str(), alg,
                    mode.c_str(), t.wall_ns, t.cpu_ns, per_core, pin_rate, per_core / pin_rate, x_mj);
        char buf[640];
        std::snprintf(buf, sizeof buf,
                      "  {\"model\": \"%s\", \"algorithm\": \"%s\", \"mode\": \"%s\", \"threads\": %d, "
                      "\"wall_ns_per_state\": %.2f, \"cpu_ns_per_state\": %.2f, \"states_per_s\": %.0f, "
                      "\"states_per_s_per_core\": %.0f, \"pinocchio_states_per_s\": %.0f, "
                      "\"x_pinocchio_mujoco_scaled\": %s}",
                      b.name.c_str(), alg, mode.c_str(), threads, t.wall_ns, t.cpu_ns, 1e9 / t.wall_ns, per_core,
                      pin_rate, std::isfinite(x_mj) ? std::to_string(x_mj).c_str() : "null");
        js << (first ? "" : ",\n") << buf;
        first = false;
      };
      // crba: the upper triangle of each M (Triangle::Upper), the work of Pinocchio's reference figure.
      std::vector<BatchMode> modes;
      modes.push_back({"single", 1, [&] {
                         for (int i = 0; i < b.n; ++i) {
                           if (a == "rnea") plucker::rnea(b.model, *b.data, b.q(i), b.v(i), b.a(i));
                           else if (a == "crba") plucker::crba(b.model, *b.data, b.q(i), plucker::Triangle::Upper);
                           else plucker::aba(b.model, *b.data, b.q(i), b.v(i), b.tau(i));
                         }
                       }});
      for (plucker::BatchWorkspace* ws : {&ws1, &ws2})
        modes.push_back({"batch/" + std::to_string(ws->threads()), ws->threads(), [&, ws] {
                           if (a == "rnea") plucker::rnea_batch(b.model, *ws, b.Q, b.V, b.A, out);
                           else if (a == "crba") plucker::crba_batch(b.model, *ws, b.Q, M, plucker::Triangle::Upper);
                           else plucker::aba_batch(b.model, *ws, b.Q, b.V, b.TAU, out);
                         }});
      // crba: also the packed form, each M's nonzeros only (nnz instead of nv^2 doubles written per state).
      if (a == "crba")
        for (plucker::BatchWorkspace* ws : {&ws1, &ws2})
          modes.push_back({"packed/" + std::to_string(ws->threads()), ws->threads(),
                           [&, ws] { plucker::crba_batch_packed(b.model, *ws, b.Q, Mp); }});
      const Task task = a == "rnea" ? Task::InverseDynamics : a == "crba" ? Task::MassMatrix : Task::ForwardDynamics;
      const bool with_mujoco = mujoco && mujoco_tasks.count(task);
      if (with_mujoco)
        modes.push_back({"mujoco", 1, [&] {
                           clean_simd_state();
                           for (int i = 0; i < b.n; ++i) mujoco->run(task, i);
                         }});
      const std::vector<BatchTiming> t = time_interleaved(opt, b.n, modes);
      if (with_mujoco) pin_mj_ns = t.back().cpu_ns / ref_of(kMujocoOverPinocchio.at(b.name), a);
      for (std::size_t k = 0; k < modes.size(); ++k) record(modes[k].name, modes[k].threads, t[k]);
    }
  }
  js << "\n]\n";
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\nplucker_bench --batch: %.0f s; wrote %s/batch.json\n", elapsed,
              fs::absolute(opt.out).lexically_normal().string().c_str());
  return 0;
}

// ---------------------------------------------------------------------------
// --fd: every forward-dynamics method vs topology and size
// ---------------------------------------------------------------------------
int run_fd(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  struct Item {
    std::string family;  // chain, tree_bf<b>, robot
    std::unique_ptr<Bundle> b;
  };
  std::vector<Item> items;
  const std::regex filter(opt.models.empty() ? std::string(".*") : opt.models);
  for (const plucker_bench::FdModel& fm : plucker_bench::fd_models()) {
    if (!std::regex_search(fm.name, filter)) continue;
    auto b = std::make_unique<Bundle>();
    b->model = fm.build();
    b->name = fm.name;
    make_pool(*b, 200);
    items.push_back({fm.family, std::move(b)});
  }
  std::map<std::string, Key> keys;
  std::vector<std::string> algs;
  for (const Algorithm& a : kAlgorithms)
    if (std::string(a.name).rfind("fd_", 0) == 0 || std::string(a.name) == "minv") algs.push_back(a.name);
  for (Item& it : items) {
    for (const Algorithm& a : kAlgorithms) {
      if (std::find(algs.begin(), algs.end(), a.name) == algs.end()) continue;
      const std::string name = "fd/" + it.b->name + "/" + a.name;
      keys[name] = {it.b->name, a.name, "plucker"};
      Bundle* bb = it.b.get();
      auto fn = a.run;
      auto next = std::make_shared<int>(0);
      register_bench(name, opt, [bb, fn, next](benchmark::State& st) {
        int i = *next;
        try {
          for (auto _ : st) {
            fn(*bb, i);
            if (++i == bb->n) i = 0;
          }
        } catch (const std::exception& e) {
          st.SkipWithError(e.what());
        }
        *next = i;
      });
    }
  }
  std::cerr << "plucker_bench --fd: running " << keys.size() << " benchmarks\n";
  Collector collector(keys);
  benchmark::RunSpecifiedBenchmarks(&collector);
  for (const auto& [name, err] : collector.errors()) std::printf("note: %s: error: %s\n", name.c_str(), err.c_str());

  std::error_code ec;
  fs::create_directories(opt.out, ec);
  std::ofstream js(opt.out + "/fd_timing.json");
  js << "[\n";
  bool first = true;
  std::printf("\nMedian CPU ns per call of forward_dynamics(method) (build_chain, build_random_tree(N, bf, 0.5, 1))\n\n%-18s %4s",
              "model", "nv");
  for (const std::string& a : algs) std::printf(" %12s", a.c_str());
  std::printf("  auto picks\n");
  for (const Item& it : items) {
    const plucker::Model& m = it.b->model;
    const plucker::FactorisationCost c = plucker::ltdl_cost(m);
    int sum_d2 = 0;
    for (int i = 1; i < m.nbodies(); ++i) sum_d2 += m.joint_nv(i) * m.joint_nv(i);
    std::printf("%-18s %4d", it.b->name.c_str(), m.nv());
    for (const std::string& a : algs) {
      const double t = collector.median("fd/" + it.b->name + "/" + a);
      std::printf(" %12s", fmt_ns(t).c_str());
      if (!std::isfinite(t)) continue;
      char buf[640];
      std::snprintf(buf, sizeof(buf),
                    "  {\"family\": \"%s\", \"model\": \"%s\", \"algorithm\": \"%s\", \"ns\": %.1f, \"bodies\": %d, "
                    "\"nv\": %d, \"sum_joint_nv2\": %d, \"depth_sum\": %lld, \"ltdl_mul\": %lld, \"auto_method\": \"%s\"}",
                    it.family.c_str(), it.b->name.c_str(), a.c_str(), t, m.nbodies() - 1, m.nv(), sum_d2,
                    c.factor_div, c.factor_mul,
                    std::string(plucker::to_string(plucker::forward_dynamics_choice(m).method)).c_str());
      js << (first ? "" : ",\n") << buf;
      first = false;
    }
    std::printf("  %s\n", std::string(plucker::to_string(plucker::forward_dynamics_choice(m).method)).c_str());
  }
  js << "\n]\n";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\nplucker_bench --fd: %zu benchmarks in %.0f s; wrote %s/fd_timing.json\n", keys.size(), elapsed,
              fs::absolute(opt.out).lexically_normal().string().c_str());
  return 0;
}

void usage() {
  std::cout << "usage: plucker_bench [--scaling | --micro | --fd | --batch] [--reps=N] [--min_time=SECONDS] [--models=REGEX]\n"
               "                     [--no_peers] [--out=DIR] [--benchmark_* flags]\n"
               "  default     robot models x algorithms, plucker vs peers: one table, and\n"
               "              <out>/results.json, agreement.txt, meta.json (out: "
            << default_out_dir()
            << ")\n"
               "  --scaling   rnea/crba/aba vs number of bodies (chains, binary trees): <out>/scaling.json\n"
               "  --micro     spatial-algebra micro-benchmarks (Google Benchmark's own output)\n"
               "  --batch     rnea/crba/aba_batch states per second, 1 and 2 threads: <out>/batch.json\n"
               "  --fd        every forward-dynamics method vs N, chains and trees: <out>/fd_timing.json\n"
               "  --fd_accuracy   every forward-dynamics method vs a long-double reference: <out>/fd_accuracy.json\n"
               "  --fd_ops=MODEL,METHOD,K   run forward_dynamics K times and exit (op counting under valgrind)\n";
}

}  // namespace

namespace plucker_bench {
int run_fd_ops(const std::string& spec);                                       // fd_study.cpp
int run_fd_accuracy(const std::string& out_dir, const std::string& models);  // fd_study.cpp
}  // namespace plucker_bench

int main(int argc, char** argv) {
  Options opt;
  opt.out = default_out_dir();
  std::vector<char*> rest = {argv[0]};
  bool user_filter = false, user_interleave = false, fd_accuracy = false;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&](const std::string& key) { return a.substr(key.size()); };
    if (a == "--scaling") opt.mode = Options::Mode::Scaling;
    else if (a == "--micro") opt.mode = Options::Mode::Micro;
    else if (a == "--fd") opt.mode = Options::Mode::ForwardDynamics;
    else if (a == "--batch") opt.mode = Options::Mode::Batch;
    else if (a.rfind("--fd_ops=", 0) == 0) return plucker_bench::run_fd_ops(value("--fd_ops="));
    else if (a == "--fd_accuracy") fd_accuracy = true;
    else if (a.rfind("--reps=", 0) == 0) opt.reps = std::max(1, std::atoi(value("--reps=").c_str()));
    else if (a.rfind("--min_time=", 0) == 0) opt.min_time = std::atof(value("--min_time=").c_str());
    else if (a.rfind("--models=", 0) == 0) opt.models = value("--models=");
    else if (a == "--no_peers") opt.peers = false;
    else if (a.rfind("--out=", 0) == 0) opt.out = value("--out=");
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      if (a.rfind("--benchmark_filter", 0) == 0) user_filter = true;
      if (a.rfind("--benchmark_enable_random_interleaving", 0) == 0) user_interleave = true;
      rest.push_back(argv[k]);
    }
  }
  if (fd_accuracy) {
    std::error_code ec;
    fs::create_directories(opt.out, ec);
    return plucker_bench::run_fd_accuracy(opt.out, opt.models);
  }
  std::string filter = opt.mode == Options::Mode::Micro     ? "--benchmark_filter=^BM_"
                       : opt.mode == Options::Mode::Scaling ? "--benchmark_filter=^scaling/"
                       : opt.mode == Options::Mode::ForwardDynamics ? "--benchmark_filter=^fd/"
                                                            : "--benchmark_filter=^model/";
  if (!user_filter) rest.push_back(filter.data());
  // The table's repetitions run in random interleaved order: a slow spell of the machine then
  // falls on plucker and the peers alike.
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  if (opt.mode == Options::Mode::Models && !user_interleave) rest.push_back(interleave.data());
  int n = static_cast<int>(rest.size());
  rest.push_back(nullptr);
  benchmark::Initialize(&n, rest.data());
  if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
  int rc = 0;
  switch (opt.mode) {
    case Options::Mode::Micro: benchmark::RunSpecifiedBenchmarks(); break;
    case Options::Mode::Scaling: rc = run_scaling(opt); break;
    case Options::Mode::ForwardDynamics: rc = run_fd(opt); break;
    case Options::Mode::Batch: rc = run_batch(opt); break;
    case Options::Mode::Models: rc = run_models(opt); break;
  }
  benchmark::Shutdown();
  return rc;
}
