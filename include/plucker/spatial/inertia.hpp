// Spatial inertias (Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000, §3; Featherstone,
// "Rigid Body Dynamics Algorithms", Springer 2008, §2.13).
//
// RigidBodyInertia is stored compactly: mass m, first moment h = m c (c = centre
// of mass), and the rotational inertia Ibar about the frame origin. As a 6x6
// matrix (M6 -> F6):  I = [Ibar  hx ; hx^T  m 1].
//
// ArticulatedBodyInertia is a symmetric 6x6 matrix (Featherstone & Orin 2000, Eq. 12) with the
// operations the articulated-body algorithm needs.
#pragma once

#include <iosfwd>
#include <string>

#include "plucker/spatial/transform.hpp"

namespace plucker {

/// What is wrong with a (mass, inertia-about-COM) pair, if anything. Used by the
/// checked constructor (which refuses all issues) and by loaders (which apply a policy).
struct InertiaCheck {
  bool finite = true;                 ///< mass, COM and tensor are finite (if not, the other
                                      ///< checks are not evaluated and all read false)
  bool mass_non_negative = true;      ///< m >= 0
  bool mass_positive = true;          ///< m > 0
  bool symmetric = true;              ///< |I - I^T| <= tol |I|
  bool positive_semidefinite = true;  ///< eigenvalues >= -tol |I|
  bool positive_definite = true;      ///< eigenvalues > tol |I|
  bool triangle_inequality = true;    ///< each principal moment <= sum of the other two (+ tol)
  Vec3 principal_moments = Vec3::Zero();

  /// A physically valid rigid body (m > 0, I symmetric positive-definite, triangle inequality).
  bool valid() const { return finite && mass_positive && symmetric && positive_definite && triangle_inequality; }
  /// Human-readable list of the problems ("" when valid).
  std::string describe() const;
};

/// Checks mass and rotational inertia about the COM. tol is relative to the tensor's scale.
InertiaCheck check_inertia(double mass, const Vec3& com, const Mat3& inertia_com, double tol = 1e-9);

class RigidBodyInertia {
 public:
  RigidBodyInertia() = default;  ///< zero inertia (massless)

  /// Checked constructor: throws InvalidArgument unless mass > 0, the tensor about the COM
  /// is symmetric positive-definite, satisfies the triangle inequality, and all is finite.
  static RigidBodyInertia from_mass_com_inertia(double mass, const Vec3& com, const Mat3& inertia_com);
  /// Unchecked: for loaders that apply their own policy, and for point masses (I_com = 0).
  static RigidBodyInertia unchecked(double mass, const Vec3& com, const Mat3& inertia_com);
  /// Raw parameters (m, h = m c, Ibar about the origin); no check.
  static RigidBodyInertia from_parameters(double mass, const Vec3& h, const Mat3& Ibar) {
    RigidBodyInertia I;
    I.m_ = mass;
    I.h_ = h;
    I.Ibar_ = Ibar;
    return I;
  }
  /// From a 6x6 matrix [Ibar hx; hx^T m1]; throws if it does not have that structure.
  static RigidBodyInertia from_matrix(const Mat6& M, double tol = 1e-9);
  static RigidBodyInertia Zero() { return RigidBodyInertia(); }

  double mass() const { return m_; }
  const Vec3& first_moment() const { return h_; }  ///< h = m c
  Vec3 com() const { return m_ > 0.0 ? Vec3(h_ / m_) : Vec3::Zero(); }
  const Mat3& inertia_origin() const { return Ibar_; }  ///< about the frame origin
  Mat3 inertia_com() const;                             ///< about the COM (m > 0)
  Mat6 matrix() const;

  /// I v: momentum of a body moving with v.
  Force operator*(const Motion& v) const;
  RigidBodyInertia operator+(const RigidBodyInertia& o) const {
    return from_parameters(m_ + o.m_, h_ + o.h_, Ibar_ + o.Ibar_);
  }
  RigidBodyInertia& operator+=(const RigidBodyInertia& o) {
    m_ += o.m_;
    h_ += o.h_;
    Ibar_ += o.Ibar_;
    return *this;
  }

  /// += the inertia with parameters (m, h, Ibar), Ibar given by its six distinct entries. For
  /// updates whose Ibar is computed entry by entry (crba.cpp's Eq. 9): a 3x3 temporary written
  /// as scalars and added as 2-lane packets stalled store forwarding there.
  void add_parameters(double m, const Vec3& h, double xx, double yy, double zz, double xy, double xz, double yz) {
    m_ += m;
    h_ += h;
    Ibar_(0, 0) += xx;
    Ibar_(1, 1) += yy;
    Ibar_(2, 2) += zz;
    Ibar_(0, 1) += xy;
    Ibar_(1, 0) += xy;
    Ibar_(0, 2) += xz;
    Ibar_(2, 0) += xz;
    Ibar_(1, 2) += yz;
    Ibar_(2, 1) += yz;
  }

  /// X* I X^-1: the inertia given in A expressed in B (X = B_X_A).
  RigidBodyInertia transformed(const Transform& X) const;
  /// X^T I X: the inertia given in B expressed in A (X = B_X_A).
  RigidBodyInertia transformed_inverse(const Transform& X) const;
  /// target += X^T I X, without a temporary (Eq. 9).
  void add_transformed_inverse_to(const Transform& X, RigidBodyInertia& target) const;

  double kinetic_energy(const Motion& v) const { return 0.5 * dot(v, (*this) * v); }
  bool isApprox(const RigidBodyInertia& o, double tol = 1e-12) const { return matrix().isApprox(o.matrix(), tol); }

 private:
  double m_ = 0.0;
  Vec3 h_ = Vec3::Zero();
  Mat3 Ibar_ = Mat3::Zero();
};

/// Articulated-body inertia: a symmetric 6x6 M6 -> F6 map (Featherstone & Orin 2000, Eqs. 11-12).
class ArticulatedBodyInertia {
 public:
  ArticulatedBodyInertia() : M_(Mat6::Zero()) {}
  explicit ArticulatedBodyInertia(const Mat6& M) : M_(M) {}
  explicit ArticulatedBodyInertia(const RigidBodyInertia& I) : M_(I.matrix()) {}

  const Mat6& matrix() const { return M_; }
  Mat6& matrix() { return M_; }

  Force operator*(const Motion& v) const;
  ArticulatedBodyInertia& operator+=(const ArticulatedBodyInertia& o) {
    M_ += o.M_;
    return *this;
  }
  ArticulatedBodyInertia& operator+=(const RigidBodyInertia& I) {
    M_ += I.matrix();
    return *this;
  }
  /// Symmetric rank-1 downdate I - u u^T / d (Eq. 12 for a 1-DoF joint; u = I h, d = h^T I h).
  void subtract_rank1(const Vec6& u, double d_inv) { M_.noalias() -= (u * d_inv) * u.transpose(); }

  /// X^T I X: given in B, expressed in A (X = B_X_A); the parent update of Eq. 12.
  ArticulatedBodyInertia transformed_inverse(const Transform& X) const;
  /// target += X^T I X, without a temporary (the ABA's inner step).
  void add_transformed_inverse_to(const Transform& X, ArticulatedBodyInertia& target) const;
  /// X* I X^-1: given in A, expressed in B.
  ArticulatedBodyInertia transformed(const Transform& X) const {
    return ArticulatedBodyInertia(X.matrix_force() * M_ * X.inverse().matrix_motion());
  }

 private:
  Mat6 M_;
};

std::ostream& operator<<(std::ostream& os, const RigidBodyInertia& I);

}  // namespace plucker
