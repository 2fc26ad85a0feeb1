// SIMD lanes: a Pack holds one double per state and W states side by side (GCC vector
// extensions, so the code is SIMD whatever the auto-vectoriser decides). The batched
// recursions evaluate W states at once with the spatial operations of ops.hpp instantiated
// on Pack; the block ("set") forms evaluate W columns at once the same way.
//
// W = 8 with AVX-512, 4 with AVX, 2 otherwise (SSE2, or the target's 128-bit vectors).
#pragma once

#include <cstring>

// The small spatial operations of the recursions' inner loops (transform and inertia
// products, cross products): GCC's size heuristics otherwise leave some of them as calls
// inside the per-joint-kind kernels, with their register spills (callgrind on the RNEA).
#ifndef PLUCKER_HOT
#define PLUCKER_HOT [[gnu::always_inline]]
#endif
// The same for a lambda (placed after its parameter list): the per-joint-kind visitors of the
// recursions, which GCC otherwise leaves as calls from the dispatch's many cases.
#ifndef PLUCKER_INLINE
#define PLUCKER_INLINE __attribute__((always_inline))
#endif

namespace plucker::simd {

#if defined(__AVX512F__)
inline constexpr int W = 8;
#elif defined(__AVX__)
inline constexpr int W = 4;
#else
inline constexpr int W = 2;
#endif

/// One double per lane.
typedef double Pack __attribute__((vector_size(8 * W)));  // NOLINT(modernize-use-using): GCC attribute
/// Integers of the same width (comparison results, bit manipulation).
typedef long long PackI __attribute__((vector_size(8 * W)));  // NOLINT(modernize-use-using)

/// x in every lane. Written x - 0, which the compiler folds to a broadcast; 0 + x is not folded
/// (it differs from x at x = -0) and cost an addition per broadcast.
inline Pack splat(double x) { return x - Pack{}; }
inline Pack max(Pack a, Pack b) { return a > b ? a : b; }
/// x > y in every lane (false where either is NaN).
inline bool all_greater(Pack x, Pack y) {
  bool ok = true;
  for (int l = 0; l < W; ++l) ok &= x[l] > y[l];
  return ok;
}
/// True when every lane is finite.
inline bool all_finite(Pack x) {
  const Pack zero = x - x;  // NOLINT(misc-redundant-expression): NaN where x is inf or NaN
  bool ok = true;
  for (int l = 0; l < W; ++l) ok &= zero[l] == 0.0;
  return ok;
}
/// A Pack at any address of doubles: GCC's idiom for an unaligned vector access (one vmovupd),
/// where a memcpy of the Pack was compiled, inside the column loops, into 16-byte halves moved
/// through the stack and general registers (callgrind, AVX2 CRBA).
typedef double UnalignedPack __attribute__((vector_size(8 * W), aligned(8), may_alias));  // NOLINT

/// a in lanes l < k, b in the others.
PLUCKER_HOT inline Pack first_lanes(const Pack& a, const Pack& b, int k) {
  PackI lane;
  for (int l = 0; l < W; ++l) lane[l] = l;
  return lane < k ? a : b;
}

/// W consecutive doubles (no alignment needed) and back.
PLUCKER_HOT inline Pack load(const double* p) { return *reinterpret_cast<const UnalignedPack*>(p); }
PLUCKER_HOT inline void store(const Pack& x, double* p) { *reinterpret_cast<UnalignedPack*>(p) = x; }

}  // namespace plucker::simd
