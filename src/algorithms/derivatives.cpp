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
// contiguous) the pairs of a joint k and its subtree are one matrix-vector product per column
// and per row of k.
//
// Forward dynamics: qdd = FD(q, v, tau) solves ID(q, v, qdd) = tau, so
// d qdd / d x = -M^-1 d tau / d x at a = qdd and d qdd / d tau = M^-1 (implicit function
// theorem); M^-1 from minv (paper 002 §6), and qdd = M^-1 (tau - C) with it.
#include "plucker/algorithms/derivatives.hpp"

#include <cmath>
#include <string>

#include "algorithms/derivative_kernels.hpp"
#include "algorithms/fd_kernels.hpp"
#include "plucker/spatial/acceleration.hpp"

namespace plucker {
namespace {

using detail::ForceInput;

/// The composites of a subtree in world coordinates: Ic = (m, h, Ibar) and B = (Ibar', n, f).
struct Composite {
  RigidBodyInertia inertia;  ///< Ic
  Vec3 n = Vec3::Zero(), f = Vec3::Zero();
  Mat3 Ibar_rate = Mat3::Zero();

  /// One body of inertia I (world coordinates) moving with v.
  PLUCKER_HOT inline void set(const RigidBodyInertia& I, const Motion& v) {
    inertia = I;
    const Force momentum = ops::times(I, v);  // I v = [n; f]
    n = momentum.angular;
    f = momentum.linear;
    const Vec3 &w = v.angular, &vo = v.linear, &h = I.first_moment();
    const Mat3 WI = skew(w) * I.inertia_origin();
    Ibar_rate = WI + WI.transpose() - (h * vo.transpose() + vo * h.transpose());
    Ibar_rate.diagonal().array() += 2.0 * vo.dot(h);
  }
  PLUCKER_HOT inline void add(const Composite& o) {
    inertia += o.inertia;
    n += o.n;
    f += o.f;
    Ibar_rate += o.Ibar_rate;
  }
  /// Ic x.
  PLUCKER_HOT inline Force inertia_times(const Motion& x) const { return ops::times(inertia, x); }
  /// B u.
  PLUCKER_HOT inline Force rate_times(const Motion& u) const {
    return {Ibar_rate * u.angular + u.angular.cross(n), u.angular.cross(2.0 * f)};
  }
  /// The three nonzero rows of B^T s.
  PLUCKER_HOT inline Vec3 rate_transpose_times(const Motion& s) const {
    return Ibar_rate * s.angular + n.cross(s.angular) + 2.0 * f.cross(s.linear);
  }
};

/// x as a 6-vector [angular; linear] into rows [r, r + 6) of column k of X.
template <class X, class V>
PLUCKER_HOT inline void put(X& x, int r, int k, const V& value) {
  x.col(k).template segment<3>(r) = value.angular;
  x.col(k).template segment<3>(r + 3) = value.linear;
}
PLUCKER_HOT inline Motion motion_at(const Matrix6X& x, int k) { return Motion(Vec6(x.col(k))); }

struct DerivativesWorkspace : detail::WorkspaceOf<DerivativesWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Derivatives;
  // The matrices of the matrix-vector products of fill_subtree are stored by rows, so that each
  // product is a sum of contiguous rows (vectorised along the subtree), not a dot product per row.
  using Matrix9X = Eigen::Matrix<double, 9, Eigen::Dynamic>;
  using Rows9X = Eigen::Matrix<double, 9, Eigen::Dynamic, Eigen::RowMajor>;
  using Rows6X = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>;
  explicit DerivativesWorkspace(const Model& model) {
    const auto n = static_cast<std::size_t>(model.nbodies());
    PQ.setZero(9, model.nv());
    for (Matrix9X* x : {&psi_u, &zeta_s}) x->setZero(9, model.nv());
    S.setZero(6, model.nv());
    for (Rows6X* x : {&R, &y_q, &y_v}) x->setZero(6, model.nv());
    composite.assign(n, Composite{});
    v.assign(n, Motion());
    a.assign(n, Motion());
    F.assign(n, Force());
    Fe.assign(n, Force());
  }
  /// World-aligned external forces moved to the world origin (allocated on first use).
  std::vector<Force> f_world;
  /// Per velocity index (world coordinates), stacked so that each entry of (1), (3) is one dot
  /// product of a row's column with a column's column: PQ = [P; Q] (Q's three nonzero rows) of
  /// the row's body, psi_u = [psi; angular part of u] and zeta_s = [zeta; angular part of S]
  /// of the column's joint. S; R = Fe-bar^T S (world-frame external forces); y_q, y_v: the
  /// vectors of (2) and (4).
  Rows9X PQ;
  Matrix9X psi_u, zeta_s;
  Matrix6X S;
  Rows6X R, y_q, y_v;
  /// Per body (world coordinates): the composites, v, a, the joint force F, and the composite
  /// of the world-frame external forces Fe.
  std::vector<Composite> composite;
  std::vector<Motion> v, a;
  std::vector<Force> F, Fe;
};

/// Column c of joint i's motion subspace in its body's coordinates (the joint library's kernel).
Motion subspace_column(const Model& model, int i, int c) {
  Motion s;
  ops::visit_joint(model, i,
                   [&](const auto& joint, const auto&) { ops::add_column<double>(s, ops::column(joint, c), 1.0); });
  return s;
}

/// The derivatives (1)-(4) and M, after the RNEA has left X_up, v, a and the joint forces F
/// (body coordinates) in data. f_ext: the external forces as given (World), else unused.
/// The entries of the results for the rows of body i and the columns of its ancestor (or
/// itself) k, and, k != i, for the rows of k and the columns of i: (1)-(4) and M.
template <ForceInput FI>
void fill_pair(const Model& model, const DerivativesWorkspace& ws, int i, int k, MatX& dq, MatX& dv, MatX& M) {
  const int r0 = model.idx_v(i), ri = model.joint_nv(i), c0 = model.idx_v(k), ck = model.joint_nv(k);
  for (int c = c0; c < c0 + ck; ++c) {
    for (int r = r0; r < r0 + ri; ++r) {  // rows of i, columns of k: (1), (3), M
      dq(r, c) = -ws.PQ.col(r).dot(ws.psi_u.col(c));
      if constexpr (FI == ForceInput::World) dq(r, c) += ws.R.col(r).dot(ws.S.col(c));
      dv(r, c) = ws.PQ.col(r).dot(ws.zeta_s.col(c));
      M(r, c) = ws.PQ.col(r).head<6>().dot(ws.S.col(c));
    }
  }
  if (k == i) return;
  for (int c = r0; c < r0 + ri; ++c) {  // rows of k, columns of i: (2), (4)
    for (int r = c0; r < c0 + ck; ++r) {
      dq(r, c) = ws.S.col(r).dot(ws.y_q.col(c));
      dv(r, c) = ws.S.col(r).dot(ws.y_v.col(c));
      M(r, c) = M(c, r);
    }
  }
}

/// The same entries for body k and its whole subtree at once, when the subtree's velocity
/// indices are the contiguous range [idx_v(k), subtree_v_end(k)) (depth-first models): one
/// matrix-vector product per column of k and per row of k.
template <ForceInput FI>
void fill_subtree(const Model& model, const DerivativesWorkspace& ws, int k, MatX& dq, MatX& dv, MatX& M) {
  const int c0 = model.idx_v(k), ck = model.joint_nv(k), m = model.subtree_v_end(k) - c0;
  const auto rows = ws.PQ.middleCols(c0, m).transpose();           // [P Q] of the subtree's rows
  for (int c = c0; c < c0 + ck; ++c) {                             // rows of nu(k), columns of k: (1), (3), M
    dq.col(c).segment(c0, m).noalias() -= rows * ws.psi_u.col(c);  // dq was zeroed
    if constexpr (FI == ForceInput::World)
      dq.col(c).segment(c0, m).noalias() += ws.R.middleCols(c0, m).transpose() * ws.S.col(c);
    dv.col(c).segment(c0, m).noalias() = rows * ws.zeta_s.col(c);
    M.col(c).segment(c0, m).noalias() = rows.leftCols<6>() * ws.S.col(c);
  }
  const int rest = m - ck;  // the strict subtree's columns
  if (rest == 0) return;
  for (int r = c0; r < c0 + ck; ++r) {  // rows of k, columns of nu(k) \ k: (2), (4), M
    dq.row(r).segment(c0 + ck, rest).noalias() = ws.S.col(r).transpose() * ws.y_q.middleCols(c0 + ck, rest);
    dv.row(r).segment(c0 + ck, rest).noalias() = ws.S.col(r).transpose() * ws.y_v.middleCols(c0 + ck, rest);
    M.row(r).segment(c0 + ck, rest) = M.col(r).segment(c0 + ck, rest).transpose();
  }
}

/// The derivatives (1)-(4) and M, after the RNEA has left X_up, v, a and the joint forces F
/// (body coordinates) in data. f_ext: the external forces as given (World), else unused.
template <ForceInput FI>
void inverse_dynamics_derivatives(const Model& model, Data& data, const Force* f_ext) {
  DerivativesWorkspace& ws = detail::workspace<DerivativesWorkspace>(model, data);
  const int n = model.nbodies(), nv = model.nv();
  data.X_base.resize(static_cast<std::size_t>(n));
  data.X_base[0] = Transform();

  // World coordinates of each body's quantities, its own composites, and the column vectors of
  // its joint (from its parent's motion).
  const Motion a_base(Vec3::Zero(), -model.gravity());  // a_0 = -g
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    const Transform& X = data.X_base[i] = data.X_up[i] * data.X_base[p];  // i_X_0
    const Motion v = ws.v[i] = ops::apply_inverse(X, data.v[i]);
    ws.a[i] = ops::apply_inverse(X, data.a[i]);
    ws.F[i] = ops::apply_inverse(X, data.f[i]);
    ws.composite[i].set(model.inertia(i).transformed_inverse(X), v);
    if constexpr (FI == ForceInput::World) ws.Fe[i] = f_ext[i];
    const Motion v_parent = p > 0 ? ws.v[p] : Motion();
    const Motion& a_parent = p > 0 ? ws.a[p] : a_base;
    for (int c = 0, k = model.idx_v(i); c < model.joint_nv(i); ++c, ++k) {
      const Motion s = ops::apply_inverse(X, subspace_column(model, i, c));
      const detail::TangentStep step = detail::tangent_step(s, v_parent, a_parent, v);
      put(ws.S, 0, k, s);
      put(ws.psi_u, 0, k, step.psi);
      ws.psi_u.col(k).segment<3>(6) = step.u.angular;
      put(ws.zeta_s, 0, k, step.zeta);
      ws.zeta_s.col(k).segment<3>(6) = s.angular;
    }
  }
  for (int i = n - 1; i > 0; --i) {  // composites over the subtrees
    const int p = model.parent(i);
    if (p == 0) continue;
    ws.composite[p].add(ws.composite[i]);
    if constexpr (FI == ForceInput::World) ws.Fe[p] += ws.Fe[i];
  }
  for (int i = 1; i < n; ++i) {
    const Composite& C = ws.composite[i];
    Force F_moving = ws.F[i];  // the part of F_i that moves with the subtree
    if constexpr (FI == ForceInput::World) F_moving += ws.Fe[i];
    for (int k = model.idx_v(i); k < model.idx_v(i) + model.joint_nv(i); ++k) {
      const Motion s = motion_at(ws.S, k);
      put(ws.PQ, 0, k, C.inertia_times(s));
      ws.PQ.col(k).segment<3>(6) = C.rate_transpose_times(s);
      if constexpr (FI == ForceInput::World) put(ws.R, 0, k, -Force(ops::crf(s, ws.Fe[i])));  // R s = Fe-bar^T s
      const Motion psi(Vec6(ws.psi_u.col(k).head<6>())), zeta(Vec6(ws.zeta_s.col(k).head<6>()));
      const Motion u(ws.psi_u.col(k).segment<3>(6), Vec3::Zero());  // B ignores u's linear part
      put(ws.y_q, 0, k, Force(ops::crf(s, F_moving)) - C.inertia_times(psi) - C.rate_times(u));  // (2)
      put(ws.y_v, 0, k, C.inertia_times(zeta) + C.rate_times(s));                                // (4)
    }
  }

