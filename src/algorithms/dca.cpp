// The divide-and-conquer articulated-body algorithm (Featherstone 1999, IJRR 18(9), parts 1
// and 2; docs/dca.md gives the derivation and the sources of each formula): forward dynamics
// of a kinematic tree in O(log N) depth on O(N) processors.
//
// A subassembly is a connected set of bodies; its handles are the joints that connect it to
// the rest. Its articulated-body equation over the handles is
//   a_i = sum_j Phi_ij f_j + b_i                                              (handle eq.)
// a_i the spatial acceleration of the subassembly's body at handle i, f_j the force the rest
// exerts through handle j, Phi the (symmetric, block) inverse articulated inertia, b the bias
// acceleration. A single body i is the leaf: Phi_ij = X_i I_i^-1 X_j^T, b_i = -X_i I_i^-1 p_i.
// The assembly formula joins A (holding the parent side of joint k) and B (holding body k)
// across joint k: with f the force the joint exerts on B (-f on A), S the joint's motion
// subspace, T an orthonormal basis of the constraint-force subspace (T^T S = 0), Sd = S (S^T S)^-1
// and the joint equation a_Bk = a_Ak + S qdd + c_k,
//   Phi  = Phi^A_kk + Phi^B_kk,  zeta = b^B_k - b^A_k - c_k
//   Y    = T (T^T Phi T)^-1 T^T                                        (constraint forces)
//   g    = Sd tau - Y (Phi Sd tau + zeta)
//   G_i  = -Phi^A_ik (i in A),  +Phi^B_ik (i in B)                   (a_i's coefficient of f)
//   Phi^C_ij = [same side] Phi_ij - G_i Y G_j^T,   b^C_i = b_i + G_i g  (assembly)
//   f    = g - Y sum_j G_j^T f_j,   qdd = Sd^T (Phi f + sum_j G_j^T f_j + zeta)   (disassembly)
// The assembly runs leaves first along a balanced binary assembly tree (each subassembly is
// split at the joint that halves it most evenly), the disassembly root first; the nodes of a
// level are independent and run on a thread pool when threads > 1.
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <thread>

#include "algorithms/dca_loops.hpp"
#include "algorithms/fd_kernels.hpp"
#include "algorithms/thread_pool.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace plucker {
namespace detail {
namespace {

using Mat6x = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;              // 6 x d, no heap
using MatK = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>;  // m x m, no heap
using MatK6 = Eigen::Matrix<double, Eigen::Dynamic, 6, 0, 6, 6>;              // m x 6, no heap

// ---- 6x6 matrices moved between frames by the ops layer, column by column ----
/// X A: the columns of A are motions, moved by X (A -> B).
Mat6 motions_by(const Transform& X, const Mat6& A) {
  Mat6 out;
  for (int c = 0; c < 6; ++c) out.col(c) = Motion(ops::apply(X, Motion(Vec6(A.col(c))))).vector();
  return out;
}
/// X^-1 A: the columns of A are motions, moved by X^-1 (B -> A).
Mat6 motions_by_inverse(const Transform& X, const Mat6& A) {
  Mat6 out;
  for (int c = 0; c < 6; ++c) out.col(c) = Motion(ops::apply_inverse(X, Motion(Vec6(A.col(c))))).vector();
  return out;
}
/// The 6 x k block of force columns F moved by X^T (B -> A).
Mat6x forces_by_transpose(const Transform& X, const Mat6x& F) {
  Mat6x out(6, F.cols());
  for (int c = 0; c < F.cols(); ++c) out.col(c) = Force(ops::apply_inverse(X, Force(Vec6(F.col(c))))).vector();
  return out;
}
void symmetrize(Mat6& A) {
  for (int r = 0; r < 6; ++r)
    for (int c = r + 1; c < 6; ++c) A(r, c) = A(c, r) = 0.5 * (A(r, c) + A(c, r));
}

/// A^-1 of a symmetric 6x6 A by Cholesky, each pivot tested against its diagonal entry with the
/// library's criterion; false when one fails.
bool invert_spd(const Mat6& A, Mat6& A_inv) {
  Eigen::LLT<Mat6> llt(A);
  if (llt.info() != Eigen::Success) return false;
  const Mat6 L = llt.matrixL();
  for (int k = 0; k < 6; ++k)
    if (!pivot_accepted(L(k, k) * L(k, k), A(k, k))) return false;
  A_inv = llt.solve(Mat6::Identity());
  symmetrize(A_inv);
  return true;
}

/// A barrier for the threads of one pool run: spins briefly (a level's work is microseconds), then
/// waits on the atomic (a futex: no CPU burnt while another thread of an oversubscribed machine
/// runs).
class Barrier {
 public:
  void reset(int threads) {
    threads_ = threads;
    count_.store(0, std::memory_order_relaxed);
  }
  void wait() {
    const int gen = generation_.load(std::memory_order_acquire);
    if (count_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
      count_.store(0, std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
      generation_.notify_all();
      return;
    }
    // Spin for up to ThreadPool::kSpin, yielding every 64 polls (as the pool's workers do), then
    // sleep on the futex.
    const auto deadline = std::chrono::steady_clock::now() + ThreadPool::kSpin;
    for (;;) {
      for (int spins = 0; spins < 64; ++spins) {
        if (generation_.load(std::memory_order_acquire) != gen) return;
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
      }
      if (std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::yield();
    }
    while (generation_.load(std::memory_order_acquire) == gen) generation_.wait(gen, std::memory_order_acquire);
  }

 private:
  int threads_ = 1;
  std::atomic<int> count_{0}, generation_{0};
};

}  // namespace

Mat6x null_space(const Mat6x& S) {
  const int d = static_cast<int>(S.cols());
  bool unit = true;
  std::array<bool, 6> used{};
  for (int k = 0; k < d && unit; ++k) {
    int row = -1;
    for (int r = 0; r < 6; ++r) {
      if (S(r, k) == 1.0 && row < 0)
        row = r;
      else if (S(r, k) != 0.0)
        unit = false;
    }
    if (row < 0) unit = false;
    if (unit) used[row] = true;
  }
  Mat6x T(6, 6 - d);
  if (unit) {
    int col = 0;
    for (int r = 0; r < 6; ++r)
      if (!used[r]) T.col(col++) = Vec6::Unit(r);
  } else {
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(Eigen::MatrixXd(S), Eigen::ComputeFullU);
    T = svd.matrixU().rightCols(6 - d);
  }
  return T;
}

/// The assembly tree (from the topology, made once) and the scratch of one evaluation.
struct DcaWorkspace : WorkspaceOf<DcaWorkspace> {
  static constexpr Slot slot = Slot::Dca;
  explicit DcaWorkspace(const Model& model, bool with_loops = false);
  DcaWorkspace(const DcaWorkspace& o) : WorkspaceOf<DcaWorkspace>(o) {  // the pool and its scratch are made again
    n = o.n;
    root = o.root;
    max_handles = o.max_handles;
    singular_body = o.singular_body;
    h_begin = o.h_begin;
    h_joint = o.h_joint;
    h_from = o.h_from;
    phi_begin = o.phi_begin;
    node_a = o.node_a;
    node_b = o.node_b;
    slot_a = o.slot_a;
    slot_b = o.slot_b;
    height = o.height;
    level_begin = o.level_begin;
    level_nodes = o.level_nodes;
    I_inv = o.I_inv;
    S_body = o.S_body;
    Sd_body = o.Sd_body;
    T_body = o.T_body;
    phi = o.phi;
    bias = o.bias;
    force = o.force;
    X_base = o.X_base;
    c = o.c;
    p = o.p;
    Phi_joint = o.Phi_joint;
    Y = o.Y;
    g = o.g;
    zeta = o.zeta;
    Sd_world = o.Sd_world;
    kin_X = o.kin_X;
    kin_v = o.kin_v;
    kin_anc = o.kin_anc;
    kin_rounds = o.kin_rounds;
    X_align = o.X_align;
    aligned = o.aligned;
    S_hf = o.S_hf;
    Sd_hf = o.Sd_hf;
    T_hf = o.T_hf;
    dI = o.dI;
    regularised = o.regularised;
    p_dI = o.p_dI;
    root_A = o.root_A;
    root_rhs = o.root_rhs;
    root_f = o.root_f;
    root_lu = o.root_lu;
    open = o.open;
    close_begin = o.close_begin;
    close_loop = o.close_loop;
    loops = o.loops;
    X_end = o.X_end;
    loop_Y = o.loop_Y;
    loop_g = o.loop_g;
    G_begin = o.G_begin;
    G_loop = o.G_loop;
    rank_tolerance = o.rank_tolerance;
    gravity = o.gravity;
    tree_deficient = o.tree_deficient;
    loop_deficient = o.loop_deficient;
  }

