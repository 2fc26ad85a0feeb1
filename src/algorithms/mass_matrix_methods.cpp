// The O(N^3) class of paper 002 §3: the joint-space inertia matrix by the direct method and by
// the symmetry-based method (the third, the composite-rigid-body method of Eq. 28, is crba.cpp),
// the O(N) product M y that both (and conjugate gradient) are built on, and inverse dynamics by
// composite rigid-body inertias (Lemma 3.2).
//
// For a tree, Jain's serial-chain recursions read: "k+1" (inboard) -> parent(k), "k-1"
// (outboard) -> children of k, "links k..1" (the outboard chain) -> the subtree nu(k).
#include "algorithms/fd_kernels.hpp"

namespace plucker {
namespace {

using namespace ops;

struct CompositeWorkspace : detail::WorkspaceOf<CompositeWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Composite;
  explicit CompositeWorkspace(const Model& model)
      : R(static_cast<std::size_t>(model.nbodies())),
        y(static_cast<std::size_t>(model.nbodies())),
        x(static_cast<std::size_t>(model.nbodies())),
        inside(static_cast<std::size_t>(model.nbodies()), 0),
        e(VecX::Zero(model.nv())) {}
  std::vector<RigidBodyInertia> R;  ///< composite inertias R(k) (Eq. 24)
  std::vector<Force> y;             ///< correction forces y(k)
  std::vector<Motion> x;            ///< x(k) = H* qdd + a(k)
  std::vector<char> inside;         ///< marks the subtree nu(i) (symmetry method)
  VecX e;                           ///< a unit vector (direct method)
};

}  // namespace

namespace detail {

void compute_poses(const Model& model, Data& data, const double* q) {
  evaluate_sincos(data, q);
  for (int i = 1; i < model.nbodies(); ++i)
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      compose_up(joint, joint_q(model, data, q, i), X_tree, data.X_up[i]);
    });
}

void mass_times_kernel(const Model& model, Data& data, const double* y, double* out) {
  const int n = model.nbodies();
  data.a[0].setZero();
  for (int i = 1; i < n; ++i) {
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      data.a[i] = apply(data.X_up[i], data.a[model.parent(i)]);
      add_motion(joint, data.a[i], y + model.idx_v(i));  // Eq. 4
    });
    data.f[i] = times(model.inertia(i), data.a[i]);  // Eq. 5 at rest
  }
  for (int i = n - 1; i > 0; --i) {
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      project(joint, data.f[i], out + model.idx_v(i));
    });
    const int p = model.parent(i);
    if (p > 0) add_apply_inverse(data.X_up[i], data.f[i], data.f[p]);  // Eq. 7
  }
}

}  // namespace detail

const VecX& mass_times(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                       const Eigen::Ref<const VecX>& y) {
  const detail::DataUse use(model, data, "mass_times");
  detail::check_arguments("mass_times", [&] {
    model.check_configuration(q, "q");
    model.check_tangent(y, "y");
  });
  detail::compute_poses(model, data, q.data());
  detail::mass_times_kernel(model, data, y.data(), data.tau.data());
  return data.tau;
}

// Direct method: the k-th column of M is the joint force that produces qdd = e_k from rest
// without gravity (Eq. 23; paper 000: M e_k = D(q, 0, e_k) - D(q, 0, 0), the gravity terms
// cancelling exactly when they are left out). nv inverse-dynamics calls of fixed cost O(N).
const MatX& mass_matrix_direct(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  const detail::DataUse use(model, data, "mass_matrix_direct");
  detail::check_arguments("mass_matrix_direct", [&] { model.check_configuration(q, "q"); });
  CompositeWorkspace& ws = detail::workspace<CompositeWorkspace>(model, data);
  MatX& M = detail::sized(data.M, model.nv(), model.nv());
  detail::compute_poses(model, data, q.data());  // one set of poses for all nv calls
  VecX& e = ws.e;
  e.setZero();
  for (int k = 0; k < model.nv(); ++k) {
    e[k] = 1.0;
    detail::mass_times_kernel(model, data, e.data(), M.col(k).data());  // M e_k (Eq. 23)
    e[k] = 0.0;
  }
  return M;
}

