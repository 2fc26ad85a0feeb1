// The structure of the joint-space inertia matrix that the tree's branching implies
// (branch-induced sparsity: Featherstone, "Efficient Factorization of the Joint-Space Inertia Matrix for Branched
// Kinematic Trees", IJRR 2005), and which part of M to fill.
#pragma once

#include <vector>

#include "plucker/model/model.hpp"

namespace plucker {

/// Which part of the symmetric M to fill.
enum class Triangle {
  Full,   ///< the whole symmetric matrix (default)
  Upper,  ///< M(j, i) for j <= i; the strict lower triangle is zero except inside multi-DoF diagonal blocks
};

/// The parent array at DoF level, lambda(k) for k = 0..nv-1: the previous DoF of the same joint,
/// else the last DoF of the nearest ancestor joint that has DoFs, else -1. M(i, j) (i > j) can be
/// nonzero only when j is an ancestor of i in this array (a DoF-level ancestor).
std::vector<int> dof_parents(const Model& model);

/// The entries of M(q)'s lower triangle that the tree's branching allows to be nonzero: M(k, j),
/// j < k, only when DoF j is an ancestor of DoF k in dof_parents. Compressed sparse rows: row k
/// holds the columns of k's ancestors in ascending order, then k itself (the diagonal last), as
/// entries [row_start[k], row_start[k + 1]) of `col`. The same for every q; by symmetry, row k
/// lists the entries of column k of M's upper triangle.
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
