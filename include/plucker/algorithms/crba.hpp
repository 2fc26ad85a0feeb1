// The joint-space inertia matrix by the composite-rigid-body algorithm (paper 000 §3.2,
// Eqs. 9-10).
#pragma once

#include <vector>

#include "plucker/algorithms/data.hpp"

namespace plucker {

/// Which part of the symmetric matrix to fill.
enum class Triangle {
  Full,   ///< the whole symmetric matrix (default)
  Upper,  ///< M(j, i) for j <= i; the strict lower triangle is zero except inside multi-DoF diagonal blocks
};

/// M(q), nv x nv, symmetric positive (semi-)definite. Only the nonzero blocks that the
/// tree's branching allows are computed (each body walks its support path); the others are
/// zero. Returns data.M.
const MatX& crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, Triangle triangle = Triangle::Full);

/// The entries of M(q)'s lower triangle that the tree's branching allows to be nonzero
/// (branch-induced sparsity, paper 003: Featherstone 2005): M(k, j), j < k, only when DoF j is
/// an ancestor of DoF k in the DoF-level parent array (dof_parents). Compressed sparse rows:
/// row k holds the columns of k's ancestors in ascending order, then k itself (the diagonal
/// last), as entries [row_start[k], row_start[k + 1]) of `col`. The same for every q; by
/// symmetry, row k lists the entries of column k of M's upper triangle.
struct JsimPattern {
  std::vector<int> row_start;  ///< nv + 1 offsets into col
  std::vector<int> col;        ///< the column of each entry
  int nnz() const { return row_start.empty() ? 0 : row_start.back(); }
};
JsimPattern jsim_pattern(const Model& model);
/// packed(e) = M(k, col[e]) for the entries e of row k: M's nonzeros in pattern order, read from
/// its upper triangle (so either Triangle of crba will do). packed must have nnz entries.
void pack_jsim(const JsimPattern& pattern, const Eigen::Ref<const MatX>& M, Eigen::Ref<VecX> packed);
/// M = the symmetric matrix whose nonzeros are `packed` (zeros elsewhere). M must be nv x nv.
void unpack_jsim(const JsimPattern& pattern, const Eigen::Ref<const VecX>& packed, Eigen::Ref<MatX> M);

}  // namespace plucker