  MatX& dq = detail::sized(data.dtau_dq, nv, nv);
  MatX& dv = detail::sized(data.dtau_dv, nv, nv);
  MatX& M = detail::sized(data.M, nv, nv);
  dq.setZero();  // the pairs of bodies on different branches
  dv.setZero();
  M.setZero();
  if (model.has_contiguous_subtrees()) {
    for (int k = 1; k < n; ++k)
      if (model.joint_nv(k) > 0) fill_subtree<FI>(model, ws, k, dq, dv, M);
  } else {
    for (int i = 1; i < n; ++i)
      if (model.joint_nv(i) > 0)
        for (int k = i; k > 0; k = model.parent(k))  // k = i and its ancestors
          if (model.joint_nv(k) > 0) fill_pair<FI>(model, ws, i, k, dq, dv, M);
  }
}

/// External forces in world axes applied at the body origins: the world-fixed forces of the
/// same value, [n + p_i x f; f] about the world origin, plus what moving their points does:
/// d/dq_c (p_i x f) = pdot_c x f, so d tau / d q_c gains -J_i^T [pdot_c x f; 0], with pdot_c the
/// velocity of body i's origin per unit velocity c (world coordinates).
void derivatives_with_world_aligned_forces(const Model& model, Data& data, ExternalForces f_ext) {
  DerivativesWorkspace& ws = detail::workspace<DerivativesWorkspace>(model, data);
  const int n = model.nbodies();
  ws.f_world.resize(static_cast<std::size_t>(n));
  for (int i = 1; i < n; ++i) {
    const Vec3& origin = data.X_base[i].r;  // left by the RNEA with these forces
    ws.f_world[i] = Force(f_ext[i].angular + origin.cross(f_ext[i].linear), f_ext[i].linear);
  }
  inverse_dynamics_derivatives<ForceInput::World>(model, data, ws.f_world.data());
  MatX& dq = data.dtau_dq;
  for (int i = 1; i < n; ++i) {
    const Vec3& f = f_ext[i].linear;
    if (f.isZero(0.0)) continue;
    const Vec3& origin = data.X_base[i].r;
    for (int jc = i; jc > 0; jc = model.parent(jc))
      for (int c = model.idx_v(jc); c < model.idx_v(jc) + model.joint_nv(jc); ++c) {
        const Motion s_c = motion_at(ws.S, c);
        const Vec3 moment_rate = f.cross(point_velocity(s_c, origin));  // -(pdot_c x f)
        for (int jr = i; jr > 0; jr = model.parent(jr))
          for (int r = model.idx_v(jr); r < model.idx_v(jr) + model.joint_nv(jr); ++r)
            dq(r, c) += ws.S.col(r).head<3>().dot(moment_rate);
      }
  }
}

