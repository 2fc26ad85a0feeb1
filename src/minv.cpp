// The inverse of the joint-space inertia matrix in closed form (paper 002 §6):
//   psi^-1 = phi^-1 + K H                            (Lemma 6.1)
//   [I + H phi K]^-1 = [I - H psi K]                 (Lemma 6.3)
//   M^-1 = [I - H psi K]* D^-1 [I - H psi K]         (Lemma 6.4)
// Eq. 46 applies this operator to one vector T in O(N): z = psi K T and eps = [I - H psi K] T
// leaves to root, nu = D^-1 eps, then qdd = nu - K* alpha root to leaves. Applying it to the
// matrix T = I (every unit joint force at once) gives M^-1 without forming or factorising M
// (the idea of Carpentier's analytical M^-1 in Pinocchio). The columns are sparse on the way in:
// z(k) is nonzero only in the columns of the subtree nu(k), so the inward sweep costs
// sum_k |nu(k)|; on the way out alpha(k) fills every column, and symmetry halves the work: row
// block k is needed only for the columns >= idx_v(k) (the upper triangle), and so is alpha(k).
// O(N^2) in all, with the per-body 6 x (nv - idx_v(k)) blocks of data.fd_F for z(k), then alpha(k).
#include "detail/forward_dynamics_kernels.hpp"

namespace plucker {
namespace {

// out = X in for a block of motion columns (X = i_X_p, parent -> body): w' = E w,
// v' = E (v - r x w). Each line is a 3 x 3 times 3 x m product, vectorised over the columns.
template <class In, class Out>
void motions_to_child(const Transform& X, const In& in, Out&& out) {
  const Mat3 Er = X.E * skew(X.r);
  out.template topRows<3>().noalias() = X.E.lazyProduct(in.template topRows<3>());
  out.template bottomRows<3>().noalias() =
      X.E.lazyProduct(in.template bottomRows<3>()) - Er.lazyProduct(in.template topRows<3>());
}

// out += X^T in for a block of force columns (body -> parent): f' = E^T f, n' = E^T n + r x f'.
template <class In, class Out>
void add_forces_to_parent(const Transform& X, const In& in, Out&& out) {
  const Mat3 Et = X.E.transpose();
  const Mat3 rEt = skew(X.r) * Et;
  out.template topRows<3>().noalias() +=
      Et.lazyProduct(in.template topRows<3>()) + rEt.lazyProduct(in.template bottomRows<3>());
  out.template bottomRows<3>().noalias() += Et.lazyProduct(in.template bottomRows<3>());
}

}  // namespace

namespace detail {

const MatX& minv_impl(const Model& model, Data& data) {
  const int n = model.nbodies(), nv = model.nv();
  MatX& Minv = data.Minv;
  innovations_factor(model, data);  // P, D^-1 and U = P H* (G = U D^-1), Eq. 45
  Minv.setZero();
  for (int i = 1; i < n; ++i) data.fd_F[i].setZero();

  // Inward (Eq. 46 on T = I): eps(k) = T(k) - H(k) z(k), nu(k) = D^-1 eps(k) into row block k,
  // z+(k) = z(k) + G(k) eps(k) = z(k) + U(k) nu(k), z(k+1) += phi(k+1, k) z+(k).
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), c0 = model.idx_v(i), m = model.subtree_v_end(i) - c0;
    auto z = data.fd_F[i].leftCols(m);  // column c <-> v index c0 + c: the subtree's columns
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = JointDims<J>;
      if constexpr (J::NV != 0) {
        const int d = joint.nv();
        Eigen::Map<const typename Dims::MatD> Dinv(data.fd_Dinv.data() + data.fd_block[i], d, d);
        const MatS6 S = joint.S();
        auto nu = Minv.block(c0, c0, d, m);            // row block k of M^-1
        nu.noalias() = -S.transpose().lazyProduct(z);  // eps = -H(k) z(k) ...
        nu.leftCols(d).diagonal().array() += 1.0;      // ... + T(k), the unit block at k
        for (int c = 0; c < m; ++c) {
          const typename Dims::VecD eps = nu.col(c);
          nu.col(c).noalias() = Dinv * eps;  // nu(k) = D^-1 eps(k)
        }
        z.noalias() += data.fd_U.middleCols(c0, d).lazyProduct(nu);  // z+(k) = z(k) + G(k) eps(k)
      }
    });
    if (p > 0)
      add_forces_to_parent(data.X_up[i], z, data.fd_F[p].middleCols(c0 - model.idx_v(p), m));  // z(k+1) += phi z+(k)
  }

  // Outward: alpha+(k) = phi*(k+1, k) alpha(k+1), qdd(k) = nu(k) - G*(k) alpha+(k),
  // alpha(k) = alpha+(k) + H*(k) qdd(k), for the columns >= idx_v(k) (the upper triangle).
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), c0 = model.idx_v(i), w = nv - c0;
    Matrix6X& alpha = data.fd_F[i];  // all w = nv - c0 columns
    if (p > 0)
      motions_to_child(data.X_up[i], data.fd_F[p].rightCols(w), alpha);  // alpha+(k)
    else
      alpha.setZero();  // the base does not move (at rest, no gravity)
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = JointDims<J>;
      if constexpr (J::NV != 0) {
        const int d = joint.nv();
        Eigen::Map<const typename Dims::MatD> Dinv(data.fd_Dinv.data() + data.fd_block[i], d, d);
        using MatG =
            Eigen::Matrix<double, Dims::nv, 6, Dims::max == 1 ? Eigen::RowMajor : Eigen::ColMajor, Dims::max, 6>;
        const MatG GT = Dinv * data.fd_U.middleCols(c0, d).transpose();  // G*(k) = D^-1 U^T
        auto qdd = Minv.block(c0, c0, d, w);
        qdd.noalias() -= GT.lazyProduct(alpha);         // qdd(k) = nu(k) - G*(k) alpha+(k)
        alpha.noalias() += joint.S().lazyProduct(qdd);  // alpha(k) = alpha+(k) + H*(k) qdd(k)
      }
    });
  }
  Minv.triangularView<Eigen::StrictlyLower>() = Minv.transpose();  // symmetry
  return Minv;
}

}  // namespace detail

const MatX& minv(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_data(model, data, "minv");
  model.check_configuration(q, "minv: q");
  detail::compute_poses(model, data, q.data());
  return detail::minv_impl(model, data);
}

}  // namespace plucker
