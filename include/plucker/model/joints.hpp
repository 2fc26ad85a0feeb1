// The joint library (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000, §3.1; Jain, "Unified
// Formulation of Dynamics for Serial Rigid Multibody Systems", J. Guidance, Control, and Dynamics 1991, §2: a joint has
// nq position and nv motion variables, nq >= nv): the joint kinds as small descriptions (an axis, a pitch, a basis, a
// subspace) with their configuration-space operations. Their kinematics — X_J(q) X_tree, S v,
// S^T f, v x S qd — are written once in the library (src/model/joint_kernels.hpp of the source tree), generic over the
// scalar (one state, or W states in SIMD lanes), and used by every algorithm; the members below give them on double for
// users and tests:
//   static constexpr int NQ, NV          (NV == Eigen::Dynamic for JointGeneral)
//   int nq() const, nv() const
//   Transform transform(const double* q)                X_J(q): joint frame -> body frame
//   Transform compose(const double* q, const Transform& X_tree)   X_J(q) * X_tree
//   Motion motion(const double* v)                      S v (the joint velocity v_J)
//   void project(const Force& f, double* out)           out = S^T f  (Eq. 8)
//   MatS6 S()                                           the motion subspace, 6 x nv
//   MatS6 times_S(const Mat6& I6)                       I6 * S  (6 x nv)
//   neutral / integrate / difference / normalize / random  (configuration space)
//
// Every motion subspace here is constant in the body frame, so the apparent derivative
// c_J = (d/dt S) v is zero and the velocity-product term of Featherstone & Orin 2000 Eq. 4 is v_i x (S v)
// (Featherstone, "Rigid Body Dynamics Algorithms", Springer 2008, Eq. 3.40).
//
// Quaternions are stored [qx qy qz qw] (Eigen's coeffs order), body-to-parent.
#pragma once

#include <cmath>
#include <random>
#include <string_view>
#include <variant>

#include "plucker/spatial.hpp"
#include "plucker/spatial/lie.hpp"

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
/// exp of a rotation vector as a quaternion, and log (plucker/spatial/lie.hpp).
inline Quat quat_exp(const Vec3& w) { return quaternion_exp(w); }
inline Vec3 quat_log(const Quat& q) { return quaternion_log(q); }
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

/// The kinematics on double of a joint kind J (compiled into the library from
/// the generic joint kernels, which are not installed).
template <class J>
struct JointKinematics {
  Transform transform(const double* q) const;
  Transform compose(const double* q, const Transform& X_tree) const;
  Motion motion(const double* v) const;
  void project(const Force& f, double* out) const;
  MatS6 S() const;
  MatS6 times_S(const Mat6& I6) const;
};

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
struct JointFixed : VectorSpaceConfig<0>, JointKinematics<JointFixed> {
  static constexpr int NQ = 0, NV = 0;
  static constexpr std::string_view kind = "fixed";
  int nq() const { return 0; }
  int nv() const { return 0; }
};

/// Revolute joint about the body frame's x (A=0), y (A=1) or z (A=2) axis: the fast path.
template <int A>
struct JointRevoluteAxis : VectorSpaceConfig<1>, JointKinematics<JointRevoluteAxis<A>> {
  static_assert(A >= 0 && A < 3);
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = A == 0 ? "revolute_x" : A == 1 ? "revolute_y" : "revolute_z";
  int nq() const { return 1; }
  int nv() const { return 1; }
  Vec3 axis() const { return Vec3::Unit(A); }
};
using JointRevoluteX = JointRevoluteAxis<0>;
using JointRevoluteY = JointRevoluteAxis<1>;
using JointRevoluteZ = JointRevoluteAxis<2>;

/// Prismatic joint along the body frame's x, y or z axis.
template <int A>
struct JointPrismaticAxis : VectorSpaceConfig<1>, JointKinematics<JointPrismaticAxis<A>> {
  static_assert(A >= 0 && A < 3);
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = A == 0 ? "prismatic_x" : A == 1 ? "prismatic_y" : "prismatic_z";
  int nq() const { return 1; }
  int nv() const { return 1; }
  Vec3 axis() const { return Vec3::Unit(A); }
};
using JointPrismaticX = JointPrismaticAxis<0>;
using JointPrismaticY = JointPrismaticAxis<1>;
using JointPrismaticZ = JointPrismaticAxis<2>;

/// Screw joint about/along a unit axis through the joint-frame origin, `pitch` metres per
/// radian. pitch = 0 is a revolute joint about any axis.
struct JointHelical : VectorSpaceConfig<1>, JointKinematics<JointHelical> {
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = "helical";
  Vec3 axis = Vec3::UnitZ();
  double pitch = 0.0;
  int nq() const { return 1; }
  int nv() const { return 1; }
};

/// Revolute joint about an arbitrary unit axis.
struct JointRevolute : VectorSpaceConfig<1>, JointKinematics<JointRevolute> {
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = "revolute";
  Vec3 axis = Vec3::UnitZ();
  JointRevolute() = default;
  explicit JointRevolute(const Vec3& a) : axis(a) {}
  int nq() const { return 1; }
  int nv() const { return 1; }
};

/// Prismatic joint along an arbitrary unit axis.
struct JointPrismatic : VectorSpaceConfig<1>, JointKinematics<JointPrismatic> {
  static constexpr int NQ = 1, NV = 1;
  static constexpr std::string_view kind = "prismatic";
  Vec3 axis = Vec3::UnitZ();
  JointPrismatic() = default;
  explicit JointPrismatic(const Vec3& a) : axis(a) {}
  int nq() const { return 1; }
  int nv() const { return 1; }
};

/// Cylindrical joint: rotation q[0] about and translation q[1] along one unit axis.
struct JointCylindrical : VectorSpaceConfig<2>, JointKinematics<JointCylindrical> {
  static constexpr int NQ = 2, NV = 2;
  static constexpr std::string_view kind = "cylindrical";
  Vec3 axis = Vec3::UnitZ();
  int nq() const { return 2; }
  int nv() const { return 2; }
};

/// Planar joint: translation in a plane and rotation about its normal.
/// q = [x, y, cos(theta), sin(theta)] (nq = 4), v = [vx, vy, omega] in the body frame (nv = 3).
/// The plane is spanned by the first two columns of `basis` (its third column is the normal);
/// basis = identity is the xy plane. URDF planar joints use the joint axis as the normal.
struct JointPlanar : JointKinematics<JointPlanar> {
  static constexpr int NQ = 4, NV = 3;
  static constexpr std::string_view kind = "planar";
  Mat3 basis = Mat3::Identity();
  int nq() const { return 4; }
  int nv() const { return 3; }
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
struct JointSpherical : JointKinematics<JointSpherical> {
  static constexpr int NQ = 4, NV = 3;
  static constexpr std::string_view kind = "spherical";
  int nq() const { return 4; }
  int nv() const { return 3; }
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
struct JointFreeFlyer : JointKinematics<JointFreeFlyer> {
  static constexpr int NQ = 7, NV = 6;
  static constexpr std::string_view kind = "free_flyer";
  int nq() const { return 7; }
  int nv() const { return 6; }
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
struct JointGeneral : JointKinematics<JointGeneral> {
  static constexpr int NQ = Eigen::Dynamic, NV = Eigen::Dynamic;
  static constexpr std::string_view kind = "general";
  MatS6 subspace = MatS6::Zero(6, 1);
  int nq() const { return static_cast<int>(subspace.cols()); }
  int nv() const { return static_cast<int>(subspace.cols()); }
  /// X_J(q) = exp(S q) as a coordinate transform.
  Transform exp(const double* q) const;
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
