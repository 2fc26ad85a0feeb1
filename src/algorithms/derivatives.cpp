// Analytical derivatives of inverse and forward dynamics (plucker/algorithms/derivatives.hpp).
//
// Inverse dynamics, written in world coordinates (the approach of Carpentier & Mansard,
// "Analytical derivatives of rigid body dynamics algorithms", RSS 2018; the equations below are
// derived from paper 000 Eqs. 3-8). Body j has motion subspace S_j, velocity v_j, acceleration
// a_j (gravity as a_0 = -g), inertia I_j, momentum h_j = I_j v_j and force
// f_j = I_j a_j + v_j x* h_j - f^x_j; joint j transmits F_j = sum of f over the subtree nu(j),
// and tau_j = S_j^T F_j (Eq. 8). Every S_j is constant in its body, so dS_j/dt = v_j x S_j.
//
// A tangent step e along column s of joint k (integrate(q, e_k e)) displaces the subtree nu(k)
// rigidly by exp(e s) and nothing else, so for j in nu(k), with lambda = lambda(k):
//   d S_j = s x S_j,   d I_j = s x* I_j - I_j s x,
//   d v_j = s x v_j - u,                      u = s x v_lambda
//   d a_j = s x a_j - psi - u x v_j,          psi = s x a_lambda - u x v_lambda
//   d f_j = s x* f_j - I_j psi - B_j u,       B_j u = I_j (u x v_j) + v_j x* (I_j u) + u x* h_j
// (the terms in s x are the rigid motion of the subtree; f_j moves with it by the Jacobi
// identity), B_j = dI_j/dt + (u -> u x* h_j) = -(I_j crm(v_j) + crm(v_j)^T I_j) + h_j-bar.
// Summed over a subtree with the composites Ic_j = sum I and B_j = sum B (a 6 x 6 each):
//   d tau_i / d q_k = -S_i^T (Ic_i psi + B_i u)                   i in nu(k)    (1)
//   d tau_i / d q_k =  S_i^T (s x* F_k - Ic_k psi - B_k u)        k in nu(i), k != i  (2)
// A velocity step along s (qd_k) gives d v_j = s and d a_j = s x v_j + zeta with
// zeta = (v_lambda + v_k) x s, so d f_j = I_j zeta + B_j s:
//   d tau_i / d qd_k = S_i^T (Ic_i zeta + B_i s)                  i in nu(k)    (3)
//   d tau_i / d qd_k = S_i^T (Ic_k zeta + B_k s)                  k in nu(i), k != i  (4)
// and d tau_i / d qdd_k = S_i^T Ic_i s (i in nu(k)): the CRBA's M (paper 000 Eq. 10).
// External forces fixed in the world (frame World) do not move with the subtree: they add
// S_i^T (s x* Fe_i) to (1), with Fe_i their sum over nu(i), and F_k + Fe_k replaces F_k in (2).
// Forces in body coordinates (frame Local) move with it and change nothing.
//
// Structure that keeps the composites small. Ic is a rigid-body inertia (m, h, Ibar about the
// world origin: 10 numbers). For one body with v = [w; v_o] and momentum I v = [n; f],
// dI/dt = crf(v) I - I crm(v) has the inertia's block form with parameters (0, h', Ibar')
//   h'    = w x h + m v_o = f                     (the momentum's linear part)
//   Ibar' = W Ibar + (W Ibar)^T - (h v_o^T + v_o h^T) + 2 (v_o . h) 1,   W = w x
// and with it B u = [Ibar' w_u + w_u x n; w_u x 2 f]: B acts on the angular part of u only
// (its linear-part columns vanish because h' = f). So B is (Ibar', n, f): 12 numbers, summed
// over a subtree like Ic, and Q = B^T S has only three nonzero rows,
//   Q s = Ibar' w_s + n x w_s + 2 f x v_s.
//
// Each body's P_i = Ic_i S_i and Q_i = B_i^T S_i make (1), (3) two 6-term dot products per
// pair (i, k) of a body and an ancestor; (2), (4) one each with the per-column vectors of k.
// O(N) work per body, O(nv d) pairs. On depth-first models (a subtree's velocity indices
// contiguous) the results are filled column by column: column c of joint k on the rows of k's
// subtree ((1), (3), M) and on the rows of each range of k's strict ancestors ((2), (4)) is one
// pass over those rows, stored contiguously (PQ and S by rows), W rows per SIMD pack; the rows
// of other branches are zero.
//
// Forward dynamics: qdd = FD(q, v, tau) solves ID(q, v, qdd) = tau, so
// d qdd / d x = -M^-1 d tau / d x at a = qdd and d qdd / d tau = M^-1 (implicit function
// theorem); M^-1 from minv (paper 002 §6), and qdd = M^-1 (tau - C) with it. The bias forces'
// RNEA (a = 0) leaves v, a and F; at a = qdd the velocities are the same and, by Eq. 4,
// a_j gains acc_j = acc_lambda + S_j qdd_j (world coordinates) and F_j the sum of I acc over
// nu(j) (Eq. 5), added here instead of a second RNEA. Column c of d tau / d x is zero on the
// rows of bodies that are neither ancestors nor descendants of c's body, so its product with
// M^-1 takes only the columns of M^-1 of those rows.
//
// The per-body passes (derivative_terms) are written once over the state scalar: double here,
// simd::Pack for W states at once in the batched forms (the end of this file).
#include "plucker/algorithms/derivatives.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <type_traits>

#include "algorithms/derivative_kernels.hpp"
#include "algorithms/fd_kernels.hpp"
#include "algorithms/lanes.hpp"
#include "algorithms/rnea.hpp"
#include "plucker/spatial/acceleration.hpp"
#include "spatial/columns.hpp"

namespace plucker {
namespace {

using detail::ForceInput;
using ops::Pack;
using simd::W;

/// Which results a call needs: the RNEA's (d tau / d q, d tau / d v and M, after an RNEA at the
/// given a), or the ABA's (d tau / d q and d tau / d v at a = qdd, after the bias forces: the
/// accelerations qdd adds are added here, in world coordinates, instead of a second RNEA; no M).
enum class Use { Rnea, Aba };

/// The composites of a subtree in world coordinates: Ic = (m, h, Ibar) and B = (Ibar', n, f), for
/// one state (S = double) or W states in SIMD lanes (S = Pack).
template <class S>
struct Composite {
  static constexpr bool one_state = std::is_same_v<S, double>;
  using Vec = std::conditional_t<one_state, Vec3, ops::V3<Pack>>;
  using Mat = std::conditional_t<one_state, Mat3, ops::M3<Pack>>;
  typename ops::Types<S>::Inertia inertia;  ///< Ic
  Vec n{}, f{};
  Mat Ibar_rate{};  ///< symmetric

