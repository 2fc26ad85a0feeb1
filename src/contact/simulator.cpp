// The fixed-step simulator with compliant contact (docs/contact.md).
#include "plucker/contact/simulator.hpp"

#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "algorithms/thread_pool.hpp"
#include "algorithms/workspace.hpp"
#include "base/text.hpp"
#include "plucker/algorithms/aba.hpp"
#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/forward_dynamics.hpp"
#include "plucker/algorithms/kinematics.hpp"
#include "plucker/algorithms/rnea.hpp"
#include "plucker/io/urdf.hpp"

namespace plucker {

std::string_view to_string(Integrator integrator) {
  switch (integrator) {
    case Integrator::SemiImplicitEuler:
      return "semi_implicit_euler";
    case Integrator::Rk4:
      return "rk4";
    case Integrator::ImplicitEuler:
      return "implicit_euler";
  }
  return "unknown";
}

Integrator parse_integrator(std::string_view name) {
  if (name == "semi_implicit_euler" || name == "symplectic_euler") return Integrator::SemiImplicitEuler;
  if (name == "rk4") return Integrator::Rk4;
  if (name == "implicit_euler" || name == "implicit") return Integrator::ImplicitEuler;
  throw InvalidArgument("unknown integrator '" + text::printable(name) +
                        "': expected 'semi_implicit_euler', 'rk4' or 'implicit_euler'");
}

Simulator::Simulator(const Model& model, double dt, Integrator integrator)
    : model_(model), data_(model_), integrator_(integrator) {
  set_dt(dt);
  constrained_.baumgarte_alpha = 10.0;
  constrained_.baumgarte_beta = 10.0;
  const Eigen::Index nq = model_.nq(), nv = model_.nv();
  q_stage_.setZero(nq);
  xi_.setZero(nv);
  for (int k = 0; k < 4; ++k) {
    a_[k].setZero(nv);
    dxi_[k].setZero(nv);
  }
  v_stage_.setZero(nv);
  zero_.setZero(nv);
  tau_total_.setZero(nv);
  tmp_.setZero(nv);
  A_.setZero(nv, nv);
  lu_ = Eigen::PartialPivLU<MatX>(nv);
  Jp_.setZero(3, nv);
  JtD_.setZero(nv, 3);
  rhs_.setZero(nv);
  dv_.setZero(nv);
}

int Simulator::add_collision_spheres_from_urdf(const std::string& path) {
  std::vector<UrdfCollisionSphere> spheres;
  UrdfOptions options;
  options.root = model_.has_floating_base() ? RootJoint::FreeFlyer : RootJoint::Fixed;
  options.on_warning = [](const std::string&) {};  // the model's own load reported them
  options.collision_spheres = &spheres;
  load_urdf(path, options);
  for (const UrdfCollisionSphere& s : spheres)
    if (!model_.has_body(s.link) && !model_.has_frame(s.link))
      throw InvalidArgument("add_collision_spheres_from_urdf: " + path + " line " + std::to_string(s.line) +
                            ": link '" + text::printable(s.link) + "' is not a body or frame of model '" +
                            text::printable(model_.name()) + "'");
  for (const UrdfCollisionSphere& s : spheres) scene_.add_sphere(model_, s.link, s.center, s.radius);
  return static_cast<int>(spheres.size());
}

int Simulator::add_collision_geometry_from_urdf(const std::string& path, int cylinder_points) {
  if (cylinder_points < 3 || cylinder_points > 64)
    throw InvalidArgument("add_collision_geometry_from_urdf: cylinder_points must be in [3, 64], got " +
                          std::to_string(cylinder_points));
  std::vector<UrdfCollisionGeometry> geometry;
  UrdfOptions options;
  options.root = model_.has_floating_base() ? RootJoint::FreeFlyer : RootJoint::Fixed;
  options.on_warning = [](const std::string&) {};  // the model's own load reported them
  options.collision_geometry = &geometry;
  load_urdf(path, options);
  for (const UrdfCollisionGeometry& g : geometry) {
    if (!model_.has_body(g.link) && !model_.has_frame(g.link))
      throw InvalidArgument("add_collision_geometry_from_urdf: " + path + " line " + std::to_string(g.line) +
                            ": link '" + text::printable(g.link) + "' is not a body or frame of model '" +
                            text::printable(model_.name()) + "'");
    if (g.kind == UrdfCollisionGeometry::Kind::Box)
      for (const Obstacle& o : scene_.obstacles()) contact_slots(ShapeKind::Box, o.kind);
  }
  // Everything checked: add (a scene is never left half-loaded).
  int added = 0;
  for (const UrdfCollisionGeometry& g : geometry) {
    switch (g.kind) {
      case UrdfCollisionGeometry::Kind::Sphere:
        scene_.add_sphere(model_, g.link, g.position, g.radius);
        ++added;
        break;
      case UrdfCollisionGeometry::Kind::Box:
        if (g.size.minCoeff() > 0.0) {
          scene_.add_box(model_, g.link, g.position, g.rotation, 0.5 * g.size);
          ++added;
        }
        break;
      case UrdfCollisionGeometry::Kind::Cylinder:
        // Two rims of points: a cylinder standing on an end face rests on its rim (a capsule
        // would roll), and against a plane a cylinder's deepest point is always on a rim.
        for (const double z : {-0.5 * g.length, 0.5 * g.length})
          for (int k = 0; k < cylinder_points; ++k) {
            const double a = 2.0 * M_PI * k / cylinder_points;
            const Vec3 local(g.radius * std::cos(a), g.radius * std::sin(a), z);
            scene_.add_point(model_, g.link, g.position + g.rotation * local);
            ++added;
          }
        break;
    }
  }
  return added;
}

void Simulator::set_dt(double dt) {
  if (!(std::isfinite(dt) && dt > 0.0))
    throw InvalidArgument("Simulator: dt must be finite and > 0, got " + text::number(dt));
  dt_ = dt;
}

bool Simulator::has_rigid_contact() const {
  for (const HalfSpace& h : scene_.half_spaces())
    if (h.normal_force.law == ContactLaw::Rigid) return true;
  return false;
}

void Simulator::check_state(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                            const Eigen::Ref<const VecX>& tau, const char* fn) const {
  if (integrator_ != Integrator::SemiImplicitEuler && has_rigid_contact())
    throw InvalidArgument(std::string(fn) + ": rigid contact is a velocity-level time-stepping scheme; integrator '" +
                          std::string(to_string(integrator_)) + "' cannot be used with it (use 'semi_implicit_euler')");
  if (integrator_ == Integrator::ImplicitEuler && model_.num_constraints() > 0)
    throw InvalidArgument(std::string(fn) +
                          ": integrator 'implicit_euler' does not support loop joints or mimics; use "
                          "'semi_implicit_euler' or 'rk4'");
  detail::check_arguments(fn, [&] {
    model_.check_configuration(q, "q");
    model_.check_tangent(v, "v");
    model_.check_tangent(tau, "tau");
  });
}

void Simulator::set_joint_limits(const JointLimitOptions& options) {
  for (const double g : {options.stiffness, options.damping})
    if (!std::isfinite(g) || g < 0.0)
      throw InvalidArgument("Simulator.set_joint_limits: stiffness and damping must be finite and >= 0, got " +
                            text::number(options.stiffness) + ", " + text::number(options.damping));
  limits_ = options;
  limited_joints_.clear();
  for (int i = 1; i < model_.nbodies(); ++i)
    if (model_.joint_nq(i) == 1 && model_.joint_nv(i) == 1) {
      const int k = model_.idx_q(i);
      if (std::isfinite(model_.lower_position_limit()[k]) || std::isfinite(model_.upper_position_limit()[k]))
        limited_joints_.push_back(i);
    }
  tau_limited_.setZero(model_.nv());
}

const Eigen::Ref<const VecX> Simulator::with_limit_forces(const Eigen::Ref<const VecX>& q,
                                                          const Eigen::Ref<const VecX>& v,
                                                          const Eigen::Ref<const VecX>& tau) {
  if (!limits_.enabled || limited_joints_.empty()) return tau;
  tau_limited_ = tau;
  for (const int i : limited_joints_) {
    const int kq = model_.idx_q(i), kv = model_.idx_v(i);
    const double lo = model_.lower_position_limit()[kq], hi = model_.upper_position_limit()[kq];
    const double x = q[kq], xdot = v[kv];
    if (x < lo) tau_limited_[kv] += std::max(0.0, limits_.stiffness * (lo - x) - limits_.damping * xdot);
    if (x > hi) tau_limited_[kv] += std::min(0.0, -limits_.stiffness * (x - hi) - limits_.damping * xdot);
  }
  return tau_limited_;
}

double Simulator::limit_energy(const Eigen::Ref<const VecX>& q) const {
  if (!limits_.enabled) return 0.0;
  double e = 0.0;
  for (const int i : limited_joints_) {
    const int kq = model_.idx_q(i);
    const double past =
        std::max({0.0, model_.lower_position_limit()[kq] - q[kq], q[kq] - model_.upper_position_limit()[kq]});
    e += 0.5 * limits_.stiffness * past * past;
  }
  return e;
}

const VecX& Simulator::evaluate(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                                const Eigen::Ref<const VecX>& tau_applied) {
  const Eigen::Ref<const VecX> tau = with_limit_forces(q, v, tau_applied);
  const std::span<const Force> f_ext = contact_forces(model_, data_, scene_, q, v);
  if (model_.num_constraints() == 0) return aba(model_, data_, q, v, tau, f_ext, ReferenceFrame::World);
  // tau + J^T f_ext = tau + g(q) - rnea(q, 0, 0, f_ext): the contact forces as generalised forces.
  tmp_ = gravity_torques(model_, data_, q);
  tau_total_ = tau + tmp_;
  tau_total_ -= rnea(model_, data_, q, zero_, zero_, f_ext, ReferenceFrame::World);
  return constrained_forward_dynamics(model_, data_, q, v, tau_total_, constrained_);
}

void Simulator::retract(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& xi, double dt,
                        Eigen::Ref<VecX> out) const {
  for (int i = 1; i < model_.nbodies(); ++i)
    std::visit(
        [&](const auto& j) {
          j.integrate(q.data() + model_.idx_q(i), xi.data() + model_.idx_v(i), dt, out.data() + model_.idx_q(i));
        },
        model_.joint(i));
}

void Simulator::dexp_inverse(const VecX& xi, const VecX& w, VecX& out) const {
  // q(t) = q0 (+) xi(t) with right-trivialised velocity w: xi' = dexp^-1_{-xi}(w)
  //      = w + 1/2 [xi, w] + 1/12 [xi, [xi, w]] + O(xi^4)   (enough for fourth order, RKMK).
  out = w;
  for (int i = 1; i < model_.nbodies(); ++i) {
    const int iv = model_.idx_v(i);
    if (std::holds_alternative<JointFreeFlyer>(model_.joint(i))) {
      const Motion x(Vec6(xi.segment<6>(iv))), y(Vec6(w.segment<6>(iv)));
      const Motion b = cross(x, y);
      out.segment<6>(iv) += (0.5 * b + (1.0 / 12.0) * cross(x, b)).vector();
    } else if (std::holds_alternative<JointSpherical>(model_.joint(i))) {
      const Vec3 x = xi.segment<3>(iv), y = w.segment<3>(iv);
      const Vec3 b = x.cross(y);
      out.segment<3>(iv) += 0.5 * b + (1.0 / 12.0) * x.cross(b);
    }
  }
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): Eigen::Ref by value is Eigen's writable-argument idiom
void Simulator::implicit_step(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau) {
  const double h = dt_;
  const std::span<const Force> f_ext = contact_forces(model_, data_, scene_, q, v);
  start_pairs_.assign(contact_pairs(data_).begin(), contact_pairs(data_).end());
  // rhs = dt (tau - C + J^T F) + dt^2 J^T K J v;  A = M - dt J^T D J - dt^2 J^T K J.
  rhs_ = tau;
  rhs_ -= rnea(model_, data_, q, v, zero_, f_ext, ReferenceFrame::World);  // C - J^T F
  rhs_ *= h;
  A_ = crba(model_, data_, q);
  int jacobian_body = -1;  // pairs of a body are consecutive: one Jacobian per body
  for (const ContactPair& pair : start_pairs_) {
    if (!(pair.normal_force > 0.0)) continue;
    const HalfSpace& ground = scene_.half_spaces()[static_cast<std::size_t>(pair.half_space)];
    const ContactForceDerivatives d = contact_force_derivatives(ground, pair);
    const int body = scene_.shapes()[static_cast<std::size_t>(pair.shape)].body;
    if (body == 0) continue;
    if (body != jacobian_body) body_jacobian(model_, data_, q, body, ReferenceFrame::World);
    jacobian_body = body;
    const Matrix6X& J = data_.J;
    // Velocity of the body point at p: v_O + omega x p = J_lin v - p x (J_ang v).
    Jp_ = J.bottomRows<3>();
    Jp_.noalias() -= skew(pair.point) * J.topRows<3>();
    const Mat3 D = h * d.force_velocity + (h * h) * d.force_position;
    JtD_.noalias() = Jp_.transpose() * D;
    A_.noalias() -= JtD_ * Jp_;
    JtD_.noalias() = Jp_.transpose() * ((h * h) * d.force_position);
    rhs_.noalias() += JtD_ * (Jp_ * v);
  }
  lu_.compute(A_);
  dv_.noalias() = lu_.solve(rhs_);
  v += dv_;
  retract(q, v, h, q_stage_);
  q = q_stage_;
}

void Simulator::ensure_rigid_capacity() {
  const auto P = static_cast<Eigen::Index>(scene_.num_pairs());
  const Eigen::Index nv = model_.nv();
  if (rigid_J_.rows() >= 3 * P && static_cast<Eigen::Index>(rigid_warm_.size()) == 3 * P) return;
  rigid_active_.resize(static_cast<std::size_t>(P));
  rigid_J_.setZero(3 * P, nv);
  rigid_Y_.setZero(nv, 3 * P);
  rigid_G_.setZero(3 * P, 3 * P);
  rigid_Gn_.setZero(P, P);
  rigid_b_.setZero(3 * P);
  rigid_p_.setZero(3 * P);
  rigid_mu_.setZero(P);
  rigid_m_.setZero(P);
  rigid_phi_.setZero(P);
  v_free_.setZero(nv);
  rigid_warm_.assign(static_cast<std::size_t>(3 * P), 0.0);
  lemke_.reserve(static_cast<int>(P));
}

void Simulator::rigid_response(const Eigen::Ref<const VecX>& q, int rows) {
  // Y = M^-1 J^T: the CRBA's M factorised in place as L^T L (branch-induced sparsity), one
  // back-substitution per contact row.
  crba(model_, data_, q, Triangle::Upper);
  factorize_ltl(model_, data_);
  auto Y = rigid_Y_.leftCols(rows);
  Y = rigid_J_.topRows(rows).transpose();
  for (int c = 0; c < rows; ++c) solve_ltl(model_, data_, Y.col(c));
  if (model_.num_constraints() == 0) return;
  // With loop joints or mimics (rows L of the last constrained_forward_dynamics at this q) the
  // impulse response keeps L dv = 0: K = M^-1 - Z S^+ Z^T, Z = M^-1 L^T, S = L Z (pseudo-inverse:
  // L may be rank-deficient). Allocates (this path only).
  const MatX& L = data_.loops.L;
  MatX Z = L.transpose();
  for (Eigen::Index c = 0; c < Z.cols(); ++c) solve_ltl(model_, data_, Z.col(c));
  const MatX S = L * Z;
  Eigen::CompleteOrthogonalDecomposition<MatX> cod(S);
  cod.setThreshold(constrained_.rank_tolerance);
  const MatX LY = L * Y;
  Y -= Z * cod.solve(LY);
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): Eigen::Ref by value is Eigen's writable-argument idiom
void Simulator::rigid_step(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau) {
  const double h = dt_;
  ensure_rigid_capacity();
  RigidContactReport& report = rigid_report_;
  report = RigidContactReport{};
  // 1. The free velocity: everything but the rigid contacts (compliant grounds as external forces).
  v_free_ = v;
  v_free_ += h * evaluate(q, v, tau);
  const std::span<const ContactPair> pairs = contact_pairs(data_);  // geometry at (q, v)
  start_pairs_.assign(pairs.begin(), pairs.end());
  // 2. The active set: rigid pairs whose gap at the midpoint q + (dt/2) v closes (or is closed).
  const double v_rest = std::max(rigid_.restitution_velocity, 2.0 * model_.gravity().norm() * h);
  int k = 0;
  bool friction = false;
  for (std::size_t i = 0; i < start_pairs_.size(); ++i) {
    const ContactPair& pair = start_pairs_[i];
    const HalfSpace& ground = scene_.half_spaces()[static_cast<std::size_t>(pair.half_space)];
    if (ground.normal_force.law != ContactLaw::Rigid) continue;
    if (scene_.shapes()[static_cast<std::size_t>(pair.shape)].body == 0) continue;  // fixed to the world
    const double phi = -pair.penetration, vn = -pair.penetration_rate;
    // Touching pairs stay in the problem while separating (harmless: the impulse lets them go);
    // dropping them on a rounding-level separation speed made light feet chatter. Pairs within
    // the margin join with their gap (v_n+ >= -phi / dt: they may close it, not cross it), so that
    // neither the impulses nor the position correction push a nearby pair into the ground.
    // (Not while a bouncing impact approaches: the gap condition would take its speed before the touch.)
    const bool near = phi <= rigid_.contact_margin && (vn >= -v_rest || ground.normal_force.restitution == 0.0);
    if (phi + 0.5 * h * std::min(vn, 0.0) <= rigid_.contact_tolerance || near) {
      rigid_active_[static_cast<std::size_t>(k)] = static_cast<int>(i);
      rigid_mu_[k] = ground.friction.dynamic_coefficient;
      friction = friction || rigid_mu_[k] > 0.0;
      ++k;
    } else {
      for (int r = 0; r < 3; ++r) rigid_warm_[3 * i + static_cast<std::size_t>(r)] = 0.0;
    }
  }
  report.active = k;
  report.friction = friction;
  if (k == 0) {
    v = v_free_;
    retract(q, v, h, q_stage_);
    q = q_stage_;
    return;
  }
  // 3. Contact rows: row 0 the normal n, rows 1, 2 the tangents (friction), of each active pair;
  // frictionless problems keep the normal rows only (rows 0..k-1).
  const int per = friction ? 3 : 1, rows = per * k;
  int jacobian_body = -1;  // pairs of a body are consecutive: one Jacobian (one kinematics pass) per body
  for (int a = 0; a < k; ++a) {
    const ContactPair& pair = start_pairs_[static_cast<std::size_t>(rigid_active_[static_cast<std::size_t>(a)])];
    const HalfSpace& ground = scene_.half_spaces()[static_cast<std::size_t>(pair.half_space)];
    const int body = scene_.shapes()[static_cast<std::size_t>(pair.shape)].body;
    const Vec3& n = pair.normal;
    // Tangents: t1 orthogonal to n and to the coordinate axis least aligned with it, t2 = n x t1.
    Eigen::Index axis = 0;
    n.cwiseAbs().minCoeff(&axis);
    const Vec3 t1 = n.cross(Vec3::Unit(axis)).normalized(), t2 = n.cross(t1);
    const int r0 = friction ? 3 * a : a;
    {
      if (body != jacobian_body) body_jacobian(model_, data_, q, body, ReferenceFrame::World);
      jacobian_body = body;
      const Matrix6X& J = data_.J;
      // Velocity of the body point at p: v_O + omega x p = J_lin v - p x (J_ang v).
      Jp_ = J.bottomRows<3>();
      Jp_.noalias() -= skew(pair.point) * J.topRows<3>();
      rigid_J_.row(r0).noalias() = n.transpose() * Jp_;
      if (friction) {
        rigid_J_.row(r0 + 1).noalias() = t1.transpose() * Jp_;
        rigid_J_.row(r0 + 2).noalias() = t2.transpose() * Jp_;
      }
    }
    const double vn = -pair.penetration_rate;  // normal velocity before the step
    const double phi = -pair.penetration;
    rigid_phi_[a] = phi;
    if (phi + 0.5 * h * std::min(vn, 0.0) <= rigid_.contact_tolerance)
      rigid_m_[a] = vn < -v_rest ? ground.normal_force.restitution * vn : 0.0;  // e min(v_n-, 0)
    else
      rigid_m_[a] = phi / h;  // a pair within the margin: v_n+ >= -phi / dt
  }
  rigid_response(q, rows);
  auto J = rigid_J_.topRows(rows);
  auto Y = rigid_Y_.leftCols(rows);
  auto G = rigid_G_.topLeftCorner(rows, rows);
  G.noalias() = J * Y;
  auto b = rigid_b_.head(rows);
  b.noalias() = J * v_free_;
  for (int a = 0; a < k; ++a) b[per * a] += rigid_m_[a];
  // 4. Impulses.
  auto p = rigid_p_.head(rows);
  if (!friction) {
    try {
      report.pivots = lemke_.solve(G, b, p, rigid_.max_pivots);
    } catch (const SingularError& e) {
      throw SingularError(std::string("Simulator: rigid contact with ") + std::to_string(k) +
                          " active pairs has no solution: " + e.what());
    } catch (const ConvergenceError& e) {
      throw ConvergenceError(
          std::string("Simulator: rigid contact with ") + std::to_string(k) + " active pairs: " + e.what(),
          e.iterations(), e.residual());
    }
    for (int i = 0; i < rows; ++i) {  // lcp_violation without its allocation
      const double w = G.row(i).dot(p) + b[i];
      report.complementarity = std::max({report.complementarity, -p[i], -w, std::abs(p[i] * w)});
    }
  } else {
    for (int a = 0; a < k; ++a)
      for (int r = 0; r < 3; ++r)
        p[3 * a + r] = rigid_warm_[3 * static_cast<std::size_t>(rigid_active_[static_cast<std::size_t>(a)]) +
                                   static_cast<std::size_t>(r)];
    report.pgs = solve_friction_pgs(G, b, rigid_mu_.head(k), p, rigid_.pgs);
  }
  v = v_free_;
  v.noalias() += Y * p;
  // The pairs' forces: impulse / dt.
  for (ContactPair& pair : start_pairs_)
    if (scene_.half_spaces()[static_cast<std::size_t>(pair.half_space)].normal_force.law == ContactLaw::Rigid) {
      pair.normal_force = 0.0;
      pair.force.setZero();
    }
  for (int a = 0; a < k; ++a) {
    const auto i = static_cast<std::size_t>(rigid_active_[static_cast<std::size_t>(a)]);
    ContactPair& pair = start_pairs_[i];
    const Vec3& n = pair.normal;
    Eigen::Index axis = 0;
    n.cwiseAbs().minCoeff(&axis);
    const Vec3 t1 = n.cross(Vec3::Unit(axis)).normalized(), t2 = n.cross(t1);
    const double pn = p[per * a];
    pair.normal_force = pn / h;
    pair.force = n * pn;
    if (friction) {
      pair.force += t1 * p[3 * a + 1] + t2 * p[3 * a + 2];
      for (int r = 0; r < 3; ++r) rigid_warm_[3 * i + static_cast<std::size_t>(r)] = p[3 * a + r];
    }
    pair.force /= h;
  }
  // 5. Positions, then the projection of the predicted penetrations (velocities unchanged).
  retract(q, v, h, q_stage_);
  q = q_stage_;
  if (!rigid_.position_correction) return;
  double worst = 0.0;
  for (int a = 0; a < k; ++a) {
    rigid_phi_[a] += h * J.row(per * a).dot(v);  // the linearised gap at the end of the step
    worst = std::min(worst, rigid_phi_[a]);
  }
  if (!(worst < 0.0)) return;
  auto Gn = rigid_Gn_.topLeftCorner(k, k);
  for (int a = 0; a < k; ++a)
    for (int c = 0; c < k; ++c) Gn(a, c) = G(per * a, per * c);
  auto m = rigid_m_.head(k);
  report.correction_pivots = lemke_.solve(Gn, rigid_phi_.head(k), m, rigid_.max_pivots);
  dv_.setZero();
  for (int a = 0; a < k; ++a) dv_.noalias() += m[a] * Y.col(per * a);
  retract(q, dv_, 1.0, q_stage_);
  q = q_stage_;
}

void Simulator::step_unchecked(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau) {
  const double h = dt_;
  if (has_rigid_contact()) {
    rigid_step(q, v, tau);
    return;
  }
  if (integrator_ == Integrator::ImplicitEuler) {
    implicit_step(q, v, with_limit_forces(q, v, tau));
    return;
  }
  if (integrator_ == Integrator::SemiImplicitEuler) {
    v += h * evaluate(q, v, tau);
    retract(q, v, h, q_stage_);
    q = q_stage_;
    return;
  }
  // RK4 in the chart xi -> q (+) xi at the start of the step.
  a_[0] = evaluate(q, v, tau);
  dxi_[0] = v;
  start_pairs_.assign(contact_pairs(data_).begin(), contact_pairs(data_).end());
  const double c[3] = {0.5 * h, 0.5 * h, h};
  for (int s = 1; s < 4; ++s) {
    xi_ = c[s - 1] * dxi_[s - 1];
    v_stage_ = v + c[s - 1] * a_[s - 1];
    retract(q, xi_, 1.0, q_stage_);
    a_[s] = evaluate(q_stage_, v_stage_, tau);
    dexp_inverse(xi_, v_stage_, dxi_[s]);
  }
  xi_ = (h / 6.0) * (dxi_[0] + 2.0 * dxi_[1] + 2.0 * dxi_[2] + dxi_[3]);
  v += (h / 6.0) * (a_[0] + 2.0 * a_[1] + 2.0 * a_[2] + a_[3]);
  retract(q, xi_, 1.0, q_stage_);
  q = q_stage_;
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): Eigen::Ref by value is Eigen's writable-argument idiom
void Simulator::step(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau) {
  check_state(q, v, tau, "Simulator.step");
  step_unchecked(q, v, tau);
  if (integrator_ == Integrator::SemiImplicitEuler && !has_rigid_contact())
    start_pairs_.assign(contact_pairs(data_).begin(), contact_pairs(data_).end());
  if (!q.allFinite() || !v.allFinite())
    throw NumericalError("Simulator.step: the state is not finite after the step (dt " + text::number(dt_) +
                         " too large for the contact stiffness?)");
}

namespace {
void check_output(const Eigen::Ref<MatX>& X, Eigen::Index rows, Eigen::Index cols, const char* name) {
  if (X.rows() != rows || X.cols() != cols)
    throw InvalidArgument(std::string("Simulator.rollout: ") + name + " is " + std::to_string(X.rows()) + " x " +
                          std::to_string(X.cols()) + ", expected " + std::to_string(rows) + " x " +
                          std::to_string(cols));
}
}  // namespace

void Simulator::rollout(const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& v0,
                        const Eigen::Ref<const MatX>& TAU, Eigen::Ref<MatX> Q, Eigen::Ref<MatX> V, Eigen::Ref<MatX> F) {
  rollout_impl(q0, v0, TAU, Q, V, F, nullptr, nullptr);
}

void Simulator::rollout(const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& v0,
                        const Eigen::Ref<const MatX>& TAU, Eigen::Ref<MatX> Q, Eigen::Ref<MatX> V, Eigen::Ref<MatX> F,
                        Eigen::Ref<MatX> penetration, Eigen::Ref<MatX> energy) {
  rollout_impl(q0, v0, TAU, Q, V, F, &penetration, &energy);
}

void Simulator::rollout_impl(const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& v0,
                             const Eigen::Ref<const MatX>& TAU, Eigen::Ref<MatX>& Q, Eigen::Ref<MatX>& V,
                             Eigen::Ref<MatX>& F, Eigen::Ref<MatX>* penetration, Eigen::Ref<MatX>* energy_out) {
  const char* fn = "Simulator.rollout";
  if (TAU.rows() != model_.nv())
    throw InvalidArgument(std::string(fn) + ": TAU has " + std::to_string(TAU.rows()) +
                          " rows per step, expected nv = " + std::to_string(model_.nv()));
  check_state(q0, v0, zero_, fn);
  if (!TAU.allFinite()) {
    for (Eigen::Index t = 0; t < TAU.cols(); ++t)
      if (!TAU.col(t).allFinite())
        throw InvalidArgument(std::string(fn) + ": TAU is not finite at step " + std::to_string(t));
  }
  const Eigen::Index T = TAU.cols(), P = scene_.num_pairs();
  check_output(Q, model_.nq(), T + 1, "Q");
  check_output(V, model_.nv(), T + 1, "V");
  check_output(F, 3 * P, T, "F");
  if (penetration) check_output(*penetration, P, T + 1, "penetration");
  if (energy_out) check_output(*energy_out, 4, T + 1, "energy");
  Q.col(0) = q0;
  V.col(0) = v0;
  const bool rigid = has_rigid_contact();
  auto diagnostics = [&](Eigen::Index t) {
    if (energy_out) {
      const Energy e = energy(Q.col(t), V.col(t));
      energy_out->col(t) << e.kinetic, e.potential, e.elastic, e.total();
    }
    if (penetration) {
      if (!energy_out) contact_forces(model_, data_, scene_, Q.col(t), V.col(t));
      const auto pairs = contact_pairs(data_);
      for (Eigen::Index p = 0; p < P; ++p) (*penetration)(p, t) = pairs[static_cast<std::size_t>(p)].penetration;
    }
  };
  for (Eigen::Index t = 0; t < T; ++t) {
    diagnostics(t);
    Q.col(t + 1) = Q.col(t);
    V.col(t + 1) = V.col(t);
    step_unchecked(Q.col(t + 1), V.col(t + 1), TAU.col(t));
    const std::span<const ContactPair> pairs = integrator_ == Integrator::SemiImplicitEuler && !rigid
                                                   ? contact_pairs(data_)
                                                   : std::span<const ContactPair>(start_pairs_);
    for (Eigen::Index p = 0; p < P; ++p) F.block<3, 1>(3 * p, t) = pairs[static_cast<std::size_t>(p)].force;
    if (!Q.col(t + 1).allFinite() || !V.col(t + 1).allFinite())
      throw NumericalError(std::string(fn) + ": the state is not finite after step " + std::to_string(t) + " (dt " +
                           text::number(dt_) + " too large for the contact stiffness?)");
  }
  diagnostics(T);
}

const VecX& Simulator::acceleration(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                                    const Eigen::Ref<const VecX>& tau) {
  check_state(q, v, tau, "Simulator.acceleration");
  return evaluate(q, v, tau);
}

std::span<const ContactPair> Simulator::contacts(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v) {
  check_state(q, v, zero_, "Simulator.contacts");
  contact_forces(model_, data_, scene_, q, v);
  return contact_pairs(data_);
}

Energy Simulator::energy(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v) {
  check_state(q, v, zero_, "Simulator.energy");
  Energy e;
  e.kinetic = kinetic_energy(model_, data_, q, v);
  e.potential = potential_energy(model_, data_, q);
  contact_forces(model_, data_, scene_, q, v);
  e.elastic = contact_elastic_energy(scene_, data_) + limit_energy(q);
  return e;
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): Eigen::Ref by value is Eigen's writable-argument idiom
void rollout_batch(const Simulator& sim, const Eigen::Ref<const MatX>& Q0, const Eigen::Ref<const MatX>& V0,
                   const Eigen::Ref<const MatX>& TAU, Eigen::Ref<MatX> Q, Eigen::Ref<MatX> V, Eigen::Ref<MatX> F,
                   int threads) {
  const char* fn = "rollout_batch";
  const Model& model = sim.model();
  const Eigen::Index B = Q0.cols(), nq = model.nq(), nv = model.nv(), P = sim.scene().num_pairs();
  auto fail = [&](const std::string& what) { throw InvalidArgument(std::string(fn) + ": " + what); };
  if (Q0.rows() != nq) fail("Q0 has " + std::to_string(Q0.rows()) + " rows, expected nq = " + std::to_string(nq));
  if (V0.rows() != nv || V0.cols() != B)
    fail("V0 is " + std::to_string(V0.rows()) + " x " + std::to_string(V0.cols()) + ", expected " + std::to_string(nv) +
         " x " + std::to_string(B));
  if (TAU.rows() != nv) fail("TAU has " + std::to_string(TAU.rows()) + " rows, expected nv = " + std::to_string(nv));
  if (threads < 0) fail("threads must be >= 0, got " + std::to_string(threads));
  if (B == 0) return;
  if (TAU.cols() % B != 0)
    fail("TAU has " + std::to_string(TAU.cols()) + " columns, not a multiple of B = " + std::to_string(B));
  const Eigen::Index T = TAU.cols() / B;
  if (Q.rows() != nq || Q.cols() != (T + 1) * B || V.rows() != nv || V.cols() != (T + 1) * B || F.rows() != 3 * P ||
      F.cols() != T * B)
    fail("the outputs must be Q nq x (T+1) B, V nv x (T+1) B and F 3 P x T B");
  int n = threads == 0 ? static_cast<int>(std::max(1U, std::thread::hardware_concurrency())) : threads;
  n = static_cast<int>(std::min<Eigen::Index>(n, B));
  std::mutex mutex;
  std::exception_ptr error;
  Eigen::Index error_state = B;
  detail::ThreadPool pool(n);
  pool.run([&](int t) {
    try {
      Simulator local(sim);
      for (Eigen::Index b = t; b < B; b += n) {
        {
          const std::lock_guard<std::mutex> lock(mutex);
          if (error_state < b) return;  // an earlier state failed
        }
        try {
          local.rollout(Q0.col(b), V0.col(b), TAU.middleCols(b * T, T), Q.middleCols(b * (T + 1), T + 1),
                        V.middleCols(b * (T + 1), T + 1), F.middleCols(b * T, T));
        } catch (...) {
          const std::lock_guard<std::mutex> lock(mutex);
          if (b < error_state) {
            error_state = b;
            error = std::current_exception();
          }
          return;
        }
      }
    } catch (...) {  // the copy failed (memory)
      const std::lock_guard<std::mutex> lock(mutex);
      if (!error) {
        error_state = t;
        error = std::current_exception();
      }
    }
  });
  if (!error) return;
  const std::string where = std::string(fn) + ": state " + std::to_string(error_state) + ": ";
  try {
    std::rethrow_exception(error);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(where + e.what());
  } catch (const NumericalError& e) {
    throw NumericalError(where + e.what());
  } catch (const SingularError& e) {
    throw SingularError(where + e.what());
  } catch (const ConvergenceError& e) {
    throw ConvergenceError(where + e.what(), e.iterations(), e.residual());
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
}

}  // namespace plucker
