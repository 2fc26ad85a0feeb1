// Compliant contact: normal-force laws, regularised Coulomb friction, the narrow phase of spheres,
// capsules and boxes against half-spaces, fixed spheres and fixed boxes, and the contact forces as
// external forces (docs/contact.md).
#include "plucker/contact/contact.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "algorithms/workspace.hpp"
#include "base/text.hpp"
#include "plucker/algorithms/kinematics.hpp"

namespace plucker {
namespace {

struct ContactWorkspace : detail::WorkspaceOf<ContactWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Contact;
  explicit ContactWorkspace(const Model& model) : f_ext(static_cast<std::size_t>(model.nbodies())) {}
  std::vector<Force> f_ext;
  std::vector<ContactPair> pairs;
  std::size_t num_pairs = 0;  ///< pairs of the last call (pairs may be larger)
};

void require(bool ok, const char* what, const std::string& message) {
  if (!ok) throw InvalidArgument(std::string(what) + ": " + message);
}

std::string number(double x) { return text::number(x); }

/// RK4 of m xdd = -f(x, xdot) from x = 0, xdot = v_in until x returns to 0; the exit velocity.
double restitution_by_quadrature(const NormalForceModel& model, double mass, double v_in) {
  // Time scale: the undamped maximal penetration over the impact speed.
  double x_max = 0.0;
  {
    const double energy = 0.5 * mass * v_in * v_in;
    if (model.law == ContactLaw::Linear)
      x_max = std::sqrt(2.0 * energy / model.stiffness);
    else
      x_max = std::pow(energy * (model.exponent + 1.0) / model.stiffness, 1.0 / (model.exponent + 1.0));
  }
  const double h = (x_max / v_in) / 20000.0;
  auto acc = [&](double x, double xd) { return -normal_force(model, x, xd) / mass; };
  double x = 0.0, xd = v_in;
  for (long step = 0; step < 100'000'000; ++step) {
    const double k1x = xd, k1v = acc(x, xd);
    const double k2x = xd + 0.5 * h * k1v, k2v = acc(x + 0.5 * h * k1x, xd + 0.5 * h * k1v);
    const double k3x = xd + 0.5 * h * k2v, k3v = acc(x + 0.5 * h * k2x, xd + 0.5 * h * k2v);
    const double k4x = xd + h * k3v, k4v = acc(x + h * k3x, xd + h * k3v);
    const double xn = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
    const double vn = xd + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    if (xn <= 0.0 && step > 0) {
      // Crossing inside the step: interpolate the velocity linearly in x (the force vanishes at
      // x = 0, so the velocity is nearly constant there).
      const double s = x / (x - xn);
      return xd + s * (vn - xd);
    }
    x = xn;
    xd = vn;
  }
  throw ConvergenceError("coefficient_of_restitution: the contact did not end", 100'000'000, 0.0);
}

}  // namespace

// ------------------------------------------------------------------ normal force
std::string_view to_string(ContactLaw law) {
  switch (law) {
    case ContactLaw::Linear:
      return "linear";
    case ContactLaw::HuntCrossley:
      return "hunt_crossley";
    case ContactLaw::AzadFeatherstone:
      return "azad_featherstone";
    case ContactLaw::Rigid:
      return "rigid";
  }
  return "unknown";
}

ContactLaw parse_contact_law(std::string_view name) {
  if (name == "linear") return ContactLaw::Linear;
  if (name == "hunt_crossley") return ContactLaw::HuntCrossley;
  if (name == "azad_featherstone") return ContactLaw::AzadFeatherstone;
  if (name == "rigid") return ContactLaw::Rigid;
  throw InvalidArgument("unknown contact model '" + text::printable(name) +
                        "': expected 'linear', 'hunt_crossley', 'azad_featherstone' or 'rigid'");
}

void check_normal_force_model(const NormalForceModel& model, const char* what) {
  const NormalForceModel& m = model;
  require(std::isfinite(m.stiffness) && m.stiffness >= 0.0, what,
          "stiffness must be finite and >= 0, got " + number(m.stiffness));
  require(std::isfinite(m.damping) && m.damping >= 0.0, what,
          "damping must be finite and >= 0, got " + number(m.damping));
  require(std::isfinite(m.exponent) && m.exponent >= 1.0 && m.exponent <= 10.0, what,
          "exponent must be in [1, 10], got " + number(m.exponent));
  require(std::isfinite(m.restitution) && m.restitution >= 0.0 && m.restitution <= 1.0, what,
          "restitution must be in [0, 1], got " + number(m.restitution));
}

