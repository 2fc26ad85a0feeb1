// --dca_timing: the divide-and-conquer algorithm (forward_dynamics_dca, docs/dca.md) against the
// ABA: wall time per call with 1 and 2 threads (threads run the levels of the assembly tree, so
// wall time, not CPU time, is what a speed-up is), on chains of 16 .. 1024 bodies, binary random
// trees, and the shared chain1024 and talos_full (free-flyer). Also the operation counts of
// dca_cost (total and critical path) for each model. PLUCKER_DCA_THREADS=1,2,4,8 times more thread
// counts (the crossover with the ABA on a machine with more cores). <out>/dca_timing.json;
// bench/dca_study.py plots it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "common.hpp"
#include "plucker/io/urdf.hpp"
#include "plucker/model/builders.hpp"

namespace plucker_bench {
namespace {

struct DcaModel {
  std::string family, name;
  plucker::Model model;
};

/// Median wall ns per call of f over `reps` repeats of enough calls to last ~min_time / reps.
template <class F>
double median_wall_ns(const F& f, int reps, double min_time) {
  using Clock = std::chrono::steady_clock;
  f();  // warm: the scratch and the thread pool
  int calls = 1;
  for (;;) {  // calls per repeat: at least min_time / reps seconds
    const auto t0 = Clock::now();
    for (int k = 0; k < calls; ++k) f();
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (s >= min_time / reps || calls > (1 << 20)) break;
    calls *= 2;
  }
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    for (int k = 0; k < calls; ++k) f();
    ns.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / calls);
  }
  std::nth_element(ns.begin(), ns.begin() + reps / 2, ns.end());
  return ns[static_cast<std::size_t>(reps / 2)];
}

}  // namespace

int run_dca_timing(const Options& opt) {
  std::vector<DcaModel> models;
  for (int n = 16; n <= 1024; n *= 2) {
    models.push_back({"chain", "chain" + std::to_string(n), plucker::build_chain(n)});
    models.push_back({"tree_bf2", "tree_bf2_" + std::to_string(n), plucker::build_random_tree(n, 2.0, 0.5, 1.0)});
  }
  for (const auto& [file, root] : {std::pair<std::string, plucker::RootJoint>{"chain1024", plucker::RootJoint::Fixed},
                                   {"talos_full", plucker::RootJoint::FreeFlyer}}) {
    const std::string path = shared_dir() + "/models/" + file + ".urdf";
    if (!std::filesystem::exists(path)) {
      std::printf("note: %s not found, skipped\n", path.c_str());
      continue;
    }
    plucker::UrdfOptions o;
    o.root = root;
    o.on_warning = [](const std::string&) {};
    models.push_back({"robot", file + "_urdf", plucker::load_urdf(path, o)});
  }
  std::vector<int> extra_threads;  // PLUCKER_DCA_THREADS=1,2,4,8: more thread counts to time
  if (const char* e = std::getenv("PLUCKER_DCA_THREADS"); e && *e) {
    std::string list = e;
    for (std::size_t pos = 0; pos < list.size();) {
      const std::size_t end = std::min(list.find(',', pos), list.size());
      if (const int t = std::atoi(list.substr(pos, end - pos).c_str()); t >= 1) extra_threads.push_back(t);
      pos = end + 1;
    }
  }
  const int reps = std::max(opt.reps, 7);
  const double min_time = std::max(opt.min_time, 0.2);
  JsonArray js(output_path(opt.out, "dca_timing.json"));
  std::printf("wall ns per call (median of %d repeats); %u hardware threads; load %s\n\n", reps,
              std::thread::hardware_concurrency(), loadavg().c_str());
  std::printf("%-16s %5s %6s %10s %10s %10s %10s %8s %8s %12s %12s\n", "model", "nv", "levels", "aba", "dca_1",
              "dcaacc_1", "dcaacc_2", "2t/1t", "aba/2t", "ops_total", "ops_crit");
  for (const DcaModel& dm : models) {
    if (!opt.models.empty() && dm.name.find(opt.models) == std::string::npos) continue;
    const plucker::Model& model = dm.model;
    plucker::Data data(model);
    std::mt19937_64 rng(kSeed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const VecX q = plucker::random_configuration(model, rng);
    VecX v(model.nv()), tau(model.nv());
    for (int k = 0; k < model.nv(); ++k) v[k] = u(rng), tau[k] = 10.0 * u(rng);
    using plucker::DcaVariant;
    const double aba =
        median_wall_ns([&] { benchmark::DoNotOptimize(plucker::aba(model, data, q, v, tau).data()); }, reps, min_time);
    auto dca = [&](DcaVariant variant, int threads) {
      return median_wall_ns(
          [&] {
            benchmark::DoNotOptimize(plucker::forward_dynamics_dca(model, data, q, v, tau, variant, threads).data());
          },
          reps, min_time);
    };
    const double basic1 = dca(DcaVariant::Basic, 1), acc1 = dca(DcaVariant::Accurate, 1),
                 acc2 = dca(DcaVariant::Accurate, 2), basic2 = dca(DcaVariant::Basic, 2);
    std::string more;  // the other thread counts of PLUCKER_DCA_THREADS
    for (int t : extra_threads) {
      const double ns = t == 1 ? acc1 : t == 2 ? acc2 : dca(DcaVariant::Accurate, t);
      char entry[64];
      std::snprintf(entry, sizeof entry, "%s\"%d\": %.1f", more.empty() ? "" : ", ", t, ns);
      more += entry;
      std::printf("    %s dca_accurate %2d threads: %10.0f ns (aba / dca %.2f)\n", dm.name.c_str(), t, ns, aba / ns);
    }
    const plucker::DcaCost cost = plucker::dca_cost(model);
    std::printf("%-16s %5d %6d %10.0f %10.0f %10.0f %10.0f %8.2f %8.2f %12lld %12lld\n", dm.name.c_str(), model.nv(),
                cost.levels, aba, basic1, acc1, acc2, acc1 / acc2, aba / acc2, cost.total, cost.critical_path);
    std::fflush(stdout);
    char buf[2048];
    std::snprintf(buf, sizeof(buf),
                  "  {\"family\": \"%s\", \"model\": \"%s\", \"nv\": %d, \"bodies\": %d, \"levels\": %d, "
                  "\"max_handles\": %d, \"aba_ns\": %.1f, \"dca_basic_1t_ns\": %.1f, \"dca_basic_2t_ns\": %.1f, "
                  "\"dca_accurate_1t_ns\": %.1f, \"dca_accurate_2t_ns\": %.1f, \"ops_total\": %lld, "
                  "\"ops_critical_path\": %lld, \"ops_kinematics\": %lld, \"dca_accurate_threads_ns\": {%s}}",
                  dm.family.c_str(), dm.name.c_str(), model.nv(), model.nbodies() - 1, cost.levels, cost.max_handles,
                  aba, basic1, basic2, acc1, acc2, cost.total, cost.critical_path, cost.kinematics, more.c_str());
    js.add(buf);
  }
  js.close();
  std::printf(
      "\n2t/1t: speed-up of dca_accurate from 1 to 2 threads; aba/2t > 1 where 2 threads beat the serial "
      "ABA; wrote %s/dca_timing.json\n",
      opt.out.c_str());
  return 0;
}

}  // namespace plucker_bench
