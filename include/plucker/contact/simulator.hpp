// A fixed-step simulator of a model with compliant contact (documentation: Compliant contact and simulation).
//
//   Simulator sim(model, 1e-3, Integrator::SemiImplicitEuler);
//   sim.add_ground(HalfSpace{...});
//   sim.add_sphere("FL_FOOT", Vec3::Zero(), 0.02);
//   sim.step(q, v, tau);                       // in place
//
// The forward dynamics of each evaluation: contact forces at (q, v) (contact_forces), then
// aba(q, v, tau, f_ext, World); with loop joints or mimics (model.num_constraints() > 0)
// constrained_forward_dynamics(q, v, tau + J^T f_ext, options) with the Baumgarte gains of the
// options. The simulator keeps its own copy of the model and its own Data: a warm step allocates
// nothing.
#pragma once

#include <Eigen/LU>
#include <string_view>

#include "plucker/constraints/constrained_dynamics.hpp"
#include "plucker/contact/contact.hpp"
#include "plucker/contact/lcp.hpp"

namespace plucker {

enum class Integrator : int {
  SemiImplicitEuler,  ///< "semi_implicit_euler": v+ = v + dt a(q, v); q+ = q (+) dt v+ (first order, symplectic
                      ///< for separable systems)
  Rk4,                ///< "rk4": classical RK4 in the chart q (+) xi at the step's start (RKMK: stage velocities
                      ///< mapped by dexp^-1 on free-flyer and spherical joints), fourth order
  ImplicitEuler,      ///< "implicit_euler": linearly implicit Euler for stiff contact: the contact forces
                      ///< linearised in v_+ and in the displacement dt v_+ (contact_force_derivatives),
                      ///< (M - dt J^T D J - dt^2 J^T K J) dv = dt (tau - C + J^T F) + dt^2 J^T K J v;
                      ///< q_+ = q (+) dt v_+. First order; trees only (no loop joints or mimics)
};
std::string_view to_string(Integrator integrator);
/// "semi_implicit_euler" (also "symplectic_euler"), "rk4", "implicit_euler" (also "implicit");
/// throws InvalidArgument otherwise.
Integrator parse_integrator(std::string_view name);

/// Rigid contact (grounds with ContactLaw::Rigid; documentation: Compliant contact and simulation, "Rigid contact"):
/// the velocity-level time-stepping of Moreau and Jean. A step from (q, v):
///   1. v_free = v + dt a(q, v, tau) (a: ABA, or constrained dynamics with loop joints or mimics,
///      with the compliant grounds' forces as external forces);
///   2. the active set: rigid pairs whose gap at the step's midpoint, phi + (dt/2) min(v_n, 0), is
///      at most contact_tolerance (touching pairs stay in the problem while they separate); and the
///      pairs within contact_margin of touching, with the condition v_n+ >= -phi / dt;
///   3. contact rows J (normal; with friction also two tangents) of the active pairs, the Delassus
///      matrix G = J M^-1 J^T (M^-1 J^T by the CRBA and the sparse L^T L factorisation; with loop
///      joints or mimics the constrained response M^-1 - M^-1 L^T (L M^-1 L^T)^+ L M^-1);
///   4. impulses p with v+ = v_free + M^-1 J^T p and Newton's restitution in the complementarity
///      conditions, 0 <= p_n  _|_  v_n+ + e min(v_n-, 0) >= 0 (e = 0 for approach speeds below
///      restitution_velocity); frictionless: exact LCP by Lemke's method; with friction: projected
///      Gauss-Seidel over the Coulomb cones |p_t| <= mu p_n;
///   5. q+ = q (+) dt v+; then (position_correction) the penetrations the linearised step predicts,
///      phi + dt v_n+ < 0, are removed by the mass-metric projection dq = M^-1 J_n^T m,
///      0 <= m _|_ phi + dt v_n+ + G_nn m >= 0 (velocities unchanged).
/// The reported pair force is the impulse over dt.
struct RigidContactOptions {
  double contact_tolerance = 1e-6;  ///< m: a pair is active when its midpoint gap is <= this
  /// m: a pair whose gap phi is <= this (and that is not active), approaching slower than the
  /// restitution velocity (or with restitution 0), joins the problem with the condition
  /// v_n+ >= -phi / dt (it may close its gap in the step, not cross it) and no restitution;
  /// the position correction then keeps it out of the ground too. Without it, the projection of a
  /// foot resting on one edge of its sole tilted the foot onto the other edge each step (talos).
  double contact_margin = 1e-3;
  double restitution_velocity = 1e-3;  ///< m/s: no restitution below max(this, 2 |g| dt)
  bool position_correction = true;
  int max_pivots = 0;  ///< Lemke's pivot cap (0: 10 (n + 1))
  FrictionPgsOptions pgs;
};
/// What the last rigid step did.
struct RigidContactReport {
  int active = 0;                ///< pairs in the problem (active, or within contact_margin)
  bool friction = false;         ///< solved by PGS over friction cones (else Lemke)
  int pivots = 0;                ///< Lemke's pivots (frictionless)
  FrictionPgsReport pgs;         ///< PGS sweeps (friction)
  int correction_pivots = 0;     ///< Lemke's pivots of the position correction
  double complementarity = 0.0;  ///< frictionless: lcp_violation of the velocity LCP
};

/// Joint limits as penalties: every 1-DoF joint (revolute, prismatic) with a finite position
/// limit gets, past it by delta > 0, the generalised force k delta - d qdot pushing it back
/// (clamped at zero: the limit never pulls), like a Kelvin-Voigt contact on the joint axis.
/// Stored energy 1/2 k delta^2 (Energy::elastic). Off by default (limits are often nominal in
/// robot files); with implicit_euler the penalty is explicit (evaluated at the step's start).
struct JointLimitOptions {
  bool enabled = false;
  double stiffness = 1e4;  ///< N m / rad (N / m for prismatic)
  double damping = 1e2;    ///< N m s / rad
};

/// Energies at a state: kinetic, potential in the model's gravity field (zero at the world
/// origin), elastic energy stored in the contacts; total = their sum.
struct Energy {
  double kinetic = 0.0, potential = 0.0, elastic = 0.0;
  double total() const { return kinetic + potential + elastic; }
};

class Simulator {
 public:
  /// dt > 0 and finite, else InvalidArgument.
  Simulator(const Model& model, double dt = 1e-3, Integrator integrator = Integrator::SemiImplicitEuler);

