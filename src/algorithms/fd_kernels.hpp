// What the forward-dynamics family (plucker/algorithms/forward_dynamics.hpp) shares: the scratch
// of its methods, the poses, the O(N) product M y, and the solvers on poses already computed.
// Unchecked: the public functions check their arguments first.
#pragma once

#include "algorithms/aba.hpp"
#include "plucker/algorithms/forward_dynamics.hpp"

namespace plucker::detail {

/// The JSIM factorisations (jsim_factorisation.cpp): the tree's DoF-level pattern and scratch.
struct FactorWorkspace : WorkspaceOf<FactorWorkspace> {
  static constexpr Slot slot = Slot::Factorisation;
  explicit FactorWorkspace(const Model& model);
  std::vector<int> dof_parent;     ///< lambda(k), see dof_parents()
  std::vector<int> dof_run_start;  ///< first DoF of the run j0..k with lambda(j) = j - 1 ending at k
  VecX pivot_scale;                ///< M's diagonal before an in-place factorisation (pivot tolerance)
  VecX rhs, zero;                  ///< right-hand side; zeros (the acceleration of the bias-force pass)
  int auto_method = -1;            ///< the ForwardDynamicsMethod that Auto runs on this model (-1: not chosen yet)
};

/// The innovations factorisation (innovations.cpp, paper 002 Eq. 45), also minv's factors.
struct InnovationsWorkspace : WorkspaceOf<InnovationsWorkspace> {
  static constexpr Slot slot = Slot::Innovations;
  explicit InnovationsWorkspace(const Model& model);
  std::vector<ops::ArticulatedT<double>> P;  ///< P(k), left as P+(k) = taubar(k) P(k); packed
  std::vector<Force> U;                      ///< U = P H*, one per velocity index (G = U D^-1)
  VecX D_inv;                                ///< D(k)^-1, row-major d x d at 6 idx_v(k)
  std::vector<Force> z;                      ///< z(k) (leaves to root)
  std::vector<Motion> alpha;                 ///< alpha(k) (root to leaves)
  VecX x, b;                                 ///< solution; right-hand side
};

/// data.X_up[i] = X_J(q_i) X_tree(i) for every body.
void compute_poses(const Model& model, Data& data, const double* q);

/// out = M y on the poses already in data.X_up: inverse dynamics with no velocity, no gravity
/// and no external force (paper 002 §4). Two passes, O(N); data.a and data.f are scratch.
void mass_times_kernel(const Model& model, Data& data, const double* y, double* out);

/// Throws SingularError for the joint that owns DoF k of M.
[[noreturn]] void throw_singular_dof(const Model& model, int k, const char* where, double pivot, double scale);

/// The articulated-body factors of paper 002 Eq. 45 on the poses in data.X_up (and sin/cos of q
/// in data, evaluated with them), leaves to root.
/// Throws SingularError naming the joint of a singular D(k).
InnovationsWorkspace& innovations_factor(const Model& model, Data& data);
/// x = M^-1 b with the factors innovations_factor left (O(N)). Closed-loop solvers factor once
/// and solve for many right-hand sides. Returns the workspace's x (b may not alias it).
const VecX& innovations_solve(const Model& model, Data& data, const double* b);

/// Conjugate gradient's safety net: at most this many iterations per DoF (in exact arithmetic nv
/// suffice; rounding needs more on ill-conditioned M). Reaching it raises ConvergenceError.
inline constexpr int kConjugateGradientCap = 20;

/// The solvers on the poses already in data.X_up (the public functions check, compute the poses
/// and call these; forward_dynamics calls them after the bias-force pass has left the poses).
const VecX& conjugate_gradient_impl(const char* fn, const Model& model, Data& data, const double* b,
                                    bool preconditioned, double tolerance, int max_iterations);
const MatX& minv_impl(const Model& model, Data& data);

/// factorize_ltdl / solve_ltdl without the argument checks.
void factorize_ltdl_unchecked(const Model& model, Data& data);
void solve_ltdl_unchecked(const Model& model, Data& data, Eigen::Ref<VecX> x);
/// The halves of solve_ltdl on the factors M = L^T D L in data.M: x <- L^-T x for x zero outside
/// DoF `top` and its DoF-level ancestors (a column of a task Jacobian of operational_space: zero
/// outside its body's support; O(d^2) for a path of d DoFs, and x stays zero outside the path),
/// and x <- L^-1 x (nv entries).
void solve_ltdl_transposed_path_unchecked(const Model& model, Data& data, double* x, int top);
void solve_ltdl_unit_unchecked(const Model& model, Data& data, double* x);

/// Dense LTL (M = L^T L with the parent array lambda(k) = k - 1: a dense Cholesky factorisation
/// that visits every entry), in place on the upper triangle of M (L^T there); and its solve.
void factorize_ltl_dense(const Model& model, Data& data);
void solve_ltl_dense(const MatX& M, Eigen::Ref<VecX> x);

}  // namespace plucker::detail
