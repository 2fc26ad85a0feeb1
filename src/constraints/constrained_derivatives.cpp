// Derivatives of the constrained forward dynamics (constrained_dynamics.hpp), by the implicit
// function theorem on the system that constrained_forward_dynamics solves (paper 000 Eqs. 15,
// 18-20, with Baumgarte stabilisation and loop-joint actuation):
//   E(q, v, tau) = ID(q, v, qdd) - L^T lambda - tau_a(q) - tau = 0
//   R(q, v)      = L qdd - c + 2 alpha L v + beta^2 phi         = 0
// Differentiating at the solution (qdd, lambda), with E_x = dE/dx at fixed (qdd, lambda):
//   [M  -L^T] [d qdd   ]     [E_x  ]
//   [L    0 ] [d lambda] = - [dR/dx]        x in {q, v, tau}  (dE/dtau = -1, dR/dtau = 0)
// on the r rows L_r of L that the solver's rank-revealing step kept (the others are dependent,
// possibly inconsistent, and dropped). L^T d lambda lies in range(L^T) = range(L_r^T): write it
// L_r^T y. Then, by the range-space form,
//   y = G^-1 (L_r M^-1 E_x - dR_r/dx),  G = L_r M^-1 L_r^T,   d qdd = M^-1 (L_r^T y - E_x).
// E_x is evaluated with the returned (minimum-norm) lambda; any lambda with the same L^T lambda
// gives the same d qdd at constant rank (for n(q) in null(L^T), dL^T n = -L^T dn is in
// range(L^T)). With full rank (r = nc) lambda is unique and d lambda = y in the model's row order.
//
// d lambda with redundant rows (r < nc). lambda = A^+ tau_c is the minimum-norm multiplier, A =
// L^T (nv x nc), tau_c = L^T lambda unique; at constant rank it is differentiable, and the
// derivative of the pseudo-inverse (Golub & Pereyra, SIAM J. Numer. Anal. 10, 1973),
//   d(A^+) = -A^+ dA A^+ + A^+ A^+^T dA^T (I - A A^+) + (I - A^+ A) dA^T A^+^T A^+,
// applied to b = tau_c, which lies in range(A) so that (I - A A^+) b = 0, gives, with A^+ b =
// lambda and A^+^T = (A^T)^+ = L^+,
//   d lambda = A^+ (d tau_c - dL^T lambda) + (I - A^+ A) dL (L^+ lambda).
// The first bracket is L^T d lambda = L_r^T y (the first block row above): A^+ L_r^T y = Pi e,
// with e = y placed in the kept rows (0 elsewhere; L^T e = L_r^T y) and Pi = A^+ A = L L^+ the
// orthogonal projector onto range(L) in R^nc. So
//   d lambda = Pi e + (I - Pi) dL nu,   nu = L^+ lambda (nv),
// where dL nu is the derivative of L(q) nu at fixed nu: q columns only (L depends on q alone), and
// zero on mimic rows (constant L). From the rank-revealing QR L^T P = Q R (R_r: its first r
// rows, R_11 their first r columns; L_r^T = Q_1 R_11), A^+ = P R_r^T (R_r R_r^T)^-1 Q_1^T, so
//   Pi = P R_r^T (R_r R_r^T)^-1 R_r P^T,   nu = Q_1 (R_r R_r^T)^-1 R_r P^T lambda, Q_1 = L_r^T R_11^-1.
// dL nu: a loop joint's rows of L nu are T^T d/dt(C_X_0 (v_s - v_p)) at v = 0 and qdd = nu (c = 0
// at v = 0), i.e. the rows of R below at the zero-velocity state with accelerations J nu and
// alpha = beta = 0; their q derivative is the chain rule below with that state (u = 0, psi = s x
// a_parent(k), d v = 0, d a = s x a - psi). Checked against finite differences of lambda in
// test_constrained_derivatives.cpp.
//
// The partial derivatives, analytical:
// - E_x: ID - L^T lambda - tau_a is the RNEA at qdd with the loop joints' constraint and
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
//
// No heap allocation once warm (every buffer and decomposition lives in the workspace below or
// in LoopsWorkspace), while the rank of L stays the same.
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

/// One loop joint's velocity-level and acceleration-level quantities at a state of its two
/// bodies (world velocities and accelerations): its relative velocity in frame C is Rp^T z, the
/// derivative of that Rp^T y (loop_constraints.cpp).
struct LoopState {
  Motion vs, vp, v_rel, a_rel;
  Vec3 x, ps_dot, z_ang, z_lin, y_ang, y_lin;
};

