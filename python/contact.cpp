// Compliant contact and the Simulator (docs/contact.md). The Simulator keeps its own copy of the
// model (changing the Python Model afterwards does not change it); rollout runs in C++ without
// the GIL, and while it runs the simulator's mutators raise RuntimeError.
#include <cmath>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

using plucker::ContactLaw;
using plucker::NormalForceModel;
using plucker::Vec3;

class PySimulator {
 public:
  PySimulator(const plucker::Model& model, double dt, plucker::Integrator integrator) : sim(model, dt, integrator) {}
  plucker::Simulator sim;
  const char* running = nullptr;  ///< the call running without the GIL, if any
  plucker::Simulator& mutable_sim(const char* what) {
    if (running)
      raise(PyExc_RuntimeError, std::string(what) + ": the simulator is in use by " + running + " (GIL released)");
    return sim;
  }
};

/// Marks a PySimulator busy for the scope (made and destroyed with the GIL held).
class Busy {
 public:
  Busy(PySimulator& s, const char* call) : s_(s) {
    if (s_.running) raise(PyExc_RuntimeError, std::string(call) + ": the simulator is in use by " + s_.running);
    s_.running = call;
  }
  ~Busy() { s_.running = nullptr; }
  Busy(const Busy&) = delete;
  Busy& operator=(const Busy&) = delete;

 private:
  PySimulator& s_;
};

NormalForceModel normal_model(const std::string& contact, double stiffness, py::object damping, double exponent,
                              double restitution = 0.0) {
  NormalForceModel n;
  n.law = plucker::parse_contact_law(contact);
  n.restitution = restitution;
  n.stiffness = stiffness;
  n.exponent = exponent;
  if (damping.is_none())
    n.damping = n.law == ContactLaw::HuntCrossley ? 0.3 * stiffness : 0.0;
  else
    n.damping = real_arg(damping, "damping");
  return n;
}

void set_models(plucker::Obstacle& h, const std::string& contact, double stiffness, py::object damping, double exponent,
                double friction, py::object static_friction, double stribeck_velocity, double regularization,
                double restitution) {
  h.normal_force = normal_model(contact, stiffness, std::move(damping), exponent, restitution);
  h.friction.dynamic_coefficient = friction;
  h.friction.static_coefficient = static_friction.is_none() ? friction : real_arg(static_friction, "static_friction");
  h.friction.stribeck_velocity = stribeck_velocity;
  h.friction.regularization = regularization;
}

plucker::Mat3 rotation_or_identity(py::handle rotation) {
  if (rotation.is_none()) return plucker::Mat3::Identity();
  return fixed_matrix(rotation, "rotation", 3, 3);
}

// The contact-model arguments of the obstacles (a literal, concatenated into their docstrings).
#define PLUCKER_OBSTACLE_MODELS_DOC                                                                           \
  "contact, stiffness, damping, exponent, friction, static_friction, stribeck_velocity, regularization and\n" \
  "restitution are those of add_ground."

Vector vec_arg(const plucker::Model& model, py::handle obj, const char* name, bool tangent) {
  return Vector(obj, name, tangent ? Size{model.nv(), "nv"} : Size{model.nq(), "nq"});
}

py::dict pairs_dict(std::span<const plucker::ContactPair> pairs) {
  const auto P = static_cast<py::ssize_t>(pairs.size());
  py::array_t<double> pen(P), rate(P), fn(P), point({P, py::ssize_t{3}}), force({P, py::ssize_t{3}}),
      slip({P, py::ssize_t{3}});
  py::array_t<bool> active(P);
  py::array_t<int> shape(P), ground(P), slot(P);
  py::array_t<double> normal({P, py::ssize_t{3}});
  for (py::ssize_t p = 0; p < P; ++p) {
    const plucker::ContactPair& c = pairs[static_cast<std::size_t>(p)];
    pen.mutable_at(p) = c.penetration;
    rate.mutable_at(p) = c.penetration_rate;
    fn.mutable_at(p) = c.normal_force;
    active.mutable_at(p) = c.active;
    shape.mutable_at(p) = c.shape;
    ground.mutable_at(p) = c.half_space;
    slot.mutable_at(p) = c.slot;
    for (py::ssize_t k = 0; k < 3; ++k) {
      normal.mutable_at(p, k) = c.normal[k];
      point.mutable_at(p, k) = c.point[k];
      force.mutable_at(p, k) = c.force[k];
      slip.mutable_at(p, k) = c.slip_velocity[k];
    }
  }
  py::dict d;
  d["penetration"] = pen;
  d["penetration_rate"] = rate;
  d["active"] = active;
  d["normal_force"] = fn;
  d["force"] = force;
  d["point"] = point;
  d["slip_velocity"] = slip;
  d["shape"] = shape;
  d["ground"] = ground;
  d["slot"] = slot;
  d["normal"] = normal;
  return d;
}

