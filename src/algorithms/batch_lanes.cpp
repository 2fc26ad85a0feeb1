// RNEA, ABA and CRBA over W states at once, one state per SIMD lane (spatial/simd.hpp): the
// RNEA and the ABA are the recursions of rnea.hpp and aba.hpp on simd::Pack, the CRBA works in
// the frames of the subtrees' top bodies (below). The joint kinds are dispatched once per body
// for the whole group of states.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "algorithms/aba.hpp"
#include "algorithms/lanes.hpp"
#include "algorithms/rnea.hpp"

namespace plucker::detail {

using namespace ops;
using simd::Pack;
using simd::W;

LaneScratch::LaneScratch(const Model& model) {
  const auto n = static_cast<std::size_t>(model.nbodies()), nq = static_cast<std::size_t>(model.nq()),
             nv = static_cast<std::size_t>(model.nv());
  q.resize(nq);
  sin_q.resize(nq);
  cos_q.resize(nq);
  qd.resize(nv);
  x.resize(nv);
  out.resize(nv);
  X_up.resize(n);
  v.resize(n);
  a.resize(n);
  c.resize(n);
  f.resize(n);
  I_articulated.resize(n);
  U.resize(nv);
  D_inv.resize(6 * nv);
  u.resize(nv);
  I_composite.resize(n);
  X_top.resize(n);
  S.resize(nv);
}

void gather(const Eigen::Ref<const MatX>& X, Eigen::Index b0, Pack* out) {
  for (int l = 0; l < W; ++l) {
    const double* col = X.col(b0 + l).data();
    for (Eigen::Index k = 0; k < X.rows(); ++k) out[k][l] = col[k];
  }
}

void load_configurations(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, Eigen::Index b0) {
  gather(Q, b0, s.q.data());
  // The nq Packs are nq W contiguous doubles (GCC vector types alias their element type):
  // sincos_batch evaluates them in its full SIMD groups, with its libm fallback.
  static_assert(sizeof(Pack) == W * sizeof(double));
  sincos_batch(reinterpret_cast<const double*>(s.q.data()), reinterpret_cast<double*>(s.sin_q.data()),
               reinterpret_cast<double*>(s.cos_q.data()), model.nq() * W);
}

namespace {

/// X(k, b0 + l) = in[k][l].
void scatter(const Pack* in, Eigen::Index b0, Eigen::Ref<MatX>& X) {
  for (int l = 0; l < W; ++l) {
    double* col = X.col(b0 + l).data();
    for (Eigen::Index k = 0; k < X.rows(); ++k) col[k] = in[k][l];
  }
}

const auto no_external_force = [](int, int, ForceT<Pack>&) {};

}  // namespace

void rnea_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
                const Eigen::Ref<const MatX>& A, Eigen::Index b0, Eigen::Ref<MatX>& Tau) {
  load_configurations(model, s, Q, b0);
  gather(V, b0, s.qd.data());
  gather(A, b0, s.x.data());
  const RneaState<Pack> st{s.X_up.data(), s.v.data(), s.a.data(), s.f.data(), s.sin_q.data(), s.cos_q.data()};
  rnea_passes<true, true>(model, st, s.q.data(), s.qd.data(), s.x.data(), s.out.data(), no_external_force);
  scatter(s.out.data(), b0, Tau);
}

bool aba_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
               const Eigen::Ref<const MatX>& Tau, Eigen::Index b0, Eigen::Ref<MatX>& Qdd) {
  load_configurations(model, s, Q, b0);
  gather(V, b0, s.qd.data());
  gather(Tau, b0, s.x.data());
  const AbaState<Pack> st{s.X_up.data(), s.v.data(),     s.a.data(), s.c.data(),     s.I_articulated.data(), s.f.data(),
                          s.U.data(),    s.D_inv.data(), s.u.data(), s.sin_q.data(), s.cos_q.data()};
  // A pivot of some lane that fails the screen sends the group to the single-state ABA, which
  // judges it exactly and names the joint.
  const auto screen = [](int, const ArticulatedT<Pack>& P) {
    const Pack threshold = simd::max(kSingularPivot * pivot_scale(P), simd::splat(kSmallestPivot));
    return [threshold](int, const Pack& pivot) { return greater(pivot, threshold); };
  };
  if (!aba_passes(model, st, s.q.data(), s.qd.data(), s.x.data(), s.out.data(), no_external_force, screen))
    return false;
  scatter(s.out.data(), b0, Qdd);
  return true;
}

