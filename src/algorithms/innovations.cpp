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
#include "algorithms/fd_kernels.hpp"

namespace plucker {

using namespace ops;

namespace detail {

InnovationsWorkspace::InnovationsWorkspace(const Model& model)
    : P(static_cast<std::size_t>(model.nbodies())),
      U(static_cast<std::size_t>(model.nv())),
      D_inv(VecX::Zero(6 * model.nv())),
      z(static_cast<std::size_t>(model.nbodies())),
      alpha(static_cast<std::size_t>(model.nbodies())),
      x(VecX::Zero(model.nv())),
      b(VecX::Zero(model.nv())) {}

namespace {

/// X_up for the congruence of Eq. 42: for a revolute joint about a body axis whose X_tree is a
/// pure translation, its plane rotation from sin q and cos q (the congruence then turns one
/// coordinate plane only, as in the ABA); for every other joint the transform in data.X_up.
template <class J, class Tree>
PLUCKER_HOT inline decltype(auto) typed_up(const J&, const Tree& X_tree, const Model& model, const Data& data, int i) {
  constexpr int axis = unit_axis_row<J>;
  if constexpr (axis >= 0 && axis < 3 && std::is_same_v<Tree, Translation<Vec3>>) {
    const int iq = model.idx_q(i);
    return AxisTransform<axis, double>{PlaneRot<axis, double>{data.sin_q[iq], data.cos_q[iq]}, X_tree.r};
  } else {
    return static_cast<const Transform&>(data.X_up[i]);
  }
}

}  // namespace

// P, D^-1 and U = P H* (so that G = U D^-1) for every joint, on the poses in data.X_up (and the
// sines and cosines of q in data, evaluated with them).
InnovationsWorkspace& innovations_factor(const Model& model, Data& data) {
  InnovationsWorkspace& ws = workspace<InnovationsWorkspace>(model, data);
  const int n = model.nbodies();
  for (int i = 1; i < n; ++i) ws.P[i] = articulated_packed<double>(model.inertia(i));  // P(k) starts at M(k)
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    ArticulatedT<double>& P = ws.P[i];
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      const int d = joint_dofs(joint);
      if (d > 0) {
        Force* U = ws.U.data() + iv;
        for (int k = 0; k < d; ++k) U[k] = times_column<double>(P, column(joint, k));  // P(k) H*(k)
        double D[6][6];
        for (int r = 0; r < d; ++r)
          for (int k = 0; k < d; ++k) D[r][k] = project_column<double>(column(joint, r), U[k]);  // D = H P H* (Eq. 33)
        const double* Dinv = ws.D_inv.data() + 6 * iv;
        invert_joint_pivots(model, data.X_up, i, "innovations D = H P H*", D, d, ws.D_inv.data() + 6 * iv, P);
        if (p > 0) {
          Force G[6];  // G = U D^-1
          for (int k = 0; k < d; ++k) {
            G[k] = U[0] * Dinv[k];
            for (int j = 1; j < d; ++j) G[k] += U[j] * Dinv[j * d + k];
          }
          subtract_symmetric_products(P, G, U, d);  // P+(k) = taubar(k) P(k) (Eq. 41)
        }
      }
      if (p > 0) add_congruence(typed_up(joint, X_tree, model, data, i), P, ws.P[p]);  // P(k+1) += phi P+ phi* (Eq. 42)
    });
  }
  return ws;
}

