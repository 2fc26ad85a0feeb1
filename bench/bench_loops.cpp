// Closed-loop forward dynamics (paper 000 §3.4): time of the three solution methods vs the
// number of loops and the size of the spanning tree. Run with
//   plucker_bench --micro --benchmark_filter=^loops/
// Mechanisms: build_random_loops(n, loops, spherical, branching 1.2) — a long, lightly branched
// tree with `loops` ball joints (3 constraint rows each) between distant bodies; 16 consistent
// states (assembled from random perturbations of the assembled neutral configuration).
#include <benchmark/benchmark.h>

#include <random>

#include "plucker/model/builders.hpp"
#include "plucker/plucker.hpp"

namespace {

using namespace plucker;

struct LoopCase {
  Model model;
  std::vector<VecX> q, v, tau;
};

LoopCase make_case(int n, int loops) {
  LoopCase c{build_random_loops(n, loops, LoopJointType::Spherical, 1.2, 1), {}, {}, {}};
  Data d(c.model);
  std::mt19937_64 rng(2);
  std::normal_distribution<double> N(0.0, 1.0);
  auto randn = [&](double s) {
    VecX x(c.model.nv());
    for (int k = 0; k < x.size(); ++k) x[k] = s * N(rng);
    return x;
  };
  for (int attempt = 0; attempt < 200 && c.q.size() < 16; ++attempt) {
    try {
      const VecX q = assemble(c.model, d, integrate(c.model, neutral(c.model), randn(0.05)));
      c.q.push_back(q);
      c.v.push_back(project_velocity(c.model, d, q, randn(1.0)));
      c.tau.push_back(randn(1.0));
    } catch (const SingularError&) {}
  }
  return c;
}

void BM_Loops(benchmark::State& state, ConstrainedMethod method) {
  const LoopCase c = make_case(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  if (c.q.empty()) {
    state.SkipWithError("no consistent state");
    return;
  }
  Data d(c.model);
  ConstrainedOptions opt;
  opt.method = method;
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(constrained_forward_dynamics(c.model, d, c.q[i], c.v[i], c.tau[i], opt).data());
    i = (i + 1) % c.q.size();
  }
  state.counters["nv"] = c.model.nv();
  state.counters["nc"] = c.model.num_constraints();
}

void args(benchmark::internal::Benchmark* b) {
  for (int n : {16, 32, 64, 128})
    for (int loops : {1, 2, 4, 8}) b->Args({n, loops});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Loops, kkt, ConstrainedMethod::Kkt)->Name("loops/kkt")->Apply(args);
BENCHMARK_CAPTURE(BM_Loops, range_space, ConstrainedMethod::RangeSpace)->Name("loops/range_space")->Apply(args);
BENCHMARK_CAPTURE(BM_Loops, null_space, ConstrainedMethod::NullSpace)->Name("loops/null_space")->Apply(args);

}  // namespace