  int nodes() const { return 2 * n - 1; }
  int handles(int node) const { return h_begin[node + 1] - h_begin[node]; }
  Mat6& block(int node, int r, int s) { return phi[phi_begin[node] + r * handles(node) + s]; }
  static int joint_node(int n, int k) { return n + k - 1; }

  int n = 0;               ///< bodies including the base; leaves are nodes 0 .. n-1 (body b)
  int root = 0;            ///< the last node assembled (joint_node of the first split)
  int max_handles = 0;     ///< most handles on any node
  int singular_body = -1;  ///< first body whose spatial inertia is not positive definite (-1: none)
  /// Bodies of singular inertia (massless, point masses) carry a regularising inertia dI (I + dI is
  /// inverted) and a virtual handle (joint id -i) up to the root, where the force dI a_i + v_i x*
  /// dI v_i that cancels dI is solved for (docs/dca.md, "Bodies of singular inertia").
  std::vector<RigidBodyInertia> dI;
  std::vector<int> regularised;       ///< the bodies with a dI, ascending
  std::vector<Force> p_dI;            ///< per body: v_i x* dI v_i (body coordinates)
  MatX root_A;                        ///< 1 - D Phi^root (6m x 6m)
  VecX root_rhs;                      ///< D b^root + p (6m)
  VecX root_f;                        ///< the cancelling forces (6m)
  Eigen::PartialPivLU<MatX> root_lu;  ///< its factors
  std::vector<int> h_begin;           ///< node's handles at [h_begin[node], h_begin[node + 1]) of the flat arrays
  std::vector<int> h_joint;           ///< per handle slot: the joint
  std::vector<int> h_from;            ///< per handle slot of a joint node: the child's slot it continues (-1 leaves)
  std::vector<int> phi_begin;         ///< node's h x h blocks (row-major) in phi
  std::vector<int> node_a, node_b;    ///< per joint k: the subassemblies joined (parent side, k's side)
  std::vector<int> slot_a, slot_b;    ///< per joint k: its handle slot in node_a, node_b
  std::vector<int> height;            ///< per node: 0 for leaves, 1 + the children's most
  std::vector<int> level_begin, level_nodes;   ///< joint nodes by height (level_begin[h - 1] ..)
  std::vector<Mat6> I_inv;                     ///< per body: I_i^-1 in body coordinates
  std::vector<Mat6x> S_body, Sd_body, T_body;  ///< per joint: S, S (S^T S)^-1, null(S^T), body coordinates
  /// Accurate: the handle frame of joint k is the body frame turned by X_align[k] (a rotation) so
  /// that the joint's axis is z when its columns are [alpha a; beta a] for one axis a (revolute,
  /// prismatic, helical, cylindrical about a general axis): S, Sd, T are then exact in S_hf, Sd_hf,
  /// T_hf. aligned[k] is 0 where X_align is the identity.
  std::vector<Transform> X_align;
  std::vector<char> aligned;
  std::vector<Mat6x> S_hf, Sd_hf, T_hf;
  std::vector<Mat6> phi;           ///< Phi blocks of every node
  std::vector<Vec6> bias, force;   ///< per handle slot: b_i; f_i (disassembly)
  std::vector<Transform> X_base;   ///< i_X_0
  std::vector<Motion> c;           ///< c_i = v_i x S_i qd_i (body coordinates)
  std::vector<Force> p;            ///< p_i = v_i x* I_i v_i - f^x_i (body coordinates)
  std::vector<Mat6> Phi_joint, Y;  ///< per joint: Phi^A_kk + Phi^B_kk; Y
  std::vector<Vec6> g, zeta;       ///< per joint
  std::vector<Mat6x> Sd_world;     ///< per joint: Sd in world coordinates (Basic)
  /// The kinematics pass as a parallel prefix (pointer jumping): per body and buffer, the
  /// transform from an ancestor (kin_anc) to the body, the body's velocity relative to that
  /// ancestor's (body coordinates), and the ancestor; kin_rounds = ceil(log2(depth of the tree)).
  std::array<std::vector<Transform>, 2> kin_X;
  std::array<std::vector<Motion>, 2> kin_v;
  std::array<std::vector<int>, 2> kin_anc;
  int kin_rounds = 0;

  // Loop joints (made with with_loops; docs/dca.md, "Closed loops"). Loop joint l has two handles,
  // ids n + 2l (its predecessor's end) and n + 2l + 1 (its successor's); they travel up the
  // assembly tree like tree-joint handles until the node that holds both bodies, where the loop is
  // closed by the assembly formula applied within that node. A node's slots hold its open handles
  // first (open[node] of them, those its parent sees), then the pairs of the loops it closes.
  std::vector<int> open;                     ///< per node: handles that continue to the parent
  std::vector<int> close_begin, close_loop;  ///< per node: the loops closed there, close_loop[close_begin[node] ..)
  std::vector<DcaLoop> loops;                ///< per loop: the hook's inputs, the results
  std::vector<Transform> X_end;              ///< per loop end: end_X_body (C_X_0 0_X_body; Accurate)
  std::vector<Mat6> loop_Y;                  ///< per loop: Y = T (T^T Phi T)^+ T^T
  std::vector<Vec6> loop_g;                  ///< per loop: g
  std::vector<int> G_begin;                  ///< per loop: its G_r (live handles, in order) at G_loop[G_begin[l]]
  std::vector<Mat6> G_loop;
  std::vector<char> tree_deficient;  ///< per joint: its T^T Phi T was rank-deficient (redundant with a loop)
  std::vector<char> loop_deficient;  ///< per loop: its T^T Phi T was rank-deficient (redundant rows)
  double rank_tolerance = 1e-10;
  /// False: the base does not accelerate (a_0 = 0 instead of -g), for the homogeneous solves of
  /// the mimic relations (constrained_dca.cpp).
  bool gravity = true;

