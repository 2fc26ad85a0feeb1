// Conjugate-gradient forward dynamics (paper 002 §4; Walker & Orin 1982 method, Ref. 4, and
// Fijany & Scheid's preconditioned variant, Ref. 5): M is never formed; each iteration needs one
// product M p, which is the O(N) inverse dynamics from rest without gravity (mass_times), so
// N iterations cost O(N^2). In floating point an ill-conditioned M needs many more than N
// iterations to reach a residual near machine precision: the solver iterates until the true
// residual |b - M x| is within the tolerance relative to |b|, or at the floor that rounding sets
// (a normwise backward error |b - M x| / (|M| |x| + |b|) of 10 eps: the rounding of M x alone is
// eps |M| |x|, so a relative residual of 1e-14 is out of reach when cond(M) is large), and the
// iteration cap is a safety net whose hit is an error (ConvergenceError), never a silent answer.
//
// Whether M is singular is decided as for every other method, from the articulated pivots of the
// innovations factorisation (DEVELOPERS.md, "Singularity"), before iterating.
//
// The preconditioner Lambda = H R H* (block) diagonal: the diagonal blocks of M, which the
// composite-rigid-body recursion (Eq. 24-25) gives in O(N); solving Lambda z = r is then one
// small d x d product per joint.
#include <cmath>
#include <limits>

#include "algorithms/fd_kernels.hpp"
#include "base/text.hpp"

namespace plucker {
namespace {

using namespace ops;

struct CgWorkspace : detail::WorkspaceOf<CgWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::ConjugateGradient;
  explicit CgWorkspace(const Model& model)
      : R(static_cast<std::size_t>(model.nbodies())), precond(VecX::Zero(6 * model.nv())) {
    for (VecX* x : {&b, &bs, &x, &r, &z, &p, &Mp, &diag}) *x = VecX::Zero(model.nv());
  }
  std::vector<RigidBodyInertia> R;  ///< composite inertias R(k) (Eq. 24)
  VecX precond;                     ///< (H R H*)^-1 blocks, row-major d x d at 6 idx_v(k)
  VecX b, bs, x, r, z, p, Mp;       ///< right-hand side, it scaled, solution, and the CG vectors
  VecX diag;                        ///< M's diagonal
};

// diag(H R H*) from the composite inertias (Eq. 24, link coordinates), inverted block by block.
// Also M's diagonal, into ws.diag.
void composite_diagonal(const Model& model, Data& data, CgWorkspace& ws) {
  const int n = model.nbodies();
  for (int i = 1; i < n; ++i) ws.R[i] = model.inertia(i);
  for (int i = n - 1; i > 0; --i) {
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      const int d = joint_dofs(joint), iv = model.idx_v(i);
      if (d == 0) return;
      double Lambda[6][6];
      for (int m = 0; m < d; ++m) {
        const Force RH = times_column<double>(ws.R[i], column(joint, m));                         // R(k) H*(k)
        for (int r = 0; r < d; ++r) Lambda[r][m] = project_column<double>(column(joint, r), RH);  // H R H*
        ws.diag[iv + m] = Lambda[m][m];
      }
      // M's diagonal blocks are positive definite once M passed the singularity test.
      detail::invert_pivots(Lambda, d, ws.precond.data() + 6 * iv, [&](int k, double pivot) {
        if (!(pivot > 0.0))
          detail::throw_singular(model, i, k, "conjugate gradient, diag(H R H*)", pivot, Lambda[k][k]);
        return true;
      });
    });
    const int p = model.parent(i);
    if (p > 0) add_congruence(data.X_up[i], ws.R[i], ws.R[p]);  // Eq. 24
  }
}

// z = Lambda^-1 r (or z = r without preconditioner).
void precondition(const Model& model, const CgWorkspace& ws, bool preconditioned, const VecX& r, VecX& z) {
  if (!preconditioned) {
    z = r;
    return;
  }
  for (int i = 1; i < model.nbodies(); ++i) {
    const int d = model.joint_nv(i), iv = model.idx_v(i);
    const double* Linv = ws.precond.data() + 6 * iv;  // row-major d x d
    for (int row = 0; row < d; ++row) {
      double s = 0.0;
      for (int col = 0; col < d; ++col) s += Linv[row * d + col] * r[iv + col];
      z[iv + row] = s;
    }
  }
}

}  // namespace

