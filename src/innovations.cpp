// The innovations factorisation of the joint-space inertia matrix (paper 002 §4 and Lemma 6.2),
//   M = [I + H phi K] D [I + H phi K]*,
// a block LDL^T factorisation whose factors come from the articulated-body quantities of
// Eq. 45 (the Kalman-filter analogy: P the error covariance, D = H P H* the innovations
// covariance, G = P H* D^-1 the gain, K = phi G the predictor gain):
//   P(k) = M(k) + sum_{c in mu(k)} phi(k, c) taubar(c) P(c) phi*(k, c)   (Eq. 40-42)
//   D(k) = H(k) P(k) H*(k),  G(k) = P(k) H*(k) D(k)^-1,  taubar(k) = I - G(k) H(k)
// Forward dynamics then solves (a) [I + H phi K] e = T, x = D^-1 e and (b) [I + H phi K]* qdd = x.
// Each factor is triangular with the tree's structure (phi(i, j) != 0 only for i inboard of j),
// so each solve is one O(N) recursion:
//   (a) leaves to root: e(k) = T(k) - H(k) z(k), z(k) = sum_{c in mu(k)} phi(k, c) [z(c) + G(c) e(c)]
//   (b) root to leaves: qdd(k) = x(k) - G*(k) alpha+(k), alpha+(k) = phi*(p, k) alpha(p),
//                       alpha(k) = alpha+(k) + H*(k) qdd(k)
// which are the z and alpha sweeps of Eq. 46 (with Lemma 6.3, (a) is e = [I - H psi K] T).
#include "detail/forward_dynamics_kernels.hpp"

namespace plucker {
namespace detail {

// P, D, D^-1 and U = P H* (so that G = U D^-1) for every joint, on the poses in data.X_up.
void innovations_factor(const Model& model, Data& data) {
  const int n = model.nbodies();
  for (int i = 1; i < n; ++i) data.fd_P[i] = ArticulatedBodyInertia(model.inertia(i));  // P(k) starts at M(k)
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = detail::JointDims<J>;
      ArticulatedBodyInertia& P = data.fd_P[i];
      if constexpr (J::NV != 0) {
        const int d = joint.nv(), iv = model.idx_v(i);
        const typename Dims::MatU U = joint.times_S(P.matrix());  // P(k) H*(k)
        Eigen::Map<typename Dims::MatD> D(data.fd_D.data() + data.fd_block[i], d, d);
        for (int m = 0; m < d; ++m) joint.project(Force(Vec6(U.col(m))), D.col(m).data());  // D = H P H* (Eq. 33)
        detail::invert_joint_block(model, i, "innovations D = H P H*", typename Dims::MatD(D),
                                   data.fd_Dinv.data() + data.fd_block[i], P.matrix().diagonal().maxCoeff());
        Eigen::Map<const typename Dims::MatD> Dinv(data.fd_Dinv.data() + data.fd_block[i], d, d);
        data.fd_U.middleCols(iv, d) = U;
        if (p > 0) P.matrix().noalias() -= (U * Dinv) * U.transpose();  // P+(k) = taubar(k) P(k) (Eq. 41)
      }
      if (p > 0) data.fd_P[p] += P.transformed_inverse(data.X_up[i]);  // P(k+1) += phi P+ phi* (Eq. 42)
    });
  }
}

const VecX& innovations_impl(const Model& model, Data& data, const double* b) {
  innovations_factor(model, data);
  return innovations_solve(model, data, b);
}

