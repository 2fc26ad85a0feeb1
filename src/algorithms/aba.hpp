// The articulated-body algorithm's scratch and the joint-space pivots it shares with the
// innovations factorisation (paper 002 Eq. 45): D = S^T P S per joint, inverted with the
// singularity test of DEVELOPERS.md.
#pragma once

#include <sstream>

#include "algorithms/workspace.hpp"

namespace plucker::detail {

struct AbaWorkspace : WorkspaceOf<AbaWorkspace> {
  static constexpr Slot slot = Slot::Aba;
  explicit AbaWorkspace(const Model& model)
      : I_articulated(static_cast<std::size_t>(model.nbodies())),
        p_articulated(static_cast<std::size_t>(model.nbodies())),
        c(static_cast<std::size_t>(model.nbodies())),
        U(static_cast<std::size_t>(model.nv())),
        D_inv(VecX::Zero(6 * model.nv())),
        u(VecX::Zero(model.nv())) {}
  std::vector<ops::ArticulatedT<double>> I_articulated;  ///< I^A_i (Eq. 12), packed
  std::vector<Force> p_articulated;                      ///< p^A_i (Eq. 12-13)
  std::vector<Motion> c;                                 ///< v_i x h_i qd_i
  std::vector<Force> U;                                  ///< U_i = I^A_i h_i, one per velocity index
  VecX D_inv;                                            ///< D_i^-1, row-major d x d at 6 idx_v(i)
  VecX u;                                                ///< u_i = tau_i - h_i^T p^A_i
};

/// x > y (in every lane).
inline bool greater(double x, double y) { return x > y; }
inline bool greater(const simd::Pack& x, const simd::Pack& y) { return simd::all_greater(x, y); }
inline double max_of(double x, double y) { return std::max(x, y); }
inline simd::Pack max_of(const simd::Pack& x, const simd::Pack& y) { return simd::max(x, y); }

/// Dinv (row-major d x d) = D^-1 for a symmetric D, by D = U diag(p) U^T (U unit upper): the
/// pivots p_k come last DoF first, as in M's factorisation leaves first (the joint's DoFs are a
/// chain, its last DoF the deepest), so that p_k is DoF k's pivot in every method. pivot_ok(k,
/// p_k) decides each one (DEVELOPERS.md, "Singularity"); false stops the inversion.
template <class S, class PivotOk>
inline bool invert_pivots(const S (&D)[6][6], int d, S* Dinv, const PivotOk& pivot_ok) {
  if (d == 1) {
    if (!pivot_ok(0, D[0][0])) return false;
    Dinv[0] = 1.0 / D[0][0];
    return true;
  }
  // The forward LDL^T of the reversed matrix R(a, b) = D(d-1-a, d-1-b) is D's U diag(p) U^T.
  S L[6][6] = {}, pivot[6], p_inv[6];
  auto R = [&](int a, int b) -> const S& { return D[d - 1 - a][d - 1 - b]; };
  for (int j = 0; j < d; ++j) {
    pivot[j] = R(j, j);
    for (int k = 0; k < j; ++k) pivot[j] -= L[j][k] * L[j][k] * pivot[k];
    if (!pivot_ok(d - 1 - j, pivot[j])) return false;
    p_inv[j] = 1.0 / pivot[j];
    for (int r = j + 1; r < d; ++r) {
      S s = R(r, j);
      for (int k = 0; k < j; ++k) s -= L[r][k] * L[j][k] * pivot[k];
      L[r][j] = s * p_inv[j];
    }
  }
  S Li[6][6] = {};  // L^-1, unit lower
  for (int j = 0; j < d; ++j) {
    Li[j][j] = S{} + 1.0;
    for (int r = j + 1; r < d; ++r) {
      S s = -L[r][j];
      for (int k = j + 1; k < r; ++k) s -= L[r][k] * Li[k][j];
      Li[r][j] = s;
    }
  }
  for (int r = 0; r < d; ++r)  // R^-1 = L^-T diag(1/p) L^-1, mapped back to D's order
    for (int c = r; c < d; ++c) {
      S s = Li[c][r] * p_inv[c] * Li[c][c];
      for (int k = c + 1; k < d; ++k) s += Li[k][r] * p_inv[k] * Li[k][c];
      Dinv[(d - 1 - r) * d + (d - 1 - c)] = Dinv[(d - 1 - c) * d + (d - 1 - r)] = s;
    }
  return true;
}

/// The screening scale of an articulated inertia P: its largest diagonal entry.
template <class I6>
inline auto pivot_scale(const I6& P) {
  auto scale = ops::entry(P, 0, 0);
  for (int k = 1; k < 6; ++k) scale = max_of(scale, ops::entry(P, k, k));
  return scale;
}

/// M_kk for DoF k of joint i = s^T I^C_i s (the joint's inertia with every other joint locked),
/// from the composite inertia of i's subtree on the poses in X_up. O(subtree): the slow path of
/// the singularity test, run only for a pivot that fails the screen.
double joint_space_diagonal(const Model& model, const std::vector<Transform>& X_up, int i, int k);

[[noreturn]] void throw_singular(const Model& model, int i, int k, const char* fn, double pivot, double M_kk);

/// The singularity test of one state's articulated pivot D_k (DEVELOPERS.md, "Singularity"):
/// singular unless pivot_accepted(D_k, M_kk). Screened first, at no cost, against the articulated
/// inertia's largest diagonal entry: a pivot above kSingularPivot times it is accepted; one below
/// is judged by the exact M_kk (computed then).
struct PivotTest {
  const Model& model;
  const std::vector<Transform>& X_up;
  int i;
  const char* fn;
  double screen;
  bool operator()(int k, double pivot) const {
    if (pivot_accepted(pivot, screen)) return true;
    const double M_kk = joint_space_diagonal(model, X_up, i, k);
    if (pivot_accepted(pivot, M_kk)) return true;
    throw_singular(model, i, k, fn, pivot, M_kk);
  }
};

/// invert_pivots for joint i of one state, throwing SingularError naming the joint.
template <class I6>
inline void invert_joint_pivots(const Model& model, const std::vector<Transform>& X_up, int i, const char* fn,
                                const double (&D)[6][6], int d, double* Dinv, const I6& P) {
  invert_pivots(D, d, Dinv, PivotTest{model, X_up, i, fn, pivot_scale(P)});
}

/// The per-body arrays of the ABA: those of the RNEA, the velocity products c_i, the
/// articulated inertias and bias forces, and per velocity index U, D^-1 and u.
template <class S>
struct AbaState {
  ops::transform_t<S>* X_up;
  ops::motion_t<S>* v;
  ops::motion_t<S>* a;
  ops::motion_t<S>* c;
  ops::ArticulatedT<S>* I_articulated;  ///< packed (21 entries)
  ops::force_t<S>* p_articulated;
  ops::force_t<S>* U;  ///< per velocity index
  S* D_inv;            ///< d x d at 6 idx_v(i)
  S* u;                ///< per velocity index
  const S* sin;
  const S* cos;
};

/// Articulated-body algorithm (paper 000 §3.3; paper 002 Eqs. 45-46, 60 for d-DoF joints
/// through the d x d inverse D_i^-1 = (S_i^T I^A_i S_i)^-1):
///   pass 1 (out): v_i, c_i = v_i x h_i qd_i, I^A_i = I_i, p^A_i = v_i x* I_i v_i - f^x_i
///   pass 2 (in):  U_i = I^A_i h_i, D_i = h_i^T U_i, u_i = tau_i - h_i^T p^A_i
///                 I^a = I^A_i - U_i D_i^-1 U_i^T                 (Eq. 12)
///                 p^a = p^A_i + I^a c_i + U_i D_i^-1 u_i          (Eq. 12-13)
///                 I^A_p += pX_i* I^a iX_p,  p^A_p += pX_i* p^a
///   pass 3 (out): a' = iX_p a_p + c_i, qdd_i = D_i^-1 (u_i - U_i^T a'), a_i = a' + h_i qdd_i  (Eq. 14)
/// external_force(i, p, f) subtracts f^x_i from f, or does nothing. pivot_test(i, P) returns the
/// test of joint i's pivots given its articulated inertia P (PivotTest for one state); when it
/// refuses one (lanes: some lane's pivot fails the screen) the passes return false.
template <class S, class ExternalForce, class PivotTestOf>
bool aba_passes(const Model& model, const AbaState<S>& st, const S* q, const S* qd, const S* tau, S* qdd,
                const ExternalForce& external_force, const PivotTestOf& pivot_test) {
  using namespace ops;
  const int n = model.nbodies();
  auto jq = [&](int i) { return JointQ<S>{q + model.idx_q(i), st.sin + model.idx_q(i), st.cos + model.idx_q(i)}; };

  // Pass 1.
  st.v[0] = motion_t<S>{};
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      decltype(auto) X = compose_up(joint, jq(i), X_tree, st.X_up[i]);  // X_J(q_i) X_tree(i)
      MotionT<S> v = p == 0 ? MotionT<S>{} : apply(X, st.v[p]);
      add_motion(joint, v, qd + iv);                             // Eq. 3
      store_into(st.c[i], velocity_product(joint, v, qd + iv));  // c_i = v_i x h_i qd_i
      store_into(st.v[i], v);
      store_into(st.p_articulated[i], crf(v, times(model.inertia(i), v)));  // p^A_i = v_i x* I_i v_i
    });
    st.I_articulated[i] = articulated_packed<S>(model.inertia(i));  // I^A_i = I_i
    external_force(i, p, st.p_articulated[i]);                      // - f^x_i
  }

  // Pass 2.
  bool regular = true;
  for (int i = n - 1; i > 0 && regular; --i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      auto& IA = st.I_articulated[i];
      force_t<S> pa = st.p_articulated[i];
      const int d = joint_dofs(joint);
      if (d > 0) {
        force_t<S>* U = st.U + iv;
        for (int k = 0; k < d; ++k) U[k] = times_column<S>(IA, column(joint, k));  // U_i = I^A_i h_i
        S D[6][6];
        for (int r = 0; r < d; ++r)
          for (int k = 0; k < d; ++k) D[r][k] = project_column<S>(column(joint, r), U[k]);  // D_i = h_i^T U_i
        project(joint, pa, st.u + iv);
        for (int k = 0; k < d; ++k) st.u[iv + k] = tau[iv + k] - st.u[iv + k];  // u_i = tau_i - h_i^T p^A_i
        S* Dinv = st.D_inv + 6 * iv;
        if (!invert_pivots(D, d, Dinv, pivot_test(i, IA))) {
          regular = false;
          return;
        }
        if (p > 0) {
          force_t<S> UDinv[6];  // U D^-1
          for (int k = 0; k < d; ++k) {
            UDinv[k] = U[0] * Dinv[k];
            for (int j = 1; j < d; ++j) UDinv[k] += U[j] * Dinv[j * d + k];
          }
          subtract_symmetric_products(IA, UDinv, U, d);      // I^a = I^A - U D^-1 U^T   (Eq. 12)
          pa += times_velocity_product(joint, IA, st.c[i]);  // p^a = p^A + I^a c + U D^-1 u   (Eq. 12-13)
          for (int k = 0; k < d; ++k) pa += UDinv[k] * st.u[iv + k];
        }
      } else if (p > 0) {
        pa += times_velocity_product(joint, IA, st.c[i]);
      }
      if (p > 0) {
        const auto& X = x_up(joint, jq(i), X_tree, st.X_up[i]);
        add_congruence(X, IA, st.I_articulated[p]);     // I^A_p += pX_i* I^a iX_p
        add_apply_inverse(X, pa, st.p_articulated[p]);  // p^A_p += pX_i* p^a
      }
    });
  }
  if (!regular) return false;

  // Pass 3.
  const LinearMotion a0{-model.gravity()};  // a_0 = -g
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      const auto& X = x_up(joint, jq(i), X_tree, st.X_up[i]);
      MotionT<S> a = (p == 0 ? apply(X, a0) : apply(X, st.a[p])) + st.c[i];  // a' = iX_p a_p + c_i
      const int d = joint_dofs(joint);
      const force_t<S>* U = st.U + iv;
      const S* Dinv = st.D_inv + 6 * iv;
      S rhs[6];
      for (int k = 0; k < d; ++k) rhs[k] = st.u[iv + k] - dot(a, U[k]);
      for (int r = 0; r < d; ++r) {  // qdd_i = D_i^-1 (u_i - U_i^T a')   (Eq. 14)
        S x = Dinv[r * d] * rhs[0];
        for (int k = 1; k < d; ++k) x += Dinv[r * d + k] * rhs[k];
        qdd[iv + r] = x;
      }
      add_motion(joint, a, qdd + iv);  // a_i = a' + h_i qdd_i
      store_into(st.a[i], a);
    });
  }
  return true;
}

}  // namespace plucker::detail
