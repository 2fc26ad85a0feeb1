// The joint library (paper 000 §3.1, paper 002 §2: a joint has nq position and
// nv motion variables, nq >= nv).
//
// Every joint kind is a small struct with the same members, so that algorithms
// are written once as templates and specialised per joint kind (dispatch is one
// std::visit per body, outside the arithmetic):
//   static constexpr int NQ, NV          (NV == Eigen::Dynamic for JointGeneral)
//   int nq() const, nv() const
//   Transform transform(const double* q)              X_J(q): joint frame -> body frame
//   Transform compose(const double* q, const Transform& X_tree)   X_J(q) * X_tree
//   Motion motion(const double* v)                    S v (the joint velocity v_J)
//   void project(const Force& f, double* out)         out = S^T f  (Eq. 8)
//   MatS S()                                          the motion subspace, 6 x nv
//   template<M> auto times_S(const M& I6)             I6 * S  (6 x nv) for a 6x6 I6
//   neutral / integrate / difference / normalize / random  (configuration space)
//
// Every motion subspace here is constant in the body frame, so the apparent
// derivative c_J = (d/dt S) v is zero and the velocity-product term of Eq. 4 is
// v_i x (S v) (RBDA Eq. 3.40); bias() returns c_J for completeness.
//
// Quaternions are stored [qx qy qz qw] (Eigen's coeffs order), body-to-parent.
#pragma once

#include <cmath>
#include <random>
#include <string_view>
#include <variant>

#include "plucker/spatial.hpp"

