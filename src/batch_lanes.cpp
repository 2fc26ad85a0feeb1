// RNEA, ABA and CRBA over W states at once, one state per SIMD lane (detail/lanes.hpp): the
// recursions of rnea.cpp, aba.cpp and crba.cpp line for line, every scalar replaced by a Pack
// of W values. The joint kinds are dispatched once per body for the whole group of states.
#include <algorithm>
#include <type_traits>
#include <utility>

#include "detail/checks.hpp"
#include "detail/lane_kernels.hpp"

namespace plucker::detail {

using namespace lanes;

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

bool lanes_supported(const Model& model) {
  for (int i = 1; i < model.nbodies(); ++i)
    if (!visit_joint(model.joint(i), [](const auto& joint) { return supported<std::decay_t<decltype(joint)>>; }))
      return false;
  return true;
}

namespace {

/// out[k][l] = X(k, b0 + l): W columns of a state matrix as one Pack per row (SoA).
void gather(const Eigen::Ref<const MatX>& X, Eigen::Index b0, Pack* out) {
  for (int l = 0; l < W; ++l) {
    const double* col = X.col(b0 + l).data();
    for (Eigen::Index k = 0; k < X.rows(); ++k) out[k][l] = col[k];
  }
}

/// X(k, b0 + l) = in[k][l].
void scatter(const Pack* in, Eigen::Index b0, Eigen::Ref<MatX>& X) {
  for (int l = 0; l < W; ++l) {
    double* col = X.col(b0 + l).data();
    for (Eigen::Index k = 0; k < X.rows(); ++k) col[k] = in[k][l];
  }
}

/// q of the W states, and sin/cos of all their coordinates (as evaluate_sincos does for one).
void load_configurations(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, Eigen::Index b0) {
  gather(Q, b0, s.q.data());
  // The nq Packs are nq W contiguous doubles (GCC vector types alias their element type):
  // sincos_batch evaluates them in its full SIMD groups, with its libm fallback.
  static_assert(sizeof(Pack) == W * sizeof(double));
  sincos_batch(reinterpret_cast<const double*>(s.q.data()), reinterpret_cast<double*>(s.sin_q.data()),
               reinterpret_cast<double*>(s.cos_q.data()), model.nq() * W);
}

/// X_up[i] = X_J(q_i) X_tree(i) for every lane.
template <class J>
const XformL& compose_joint(const Model& model, LaneScratch& s, const J& joint, int i) {
  const int iq = model.idx_q(i);
  return s.X_up[i] =
             compose(joint, s.q.data() + iq, s.sin_q.data() + iq, s.cos_q.data() + iq, model.X_tree(i));
}

/// m += S x for the joint's nv values x[0..nv) (Eqs. 3-4).
template <class J>
void add_joint_motion(const J& joint, MotionL& m, const Pack* x) {
  for (int k = 0; k < J::NV; ++k) add_motion(s_column(joint, k), m, x[k]);
}

/// D^-1 of the symmetric d x d D of every lane by D = L diag(p) L^T (L unit lower), so the
/// pivots p_k are those of the scalar ABA's Cholesky factor (squared diagonal). False when a
/// pivot of some lane is not above kSingularPivot * scale.
template <int d>
bool invert_spd(const Pack (&D)[d][d], Pack scale, Pack* Dinv) {
  const Pack threshold = kSingularPivot * scale;
  if constexpr (d == 1) {
    if (!all_greater(D[0][0], threshold)) return false;
    Dinv[0] = 1.0 / D[0][0];
    return true;
  } else {
    Pack L[d][d], pivot[d], p_inv[d];
    for (int j = 0; j < d; ++j) {
      pivot[j] = D[j][j];
      for (int k = 0; k < j; ++k) pivot[j] -= L[j][k] * L[j][k] * pivot[k];
      if (!all_greater(pivot[j], threshold)) return false;
      p_inv[j] = 1.0 / pivot[j];
      for (int i = j + 1; i < d; ++i) {
        Pack s = D[i][j];
        for (int k = 0; k < j; ++k) s -= L[i][k] * L[j][k] * pivot[k];
        L[i][j] = s * p_inv[j];
      }
    }
    // L^-1 (unit lower), then D^-1 = L^-T diag(1/p) L^-1.
    Pack Li[d][d];
    for (int j = 0; j < d; ++j) {
      for (int i = 0; i < j; ++i) Li[i][j] = Pack{};
      Li[j][j] = splat(1.0);
      for (int i = j + 1; i < d; ++i) {
        Pack s = -L[i][j];
        for (int k = j + 1; k < i; ++k) s -= L[i][k] * Li[k][j];
        Li[i][j] = s;
      }
    }
    for (int r = 0; r < d; ++r)
      for (int c = r; c < d; ++c) {
        Pack s = Li[c][r] * p_inv[c] * Li[c][c];
        for (int k = c + 1; k < d; ++k) s += Li[k][r] * p_inv[k] * Li[k][c];
        Dinv[r * d + c] = Dinv[c * d + r] = s;
      }
    return true;
  }
}

}  // namespace

// ---- RNEA (rnea.cpp; paper 000 §3.1) -----------------------------------------------------
void rnea_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
                const Eigen::Ref<const MatX>& A, Eigen::Index b0, Eigen::Ref<MatX>& Tau) {
  const int n = model.nbodies();
  load_configurations(model, s, Q, b0);
  gather(V, b0, s.qd.data());
  gather(A, b0, s.x.data());
  s.v[0] = MotionL::zero();
  s.a[0] = {V3::zero(), V3::splat(-model.gravity())};  // a_0 = -g

  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (supported<J>) {
        const XformL& X = compose_joint(model, s, joint, i);
        MotionL v = X.apply(s.v[p]);
        add_joint_motion(joint, v, s.qd.data() + iv);                                  // Eq. 3
        MotionL a = X.apply(s.a[p]) + velocity_product(joint, v, s.qd.data() + iv);    // Eq. 4, v x h qd
        add_joint_motion(joint, a, s.x.data() + iv);                                   // Eq. 4, h qdd
        s.v[i] = v;
        s.a[i] = a;
      }
    });
    const RigidBodyInertia& I = model.inertia(i);
    s.f[i] = mul(I, s.a[i]) + cross(s.v[i], mul(I, s.v[i]));  // Eq. 5
  }

  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (supported<J>)
        for (int k = 0; k < J::NV; ++k) s.out[iv + k] = project(s_column(joint, k), s.f[i]);  // Eq. 8
    });
    if (p > 0) s.f[p] += s.X_up[i].apply_inverse(s.f[i]);  // Eq. 7
  }
  scatter(s.out.data(), b0, Tau);
}

