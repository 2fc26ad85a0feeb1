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
#include "plucker/algorithms/derivatives.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "algorithms/derivative_kernels.hpp"
#include "algorithms/fd_kernels.hpp"
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

/// The composites of a subtree in world coordinates: Ic = (m, h, Ibar) and B = (Ibar', n, f).
struct Composite {
  RigidBodyInertia inertia;  ///< Ic
  Vec3 n = Vec3::Zero(), f = Vec3::Zero();
  Mat3 Ibar_rate = Mat3::Zero();  ///< symmetric

  /// One body of inertia I (world coordinates) moving with v, in registers.
  PLUCKER_HOT inline void set(const RigidBodyInertia& I, const Motion& v) {
    using namespace ops;
    inertia = I;
    const auto w = load<double>(v.angular), vo = load<double>(v.linear), h = load<double>(I.first_moment());
    const auto Ib = rot<double>(I.inertia_origin());
    store_into(n, mul(Ib, w) + cross(h, vo));  // I v = [n; f]
    store_into(f, I.mass() * vo - cross(h, w));
    // Ibar' = W Ibar + (W Ibar)^T - (h vo^T + vo h^T) + 2 (vo . h) 1, column by column: column c of
    // W Ibar is w x Ibar e_c, of (W Ibar)^T = -Ibar W it is Ibar (e_c x w).
    const double twice_vh = 2.0 * dot(vo, h);
    const double* hc = I.first_moment().data();
    const double* vc = v.linear.data();
    const double* wc = v.angular.data();
    const auto e_x_w = [&](int c) {  // e_c x w
      return c == 0   ? make3<double>(0.0, -wc[2], wc[1])
             : c == 1 ? make3<double>(wc[2], 0.0, -wc[0])
                      : make3<double>(-wc[1], wc[0], 0.0);
    };
    const double* Ibc = I.inertia_origin().data();  // column c at 3c
    for (int c = 0; c < 3; ++c) {
      auto col = cross(w, load3c(Ibc + 3 * c)) + mul(Ib, e_x_w(c)) - (h * vc[c] + vo * hc[c]);
      store_col(col, c, twice_vh);
    }
  }
  PLUCKER_HOT inline void add(const Composite& o) {
    inertia += o.inertia;
    n += o.n;
    f += o.f;
    Ibar_rate += o.Ibar_rate;
  }
  /// Ic x.
  PLUCKER_HOT inline ops::ForceT<double> inertia_times(const ops::MotionT<double>& x) const {
    return ops::times(inertia, x);
  }
  /// B u, for u = (u_w, anything): B acts on the angular part only.
  PLUCKER_HOT inline ops::ForceT<double> rate_times(const ops::reg3<double>& u_w) const {
    using namespace ops;
    return {mul(rot<double>(Ibar_rate), u_w) + cross(u_w, load<double>(n)), cross(u_w, 2.0 * load<double>(f))};
  }
  /// The three nonzero rows of B^T s.
  PLUCKER_HOT inline ops::reg3<double> rate_transpose_times(const ops::MotionT<double>& s) const {
    using namespace ops;
    return mul(rot<double>(Ibar_rate), s.angular) + cross(load<double>(n), s.angular) +
           cross(2.0 * load<double>(f), s.linear);
  }

 private:
  PLUCKER_HOT static inline ops::reg3<double> load3c(const double* p) { return ops::make3<double>(p[0], p[1], p[2]); }
  /// Column c of Ibar' = col, plus d on the diagonal.
  template <class R>
  PLUCKER_HOT inline void store_col(const R& col, int c, double d) {
    const R with_d = col + ops::unit_times<double>(c, d);
#if defined(__AVX2__)
    ops::store3(with_d, Ibar_rate.data() + 3 * c);  // column-major: column c at 3c
#else
    for (int r = 0; r < 3; ++r) Ibar_rate(r, c) = with_d[r];
#endif
  }
};