namespace plucker {

using MatS6 = Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6>;  // up to 6 columns, no heap

namespace detail {
/// Rotation matrix of a unit quaternion stored [x y z w].
inline Quat quat_from(const double* q) { return Quat(q[3], q[0], q[1], q[2]); }
inline void quat_to(const Quat& r, double* q) {
  q[0] = r.x();
  q[1] = r.y();
  q[2] = r.z();
  q[3] = r.w();
}
/// exp of a rotation vector as a quaternion (exact, small-angle safe).
Quat quat_exp(const Vec3& w);
/// log of a unit quaternion as a rotation vector in the ball of radius pi.
Vec3 quat_log(const Quat& q);
/// SO(3) left Jacobian V(w) = I + (1-cos t)/t^2 wx + (t - sin t)/t^3 wx^2 and its inverse.
Mat3 so3_left_jacobian(const Vec3& w);
Mat3 so3_left_jacobian_inverse(const Vec3& w);
/// Pose (R, p) = exp of the twist [w; v] (body twist over unit time).
void se3_exp(const Motion& twist, Mat3& R, Vec3& p);
/// Uniformly distributed unit quaternion.
Quat random_quaternion(std::mt19937_64& rng);
inline double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
/// Bounds used for sampling when a limit is infinite.
double sample_bound(double limit, double fallback);
}  // namespace detail

/// Common configuration code for joints whose q is a plain vector (nq == nv).
template <int N>
struct VectorSpaceConfig {
  void neutral(double* q) const {
    for (int k = 0; k < N; ++k) q[k] = 0.0;
  }
  void integrate(const double* q, const double* v, double dt, double* out) const {
    for (int k = 0; k < N; ++k) out[k] = q[k] + v[k] * dt;
  }
  void difference(const double* q0, const double* q1, double* v) const {
    for (int k = 0; k < N; ++k) v[k] = q1[k] - q0[k];
  }
  void normalize(double*) const {}
  /// Uniform within [lower, upper]; an infinite bound is replaced by +-fallback.
  void random(std::mt19937_64& rng, const double* lower, const double* upper, double fallback, double* q) const {
    for (int k = 0; k < N; ++k)
      q[k] = detail::uniform(rng, detail::sample_bound(lower[k], -fallback), detail::sample_bound(upper[k], fallback));
  }
};

/// A welded joint (0 DoF). Kept for hand-built models; the URDF loader merges fixed joints instead.
struct JointFixed : VectorSpaceConfig<0> {
  static constexpr int NQ = 0, NV = 0;
  static constexpr std::string_view kind = "fixed";
  int nq() const { return 0; }
  int nv() const { return 0; }
  Transform transform(const double*) const { return Transform(); }
  Transform compose(const double*, const Transform& X_tree) const { return X_tree; }
  Motion motion(const double*) const { return Motion(); }
  void project(const Force&, double*) const {}
  MatS6 S() const { return MatS6(6, 0); }
  template <class M>
  Eigen::Matrix<double, 6, 0> times_S(const M&) const {
    return {};
  }
};

/// Revolute joint about the body frame's x (A=0), y (A=1) or z (A=2) axis: the fast path.
template <int A>
struct JointRevoluteAxis : VectorSpaceConfig<1> {
  static_assert(A >= 0 && A < 3);
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = A == 0 ? "revolute_x" : A == 1 ? "revolute_y" : "revolute_z";
  int nq() const { return 1; }
  int nv() const { return 1; }
  Vec3 axis() const { return Vec3::Unit(A); }
  Transform transform(const double* q) const {
    return A == 0 ? Transform::rot_x(q[0]) : A == 1 ? Transform::rot_y(q[0]) : Transform::rot_z(q[0]);
  }
  Transform compose(const double* q, const Transform& X_tree) const {
    return compose_sc(std::sin(q[0]), std::cos(q[0]), X_tree);
  }
  /// X_J X_tree from s = sin q, c = cos q: a plane rotation mixes only two rows of E_tree;
  /// r is unchanged.
  Transform compose_sc(double s, double c, const Transform& X_tree) const {
    constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
    Transform X;
    X.E.row(A) = X_tree.E.row(A);
    X.E.row(i) = c * X_tree.E.row(i) + s * X_tree.E.row(j);
    X.E.row(j) = c * X_tree.E.row(j) - s * X_tree.E.row(i);
    X.r = X_tree.r;
    return X;
  }
  Motion motion(const double* v) const {
    Motion m;
    m.angular[A] = v[0];
    return m;
  }
  void project(const Force& f, double* out) const { out[0] = f.angular[A]; }
  MatS6 S() const {
    MatS6 s = MatS6::Zero(6, 1);
    s(A, 0) = 1.0;
    return s;
  }
  template <class M>
  Vec6 times_S(const M& I6) const {
    return I6.col(A);
  }
};
using JointRevoluteX = JointRevoluteAxis<0>;
using JointRevoluteY = JointRevoluteAxis<1>;
using JointRevoluteZ = JointRevoluteAxis<2>;

/// Prismatic joint along the body frame's x, y or z axis.
template <int A>
struct JointPrismaticAxis : VectorSpaceConfig<1> {
  static_assert(A >= 0 && A < 3);
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = A == 0 ? "prismatic_x" : A == 1 ? "prismatic_y" : "prismatic_z";
  int nq() const { return 1; }
  int nv() const { return 1; }
  Vec3 axis() const { return Vec3::Unit(A); }
  Transform transform(const double* q) const { return Transform::translation(Vec3::Unit(A) * q[0]); }
  /// X_J X_tree with X_J a pure translation d e_A: r = r_tree + E_tree^T (d e_A).
  Transform compose(const double* q, const Transform& X_tree) const {
    return Transform(X_tree.E, X_tree.r + q[0] * X_tree.E.row(A).transpose());
  }
  Motion motion(const double* v) const {
    Motion m;
    m.linear[A] = v[0];
    return m;
  }
  void project(const Force& f, double* out) const { out[0] = f.linear[A]; }
  MatS6 S() const {
    MatS6 s = MatS6::Zero(6, 1);
    s(3 + A, 0) = 1.0;
    return s;
  }
  template <class M>
  Vec6 times_S(const M& I6) const {
    return I6.col(3 + A);
  }
};
using JointPrismaticX = JointPrismaticAxis<0>;
using JointPrismaticY = JointPrismaticAxis<1>;
using JointPrismaticZ = JointPrismaticAxis<2>;

/// Screw joint about/along a unit axis through the joint-frame origin, `pitch` metres per
/// radian. pitch = 0 is a revolute joint about any axis.
struct JointHelical : VectorSpaceConfig<1> {
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = "helical";
  Vec3 axis = Vec3::UnitZ();
  double pitch = 0.0;
  int nq() const { return 1; }
  int nv() const { return 1; }
  Transform transform(const double* q) const {
    const Mat3 R = Eigen::AngleAxisd(q[0], axis).toRotationMatrix();
    return Transform(R.transpose(), (pitch * q[0]) * axis);
  }
  Transform compose(const double* q, const Transform& X_tree) const { return transform(q) * X_tree; }
  Motion column() const { return Motion(axis, pitch * axis); }
  Motion motion(const double* v) const { return column() * v[0]; }
  void project(const Force& f, double* out) const { out[0] = dot(column(), f); }
  MatS6 S() const { return column().vector(); }
  template <class M>
  Vec6 times_S(const M& I6) const {
    return I6.template leftCols<3>() * axis + I6.template rightCols<3>() * (pitch * axis);
  }
};

/// Revolute joint about an arbitrary unit axis.
struct JointRevolute : JointHelical {
  static constexpr std::string_view kind = "revolute";
  JointRevolute() = default;
  explicit JointRevolute(const Vec3& a) {
    axis = a;
    pitch = 0.0;
  }
  Motion column() const { return Motion(axis, Vec3::Zero()); }
  Motion motion(const double* v) const { return Motion(axis * v[0], Vec3::Zero()); }
  void project(const Force& f, double* out) const { out[0] = axis.dot(f.angular); }
  MatS6 S() const { return column().vector(); }
  template <class M>
  Vec6 times_S(const M& I6) const {
    return I6.template leftCols<3>() * axis;
  }
  Transform transform(const double* q) const {
    return Transform(Eigen::AngleAxisd(q[0], axis).toRotationMatrix().transpose(), Vec3::Zero());
  }
  Transform compose(const double* q, const Transform& X_tree) const {
    return compose_sc(std::sin(q[0]), std::cos(q[0]), X_tree);
  }
  /// From s = sin q, c = cos q: E_J = R^T = c 1 - s [a]x + (1 - c) a a^T (Rodrigues).
  Transform compose_sc(double s, double c, const Transform& X_tree) const {
    Mat3 EJ = (1.0 - c) * axis * axis.transpose();
    EJ.diagonal().array() += c;
    EJ(0, 1) += s * axis.z();
    EJ(0, 2) -= s * axis.y();
    EJ(1, 0) -= s * axis.z();
    EJ(1, 2) += s * axis.x();
    EJ(2, 0) += s * axis.y();
    EJ(2, 1) -= s * axis.x();
    return Transform(EJ * X_tree.E, X_tree.r);
  }
};

/// Prismatic joint along an arbitrary unit axis.
struct JointPrismatic : VectorSpaceConfig<1> {
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = "prismatic";
  Vec3 axis = Vec3::UnitZ();
  JointPrismatic() = default;
  explicit JointPrismatic(const Vec3& a) : axis(a) {}
  int nq() const { return 1; }
  int nv() const { return 1; }
  Transform transform(const double* q) const { return Transform::translation(axis * q[0]); }
  Transform compose(const double* q, const Transform& X_tree) const {
    return Transform(X_tree.E, X_tree.r + X_tree.E.transpose() * (axis * q[0]));
  }
  Motion motion(const double* v) const { return Motion(Vec3::Zero(), axis * v[0]); }
  void project(const Force& f, double* out) const { out[0] = axis.dot(f.linear); }
  MatS6 S() const { return Motion(Vec3::Zero(), axis).vector(); }
  template <class M>
  Vec6 times_S(const M& I6) const {
    return I6.template rightCols<3>() * axis;
  }
};

/// Cylindrical joint: rotation q[0] about and translation q[1] along one unit axis.
struct JointCylindrical : VectorSpaceConfig<2> {
  static constexpr int NQ = 2, NV = 2;
  static constexpr std::string_view kind = "cylindrical";
  Vec3 axis = Vec3::UnitZ();
  int nq() const { return 2; }
  int nv() const { return 2; }
  Transform transform(const double* q) const {
    return Transform(Eigen::AngleAxisd(q[0], axis).toRotationMatrix().transpose(), axis * q[1]);
  }
  Transform compose(const double* q, const Transform& X_tree) const { return transform(q) * X_tree; }
  Motion motion(const double* v) const { return Motion(axis * v[0], axis * v[1]); }
  void project(const Force& f, double* out) const {
    out[0] = axis.dot(f.angular);
    out[1] = axis.dot(f.linear);
  }
  MatS6 S() const {
    MatS6 s = MatS6::Zero(6, 2);
    s.block<3, 1>(0, 0) = axis;
    s.block<3, 1>(3, 1) = axis;
    return s;
  }
  template <class M>
  Eigen::Matrix<double, 6, 2> times_S(const M& I6) const {
    Eigen::Matrix<double, 6, 2> out;
    out.col(0) = I6.template leftCols<3>() * axis;
    out.col(1) = I6.template rightCols<3>() * axis;
    return out;
  }
};

/// Planar joint: translation in a plane and rotation about its normal.
/// q = [x, y, cos(theta), sin(theta)] (nq = 4), v = [vx, vy, omega] in the body frame (nv = 3).
/// The plane is spanned by the first two columns of `basis` (its third column is the normal);
/// basis = identity is the xy plane. URDF planar joints use the joint axis as the normal.
struct JointPlanar {
  static constexpr int NQ = 4, NV = 3;
  static constexpr std::string_view kind = "planar";
  Mat3 basis = Mat3::Identity();
  int nq() const { return 4; }
  int nv() const { return 3; }
  Transform transform(const double* q) const;
  Transform compose(const double* q, const Transform& X_tree) const { return transform(q) * X_tree; }
  Motion motion(const double* v) const {
    return Motion(basis.col(2) * v[2], basis.col(0) * v[0] + basis.col(1) * v[1]);
  }
  void project(const Force& f, double* out) const {
    out[0] = basis.col(0).dot(f.linear);
    out[1] = basis.col(1).dot(f.linear);
    out[2] = basis.col(2).dot(f.angular);
  }
  MatS6 S() const {
    MatS6 s = MatS6::Zero(6, 3);
    s.block<3, 1>(3, 0) = basis.col(0);
    s.block<3, 1>(3, 1) = basis.col(1);
    s.block<3, 1>(0, 2) = basis.col(2);
    return s;
  }
  template <class M>
  Eigen::Matrix<double, 6, 3> times_S(const M& I6) const {
    Eigen::Matrix<double, 6, 3> out;
    out.leftCols<2>() = I6.template rightCols<3>() * basis.leftCols<2>();
    out.col(2) = I6.template leftCols<3>() * basis.col(2);
    return out;
  }
  void neutral(double* q) const {
    q[0] = q[1] = q[3] = 0.0;
    q[2] = 1.0;
  }
  void integrate(const double* q, const double* v, double dt, double* out) const;
  void difference(const double* q0, const double* q1, double* v) const;
  void normalize(double* q) const {
    const double n = std::hypot(q[2], q[3]);
    q[2] /= n;
    q[3] /= n;
  }
  /// x, y within the limits of q[0], q[1] (fallback when infinite); angle uniform.
  void random(std::mt19937_64& rng, const double* lower, const double* upper, double fallback, double* q) const;
};

/// Spherical (ball) joint: q = unit quaternion [qx qy qz qw] body-to-parent, v = angular
/// velocity in the body frame.
struct JointSpherical {
  static constexpr int NQ = 4, NV = 3;
  static constexpr std::string_view kind = "spherical";
  int nq() const { return 4; }
  int nv() const { return 3; }
  Transform transform(const double* q) const {
    return Transform(detail::quat_from(q).toRotationMatrix().transpose(), Vec3::Zero());
  }
  Transform compose(const double* q, const Transform& X_tree) const {
    return Transform(detail::quat_from(q).toRotationMatrix().transpose() * X_tree.E, X_tree.r);
  }
  Motion motion(const double* v) const { return Motion(Vec3(v[0], v[1], v[2]), Vec3::Zero()); }
  void project(const Force& f, double* out) const {
    out[0] = f.angular[0];
    out[1] = f.angular[1];
    out[2] = f.angular[2];
  }
  MatS6 S() const {
    MatS6 s = MatS6::Zero(6, 3);
    s.topRows<3>().setIdentity();
    return s;
  }
  template <class M>
  Eigen::Matrix<double, 6, 3> times_S(const M& I6) const {
    return I6.template leftCols<3>();
  }
  void neutral(double* q) const {
    q[0] = q[1] = q[2] = 0.0;
    q[3] = 1.0;
  }
  /// Exact: R(t+dt) = R(t) exp(omega dt).
  void integrate(const double* q, const double* v, double dt, double* out) const;
  void difference(const double* q0, const double* q1, double* v) const;
  void normalize(double* q) const { Eigen::Map<Eigen::Vector4d>(q).normalize(); }
  void random(std::mt19937_64& rng, const double*, const double*, double, double* q) const {
    detail::quat_to(detail::random_quaternion(rng), q);
  }
};

/// Free-flyer (6-DoF) joint: q = [x y z qx qy qz qw] (position of the body origin in the
/// parent frame, unit quaternion body-to-parent); v = [omega; v] of the body in body
/// coordinates (v = velocity of the body origin), so S = identity.
struct JointFreeFlyer {
  static constexpr int NQ = 7, NV = 6;
  static constexpr std::string_view kind = "free_flyer";
  int nq() const { return 7; }
  int nv() const { return 6; }
  Transform transform(const double* q) const {
    return Transform(detail::quat_from(q + 3).toRotationMatrix().transpose(), Vec3(q[0], q[1], q[2]));
  }
  Transform compose(const double* q, const Transform& X_tree) const { return transform(q) * X_tree; }
  Motion motion(const double* v) const { return Motion(Vec3(v[0], v[1], v[2]), Vec3(v[3], v[4], v[5])); }
  void project(const Force& f, double* out) const {
    for (int k = 0; k < 3; ++k) {
      out[k] = f.angular[k];
      out[3 + k] = f.linear[k];
    }
  }
  MatS6 S() const { return MatS6::Identity(6, 6); }
  template <class M>
  Mat6 times_S(const M& I6) const {
    return I6;
  }
  void neutral(double* q) const {
    for (int k = 0; k < 6; ++k) q[k] = 0.0;
    q[6] = 1.0;
  }
  /// Exact for a constant body twist: T(t+dt) = T(t) exp([omega; v] dt) on SE(3).
  void integrate(const double* q, const double* v, double dt, double* out) const;
  void difference(const double* q0, const double* q1, double* v) const;
  void normalize(double* q) const { Eigen::Map<Eigen::Vector4d>(q + 3).normalize(); }
  /// Position within the limits of q[0..2] (fallback when infinite); orientation uniform.
  void random(std::mt19937_64& rng, const double* lower, const double* upper, double fallback, double* q) const;
};

/// A joint with a user-supplied constant motion subspace S (6 x d, 1 <= d <= 6), nq = nv = d,
/// X_J(q) = exp(S q) (screw motion by the twist S q). S must have independent columns that
/// commute (crm(s_i) s_j = 0): then S is the exact motion subspace at every q. Checked by
/// make_general_joint().
struct JointGeneral {
  static constexpr int NQ = Eigen::Dynamic, NV = Eigen::Dynamic;
  static constexpr std::string_view kind = "general";
  MatS6 subspace = MatS6::Zero(6, 1);
  int nq() const { return static_cast<int>(subspace.cols()); }
  int nv() const { return static_cast<int>(subspace.cols()); }
  Transform transform(const double* q) const;
  Transform compose(const double* q, const Transform& X_tree) const { return transform(q) * X_tree; }
  Motion motion(const double* v) const {
    return Motion(subspace * Eigen::Map<const Eigen::VectorXd>(v, subspace.cols()));
  }
  void project(const Force& f, double* out) const {
    Eigen::Map<Eigen::VectorXd>(out, subspace.cols()).noalias() = subspace.transpose() * f.vector();
  }
  MatS6 S() const { return subspace; }
  template <class M>
  MatS6 times_S(const M& I6) const {
    return I6 * subspace;
  }
  void neutral(double* q) const {
    for (int k = 0; k < nq(); ++k) q[k] = 0.0;
  }
  void integrate(const double* q, const double* v, double dt, double* out) const {
    for (int k = 0; k < nq(); ++k) out[k] = q[k] + v[k] * dt;
  }
  void difference(const double* q0, const double* q1, double* v) const {
    for (int k = 0; k < nq(); ++k) v[k] = q1[k] - q0[k];
  }
  void normalize(double*) const {}
  void random(std::mt19937_64& rng, const double* lower, const double* upper, double fallback, double* q) const {
    for (int k = 0; k < nq(); ++k)
      q[k] = detail::uniform(rng, detail::sample_bound(lower[k], -fallback), detail::sample_bound(upper[k], fallback));
  }
};

/// The closed set of joint kinds. Algorithms dispatch once per body with std::visit.
using JointModel = std::variant<JointFixed, JointRevoluteX, JointRevoluteY, JointRevoluteZ, JointRevolute,
                                JointPrismaticX, JointPrismaticY, JointPrismaticZ, JointPrismatic, JointHelical,
                                JointCylindrical, JointPlanar, JointSpherical, JointFreeFlyer, JointGeneral>;

// ---- factories: validate the axis and pick the fast path when it is a coordinate axis ----
/// Revolute about `axis` (normalised; refuses a zero or non-finite axis). +x/+y/+z use the fast path.
JointModel make_revolute(const Vec3& axis);
JointModel make_prismatic(const Vec3& axis);
JointModel make_helical(const Vec3& axis, double pitch);
JointModel make_cylindrical(const Vec3& axis);
/// Planar joint moving in the plane orthogonal to `normal`.
JointModel make_planar(const Vec3& normal = Vec3::UnitZ());
/// General joint from a 6 x d motion subspace (see JointGeneral for the requirements).
JointModel make_general_joint(const MatS6& S);

/// Name of the joint kind ("revolute_z", "free_flyer", ...).
std::string_view joint_kind(const JointModel& j);
int joint_nq(const JointModel& j);
int joint_nv(const JointModel& j);

}  // namespace plucker
