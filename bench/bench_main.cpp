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
