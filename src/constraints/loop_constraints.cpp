// Loop-constraint kinematics (paper 000 §3.4, Eqs. 16-18); see loop_constraints.hpp for the
// frame conventions. Rows of loop joint k: T_k^T w_k with T_k's angular directions first.
#include "plucker/constraints/loop_constraints.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "algorithms/frame_kernels.hpp"
#include "base/text.hpp"
#include "constraints/loop_kernels.hpp"
#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/kinematics.hpp"
#include "plucker/errors.hpp"

namespace plucker {

namespace detail {

LoopDirections loop_directions(const LoopJoint& joint) {
  const Vec3& a = joint.axis;
  const Vec3 t = std::abs(a.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 b1 = (t - a * a.dot(t)).normalized();
  const Vec3 b2 = a.cross(b1);  // (a, b1, b2) right-handed
  const Vec3 ex = Vec3::UnitX(), ey = Vec3::UnitY(), ez = Vec3::UnitZ();
  LoopDirections d;
  d.a = a, d.b1 = b1, d.b2 = b2;
  auto set = [&](std::initializer_list<Vec3> ang, std::initializer_list<Vec3> lin) {
    d.n_angular = static_cast<int>(ang.size());
    d.n_linear = static_cast<int>(lin.size());
    std::copy(ang.begin(), ang.end(), d.angular.begin());
    std::copy(lin.begin(), lin.end(), d.linear.begin());
  };
  switch (joint.type) {
    case LoopJointType::Revolute:
      set({b1, b2}, {ex, ey, ez});
      break;
    case LoopJointType::Prismatic:
      set({ex, ey, ez}, {b1, b2});
      break;
    case LoopJointType::Cylindrical:
      set({b1, b2}, {b1, b2});
      break;
    case LoopJointType::Planar:
      set({b1, b2}, {a});
      break;
    case LoopJointType::Spherical:
      set({}, {ex, ey, ez});
      break;
    case LoopJointType::Fixed:
      set({ex, ey, ez}, {ex, ey, ez});
      break;
  }
  return d;
}

LoopFrames loop_frames(const Data& data, const LoopJoint& joint) {
  const Transform P = joint.X_predecessor * data.X_base[joint.predecessor];  // P_X_0
  const Transform S = joint.X_successor * data.X_base[joint.successor];      // S_X_0
  LoopFrames f;
  f.Rp = P.rotation();
  f.pp = P.translation();
  f.Rs = S.rotation();
  f.ps = S.translation();
  f.C = Transform(f.Rp.transpose(), f.ps);  // C_X_0: orientation of P, origin of S
  return f;
}

namespace {

// The rotation that takes a to u by the shortest path, as a rotation vector (perpendicular to
// a): its derivative at u = a is a x (omega x a), the part of omega normal to a.
Vec3 swing(const Vec3& a, const Vec3& u, const Vec3& b1) {
  const Vec3 w = a.cross(u);
  const double s = w.norm(), c = a.dot(u);
  if (s < 1e-300) return c > 0.0 ? Vec3::Zero() : Vec3(M_PI * b1);
  return (std::atan2(s, c) / s) * w;
}

Vec3 rotation_vector(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

}  // namespace

int loop_residual_rows(LoopJointType type, const LoopDirections& dir, const Vec3& swing, const Vec3& rotation,
                       const Vec3& d, double* out) {
  int row = 0;
  switch (type) {
    case LoopJointType::Revolute:
      out[row++] = dir.b1.dot(swing), out[row++] = dir.b2.dot(swing);
      for (int k = 0; k < 3; ++k) out[row++] = d[k];
      break;
    case LoopJointType::Prismatic:
      for (int k = 0; k < 3; ++k) out[row++] = rotation[k];
      out[row++] = dir.b1.dot(d), out[row++] = dir.b2.dot(d);
      break;
    case LoopJointType::Cylindrical:
      out[row++] = dir.b1.dot(swing), out[row++] = dir.b2.dot(swing);
      out[row++] = dir.b1.dot(d), out[row++] = dir.b2.dot(d);
      break;
    case LoopJointType::Planar:
      out[row++] = dir.b1.dot(swing), out[row++] = dir.b2.dot(swing);
      out[row++] = dir.a.dot(d);
      break;
    case LoopJointType::Spherical:
      for (int k = 0; k < 3; ++k) out[row++] = d[k];
      break;
    case LoopJointType::Fixed:
      for (int k = 0; k < 3; ++k) out[row++] = rotation[k];
      for (int k = 0; k < 3; ++k) out[row++] = d[k];
      break;
  }
  return row;
}

void loop_residual(const Model& model, const Data& data, const double* q, double* phi) {
  int row = 0;
  for (const LoopJoint& joint : model.loop_joints()) {
    const LoopFrames f = loop_frames(data, joint);
    const LoopDirections dir = loop_directions(joint);
    const Mat3 R = f.Rp.transpose() * f.Rs;           // successor frame relative to predecessor
    const Vec3 d = f.Rp.transpose() * (f.ps - f.pp);  // successor origin, predecessor coordinates
    const Vec3 sw = swing(dir.a, R * dir.a, dir.b1);
    const bool uses_rotation = joint.type == LoopJointType::Prismatic || joint.type == LoopJointType::Fixed;
    row += loop_residual_rows(joint.type, dir, sw, uses_rotation ? rotation_vector(R) : Vec3::Zero(), d, phi + row);
  }
  for (const MimicRelation& m : model.mimics()) {
    const double qf = q[model.idx_q(m.follower)], ql = q[model.idx_q(m.leader)];
    phi[row++] = qf - m.multiplier * ql - m.offset;
  }
}

void world_motion_subspaces(const Model& model, Data& data) {
  Matrix6X& S_world = workspace<LoopsWorkspace>(model, data).S_world;
  for (int j = 1; j < model.nbodies(); ++j)
    ops::visit_joint(model, j, [&](const auto& joint, const auto&) {
      for (int k = 0; k < ops::joint_dofs(joint); ++k) {
        Motion s;
        ops::add_column<double>(s, ops::column(joint, k), 1.0);
        S_world.col(model.idx_v(j) + k) = Motion(ops::apply_inverse(data.X_base[j], s)).vector();
      }
    });
}

void loop_jacobian(const Model& model, Data& data) {
  const Matrix6X& S_world = workspace<LoopsWorkspace>(model, data).S_world;
  MatX& L = data.loops.L;
  L.setZero();
  int row = 0;
  for (const LoopJoint& joint : model.loop_joints()) {
    const LoopFrames f = loop_frames(data, joint);
    const LoopDirections dir = loop_directions(joint);
    // Columns of J_s - J_p: the joints between the two bodies and their common ancestor.
    for_each_loop_path_dof(model, joint.successor, joint.predecessor, [&](int k, double sign) {
      const Motion w = f.C.apply(Motion(Vec6(S_world.col(k))));  // C_X_0 S
      int r = row;
      for (int m = 0; m < dir.n_angular; ++m) L(r++, k) = sign * dir.angular[m].dot(w.angular);
      for (int m = 0; m < dir.n_linear; ++m) L(r++, k) = sign * dir.linear[m].dot(w.linear);
    });
    row += dir.n_angular + dir.n_linear;
  }
  for (const MimicRelation& m : model.mimics()) {
    L(row, model.idx_v(m.follower)) += 1.0;
    L(row, model.idx_v(m.leader)) -= m.multiplier;
    ++row;
  }
}

void loop_bias(const Model& model, Data& data) {
  VecX& c = data.loops.c;
  int row = 0;
  for (const LoopJoint& joint : model.loop_joints()) {
    const LoopFrames f = loop_frames(data, joint);
    const LoopDirections dir = loop_directions(joint);
    const int s = joint.successor, p = joint.predecessor;
    // World (spatial, about the origin) velocities and velocity-product accelerations (qdd = 0).
    const Motion vs = data.X_base[s].apply_inverse(data.v[s]), vp = data.X_base[p].apply_inverse(data.v[p]);
    const Motion as = data.X_base[s].apply_inverse(data.a[s]), ap = data.X_base[p].apply_inverse(data.a[p]);
    const Motion v_rel = vs - vp;
    // d/dt w = C_X_0 (a_s - a_p) + the terms from the motion of frame C (orientation turning with
    // omega_p, origin moving with the successor point p_s): d/dt (Rp^T y) = Rp^T (y' - omega_p x y).
    const Vec3 x = v_rel.linear + v_rel.angular.cross(f.ps);  // relative velocity at p_s
    const Vec3 ps_dot = vs.linear + vs.angular.cross(f.ps);   // velocity of the point p_s
    Motion wdot = f.C.apply(as - ap);
    wdot.angular -= f.Rp.transpose() * vp.angular.cross(v_rel.angular);
    wdot.linear += f.Rp.transpose() * (v_rel.angular.cross(ps_dot) - vp.angular.cross(x));
    for (int m = 0; m < dir.n_angular; ++m) c[row++] = -dir.angular[m].dot(wdot.angular);
    for (int m = 0; m < dir.n_linear; ++m) c[row++] = -dir.linear[m].dot(wdot.linear);
  }
  for (size_t m = 0; m < model.mimics().size(); ++m) c[row++] = 0.0;
}

void check_loop_data(const Model& model, Data& data, const char* fn) {
  check_data(model, data, fn);
  if (data.loops.nc != model.num_constraints())
    throw InvalidArgument(std::string(fn) + ": Data was made before the model's loop joints / mimics were added (" +
                          std::to_string(data.loops.nc) + " constraint rows vs " +
                          std::to_string(model.num_constraints()) + "); make a new Data");
  const int nc = model.num_constraints();
  sized(data.loops.phi, nc);
  sized(data.loops.c, nc);
  sized(data.loops.lambda, nc);
  sized(data.loops.L, nc, model.nv());
}

LoopMotionSubspace loop_motion_subspace(const LoopJoint& joint, const LoopDirections& d) {
  LoopMotionSubspace S = LoopMotionSubspace::Zero(6, loop_joint_dof(joint.type));
  switch (joint.type) {
    case LoopJointType::Revolute:
      S.block<3, 1>(0, 0) = d.a;
      break;
    case LoopJointType::Prismatic:
      S.block<3, 1>(3, 0) = d.a;
      break;
    case LoopJointType::Cylindrical:
      S.block<3, 1>(0, 0) = d.a, S.block<3, 1>(3, 1) = d.a;
      break;
    case LoopJointType::Planar:
      S.block<3, 1>(0, 0) = d.a, S.block<3, 1>(3, 1) = d.b1, S.block<3, 1>(3, 2) = d.b2;
      break;
    case LoopJointType::Spherical:
      S.topRows<3>().setIdentity();
      break;
    case LoopJointType::Fixed:
      break;
  }
  return S;
}

}  // namespace detail

MatX loop_joint_constraint_subspace(const LoopJoint& joint) {
  const detail::LoopDirections d = detail::loop_directions(joint);
  MatX T = MatX::Zero(6, d.n_angular + d.n_linear);
  for (int m = 0; m < d.n_angular; ++m) T.block<3, 1>(0, m) = d.angular[m];
  for (int m = 0; m < d.n_linear; ++m) T.block<3, 1>(3, d.n_angular + m) = d.linear[m];
  return T;
}

MatX loop_joint_motion_subspace(const LoopJoint& joint) {
  return detail::loop_motion_subspace(joint, detail::loop_directions(joint));
}

const VecX& constraint_residual(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_loop_data(model, data, "constraint_residual");
  forward_kinematics(model, data, q);
  detail::loop_residual(model, data, q.data(), data.loops.phi.data());
  return data.loops.phi;
}

const MatX& constraint_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_loop_data(model, data, "constraint_jacobian");
  forward_kinematics(model, data, q);
  detail::world_motion_subspaces(model, data);
  detail::loop_jacobian(model, data);
  return data.loops.L;
}

const VecX& constraint_bias(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                            const Eigen::Ref<const VecX>& v) {
  detail::check_loop_data(model, data, "constraint_bias");
  forward_kinematics(model, data, q, v);
  detail::loop_bias(model, data);
  return data.loops.c;
}

void constraint_terms(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                      const Eigen::Ref<const VecX>& v) {
  detail::check_loop_data(model, data, "constraint_terms");
  forward_kinematics(model, data, q, v);
  detail::loop_residual(model, data, q.data(), data.loops.phi.data());
  detail::world_motion_subspaces(model, data);
  detail::loop_jacobian(model, data);
  detail::loop_bias(model, data);
}

namespace {

std::string violated_joints(const Model& model, const VecX& phi, double tol) {
  std::ostringstream os;
  detail::for_each_constraint_block(model, [&](const std::string& what, int row, int rows) {
    const double err = phi.segment(row, rows).cwiseAbs().maxCoeff();
    if (err > tol) os << (os.tellp() > 0 ? ", " : "") << what << " " << text::number(err);
  });
  return os.str();
}

}  // namespace

VecX assemble(const Model& model, Data& data, const Eigen::Ref<const VecX>& q_guess, const AssembleOptions& options,
              AssembleReport* report) {
  detail::check_loop_data(model, data, "assemble");
  model.check_configuration(q_guess, "assemble: q_guess");
  for (int j : options.fixed_joints)
    if (j <= 0 || j >= model.nbodies())
      throw InvalidArgument("assemble: fixed joint index " + std::to_string(j) + " out of range");
  if (!(options.tolerance > 0.0) || options.max_iterations < 0)
    throw InvalidArgument("assemble: tolerance must be > 0 and max_iterations >= 0");
  VecX q = q_guess;
  normalize(model, q);
  const int nc = model.num_constraints();
  AssembleReport rep;
  if (nc == 0) {
    if (report) *report = rep;
    return q;
  }
  // Merit: |phi|^2, for which the Gauss-Newton step is a descent direction; stop on max |phi|.
  auto merit = [&](const VecX& x) { return constraint_residual(model, data, x).squaredNorm(); };
  double f = merit(q), err = data.loops.phi.cwiseAbs().maxCoeff();
  Eigen::CompleteOrthogonalDecomposition<MatX> cod(nc, model.nv());
  cod.setThreshold(options.rank_tolerance);
  VecX phi(nc), dq(model.nv());
  while (err > options.tolerance && rep.iterations < options.max_iterations) {
    ++rep.iterations;
    phi = data.loops.phi;
    MatX L = constraint_jacobian(model, data, q);
    for (int j : options.fixed_joints) L.middleCols(model.idx_v(j), model.joint_nv(j)).setZero();
    cod.compute(L);
    dq = -cod.solve(phi);  // minimum-norm Gauss-Newton step: L dq = -phi
    double step = 1.0, f_try = 0.0;
    VecX q_try;
    for (int halving = 0; halving < 30; ++halving, step *= 0.5) {
      q_try = integrate(model, q, dq, step);
      f_try = merit(q_try);
      if (f_try < f) break;
    }
    if (!(f_try < f)) break;  // no descent along the Gauss-Newton direction
    q = q_try;
    f = f_try;
    err = data.loops.phi.cwiseAbs().maxCoeff();
  }
  rep.residual = err;
  if (err > options.tolerance) {
    constraint_residual(model, data, q);
    throw SingularError("assemble: the loop constraints cannot be closed from this guess (max |phi| = " +
                        text::number(err) + " after " + std::to_string(rep.iterations) +
                        " Newton steps; violated: " + violated_joints(model, data.loops.phi, options.tolerance) +
                        "). The guess may be too far, or the mechanism cannot close (link lengths).");
  }
  cod.compute(constraint_jacobian(model, data, q));
  rep.rank = static_cast<int>(cod.rank());
  if (report) *report = rep;
  return q;
}

VecX project_velocity(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      double rank_tolerance) {
  detail::check_loop_data(model, data, "project_velocity");
  model.check_tangent(v, "project_velocity: v");
  if (model.num_constraints() == 0) return v;
  // With K a basis of null(L) (rank-revealing decomposition of L^T), the closest velocity in the
  // metric M is K (K^T M K)^-1 K^T M v, which equals v - M^-1 L^T (L M^-1 L^T)^+ L v without
  // squaring the condition number of L.
  constraint_jacobian(model, data, q);
  Eigen::CompleteOrthogonalDecomposition<MatX> cod(model.nv(), model.num_constraints());
  cod.setThreshold(rank_tolerance);
  cod.compute(data.loops.L.transpose());
  const MatX Q = cod.householderQ();
  const MatX K = Q.rightCols(model.nv() - cod.rank());
  const MatX& M = crba(model, data, q);
  const VecX Mv = M * v;
  MatX reduced = K.transpose() * M * K;
  VecX y = K.transpose() * Mv;
  detail::solve_on_free_motions(model, K, reduced, y, "project_velocity");  // as the null-space method
  return K * y;
}

std::vector<Force> loop_joint_forces(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                     const Eigen::Ref<const VecX>& lambda, ReferenceFrame frame) {
  detail::check_loop_data(model, data, "loop_joint_forces");
  if (lambda.size() != model.num_constraints() || !lambda.allFinite())
    throw InvalidArgument("loop_joint_forces: lambda must be finite with size num_constraints = " +
                          std::to_string(model.num_constraints()));
  forward_kinematics(model, data, q);
  std::vector<Force> out;
  int row = 0;
  for (const LoopJoint& joint : model.loop_joints()) {
    const detail::LoopFrames f = detail::loop_frames(data, joint);
    const detail::LoopDirections dir = detail::loop_directions(joint);
    Force fc;  // T_k lambda_k in frame C
    for (int m = 0; m < dir.n_angular; ++m) fc.angular += dir.angular[m] * lambda[row++];
    for (int m = 0; m < dir.n_linear; ++m) fc.linear += dir.linear[m] * lambda[row++];
    // World: about the world origin; world-aligned: about C's origin, rotated into world axes.
    const Transform C_X = detail::world_to(frame, f.C);
    out.push_back(C_X.apply(f.C.apply_inverse(fc)));
  }
  return out;
}

}  // namespace plucker