// ---- ABA (aba.cpp; paper 000 §3.3, paper 002 Eqs. 45-46, 60) ------------------------------
bool aba_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
               const Eigen::Ref<const MatX>& Tau, Eigen::Index b0, Eigen::Ref<MatX>& Qdd) {
  const int n = model.nbodies();
  load_configurations(model, s, Q, b0);
  gather(V, b0, s.qd.data());
  gather(Tau, b0, s.x.data());
  s.v[0] = MotionL::zero();

  // Pass 1: v_i, c_i = v_i x h_i qd_i, I^A_i = I_i, p^A_i = v_i x* I_i v_i.
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (supported<J>) {
        const XformL& X = compose_joint(model, s, joint, i);
        MotionL v = X.apply(s.v[p]);
        add_joint_motion(joint, v, s.qd.data() + iv);
        s.c[i] = velocity_product(joint, v, s.qd.data() + iv);
        s.v[i] = v;
      }
    });
    const RigidBodyInertia& I = model.inertia(i);
    s.I_articulated[i] = Sym6L::splat(I);
    s.f[i] = cross(s.v[i], mul(I, s.v[i]));
  }

  // Pass 2 (inward).
  bool regular = true;
  for (int i = n - 1; i > 0 && regular; --i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (supported<J>) {
        constexpr int d = J::NV;
        Sym6L& IA = s.I_articulated[i];
        const XformL& X = s.X_up[i];
        if constexpr (d == 0) {
          if (p > 0) {
            IA.add_transformed_inverse_to(X, s.I_articulated[p]);
            s.f[p] += X.apply_inverse(s.f[i] + IA * s.c[i]);
          }
        } else {
          ForceL* U = s.U.data() + iv;
          Pack D[d][d];
          for (int k = 0; k < d; ++k) U[k] = times(IA, s_column(joint, k));  // U_i = I^A_i h_i
          for (int r = 0; r < d; ++r)
            for (int k = 0; k < d; ++k) D[r][k] = project(s_column(joint, r), U[k]);  // D_i = h_i^T U_i
          for (int r = 0; r < d; ++r) s.u[iv + r] = s.x[iv + r] - project(s_column(joint, r), s.f[i]);
          Pack scale = IA.m[0][0];
          for (int k = 1; k < 6; ++k) scale = max(scale, IA.m[k][k]);
          Pack* Dinv = s.D_inv.data() + 6 * iv;
          if (!invert_spd<d>(D, scale, Dinv)) {
            regular = false;
            return;
          }
          if (p > 0) {
            ForceL UDinv[d];  // U D^-1
            for (int k = 0; k < d; ++k) {
              UDinv[k] = ForceL::zero();
              for (int j = 0; j < d; ++j) {
                const Pack w = Dinv[j * d + k];
                UDinv[k].ang += U[j].ang * w;
                UDinv[k].lin += U[j].lin * w;
              }
            }
            for (int r = 0; r < 6; ++r)  // I^a = I^A - U D^-1 U^T   (Eq. 12)
              for (int col = 0; col < 6; ++col)
                for (int k = 0; k < d; ++k) IA.m[r][col] -= UDinv[k].at(r) * U[k].at(col);
            ForceL pa = s.f[i] + IA * s.c[i];  // p^a = p^A + I^a c + U D^-1 u   (Eq. 12-13)
            for (int k = 0; k < d; ++k) {
              pa.ang += UDinv[k].ang * s.u[iv + k];
              pa.lin += UDinv[k].lin * s.u[iv + k];
            }
            IA.add_transformed_inverse_to(X, s.I_articulated[p]);
            s.f[p] += X.apply_inverse(pa);
          }
        }
      }
    });
  }
  if (!regular) return false;

  // Pass 3 (outward): a' = iX_p a_p + c_i, qdd_i = D^-1 (u_i - U_i^T a'), a_i = a' + h_i qdd_i.
  s.a[0] = {V3::zero(), V3::splat(-model.gravity())};
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (supported<J>) {
        constexpr int d = J::NV;
        MotionL a = s.X_up[i].apply(s.a[p]) + s.c[i];
        if constexpr (d > 0) {
          const ForceL* U = s.U.data() + iv;
          const Pack* Dinv = s.D_inv.data() + 6 * iv;
          Pack rhs[d];
          for (int k = 0; k < d; ++k) rhs[k] = s.u[iv + k] - (dot(U[k].ang, a.ang) + dot(U[k].lin, a.lin));
          for (int r = 0; r < d; ++r) {
            Pack qdd = Dinv[r * d] * rhs[0];
            for (int k = 1; k < d; ++k) qdd += Dinv[r * d + k] * rhs[k];
            s.out[iv + r] = qdd;  // Eq. 14
          }
          add_joint_motion(joint, a, s.out.data() + iv);
        }
        s.a[i] = a;
      }
    });
  }
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

