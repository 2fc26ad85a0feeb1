// Forward dynamics by the O(N^3) path: M from the CRBA, C from the RNEA, then a dense
// Cholesky factorisation M = U^T U (column-oriented so every inner product runs over
// contiguous memory; no heap allocation) and two triangular solves.
#include <cmath>
#include <sstream>

#include "detail/checks.hpp"
#include "plucker/algorithms/aba.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker {
namespace {

// Factorises the upper triangle of M into U (upper triangular, M = U^T U) in `U`.
// Throws SingularError naming the joint of the first vanishing pivot.
void cholesky_upper(const Model& model, const MatX& M, MatX& U) {
  const int n = static_cast<int>(M.rows());
  for (int k = 0; k < n; ++k) {
    for (int i = 0; i < k; ++i)
      U(i, k) = (M(i, k) - U.col(i).head(i).dot(U.col(k).head(i))) / U(i, i);
    const double pivot = M(k, k) - U.col(k).head(k).squaredNorm();
    if (!(pivot > detail::kSingularPivot * M(k, k)) || !(M(k, k) > 0.0)) {
      const int joint = model.joint_of_v(k);
      std::ostringstream m;
      m << "forward dynamics undefined: the joint-space inertia matrix is singular at joint '"
        << model.joint_name(joint) << "' (body '" << model.body_name(joint) << "', pivot " << pivot << " of M(k,k) = "
        << M(k, k) << "): the subtree it moves has no mass or inertia along its motion";
      throw SingularError(m.str());
    }
    U(k, k) = std::sqrt(pivot);
  }
}

// Solves U^T U x = b in place.
void cholesky_solve(const MatX& U, VecX& x) {
  const int n = static_cast<int>(U.rows());
  for (int k = 0; k < n; ++k) x[k] = (x[k] - U.col(k).head(k).dot(x.head(k))) / U(k, k);  // U^T y = b
  for (int k = n - 1; k >= 0; --k) {                                                      // U x = y
    x[k] /= U(k, k);
    x.head(k) -= x[k] * U.col(k).head(k);
  }
}

}  // namespace

const VecX& forward_dynamics_crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau) {
  model.check_tangent(tau, "forward_dynamics_crba: tau");
  nonlinear_effects(model, data, q, v);
  data.rhs = tau - data.tau;
  crba(model, data, q, Triangle::Upper);
  cholesky_upper(model, data.M, data.L);
  cholesky_solve(data.L, data.rhs);
  data.qdd = data.rhs;
  return data.qdd;
}

const VecX& forward_dynamics_crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                  ExternalForces f_ext, ReferenceFrame frame) {
  model.check_tangent(tau, "forward_dynamics_crba: tau");
  data.qdd.setZero();
  rnea(model, data, q, v, data.qdd, f_ext, frame);  // C including the external forces
  data.rhs = tau - data.tau;
  crba(model, data, q, Triangle::Upper);
  cholesky_upper(model, data.M, data.L);
  cholesky_solve(data.L, data.rhs);
  data.qdd = data.rhs;
  return data.qdd;
}

}  // namespace plucker
