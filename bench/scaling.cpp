// plucker_bench --scaling: rnea / crba / aba time vs number of bodies (chains, binary trees,
// N = 4..1024), <out>/scaling.json (bench/plot_scaling.py draws docs/scaling.png from it).
#include <algorithm>
#include <cmath>
#include <iostream>

#include "common.hpp"
#include "plucker/model/builders.hpp"

namespace plucker_bench {
namespace {

const char* const kScalingAlgorithms[] = {"rnea", "crba", "aba"};

struct Item {
  std::string topology;
  int n;
  Bundle* b;
};

bool is_scaling_algorithm(const Algorithm& a) {
  return std::find_if(std::begin(kScalingAlgorithms), std::end(kScalingAlgorithms),
                      [&](const char* x) { return std::string(x) == a.name; }) != std::end(kScalingAlgorithms);
}

/// Chains and trees of N = 4..1024 bodies, each with its pool and its benchmarks registered.
std::vector<Item> register_scaling(const Options& opt, std::vector<std::unique_ptr<Bundle>>& bundles,
                                   std::map<std::string, Key>& keys) {
  std::vector<Item> items;
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
        if (!is_scaling_algorithm(a)) continue;
        const std::string name = "scaling/" + b->name + "/" + a.name;
        keys[name] = {b->name, a.name, "plucker"};
        Bundle* bb = b.get();
        auto fn = a.run;
        register_pool_bench(name, opt, bb->n, /*clean_simd=*/false, [bb, fn](int i) { fn(*bb, i); });
      }
      bundles.push_back(std::move(b));
    }
  }
  return items;
}

/// The table on stdout and the records of scaling.json.
void report_scaling(const Options& opt, const std::vector<Item>& items, const Collector& collector) {
  JsonArray js(output_path(opt.out, "scaling.json"));
  for (const auto& [name, err] : collector.errors()) std::printf("note: %s: error: %s\n", name.c_str(), err.c_str());
  std::printf(
      "\nMedian CPU ns per call vs number of moving bodies N (chains: build_chain(N); trees: "
      "build_random_tree(N, bf=2, skew=0.5, taper=1))\n\n%-8s %6s %12s %12s %12s\n",
      "topology", "N", "rnea", "crba", "aba");
  for (const Item& it : items) {
    std::printf("%-8s %6d", it.topology.c_str(), it.n);
    for (const char* alg : kScalingAlgorithms) {
      const double t = collector.median("scaling/" + it.b->name + "/" + alg);
      std::printf(" %12s", fmt_ns(t).c_str());
      if (!std::isfinite(t)) continue;
      char b[64];
      std::snprintf(b, sizeof(b), "%.1f", t);
      js.add("  {\"topology\": \"" + it.topology + "\", \"n\": " + std::to_string(it.n) + ", \"model\": \"builder_" +
             it.b->name + "\", \"algorithm\": \"" + alg + "\", \"library\": \"plucker\", \"ns\": " + b + "}");
    }
    std::printf("\n");
  }
}

}  // namespace

int run_scaling(const Options& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Bundle>> bundles;
  std::map<std::string, Key> keys;
  const std::vector<Item> items = register_scaling(opt, bundles, keys);
  std::cerr << "plucker_bench --scaling: running " << keys.size() << " benchmarks\n";
  Collector collector(keys);
  benchmark::RunSpecifiedBenchmarks(&collector);
  report_scaling(opt, items, collector);
  std::printf("\nplucker_bench --scaling: %zu benchmarks in %.0f s; wrote %s/scaling.json\n", keys.size(),
              seconds_since(t0), display_dir(opt.out).c_str());
  return 0;
}

}  // namespace plucker_bench