  /// One body of inertia I (world coordinates) moving with v.
  template <class In, class Mo>
  PLUCKER_HOT inline void set(const In& I, const Mo& v) {
    using namespace ops;
    inertia = I;
    const auto w = load<S>(v.angular), vo = load<S>(v.linear), h = load<S>(I.first_moment());
    const auto Ib = rot<S>(I.inertia_origin());
    store_into(n, mul(Ib, w) + cross(h, vo));  // I v = [n; f]
    store_into(f, I.mass() * vo - cross(h, w));
    // Ibar' = W Ibar + (W Ibar)^T - (h vo^T + vo h^T) + 2 (vo . h) 1, column by column: column c of
    // W Ibar is w x Ibar e_c, of (W Ibar)^T = -Ibar W it is Ibar (e_c x w). The components are
    // read from the stored vectors (not a register's lanes).
    const S twice_vh = 2.0 * dot(vo, h), zero{};
    const auto& wc = v.angular;
    const auto e_x_w = [&](int c) {  // e_c x w
      return c == 0   ? make3<S>(zero, S(-wc[2]), S(wc[1]))
             : c == 1 ? make3<S>(S(wc[2]), zero, S(-wc[0]))
                      : make3<S>(S(-wc[1]), S(wc[0]), zero);
    };
    for (int c = 0; c < 3; ++c) {
      const S vo_c = v.linear[c], h_c = I.first_moment()[c];
      const auto col = cross(w, ops::column3<S>(I.inertia_origin(), c)) + mul(Ib, e_x_w(c)) - (h * vo_c + vo * h_c);
      ops::set_column3(Ibar_rate, c, col + unit_times<S>(c, twice_vh));
    }
  }
  PLUCKER_HOT inline void add(const Composite& o) {
    inertia += o.inertia;
    n += o.n;
    f += o.f;
    if constexpr (one_state) {
      Ibar_rate += o.Ibar_rate;
    } else {
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) Ibar_rate(r, c) += o.Ibar_rate(r, c);
    }
  }
  /// Ic x.
  template <class Mo>
  PLUCKER_HOT inline ops::ForceT<S> inertia_times(const Mo& x) const {
    return ops::times(inertia, x);
  }
  /// B u, for u = (u_w, anything): B acts on the angular part only.
  PLUCKER_HOT inline ops::ForceT<S> rate_times(const ops::reg3<S>& u_w) const {
    using namespace ops;
    return {mul(rot<S>(Ibar_rate), u_w) + cross(u_w, load<S>(n)), cross(u_w, 2.0 * load<S>(f))};
  }
  /// The three nonzero rows of B^T s.
  PLUCKER_HOT inline ops::reg3<S> rate_transpose_times(const ops::MotionT<S>& s) const {
    using namespace ops;
    return mul(rot<S>(Ibar_rate), s.angular) + cross(load<S>(n), s.angular) + cross(2.0 * load<S>(f), s.linear);
  }
};

/// A motion of registers from its six stored numbers [angular; linear], and a motion or force
/// stored into six numbers.
template <class S>
PLUCKER_HOT inline ops::MotionT<S> motion_at(const S* x) {
  return {ops::make3<S>(x[0], x[1], x[2]), ops::make3<S>(x[3], x[4], x[5])};
}
template <class S, class V>
PLUCKER_HOT inline void put(S* x, const V& value) {
  for (int r = 0; r < 3; ++r) x[r] = value.angular[r], x[3 + r] = value.linear[r];
}

/// Velocity ranges [begin, end) of a set of bodies, merged and ascending.
using Span = std::array<int, 2>;

/// Per body k (topology): the velocity ranges where column k of d tau / d x can be nonzero, those
/// of k's ancestors, k and k's descendants (a body on another branch neither moves k's subtree
/// nor is moved by k); and, for the subtree fill, the strict ancestors' ranges alone.
struct Supports {
  explicit Supports(const Model& model) {
    const int n = model.nbodies();
    const auto nb = static_cast<std::size_t>(n);
    support_begin.assign(nb + 1, 0);
    ancestors_begin.assign(nb + 1, 0);
    std::vector<char> related(nb), below(nb);
    for (int k = 1; k < n; ++k) {
      std::fill(related.begin(), related.end(), 0);
      for (int j = model.parent(k); j > 0; j = model.parent(j)) related[j] = 1;
      append_spans(model, related, ancestors);
      std::fill(below.begin(), below.end(), 0);
      below[k] = 1;
      for (int j = k + 1; j < n; ++j) below[j] = below[model.parent(j)];  // parent(j) < j
      for (int j = k; j < n; ++j) related[j] = below[j];
      append_spans(model, related, support);
      support_begin[k + 1] = static_cast<int>(support.size());
      ancestors_begin[k + 1] = static_cast<int>(ancestors.size());
    }
  }
  static void append_spans(const Model& model, const std::vector<char>& in, std::vector<Span>& out) {
    const std::size_t first = out.size();
    for (int j = 1; j < model.nbodies(); ++j) {
      if (!in[j] || model.joint_nv(j) == 0) continue;
      const int b = model.idx_v(j), e = b + model.joint_nv(j);
      if (out.size() > first && out.back()[1] == b)
        out.back()[1] = e;
      else
        out.push_back({b, e});
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    std::size_t w = first;  // merge touching ranges (the velocity order of a non-depth-first model)
    for (std::size_t r = first; r < out.size(); ++r) {
      if (w > first && out[w - 1][1] == out[r][0])
        out[w - 1][1] = out[r][1];
      else
        out[w++] = out[r];
    }
    out.resize(w);
  }
  const Span* support_of(int k, int& count) const {
    count = support_begin[k + 1] - support_begin[k];
    return support.data() + support_begin[k];
  }
  const Span* ancestors_of(int k, int& count) const {
    count = ancestors_begin[k + 1] - ancestors_begin[k];
    return ancestors.data() + ancestors_begin[k];
  }

  std::vector<Span> support, ancestors;
  std::vector<int> support_begin, ancestors_begin;
};

/// Per body (world coordinates): the composites, v, a, the joint force F, the composite of the
/// world-frame external forces Fe; for Use::Aba the accelerations qdd adds to the bias forces'
/// (acc) and the forces they add (G, summed over the subtree).
template <class S>
struct BodyTerms {
  explicit BodyTerms(int n) {
    const auto nb = static_cast<std::size_t>(n);
    composite.resize(nb);
    for (auto* x : {&v, &a, &acc}) x->assign(nb, ops::motion_t<S>{});
    for (auto* x : {&F, &Fe, &G}) x->assign(nb, ops::force_t<S>{});
  }
  std::vector<Composite<S>> composite;
  std::vector<ops::motion_t<S>> v, a, acc;
  std::vector<ops::force_t<S>> F, Fe, G;
};

/// Entry (j, k) of a per-velocity table at p[j row + k col].
template <class S>
struct Table {
  S* p;
  std::ptrdiff_t row, col;
  PLUCKER_HOT S& operator()(int j, int k) const { return p[j * row + k * col]; }
};

/// Where the per-velocity vectors go. By columns (entry j of velocity k at x[rows k + j]): S,
/// psi_u = [psi; angular part of u] and zeta_s = [zeta; angular part of S] of the column's joint,
/// so that each entry of (1), (3) is one dot product of a row's PQ with these; y_q, y_v: the
/// vectors of (2) and (4). As tables: PQ = [P; Q] (P = Ic S, Q's three nonzero rows) of the
/// row's body, S again, and R = Fe-bar^T S (world-frame external forces).
template <class S>
struct VelocityTerms {
  S *S6, *psi_u, *zeta_s, *y_q, *y_v;  ///< 6, 9, 9, 6, 6 per velocity
  Table<S> PQ, S_rows, R_rows;
};

/// What the recursion before the derivatives left, in body coordinates: X_up, v, a and the
/// joint forces f.
template <class S>
struct RecursionResults {
  const ops::transform_t<S>* X_up;
  const ops::motion_t<S>* v;
  const ops::motion_t<S>* a;
  const ops::force_t<S>* f;
};

struct DerivativesWorkspace : detail::WorkspaceOf<DerivativesWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Derivatives;
  using RowsX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  explicit DerivativesWorkspace(const Model& model) : supports(model), body(model.nbodies()) {
    const int nv = model.nv();
    // Rows stored contiguously (padded by ops::kColumnPadding for whole SIMD packs): the entries
    // of a column of the results over a range of rows are one pass over these rows.
    PQ.setZero(9, nv + ops::kColumnPadding);
    S_rows.setZero(6, nv + ops::kColumnPadding);
    R_rows.setZero(6, nv + ops::kColumnPadding);
    for (MatX* x : {&psi_u, &zeta_s}) x->setZero(9, nv);
    for (MatX* x : {&S, &y_q, &y_v}) x->setZero(6, nv);
  }
  VelocityTerms<double> terms() {
    auto table = [](RowsX& x) { return Table<double>{x.data(), x.outerStride(), 1}; };
    return {S.data(), psi_u.data(), zeta_s.data(), y_q.data(), y_v.data(), table(PQ), table(S_rows), table(R_rows)};
  }