  // Threads (made by the first call with a thread count > 1).
  int threads = 1;
  std::unique_ptr<ThreadPool> pool;
  std::vector<std::vector<int>> subtrees;     ///< the frontier's subtrees, heaviest first: nodes children first
  std::atomic<int> next_up{0}, next_down{0};  ///< the next subtree to claim (assembly, disassembly)
  std::vector<int> top;                       ///< the joint nodes above the subtrees, children before parents
  std::unique_ptr<Barrier> barrier;
  std::vector<std::vector<Mat6>> scratch;  ///< per thread: G_i Y of one node's handles
  std::atomic<int> failed_joint{0};        ///< a joint whose T^T Phi T is not positive definite (0: none)
};

DcaWorkspace::DcaWorkspace(const Model& model, bool with_loops) : n(model.nbodies()) {
  const int nl = with_loops ? static_cast<int>(model.loop_joints().size()) : 0;
  // ---- per body: I^-1; per joint: S, Sd, T in body coordinates ----
  I_inv.assign(static_cast<std::size_t>(n), Mat6::Zero());
  S_body.resize(static_cast<std::size_t>(n));
  Sd_body.resize(static_cast<std::size_t>(n));
  T_body.resize(static_cast<std::size_t>(n));
  Sd_world.resize(static_cast<std::size_t>(n));
  X_align.assign(static_cast<std::size_t>(n), Transform());
  aligned.assign(static_cast<std::size_t>(n), 0);
  S_hf.resize(static_cast<std::size_t>(n));
  Sd_hf.resize(static_cast<std::size_t>(n));
  T_hf.resize(static_cast<std::size_t>(n));
  for (int i = 1; i < n; ++i) {
    if (!invert_spd(model.inertia(i).matrix(), I_inv[i])) {
      if (singular_body < 0) singular_body = i;
      regularised.push_back(i);
    }
    ops::visit_joint(model, i, [&](const auto& joint, const auto&) {
      const int d = ops::joint_dofs(joint);
      Mat6x S(6, d);
      for (int k = 0; k < d; ++k) {
        ops::MotionT<double> m{};
        ops::add_column<double>(m, ops::column(joint, k), 1.0);
        S.col(k) = Motion(m).vector();
      }
      S_body[i] = S;
      Sd_body[i] = d > 0 ? Mat6x(S * (S.transpose() * S).inverse()) : Mat6x(6, 0);
      T_body[i] = null_space(S);
      // One axis a for every column ([alpha a; beta a]): turn a to z, and S becomes exact.
      Vec3 a = Vec3::Zero();
      bool one_axis = d > 0 && d <= 2;
      for (int k = 0; k < d && one_axis; ++k)
        for (const Vec3& part : {Vec3(S.col(k).head<3>()), Vec3(S.col(k).tail<3>())}) {
          if (part.norm() == 0.0) continue;
          if (a.norm() == 0.0)
            a = part.normalized();
          else if (a.cross(part).norm() > 1e-15 * part.norm())
            one_axis = false;
        }
      const bool unit_columns = T_body[i].cols() == 0 || (T_body[i].array() == 0.0 || T_body[i].array() == 1.0).all();
      if (one_axis && !unit_columns) {
        const Eigen::Quaterniond turn = Eigen::Quaterniond::FromTwoVectors(a, Vec3::UnitZ());
        X_align[i] = Transform(turn.toRotationMatrix(), Vec3::Zero());  // E a = z
        aligned[i] = 1;
        Mat6x Sa(6, d);
        for (int k = 0; k < d; ++k) {  // [alpha z; beta z], exactly
          Sa.col(k).setZero();
          Sa(2, k) = a.dot(S.col(k).head<3>());
          Sa(5, k) = a.dot(S.col(k).tail<3>());
        }
        S_hf[i] = Sa;
        Sd_hf[i] = Mat6x(Sa * (Sa.transpose() * Sa).inverse());
        T_hf[i] = null_space(Sa);
      } else {
        S_hf[i] = S;
        Sd_hf[i] = Sd_body[i];
        T_hf[i] = T_body[i];
      }
    });
  }

  // ---- regularising inertias: the mean mass and central inertia of the positive-definite bodies ----
  dI.assign(static_cast<std::size_t>(n), RigidBodyInertia());
  p_dI.assign(static_cast<std::size_t>(n), Force::Zero());
  if (!regularised.empty()) {
    double mass = 0.0;
    Mat3 I_c = Mat3::Zero();
    int count = 0;
    for (int i = 1; i < n; ++i) {
      const RigidBodyInertia& I = model.inertia(i);
      if (std::find(regularised.begin(), regularised.end(), i) != regularised.end()) continue;
      mass += I.mass();
      I_c += I.inertia_com();
      ++count;
    }
    if (count == 0) mass = 1.0, I_c = Mat3::Identity() * 0.01, count = 1;  // no massive body: any scale
    const RigidBodyInertia reg = RigidBodyInertia::from_mass_com_inertia(mass / count, Vec3::Zero(), I_c / count);
    for (int i : regularised) {
      dI[i] = reg;
      RigidBodyInertia sum = model.inertia(i);
      sum += reg;
      if (!invert_spd(sum.matrix(), I_inv[i])) I_inv[i] = reg.matrix().inverse();  // not reached: reg is PD
    }
  }
  const int m6 = 6 * static_cast<int>(regularised.size());
  root_A.setZero(m6, m6);
  root_rhs.setZero(m6);
  root_f.setZero(m6);
  root_lu = Eigen::PartialPivLU<MatX>(m6);

  // ---- the assembly tree: split each connected set of bodies at the joint that halves it ----
  const int nodes_total = 2 * n - 1;
  node_a.assign(static_cast<std::size_t>(n), -1);
  node_b.assign(static_cast<std::size_t>(n), -1);
  std::vector<int> size(static_cast<std::size_t>(n), 0), mark(static_cast<std::size_t>(n), -1);
  std::vector<int> child_a(static_cast<std::size_t>(nodes_total), -1),
      child_b(static_cast<std::size_t>(nodes_total), -1);
  int stamp = 0;
  // A stack of components (bodies ascending; the first is the component's top) with where their
  // node goes: the parent's child_a / child_b (or the root). Iterative: a star-shaped tree splits
  // off one body at a time, N deep.
  struct Component {
    std::vector<int> bodies;
    int* node_out;
  };
  std::vector<Component> stack;
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int b = 0; b < n; ++b) all[b] = b;
  stack.push_back({std::move(all), &root});
  while (!stack.empty()) {
    Component comp = std::move(stack.back());
    stack.pop_back();
    const std::vector<int>& c = comp.bodies;
    if (c.size() == 1) {
      *comp.node_out = c[0];
      continue;
    }
    ++stamp;
    for (int b : c) mark[b] = stamp, size[b] = 1;
    for (std::size_t m = c.size(); m-- > 1;) size[model.parent(c[m])] += size[c[m]];
    const int total = static_cast<int>(c.size());
    int best = -1, best_gap = total + 1;
    for (std::size_t m = 1; m < c.size(); ++m) {
      const int gap = std::abs(2 * size[c[m]] - total);
      if (gap < best_gap) best_gap = gap, best = c[m];
    }
    std::vector<int> A, B;
    ++stamp;  // B: best's subtree within the component (parents come first in ascending order)
    for (int b : c) {
      if (b == best || (b > best && mark[model.parent(b)] == stamp)) {
        B.push_back(b);
        mark[b] = stamp;
      } else {
        A.push_back(b);
      }
    }
    const int k_node = joint_node(n, best);
    *comp.node_out = k_node;
    stack.push_back({std::move(A), &child_a[k_node]});
    stack.push_back({std::move(B), &child_b[k_node]});
  }
  for (int k = 1; k < n; ++k) {
    node_a[k] = child_a[joint_node(n, k)];
    node_b[k] = child_b[joint_node(n, k)];
  }

  // ---- handles, Phi blocks, heights: children before parents (post-order from the root) ----
  std::vector<std::vector<int>> node_joints(static_cast<std::size_t>(nodes_total));  // handles by joint
  height.assign(static_cast<std::size_t>(nodes_total), 0);
  for (int b = 0; b < n; ++b) {
    if (b > 0) node_joints[b].push_back(b);
    for (int ch : model.children(b)) node_joints[b].push_back(ch);
  }
  for (int l = 0; l < nl; ++l) {  // loop ends, after the tree handles
    node_joints[model.loop_joints()[l].predecessor].push_back(n + 2 * l);
    node_joints[model.loop_joints()[l].successor].push_back(n + 2 * l + 1);
  }
  for (int b : regularised) node_joints[b].push_back(-b);  // the virtual handle of a regularised body
  std::vector<int> order;                                  // post-order of joint nodes
  {
    std::vector<std::pair<int, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [node, expanded] = stack.back();
      stack.pop_back();
      if (node < n) continue;
      if (expanded) {
        order.push_back(node);
      } else {
        stack.emplace_back(node, true);
        stack.emplace_back(child_b[node], false);
        stack.emplace_back(child_a[node], false);
      }
    }
  }
  // Flat slots: leaves first (node order), then joint nodes in node order.
  h_begin.assign(static_cast<std::size_t>(nodes_total) + 1, 0);
  // First count handles of joint nodes in post-order (they depend on the children's): the
  // children's open handles but joint k; the ends of a loop whose two ends meet here close here.
  open.assign(static_cast<std::size_t>(nodes_total), 0);
  for (int b = 0; b < n; ++b) open[b] = static_cast<int>(node_joints[b].size());
  std::vector<std::vector<int>> closing(static_cast<std::size_t>(nodes_total));
  std::vector<int> end_seen(static_cast<std::size_t>(2 * nl), -1);
  for (int node : order) {
    const int k = node - n + 1;
    std::vector<int>& J = node_joints[node];
    for (int child : {child_a[node], child_b[node]})
      for (int r = 0; r < open[child]; ++r) {
        const int j = node_joints[child][r];
        if (j == k) continue;
        if (j >= n) {
          const int e = j - n;
          if (end_seen[e ^ 1] == node) {  // the other end came from the other child: close here
            closing[node].push_back(e / 2);
            end_seen[e] = node;
            continue;
          }
          end_seen[e] = node;
        }
        J.push_back(j);
      }
    // The first end of each closing loop was taken as open: take it out.
    std::erase_if(J, [&](int j) { return j >= n && end_seen[(j - n) ^ 1] == node; });
    std::sort(closing[node].begin(), closing[node].end());
    open[node] = static_cast<int>(J.size());
    for (int l : closing[node]) J.push_back(n + 2 * l), J.push_back(n + 2 * l + 1);
    height[node] = 1 + std::max(height[child_a[node]], height[child_b[node]]);
  }
  close_begin.assign(static_cast<std::size_t>(nodes_total) + 1, 0);
  close_loop.clear();
  G_begin.assign(static_cast<std::size_t>(nl), 0);
  int g_total = 0;
  for (int node = 0; node < nodes_total; ++node) {
    const int c = static_cast<int>(closing[node].size());
    for (int i = 0; i < c; ++i) {
      close_loop.push_back(closing[node][i]);
      G_begin[closing[node][i]] = g_total;
      g_total += open[node] + 2 * (c - i - 1);  // the live handles at the i-th closure
    }
    close_begin[node + 1] = static_cast<int>(close_loop.size());
  }
  G_loop.assign(static_cast<std::size_t>(g_total), Mat6::Zero());
  loops.assign(static_cast<std::size_t>(nl), DcaLoop());
  for (DcaLoop& L : loops) L.T.resize(6, 0), L.S.resize(6, 0), L.c.setZero(), L.f_tau.setZero(), L.f.setZero();
  X_end.assign(static_cast<std::size_t>(2 * nl), Transform());
  loop_Y.assign(static_cast<std::size_t>(nl), Mat6::Zero());
  loop_g.assign(static_cast<std::size_t>(nl), Vec6::Zero());
  tree_deficient.assign(static_cast<std::size_t>(n), 0);
  loop_deficient.assign(static_cast<std::size_t>(nl), 0);
  for (int node = 0; node < nodes_total; ++node)
    h_begin[node + 1] = h_begin[node] + static_cast<int>(node_joints[node].size());
  const int slots = h_begin[nodes_total];
  h_joint.assign(static_cast<std::size_t>(slots), 0);
  h_from.assign(static_cast<std::size_t>(slots), -1);
  phi_begin.assign(static_cast<std::size_t>(nodes_total), 0);
  int blocks = 0;
  for (int node = 0; node < nodes_total; ++node) {
    const int h = handles(node);
    max_handles = std::max(max_handles, h);
    phi_begin[node] = blocks;
    blocks += h * h;
    for (int r = 0; r < h; ++r) h_joint[h_begin[node] + r] = node_joints[node][r];
  }
  auto slot_of = [&](int node, int joint) {
    for (int s = h_begin[node]; s < h_begin[node + 1]; ++s)
      if (h_joint[s] == joint) return s;
    return -1;
  };
  slot_a.assign(static_cast<std::size_t>(n), -1);
  slot_b.assign(static_cast<std::size_t>(n), -1);
  for (int node : order) {
    const int k = node - n + 1;
    slot_a[k] = slot_of(child_a[node], k);
    slot_b[k] = slot_of(child_b[node], k);
    for (int s = h_begin[node]; s < h_begin[node + 1]; ++s) {
      const int from_a = slot_of(child_a[node], h_joint[s]);
      h_from[s] = from_a >= 0 ? from_a : slot_of(child_b[node], h_joint[s]);
    }
  }
  const int levels = n > 1 ? height[root] : 0;
  level_begin.assign(static_cast<std::size_t>(levels) + 1, 0);
  for (int node : order) ++level_begin[height[node]];
  for (int h = 1; h <= levels; ++h) level_begin[h] += level_begin[h - 1];
  level_nodes.assign(order.size(), 0);
  {
    std::vector<int> fill(level_begin.begin(), level_begin.end() - 1);
    for (int node : order) level_nodes[fill[height[node] - 1]++] = node;
  }