double normal_force(const NormalForceModel& model, double x, double xdot) {
  const NormalForceModel& m = model;
  // x = 0 counts as touching: only the linear law's damping term is nonzero there (its force
  // jumps to c xdot on impact), so an impact that starts at a step boundary is integrated
  // with the force's limit from inside.
  if (!(x >= 0.0) || m.law == ContactLaw::Rigid) return 0.0;
  double f = 0.0;
  switch (m.law) {
    case ContactLaw::Linear:
      f = m.stiffness * x + m.damping * xdot;
      break;
    case ContactLaw::HuntCrossley: {
      const double xn = std::pow(x, m.exponent);
      f = xn * (m.stiffness + m.damping * xdot);
      break;
    }
    case ContactLaw::AzadFeatherstone: {
      // x^(n-1) (k x + lambda xdot): for n = 3/2, k x^(3/2) + lambda sqrt(x) xdot.
      const double xn1 = std::pow(x, m.exponent - 1.0);
      f = xn1 * (m.stiffness * x + m.damping * xdot);
      break;
    }
    case ContactLaw::Rigid:
      break;
  }
  return f > 0.0 ? f : 0.0;  // no pulling
}

double elastic_energy(const NormalForceModel& model, double x) {
  const NormalForceModel& m = model;
  if (!(x > 0.0) || m.law == ContactLaw::Rigid) return 0.0;
  if (m.law == ContactLaw::Linear) return 0.5 * m.stiffness * x * x;
  return m.stiffness * std::pow(x, m.exponent + 1.0) / (m.exponent + 1.0);
}

double static_penetration(const NormalForceModel& model, double load) {
  const NormalForceModel& m = model;
  check_normal_force_model(m, "static_penetration");
  require(std::isfinite(load) && load >= 0.0, "static_penetration",
          "load must be finite and >= 0, got " + number(load));
  if (m.law == ContactLaw::Rigid) return 0.0;
  require(m.stiffness > 0.0, "static_penetration", "stiffness must be > 0");
  if (m.law == ContactLaw::Linear) return load / m.stiffness;
  return std::pow(load / m.stiffness, 1.0 / m.exponent);
}

double coefficient_of_restitution(const NormalForceModel& model, double mass, double impact_speed) {
  const NormalForceModel& m = model;
  const double v_in = impact_speed;
  check_normal_force_model(m, "coefficient_of_restitution");
  require(std::isfinite(mass) && mass > 0.0, "coefficient_of_restitution",
          "mass must be finite and > 0, got " + number(mass));
  require(std::isfinite(v_in) && v_in > 0.0, "coefficient_of_restitution",
          "impact_speed must be finite and > 0, got " + number(v_in));
  if (m.law == ContactLaw::Rigid) return m.restitution;
  require(m.stiffness > 0.0, "coefficient_of_restitution", "stiffness must be > 0");
  if (m.damping == 0.0) return 1.0;
  if (m.law == ContactLaw::Linear) {
    const double sigma = m.damping / (2.0 * mass), wn2 = m.stiffness / mass;
    if (sigma * sigma < wn2) {
      // x = v_in/wd e^(-sigma t) sin(wd t); the force k x + c xdot first vanishes at wd t = theta.
      const double wd = std::sqrt(wn2 - sigma * sigma);
      const double theta = M_PI - std::atan2(2.0 * sigma * wd, wn2 - 2.0 * sigma * sigma);
      return -std::exp(-sigma * theta / wd) * (std::cos(theta) - sigma / wd * std::sin(theta));
    }
    return -restitution_by_quadrature(m, mass, v_in) / v_in;
  }
  if (m.law == ContactLaw::HuntCrossley) {
    // Phase plane (Marhefka & Orin 1999): m xd dxd / (1 + alpha xd) = -k x^n dx integrates over
    // the cycle to  u_out - ln(1 + u_out) = u_in - ln(1 + u_in),  u = alpha xdot.
    const double alpha = m.damping / m.stiffness, u_in = alpha * v_in;
    const double R = u_in - std::log1p(u_in);
    auto g = [&](double u) { return (u - std::log1p(u)) - R; };  // decreasing on (-1, 0)
    double lo = -1.0, hi = 0.0;                                  // g(lo+) > 0, g(0) < 0
    for (int it = 0; it < 200 && hi - lo > 1e-17; ++it) {
      const double mid = 0.5 * (lo + hi);
      if (g(mid) > 0.0)
        lo = mid;
      else
        hi = mid;
    }
    const double u_out = 0.5 * (lo + hi);
    return -u_out / u_in;
  }
  return -restitution_by_quadrature(m, mass, v_in) / v_in;
}