  Supports supports;
  BodyTerms<double> body;
  /// World-aligned external forces moved to the world origin (allocated on first use).
  std::vector<Force> f_world;
  /// The per-velocity vectors (VelocityTerms), PQ, S and R by rows.
  RowsX PQ, S_rows, R_rows;
  MatX psi_u, zeta_s, S, y_q, y_v;
};

/// The sum over j < K of x_j rows[j][r..r + W), one value per lane (rows stored contiguously).
template <int K>
PLUCKER_HOT inline Pack rows_dot(const Pack (&rows)[9], const double* x) {
  Pack s = rows[0] * x[0];
  for (int j = 1; j < K; ++j) s += rows[j] * x[j];
  return s;
}

/// Column c (a column of body k) of the results on the rows of k's subtree, [r0, r1): (1), (3)
/// and M, one dot product of the row's PQ per entry, W rows at a time.
template <ForceInput FI, Use U>
PLUCKER_HOT inline void subtree_rows(const DerivativesWorkspace& ws, int c, int r0, int r1, double* dq, double* dv,
                                     double* M) {
  const double* psi_u = ws.psi_u.col(c).data();
  const double* zeta_s = ws.zeta_s.col(c).data();
  const double* s = ws.S.col(c).data();
  for (int r = r0; r < r1; r += W) {
    const int lanes = std::min(W, r1 - r);
    Pack rows[9];
    for (int j = 0; j < 9; ++j) rows[j] = simd::load(&ws.PQ(j, r));
    Pack q = -rows_dot<9>(rows, psi_u);  // (1): -(P psi + Q u)
    if constexpr (FI == ForceInput::World) {
      Pack R[9];
      for (int j = 0; j < 6; ++j) R[j] = simd::load(&ws.R_rows(j, r));
      q += rows_dot<6>(R, s);  // + S_i^T (s x* Fe_i)
    }
    ops::store_first(q, dq + r, lanes);
    ops::store_first(rows_dot<9>(rows, zeta_s), dv + r, lanes);                          // (3): P zeta + Q s
    if constexpr (U == Use::Rnea) ops::store_first(rows_dot<6>(rows, s), M + r, lanes);  // P s
  }
}

/// Column c (a column of body k) of the results on the rows of one range [r0, r1) of k's strict
/// ancestors: (2), (4), one dot product of the row's S per entry, and M by symmetry (its row c
/// on these columns is already filled: c is in their subtree).
template <Use U>
PLUCKER_HOT inline void ancestor_rows(const DerivativesWorkspace& ws, int c, int r0, int r1, int nv, double* dq,
                                      double* dv, double* M) {
  const double* y_q = ws.y_q.col(c).data();
  const double* y_v = ws.y_v.col(c).data();
  for (int r = r0; r < r1; r += W) {
    const int lanes = std::min(W, r1 - r);
    Pack rows[9];
    for (int j = 0; j < 6; ++j) rows[j] = simd::load(&ws.S_rows(j, r));
    ops::store_first(rows_dot<6>(rows, y_q), dq + r, lanes);  // (2)
    ops::store_first(rows_dot<6>(rows, y_v), dv + r, lanes);  // (4)
  }
  if constexpr (U == Use::Rnea)
    for (int r = r0; r < r1; ++r) M[r] = M[c + static_cast<std::ptrdiff_t>(nv) * (r - c)];  // M(r, c) = M(c, r)
}

/// Column c of the results on depth-first models: the rows of k's strict ancestors (2), (4), of
/// its subtree [c0, c0 + m) (1), (3), and zeros on the other branches.
template <ForceInput FI, Use U>
void fill_column(const Model& model, const DerivativesWorkspace& ws, int k, int c, MatX& dq, MatX& dv, MatX& M) {
  const int nv = model.nv(), c0 = model.idx_v(k), end = model.subtree_v_end(k);
  const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(nv) * c;
  double *q = dq.data() + at, *v = dv.data() + at, *m = U == Use::Rnea ? M.data() + at : nullptr;
  int count = 0;
  const Span* spans = ws.supports.ancestors_of(k, count);
  int done = 0;  // rows [0, done) written
  auto zeros = [&](int r0, int r1) {
    std::fill(q + r0, q + r1, 0.0);
    std::fill(v + r0, v + r1, 0.0);
    if constexpr (U == Use::Rnea) std::fill(m + r0, m + r1, 0.0);
  };
  for (int s = 0; s < count; ++s) {
    zeros(done, spans[s][0]);
    ancestor_rows<U>(ws, c, spans[s][0], spans[s][1], nv, q, v, m);
    done = spans[s][1];
  }
  zeros(done, c0);
  subtree_rows<FI, U>(ws, c, c0, end, q, v, m);
  zeros(end, nv);
}

/// The entries of the results for the rows of body i and the columns of its ancestor (or
/// itself) k, and, k != i, for the rows of k and the columns of i: (1)-(4) and M (models whose
/// subtrees are not contiguous velocity ranges).
template <ForceInput FI, Use U>
void fill_pair(const Model& model, const DerivativesWorkspace& ws, int i, int k, MatX& dq, MatX& dv, MatX& M) {
  const int r0 = model.idx_v(i), ri = model.joint_nv(i), c0 = model.idx_v(k), ck = model.joint_nv(k);
  auto PQ = [&](int r) { return ws.PQ.col(r).template head<9>(); };
  for (int c = c0; c < c0 + ck; ++c) {
    for (int r = r0; r < r0 + ri; ++r) {  // rows of i, columns of k: (1), (3), M
      dq(r, c) = -PQ(r).dot(ws.psi_u.col(c));
      if constexpr (FI == ForceInput::World) dq(r, c) += ws.R_rows.col(r).template head<6>().dot(ws.S.col(c));
      dv(r, c) = PQ(r).dot(ws.zeta_s.col(c));
      if constexpr (U == Use::Rnea) M(r, c) = PQ(r).template head<6>().dot(ws.S.col(c));
    }
  }
  if (k == i) return;
  for (int c = r0; c < r0 + ri; ++c) {  // rows of k, columns of i: (2), (4)
    for (int r = c0; r < c0 + ck; ++r) {
      dq(r, c) = ws.S.col(r).dot(ws.y_q.col(c));
      dv(r, c) = ws.S.col(r).dot(ws.y_v.col(c));
      if constexpr (U == Use::Rnea) M(r, c) = M(c, r);
    }
  }
}

/// The derivatives (1)-(4) (and M for Use::Rnea), after the RNEA (Use::Rnea) or the bias
/// forces (Use::Aba, with qdd the accelerations to add) has left X_up, v, a and the joint
/// forces F (body coordinates) in data. f_ext: the external forces as given (World), else unused.
/// a_0 = -g, as a motion of the state scalar.
template <class S>
ops::motion_t<S> base_acceleration(const Model& model) {
  ops::motion_t<S> a{};
  for (int r = 0; r < 3; ++r) a.linear[r] = ops::widen<S>(-model.gravity()[r]);
  return a;
}

/// The per-body passes of the derivatives (1)-(4), for one state or W states in lanes: each
/// body's quantities in world coordinates (X_base: i_X_0), its composites summed over its
/// subtree, and the per-velocity vectors of its joint's columns into `out`, from what the
/// RNEA (Use::Rnea) or the bias forces (Use::Aba, with qdd the accelerations to add) left in
/// `in`. f_ext: the external forces as given (World), else unused.
template <ForceInput FI, Use U, class S>
void derivative_terms(const Model& model, const RecursionResults<S>& in, ops::transform_t<S>* X_base, BodyTerms<S>& b,
                      const VelocityTerms<S>& out, const Force* f_ext, const S* qdd) {
  using namespace ops;
  const int n = model.nbodies();
  const S one = widen<S>(1.0);

  // World coordinates of each body's quantities, its own composites, and the column vectors of
  // its joint (from its parent's motion).
  const motion_t<S> a_base = base_acceleration<S>(model);
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), v0 = model.idx_v(i);
    const transform_t<S>& X = X_base[i] = p == 0 ? in.X_up[i] : compose(in.X_up[i], X_base[p]);  // i_X_0
    const MotionT<S> v = apply_inverse(X, in.v[i]);
    MotionT<S> a = apply_inverse(X, in.a[i]);
    store_into(b.v[i], v);
    store_into(b.F[i], apply_inverse(X, in.f[i]));
    typename Types<S>::Inertia I{};  // X^T I_i X: the body's inertia in world coordinates (Eq. 9's congruence)
    add_congruence(X, model.inertia(i), I);
    b.composite[i].set(I, b.v[i]);
    if constexpr (FI == ForceInput::World) b.Fe[i] = f_ext[i];
    const motion_t<S> v_parent = p > 0 ? b.v[p] : motion_t<S>{};
    const motion_t<S>& a_parent = p > 0 ? b.a[p] : a_base;
    MotionT<S> acc{};  // Use::Aba: acc_i = acc_parent + S_i qdd_i (Eq. 4's S qdd, world coordinates)
    if constexpr (U == Use::Aba)
      if (p > 0) acc = acc + b.acc[p];
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int c = 0, k = v0; c < joint_dofs(joint); ++c, ++k) {
        MotionT<S> s_body{};
        add_column<S>(s_body, column(joint, c), one);
        const MotionT<S> s = apply_inverse(X, s_body);
        if constexpr (U == Use::Aba) acc.angular += s.angular * qdd[k], acc.linear += s.linear * qdd[k];
        const auto step = detail::tangent_step(s, v_parent, a_parent, b.v[i]);
        put(out.S6 + 6 * k, s);
        for (int r = 0; r < 3; ++r) out.S_rows(r, k) = s.angular[r], out.S_rows(3 + r, k) = s.linear[r];
        S* psi_u = out.psi_u + 9 * k;
        put(psi_u, step.psi);
        for (int r = 0; r < 3; ++r) psi_u[6 + r] = step.u.angular[r];
        S* zeta_s = out.zeta_s + 9 * k;
        put(zeta_s, step.zeta);
        for (int r = 0; r < 3; ++r) zeta_s[6 + r] = s.angular[r];
      }
    });
    if constexpr (U == Use::Aba) {  // a at qdd, and the force I acc it adds (Eq. 5)
      store_into(b.acc[i], acc);
      a += acc;
      store_into(b.G[i], times(I, acc));
    }
    store_into(b.a[i], a);
  }
  for (int i = n - 1; i > 0; --i) {  // composites over the subtrees
    const int p = model.parent(i);
    if constexpr (U == Use::Aba) b.F[i] += b.G[i];  // G_i is complete: F_i at qdd
    if (p == 0) continue;
    b.composite[p].add(b.composite[i]);
    if constexpr (FI == ForceInput::World) b.Fe[p] += b.Fe[i];
    if constexpr (U == Use::Aba) b.G[p] += b.G[i];
  }
  for (int i = 1; i < n; ++i) {
    const Composite<S>& C = b.composite[i];
    force_t<S> F_moving = b.F[i];  // the part of F_i that moves with the subtree
    if constexpr (FI == ForceInput::World) F_moving += b.Fe[i];
    for (int k = model.idx_v(i); k < model.idx_v(i) + model.joint_nv(i); ++k) {
      const MotionT<S> s = motion_at(out.S6 + 6 * k);
      const S* psi_u = out.psi_u + 9 * k;
      const S* zeta_s = out.zeta_s + 9 * k;
      const MotionT<S> psi = motion_at(psi_u), zeta = motion_at(zeta_s);
      const auto u_w = make3<S>(psi_u[6], psi_u[7], psi_u[8]);  // B ignores u's linear part
      const ForceT<S> P = C.inertia_times(s);
      const auto Q = C.rate_transpose_times(s);
      for (int r = 0; r < 3; ++r) out.PQ(r, k) = P.angular[r], out.PQ(3 + r, k) = P.linear[r], out.PQ(6 + r, k) = Q[r];
      if constexpr (FI == ForceInput::World) {  // R s = Fe-bar^T s = -(s x* Fe)
        const ForceT<S> R = crf(s, b.Fe[i]);
        for (int r = 0; r < 3; ++r) out.R_rows(r, k) = -R.angular[r], out.R_rows(3 + r, k) = -R.linear[r];
      }
      put(out.y_q + 6 * k, crf(s, F_moving) - C.inertia_times(psi) - C.rate_times(u_w));  // (2)
      put(out.y_v + 6 * k, C.inertia_times(zeta) + C.rate_times(s.angular));              // (4)
    }
  }
}

