// The vectorised sin/cos of joint angles (src/detail/sincos.hpp) against libm.
//
// Tolerance, in ulps of libm's result: 1 for |x| <= 10 (joint angles), 2 up to the libm
// fallback bound 1e5 (the reduced argument's rounding, which fdlibm carries as a tail, is
// dropped). glibc's sin/cos are correctly rounded in practice. A broken reduction or
// quadrant selection shows as errors of O(1), far beyond these; the first version of the
// reduction constants (fdlibm's third 33 bits of pi/2 instead of the 53-bit rest) failed
// the boundary test with 6 ulp at x = -4 pi.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "../src/spatial/sincos.hpp"

namespace {

using plucker::detail::sincos_batch;

/// Distance in units in the last place of b (0 when equal, also for +-0).
double ulps(double a, double b) {
  if (a == b) return 0.0;
  const double spacing = std::nextafter(std::abs(b), std::numeric_limits<double>::infinity()) - std::abs(b);
  return std::abs(a - b) / spacing;
}

void expect_matches_libm(const std::vector<double>& x, const char* what, double tol_ulps = 1.0) {
  const int n = static_cast<int>(x.size());
  std::vector<double> s(x.size()), c(x.size());
  sincos_batch(x.data(), s.data(), c.data(), n);
  double worst = 0.0;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) {
      EXPECT_TRUE(std::isnan(s[i]) && std::isnan(c[i])) << what << ": x = " << x[i];
      continue;
    }
    const double es = ulps(s[i], std::sin(x[i])), ec = ulps(c[i], std::cos(x[i]));
    worst = std::max({worst, es, ec});
    ASSERT_LE(es, tol_ulps) << what << ": sin(" << x[i] << ") = " << s[i] << ", libm " << std::sin(x[i]);
    ASSERT_LE(ec, tol_ulps) << what << ": cos(" << x[i] << ") = " << c[i] << ", libm " << std::cos(x[i]);
  }
  ::testing::Test::RecordProperty(what, std::to_string(worst));
}

TEST(SinCos, RandomAnglesEveryLength) {
  // Every n from 0 to 40 covers full SIMD groups and every length of the padded last group.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> angle(-10.0, 10.0);
  for (int n = 0; n <= 40; ++n) {
    std::vector<double> x(static_cast<std::size_t>(n));
    for (double& xi : x) xi = angle(rng);
    expect_matches_libm(x, "random");
  }
}

TEST(SinCos, QuadrantBoundariesAndSpecialValues) {
  std::vector<double> x = {0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e-8, -1e-8};
  for (int k = -16; k <= 16; ++k) {  // around every multiple of pi/4: quadrant selection and rounding ties
    const double b = k * std::numbers::pi / 4;
    for (double d : {0.0, 1e-15, -1e-15, 1e-9, -1e-9}) x.push_back(b + d);
    x.push_back(std::nextafter(b, 1e9));
    x.push_back(std::nextafter(b, -1e9));
  }
  expect_matches_libm(x, "boundaries");
}

TEST(SinCos, LargeAndNonFiniteFallBackToLibm) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {
      1.0, 9.9e4, -9.9e4, 1e5, -1e5, 3e7, -1e300, 2.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(), 0.5};
  expect_matches_libm(x, "large", 2.0);
}

TEST(SinCos, ManyAnglesUpToTheFallbackBound) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> angle(-9.9e4, 9.9e4);
  std::vector<double> x(100000);
  for (double& xi : x) xi = angle(rng);
  expect_matches_libm(x, "wide", 2.0);
}

}  // namespace
