// Kinematics (poses, Jacobians, centre of mass) and the configuration space (neutral, random,
// integrate, difference, normalize).
#include <cmath>
#include <random>
#include <string>
#include <string_view>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

/// A body or a frame by name: its body and frame_X_body (identity for a body).
struct Target {
  int body;
  plucker::Transform X_body;
};
Target target_arg(const PyModel& m, const std::string& name, const char* fn) {
  const auto [body, f] = body_or_frame(m, name, fn);
  return {body, f >= 0 ? m.model().frames()[static_cast<std::size_t>(f)].X_body : plucker::Transform()};
}

py::array_t<double> body_jacobian_py(PyModel& m, ArrayLike q, const std::string& name, const std::string& frame) {
  const Vector qa = q_arg(m, q);
  const ReferenceFrame rf = frame_arg(frame);
  const Target t = target_arg(m, name, "body_jacobian");
  return call({&qa}, [&] { return mat_out(plucker::body_jacobian(m.model(), m.data(), qa, t.body, rf, t.X_body)); });
}

py::array_t<double> jdot_v_py(PyModel& m, ArrayLike q, ArrayLike v, const std::string& name, const std::string& frame) {
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
  const ReferenceFrame rf = frame_arg(frame);
  const Target t = target_arg(m, name, "jacobian_dot_times_v");
  return call({&qa, &va}, [&] {
    return vec_out(plucker::jacobian_dot_times_v(m.model(), m.data(), qa, va, t.body, rf, t.X_body).vector());
  });
}

py::array_t<double> jdot_py(PyModel& m, ArrayLike q, ArrayLike v, const std::string& name, const std::string& frame) {
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
  const ReferenceFrame rf = frame_arg(frame);
  const Target t = target_arg(m, name, "jacobian_time_variation");
  return call({&qa, &va}, [&] {
    return mat_out(plucker::jacobian_time_variation(m.model(), m.data(), qa, va, t.body, rf, t.X_body));
  });
}

py::array_t<double> frame_velocity_py(PyModel& m, ArrayLike q, ArrayLike v, const std::string& name,
                                      const std::string& frame) {
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
  const ReferenceFrame rf = frame_arg(frame);
  const Target t = target_arg(m, name, "frame_velocity");
  return call({&qa, &va}, [&] {
    return vec_out(plucker::frame_velocity(m.model(), m.data(), qa, va, t.body, rf, t.X_body).vector());
  });
}

py::array_t<double> frame_acceleration_py(PyModel& m, ArrayLike q, ArrayLike v, ArrayLike a, const std::string& name,
                                          const std::string& frame, bool classical) {
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v"), aa = v_arg(m, a, "a");
  const ReferenceFrame rf = frame_arg(frame);
  const Target t = target_arg(m, name, "frame_acceleration");
  if (classical && rf == ReferenceFrame::World)
    value_error(
        "frame_acceleration: classical=True needs frame='local' or 'local_world_aligned' (the world origin "
        "is no point of the body)");
  return call({&qa, &va, &aa}, [&] {
    const plucker::Motion acc = plucker::frame_acceleration(m.model(), m.data(), qa, va, aa, t.body, rf, t.X_body);
    if (!classical) return vec_out(acc.vector());
    const plucker::Vec3 lin =
        plucker::frame_classical_acceleration(m.model(), m.data(), qa, va, aa, t.body, rf, t.X_body);
    plucker::Vec6 out;
    out << acc.angular, lin;
    return vec_out(out);
  });
}

PyObject* g_centroidal_type = nullptr;  // namedtuple CentroidalMomentum

py::object centroidal_py(PyModel& m, ArrayLike q, OptArrayLike v) {
  const Vector qa = q_arg(m, q);
  if (v.is_none()) {
    return call({&qa}, [&] {
      const plucker::CentroidalMomentum& c = plucker::centroidal_momentum_matrix(m.model(), m.data(), qa);
      return py::reinterpret_borrow<py::object>(g_centroidal_type)(mat_out(c.A), py::none(), py::none(), py::none(),
                                                                   vec_out(c.com), py::none(), c.mass);
    });
  }
  const Vector va = v_arg(m, v, "v");
  return call({&qa, &va}, [&] {
    const plucker::CentroidalMomentum& c = plucker::centroidal_momentum_time_variation(m.model(), m.data(), qa, va);
    return py::reinterpret_borrow<py::object>(g_centroidal_type)(mat_out(c.A), mat_out(c.dA), vec_out(c.h.vector()),
                                                                 vec_out(c.dA_v.vector()), vec_out(c.com),
                                                                 vec_out(c.com_velocity), c.mass);
  });
}