/// The derivatives (1)-(4) (and M for Use::Rnea), after the RNEA (Use::Rnea) or the bias
/// forces (Use::Aba, with qdd the accelerations to add) has left X_up, v, a and the joint
/// forces F (body coordinates) in data. f_ext: the external forces as given (World), else unused.
template <ForceInput FI, Use U>
void inverse_dynamics_derivatives(const Model& model, Data& data, const Force* f_ext, const double* qdd) {
  DerivativesWorkspace& ws = detail::workspace<DerivativesWorkspace>(model, data);
  const int n = model.nbodies(), nv = model.nv();
  data.X_base.resize(static_cast<std::size_t>(n));
  data.X_base[0] = Transform();
  const RecursionResults<double> in{data.X_up.data(), data.v.data(), data.a.data(), data.f.data()};
  derivative_terms<FI, U>(model, in, data.X_base.data(), ws.body, ws.terms(), f_ext, qdd);

  MatX& dq = detail::sized(data.dtau_dq, nv, nv);
  MatX& dv = detail::sized(data.dtau_dv, nv, nv);
  MatX& M = U == Use::Rnea ? detail::sized(data.M, nv, nv) : data.M;
  if (model.has_contiguous_subtrees()) {
    for (int k = 1; k < n; ++k)
      for (int c = model.idx_v(k); c < model.idx_v(k) + model.joint_nv(k); ++c)
        fill_column<FI, U>(model, ws, k, c, dq, dv, M);
  } else {
    dq.setZero();  // the pairs of bodies on different branches
    dv.setZero();
    if constexpr (U == Use::Rnea) M.setZero();
    for (int i = 1; i < n; ++i)
      if (model.joint_nv(i) > 0)
        for (int k = i; k > 0; k = model.parent(k))  // k = i and its ancestors
          if (model.joint_nv(k) > 0) fill_pair<FI, U>(model, ws, i, k, dq, dv, M);
  }
}

