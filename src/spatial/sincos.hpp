// sin and cos of many angles at once, in SIMD lanes. The joint angles of a model are
// evaluated this way once per algorithm call instead of one libm sincos call per joint
// (~120 instructions each, 15-20% of an RNEA on a 6-DoF arm).
//
// Method (Cody & Waite; Sun's fdlibm kernels, whose published minimax coefficients are
// used): k = nearest integer to x 2/pi, y = x - k pi/2 in three parts (k pio2_1 and
// k pio2_2 exact for |k| < 2^19, i.e. |x| < 8e5; the third part is the rest of pi/2 to
// 53 bits), then the degree-13/14 polynomials for sin and cos on
// [-pi/4, pi/4], and the quadrant k mod 4 selects and negates. Accuracy against libm
// (tests/test_sincos.cpp): within 1 ulp for |x| <= 10 (joint angles), within 2 ulp up
// to kSinCosLarge (the rounding of y, which fdlibm carries as a tail, is dropped here).
// |x| >= kSinCosLarge or non-finite x fall back to libm.
//
// The lanes are simd::Pack (8 doubles with AVX-512, 4 with AVX, 2 otherwise),
// so the code is SIMD whatever the compiler's auto-vectoriser decides: the rounding is the
// 1.5 * 2^52 trick (no float-to-integer conversion, which AVX2 lacks for 64-bit lanes), and
// the quadrant is read from the low bits of the rounded value's representation.
#pragma once

#include <cmath>
#include <cstring>

#include "simd.hpp"

namespace plucker::detail {

inline constexpr double kSinCosLarge = 1e5;
inline constexpr int kSinCosLanes = simd::W;

namespace sincos_lanes {
using VD = simd::Pack;
using VI = simd::PackI;

/// s, c = sin x, cos x for the kSinCosLanes values of x (|x| < kSinCosLarge).
inline void kernel(const VD& x, VD& s, VD& c) {
  constexpr double two_over_pi = 6.36619772367581382433e-01;
  constexpr double pio2_1 = 1.57079632673412561417e+00;  // first 33 bits of pi/2
  constexpr double pio2_2 = 6.07710050630396597660e-11;  // next 33 bits
  constexpr double pio2_3 = 2.02226624879595063154e-21;  // the rest, pi/2 - pio2_1 - pio2_2
  constexpr double round_shift = 6755399441055744.0;     // 1.5 * 2^52
  constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03, S3 = -1.98412698298579493134e-04,
                   S4 = 2.75573137070700676789e-06, S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03, C3 = 2.48015872894767294178e-05,
                   C4 = -2.75573143513906633035e-07, C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  // k = round(x 2/pi): adding 1.5 2^52 leaves k in the low mantissa bits (|k| < 2^51).
  const VD shifted = x * two_over_pi + round_shift;
  const VD k = shifted - round_shift;
  VI quadrant;
  std::memcpy(&quadrant, &shifted, sizeof quadrant);  // mantissa = 2^51 + k: low 2 bits = k mod 4
  const VD y = ((x - k * pio2_1) - k * pio2_2) - k * pio2_3;
  const VD z = y * y;
  // fdlibm __kernel_sin (tail = 0): y + y^3 (S1 + z (S2 + ... + z S6))
  const VD r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
  const VD sin_y = y + (y * z) * (S1 + z * r);
  // fdlibm __kernel_cos (tail = 0) with its compensated 1 - z/2.
  const VD rc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
  const VD hz = 0.5 * z;
  const VD w = 1.0 - hz;
  const VD cos_y = w + (((1.0 - w) - hz) + z * rc);
  const VI odd = (quadrant & 1) != 0;
  const VD sv = odd ? cos_y : sin_y;
  const VD cv = odd ? sin_y : cos_y;
  s = (quadrant & 2) != 0 ? -sv : sv;
  c = ((quadrant + 1) & 2) != 0 ? -cv : cv;
}
}  // namespace sincos_lanes

// The operation-count build (`make flops`) keeps this function out of line, so that its
// operations are told apart from the algorithm's by function name.
#ifdef PLUCKER_COUNT_FLOPS
#define PLUCKER_SINCOS_ENTRY __attribute__((noinline))
#else
#define PLUCKER_SINCOS_ENTRY
#endif
PLUCKER_SINCOS_ENTRY inline void sincos_batch(const double* x, double* s, double* c, int n) {
  using sincos_lanes::VD;
  constexpr int W = kSinCosLanes;
  VD any_large{};  // lanes of 1.0 where some |x| >= kSinCosLarge or x is not finite
  auto group = [&](const double* xg, double* sg, double* cg) {
    VD xv, sv, cv;
    std::memcpy(&xv, xg, sizeof xv);
    sincos_lanes::kernel(xv, sv, cv);
    std::memcpy(sg, &sv, sizeof sv);
    std::memcpy(cg, &cv, sizeof cv);
    any_large = xv * xv < kSinCosLarge * kSinCosLarge ? any_large : VD{} + 1.0;  // NaN compares false
  };
  int i = 0;
  for (; i + W <= n; i += W) group(x + i, s + i, c + i);
  if (i < n) {  // the last group, padded with zeros
    double xs[W] = {}, ss[W], cs[W];
    for (int l = 0; l < W; ++l)  // fixed trip count: unrolled, no call to memcpy
      if (i + l < n) xs[l] = x[i + l];
    group(xs, ss, cs);
    for (int l = 0; l < W; ++l)
      if (i + l < n) {
        s[i + l] = ss[l];
        c[i + l] = cs[l];
      }
  }
  bool fallback = false;
  for (int l = 0; l < W; ++l) fallback |= any_large[l] != 0.0;
  if (fallback)
    for (int k = 0; k < n; ++k)
      if (!(std::abs(x[k]) < kSinCosLarge)) {
        s[k] = std::sin(x[k]);
        c[k] = std::cos(x[k]);
      }
}

}  // namespace plucker::detail