py::dict forward_kinematics_py(PyModel& m, ArrayLike q) {
  const Vector qa = q_arg(m, q);
  plucker::Data& data = m.data();
  call({&qa}, [&] { plucker::forward_kinematics(m.model(), data, qa); });
  py::dict out;
  for (int i = 0; i < m.model().nbodies(); ++i)
    out[to_str(m.model().body_name(i))] = mat_out(plucker::body_pose(data, i));
  return out;
}

py::array_t<double> frame_pose_py(PyModel& m, ArrayLike q, const std::string& name) {
  const Vector qa = q_arg(m, q);
  const auto [body, f] = body_or_frame(m, name, "frame_pose");
  plucker::Data& data = m.data();
  call({&qa}, [&] { plucker::forward_kinematics(m.model(), data, qa); });
  if (f >= 0) return mat_out(plucker::frame_pose(m.model(), data, f));
  return mat_out(plucker::body_pose(data, body));
}

py::array_t<double> normalize_py(const PyModel& m, ArrayLike q) {
  const Model& model = m.model();
  const Vector qa = q_arg(m, q);
  VecX out = qa.map();
  call({&qa}, [&] { plucker::normalize(model, out); });
  require_finite(m, qa, false);  // plucker::normalize checks the size only
  // A zero quaternion is left as is (Eigen) and a zero planar (cos, sin) pair becomes NaN:
  // refuse both, naming the joint.
  for (int i = 1; i < model.nbodies(); ++i) {
    const std::string_view kind = plucker::joint_kind(model.joint(i));
    const int off = kind == "free_flyer" ? 3 : kind == "spherical" ? 0 : kind == "planar" ? 2 : -1;
    if (off < 0) continue;
    const double n = out.segment(model.idx_q(i) + off, kind == "planar" ? 2 : 4).norm();
    if (!(std::abs(n - 1.0) < 1e-9))
      value_error("normalize: cannot normalize q at joint '" + model.joint_name(i) + "' (zero " +
                  (kind == "planar" ? "(cos, sin) pair" : "quaternion") + ")");
  }
  return vec_out(out);
}

}  // namespace

