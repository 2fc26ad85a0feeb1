// The inverse of the joint-space inertia matrix in closed form (paper 002 §6):
//   psi^-1 = phi^-1 + K H                            (Lemma 6.1)
//   [I + H phi K]^-1 = [I - H psi K]                 (Lemma 6.3)
//   M^-1 = [I - H psi K]* D^-1 [I - H psi K]         (Lemma 6.4)
// Eq. 46 applies this operator to one vector T in O(N): z = psi K T and eps = [I - H psi K] T
// leaves to root, nu = D^-1 eps, then qdd = nu - K* alpha root to leaves. Applying it to the
// matrix T = I (every unit joint force at once) gives M^-1 without forming or factorising M
// (the idea of Carpentier's analytical M^-1 in Pinocchio).
//
// World axes. The factors D, U = P H* (innovations_factor, link coordinates) are rotated once per
// body into the world's axes at the body's origin o(k) (D = H P H* is the same in every frame).
// Then phi(k+1, k) has no rotation: it only moves a column's moments from o(k) to o(k+1), one
// cross product with the lever o(k) - o(k+1) (6 multiply-adds, not a transform's 24), in place:
//   * leaves to root, z(k) of every unit force is one shared 6 x nv block: column c of z(k) is
//     zero unless c is in the subtree of k, so the subtrees of two children never meet, and the
//     parent finds phi z+(k) where the child left it (no per-body block, no sum over children);
//   * root to leaves, alpha(k) = phi* alpha(k+1) + H*(k) qdd(k) for the columns >= idx_v(k) (the
//     upper triangle, by symmetry): a 6 x nv block that the last child overwrites in place (its
//     parent's is needed by no one after it), another one for the other children (accel_slot).
// Working about the world origin itself (no lever) was tried: it loses the digits of a small link
// far from the origin (Reliability.MethodsAgreeAboutSingularity, a tapering 256-link chain, off by
// 2e6 relative); the lever, from X_up's own translation, keeps them.
// Row k of the upper triangle is stored as column k of the lower one (contiguous: the rows of
// M^-1 computed W columns at a time are stored with one vector store each), and mirrored last.
// O(N^2): sum_k |nu(k)| columns inward, sum_k (nv - idx_v(k)) outward, 12 d + 6 flops a column.
//
// A model whose subtrees are not contiguous index ranges is swept in a depth-first order of its
// bodies, with the columns in that order, and M^-1 permuted back at the end.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "algorithms/fd_kernels.hpp"
#include "spatial/columns.hpp"

namespace plucker {
namespace {

using namespace ops;
using RowMajor6X = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>;

struct MinvWorkspace : detail::WorkspaceOf<MinvWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Minv;
  explicit MinvWorkspace(const Model& model);

  // Topology (made once): a depth-first order of the bodies and each body's columns in it.
  std::vector<int> order;          ///< bodies 1..N, depth-first (parents first, subtrees contiguous)
  std::vector<int> col, col_end;   ///< body i's first column; one past its subtree's last
  std::vector<int> accel_slot;     ///< the block alpha(i) is written to (0: the base's zeros)
  std::vector<char> has_children;  ///< alpha(i) is read by some child
  bool depth_first = true;         ///< order is 1..N: columns are velocity indices
  std::vector<int> v_of_col;       ///< velocity index of each column (permuted models)