template <Use U>
void derivatives_with_world_aligned_forces(const Model& model, Data& data, ExternalForces f_ext, const double* qdd) {
  DerivativesWorkspace& ws = detail::workspace<DerivativesWorkspace>(model, data);
  const int n = model.nbodies();
  ws.f_world.resize(static_cast<std::size_t>(n));
  for (int i = 1; i < n; ++i) {
    const Vec3& origin = data.X_base[i].r;  // left by the RNEA with these forces
    ws.f_world[i] = Force(f_ext[i].angular + origin.cross(f_ext[i].linear), f_ext[i].linear);
  }
  inverse_dynamics_derivatives<ForceInput::World, U>(model, data, ws.f_world.data(), qdd);
  MatX& dq = data.dtau_dq;
  for (int i = 1; i < n; ++i) {
    const Vec3& f = f_ext[i].linear;
    if (f.isZero(0.0)) continue;
    const Vec3& origin = data.X_base[i].r;
    for (int jc = i; jc > 0; jc = model.parent(jc))
      for (int c = model.idx_v(jc); c < model.idx_v(jc) + model.joint_nv(jc); ++c) {
        const Motion s_c(Vec6(ws.S.col(c)));
        const Vec3 moment_rate = f.cross(point_velocity(s_c, origin));  // -(pdot_c x f)
        for (int jr = i; jr > 0; jr = model.parent(jr))
          for (int r = model.idx_v(jr); r < model.idx_v(jr) + model.joint_nv(jr); ++r)
            dq(r, c) += ws.S.col(r).head<3>().dot(moment_rate);
      }
  }
}

/// The derivatives after the RNEA (Use::Rnea) or the bias forces (Use::Aba, at a = qdd) with
/// the external forces f_ext in `frame`.
template <Use U>
void derivatives_after(const Model& model, Data& data, ExternalForces f_ext, ReferenceFrame frame, const double* qdd) {
  if (f_ext.empty())
    inverse_dynamics_derivatives<ForceInput::None, U>(model, data, nullptr, qdd);
  else if (frame == ReferenceFrame::World)
    inverse_dynamics_derivatives<ForceInput::World, U>(model, data, f_ext.data(), qdd);
  else if (frame == ReferenceFrame::LocalWorldAligned)
    derivatives_with_world_aligned_forces<U>(model, data, f_ext, qdd);
  else
    inverse_dynamics_derivatives<ForceInput::Local, U>(model, data, nullptr, qdd);
}