  const Model& model() const { return model_; }
  double dt() const { return dt_; }
  void set_dt(double dt);
  Integrator integrator() const { return integrator_; }
  void set_integrator(Integrator integrator) { integrator_ = integrator; }
  /// Options of constrained_forward_dynamics (models with loop joints or mimics).
  ConstrainedOptions& constrained_options() { return constrained_; }
  /// Options of rigid contact (grounds with ContactLaw::Rigid).
  RigidContactOptions& rigid_options() { return rigid_; }
  /// Joint-limit penalties (above); InvalidArgument for a negative or non-finite gain.
  const JointLimitOptions& joint_limits() const { return limits_; }
  void set_joint_limits(const JointLimitOptions& options);
  const RigidContactReport& rigid_report() const { return rigid_report_; }
  /// True when some ground is rigid: steps are then the rigid time-stepping above (the integrator
  /// must be semi_implicit_euler, which it is a velocity-level form of; InvalidArgument otherwise).
  bool has_rigid_contact() const;

  int add_ground(const HalfSpace& half_space) { return scene_.add_half_space(half_space); }
  int add_sphere(const std::string& frame, const Vec3& center, double radius) {
    return scene_.add_sphere(model_, frame, center, radius);
  }
  int add_point(const std::string& frame, const Vec3& position) { return scene_.add_point(model_, frame, position); }
  /// ContactScene::add_capsule and add_box on this model.
  int add_capsule(const std::string& frame, const Vec3& center, const Mat3& rotation, double radius, double length) {
    return scene_.add_capsule(model_, frame, center, rotation, radius, length);
  }
  int add_box(const std::string& frame, const Vec3& center, const Mat3& rotation, const Vec3& half_extents) {
    return scene_.add_box(model_, frame, center, rotation, half_extents);
  }
  /// A fixed sphere or box (or a half-space) of the environment; returns the obstacle index.
  int add_obstacle(const Obstacle& obstacle) { return scene_.add_obstacle(obstacle); }
  /// Shapes for every `<collision>` sphere, box and cylinder of the URDF file `path` (pose: the
  /// collision origin in the link's frame; links merged by fixed joints are frames). Spheres and
  /// boxes as they are (a box with a zero edge is skipped); a cylinder as two rims of
  /// `cylinder_points` points each (in [3, 64]): against a plane a cylinder's deepest point is on
  /// a rim, so a cylinder resting on an end face or on a rim is exact, and one rolling on its side
  /// rises and falls by r (1 - cos(pi / cylinder_points)) (7.6 % of r for 8). Meshes are skipped.
  /// Every link must be a body or frame of this model (InvalidArgument naming it; nothing is added
  /// then); malformed documents raise ModelError. Returns how many shapes were added.
  int add_collision_geometry_from_urdf(const std::string& path, int cylinder_points = 8);
  /// A sphere for every `<collision><geometry><sphere>` of the URDF file `path` (centre: the
  /// collision origin's xyz in the link's frame; a link merged by a fixed joint is a frame, so its
  /// spheres go on its body). Every link must be a body or frame of this model (InvalidArgument
  /// naming it; nothing is added then); malformed documents raise ModelError. Returns how many
  /// spheres were added (other geometries are skipped).
  int add_collision_spheres_from_urdf(const std::string& path);
  const ContactScene& scene() const { return scene_; }

