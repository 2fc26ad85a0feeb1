// Per-call workspace of the algorithms. Allocate one Data per Model (and per thread)
// once; no algorithm allocates on the heap afterwards.
//
// Frames: everything indexed by body is in that body's coordinates unless its name
// says otherwise. X_up[i] = i_X_parent(i); X_base[i] = i_X_0 (world -> body i).
#pragma once

#include <memory>
#include <vector>

#include "plucker/model/model.hpp"

namespace plucker {

using Matrix6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
using Matrix3X = Eigen::Matrix<double, 3, Eigen::Dynamic>;
using Matrix6XRowMajor = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>;

/// Which coordinates a Jacobian or an external force is expressed in.
enum class ReferenceFrame {
  World,  ///< world coordinates, spatial (about the world origin) — Featherstone's convention
  Local,  ///< body coordinates, about the body origin
};

struct Data {
  explicit Data(const Model& model);

  // ---- kinematics (forward_kinematics, and every algorithm's forward pass) ----
  std::vector<Transform> X_up;    ///< i_X_lambda(i): parent -> body
  std::vector<Transform> X_base;  ///< i_X_0: world -> body (filled by forward_kinematics, jacobians, crba)
  std::vector<Motion> v;          ///< body spatial velocities (body coordinates)
  std::vector<Motion> a;          ///< body spatial accelerations (body coordinates; gravity included in rnea/aba)
  std::vector<Force> f;           ///< joint forces f^J (body coordinates), Eq. 7

  VecX sin_q, cos_q;  ///< sin and cos of every coordinate of q, evaluated once per call

  // ---- inverse dynamics ----
  VecX tau;  ///< output of rnea / nonlinear_effects / gravity_torques

  // ---- joint-space inertia (crba) ----
  std::vector<RigidBodyInertia> I_composite;  ///< composite inertias, Eq. 9 (body coordinates)
  MatX M;                                      ///< joint-space inertia matrix (nv x nv)
  /// crba: column j holds f^C_j = I^C_j h_j in the frame of the body being processed (6 x nv);
  /// row-major, so moving a block of columns to the parent frame runs along contiguous rows.
  Matrix6XRowMajor F_composite;

  // ---- articulated-body algorithm ----
  std::vector<ArticulatedBodyInertia> I_articulated;  ///< I^A, Eq. 12
  std::vector<Force> p_articulated;                   ///< p^A, Eq. 12-13
  std::vector<Motion> c;                               ///< velocity-product accelerations v x v_J
  Matrix6X U;                                          ///< U_i = I^A_i S_i (columns idx_v(i)..)
  VecX D_inv;                                          ///< packed (S^T I^A S)^-1 blocks, d_i x d_i each
  std::vector<int> D_offset;                           ///< offset of body i's block in D_inv
  VecX u;                                              ///< u_i = tau_i - S_i^T p^A_i
  VecX qdd;                                            ///< output of aba / forward dynamics

  // ---- forward dynamics by factorisation ----
  MatX L;      ///< Cholesky factor workspace (nv x nv)
  VecX rhs;    ///< scratch (nv)

  // ---- Jacobians, centre of mass ----
  Matrix6X J;       ///< body Jacobian output (6 x nv)
  Matrix3X J_com;   ///< centre-of-mass Jacobian output (3 x nv)
  Vec3 com = Vec3::Zero();
  std::vector<double> subtree_mass;
  std::vector<Vec3> subtree_first_moment;  ///< world coordinates
  std::vector<Force> f_ext_body;            ///< external forces converted to body coordinates

  int nbodies = 0, nq = 0, nv = 0;  ///< sizes of the model it was made for

  // ==== forward-dynamics family (algorithms/forward_dynamics.hpp; issue 6) ====
  // Workspaces of the methods of paper 002 and of the JSIM factorisations of paper 003, read and
  // written only by those functions (poses: X_up; bodies' a and f are overwritten as scratch).
  std::vector<int> dof_parent;     ///< DoF-level parent array lambda(k) (-1: none), see dof_parents()
  std::vector<int> dof_run_start;  ///< first DoF of the run j0..k with lambda(j) = j - 1 ending at k
  std::vector<int> fd_block;       ///< per body: offset of its d x d block in fd_D / fd_Dinv / fd_precond
  std::vector<RigidBodyInertia> fd_R;          ///< composite inertias R(k), body coordinates (Jain Eq. 24)
  std::vector<ArticulatedBodyInertia> fd_P;    ///< articulated-body inertias P(k) (Jain Eq. 42)
  std::vector<Force> fd_y;                     ///< correction forces y(k) (Lemma 3.2) / z(k) (Eq. 46)
  std::vector<Motion> fd_alpha;                ///< accelerations alpha(k) / x(k) scratch
  Matrix6X fd_U;                 ///< P(k) H*(k), 6 x nv (G(k) = fd_U D(k)^-1)
  VecX fd_D, fd_Dinv;            ///< packed D(k) = H P H* and its inverse
  VecX fd_precond;               ///< packed inverse blocks of diag(H R H*) (pcg)
  VecX fd_b, fd_x, fd_r, fd_z, fd_p, fd_Mp;  ///< right-hand side, solution, and CG vectors (nv)
  VecX fd_zero;                  ///< zeros (nv): the acceleration argument of the bias-force pass
  VecX fd_pivot_scale;           ///< diagonal of M before an in-place factorisation (pivot tolerance)
  std::vector<Matrix6X> fd_F;    ///< minv: per body, 6 x (nv - idx_v(i)) blocks of z(k) then alpha(k)
  MatX Minv;                     ///< output of minv (nv x nv)
  struct CgReport {
    int iterations = 0;              ///< M p products done
    double relative_residual = 0.0;  ///< |r| / |b| of the recursively updated residual at exit
    bool converged = false;          ///< relative_residual <= the tolerance asked for
  } cg;                          ///< report of the last solve_conjugate_gradient (cg / pcg)
  int fd_auto_method = 0;        ///< ForwardDynamicsMethod that Auto runs on this model

  // ==== closed loops (constraints/; issue 7) ====
  /// Scratch of the constrained solvers (decompositions of dynamic size, defined in
  /// src/detail/loop_kernels.hpp); a copy of a Data gets its own, freshly sized.
  struct LoopSolverHandle {
    struct Workspace;
    std::unique_ptr<Workspace> ws;
    LoopSolverHandle();
    ~LoopSolverHandle();
    LoopSolverHandle(const LoopSolverHandle& other);
    LoopSolverHandle& operator=(const LoopSolverHandle& other);
    LoopSolverHandle(LoopSolverHandle&&) noexcept;
    LoopSolverHandle& operator=(LoopSolverHandle&&) noexcept;
  };
  struct LoopWorkspace {
    int nc = 0;         ///< Model::num_constraints() when this Data was made
    VecX phi;           ///< phi(q) (nc)
    MatX L;             ///< loop Jacobian (nc x nv)
    VecX c;             ///< bias, L qdd = c (nc)
    VecX lambda;        ///< constraint multipliers of the last constrained solve (nc)
    Matrix6X S_world;   ///< motion subspaces of the tree joints, world coordinates (6 x nv)
    int rank = 0;       ///< rank of L found by the last constrained solve
    double acceleration_residual = 0.0;  ///< max |L qdd - c| of the last constrained solve
    bool range_space_fell_back = false;  ///< the last range_space solve was too ill-conditioned: solved as kkt
    LoopSolverHandle solver;             ///< decompositions and buffers, sized for (nv, nc)
  } loops;
};

}  // namespace plucker
