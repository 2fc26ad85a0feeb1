// Forward dynamics, every class of method (Jain, "Unified Formulation of Dynamics for Serial Rigid Multibody Systems",
// J. Guidance, Control, and Dynamics 1991, generalised from serial chains to kinematic trees with multi-DoF joints),
// the factorisations of the joint-space inertia matrix that exploit branch-induced sparsity (Featherstone, "Efficient
// Factorization of the Joint-Space Inertia Matrix for Branched Kinematic Trees", IJRR 2005), and one entry point that
// runs any of them or picks the fastest for the model.
//
//   O(N^3)  M by the direct method, the symmetry-based method or the CRBA (crba.hpp), then a
//           factorisation: dense Cholesky, or LTDL / LTL on the tree's sparsity pattern.
//   O(N^2)  conjugate gradient on M y = ID(q, 0, y) (no M formed), plain or preconditioned by
//           diag(H R H*); the innovations factorisation M = [I + H phi K] D [I + H phi K]*;
//           M^-1 = [I - H psi K]* D^-1 [I - H psi K] formed explicitly (minv).
//   O(N)    the articulated-body algorithm (aba.hpp).
//
// Translation from Jain's serial-chain numbering (tip = 1, base = n) to plucker's trees
// (base = 0, parent(i) < i): "k+1" (inboard) becomes parent(k), "k-1" (outboard) becomes the
// children of k, phi(k+1, k) is the force transform child -> parent, X_up(k)^T. Operators
// that are lower triangular in Jain's numbering (phi, psi, I + H phi K) are therefore upper
// triangular in plucker's.
//
// Every function here follows the library's rules: inputs checked once at the API boundary,
// no heap allocation after Data(model) (except innovations_factors, a testing aid that
// returns fresh matrices, and forward_dynamics_choice, which builds its reason string), and
// SingularError naming the joint when M is singular (e.g. a massless moving subtree).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plucker/algorithms/aba.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker {

// ============================================================================================
// O(N^3) class: the joint-space inertia matrix (Jain 1991, §3), and CRB-inertia inverse dynamics
// ============================================================================================