/// Rows [rb, rb + NB W) of out_q(:, c) = -Minv dq(:, c) and out_v(:, c) = -Minv dv(:, c), the
/// sums over the rows of the spans only (the others are zero); the last pack has `lanes` rows.
/// Minv: column r at Minv + ld r.
template <int NB>
PLUCKER_HOT inline void minus_minv_block(const double* Minv, std::ptrdiff_t ld, const double* dq, const double* dv,
                                         const Span* spans, int count, int rb, int lanes, double* out_q,
                                         double* out_v) {
  Pack acc_q[NB] = {}, acc_v[NB] = {};
  for (int s = 0; s < count; ++s)
    for (int r = spans[s][0]; r < spans[s][1]; ++r) {
      const double* col = Minv + ld * r + rb;  // Minv(:, r)
      for (int b = 0; b < NB; ++b) {
        const Pack m = b + 1 < NB ? simd::load(col + b * W) : ops::load_first(col + b * W, lanes);
        acc_q[b] += m * dq[r];
        acc_v[b] += m * dv[r];
      }
    }
  for (int b = 0; b < NB; ++b) {
    const int k = b + 1 < NB ? W : lanes;
    ops::store_first(-acc_q[b], out_q + rb + b * W, k);
    ops::store_first(-acc_v[b], out_v + rb + b * W, k);
  }
}

/// A column-major matrix of one state: column c at p + ld c.
template <class T>
struct Columns {
  T* p;
  std::ptrdiff_t ld;
  T* col(int c) const { return p + ld * c; }
};

/// d qdd / d x = -M^-1 d tau / d x for x = q and v, column by column: column c of d tau / d x is
/// zero outside the support of its body (ancestors, itself, descendants), so only those
/// columns of M^-1 enter its product (on a branched robot, a third of them or fewer). With
/// `in_place` (2 nv doubles) the results overwrite dq and dv: each column is copied there first.
void minus_minv_times(const Model& model, const Supports& supports, Columns<const double> Minv,
                      Columns<const double> dq, Columns<const double> dv, Columns<double> out_q, Columns<double> out_v,
                      double* in_place = nullptr) {
  const int nv = model.nv();
  constexpr int kBlock = 4;  // packs of rows per pass over the support
  for (int k = 1; k < model.nbodies(); ++k) {
    int count = 0;
    const Span* spans = supports.support_of(k, count);
    for (int c = model.idx_v(k); c < model.idx_v(k) + model.joint_nv(k); ++c) {
      const double *q = dq.col(c), *v = dv.col(c);
      if (in_place) {
        std::copy(q, q + nv, in_place);
        std::copy(v, v + nv, in_place + nv);
        q = in_place, v = in_place + nv;
      }
      double *oq = out_q.col(c), *ov = out_v.col(c);
      for (int rb = 0; rb < nv; rb += kBlock * W) {
        const int rows = std::min(kBlock * W, nv - rb), packs = (rows + W - 1) / W, lanes = rows - (packs - 1) * W;
        switch (packs) {
          case 1:
            minus_minv_block<1>(Minv.p, Minv.ld, q, v, spans, count, rb, lanes, oq, ov);
            break;
          case 2:
            minus_minv_block<2>(Minv.p, Minv.ld, q, v, spans, count, rb, lanes, oq, ov);
            break;
          case 3:
            minus_minv_block<3>(Minv.p, Minv.ld, q, v, spans, count, rb, lanes, oq, ov);
            break;
          default:
            minus_minv_block<kBlock>(Minv.p, Minv.ld, q, v, spans, count, rb, lanes, oq, ov);
        }
      }
    }
  }
}

/// Every entry of X finite: the sum is, unless an entry is not (or the sum overflows).
template <class D>
bool all_finite(const Eigen::DenseBase<D>& X) {
  return std::isfinite(X.sum()) || X.allFinite();
}

void check_finite_matrix(const MatX& X, const char* fn, const char* name) {
  if (!all_finite(X))
    throw NumericalError(std::string(fn) + ": " + name +
                         " is not finite although its inputs are: the state overflows double precision");
}

}  // namespace

void rnea_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      const Eigen::Ref<const VecX>& a) {
  rnea_derivatives(model, data, q, v, a, {}, ReferenceFrame::World);
}

void rnea_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      const Eigen::Ref<const VecX>& a, ExternalForces f_ext, ReferenceFrame frame) {
  const char* fn = "rnea_derivatives";
  const detail::DataUse use(model, data, fn);
  detail::check_state(model, fn, q, v, a, "a", f_ext);
  detail::rnea_unchecked(model, data, q.data(), v.data(), a.data(), f_ext, frame);
  derivatives_after<Use::Rnea>(model, data, f_ext, frame, nullptr);
  detail::check_finite_result(model, data, data.tau, fn, "tau");
  check_finite_matrix(data.dtau_dq, fn, "d tau / d q");
  check_finite_matrix(data.dtau_dv, fn, "d tau / d v");
}

void aba_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& tau) {
  aba_derivatives(model, data, q, v, tau, {}, ReferenceFrame::World);
}

void aba_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                     const Eigen::Ref<const VecX>& tau, ExternalForces f_ext, ReferenceFrame frame) {
  const char* fn = "aba_derivatives";
  const detail::DataUse use(model, data, fn);
  detail::check_state(model, fn, q, v, tau, "tau", f_ext);
  // qdd = M^-1 (tau - C): the bias forces, then M^-1 (which the derivatives need anyway) on the
  // poses they leave, instead of a separate ABA.
  detail::bias_forces_unchecked(model, data, q.data(), v.data(), f_ext, frame);
  const MatX& Minv = detail::minv_impl(model, data);
  const int nv = model.nv();
  data.tau = tau - data.tau;  // tau - C, in place
  detail::sized(data.qdd, nv).noalias() = Minv * data.tau;
  detail::check_finite_result(model, data, data.qdd, fn, "qdd");
  derivatives_after<Use::Aba>(model, data, f_ext, frame, data.qdd.data());  // at a = qdd
  auto in = [nv](const MatX& X) { return Columns<const double>{X.data(), nv}; };
  auto out = [nv](MatX& X) { return Columns<double>{X.data(), nv}; };
  minus_minv_times(model, detail::workspace<DerivativesWorkspace>(model, data).supports, in(Minv), in(data.dtau_dq),
                   in(data.dtau_dv), out(detail::sized(data.dqdd_dq, nv, nv)),
                   out(detail::sized(data.dqdd_dv, nv, nv)));
  check_finite_matrix(data.dqdd_dq, fn, "d qdd / d q");
  check_finite_matrix(data.dqdd_dv, fn, "d qdd / d v");
}

