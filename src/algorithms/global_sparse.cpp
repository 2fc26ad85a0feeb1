// Baraff's linear-time method (paper 000 §3.5: "Eq. 27 ... has only O(N) non-zero elements, and it
// has a perfect elimination order"), in link coordinates (global_kernels.hpp gives the blocks).
//
// The KKT matrix of Eq. 27, unknowns ordered leaves first (a_N, lambda_N, ..., a_1, lambda_1):
//   [ I   -C^T ] [ a      ]   [ y ]
//   [ -C   0   ] [ lambda ] = [-z ]      (C a)_i = T_i^T (a_i - X_i a_parent)
// Body i couples only to its joint i and to its children's joints; eliminating body i, then joint i,
// touches only the parent's block: no fill-in, so the block LDL^T costs O(N):
//   body i:   D_i = L L^T                                   (pivot block, positive definite)
//   joint i:  E_i = T_i^T D_i^-1 T_i                        (pivot block -E_i, negative definite)
//             F_i = T_i^T X_i + T_i^T D_i^-1 G_i,  r_i = -z_i + T_i^T D_i^-1 y_i
//   parent:   D_p += rho_i X_i^T T_i T_i^T X_i - G_i^T D_i^-1 G_i + F_i^T E_i^-1 F_i
//             y_p += -rho_i X_i^T T_i z_i - G_i^T D_i^-1 y_i + F_i^T E_i^-1 r_i
// with G_i = -rho_i T_i T_i^T X_i the augmentation's coupling of body i to its parent (zero without
// it). Back-substitution, root first:
//   lambda_i = E_i^-1 (F_i a_p - r_i),   a_i = D_i^-1 (y_i + T_i lambda_i - G_i a_p),
//   qdd_i = W_i^T (a_i - X_i a_p - c_i)                     (Eq. 29)
// The block D_i left when body i is reached is the ABA's articulated inertia I^A_i (the Schur
// complement of the subtree onto a_i), so h_i^T D_i h_i is the ABA's pivot and the library's one
// singularity criterion applies to it unchanged.
#include <Eigen/QR>

#include "algorithms/global_kernels.hpp"

