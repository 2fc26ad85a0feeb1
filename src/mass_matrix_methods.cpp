// The O(N^3) class of paper 002 §3: the joint-space inertia matrix by the direct method and by
// the symmetry-based method (the third, the composite-rigid-body method of Eq. 28, is crba.cpp),
// the O(N) product M y that both (and conjugate gradient) are built on, and inverse dynamics by
// composite rigid-body inertias (Lemma 3.2).
//
// For a tree, Jain's serial-chain recursions read: "k+1" (inboard) -> parent(k), "k-1"
// (outboard) -> children of k, "links k..1" (the outboard chain) -> the subtree nu(k).
#include "detail/forward_dynamics_kernels.hpp"

namespace plucker {

const VecX& mass_times(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                       const Eigen::Ref<const VecX>& y) {
  detail::check_data(model, data, "mass_times");
  model.check_configuration(q, "mass_times: q");
  model.check_tangent(y, "mass_times: y");
  detail::compute_poses(model, data, q.data());
  detail::mass_times_kernel(model, data, y.data(), data.tau.data());
  return data.tau;
}

// Direct method: the k-th column of M is the joint force that produces qdd = e_k from rest
// without gravity (Eq. 23; paper 000: M e_k = D(q, 0, e_k) - D(q, 0, 0), the gravity terms
// cancelling exactly when they are left out). nv inverse-dynamics calls of fixed cost O(N).
const MatX& mass_matrix_direct(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_data(model, data, "mass_matrix_direct");
  model.check_configuration(q, "mass_matrix_direct: q");
  detail::compute_poses(model, data, q.data());  // one set of poses for all nv calls
  VecX& e = data.fd_p;
  e.setZero();
  for (int k = 0; k < model.nv(); ++k) {
    e[k] = 1.0;
    detail::mass_times_kernel(model, data, e.data(), data.M.col(k).data());  // M e_k (Eq. 23)
    e[k] = 0.0;
  }
  return data.M;
}

// Symmetry-based method: with qdd = e_k for a DoF of joint i, every body outside the subtree
// nu(i) stays at rest, so inverse dynamics on nu(i) alone (the "shrinking outboard chain")
// gives the rows of M in nu(i), i.e. the lower triangle of column k; its cost falls from O(N)
// to O(|nu(i)|). The upper triangle follows by symmetry (rows of i's ancestors are the lower
// triangle of the ancestors' columns).
const MatX& mass_matrix_symmetry(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_data(model, data, "mass_matrix_symmetry");
  model.check_configuration(q, "mass_matrix_symmetry: q");
  detail::compute_poses(model, data, q.data());
  data.M.setZero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const std::vector<int>& nu = model.subtree(i);  // ascending: parents before children
    for (int m = 0; m < model.joint_nv(i); ++m) {
      const int k = model.idx_v(i) + m;
      // Outward over nu(i): alpha(i) = H*(i) e_m, alpha(j) = phi*(p, j) alpha(p)  (Eq. 17 at rest)
      for (int j : nu) {
        if (j == i) {
          double e[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
          e[m] = 1.0;
          detail::visit_joint(model.joint(i), [&](const auto& joint) { data.a[i] = joint.motion(e); });
        } else {
          data.a[j] = data.X_up[j].apply(data.a[model.parent(j)]);
        }
        data.f[j] = model.inertia(j) * data.a[j];  // Eq. 15: f(k) = M(k) alpha(k) + phi f(k-1)
      }
      // Inward over nu(i): T(j) = H(j) f(j), f(p) += phi(p, j) f(j), stopping at joint i.
      for (auto it = nu.rbegin(); it != nu.rend(); ++it) {
        const int j = *it;
        detail::visit_joint(model.joint(j), [&](const auto& joint) {
          joint.project(data.f[j], data.M.col(k).data() + model.idx_v(j));  // M(j, k) = H(j) f(j)
        });
        if (j != i) data.f[model.parent(j)] += data.X_up[j].apply_inverse(data.f[j]);
      }
    }
  }
  // Symmetry: the upper triangle is the lower one (the diagonal blocks were written whole).
  data.M.triangularView<Eigen::StrictlyUpper>() = data.M.transpose();
  return data.M;
}

// Composite-rigid-body-inertia inverse dynamics (Lemma 3.2): f = R alpha + y, with the bias
// terms a(k) = v x H* qd and b(k) = v x* M v of Eq. 17 and gravity as the base acceleration:
//   alpha = phi* x + gravity,  x(k) = H*(k) qdd(k) + a(k)                  (outward)
//   f = phi (M alpha + b) = R alpha + b + y,  y = phi~ (R x + b)           (Eq. 27)
//   y(k) = sum_{c in mu(k)} phi(k, c) [y(c) + b(c) + R(c) x(c)]            (inward, with Eq. 24)
// alpha needs no composite inertia and y no acceleration: the two recursions are decoupled.
const VecX& rnea_composite(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                           const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a) {
  detail::check_data(model, data, "rnea_composite");
  model.check_configuration(q, "rnea_composite: q");
  model.check_tangent(v, "rnea_composite: v");
  model.check_tangent(a, "rnea_composite: a");
  const int n = model.nbodies();
  data.v[0].setZero();
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());  // alpha(0): fictitious base acceleration -g

  // Outward: poses, velocities, x(k) and alpha(k); R(k) and y(k) initialised.
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      const Transform& X = data.X_up[i] = joint.compose(q.data() + model.idx_q(i), model.X_tree(i));
      const Motion vJ = joint.motion(v.data() + model.idx_v(i));
      data.v[i] = X.apply(data.v[p]) + vJ;                                                // Eq. 17, V(k)
      data.fd_alpha[i] = joint.motion(a.data() + model.idx_v(i)) + cross(data.v[i], vJ);  // x(k) = H* qdd + a(k)
      data.a[i] = X.apply(data.a[p]) + data.fd_alpha[i];                                  // Eq. 17, alpha(k)
    });
    const RigidBodyInertia& I = model.inertia(i);
    data.f[i] = cross(data.v[i], I * data.v[i]);  // b(k), gyroscopic force
    data.fd_R[i] = I;                             // R(k) = M(k) + ... (Eq. 24, completed inward)
    data.fd_y[i].setZero();
  }

  // Inward: R(k) and y(k) complete once every child has been folded in.
  for (int i = n - 1; i > 0; --i) {
    const Force f = data.fd_R[i] * data.a[i] + data.f[i] + data.fd_y[i];  // Lemma 3.2: f = R alpha + y
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      joint.project(f, data.tau.data() + model.idx_v(i));  // T(k) = H(k) f(k)
    });
    const int p = model.parent(i);
    if (p > 0) {
      data.fd_y[p] += data.X_up[i].apply_inverse(data.fd_y[i] + data.f[i] + data.fd_R[i] * data.fd_alpha[i]);  // Eq. 29
      data.fd_R[p] += data.fd_R[i].transformed_inverse(data.X_up[i]);                                          // Eq. 24
    }
    data.f[i] = f;
  }
  return data.tau;
}

}  // namespace plucker