  phi.assign(static_cast<std::size_t>(blocks), Mat6::Zero());
  bias.assign(static_cast<std::size_t>(slots), Vec6::Zero());
  force.assign(static_cast<std::size_t>(slots), Vec6::Zero());
  X_base.assign(static_cast<std::size_t>(n), Transform());
  c.assign(static_cast<std::size_t>(n), Motion::Zero());
  p.assign(static_cast<std::size_t>(n), Force::Zero());
  Phi_joint.assign(static_cast<std::size_t>(n), Mat6::Zero());
  Y.assign(static_cast<std::size_t>(n), Mat6::Zero());
  g.assign(static_cast<std::size_t>(n), Vec6::Zero());
  zeta.assign(static_cast<std::size_t>(n), Vec6::Zero());
  for (int k = 1; k < n; ++k) Sd_world[k] = Sd_body[k];
  int depth_max = 0;
  for (int i = 1; i < n; ++i) depth_max = std::max(depth_max, model.depth(i));
  while ((1 << kin_rounds) < depth_max) ++kin_rounds;
  for (int b = 0; b < 2; ++b) {
    kin_X[b].assign(static_cast<std::size_t>(n), Transform());
    kin_v[b].assign(static_cast<std::size_t>(n), Motion::Zero());
    kin_anc[b].assign(static_cast<std::size_t>(n), 0);
  }
}

namespace {

/// Pass 1: X_up, i_X_0, v_i, c_i = v_i x S_i qd_i, p_i = v_i x* I_i v_i - f^x_i, in O(log N)
/// depth (the serial recursion v_i = iX_p v_p + S_i qd_i, i_X_0 = iX_p p_X_0 has depth N on a
/// chain). Each body starts with its joint's transform and motion relative to its parent, then
/// pointer jumping (Wyllie's list ranking, here on the paths of a tree) doubles the span:
///   X_i <- X_i X_a,   v_i <- v_i + X_i v_a,   a <- ancestor of a        (kin_rounds rounds)
/// until every span reaches the base. Every body runs the same operations whatever the threads
/// (bodies split over them, a barrier between rounds), so the result does not depend on them.
template <ForceInput F>
void kinematics_pass(const Model& model, Data& data, DcaWorkspace& ws, const double* q, const double* qd,
                     const Force* f_ext, int threads) {
  using namespace ops;
  auto jq = [&](int i) { return joint_q(model, data, q, i); };
  auto start = [&](int i) {  // the joint's transform and motion: the span of one joint
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      compose_up(joint, jq(i), X_tree, data.X_up[i]);  // X_J(q_i) X_tree(i)
      MotionT<double> s{};
      add_motion(joint, s, qd + model.idx_v(i));  // S_i qd_i
      store_into(ws.kin_v[0][i], s);
    });
    ws.kin_X[0][i] = data.X_up[i];
    ws.kin_anc[0][i] = model.parent(i);
  };
  auto jump = [&](int r, int i) {  // round r: buffer r % 2 -> (r + 1) % 2
    const auto& X = ws.kin_X[r % 2];
    const auto& v = ws.kin_v[r % 2];
    const auto& anc = ws.kin_anc[r % 2];
    const int a = anc[i], o = (r + 1) % 2;
    if (a == 0) {
      ws.kin_X[o][i] = X[i], ws.kin_v[o][i] = v[i], ws.kin_anc[o][i] = 0;
    } else {
      ws.kin_X[o][i] = X[i] * X[a];
      ws.kin_v[o][i] = v[i] + Motion(apply(X[i], v[a]));
      ws.kin_anc[o][i] = anc[a];
    }
  };
  auto finish = [&](int i) {
    const int b = ws.kin_rounds % 2;
    ws.X_base[i] = ws.kin_X[b][i];
    data.v[i] = ws.kin_v[b][i];
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      const Motion& v = data.v[i];
      store_into(ws.c[i], velocity_product(joint, v, qd + model.idx_v(i)));  // c_i = v_i x S_i qd_i
      store_into(ws.p[i], crf(v, times(model.inertia(i), v)));               // p_i = v_i x* I_i v_i
    });
    if constexpr (F == ForceInput::World) {
      ws.p[i] -= Force(ops::apply(ws.X_base[i], f_ext[i]));
    } else if constexpr (F == ForceInput::Local) {
      ws.p[i] -= f_ext[i];
    } else if constexpr (F == ForceInput::LocalWorldAligned) {  // world axes, about the body origin
      ws.p[i] -= Force(ops::apply(Transform(ws.X_base[i].E, Vec3::Zero()), f_ext[i]));
    }
  };
  data.v[0] = Motion::Zero();
  if (threads <= 1) {
    for (int i = 1; i < ws.n; ++i) start(i);
    for (int r = 0; r < ws.kin_rounds; ++r)
      for (int i = 1; i < ws.n; ++i) jump(r, i);
    for (int i = 1; i < ws.n; ++i) finish(i);
    return;
  }
  ws.barrier->reset(threads);
  ws.pool->run([&](int t) {
    const int lo = 1 + (ws.n - 1) * t / threads, hi = 1 + (ws.n - 1) * (t + 1) / threads;
    for (int i = lo; i < hi; ++i) start(i);
    for (int r = 0; r < ws.kin_rounds; ++r) {
      ws.barrier->wait();
      for (int i = lo; i < hi; ++i) jump(r, i);
    }
    ws.barrier->wait();
    for (int i = lo; i < hi; ++i) finish(i);
  });
}

/// Accurate: the transform from the frame of the body on the parent side of joint j to joint j's
/// handle frame, X_align_j j_X_parent (from body j itself it is X_align_j).
Transform handle_frame(const DcaWorkspace& ws, const Data& data, int j) {
  if (j >= ws.n) return ws.X_end[j - ws.n];  // a loop end: frame C
  return ws.aligned[j] ? ws.X_align[j] * data.X_up[j] : data.X_up[j];
}

