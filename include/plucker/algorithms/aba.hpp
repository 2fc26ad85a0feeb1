// Forward dynamics: the articulated-body algorithm (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms",
// ICRA 2000, §3.3, Eqs. 11-14; Jain, "Unified Formulation of Dynamics for Serial Rigid Multibody Systems", J. Guidance,
// Control, and Dynamics 1991, Eqs. 45-46, 60 for multi-DoF joints through the d x d inverse D^-1), and the O(N^3)
// comparison path (CRBA + Cholesky).
#pragma once

#include "plucker/algorithms/rnea.hpp"

namespace plucker {

/// qdd = FD(q, v, tau) by the ABA. Throws SingularError naming the joint when the
/// articulated inertia of a joint is singular (e.g. a massless moving subtree). Returns data.qdd.
const VecX& aba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                const Eigen::Ref<const VecX>& tau);
/// As above with external forces (see rnea for the conventions).
const VecX& aba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                const Eigen::Ref<const VecX>& tau, ExternalForces f_ext, ReferenceFrame frame = ReferenceFrame::World);

/// qdd from M qdd = tau - C with M by the CRBA and a dense Cholesky factorisation.
/// Throws SingularError naming the joint whose pivot vanishes. Returns data.qdd.
const VecX& forward_dynamics_crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau);
const VecX& forward_dynamics_crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                  ExternalForces f_ext, ReferenceFrame frame = ReferenceFrame::World);

}  // namespace plucker