// ---- W states at once, one per SIMD lane (rnea_derivatives_batch, aba_derivatives_batch) -----
// derivative_terms on simd::Pack after the lane RNEA (rnea.hpp), then each entry of (1)-(4) is
// one dot product of Packs, stored into the W states' matrices. For aba_derivatives, M^-1 and
// qdd = M^-1 (tau - C) are computed state by state (minv_impl, as aba_derivatives), the bias
// forces C and the derivatives' per-body passes in lanes, and -M^-1 d tau / d x state by state.
namespace detail {

/// Which entries a row holds in the column of a joint: zero, (2) and (4), or (1) and (3).
enum class RowKind : unsigned char { Zero, Ancestor, Subtree };

struct DerivativeLanes {
  explicit DerivativeLanes(const Model& model)
      : supports(model),
        body(model.nbodies()),
        X_base(static_cast<std::size_t>(model.nbodies())),
        S6(6 * static_cast<std::size_t>(model.nv())),
        psi_u(9 * static_cast<std::size_t>(model.nv())),
        zeta_s(9 * static_cast<std::size_t>(model.nv())),
        PQ(9 * static_cast<std::size_t>(model.nv())),
        y_q(6 * static_cast<std::size_t>(model.nv())),
        y_v(6 * static_cast<std::size_t>(model.nv())),
        qdd(static_cast<std::size_t>(model.nv())),
        bias_free(model.nv()),
        qdd_one(model.nv()),
        in_place(2 * static_cast<std::size_t>(model.nv())),
        row_kind(static_cast<std::size_t>(model.nv())) {}
  /// The per-velocity vectors by columns; S6 serves as the table S_rows too (no world forces: no R).
  VelocityTerms<Pack> terms() {
    return {S6.data(),
            psi_u.data(),
            zeta_s.data(),
            y_q.data(),
            y_v.data(),
            Table<Pack>{PQ.data(), 1, 9},
            Table<Pack>{S6.data(), 1, 6},
            Table<Pack>{nullptr, 0, 0}};
  }

  Supports supports;
  BodyTerms<Pack> body;
  std::vector<ops::XformT<Pack>> X_base;
  std::vector<Pack> S6, psi_u, zeta_s, PQ, y_q, y_v;  ///< per velocity: 6, 9, 9, 9, 6, 6
  std::vector<Pack> qdd;                              ///< aba: the W states' qdd
  VecX bias_free, qdd_one;                            ///< aba: tau - C and qdd of one state
  std::vector<double> in_place;                       ///< aba: minus_minv_times' column copies
  std::vector<RowKind> row_kind;                      ///< fill_lanes: per row, for one joint's columns
};

void DerivativeLanesDeleter::operator()(DerivativeLanes* p) const { delete p; }

namespace {

template <int K>
PLUCKER_HOT inline Pack dot_lanes(const Pack* a, const Pack* b) {
  Pack s = a[0] * b[0];
  for (int j = 1; j < K; ++j) s += a[j] * b[j];
  return s;
}

/// The W states' d tau / d q and d tau / d v: column c of state l at q[l] + ld_q c, v[l] + ld_v c.
struct LaneMatrices {
  double* q[W];
  double* v[W];
  std::ptrdiff_t ld_q, ld_v;