namespace plucker {
namespace detail {

GlobalWorkspace::GlobalWorkspace(const Model& model) {
  const auto n = static_cast<std::size_t>(model.nbodies());
  h.resize(n);
  W.resize(n);
  T.resize(n);
  TTt.resize(n);
  for (int i = 1; i < model.nbodies(); ++i) {
    const MatS6 hi = std::visit([](const auto& joint) { return joint.S(); }, model.joint(i));
    const int d = static_cast<int>(hi.cols());
    h[i] = hi;
    if (d == 0) {
      W[i].resize(6, 0);
      T[i] = Mat6::Identity();
    } else {
      W[i] = hi * (hi.transpose() * hi).inverse();
      const Eigen::HouseholderQR<MatX> qr{MatX(hi)};  // h = Q R: Q's last 6 - d columns span h's complement
      T[i] = MatX(qr.householderQ()).rightCols(6 - d);
    }
    TTt[i] = T[i] * T[i].transpose();
  }
  topology = cfa_topology(model);
  chain.assign(n, 0);
  for (int i : topology.chain) chain[static_cast<std::size_t>(i)] = 1;
  branch_root.assign(n, 0);
  for (int i = 1; i < model.nbodies(); ++i) {
    const auto p = static_cast<std::size_t>(model.parent(i));
    if (!chain[static_cast<std::size_t>(i)]) branch_root[i] = (p == 0 || chain[p]) ? i : branch_root[p];
  }
  branch_cost.assign(n, 0.0);
  X.resize(n);
  v.resize(n);
  c.resize(n);
  y.resize(n);
  a.resize(n);
  z.resize(n);
  r.resize(n);
  lambda.resize(n);
  D.resize(n);
  G.resize(n);
  F.resize(n);
  D_llt.resize(n);
  E_llt.resize(n);
  for (std::size_t i = 1; i < n; ++i) {  // sized once: no allocation later (fixed-capacity storage)
    const auto m = T[i].cols();
    z[i].setZero(m);
    r[i].setZero(m);
    lambda[i].setZero(m);
    F[i].setZero(m, 6);
    E_llt[i].compute(MatB::Identity(m, m));
  }
  const std::size_t L = topology.chain.size();
  Phi.resize(L);
  g.resize(L);
  K.resize(L);
  A.resize(L);
  Ul.resize(L);
  Ur.resize(L);
  b.resize(L);
  A_llt.resize(L);
  Phi_llt.resize(L);
}

void global_setup(const Model& model, Data& data, GlobalWorkspace& ws, const double* q, const double* qd,
                  const double* tau, ExternalForces f_ext, ReferenceFrame frame) {
  const int n = model.nbodies();
  compute_poses(model, data, q);
  data.X_base.resize(static_cast<std::size_t>(n));  // sized once
  data.X_base[0] = Transform();
  ws.a[0] << Vec3::Zero(), -model.gravity();  // a_0 = -g
  ws.v[0].setZero();
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), d = model.joint_nv(i), iv = model.idx_v(i);
    const Transform& X_up = data.X_up[i];
    ws.X[i] = X_up.matrix_motion();
    const Eigen::Map<const VecX> qd_i(qd + iv, d), tau_i(tau + iv, d);
    const Vec6 vJ = ws.h[i] * qd_i;
    ws.v[i] = (p > 0 ? Vec6(ws.X[i] * ws.v[p]) : Vec6::Zero()) + vJ;  // v_i = X_i v_p + h_i qd_i (Eq. 3)
    ws.c[i] = cross(Motion(ws.v[i]), Motion(vJ)).vector();            // c_i = v_i x h_i qd_i (Eq. 4)
    const Mat6 I = model.inertia(i).matrix();
    ws.D[i] = I;                                                               // the body block of Eq. 27
    const Vec6 fJ = ws.W[i] * tau_i;                                           // joint force, h_i^T fJ = tau_i
    ws.y[i] = fJ - cross(Motion(ws.v[i]), Force(Vec6(I * ws.v[i]))).vector();  // f_a - v x* I v (Eq. 27)
    if (p > 0) ws.y[p].noalias() -= ws.X[i].transpose() * fJ;                  // its reaction on the parent
    if (!f_ext.empty()) {
      const auto k = static_cast<std::size_t>(i);
      if (frame == ReferenceFrame::Local) {
        ws.y[i] += f_ext[k].vector();
      } else {
        data.X_base[i] = X_up * data.X_base[p];  // i_X_0
        const Transform X = frame == ReferenceFrame::World ? data.X_base[i] : Transform(data.X_base[i].E, Vec3::Zero());
        ws.y[i] += X.apply(f_ext[k]).vector();
      }
    }
    ws.z[i].noalias() = ws.T[i].transpose() * ws.c[i];  // z_i = T_i^T c_i (Eq. 29's velocity term)
  }
}

