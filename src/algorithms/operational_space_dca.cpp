// The hybrid divide-and-conquer method of operational_space ("dca"): Lambda^-1 = J M^-1 J^T as
// the inverse articulated inertia of the whole tree seen at the task bodies, assembled by the
// divide-and-conquer articulated-body algorithm's assembly formula (Featherstone 1999, part 1).
// The specification lists the 2014 result only by its abstract (O(log n) operational-space
// inertia on parallel processors for serial chains, serial processing within subchains and the
// DCA across them); the formulas below are derived, not read (the documentation page
// "Operational-space dynamics", section "The hybrid divide-and-conquer method").
//
// A subassembly C carries, over its handles i, j (the joints that connect it to the rest of the
// tree, and one task handle on each task body), the inverse articulated inertia Phi:
//   a_i = sum_j Phi_ij f_j            (velocity-free: Lambda^-1 is a property of q alone)
// with a_i the acceleration of the body at handle i and f_j the force applied through handle j,
// each handle in the coordinates of its body (joint k: body k; a task handle: the task body).
//   leaf (body b):  Phi_ij = X_i I_b^-1 X_j^T, X_i = b's coordinates -> handle i's (X_up[c] for
//                   the joint of a child c, the identity for b's own joint and its task handle)
// Joining A (holding parent(k)) and B (holding body k) across joint k, with T an orthonormal
// basis of the constraint forces (T^T S_k = 0) and no joint force (tau = 0):
//   Phi  = Phi^A_kk + Phi^B_kk,   Y = T (T^T Phi T)^-1 T^T
//   G_i  = -Phi^A_ik (i in A),  +Phi^B_ik (i in B)
//   Phi^C_ij = [i, j on one side] Phi_ij - G_i Y G_j^T
// The assembly tree: a set of bodies larger than the segment length L is split at the joint
// that halves it most evenly (the DCA); a set of at most L bodies, a subchain, is assembled
// serially, one body at a time in ascending order (each step the same formula with a leaf as
// B). The root's handles are the task handles only: its Phi between task bodies a, b is
// J_a M^-1 J_b^T in body coordinates, and Lambda^-1's block of tasks a, b is E_a^T Phi_ab E_b.
//
// Bodies of singular inertia (massless links): I + dI is inverted instead (dI the mean inertia of
// the massive bodies) and a virtual handle v on the body carries the force f_v = dI a_v that
// cancels dI up to the root, where with D = diag(dI)
//   Phi_tt <- Phi_tt + Phi_tv (1 - D Phi_vv)^-1 D Phi_vt.
// Nodes of one height are independent and run on a thread pool; every node's arithmetic is the
// same whichever thread runs it, so the result is bit-identical for any thread count.
#include "algorithms/operational_space_dca.hpp"

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>

#include "algorithms/dca_loops.hpp"
#include "algorithms/fd_kernels.hpp"
#include "algorithms/thread_pool.hpp"

namespace plucker::detail {
namespace {

/// An int index as a container index (the arithmetic stays in int: sizes are small).
constexpr std::size_t ix(int i) { return static_cast<std::size_t>(i); }

using Mat6x = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;              // 6 x c, no heap
using MatK = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;  // c x c, no heap

/// A^-1 of a symmetric 6x6 A by Cholesky, each pivot tested with the library's criterion.
bool invert_spd6(const Mat6& A, Mat6& A_inv) {
  Eigen::LLT<Mat6> llt(A);
  if (llt.info() != Eigen::Success) return false;
  const Mat6 L = llt.matrixL();
  for (int k = 0; k < 6; ++k)
    if (!pivot_accepted(L(k, k) * L(k, k), A(k, k))) return false;
  A_inv = llt.solve(Mat6::Identity());
  A_inv = (0.5 * (A_inv + A_inv.transpose())).eval();
  return true;
}

// Operation counts (multiplications + additions) of the steps as implemented.
constexpr long long kMatMat = 396;  // 6x6 times 6x6
constexpr long long kAdd6 = 36;     // 6x6 addition
long long leaf_ops(int h) { return h * kMatMat + (h * (h + 1) / 2) * kMatMat; }
long long assemble_ops(int h, int c) {
  long long ops = kAdd6;
  if (c > 0) ops += 6 * 6 * c * 2 + c * c * 6 * 2 + c * c * c / 3 + c * c * 6 * 2 + 6 * 6 * c * 2 + h * kMatMat;
  ops += (h * (h + 1) / 2) * (c > 0 ? kMatMat + kAdd6 : 0);
  return ops;
}

constexpr int kNoFailure = 0;

}  // namespace

struct OsDcaState {
  OsDcaState(const Model& model, std::span<const char> task_body, int segment);