// ------------------------------------------------------------------ friction
void check_friction_model(const FrictionModel& model, const char* what) {
  const FrictionModel& f = model;
  require(std::isfinite(f.dynamic_coefficient) && f.dynamic_coefficient >= 0.0, what,
          "friction coefficient must be finite and >= 0, got " + number(f.dynamic_coefficient));
  require(std::isfinite(f.static_coefficient) && f.static_coefficient >= 0.0, what,
          "static friction coefficient must be finite and >= 0, got " + number(f.static_coefficient));
  require(std::isfinite(f.stribeck_velocity) && f.stribeck_velocity > 0.0, what,
          "stribeck_velocity must be finite and > 0, got " + number(f.stribeck_velocity));
  require(std::isfinite(f.regularization) && f.regularization > 0.0, what,
          "regularization velocity must be finite and > 0, got " + number(f.regularization));
}

double friction_coefficient(const FrictionModel& model, double slip_speed) {
  const FrictionModel& f = model;
  const double s = slip_speed;
  const double r = s / f.stribeck_velocity;
  return f.dynamic_coefficient + (f.static_coefficient - f.dynamic_coefficient) * std::exp(-r * r);
}

Vec3 friction_force(const FrictionModel& model, double fn, const Vec3& vt) {
  const FrictionModel& f = model;
  const double s2 = vt.squaredNorm();
  const double s = std::sqrt(s2);
  return (-friction_coefficient(f, s) * fn / std::sqrt(s2 + f.regularization * f.regularization)) * vt;
}

// ------------------------------------------------------------------ derivatives
ContactForceDerivatives contact_force_derivatives(const HalfSpace& half_space, const ContactPair& pair) {
  ContactForceDerivatives d;
  const double fn = pair.normal_force;
  if (!(fn > 0.0)) return d;
  const NormalForceModel& m = half_space.normal_force;
  const double x = std::max(pair.penetration, 1e-12), xd = pair.penetration_rate;
  double fx = 0.0, fxd = 0.0;  // d f_n / dx, d f_n / dxdot
  switch (m.law) {
    case ContactLaw::Linear:
      fx = m.stiffness;
      fxd = m.damping;
      break;
    case ContactLaw::HuntCrossley: {
      const double xn = std::pow(x, m.exponent);
      fx = m.exponent * xn / x * (m.stiffness + m.damping * xd);
      fxd = m.damping * xn;
      break;
    }
    case ContactLaw::AzadFeatherstone: {
      const double xn1 = std::pow(x, m.exponent - 1.0);
      fx = m.stiffness * m.exponent * xn1 + m.damping * (m.exponent - 1.0) * xn1 / x * xd;
      fxd = m.damping * xn1;
      break;
    }
    case ContactLaw::Rigid:
      return d;
  }
  // f_t = -f_n g(s) u_t, g(s) = mu(s) / sqrt(s^2 + eps^2), u_t = P u, P = 1 - n n^T.
  const FrictionModel& f = half_space.friction;
  const Vec3& n = pair.normal;
  const Vec3& ut = pair.slip_velocity;
  const double s2 = ut.squaredNorm(), s = std::sqrt(s2), eps2 = f.regularization * f.regularization;
  const double root = std::sqrt(s2 + eps2), mu = friction_coefficient(f, s), g = mu / root;
  const double r = s / f.stribeck_velocity;
  // mu'(s) / s and g'(s) / s (finite at s = 0).
  const double dmu_over_s = (f.static_coefficient - f.dynamic_coefficient) * std::exp(-r * r) *
                            (-2.0 / (f.stribeck_velocity * f.stribeck_velocity));
  const double dg_over_s = dmu_over_s / root - mu / (root * root * root);
  const Mat3 P = Mat3::Identity() - n * n.transpose();
  const Mat3 H = g * P + dg_over_s * ut * ut.transpose();
  // d f_n = fx dx + fxd dxdot with dx = -n . dp, dxdot = -n . du; dF = (n - g u_t) d f_n + df_t.
  const Vec3 dir = n - g * ut;
  d.force_velocity = -fxd * dir * n.transpose() - fn * H;
  d.force_position = -fx * dir * n.transpose();
  return d;
}

