// Kernels shared by the forward-dynamics family (forward_dynamics.hpp): poses, the O(N)
// product M y, the singular-pivot error, and the dense variants of the JSIM factorisations.
// Unchecked: the public functions check their arguments first.
#pragma once

#include <Eigen/Cholesky>
#include <sstream>

#include "checks.hpp"
#include "plucker/algorithms/forward_dynamics.hpp"

namespace plucker::detail {

/// data.X_up[i] = X_J(q_i) X_tree(i) for every body.
inline void compute_poses(const Model& model, Data& data, const double* q) {
  for (int i = 1; i < model.nbodies(); ++i)
    visit_joint(model.joint(i),
                [&](const auto& joint) { data.X_up[i] = joint.compose(q + model.idx_q(i), model.X_tree(i)); });
}

/// out = M y on the poses already in data.X_up: inverse dynamics with no velocity, no gravity
/// and no external force (paper 002 §4). Two passes, O(N); data.a and data.f are scratch.
inline void mass_times_kernel(const Model& model, Data& data, const double* y, double* out) {
  const int n = model.nbodies();
  data.a[0].setZero();
  for (int i = 1; i < n; ++i) {
    visit_joint(model.joint(i), [&](const auto& joint) {
      data.a[i] = data.X_up[i].apply(data.a[model.parent(i)]) + joint.motion(y + model.idx_v(i));  // Eq. 4
    });
    data.f[i] = model.inertia(i) * data.a[i];  // Eq. 5 at rest
  }
  for (int i = n - 1; i > 0; --i) {
    visit_joint(model.joint(i), [&](const auto& joint) { joint.project(data.f[i], out + model.idx_v(i)); });  // Eq. 8
    const int p = model.parent(i);
    if (p > 0) data.f[p] += data.X_up[i].apply_inverse(data.f[i]);  // Eq. 7
  }
}

[[noreturn]] inline void throw_singular(const Model& model, int joint, const char* where, double pivot, double scale) {
  std::ostringstream m;
  m << "forward dynamics undefined (" << where << "): the joint-space inertia matrix is singular at joint '"
    << model.joint_name(joint) << "' (body '" << model.body_name(joint) << "', pivot " << pivot << ", scale " << scale
    << "): the subtree it moves has no mass or inertia along its motion";
  throw SingularError(m.str());
}

/// Inverts the d x d block D (symmetric) into Dinv (same layout, column-major), throwing
/// SingularError for joint i when a pivot is below kSingularPivot * scale.
template <class MatD>
inline void invert_joint_block(const Model& model, int i, const char* where, const MatD& D, double* Dinv_out,
                               double scale) {
  const int d = static_cast<int>(D.rows());
  Eigen::Map<MatD> Dinv(Dinv_out, d, d);
  if (d == 1) {
    if (!(D(0, 0) > kSingularPivot * scale)) throw_singular(model, i, where, D(0, 0), scale);
    Dinv(0, 0) = 1.0 / D(0, 0);
    return;
  }
  Eigen::LLT<MatD> llt(D);
  const double min_pivot = llt.matrixLLT().diagonal().minCoeff();
  if (llt.info() != Eigen::Success || !(min_pivot * min_pivot > kSingularPivot * scale))
    throw_singular(model, i, where, min_pivot * min_pivot, scale);
  Dinv.setIdentity();
  llt.solveInPlace(Dinv);
}

/// The articulated-body factors of paper 002 Eq. 45 on the poses in data.X_up, leaves to root:
/// P(k) (data.fd_P, left as P+(k) = taubar(k) P(k)), D(k) = H P H* (fd_D), D^-1 (fd_Dinv) and
/// U(k) = P(k) H*(k) (fd_U; G = U D^-1). Throws SingularError naming the joint of a singular D(k).
void innovations_factor(const Model& model, Data& data);

/// The solvers on the poses already in data.X_up (the public functions check, compute the poses
/// and call these; forward_dynamics calls them after the bias-force pass has left the poses).
const VecX& conjugate_gradient_impl(const Model& model, Data& data, const double* b, bool preconditioned,
                                    double tolerance, int max_iterations);
const VecX& innovations_impl(const Model& model, Data& data, const double* b);
/// x = M^-1 b with the factors innovations_factor left in data (O(N); b must not alias
/// data.fd_x). Closed-loop solvers factor once and solve for many right-hand sides.
const VecX& innovations_solve(const Model& model, Data& data, const double* b);
const MatX& minv_impl(const Model& model, Data& data);

/// factorize_ltdl / solve_ltdl without the argument checks.
void factorize_ltdl_unchecked(const Model& model, Data& data);
void solve_ltdl_unchecked(const Data& data, Eigen::Ref<VecX> x);

/// Dense LTL (M = L^T L with the parent array lambda(k) = k - 1: a dense Cholesky factorisation
/// that visits every entry), in place on the upper triangle of M (L^T there); and its solve.
void factorize_ltl_dense(const Model& model, MatX& M, VecX& pivot_scale);
void solve_ltl_dense(const MatX& M, Eigen::Ref<VecX> x);

}  // namespace plucker::detail
