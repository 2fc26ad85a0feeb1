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

py::array_t<double> body_jacobian_py(PyModel& m, ArrayLike q, const std::string& name, const std::string& frame) {
  const Vector qa = q_arg(m, q);
  const ReferenceFrame rf = frame_arg(frame);
  const auto [body, f] = body_or_frame(m, name, "body_jacobian");
  return call({&qa}, [&, body = body, f = f] {
    const plucker::Matrix6X& J = plucker::body_jacobian(m.model(), m.data(), qa, body, rf);
    // A frame moves with its body: same spatial velocity in world coordinates; in local
    // coordinates the body's is mapped by frame_X_body.
    if (f >= 0 && rf == ReferenceFrame::Local)
      return mat_out(m.model().frames()[static_cast<std::size_t>(f)].X_body.matrix_motion() * J);
    return mat_out(J);
  });
}

py::array_t<double> jdot_v_py(PyModel& m, ArrayLike q, ArrayLike v, const std::string& name, const std::string& frame) {
  const Vector qa = q_arg(m, q), va = v_arg(m, v, "v");
  const ReferenceFrame rf = frame_arg(frame);
  const auto [body, f] = body_or_frame(m, name, "jacobian_dot_times_v");
  return call({&qa, &va}, [&, body = body, f = f] {
    plucker::Motion a = plucker::jacobian_dot_times_v(m.model(), m.data(), qa, va, body, rf);
    if (f >= 0 && rf == ReferenceFrame::Local) a = m.model().frames()[static_cast<std::size_t>(f)].X_body.apply(a);
    return vec_out(a.vector());
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
          "(or frame), v = velocity of its origin.");
  mod.def("jacobian_dot_times_v", &jdot_v_py, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("body_name"),
          py::arg("frame") = "world", "(d/dt J) v for body_jacobian(model, q, body_name, frame): a 6-vector.");
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