// ---- CRBA (paper 000 §3.2, Eqs. 9-10), in the coordinates of each subtree's top body -------
// crba.cpp carries every f^C_j up the support path of j, one force transform per entry of M;
// in lanes that transform costs three times the entry itself. Here every quantity of body i
// is expressed instead in the frame of the top body t(i) of its support path (the child of
// the base it descends from), where those transforms are identities:
//   h_k = tX_i S_i (column k of S_i),  I^C_i = sum over the subtree of tX*_j I_j jX_t  (Eq. 9)
//   f^C_k = I^C_i h_k,  M_rk = h_r^T f^C_k for every DoF r in the support of k     (Eq. 10)
// so each DoF k takes the DoFs r of row k of jsim_pattern (its support path, then its own
// joint's DoFs up to k: column k of the upper triangle), independent dot products handed to
// sink.put(e, r, k, M_rk, own) (e: the entry's index in the pattern; own: r and k are DoFs of
// the same joint). t(i) rather than the base: the entries then do not depend on the pose of a
// floating root (as in link coordinates), nor lose digits to its distance from the origin.
// ahead.step() once per body of each pass (see WritePrefetch).
namespace {

/// Prefetches the cache lines of [next, end) into L2, a few per step: the dense matrices of
/// the next group of states, while this group computes, so that fetching the lines it will
/// write overlaps the arithmetic instead of stalling the zeroing (a line's first store waits
/// for the line). The hint is a read (prefetcht1): measured on talos_full_ff, 1,000 states,
/// it beat prefetchw (which fills L1) by 2-3%, and no prefetch by 5-7%.
struct WritePrefetch {
  const char* next = nullptr;
  const char* end = nullptr;
  std::size_t lines_per_step = 0;
  void step() {
    for (std::size_t k = 0; k < lines_per_step && next < end; ++k, next += 64) __builtin_prefetch(next, 0, 2);
  }
};

/// h = X^-1 s: column s of body i's motion subspace in the coordinates of frame A, X = i_X_A.
/// A unit column e_k is read off row k % 3 of E (no products by its zeros).
MotionT<Pack> column_in(const XformT<Pack>& X, const UnitColumn& s) {
  const int k = s.row % 3;
  const V3<Pack> e{{X.E(k, 0), X.E(k, 1), X.E(k, 2)}};
  if (s.row < 3) return {e, cross(X.r, e)};
  return {V3<Pack>{}, e};
}
template <class C>
MotionT<Pack> column_in(const XformT<Pack>& X, const C& s) {
  MotionT<Pack> m{};
  add_column<Pack>(m, s, simd::splat(1.0));
  return apply_inverse(X, m);
}
/// The column itself (a top body's frame).
template <class C>
MotionT<Pack> column_motion(const C& s) {
  MotionT<Pack> m{};
  add_column<Pack>(m, s, simd::splat(1.0));
  return m;
}

template <class Sink>
void crba_lanes_entries(const Model& model, const JsimPattern& pattern, LaneScratch& s, const Eigen::Ref<const MatX>& Q,
                        Eigen::Index b0, Sink& sink, WritePrefetch& ahead) {
  const int n = model.nbodies();
  load_configurations(model, s, Q, b0);
  for (int i = 1; i < n; ++i) {
    ahead.step();
    const int p = model.parent(i), iv = model.idx_v(i), iq = model.idx_q(i);
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      const int d = joint_dofs(joint);
      if (p == 0) {  // a top body: its own frame
        for (int k = 0; k < d; ++k) s.S[iv + k] = column_motion(column(joint, k));
        s.I_composite[i] = splat(model.inertia(i));
        return;
      }
      const auto X_up = compose(joint, JointQ<Pack>{s.q.data() + iq, s.sin_q.data() + iq, s.cos_q.data() + iq}, X_tree);
      const XformT<Pack>& X = s.X_top[i] = model.parent(p) == 0 ? to_xform(X_up) : compose(X_up, s.X_top[p]);  // i_X_t
      for (int k = 0; k < d; ++k) s.S[iv + k] = column_in(X, column(joint, k));  // h = tX_i S_i
      s.I_composite[i] = InertiaT<Pack>{};
      add_congruence(X, model.inertia(i), s.I_composite[i]);  // tX*_i I_i iX_t
    });
  }
  for (int i = n - 1; i > 0; --i) {
    ahead.step();
    const int iv = model.idx_v(i), end = iv + model.joint_nv(i);
    for (int k = iv; k < end; ++k) {
      const ForceT<Pack> f = times(s.I_composite[i], s.S[k]);  // f^C_k = I^C_i h_k  (Eq. 10)
      // Row k of the pattern: the support path of k's joint, then its own DoFs up to k.
      const int row_end = pattern.row_start[k + 1], own_first = row_end - 1 - (k - iv);
      for (int e = pattern.row_start[k]; e < row_end; ++e) {
        const int r = pattern.col[e];
        sink.put(e, r, k, dot(s.S[r], f), e >= own_first);
      }
    }
    const int p = model.parent(i);
    if (p > 0) s.I_composite[p] += s.I_composite[i];  // Eq. 9; t(p) = t(i), so the transform is 1
  }
}

}  // namespace

