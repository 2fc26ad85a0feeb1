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

/// One operation per iteration on the pool's operands k = i & kMask (i counting iterations);
/// the result kept alive by DoNotOptimize.
template <class Op>
void cycle(benchmark::State& state, Op op) {
  const Pool& p = pool();
  std::size_t i = 0;
  for (auto _ : state) {
    auto out = op(p, i & kMask);
    benchmark::DoNotOptimize(out);
    ++i;
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_TransformApplyMotion(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> Motion { return p.X[k].apply(p.m[k]); });
}
BENCHMARK(BM_TransformApplyMotion);

void BM_TransformApplyForce(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> Force { return p.X[k].apply(p.f[k]); });
}
BENCHMARK(BM_TransformApplyForce);

void BM_TransformApplyInverseForce(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> Force { return p.X[k].apply_inverse(p.f[k]); });
}
BENCHMARK(BM_TransformApplyInverseForce);

void BM_TransformCompose(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> Transform { return p.X[k] * p.Y[k]; });
}
BENCHMARK(BM_TransformCompose);

void BM_RigidBodyInertiaTransformed(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> RigidBodyInertia { return p.I[k].transformed(p.X[k]); });
}
BENCHMARK(BM_RigidBodyInertiaTransformed);

void BM_RigidBodyInertiaTransformedInverse(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> RigidBodyInertia { return p.I[k].transformed_inverse(p.X[k]); });
}
BENCHMARK(BM_RigidBodyInertiaTransformedInverse);

void BM_RigidBodyInertiaTimesMotion(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> Force { return p.I[k] * p.m[k]; });
}
BENCHMARK(BM_RigidBodyInertiaTimesMotion);

void BM_ArticulatedInertiaTransformedInverse(benchmark::State& s) {
  cycle(s, [](const Pool& p, std::size_t k) -> ArticulatedBodyInertia { return p.A[k].transformed_inverse(p.X[k]); });
}
BENCHMARK(BM_ArticulatedInertiaTransformedInverse);

}  // namespace
