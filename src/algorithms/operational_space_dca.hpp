// The hybrid divide-and-conquer method of operational_space (operational_space_dca.cpp): Lambda^-1
// as the inverse articulated inertia of the whole tree seen at the task bodies.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "plucker/algorithms/operational_space.hpp"

namespace plucker::detail {

struct OsDcaState;

/// The method's scratch (assembly tree, Phi blocks, thread pool), owned by operational_space's
/// workspace. Copying gives an empty holder (rebuilt on the next call).
struct OsDcaHolder {
  std::unique_ptr<OsDcaState> state;
  OsDcaHolder();
  OsDcaHolder(const OsDcaHolder&);
  OsDcaHolder& operator=(const OsDcaHolder&);
  ~OsDcaHolder();
};

/// Lambda_inv (m x m, sized) = J M^-1 J^T on the poses of data (forward_kinematics: X_up), with
/// E6's column r the unit force of task row r on its task body in body coordinates and row0[t]
/// each task's first row. Throws SingularError naming the joint whose constraint-space inverse
/// inertia is not positive definite (M singular), or when the bodies of singular inertia make
/// the root's system singular.
void dca_lambda_inv(const Model& model, const Data& data, OsDcaHolder& holder, std::span<const OperationalTask> tasks,
                    const Matrix6X& E6, std::span<const int> row0, MatX& Lambda_inv, int threads, int segment);

}  // namespace plucker::detail
