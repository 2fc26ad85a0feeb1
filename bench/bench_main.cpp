// plucker_bench: one binary for every benchmark of the project (`plucker_bench --help`; the
// modes, their options, how they measure and why: docs/benchmark_notes.md). The shared
// infrastructure is in common.hpp / common.cpp.
#include <sched.h>

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
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "fd_models.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"

namespace plucker_bench {

namespace fs = std::filesystem;

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
namespace {

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

}  // namespace

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

}  // namespace plucker_bench

namespace {

using namespace plucker_bench;

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

int main(int argc, char** argv) {
  Options opt;
  opt.out = plucker_bench::default_out_dir();
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
    std::filesystem::create_directories(opt.out, ec);
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
    case Options::Mode::Scaling: rc = plucker_bench::run_scaling(opt); break;
    case Options::Mode::ForwardDynamics: rc = plucker_bench::run_fd(opt); break;
    case Options::Mode::Batch: rc = plucker_bench::run_batch(opt); break;
    case Options::Mode::Models: rc = plucker_bench::run_models(opt); break;
  }
  benchmark::Shutdown();
  return rc;
}
