// The structure of M implied by the tree (branch-induced sparsity): the DoF-level parent array,
// M's nonzero pattern, and M packed into / unpacked from that pattern.
#include "plucker/model/jsim_pattern.hpp"

#include <string>

#include "plucker/errors.hpp"

namespace plucker {

std::vector<int> dof_parents(const Model& model) {
  std::vector<int> lambda(static_cast<std::size_t>(model.nv()), -1);
  for (int i = 1; i < model.nbodies(); ++i) {
    const int d = model.joint_nv(i), first = model.idx_v(i);
    if (d == 0) continue;
    int p = model.parent(i);
    while (p > 0 && model.joint_nv(p) == 0) p = model.parent(p);  // a welded parent has no DoF
    lambda[first] = p > 0 ? model.idx_v(p) + model.joint_nv(p) - 1 : -1;
    for (int m = 1; m < d; ++m) lambda[first + m] = first + m - 1;  // a multi-DoF joint is a chain of DoFs
  }
  return lambda;
}

JsimPattern jsim_pattern(const Model& model) {
  const std::vector<int> lambda = dof_parents(model);
  const int nv = model.nv();
  JsimPattern pattern;
  pattern.row_start.assign(static_cast<std::size_t>(nv) + 1, 0);
  std::vector<int> ancestors;
  for (int k = 0; k < nv; ++k) {
    ancestors.clear();
    for (int j = k; j >= 0; j = lambda[static_cast<std::size_t>(j)]) ancestors.push_back(j);
    pattern.col.insert(pattern.col.end(), ancestors.rbegin(), ancestors.rend());  // ascending, k last
    pattern.row_start[static_cast<std::size_t>(k) + 1] = static_cast<int>(pattern.col.size());
  }
  return pattern;
}

namespace {
void check_pattern_sizes(const char* fn, const JsimPattern& pattern, Eigen::Index M_rows, Eigen::Index M_cols,
                         Eigen::Index packed_size) {
  const Eigen::Index nv = static_cast<Eigen::Index>(pattern.row_start.size()) - 1;
  if (nv < 0 || static_cast<Eigen::Index>(pattern.col.size()) != pattern.nnz())
    throw InvalidArgument(std::string(fn) + ": the pattern is not one jsim_pattern made");
  if (M_rows != nv || M_cols != nv)
    throw InvalidArgument(std::string(fn) + ": M is " + std::to_string(M_rows) + " x " + std::to_string(M_cols) +
                          ", expected nv x nv = " + std::to_string(nv) + " x " + std::to_string(nv));
  if (packed_size != pattern.nnz())
    throw InvalidArgument(std::string(fn) + ": packed has " + std::to_string(packed_size) +
                          " entries, expected the pattern's nnz = " + std::to_string(pattern.nnz()));
}
}  // namespace

void pack_jsim(const JsimPattern& pattern, const Eigen::Ref<const MatX>& M, Eigen::Ref<VecX> packed) {
  check_pattern_sizes("pack_jsim", pattern, M.rows(), M.cols(), packed.size());
  const std::vector<int>& start = pattern.row_start;
  const std::vector<int>& col = pattern.col;
  for (std::size_t k = 0; k + 1 < start.size(); ++k)
    for (int e = start[k]; e < start[k + 1]; ++e)
      packed[e] = M(col[static_cast<std::size_t>(e)], static_cast<Eigen::Index>(k));  // upper triangle, column k
}

void unpack_jsim(const JsimPattern& pattern, const Eigen::Ref<const VecX>& packed, Eigen::Ref<MatX> M) {
  check_pattern_sizes("unpack_jsim", pattern, M.rows(), M.cols(), packed.size());
  M.setZero();
  const std::vector<int>& start = pattern.row_start;
  const std::vector<int>& col = pattern.col;
  for (std::size_t k = 0; k + 1 < start.size(); ++k)
    for (int e = start[k]; e < start[k + 1]; ++e) {
      const Eigen::Index r = static_cast<Eigen::Index>(k), j = col[static_cast<std::size_t>(e)];
      M(r, j) = M(j, r) = packed[e];
    }
}

}  // namespace plucker
