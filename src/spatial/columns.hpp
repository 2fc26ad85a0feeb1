// The set forms of the spatial operations: a transform applied to k spatial vectors at once,
// the columns of a 6 x k block whose rows are contiguous (a row-major matrix). W columns at a
// time are the lanes of a Pack, so each operation is the one of ops.hpp instantiated on Pack
// with the transform a constant; the last k mod W columns take the double form. The CRBA moves a
// whole subtree's forces to the parent frame this way (Pinocchio's act-on-set; Featherstone's
// "F[1:6, subtree] = liXi F[1:6, subtree]").
#pragma once

#include "ops.hpp"

namespace plucker::ops {

/// Six row pointers of a 6 x k block: row r of column c at rows[r][c].
struct Columns {
  double* rows[6];
  /// Columns c0.. of a row-major 6 x n matrix (Eigen::Matrix<double, 6, Dynamic, RowMajor>).
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

/// op(lane vector) on W columns at a time, then op(double vector) on the rest, in place:
/// F(:, c) = op(F(:, c)) for c < k. V is ForceT or MotionT (the lane form), One its double form.
template <template <class> class V, class One, class Op>
PLUCKER_HOT inline void for_columns(const Columns& F, int k, const Op& op) {
  int c = 0;
  for (; c + simd::W <= k; c += simd::W) store_lanes(op(load_lanes<V<Pack>>(F, c)), F, c);
  for (; c < k; ++c) store_one(op(load_one<One>(F, c)), F, c);
}

/// out(:, c) = op(in(:, c), out(:, c)) for c < k, two blocks of the same kind.
template <template <class> class V, class One, class Op>
PLUCKER_HOT inline void for_columns(const Columns& in, const Columns& out, int k, const Op& op) {
  int c = 0;
  for (; c + simd::W <= k; c += simd::W)
    store_lanes(op(load_lanes<V<Pack>>(in, c), load_lanes<V<Pack>>(out, c)), out, c);
  for (; c < k; ++c) store_one(op(load_one<One>(in, c), load_one<One>(out, c)), out, c);
}

/// out(:, c) = X in(:, c) for k motion columns: motions moved to the child frame.
template <class Xf>
PLUCKER_HOT inline void apply_motions(const Xf& X, const Columns& in, const Columns& out, int k) {
  for_columns<MotionT, Motion>(in, out, k, [&](const auto& m, const auto&) { return apply(X, m); });
}
/// out(:, c) += X^T in(:, c) for k force columns: forces moved to the parent frame and added.
template <class Xf>
PLUCKER_HOT inline void add_apply_inverse_forces(const Xf& X, const Columns& in, const Columns& out, int k) {
  for_columns<ForceT, Force>(in, out, k, [&](const auto& f, const auto& o) { return o + apply_inverse(X, f); });
}

/// F(:, c) = X^T F(:, c) for k force columns: the subtree's forces moved to the parent frame.
template <class Xf>
PLUCKER_HOT inline void apply_inverse_forces(const Xf& X, const Columns& F, int k) {
  for_columns<ForceT, Force>(F, k, [&](const auto& f) { return apply_inverse(X, f); });
}

}  // namespace plucker::ops