  int nodes() const { return 2 * n - 1; }
  int handles(int node) const { return h_begin[node + 1] - h_begin[node]; }
  Mat6& block(int node, int r, int s) { return phi[ix(phi_begin[node] + r * handles(node) + s)]; }
  static int joint_node(int n, int k) { return n + k - 1; }

  int n = 0, segment = 1, root = 0, max_handles = 0, levels = 0, subchains = 0;
  std::vector<char> key;                      ///< per body: a task body (the tree depends on it)
  std::vector<Mat6> I_inv, D_reg;             ///< per body: (I + dI)^-1; dI (zero unless regularised)
  std::vector<int> regularised;               ///< bodies of singular inertia, ascending
  std::vector<Mat6x> T;                       ///< per joint: null(S^T) in body coordinates
  std::vector<int> node_a, node_b;            ///< per joint k: the subassemblies joined
  std::vector<int> slot_a, slot_b;            ///< per joint k: its handle's index in node_a, node_b
  std::vector<int> h_begin, h_id;             ///< node's handles; id: joint k, n + b (task), 2n + b (virtual)
  std::vector<unsigned char> h_side;          ///< per slot of a joint node: 0 from node_a, 1 from node_b
  std::vector<int> h_local;                   ///< per slot of a joint node: index in that child
  std::vector<int> phi_begin;                 ///< node's h x h blocks (row-major) in phi
  std::vector<Mat6> phi;                      ///< every node's Phi blocks
  std::vector<int> height;                    ///< per node
  std::vector<int> level_begin, level_nodes;  ///< nodes by height (0: the leaves)
  std::vector<int> task_handle;               ///< per body: its task handle's index at the root (-1)
  // The root's correction for the virtual handles.
  int nt = 0, nr = 0;  ///< task handles, virtual handles at the root
  MatX Avv, DPvt, Xv;
  Eigen::PartialPivLU<MatX> lu;
  // Threads.
  int threads = 1;
  std::unique_ptr<ThreadPool> pool;
  std::vector<std::vector<Mat6>> scratch;  ///< per thread: 2 x max_handles
  std::atomic<int> next{0}, failed{kNoFailure};
};

OsDcaState::OsDcaState(const Model& model, std::span<const char> task_body, int seg)
    : n(model.nbodies()), segment(seg), key(task_body.begin(), task_body.end()) {
  I_inv.assign(ix(n), Mat6::Zero());
  D_reg.assign(ix(n), Mat6::Zero());
  T.resize(ix(n));
  for (int i = 1; i < n; ++i) {
    if (!invert_spd6(model.inertia(i).matrix(), I_inv[ix(i)])) regularised.push_back(i);
    ops::visit_joint(model, i, [&](const auto& joint, const auto&) {
      const int d = ops::joint_dofs(joint);
      Mat6x S(6, d);
      for (int k = 0; k < d; ++k) {
        ops::MotionT<double> m{};
        ops::add_column<double>(m, ops::column(joint, k), 1.0);
        S.col(k) = Motion(m).vector();
      }
      T[ix(i)] = null_space(S);
    });
  }
  if (!regularised.empty()) {  // dI: the mean mass and central inertia of the massive bodies
    double mass = 0.0;
    Mat3 I_c = Mat3::Zero();
    int count = 0;
    for (int i = 1; i < n; ++i) {
      if (std::find(regularised.begin(), regularised.end(), i) != regularised.end()) continue;
      mass += model.inertia(i).mass();
      I_c += model.inertia(i).inertia_com();
      ++count;
    }
    if (count == 0) mass = 1.0, I_c = 0.01 * Mat3::Identity(), count = 1;
    const RigidBodyInertia reg = RigidBodyInertia::from_mass_com_inertia(mass / count, Vec3::Zero(), I_c / count);
    for (int i : regularised) {
      D_reg[ix(i)] = reg.matrix();
      const Mat6 sum = model.inertia(i).matrix() + reg.matrix();
      if (!invert_spd6(sum, I_inv[ix(i)])) I_inv[ix(i)] = sum.inverse();
    }
  }

  // ---- the assembly tree ----
  const int total_nodes = nodes();
  node_a.assign(ix(n), -1);
  node_b.assign(ix(n), -1);
  std::vector<int> child_a(ix(total_nodes), -1), child_b(ix(total_nodes), -1);
  std::vector<int> size(ix(n), 0), mark(ix(n), -1);
  int stamp = 0;
  struct Component {
    std::vector<int> bodies;  // ascending
    int* out;
    bool counted;  // inside a subchain already counted
  };
  std::vector<Component> stack;
  {
    std::vector<int> all(ix(n));
    for (int b = 0; b < n; ++b) all[ix(b)] = b;
    stack.push_back({std::move(all), &root, false});
  }
  while (!stack.empty()) {
    Component comp = std::move(stack.back());
    stack.pop_back();
    const std::vector<int>& c = comp.bodies;
    const int total = static_cast<int>(c.size());
    const bool serial = total <= segment;
    if (serial && !comp.counted) ++subchains;
    if (total == 1) {
      *comp.out = c[0];
      continue;
    }
    int best = -1;
    if (serial) {
      best = c.back();  // the last body in ascending order has no child in the set
    } else {
      ++stamp;
      for (int b : c) mark[ix(b)] = stamp, size[ix(b)] = 1;
      for (std::size_t x = c.size(); x-- > 1;) size[ix(model.parent(c[x]))] += size[ix(c[x])];
      int best_gap = total + 1;
      for (std::size_t x = 1; x < c.size(); ++x) {
        const int gap = std::abs(2 * size[ix(c[x])] - total);
        if (gap < best_gap) best_gap = gap, best = c[x];
      }
    }
    std::vector<int> A, B;
    ++stamp;
    for (int b : c) {
      if (b == best || (b > best && mark[ix(model.parent(b))] == stamp)) {
        B.push_back(b);
        mark[ix(b)] = stamp;
      } else {
        A.push_back(b);
      }
    }
    const int node = joint_node(n, best);
    *comp.out = node;
    stack.push_back({std::move(A), &child_a[ix(node)], serial});
    stack.push_back({std::move(B), &child_b[ix(node)], serial});
  }
  for (int k = 1; k < n; ++k) {
    node_a[ix(k)] = child_a[ix(joint_node(n, k))];
    node_b[ix(k)] = child_b[ix(joint_node(n, k))];
  }

  // ---- handles: leaves, then joint nodes in post-order (children first) ----
  std::vector<std::vector<int>> ids(ix(total_nodes));
  height.assign(ix(total_nodes), 0);
  for (int b = 0; b < n; ++b) {
    auto& h = ids[ix(b)];
    if (b > 0) h.push_back(b);
    for (int ch : model.children(b)) h.push_back(ch);
    if (key[ix(b)]) h.push_back(n + b);
  }
  for (int b : regularised) ids[ix(b)].push_back(2 * n + b);
  std::vector<int> order;
  {
    std::vector<std::pair<int, bool>> st{{root, false}};
    while (!st.empty()) {
      auto [node, expanded] = st.back();
      st.pop_back();
      if (node < n) continue;
      if (expanded) {
        order.push_back(node);
      } else {
        st.emplace_back(node, true);
        st.emplace_back(child_b[ix(node)], false);
        st.emplace_back(child_a[ix(node)], false);
      }
    }
  }
  for (int node : order) {
    const int k = node - n + 1;
    auto& h = ids[ix(node)];
    for (int j : ids[ix(child_a[ix(node)])])
      if (j != k) h.push_back(j);
    for (int j : ids[ix(child_b[ix(node)])])
      if (j != k) h.push_back(j);
    height[ix(node)] = 1 + std::max(height[ix(child_a[ix(node)])], height[ix(child_b[ix(node)])]);
  }
  h_begin.assign(ix(total_nodes) + 1, 0);
  for (int node = 0; node < total_nodes; ++node)
    h_begin[ix(node) + 1] = h_begin[ix(node)] + static_cast<int>(ids[ix(node)].size());
  const int slots = h_begin.back();
  h_id.assign(ix(slots), 0);
  h_side.assign(ix(slots), 0);
  h_local.assign(ix(slots), -1);
  phi_begin.assign(ix(total_nodes), 0);
  int blocks = 0;
  for (int node = 0; node < total_nodes; ++node) {
    const int h = handles(node);
    max_handles = std::max(max_handles, h);
    phi_begin[ix(node)] = blocks;
    blocks += h * h;
    for (int r = 0; r < h; ++r) h_id[ix(h_begin[ix(node)] + r)] = ids[ix(node)][ix(r)];
  }
  auto local_of = [&](int node, int id) {
    const auto& h = ids[ix(node)];
    const auto it = std::find(h.begin(), h.end(), id);
    return it == h.end() ? -1 : static_cast<int>(it - h.begin());
  };
  slot_a.assign(ix(n), -1);
  slot_b.assign(ix(n), -1);
  for (int node : order) {
    const int k = node - n + 1, A = child_a[ix(node)], B = child_b[ix(node)];
    slot_a[ix(k)] = local_of(A, k);
    slot_b[ix(k)] = local_of(B, k);
    for (int s = h_begin[ix(node)]; s < h_begin[ix(node) + 1]; ++s) {
      const int la = local_of(A, h_id[ix(s)]);
      h_side[ix(s)] = la >= 0 ? 0 : 1;
      h_local[ix(s)] = la >= 0 ? la : local_of(B, h_id[ix(s)]);
    }
  }
  levels = n > 1 ? height[ix(root)] : 0;
  level_begin.assign(ix(levels) + 2, 0);
  level_nodes.clear();
  for (int lv = 0; lv <= levels; ++lv) {
    level_begin[ix(lv)] = static_cast<int>(level_nodes.size());
    if (lv == 0)
      for (int b = 0; b < n; ++b) level_nodes.push_back(b);
    else
      for (int node : order)
        if (height[ix(node)] == lv) level_nodes.push_back(node);
  }
  level_begin[ix(levels) + 1] = static_cast<int>(level_nodes.size());
  phi.assign(ix(blocks), Mat6::Zero());

  // ---- the root: task handles, then virtual handles ----
  task_handle.assign(ix(n), -1);
  for (int r = 0; r < handles(root); ++r) {
    const int id = h_id[ix(h_begin[ix(root)] + r)];
    if (id >= n && id < 2 * n) task_handle[ix(id - n)] = r, ++nt;
    if (id >= 2 * n) ++nr;
  }
  Avv.setZero(6 * nr, 6 * nr);
  DPvt.setZero(6 * nr, 6 * nt);
  Xv.setZero(6 * nr, 6 * nt);
  lu = Eigen::PartialPivLU<MatX>(6 * nr);
  scratch.assign(1, std::vector<Mat6>(2 * ix(max_handles)));
}

namespace {

/// Phi of the leaf of body b (see the file's comment); `X` scratch of max_handles.
void leaf(const Data& data, OsDcaState& st, int b, Mat6* X) {
  const int h = st.handles(b), s0 = st.h_begin[ix(b)];
  if (b == 0) {  // the fixed base: zero inverse inertia
    for (int r = 0; r < h; ++r)
      for (int s = 0; s < h; ++s) st.block(b, r, s).setZero();
    return;
  }
  const Mat6& Iinv = st.I_inv[ix(b)];
  for (int r = 0; r < h; ++r) {
    const int id = st.h_id[ix(s0 + r)];
    if (id < st.n && id != b)
      X[r].noalias() = data.X_up[ix(id)].matrix_motion() * Iinv;  // X_r I^-1
    else
      X[r] = Iinv;
  }
  for (int r = 0; r < h; ++r) {
    const int id_r = st.h_id[ix(s0 + r)];
    for (int s = r; s < h; ++s) {
      const int id = st.h_id[ix(s0 + s)];
      Mat6& P = st.block(b, r, s);
      if (id < st.n && id != b) {  // (X_r I^-1) X_s^T
        P.noalias() = X[r] * data.X_up[ix(id)].matrix_motion().transpose();
      } else if (id_r < st.n && id_r != b) {
        P = X[r];  // X_r I^-1 (X_s = 1)
      } else {
        P = Iinv;
      }
      if (s != r) st.block(b, s, r) = P.transpose();
    }
  }
}

/// Assembles the node of joint k; false when T^T Phi T fails the pivot test.
bool assemble(OsDcaState& st, int k, Mat6* GY) {
  const int node = OsDcaState::joint_node(st.n, k), A = st.node_a[ix(k)], B = st.node_b[ix(k)];
  const int ia = st.slot_a[ix(k)], ib = st.slot_b[ix(k)];
  const int h = st.handles(node), s0 = st.h_begin[ix(node)];
  const Mat6x& T = st.T[ix(k)];
  const int c = static_cast<int>(T.cols());
  auto G = [&](int r) -> Mat6 {  // G_r = -Phi^A_r,ka or +Phi^B_r,kb
    const int loc = st.h_local[ix(s0 + r)];
    return st.h_side[ix(s0 + r)] == 0 ? Mat6(-st.block(A, loc, ia)) : st.block(B, loc, ib);
  };
  Mat6 Y = Mat6::Zero();
  if (c > 0) {
    const Mat6 Phi = st.block(A, ia, ia) + st.block(B, ib, ib);
    const MatK K = T.transpose() * Phi * T;
    Eigen::LLT<MatK> llt(K);
    if (llt.info() != Eigen::Success) return false;
    const MatK L = llt.matrixL();
    for (int x = 0; x < c; ++x)
      if (!pivot_accepted(L(x, x) * L(x, x), K(x, x))) return false;
    const Eigen::Matrix<double, Eigen::Dynamic, 6, 0, 6, 6> KT = llt.solve(MatK(T.transpose()));  // (T^T Phi T)^-1 T^T
    Y.noalias() = T * KT;
    Y = (0.5 * (Y + Y.transpose())).eval();
    for (int r = 0; r < h; ++r) GY[r].noalias() = G(r) * Y;
  }
  for (int r = 0; r < h; ++r) {
    const int side_r = st.h_side[ix(s0 + r)], loc_r = st.h_local[ix(s0 + r)];
    for (int s = r; s < h; ++s) {
      const int side_s = st.h_side[ix(s0 + s)], loc_s = st.h_local[ix(s0 + s)];
      Mat6& P = st.block(node, r, s);
      if (side_r != side_s)
        P.setZero();
      else
        P = side_r == 0 ? st.block(A, loc_r, loc_s) : st.block(B, loc_r, loc_s);
      if (c > 0) P.noalias() -= GY[r] * G(s).transpose();
      if (s == r)
        P = (0.5 * (P + P.transpose())).eval();
      else
        st.block(node, s, r) = P.transpose();
    }
  }
  return true;
}

/// Runs fn(node, scratch) over the nodes of one level, on the pool when there is one.
template <class Fn>
void run_level(OsDcaState& st, int level, const Fn& fn) {
  const int begin = st.level_begin[ix(level)], end = st.level_begin[ix(level) + 1];
  if (st.threads <= 1 || end - begin <= 1) {
    for (int x = begin; x < end; ++x) fn(st.level_nodes[ix(x)], st.scratch[0].data());
    return;
  }
  st.next.store(begin, std::memory_order_relaxed);
  st.pool->run([&](int t) {
    Mat6* scratch = st.scratch[ix(t)].data();
    for (int x; (x = st.next.fetch_add(1, std::memory_order_relaxed)) < end;) fn(st.level_nodes[ix(x)], scratch);
  });
}

int default_segment(int n) {
  int L = 0;
  while ((1 << L) < n) ++L;
  return std::max(1, L);
}

}  // namespace

OsDcaHolder::OsDcaHolder() = default;
OsDcaHolder::OsDcaHolder(const OsDcaHolder&) {}
OsDcaHolder& OsDcaHolder::operator=(const OsDcaHolder&) {
  state.reset();
  return *this;
}
OsDcaHolder::~OsDcaHolder() = default;

void dca_lambda_inv(const Model& model, const Data& data, OsDcaHolder& holder, std::span<const OperationalTask> tasks,
                    const Matrix6X& E6, std::span<const int> row0, MatX& Lambda_inv, int threads, int segment) {
  const int n = model.nbodies();
  if (segment <= 0) segment = default_segment(n);
  // The tree depends on the set of task bodies and the segment: rebuilt when they change.
  bool same = holder.state && holder.state->segment == segment;
  if (same) {
    std::vector<char>& key = holder.state->key;
    int marked = 0;
    for (const OperationalTask& t : tasks) same = same && key[ix(t.body)];
    for (char c : key) marked += c;
    int distinct = 0;  // the distinct task bodies (tasks are few: quadratic)
    for (std::size_t a = 0; a < tasks.size(); ++a) {
      bool seen = false;
      for (std::size_t b = 0; b < a; ++b) seen = seen || tasks[b].body == tasks[a].body;
      distinct += !seen;
    }
    same = same && marked == distinct;
  }
  if (!same) {
    std::vector<char> key(ix(n), 0);
    for (const OperationalTask& t : tasks) key[ix(t.body)] = 1;
    holder.state = std::make_unique<OsDcaState>(model, key, segment);
  }
  OsDcaState& st = *holder.state;
  if (threads > 1 && (!st.pool || st.threads != threads)) {
    st.pool.reset();
    st.pool = std::make_unique<ThreadPool>(threads);
    st.scratch.assign(ix(threads), std::vector<Mat6>(2 * ix(st.max_handles)));
  }
  st.threads = threads;

  // Leaves, then the joint nodes by height.
  run_level(st, 0, [&](int b, Mat6* X) { leaf(data, st, b, X); });
  st.failed.store(kNoFailure, std::memory_order_relaxed);
  for (int lv = 1; lv <= st.levels; ++lv) {
    run_level(st, lv, [&](int node, Mat6* GY) {
      const int k = node - st.n + 1;
      if (!assemble(st, k, GY)) {
        int expected = kNoFailure;  // the first failure reported (any thread's: all fail the same way)
        st.failed.compare_exchange_strong(expected, k, std::memory_order_relaxed);
      }
    });
    if (const int k = st.failed.load(std::memory_order_relaxed); k != kNoFailure)
      throw SingularError(
          "operational_space (method 'dca'): the constraint-space inverse inertia T^T Phi T of joint '" +
          model.joint_name(k) + "' (body '" + model.body_name(k) +
          "') is not positive definite to working precision: M is singular");
  }

  // The root: task handles t, virtual handles v; Phi_tt + Phi_tv (1 - D Phi_vv)^-1 D Phi_vt.
  const int root = st.root, hr = st.handles(root), r0 = st.h_begin[ix(root)];
  if (st.nr > 0) {
    int v = 0;
    for (int r = 0; r < hr; ++r) {
      const int id = st.h_id[ix(r0 + r)];
      if (id < 2 * n) continue;
      const Mat6& D = st.D_reg[ix(id - 2 * n)];
      int w = 0, t = 0;
      for (int s = 0; s < hr; ++s) {
        const int ids = st.h_id[ix(r0 + s)];
        if (ids >= 2 * n) {
          st.Avv.block<6, 6>(6 * v, 6 * w).noalias() = -D * st.block(root, r, s);
          if (w == v) st.Avv.block<6, 6>(6 * v, 6 * w) += Mat6::Identity();
          ++w;
        } else {
          st.DPvt.block<6, 6>(6 * v, 6 * t).noalias() = D * st.block(root, r, s);
          ++t;
        }
      }
      ++v;
    }
    st.lu.compute(st.Avv);
    const MatX& LU = st.lu.matrixLU();
    for (int x = 0; x < 6 * st.nr; ++x)
      if (!pivot_accepted(std::abs(LU(x, x)), std::max(1.0, st.Avv.col(x).cwiseAbs().maxCoeff()))) {
        std::string names;  // the bodies of singular inertia (the error path allocates)
        for (std::size_t b = 0; b < st.regularised.size() && b < 4; ++b)
          names += (b ? ", '" : "'") + model.body_name(st.regularised[b]) + "'";
        if (st.regularised.size() > 4) names += ", ...";
        throw SingularError(
            "operational_space (method 'dca'): the forces that cancel the regularising inertias of the bodies of "
            "singular inertia (" +
            names + ") form a singular system: M is singular (a massless body or subtree that no joint constrains)");
      }
    st.Xv = st.lu.solve(st.DPvt);
  }
  // Lambda^-1's block of tasks a, b: E_a^T (Phi_ab + correction) E_b.
  auto phi_tt = [&](int ta, int tb) -> Mat6 {  // task handles' indices at the root
    Mat6 P = st.block(root, ta, tb);
    if (st.nr > 0) {
      int v = 0;
      for (int s = 0; s < hr; ++s) {
        if (st.h_id[ix(r0 + s)] < 2 * n) continue;
        // column block of tb in Xv: tb's index among the task handles
        int tcol = 0;
        for (int x = 0; x < tb; ++x) tcol += st.h_id[ix(r0 + x)] < 2 * n;
        P.noalias() += st.block(root, ta, s) * st.Xv.block<6, 6>(6 * v, 6 * tcol);
        ++v;
      }
    }
    return P;
  };
  for (std::size_t a = 0; a < tasks.size(); ++a)
    for (std::size_t b = a; b < tasks.size(); ++b) {
      const int na = tasks[a].num_rows, nb = tasks[b].num_rows, ra = row0[a], rb = row0[b];
      const Mat6 P = phi_tt(st.task_handle[ix(tasks[a].body)], st.task_handle[ix(tasks[b].body)]);
      auto blk = Lambda_inv.block(ra, rb, na, nb);
      const Eigen::Matrix<double, Eigen::Dynamic, 6, 0, 6, 6> EP = E6.middleCols(ra, na).transpose() * P;
      blk.noalias() = EP * E6.middleCols(rb, nb);
      if (a == b) {
        const MatK sym = 0.5 * (blk + blk.transpose());
        blk = sym;
      } else {
        Lambda_inv.block(rb, ra, nb, na) = blk.transpose();
      }
    }
}

}  // namespace plucker::detail