  /// One step from (q, v) under tau, in place. Throws InvalidArgument for wrong sizes or
  /// non-finite / non-unit inputs, NumericalError when the new state is not finite.
  void step(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau);
  /// T = TAU.cols() steps from (q0, v0): Q (nq x T+1) and V (nv x T+1) get the states (column
  /// 0 = the initial state); F (3 P x T, P = scene().num_pairs()) the contact force of each pair
  /// at the start of each step (rows 3p..3p+2: the world force on the body of pair p, as in
  /// ContactPair::force). The outputs must have these sizes (InvalidArgument otherwise). Inputs
  /// are checked up front; a state that becomes non-finite raises NumericalError naming the step.
  void rollout(const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& v0, const Eigen::Ref<const MatX>& TAU,
               Eigen::Ref<MatX> Q, Eigen::Ref<MatX> V, Eigen::Ref<MatX> F);
  /// ... and per state: penetration (P x T+1) of each pair, energy (4 x T+1: kinetic, potential,
  /// contact elastic, total).
  void rollout(const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& v0, const Eigen::Ref<const MatX>& TAU,
               Eigen::Ref<MatX> Q, Eigen::Ref<MatX> V, Eigen::Ref<MatX> F, Eigen::Ref<MatX> penetration,
               Eigen::Ref<MatX> energy);

  /// qdd at (q, v, tau) with the contact forces (checked inputs). Returns data().qdd.
  const VecX& acceleration(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                           const Eigen::Ref<const VecX>& tau);
  /// The contact pairs at (q, v) (checked inputs).
  std::span<const ContactPair> contacts(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v);
  /// The pairs of the last step's first evaluation (at the start state of the step).
  std::span<const ContactPair> last_contacts() const { return start_pairs_; }
  Energy energy(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v);

  Data& data() { return data_; }

