// plucker_bench: one binary for every benchmark of the project (`plucker_bench --help`; the
// modes, how they measure and why: docs/benchmark_notes.md). Parses the options and dispatches
// to the mode's file: table.cpp (default), batched.cpp, scaling.cpp, fd_study.cpp, and the
// statically registered micro-benchmarks (bench_spatial.cpp, bench_loops.cpp).
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "common.hpp"

namespace {

using plucker_bench::Options;

void usage() {
  std::cout
      << "usage: plucker_bench [--scaling | --micro | --fd | --batch | --contact | --derivatives | --large=N] "
         "[--reps=N] "
         "[--min_time=SECONDS] "
         "[--models=REGEX]\n"
         "                     [--no_peers] [--out=DIR] [--benchmark_* flags]\n"
         "  default     robot models x algorithms, plucker vs peers: one table, and\n"
         "              <out>/results.json, agreement.txt, meta.json (out: "
      << plucker_bench::default_out_dir()
      << ")\n"
         "  --scaling   rnea/crba/aba vs number of bodies (chains, binary trees): <out>/scaling.json\n"
         "  --micro     spatial-algebra micro-benchmarks (Google Benchmark's own output)\n"
         "  --batch     rnea/crba/aba_batch states per second, 1 and 2 threads: <out>/batch.json\n"
         "  --fd        every forward-dynamics method vs N, chains and trees: <out>/fd_timing.json\n"
         "  --fd_accuracy   every forward-dynamics method vs a long-double reference: <out>/fd_accuracy.json\n"
         "  --fd_global     global_sparse and cfa vs the quad reference up to 1024 bodies, CFA op counts:\n"
         "                  <out>/fd_global.json\n"
         "  --contact   solo12 with 4 foot contacts: plucker's Simulator (compliant, rigid) vs MuJoCo's\n"
         "              mj_step, steps/s on 1 and 2 threads: <out>/contact.json\n"
         "  --derivatives   rnea/aba_derivatives vs MuJoCo's mjd_transitionFD (forward, centered) and\n"
         "              mj_forward on the headline models, and their agreement: <out>/derivatives_peer.json\n"
         "  --dca_accuracy  aba and the divide-and-conquer algorithm vs a quad reference, N = 4..1024:\n"
         "                  <out>/dca_accuracy.json\n"
         "  --dca_timing    divide-and-conquer algorithm, 1 and 2 threads, vs the ABA: <out>/dca_timing.json\n"
         "  --large=N   load an N-link chain URDF, time and memory of load, Data, RNEA, ABA: <out>/large_model.json\n"
         "  --fd_ops=MODEL,METHOD,K   run forward_dynamics K times and exit (op counting under valgrind)\n";
}

/// The filter that selects the mode's benchmarks, unless the user gave one.
const char* mode_filter(Options::Mode mode) {
  switch (mode) {
    case Options::Mode::Micro:
      return "--benchmark_filter=^BM_";
    case Options::Mode::Scaling:
      return "--benchmark_filter=^scaling/";
    case Options::Mode::ForwardDynamics:
      return "--benchmark_filter=^fd/";
    case Options::Mode::Models:
    case Options::Mode::Batch:
      break;
  }
  return "--benchmark_filter=^model/";
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  opt.out = plucker_bench::default_out_dir();
  std::vector<char*> rest = {argv[0]};
  bool user_filter = false, user_interleave = false, fd_accuracy = false, dca_accuracy = false, dca_timing = false;
  int large = 0;
  bool contact = false, derivatives = false;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto value = [&](const std::string& key) { return a.substr(key.size()); };
    if (a == "--scaling")
      opt.mode = Options::Mode::Scaling;
    else if (a == "--micro")
      opt.mode = Options::Mode::Micro;
    else if (a == "--fd")
      opt.mode = Options::Mode::ForwardDynamics;
    else if (a == "--batch")
      opt.mode = Options::Mode::Batch;
    else if (a.rfind("--fd_ops=", 0) == 0)
      return plucker_bench::run_fd_ops(value("--fd_ops="));
    else if (a == "--contact")
      contact = true;
    else if (a == "--derivatives")
      derivatives = true;
    else if (a == "--fd_accuracy")
      fd_accuracy = true;
    else if (a == "--fd_global")
      return plucker_bench::run_fd_global(opt.out);
    else if (a == "--dca_accuracy")
      dca_accuracy = true;
    else if (a == "--dca_timing")
      dca_timing = true;
    else if (a.rfind("--large=", 0) == 0)
      large = std::atoi(value("--large=").c_str());
    else if (a.rfind("--reps=", 0) == 0)
      opt.reps = std::max(1, std::atoi(value("--reps=").c_str()));
    else if (a.rfind("--min_time=", 0) == 0)
      opt.min_time = std::atof(value("--min_time=").c_str());
    else if (a.rfind("--models=", 0) == 0)
      opt.models = value("--models=");
    else if (a == "--no_peers")
      opt.peers = false;
    else if (a.rfind("--out=", 0) == 0)
      opt.out = value("--out=");
    else if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else {
      if (a.rfind("--benchmark_filter", 0) == 0) user_filter = true;
      if (a.rfind("--benchmark_enable_random_interleaving", 0) == 0) user_interleave = true;
      rest.push_back(argv[k]);
    }
  }
  if (contact) return plucker_bench::run_contact(opt);
  if (derivatives) return plucker_bench::run_derivatives_peer(opt);
  if (fd_accuracy) return plucker_bench::run_fd_accuracy(opt.out, opt.models);
  if (dca_accuracy) return plucker_bench::run_dca_accuracy(opt.out, opt.models);
  if (dca_timing) return plucker_bench::run_dca_timing(opt);
  if (large) return plucker_bench::run_large_model(large, opt.out);
  std::string filter = mode_filter(opt.mode);
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
    case Options::Mode::Micro:
      benchmark::RunSpecifiedBenchmarks();
      break;
    case Options::Mode::Scaling:
      rc = plucker_bench::run_scaling(opt);
      break;
    case Options::Mode::ForwardDynamics:
      rc = plucker_bench::run_fd(opt);
      break;
    case Options::Mode::Batch:
      rc = plucker_bench::run_batch(opt);
      break;
    case Options::Mode::Models:
      rc = plucker_bench::run_models(opt);
      break;
  }
  benchmark::Shutdown();
  return rc;
}
