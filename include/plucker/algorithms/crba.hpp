// The joint-space inertia matrix by the composite-rigid-body algorithm (paper 000 §3.2,
// Eqs. 9-10).
#pragma once

#include "plucker/algorithms/data.hpp"

namespace plucker {

/// Which part of the symmetric matrix to fill.
enum class Triangle {
  Full,   ///< the whole symmetric matrix (default)
  Upper,  ///< M(j, i) for j <= i; the strict lower triangle is zero except inside multi-DoF diagonal blocks
};

/// M(q), nv x nv, symmetric positive (semi-)definite. Only the nonzero blocks that the
/// tree's branching allows are computed (each body walks its support path); the others are
/// zero. Returns data.M.
const MatX& crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, Triangle triangle = Triangle::Full);

}  // namespace plucker