/// M(q) by the direct method (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000, §3.2 method
/// 1; Jain 1991, §3): column k is the gravity-free inverse dynamics ID(q, 0, e_k) = D(q, 0, e_k) - D(q, 0, 0), nv calls
/// of the O(N) mass_times kernel on one set of poses. Full symmetric. Returns data.M.
const MatX& mass_matrix_direct(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

/// M(q) by the symmetry-based method (Jain 1991, §3): for column k only the subtree of k's joint
/// moves, so inverse dynamics on that subtree alone gives the rows of M in the subtree (the lower
/// triangle); the upper triangle follows by symmetry. Returns data.M.
const MatX& mass_matrix_symmetry(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

/// tau = M(q) y: the O(N) inverse-dynamics product without velocity, gravity or external
/// forces (Jain 1991, §4; the product conjugate gradient needs). Returns data.tau.
const VecX& mass_times(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                       const Eigen::Ref<const VecX>& y);

/// Inverse dynamics by composite rigid-body inertias (Jain 1991, Lemma 3.2, f = R alpha + y, with
/// the bias forces of Lemma 6.5): two decoupled recursions, alpha outward and the correction
/// force y inward together with R (Eq. 24). Equal to rnea(q, v, a). Returns data.tau.
const VecX& rnea_composite(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                           const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a);

// ============================================================================================
// Branch-induced sparsity (Featherstone 2005): factorisations in place on M
// ============================================================================================

/// M = L^T D L (L unit lower triangular, D diagonal) in place on data.M, which must hold M's upper
/// triangle (crba with either Triangle, mass_matrix_*): only the upper triangle is read. Afterwards
/// the strict upper triangle of data.M holds L^T (data.M(j, i) = L(i, j), j < i: row i of L is
/// contiguous in column-major storage), its diagonal holds D, its strict lower triangle is
/// untouched. L(i, j) != 0 only when j is a DoF-level ancestor of i: no fill-in outside M's own
/// pattern. Throws SingularError naming the joint of a vanishing pivot.
void factorize_ltdl(const Model& model, Data& data);
/// M = L^T L (L lower triangular, positive diagonal), in place as factorize_ltdl (L^T in the upper
/// triangle and diagonal of data.M).
void factorize_ltl(const Model& model, Data& data);

/// Solves M x = b with the factors left in data.M by factorize_ltdl; x holds b on entry.
void solve_ltdl(const Model& model, const Data& data, Eigen::Ref<VecX> x);
/// Solves M x = b with the factors left in data.M by factorize_ltl; x holds b on entry.
void solve_ltl(const Model& model, const Data& data, Eigen::Ref<VecX> x);

/// Floating-point operation counts of a factorisation and of one back-substitution.
struct FactorisationCost {
  long long factor_mul = 0, factor_add = 0, factor_div = 0, factor_sqrt = 0;
  long long solve_mul = 0, solve_add = 0, solve_div = 0;
  long long factor() const { return factor_mul + factor_add + factor_div + factor_sqrt; }
  long long solve() const { return solve_mul + solve_add + solve_div; }
  long long total() const { return factor() + solve(); }
};
/// LTDL on the model's topology (Featherstone 2005): with d_k the number of DoF-level ancestors
/// of DoF k, sum_k d_k divisions and sum_k d_k (d_k + 1) / 2 multiply-subtracts; the
/// back-substitution 2 sum_k d_k multiply-adds and nv divisions.
FactorisationCost ltdl_cost(const Model& model);
/// LTL: as LTDL plus nv square roots, and 2 nv divisions in the back-substitution.
FactorisationCost ltl_cost(const Model& model);
/// A dense Cholesky factorisation and solve of an n x n matrix (ignores every zero): the chain's
/// cost, (n^3 - n) / 6 multiply-subtracts. ltdl_cost of an unbranched chain equals it.
FactorisationCost dense_cholesky_cost(int n);

// ============================================================================================
// O(N^2) class (Jain 1991, §4)
// ============================================================================================

/// x = M(q)^-1 b by conjugate gradient (Jain 1991, §4; the loop of Golub & Van Loan, "Matrix Computations"): every M p
/// is the O(N) product mass_times on one set of poses; M is never formed. With `preconditioned`, the preconditioner is
/// Lambda = diag(H R H*) (Jain 1991; Fijany & Scheid, "Efficient Conjugate Gradient Algorithms for Computation of the
/// Manipulator Forward Dynamics", 1989), the d x d diagonal blocks of M from the composite inertias R, O(N). Iterates
/// until the true residual |b - M x| is at most tolerance |b|, or at the floor of rounding (a backward error of 10 eps
/// for the system scaled by M's diagonal, see Data::CgReport), and reports iterations, relative residual and backward
/// error in data.cg; throws ConvergenceError (with iterations and relative residual) when max_iterations (default 20
/// nv, a safety net) pass first. Throws SingularError naming the joint when a block of diag(H R H*) is singular
/// (massless subtree) or when p^T M p vanishes. forward_dynamics(method cg or pcg) uses tolerance 1e-14.
const VecX& solve_conjugate_gradient(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                     const Eigen::Ref<const VecX>& b, bool preconditioned, double tolerance = 1e-14,
                                     int max_iterations = -1);

/// The innovations factors of Jain 1991, Lemma 6.2, as dense matrices, M = L D L^T with
/// L = I + H phi K (unit upper triangular in plucker's numbering: L(i, j) = H(i) phi(i, j) G(j)
/// for joint(i) a strict ancestor of joint(j)) and D = H P H* block diagonal (d x d per joint).
/// For 1-DoF joints, L^T is the L of factorize_ltdl and D its diagonal. A testing aid:
/// O(N depth) work, allocates the two matrices.
struct InnovationsFactors {
  MatX L, D;
};
InnovationsFactors innovations_factors(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

/// x = M(q)^-1 b by the innovations factorisation (Jain 1991, §4, triangularised equations):
/// the factors P, D, G (O(N), Jain Eq. 45), then (a) [I + H phi K] e = b and x' = D^-1 e,
/// (b) [I + H phi K]* x = x', each triangular solve an O(N) recursion over the tree.
/// Returns data.fd_x.
const VecX& solve_innovations(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                              const Eigen::Ref<const VecX>& b);

// ============================================================================================
// The operator form of the O(N) class: M^-1 in closed form (Jain 1991, Lemmas 6.1-6.4)
// ============================================================================================

/// M(q)^-1 = [I - H psi K]* D^-1 [I - H psi K] (Lemma 6.4) formed explicitly in O(N^2) without
/// forming or factorising M: the articulated-body sweeps of Eq. 46 run on the matrix-valued input
/// T = I (all unit joint forces at once). Full symmetric nv x nv. Throws SingularError naming the
/// joint. Returns data.Minv.
const MatX& minv(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

// ============================================================================================
// The global formulation (Featherstone & Orin 2000, §3.5, Eqs. 23-29): the tree as N unconstrained bodies
// ============================================================================================

/// M = H^T P^-T I P^-1 H, the Newton-Euler factorisation of the global formulation, applied as
/// operators (P the incidence matrix, H = diag(h_i), I = diag(I_i), world coordinates); O(N nv).
/// The reference form against which the CRBA is checked. Returns data.M.
const MatX& mass_matrix_newton_euler(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

/// Baraff's linear-time method (Featherstone & Orin 2000, Eq. 27: O(N) nonzero blocks and a perfect
/// elimination order): qdd from the KKT system of the N bodies' accelerations a_i and the joints' constraint
/// forces lambda_i, in link coordinates (each body's unknowns in its own frame; joint i's constraint
/// T_i^T (a_i - X_up(i) a_parent) = T_i^T c_i between neighbouring frames), by a block LDL^T leaves
/// first: body i, then joint i. O(N), no allocation once warm. External forces as in aba. Throws
/// SingularError naming the joint by the library's one criterion (the joint's pivot h_i^T I^A_i h_i,
/// which the elimination exposes, at most 1e-12 of M_kk), as the ABA does. Returns data.qdd.
const VecX& forward_dynamics_global_sparse(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                           const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                           ExternalForces f_ext = {}, ReferenceFrame frame = ReferenceFrame::World);

/// The topology the Constraint-Force Algorithm covers (Featherstone & Fijany 1999): an unbranched
/// main chain from the base (the path to the deepest leaf) with short branches off it, each at most
/// kCfaMaxBranchBodies bodies. `chain` lists the main chain's bodies base to tip; `reason` says why
/// a model is not covered (empty when it is).
inline constexpr int kCfaMaxBranchBodies = 12;
struct CfaTopology {
  bool covered = true;
  std::vector<int> chain;
  std::string reason;
};
CfaTopology cfa_topology(const Model& model);

/// How cfa solves the block-tridiagonal Eq. 28: serially (block Cholesky, O(N) depth) or by cyclic
/// reduction (O(log N) depth on O(N) processors, O(N) work).
enum class CfaSolver : int { Serial, CyclicReduction };

/// The Constraint-Force Algorithm (Featherstone & Fijany 1999; Featherstone & Orin 2000, Eq. 28): for an
/// unbranched chain, T^T I^-1 T lambda = T^T a_0 - T^T I^-1 (f_a - v x* I v) is block-tridiagonal in
/// the joints' constraint forces lambda (blocks of 6 - d_i rows: any joint type, a floating base's
/// free joint has none); solved for lambda, then a_i = I_i^-1 (f_i + constraint forces) and qdd_i
/// from the joint's motion. Short branches (cfa_topology) are first folded into the chain body they
/// hang from by the elimination of global_sparse (their articulated inertia and bias). Throws
/// InvalidArgument for a topology it does not cover, SingularError naming the body for a chain body
/// whose inertia (with its branches) is singular (I^-1 is needed), or the joint (as global_sparse)
/// for a branch. Returns data.qdd.
const VecX& forward_dynamics_cfa(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                 const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                 ExternalForces f_ext = {}, ReferenceFrame frame = ReferenceFrame::World,
                                 CfaSolver solver = CfaSolver::CyclicReduction);

/// Floating-point operations of the last forward_dynamics_cfa on this Data, added up at each block
/// operation as it runs by formula (an m x m Cholesky m^3/3 + m^2/2, a solve with k right-hand sides
/// 2 m^2 k, an (a x b)(b x c) product 2abc; the velocity / bias-force pass by a fixed estimate per
/// body; src/algorithms/global_kernels.hpp): `total` is the work, `critical_path`
/// the longest chain of dependent operations when every body, joint and cyclic-reduction task runs
/// on its own processor (per phase, the largest task; branches counted serially). `levels`: the
/// cyclic-reduction levels (ceil log2 of the chain length) or the chain length for the serial solver.
struct CfaOperationCounts {
  int chain_bodies = 0, branch_bodies = 0, levels = 0;
  double total = 0.0, critical_path = 0.0;
};
CfaOperationCounts cfa_operation_counts(const Data& data);

// ============================================================================================
// The divide-and-conquer class: O(log N) depth on O(N) processors (Featherstone 1999, DCA)
// ============================================================================================

/// Which coordinates the divide-and-conquer algorithm writes each handle's equation in.
///   Basic:    one frame for every handle, the world frame (the presentation of Featherstone
///             1999 part 1): a body far from the origin has inverse inertias with entries that
///             grow as its distance squared.
///   Accurate: each handle in the frame of the body its joint moves (the ABA's body
///             coordinates), turned so that a joint about one general axis turns about z (its
///             S and T then exact): the assembly formula is unchanged, the leaves and joint
///             subspaces are expressed locally. The documentation's divide-and-conquer page gives the
///             measured difference.
enum class DcaVariant : int { Basic, Accurate };

/// qdd = FD(q, v, tau) by the divide-and-conquer algorithm (Featherstone 1999): every body starts as a
/// subassembly with the articulated-body equation a_i = sum_j Phi_ij f_j + b_i over its handles
/// (the joints that connect it to the rest); the assembly formula joins two subassemblies across
/// a joint by solving for the joint's constraint force, along a balanced binary assembly tree
/// (the joint that splits a subassembly most evenly is assembled last); a disassembly pass from
/// the root gives every joint force and acceleration. With threads > 1 each level of the
/// assembly tree runs on a pool of that many threads (kept in data, started on the first call
/// with that count). f_ext and frame as in aba. Kinematic trees only (a model with loop joints
/// is solved as its spanning tree, as by forward_dynamics; constrained_forward_dynamics with
/// ConstrainedMethod::Dca or DcaAccurate closes the loops within the same assembly). A body of singular spatial inertia
/// (massless, a point mass) is given a regularising inertia whose effect is cancelled exactly by a
/// force solved for at the root; with such bodies the ABA's pivots decide whether M is singular
/// (SingularError naming the joint). No heap allocation once warm (with threads fixed). Returns
/// data.qdd.
const VecX& forward_dynamics_dca(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                 const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                 DcaVariant variant = DcaVariant::Accurate, int threads = 1, ExternalForces f_ext = {},
                                 ReferenceFrame frame = ReferenceFrame::World);

/// The assembly tree of a model and the floating-point operations of one forward_dynamics_dca
/// call (multiplications + additions of the dense 6x6 operations as implemented, counted per
/// node from its handle count and joint DoF): `total` over every node, `critical_path` the most
/// on any chain of dependent nodes (leaf -> root in the assembly, root -> leaf in the
/// disassembly): the time on unboundedly many processors. `kinematics` is the same depth of the
/// pass of poses, velocities and bias forces that precedes them: a parallel prefix over the
/// tree's paths, ceil(log2(depth)) rounds.
struct DcaCost {
  int levels = 0;       ///< height of the assembly tree (levels run in parallel)
  int max_handles = 0;  ///< most handles on any subassembly
  long long total = 0, critical_path = 0, kinematics = 0;
};
DcaCost dca_cost(const Model& model, DcaVariant variant = DcaVariant::Accurate);

// ============================================================================================
// One entry point
// ============================================================================================

enum class ForwardDynamicsMethod : int {
  Aba,                ///< "aba": articulated-body algorithm, O(N)
  CrbaCholesky,       ///< "crba_cholesky": CRBA + dense Cholesky (forward_dynamics_crba)
  CrbaLtdl,           ///< "crba_ltdl": CRBA + sparse LTDL on the tree's pattern
  DirectCholesky,     ///< "direct_cholesky": mass_matrix_direct + dense Cholesky
  SymmetryCholesky,   ///< "symmetry_cholesky": mass_matrix_symmetry + dense Cholesky
  ConjugateGradient,  ///< "cg": conjugate gradient on mass_times
  PreconditionedCG,   ///< "pcg": conjugate gradient preconditioned by diag(H R H*)
  Innovations,        ///< "innovations": innovations factorisation, two triangular recursions
  Minv,               ///< "minv": qdd = M^-1 (tau - C) with M^-1 from minv
  GlobalSparse,       ///< "global_sparse": Baraff's O(N) sparse LDL^T of Eq. 27 (link coordinates)
  Cfa,                ///< "cfa": the Constraint-Force Algorithm, Eq. 28 by cyclic reduction
  Dca,                ///< "dca": divide-and-conquer algorithm, DcaVariant::Basic, one thread
  DcaAccurate,        ///< "dca_accurate": divide-and-conquer algorithm, DcaVariant::Accurate
  Auto,               ///< "auto": the method forward_dynamics_choice picks for the model
};

/// Every method, in the order above (Auto last).
std::span<const ForwardDynamicsMethod> forward_dynamics_methods();
/// "aba", "crba_cholesky", ... (as in the enum's comments).
std::string_view to_string(ForwardDynamicsMethod method);
/// The inverse of to_string; throws InvalidArgument listing the valid names.
ForwardDynamicsMethod parse_forward_dynamics_method(std::string_view name);

/// qdd = FD(q, v, tau) by `method`. f_ext (empty: none) and frame as in aba / rnea. The methods
/// other than the ABA first compute C = rnea(q, v, 0, f_ext), then solve M qdd = tau - C. Throws
/// SingularError naming the joint where M is singular. Returns data.qdd.
const VecX& forward_dynamics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                             const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                             ForwardDynamicsMethod method, ExternalForces f_ext = {},
                             ReferenceFrame frame = ReferenceFrame::World);

/// Which method Auto runs on this model, and why: the ABA and CRBA + LTDL are the two candidates
/// (the other methods never beat both), compared by predicted time from the cost formulas (the
/// sums of DoF depths of ltdl_cost) with per-operation constants calibrated by measurement. The
/// divide-and-conquer algorithm is considered too: its one-thread time predicted from dca_cost's
/// operation count (it is never the fastest on one thread, and Auto runs one thread).
struct ForwardDynamicsChoice {
  ForwardDynamicsMethod method = ForwardDynamicsMethod::Aba;
  std::string reason;
  double predicted_ns_aba = 0.0, predicted_ns_crba_ltdl = 0.0, predicted_ns_dca = 0.0;
};
ForwardDynamicsChoice forward_dynamics_choice(const Model& model);

}  // namespace plucker
