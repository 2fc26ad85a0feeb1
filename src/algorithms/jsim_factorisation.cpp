// Factorisations of the joint-space inertia matrix that exploit branch-induced sparsity
// (paper 003: Featherstone, "Efficient factorization of the joint-space inertia matrix for
// branched kinematic trees", IJRR 2005), in place on M, with their back-substitutions and
// their cost as a function of the topology.
//
// M(i, j) (i > j) can be nonzero only when j is an ancestor of i in the DoF-level parent array
// lambda. Factorising in the order n..1 (leaves first) keeps every update inside that pattern:
// row k only ever touches rows of its ancestors, at columns that are ancestors too, so the
// factor has no fill-in and the work is sum_k d_k (d_k + 1) / 2 with d_k the DoF depth, instead
// of (n^3 - n) / 6: a chain is the worst case, a bushy tree much cheaper.
//
// Storage: the paper works on the lower triangle, H(k, i) with i < k. plucker's matrices are
// column-major, so the loops below run on H = M^T, i.e. on the upper triangle of data.M: row k
// of H (the walk over k's ancestors) is then column k of data.M, contiguous in memory, and M's
// upper triangle is what crba(Triangle::Upper) fills.
#include <cmath>
#include <sstream>

#include "algorithms/fd_kernels.hpp"

