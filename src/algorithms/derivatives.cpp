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
// Each body's P_i = Ic_i S_i and Q_i = B_i^T S_i make (1), (3) two 6-term dot products per
// pair (i, k) of a body and an ancestor; (2), (4) one each with the per-column vectors of k.
// O(N) 6 x 6 work, O(nv d) pairs. On depth-first models (a subtree's velocity indices
// contiguous) the pairs of a joint k and its subtree are one matrix-vector product per column
// and per row of k.
//
// Forward dynamics: qdd = FD(q, v, tau) solves ID(q, v, qdd) = tau, so
// d qdd / d x = -M^-1 d tau / d x at a = qdd and d qdd / d tau = M^-1 (implicit function
// theorem); M^-1 from minv (paper 002 §6).
#include "plucker/algorithms/derivatives.hpp"

#include <cmath>
#include <string>

#include "algorithms/fd_kernels.hpp"
#include "algorithms/workspace.hpp"

namespace plucker {
namespace {

using detail::ForceInput;

// World-coordinate spatial vectors as 6-vectors [angular; linear] (motion) and [moment; force].
PLUCKER_HOT inline Vec6 cross_motion(const Vec6& m, const Vec6& n) {  // m x n
  Vec6 out;
  out.head<3>() = m.head<3>().cross(n.head<3>());
  out.tail<3>() = m.head<3>().cross(n.tail<3>()) + m.tail<3>().cross(n.head<3>());
  return out;
}
PLUCKER_HOT inline Vec6 cross_force(const Vec6& m, const Vec6& f) {  // m x* f
  Vec6 out;
  out.head<3>() = m.head<3>().cross(f.head<3>()) + m.tail<3>().cross(f.tail<3>());
  out.tail<3>() = m.head<3>().cross(f.tail<3>());
  return out;
}
PLUCKER_HOT inline Mat6 crm_matrix(const Vec6& m) {  // crm(m) n = m x n
  Mat6 out = Mat6::Zero();
  out.topLeftCorner<3, 3>() = skew(m.head<3>());
  out.bottomLeftCorner<3, 3>() = skew(m.tail<3>());
  out.bottomRightCorner<3, 3>() = skew(m.head<3>());
  return out;
}
PLUCKER_HOT inline Mat6 force_bar(const Vec6& f) {  // f-bar u = u x* f
  Mat6 out = Mat6::Zero();
  out.topLeftCorner<3, 3>() = -skew(f.head<3>());
  out.topRightCorner<3, 3>() = -skew(f.tail<3>());
  out.bottomLeftCorner<3, 3>() = -skew(f.tail<3>());
  return out;
}

struct DerivativesWorkspace : detail::WorkspaceOf<DerivativesWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Derivatives;
  using Matrix12X = Eigen::Matrix<double, 12, Eigen::Dynamic>;
  explicit DerivativesWorkspace(const Model& model) {
    const auto n = static_cast<std::size_t>(model.nbodies());
    for (Matrix12X* x : {&PQ, &RS, &psi_u, &zeta_s}) x->setZero(12, model.nv());
    for (Matrix6X* x : {&y_q, &y_v}) x->setZero(6, model.nv());
    Ic.assign(n, Mat6::Zero());
    B.assign(n, Mat6::Zero());
    v.assign(n, Vec6::Zero());
    a.assign(n, Vec6::Zero());
    F.assign(n, Vec6::Zero());
    Fe.assign(n, Vec6::Zero());
  }
  /// Per velocity index (world coordinates), stacked so that each entry of (1), (3) and M is one
  /// dot product of a row column with a column column: PQ = [P; Q] = [Ic S; B^T S] of the row's
  /// body, psi_u = [psi; u] and zeta_s = [zeta; S] of the column's joint; RS = [R; 0] with
  /// R = Fe-bar^T S (world-frame external forces). y_q, y_v: the vectors of (2) and (4).
  Matrix12X PQ, RS, psi_u, zeta_s;
  Matrix6X y_q, y_v;
  /// Per body (world coordinates): the composites Ic and B, v, a, the joint force F, and the
  /// composite of the world-frame external forces Fe.
  std::vector<Mat6> Ic, B;
  std::vector<Vec6> v, a, F, Fe;
};

/// The motion subspace of joint i in its body's coordinates (6 x nv_i).
MatS6 motion_subspace(const Model& model, int i) {
  return std::visit([](const auto& joint) { return joint.S(); }, model.joint(i));
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
      if constexpr (FI == ForceInput::World) dq(r, c) += ws.RS.col(r).dot(ws.zeta_s.col(c));
      dv(r, c) = ws.PQ.col(r).dot(ws.zeta_s.col(c));
      M(r, c) = ws.PQ.col(r).head<6>().dot(ws.zeta_s.col(c).tail<6>());
    }
  }
  if (k == i) return;
  for (int c = r0; c < r0 + ri; ++c) {  // rows of k, columns of i: (2), (4)
    for (int r = c0; r < c0 + ck; ++r) {
      dq(r, c) = ws.zeta_s.col(r).tail<6>().dot(ws.y_q.col(c));
      dv(r, c) = ws.zeta_s.col(r).tail<6>().dot(ws.y_v.col(c));
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
  const auto rows = ws.PQ.middleCols(c0, m).transpose();  // [P Q] of the subtree's rows
  for (int c = c0; c < c0 + ck; ++c) {                    // rows of nu(k), columns of k: (1), (3), M
    dq.col(c).segment(c0, m).noalias() -= rows * ws.psi_u.col(c);  // dq was zeroed
    if constexpr (FI == ForceInput::World)
      dq.col(c).segment(c0, m).noalias() += ws.RS.middleCols(c0, m).transpose() * ws.zeta_s.col(c);
    dv.col(c).segment(c0, m).noalias() = rows * ws.zeta_s.col(c);
    M.col(c).segment(c0, m).noalias() = rows.leftCols<6>() * ws.zeta_s.col(c).tail<6>();
  }
  const int rest = m - ck;  // the strict subtree's columns
  if (rest == 0) return;
  for (int r = c0; r < c0 + ck; ++r) {  // rows of k, columns of nu(k) \ k: (2), (4), M
    const auto S_r = ws.zeta_s.col(r).tail<6>();
    dq.row(r).segment(c0 + ck, rest).noalias() = S_r.transpose() * ws.y_q.middleCols(c0 + ck, rest);
    dv.row(r).segment(c0 + ck, rest).noalias() = S_r.transpose() * ws.y_v.middleCols(c0 + ck, rest);
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
  Vec6 a_base;
  a_base << Vec3::Zero(), -model.gravity();  // a_0 = -g

  // World coordinates of each body's quantities, its inertia's share of Ic and B, and the
  // column vectors of its joint (from its parent's motion).
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    const Transform& X = data.X_base[i] = data.X_up[i] * data.X_base[p];  // i_X_0
    ws.v[i] = X.apply_inverse(data.v[i]).vector();
    ws.a[i] = X.apply_inverse(data.a[i]).vector();
    ws.F[i] = X.apply_inverse(data.f[i]).vector();
    const Mat6 I = model.inertia(i).transformed_inverse(X).matrix();
    const Mat6 A = I * crm_matrix(ws.v[i]);
    ws.Ic[i] = I;
    ws.B[i] = force_bar(I * ws.v[i]) - A - A.transpose();  // dI/dt + h-bar
    if constexpr (FI == ForceInput::World) ws.Fe[i] = f_ext[i].vector();
    const Vec6 v_parent = p > 0 ? ws.v[p] : Vec6::Zero();
    const Vec6& a_parent = p > 0 ? ws.a[p] : a_base;
    const MatS6 S_body = motion_subspace(model, i);
    for (int c = 0, k = model.idx_v(i); c < S_body.cols(); ++c, ++k) {
      const Vec6 s = X.apply_inverse(Motion(Vec6(S_body.col(c)))).vector();
      const Vec6 u = cross_motion(s, v_parent);
      ws.psi_u.col(k) << cross_motion(s, a_parent) - cross_motion(u, v_parent), u;
      ws.zeta_s.col(k) << cross_motion(v_parent + ws.v[i], s), s;
    }
  }
  for (int i = n - 1; i > 0; --i) {  // composites over the subtrees
    const int p = model.parent(i);
    if (p == 0) continue;
    ws.Ic[p] += ws.Ic[i];
    ws.B[p] += ws.B[i];
    if constexpr (FI == ForceInput::World) ws.Fe[p] += ws.Fe[i];
  }
  for (int i = 1; i < n; ++i) {
    const int c0 = model.idx_v(i), d = model.joint_nv(i);
    if (d == 0) continue;
    const auto S = ws.zeta_s.middleCols(c0, d).bottomRows<6>();
    ws.PQ.middleCols(c0, d).topRows<6>().noalias() = ws.Ic[i] * S;
    ws.PQ.middleCols(c0, d).bottomRows<6>().noalias() = ws.B[i].transpose() * S;
    Vec6 F_moving = ws.F[i];  // the part of F_i that moves with the subtree
    if constexpr (FI == ForceInput::World) {
      ws.RS.middleCols(c0, d).bottomRows<6>().noalias() = force_bar(ws.Fe[i]).transpose() * S;
      F_moving += ws.Fe[i];
    }
    for (int k = c0; k < c0 + d; ++k) {
      const auto psi = ws.psi_u.col(k).head<6>(), u = ws.psi_u.col(k).tail<6>();
      const auto zeta = ws.zeta_s.col(k).head<6>(), s = ws.zeta_s.col(k).tail<6>();
      ws.y_q.col(k) = cross_force(s, F_moving) - ws.Ic[i] * psi - ws.B[i] * u;  // (2)
      ws.y_v.col(k) = ws.Ic[i] * zeta + ws.B[i] * s;                            // (4)
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

void derivatives_of_rnea(const Model& model, Data& data, const double* q, const double* v, const double* a,
                         ExternalForces f_ext, ReferenceFrame frame) {
  detail::rnea_unchecked(model, data, q, v, a, f_ext, frame);
  if (f_ext.empty())
    inverse_dynamics_derivatives<ForceInput::None>(model, data, nullptr);
  else if (frame == ReferenceFrame::World)
    inverse_dynamics_derivatives<ForceInput::World>(model, data, f_ext.data());
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
  detail::aba_unchecked(model, data, q.data(), v.data(), tau.data(), f_ext, frame);  // qdd
  detail::check_finite_result(model, data, data.qdd, fn, "qdd");
  derivatives_of_rnea(model, data, q.data(), v.data(), data.qdd.data(), f_ext, frame);  // at a = qdd
  const MatX& Minv = detail::minv_impl(model, data);                                    // on the poses the RNEA left
  const int nv = model.nv();
  detail::sized(data.dqdd_dq, nv, nv).noalias() = -Minv * data.dtau_dq;
  detail::sized(data.dqdd_dv, nv, nv).noalias() = -Minv * data.dtau_dv;
  check_finite_matrix(data.dqdd_dq, fn, "d qdd / d q");
  check_finite_matrix(data.dqdd_dv, fn, "d qdd / d v");
}

}  // namespace plucker