LoopState loop_state(const detail::LoopFrames& f, const BodyMotion& s, const BodyMotion& p) {
  LoopState st;
  st.vs = s.v;
  st.vp = p.v;
  st.v_rel = s.v - p.v;
  st.a_rel = s.a - p.a;
  const Motion &v_rel = st.v_rel, &a_rel = st.a_rel;
  st.x = v_rel.linear + v_rel.angular.cross(f.ps);   // relative velocity at p_s
  st.ps_dot = s.v.linear + s.v.angular.cross(f.ps);  // velocity of the point p_s
  st.z_ang = v_rel.angular;
  st.z_lin = v_rel.linear - f.ps.cross(v_rel.angular);
  st.y_ang = a_rel.angular - p.v.angular.cross(v_rel.angular);
  st.y_lin = a_rel.linear - f.ps.cross(a_rel.angular) + v_rel.angular.cross(st.ps_dot) - p.v.angular.cross(st.x);
  return st;
}

/// Rows of T^T (d(d/dt w) + 2 alpha dw) (w = C_X_0 (v_s - v_p)) for the changes ds, dp of the two
/// bodies at the state st, into out_rows.
void rate_rows(const detail::LoopFrames& f, const detail::LoopDirections& dir, const LoopState& st, double alpha,
               const BodyChange& ds, const BodyChange& dp, double* out_rows) {
  const Mat3 RpT = f.Rp.transpose();
  const Vec3 dwp = dp.pose.angular;                               // turn of the predecessor frame
  const Vec3 dps = ds.pose.linear + ds.pose.angular.cross(f.ps);  // move of the successor origin
  const Motion dv_rel = ds.v - dp.v, da_rel = ds.a - dp.a;
  const Motion &v_rel = st.v_rel, &a_rel = st.a_rel;
  const Vec3 dz_ang = dv_rel.angular, dz_lin = dv_rel.linear - dps.cross(v_rel.angular) - f.ps.cross(dv_rel.angular);
  const Vec3 dx = dv_rel.linear + dv_rel.angular.cross(f.ps) + v_rel.angular.cross(dps);
  const Vec3 dps_dot = ds.v.linear + ds.v.angular.cross(f.ps) + st.vs.angular.cross(dps);
  const Vec3 dy_ang = da_rel.angular - dp.v.angular.cross(v_rel.angular) - st.vp.angular.cross(dv_rel.angular);
  const Vec3 dy_lin = da_rel.linear - dps.cross(a_rel.angular) - f.ps.cross(da_rel.angular) +
                      dv_rel.angular.cross(st.ps_dot) + v_rel.angular.cross(dps_dot) - dp.v.angular.cross(st.x) -
                      st.vp.angular.cross(dx);
  const Vec3 g_ang = RpT * (dy_ang - dwp.cross(st.y_ang) + 2.0 * alpha * (dz_ang - dwp.cross(st.z_ang)));
  const Vec3 g_lin = RpT * (dy_lin - dwp.cross(st.y_lin) + 2.0 * alpha * (dz_lin - dwp.cross(st.z_lin)));
  int r = 0;
  for (int m = 0; m < dir.n_angular; ++m) out_rows[r++] = dir.angular[m].dot(g_ang);
  for (int m = 0; m < dir.n_linear; ++m) out_rows[r++] = dir.linear[m].dot(g_lin);
}