/// The leaf of body i: its handle equation (Basic: world coordinates; Accurate: handle r in the
/// frame of the body its joint moves).
void leaf(const Model& model, const Data& data, DcaWorkspace& ws, int i, bool basic) {
  const int h = ws.handles(i), s0 = ws.h_begin[i];
  const Motion a0 = ws.gravity ? Motion(Vec3::Zero(), -model.gravity()) : Motion::Zero();  // the base's, -g
  if (i == 0) {  // the fixed base: Phi = 0 (infinite inertia), b = a_0
    for (int r = 0; r < h; ++r) {
      for (int s = 0; s < h; ++s) ws.block(i, r, s).setZero();
      const int j = ws.h_joint[s0 + r];
      ws.bias[s0 + r] = basic ? a0.vector() : Motion(ops::apply(handle_frame(ws, data, j), a0)).vector();
    }
    return;
  }
  // b_i = -I_i^-1 p_i: a_i = I_i^-1 f + b_i (with I_i + dI_i and p_i + v_i x* dI_i v_i when regularised)
  Vec6 p = ws.p[i].vector();
  if (ws.dI[i].mass() != 0.0) {
    ws.p_dI[i] = Force(ops::crf(data.v[i], ops::times(ws.dI[i], data.v[i])));
    p += ws.p_dI[i].vector();
  }
  const Vec6 b = -(ws.I_inv[i] * p);
  if (basic) {
    const Transform& X = ws.X_base[i];
    Mat6 Phi = motions_by_inverse(X, Mat6(motions_by_inverse(X, ws.I_inv[i]).transpose()));  // X^-1 I^-1 X^-T
    symmetrize(Phi);
    const Vec6 bw = Motion(ops::apply_inverse(X, Motion(b))).vector();
    for (int r = 0; r < h; ++r) {
      for (int s = 0; s < h; ++s) ws.block(i, r, s) = Phi;
      ws.bias[s0 + r] = bw;
    }
    return;
  }
  // Handle 0 is joint i (X = X_align_i), then the joints of the children c (X = X_align_c c_X_i),
  // then the virtual handle of a regularised body (X = 1, the body frame).
  auto X_of = [&](int j) { return j == i ? ws.X_align[i] : handle_frame(ws, data, j); };
  for (int r = 0; r < h; ++r) {
    const int jr = ws.h_joint[s0 + r];
    const bool body_r = jr == -i || (jr == i && !ws.aligned[i]);
    const Mat6 Z = body_r ? ws.I_inv[i] : motions_by(X_of(jr), ws.I_inv[i]);  // X_r I^-1
    for (int s = r; s < h; ++s) {
      const int js = ws.h_joint[s0 + s];
      const bool body_s = js == -i || (js == i && !ws.aligned[i]);
      Mat6 B = body_s ? Mat6(Z.transpose()) : motions_by(X_of(js), Mat6(Z.transpose()));  // X_s (X_r I^-1)^T
      if (s == r) {
        symmetrize(B);
        ws.block(i, r, r) = B;
      } else {
        ws.block(i, s, r) = B;  // Phi_sr = X_s I^-1 X_r^T
        ws.block(i, r, s) = B.transpose();
      }
    }
    ws.bias[s0 + r] = body_r ? b : Motion(ops::apply(X_of(jr), Motion(b))).vector();
  }
}

/// Y = T K^+ T^T for K = T^T Phi T (symmetric, at most 6 x 6) by its eigen-decomposition: the
/// eigenvalues at or below `tolerance` times the largest count as zero (redundant constraint
/// directions get no force); the cut is at least 1e-8 times the largest (sqrt(eps)): K is formed by
/// subtractions, and its zero eigenvalues come out at a rounding error well above eps. Returns the
/// rank, or -1 when K has a negative eigenvalue beyond rounding (below -1e-6 times the largest):
/// not positive semi-definite.
int pseudo_inverse_y(const MatK& K, const Mat6x& T, double tolerance, Mat6& Y) {
  Eigen::SelfAdjointEigenSolver<MatK> eig(K);
  const auto& e = eig.eigenvalues();
  const int m = static_cast<int>(K.rows());
  const double e_max = e.cwiseAbs().maxCoeff();
  if (!(e.minCoeff() >= -1e-6 * e_max)) return -1;
  const double cut = std::max(tolerance, 1e-8) * e_max;
  MatK6 KpTt = eig.eigenvectors().transpose() * T.transpose();  // V^T T^T
  int rank = 0;
  for (int r = 0; r < m; ++r) {
    const bool keep = e[r] > cut;
    rank += keep ? 1 : 0;
    KpTt.row(r) *= keep ? 1.0 / e[r] : 0.0;
  }
  Y.noalias() = (T * eig.eigenvectors()) * KpTt;  // T V diag(1/e) V^T T^T
  symmetrize(Y);
  return rank;
}

/// The assembly of joint k's node (the formula in the header comment). GY: scratch of
/// max_handles matrices. False when T^T Phi T is not positive definite.
bool assemble(const Model& model, DcaWorkspace& ws, int k, const double* tau, bool basic, Mat6* GY) {
  const int node = DcaWorkspace::joint_node(ws.n, k), A = ws.node_a[k], B = ws.node_b[k];
  const int ia = ws.slot_a[k] - ws.h_begin[A], ib = ws.slot_b[k] - ws.h_begin[B];
  const int hA = ws.handles(A), hB = ws.handles(B), h = ws.handles(node);
  Mat6x T, Sd;
  Vec6 c = ws.c[k].vector();
  if (basic) {  // S, T, c in world coordinates
    const Transform& X = ws.X_base[k];
    T = forces_by_transpose(X, ws.T_body[k]);
    ws.Sd_world[k] = forces_by_transpose(X, ws.Sd_body[k]);
    Sd = ws.Sd_world[k];
    c = Motion(ops::apply_inverse(X, ws.c[k])).vector();
  } else {  // the handle frame of joint k
    T = ws.T_hf[k];
    Sd = ws.Sd_hf[k];
    if (ws.aligned[k]) c = Motion(ops::apply(ws.X_align[k], ws.c[k])).vector();
  }
  Mat6& Phi = ws.Phi_joint[k];
  Phi = ws.block(A, ia, ia) + ws.block(B, ib, ib);  // Phi = Phi^A_kk + Phi^B_kk
  Mat6& Y = ws.Y[k];
  const int m = static_cast<int>(T.cols());
  if (m > 0 && !ws.loops.empty()) {
    // With loop joints a tree joint's constraint can be redundant with a loop closed below it
    // (a planar linkage modelled in 3D whose loop closed in a floating subassembly): pseudo-inverse.
    const int rank = pseudo_inverse_y(MatK(T.transpose() * Phi * T), T, ws.rank_tolerance, Y);
    if (rank < 0) return false;
    ws.tree_deficient[k] = rank < m ? 1 : 0;
  } else if (m > 0) {
    const MatK6 TtPhi = T.transpose() * Phi;
    const MatK K = TtPhi * T;  // T^T Phi T
    Eigen::LLT<MatK> llt(K);
    if (llt.info() != Eigen::Success) return false;
    const MatK6 KinvTt = llt.solve(MatK6(T.transpose()));
    Y.noalias() = T * KinvTt;  // Y = T (T^T Phi T)^-1 T^T
    symmetrize(Y);
  } else {
    Y.setZero();
  }
  const Vec6 zeta = ws.bias[ws.slot_b[k]] - ws.bias[ws.slot_a[k]] - c;  // b^B_k - b^A_k - c_k
  ws.zeta[k] = zeta;
  const int d = static_cast<int>(Sd.cols());
  Vec6 f_tau = Vec6::Zero();
  if (d > 0) f_tau = Sd * Eigen::Map<const VecX>(tau + model.idx_v(k), d);  // Sd tau
  ws.g[k] = f_tau - Y * (Phi * f_tau + zeta);                               // g = Sd tau - Y (Phi Sd tau + zeta)
  const Vec6& g = ws.g[k];
  // Handles of the new node: A's (but k) then B's (but k). G_i = -Phi^A_ik or +Phi^B_ik.
  const int s0 = ws.h_begin[node];
  auto side = [&](int r, int& child, int& local, int& kk, double& sign) {
    const int from = ws.h_from[s0 + r];
    if (from < ws.h_begin[A + 1] && from >= ws.h_begin[A]) {
      child = A, local = from - ws.h_begin[A], kk = ia, sign = -1.0;
    } else {
      child = B, local = from - ws.h_begin[B], kk = ib, sign = 1.0;
    }
  };
  (void)hA;
  (void)hB;
  for (int r = 0; r < h; ++r) {
    int child, local, kk;
    double sign;
    side(r, child, local, kk, sign);
    GY[r].noalias() = sign * ws.block(child, local, kk) * Y;                                 // G_r Y
    ws.bias[s0 + r] = ws.bias[ws.h_from[s0 + r]] + sign * (ws.block(child, local, kk) * g);  // b_r + G_r g
  }
  for (int r = 0; r < h; ++r) {
    int cr, lr, kr;
    double sr;
    side(r, cr, lr, kr, sr);
    for (int s = r; s < h; ++s) {
      int cs, ls, ks;
      double ss;
      side(s, cs, ls, ks, ss);
      Mat6& out = ws.block(node, r, s);
      // G_s^T = sign_s Phi^X_{k s} (the child's block matrix is symmetric).
      if (cr == cs)
        out = ws.block(cr, lr, ls);
      else
        out.setZero();
      out.noalias() -= ss * (GY[r] * ws.block(cs, ks, ls));  // Phi^C_rs = [same] Phi_rs - G_r Y G_s^T
      if (s == r)
        symmetrize(out);
      else
        ws.block(node, s, r) = out.transpose();
    }
  }
  return true;
}

