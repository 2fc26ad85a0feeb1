// What the tree derivatives (derivatives.cpp) and the closed-loop derivatives
// (constraints/constrained_derivatives.cpp) share: the first-order change of a body's world
// velocity and acceleration under a tangent step of one joint above it.
#pragma once

#include "algorithms/workspace.hpp"

namespace plucker::detail {

/// The vectors of a tangent step along column s (world coordinates) of joint k, whose parent
/// moves with v_parent, a_parent and whose body moves with v_k: u = s x v_parent,
/// psi = s x a_parent - u x v_parent, zeta = (v_parent + v_k) x s. For a body j in the subtree of
/// k, a q step changes v_j by s x v_j - u and a_j by s x a_j - psi - u x v_j; a qd step changes
/// v_j by s and a_j by s x v_j + zeta (derivation in derivatives.cpp).
template <class S>
struct TangentStepT {
  ops::MotionT<S> u, psi, zeta;
};
/// For one state (S = double) or W states in SIMD lanes (S = Pack); the other motions may be
/// stored ones.
template <class S, class Mp, class Ma, class Mk>
PLUCKER_HOT inline TangentStepT<S> tangent_step(const ops::MotionT<S>& s, const Mp& v_parent, const Ma& a_parent,
                                                const Mk& v_k) {
  const ops::MotionT<S> u = ops::crm(s, v_parent);
  return {u, ops::crm(s, a_parent) - ops::crm(u, v_parent), ops::crm(v_parent + v_k, s)};
}
/// The same of stored motions.
struct TangentStep {
  Motion u, psi, zeta;
};
PLUCKER_HOT inline TangentStep tangent_step(const Motion& s, const Motion& v_parent, const Motion& a_parent,
                                            const Motion& v_k) {
  const ops::MotionT<double> s_reg{ops::load<double>(s.angular), ops::load<double>(s.linear)};
  const TangentStepT<double> t = tangent_step(s_reg, v_parent, a_parent, v_k);
  return {t.u, t.psi, t.zeta};
}

}  // namespace plucker::detail
