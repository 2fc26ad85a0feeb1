// Lemke's complementary pivoting and projected Gauss-Seidel over friction cones
// (include/plucker/contact/lcp.hpp, docs/contact.md).
#include "plucker/contact/lcp.hpp"

#include <cmath>
#include <string>

#include "base/text.hpp"
#include "plucker/errors.hpp"

namespace plucker {

void LemkeSolver::reserve(int n) {
  if (n <= capacity_) return;
  capacity_ = n;
  T_.resize(n, 2 * n + 2);
  basis_.resize(static_cast<std::size_t>(n));
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): Eigen::Ref by value is Eigen's writable-argument idiom
int LemkeSolver::solve(const Eigen::Ref<const MatX>& M, const Eigen::Ref<const VecX>& q, Eigen::Ref<VecX> z,
                       int max_pivots) {
  const int n = static_cast<int>(q.size());
  if (M.rows() != n || M.cols() != n || z.size() != n)
    throw InvalidArgument("lcp: M is " + std::to_string(M.rows()) + " x " + std::to_string(M.cols()) + ", q has " +
                          std::to_string(n) + " entries and z " + std::to_string(z.size()) +
                          ": expected M n x n and q, z of size n");
  if (!M.allFinite() || !q.allFinite()) throw InvalidArgument("lcp: M or q is not finite");
  z.setZero();
  if (n == 0 || q.minCoeff() >= 0.0) return 0;  // w = q >= 0, z = 0
  if (max_pivots <= 0) max_pivots = 10 * (n + 1);
  reserve(n);
  // Columns: w_j at j, z_j at n + j, z0 at 2n, the right-hand side at 2n + 1. The system is
  // w - M z - d z0 = q with the covering vector d = 1; the basis starts as w (B = I).
  auto T = T_.topLeftCorner(n, 2 * n + 2);
  const int c_z0 = 2 * n, c_rhs = 2 * n + 1;
  T.leftCols(n).setIdentity();
  T.middleCols(n, n) = -M;
  T.col(c_z0).setConstant(-1.0);
  T.col(c_rhs) = q;
  for (int i = 0; i < n; ++i) basis_[static_cast<std::size_t>(i)] = i;
  const double scale = std::max(1.0, M.cwiseAbs().maxCoeff());
  auto pivot = [&](int r, int c) {
    T.row(r) /= T(r, c);
    for (int i = 0; i < n; ++i)
      if (i != r && T(i, c) != 0.0) T.row(i) -= T(i, c) * T.row(r);
    T.col(c).setZero();
    T(r, c) = 1.0;
  };
  // First pivot: z0 enters at the value making the most negative q_i zero; among ties, the last
  // row keeps the rows lexicographically positive (row i - row r has +1 at i and -1 at r).
  int r = 0;
  for (int i = 1; i < n; ++i)
    if (T(i, c_rhs) <= T(r, c_rhs)) r = i;
  int leaving = basis_[static_cast<std::size_t>(r)];
  pivot(r, c_z0);
  basis_[static_cast<std::size_t>(r)] = c_z0;
  for (int pivots = 1; pivots <= max_pivots; ++pivots) {
    // The complement of the variable that just left enters.
    const int c = leaving < n ? leaving + n : leaving - n;
    // Lexicographic minimum ratio test on [rhs, B^-1] / T(:, c) over rows with T(i, c) > 0.
    const double col_max = T.col(c).cwiseAbs().maxCoeff();
    const double threshold = 1e-12 * std::max(col_max, 1e-300);
    r = -1;
    for (int i = 0; i < n; ++i) {
      if (!(T(i, c) > threshold)) continue;
      if (r < 0) {
        r = i;
        continue;
      }
      // Compare row i with the best so far, entry by entry (rhs first, then B^-1's columns).
      const double ai = T(i, c), ar = T(r, c);
      int cmp = 0;
      {
        const double di = T(i, c_rhs) / ai, dr = T(r, c_rhs) / ar;
        const double tol = 1e-14 * std::max({1.0, std::abs(di), std::abs(dr)});
        if (di < dr - tol)
          cmp = -1;
        else if (di > dr + tol)
          cmp = 1;
      }
      for (int k = 0; cmp == 0 && k < n; ++k) {
        const double di = T(i, k) / ai, dr = T(r, k) / ar;
        if (di < dr - 1e-14 * scale)
          cmp = -1;
        else if (di > dr + 1e-14 * scale)
          cmp = 1;
      }
      // A tie on every entry cannot happen for distinct rows of a nonsingular B^-1; prefer the
      // row where z0 leaves (it ends the method).
      if (cmp < 0 || (cmp == 0 && basis_[static_cast<std::size_t>(i)] == c_z0)) r = i;
    }
    if (r < 0)
      throw SingularError("lcp: Lemke's method ended on a secondary ray after " + std::to_string(pivots) +
                          " pivots: the LCP has no solution (infeasible), or M is not copositive-plus");
    leaving = basis_[static_cast<std::size_t>(r)];
    pivot(r, c);
    basis_[static_cast<std::size_t>(r)] = c;
    if (leaving == c_z0) {
      for (int i = 0; i < n; ++i) {
        const int b = basis_[static_cast<std::size_t>(i)];
        if (b >= n && b < 2 * n) z[b - n] = std::max(0.0, T(i, c_rhs));
      }
      return pivots;
    }
  }
  double z0 = 0.0;
  for (int i = 0; i < n; ++i)
    if (basis_[static_cast<std::size_t>(i)] == c_z0) z0 = T(i, c_rhs);
  throw ConvergenceError("lcp: Lemke's method did not finish within " + std::to_string(max_pivots) +
                             " pivots (artificial variable z0 = " + text::number(z0) + ")",
                         max_pivots, z0);
}

VecX solve_lcp(const Eigen::Ref<const MatX>& M, const Eigen::Ref<const VecX>& q, int max_pivots) {
  LemkeSolver solver(static_cast<int>(q.size()));
  VecX z(q.size());
  solver.solve(M, q, z, max_pivots);
  return z;
}

double lcp_violation(const Eigen::Ref<const MatX>& M, const Eigen::Ref<const VecX>& q,
                     const Eigen::Ref<const VecX>& z) {
  if (M.rows() != q.size() || M.cols() != q.size() || z.size() != q.size())
    throw InvalidArgument("lcp_violation: M must be n x n and q, z of size n");
  const VecX w = M * z + q;
  double v = 0.0;
  for (Eigen::Index i = 0; i < q.size(); ++i) v = std::max({v, -z[i], -w[i], std::abs(z[i] * w[i])});
  return v;
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): Eigen::Ref by value is Eigen's writable-argument idiom
FrictionPgsReport solve_friction_pgs(const Eigen::Ref<const MatX>& G, const Eigen::Ref<const VecX>& b,
                                     const Eigen::Ref<const VecX>& mu, Eigen::Ref<VecX> p,
                                     const FrictionPgsOptions& options) {
  const Eigen::Index k = mu.size(), m = 3 * k;
  if (G.rows() != m || G.cols() != m || b.size() != m || p.size() != m)
    throw InvalidArgument("solve_friction_pgs: with " + std::to_string(k) + " contacts G must be " + std::to_string(m) +
                          " x " + std::to_string(m) + " and b, p of size " + std::to_string(m));
  for (Eigen::Index i = 0; i < k; ++i) {
    if (!(std::isfinite(mu[i]) && mu[i] >= 0.0))
      throw InvalidArgument("solve_friction_pgs: mu[" + std::to_string(i) + "] must be finite and >= 0, got " +
                            text::number(mu[i]));
    if (!(G(3 * i, 3 * i) > 0.0))
      throw InvalidArgument("solve_friction_pgs: contact " + std::to_string(i) +
                            " has a non-positive normal diagonal entry G_nn = " + text::number(G(3 * i, 3 * i)));
  }
  if (!(options.tolerance > 0.0) || options.max_iterations < 1)
    throw InvalidArgument("solve_friction_pgs: tolerance must be > 0 and max_iterations >= 1");
  FrictionPgsReport report;
  for (Eigen::Index i = 0; i < k; ++i) {  // a feasible warm start
    if (!(p[3 * i] > 0.0)) p[3 * i] = 0.0;
    const double r = mu[i] * p[3 * i], t = p.segment<2>(3 * i + 1).norm();
    if (t > r) p.segment<2>(3 * i + 1) *= (t > 0.0 ? r / t : 0.0);
  }
  for (int it = 1; it <= options.max_iterations; ++it) {
    double change = 0.0;
    for (Eigen::Index i = 0; i < k; ++i) {
      const Eigen::Index r = 3 * i;
      const double wn = G.row(r).dot(p) + b[r];
      const double pn = std::max(0.0, p[r] - wn / G(r, r));
      change = std::max(change, std::abs(pn - p[r]));
      p[r] = pn;
      if (mu[i] == 0.0) {
        change = std::max(change, p.segment<2>(r + 1).cwiseAbs().maxCoeff());
        p.segment<2>(r + 1).setZero();
        continue;
      }
      // A scalar step 1 / max(G_t1t1, G_t2t2) (not the 2 x 2 block's inverse): then a fixed point on
      // the disc's boundary has p_t = -radius w_t / |w_t| (maximal dissipation); the block's
      // metric would skew the friction away from the slip direction.
      const Eigen::Vector2d wt(G.row(r + 1).dot(p) + b[r + 1], G.row(r + 2).dot(p) + b[r + 2]);
      const double gtt = std::max(G(r + 1, r + 1), G(r + 2, r + 2));
      Eigen::Vector2d pt = p.segment<2>(r + 1);
      if (gtt > 0.0) pt -= wt / gtt;
      const double radius = mu[i] * pn, norm = pt.norm();
      if (norm > radius) pt *= (norm > 0.0 ? radius / norm : 0.0);
      change = std::max(change, (pt - p.segment<2>(r + 1)).cwiseAbs().maxCoeff());
      p.segment<2>(r + 1) = pt;
    }
    report.iterations = it;
    const double size = std::max(p.cwiseAbs().maxCoeff(), 1e-300);
    report.change = change / size;
    if (change <= options.tolerance * size) {
      report.converged = true;
      break;
    }
  }
  return report;
}

}  // namespace plucker