// ------------------------------------------------------------------ geometry
std::string_view to_string(ObstacleKind kind) {
  switch (kind) {
    case ObstacleKind::HalfSpace:
      return "half-space";
    case ObstacleKind::Sphere:
      return "sphere";
    case ObstacleKind::Box:
      return "box";
  }
  return "unknown";
}

std::string_view to_string(ShapeKind kind) {
  switch (kind) {
    case ShapeKind::Sphere:
      return "sphere";
    case ShapeKind::Capsule:
      return "capsule";
    case ShapeKind::Box:
      return "box";
  }
  return "unknown";
}

namespace {
/// Signed distance of the point (box coordinates) pl to the box of half extents e, with the
/// outward normal in box coordinates.
double box_distance(const Vec3& e, const Vec3& pl, Vec3& n_local) {
  const Vec3 clamped = pl.cwiseMax(-e).cwiseMin(e);
  const Vec3 d = pl - clamped;
  const double dist = d.norm();
  if (dist > 0.0) {
    n_local = d / dist;
    return dist;
  }
  // Inside (or on the surface): the nearest face.
  Eigen::Index i = 0;
  (e - pl.cwiseAbs()).minCoeff(&i);
  n_local = Vec3::Zero();
  n_local[i] = pl[i] >= 0.0 ? 1.0 : -1.0;
  return -(e[i] - std::abs(pl[i]));
}

/// The parameter t in [lo, hi] minimising the convex f(t) + tie * |t - t_tie| (golden section).
template <class F>
double golden_minimum(F f, double lo, double hi, double t_tie, double tie) {
  auto g = [&](double t) { return f(t) + tie * std::abs(t - t_tie); };
  const double r = 0.5 * (std::sqrt(5.0) - 1.0);
  double a = lo, b = hi, c = b - r * (b - a), d = a + r * (b - a), gc = g(c), gd = g(d);
  for (int it = 0; it < 80 && b - a > 1e-13; ++it) {
    if (gc <= gd) {
      b = d;
      d = c;
      gd = gc;
      c = b - r * (b - a);
      gc = g(c);
    } else {
      a = c;
      c = d;
      gc = gd;
      d = a + r * (b - a);
      gd = g(d);
    }
  }
  // The ends are candidates too (the minimum of a convex function on a closed interval).
  double t = 0.5 * (a + b), best = g(t);
  for (const double end : {lo, hi})
    if (const double ge = g(end); ge <= best) {
      best = ge;
      t = end;
    }
  return t;
}

/// One contact slot in world coordinates: the body point p, the normal n (force direction on the
/// body) and the penetration x.
struct SlotGeometry {
  Vec3 p = Vec3::Zero(), n = Vec3::UnitZ();
  double x = 0.0;
};

/// A sphere (centre c, radius r) against an obstacle.
SlotGeometry sphere_slot(const Obstacle& o, const Vec3& c, double r) {
  SlotGeometry s;
  const double d = signed_distance(o, c, s.n);
  s.x = r - d;
  s.p = c - r * s.n;
  return s;
}

/// Slot `slot` of a shape (world pose: centre c, axes R) against an obstacle.
SlotGeometry shape_slot(const ContactShape& shape, const Vec3& c, const Mat3& R, const Obstacle& o, int slot) {
  switch (shape.kind) {
    case ShapeKind::Sphere:
      return sphere_slot(o, c, shape.radius);
    case ShapeKind::Capsule: {
      const Vec3 a = c - shape.half_length * R.col(2), b = c + shape.half_length * R.col(2);
      if (o.kind == ObstacleKind::HalfSpace) return sphere_slot(o, slot == 0 ? a : b, shape.radius);
      const Vec3 ab = b - a;
      if (o.kind == ObstacleKind::Sphere) {
        const double L2 = ab.squaredNorm();
        const double t = L2 > 0.0 ? std::clamp((o.center - a).dot(ab) / L2, 0.0, 1.0) : 0.0;
        return sphere_slot(o, a + t * ab, shape.radius);
      }
      // Box: the deepest point of each half, ties towards the outer end (a flat capsule rests on its ends).
      Vec3 n;
      auto dist = [&](double t) { return signed_distance(o, a + t * ab, n); };
      const double tie = 1e-9;
      const double t = slot == 0 ? golden_minimum(dist, 0.0, 0.5, 0.0, tie) : golden_minimum(dist, 0.5, 1.0, 1.0, tie);
      return sphere_slot(o, a + t * ab, shape.radius);
    }
    case ShapeKind::Box: {
      const Vec3& e = shape.half_extents;
      if (o.kind == ObstacleKind::HalfSpace) {
        const Vec3 s((slot & 1) ? 1.0 : -1.0, (slot & 2) ? 1.0 : -1.0, (slot & 4) ? 1.0 : -1.0);
        return sphere_slot(o, c + R * s.cwiseProduct(e), 0.0);
      }
      // Fixed sphere (centre C, radius rho): the box point closest to C; the force pushes the box
      // away from the sphere (minus the box's outward normal there).
      SlotGeometry g;
      Vec3 n_local;
      const Vec3 pl = R.transpose() * (o.center - c);
      const double d = box_distance(e, pl, n_local);
      const Vec3 nb = R * n_local;
      g.n = -nb;
      g.x = o.radius - d;
      g.p = o.center - d * nb;
      return g;
    }
  }
  return {};
}

void check_rotation(const Mat3& R, const char* fn, const std::string& name) {
  require(R.allFinite() && (R.transpose() * R - Mat3::Identity()).cwiseAbs().maxCoeff() < 1e-9 && R.determinant() > 0.0,
          fn, "rotation must be a rotation matrix (orthonormal, det +1) (frame '" + text::printable(name) + "')");
}
}  // namespace