namespace detail {

const VecX& conjugate_gradient_impl(const char* fn, const Model& model, Data& data, const double* b_ptr,
                                    bool preconditioned, double tolerance, int max_iterations) {
  CgWorkspace& ws = workspace<CgWorkspace>(model, data);
  VecX &x = ws.x, &r = ws.r, &z = ws.z, &p = ws.p, &Mp = ws.Mp, &b = ws.bs;
  innovations_factor(model, data);      // the singularity test every method shares (its pivots are M's)
  composite_diagonal(model, data, ws);  // Lambda and M's diagonal D
  data.cg = {};
  x.setZero();
  // Solve for b / max|b_k| (its norms and products cannot overflow), scale x back at the end.
  const Eigen::Map<const VecX> b_in(b_ptr, model.nv());
  const double scale = b_in.cwiseAbs().maxCoeff();
  if (scale == 0.0) {
    data.cg.converged = true;
    return x;
  }
  b = b_in / scale;
  r = b;  // r0 = T - M x0 with x0 = 0
  const double b_norm = b.norm();
  // Converged: the residual within the tolerance asked for, or at the floor of rounding, below
  // which no iteration can bring it: a backward error of 10 eps for the system scaled by M's
  // diagonal D, D^-1/2 M D^-1/2 y = D^-1/2 b (unit diagonal, so its norm is between 1 and nv): the
  // normwise backward error of M itself would call converged an answer whose small entries (the
  // light bodies of a badly scaled tree) are wrong.
  constexpr double kFloor = 10 * std::numeric_limits<double>::epsilon();
  const auto inv_sqrt_diag = ws.diag.cwiseSqrt().cwiseInverse();
  const double b_scaled = b.cwiseProduct(inv_sqrt_diag).norm();
  auto report = [&](int it) {
    data.cg.iterations = it;
    data.cg.relative_residual = r.norm() / b_norm;
    data.cg.backward_error =
        r.cwiseProduct(inv_sqrt_diag).norm() / (x.cwiseProduct(ws.diag.cwiseSqrt()).norm() + b_scaled);
    return data.cg.relative_residual <= tolerance || data.cg.backward_error <= kFloor;
  };
  precondition(model, ws, preconditioned, r, z);  // Lambda z = r
  p = z;
  double rz = r.dot(z);
  for (int it = 1; it <= max_iterations; ++it) {
    mass_times_kernel(model, data, p.data(), Mp.data());  // M p by inverse dynamics, O(N)
    const double pMp = p.dot(Mp);
    if (!(pMp > 0.0)) {
      Eigen::Index k = 0;
      p.cwiseAbs().maxCoeff(&k);
      throw_singular_dof(model, static_cast<int>(k), "conjugate gradient, p^T M p", pMp, p.squaredNorm());
    }
    const double s = rz / pMp;  // s_k = z^T r / p^T M p
    x += s * p;
    r -= s * Mp;
    if (report(it)) {
      // The recursively updated residual drifts from b - M x in floating point: accept only when
      // the true one meets the tolerance too, else continue from it (residual replacement).
      mass_times_kernel(model, data, x.data(), Mp.data());
      r = b - Mp;
      if (report(it)) {
        data.cg.converged = true;
        x *= scale;
        return x;
      }
      precondition(model, ws, preconditioned, r, z);
      p = z;
      rz = r.dot(z);
      continue;
    }
    precondition(model, ws, preconditioned, r, z);
    const double rz_next = r.dot(z);
    p = z + (rz_next / rz) * p;  // gamma_k = z_k^T r_k / z_{k-1}^T r_{k-1}
    rz = rz_next;
  }
  throw ConvergenceError(std::string(fn) + ": " + (preconditioned ? "preconditioned " : "") +
                             "conjugate gradient: no convergence in " + std::to_string(data.cg.iterations) +
                             " iterations: relative residual " + text::number(data.cg.relative_residual) +
                             " > tolerance " + text::number(tolerance) + " (backward error " +
                             text::number(data.cg.backward_error) + ")" +
                             " (M is ill-conditioned for this method; use a direct one, e.g. 'aba' or 'crba_ltdl')",
                         data.cg.iterations, data.cg.relative_residual);
}

}  // namespace detail

const VecX& solve_conjugate_gradient(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                     const Eigen::Ref<const VecX>& b, bool preconditioned, double tolerance,
                                     int max_iterations) {
  const detail::DataUse use(model, data, "solve_conjugate_gradient");
  detail::check_arguments("solve_conjugate_gradient", [&] {
    model.check_configuration(q, "q");
    model.check_tangent(b, "b");
  });
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance))
    throw InvalidArgument("solve_conjugate_gradient: tolerance must be finite and >= 0");
  if (max_iterations < 0) max_iterations = detail::kConjugateGradientCap * std::max(model.nv(), 1);
  CgWorkspace& ws = detail::workspace<CgWorkspace>(model, data);
  detail::compute_poses(model, data, q.data());
  ws.b = b;  // b may alias a workspace the solver writes
  return detail::conjugate_gradient_impl("solve_conjugate_gradient", model, data, ws.b.data(), preconditioned,
                                         tolerance, max_iterations);
}

}  // namespace plucker
