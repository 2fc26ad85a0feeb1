// Analytical derivatives of the dynamics: of inverse dynamics (the RNEA) with respect to q and
// v, and of forward dynamics (the ABA) with respect to q, v and tau.
//
// Derivatives with respect to q are taken in the tangent space: column k is d/de of
// f(integrate(q, e_k e)) at e = 0, nv columns. Every joint of the joint library moves its body
// along a motion subspace constant in the body frame, and `integrate` follows it (exactly, for
// the spherical, planar and free-flyer joints), so column k is the derivative along the body's
// own k-th motion axis: for free-flyer and spherical joints this is the Lie-group (right,
// body-frame) derivative, the convention Pinocchio also uses.
#pragma once

#include "plucker/algorithms/rnea.hpp"

namespace plucker {

/// d tau / d q and d tau / d v of tau = rnea(q, v, a) (with external forces f_ext, if given,
/// in `frame`, see rnea), and d tau / d a = M(q). Results: data.dtau_dq, data.dtau_dv,
/// data.M (full symmetric) and data.tau (= rnea(q, v, a)). O(N d) for tree depth d, plus the
/// nv x nv results.
void rnea_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      const Eigen::Ref<const VecX>& a);
void rnea_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      const Eigen::Ref<const VecX>& a, ExternalForces f_ext,
                      ReferenceFrame frame = ReferenceFrame::World);

/// d qdd / d q, d qdd / d v and d qdd / d tau = M^-1 of qdd = aba(q, v, tau) (with external
/// forces as for aba): the derivatives of ID at a = qdd, mapped by d qdd / d x =
/// -M^-1 d tau / d x. Results: data.dqdd_dq, data.dqdd_dv, data.Minv, data.qdd. Throws
/// SingularError naming the joint where the ABA does.
void aba_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& tau);
void aba_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& tau, ExternalForces f_ext,
                     ReferenceFrame frame = ReferenceFrame::World);

}  // namespace plucker