void bind_kinematics(py::module_& mod) {
  mod.def("forward_kinematics", &forward_kinematics_py, py::arg("model"), py::arg("q"),
          "Dict body_name -> 4x4 homogeneous pose of the body in the world.");
  mod.def("frame_pose", &frame_pose_py, py::arg("model"), py::arg("q"), py::arg("frame_name"),
          "4x4 world pose of a frame (Model.frame_names) or of a body (Model.body_names).");
  mod.def("body_jacobian", &body_jacobian_py, py::arg("model"), py::arg("q"), py::arg("body_name"),
          py::arg("frame") = "world",
          "(6, nv) Jacobian J with J v = spatial velocity [omega; v] of the body (or frame). frame='world':\n"
          "world coordinates, v = velocity of the body point at the world origin (so J^T f maps a world\n"
          "force [moment about origin; force] to joint forces). frame='local': coordinates of the body\n"
          "(or frame), v = velocity of its origin. frame='local_world_aligned': world axes, v = velocity\n"
          "of the body's (frame's) origin (MuJoCo's mj_jac, Pinocchio's LOCAL_WORLD_ALIGNED).");
  mod.def("jacobian_dot_times_v", &jdot_v_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("body_name"),
          py::arg("frame") = "world",
          "(d/dt J) v for body_jacobian(model, q, body_name, frame): a 6-vector, the frame's acceleration\n"
          "at qdd = 0 without gravity. With frame='local_world_aligned' its linear part is the classical\n"
          "acceleration of the frame origin.");
  mod.def("jacobian_time_variation", &jdot_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("body_name"),
          py::arg("frame") = "world",
          "(6, nv) dJ/dt, the time derivative of body_jacobian(model, q, body_name, frame) along v\n"
          "(dJ/dt @ v == jacobian_dot_times_v).");
  mod.def("frame_velocity", &frame_velocity_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("name"),
          py::arg("frame") = "local",
          "Spatial velocity [omega; v] of a body or frame (= body_jacobian(model, q, name, frame) @ v).");
  mod.def("frame_acceleration", &frame_acceleration_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("a"),
          py::arg("name"), py::arg("frame") = "local", py::arg("classical") = false,
          "Acceleration of a body or frame for joint accelerations a (gravity not included):\n"
          "d/dt (J v) = J a + dJ/dt v, [omega_dot; linear]. classical=False: the spatial acceleration\n"
          "(linear part: derivative of the velocity field at the origin); classical=True: the linear\n"
          "part is the classical acceleration of the frame origin, in the frame's axes ('local') or in\n"
          "world axes ('local_world_aligned'; for that frame both are the same).");
  mod.def(
      "center_of_mass",
      [](PyModel& m, ArrayLike q) {
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return vec_out(plucker::center_of_mass(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"), "Centre of mass of the moving bodies (world coordinates).");
  mod.def(
      "center_of_mass_jacobian",
      [](PyModel& m, ArrayLike q) {
        const Vector qa = q_arg(m, q);
        return call({&qa}, [&] { return mat_out(plucker::center_of_mass_jacobian(m.model(), m.data(), qa)); });
      },
      py::arg("model"), py::arg("q"), "(3, nv) Jacobian of the centre of mass (world coordinates).");
  mod.def(
      "center_of_mass_jacobian_dot_times_v",
      [](PyModel& m, ArrayLike q, ArrayLike v) {
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
        return call({&qa, &va},
                    [&] { return vec_out(plucker::center_of_mass_jacobian_dot_times_v(m.model(), m.data(), qa, va)); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"),
      "(d/dt J_com) v: the centre of mass's acceleration at qdd = 0 without gravity (world).");
  g_centroidal_type =
      named_tuple(mod, "CentroidalMomentum", py::make_tuple("A", "dA", "h", "dA_v", "com", "com_velocity", "mass"),
                  "Result of centroidal_momentum: A (6, nv) the centroidal momentum matrix A_G, dA (6, nv) its time\n"
                  "derivative, h = A_G v = [angular momentum about the centre of mass; linear momentum] (world axes),\n"
                  "dA_v = dA_G/dt v (so dh/dt = A_G qdd + dA_v), com, com_velocity, mass. dA, h, dA_v and\n"
                  "com_velocity are None when v is not given.");
  mod.def("centroidal_momentum", &centroidal_py, py::arg("model"), py::arg("q"), py::arg("v") = py::none(),
          "Centroidal momentum (Orin & Goswami, Autonomous Robots 35(2-3), 2013): the matrix A_G with\n"
          "h_G = A_G v, world axes at the centre of mass, [moment; force] order; with v also dA_G/dt,\n"
          "h_G and dA_G/dt v. Returns a CentroidalMomentum.");

  // ---------------------------------------------------------------- configuration space
  mod.def(
      "neutral", [](const PyModel& m) { return vec_out(plucker::neutral(m.model())); }, py::arg("model"),
      "Neutral configuration (zeros, identity quaternions).");
  mod.def(
      "random_configuration",
      [](const PyModel& m, OptSeed seed) {
        std::uint64_t s;
        if (seed.is_none()) {
          std::random_device rd;
          s = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
        } else {
          s = seed_arg(seed);
        }
        std::mt19937_64 rng(s);
        return vec_out(plucker::random_configuration(m.model(), rng));
      },
      py::arg("model"), py::arg("seed") = py::none(),
      "Random configuration within the position limits (deterministic for a given integer seed;\n"
      "seed=None draws one from the OS).");
  mod.def(
      "integrate",
      [](const PyModel& m, ArrayLike q, ArrayLike v, double dt) {
        const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
        if (!std::isfinite(dt)) value_error("dt is not finite (" + std::to_string(dt) + ")");
        return call({&qa, &va}, [&] { return vec_out(plucker::integrate(m.model(), qa, va, dt)); });
      },
      py::arg("model"), py::arg("q"), py::arg("v"), py::arg("dt") = 1.0,
      "q (+) v dt, exact on the quaternion joints (quaternions stay unit).");
  mod.def(
      "difference",
      [](const PyModel& m, ArrayLike q0, ArrayLike q1) {
        const Vector a = q_arg(m, q0, "q0"), b = q_arg(m, q1, "q1");
        return call({&a, &b}, [&] { return vec_out(plucker::difference(m.model(), a, b)); });
      },
      py::arg("model"), py::arg("q0"), py::arg("q1"), "v such that integrate(q0, v, 1) == q1.");
  mod.def("normalize", &normalize_py, py::arg("model"), py::arg("q"),
          "A copy of q with unit quaternions (and planar (cos, sin) pairs).");
}

}  // namespace plucker_py