// Symmetry-based method: with qdd = e_k for a DoF of joint i, every body outside the subtree
// nu(i) stays at rest, so inverse dynamics on nu(i) alone (the "shrinking outboard chain")
// gives the rows of M in nu(i), i.e. the lower triangle of column k; its cost falls from O(N)
// to O(|nu(i)|). The upper triangle follows by symmetry (rows of i's ancestors are the lower
// triangle of the ancestors' columns).
const MatX& mass_matrix_symmetry(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  const detail::DataUse use(model, data, "mass_matrix_symmetry");
  detail::check_arguments("mass_matrix_symmetry", [&] { model.check_configuration(q, "q"); });
  CompositeWorkspace& ws = detail::workspace<CompositeWorkspace>(model, data);
  MatX& M = detail::sized(data.M, model.nv(), model.nv());
  detail::compute_poses(model, data, q.data());
  M.setZero();
  const int n = model.nbodies();
  for (int i = 1; i < n; ++i) {
    // nu(i), ascending (parents before children): [i, subtree_end(i)) filtered by ancestry.
    const int end = model.subtree_end(i);
    ws.inside[i] = 1;
    for (int j = i + 1; j < end; ++j) ws.inside[j] = ws.inside[model.parent(j)];
    for (int m = 0; m < model.joint_nv(i); ++m) {
      const int k = model.idx_v(i) + m;
      // Outward over nu(i): alpha(i) = H*(i) e_m, alpha(j) = phi*(p, j) alpha(p)  (Eq. 17 at rest)
      for (int j = i; j < end; ++j) {
        if (!ws.inside[j]) continue;
        if (j == i) {
          double unit[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
          unit[m] = 1.0;
          data.a[i].setZero();
          visit_joint(model, i,
                      [&](const auto& joint, const auto&) PLUCKER_INLINE { add_motion(joint, data.a[i], unit); });
        } else {
          data.a[j] = apply(data.X_up[j], data.a[model.parent(j)]);
        }
        data.f[j] = times(model.inertia(j), data.a[j]);  // Eq. 15: f(k) = M(k) alpha(k) + phi f(k-1)
      }
      // Inward over nu(i): T(j) = H(j) f(j), f(p) += phi(p, j) f(j), stopping at joint i.
      for (int j = end - 1; j >= i; --j) {
        if (!ws.inside[j]) continue;
        visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
          project(joint, data.f[j], M.col(k).data() + model.idx_v(j));  // M(j, k) = H(j) f(j)
        });
        if (j != i) add_apply_inverse(data.X_up[j], data.f[j], data.f[model.parent(j)]);
      }
    }
    for (int j = i; j < end; ++j) ws.inside[j] = 0;
  }
  // Symmetry: the upper triangle is the lower one (the diagonal blocks were written whole).
  M.triangularView<Eigen::StrictlyUpper>() = M.transpose();
  return M;
}

// Composite-rigid-body-inertia inverse dynamics (Lemma 3.2): f = R alpha + y, with the bias
// terms a(k) = v x H* qd and b(k) = v x* M v of Eq. 17 and gravity as the base acceleration:
//   alpha = phi* x + gravity,  x(k) = H*(k) qdd(k) + a(k)                  (outward)
//   f = phi (M alpha + b) = R alpha + b + y,  y = phi~ (R x + b)           (Eq. 27)
//   y(k) = sum_{c in mu(k)} phi(k, c) [y(c) + b(c) + R(c) x(c)]            (inward, with Eq. 24)
// alpha needs no composite inertia and y no acceleration: the two recursions are decoupled.
const VecX& rnea_composite(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                           const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a) {
  const detail::DataUse use(model, data, "rnea_composite");
  detail::check_state(model, "rnea_composite", q, v, a, "a");
  CompositeWorkspace& ws = detail::workspace<CompositeWorkspace>(model, data);
  const int n = model.nbodies();
  data.v[0].setZero();
  data.a[0] = Motion(Vec3::Zero(), -model.gravity());  // alpha(0): fictitious base acceleration -g
  detail::evaluate_sincos(data, q.data());

  // Outward: poses, velocities, x(k) and alpha(k); R(k) and y(k) initialised.
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      const auto X = compose(joint, detail::joint_q(model, data, q.data(), i), X_tree);
      data.X_up[i] = to_transform(X);
      Motion vJ;
      add_motion(joint, vJ, v.data() + iv);
      data.v[i] = apply(X, data.v[p]) + vJ;  // Eq. 17, V(k)
      ws.x[i] = crm(data.v[i], vJ);          // x(k) = H* qdd + a(k)
      add_motion(joint, ws.x[i], a.data() + iv);
      data.a[i] = apply(X, data.a[p]) + ws.x[i];  // Eq. 17, alpha(k)
    });
    const RigidBodyInertia& I = model.inertia(i);
    data.f[i] = crf(data.v[i], times(I, data.v[i]));  // b(k), gyroscopic force
    ws.R[i] = I;                                      // R(k) = M(k) + ... (Eq. 24, completed inward)
    ws.y[i].setZero();
  }

  // Inward: R(k) and y(k) complete once every child has been folded in.
  for (int i = n - 1; i > 0; --i) {
    const Force f = times(ws.R[i], data.a[i]) + data.f[i] + ws.y[i];  // Lemma 3.2: f = R alpha + y
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      project(joint, f, data.tau.data() + model.idx_v(i));  // T(k) = H(k) f(k)
    });
    const int p = model.parent(i);
    if (p > 0) {
      add_apply_inverse(data.X_up[i], ws.y[i] + data.f[i] + times(ws.R[i], ws.x[i]), ws.y[p]);  // Eq. 29
      add_congruence(data.X_up[i], ws.R[i], ws.R[p]);                                           // Eq. 24
    }
    data.f[i] = f;
  }
  detail::check_finite_result(model, data, data.tau, "rnea_composite", "tau");
  return data.tau;
}

}  // namespace plucker
