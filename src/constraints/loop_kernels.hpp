// Internals shared by the loop-constraint kinematics and the constrained solvers.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <Eigen/QR>
#include <array>
#include <vector>

#include "algorithms/workspace.hpp"

namespace plucker::detail {

/// The rows of T_k^T of a loop joint: unit directions in frame C, angular ones first.
struct LoopDirections {
  Vec3 a, b1, b2;  ///< axis and a right-handed perpendicular pair
  int n_angular = 0, n_linear = 0;
  std::array<Vec3, 3> angular, linear;
};
LoopDirections loop_directions(const LoopJoint& joint);
/// S of a loop joint in frame C (6 x its DoF, at most 3 columns: no heap allocation).
using LoopMotionSubspace = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 3>;
LoopMotionSubspace loop_motion_subspace(const LoopJoint& joint, const LoopDirections& dir);

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
    if (s > p)
      s = model.parent(s);
    else
      p = model.parent(p);
  }
}

/// Calls f(what, first_row, rows) for each block of constraint rows, in row order: "loop joint
/// 'name'" (6 - dof rows each), then "mimic joint 'name'" (one row each).
template <class F>
void for_each_constraint_block(const Model& model, F&& f) {
  int row = 0;
  for (const LoopJoint& j : model.loop_joints()) {
    const int rows = loop_joint_constraints(j.type);
    f("loop joint '" + j.name + "'", row, rows);
    row += rows;
  }
  for (const MimicRelation& m : model.mimics()) f("mimic joint '" + model.joint_name(m.follower) + "'", row++, 1);
}

/// The rows of phi of a loop joint of this type from its swing vector (of the axis), rotation
/// vector and translation d (in frame C's axes), or their changes (the map is linear); returns
/// the number of rows written.
int loop_residual_rows(LoopJointType type, const LoopDirections& dir, const Vec3& swing, const Vec3& rotation,
                       const Vec3& d, double* out);
/// phi(q) into `phi` (poses in data.X_base).
void loop_residual(const Model& model, const Data& data, const double* q, double* phi);
/// The workspace's S_world from data.X_base.
void world_motion_subspaces(const Model& model, Data& data);
/// data.loops.L from data.X_base and the workspace's S_world.
void loop_jacobian(const Model& model, Data& data);
/// data.loops.c from data.X_base, data.v and data.a (forward kinematics with v, qdd = 0).
void loop_bias(const Model& model, Data& data);
/// check_data plus: data made after the model's last loop joint / mimic; sizes data.loops.
void check_loop_data(const Model& model, Data& data, const char* fn);

}  // namespace plucker::detail

namespace plucker {

/// The scratch of the closed-loop functions: the tree joints' motion subspaces in world
/// coordinates, and the buffers and decompositions of the constrained solvers, sized once for
/// (nv, nc, na) so that a solve allocates nothing while the rank of L stays the same (the
/// decompositions resize when it changes) and at most 48 constraint rows (Eigen applies longer
/// Householder sequences by blocks, with a temporary).
struct LoopsWorkspace : detail::WorkspaceOf<LoopsWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Loops;
  explicit LoopsWorkspace(const Model& model);
  int n = 0, nc = 0;
  Matrix6X S_world;  ///< motion subspaces of the tree joints, world coordinates (6 x nv)
  VecX rhs, c_stab, qdd, tau_c, g, mu, lambda_r, tmp_n, tmp_n2, tmp_nc, hh, y, kkt_b, kkt_x, b;
  Eigen::ColPivHouseholderQR<MatX> qr;  // L^T P = Q R (rank-revealing)
  MatX Q, Lr, Rr, G, K, Y, A, MK, KtMK, La;
  std::vector<int> pivots;  // of the KKT LU
  Eigen::LDLT<MatX> ldlt;
  Eigen::LLT<MatX> llt_G;
};

namespace detail {

/// The rank-revealing step shared by the three methods (Eq. 18's full-rank L): a column-pivoted
/// Householder QR of L^T, L^T P = Q R, with relative threshold `tolerance`. Leaves the r
/// independent rows L_r = rows perm[0..r) of L (ws.Lr), R's first r rows (ws.Rr) and, with
/// form_Q, Q as a matrix (nv x nv, for the null-space basis). Returns r.
int reveal_rank(LoopsWorkspace& ws, const MatX& L, double tolerance, bool form_Q);
/// Solves A x = b in place (x in b) by LU with partial pivoting on A (overwritten), without
/// allocating (scale: a scratch of A's size). Returns -1, or the first column whose pivot is
/// not pivot_accepted against the column's largest entry (then A and b are partly overwritten).
int lu_solve_in_place(Eigen::Ref<MatX> A, std::vector<int>& pivots, Eigen::Ref<VecX> b, VecX& scale);
/// y := (K^T M K)^-1 y for a basis K of the free motions (null(L)), by a Cholesky factorisation
/// of KtMK = K^T M K in place, without allocating. A pivot that is not pivot_accepted against
/// its diagonal entry raises SingularError "<what>: the mass matrix is singular on the
/// mechanism's free motions (K^T M K), at joint '<joint>'", the joint that motion moves most.
void solve_on_free_motions(const Model& model, const Eigen::Ref<const MatX>& K, Eigen::Ref<MatX> KtMK,
                           Eigen::Ref<VecX> y, const char* what);
/// The minimum-norm lambda with L^T lambda = tau_c (tau_c in the range of L^T), from the
/// decomposition left by reveal_rank: mu = R_r^T (R_r R_r^T)^-1 Q_1^T tau_c, lambda = P mu.
void min_norm_multipliers(LoopsWorkspace& ws, int r, const VecX& tau_c, VecX& lambda);

}  // namespace detail
}  // namespace plucker
