// The joint-space inertia matrix by the composite-rigid-body algorithm (Featherstone & Orin, "Robot Dynamics: Equations
// and Algorithms", ICRA 2000, §3.2, Eqs. 9-10).
#pragma once

#include <vector>

#include "plucker/algorithms/data.hpp"
#include "plucker/model/jsim_pattern.hpp"

namespace plucker {

/// M(q), nv x nv, symmetric positive (semi-)definite. Only the nonzero blocks that the
/// tree's branching allows are computed (each body walks its support path); the others are
/// zero. Returns data.M.
const MatX& crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, Triangle triangle = Triangle::Full);

}  // namespace plucker
