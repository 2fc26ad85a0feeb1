// sin and cos of many angles at once, in one branch-free loop that the compiler
// vectorises (AVX2 / AVX-512 lanes). The joint angles of a model are evaluated this way
// once per algorithm call instead of one libm sincos call per joint (~120 instructions
// each, 15-20% of an RNEA on a 6-DoF arm).
//
// Method (Cody & Waite; Sun's fdlibm kernels, whose published minimax coefficients are
// used): k = nearest integer to x 2/pi, y = x - k pi/2 in three parts (exact for
// |x| < 2^19 pi/2 ~ 8e5), then the degree-13/14 polynomials for sin and cos on
// [-pi/4, pi/4], and the quadrant k mod 4 selects and negates. Accuracy: within 1 ulp
// of the correctly rounded result (tested against std::sin/std::cos). |x| >= kLarge or
// non-finite x fall back to libm.
#pragma once

#include <cmath>

namespace plucker::detail {

inline constexpr double kSinCosLarge = 1e5;

inline void sincos_batch(const double* x, double* s, double* c, int n) {
  constexpr double two_over_pi = 6.36619772367581382433e-01;
  constexpr double pio2_1 = 1.57079632673412561417e+00;   // first 33 bits of pi/2
  constexpr double pio2_2 = 6.07710050630396597660e-11;   // next 33 bits
  constexpr double pio2_3 = 2.02226624871116645580e-21;   // the rest
  constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                   S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                   S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
  constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                   C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                   C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;
  bool any_large = false;
  for (int i = 0; i < n; ++i) {
    const double xi = x[i];
    const double k = std::nearbyint(xi * two_over_pi);
    const double y = ((xi - k * pio2_1) - k * pio2_2) - k * pio2_3;
    const double z = y * y;
    // fdlibm __kernel_sin (tail = 0): y + y^3 (S1 + z (S2 + ... + z S6))
    const double r = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)));
    const double sin_y = y + (y * z) * (S1 + z * r);
    // fdlibm __kernel_cos (tail = 0) with its compensated 1 - z/2.
    const double rc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
    const double hz = 0.5 * z;
    const double w = 1.0 - hz;
    const double cos_y = w + (((1.0 - w) - hz) + z * rc);
    const long q = static_cast<long>(k) & 3;
    const double sv = (q & 1) ? cos_y : sin_y;
    const double cv = (q & 1) ? sin_y : cos_y;
    s[i] = (q & 2) ? -sv : sv;
    c[i] = ((q + 1) & 2) ? -cv : cv;
    any_large |= !(std::abs(xi) < kSinCosLarge);
  }
  if (any_large)
    for (int i = 0; i < n; ++i)
      if (!(std::abs(x[i]) < kSinCosLarge)) {
        s[i] = std::sin(x[i]);
        c[i] = std::cos(x[i]);
      }
}

}  // namespace plucker::detail