const VecX& innovations_solve(const Model& model, Data& data, const double* b) {
  const int n = model.nbodies();
  VecX& x = data.fd_x;

  // (a) [I + H phi K] e = T, then x = D^-1 e: leaves to root.
  for (int i = 1; i < n; ++i) data.fd_y[i].setZero();  // z(k)
  for (int i = n - 1; i > 0; --i) {
    Force& z = data.fd_y[i];
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = JointDims<J>;
      if constexpr (J::NV != 0) {
        const int d = joint.nv(), iv = model.idx_v(i);
        typename Dims::VecD e;
        if constexpr (J::NV == Eigen::Dynamic) e.resize(d);
        joint.project(z, e.data());
        e = Eigen::Map<const typename Dims::VecD>(b + iv, d) - e;  // e(k) = T(k) - H(k) z(k)
        Eigen::Map<const typename Dims::MatD> Dinv(data.fd_Dinv.data() + data.fd_block[i], d, d);
        x.segment(iv, d) = Dinv * e;                                       // x(k) = D^-1 e(k)
        z += Force(Vec6(data.fd_U.middleCols(iv, d) * x.segment(iv, d)));  // z+(k) = z(k) + G(k) e(k)
      }
    });
    const int p = model.parent(i);
    if (p > 0) data.fd_y[p] += data.X_up[i].apply_inverse(z);  // z(k+1) = phi(k+1, k) z+(k)
  }

  // (b) [I + H phi K]* qdd = x: root to leaves.
  data.fd_alpha[0].setZero();
  for (int i = 1; i < n; ++i) {
    const Motion alpha_plus = data.X_up[i].apply(data.fd_alpha[model.parent(i)]);  // alpha+(k) = phi* alpha(k+1)
    data.fd_alpha[i] = alpha_plus;
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = JointDims<J>;
      if constexpr (J::NV != 0) {
        const int d = joint.nv(), iv = model.idx_v(i);
        Eigen::Map<const typename Dims::MatD> Dinv(data.fd_Dinv.data() + data.fd_block[i], d, d);
        const typename Dims::VecD UTa = data.fd_U.middleCols(iv, d).transpose() * alpha_plus.vector();
        x.segment(iv, d) -= Dinv * UTa;                   // qdd(k) = x(k) - G*(k) alpha+(k)
        data.fd_alpha[i] += joint.motion(x.data() + iv);  // alpha(k) = alpha+(k) + H*(k) qdd(k)
      }
    });
  }
  return x;
}

}  // namespace detail

const VecX& solve_innovations(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                              const Eigen::Ref<const VecX>& b) {
  detail::check_data(model, data, "solve_innovations");
  model.check_configuration(q, "solve_innovations: q");
  model.check_tangent(b, "solve_innovations: b");
  detail::compute_poses(model, data, q.data());
  data.fd_b = b;  // b may alias the solution workspace
  return detail::innovations_impl(model, data, data.fd_b.data());
}

InnovationsFactors innovations_factors(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_data(model, data, "innovations_factors");
  model.check_configuration(q, "innovations_factors: q");
  detail::compute_poses(model, data, q.data());
  detail::innovations_factor(model, data);
  const int nv = model.nv();
  InnovationsFactors out{MatX::Identity(nv, nv), MatX::Zero(nv, nv)};
  for (int j = 1; j < model.nbodies(); ++j) {
    const int dj = model.joint_nv(j), jv = model.idx_v(j);
    if (dj == 0) continue;
    const Eigen::Map<const MatX> D(data.fd_D.data() + data.fd_block[j], dj, dj);
    const Eigen::Map<const MatX> Dinv(data.fd_Dinv.data() + data.fd_block[j], dj, dj);
    out.D.block(jv, jv, dj, dj) = D;
    Matrix6X F = data.fd_U.middleCols(jv, dj) * Dinv;  // G(j), a force per column, body-j coordinates
    // L(i, j) = H(i) phi(i, j) G(j) for every strict ancestor i of j (K = phi G on the parent edge).
    for (int c = j, i = model.parent(j); i > 0; c = i, i = model.parent(i)) {
      for (int m = 0; m < dj; ++m) F.col(m) = data.X_up[c].apply_inverse(Force(Vec6(F.col(m)))).vector();
      detail::visit_joint(model.joint(i), [&](const auto& joint) {
        for (int m = 0; m < dj; ++m) joint.project(Force(Vec6(F.col(m))), out.L.col(jv + m).data() + model.idx_v(i));
      });
    }
  }
  return out;
}

}  // namespace plucker
