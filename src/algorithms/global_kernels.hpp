// The global formulation in link coordinates (paper 000 §3.5, Eqs. 23-29), shared by Baraff's
// sparse method (global_sparse.cpp) and the Constraint-Force Algorithm (cfa.cpp).
//
// Unknowns: each body's spatial acceleration a_i in its own frame, and each joint's constraint
// force lambda_i, the coordinates of the force T_i lambda_i that joint i exerts on body i (T_i: an
// orthonormal basis of the forces the joint transmits without doing work, T_i^T h_i = 0, 6 x m_i with
// m_i = 6 - d_i, constant in the body frame). The same joint exerts -X_i^T T_i lambda_i on the parent,
// X_i = X_up(i) = i_X_parent. In these coordinates the blocks of Eq. 27 are
//   body rows   I_i a_i - T_i lambda_i + sum_{c child} X_c^T T_c lambda_c = y_i
//   joint rows  T_i^T (a_i - X_i a_parent) = z_i = T_i^T c_i                      (Eq. 29 times T_i^T)
// with y_i = f_a,i - v_i x* I_i v_i (f_a: the joint force W_i tau_i on body i and its reaction
// -X_i^T W_i tau_i on the parent, plus external forces; W_i = h_i (h_i^T h_i)^-1, so h_i^T W_i = 1
// and T_i^T W_i = 0), c_i = v_i x h_i qd_i, and a_0 = -g (the base's known acceleration).
// Given a, qdd_i = W_i^T (a_i - X_i a_parent - c_i) (Eq. 29 solved for qdd_i).
//
// The elimination of a body (eliminate_body) and its back-substitution (back_substitute_body) are
// the steps of the block LDL^T in the perfect elimination order (leaves first: body i, then joint
// i), see global_sparse.cpp. Each eliminated body block is I_i plus its children's articulated
// contributions, the ABA's I^A_i, which is singular for a massless link (its child's I^a has rank
// 6 - d). So before eliminating body i its row is augmented by rho_i T_i times joint i's row (and
// the parent's row by -rho_i X_i^T T_i times it, to stay symmetric): Eq. 27's K + rho T T^T, the same
// solution. The block becomes I^A_i + rho_i T_i T_i^T, positive definite exactly when the joint's
// pivot h_i^T I^A_i h_i is nonzero, which is tested first by the library's criterion.
#pragma once

#include <Eigen/Cholesky>

#include "algorithms/fd_kernels.hpp"

namespace plucker::detail {

using MatT = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;               ///< 6 x m (T_i)
using MatF = Eigen::Matrix<double, Eigen::Dynamic, 6, 0, 6, 6>;               ///< m x 6
using MatB = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;  ///< m x m' (joint blocks)
using VecB = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;               ///< m

/// Floating-point operation counts of the block operations (cfa_operation_counts): LL^T of an
/// m x m block, a solve with it for k right-hand sides, an (a x b)(b x c) product.
inline double flops_cholesky(int m) { return m * m * m / 3.0 + m * m / 2.0; }
inline double flops_solve(int m, int k) { return 2.0 * m * m * k; }
inline double flops_product(int a, int b, int c) { return 2.0 * a * b * c; }

struct GlobalWorkspace : WorkspaceOf<GlobalWorkspace> {
  static constexpr Slot slot = Slot::GlobalSparse;
  explicit GlobalWorkspace(const Model& model);

  // Constant, per joint, in the body frame.
  std::vector<MatS6> h;          ///< h_i
  std::vector<MatS6> W;          ///< W_i = h_i (h_i^T h_i)^-1
  std::vector<MatT> T;           ///< T_i, orthonormal, T_i^T h_i = 0
  std::vector<Mat6> TTt;         ///< T_i T_i^T
  std::vector<char> chain;       ///< on the CFA's main chain
  std::vector<int> branch_root;  ///< for a body off the main chain, the first body of its branch
  CfaTopology topology;          ///< cfa_topology(model)

  // Per call, per body.
  std::vector<Mat6> X;                  ///< X_up(i) as a 6 x 6 motion transform
  std::vector<Vec6> v, c, y, a;         ///< v_i; c_i = v_i x h_i qd_i; the body row's right-hand side; a_i
  std::vector<VecB> z, r, lambda;       ///< joint rows: z_i, then r_i after elimination; lambda_i
  std::vector<Mat6> D, G;               ///< the body block; its coupling to the parent (augmentation)
  std::vector<MatF> F;                  ///< the joint row's coupling to the parent after eliminating a_i
  std::vector<Eigen::LLT<Mat6>> D_llt;  ///< the eliminated body block
  std::vector<Eigen::LLT<MatB>> E_llt;  ///< E_i = T_i^T D_i^-1 T_i (the joint pivot block, negated)

  // CFA, per main-chain position j.
  std::vector<Mat6> Phi;                  ///< I_j^-1 (with the branches folded in)
  std::vector<Vec6> g;                    ///< I_j^-1 y_j, the unconstrained acceleration
  std::vector<MatT> K;                    ///< X_j^T T_j: joint j's constraint basis on the parent
  std::vector<MatB> A, Ul, Ur;            ///< Eq. 28's diagonal block, couplings to the left / right
  std::vector<VecB> b;                    ///< Eq. 28's right-hand side
  std::vector<Eigen::LLT<MatB>> A_llt;    ///< the eliminated diagonal blocks
  std::vector<Eigen::LLT<Mat6>> Phi_llt;  ///< I_j = L L^T
  std::vector<double> branch_cost;        ///< flops per branch (indexed by branch_root)
  CfaOperationCounts counts;
};

/// The forward pass: poses, v, c, z and the right-hand sides y; D_i = I_i. a_0 = -g is left in a[0].
void global_setup(const Model& model, Data& data, GlobalWorkspace& ws, const double* q, const double* qd,
                  const double* tau, ExternalForces f_ext, ReferenceFrame frame);

/// Eliminates body i and then joint i (the block LDL^T step leaves first), adding their Schur
/// complement to the parent's block and right-hand side (none for the base). Throws SingularError
/// naming joint i when its pivot fails the library's criterion. Returns the step's flop count.
double eliminate_body(const Model& model, Data& data, GlobalWorkspace& ws, int i, const char* fn);

/// Back-substitution of body i given its parent's acceleration a_p: lambda_i, a_i, qdd_i. Returns
/// the step's flop count.
double back_substitute_body(const Model& model, GlobalWorkspace& ws, int i, double* qdd);

}  // namespace plucker::detail
