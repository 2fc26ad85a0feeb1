// Micro-benchmarks of the spatial-algebra hot path. Each benchmark cycles through a
// pool of kPool pre-generated random inputs (fixed seed), so the compiler cannot
// constant-fold the operands and the data stays in L1/L2 as it would in a tree sweep.
// Registered statically (BM_*); run them with `plucker_bench --micro` (main() is in
// main.cpp, which runs the model benchmarks by default).
#include <benchmark/benchmark.h>

#include <cstddef>
#include <random>
#include <vector>

#include "plucker/spatial.hpp"

namespace {

using namespace plucker;

constexpr std::size_t kPool = 1024;  // power of two: index with & (kPool - 1)
constexpr std::size_t kMask = kPool - 1;

struct Pool {
  std::vector<Transform> X, Y;
  std::vector<Motion> m;
  std::vector<Force> f;
  std::vector<RigidBodyInertia> I;
  std::vector<ArticulatedBodyInertia> A;

  Pool() {
    std::mt19937 g(20240601);
    std::uniform_real_distribution<double> u(-1.0, 1.0), pos(0.1, 1.0);
    std::normal_distribution<double> n(0.0, 1.0);
    auto vec3 = [&] { return Vec3(u(g), u(g), u(g)); };
    auto rotation = [&] { return Quat(n(g), n(g), n(g), n(g)).normalized().toRotationMatrix(); };
    auto transform = [&] { return Transform(rotation(), vec3()); };
    for (std::size_t i = 0; i < kPool; ++i) {
      X.push_back(transform());
      Y.push_back(transform());
      m.emplace_back(vec3(), vec3());
      f.emplace_back(vec3(), vec3());
      // Principal moments a, b, and c inside [|a-b|, a+b]: a valid rigid body.
      const double a = pos(g), b = pos(g);
      const double c = std::abs(a - b) + 0.5 * (a + b - std::abs(a - b));
      const Mat3 R = rotation();
      const Mat3 Ic = R * Vec3(a, b, c).asDiagonal() * R.transpose();
      I.push_back(RigidBodyInertia::from_mass_com_inertia(0.1 + 9.9 * pos(g), vec3(), 0.5 * (Ic + Ic.transpose())));
      Mat6 M = I.back().matrix();
      const Vec6 w = (Vec6() << vec3(), vec3()).finished();
      M += w * w.transpose();
      A.emplace_back(M);
    }
  }
};

const Pool& pool() {
  static const Pool p;
  return p;
}

void BM_TransformApplyMotion(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    Motion out = p.X[i & kMask].apply(p.m[i & kMask]);
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TransformApplyMotion);

void BM_TransformApplyForce(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    Force out = p.X[i & kMask].apply(p.f[i & kMask]);
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TransformApplyForce);

void BM_TransformApplyInverseForce(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    Force out = p.X[i & kMask].apply_inverse(p.f[i & kMask]);
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TransformApplyInverseForce);

void BM_TransformCompose(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    Transform out = p.X[i & kMask] * p.Y[i & kMask];
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TransformCompose);

void BM_RigidBodyInertiaTransformed(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    RigidBodyInertia out = p.I[i & kMask].transformed(p.X[i & kMask]);
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RigidBodyInertiaTransformed);

void BM_RigidBodyInertiaTransformedInverse(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    RigidBodyInertia out = p.I[i & kMask].transformed_inverse(p.X[i & kMask]);
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RigidBodyInertiaTransformedInverse);

void BM_RigidBodyInertiaTimesMotion(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    Force out = p.I[i & kMask] * p.m[i & kMask];
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RigidBodyInertiaTimesMotion);

void BM_ArticulatedInertiaTransformedInverse(benchmark::State& state) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    ArticulatedBodyInertia out = p.A[i & kMask].transformed_inverse(p.X[i & kMask]);
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ArticulatedInertiaTransformedInverse);

}  // namespace
