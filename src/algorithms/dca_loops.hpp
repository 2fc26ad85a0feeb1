// The divide-and-conquer algorithm with loop joints (dca.cpp): the interface between the DCA's
// assembly (algorithms layer) and the loop-constraint terms (constraints layer), which fills
// each loop's frame, constraint subspace and acceleration bias once the DCA's kinematics pass
// has set the poses and velocities.
#pragma once

#include <vector>

#include "algorithms/workspace.hpp"

namespace plucker::detail {

/// An orthonormal basis of the null space of S^T (6 x (6 - d)) for a 6 x d S of full rank: the
/// unit vectors S does not use when S's columns are unit vectors (exact), else the last left
/// singular vectors of S. The constraint-force directions T of a joint (T^T S = 0), for the
/// DCA (dca.cpp) and the operational-space DCA (operational_space_dca.cpp).
Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> null_space(
    const Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>& S);

/// One loop joint as the DCA sees it: a joint between two handles, in its frame C (the axes of
/// the predecessor frame, the origin of the successor frame; C_X_0).
struct DcaLoop {
  using Mat6x = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;
  // Set by the hook, every call:
  Transform C;  ///< C_X_0
  Mat6x T;      ///< the constraint directions (6 x m, orthonormal; angular rows first, as the rows of L)
  Mat6x S;      ///< the loop joint's motion subspace (T^T S = 0)
  Vec6 c;       ///< T rhs: the stabilised relative acceleration T^T C (a_s - a_p) = rhs (motion, in C)
  Vec6 f_tau;   ///< the actuator force S u on the successor (in C)
  // Results:
  Vec6 f;        ///< the loop joint's force on the successor, in C (-f on the predecessor)
  int rank = 0;  ///< rank of T^T Phi T at the closure (its pseudo-inverse keeps that many directions)
};

/// Fills every DcaLoop's inputs from data.X_base and data.v (world <- body poses and body
/// velocities of q, v, set before it is called).
struct DcaLoopHook {
  virtual void terms(const Model& model, Data& data, std::vector<DcaLoop>& loops) const = 0;

 protected:
  ~DcaLoopHook() = default;
};

/// The loops (data's workspace) and whether a tree joint's T^T Phi T was rank-deficient (a
/// redundancy between a loop and the tree joints above where it closed: the loops' forces are then
/// valid but not the minimum-norm ones).
struct DcaLoopsResult {
  std::vector<DcaLoop>& loops;
  bool tree_rank_deficient = false;
};

/// data.qdd by the DCA with every loop joint of the model closed by the assembly formula at the
/// lowest subassembly that holds both its bodies. rank_tolerance: an eigenvalue of T^T Phi T at
/// or below rank_tolerance times the largest counts as zero (redundant constraint directions).
/// Mimic relations are not its business (the caller closes them, constrained_dca.cpp). gravity =
/// false: the base does not accelerate (with v = 0 and a hook giving no bias, the solve is the
/// loop-closed map tau -> qdd). Throws InvalidArgument for models it does not cover (a loop joint
/// from a body to itself, bodies of singular inertia) and NumericalError when T^T Phi T is not
/// positive semi-definite.
DcaLoopsResult forward_dynamics_dca_loops(const Model& model, Data& data, const double* q, const double* v,
                                          const double* tau, bool basic, int threads, double rank_tolerance,
                                          const DcaLoopHook& hook, bool gravity = true);

}  // namespace plucker::detail
