// Complementarity solvers for rigid contact (documentation: Compliant contact and simulation, "Rigid contact").
//
// The linear complementarity problem LCP(M, q): find z with
//     w = M z + q,   z >= 0,   w >= 0,   z . w = 0.
// Lemke's complementary pivoting (Cottle, Pang & Stone, "The Linear Complementarity Problem",
// 1992, §4.4) solves it exactly (to rounding) for the matrices of frictionless contact: the
// Delassus matrix G = J M^-1 J^T is symmetric positive semidefinite, and for such (copositive-
// plus) matrices Lemke's method finds a solution whenever one exists, and otherwise stops on a
// secondary ray, which proves the problem infeasible. Degenerate problems (ties in the ratio
// test, e.g. the four equal corners of a box on a plane, whose G is singular) are handled by the
// lexicographic ratio test, under which the method cannot cycle.
//
// Coulomb friction: projected Gauss-Seidel (block per contact) over the friction cones
// |p_t| <= mu p_n on the same Delassus matrix with rows [n, t1, t2] per contact.
#pragma once

#include <vector>

#include "plucker/spatial/types.hpp"

namespace plucker {

/// Lemke's method with a preallocated tableau: no heap allocation for problems up to the
/// capacity given at construction (a larger problem grows the tableau once).
class LemkeSolver {
 public:
  explicit LemkeSolver(int capacity = 0) { reserve(capacity); }
  void reserve(int n);
  /// Solves LCP(M, q) (M n x n, q n) into z (size n). max_pivots <= 0: 10 (n + 1). Returns the
  /// number of pivots (0 when q >= 0: z = 0). Throws InvalidArgument for mismatched sizes or
  /// non-finite entries, SingularError when the method ends on a secondary ray (no solution:
  /// the problem is infeasible, or M is not copositive-plus) and ConvergenceError after
  /// max_pivots pivots. z is >= 0 (rounding-level negatives of the final tableau set to 0).
  int solve(const Eigen::Ref<const MatX>& M, const Eigen::Ref<const VecX>& q, Eigen::Ref<VecX> z, int max_pivots = 0);

 private:
  MatX T_;                  ///< tableau rows [B^-1 | B^-1 (-M) | B^-1 (-d) | B^-1 q]
  std::vector<int> basis_;  ///< basic variable of each row: j < n is w_j, n + j is z_j, 2n is z0
  int capacity_ = 0;
};

/// A convenience call: z of LCP(M, q) by Lemke's method (allocates).
VecX solve_lcp(const Eigen::Ref<const MatX>& M, const Eigen::Ref<const VecX>& q, int max_pivots = 0);

/// How far z is from solving LCP(M, q): the largest of max(-z_i), max(-w_i) and max |z_i w_i|
/// (0 for an exact solution). A check for tests and callers.
double lcp_violation(const Eigen::Ref<const MatX>& M, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& z);

/// Projected Gauss-Seidel over Coulomb friction cones. The unknowns are k contact impulses, rows
/// 3i (normal), 3i+1, 3i+2 (two orthonormal tangents) of p; the contact velocities are
/// w = G p + b. Each sweep visits the contacts in order: the normal impulse
/// p_n <- max(0, p_n - w_n / G_nn), then the tangential pair p_t <- p_t - w_t / max(G_t1t1, G_t2t2)
/// projected onto the disc |p_t| <= mu_i p_n (a scalar step, so that a sliding fixed point opposes
/// the slip; the 2 x 2 block's inverse would skew it). It stops when a sweep changes no
/// impulse by more than tolerance * max(max_i |p_i|, tiny), after at most max_iterations sweeps.
/// The solution of this iteration satisfies the Coulomb conditions: p_n >= 0, w_n >= 0,
/// p_n w_n = 0, |p_t| <= mu p_n, and a sliding contact (|p_t| = mu p_n, w_t != 0) has p_t
/// opposing w_t (maximal dissipation) — to the tolerance.
struct FrictionPgsOptions {
  double tolerance = 1e-12;
  int max_iterations = 500;
};
struct FrictionPgsReport {
  int iterations = 0;
  double change = 0.0;     ///< the largest impulse change of the last sweep, relative
  bool converged = false;  ///< change <= tolerance
};
/// G (3k x 3k, symmetric positive semidefinite with positive diagonal on the rows of contacts
/// whose mu > 0 or that are normal rows), b (3k), mu (k, >= 0), p (3k: the warm start on entry,
/// the impulses on exit). Throws InvalidArgument for mismatched sizes, a negative or non-finite
/// mu or a non-positive normal diagonal entry.
FrictionPgsReport solve_friction_pgs(const Eigen::Ref<const MatX>& G, const Eigen::Ref<const VecX>& b,
                                     const Eigen::Ref<const VecX>& mu, Eigen::Ref<VecX> p,
                                     const FrictionPgsOptions& options = {});

}  // namespace plucker