struct ConstrainedDerivativesWorkspace : detail::WorkspaceOf<ConstrainedDerivativesWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::ConstrainedDerivatives;
  explicit ConstrainedDerivativesWorkspace(const Model& model)
      : body(static_cast<std::size_t>(model.nbodies())),
        body0(static_cast<std::size_t>(model.nbodies())),
        f_ext(static_cast<std::size_t>(model.nbodies())),
        mark(static_cast<std::size_t>(model.nbodies()), 0),
        f_C(model.loop_joints().size()) {
    const int nv = model.nv(), nc = model.num_constraints();
    u = psi = zeta = psi0 = Matrix6X::Zero(6, nv);
    A = Z = MatX::Zero(nv, 3 * nv);
    B = D = dlambda = P_dlambda = MatX::Zero(nc, 3 * nv);
    dL_nu = MatX::Zero(nc, nv);
    Y = MatX::Zero(nv, nc);
    G = GR = H = Pp = Pi = MatX::Zero(nc, nc);
    qdd = nu = VecX::Zero(nv);
    lambda = t = VecX::Zero(nc);
    // Size the decompositions once (Eigen leaves their status uninitialised until then).
    if (nv > 0) llt_M.compute(MatX::Identity(nv, nv));
    if (nc > 0) ldlt_G.compute(MatX::Identity(nc, nc)), llt_R.compute(MatX::Identity(nc, nc));
  }
  std::vector<BodyMotion> body;   ///< world velocities and accelerations at the solution
  std::vector<BodyMotion> body0;  ///< ... at v = 0, qdd = nu, no gravity (for dL nu)
  std::vector<Force> f_ext;
  std::vector<char> mark;       ///< bit 1: ancestor of the successor, bit 2: of the predecessor
  std::vector<Force> f_C;       ///< per loop joint, its force in frame C
  Matrix6X u, psi, zeta, psi0;  ///< per velocity index (world coordinates); psi0 at the state body0
  MatX A, B;                    ///< [E_q E_v E_tau], [dR/dq dR/dv 0]
  MatX Z, Y, G, D;              ///< M^-1 A (then d qdd), M^-1 L_r^T, L_r M^-1 L_r^T, y (first r rows)
  MatX dlambda, P_dlambda;      ///< d lambda (nc x 3 nv) and a scratch of its size
  MatX dL_nu;                   ///< dL nu (nc x nv)
  MatX GR, H, Pp, Pi;           ///< R_r R_r^T, its inverse times R_r, Pi in pivoted order, Pi
  VecX qdd, lambda, nu, t;
  Eigen::LLT<MatX> llt_M, llt_R;
  Eigen::LDLT<MatX> ldlt_G;
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
  if (options.method == ConstrainedMethod::Dca || options.method == ConstrainedMethod::DcaAccurate) {
    // The divide-and-conquer solve leaves neither L, S_world nor the rank-revealing step that the
    // other methods leave: made here (the function and its derivatives do not depend on the method).
    constraint_terms(model, data, q, v);
    out.rank = detail::reveal_rank(loops, out.L, options.rank_tolerance, false);
  }
  const Matrix6X& S = loops.S_world;  // at q (constraint_terms)
  ws.qdd = data.qdd;
  ws.lambda = out.lambda;
  const VecX& lambda = ws.lambda;
  const double alpha = options.baumgarte_alpha, beta2 = options.baumgarte_beta * options.baumgarte_beta;
  // The solver keeps the r rows perm[0..r) of L that its rank-revealing step found independent
  // (L_r = loops.Lr's first r rows; R_r = loops.Rr's; redundant rows, possibly inconsistent, are
  // dropped): the function differentiated is the solve with those rows.
  const int r = out.rank;
  const bool redundant = r < nc;
  const auto& perm = loops.qr.colsPermutation().indices();
  const auto L_r = loops.Lr.topRows(r);
  const auto R_r = loops.Rr.topRows(r);

  // With redundant rows: nu = L^+ lambda = L_r^T R_11^-1 (R_r R_r^T)^-1 R_r P^T lambda, and Pi.
  ws.nu.setZero();
  if (redundant && r > 0) {
    auto GR = ws.GR.topLeftCorner(r, r);
    GR.noalias() = R_r * R_r.transpose();
    ws.llt_R.compute(GR);
    if (ws.llt_R.info() != Eigen::Success)
      throw SingularError(std::string(fn) + ": the kept constraint rows are not independent (R_r R_r^T)");
    for (int k = 0; k < nc; ++k) ws.t[k] = lambda[perm[k]];  // P^T lambda
    auto s = ws.D.col(0).head(r);                            // (scratch; D is set below)
    s.noalias() = R_r * ws.t;
    ws.llt_R.solveInPlace(s);
    R_r.leftCols(r).triangularView<Eigen::Upper>().solveInPlace(s);
    ws.nu.noalias() = L_r.transpose() * s;
    auto H = ws.H.topRows(r);  // (R_r R_r^T)^-1 R_r
    H = R_r;
    ws.llt_R.solveInPlace(H);
    ws.Pp.noalias() = R_r.transpose() * H;
    for (int i = 0; i < nc; ++i)
      for (int j = 0; j < nc; ++j) ws.Pi(perm[i], perm[j]) = ws.Pp(i, j);
  } else if (redundant) {
    ws.Pi.setZero();
  }

  // The loop joints' forces f = C^T (T lambda + S u) on the successors (-f on the predecessors).
  for (Force& f : ws.f_ext) f = Force();
  {
    int row = 0, act = 0;
    for (std::size_t l = 0; l < model.loop_joints().size(); ++l) {
      const LoopJoint& joint = model.loop_joints()[l];
      const detail::LoopFrames f = detail::loop_frames(data, joint);
      const detail::LoopDirections dir = detail::loop_directions(joint);
      Force fc;
      for (int m = 0; m < dir.n_angular; ++m) fc.angular += dir.angular[m] * lambda[row++];
      for (int m = 0; m < dir.n_linear; ++m) fc.linear += dir.linear[m] * lambda[row++];
      if (joint.actuated) {
        const detail::LoopMotionSubspace Sj = detail::loop_motion_subspace(joint, dir);
        for (int m = 0; m < Sj.cols(); ++m, ++act) {
          const double ua = options.loop_joint_forces.size() ? options.loop_joint_forces[act] : 0.0;
          fc.angular += Sj.col(m).head<3>() * ua;
          fc.linear += Sj.col(m).tail<3>() * ua;
        }
      }
      ws.f_C[l] = fc;
      const Force world = f.C.apply_inverse(fc);
      ws.f_ext[joint.successor] += world;
      ws.f_ext[joint.predecessor] -= world;
    }
  }
  // d(ID - L^T lambda - tau_a)/d(q, v) with the forces fixed in the world; poses, v, a at qdd.
  rnea_derivatives(model, data, q, v, ws.qdd, ws.f_ext, ReferenceFrame::World);
  ws.A.setZero();
  ws.A.leftCols(nv) = data.dtau_dq;
  ws.A.middleCols(nv, nv) = data.dtau_dv;
  ws.A.rightCols(nv).diagonal().setConstant(-1.0);  // dE/dtau
  ws.B.setZero();
  ws.dL_nu.setZero();

  // World velocities and accelerations, and the per-column vectors of the tangent steps; and
  // the same at the state (v = 0, qdd = nu, no gravity) whose loop rows are L nu.
  const Motion a_base(Vec3::Zero(), -model.gravity());
  ws.body[0] = {Motion(), a_base};
  ws.body0[0] = {Motion(), Motion()};
  for (int i = 1; i < n; ++i) {
    ws.body[i] = {data.X_base[i].apply_inverse(data.v[i]), data.X_base[i].apply_inverse(data.a[i])};
    ws.body0[i] = ws.body0[model.parent(i)];
    for (int k = model.idx_v(i); k < model.idx_v(i) + model.joint_nv(i); ++k)
      ws.body0[i].a += Motion(Vec6(S.col(k) * ws.nu[k]));
  }
  for (int i = 1; i < n; ++i) {
    const BodyMotion& parent = ws.body[model.parent(i)];
    const Motion& a0_parent = ws.body0[model.parent(i)].a;
    for (int k = model.idx_v(i); k < model.idx_v(i) + model.joint_nv(i); ++k) {
      const Motion s(Vec6(S.col(k)));
      const detail::TangentStep step = detail::tangent_step(s, parent.v, parent.a, ws.body[i].v);
      ws.u.col(k) = step.u.vector();
      ws.psi.col(k) = step.psi.vector();
      ws.zeta.col(k) = step.zeta.vector();
      ws.psi0.col(k) = mcross(s, a0_parent).vector();  // psi at zero velocity (u = 0)
    }
  }

  // The loop joints' rows of dR/dq, dR/dv (and of dL nu) and their columns of dE/dq (the motion of f).
  int row = 0;
  for (std::size_t l = 0; l < model.loop_joints().size(); ++l) {
    const LoopJoint& joint = model.loop_joints()[l];
    const int sb = joint.successor, pb = joint.predecessor;
    const detail::LoopFrames f = detail::loop_frames(data, joint);
    const detail::LoopDirections dir = detail::loop_directions(joint);
    const Mat3 RpT = f.Rp.transpose();
    const LoopState st = loop_state(f, ws.body[sb], ws.body[pb]);
    const LoopState st0 = loop_state(f, ws.body0[sb], ws.body0[pb]);
    const Mat3 R_rel = RpT * f.Rs;
    const Vec3 u_axis = R_rel * dir.a;
    const Eigen::AngleAxisd rotation(R_rel);
    const Vec3 rv = rotation.angle() * rotation.axis();
    const Mat3 Jl_inv = so3_left_jacobian_inverse(rv);
    const Vec3 F_lin = f.Rp * ws.f_C[l].linear, F_ang_C = f.Rp * ws.f_C[l].angular;
    const int rows = dir.n_angular + dir.n_linear;

    // beta^2 dphi for a change of the two poses, added to out_rows: the translation d = Rp^T (ps
    // - pp) and the relative rotation R_rel = Rp^T Rs, which turns by theta (in C's axes) on the left.
    auto add_phi_rows = [&](const BodyChange& ds, const BodyChange& dp, double* out_rows) {
      if (beta2 == 0.0) return;
      const Vec3 dwp = dp.pose.angular;
      const Vec3 dps = ds.pose.linear + ds.pose.angular.cross(f.ps);
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
        auto q_step = [&](bool moves, const BodyMotion& bm, const Motion& uk, const Motion& psik) -> BodyChange {
          if (!moves) return {};
          return {s, mcross(s, bm.v) - uk, mcross(s, bm.a) - psik - mcross(uk, bm.v)};
        };
        auto v_step = [&](bool moves, const BodyMotion& bm) -> BodyChange {
          if (!moves) return {};
          return {Motion(), s, mcross(s, bm.v) + zeta};
        };
        double col[6];
        const BodyChange dqs = q_step(moves_s, ws.body[sb], u, psi), dqp = q_step(moves_p, ws.body[pb], u, psi);
        rate_rows(f, dir, st, alpha, dqs, dqp, col);
        add_phi_rows(dqs, dqp, col);
        for (int c = 0; c < rows; ++c) ws.B(row + c, k) = col[c];
        rate_rows(f, dir, st, alpha, v_step(moves_s, ws.body[sb]), v_step(moves_p, ws.body[pb]), col);
        for (int c = 0; c < rows; ++c) ws.B(row + c, nv + k) = col[c];
        if (redundant) {  // dL nu: the q step at the zero-velocity state (u = 0)
          const Motion psi0(Vec6(ws.psi0.col(k)));
          rate_rows(f, dir, st0, 0.0, q_step(moves_s, ws.body0[sb], Motion(), psi0),
                    q_step(moves_p, ws.body0[pb], Motion(), psi0), col);
          for (int c = 0; c < rows; ++c) ws.dL_nu(row + c, k) = col[c];
        }
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

  // The range-space solve of the linearised system on the kept rows (M = data.M, from
  // rnea_derivatives): y = G^-1 (L_r M^-1 A - B_r), d qdd = -M^-1 A + M^-1 L_r^T y.
  ws.llt_M.compute(data.M);
  if (ws.llt_M.info() != Eigen::Success)
    throw SingularError(std::string(fn) + ": the joint-space inertia matrix is not positive definite");
  ws.Z = ws.A;
  ws.llt_M.solveInPlace(ws.Z);  // M^-1 A
  auto y = ws.D.topRows(r);
  if (r > 0) {  // (Eigen's solves misbehave on empty matrices: r = 0 skips them)
    auto Y = ws.Y.leftCols(r);
    Y = L_r.transpose();
    ws.llt_M.solveInPlace(Y);
    auto G = ws.G.topLeftCorner(r, r);
    G.noalias() = L_r * Y;
    ws.ldlt_G.compute(G);
    y.noalias() = L_r * ws.Z;
    for (int i = 0; i < r; ++i) y.row(i) -= ws.B.row(perm[i]);
    ws.ldlt_G.solveInPlace(y);
    ws.Z *= -1.0;
    ws.Z.noalias() += Y * y;
  } else {
    ws.Z *= -1.0;
  }
  out.dqdd_dq = ws.Z.leftCols(nv);
  out.dqdd_dv = ws.Z.middleCols(nv, nv);
  out.dqdd_dtau = ws.Z.rightCols(nv);

  // d lambda = e (y in the kept rows) with full rank, else Pi e + (I - Pi) dL nu = dL nu + Pi (e - dL nu).
  ws.dlambda.setZero();
  for (int i = 0; i < r; ++i) ws.dlambda.row(perm[i]) = y.row(i);
  if (redundant) {
    ws.dlambda.leftCols(nv) -= ws.dL_nu;
    ws.P_dlambda.noalias() = ws.Pi * ws.dlambda;
    ws.dlambda = ws.P_dlambda;
    ws.dlambda.leftCols(nv) += ws.dL_nu;
  }
  out.dlambda_dq = ws.dlambda.leftCols(nv);
  out.dlambda_dv = ws.dlambda.middleCols(nv, nv);
  out.dlambda_dtau = ws.dlambda.rightCols(nv);
  if (!ws.Z.allFinite() || !ws.dlambda.allFinite())
    throw NumericalError(std::string(fn) + ": a derivative is not finite although its inputs are");
  data.qdd = ws.qdd;  // rnea_derivatives used data; restore the call's results as documented
  out.lambda = ws.lambda;
}

}  // namespace plucker