double signed_distance(const Obstacle& o, const Vec3& y, Vec3& n) {
  switch (o.kind) {
    case ObstacleKind::HalfSpace:
      n = o.normal;
      return o.normal.dot(y) - o.offset;
    case ObstacleKind::Sphere: {
      const Vec3 d = y - o.center;
      const double dist = d.norm();
      n = dist > 0.0 ? Vec3(d / dist) : Vec3::UnitZ();
      return dist - o.radius;
    }
    case ObstacleKind::Box: {
      Vec3 n_local;
      const double d = box_distance(o.half_extents, o.rotation.transpose() * (y - o.center), n_local);
      n = o.rotation * n_local;
      return d;
    }
  }
  n = Vec3::UnitZ();
  return 0.0;
}

int contact_slots(ShapeKind shape, ObstacleKind obstacle) {
  switch (shape) {
    case ShapeKind::Sphere:
      return 1;
    case ShapeKind::Capsule:
      return obstacle == ObstacleKind::Sphere ? 1 : 2;
    case ShapeKind::Box:
      if (obstacle == ObstacleKind::Box)
        throw InvalidArgument(
            "contact between a body box and a fixed box is not supported (narrow phase: spheres, capsules and "
            "boxes against half-spaces, fixed spheres and fixed boxes, except box against box); model the body "
            "box by spheres or points, or the fixed box by half-spaces");
      return obstacle == ObstacleKind::HalfSpace ? 8 : 1;
  }
  return 1;
}