void crba_lanes(const Model& model, const JsimPattern& pattern, LaneScratch& s, const Eigen::Ref<const MatX>& Q,
                Eigen::Index b0, CrbaOut out, Eigen::Ref<MatX>& M) {
  WritePrefetch ahead;
  if (out == CrbaOut::Packed) {
    struct {
      double* packed[W];
      void put(int e, int, int, const Pack& value, bool) {
        for (int l = 0; l < W; ++l) packed[l][e] = value[l];
      }
    } sink;
    for (int l = 0; l < W; ++l) sink.packed[l] = M.col(b0 + l).data();
    crba_lanes_entries(model, pattern, s, Q, b0, sink, ahead);
    return;
  }
  // Dense: each lane's matrix zeroed, then M(r, k) of the upper triangle, and its mirror
  // M(k, r) for Full, or for Upper inside a multi-DoF joint's own block (as crba).
  const int nv = model.nv();
  if (nv == 0) return;
  struct {
    double* M[W];
    Eigen::Index ld;
    bool full;
    void put(int, int r, int k, const Pack& value, bool own) {
      for (int l = 0; l < W; ++l) M[l][k * ld + r] = value[l];
      if (r != k && (full || own))
        for (int l = 0; l < W; ++l) M[l][r * ld + k] = value[l];
    }
  } sink;
  sink.ld = M.outerStride();
  sink.full = out == CrbaOut::Full;
  for (int l = 0; l < W; ++l) {
    double* Ml = sink.M[l] = M.col((b0 + l) * nv).data();
    for (int c = 0; c < nv; c += sink.ld == nv ? nv : 1)  // one fill when the columns are contiguous
      std::fill_n(Ml + c * sink.ld, sink.ld == nv ? nv * nv : nv, 0.0);
  }
  // The next group's W matrices (contiguous after this group's, when M's columns are).
  const Eigen::Index states = M.cols() / nv, next_end = std::min<Eigen::Index>(b0 + 2 * W, states);
  if (sink.ld == nv && b0 + W < next_end) {
    ahead.next = reinterpret_cast<const char*>(M.col((b0 + W) * nv).data());
    ahead.end = reinterpret_cast<const char*>(M.col((next_end - 1) * nv).data() + nv * nv);
    const auto lines = static_cast<std::size_t>(ahead.end - ahead.next) / 64 + 1;
    const auto steps = 2 * static_cast<std::size_t>(model.nbodies() - 1);
    ahead.lines_per_step = (lines + steps - 1) / steps;
  }
  crba_lanes_entries(model, pattern, s, Q, b0, sink, ahead);
}

}  // namespace plucker::detail
