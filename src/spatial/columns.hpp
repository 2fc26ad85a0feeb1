// The set forms of the spatial operations: a transform applied to k spatial vectors at once,
// the columns of a 6 x k block whose rows are contiguous (a row-major matrix). W columns at a
// time are the lanes of a Pack, so each operation is the one of ops.hpp instantiated on Pack
// with the transform a constant; the last k mod W columns are one more Pack (kColumnPadding). The CRBA moves a
// whole subtree's forces to the parent frame this way (Pinocchio's act-on-set; Featherstone's
// "F[1:6, subtree] = liXi F[1:6, subtree]").
#pragma once

#include <bit>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "ops.hpp"

namespace plucker::ops {

/// Spare columns at the end of each row of a block: the last W - 1 or fewer columns are
/// processed as one full Pack whose extra lanes read and write back what is there.
inline constexpr int kColumnPadding = simd::W - 1;

/// Six row pointers of a 6 x k block: row r of column c at rows[r][c].
struct Columns {
  double* rows[6];
  /// Columns c0.. of a row-major 6 x n matrix (Eigen::Matrix<double, 6, Dynamic, RowMajor>)
  /// made with kColumnPadding columns more than it uses.
  template <class RowMajor6X>
  static Columns of(RowMajor6X& F, int c0) {
    Columns out;
    for (int r = 0; r < 6; ++r) out.rows[r] = &F(r, c0);
    return out;
  }
};

template <class V>
PLUCKER_HOT inline V load_lanes(const Columns& F, int c) {
  V v;
  for (int r = 0; r < 3; ++r) {
    v.angular[r] = simd::load(F.rows[r] + c);
    v.linear[r] = simd::load(F.rows[3 + r] + c);
  }
  return v;
}
template <class V>
PLUCKER_HOT inline void store_lanes(const V& v, const Columns& F, int c) {
  for (int r = 0; r < 3; ++r) {
    simd::store(v.angular[r], F.rows[r] + c);
    simd::store(v.linear[r], F.rows[3 + r] + c);
  }
}
/// v in lanes l < k, old in the others.
template <class V>
PLUCKER_HOT inline V first_lanes(const V& v, const V& old, int k) {
  V out;
  for (int r = 0; r < 3; ++r) {
    out.angular[r] = simd::first_lanes(v.angular[r], old.angular[r], k);
    out.linear[r] = simd::first_lanes(v.linear[r], old.linear[r], k);
  }
  return out;
}
/// Lane l holds l.
PLUCKER_HOT inline simd::PackI lane_index() {
  simd::PackI lane;
  for (int l = 0; l < simd::W; ++l) lane[l] = l;
  return lane;
}
/// The first k (0 <= k <= W) of W consecutive doubles at p, zeros in the other lanes; and the
/// store of the first k lanes of x. Nothing at p + k or beyond is read or written (the end of a
/// matrix column that has no padding).
PLUCKER_HOT inline Pack load_first(const double* p, int k) {
  if (k >= simd::W) return simd::load(p);
  if (k <= 0) return Pack{};
#if defined(__AVX512F__)
  return std::bit_cast<Pack>(_mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << k) - 1), p));
#elif defined(__AVX__)
  return std::bit_cast<Pack>(_mm256_maskload_pd(p, std::bit_cast<__m256i>(lane_index() < k)));
#else
  Pack x{};
  for (int l = 0; l < k; ++l) x[l] = p[l];
  return x;
#endif
}
PLUCKER_HOT inline void store_first(const Pack& x, double* p, int k) {
  if (k >= simd::W) return simd::store(x, p);
#if defined(__AVX512F__)
  _mm512_mask_storeu_pd(p, static_cast<__mmask8>((1u << k) - 1), std::bit_cast<__m512d>(x));
#elif defined(__AVX__)
  _mm256_maskstore_pd(p, std::bit_cast<__m256i>(lane_index() < k), std::bit_cast<__m256d>(x));
#else
  for (int l = 0; l < k; ++l) p[l] = x[l];
#endif
}
template <class V>
PLUCKER_HOT inline V load_one(const Columns& F, int c) {
  V v;
  for (int r = 0; r < 3; ++r) v.angular[r] = F.rows[r][c], v.linear[r] = F.rows[3 + r][c];
  return v;
}
template <class V>
PLUCKER_HOT inline void store_one(const V& v, const Columns& F, int c) {
  for (int r = 0; r < 3; ++r) F.rows[r][c] = v.angular[r], F.rows[3 + r][c] = v.linear[r];
}

/// F(:, c) = op(F(:, c)) for c < k, in place, W columns at a time as lane vectors V<Pack>
/// (ForceT or MotionT); the last k mod W columns are one Pack whose other lanes keep their values.
template <template <class> class V, class Op>
PLUCKER_HOT inline void for_columns(const Columns& F, int k, const Op& op) {
  int c = 0;
  for (; c + simd::W <= k; c += simd::W) store_lanes(op(load_lanes<V<Pack>>(F, c)), F, c);
  if (c < k) {
    const auto old = load_lanes<V<Pack>>(F, c);
    store_lanes(first_lanes(V<Pack>(op(old)), old, k - c), F, c);
  }
}

/// out(:, c) = op(in(:, c), out(:, c)) for c < k, two blocks of the same kind.
template <template <class> class V, class Op>
PLUCKER_HOT inline void for_columns(const Columns& in, const Columns& out, int k, const Op& op) {
  int c = 0;
  for (; c + simd::W <= k; c += simd::W)
    store_lanes(op(load_lanes<V<Pack>>(in, c), load_lanes<V<Pack>>(out, c)), out, c);
  if (c < k) {
    const auto old = load_lanes<V<Pack>>(out, c);
    store_lanes(first_lanes(V<Pack>(op(load_lanes<V<Pack>>(in, c), old)), old, k - c), out, c);
  }
}

/// out(:, c) = X in(:, c) for k motion columns: motions moved to the child frame.
template <class Xf>
PLUCKER_HOT inline void apply_motions(const Xf& X, const Columns& in, const Columns& out, int k) {
  for_columns<MotionT>(in, out, k, [&](const auto& m, const auto&) { return apply(X, m); });
}
/// out(:, c) += X^T in(:, c) for k force columns: forces moved to the parent frame and added.
template <class Xf>
PLUCKER_HOT inline void add_apply_inverse_forces(const Xf& X, const Columns& in, const Columns& out, int k) {
  for_columns<ForceT>(in, out, k, [&](const auto& f, const auto& o) { return o + apply_inverse(X, f); });
}

/// F(:, c) = X^T F(:, c) for k force columns: the subtree's forces moved to the parent frame.
template <class Xf>
PLUCKER_HOT inline void apply_inverse_forces(const Xf& X, const Columns& F, int k) {
  for_columns<ForceT>(F, k, [&](const auto& f) { return apply_inverse(X, f); });
}

}  // namespace plucker::ops
