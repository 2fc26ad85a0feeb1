// Internals shared by the loop-constraint kinematics and the constrained solvers.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/QR>
#include <array>
#include <vector>

#include "plucker/algorithms/data.hpp"

namespace plucker::detail {

/// The rows of T_k^T of a loop joint: unit directions in frame C, angular ones first.
struct LoopDirections {
  Vec3 a, b1, b2;  ///< axis and a right-handed perpendicular pair
  int n_angular = 0, n_linear = 0;
  std::array<Vec3, 3> angular, linear;
};
LoopDirections loop_directions(const LoopJoint& joint);

/// World poses of a loop joint's two frames (after forward kinematics) and C_X_0.
struct LoopFrames {
  Mat3 Rp, Rs;  ///< predecessor / successor joint-frame axes in the world
  Vec3 pp, ps;  ///< their origins in the world
  Transform C;  ///< world -> C (axes of the predecessor frame, origin of the successor frame)
};
LoopFrames loop_frames(const Data& data, const LoopJoint& joint);

/// Calls f(k, sign) for every velocity index k of the tree joints between `successor` and
/// `predecessor` (up to their common ancestor): sign +1 on the successor's side, -1 on the
/// predecessor's, so that sum sign * J column = the columns of J_s - J_p.
template <class F>
void for_each_loop_path_dof(const Model& model, int successor, int predecessor, F&& f) {
  for (int s = successor, p = predecessor; s != p;) {
    const int body = s > p ? s : p;
    const double sign = s > p ? 1.0 : -1.0;
    for (int k = model.idx_v(body); k < model.idx_v(body) + model.joint_nv(body); ++k) f(k, sign);
    if (s > p) s = model.parent(s);
    else p = model.parent(p);
  }
}

/// phi(q) into `phi` (poses in data.X_base).
void loop_residual(const Model& model, const Data& data, const double* q, double* phi);
/// data.loops.S_world from data.X_base.
void world_motion_subspaces(const Model& model, Data& data);
/// data.loops.L from data.X_base and data.loops.S_world.
void loop_jacobian(const Model& model, Data& data);
/// data.loops.c from data.X_base, data.v and data.a (forward kinematics with v, qdd = 0).
void loop_bias(const Model& model, Data& data);
/// check_data plus: data.loops sized for the model's constraints.
void check_loop_data(const Model& model, const Data& data, const char* fn);

/// The range-space machinery of Eq. 21 on the poses in data.X_up: a rank-revealing complete
/// orthogonal decomposition of L^T selects r independent rows L_r (Eq. 18's full-rank L);
/// M is factored once by the innovations factorisation (O(n)), Y = M^-1 L_r^T by r O(n)
/// solves, and A = L_r Y (r x r, positive definite) by a pivoted LDL^T (robust when nearly
/// dependent rows pass the rank test).
class RangeSpace {
 public:
  RangeSpace(const Model& model, Data& data, const MatX& L, double rank_tolerance);
  int rank() const { return rank_; }
  const std::vector<int>& rows() const { return rows_; }
  VecX reduced_rows(const VecX& x) const;  ///< L_r x
  VecX reduced(const VecX& c) const;       ///< the independent entries of a constraint-row vector
  const MatX& minv_LT() const { return Y_; }
  VecX solve_A(const VecX& b) const;       ///< A^-1 b
  VecX minv(const VecX& b);                ///< M^-1 b (factors reused)
  /// The minimum-norm lambda (size nc) with L^T lambda = L_r^T lambda_r.
  VecX full_multipliers(const VecX& lambda_r) const;
  const Eigen::CompleteOrthogonalDecomposition<MatX>& cod_LT() const { return cod_; }

 private:
  const Model& model_;
  Data& data_;
  Eigen::CompleteOrthogonalDecomposition<MatX> cod_;
  int rank_ = 0;
  std::vector<int> rows_;
  MatX Lr_, Y_;
  Eigen::LDLT<MatX> A_;
};

}  // namespace plucker::detail