// ------------------------------------------------------------------ scene
int ContactScene::add_shape(const Model& model, const std::string& name, ContactShape shape, const char* fn) {
  const std::string where = " (frame '" + text::printable(name) + "')";
  require(std::isfinite(shape.radius) && shape.radius >= 0.0, fn,
          "radius must be finite and >= 0, got " + number(shape.radius) + where);
  require(shape.center.allFinite(), fn, "the centre is not finite" + where);
  if (shape.kind == ShapeKind::Box) {
    require(shape.half_extents.allFinite() && shape.half_extents.minCoeff() > 0.0, fn,
            "half_extents must be finite and > 0, got (" + number(shape.half_extents[0]) + ", " +
                number(shape.half_extents[1]) + ", " + number(shape.half_extents[2]) + ")" + where);
    for (const Obstacle& o : half_spaces_) contact_slots(shape.kind, o.kind);  // refuses box / box
  }
  if (shape.kind == ShapeKind::Capsule)
    require(std::isfinite(shape.half_length) && shape.half_length >= 0.0, fn,
            "length must be finite and >= 0, got " + number(2.0 * shape.half_length) + where);
  if (shape.kind != ShapeKind::Sphere) check_rotation(shape.rotation, fn, name);
  shape.name = name;
  if (model.has_body(name)) {
    shape.body = model.body_index(name);
  } else if (model.has_frame(name)) {
    const Frame& frame = model.frames()[static_cast<std::size_t>(model.frame_index(name))];
    shape.body = frame.body;
    // frame_X_body: E rotates body coordinates into frame coordinates, r = frame origin in body.
    shape.center = frame.X_body.r + frame.X_body.E.transpose() * shape.center;
    shape.rotation = frame.X_body.E.transpose() * shape.rotation;
  } else {
    throw InvalidArgument(std::string(fn) + ": no body or frame named '" + text::printable(name) + "' in model '" +
                          text::printable(model.name()) + "'");
  }
  max_body_ = std::max(max_body_, shape.body);
  shapes_.push_back(std::move(shape));
  rebuild_layout();
  return static_cast<int>(shapes_.size()) - 1;
}

int ContactScene::add_sphere(const Model& model, const std::string& name, const Vec3& center, double radius) {
  ContactShape shape;
  shape.center = center;
  shape.radius = radius;
  return add_shape(model, name, std::move(shape), "add_sphere");
}

int ContactScene::add_capsule(const Model& model, const std::string& name, const Vec3& center, const Mat3& rotation,
                              double radius, double length) {
  ContactShape shape;
  shape.kind = ShapeKind::Capsule;
  shape.center = center;
  shape.rotation = rotation;
  shape.radius = radius;
  shape.half_length = 0.5 * length;
  return add_shape(model, name, std::move(shape), "add_capsule");
}

int ContactScene::add_box(const Model& model, const std::string& name, const Vec3& center, const Mat3& rotation,
                          const Vec3& half_extents) {
  ContactShape shape;
  shape.kind = ShapeKind::Box;
  shape.center = center;
  shape.rotation = rotation;
  shape.half_extents = half_extents;
  return add_shape(model, name, std::move(shape), "add_box");
}

int ContactScene::add_obstacle(const Obstacle& h) {
  const char* fn = h.kind == ObstacleKind::HalfSpace ? "add_ground"
                   : h.kind == ObstacleKind::Sphere  ? "add_obstacle_sphere"
                                                     : "add_obstacle_box";
  Obstacle g = h;
  switch (h.kind) {
    case ObstacleKind::HalfSpace:
      require(h.normal.allFinite() && h.normal.norm() > 1e-12, fn, "the normal must be finite and nonzero");
      require(std::isfinite(h.offset), fn, "the offset must be finite, got " + number(h.offset));
      g.normal.normalize();
      break;
    case ObstacleKind::Sphere:
      require(h.center.allFinite(), fn, "the centre is not finite");
      require(std::isfinite(h.radius) && h.radius > 0.0, fn, "radius must be finite and > 0, got " + number(h.radius));
      break;
    case ObstacleKind::Box:
      require(h.center.allFinite(), fn, "the centre is not finite");
      require(h.half_extents.allFinite() && h.half_extents.minCoeff() > 0.0, fn,
              "half_extents must be finite and > 0, got (" + number(h.half_extents[0]) + ", " +
                  number(h.half_extents[1]) + ", " + number(h.half_extents[2]) + ")");
      check_rotation(h.rotation, fn, "world");
      for (const ContactShape& s : shapes_) contact_slots(s.kind, h.kind);  // refuses box / box
      break;
  }
  check_normal_force_model(h.normal_force, fn);
  check_friction_model(h.friction, fn);
  half_spaces_.push_back(g);
  rebuild_layout();
  return static_cast<int>(half_spaces_.size()) - 1;
}