  // Per call.
  std::vector<Transform> X0;      ///< i_X_0: world -> body i
  std::vector<Vec3> lever;        ///< o(k) - o(parent(k)), world axes (see minv_impl)
  std::vector<Vec3> off_origin;   ///< body k's origin - o(k), world axes (nonzero after fixed joints)
  std::vector<Motion> S0;         ///< H*(k) in world axes at o(k), one column per velocity index
  std::vector<Force> U0;          ///< U(k) = P H* in world axes at o(k), one per velocity index
  RowMajor6X z;                   ///< z(k) for the columns of k's subtree, world axes at o(k)
  std::vector<RowMajor6X> alpha;  ///< alpha(k) for the columns >= col(k), at o(k); alpha[0] = 0
  MatX permuted;                  ///< M^-1 in the order of the columns (permuted models)
};

MinvWorkspace::MinvWorkspace(const Model& model) {
  const int n = model.nbodies(), nv = model.nv();
  // Depth-first preorder, children in index order (the model's own order when it is depth-first).
  std::vector<int> stack{0};
  while (!stack.empty()) {
    const int b = stack.back();
    stack.pop_back();
    if (b > 0) order.push_back(b);
    const std::vector<int>& children = model.children(b);
    stack.insert(stack.end(), children.rbegin(), children.rend());  // the first child on top
  }
  col.assign(n, 0), col_end.assign(n, 0), accel_slot.assign(n, 0), has_children.assign(n, 0);
  for (int k = 0, c = 0; k < n - 1; ++k) {
    const int i = order[k];
    depth_first = depth_first && i == k + 1;
    col[i] = c;
    c += model.joint_nv(i);
    col_end[i] = c;
  }
  for (int k = n - 2; k >= 0; --k) {  // a subtree's columns end where its last body's do
    const int i = order[k], p = model.parent(i);
    if (p > 0) col_end[p] = std::max(col_end[p], col_end[i]);
  }
  // alpha(p) is read by p's children only; after its last child nobody needs it, so the last child
  // overwrites it in place and each other child takes the next block (free again once its subtree
  // is done: preorder). The base's alpha = 0 is block 0, never written.
  int slots = 1;
  for (const int i : order) {
    const int p = model.parent(i);
    has_children[p] = 1;
    const bool last_child = p > 0 && model.children(p).back() == i;
    accel_slot[i] = accel_slot[p] + (last_child ? 0 : 1);
    slots = std::max(slots, accel_slot[i] + 1);
  }
  if (!depth_first) {
    v_of_col.resize(nv);
    for (const int i : order)
      for (int k = 0; k < model.joint_nv(i); ++k) v_of_col[col[i] + k] = model.idx_v(i) + k;
    permuted = MatX::Zero(nv, nv);
  }
  X0.resize(n);
  off_origin.assign(n, Vec3::Zero());
  lever.assign(n, Vec3::Zero());
  S0.resize(nv);
  U0.resize(nv);
  z = RowMajor6X::Zero(6, nv + kColumnPadding);
  alpha.assign(slots, RowMajor6X::Zero(6, nv + kColumnPadding));
}

/// f(std::integral_constant<int, d>) for d = 0..6: the joint's loops unrolled.
template <class F>
PLUCKER_HOT inline void with_dofs(int d, const F& f) {
  switch (d) {
    case 0:
      return f(std::integral_constant<int, 0>{});
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    default:
      return f(std::integral_constant<int, 6>{});
  }
}

/// out = X2 X1 = (E2 E1, r1 + E1^T r2) in registers (Transform's product goes through Eigen's
/// 3x3 products).
PLUCKER_HOT inline void compose_into(const Transform& X2, const Transform& X1, Transform& out) {
  const auto E2 = rot<double>(X2.E);
  const double* E1 = X1.E.data();  // column-major: column c at 3c
  for (int c = 0; c < 3; ++c) {    // column c of E2 E1 = E2 (column c of E1)
    const auto col = mul(E2, make3<double>(E1[3 * c], E1[3 * c + 1], E1[3 * c + 2]));
    for (int r = 0; r < 3; ++r) out.E(r, c) = col[r];
  }
  store_into(out.r, load<double>(X1.r) + mul(rot_t<double>(X1.E), load<double>(X2.r)));
}

/// A spatial vector [angular; linear] broadcast into the lanes.
struct Lanes6 {
  Pack v[6];
};
template <class V>
PLUCKER_HOT inline Lanes6 broadcast(const V& x) {
  Lanes6 out;
  for (int k = 0; k < 3; ++k) out.v[k] = simd::splat(x.angular[k]), out.v[3 + k] = simd::splat(x.linear[k]);
  return out;
}
/// u^T x, one value per lane.
template <class V>
PLUCKER_HOT inline Pack dot6(const Lanes6& u, const V& x) {
  Pack s = u.v[0] * x.angular[0];
  for (int k = 1; k < 3; ++k) s += u.v[k] * x.angular[k];
  for (int k = 0; k < 3; ++k) s += u.v[3 + k] * x.linear[k];
  return s;
}
/// x += u s.
template <class V>
PLUCKER_HOT inline void add6(V& x, const Lanes6& u, const Pack& s) {
  for (int k = 0; k < 3; ++k) x.angular[k] += u.v[k] * s, x.linear[k] += u.v[3 + k] * s;
}

/// A joint's world columns H*(k), d forces F (U(k) inward, the rows of G*(k) outward), D^-1 and
/// its lever, broadcast into local values before a column loop: the loop's block stores (simd::store, which
/// may alias anything) would otherwise reload them from the workspace at every step.
template <int d>
struct JointLanes {
  static constexpr int n = std::max(d, 1);  // (no zero-length arrays)
  Lanes6 S[n], F[n];
  double Dinv[n][n];
  V3<Pack> lever;  ///< o(k) - o(parent(k))
  PLUCKER_HOT JointLanes(const Motion* s, const Force* f, const double* dinv, const Vec3& l) {
    for (int k = 0; k < 3; ++k) lever[k] = simd::splat(l[k]);
    for (int k = 0; k < d; ++k) S[k] = broadcast(s[k]), F[k] = broadcast(f[k]);
    if (dinv)
      for (int r = 0; r < d; ++r)
        for (int k = 0; k < d; ++k) Dinv[r][k] = dinv[r * d + k];
  }
};

/// The strict upper triangle of the square column-major M from its lower one, M(r, c) = M(c, r)
/// for r < c: the 4 x 4 blocks below the diagonal blocks transposed in registers (four column
/// loads, four row stores), the diagonal blocks and the last nv mod 4 columns entry by entry.
void mirror_lower(MatX& M) {
  const int nv = static_cast<int>(M.rows());
  double* const m = M.data();
  auto at = [&](int r, int c) -> double& { return m[r + static_cast<std::ptrdiff_t>(nv) * c]; };
  int blocked = 0;  // columns [0, blocked) are whole 4-column blocks
#if defined(__AVX2__)
  blocked = nv - nv % 4;
  for (int c0 = 0; c0 < blocked; c0 += 4)
    for (int r0 = c0 + 4; r0 < blocked; r0 += 4) {  // block (r0, c0) of the lower triangle
      const double* lower = &at(r0, c0);            // its column k at lower + nv k
      double* upper = &at(c0, r0);                  // row k of the block goes to upper + nv k
      R4 col[4];
      // memcpy: unaligned loads and stores (clang ignores a reduced alignment on a `using` alias
      // of a vector type and emitted aligned moves, which faulted).
      for (int k = 0; k < 4; ++k) std::memcpy(&col[k], lower + static_cast<std::ptrdiff_t>(nv) * k, sizeof(R4));
      const R4 lo01 = __builtin_shufflevector(col[0], col[1], 0, 4, 2, 6),
               hi01 = __builtin_shufflevector(col[0], col[1], 1, 5, 3, 7);
      const R4 lo23 = __builtin_shufflevector(col[2], col[3], 0, 4, 2, 6),
               hi23 = __builtin_shufflevector(col[2], col[3], 1, 5, 3, 7);
      const R4 row[4] = {
          __builtin_shufflevector(lo01, lo23, 0, 1, 4, 5), __builtin_shufflevector(hi01, hi23, 0, 1, 4, 5),
          __builtin_shufflevector(lo01, lo23, 2, 3, 6, 7), __builtin_shufflevector(hi01, hi23, 2, 3, 6, 7)};
      for (int k = 0; k < 4; ++k) std::memcpy(upper + static_cast<std::ptrdiff_t>(nv) * k, &row[k], sizeof(R4));
    }
#endif
  for (int c = 1; c < nv; ++c)  // what the blocks left: rows [4 (c / 4), c) of column c, or all of it
    for (int r = c < blocked ? c - c % 4 : 0; r < c; ++r) at(r, c) = at(c, r);
}

}  // namespace

