// The Constraint-Force Algorithm (Featherstone & Fijany, "A Technique for Analyzing Constrained
// Rigid-Body Systems, and Its Application to the Constraint Force Algorithm", IEEE T-RA 1999; paper
// 000 §3.5: "For the special case of an unbranched chain, the coefficient matrix in Eq. 28 is
// block-tridiagonal ... solved in O(log(N)) time on a parallel computer with O(N) processors").
//
// Eq. 28, T^T I^-1 T lambda = T^T a_0 - T^T I^-1 (f_a - v x* I v), in the link coordinates of
// global_kernels.hpp, for the main chain's bodies j = 0..L-1 (chain position; body j's parent is
// j - 1, the base for j = 0), with Phi_j = I_j^-1, g_j = Phi_j y_j (body j's acceleration were its
// joints free) and K_j = X_j^T T_j (joint j's constraint basis as a force on body j - 1):
//   A_jj     = T_j^T Phi_j T_j + K_j^T Phi_{j-1} K_j       (the second term absent for j = 0)
//   A_j,j+1  = -T_j^T Phi_j K_{j+1} = A_j+1,j^T
//   b_j      = z_j - T_j^T g_j + K_j^T g_{j-1}             (g_{-1} = a_0 = -g, the base's)
// Blocks of m_j = 6 - d_j rows: any joint type (a free joint's block is empty, so a floating base
// needs nothing special). Then
//   a_j   = g_j + Phi_j (T_j lambda_j - K_{j+1} lambda_{j+1})   (Eq. 25 solved for a)
//   qdd_j = W_j^T (a_j - X_j a_{j-1} - c_j)                       (Eq. 29)
// Every step but the solve of Eq. 28 is local to a body or a joint (O(1) depth on one processor per
// body). The solve is serial (block Cholesky, O(N) depth) or by cyclic reduction: eliminating the
// odd-numbered unknowns of a block-tridiagonal system leaves a block-tridiagonal system in the even
// ones, half as long; log2 L levels, each of independent O(1) tasks; then back-substitution, level
// by level in reverse.
//
// Short branches (Featherstone & Fijany: "short branches off the main chain"): a body off the main
// chain is eliminated first by Baraff's step (global_kernels.hpp), leaves first, which adds its
// subtree's articulated inertia and bias to the chain body it hangs from; Eq. 28 then runs on the
// chain with those folded in, and the branch bodies are back-substituted from the chain's a.
#include "algorithms/global_kernels.hpp"