template <class Sink>
void crba_lanes_entries(const Model& model, const JsimPattern& pattern, LaneScratch& s,
                        const Eigen::Ref<const MatX>& Q, Eigen::Index b0, Sink& sink, WritePrefetch& ahead) {
  const int n = model.nbodies();
  load_configurations(model, s, Q, b0);
  for (int i = 1; i < n; ++i) {
    ahead.step();
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (supported<J>) {
        if (p == 0) {  // a top body: its own frame
          for (int k = 0; k < J::NV; ++k) s.S[iv + k] = motion_column(s_column(joint, k));
          s.I_composite[i] = InertiaL::splat(model.inertia(i));
          return;
        }
        const XformL& X_up = compose_joint(model, s, joint, i);
        const XformL& X = s.X_top[i] = model.parent(p) == 0 ? X_up : X_up * s.X_top[p];  // i_X_t
        for (int k = 0; k < J::NV; ++k) s.S[iv + k] = column_in(X, s_column(joint, k));    // h = tX_i S_i
        s.I_composite[i] = InertiaL::zero();
        InertiaL::splat(model.inertia(i)).add_transformed_inverse_to(X, s.I_composite[i]);  // tX*_i I_i iX_t
      }
    });
  }
  for (int i = n - 1; i > 0; --i) {
    ahead.step();
    const int iv = model.idx_v(i), end = iv + model.joint_nv(i);
    for (int k = iv; k < end; ++k) {
      const ForceL f = s.I_composite[i] * s.S[k];  // f^C_k = I^C_i h_k  (Eq. 10)
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
    const auto steps = static_cast<std::size_t>(2 * (model.nbodies() - 1));
    ahead.lines_per_step = (lines + steps - 1) / steps;
  }
  crba_lanes_entries(model, pattern, s, Q, b0, sink, ahead);
}

}  // namespace plucker::detail