/// A motion or force of registers from its six stored numbers [angular; linear], and back.
PLUCKER_HOT inline ops::MotionT<double> motion_at(const double* x) {
  return {ops::make3<double>(x[0], x[1], x[2]), ops::make3<double>(x[3], x[4], x[5])};
}
template <class V>
PLUCKER_HOT inline void put(double* x, const V& value) {
  for (int r = 0; r < 3; ++r) x[r] = value.angular[r], x[3 + r] = value.linear[r];
}

/// Velocity ranges [begin, end) of a set of bodies, merged and ascending.
using Span = std::array<int, 2>;

struct DerivativesWorkspace : detail::WorkspaceOf<DerivativesWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Derivatives;
  using RowsX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  explicit DerivativesWorkspace(const Model& model) {
    const int n = model.nbodies(), nv = model.nv();
    const auto nb = static_cast<std::size_t>(n);
    // Rows stored contiguously (padded by ops::kColumnPadding for whole SIMD packs): the entries
    // of a column of the results over a range of rows are one pass over these rows.
    PQ.setZero(9, nv + ops::kColumnPadding);
    S_rows.setZero(6, nv + ops::kColumnPadding);
    R_rows.setZero(6, nv + ops::kColumnPadding);
    for (MatX* x : {&psi_u, &zeta_s}) x->setZero(9, nv);
    for (MatX* x : {&S, &y_q, &y_v}) x->setZero(6, nv);
    composite.assign(nb, Composite{});
    v.assign(nb, Motion());
    a.assign(nb, Motion());
    F.assign(nb, Force());
    Fe.assign(nb, Force());
    G.assign(nb, Force());
    acc.assign(nb, Motion());
    // The rows where column k of d tau / d x can be nonzero: the joints of k's ancestors, k and
    // k's descendants (a body on another branch neither moves k's subtree nor is moved by k).
    // And, for the subtree fill, the strict ancestors' rows alone.
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

  /// World-aligned external forces moved to the world origin (allocated on first use).
  std::vector<Force> f_world;
  /// Per velocity index (world coordinates). By rows: PQ = [P; Q] (P = Ic S, Q's three nonzero
  /// rows) of the row's body, S, and R = Fe-bar^T S (world-frame external forces). By columns:
  /// psi_u = [psi; angular part of u] and zeta_s = [zeta; angular part of S] of the column's
  /// joint, so that each entry of (1), (3) is one dot product of a row's PQ with these; S; y_q,
  /// y_v: the vectors of (2) and (4).
  RowsX PQ, S_rows, R_rows;
  MatX psi_u, zeta_s, S, y_q, y_v;
  /// Per body (world coordinates): the composites, v, a, the joint force F, the composite of
  /// the world-frame external forces Fe; for Use::Aba the accelerations qdd adds to the bias
  /// forces' (acc) and the forces they add (G, summed over the subtree).
  std::vector<Composite> composite;
  std::vector<Motion> v, a, acc;
  std::vector<Force> F, Fe, G;
  /// Per body k (topology): support[support_begin[k], support_begin[k + 1]) the velocity ranges
  /// of its ancestors, itself and its descendants; ancestors[...] those of its strict ancestors.
  std::vector<Span> support, ancestors;
  std::vector<int> support_begin, ancestors_begin;
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
  const Span* spans = ws.ancestors_of(k, count);
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
template <ForceInput FI, Use U>
void inverse_dynamics_derivatives(const Model& model, Data& data, const Force* f_ext, const double* qdd) {
  using namespace ops;
  DerivativesWorkspace& ws = detail::workspace<DerivativesWorkspace>(model, data);
  const int n = model.nbodies(), nv = model.nv();
  data.X_base.resize(static_cast<std::size_t>(n));
  data.X_base[0] = Transform();

  // World coordinates of each body's quantities, its own composites, and the column vectors of
  // its joint (from its parent's motion).
  const Motion a_base(Vec3::Zero(), -model.gravity());  // a_0 = -g
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), v0 = model.idx_v(i);
    const Transform& X = data.X_base[i] = data.X_up[i] * data.X_base[p];  // i_X_0
    const MotionT<double> v = apply_inverse(X, data.v[i]);
    MotionT<double> a = apply_inverse(X, data.a[i]);
    store_into(ws.v[i], v);
    store_into(ws.F[i], apply_inverse(X, data.f[i]));
    RigidBodyInertia I;  // X^T I_i X: the body's inertia in world coordinates (Eq. 9's congruence)
    add_congruence(X, model.inertia(i), I);
    ws.composite[i].set(I, ws.v[i]);
    if constexpr (FI == ForceInput::World) ws.Fe[i] = f_ext[i];
    const Motion v_parent = p > 0 ? ws.v[p] : Motion();
    const Motion& a_parent = p > 0 ? ws.a[p] : a_base;
    MotionT<double> acc{};  // Use::Aba: acc_i = acc_parent + S_i qdd_i (Eq. 4's S qdd, world coordinates)
    if constexpr (U == Use::Aba)
      if (p > 0) acc = acc + ws.acc[p];
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int c = 0, k = v0; c < joint_dofs(joint); ++c, ++k) {
        MotionT<double> s_body{};
        add_column<double>(s_body, column(joint, c), 1.0);
        const MotionT<double> s = apply_inverse(X, s_body);
        if constexpr (U == Use::Aba) acc.angular += s.angular * qdd[k], acc.linear += s.linear * qdd[k];
        const detail::TangentStep step = detail::tangent_step(Motion(s), v_parent, a_parent, ws.v[i]);
        put(ws.S.col(k).data(), s);
        for (int r = 0; r < 3; ++r) ws.S_rows(r, k) = s.angular[r], ws.S_rows(3 + r, k) = s.linear[r];
        double* psi_u = ws.psi_u.col(k).data();
        put(psi_u, step.psi);
        for (int r = 0; r < 3; ++r) psi_u[6 + r] = step.u.angular[r];
        double* zeta_s = ws.zeta_s.col(k).data();
        put(zeta_s, step.zeta);
        for (int r = 0; r < 3; ++r) zeta_s[6 + r] = s.angular[r];
      }
    });
    if constexpr (U == Use::Aba) {  // a at qdd, and the force I acc it adds (Eq. 5)
      store_into(ws.acc[i], acc);
      a += acc;
      store_into(ws.G[i], times(I, acc));
    }
    store_into(ws.a[i], a);
  }
  for (int i = n - 1; i > 0; --i) {  // composites over the subtrees
    const int p = model.parent(i);
    if constexpr (U == Use::Aba) ws.F[i] += ws.G[i];  // G_i is complete: F_i at qdd
    if (p == 0) continue;
    ws.composite[p].add(ws.composite[i]);
    if constexpr (FI == ForceInput::World) ws.Fe[p] += ws.Fe[i];
    if constexpr (U == Use::Aba) ws.G[p] += ws.G[i];
  }
  for (int i = 1; i < n; ++i) {
    const Composite& C = ws.composite[i];
    Force F_moving = ws.F[i];  // the part of F_i that moves with the subtree
    if constexpr (FI == ForceInput::World) F_moving += ws.Fe[i];
    for (int k = model.idx_v(i); k < model.idx_v(i) + model.joint_nv(i); ++k) {
      const MotionT<double> s = motion_at(ws.S.col(k).data());
      const double* psi_u = ws.psi_u.col(k).data();
      const double* zeta_s = ws.zeta_s.col(k).data();
      const MotionT<double> psi = motion_at(psi_u), zeta = motion_at(zeta_s);
      const auto u_w = make3<double>(psi_u[6], psi_u[7], psi_u[8]);  // B ignores u's linear part
      const ForceT<double> P = C.inertia_times(s);
      const auto Q = C.rate_transpose_times(s);
      for (int r = 0; r < 3; ++r) ws.PQ(r, k) = P.angular[r], ws.PQ(3 + r, k) = P.linear[r], ws.PQ(6 + r, k) = Q[r];
      if constexpr (FI == ForceInput::World) {  // R s = Fe-bar^T s = -(s x* Fe)
        const ForceT<double> R = crf(s, ws.Fe[i]);
        for (int r = 0; r < 3; ++r) ws.R_rows(r, k) = -R.angular[r], ws.R_rows(3 + r, k) = -R.linear[r];
      }
      put(ws.y_q.col(k).data(), crf(s, F_moving) - C.inertia_times(psi) - C.rate_times(u_w));  // (2)
      put(ws.y_v.col(k).data(), C.inertia_times(zeta) + C.rate_times(s.angular));              // (4)
    }
  }

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