const char* const simulator_doc =
    "Simulator(model, dt=1e-3, integrator='semi_implicit_euler', baumgarte=(10.0, 10.0),\n"
    "          constrained_method='range_space')\n\n"
    "A fixed-step simulator with compliant contact (documentation: Compliant contact and simulation).\n"
    "It keeps a copy of the model.\n"
    "integrator: 'semi_implicit_euler' (first order), 'rk4' (fourth order; RKMK on free-flyer and\n"
    "spherical joints) or 'implicit_euler' (linearly implicit in the contact forces, for stiff contact and\n"
    "friction; trees only). Contact forces enter as external forces (aba with\n"
    "f_ext in world coordinates); models with loop joints or mimics use constrained_forward_dynamics\n"
    "(baumgarte = (alpha, beta), constrained_method) with the contact forces as J^T f.";

}  // namespace

void bind_contact(py::module_& mod) {
  py::class_<PySimulator> cls(mod, "Simulator", simulator_doc);
  cls.def(py::init([](PyModel& m, double dt, const std::string& integrator, py::tuple baumgarte,
                      const std::string& constrained_method) {
            auto s = std::make_unique<PySimulator>(m.model(), dt, plucker::parse_integrator(integrator));
            if (baumgarte.size() != 2) value_error("baumgarte must be a pair (alpha, beta)");
            plucker::ConstrainedOptions& o = s->sim.constrained_options();
            o.baumgarte_alpha = real_arg(baumgarte[0], "baumgarte[0] (alpha)");
            o.baumgarte_beta = real_arg(baumgarte[1], "baumgarte[1] (beta)");
            o.method = plucker::parse_constrained_method(constrained_method);
            return s;
          }),
          py::arg("model"), py::arg("dt") = 1e-3, py::arg("integrator") = "semi_implicit_euler",
          py::arg("baumgarte") = py::make_tuple(10.0, 10.0), py::arg("constrained_method") = "range_space");
  cls.def(
      "add_ground",
      [](PySimulator& s, ArrayLike normal, double offset, const std::string& contact, double stiffness,
         py::object damping, double exponent, double friction, py::object static_friction, double stribeck_velocity,
         double regularization, double restitution) {
        plucker::HalfSpace h;
        h.normal = vec3_arg(normal, "normal");
        h.offset = offset;
        set_models(h, contact, stiffness, damping, exponent, friction, static_friction, stribeck_velocity,
                   regularization, restitution);
        return s.mutable_sim("add_ground").add_ground(h);
      },
      py::arg("normal") = py::make_tuple(0.0, 0.0, 1.0), py::arg("offset") = 0.0, py::arg("contact") = "hunt_crossley",
      py::arg("stiffness") = 1e5, py::arg("damping") = py::none(), py::arg("exponent") = 1.5, py::arg("friction") = 0.8,
      py::arg("static_friction") = py::none(), py::arg("stribeck_velocity") = 0.1, py::arg("regularization") = 0.01,
      py::arg("restitution") = 0.0,
      "Adds the half-space {y : normal . y <= offset} (normal normalised); returns its index.\n"
      "contact='rigid': a unilateral constraint solved by impulses each step (Moreau-Jean time-stepping;\n"
      "frictionless: exact LCP by Lemke's method; friction > 0: projected Gauss-Seidel over the Coulomb\n"
      "cones with mu = friction) with Newton's restitution law (restitution = e in [0, 1]); stiffness,\n"
      "damping, exponent and the regularisation are ignored, and the integrator must be\n"
      "'semi_implicit_euler'. Compliant laws:\n"
      "contact: 'hunt_crossley' f = k x^n + d x^n xdot, 'linear' f = k x + d xdot, 'azad_featherstone'\n"
      "f = k x^n + d x^(n-1) xdot (n = 1.5: Azad & Featherstone, \"A New Nonlinear Model of Contact\n"
      "Normal Force\", IEEE T-RO 2014), all clamped at f >= 0. damping=None: 0.3 k for hunt_crossley\n"
      "(alpha = 0.2 s/m of Marhefka & Orin, \"A Compliant Contact Model with Nonlinear Damping for\n"
      "Simulation of Robotic Systems\", IEEE T-SMC-A 1999), 0 otherwise. Friction: regularised\n"
      "Coulomb f_t = -mu(s) f_n v_t / sqrt(s^2 + regularization^2), s = |v_t|, mu(s) = friction +\n"
      "(static_friction - friction) exp(-(s / stribeck_velocity)^2).");
  cls.def(
      "add_sphere",
      [](PySimulator& s, const std::string& frame, ArrayLike center, double radius) {
        return s.mutable_sim("add_sphere").add_sphere(frame, vec3_arg(center, "center"), radius);
      },
      py::arg("frame"), py::arg("center") = py::make_tuple(0.0, 0.0, 0.0), py::arg("radius") = 0.02,
      "A contact sphere on a body or frame (name), centre in its coordinates; returns the shape index.");
  cls.def(
      "add_point",
      [](PySimulator& s, const std::string& frame, ArrayLike position) {
        return s.mutable_sim("add_point").add_point(frame, vec3_arg(position, "position"));
      },
      py::arg("frame"), py::arg("position") = py::make_tuple(0.0, 0.0, 0.0),
      "A contact point (a sphere of radius 0) on a body or frame; returns the shape index.");
  cls.def(
      "add_capsule",
      [](PySimulator& s, const std::string& frame, double radius, double length, ArrayLike center,
         py::object rotation) {
        return s.mutable_sim("add_capsule")
            .add_capsule(frame, vec3_arg(center, "center"), rotation_or_identity(rotation), radius, length);
      },
      py::arg("frame"), py::arg("radius"), py::arg("length"), py::arg("center") = py::make_tuple(0.0, 0.0, 0.0),
      py::arg("rotation") = py::none(),
      "A contact capsule on a body or frame: the segment of `length` (between the end spheres' centres)\n"
      "along the z axis of `rotation` (3 x 3, the capsule's axes in the frame's coordinates; None: identity),\n"
      "centred at `center`, swept by a sphere of `radius`. Returns the shape index.");
  cls.def(
      "add_box",
      [](PySimulator& s, const std::string& frame, ArrayLike half_extents, ArrayLike center, py::object rotation) {
        return s.mutable_sim("add_box").add_box(frame, vec3_arg(center, "center"), rotation_or_identity(rotation),
                                                vec3_arg(half_extents, "half_extents"));
      },
      py::arg("frame"), py::arg("half_extents"), py::arg("center") = py::make_tuple(0.0, 0.0, 0.0),
      py::arg("rotation") = py::none(),
      "A contact box on a body or frame: half extents (> 0) along the axes `rotation` (3 x 3, in the frame's\n"
      "coordinates; None: identity), centred at `center`. Against a half-space its 8 corners are contacts\n"
      "(a face resting on the ground carries its load on 4); against a fixed sphere its point closest to the\n"
      "sphere's centre; against a fixed box it is refused. Returns the shape index.");
  cls.def(
      "add_obstacle_sphere",
      [](PySimulator& s, ArrayLike center, double radius, const std::string& contact, double stiffness,
         py::object damping, double exponent, double friction, py::object static_friction, double stribeck_velocity,
         double regularization, double restitution) {
        plucker::Obstacle o;
        o.kind = plucker::ObstacleKind::Sphere;
        o.center = vec3_arg(center, "center");
        o.radius = radius;
        set_models(o, contact, stiffness, damping, exponent, friction, static_friction, stribeck_velocity,
                   regularization, restitution);
        return s.mutable_sim("add_obstacle_sphere").add_obstacle(o);
      },
      py::arg("center"), py::arg("radius"), py::arg("contact") = "hunt_crossley", py::arg("stiffness") = 1e5,
      py::arg("damping") = py::none(), py::arg("exponent") = 1.5, py::arg("friction") = 0.8,
      py::arg("static_friction") = py::none(), py::arg("stribeck_velocity") = 0.1, py::arg("regularization") = 0.01,
      py::arg("restitution") = 0.0,
      "A fixed sphere of the environment (world centre, radius > 0); returns its obstacle index\n"
      "(numbered with the grounds). " PLUCKER_OBSTACLE_MODELS_DOC);
  cls.def(
      "add_obstacle_box",
      [](PySimulator& s, ArrayLike center, ArrayLike half_extents, py::object rotation, const std::string& contact,
         double stiffness, py::object damping, double exponent, double friction, py::object static_friction,
         double stribeck_velocity, double regularization, double restitution) {
        plucker::Obstacle o;
        o.kind = plucker::ObstacleKind::Box;
        o.center = vec3_arg(center, "center");
        o.half_extents = vec3_arg(half_extents, "half_extents");
        o.rotation = rotation_or_identity(rotation);
        set_models(o, contact, stiffness, damping, exponent, friction, static_friction, stribeck_velocity,
                   regularization, restitution);
        return s.mutable_sim("add_obstacle_box").add_obstacle(o);
      },
      py::arg("center"), py::arg("half_extents"), py::arg("rotation") = py::none(),
      py::arg("contact") = "hunt_crossley", py::arg("stiffness") = 1e5, py::arg("damping") = py::none(),
      py::arg("exponent") = 1.5, py::arg("friction") = 0.8, py::arg("static_friction") = py::none(),
      py::arg("stribeck_velocity") = 0.1, py::arg("regularization") = 0.01, py::arg("restitution") = 0.0,
      "A fixed box of the environment (world centre, half extents > 0, rotation: its axes in world\n"
      "coordinates, None: identity); returns its obstacle index (numbered with the grounds).\n"
      "Body boxes against it are refused. " PLUCKER_OBSTACLE_MODELS_DOC);
  cls.def(
      "add_collision_geometry_from_urdf",
      [](PySimulator& s, PathLike path, int cylinder_points) {
        const py::object fspath = py::module_::import("os").attr("fspath")(path);
        if (!py::isinstance<py::str>(fspath))
          value_error("add_collision_geometry_from_urdf: path must be a str or os.PathLike of str");
        const std::string p = py::str(fspath);
        return s.mutable_sim("add_collision_geometry_from_urdf").add_collision_geometry_from_urdf(p, cylinder_points);
      },
      py::arg("path"), py::arg("cylinder_points") = 8,
      "Shapes for every <collision> sphere, box and cylinder of the URDF file (pose: the collision origin\n"
      "in the link frame; merged links' shapes go on their frames; meshes are skipped). A cylinder becomes\n"
      "two rims of cylinder_points points: exact for a cylinder standing on an end face or resting on a rim\n"
      "against a plane; rolling on its side it rises and falls by r (1 - cos(pi / cylinder_points)). The\n"
      "links must be bodies or frames of the simulator's model. Returns how many shapes were added.");
  cls.def(
      "add_collision_spheres_from_urdf",
      [](PySimulator& s, PathLike path) {
        const py::object fspath = py::module_::import("os").attr("fspath")(path);
        if (!py::isinstance<py::str>(fspath))
          value_error("add_collision_spheres_from_urdf: path must be a str or os.PathLike of str");
        const std::string p = py::str(fspath);
        return s.mutable_sim("add_collision_spheres_from_urdf").add_collision_spheres_from_urdf(p);
      },
      py::arg("path"),
      "A sphere for every <collision><geometry><sphere radius/> of the URDF file (centre: the\n"
      "collision origin's xyz in the link frame; merged links' spheres go on their frames). The links must\n"
      "be bodies or frames of the simulator's model. Returns how many were added.");
  cls.def(
      "step",
      [](PySimulator& s, ArrayLike q, ArrayLike v, py::object tau) {
        plucker::Simulator& sim = s.mutable_sim("step");
        const plucker::Model& model = sim.model();
        const Vector qa = vec_arg(model, q, "q", false), va = vec_arg(model, v, "v", true);
        VecX t = VecX::Zero(model.nv());
        if (!tau.is_none()) t = vec_arg(model, tau, "tau", true).map();
        VecX qn = qa.map(), vn = va.map();
        call({&qa, &va}, [&] { sim.step(qn, vn, t); });
        return py::make_tuple(vec_out(qn), vec_out(vn));
      },
      py::arg("q"), py::arg("v"), py::arg("tau") = py::none(), "One step: (q, v) -> (q_next, v_next); tau=None: zero.");
  cls.def(
      "rollout",
      [](PySimulator& s, ArrayLike q0, ArrayLike v0, ArrayLike TAU, bool diagnostics) -> py::tuple {
        plucker::Simulator& sim = s.mutable_sim("rollout");
        const plucker::Model& model = sim.model();
        const Vector qa = vec_arg(model, q0, "q0", false), va = vec_arg(model, v0, "v0", true);
        const Array U = batch_arg(TAU, "TAU", model.nv(), "nv = " + std::to_string(model.nv()));
        const py::ssize_t T = U.shape(0), P = sim.scene().num_pairs(), nq = model.nq(), nv = model.nv();
        py::array_t<double> Q({T + 1, nq}), V({T + 1, nv}), F({T, P, py::ssize_t{3}});
        py::array_t<double> pen({T + 1, P}), energy({T + 1, py::ssize_t{4}});
        Eigen::Map<MatX> Qm(Q.mutable_data(), nq, T + 1), Vm(V.mutable_data(), nv, T + 1),
            Fm(F.mutable_data(), 3 * P, T);
        Eigen::Map<MatX> Pm(pen.mutable_data(), P, T + 1), Em(energy.mutable_data(), 4, T + 1);
        const Eigen::Map<const MatX> Um(U.data(), nv, T);
        {
          const Busy busy(s, "rollout");
          py::gil_scoped_release release;
          if (diagnostics)
            sim.rollout(qa, va, Um, Qm, Vm, Fm, Pm, Em);
          else
            sim.rollout(qa, va, Um, Qm, Vm, Fm);
        }
        if (!diagnostics) return py::make_tuple(Q, V, F);
        py::dict d;
        py::slice all(0, T + 1, 1);
        d["penetration"] = pen;
        d["kinetic"] = py::array_t<double>(energy[py::make_tuple(all, 0)]);
        d["potential"] = py::array_t<double>(energy[py::make_tuple(all, 1)]);
        d["elastic"] = py::array_t<double>(energy[py::make_tuple(all, 2)]);
        d["energy"] = py::array_t<double>(energy[py::make_tuple(all, 3)]);
        py::object np = py::module_::import("numpy");
        d["active"] = np.attr("greater")(pen, 0.0);
        return py::make_tuple(Q, V, F, d);
      },
      py::arg("q0"), py::arg("v0"), py::arg("TAU"), py::arg("diagnostics") = false,
      "T steps from (q0, v0) under TAU (T, nv), in C++ without the GIL -> Q (T+1, nq), V (T+1, nv),\n"
      "F (T, P, 3): F[t, p] is the world force on the body of contact pair p (pairs: every contact slot of\n"
      "every shape against every ground or obstacle, shape-major; with spheres only p = shape * num_grounds +\n"
      "ground) at the start of step t. diagnostics=True adds a dict with, per state\n"
      "(T+1 rows): 'penetration' (T+1, P), 'active' (T+1, P), 'kinetic', 'potential', 'elastic' and\n"
      "'energy' (their sum).");
  cls.def(
      "contacts",
      [](PySimulator& s, ArrayLike q, ArrayLike v) {
        plucker::Simulator& sim = s.mutable_sim("contacts");
        const Vector qa = vec_arg(sim.model(), q, "q", false), va = vec_arg(sim.model(), v, "v", true);
        return call({&qa, &va}, [&] { return pairs_dict(sim.contacts(qa, va)); });
      },
      py::arg("q"), py::arg("v"),
      "The contact pairs at (q, v) as a dict of arrays over pairs: penetration, penetration_rate,\n"
      "active, normal_force, force (P, 3), point (P, 3), slip_velocity (P, 3), normal (P, 3: the unit\n"
      "direction of the normal force on the body), shape, ground (the ground or obstacle index), slot.");
  cls.def(
      "last_contacts", [](const PySimulator& s) { return pairs_dict(s.sim.last_contacts()); },
      "The pairs at the start of the last step (same dict as contacts()), with the forces that step\n"
      "applied (rigid contact: the impulse over dt).");
  cls.def(
      "energy",
      [](PySimulator& s, ArrayLike q, ArrayLike v) {
        plucker::Simulator& sim = s.mutable_sim("energy");
        const Vector qa = vec_arg(sim.model(), q, "q", false), va = vec_arg(sim.model(), v, "v", true);
        const plucker::Energy e = call({&qa, &va}, [&] { return sim.energy(qa, va); });
        py::dict d;
        d["kinetic"] = e.kinetic;
        d["potential"] = e.potential;
        d["elastic"] = e.elastic;
        d["total"] = e.total();
        return d;
      },
      py::arg("q"), py::arg("v"), "{'kinetic', 'potential', 'elastic', 'total'} at (q, v).");
  cls.def(
      "acceleration",
      [](PySimulator& s, ArrayLike q, ArrayLike v, py::object tau) {
        plucker::Simulator& sim = s.mutable_sim("acceleration");
        const Vector qa = vec_arg(sim.model(), q, "q", false), va = vec_arg(sim.model(), v, "v", true);
        VecX t = VecX::Zero(sim.model().nv());
        if (!tau.is_none()) t = vec_arg(sim.model(), tau, "tau", true).map();
        return call({&qa, &va}, [&] { return vec_out(sim.acceleration(qa, va, t)); });
      },
      py::arg("q"), py::arg("v"), py::arg("tau") = py::none(), "qdd at (q, v, tau) with the contact forces.");
  cls.def_property(
      "dt", [](const PySimulator& s) { return s.sim.dt(); },
      [](PySimulator& s, double dt) { s.mutable_sim("setting dt").set_dt(dt); });
  cls.def_property(
      "integrator", [](const PySimulator& s) { return std::string(plucker::to_string(s.sim.integrator())); },
      [](PySimulator& s, const std::string& name) {
        s.mutable_sim("setting integrator").set_integrator(plucker::parse_integrator(name));
      });
  cls.def(
      "set_joint_limits",
      [](PySimulator& s, bool enabled, double stiffness, double damping) {
        plucker::JointLimitOptions o;
        o.enabled = enabled;
        o.stiffness = stiffness;
        o.damping = damping;
        s.mutable_sim("set_joint_limits").set_joint_limits(o);
      },
      py::arg("enabled") = true, py::arg("stiffness") = 1e4, py::arg("damping") = 1e2,
      "Joint limits as penalties: a revolute or prismatic joint past its URDF position limit by\n"
      "delta gets the force max(0, k delta - d qdot) back towards the limit (never pulling);\n"
      "stiffness k (N m/rad or N/m), damping d. Stored energy 1/2 k delta^2 counts in energy()'s\n"
      "elastic term. Off by default; enabled=False turns it off.");
  cls.def_property_readonly(
      "joint_limits",
      [](const PySimulator& s) {
        const plucker::JointLimitOptions& o = s.sim.joint_limits();
        py::dict d;
        d["enabled"] = o.enabled;
        d["stiffness"] = o.stiffness;
        d["damping"] = o.damping;
        return d;
      },
      "The joint-limit penalty options: {'enabled', 'stiffness', 'damping'}.");
  cls.def(
      "set_rigid_options",
      [](PySimulator& s, py::object contact_tolerance, py::object restitution_velocity, py::object position_correction,
         py::object pgs_tolerance, py::object pgs_max_iterations, py::object max_pivots, py::object contact_margin) {
        plucker::RigidContactOptions& o = s.mutable_sim("set_rigid_options").rigid_options();
        plucker::RigidContactOptions n = o;
        if (!contact_tolerance.is_none()) n.contact_tolerance = real_arg(contact_tolerance, "contact_tolerance");
        if (!contact_margin.is_none()) n.contact_margin = real_arg(contact_margin, "contact_margin");
        if (!restitution_velocity.is_none())
          n.restitution_velocity = real_arg(restitution_velocity, "restitution_velocity");
        if (!position_correction.is_none()) n.position_correction = position_correction.cast<bool>();
        if (!pgs_tolerance.is_none()) n.pgs.tolerance = real_arg(pgs_tolerance, "pgs_tolerance");
        if (!pgs_max_iterations.is_none()) n.pgs.max_iterations = pgs_max_iterations.cast<int>();
        if (!max_pivots.is_none()) n.max_pivots = max_pivots.cast<int>();
        if (!(std::isfinite(n.contact_tolerance) && n.contact_tolerance >= 0.0))
          value_error("contact_tolerance must be finite and >= 0");
        if (!(std::isfinite(n.contact_margin) && n.contact_margin >= 0.0))
          value_error("contact_margin must be finite and >= 0");
        if (!(std::isfinite(n.restitution_velocity) && n.restitution_velocity >= 0.0))
          value_error("restitution_velocity must be finite and >= 0");
        if (!(std::isfinite(n.pgs.tolerance) && n.pgs.tolerance > 0.0)) value_error("pgs_tolerance must be > 0");
        if (n.pgs.max_iterations < 1) value_error("pgs_max_iterations must be >= 1");
        o = n;
      },
      py::arg("contact_tolerance") = py::none(), py::arg("restitution_velocity") = py::none(),
      py::arg("position_correction") = py::none(), py::arg("pgs_tolerance") = py::none(),
      py::arg("pgs_max_iterations") = py::none(), py::arg("max_pivots") = py::none(),
      py::arg("contact_margin") = py::none(),
      "Options of rigid contact (None keeps the current value): contact_tolerance (m, default 1e-6: a pair\n"
      "is active when its gap at the step's midpoint is <= it), restitution_velocity (m/s, default 1e-3: no\n"
      "restitution below max(it, 2 |g| dt)), position_correction (default True: the mass-metric projection\n"
      "of the step's predicted penetrations), pgs_tolerance (1e-12) and pgs_max_iterations (500) of the\n"
      "friction solve, max_pivots of Lemke's method (0: 10 (n + 1)), contact_margin (m, default 1e-3: pairs\n"
      "within it of touching join the problem with the condition v_n+ >= -gap / dt, so that neither the\n"
      "impulses nor the position correction push them into the ground; 0: off).");
  cls.def(
      "rigid_report",
      [](const PySimulator& s) {
        const plucker::RigidContactReport& r = s.sim.rigid_report();
        py::dict d;
        d["active"] = r.active;
        d["friction"] = r.friction;
        d["pivots"] = r.pivots;
        d["pgs_iterations"] = r.pgs.iterations;
        d["pgs_converged"] = r.pgs.converged;
        d["pgs_change"] = r.pgs.change;
        d["correction_pivots"] = r.correction_pivots;
        d["complementarity"] = r.complementarity;
        return d;
      },
      "What the last rigid-contact step did: active pairs, friction (PGS) or not (Lemke), pivots,\n"
      "pgs_iterations / pgs_converged / pgs_change, correction_pivots, complementarity (frictionless:\n"
      "the largest violation of the velocity LCP's conditions).");
  cls.def_property_readonly(
      "num_pairs", [](const PySimulator& s) { return s.sim.scene().num_pairs(); },
      "Contact pairs: every contact slot of every shape against every ground or obstacle (a sphere 1, a\n"
      "capsule 2 against a ground or fixed box and 1 against a fixed sphere, a box 8 against a ground and\n"
      "1 against a fixed sphere).");
  cls.def_property_readonly(
      "shapes",
      [](const PySimulator& s) {
        py::list out;
        for (const plucker::ContactShape& c : s.sim.scene().shapes())
          out.append(py::make_tuple(to_str(c.name), c.body, vec_out(c.center), c.radius,
                                    std::string(plucker::to_string(c.kind))));
        return out;
      },
      "(name, body, center in body coordinates, radius, kind) of each shape; kind 'sphere', 'capsule' or\n"
      "'box'.");

  mod.def(
      "rollout_batch",
      [](PySimulator& s, ArrayLike q0, ArrayLike v0, ArrayLike tau, int threads) {
        const plucker::Simulator& sim = s.mutable_sim("rollout_batch");
        const plucker::Model& model = sim.model();
        const py::ssize_t nq = model.nq(), nv = model.nv(), P = sim.scene().num_pairs();
        const Array Q0 = batch_arg(q0, "Q0", nq, "nq = " + std::to_string(nq));
        const py::ssize_t B = Q0.shape(0);
        const Array V0 = batch_arg(v0, "V0", nv, "nv = " + std::to_string(nv), B);
        if (tau.is_none()) value_error("TAU is None, expected an array of shape (B, T, nv)");
        const Array U = Array::ensure(tau);
        if (!U) {
          PyErr_Clear();
          value_error("TAU: not convertible to a float64 array of shape (B, T, nv)");
        }
        if (U.ndim() != 3 || U.shape(0) != B || U.shape(2) != nv)
          value_error("TAU must have shape (B = " + std::to_string(B) + ", T, nv = " + std::to_string(nv) + ")");
        threads_arg(threads);
        const py::ssize_t T = U.shape(1);
        py::array_t<double> Q({B, T + 1, nq}), V({B, T + 1, nv}), F({B, T, P, py::ssize_t{3}});
        Eigen::Map<MatX> Qm(Q.mutable_data(), nq, (T + 1) * B), Vm(V.mutable_data(), nv, (T + 1) * B),
            Fm(F.mutable_data(), 3 * P, T * B);
        const Eigen::Map<const MatX> Um(U.data(), nv, T * B);
        {
          const Busy busy(s, "rollout_batch");
          py::gil_scoped_release release;
          plucker::rollout_batch(sim, states_map(Q0), states_map(V0), Um, Qm, Vm, Fm, threads);
        }
        return py::make_tuple(Q, V, F);
      },
      py::arg("sim"), py::arg("Q0"), py::arg("V0"), py::arg("TAU"), py::arg("threads") = 0,
      "Rollouts of `sim` from B initial states at once, on `threads` threads (0: one per hardware\n"
      "thread) without the GIL, each thread on its own copy of the simulator: Q0 (B, nq), V0 (B, nv),\n"
      "TAU (B, T, nv) -> Q (B, T+1, nq), V (B, T+1, nv), F (B, T, P, 3), row b equal to\n"
      "sim.rollout(Q0[b], V0[b], TAU[b]) bit for bit. Errors name the state.");
  mod.def(
      "solve_lcp",
      [](ArrayLike M, ArrayLike q, int max_pivots) {
        const Array Ma = Array::ensure(M), qa = Array::ensure(q);
        if (!Ma || !qa) {
          PyErr_Clear();
          value_error("solve_lcp: M and q must be convertible to float64 arrays");
        }
        if (Ma.ndim() != 2 || qa.ndim() != 1 || Ma.shape(0) != qa.shape(0) || Ma.shape(1) != qa.shape(0))
          value_error("solve_lcp: M must have shape (n, n) and q shape (n,)");
        const py::ssize_t n = qa.shape(0);
        // numpy is row-major: M^T's map is M.
        const MatX Mm = Eigen::Map<const MatX>(Ma.data(), n, n).transpose();
        const VecX qv = Eigen::Map<const VecX>(qa.data(), n);
        VecX z;
        {
          py::gil_scoped_release release;
          z = plucker::solve_lcp(Mm, qv, max_pivots);
        }
        return vec_out(z);
      },
      py::arg("M"), py::arg("q"), py::arg("max_pivots") = 0,
      "z >= 0 with w = M z + q >= 0 and z . w = 0, by Lemke's method (lexicographic pivoting; exact for\n"
      "positive semidefinite M when a solution exists). Raises SingularError (ray termination: no solution)\n"
      "or ConvergenceError (max_pivots; 0 means 10 (n + 1)); ValueError for bad shapes or non-finite input.");
  mod.def(
      "normal_force",
      [](const std::string& contact, double x, double xdot, double stiffness, py::object damping, double exponent) {
        const NormalForceModel n = normal_model(contact, stiffness, damping, exponent);
        plucker::check_normal_force_model(n, "normal_force");
        return plucker::normal_force(n, x, xdot);
      },
      py::arg("contact"), py::arg("x"), py::arg("xdot"), py::arg("stiffness") = 1e5, py::arg("damping") = py::none(),
      py::arg("exponent") = 1.5, "The normal force (>= 0) of a contact model at penetration x and rate xdot.");
  mod.def(
      "coefficient_of_restitution",
      [](const std::string& contact, double impact_speed, double mass, double stiffness, py::object damping,
         double exponent) {
        return plucker::coefficient_of_restitution(normal_model(contact, stiffness, damping, exponent), mass,
                                                   impact_speed);
      },
      py::arg("contact"), py::arg("impact_speed"), py::arg("mass") = 1.0, py::arg("stiffness") = 1e5,
      py::arg("damping") = py::none(), py::arg("exponent") = 1.5,
      "e = -v_out / v_in of a mass hitting the contact at impact_speed without gravity: closed form for\n"
      "'linear' (underdamped) and 'hunt_crossley', quadrature otherwise (documentation: Compliant contact\n"
      "and simulation).");
  mod.def(
      "static_penetration",
      [](const std::string& contact, double load, double stiffness, double exponent) {
        return plucker::static_penetration(normal_model(contact, stiffness, py::float_(0.0), exponent), load);
      },
      py::arg("contact"), py::arg("load"), py::arg("stiffness") = 1e5, py::arg("exponent") = 1.5,
      "The penetration x at rest under a load: k x^n = load (k x for 'linear').");
}

}  // namespace plucker_py