namespace plucker {

CfaTopology cfa_topology(const Model& model) {
  const int n = model.nbodies();
  CfaTopology t;
  std::vector<int> height(static_cast<std::size_t>(n), 1), size(static_cast<std::size_t>(n), 1);
  for (int i = n - 1; i > 0; --i) {
    const auto p = static_cast<std::size_t>(model.parent(i));
    height[p] = std::max(height[p], height[static_cast<std::size_t>(i)] + 1);
    size[p] += size[static_cast<std::size_t>(i)];
  }
  // The main chain: from the base, always into the child with the tallest subtree (the path to the
  // deepest leaf), so that what is left off it is as short as possible.
  for (int cur = 0; !model.children(cur).empty();) {
    int next = model.children(cur)[0];
    for (int c : model.children(cur))
      if (height[static_cast<std::size_t>(c)] > height[static_cast<std::size_t>(next)]) next = c;
    t.chain.push_back(next);
    cur = next;
  }
  std::vector<char> on_chain(static_cast<std::size_t>(n), 0);
  on_chain[0] = 1;
  for (int i : t.chain) on_chain[static_cast<std::size_t>(i)] = 1;
  for (int i = 1; i < n && t.covered; ++i) {
    const int p = model.parent(i);
    if (on_chain[static_cast<std::size_t>(i)] || !on_chain[static_cast<std::size_t>(p)]) continue;
    if (size[static_cast<std::size_t>(i)] > kCfaMaxBranchBodies) {
      t.covered = false;
      t.reason = "joint '" + model.joint_name(i) + "' starts a branch of " + std::to_string(size[i]) +
                 " bodies off the main chain at body '" + model.body_name(p) +
                 "'; the constraint-force algorithm covers an unbranched chain with short branches (at most " +
                 std::to_string(kCfaMaxBranchBodies) + " bodies each): use 'global_sparse' or 'aba'";
    }
  }
  return t;
}

CfaOperationCounts cfa_operation_counts(const Data& data) {
  const auto* ws = detail::find_workspace<detail::GlobalWorkspace>(data);
  return ws ? ws->counts : CfaOperationCounts{};
}

namespace {

using detail::flops_cholesky;
using detail::flops_product;
using detail::flops_solve;
using detail::GlobalWorkspace;
using detail::MatB;
using detail::VecB;

int rows(const MatB& M) { return static_cast<int>(M.rows()); }

void factor_block(GlobalWorkspace& ws, const Model& model, int j, const char* fn) {
  ws.A_llt[j].compute(ws.A[j]);
  if (ws.A_llt[j].info() != Eigen::Success) {
    const int i = ws.topology.chain[static_cast<std::size_t>(j)];
    throw SingularError(std::string(fn) + ": Eq. 28's block of joint '" + model.joint_name(i) +
                        "' is not positive definite (the chain's constraint forces are not determined)");
  }
}

/// Eq. 28 by block Cholesky, tip-ward elimination then back-substitution: O(L) depth.
void solve_serial(const Model& model, GlobalWorkspace& ws, int L, const char* fn) {
  CfaOperationCounts& n = ws.counts;
  for (int j = 0; j < L; ++j) {
    if (j > 0) {  // A_j -= A_j,j-1 A_j-1^-1 A_j-1,j;  b_j -= A_j,j-1 A_j-1^-1 b_j-1
      const MatB Y = ws.A_llt[j - 1].solve(ws.Ur[j - 1]);
      const VecB yb = ws.A_llt[j - 1].solve(ws.b[j - 1]);
      ws.A[j].noalias() -= ws.Ul[j] * Y;
      ws.b[j].noalias() -= ws.Ul[j] * yb;
      const int m = rows(ws.A[j]), ml = rows(ws.A[j - 1]);
      n.total += flops_solve(ml, m + 1) + flops_product(m, ml, m) + flops_product(m, ml, 1);
    }
    factor_block(ws, model, j, fn);
    n.total += flops_cholesky(rows(ws.A[j]));
  }
  const auto lam = [&](int j) -> VecB& { return ws.lambda[ws.topology.chain[static_cast<std::size_t>(j)]]; };
  for (int j = L - 1; j >= 0; --j) {
    VecB rhs = ws.b[j];
    if (j + 1 < L) rhs.noalias() -= ws.Ur[j] * lam(j + 1);
    lam(j) = ws.A_llt[j].solve(rhs);
    n.total += flops_solve(rows(ws.A[j]), 1) + (j + 1 < L ? flops_product(rows(ws.A[j]), rows(ws.A[j + 1]), 1) : 0);
  }
  ws.counts.levels = L;
}

/// Eq. 28 by cyclic reduction: at stride s, the unknowns at odd multiples of s are eliminated
/// (each from its own block, independently), and each even multiple j takes their Schur complement:
///   A_j -= A_j,l A_l^-1 A_l,j + A_j,r A_r^-1 A_r,j,   b_j -= A_j,l A_l^-1 b_l + A_j,r A_r^-1 b_r,
///   A_j,j-2s = -A_j,l A_l^-1 A_l,l-s,   A_j,j+2s = -A_j,r A_r^-1 A_r,r+s      (l = j - s, r = j + s)
/// leaving a block-tridiagonal system at stride 2s. The eliminated unknowns keep their level's
/// blocks for the back-substitution lambda_l = A_l^-1 (b_l - A_l,l-s lambda_l-s - A_l,l+s lambda_l+s).
/// The critical path counts, per level, the largest elimination and the largest update.
void solve_cyclic_reduction(const Model& model, GlobalWorkspace& ws, int L, const char* fn) {
  CfaOperationCounts& n = ws.counts;
  int s = 1;
  for (; s < L; s *= 2) {
    ++n.levels;
    double longest = 0.0;
    for (int l = s; l < L; l += 2 * s) {  // independent: factor the eliminated blocks
      factor_block(ws, model, l, fn);
      const double f = flops_cholesky(rows(ws.A[l]));
      n.total += f;
      longest = std::max(longest, f);
    }
    n.critical_path += longest;
    longest = 0.0;
    for (int j = 0; j < L; j += 2 * s) {  // independent: each kept unknown takes its neighbours' complement
      const int m = rows(ws.A[j]);
      double f = 0.0;
      MatB new_left(m, 0), new_right(m, 0);
      if (j - s >= 0) {
        const int l = j - s, ml = rows(ws.A[l]);
        ws.A[j].noalias() -= ws.Ul[j] * ws.A_llt[l].solve(ws.Ur[l]);
        ws.b[j].noalias() -= ws.Ul[j] * ws.A_llt[l].solve(ws.b[l]);
        f += flops_solve(ml, m + 1) + flops_product(m, ml, m + 1);
        if (l - s >= 0) {
          new_left.noalias() = -ws.Ul[j] * ws.A_llt[l].solve(ws.Ul[l]);
          f += flops_solve(ml, rows(ws.A[l - s])) + flops_product(m, ml, rows(ws.A[l - s]));
        }
      }
      if (j + s < L) {
        const int r = j + s, mr = rows(ws.A[r]);
        ws.A[j].noalias() -= ws.Ur[j] * ws.A_llt[r].solve(ws.Ul[r]);
        ws.b[j].noalias() -= ws.Ur[j] * ws.A_llt[r].solve(ws.b[r]);
        f += flops_solve(mr, m + 1) + flops_product(m, mr, m + 1);
        if (r + s < L) {
          new_right.noalias() = -ws.Ur[j] * ws.A_llt[r].solve(ws.Ur[r]);
          f += flops_solve(mr, rows(ws.A[r + s])) + flops_product(m, mr, rows(ws.A[r + s]));
        }
      }
      ws.Ul[j] = new_left;
      ws.Ur[j] = new_right;
      n.total += f;
      longest = std::max(longest, f);
    }
    n.critical_path += longest;
  }
  const auto lam = [&](int j) -> VecB& { return ws.lambda[ws.topology.chain[static_cast<std::size_t>(j)]]; };
  factor_block(ws, model, 0, fn);  // the last unknown left
  lam(0) = ws.A_llt[0].solve(ws.b[0]);
  const double f0 = flops_cholesky(rows(ws.A[0])) + flops_solve(rows(ws.A[0]), 1);
  n.total += f0;
  n.critical_path += f0;
  for (s /= 2; s >= 1; s /= 2) {  // back-substitution, level by level in reverse
    double longest = 0.0;
    for (int l = s; l < L; l += 2 * s) {
      VecB rhs = ws.b[l];
      rhs.noalias() -= ws.Ul[l] * lam(l - s);
      double f = flops_product(rows(ws.A[l]), rows(ws.A[l - s]), 1);
      if (l + s < L) {
        rhs.noalias() -= ws.Ur[l] * lam(l + s);
        f += flops_product(rows(ws.A[l]), rows(ws.A[l + s]), 1);
      }
      lam(l) = ws.A_llt[l].solve(rhs);
      f += flops_solve(rows(ws.A[l]), 1);
      n.total += f;
      longest = std::max(longest, f);
    }
    n.critical_path += longest;
  }
}

}  // namespace

const VecX& forward_dynamics_cfa(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                 const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                 ExternalForces f_ext, ReferenceFrame frame, CfaSolver solver) {
  const char* fn = "forward_dynamics_cfa";
  const detail::DataUse use(model, data, fn);
  detail::check_state(model, fn, q, v, tau, "tau", f_ext);
  GlobalWorkspace& ws = detail::workspace<GlobalWorkspace>(model, data);
  if (!ws.topology.covered) throw InvalidArgument(std::string(fn) + ": " + ws.topology.reason);
  const int n = model.nbodies(), L = static_cast<int>(ws.topology.chain.size());
  const std::vector<int>& chain = ws.topology.chain;
  CfaOperationCounts& counts = ws.counts;
  counts = CfaOperationCounts{};
  counts.chain_bodies = L;
  counts.branch_bodies = n - 1 - L;
  detail::global_setup(model, data, ws, q.data(), v.data(), tau.data(), f_ext, frame);
  double longest = 0.0;  // setup: one task per body
  for (int i = 1; i < n; ++i) {
    const double f = 36.0 * 4 + 6.0 * 6 * model.joint_nv(i) * 2;  // v, c, I v, v x* I v, W tau, z (approx.)
    counts.total += f;
    longest = std::max(longest, f);
  }
  counts.critical_path += longest;

  // 1. Branches, leaves first: fold each into the chain body it hangs from (Baraff's step). A branch
  //    runs serially on one processor; branches run in parallel.
  std::vector<double>& branch_cost = ws.branch_cost;
  std::fill(branch_cost.begin(), branch_cost.end(), 0.0);
  for (int i = n - 1; i > 0; --i) {
    if (ws.chain[i]) continue;
    const double f = detail::eliminate_body(model, data, ws, i, fn);
    branch_cost[static_cast<std::size_t>(ws.branch_root[i])] += f;
    counts.total += f;
  }
  longest = 0.0;
  for (double f : branch_cost) longest = std::max(longest, f);
  counts.critical_path += longest;

  // 2. Eq. 28's blocks, one task per chain body (Phi_j, g_j, K_j), then one per joint (A, b).
  double longest_body = 0.0, longest_joint = 0.0;
  for (int j = 0; j < L; ++j) {
    const int i = chain[static_cast<std::size_t>(j)];
    const Mat6& I = ws.D[i];  // I_i with the branches folded in
    // I^-1 exists when every pivot of I = L L^T passes the library's test against its own diagonal
    // entry (the body's inertia about that axis with the others locked), as M's pivots against M_kk.
    ws.Phi_llt[j].compute(I);
    bool regular = ws.Phi_llt[j].info() == Eigen::Success;
    for (int k = 0; k < 6 && regular; ++k) {
      const double L_kk = ws.Phi_llt[j].matrixLLT()(k, k);
      regular = detail::pivot_accepted(L_kk * L_kk, I(k, k));
    }
    if (!regular)
      throw SingularError(std::string(fn) + ": body '" + model.body_name(i) + "' (joint '" + model.joint_name(i) +
                          "') has a singular spatial inertia (with its branches): Eq. 28 needs I^-1 of every "
                          "main-chain body (a massless or point-mass link); use 'global_sparse' or 'aba'");
    ws.Phi[j] = ws.Phi_llt[j].solve(Mat6::Identity());  // Phi_j = I_j^-1
    ws.g[j] = ws.Phi_llt[j].solve(ws.y[i]);             // g_j = I_j^-1 y_j
    ws.K[j].noalias() = ws.X[i].transpose() * ws.T[i];  // K_j = X_j^T T_j
    const int m = static_cast<int>(ws.T[i].cols());
    const double f = flops_cholesky(6) + flops_solve(6, 7) + flops_product(6, 6, m);
    counts.total += f;
    longest_body = std::max(longest_body, f);
  }
  for (int j = 0; j < L; ++j) {
    const int i = chain[static_cast<std::size_t>(j)];
    const detail::MatT& T = ws.T[i];
    const int m = static_cast<int>(T.cols());
    const detail::MatF TtPhi = T.transpose() * ws.Phi[j];
    ws.A[j].noalias() = TtPhi * T;                          // T_j^T Phi_j T_j
    ws.b[j].noalias() = ws.z[i] - T.transpose() * ws.g[j];  // z_j - T_j^T g_j
    double f = flops_product(m, 6, 6) + flops_product(m, 6, m) + flops_product(m, 6, 1);
    if (j > 0) {
      const detail::MatF KtPhi = ws.K[j].transpose() * ws.Phi[j - 1];
      ws.A[j].noalias() += KtPhi * ws.K[j];                    // + K_j^T Phi_j-1 K_j
      ws.b[j].noalias() += ws.K[j].transpose() * ws.g[j - 1];  // + K_j^T g_j-1
      f += flops_product(m, 6, 6) + flops_product(m, 6, m) + flops_product(m, 6, 1);
    } else {
      ws.b[j].noalias() += ws.K[j].transpose() * ws.a[0];  // + K_0^T a_0
    }
    if (j + 1 < L) {
      ws.Ur[j].noalias() = -(TtPhi * ws.K[j + 1]);  // -T_j^T Phi_j K_j+1
      f += flops_product(m, 6, static_cast<int>(ws.K[j + 1].cols()));
    } else {
      ws.Ur[j].resize(m, 0);
    }
    counts.total += f;
    longest_joint = std::max(longest_joint, f);
  }
  if (L > 0) ws.Ul[0].resize(static_cast<int>(ws.A[0].rows()), 0);
  for (int j = 1; j < L; ++j) ws.Ul[j] = ws.Ur[j - 1].transpose();  // A_j,j-1 = A_j-1,j^T
  counts.critical_path += longest_body + longest_joint;

  // 3. Eq. 28 for lambda.
  if (L > 0) {
    if (solver == CfaSolver::Serial) {
      const double before = counts.total;
      solve_serial(model, ws, L, fn);
      counts.critical_path += counts.total - before;  // one dependent sequence
    } else {
      solve_cyclic_reduction(model, ws, L, fn);
    }
  }

  // 4. Accelerations and qdd, one task per chain body.
  VecX& qdd = detail::sized(data.qdd, model.nv());
  longest = 0.0;
  for (int j = 0; j < L; ++j) {
    const int i = chain[static_cast<std::size_t>(j)];
    Vec6 f = ws.y[i];  // y_j + T_j lambda_j - K_j+1 lambda_j+1: the body's total force
    f.noalias() += ws.T[i] * ws.lambda[i];
    if (j + 1 < L) f.noalias() -= ws.K[j + 1] * ws.lambda[chain[static_cast<std::size_t>(j + 1)]];
    ws.a[i].noalias() = ws.Phi[j] * f;  // a_j = I_j^-1 (...)   (Eq. 25)
    counts.total += 2 * flops_product(6, 6, 1) + flops_product(6, 6, 1);
  }
  for (int j = 0; j < L; ++j) {
    const int i = chain[static_cast<std::size_t>(j)], d = model.joint_nv(i);
    const Vec6& a_p = ws.a[model.parent(i)];
    if (d > 0)  // qdd_j = W_j^T (a_j - X_j a_j-1 - c_j)   (Eq. 29)
      qdd.segment(model.idx_v(i), d).noalias() = ws.W[i].transpose() * (ws.a[i] - ws.X[i] * a_p - ws.c[i]);
    const double f = flops_product(6, 6, 1) + flops_product(d, 6, 1) + 12.0;
    counts.total += f;
    longest = std::max(longest, f);
  }
  counts.critical_path += 3 * flops_product(6, 6, 1) + longest;

  // 5. Branches, root first, from the chain's accelerations.
  std::fill(branch_cost.begin(), branch_cost.end(), 0.0);
  for (int i = 1; i < n; ++i) {
    if (ws.chain[i]) continue;
    const double f = detail::back_substitute_body(model, ws, i, qdd.data());
    branch_cost[static_cast<std::size_t>(ws.branch_root[i])] += f;
    counts.total += f;
  }
  longest = 0.0;
  for (double f : branch_cost) longest = std::max(longest, f);
  counts.critical_path += longest;
  detail::check_finite_result(model, data, qdd, fn, "qdd");
  return qdd;
}

}  // namespace plucker