/// External forces in world axes applied at the body origins: the world-fixed forces of the
/// same value, [n + p_i x f; f] about the world origin, plus what moving their points does:
/// d/dq_c (p_i x f) = pdot_c x f, so d tau / d q_c gains -J_i^T [pdot_c x f; 0], with pdot_c the
/// velocity of body i's origin per unit velocity c (world coordinates).
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
template <int NB>
PLUCKER_HOT inline void minus_minv_block(const MatX& Minv, const double* dq, const double* dv, const Span* spans,
                                         int count, int rb, int lanes, double* out_q, double* out_v) {
  const auto nv = static_cast<std::ptrdiff_t>(Minv.rows());
  Pack acc_q[NB] = {}, acc_v[NB] = {};
  for (int s = 0; s < count; ++s)
    for (int r = spans[s][0]; r < spans[s][1]; ++r) {
      const double* col = Minv.data() + nv * r + rb;  // Minv(:, r)
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

/// d qdd / d x = -M^-1 d tau / d x for x = q and v, column by column: column c of d tau / d x is
/// zero outside the support of its body (ancestors, itself, descendants), so only those
/// columns of M^-1 enter its product (on a branched robot, a third of them or fewer).
void minus_minv_times(const Model& model, const DerivativesWorkspace& ws, const MatX& Minv, const MatX& dq,
                      const MatX& dv, MatX& out_q, MatX& out_v) {
  const int nv = model.nv();
  constexpr int kBlock = 4;  // packs of rows per pass over the support
  for (int k = 1; k < model.nbodies(); ++k) {
    int count = 0;
    const Span* spans = ws.support_of(k, count);
    for (int c = model.idx_v(k); c < model.idx_v(k) + model.joint_nv(k); ++c) {
      const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(nv) * c;
      const double *q = dq.data() + at, *v = dv.data() + at;
      double *oq = out_q.data() + at, *ov = out_v.data() + at;
      for (int rb = 0; rb < nv; rb += kBlock * W) {
        const int rows = std::min(kBlock * W, nv - rb), packs = (rows + W - 1) / W, lanes = rows - (packs - 1) * W;
        switch (packs) {
          case 1:
            minus_minv_block<1>(Minv, q, v, spans, count, rb, lanes, oq, ov);
            break;
          case 2:
            minus_minv_block<2>(Minv, q, v, spans, count, rb, lanes, oq, ov);
            break;
          case 3:
            minus_minv_block<3>(Minv, q, v, spans, count, rb, lanes, oq, ov);
            break;
          default:
            minus_minv_block<kBlock>(Minv, q, v, spans, count, rb, lanes, oq, ov);
        }
      }
    }
  }
}

void check_finite_matrix(const MatX& X, const char* fn, const char* name) {
  if (!std::isfinite(X.sum()) && !X.allFinite())
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
  minus_minv_times(model, detail::workspace<DerivativesWorkspace>(model, data), Minv, data.dtau_dq, data.dtau_dv,
                   detail::sized(data.dqdd_dq, nv, nv), detail::sized(data.dqdd_dv, nv, nv));
  check_finite_matrix(data.dqdd_dq, fn, "d qdd / d q");
  check_finite_matrix(data.dqdd_dv, fn, "d qdd / d v");
}

}  // namespace plucker