namespace detail {

const MatX& minv_impl(const Model& model, Data& data) {
  const int n = model.nbodies(), nv = model.nv();
  MinvWorkspace& ws = workspace<MinvWorkspace>(model, data);
  const InnovationsWorkspace& factors = innovations_factor(model, data);  // P, D^-1, U = P H* (Eq. 45)
  MatX& Minv = sized(data.Minv, nv, nv);
  MatX& out = ws.depth_first ? Minv : ws.permuted;  // column col(k) + r: row idx_v(k) + r of M^-1, c >= col(k)

  // The factors in world axes at each body's origin o(k): H*(k) and U(k) rotated by E^T of
  // i_X_0 = (E, r) (D = H P H* is the same in every frame), and the levers o(k) - o(parent(k))
  // that move the columns between origins.
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), v0 = model.idx_v(i);
    if (p == 0)
      ws.X0[i] = data.X_up[i];
    else
      compose_into(data.X_up[i], ws.X0[p], ws.X0[i]);  // i_X_0 = i_X_p p_X_0
    const auto Et = rot_t<double>(ws.X0[i].E);
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      // The lever from X_up's translation rotated into world axes: as a difference of world
      // positions it would lose the digits of a small link far from the world origin.
      const int d = joint_dofs(joint);
      const Vec3 from_parent = (p == 0 ? data.X_up[i].r : ws.X0[p].E.transpose() * data.X_up[i].r) + ws.off_origin[p];
      ws.lever[i] = d > 0 ? from_parent : Vec3::Zero();  // o(k) is body k's origin, or o(parent) for a fixed joint
      ws.off_origin[i] = d > 0 ? Vec3::Zero() : from_parent;
      for (int k = 0; k < d; ++k) {
        MotionT<double> s{};
        add_column<double>(s, column(joint, k), 1.0);
        store_into(ws.S0[v0 + k].angular, mul(Et, s.angular));
        store_into(ws.S0[v0 + k].linear, mul(Et, s.linear));
        const Force& U = factors.U[v0 + k];
        store_into(ws.U0[v0 + k].angular, mul(Et, load<double>(U.angular)));
        store_into(ws.U0[v0 + k].linear, mul(Et, load<double>(U.linear)));
      }
    });
  }

  // Leaves to root (Eq. 46 on T = I): for the columns c of k's subtree,
  //   eps(k) = T(k) - H(k) z(k),  nu(k) = D^-1 eps(k),  z+(k) = z(k) + G(k) eps(k) = z(k) + U(k) nu(k),
  // and z(k+1) = phi(k+1, k) z+(k): the moments moved to the parent's origin, n += lever x f, in
  // place in the shared block.
  double* const out_data = out.data();  // column j at out_data + nv j
  for (auto it = ws.order.rbegin(); it != ws.order.rend(); ++it) {
    const int i = *it, v0 = model.idx_v(i), c0 = ws.col[i], c_end = ws.col_end[i];
    with_dofs(model.joint_nv(i), [&](auto dofs) PLUCKER_INLINE {
      constexpr int d = decltype(dofs)::value;
      if constexpr (d > 0) {
        const Columns z = Columns::of(ws.z, 0);
        const double* Dinv = factors.D_inv.data() + 6 * v0;
        double* const nu_out = out_data + static_cast<std::ptrdiff_t>(nv) * c0;  // row c0 + r at nu_out + nv r
        // The joint's own columns: no descendant reaches them, so z(k) = 0, eps(k) = e_j and
        // nu(k) = D^-1 e_j there; z+(k) = U nu(k).
        for (int j = 0; j < d; ++j) {
          Force zj = ws.U0[v0] * Dinv[j];
          for (int r = 1; r < d; ++r) zj += ws.U0[v0 + r] * Dinv[r * d + j];
          zj.angular += ws.lever[i].cross(zj.linear);  // z(k+1) = phi(k+1, k) z+(k)
          store_one(zj, z, c0 + j);
          for (int r = 0; r < d; ++r) nu_out[nv * r + c0 + j] = Dinv[r * d + j];
        }
        // The descendants' columns, W at a time: eps(k) = -H(k) z(k).
        const JointLanes<d> joint(ws.S0.data() + v0, ws.U0.data() + v0, Dinv, ws.lever[i]);
        for (int c = c0 + d; c < c_end; c += simd::W) {
          const int lanes = std::min(simd::W, c_end - c);  // the others are columns of other subtrees
          ForceT<Pack> zc = load_lanes<ForceT<Pack>>(z, c);
          Pack eps[d], nu[d];
          for (int j = 0; j < d; ++j) eps[j] = -dot6(joint.S[j], zc);
          for (int r = 0; r < d; ++r) {  // nu(k) = D^-1 eps(k)
            nu[r] = joint.Dinv[r][0] * eps[0];
            for (int j = 1; j < d; ++j) nu[r] += joint.Dinv[r][j] * eps[j];
            nu[r] = simd::first_lanes(nu[r], Pack{}, lanes);  // z+ unchanged in the other lanes
            store_first(nu[r], nu_out + nv * r + c, lanes);
          }
          for (int r = 0; r < d; ++r) add6(zc, joint.F[r], nu[r]);  // z+(k) = z(k) + U(k) nu(k)
          V3<Pack> lever = joint.lever;  // zero in the other lanes: their z stays where it is
          for (int k = 0; k < 3; ++k) lever[k] = simd::first_lanes(lever[k], Pack{}, lanes);
          zc.angular += cross(lever, zc.linear);  // z(k+1) = phi(k+1, k) z+(k)
          store_lanes(zc, z, c);
        }
      }
    });
  }

  // Root to leaves: alpha+(k) = phi*(k+1, k) alpha(k+1), the velocity part moved to the body's
  // origin, v += omega x lever (in place in the parent's block for its last child),
  //   qdd(k) = nu(k) - G*(k) alpha+(k),  alpha(k) = alpha+(k) + H*(k) qdd(k),
  // for the columns c >= col(k) (the upper triangle); nu(k) is zero outside k's subtree.
  for (const int i : ws.order) {
    const int p = model.parent(i), v0 = model.idx_v(i), c0 = ws.col[i], c_end = ws.col_end[i];
    const bool store_alpha = ws.has_children[i];  // else no one reads alpha(k)
    with_dofs(model.joint_nv(i), [&](auto dofs) PLUCKER_INLINE {
      constexpr int d = decltype(dofs)::value;
      if (d == 0 && (!store_alpha || ws.accel_slot[i] == ws.accel_slot[p]))
        return;  // alpha(k) = alpha(k+1) at o(k) = o(k+1)
      const Columns alpha_in = Columns::of(ws.alpha[ws.accel_slot[p]], 0);
      const Columns alpha_out = Columns::of(ws.alpha[ws.accel_slot[i]], 0);
      const double* Dinv = factors.D_inv.data() + 6 * v0;
      Force GT[std::max(d, 1)];  // rows of G*(k) = D^-1 U^T
      for (int r = 0; r < d; ++r) {
        GT[r] = ws.U0[v0] * Dinv[r * d];
        for (int j = 1; j < d; ++j) GT[r] += ws.U0[v0 + j] * Dinv[r * d + j];
      }
      const JointLanes<d> joint(ws.S0.data() + v0, GT, nullptr, ws.lever[i]);
      double* const qdd_out = out_data + static_cast<std::ptrdiff_t>(nv) * c0;  // row c0 + r at qdd_out + nv r
      for (int c = c0; c < nv; c += simd::W) {
        MotionT<Pack> a_plus = load_lanes<MotionT<Pack>>(alpha_in, c);
        a_plus.linear += cross(a_plus.angular, joint.lever);  // alpha+(k) = phi*(k+1, k) alpha(k+1)
        MotionT<Pack> a = a_plus;
        const int in_subtree = std::clamp(c_end - c, 0, simd::W), lanes = std::min(simd::W, nv - c);
        for (int r = 0; r < d; ++r) {
          double* const row = qdd_out + nv * r + c;
          const Pack qdd = load_first(row, in_subtree) - dot6(joint.F[r], a_plus);  // nu(k) - G*(k) alpha+(k)
          store_first(qdd, row, lanes);
          add6(a, joint.S[r], qdd);  // alpha(k) = alpha+(k) + H*(k) qdd(k)
        }
        if (store_alpha) store_lanes(a, alpha_out, c);
      }
    });
  }

  // Symmetry: the upper triangle from the lower.
  if (ws.depth_first) {
    mirror_lower(Minv);
  } else {
    for (int b = 0; b < nv; ++b)
      for (int a = b; a < nv; ++a)
        Minv(ws.v_of_col[a], ws.v_of_col[b]) = Minv(ws.v_of_col[b], ws.v_of_col[a]) = out(a, b);
  }
  return Minv;
}

}  // namespace detail

const MatX& minv(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  const detail::DataUse use(model, data, "minv");
  detail::check_arguments("minv", [&] { model.check_configuration(q, "q"); });
  detail::compute_poses(model, data, q.data());
  return detail::minv_impl(model, data);
}

}  // namespace plucker