namespace plucker {

OperationalSpaceDcaCost operational_space_dca_cost(const Model& model, std::span<const OperationalTask> tasks,
                                                   int segment) {
  if (segment < 0)
    throw InvalidArgument("operational_space_dca_cost: segment must be >= 0, got " + std::to_string(segment));
  const int n = model.nbodies();
  std::vector<char> key(detail::ix(n), 0);
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    if (tasks[t].body < 0 || tasks[t].body >= n)
      throw InvalidArgument("operational_space_dca_cost: task " + std::to_string(t) + ": body index " +
                            std::to_string(tasks[t].body) + " out of range [0, " + std::to_string(n) + ")");
    key[detail::ix(tasks[t].body)] = 1;
  }
  const int seg = segment > 0 ? segment : detail::default_segment(n);
  const detail::OsDcaState st(model, key, seg);
  OperationalSpaceDcaCost cost;
  cost.segment = seg;
  cost.subchains = st.subchains;
  cost.levels = st.levels;
  cost.max_handles = st.max_handles;
  std::vector<long long> up(detail::ix(st.nodes()), 0);
  for (int b = 1; b < n; ++b) {
    up[detail::ix(b)] = detail::leaf_ops(st.handles(b));
    cost.total += up[detail::ix(b)];
  }
  for (int lv = 1; lv <= st.levels; ++lv)
    for (int x = st.level_begin[detail::ix(lv)]; x < st.level_begin[detail::ix(lv) + 1]; ++x) {
      const int node = st.level_nodes[detail::ix(x)], k = node - n + 1;
      const long long c = detail::assemble_ops(st.handles(node), static_cast<int>(st.T[detail::ix(k)].cols()));
      cost.total += c;
      up[detail::ix(node)] =
          c + std::max(up[detail::ix(st.node_a[detail::ix(k)])], up[detail::ix(st.node_b[detail::ix(k)])]);
    }
  // The root's correction and the task rows (serial, after the tree).
  const long long v6 = 6LL * st.nr, t6 = 6LL * st.nt;
  long long tail = v6 * v6 * 6 * 2 + v6 * v6 * v6 * 2 / 3 + v6 * v6 * t6 * 2 + t6 * v6 * t6 * 2;
  long long m = 0;
  for (const OperationalTask& t : tasks) m += t.num_rows;
  tail += m * 6 * 12 + m * m * 12;  // E_a^T P E_b
  cost.total += tail;
  cost.critical_path = up[detail::ix(st.root)] + tail;
  return cost;
}

}  // namespace plucker