namespace plucker {
namespace {

// The sparsity pattern: lambda (the DoF-level parent array) and, for a faster walk, run(j): the
// first DoF of the longest stretch run(j), run(j)+1, ..., j in which each DoF's parent is the one
// before it. A walk from j up to the root then visits whole index ranges [run(j), j], and each
// range is one vector operation on a contiguous piece of a column of M (a chain is one range;
// the dense factorisation is the chain's pattern).
struct TreePattern {
  const std::vector<int>& lambda;
  const std::vector<int>& runs;
  int parent(int k) const { return lambda[static_cast<std::size_t>(k)]; }
  int run(int k) const { return runs[static_cast<std::size_t>(k)]; }
};
struct DensePattern {
  int parent(int k) const { return k - 1; }
  int run(int) const { return 0; }
};

// LTDL (Featherstone 2005), M = L^T D L, L unit lower triangular, in place on the lower
// triangle of H = M^T (H(k, i) is M(i, k): row k of H is column k of M).
template <class Pattern>
void ltdl_in_place(const Model& model, MatX& M, VecX& scale, const Pattern& P, const char* where) {
  Eigen::Transpose<MatX> H(M);
  const int n = static_cast<int>(H.rows());
  scale = H.diagonal();  // pivot tolerance relative to the original M(k, k)
  for (int k = n - 1; k >= 0; --k) {
    const double Hkk = H(k, k);  // = D(k) once the descendants of k are eliminated
    if (!(scale[k] > 0.0) || !detail::pivot_accepted(Hkk, scale[k]))
      detail::throw_singular_dof(model, k, where, Hkk, scale[k]);
    for (int i = P.parent(k); i >= 0; i = P.parent(i)) {
      const double a = H(k, i) / Hkk;
      // H(i, j) -= a H(k, j) for j = i and its ancestors only (no fill-in), one run at a time
      for (int j = i; j >= 0; j = P.parent(P.run(j))) {
        const int s = P.run(j), len = j - s + 1;
        M.col(i).segment(s, len) -= a * M.col(k).segment(s, len);
      }
      H(k, i) = a;  // L(k, i)
    }
  }
}

// LTL (Featherstone 2005), M = L^T L, in place on the lower triangle of H = M^T.
template <class Pattern>
void ltl_in_place(const Model& model, MatX& M, VecX& scale, const Pattern& P, const char* where) {
  Eigen::Transpose<MatX> H(M);
  const int n = static_cast<int>(H.rows());
  scale = H.diagonal();
  for (int k = n - 1; k >= 0; --k) {
    if (!(scale[k] > 0.0) || !detail::pivot_accepted(H(k, k), scale[k]))
      detail::throw_singular_dof(model, k, where, H(k, k), scale[k]);
    H(k, k) = std::sqrt(H(k, k));
    for (int j = P.parent(k); j >= 0; j = P.parent(P.run(j))) {  // H(k, i) /= H(k, k), ancestors i
      const int s = P.run(j);
      M.col(k).segment(s, j - s + 1) /= H(k, k);
    }
    for (int i = P.parent(k); i >= 0; i = P.parent(i)) {
      const double a = H(k, i);
      for (int j = i; j >= 0; j = P.parent(P.run(j))) {  // H(i, j) -= H(k, i) H(k, j)
        const int s = P.run(j), len = j - s + 1;
        M.col(i).segment(s, len) -= a * M.col(k).segment(s, len);
      }
    }
  }
}

// The two unit-triangular halves of a solve with M = L^T D L; L(i, j) is stored in M(j, i).
// L^T y = b leaves first. With Path, b is zero outside DoF `top` and its ancestors, and so is y
// (only descendants feed a DoF in this sweep): the walk visits that path only, O(d^2) for d DoFs.
template <bool Path, class Pattern>
void ltdl_solve_transposed(const MatX& M, double* x_ptr, int top, const Pattern& P) {
  Eigen::Map<VecX> x(x_ptr, top + 1);
  for (int i = top; i >= 0; i = Path ? P.parent(i) : i - 1)
    for (int j = P.parent(i); j >= 0; j = P.parent(P.run(j))) {  // x(j) -= L(i, j) x(i)
      const int s = P.run(j), len = j - s + 1;
      x.segment(s, len) -= x[i] * M.col(i).segment(s, len);
    }
}
// L x = z root first.
template <class Pattern>
void ltdl_solve_unit(const MatX& M, double* x_ptr, int n, const Pattern& P) {
  Eigen::Map<VecX> x(x_ptr, n);
  for (int i = 0; i < n; ++i)
    for (int j = P.parent(i); j >= 0; j = P.parent(P.run(j))) {  // x(i) -= L(i, j) x(j)
      const int s = P.run(j), len = j - s + 1;
      x[i] -= M.col(i).segment(s, len).dot(x.segment(s, len));
    }
}

// M x = b with M = L^T D L: L^T y = b leaves first, then D z = y, then L x = z root first.
template <class Pattern>
void ltdl_solve(const MatX& M, double* x_ptr, int n, const Pattern& P) {
  ltdl_solve_transposed<false>(M, x_ptr, n - 1, P);
  for (int i = 0; i < n; ++i) x_ptr[i] /= M(i, i);  // D
  ltdl_solve_unit(M, x_ptr, n, P);
}

// M x = b with M = L^T L.
template <class Pattern>
void ltl_solve(const MatX& M, double* x_ptr, int n, const Pattern& P) {
  Eigen::Map<VecX> x(x_ptr, n);
  for (int i = n - 1; i >= 0; --i) {
    x[i] /= M(i, i);
    for (int j = P.parent(i); j >= 0; j = P.parent(P.run(j))) {  // L^T y = b
      const int s = P.run(j), len = j - s + 1;
      x.segment(s, len) -= x[i] * M.col(i).segment(s, len);
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = P.parent(i); j >= 0; j = P.parent(P.run(j))) {  // L x = y
      const int s = P.run(j), len = j - s + 1;
      x[i] -= M.col(i).segment(s, len).dot(x.segment(s, len));
    }
    x[i] /= M(i, i);
  }
}

void check_factorisable(const Model& model, const Data& data, const char* fn) {
  if (data.M.rows() != model.nv() || data.M.cols() != model.nv())
    throw InvalidArgument(std::string(fn) + ": data.M is not an nv x nv matrix (run crba first)");
  for (int j = 0; j < model.nv(); ++j)
    if (!data.M.col(j).head(j + 1).allFinite())
      throw InvalidArgument(std::string(fn) + ": the upper triangle of data.M is not finite (run crba first)");
}

void check_rhs(const Model& model, const Eigen::Ref<VecX>& x, const char* fn) {
  if (x.size() != model.nv())
    throw InvalidArgument(std::string(fn) + ": x has size " + std::to_string(x.size()) +
                          ", expected nv = " + std::to_string(model.nv()));
  model.check_tangent(x, fn);
}

TreePattern tree_pattern(const detail::FactorWorkspace& ws) { return {ws.dof_parent, ws.dof_run_start}; }

/// d_k, the number of DoF-level ancestors of each DoF.
std::vector<long long> dof_depths(const Model& model) {
  const std::vector<int> lambda = dof_parents(model);
  std::vector<long long> d(lambda.size(), 0);
  for (std::size_t k = 0; k < lambda.size(); ++k) d[k] = lambda[k] < 0 ? 0 : d[static_cast<std::size_t>(lambda[k])] + 1;
  return d;
}

}  // namespace

namespace detail {

void throw_singular_dof(const Model& model, int k, const char* where, double pivot, double scale) {
  const int joint = model.joint_of_v(k);
  std::ostringstream m;
  m << "forward dynamics undefined (" << where << "): the joint-space inertia matrix is singular at joint '"
    << model.joint_name(joint) << "' (body '" << model.body_name(joint) << "', pivot " << pivot << ", scale " << scale
    << "): the subtree it moves has no mass or inertia along its motion";
  throw SingularError(m.str());
}

FactorWorkspace::FactorWorkspace(const Model& model)
    : dof_parent(dof_parents(model)),
      dof_run_start(static_cast<std::size_t>(model.nv()), 0),
      pivot_scale(VecX::Zero(model.nv())),
      rhs(VecX::Zero(model.nv())),
      zero(VecX::Zero(model.nv())) {
  for (int k = 0; k < model.nv(); ++k) dof_run_start[k] = k > 0 && dof_parent[k] == k - 1 ? dof_run_start[k - 1] : k;
}

void factorize_ltdl_unchecked(const Model& model, Data& data) {
  FactorWorkspace& ws = workspace<FactorWorkspace>(model, data);
  ltdl_in_place(model, data.M, ws.pivot_scale, tree_pattern(ws), "LTDL");
}
void solve_ltdl_unchecked(const Model& model, Data& data, Eigen::Ref<VecX> x) {
  ltdl_solve(data.M, x.data(), model.nv(), tree_pattern(workspace<FactorWorkspace>(model, data)));
}
void solve_ltdl_transposed_path_unchecked(const Model& model, Data& data, double* x, int top) {
  ltdl_solve_transposed<true>(data.M, x, top, tree_pattern(workspace<FactorWorkspace>(model, data)));
}
void solve_ltdl_unit_unchecked(const Model& model, Data& data, double* x) {
  ltdl_solve_unit(data.M, x, model.nv(), tree_pattern(workspace<FactorWorkspace>(model, data)));
}

// The dense Cholesky factorisation is LTL with the parent array of an unbranched chain.
void factorize_ltl_dense(const Model& model, Data& data) {
  ltl_in_place(model, data.M, workspace<FactorWorkspace>(model, data).pivot_scale, DensePattern{}, "dense Cholesky");
}
void solve_ltl_dense(const MatX& M, Eigen::Ref<VecX> x) {
  ltl_solve(M, x.data(), static_cast<int>(M.rows()), DensePattern{});
}

}  // namespace detail

void factorize_ltdl(const Model& model, Data& data) {
  const detail::DataUse use(model, data, "factorize_ltdl");
  check_factorisable(model, data, "factorize_ltdl");
  detail::factorize_ltdl_unchecked(model, data);
}

void factorize_ltl(const Model& model, Data& data) {
  const detail::DataUse use(model, data, "factorize_ltl");
  check_factorisable(model, data, "factorize_ltl");
  detail::FactorWorkspace& ws = detail::workspace<detail::FactorWorkspace>(model, data);
  ltl_in_place(model, data.M, ws.pivot_scale, tree_pattern(ws), "LTL");
}

/// The pattern a factorisation left (solving before factorising is an error).
TreePattern factored_pattern(const Data& data, const char* fn) {
  const detail::FactorWorkspace* ws = detail::find_workspace<detail::FactorWorkspace>(data);
  if (!ws) throw InvalidArgument(std::string(fn) + ": no factorisation in this Data (run factorize_* first)");
  return tree_pattern(*ws);
}

void solve_ltdl(const Model& model, const Data& data, Eigen::Ref<VecX> x) {
  const detail::DataUse use(model, data, "solve_ltdl");
  check_factorisable(model, data, "solve_ltdl");
  check_rhs(model, x, "solve_ltdl: x");
  ltdl_solve(data.M, x.data(), model.nv(), factored_pattern(data, "solve_ltdl"));
}

void solve_ltl(const Model& model, const Data& data, Eigen::Ref<VecX> x) {
  const detail::DataUse use(model, data, "solve_ltl");
  check_factorisable(model, data, "solve_ltl");
  check_rhs(model, x, "solve_ltl: x");
  ltl_solve(data.M, x.data(), model.nv(), factored_pattern(data, "solve_ltl"));
}

FactorisationCost ltdl_cost(const Model& model) {
  FactorisationCost c;
  for (long long d : dof_depths(model)) {
    c.factor_div += d;                // a = H(k, i) / H(k, k) for each ancestor i
    c.factor_mul += d * (d + 1) / 2;  // H(i, j) -= a H(k, j): ancestors i have depths d-1..0
    c.solve_mul += 2 * d;             // L^T and L sweeps
  }
  c.factor_add = c.factor_mul;
  c.solve_add = c.solve_mul;
  c.solve_div = model.nv();
  return c;
}

FactorisationCost ltl_cost(const Model& model) {
  FactorisationCost c = ltdl_cost(model);
  c.factor_sqrt = model.nv();
  c.solve_div = 2LL * model.nv();
  return c;
}

FactorisationCost dense_cholesky_cost(int n) {
  const long long N = n;
  FactorisationCost c;
  c.factor_sqrt = N;
  c.factor_div = N * (N - 1) / 2;
  c.factor_mul = c.factor_add = (N * N * N - N) / 6;
  c.solve_mul = c.solve_add = N * (N - 1);
  c.solve_div = 2 * N;
  return c;
}

}  // namespace plucker
