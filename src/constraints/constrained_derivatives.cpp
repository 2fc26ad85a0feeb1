// Derivatives of the constrained forward dynamics (constrained_dynamics.hpp), by the implicit
// function theorem on the system that constrained_forward_dynamics solves (paper 000 Eqs. 15,
// 18-20, with Baumgarte stabilisation and loop-joint actuation):
//   E(q, v, tau) = ID(q, v, qdd) - L^T lambda - tau_a(q) - tau = 0
//   R(q, v)      = L qdd - c + 2 alpha L v + beta^2 phi         = 0
// Differentiating at the solution (qdd, lambda):
//   [M  -L^T] [d qdd   ]     [dE/dx]
//   [L    0 ] [d lambda] = - [dR/dx]        x in {q, v, tau}  (dE/dtau = -1, dR/dtau = 0)
// solved by the range-space form: d lambda = G^-1 (L M^-1 dE/dx - dR/dx), G = L M^-1 L^T, then
// d qdd = M^-1 (L^T d lambda - dE/dx), on the rows of L the solver kept (its rank-revealing step
// drops redundant rows; L^T lambda is then carried by the kept rows' multipliers).
//
// The partial derivatives, analytical:
// - dE/dx: ID - L^T lambda - tau_a is the RNEA at qdd with the loop joints' constraint and
//   actuator forces as external forces f on the successor and -f on the predecessor (f = C^T
//   (T lambda + S u) in world coordinates), so rnea_derivatives with those forces fixed in the
//   world gives it, plus -(J_s - J_p)^T df for the motion of f with frame C (axes of the
//   predecessor frame, origin at the successor frame).
// - dR/dx: L qdd - c = T^T d/dt w and L v = T^T w, with w = C_X_0 (v_s - v_p) the relative
//   velocity in frame C (loop_constraints.hpp), and phi; all functions of the two bodies'
//   poses, velocities and accelerations. A tangent step along column s of joint k (k an ancestor
//   of the body, or its own joint) moves the body by the world twist s and changes its world
//   velocity and acceleration by (derivatives.cpp, with u = s x v_parent(k), psi = s x
//   a_parent(k) - u x v_parent(k), zeta = (v_parent(k) + v_k) x s):
//     q step:  d v = s x v - u,   d a = s x a - psi - u x v
//     qd step: d v = s,           d a = s x v + zeta           (pose unchanged)
//   and the loop functions are differentiated through them by the chain rule below (rotational
//   residuals: the swing vector's and the rotation vector's own derivatives, the latter by the
//   inverse left Jacobian of SO(3)).
#include <Eigen/QR>
#include <string>

#include "algorithms/derivative_kernels.hpp"
#include "constraints/loop_kernels.hpp"
#include "plucker/algorithms/derivatives.hpp"
#include "plucker/constraints/constrained_dynamics.hpp"

namespace plucker {
namespace {

Motion mcross(const Motion& m, const Motion& n) { return ops::crm(m, n); }  // m x n

/// The first-order change of a body's pose (a world twist), world velocity and acceleration.
struct BodyChange {
  Motion pose, v, a;
};

/// One body's world velocity and acceleration at the solution.
struct BodyMotion {
  Motion v, a;
};

/// The change of the swing vector sw(a, u) = (atan2(|a x u|, a . u) / |a x u|) (a x u)
/// (loop_constraints.cpp) for a change du of the unit vector u.
Vec3 swing_change(const Vec3& a, const Vec3& u, const Vec3& du) {
  const Vec3 w = a.cross(u), dw = a.cross(du);
  const double s = w.norm(), c = a.dot(u);
  if (s < 1e-8) return dw;  // g = angle / s = 1 + s^2 / 6 + ...: its change is O(s) ds
  const double ds = w.dot(dw) / s, dc = a.dot(du);
  const double angle = std::atan2(s, c), g = angle / s;
  const double dangle = c * ds - s * dc;  // s^2 + c^2 = 1
  const double dg = (dangle - g * ds) / s;
  return dg * w + g * dw;
}

struct ConstrainedDerivativesWorkspace : detail::WorkspaceOf<ConstrainedDerivativesWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::ConstrainedDerivatives;
  explicit ConstrainedDerivativesWorkspace(const Model& model)
      : body(static_cast<std::size_t>(model.nbodies())),
        f_ext(static_cast<std::size_t>(model.nbodies())),
        mark(static_cast<std::size_t>(model.nbodies()), 0) {
    const int nv = model.nv(), nc = model.num_constraints();
    u = psi = zeta = Matrix6X::Zero(6, nv);
    A = MatX::Zero(nv, 3 * nv);
    B = MatX::Zero(nc, 3 * nv);
  }
  std::vector<BodyMotion> body;
  std::vector<Force> f_ext;
  std::vector<char> mark;  ///< bit 1: ancestor of the successor, bit 2: of the predecessor
  Matrix6X u, psi, zeta;   ///< per velocity index (world coordinates)
  MatX A, B;               ///< [dE/dq dE/dv dE/dtau], [dR/dq dR/dv 0]
  MatX Y, G, Z;            ///< M^-1 L^T, L M^-1 L^T, M^-1 A
};

}  // namespace