 private:
  void check_state(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                   const char* fn) const;
  /// data_.qdd at (q, v, tau), inputs valid.
  const VecX& evaluate(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                       const Eigen::Ref<const VecX>& tau);
  void rollout_impl(const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& v0,
                    const Eigen::Ref<const MatX>& TAU, Eigen::Ref<MatX>& Q, Eigen::Ref<MatX>& V, Eigen::Ref<MatX>& F,
                    Eigen::Ref<MatX>* penetration, Eigen::Ref<MatX>* energy);
  void step_unchecked(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau);
  void implicit_step(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau);
  void rigid_step(Eigen::Ref<VecX> q, Eigen::Ref<VecX> v, const Eigen::Ref<const VecX>& tau);
  /// Y = K J^T for the first `rows` rows of rigid_J_ (K: M^-1, or the constrained response).
  void rigid_response(const Eigen::Ref<const VecX>& q, int rows);
  /// out = q (+) xi (allocation-free).
  void retract(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& xi, double dt,
               Eigen::Ref<VecX> out) const;
  /// out = dexp^-1 at xi of the velocity w (identity on vector-space joints).
  void dexp_inverse(const VecX& xi, const VecX& w, VecX& out) const;

  Model model_;
  Data data_;
  ContactScene scene_;
  double dt_ = 1e-3;
  Integrator integrator_ = Integrator::SemiImplicitEuler;
  ConstrainedOptions constrained_;
  // scratch (sized at construction)
  VecX q_stage_, xi_, a_[4], dxi_[4], v_stage_, zero_, tau_total_, tmp_;
  std::vector<ContactPair> start_pairs_;
  MatX A_;                                        ///< implicit_euler: the iteration matrix
  Eigen::PartialPivLU<MatX> lu_;                  ///< ... its factorisation
  Eigen::Matrix<double, 3, Eigen::Dynamic> Jp_;   ///< ... a contact point's Jacobian (3 x nv, world)
  Eigen::Matrix<double, Eigen::Dynamic, 3> JtD_;  ///< ... Jp^T times a 3 x 3 block
  VecX rhs_, dv_;                                 ///< the pairs at the start of the last step
  // rigid contact scratch, sized for every pair on the first rigid step (ensure_rigid_capacity)
  RigidContactOptions rigid_;
  JointLimitOptions limits_;
  std::vector<int> limited_joints_;  ///< the 1-DoF joints with a finite position limit
  VecX tau_limited_;                 ///< tau plus the joint-limit penalties
  /// tau plus the penalties at (q, v) (tau itself when limits are off).
  const Eigen::Ref<const VecX> with_limit_forces(const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                                                 const Eigen::Ref<const VecX>& tau);
  double limit_energy(const Eigen::Ref<const VecX>& q) const;
  RigidContactReport rigid_report_;
  std::vector<int> rigid_active_;                ///< pair index of each active pair
  MatX rigid_J_, rigid_Y_, rigid_G_, rigid_Gn_;  ///< contact rows, K J^T, Delassus, its normal block
  VecX rigid_b_, rigid_p_, rigid_mu_, rigid_m_, rigid_phi_, v_free_;
  std::vector<double> rigid_warm_;  ///< last impulses per pair and row (PGS warm start)
  LemkeSolver lemke_;
  void ensure_rigid_capacity();
};

/// Rollouts from B initial states at once, each under its own torques, on `threads` threads
/// (0: one per hardware thread; at most B), each on its own copy of `sim` (its model, contacts,
/// dt, integrator and options). Q0 (nq x B) and V0 (nv x B) hold the initial states; TAU
/// (nv x T B) the torques, columns [b T, (b + 1) T) for state b; Q (nq x (T+1) B), V (nv x (T+1) B)
/// and F (3 P x T B) receive each rollout as Simulator::rollout does, in the same blocks. Results
/// equal B calls of sim.rollout bit for bit. An error names the first failing state ("state 3:
/// ...") with its type kept.
void rollout_batch(const Simulator& sim, const Eigen::Ref<const MatX>& Q0, const Eigen::Ref<const MatX>& V0,
                   const Eigen::Ref<const MatX>& TAU, Eigen::Ref<MatX> Q, Eigen::Ref<MatX> V, Eigen::Ref<MatX> F,
                   int threads = 0);

}  // namespace plucker
