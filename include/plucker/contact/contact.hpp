// Compliant contact (documentation: Compliant contact and simulation): contact geometry on bodies and frames (points,
// spheres), half-space environments (a ground plane with any unit normal), normal-force models, and a regularised
// Coulomb friction law. Contact forces enter the dynamics as external forces on the bodies (ReferenceFrame::World:
// [moment about the world origin; force] in world coordinates).
//
// Narrow phase: sphere (or point) against half-space only. A point is a sphere of radius 0.
// Penetration x = radius - (n . c - offset) for a sphere of world centre c against the half-space
// {y : n . y <= offset}; contact is active when x > 0. The contact point is the sphere's deepest
// point c - radius n; its velocity is that of the body-fixed point there.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plucker/algorithms/data.hpp"

namespace plucker {

/// Normal-force laws of compliant contact, of penetration x >= 0 and its rate xdot (positive
/// while penetrating). Every law is clamped at zero: the ground never pulls.
enum class ContactLaw : int {
  Linear,            ///< "linear": f = k x + c xdot (Kelvin-Voigt spring-damper)
  HuntCrossley,      ///< "hunt_crossley": f = k x^n + lambda x^n xdot (Hunt & Crossley, "Coefficient of Restitution
                     ///< Interpreted as Damping in Vibroimpact", J. Applied Mechanics 1975)
  AzadFeatherstone,  ///< "azad_featherstone": f = k x^n + lambda x^(n-1) xdot (n = 3/2 is Azad &
                     ///< Featherstone's form, damping proportional to sqrt(x); documentation: Compliant contact)
  Rigid,             ///< "rigid": no penetration force; the Simulator solves the contact as a unilateral
                     ///< constraint (complementarity, impulses with Newton's restitution; documentation:
                     ///< Compliant contact and simulation)
};
std::string_view to_string(ContactLaw law);
/// "linear", "hunt_crossley", "azad_featherstone", "rigid"; throws InvalidArgument naming the others.
ContactLaw parse_contact_law(std::string_view name);

/// A normal-force model: law, stiffness k >= 0, damping (c or lambda) >= 0, exponent n >= 1
/// (ignored by Linear); Rigid uses only the coefficient of restitution e in [0, 1] (Newton's law:
/// normal separation speed after an impact = e times the approach speed before it).
struct NormalForceModel {
  ContactLaw law = ContactLaw::HuntCrossley;
  double stiffness = 1e5;
  double damping = 0.0;
  double exponent = 1.5;
  double restitution = 0.0;  ///< Rigid only
};
/// Throws InvalidArgument (prefixed by `what`) for a negative or non-finite parameter or an
/// exponent below 1.
void check_normal_force_model(const NormalForceModel& model, const char* what);
/// The normal force (>= 0) at penetration x (0 when x < 0) and rate xdot. At x = 0 only the
/// linear law can be nonzero (c xdot: its force jumps on impact). Rigid: 0 (its force comes from
/// the Simulator's impulse solve).
double normal_force(const NormalForceModel& model, double x, double xdot);
/// The elastic (conservative) part's potential energy at penetration x: k x^(n+1) / (n+1)
/// (k x^2 / 2 for Linear); 0 when x <= 0.
double elastic_energy(const NormalForceModel& model, double x);
/// The static penetration under a load w >= 0: k x^n = w (k x = w for Linear).
double static_penetration(const NormalForceModel& model, double load);
/// The coefficient of restitution e = -v_out / v_in of a body of mass m hitting the half-space
/// at normal speed v_in > 0 without gravity (the 1-D problem m xdd = -f(x, xdot), x(0) = 0,
/// xdot(0) = v_in, ended when x returns to 0; with the clamp, a body whose force reached zero
/// leaves at its velocity then). Closed forms: Linear underdamped (zeta < 1): separation at the
/// first zero of k x + c xdot; Hunt-Crossley: the root v_out in (-1/alpha, 0) of
/// alpha v_out - ln(1 + alpha v_out) = alpha v_in - ln(1 + alpha v_in), alpha = lambda / k
/// (Marhefka & Orin 1999; independent of m, k, n). Otherwise (Azad-Featherstone, overdamped
/// Linear) by quadrature: the ODE integrated by RK4 on 20,000 steps of the contact's natural
/// time scale (relative accuracy ~1e-10). Rigid: the model's restitution.
double coefficient_of_restitution(const NormalForceModel& model, double mass, double impact_speed);

/// Regularised Coulomb friction (documentation: Compliant contact and simulation):
///     f_t = -mu(|v_t|) f_n v_t / sqrt(|v_t|^2 + eps^2),
///     mu(s) = mu_d + (mu_s - mu_d) exp(-(s / v_s)^2)            (a Stribeck-like blend)
/// with eps the regularisation velocity (the slip speed at which |f_t| reaches 1/sqrt(2) of
/// mu f_n) and v_s the Stribeck velocity. mu_s = mu_d gives plain regularised Coulomb.
struct FrictionModel {
  double static_coefficient = 0.8;   ///< mu_s >= 0
  double dynamic_coefficient = 0.8;  ///< mu_d >= 0
  double stribeck_velocity = 0.1;    ///< v_s > 0, m/s
  double regularization = 0.01;      ///< eps > 0, m/s
};
void check_friction_model(const FrictionModel& model, const char* what);
/// mu(s) at slip speed s >= 0.
double friction_coefficient(const FrictionModel& model, double slip_speed);
/// f_t for normal force fn >= 0 and tangential slip velocity vt (any 3-vector).
Vec3 friction_force(const FrictionModel& model, double fn, const Vec3& vt);

/// The half-space {y : normal . y <= offset} (normal: unit; normalised when added), with its
/// contact models.
struct HalfSpace {
  Vec3 normal = Vec3::UnitZ();
  double offset = 0.0;
  NormalForceModel normal_force;
  FrictionModel friction;
};

/// A sphere (radius > 0) or point (radius 0) rigidly attached to a body. `center` is in body
/// coordinates (see ContactScene::add_sphere for frames).
struct ContactShape {
  std::string name;  ///< the frame or body name it was given with
  int body = 0;
  Vec3 center = Vec3::Zero();
  double radius = 0.0;
};

/// The state of one (shape, half-space) pair at a state (q, v).
struct ContactPair {
  int shape = 0, half_space = 0;
  double penetration = 0.0;           ///< x (negative: the separation)
  double penetration_rate = 0.0;      ///< xdot (positive while penetrating)
  bool active = false;                ///< x > 0
  Vec3 point = Vec3::Zero();          ///< contact point (the sphere's deepest point), world
  double normal_force = 0.0;          ///< f_n >= 0
  Vec3 force = Vec3::Zero();          ///< total force on the body at `point`, world: f_n n + f_t
  Vec3 slip_velocity = Vec3::Zero();  ///< tangential velocity of the body point, world
};

/// The linearisation of a pair's force F = f_n n + f_t (for the linearly implicit integrator):
/// dF = force_velocity dv_p + force_position dp, with dv_p the change of the contact point's
/// velocity and dp its displacement (both world). Zero when f_n = 0 (clamped or separated).
struct ContactForceDerivatives {
  Mat3 force_velocity = Mat3::Zero();  ///< dF / dv_p (damping and friction)
  Mat3 force_position = Mat3::Zero();  ///< dF / dp (stiffness)
};
ContactForceDerivatives contact_force_derivatives(const HalfSpace& half_space, const ContactPair& pair);

/// The contact geometry of a model: shapes on bodies, half-spaces. Pairs are every shape
/// against every half-space, pair index = shape * num_half_spaces() + half_space.
class ContactScene {
 public:
  ContactScene() = default;
  /// A sphere on the body or frame `name` (bodies first), centre in that body's or frame's
  /// coordinates. Throws InvalidArgument for an unknown name, a negative or non-finite radius
  /// or a non-finite centre. Returns the shape index.
  int add_sphere(const Model& model, const std::string& name, const Vec3& center, double radius);
  /// A point: a sphere of radius 0.
  int add_point(const Model& model, const std::string& name, const Vec3& position) {
    return add_sphere(model, name, position, 0.0);
  }
  /// Throws InvalidArgument for a zero or non-finite normal, a non-finite offset or invalid
  /// force models. Returns the half-space index.
  int add_half_space(const HalfSpace& half_space);