/// The closure of the i-th loop closed at `node` (its ends at slots open + 2i, open + 2i + 1): the
/// assembly formula within one subassembly. With f the loop joint's force on the successor end s
/// (-f on the predecessor end p), the coefficient of f in a_r is G_r = Phi_rs - Phi_rp, and
///   Phi = Phi_ss + Phi_pp - Phi_sp - Phi_ps,  zeta = b_s - b_p - c
///   Y = T (T^T Phi T)^+ T^T,  g = S u - Y (Phi S u + zeta)
///   Phi_rt -= G_r Y G_t^T,  b_r += G_r g     (r, t: the handles still live)
/// (T^T Phi T)^+ keeps the eigenvalues above rank_tolerance times the largest: redundant
/// constraint directions get no force (the minimum-norm multipliers). False when T^T Phi T has a
/// negative eigenvalue beyond rounding (not positive semi-definite).
bool close_loop(DcaWorkspace& ws, int node, int i, bool basic, Mat6* GY) {
  const int l = ws.close_loop[ws.close_begin[node] + i];
  const int o = ws.open[node], h = ws.handles(node), s0 = ws.h_begin[node];
  const int ip = o + 2 * i, is = ip + 1;
  const DcaLoop& L = ws.loops[l];
  Mat6x T = L.T;
  Vec6 c = L.c, f_tau = L.f_tau;
  if (basic) {  // C -> world: T and forces by C^T, the motion c by C^-1
    T = forces_by_transpose(L.C, L.T);
    c = Motion(ops::apply_inverse(L.C, Motion(c))).vector();
    f_tau = Force(ops::apply_inverse(L.C, Force(f_tau))).vector();
  }
  const Mat6 Phi = ws.block(node, is, is) + ws.block(node, ip, ip) - ws.block(node, is, ip) - ws.block(node, ip, is);
  Mat6& Y = ws.loop_Y[l];
  const int m = static_cast<int>(T.cols());
  int rank = 0;
  if (m > 0) {
    rank = pseudo_inverse_y(MatK(T.transpose() * Phi * T), T, ws.rank_tolerance, Y);
    if (rank < 0) return false;
    ws.loop_deficient[l] = rank < m ? 1 : 0;
  } else {
    Y.setZero();
  }
  ws.loops[l].rank = rank;
  const Vec6 zeta = ws.bias[s0 + is] - ws.bias[s0 + ip] - c;  // b_s - b_p - c
  ws.loop_g[l] = f_tau - Y * (Phi * f_tau + zeta);
  const Vec6& g = ws.loop_g[l];
  // The live handles: the open ones, then the ends of the loops closed after this one.
  auto live = [&](int q) { return q < o ? q : q + 2 * (i + 1); };
  const int n_live = h - 2 * (i + 1);
  Mat6* G = ws.G_loop.data() + ws.G_begin[l];
  for (int q = 0; q < n_live; ++q) {
    const int r = live(q);
    G[q] = ws.block(node, r, is) - ws.block(node, r, ip);  // G_r = Phi_rs - Phi_rp
    GY[q].noalias() = G[q] * Y;
  }
  for (int q = 0; q < n_live; ++q) {
    const int r = live(q);
    ws.bias[s0 + r].noalias() += G[q] * g;  // b_r += G_r g
    for (int t = q; t < n_live; ++t) {
      Mat6& out = ws.block(node, r, live(t));
      out.noalias() -= GY[q] * G[t].transpose();  // Phi_rt -= G_r Y G_t^T
      if (t == q)
        symmetrize(out);
      else
        ws.block(node, live(t), r) = out.transpose();
    }
  }
  return true;
}

/// The disassembly of the i-th loop closed at `node`: f = g - Y sum_r G_r^T f_r over the live
/// handles (their forces known: the open ones from the parent, those of later loops already).
void open_loop(DcaWorkspace& ws, int node, int i, bool basic) {
  const int l = ws.close_loop[ws.close_begin[node] + i];
  const int o = ws.open[node], h = ws.handles(node), s0 = ws.h_begin[node];
  const int ip = o + 2 * i, is = ip + 1;
  const int n_live = h - 2 * (i + 1);
  const Mat6* G = ws.G_loop.data() + ws.G_begin[l];
  Vec6 w = Vec6::Zero();
  for (int q = 0; q < n_live; ++q) w.noalias() += G[q].transpose() * ws.force[s0 + (q < o ? q : q + 2 * (i + 1))];
  const Vec6 f = ws.loop_g[l] - ws.loop_Y[l] * w;
  ws.force[s0 + is] = f;
  ws.force[s0 + ip] = -f;
  DcaLoop& L = ws.loops[l];
  L.f = basic ? Force(ops::apply(L.C, Force(f))).vector() : f;  // in C
}

/// Assembly of joint k's node and the closure of the loops that meet there. 0, k (T^T Phi T of
/// joint k not positive definite) or -(2 + l) (loop l's not positive semi-definite).
int assemble_node(const Model& model, DcaWorkspace& ws, int k, const double* tau, bool basic, Mat6* GY) {
  if (!assemble(model, ws, k, tau, basic, GY)) return k;
  const int node = DcaWorkspace::joint_node(ws.n, k);
  for (int i = 0; i < ws.close_begin[node + 1] - ws.close_begin[node]; ++i)
    if (!close_loop(ws, node, i, basic, GY)) return -(2 + ws.close_loop[ws.close_begin[node] + i]);
  return 0;
}

/// The disassembly of joint k's node: the joint force f from the forces on the node's handles,
/// qdd_k, and the forces on the two children's handles.
void disassemble(const Model& model, DcaWorkspace& ws, int k, double* qdd, bool basic) {
  const int node = DcaWorkspace::joint_node(ws.n, k), A = ws.node_a[k], B = ws.node_b[k];
  for (int i = ws.close_begin[node + 1] - ws.close_begin[node]; i-- > 0;) open_loop(ws, node, i, basic);
  const int ia = ws.slot_a[k] - ws.h_begin[A], ib = ws.slot_b[k] - ws.h_begin[B];
  const int h = ws.handles(node), s0 = ws.h_begin[node];
  Vec6 w = Vec6::Zero();  // sum_j G_j^T f_j
  for (int r = 0; r < h; ++r) {
    const int from = ws.h_from[s0 + r];
    const bool in_a = from >= ws.h_begin[A] && from < ws.h_begin[A + 1];
    const Vec6& f = ws.force[s0 + r];
    if (in_a)
      w.noalias() -= ws.block(A, ia, from - ws.h_begin[A]) * f;
    else
      w.noalias() += ws.block(B, ib, from - ws.h_begin[B]) * f;
    ws.force[from] = f;
  }
  const Vec6 f = ws.g[k] - ws.Y[k] * w;  // f = g - Y sum_j G_j^T f_j
  ws.force[ws.slot_a[k]] = -f;
  ws.force[ws.slot_b[k]] = f;
  const Mat6x& Sd = basic ? ws.Sd_world[k] : ws.Sd_hf[k];
  const int d = static_cast<int>(Sd.cols());
  if (d > 0) {
    const Vec6 Sqdd = ws.Phi_joint[k] * f + w + ws.zeta[k];  // S qdd = Phi f + w + zeta
    Eigen::Map<VecX>(qdd + model.idx_v(k), d).noalias() = Sd.transpose() * Sqdd;
  }
}

/// The root's virtual handles (bodies of singular inertia, regularised by dI): the forces
/// f_v = dI a_v + v x* dI v that cancel dI, from a_v = sum Phi^root_vw f_w + b^root_v:
/// (1 - D Phi^root) f = D b^root + p, D = diag(dI) in the handles' frames. LU with partial
/// pivoting; false when a pivot is below kSingularPivot times its column's largest entry (M is
/// singular exactly when this system is).
bool solve_root(DcaWorkspace& ws, bool basic) {
  if (ws.root < ws.n) return true;
  const int m = ws.open[ws.root], s0 = ws.h_begin[ws.root];
  if (m == 0) return true;
  for (int r = 0; r < m; ++r) {
    const int body = -ws.h_joint[s0 + r];
    Mat6 D = ws.dI[body].matrix();
    Vec6 p = ws.p_dI[body].vector();
    if (basic) {  // world coordinates: X^T dI X, X^T p with X = i_X_0
      RigidBodyInertia world;
      ops::add_congruence(ws.X_base[body], ws.dI[body], world);
      D = world.matrix();
      p = Force(ops::apply_inverse(ws.X_base[body], ws.p_dI[body])).vector();
    }
    for (int c = 0; c < m; ++c) {
      ws.root_A.block<6, 6>(6 * r, 6 * c).noalias() = -D * ws.block(ws.root, r, c);
      if (c == r) ws.root_A.block<6, 6>(6 * r, 6 * c) += Mat6::Identity();
    }
    ws.root_rhs.segment<6>(6 * r).noalias() = D * ws.bias[s0 + r] + p;
  }
  ws.root_lu.compute(ws.root_A);
  const MatX& LU = ws.root_lu.matrixLU();
  for (int k = 0; k < 6 * m; ++k)  // against the size of what cancels: 1 and D Phi's column
    if (!pivot_accepted(std::abs(LU(k, k)), std::max(1.0, ws.root_A.col(k).cwiseAbs().maxCoeff()))) return false;
  ws.root_f = ws.root_lu.solve(ws.root_rhs);  // into its own vector: no temporary
  for (int r = 0; r < m; ++r) ws.force[s0 + r] = ws.root_f.segment<6>(6 * r);
  return true;
}