void derivatives_of_rnea(const Model& model, Data& data, const double* q, const double* v, const double* a,
                         ExternalForces f_ext, ReferenceFrame frame) {
  detail::rnea_unchecked(model, data, q, v, a, f_ext, frame);
  if (f_ext.empty())
    inverse_dynamics_derivatives<ForceInput::None>(model, data, nullptr);
  else if (frame == ReferenceFrame::World)
    inverse_dynamics_derivatives<ForceInput::World>(model, data, f_ext.data());
  else if (frame == ReferenceFrame::LocalWorldAligned)
    derivatives_with_world_aligned_forces(model, data, f_ext);
  else
    inverse_dynamics_derivatives<ForceInput::Local>(model, data, nullptr);
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
  detail::check_arguments(fn, [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
    model.check_tangent(a, "a");
  });
  if (!f_ext.empty()) detail::check_forces(model, f_ext, fn);
  derivatives_of_rnea(model, data, q.data(), v.data(), a.data(), f_ext, frame);
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
  detail::check_arguments(fn, [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
    model.check_tangent(tau, "tau");
  });
  if (!f_ext.empty()) detail::check_forces(model, f_ext, fn);
  // qdd = M^-1 (tau - C): the bias forces, then M^-1 (which the derivatives need anyway) on the
  // poses they leave, instead of a separate ABA.
  detail::bias_forces_unchecked(model, data, q.data(), v.data(), f_ext, frame);
  const MatX& Minv = detail::minv_impl(model, data);
  const int nv = model.nv();
  data.tau = tau - data.tau;  // tau - C, in place
  detail::sized(data.qdd, nv).noalias() = Minv * data.tau;
  detail::check_finite_result(model, data, data.qdd, fn, "qdd");
  derivatives_of_rnea(model, data, q.data(), v.data(), data.qdd.data(), f_ext, frame);  // at a = qdd
  detail::sized(data.dqdd_dq, nv, nv).noalias() = -Minv * data.dtau_dq;
  detail::sized(data.dqdd_dv, nv, nv).noalias() = -Minv * data.dtau_dv;
  check_finite_matrix(data.dqdd_dq, fn, "d qdd / d q");
  check_finite_matrix(data.dqdd_dv, fn, "d qdd / d v");
}

}  // namespace plucker
