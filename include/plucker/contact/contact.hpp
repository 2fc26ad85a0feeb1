// Compliant contact (documentation: Compliant contact and simulation): contact geometry on bodies and frames
// (points, spheres, capsules, boxes), environment obstacles (half-spaces with any unit normal, fixed spheres,
// fixed boxes), normal-force models, and a regularised Coulomb friction law. Contact forces enter the dynamics as
// external forces on the bodies (ReferenceFrame::World: [moment about the world origin; force] in world coordinates).
//
// Narrow phase for these primitives only (no meshes, no convex hulls). Every contact is a point pair:
// a point p of the body (the deepest point of the body shape into the obstacle), a unit normal n (the
// direction of the force on the body) and the penetration x (> 0: overlapping). A shape/obstacle
// combination gives a fixed number of such contacts ("slots"), so the number of pairs is constant:
//   sphere  (centre c, radius r) vs any obstacle: 1 slot, x = r - d(c), with d the signed distance of
//           c to the obstacle (exact); a point is a sphere of radius 0;
//   capsule (segment a-b, radius r) vs half-space: 2 slots, the spheres at a and b (exact: a capsule's
//           deepest point into a plane is at an end, or both ends when parallel);
//           vs fixed sphere: 1 slot, the sphere at the segment point closest to the centre (exact);
//           vs fixed box: 2 slots, the deepest point of each half of the segment (golden-section
//           search of the convex signed distance, ties broken towards the outer ends);
//   box     vs half-space: 8 slots, its corners (exact for the deepest point; a face resting on the
//           plane carries its load on its 4 corners, an edge on 2);
//           vs fixed sphere: 1 slot, the box point closest to the sphere's centre (exact);
//           vs fixed box: not supported (InvalidArgument when the scene would need it).
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

/// Kinds of environment obstacle (fixed in the world).
enum class ObstacleKind : int {
  HalfSpace,  ///< {y : normal . y <= offset}
  Sphere,     ///< centre, radius > 0
  Box,        ///< centre, rotation (its axes in world coordinates), half_extents > 0
};
std::string_view to_string(ObstacleKind kind);

/// An environment obstacle with its contact models: the half-space {y : normal . y <= offset}
/// (normal: unit; normalised when added), or a fixed sphere or box (world coordinates).
struct Obstacle {
  ObstacleKind kind = ObstacleKind::HalfSpace;
  Vec3 normal = Vec3::UnitZ();       ///< half-space
  double offset = 0.0;               ///< half-space
  Vec3 center = Vec3::Zero();        ///< sphere, box
  Mat3 rotation = Mat3::Identity();  ///< box: its axes in world coordinates
  double radius = 0.0;               ///< sphere
  Vec3 half_extents = Vec3::Zero();  ///< box
  NormalForceModel normal_force;
  FrictionModel friction;
};
/// The historical name: a default Obstacle is the ground half-space z <= 0.
using HalfSpace = Obstacle;

/// The signed distance of the point y to the obstacle (negative inside) and the obstacle's outward
/// unit normal n at the closest surface point (the direction in which a body touching there is
/// pushed). Inside a box, the nearest face; at a sphere's centre, n = +z.
double signed_distance(const Obstacle& obstacle, const Vec3& y, Vec3& n);

/// Kinds of contact shape on a body.
enum class ShapeKind : int {
  Sphere,   ///< centre, radius >= 0 (0: a point)
  Capsule,  ///< the segment centre -+ half_length * (rotation's z axis), swept by radius >= 0
  Box,      ///< centre, rotation (its axes), half_extents > 0
};
std::string_view to_string(ShapeKind kind);

/// A contact shape rigidly attached to a body, in body coordinates (see ContactScene::add_sphere
/// for frames).
struct ContactShape {
  std::string name;  ///< the frame or body name it was given with
  int body = 0;
  ShapeKind kind = ShapeKind::Sphere;
  Vec3 center = Vec3::Zero();
  Mat3 rotation = Mat3::Identity();  ///< capsule, box: the shape's axes in body coordinates
  double radius = 0.0;               ///< sphere, capsule
  double half_length = 0.0;          ///< capsule: half the segment's length
  Vec3 half_extents = Vec3::Zero();  ///< box
};

/// The state of one contact (shape, obstacle, slot: see the narrow phase above) at a state (q, v).
struct ContactPair {
  int shape = 0;
  int half_space = 0;                 ///< the obstacle's index (historical name)
  int slot = 0;                       ///< which contact of the (shape, obstacle) combination
  Vec3 normal = Vec3::UnitZ();        ///< unit, world: the direction of the normal force on the body
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

/// The number of contacts (slots) of a shape kind against an obstacle kind (see the narrow phase
/// above); throws InvalidArgument for box against fixed box.
int contact_slots(ShapeKind shape, ObstacleKind obstacle);

/// The contact geometry of a model: shapes on bodies, obstacles. Pairs are every slot of every
/// shape against every obstacle, ordered shape-major: shape, then obstacle, then slot (with
/// spheres only, pair index = shape * num_half_spaces() + obstacle).
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
  /// A capsule: the segment of length `length` >= 0 along the z axis of `rotation` (the capsule's
  /// axes in the body's or frame's coordinates; a rotation matrix to 1e-9), centred at `center`,
  /// swept by a sphere of radius >= 0. InvalidArgument as add_sphere, and for a non-rotation.
  int add_capsule(const Model& model, const std::string& name, const Vec3& center, const Mat3& rotation, double radius,
                  double length);
  /// A box of half extents > 0 along the axes `rotation` (in the body's or frame's coordinates),
  /// centred at `center`. InvalidArgument as add_capsule, and when a fixed box is in the scene.
  int add_box(const Model& model, const std::string& name, const Vec3& center, const Mat3& rotation,
              const Vec3& half_extents);
  /// Any obstacle. Throws InvalidArgument for a zero or non-finite normal, a non-finite offset,
  /// centre or rotation, a radius or half extent that is not > 0, invalid force models, or a fixed
  /// box when a body box is in the scene. Returns the obstacle index.
  int add_obstacle(const Obstacle& obstacle);
  int add_half_space(const HalfSpace& half_space) { return add_obstacle(half_space); }

  const std::vector<ContactShape>& shapes() const { return shapes_; }
  const std::vector<Obstacle>& obstacles() const { return half_spaces_; }
  const std::vector<Obstacle>& half_spaces() const { return half_spaces_; }
  int num_half_spaces() const { return static_cast<int>(half_spaces_.size()); }
  /// (shape, obstacle, slot) of each pair.
  struct PairIndex {
    int shape = 0, obstacle = 0, slot = 0;
  };
  const std::vector<PairIndex>& pair_layout() const { return layout_; }
  int num_pairs() const { return static_cast<int>(layout_.size()); }
  /// The largest body index of a shape (for checking a scene against a model).
  int max_body() const { return max_body_; }

 private:
  int add_shape(const Model& model, const std::string& name, ContactShape shape, const char* fn);
  void rebuild_layout();
  std::vector<ContactShape> shapes_;
  std::vector<Obstacle> half_spaces_;
  std::vector<PairIndex> layout_;
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
