// Recursive Newton-Euler algorithm, link coordinates (paper 000 §3.1), for one state (S =
// double: rnea.cpp) and for W states in SIMD lanes (S = simd::Pack: batch_lanes.cpp):
//   forward:  v_i = iX_p v_p + h_i qd_i                      (Eq. 3)
//             a_i = iX_p a_p + h_i qdd_i + v_i x h_i qd_i     (Eq. 4; c_J = 0, S constant in body frame)
//             f_i = I_i a_i + v_i x* I_i v_i - f^x_i          (Eq. 5, 7)
//   backward: tau_i = h_i^T f_i                               (Eq. 8)
//             f_p += pX_i* f_i                                (Eq. 7)
// Gravity enters as the fictitious base acceleration a_0 = -g.
#pragma once

#include "algorithms/workspace.hpp"

namespace plucker::detail {

/// The per-body arrays the recursion writes (X_up, v, a, f), and sin/cos of q.
template <class S>
struct RneaState {
  ops::transform_t<S>* X_up;
  ops::motion_t<S>* v;
  ops::motion_t<S>* a;
  ops::force_t<S>* f;
  const S* sin;
  const S* cos;
};

/// tau = ID(q, qd, qdd). external_force(i, p, f) subtracts f^x_i from f (Eq. 7), or does nothing.
template <bool WithVelocity, bool WithAcceleration, class S, class ExternalForce>
void rnea_passes(const Model& model, const RneaState<S>& st, const S* q, const S* qd, const S* qdd, S* tau,
                 const ExternalForce& external_force) {
  using namespace ops;
  const int n = model.nbodies();
  const LinearMotion a0{-model.gravity()};  // a_0 = -g; v_0 = 0
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), iv = model.idx_v(i), iq = model.idx_q(i);
    const JointQ<S> jq{q + iq, st.sin + iq, st.cos + iq};
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      decltype(auto) X = compose_up(joint, jq, X_tree, st.X_up[i]);  // X_J(q_i) X_tree(i)
      // Children of the base: X v_0 = 0 and X a_0 = (0, E a_0). v, a, f stay in registers
      // (MotionT) from their parent's load to their store.
      MotionT<S> v = p == 0 || !WithVelocity ? MotionT<S>{} : apply(X, st.v[p]);
      MotionT<S> a = p == 0 ? apply(X, a0) : apply(X, st.a[p]);
      if constexpr (WithVelocity) {
        add_motion(joint, v, qd + iv);             // Eq. 3
        a += velocity_product(joint, v, qd + iv);  // Eq. 4, v x h qd
      }
      if constexpr (WithAcceleration) add_motion(joint, a, qdd + iv);  // Eq. 4, h qdd
      store_into(st.v[i], v);
      store_into(st.a[i], a);
      store_into(st.f[i], body_force<WithVelocity>(model.inertia(i), a, v));  // Eq. 5
    });
    external_force(i, p, st.f[i]);  // Eq. 7
  }

  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), iq = model.idx_q(i);
    const JointQ<S> jq{q + iq, st.sin + iq, st.cos + iq};
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      project(joint, st.f[i], tau + model.idx_v(i));                                        // Eq. 8
      if (p > 0) add_apply_inverse(x_up(joint, jq, X_tree, st.X_up[i]), st.f[i], st.f[p]);  // Eq. 7
    });
  }
}

}  // namespace plucker::detail