/// The body whose joint's subassembly failed, for the error message.
[[noreturn]] void throw_not_positive(const Model& model, int k) {
  throw NumericalError("forward_dynamics_dca: the constraint-space inverse inertia T^T Phi T of joint '" +
                       model.joint_name(k) + "' (body '" + model.body_name(k) +
                       "') is not positive definite to working precision");
}

// ---- operation counts (multiplications + additions) of the steps as implemented ----
constexpr long long kApply = 42;        // a general transform on a 6-vector (E w, E (v - r x w))
constexpr long long kMatMat = 396;      // 6x6 times 6x6: 216 multiplications, 180 additions
constexpr long long kMatVec = 66;       // 6x6 times 6
constexpr long long kAdd6x6 = 36;       // 6x6 addition
constexpr long long kKinematics = 260;  // pass 1 per body: compose, S qd, c, p (estimate, see docs/dca.md)
constexpr long long kCompose = 72;      // X_i X_a: E_i E_a (27 + 18), r_a + E_a^T r_i (9 + 9 + 3), rounded up
constexpr long long kJump = kCompose + kApply + 6;  // one pointer-jumping round of one body

long long leaf_ops(int h, bool basic) {
  if (basic) return kMatVec + 12 * kApply + kApply;  // X^-1 I^-1 X^-T, one bias
  // Z_r for r > 0, the blocks s >= r (s > 0), the biases.
  return kMatVec + (h - 1) * 6 * kApply + (h * (h + 1) / 2 - 1) * 6 * kApply + (h - 1) * kApply;
}
long long assemble_ops(int h, int d, bool basic) {
  const long long m = 6 - d;
  long long ops = kAdd6x6;                                                         // Phi
  if (basic) ops += (m + d + d) * kApply + kApply;                                 // T, Sd (and c) to world
  ops += m * 6 * 11 + m * m * 11 + m * m * m / 3 + m * m * 6 * 2 + 6 * 6 * m * 2;  // K, LLT, Y
  ops += 12 + 2 * kMatVec + d * 12 + 12;                                           // zeta, g
  ops += h * (kMatMat + kMatVec + 6);                                              // G_r Y, b_r + G_r g
  ops += (h * (h + 1) / 2) * (kMatMat + kAdd6x6);                                  // Phi^C_rs
  return ops;
}
long long disassemble_ops(int h, int d) { return h * (kMatVec + 6) + kMatVec + 6 + 2 * kMatVec + 12 + d * 11; }

/// The schedule of `threads` threads: whole subtrees of the assembly tree (no barrier inside them),
/// claimed by the threads heaviest first as they come free (a thread the machine delays takes
/// fewer), and the few joint nodes above them on the calling thread. The frontier starts at the
/// root; its heaviest joint node is replaced by its two children until there are 4 subtrees per
/// thread or the heaviest is under an eighth of a thread's share.
void make_schedule(const Model& model, DcaWorkspace& ws, int threads) {
  const int nodes = ws.nodes();
  std::vector<long long> work(static_cast<std::size_t>(nodes), 0);
  for (int i = 1; i < ws.n; ++i) work[i] = leaf_ops(ws.handles(i), false);
  for (int node : ws.level_nodes) {  // children first
    const int k = node - ws.n + 1, d = model.joint_nv(k);
    work[node] = assemble_ops(ws.handles(node), d, false) + disassemble_ops(ws.handles(node), d) + work[ws.node_a[k]] +
                 work[ws.node_b[k]];
  }
  std::vector<int> frontier{ws.root};
  std::vector<int> top_nodes;
  const long long share = work[ws.root] / threads;
  for (;;) {
    auto heaviest = std::max_element(frontier.begin(), frontier.end(), [&](int a, int b) { return work[a] < work[b]; });
    if (*heaviest < ws.n || static_cast<int>(frontier.size()) >= 4 * threads || work[*heaviest] * 8 < share) break;
    const int node = *heaviest, k = node - ws.n + 1;
    top_nodes.push_back(node);
    *heaviest = ws.node_a[k];
    frontier.push_back(ws.node_b[k]);
  }
  std::sort(frontier.begin(), frontier.end(), [&](int a, int b) { return work[a] > work[b]; });
  ws.subtrees.assign(frontier.size(), {});
  for (std::size_t f = 0; f < frontier.size(); ++f) {
    std::vector<std::pair<int, bool>> stack{{frontier[f], false}};  // post-order of the subtree
    while (!stack.empty()) {
      auto [node, expanded] = stack.back();
      stack.pop_back();
      if (node < ws.n || expanded) {
        ws.subtrees[f].push_back(node);
      } else {
        const int k = node - ws.n + 1;
        stack.emplace_back(node, true);
        stack.emplace_back(ws.node_b[k], false);
        stack.emplace_back(ws.node_a[k], false);
      }
    }
  }
  // The top nodes were taken parents first: reversed, children come first.
  ws.top.assign(top_nodes.rbegin(), top_nodes.rend());
}

/// 0, or the joint whose T^T Phi T is not positive definite, or -1 when the root's system of
/// virtual handles is singular.
template <ForceInput F>
int dca_impl(const Model& model, Data& data, DcaWorkspace& ws, const double* q, const double* qd, const double* tau,
             const Force* f_ext, bool basic, int threads, const DcaLoopHook* hook = nullptr) {
  evaluate_sincos(data, q);
  const bool parallel = threads > 1 && ws.n > 2;
  if (parallel && (!ws.pool || ws.threads != threads)) {
    ws.pool.reset();
    ws.pool = std::make_unique<ThreadPool>(threads);
    ws.barrier = std::make_unique<Barrier>();
    ws.scratch.assign(static_cast<std::size_t>(threads), std::vector<Mat6>(static_cast<std::size_t>(ws.max_handles)));
    make_schedule(model, ws, threads);
    ws.threads = threads;
  }
  kinematics_pass<F>(model, data, ws, q, qd, f_ext, parallel ? threads : 1);
  if (hook != nullptr) {  // the loops' frames and terms from the poses and velocities
    for (int i = 1; i < ws.n; ++i) data.X_base[i] = ws.X_base[i];
    hook->terms(model, data, ws.loops);
    for (std::size_t l = 0; l < ws.loops.size(); ++l) {
      const LoopJoint& joint = model.loop_joints()[l];
      ws.X_end[2 * l] = ws.loops[l].C * ws.X_base[joint.predecessor].inverse();
      ws.X_end[2 * l + 1] = ws.loops[l].C * ws.X_base[joint.successor].inverse();
    }
  }
  double* qdd = data.qdd.data();
  if (!parallel) {
    if (ws.scratch.empty()) ws.scratch.assign(1, std::vector<Mat6>(static_cast<std::size_t>(ws.max_handles)));
    Mat6* GY = ws.scratch[0].data();
    for (int i = 0; i < ws.n; ++i) leaf(model, data, ws, i, basic);
    for (int node : ws.level_nodes)  // ascending height: children before parents
      if (const int status = assemble_node(model, ws, node - ws.n + 1, tau, basic, GY); status != 0) return status;
    if (!solve_root(ws, basic)) return -1;
    for (std::size_t m = ws.level_nodes.size(); m-- > 0;)
      disassemble(model, ws, ws.level_nodes[m] - ws.n + 1, qdd, basic);
    return 0;
  }
  ws.barrier->reset(threads);
  ws.failed_joint.store(0, std::memory_order_relaxed);
  ws.next_up.store(0, std::memory_order_relaxed);
  ws.next_down.store(0, std::memory_order_relaxed);
  const int subtrees = static_cast<int>(ws.subtrees.size());
  auto joint = [&](int node) { return node - ws.n + 1; };
  ws.pool->run([&](int t) {
    Mat6* GY = ws.scratch[static_cast<std::size_t>(t)].data();
    for (int f; (f = ws.next_up.fetch_add(1, std::memory_order_relaxed)) < subtrees;)
      for (int node : ws.subtrees[static_cast<std::size_t>(f)]) {  // leaves and assembly, children first
        if (node < ws.n)
          leaf(model, data, ws, node, basic);
        else if (const int status = assemble_node(model, ws, joint(node), tau, basic, GY); status != 0)
          ws.failed_joint.store(status, std::memory_order_relaxed);
      }
    ws.barrier->wait();
    if (t == 0 && ws.failed_joint.load(std::memory_order_relaxed) == 0) {  // the top, on the calling thread
      for (int node : ws.top)
        if (const int status = assemble_node(model, ws, joint(node), tau, basic, GY); status != 0) {
          ws.failed_joint.store(status, std::memory_order_relaxed);
          break;
        }
      if (ws.failed_joint.load(std::memory_order_relaxed) == 0 && !solve_root(ws, basic))
        ws.failed_joint.store(-1, std::memory_order_relaxed);
      if (ws.failed_joint.load(std::memory_order_relaxed) == 0)
        for (auto it = ws.top.rbegin(); it != ws.top.rend(); ++it) disassemble(model, ws, joint(*it), qdd, basic);
    }
    ws.barrier->wait();
    if (ws.failed_joint.load(std::memory_order_relaxed) != 0) return;
    for (int f; (f = ws.next_down.fetch_add(1, std::memory_order_relaxed)) < subtrees;) {
      const std::vector<int>& sub = ws.subtrees[static_cast<std::size_t>(f)];
      for (std::size_t m = sub.size(); m-- > 0;)  // parents first
        if (sub[m] >= ws.n) disassemble(model, ws, joint(sub[m]), qdd, basic);
    }
  });
  return ws.failed_joint.load();
}

}  // namespace
}  // namespace detail