const VecX& innovations_solve(const Model& model, Data& data, const double* b) {
  InnovationsWorkspace& ws = workspace<InnovationsWorkspace>(model, data);
  const int n = model.nbodies();
  VecX& x = ws.x;

  // (a) [I + H phi K] e = T, then x = D^-1 e: leaves to root.
  for (int i = 1; i < n; ++i) ws.z[i].setZero();
  for (int i = n - 1; i > 0; --i) {
    Force& z = ws.z[i];
    const int iv = model.idx_v(i);
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      const int d = joint_dofs(joint);
      if (d == 0) return;
      double e[6];
      project(joint, z, e);
      for (int k = 0; k < d; ++k) e[k] = b[iv + k] - e[k];  // e(k) = T(k) - H(k) z(k)
      const double* Dinv = ws.D_inv.data() + 6 * iv;
      for (int r = 0; r < d; ++r) {  // x(k) = D^-1 e(k)
        double s = 0.0;
        for (int k = 0; k < d; ++k) s += Dinv[r * d + k] * e[k];
        x[iv + r] = s;
      }
      for (int k = 0; k < d; ++k) z += ws.U[iv + k] * x[iv + k];  // z+(k) = z(k) + G(k) e(k)
    });
    const int p = model.parent(i);
    if (p > 0) add_apply_inverse(data.X_up[i], z, ws.z[p]);  // z(k+1) = phi(k+1, k) z+(k)
  }

  // (b) [I + H phi K]* qdd = x: root to leaves.
  ws.alpha[0].setZero();
  for (int i = 1; i < n; ++i) {
    const int iv = model.idx_v(i);
    const Motion alpha_plus = apply(data.X_up[i], ws.alpha[model.parent(i)]);  // alpha+(k) = phi* alpha(k+1)
    ws.alpha[i] = alpha_plus;
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      const int d = joint_dofs(joint);
      if (d == 0) return;
      const double* Dinv = ws.D_inv.data() + 6 * iv;
      double UTa[6];
      for (int k = 0; k < d; ++k) UTa[k] = dot(alpha_plus, ws.U[iv + k]);
      for (int r = 0; r < d; ++r) {  // qdd(k) = x(k) - G*(k) alpha+(k)
        double s = 0.0;
        for (int k = 0; k < d; ++k) s += Dinv[r * d + k] * UTa[k];
        x[iv + r] -= s;
      }
      add_motion(joint, ws.alpha[i], x.data() + iv);  // alpha(k) = alpha+(k) + H*(k) qdd(k)
    });
  }
  return x;
}

}  // namespace detail

const VecX& solve_innovations(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                              const Eigen::Ref<const VecX>& b) {
  const detail::DataUse use(model, data, "solve_innovations");
  detail::check_arguments("solve_innovations", [&] {
    model.check_configuration(q, "q");
    model.check_tangent(b, "b");
  });
  detail::compute_poses(model, data, q.data());
  detail::InnovationsWorkspace& ws = detail::innovations_factor(model, data);
  ws.b = b;  // b may alias the solution
  return detail::innovations_solve(model, data, ws.b.data());
}

InnovationsFactors innovations_factors(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  const detail::DataUse use(model, data, "innovations_factors");
  detail::check_arguments("innovations_factors", [&] { model.check_configuration(q, "q"); });
  detail::compute_poses(model, data, q.data());
  const detail::InnovationsWorkspace& ws = detail::innovations_factor(model, data);
  const int nv = model.nv();
  InnovationsFactors out{MatX::Identity(nv, nv), MatX::Zero(nv, nv)};
  for (int j = 1; j < model.nbodies(); ++j) {
    const int dj = model.joint_nv(j), jv = model.idx_v(j);
    if (dj == 0) continue;
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Dinv(
        ws.D_inv.data() + 6 * jv, dj, dj);
    out.D.block(jv, jv, dj, dj) = Dinv.inverse();
    std::vector<Force> F(static_cast<std::size_t>(dj));  // G(j), a force per column, body-j coordinates
    for (int m = 0; m < dj; ++m) {
      F[m] = Force();
      for (int k = 0; k < dj; ++k) F[m] += ws.U[jv + k] * Dinv(k, m);
    }
    // L(i, j) = H(i) phi(i, j) G(j) for every strict ancestor i of j (K = phi G on the parent edge).
    for (int c = j, i = model.parent(j); i > 0; c = i, i = model.parent(i)) {
      for (int m = 0; m < dj; ++m) F[m] = apply_inverse(data.X_up[c], F[m]);
      visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
        for (int m = 0; m < dj; ++m) project(joint, F[m], out.L.col(jv + m).data() + model.idx_v(i));
      });
    }
  }
  return out;
}

}  // namespace plucker