  LaneMatrices(Eigen::Ref<MatX>& dq, Eigen::Ref<MatX>& dv, Eigen::Index b0, int nv)
      : ld_q(dq.outerStride()), ld_v(dv.outerStride()) {
    for (int l = 0; l < W; ++l) q[l] = dq.col((b0 + l) * nv).data(), v[l] = dv.col((b0 + l) * nv).data();
  }
};

/// x[j][l] <-> x[l][j]: W rows of W lanes (the W states' entries of W rows of a column) become
/// W rows of each state. In registers for W = 8 (three rounds of two-vector shuffles), through
/// memory otherwise.
PLUCKER_HOT inline void transpose(Pack (&x)[W]) {
#if defined(__AVX512F__)
  static_assert(W == 8);
  Pack t[8], u[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = __builtin_shufflevector(x[k], x[k + 1], 0, 8, 2, 10, 4, 12, 6, 14);
    t[k + 1] = __builtin_shufflevector(x[k], x[k + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
  for (int k = 0; k < 8; k += 4)
    for (int h = 0; h < 2; ++h) {
      u[k + h] = __builtin_shufflevector(t[k + h], t[k + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
      u[k + h + 2] = __builtin_shufflevector(t[k + h], t[k + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int h = 0; h < 4; ++h) {
    x[h] = __builtin_shufflevector(u[h], u[h + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    x[h + 4] = __builtin_shufflevector(u[h], u[h + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
#else
  Pack y[W];
  for (int j = 0; j < W; ++j)
    for (int l = 0; l < W; ++l) y[l][j] = x[j][l];
  for (int l = 0; l < W; ++l) x[l] = y[l];
#endif
}

/// Every entry of the W states' d tau / d q and d tau / d v. Column c of body k's joint: on the
/// rows of k's strict ancestors (2), (4), on those of k's subtree (1), (3), zero elsewhere. Each
/// entry is a Pack over the states; W rows of a column, transposed, are one vector store per
/// state. False when some entry is not finite.
bool fill_lanes(const Model& model, DerivativeLanes& d, const LaneMatrices& out) {
  const int n = model.nbodies(), nv = model.nv();
  Pack bad{};  // x * 0 summed: NaN in a lane where some entry is not finite
  for (int k = 1; k < n; ++k) {
    if (model.joint_nv(k) == 0) continue;
    std::fill(d.row_kind.begin(), d.row_kind.end(), RowKind::Zero);
    int count = 0;
    const Span* spans = d.supports.support_of(k, count);  // k's ancestors, k and its subtree
    for (int s = 0; s < count; ++s) std::fill(&d.row_kind[spans[s][0]], &d.row_kind[spans[s][1]], RowKind::Subtree);
    spans = d.supports.ancestors_of(k, count);
    for (int s = 0; s < count; ++s) std::fill(&d.row_kind[spans[s][0]], &d.row_kind[spans[s][1]], RowKind::Ancestor);
    for (int c = model.idx_v(k); c < model.idx_v(k) + model.joint_nv(k); ++c) {
      const Pack* psi_u = d.psi_u.data() + 9 * c;
      const Pack* zeta_s = d.zeta_s.data() + 9 * c;
      const Pack* y_q = d.y_q.data() + 6 * c;
      const Pack* y_v = d.y_v.data() + 6 * c;
      for (int r0 = 0; r0 < nv; r0 += W) {
        const int rows = std::min(W, nv - r0);
        Pack eq[W] = {}, ev[W] = {};
        for (int j = 0; j < rows; ++j) {
          const int r = r0 + j;
          if (d.row_kind[r] == RowKind::Subtree) {  // (1), (3)
            const Pack* PQ = d.PQ.data() + 9 * r;
            eq[j] = -dot_lanes<9>(PQ, psi_u);
            ev[j] = dot_lanes<9>(PQ, zeta_s);
          } else if (d.row_kind[r] == RowKind::Ancestor) {  // (2), (4)
            const Pack* S = d.S6.data() + 6 * r;
            eq[j] = dot_lanes<6>(S, y_q);
            ev[j] = dot_lanes<6>(S, y_v);
          }
          bad += eq[j] * 0.0 + ev[j] * 0.0;
        }
        transpose(eq);
        transpose(ev);
        for (int l = 0; l < W; ++l) {
          ops::store_first(eq[l], out.q[l] + out.ld_q * c + r0, rows);
          ops::store_first(ev[l], out.v[l] + out.ld_v * c + r0, rows);
        }
      }
    }
  }
  return simd::all_finite(bad);
}

const auto no_external_force = [](int, int, ops::ForceT<Pack>&) {};

DerivativeLanes& derivative_lanes(const Model& model, LaneScratch& s) {
  if (!s.derivatives) s.derivatives.reset(new DerivativeLanes(model));
  return *s.derivatives;
}

/// The lane RNEA's results, as derivative_terms reads them.
RecursionResults<Pack> lane_results(const LaneScratch& s) {
  return {s.X_up.data(), s.v.data(), s.a.data(), s.f.data()};
}

}  // namespace

bool rnea_derivatives_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q,
                            const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& A, Eigen::Index b0,
                            Eigen::Ref<MatX>& dTau_dq, Eigen::Ref<MatX>& dTau_dv) {
  const int nv = model.nv();
  if (nv == 0) return true;  // nothing to write
  DerivativeLanes& d = derivative_lanes(model, s);
  load_configurations(model, s, Q, b0);
  gather(V, b0, s.qd.data());
  gather(A, b0, s.x.data());
  const RneaState<Pack> st{s.X_up.data(), s.v.data(), s.a.data(), s.f.data(), s.sin_q.data(), s.cos_q.data()};
  rnea_passes<true, true>(model, st, s.q.data(), s.qd.data(), s.x.data(), s.out.data(), no_external_force);
  derivative_terms<ForceInput::None, Use::Rnea>(model, lane_results(s), d.X_base.data(), d.body, d.terms(), nullptr,
                                                static_cast<const Pack*>(nullptr));
  // A state whose results overflow is evaluated again alone, which names what is not finite.
  for (int k = 0; k < nv; ++k)
    if (!simd::all_finite(s.out[k])) return false;
  return fill_lanes(model, d, LaneMatrices(dTau_dq, dTau_dv, b0, nv));
}

bool aba_derivatives_lanes(const Model& model, LaneScratch& s, Data& data, const Eigen::Ref<const MatX>& Q,
                           const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& Tau, Eigen::Index b0,
                           Eigen::Ref<MatX>& dQdd_dq, Eigen::Ref<MatX>& dQdd_dv, Eigen::Ref<MatX>& dQdd_dtau) {
  const int nv = model.nv();
  if (nv == 0) return true;  // nothing to write
  DerivativeLanes& d = derivative_lanes(model, s);
  load_configurations(model, s, Q, b0);
  gather(V, b0, s.qd.data());
  const RneaState<Pack> st{s.X_up.data(), s.v.data(), s.a.data(), s.f.data(), s.sin_q.data(), s.cos_q.data()};
  rnea_passes<true, false>(model, st, s.q.data(), s.qd.data(), static_cast<const Pack*>(nullptr), s.out.data(),
                           no_external_force);  // C, the bias forces
  // M^-1 and qdd = M^-1 (tau - C), state by state. A singular M or a result that overflows
  // sends the group to the single-state function, which names the joint or what is not finite.
  for (int l = 0; l < W; ++l) {
    const Eigen::Index b = b0 + l;
    try {
      compute_poses(model, data, Q.col(b).data());
      const MatX& Minv = minv_impl(model, data);
      dQdd_dtau.middleCols(b * nv, nv) = Minv;
      for (int k = 0; k < nv; ++k) d.bias_free[k] = Tau(k, b) - s.out[k][l];
      d.qdd_one.noalias() = Minv * d.bias_free;
    } catch (const Error&) {
      return false;
    }
    if (!d.qdd_one.allFinite()) return false;
    for (int k = 0; k < nv; ++k) d.qdd[k][l] = d.qdd_one[k];
  }
  derivative_terms<ForceInput::None, Use::Aba>(model, lane_results(s), d.X_base.data(), d.body, d.terms(), nullptr,
                                               d.qdd.data());
  if (!fill_lanes(model, d, LaneMatrices(dQdd_dq, dQdd_dv, b0, nv))) return false;  // d tau / d x at a = qdd
  for (int l = 0; l < W; ++l) {  // d qdd / d x = -M^-1 d tau / d x, in place
    const Eigen::Index b = b0 + l;
    const Columns<double> q{dQdd_dq.col(b * nv).data(), dQdd_dq.outerStride()};
    const Columns<double> v{dQdd_dv.col(b * nv).data(), dQdd_dv.outerStride()};
    const Columns<const double> Minv{dQdd_dtau.col(b * nv).data(), dQdd_dtau.outerStride()};
    minus_minv_times(model, d.supports, Minv, {q.p, q.ld}, {v.p, v.ld}, q, v, d.in_place.data());
    if (!all_finite(dQdd_dq.middleCols(b * nv, nv)) || !all_finite(dQdd_dv.middleCols(b * nv, nv))) return false;
  }
  return true;
}

}  // namespace detail

}  // namespace plucker