const VecX& forward_dynamics_dca(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                 const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau, DcaVariant variant,
                                 int threads, ExternalForces f_ext, ReferenceFrame frame) {
  const char* fn = "forward_dynamics_dca";
  const detail::DataUse use(model, data, fn);
  detail::check_state(model, fn, q, v, tau, "tau", f_ext);
  detail::check_arguments(fn, [&] {
    if (threads < 1) throw InvalidArgument("threads must be at least 1, got " + std::to_string(threads));
    if (variant != DcaVariant::Basic && variant != DcaVariant::Accurate) throw InvalidArgument("invalid DcaVariant");
  });
  detail::DcaWorkspace& ws = detail::workspace<detail::DcaWorkspace>(model, data);
  if (!ws.regularised.empty()) {
    // Bodies of singular inertia can make M singular (a massless subtree). The DCA has no
    // joint-space pivots: the ABA's decide, the one criterion of every method (DEVELOPERS.md,
    // "Singularity"), and a singular M raises SingularError naming the joint.
    try {
      detail::aba_unchecked(model, data, q.data(), v.data(), tau.data(), f_ext, frame);
    } catch (const SingularError& e) {
      throw SingularError(std::string(fn) + ": " + e.what());
    }
  }
  const bool basic = variant == DcaVariant::Basic;
  int status = 0;
  if (f_ext.empty())
    status = detail::dca_impl<detail::ForceInput::None>(model, data, ws, q.data(), v.data(), tau.data(), nullptr, basic,
                                                        threads);
  else if (frame == ReferenceFrame::World)
    status = detail::dca_impl<detail::ForceInput::World>(model, data, ws, q.data(), v.data(), tau.data(), f_ext.data(),
                                                         basic, threads);
  else if (frame == ReferenceFrame::LocalWorldAligned)
    status = detail::dca_impl<detail::ForceInput::LocalWorldAligned>(model, data, ws, q.data(), v.data(), tau.data(),
                                                                     f_ext.data(), basic, threads);
  else
    status = detail::dca_impl<detail::ForceInput::Local>(model, data, ws, q.data(), v.data(), tau.data(), f_ext.data(),
                                                         basic, threads);
  if (status > 0) detail::throw_not_positive(model, status);
  if (status < 0) {
    throw NumericalError(std::string(fn) +
                         ": the forces that cancel the regularising inertias of the bodies of "
                         "singular inertia (first: '" +
                         model.body_name(ws.singular_body) +
                         "') form a singular system to working precision, although the ABA's pivots pass");
  }
  detail::check_finite_result(model, data, data.qdd, fn, "qdd");
  return data.qdd;
}

namespace detail {

/// The DCA's workspace for constrained_forward_dynamics: the assembly tree with loop handles.
struct DcaLoopsWorkspace : WorkspaceOf<DcaLoopsWorkspace> {
  static constexpr Slot slot = Slot::DcaLoops;
  explicit DcaLoopsWorkspace(const Model& model) : ws(model, true) {}
  DcaWorkspace ws;
};

DcaLoopsResult forward_dynamics_dca_loops(const Model& model, Data& data, const double* q, const double* v,
                                          const double* tau, bool basic, int threads, double rank_tolerance,
                                          const DcaLoopHook& hook, bool gravity) {
  const char* fn = basic ? "constrained_forward_dynamics (dca)" : "constrained_forward_dynamics (dca_accurate)";
  for (const LoopJoint& joint : model.loop_joints())
    if (joint.predecessor == joint.successor)
      throw InvalidArgument(std::string(fn) + ": loop joint '" + joint.name + "' joins body '" +
                            model.body_name(joint.successor) +
                            "' to itself; the divide-and-conquer method needs two distinct bodies");
  if (threads < 1)
    throw InvalidArgument(std::string(fn) + ": threads must be at least 1, got " + std::to_string(threads));
  DcaWorkspace& ws = workspace<DcaLoopsWorkspace>(model, data).ws;
  if (!ws.regularised.empty())
    throw InvalidArgument(std::string(fn) + ": body '" + model.body_name(ws.singular_body) +
                          "' has a singular spatial inertia (massless or a point mass); the divide-and-conquer "
                          "method with loop joints needs every body's inertia positive definite (use kkt or "
                          "range_space)");
  ws.rank_tolerance = rank_tolerance;
  ws.gravity = gravity;  // set on every call
  const int status = dca_impl<ForceInput::None>(model, data, ws, q, v, tau, nullptr, basic, threads, &hook);
  if (status > 0) throw_not_positive(model, status);
  if (status < -1)
    throw NumericalError(std::string(fn) + ": T^T Phi T of loop joint '" + model.loop_joints()[-status - 2].name +
                         "' is not positive semi-definite to working precision");
  check_finite_result(model, data, data.qdd, fn, "qdd");
  // Any constraint direction dropped (a loop's or a tree joint's): the constraints are redundant.
  const bool deficient = std::find(ws.tree_deficient.begin(), ws.tree_deficient.end(), 1) != ws.tree_deficient.end() ||
                         std::find(ws.loop_deficient.begin(), ws.loop_deficient.end(), 1) != ws.loop_deficient.end();
  return {ws.loops, deficient};
}

}  // namespace detail

DcaCost dca_cost(const Model& model, DcaVariant variant) {
  const detail::DcaWorkspace ws(model);
  const bool basic = variant == DcaVariant::Basic;
  DcaCost cost;
  cost.levels = static_cast<int>(ws.level_begin.size()) - 1;
  cost.max_handles = ws.max_handles;
  // The kinematics pass: its own depth (the per-body work, then one jump per round).
  cost.kinematics = ws.n > 1 ? detail::kKinematics + detail::kJump * ws.kin_rounds : 0;
  const int nodes = ws.nodes();
  std::vector<long long> up(static_cast<std::size_t>(nodes), 0), down(static_cast<std::size_t>(nodes), 0);
  long long leaves_max = 0;
  for (int i = 0; i < ws.n; ++i) {
    const long long c = i == 0 ? 0 : detail::leaf_ops(ws.handles(i), basic);
    up[i] = c;
    leaves_max = std::max(leaves_max, c);
    cost.total += c;
  }
  for (int node : ws.level_nodes) {  // children first
    const int k = node - ws.n + 1, d = model.joint_nv(k);
    const long long c = detail::assemble_ops(ws.handles(node), d, basic);
    up[node] = c + std::max(up[ws.node_a[k]], up[ws.node_b[k]]);
    cost.total += c + detail::disassemble_ops(ws.handles(node), d);
  }
  // Disassembly: root first; the longest root -> node chain.
  long long down_max = 0;
  for (std::size_t m = ws.level_nodes.size(); m-- > 0;) {
    const int node = ws.level_nodes[m], k = node - ws.n + 1;
    down[node] += detail::disassemble_ops(ws.handles(node), model.joint_nv(k));
    down_max = std::max(down_max, down[node]);
    for (int child : {ws.node_a[k], ws.node_b[k]})
      if (child >= ws.n) down[child] = std::max(down[child], down[node]);
  }
  cost.critical_path = (ws.n > 1 ? up[ws.root] : 0) + down_max;
  (void)leaves_max;
  return cost;
}

}  // namespace plucker
