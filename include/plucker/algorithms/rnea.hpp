// Inverse dynamics: the recursive Newton-Euler algorithm (Featherstone & Orin, "Robot Dynamics: Equations and
// Algorithms", ICRA 2000, §3.1, Eqs. 1-8, link-coordinate version), and the quantities derived from it.
#pragma once

#include <span>

#include "plucker/algorithms/data.hpp"

namespace plucker {

/// tau = ID(q, v, a): the generalised forces that produce acceleration a at (q, v) under
/// gravity (a fictitious base acceleration -g, Featherstone & Orin 2000). Returns data.tau.
const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a);

/// As above with external forces f_ext[i] acting on body i. With frame == World (the default,
/// Featherstone's spatial_v2 convention) each is [moment; force] in world coordinates about the
/// world origin; with frame == Local it is in body-i coordinates about the body origin.
const VecX& rnea(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                 const Eigen::Ref<const VecX>& a, ExternalForces f_ext, ReferenceFrame frame = ReferenceFrame::World);

/// C(q, v) in M qdd + C = tau: Coriolis, centrifugal and gravity terms (= rnea(q, v, 0)).
const VecX& nonlinear_effects(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                              const Eigen::Ref<const VecX>& v);

/// g(q) = rnea(q, 0, 0): generalised gravity forces.
const VecX& gravity_torques(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

}  // namespace plucker