double eliminate_body(const Model& model, Data& data, GlobalWorkspace& ws, int i, const char* fn) {
  const int p = model.parent(i), d = model.joint_nv(i);
  const auto m = static_cast<int>(ws.T[i].cols());
  const Mat6& X = ws.X[i];
  const MatT& T = ws.T[i];
  Mat6& D = ws.D[i];  // I^A_i: I_i plus the children's Schur complements
  double screen = D(0, 0);
  for (int k = 1; k < 6; ++k) screen = std::max(screen, D(k, k));
  if (d > 0) {  // the joint's pivot h^T I^A h, by the library's criterion (DEVELOPERS.md, "Singularity")
    double Dj[6][6], Dj_inv[36];
    const MatS6 Dh = D * ws.h[i];
    for (int r = 0; r < d; ++r)
      for (int k = 0; k < d; ++k) Dj[r][k] = ws.h[i].col(r).dot(Dh.col(k));
    invert_pivots(Dj, d, Dj_inv, PivotTest{model, data.X_up, i, fn, screen});
  }
  const double rho = screen > 0.0 ? screen : 1.0;  // any rho > 0 gives the same solution
  D.noalias() += rho * ws.TTt[i];                  // row i += rho T_i (joint row i): I^A_i + rho T T^T
  ws.y[i].noalias() += rho * (T * ws.z[i]);
  ws.D_llt[i].compute(D);
  if (ws.D_llt[i].info() != Eigen::Success)
    throw SingularError(std::string(fn) + ": the eliminated block of body '" + model.body_name(i) + "' (joint '" +
                        model.joint_name(i) + "') is not positive definite");
  double flops = flops_cholesky(6) + 36.0;
  if (m == 0) return flops;              // a free joint transmits no constraint force: body i is decoupled
  const MatT DT = ws.D_llt[i].solve(T);  // D_i^-1 T_i
  ws.G[i].noalias() = -rho * ws.TTt[i] * X;
  ws.E_llt[i].compute(T.transpose() * DT);                           // E_i = T^T D^-1 T
  ws.F[i].noalias() = T.transpose() * X + DT.transpose() * ws.G[i];  // F_i
  ws.r[i].noalias() = DT.transpose() * ws.y[i] - ws.z[i];            // r_i
  flops += flops_solve(6, m) + flops_product(m, 6, m) + flops_cholesky(m) + 2 * flops_product(m, 6, 6) +
           flops_product(6, 6, 6) + flops_product(m, 6, 1);
  if (ws.E_llt[i].info() != Eigen::Success)
    throw SingularError(std::string(fn) + ": the constraint block of joint '" + model.joint_name(i) +
                        "' is not positive definite");
  if (p == 0) return flops;  // the base's acceleration is known
  const Mat6 DinvG = ws.D_llt[i].solve(ws.G[i]);
  const MatF EinvF = ws.E_llt[i].solve(ws.F[i]);
  const Mat6 XtT_Tt_X = X.transpose() * ws.TTt[i] * X;
  ws.D[p].noalias() += rho * XtT_Tt_X - ws.G[i].transpose() * DinvG + ws.F[i].transpose() * EinvF;
  const Vec6 Dinv_y = ws.D_llt[i].solve(ws.y[i]);
  const VecB Einv_r = ws.E_llt[i].solve(ws.r[i]);
  ws.y[p].noalias() +=
      -rho * (X.transpose() * (T * ws.z[i])) - ws.G[i].transpose() * Dinv_y + ws.F[i].transpose() * Einv_r;
  flops += flops_solve(6, 6) + flops_solve(m, 6) + 3 * flops_product(6, 6, 6) + 2 * flops_product(6, m, 6) +
           flops_solve(6, 1) + flops_solve(m, 1) + 4 * flops_product(6, 6, 1);
  return flops;
}

double back_substitute_body(const Model& model, GlobalWorkspace& ws, int i, double* qdd) {
  const int p = model.parent(i), d = model.joint_nv(i);
  const auto m = static_cast<int>(ws.T[i].cols());
  const Vec6& a_p = ws.a[p];  // a_0 = -g for a child of the base
  Vec6 rhs = ws.y[i];
  if (m > 0) {
    ws.lambda[i] = ws.E_llt[i].solve(ws.F[i] * a_p - ws.r[i]);  // lambda_i = E^-1 (F a_p - r)
    rhs.noalias() += ws.T[i] * ws.lambda[i] - ws.G[i] * a_p;
  }
  ws.a[i] = ws.D_llt[i].solve(rhs);  // a_i = D^-1 (y + T lambda - G a_p)
  if (d > 0)                         // qdd_i = W_i^T (a_i - X_i a_p - c_i)   (Eq. 29)
    Eigen::Map<VecX>(qdd + model.idx_v(i), d).noalias() = ws.W[i].transpose() * (ws.a[i] - ws.X[i] * a_p - ws.c[i]);
  return flops_product(m, 6, 1) + flops_solve(m, 1) + flops_product(6, m, 1) + flops_product(6, 6, 1) +
         flops_solve(6, 1) + flops_product(6, 6, 1) + flops_product(d, 6, 1) + 18.0;
}

}  // namespace detail

const VecX& forward_dynamics_global_sparse(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                           const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                           ExternalForces f_ext, ReferenceFrame frame) {
  const char* fn = "forward_dynamics_global_sparse";
  const detail::DataUse use(model, data, fn);
  detail::check_state(model, fn, q, v, tau, "tau", f_ext);
  detail::GlobalWorkspace& ws = detail::workspace<detail::GlobalWorkspace>(model, data);
  detail::global_setup(model, data, ws, q.data(), v.data(), tau.data(), f_ext, frame);
  for (int i = model.nbodies() - 1; i > 0; --i) detail::eliminate_body(model, data, ws, i, fn);  // leaves first
  VecX& qdd = detail::sized(data.qdd, model.nv());
  for (int i = 1; i < model.nbodies(); ++i) detail::back_substitute_body(model, ws, i, qdd.data());  // root first
  detail::check_finite_result(model, data, qdd, fn, "qdd");
  return qdd;
}

}  // namespace plucker
