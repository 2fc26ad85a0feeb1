// SO(3) / SE(3) exponential, logarithm and Jacobians, and quaternion helpers
// (plucker/spatial/lie.hpp).
#include <cmath>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"

namespace plucker_py {
namespace {

using plucker::Mat3;
using plucker::Quat;
using plucker::Vec3;
using plucker::Vec6;

/// A rotation matrix argument: 3x3, finite, orthonormal to 1e-9 and det +1.
Mat3 rotation_arg(py::handle obj, const std::string& name) {
  const Mat3 R = fixed_matrix(obj, name, 3, 3);
  const double err = (R.transpose() * R - Mat3::Identity()).cwiseAbs().maxCoeff();
  if (!(err <= 1e-9) || !(R.determinant() > 0.0))
    value_error(name + " is not a rotation matrix (max |R^T R - I| = " + std::to_string(err) +
                ", det = " + std::to_string(R.determinant()) + ")");
  return R;
}

/// A pose argument: 4x4 [R p; 0 0 0 1] with R a rotation.
Eigen::Matrix4d pose_arg(py::handle obj, const std::string& name) {
  const Eigen::Matrix4d T = fixed_matrix(obj, name, 4, 4);
  if (T.row(3) != Eigen::RowVector4d(0.0, 0.0, 0.0, 1.0))
    value_error(name + ": the last row of a pose must be [0, 0, 0, 1]");
  rotation_arg(mat_out(Mat3(T.topLeftCorner<3, 3>())), name + "[:3, :3]");
  return T;
}

/// A unit quaternion [x y z w] (norm within 1e-6 of 1, as for q).
Quat quaternion_arg(py::handle obj, const std::string& name) {
  const Eigen::VectorXd q = fixed_vector(obj, name, {4, nullptr, "[x y z w]"});
  if (std::abs(q.norm() - 1.0) > 1e-6)
    value_error(name + " is not a unit quaternion (norm " + std::to_string(q.norm()) + ")");
  return Quat(q[3], q[0], q[1], q[2]);
}

py::array_t<double> quat_out(const Quat& q) {
  Eigen::Vector4d out(q.x(), q.y(), q.z(), q.w());
  return vec_out(out);
}

bool right_side(const std::string& side) {
  if (side == "right") return true;
  if (side == "left") return false;
  value_error("side must be 'right' or 'left', got '" + side + "'");
}

}  // namespace

void bind_lie(py::module_& mod) {
  mod.def(
      "so3_exp", [](ArrayLike w) { return mat_out(plucker::so3_exp(vec3_arg(w, "omega"))); }, py::arg("omega"),
      "Rotation matrix exp(omega x) of a rotation vector (Rodrigues).");
  mod.def(
      "so3_log", [](ArrayLike R) { return vec_out(plucker::so3_log(rotation_arg(R, "R"))); }, py::arg("R"),
      "Rotation vector omega, |omega| in [0, pi], with so3_exp(omega) == R.");
  mod.def(
      "so3_jacobian",
      [](ArrayLike w, const std::string& side) {
        const Vec3 omega = vec3_arg(w, "omega");
        return mat_out(right_side(side) ? plucker::so3_right_jacobian(omega) : plucker::so3_left_jacobian(omega));
      },
      py::arg("omega"), py::arg("side") = "right",
      "(3, 3) Jacobian of so3_exp: exp(omega + d) ~ exp(omega) exp(J_r d) (side='right') or\n"
      "exp(J_l d) exp(omega) (side='left'); J_r(omega) = J_l(-omega).");
  mod.def(
      "so3_jacobian_inverse",
      [](ArrayLike w, const std::string& side) {
        const Vec3 omega = vec3_arg(w, "omega");
        return mat_out(right_side(side) ? plucker::so3_right_jacobian_inverse(omega)
                                        : plucker::so3_left_jacobian_inverse(omega));
      },
      py::arg("omega"), py::arg("side") = "right",
      "Inverse of so3_jacobian: the Jacobian of so3_log (log(R exp(d)) ~ log(R) + J_r^-1 d).");
  mod.def(
      "se3_exp",
      [](ArrayLike xi) {
        return mat_out(plucker::se3_exp(Vec6(fixed_vector(xi, "twist", {6, nullptr, "[omega; v]"}))));
      },
      py::arg("twist"),
      "4x4 pose exp(twist) of a twist [omega; v]: moving with the constant body twist for unit time\n"
      "(R = so3_exp(omega), p = J_l(omega) v).");
  mod.def(
      "se3_log", [](ArrayLike T) { return vec_out(plucker::se3_log(pose_arg(T, "T"))); }, py::arg("T"),
      "Twist [omega; v], |omega| in [0, pi], with se3_exp(twist) == T.");
  mod.def(
      "se3_jacobian",
      [](ArrayLike xi, const std::string& side) {
        const Vec6 t = fixed_vector(xi, "twist", {6, nullptr, "[omega; v]"});
        return mat_out(right_side(side) ? plucker::se3_right_jacobian(t) : plucker::se3_left_jacobian(t));
      },
      py::arg("twist"), py::arg("side") = "right",
      "(6, 6) Jacobian of se3_exp, rows and columns [angular; linear]: exp(xi + d) ~ exp(xi) exp(J_r d)\n"
      "(side='right') or exp(J_l d) exp(xi) (side='left').");
  mod.def(
      "se3_jacobian_inverse",
      [](ArrayLike xi, const std::string& side) {
        const Vec6 t = fixed_vector(xi, "twist", {6, nullptr, "[omega; v]"});
        return mat_out(right_side(side) ? plucker::se3_right_jacobian_inverse(t)
                                        : plucker::se3_left_jacobian_inverse(t));
      },
      py::arg("twist"), py::arg("side") = "right", "Inverse of se3_jacobian: the Jacobian of se3_log.");
  mod.def(
      "quaternion_to_matrix", [](ArrayLike q) { return mat_out(quaternion_arg(q, "q").toRotationMatrix()); },
      py::arg("q"), "Rotation matrix of a unit quaternion [x y z w].");
  mod.def(
      "matrix_to_quaternion",
      [](ArrayLike R) {
        Quat q(rotation_arg(R, "R"));
        if (q.w() < 0.0) q.coeffs() = -q.coeffs();
        return quat_out(q.normalized());
      },
      py::arg("R"), "Unit quaternion [x y z w] (w >= 0) of a rotation matrix.");
  mod.def(
      "quaternion_multiply",
      [](ArrayLike a, ArrayLike b) { return quat_out(quaternion_arg(a, "a") * quaternion_arg(b, "b")); }, py::arg("a"),
      py::arg("b"),
      "Hamilton product a * b of unit quaternions [x y z w]: the rotation of b followed by a\n"
      "(quaternion_to_matrix(a * b) == quaternion_to_matrix(a) @ quaternion_to_matrix(b)).");
  mod.def(
      "quaternion_exp", [](ArrayLike w) { return quat_out(plucker::quaternion_exp(vec3_arg(w, "omega"))); },
      py::arg("omega"), "Unit quaternion [x y z w] of the rotation so3_exp(omega).");
  mod.def(
      "quaternion_log", [](ArrayLike q) { return vec_out(plucker::quaternion_log(quaternion_arg(q, "q"))); },
      py::arg("q"), "Rotation vector, |omega| in [0, pi], of a unit quaternion [x y z w].");
}

}  // namespace plucker_py