  const std::vector<ContactShape>& shapes() const { return shapes_; }
  const std::vector<HalfSpace>& half_spaces() const { return half_spaces_; }
  int num_half_spaces() const { return static_cast<int>(half_spaces_.size()); }
  int num_pairs() const { return static_cast<int>(shapes_.size() * half_spaces_.size()); }
  /// The largest body index of a shape (for checking a scene against a model).
  int max_body() const { return max_body_; }

 private:
  std::vector<ContactShape> shapes_;
  std::vector<HalfSpace> half_spaces_;
  int max_body_ = 0;
};

/// The contact forces at (q, v), after forward kinematics of (q, v) (computed here). Pairs with a
/// Rigid half-space get their geometry but no force here (the Simulator solves for it). Returns one
/// Force per body in ReferenceFrame::World, ready for aba/rnea's f_ext; the pairs' states are in
/// contact_pairs(data). No heap allocation once warm (the scratch is Data's Contact slot).
/// Inputs are checked (sizes, finiteness, unit quaternions; a scene made for another model).
std::span<const Force> contact_forces(const Model& model, Data& data, const ContactScene& scene,
                                      const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v);
/// The pairs of the last contact_forces call on this Data (empty before).
std::span<const ContactPair> contact_pairs(const Data& data);
/// The elastic energy stored in the active contacts of the last contact_forces call.
double contact_elastic_energy(const ContactScene& scene, const Data& data);

}  // namespace plucker