void ContactScene::rebuild_layout() {
  layout_.clear();
  for (std::size_t s = 0; s < shapes_.size(); ++s)
    for (std::size_t o = 0; o < half_spaces_.size(); ++o) {
      const int n = contact_slots(shapes_[s].kind, half_spaces_[o].kind);
      for (int k = 0; k < n; ++k) layout_.push_back({static_cast<int>(s), static_cast<int>(o), k});
    }
}

// ------------------------------------------------------------------ forces
std::span<const Force> contact_forces(const Model& model, Data& data, const ContactScene& scene,
                                      const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v) {
  const detail::DataUse use(model, data, "contact_forces");
  if (scene.max_body() >= model.nbodies())
    throw InvalidArgument("contact_forces: the contact scene names body " + std::to_string(scene.max_body()) +
                          ", the model has " + std::to_string(model.nbodies()));
  forward_kinematics(model, data, q, v);  // checks q and v
  auto& ws = detail::workspace<ContactWorkspace>(model, data);
  for (Force& f : ws.f_ext) f.setZero();
  const std::size_t np = static_cast<std::size_t>(scene.num_pairs());
  if (ws.pairs.size() < np) ws.pairs.resize(np);
  ws.num_pairs = np;
  const auto& shapes = scene.shapes();
  const auto& layout = scene.pair_layout();
  for (std::size_t i = 0; i < np; ++i) {
    const ContactScene::PairIndex& ix = layout[i];
    const ContactShape& shape = shapes[static_cast<std::size_t>(ix.shape)];
    const Obstacle& ground = scene.obstacles()[static_cast<std::size_t>(ix.obstacle)];
    const Transform& X = data.X_base[static_cast<std::size_t>(shape.body)];  // world -> body
    const Motion& vb = data.v[static_cast<std::size_t>(shape.body)];         // body coordinates
    const Vec3 c_world = X.r + X.E.transpose() * shape.center;
    const Mat3 R_world = X.E.transpose() * shape.rotation;
    const SlotGeometry g = shape_slot(shape, c_world, R_world, ground, ix.slot);
    ContactPair& pair = ws.pairs[i];
    pair.shape = ix.shape;
    pair.half_space = ix.obstacle;
    pair.slot = ix.slot;
    const Vec3& n = g.n;
    pair.normal = n;
    pair.penetration = g.x;
    pair.point = g.p;
    // Velocity of the body-fixed point at the contact point.
    const Vec3 p_body = X.E * (g.p - X.r);
    const Vec3 v_world = X.E.transpose() * (vb.linear + vb.angular.cross(p_body));
    pair.penetration_rate = -n.dot(v_world);
    pair.slip_velocity = v_world + pair.penetration_rate * n;
    pair.active = pair.penetration > 0.0;
    if (!(pair.penetration >= 0.0)) {
      pair.normal_force = 0.0;
      pair.force.setZero();
      continue;
    }
    pair.normal_force = normal_force(ground.normal_force, pair.penetration, pair.penetration_rate);
    pair.force = pair.normal_force * n + friction_force(ground.friction, pair.normal_force, pair.slip_velocity);
    // [moment about the world origin; force], world coordinates.
    Force& f = ws.f_ext[static_cast<std::size_t>(shape.body)];
    f.angular += pair.point.cross(pair.force);
    f.linear += pair.force;
  }
  return {ws.f_ext.data(), ws.f_ext.size()};
}

std::span<const ContactPair> contact_pairs(const Data& data) {
  const auto* ws = detail::find_workspace<ContactWorkspace>(data);
  if (!ws) return {};
  return {ws->pairs.data(), ws->num_pairs};
}

double contact_elastic_energy(const ContactScene& scene, const Data& data) {
  double e = 0.0;
  const int nh = scene.num_half_spaces();
  for (const ContactPair& p : contact_pairs(data))
    if (p.active && p.half_space < nh)
      e += elastic_energy(scene.half_spaces()[static_cast<std::size_t>(p.half_space)].normal_force, p.penetration);
  return e;
}

}  // namespace plucker
