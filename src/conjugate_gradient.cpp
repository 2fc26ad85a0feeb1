// Conjugate-gradient forward dynamics (paper 002 §4; Walker & Orin 1982 method, Ref. 4, and
// Fijany & Scheid's preconditioned variant, Ref. 5): M is never formed; each iteration needs one
// product M p, which is the O(N) inverse dynamics from rest without gravity (mass_times), so
// N iterations cost O(N^2). In floating point an ill-conditioned M needs many more than N
// iterations to reach a residual near machine precision; data.cg reports how many were done.
//
// The preconditioner Lambda = H R H* (block) diagonal: the diagonal blocks of M, which the
// composite-rigid-body recursion (Eq. 24-25) gives in O(N); solving Lambda z = r is then one
// small d x d product per joint.
#include <cmath>

#include "detail/forward_dynamics_kernels.hpp"

namespace plucker {
namespace {

// diag(H R H*) from the composite inertias (Eq. 24, link coordinates), inverted block by block
// into data.fd_precond. A singular block (massless subtree) makes M singular: SingularError.
void composite_diagonal(const Model& model, Data& data) {
  const int n = model.nbodies();
  for (int i = 1; i < n; ++i) data.fd_R[i] = model.inertia(i);
  for (int i = n - 1; i > 0; --i) {
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = detail::JointDims<J>;
      if constexpr (J::NV != 0) {
        const Mat6 R = data.fd_R[i].matrix();
        const typename Dims::MatU RH = joint.times_S(R);  // R(k) H*(k)
        typename Dims::MatD Lambda(joint.nv(), joint.nv());
        for (int m = 0; m < joint.nv(); ++m) joint.project(Force(Vec6(RH.col(m))), Lambda.col(m).data());  // H R H*
        detail::invert_joint_block(model, i, "diag(H R H*)", Lambda, data.fd_precond.data() + data.fd_block[i],
                                   R.diagonal().maxCoeff());
      }
    });
    const int p = model.parent(i);
    if (p > 0) data.fd_R[p] += data.fd_R[i].transformed_inverse(data.X_up[i]);  // Eq. 24
  }
}

// z = Lambda^-1 r (or z = r without preconditioner).
void precondition(const Model& model, const Data& data, bool preconditioned, const VecX& r, VecX& z) {
  if (!preconditioned) {
    z = r;
    return;
  }
  for (int i = 1; i < model.nbodies(); ++i) {
    const int d = model.joint_nv(i), iv = model.idx_v(i);
    const double* Linv = data.fd_precond.data() + data.fd_block[i];  // column-major d x d
    for (int row = 0; row < d; ++row) {
      double s = 0.0;
      for (int col = 0; col < d; ++col) s += Linv[row + col * d] * r[iv + col];
      z[iv + row] = s;
    }
  }
}

}  // namespace

namespace detail {

const VecX& conjugate_gradient_impl(const Model& model, Data& data, const double* b_ptr, bool preconditioned,
                                    double tolerance, int max_iterations) {
  const int nv = model.nv();
  VecX &x = data.fd_x, &r = data.fd_r, &z = data.fd_z, &p = data.fd_p, &Mp = data.fd_Mp;
  const Eigen::Map<const VecX> b(b_ptr, nv);
  composite_diagonal(model, data);  // Lambda, and the singularity check for both variants
  data.cg = {};
  x.setZero();
  r = b;  // r0 = T - M x0 with x0 = 0
  const double b_norm = b.norm();
  if (b_norm == 0.0) {
    data.cg.converged = true;
    return x;
  }
  precondition(model, data, preconditioned, r, z);  // Lambda z = r
  p = z;
  double rz = r.dot(z);
  for (int it = 1; it <= max_iterations; ++it) {
    mass_times_kernel(model, data, p.data(), Mp.data());  // M p by inverse dynamics, O(N)
    const double pMp = p.dot(Mp);
    if (!(pMp > 0.0)) {
      Eigen::Index k = 0;
      p.cwiseAbs().maxCoeff(&k);
      throw_singular(model, model.joint_of_v(static_cast<int>(k)), "conjugate gradient, p^T M p", pMp, p.squaredNorm());
    }
    const double s = rz / pMp;  // s_k = z^T r / p^T M p
    x += s * p;
    r -= s * Mp;
    data.cg.iterations = it;
    data.cg.relative_residual = r.norm() / b_norm;
    if (data.cg.relative_residual <= tolerance) {
      data.cg.converged = true;
      break;
    }
    precondition(model, data, preconditioned, r, z);
    const double rz_next = r.dot(z);
    p = z + (rz_next / rz) * p;  // gamma_k = z_k^T r_k / z_{k-1}^T r_{k-1}
    rz = rz_next;
  }
  return x;
}

}  // namespace detail

const VecX& solve_conjugate_gradient(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                     const Eigen::Ref<const VecX>& b, bool preconditioned, double tolerance,
                                     int max_iterations) {
  detail::check_data(model, data, "solve_conjugate_gradient");
  model.check_configuration(q, "solve_conjugate_gradient: q");
  model.check_tangent(b, "solve_conjugate_gradient: b");
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance))
    throw InvalidArgument("solve_conjugate_gradient: tolerance must be finite and >= 0");
  if (max_iterations < 0) max_iterations = 10 * model.nv();
  detail::compute_poses(model, data, q.data());
  data.fd_b = b;  // b may alias a workspace the solver writes
  return detail::conjugate_gradient_impl(model, data, data.fd_b.data(), preconditioned, tolerance, max_iterations);
}

}  // namespace plucker