void constrained_forward_dynamics_derivatives(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                              const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                              const ConstrainedOptions& options) {
  const char* fn = "constrained_forward_dynamics_derivatives";
  constrained_forward_dynamics(model, data, q, v, tau, options);  // checks; qdd, lambda; L, c, phi at (q, v)
  const int n = model.nbodies(), nv = model.nv(), nc = model.num_constraints();
  Data::LoopResults& out = data.loops;
  if (nc == 0) {
    aba_derivatives(model, data, q, v, tau);
    out.dqdd_dq = data.dqdd_dq;
    out.dqdd_dv = data.dqdd_dv;
    out.dqdd_dtau = data.Minv;
    for (MatX* x : {&out.dlambda_dq, &out.dlambda_dv, &out.dlambda_dtau}) x->resize(0, nv);
    return;
  }
  ConstrainedDerivativesWorkspace& ws = detail::workspace<ConstrainedDerivativesWorkspace>(model, data);
  LoopsWorkspace& loops = detail::workspace<LoopsWorkspace>(model, data);
  const Matrix6X& S = loops.S_world;  // at q (constraint_terms)
  const VecX qdd = data.qdd, lambda = out.lambda;
  const double alpha = options.baumgarte_alpha, beta2 = options.baumgarte_beta * options.baumgarte_beta;
  // The solver keeps the r rows perm[0..r) of L that its rank-revealing step found independent
  // (redundant rows, possibly inconsistent, are dropped): the function differentiated is the
  // solve with those rows, whose multipliers lambda_r solve L_r^T lambda_r = L^T lambda.
  const int r = out.rank;
  const auto& perm = loops.qr.colsPermutation().indices();
  MatX L_r(r, nv);
  for (int i = 0; i < r; ++i) L_r.row(i) = out.L.row(perm[i]);
  VecX lambda_kept = VecX::Zero(nc);  // lambda_r in their rows, 0 in the dropped ones
  if (r > 0) {
    const VecX lambda_r = L_r.transpose().colPivHouseholderQr().solve(out.L.transpose() * lambda);
    for (int i = 0; i < r; ++i) lambda_kept[perm[i]] = lambda_r[i];
  }

  // The loop joints' forces f = C^T (T lambda + S u) on the successors (-f on the predecessors).
  for (Force& f : ws.f_ext) f = Force();
  std::vector<Force> f_C;  // per loop joint, in frame C
  f_C.reserve(model.loop_joints().size());
  {
    int row = 0, act = 0;
    for (const LoopJoint& joint : model.loop_joints()) {
      const detail::LoopFrames f = detail::loop_frames(data, joint);
      const detail::LoopDirections dir = detail::loop_directions(joint);
      Force fc;
      for (int m = 0; m < dir.n_angular; ++m) fc.angular += dir.angular[m] * lambda_kept[row++];
      for (int m = 0; m < dir.n_linear; ++m) fc.linear += dir.linear[m] * lambda_kept[row++];
      if (joint.actuated) {
        const MatX Sj = loop_joint_motion_subspace(joint);
        for (int m = 0; m < Sj.cols(); ++m, ++act) {
          const double ua = options.loop_joint_forces.size() ? options.loop_joint_forces[act] : 0.0;
          fc.angular += Sj.col(m).head<3>() * ua;
          fc.linear += Sj.col(m).tail<3>() * ua;
        }
      }
      f_C.push_back(fc);
      const Force world = f.C.apply_inverse(fc);
      ws.f_ext[joint.successor] += world;
      ws.f_ext[joint.predecessor] -= world;
    }
  }
  // d(ID - L^T lambda - tau_a)/d(q, v) with the forces fixed in the world; poses, v, a at qdd.
  rnea_derivatives(model, data, q, v, qdd, ws.f_ext, ReferenceFrame::World);
  ws.A.setZero();
  ws.A.leftCols(nv) = data.dtau_dq;
  ws.A.middleCols(nv, nv) = data.dtau_dv;
  ws.A.rightCols(nv).diagonal().setConstant(-1.0);  // dE/dtau
  ws.B.setZero();

  // World velocities and accelerations, and the per-column vectors of the tangent steps.
  const Motion a_base(Vec3::Zero(), -model.gravity());
  ws.body[0] = {Motion(), a_base};
  for (int i = 1; i < n; ++i)
    ws.body[i] = {data.X_base[i].apply_inverse(data.v[i]), data.X_base[i].apply_inverse(data.a[i])};
  for (int i = 1; i < n; ++i) {
    const BodyMotion& parent = ws.body[model.parent(i)];
    for (int k = model.idx_v(i); k < model.idx_v(i) + model.joint_nv(i); ++k) {
      const detail::TangentStep step = detail::tangent_step(Motion(Vec6(S.col(k))), parent.v, parent.a, ws.body[i].v);
      ws.u.col(k) = step.u.vector();
      ws.psi.col(k) = step.psi.vector();
      ws.zeta.col(k) = step.zeta.vector();
    }
  }

  // The loop joints' rows of dR/dq, dR/dv and their columns of dE/dq (the motion of f).
  int row = 0;
  for (std::size_t l = 0; l < model.loop_joints().size(); ++l) {
    const LoopJoint& joint = model.loop_joints()[l];
    const int sb = joint.successor, pb = joint.predecessor;
    const detail::LoopFrames f = detail::loop_frames(data, joint);
    const detail::LoopDirections dir = detail::loop_directions(joint);
    const Mat3 RpT = f.Rp.transpose();
    const Motion &vs = ws.body[sb].v, &vp = ws.body[pb].v, &as = ws.body[sb].a, &ap = ws.body[pb].a;
    const Motion v_rel = vs - vp, a_rel = as - ap;
    const Vec3 x = v_rel.linear + v_rel.angular.cross(f.ps), ps_dot = vs.linear + vs.angular.cross(f.ps);
    const Vec3 z_ang = v_rel.angular, z_lin = v_rel.linear - f.ps.cross(v_rel.angular);  // w = Rp^T z
    const Vec3 y_ang = a_rel.angular - vp.angular.cross(v_rel.angular);                  // d/dt w = Rp^T y
    const Vec3 y_lin = a_rel.linear - f.ps.cross(a_rel.angular) + v_rel.angular.cross(ps_dot) - vp.angular.cross(x);
    const Mat3 R_rel = RpT * f.Rs;
    const Vec3 u_axis = R_rel * dir.a;
    const Eigen::AngleAxisd rotation(R_rel);
    const Vec3 rv = rotation.angle() * rotation.axis();
    const Mat3 Jl_inv = so3_left_jacobian_inverse(rv);
    const Vec3 F_lin = f.Rp * f_C[l].linear, F_ang_C = f.Rp * f_C[l].angular;
    const int rows = dir.n_angular + dir.n_linear;

    // Row values of T^T (d(d/dt w) + 2 alpha dw) + beta^2 dphi for the changes of the two bodies.
    auto residual_rows = [&](const BodyChange& ds, const BodyChange& dp, bool with_phi, double* out_rows) {
      const Vec3 dwp = dp.pose.angular;                               // turn of the predecessor frame
      const Vec3 dps = ds.pose.linear + ds.pose.angular.cross(f.ps);  // move of the successor origin
      const Motion dv_rel = ds.v - dp.v, da_rel = ds.a - dp.a;
      const Vec3 dz_ang = dv_rel.angular,
                 dz_lin = dv_rel.linear - dps.cross(v_rel.angular) - f.ps.cross(dv_rel.angular);
      const Vec3 dx = dv_rel.linear + dv_rel.angular.cross(f.ps) + v_rel.angular.cross(dps);
      const Vec3 dps_dot = ds.v.linear + ds.v.angular.cross(f.ps) + vs.angular.cross(dps);
      const Vec3 dy_ang = da_rel.angular - dp.v.angular.cross(v_rel.angular) - vp.angular.cross(dv_rel.angular);
      const Vec3 dy_lin = da_rel.linear - dps.cross(a_rel.angular) - f.ps.cross(da_rel.angular) +
                          dv_rel.angular.cross(ps_dot) + v_rel.angular.cross(dps_dot) - dp.v.angular.cross(x) -
                          vp.angular.cross(dx);
      const Vec3 g_ang = RpT * (dy_ang - dwp.cross(y_ang) + 2.0 * alpha * (dz_ang - dwp.cross(z_ang)));
      const Vec3 g_lin = RpT * (dy_lin - dwp.cross(y_lin) + 2.0 * alpha * (dz_lin - dwp.cross(z_lin)));
      int r = 0;
      for (int m = 0; m < dir.n_angular; ++m) out_rows[r++] = dir.angular[m].dot(g_ang);
      for (int m = 0; m < dir.n_linear; ++m) out_rows[r++] = dir.linear[m].dot(g_lin);
      if (!with_phi || beta2 == 0.0) return;
      // dphi: the translation d = Rp^T (ps - pp) and the relative rotation R_rel = Rp^T Rs,
      // which turns by theta (in C's axes) on the left.
      const Vec3 dpp = dp.pose.linear + dwp.cross(f.pp);
      const Vec3 dd = RpT * (dps - dpp - dwp.cross(f.ps - f.pp));
      const Vec3 theta = RpT * (ds.pose.angular - dwp);
      const Vec3 dsw = swing_change(dir.a, u_axis, theta.cross(u_axis));
      const Vec3 drv = Jl_inv * theta;
      double dphi[6];
      detail::loop_residual_rows(joint.type, dir, dsw, drv, dd, dphi);
      for (int c = 0; c < rows; ++c) out_rows[c] += beta2 * dphi[c];
    };

    // The columns that move either body: the joints on their paths to the root.
    for (int b = sb; b > 0; b = model.parent(b)) ws.mark[b] |= 1;
    for (int b = pb; b > 0; b = model.parent(b)) ws.mark[b] |= 2;
    for (int K = 1; K < n; ++K) {
      if (!ws.mark[K]) continue;
      const bool moves_s = ws.mark[K] & 1, moves_p = ws.mark[K] & 2;
      for (int k = model.idx_v(K); k < model.idx_v(K) + model.joint_nv(K); ++k) {
        const Motion s(Vec6(S.col(k))), u(Vec6(ws.u.col(k))), psi(Vec6(ws.psi.col(k))), zeta(Vec6(ws.zeta.col(k)));
        auto q_step = [&](bool moves, const BodyMotion& bm) -> BodyChange {
          if (!moves) return {};
          return {s, mcross(s, bm.v) - u, mcross(s, bm.a) - psi - mcross(u, bm.v)};
        };
        auto v_step = [&](bool moves, const BodyMotion& bm) -> BodyChange {
          if (!moves) return {};
          return {Motion(), s, mcross(s, bm.v) + zeta};
        };
        double col[6];
        residual_rows(q_step(moves_s, ws.body[sb]), q_step(moves_p, ws.body[pb]), true, col);
        for (int r = 0; r < rows; ++r) ws.B(row + r, k) = col[r];
        residual_rows(v_step(moves_s, ws.body[sb]), v_step(moves_p, ws.body[pb]), false, col);
        for (int r = 0; r < rows; ++r) ws.B(row + r, nv + k) = col[r];
        // dE/dq -= (J_s - J_p)^T df, df from the turn of C's axes (with the predecessor) and the
        // move of its origin (with the successor).
        const Vec3 dwp = moves_p ? s.angular : Vec3::Zero();
        const Vec3 dps = moves_s ? Vec3(s.linear + s.angular.cross(f.ps)) : Vec3::Zero();
        const Vec3 dF_lin = dwp.cross(F_lin);
        const Force dF(dwp.cross(F_ang_C) + dps.cross(F_lin) + f.ps.cross(dF_lin), dF_lin);
        detail::for_each_loop_path_dof(
            model, sb, pb, [&](int i, double sign) { ws.A(i, k) -= sign * dot(Motion(Vec6(S.col(i))), dF); });
      }
    }
    for (int b = sb; b > 0; b = model.parent(b)) ws.mark[b] = 0;
    for (int b = pb; b > 0; b = model.parent(b)) ws.mark[b] = 0;
    row += rows;
  }
  for (const MimicRelation& m : model.mimics()) {  // phi = q_f - r q_l - offset; L constant
    ws.B(row, model.idx_v(m.follower)) += beta2;
    ws.B(row, model.idx_v(m.leader)) -= beta2 * m.multiplier;
    ws.B(row, nv + model.idx_v(m.follower)) += 2.0 * alpha;
    ws.B(row, nv + model.idx_v(m.leader)) -= 2.0 * alpha * m.multiplier;
    ++row;
  }

  // The range-space solve of the linearised system on the kept rows.
  MatX B_r(r, 3 * nv);
  for (int i = 0; i < r; ++i) B_r.row(i) = ws.B.row(perm[i]);
  const Eigen::LLT<MatX> llt(data.M);
  if (llt.info() != Eigen::Success)
    throw SingularError(std::string(fn) + ": the joint-space inertia matrix is not positive definite");
  ws.Z = llt.solve(ws.A);
  MatX dqdd = -ws.Z;
  MatX dlambda_r(r, 3 * nv);  // (Eigen's solves misbehave on empty matrices: r = 0 skips them)
  if (r > 0) {
    ws.Y = llt.solve(L_r.transpose());
    ws.G = L_r * ws.Y;
    dlambda_r = Eigen::LDLT<MatX>(ws.G).solve(L_r * ws.Z - B_r);
    dqdd.noalias() += ws.Y * dlambda_r;
  }
  out.dqdd_dq = dqdd.leftCols(nv);
  out.dqdd_dv = dqdd.middleCols(nv, nv);
  out.dqdd_dtau = dqdd.rightCols(nv);
  if (r == nc) {  // lambda is unique: its derivative, in the model's row order
    MatX dlambda(nc, 3 * nv);
    for (int i = 0; i < r; ++i) dlambda.row(perm[i]) = dlambda_r.row(i);
    out.dlambda_dq = dlambda.leftCols(nv);
    out.dlambda_dv = dlambda.middleCols(nv, nv);
    out.dlambda_dtau = dlambda.rightCols(nv);
  } else {  // the minimum-norm lambda of redundant rows: not provided
    for (MatX* x : {&out.dlambda_dq, &out.dlambda_dv, &out.dlambda_dtau}) x->resize(0, nv);
  }
  if (!dqdd.allFinite() || !out.dlambda_dq.allFinite() || !out.dlambda_dv.allFinite())
    throw NumericalError(std::string(fn) + ": a derivative is not finite although its inputs are");
  data.qdd = qdd;  // rnea_derivatives used data; restore the call's results as documented
  out.lambda = lambda;
}

}  // namespace plucker
