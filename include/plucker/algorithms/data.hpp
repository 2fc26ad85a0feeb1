// Per-call workspace of the algorithms. Allocate one Data per Model (and per thread)
// once; no algorithm allocates on the heap afterwards.
//
// Frames: everything indexed by body is in that body's coordinates unless its name
// says otherwise. X_up[i] = i_X_parent(i); X_base[i] = i_X_0 (world -> body i).
#pragma once

#include <vector>

#include "plucker/model/model.hpp"

namespace plucker {

using Matrix6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
using Matrix3X = Eigen::Matrix<double, 3, Eigen::Dynamic>;

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
  std::vector<RigidBodyInertia> I_composite;  ///< composite inertias, Eq. 9 (world coordinates after crba)
  MatX M;                                      ///< joint-space inertia matrix (nv x nv)
  Matrix6X S_world;                            ///< motion subspaces in world coordinates (6 x nv)

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
};

}  // namespace plucker
