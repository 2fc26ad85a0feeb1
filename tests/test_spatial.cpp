// Property tests of the spatial-algebra layer (include/plucker/spatial/*).
//
// Conventions under test (Featherstone, RBDA; paper 000 §3):
//   Motion = [angular; linear], Force = [moment; force];
//   Transform B_X_A = (E, r):  X = [E 0; -E rx E],  X* = [E -E rx; 0 E] = X^-T.
//
// Every property runs on kSamples random inputs from std::mt19937 with a fixed,
// explicit seed, so a failure is reproducible; the failing sample index is printed.
//
// Tolerances. Inputs are O(1)..O(10) (|r| <= 2*sqrt(3), mass <= 10, principal
// moments <= 1), so every quantity compared is a short chain (tens of flops) of
// double operations whose rounding error is a few ulp (~1e-15) times the size of
// the numbers involved. Comparisons are therefore made as
//     max|a - b| <= kTol * scale,   kTol = 1e-12,
// with scale the magnitude of the quantities the result is computed from (stated
// at each use). 1e-12 leaves a margin of ~100x over rounding, while every formula
// error this could catch (a sign, a transpose, a missing term) shows up at O(1).
// Finite-difference checks use a larger, separately justified tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "plucker/errors.hpp"
#include "plucker/spatial.hpp"

namespace {

using namespace plucker;

constexpr int kSamples = 256;   // >= 200 per property
constexpr double kTol = 1e-12;  // see the header comment

// ----------------------------------------------------------------- random inputs
using Rng = std::mt19937;

double uniform(Rng& g, double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(g); }

Vec3 random_vec3(Rng& g, double half_range = 1.0) {
  return Vec3(uniform(g, -half_range, half_range), uniform(g, -half_range, half_range),
              uniform(g, -half_range, half_range));
}

Vec6 random_vec6(Rng& g, double half_range = 1.0) {
  Vec6 v;
  for (int i = 0; i < 6; ++i) v(i) = uniform(g, -half_range, half_range);
  return v;
}

/// Uniformly distributed unit quaternion (normalised 4-D Gaussian).
Quat random_unit_quat(Rng& g) {
  std::normal_distribution<double> n(0.0, 1.0);
  Quat q;
  do {
    q = Quat(n(g), n(g), n(g), n(g));
  } while (q.norm() < 1e-3);
  q.normalize();
  return q;
}

Mat3 random_rotation(Rng& g) { return random_unit_quat(g).toRotationMatrix(); }

/// Random B_X_A built directly from (E, r), independent of the named constructors.
Transform random_transform(Rng& g) { return Transform(random_rotation(g), random_vec3(g, 2.0)); }

Motion random_motion(Rng& g) { return Motion(random_vec3(g, 2.0), random_vec3(g, 2.0)); }
Force random_force(Rng& g) { return Force(random_vec3(g, 2.0), random_vec3(g, 2.0)); }

/// Random principal moments strictly inside the triangle inequality.
Vec3 random_principal_moments(Rng& g) {
  const double a = uniform(g, 0.05, 1.0), b = uniform(g, 0.05, 1.0);
  const double lo = std::abs(a - b), hi = a + b;
  const double c = lo + uniform(g, 0.05, 0.95) * (hi - lo);
  return Vec3(a, b, c);
}

/// Random rotational inertia about the COM: R diag(moments) R^T, exactly symmetric.
Mat3 random_inertia_com(Rng& g) {
  const Mat3 R = random_rotation(g);
  const Mat3 Ic = R * random_principal_moments(g).asDiagonal() * R.transpose();
  return 0.5 * (Ic + Ic.transpose());
}

struct BodyParams {
  double mass;
  Vec3 com;
  Mat3 Ic;
};

BodyParams random_body(Rng& g) { return {uniform(g, 0.1, 10.0), random_vec3(g, 1.0), random_inertia_com(g)}; }

RigidBodyInertia random_inertia(Rng& g) {
  const BodyParams b = random_body(g);
  return RigidBodyInertia::from_mass_com_inertia(b.mass, b.com, b.Ic);
}

/// Symmetric positive-definite 6x6 (a rigid-body inertia plus random rank-1 terms),
/// the shape of an articulated-body inertia.
Mat6 random_abi_matrix(Rng& g) {
  Mat6 M = random_inertia(g).matrix();
  for (int k = 0; k < 3; ++k) {
    const Vec6 u = random_vec6(g, 1.0);
    M += u * u.transpose();
  }
  return 0.5 * (M + M.transpose());
}

// ----------------------------------------------------------------- comparisons
template <class A, class B>
::testing::AssertionResult Close(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b, double tol,
                                 double scale) {
  const double err = (a - b).cwiseAbs().maxCoeff();
  if (err <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max|a-b| = " << err << " > " << tol << " * " << scale << "\na =\n"
                                       << a << "\nb =\n"
                                       << b;
}
/// Default scale: the larger of 1 and the biggest entry of either side.
template <class A, class B>
::testing::AssertionResult Close(const Eigen::MatrixBase<A>& a, const Eigen::MatrixBase<B>& b, double tol = kTol) {
  const double scale = std::max({1.0, a.cwiseAbs().maxCoeff(), b.cwiseAbs().maxCoeff()});
  return Close(a, b, tol, scale);
}
::testing::AssertionResult Close(const Motion& a, const Motion& b, double tol = kTol) {
  return Close(a.vector(), b.vector(), tol);
}
::testing::AssertionResult Close(const Force& a, const Force& b, double tol = kTol) {
  return Close(a.vector(), b.vector(), tol);
}
::testing::AssertionResult CloseScalar(double a, double b, double tol, double scale) {
  if (std::abs(a - b) <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "|" << a << " - " << b << "| = " << std::abs(a - b) << " > " << tol << " * "
                                       << scale;
}

/// The message of the InvalidArgument that f throws ("<no throw>" if none).
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "<no throw>";
}

// =================================================================== transforms

TEST(SpatialTransform, CompositionActsAsSuccessiveApplication) {
  Rng g(1001);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X1 = random_transform(g), X2 = random_transform(g);  // B_X_A, C_X_B
    const Motion m = random_motion(g);
    const Force f = random_force(g);
    const Transform X21 = X2 * X1;  // C_X_A
    ASSERT_TRUE(Close(X21.apply(m), X2.apply(X1.apply(m)))) << "sample " << i;
    ASSERT_TRUE(Close(X21.apply(f), X2.apply(X1.apply(f)))) << "sample " << i;
    // Scale: entries of X are <= 1 + |r| ~ 5; products of two such matrices stay O(10).
    ASSERT_TRUE(Close(X21.matrix_motion(), X2.matrix_motion() * X1.matrix_motion())) << "sample " << i;
    ASSERT_TRUE(Close(X21.matrix_force(), X2.matrix_force() * X1.matrix_force())) << "sample " << i;
  }
}

TEST(SpatialTransform, CompositionIsAssociative) {
  Rng g(1002);
  for (int i = 0; i < kSamples; ++i) {
    const Transform A = random_transform(g), B = random_transform(g), C = random_transform(g);
    ASSERT_TRUE(Close(((A * B) * C).matrix_motion(), (A * (B * C)).matrix_motion())) << "sample " << i;
  }
}

TEST(SpatialTransform, InverseIsInverse) {
  Rng g(1003);
  const Mat6 I6 = Mat6::Identity();
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    ASSERT_TRUE((X * X.inverse()).isApprox(Transform::Identity(), kTol)) << "sample " << i << ": " << X * X.inverse();
    ASSERT_TRUE((X.inverse() * X).isApprox(Transform::Identity(), kTol)) << "sample " << i;
    ASSERT_TRUE(Close((X * X.inverse()).matrix_motion(), I6)) << "sample " << i;
    ASSERT_TRUE(Close(X.inverse().matrix_motion(), X.matrix_motion().inverse())) << "sample " << i;
    ASSERT_TRUE(Close(X.inverse().inverse().matrix_motion(), X.matrix_motion())) << "sample " << i;
  }
}

TEST(SpatialTransform, ApplyInverseEqualsInverseApply) {
  Rng g(1004);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    const Motion m = random_motion(g);
    const Force f = random_force(g);
    ASSERT_TRUE(Close(X.apply_inverse(m), X.inverse().apply(m))) << "sample " << i;
    ASSERT_TRUE(Close(X.apply_inverse(f), X.inverse().apply(f))) << "sample " << i;
    ASSERT_TRUE(Close(X.apply_inverse(X.apply(m)), m)) << "sample " << i;
    ASSERT_TRUE(Close(X.apply_inverse(X.apply(f)), f)) << "sample " << i;
    ASSERT_TRUE(Close(X.apply(X.apply_inverse(m)), m)) << "sample " << i;
    // X*^-1 = X^T: apply_inverse on a force is the transpose of the motion matrix.
    ASSERT_TRUE(Close(X.apply_inverse(f).vector(), X.matrix_motion().transpose() * f.vector())) << "sample " << i;
    ASSERT_TRUE(Close(X.apply_inverse(m).vector(), X.matrix_motion().inverse() * m.vector())) << "sample " << i;
  }
}

TEST(SpatialTransform, ForceMatrixIsInverseTransposeAndApplyMatchesMatrices) {
  Rng g(1005);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    const Motion m = random_motion(g);
    const Force f = random_force(g);
    const Mat6 Xm = X.matrix_motion(), Xf = X.matrix_force();
    // Eigen's 6x6 inverse (LU) of a matrix with condition number ~(1+|r|)^2 < 30:
    // its rounding stays far below 1e-12 of the O(5) entries.
    ASSERT_TRUE(Close(Xf, Xm.inverse().transpose())) << "sample " << i;
    ASSERT_TRUE(Close(Xf.transpose() * Xm, Mat6::Identity())) << "sample " << i;
    ASSERT_TRUE(Close(X.apply(m).vector(), Xm * m.vector())) << "sample " << i;
    ASSERT_TRUE(Close(X.apply(f).vector(), Xf * f.vector())) << "sample " << i;
    // The documented block structure X = [E 0; -E rx E].
    ASSERT_TRUE(Close(Xm.topLeftCorner<3, 3>(), X.E));
    ASSERT_TRUE(Close(Xm.topRightCorner<3, 3>(), Mat3::Zero()));
    ASSERT_TRUE(Close(Xm.bottomLeftCorner<3, 3>(), Mat3(-X.E * skew(X.r))));
    ASSERT_TRUE(Close(Xm.bottomRightCorner<3, 3>(), X.E));
  }
}

TEST(SpatialTransform, PowerIsFrameInvariant) {
  Rng g(1006);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    const Motion m = random_motion(g);
    const Force f = random_force(g);
    // The dot product can cancel to ~0, so scale by the sizes of the terms summed:
    // |m| |f| (and |Xm| |X*f| <= (1+|r|)^2 |m||f| after the transform).
    const double scale = (1.0 + X.r.norm()) * (1.0 + X.r.norm()) * m.vector().norm() * f.vector().norm();
    ASSERT_TRUE(CloseScalar(dot(X.apply(m), X.apply(f)), dot(m, f), kTol, scale)) << "sample " << i;
    ASSERT_TRUE(CloseScalar(dot(X.apply_inverse(m), X.apply_inverse(f)), dot(m, f), kTol, scale)) << "sample " << i;
    ASSERT_EQ(dot(m, f), dot(f, m));
    // Different summation order from Eigen's 6-vector dot: same |m||f| scale as above.
    ASSERT_TRUE(CloseScalar(dot(m, f), m.vector().dot(f.vector()), kTol, m.vector().norm() * f.vector().norm()));
  }
}

TEST(SpatialTransform, PointVelocityIsCovariant) {
  // The velocity of a body point is a 3-D vector: computed in A at x_A it equals
  // the velocity computed in B at x_B = E (x_A - r), rotated back by E^T.
  Rng g(1007);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    const Motion vA = random_motion(g);
    const Vec3 xA = random_vec3(g, 2.0);
    const Vec3 xB = X.E * (xA - X.r);
    ASSERT_TRUE(Close(point_velocity(vA, xA), Vec3(X.E.transpose() * point_velocity(X.apply(vA), xB))))
        << "sample " << i;
  }
  // Hand-derived: a pure rotation w about A's origin seen from B = A translated by p:
  // the B-origin point moves with w x p.
  const Vec3 w(0.3, -1.2, 0.7), p(1.0, 2.0, -0.5);
  const Motion vB = Transform::translation(p).apply(Motion(w, Vec3::Zero()));
  EXPECT_TRUE(Close(vB.angular, w));
  EXPECT_TRUE(Close(vB.linear, Vec3(w.cross(p))));
}

// =================================================================== cross products

TEST(SpatialCross, MatricesAndDuality) {
  Rng g(2001);
  for (int i = 0; i < kSamples; ++i) {
    const Motion m = random_motion(g), n = random_motion(g);
    const Force f = random_force(g);
    ASSERT_TRUE(Close(crf(m), Mat6(-crm(m).transpose()))) << "sample " << i;
    ASSERT_TRUE(Close(cross(m, n).vector(), crm(m) * n.vector())) << "sample " << i;
    ASSERT_TRUE(Close(cross(m, f).vector(), crf(m) * f.vector())) << "sample " << i;
    ASSERT_TRUE(Close(cross(m, m).vector(), Vec6::Zero())) << "sample " << i;
    // dot(m x n, f) == -dot(n, m x* f): the defining duality of x*. Scale: |m||n||f|.
    const double scale = m.vector().norm() * n.vector().norm() * f.vector().norm();
    ASSERT_TRUE(CloseScalar(dot(cross(m, n), f), -dot(n, cross(m, f)), kTol, scale)) << "sample " << i;
  }
  // Hand-derived crm on unit vectors: [w; v] x [w2; v2] = [w x w2; w x v2 + v x w2].
  const Motion m(Vec3::UnitX(), Vec3::UnitY()), n(Vec3::UnitY(), Vec3::UnitZ());
  EXPECT_TRUE(Close(cross(m, n), Motion(Vec3::UnitZ(), Vec3(-Vec3::UnitY() + Vec3::Zero()))));
}

TEST(SpatialCross, CrossProductsAreCovariant) {
  Rng g(2002);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    const Motion m = random_motion(g), n = random_motion(g);
    const Force f = random_force(g);
    // Products of two transformed vectors, each up to (1+|r|)|.| ~ 5x larger: entries
    // O(100); the default scale (largest entry) covers it.
    ASSERT_TRUE(Close(X.apply(cross(m, n)), cross(X.apply(m), X.apply(n)))) << "sample " << i;
    ASSERT_TRUE(Close(X.apply(cross(m, f)), cross(X.apply(m), X.apply(f)))) << "sample " << i;
  }
}

// =================================================================== rigid-body inertia

TEST(SpatialInertia, TransformedMatchesSixBySixFormula) {
  Rng g(3001);
  for (int i = 0; i < kSamples; ++i) {
    const RigidBodyInertia I = random_inertia(g);
    const Transform X = random_transform(g);
    const Mat6 Xm = X.matrix_motion();
    // Entries up to m |c - r|^2 ~ 10 * 16: the default (largest-entry) scale applies.
    ASSERT_TRUE(Close(I.transformed(X).matrix(), Mat6(X.matrix_force() * I.matrix() * X.inverse().matrix_motion())))
        << "sample " << i;
    ASSERT_TRUE(Close(I.transformed_inverse(X).matrix(), Mat6(Xm.transpose() * I.matrix() * Xm))) << "sample " << i;
    ASSERT_TRUE(Close(I.transformed(X).transformed_inverse(X).matrix(), I.matrix())) << "sample " << i;
    ASSERT_TRUE(Close(I.transformed_inverse(X).transformed(X).matrix(), I.matrix())) << "sample " << i;
    ASSERT_TRUE(Close(I.transformed(X).matrix(), I.transformed_inverse(X.inverse()).matrix())) << "sample " << i;
    // Mass is invariant; the COM moves like a point: c_B = E (c_A - r).
    ASSERT_EQ(I.transformed(X).mass(), I.mass());
    ASSERT_TRUE(Close(I.transformed(X).com(), Vec3(X.E * (I.com() - X.r)))) << "sample " << i;
    // The inertia about the COM is a tensor: it only rotates.
    ASSERT_TRUE(Close(I.transformed(X).inertia_com(), Mat3(X.E * I.inertia_com() * X.E.transpose()))) << "sample " << i;
  }
}

TEST(SpatialInertia, TransformedMomentumIsCovariant) {
  // X* (I v) == (X* I X^-1)(X v): momentum transforms as a force.
  Rng g(3002);
  for (int i = 0; i < kSamples; ++i) {
    const RigidBodyInertia I = random_inertia(g);
    const Transform X = random_transform(g);
    const Motion v = random_motion(g);
    ASSERT_TRUE(Close(X.apply(I * v), I.transformed(X) * X.apply(v))) << "sample " << i;
  }
}

TEST(SpatialInertia, ParallelAxisTheorem) {
  Rng g(3003);
  for (int i = 0; i < kSamples; ++i) {
    const BodyParams b = random_body(g);
    const RigidBodyInertia I = RigidBodyInertia::from_mass_com_inertia(b.mass, b.com, b.Ic);
    const Mat3 expected = b.Ic + b.mass * (b.com.dot(b.com) * Mat3::Identity() - b.com * b.com.transpose());
    ASSERT_TRUE(Close(I.inertia_origin(), expected)) << "sample " << i;
    ASSERT_TRUE(Close(I.inertia_com(), b.Ic)) << "sample " << i;
    ASSERT_TRUE(Close(I.com(), b.com)) << "sample " << i;
    ASSERT_TRUE(Close(I.first_moment(), Vec3(b.mass * b.com))) << "sample " << i;
    ASSERT_EQ(I.mass(), b.mass);
    // unchecked() builds the same thing.
    ASSERT_TRUE(Close(RigidBodyInertia::unchecked(b.mass, b.com, b.Ic).matrix(), I.matrix())) << "sample " << i;
  }
}

TEST(SpatialInertia, CompositeIsSumOfTransformedInertias) {
  // Two bodies rigidly attached to a common frame C, each given in its own frame
  // (B1_X_C = X1, B2_X_C = X2). Moving together with velocity v (in C), body k has
  // velocity Xk v in Bk and momentum Ik (Xk v); brought to C as a force (Xk^T).
  Rng g(3004);
  for (int i = 0; i < kSamples; ++i) {
    const RigidBodyInertia I1 = random_inertia(g), I2 = random_inertia(g);
    const Transform X1 = random_transform(g), X2 = random_transform(g);
    const Motion v = random_motion(g);
    const RigidBodyInertia Ic = I1.transformed_inverse(X1) + I2.transformed_inverse(X2);
    const Force h = X1.apply_inverse(I1 * X1.apply(v)) + X2.apply_inverse(I2 * X2.apply(v));
    ASSERT_TRUE(Close(Ic * v, h)) << "sample " << i;
    // Same composite via C_X_Bk = Xk^-1 and transformed(); and via operator+=.
    RigidBodyInertia Ic2 = I1.transformed(X1.inverse());
    Ic2 += I2.transformed(X2.inverse());
    ASSERT_TRUE(Close(Ic2.matrix(), Ic.matrix())) << "sample " << i;
    // Composite mass and COM: mass-weighted mean of the COMs (in C).
    ASSERT_DOUBLE_EQ(Ic.mass(), I1.mass() + I2.mass());
    const Vec3 c1 = X1.E.transpose() * I1.com() + X1.r, c2 = X2.E.transpose() * I2.com() + X2.r;
    ASSERT_TRUE(Close(Ic.com(), Vec3((I1.mass() * c1 + I2.mass() * c2) / Ic.mass()))) << "sample " << i;
  }
}

TEST(SpatialInertia, KineticEnergyIsFrameInvariant) {
  Rng g(3005);
  for (int i = 0; i < kSamples; ++i) {
    const RigidBodyInertia I = random_inertia(g);
    const Transform X = random_transform(g);
    const Motion v = random_motion(g);
    const double T = I.kinetic_energy(v);
    EXPECT_GT(T, 0.0);
    // 1/2 v.Iv sums terms of size |v|^2 |I|; scale by that (|I| the largest entry of
    // the inertia in either frame), not by T, which may be much smaller.
    const double scale = v.vector().squaredNorm() * (1.0 + X.r.norm()) * (1.0 + X.r.norm()) *
                         std::max(I.matrix().cwiseAbs().maxCoeff(), I.transformed(X).matrix().cwiseAbs().maxCoeff());
    ASSERT_TRUE(CloseScalar(I.transformed(X).kinetic_energy(X.apply(v)), T, kTol, scale)) << "sample " << i;
    ASSERT_TRUE(CloseScalar(T, 0.5 * v.vector().dot(I.matrix() * v.vector()), kTol, scale)) << "sample " << i;
  }
}

TEST(SpatialInertia, OperatorTimesAndFromMatrix) {
  Rng g(3006);
  for (int i = 0; i < kSamples; ++i) {
    const RigidBodyInertia I = random_inertia(g);
    const Motion v = random_motion(g);
    ASSERT_TRUE(Close((I * v).vector(), I.matrix() * v.vector())) << "sample " << i;
    const RigidBodyInertia J = RigidBodyInertia::from_matrix(I.matrix());
    ASSERT_EQ(J.mass(), I.mass());
    ASSERT_TRUE(Close(J.first_moment(), I.first_moment())) << "sample " << i;
    ASSERT_TRUE(Close(J.inertia_origin(), I.inertia_origin())) << "sample " << i;
    ASSERT_TRUE(Close(J.matrix(), I.matrix())) << "sample " << i;
    // The matrix is symmetric with the documented structure [Ibar hx; hx^T m1].
    const Mat6 M = I.matrix();
    ASSERT_TRUE(Close(M, Mat6(M.transpose())));
    ASSERT_TRUE(Close(M.topRightCorner<3, 3>(), skew(I.first_moment())));
    ASSERT_TRUE(Close(M.bottomRightCorner<3, 3>(), Mat3(I.mass() * Mat3::Identity())));
    // A general symmetric matrix is not a rigid-body inertia.
    Mat6 S = random_abi_matrix(g);
    ASSERT_THROW(RigidBodyInertia::from_matrix(S), InvalidArgument) << "sample " << i;
  }
}

TEST(SpatialInertia, FromMatrixRefusesNonInertia) {
  Rng g(3007);
  const Mat6 M = random_inertia(g).matrix();
  const std::string what = "not of the form";
  {
    Mat6 bad = M;  // lower-right block not a multiple of the identity
    bad(4, 4) += 0.5;
    EXPECT_THROW(RigidBodyInertia::from_matrix(bad), InvalidArgument);
    EXPECT_NE(invalid_argument_message([&] { RigidBodyInertia::from_matrix(bad); }).find(what), std::string::npos);
  }
  {
    Mat6 bad = M;  // off-diagonal block not skew
    bad(0, 3) += 0.5;
    bad(3, 0) += 0.5;
    EXPECT_THROW(RigidBodyInertia::from_matrix(bad), InvalidArgument);
  }
  {
    Mat6 bad = M;  // not symmetric (rotational block)
    bad(0, 1) += 0.5;
    EXPECT_THROW(RigidBodyInertia::from_matrix(bad), InvalidArgument);
  }
  {
    Mat6 bad = M;  // non-finite
    bad(2, 2) = std::numeric_limits<double>::quiet_NaN();
    EXPECT_THROW(RigidBodyInertia::from_matrix(bad), InvalidArgument);
  }
}

// =================================================================== articulated-body inertia

TEST(SpatialArticulatedInertia, MatchesDenseFormulas) {
  Rng g(4001);
  for (int i = 0; i < kSamples; ++i) {
    const Mat6 M = random_abi_matrix(g);
    const ArticulatedBodyInertia A(M);
    const Transform X = random_transform(g);
    const Mat6 Xm = X.matrix_motion();
    const Motion v = random_motion(g);
    ASSERT_TRUE(Close(A.transformed_inverse(X).matrix(), Mat6(Xm.transpose() * M * Xm))) << "sample " << i;
    ASSERT_TRUE(Close(A.transformed(X).matrix(), Mat6(X.matrix_force() * M * X.inverse().matrix_motion())))
        << "sample " << i;
    ASSERT_TRUE(Close(A.transformed(X).transformed_inverse(X).matrix(), M)) << "sample " << i;
    ASSERT_TRUE(Close((A * v).vector(), M * v.vector())) << "sample " << i;

    // The downdate of Eq. 12 for a 1-DoF joint with motion subspace s: u = M s, d = s^T M s.
    const Vec6 s = random_vec6(g, 1.0);
    const Vec6 u = M * s;
    const double d = s.dot(u);
    ArticulatedBodyInertia B(M);
    B.subtract_rank1(u, 1.0 / d);
    ASSERT_TRUE(Close(B.matrix(), Mat6(M - u * u.transpose() / d))) << "sample " << i;
    // After the downdate the joint direction carries no inertia: (M - u u^T/d) s = 0.
    // Scale: the two terms are each |u|^2|s|/d in size.
    ASSERT_TRUE(Close(Vec6(B.matrix() * s), Vec6::Zero(), kTol, u.squaredNorm() * s.norm() / d)) << "sample " << i;
  }
}

TEST(SpatialArticulatedInertia, AgreesWithRigidBodyInertia) {
  Rng g(4002);
  for (int i = 0; i < kSamples; ++i) {
    const RigidBodyInertia I = random_inertia(g);
    const Transform X = random_transform(g);
    const ArticulatedBodyInertia A(I);
    ASSERT_TRUE(Close(A.transformed_inverse(X).matrix(), I.transformed_inverse(X).matrix())) << "sample " << i;
    ASSERT_TRUE(Close(A.transformed(X).matrix(), I.transformed(X).matrix())) << "sample " << i;
    ArticulatedBodyInertia S(I);
    S += I;
    S += A;
    ASSERT_TRUE(Close(S.matrix(), Mat6(3.0 * I.matrix()))) << "sample " << i;
  }
}

// =================================================================== accelerations

TEST(SpatialAcceleration, RotationAboutFixedAxisMatchesClosedForm) {
  // Body rotating about the fixed unit axis u through p0 with angular velocity
  // w(t) = (w0 + wd t) u. Its velocity field is v(x) = w x (x - p0), so the spatial
  // velocity is [w; w x (0 - p0)] and, differentiating the field at fixed points,
  // the spatial acceleration is [wdot; wdot x (-p0)]. A body point at x has the
  // classical acceleration wdot x (x - p0) + w x (w x (x - p0)).
  Rng g(5001);
  for (int i = 0; i < kSamples; ++i) {
    const Vec3 u = random_unit_quat(g).vec().normalized();
    const Vec3 p0 = random_vec3(g, 2.0), x = random_vec3(g, 2.0);
    const double w0 = uniform(g, -3.0, 3.0), wd_mag = uniform(g, -3.0, 3.0), t = uniform(g, 0.0, 1.0);
    const Vec3 w = (w0 + wd_mag * t) * u, wd = wd_mag * u;
    const Motion v(w, w.cross(-p0));
    const Motion a(wd, wd.cross(-p0));
    const Vec3 expected = wd.cross(x - p0) + w.cross(w.cross(x - p0));
    ASSERT_TRUE(Close(classical_acceleration(v, a, x), expected)) << "sample " << i;
    ASSERT_TRUE(Close(point_velocity(v, x), Vec3(w.cross(x - p0)))) << "sample " << i;
    // A point on the axis does not move at all. The result is ~0 by cancellation of
    // terms of size |wd|(|p0| + |x|) + |w|^2 (|p0| + |x|) <= (3 + 36) * (3.5 + 4.2) < 300.
    ASSERT_TRUE(Close(classical_acceleration(v, a, Vec3(p0 + 0.7 * u)), Vec3::Zero(), kTol, 300.0)) << "sample " << i;
  }
}

TEST(SpatialAcceleration, FiniteDifferenceAlongIntegratedTrajectory) {
  // General case: spatial velocity v(t) = v0 + a t with constant spatial acceleration
  // a (all in one fixed frame); a = 0 is constant-velocity screw motion. A body point
  // follows p' = nu(t) + w(t) x p(t). Integrate that ODE with RK4 from p(0) = x and
  // differentiate the point's velocity u(t) = point_velocity(v(t), p(t)) numerically.
  //
  // FD tolerance: 5-point stencil with h = 1e-3 has truncation h^4/30 |u^(5)| (~1e-12
  // * O(100) here) and rounding ~eps |u| / h (~1e-12); the RK4 position error per step
  // of h is O(h^5 |w|^5 |p|) ~ 1e-13, divided by h in the stencil: ~1e-10. 1e-8
  // relative keeps a 100x margin; a wrong formula (e.g. a missing w x nu) is O(1).
  const double h = 1e-3, fd_tol = 1e-8;
  auto velocity_at = [](const Motion& v0, const Motion& a, double t) { return v0 + a * t; };
  auto rk4 = [&](const Motion& v0, const Motion& a, Vec3 p, double t, double dt) {
    auto f = [&](double tt, const Vec3& q) { return point_velocity(velocity_at(v0, a, tt), q); };
    const Vec3 k1 = f(t, p), k2 = f(t + dt / 2, p + dt / 2 * k1), k3 = f(t + dt / 2, p + dt / 2 * k2),
               k4 = f(t + dt, p + dt * k3);
    return Vec3(p + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4));
  };
  Rng g(5002);
  for (int i = 0; i < kSamples; ++i) {
    const Motion v0 = random_motion(g);
    const Motion a = (i % 2 == 0) ? Motion::Zero() : random_motion(g);  // even: pure screw motion
    const Vec3 x = random_vec3(g, 2.0);
    Vec3 u[5];  // u at t = -2h, -h, 0, h, 2h
    Vec3 p = x;
    u[2] = point_velocity(velocity_at(v0, a, 0.0), p);
    for (int k = 1; k <= 2; ++k) {
      p = rk4(v0, a, p, (k - 1) * h, h);
      u[2 + k] = point_velocity(velocity_at(v0, a, k * h), p);
    }
    p = x;
    for (int k = 1; k <= 2; ++k) {
      p = rk4(v0, a, p, -(k - 1) * h, -h);
      u[2 - k] = point_velocity(velocity_at(v0, a, -k * h), p);
    }
    const Vec3 fd = (-u[4] + 8.0 * u[3] - 8.0 * u[1] + u[0]) / (12.0 * h);
    const Vec3 acc = classical_acceleration(v0, a, x);
    ASSERT_TRUE(Close(acc, fd, fd_tol)) << "sample " << i;
    if (i % 2 == 0) {
      // Constant spatial velocity: the point still accelerates, w x (nu + w x x).
      const Vec3 centripetal = v0.angular.cross(point_velocity(v0, x));
      ASSERT_TRUE(Close(acc, centripetal)) << "sample " << i;
      EXPECT_GT(acc.norm(), 1e-6) << "sample " << i;
    }
  }
}

TEST(SpatialAcceleration, SpatialInvertsClassicalAtOrigin) {
  Rng g(5003);
  for (int i = 0; i < kSamples; ++i) {
    const Motion v = random_motion(g), a = random_motion(g);
    const Vec3 wd = random_vec3(g, 2.0), c = random_vec3(g, 2.0);
    const Motion s = spatial_acceleration(v, wd, c);
    ASSERT_TRUE(Close(s.angular, wd)) << "sample " << i;
    ASSERT_TRUE(Close(classical_acceleration(v, s), c)) << "sample " << i;
    ASSERT_TRUE(Close(spatial_acceleration(v, a.angular, classical_acceleration(v, a)), a)) << "sample " << i;
  }
}

TEST(SpatialAcceleration, ClassicalAccelerationIsCovariant) {
  // Spatial accelerations transform like motions (fixed frames), and the classical
  // acceleration of a body point is then an ordinary 3-D vector.
  Rng g(5004);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    const Motion v = random_motion(g), a = random_motion(g);
    const Vec3 xA = random_vec3(g, 2.0);
    const Vec3 xB = X.E * (xA - X.r);
    ASSERT_TRUE(Close(classical_acceleration(v, a, xA),
                      Vec3(X.E.transpose() * classical_acceleration(X.apply(v), X.apply(a), xB))))
        << "sample " << i;
  }
}

// =================================================================== named constructors

Mat3 featherstone_rotx(double a) {
  const double c = std::cos(a), s = std::sin(a);
  Mat3 E;
  E << 1, 0, 0, 0, c, s, 0, -s, c;
  return E;
}
Mat3 featherstone_roty(double a) {
  const double c = std::cos(a), s = std::sin(a);
  Mat3 E;
  E << c, 0, -s, 0, 1, 0, s, 0, c;
  return E;
}
Mat3 featherstone_rotz(double a) {
  const double c = std::cos(a), s = std::sin(a);
  Mat3 E;
  E << c, s, 0, -s, c, 0, 0, 0, 1;
  return E;
}

TEST(SpatialConstructors, ElementaryRotationsAgreeWithAxisAngle) {
  Rng g(6001);
  for (int i = 0; i < kSamples; ++i) {
    const double a = uniform(g, -4.0, 4.0);
    ASSERT_TRUE(Transform::rot_x(a).isApprox(Transform::axis_angle(Vec3::UnitX(), a), kTol)) << "sample " << i;
    ASSERT_TRUE(Transform::rot_y(a).isApprox(Transform::axis_angle(Vec3::UnitY(), a), kTol)) << "sample " << i;
    ASSERT_TRUE(Transform::rot_z(a).isApprox(Transform::axis_angle(Vec3::UnitZ(), a), kTol)) << "sample " << i;
    ASSERT_TRUE(Close(Transform::rot_x(a).E, featherstone_rotx(a)));
    ASSERT_TRUE(Close(Transform::rot_y(a).E, featherstone_roty(a)));
    ASSERT_TRUE(Close(Transform::rot_z(a).E, featherstone_rotz(a)));
    // Frame B rotated by +a about z: A's x axis, seen from B, points at angle -a.
    ASSERT_TRUE(Close(Vec3(Transform::rot_z(a).E * Vec3::UnitX()), Vec3(std::cos(a), -std::sin(a), 0.0)));
    // The axis need not be unit; its direction is what counts.
    const Vec3 axis = random_vec3(g, 3.0);
    ASSERT_TRUE(Transform::axis_angle(axis, a).isApprox(Transform::axis_angle(axis.normalized(), a), kTol));
    ASSERT_TRUE(Transform::axis_angle(axis, a).r.isZero(0.0));
  }
}

TEST(SpatialConstructors, RotXActsOnBothHalvesOfAMotion) {
  Rng g(6002);
  for (int i = 0; i < kSamples; ++i) {
    const double a = uniform(g, -4.0, 4.0);
    const Motion m = random_motion(g);
    const Force f = random_force(g);
    const Mat3 E = featherstone_rotx(a);
    const Motion mB = Transform::rot_x(a).apply(m);
    ASSERT_TRUE(Close(mB.angular, Vec3(E * m.angular))) << "sample " << i;
    ASSERT_TRUE(Close(mB.linear, Vec3(E * m.linear))) << "sample " << i;
    const Force fB = Transform::rot_x(a).apply(f);
    ASSERT_TRUE(Close(fB.angular, Vec3(E * f.angular))) << "sample " << i;
    ASSERT_TRUE(Close(fB.linear, Vec3(E * f.linear))) << "sample " << i;
  }
}

TEST(SpatialConstructors, FromQuaternionAgreesWithAxisAngle) {
  Rng g(6003);
  for (int i = 0; i < kSamples; ++i) {
    const Vec3 u = random_unit_quat(g).vec().normalized();
    const double theta = uniform(g, -3.0, 3.0);
    const Vec3 p = random_vec3(g, 2.0);
    // q = (cos(theta/2), sin(theta/2) u), written out by hand.
    const Quat q(std::cos(theta / 2), std::sin(theta / 2) * u.x(), std::sin(theta / 2) * u.y(),
                 std::sin(theta / 2) * u.z());
    const Transform Xq = Transform::from_quaternion(q, p);
    const Transform Xa = Transform::translation(p);
    ASSERT_TRUE(Xq.isApprox(Transform::axis_angle(u, theta) * Xa, kTol)) << "sample " << i;
    ASSERT_TRUE(Close(Xq.rotation(), Mat3(Eigen::AngleAxisd(theta, u).toRotationMatrix()))) << "sample " << i;
    ASSERT_TRUE(Close(Xq.translation(), p)) << "sample " << i;
    // q and -q are the same rotation.
    const Quat mq(-q.w(), -q.x(), -q.y(), -q.z());
    ASSERT_TRUE(Transform::from_quaternion(mq, p).isApprox(Xq, kTol)) << "sample " << i;
    // from_pose(R, p) is the same frame.
    ASSERT_TRUE(Transform::from_pose(Xq.rotation(), p).isApprox(Xq, kTol)) << "sample " << i;
  }
}

TEST(SpatialConstructors, FromRpyXyzFollowsUrdf) {
  Rng g(6004);
  auto Rx = [](double a) {
    Mat3 R;
    R << 1, 0, 0, 0, std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a);
    return R;
  };
  auto Ry = [](double a) {
    Mat3 R;
    R << std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a);
    return R;
  };
  auto Rz = [](double a) {
    Mat3 R;
    R << std::cos(a), -std::sin(a), 0, std::sin(a), std::cos(a), 0, 0, 0, 1;
    return R;
  };
  for (int i = 0; i < kSamples; ++i) {
    const Vec3 rpy(uniform(g, -3.1, 3.1), uniform(g, -1.5, 1.5), uniform(g, -3.1, 3.1));
    const Vec3 xyz = random_vec3(g, 2.0);
    const Transform X = Transform::from_rpy_xyz(rpy, xyz);
    const Mat3 R = Rz(rpy.z()) * Ry(rpy.y()) * Rx(rpy.x());
    ASSERT_TRUE(Close(X.rotation(), R)) << "sample " << i;
    ASSERT_TRUE(Close(X.E, Mat3(R.transpose()))) << "sample " << i;
    ASSERT_TRUE(Close(X.translation(), xyz)) << "sample " << i;
    // The coordinate transform of the URDF pose is xlt(xyz) followed by the rotation.
    ASSERT_TRUE(X.isApprox(Transform(R.transpose(), Vec3::Zero()) * Transform::translation(xyz), kTol));
  }
  // A single hand-derived case: yaw of +90 deg, child frame's x axis is parent's y.
  const Transform Y = Transform::from_rpy_xyz(Vec3(0, 0, M_PI / 2), Vec3(1, 2, 3));
  EXPECT_TRUE(Close(Vec3(Y.rotation() * Vec3::UnitX()), Vec3::UnitY()));
  EXPECT_TRUE(Close(Y.translation(), Vec3(1, 2, 3)));
}

TEST(SpatialConstructors, HomogeneousMatrix) {
  Rng g(6005);
  for (int i = 0; i < kSamples; ++i) {
    const Transform X = random_transform(g);
    const Eigen::Matrix4d T = X.homogeneous();
    ASSERT_TRUE(Close(T.topLeftCorner<3, 3>(), X.rotation())) << "sample " << i;
    ASSERT_TRUE(Close(T.topRightCorner<3, 1>(), X.translation())) << "sample " << i;
    ASSERT_TRUE(Close(T.bottomRows<1>(), Eigen::RowVector4d(0, 0, 0, 1))) << "sample " << i;
    // T maps B coordinates of a point to A coordinates; X's point map goes A -> B.
    const Vec3 xA = random_vec3(g, 2.0);
    const Vec3 xB = X.E * (xA - X.r);
    ASSERT_TRUE(Close(Vec3((T * xB.homogeneous()).head<3>()), xA)) << "sample " << i;
    // Composition: homogeneous(C_X_B * B_X_A) = T_A<-B T_B<-C = hom(X1) hom(X2).
    const Transform X2 = random_transform(g);
    ASSERT_TRUE(Close((X2 * X).homogeneous(), Eigen::Matrix4d(T * X2.homogeneous()))) << "sample " << i;
  }
}

// =================================================================== bad input

TEST(SpatialErrors, NonPositiveMass) {
  const Mat3 Ic = Vec3(0.2, 0.3, 0.4).asDiagonal();
  const Vec3 c(0.1, 0.0, 0.0);
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(0.0, c, Ic), InvalidArgument);
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(-1.0, c, Ic), InvalidArgument);
  EXPECT_NE(invalid_argument_message([&] { RigidBodyInertia::from_mass_com_inertia(0.0, c, Ic); }).find("zero mass"),
            std::string::npos);
  EXPECT_NE(
      invalid_argument_message([&] { RigidBodyInertia::from_mass_com_inertia(-1.0, c, Ic); }).find("negative mass"),
      std::string::npos);

  const InertiaCheck zero = check_inertia(0.0, c, Ic);
  EXPECT_FALSE(zero.valid());
  EXPECT_TRUE(zero.finite);
  EXPECT_TRUE(zero.mass_non_negative);
  EXPECT_FALSE(zero.mass_positive);
  EXPECT_TRUE(zero.symmetric && zero.positive_definite && zero.triangle_inequality);

  const InertiaCheck neg = check_inertia(-1.0, c, Ic);
  EXPECT_FALSE(neg.valid());
  EXPECT_FALSE(neg.mass_non_negative);
  EXPECT_FALSE(neg.mass_positive);
  EXPECT_TRUE(neg.symmetric && neg.positive_definite && neg.triangle_inequality);
  EXPECT_EQ(neg.describe(), "negative mass");
}

TEST(SpatialErrors, TensorNotSymmetric) {
  Mat3 Ic = Vec3(0.2, 0.3, 0.4).asDiagonal();
  Ic(0, 1) = 0.05;  // Ic(1, 0) stays 0
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic), InvalidArgument);
  EXPECT_NE(invalid_argument_message([&] {
              RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic);
            }).find("not symmetric"),
            std::string::npos);
  const InertiaCheck c = check_inertia(1.0, Vec3::Zero(), Ic);
  EXPECT_FALSE(c.valid());
  EXPECT_FALSE(c.symmetric);
  EXPECT_TRUE(c.finite && c.mass_positive);
}

TEST(SpatialErrors, TensorNotPositiveDefinite) {
  // A negative eigenvalue (rotated, so it is not just a diagonal sign).
  Rng g(7001);
  const Mat3 R = random_rotation(g);
  Mat3 Ic = R * Vec3(-0.1, 1.0, 1.0).asDiagonal() * R.transpose();
  Ic = 0.5 * (Ic + Ic.transpose());
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic), InvalidArgument);
  EXPECT_NE(invalid_argument_message([&] {
              RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic);
            }).find("not positive semi-definite"),
            std::string::npos);
  const InertiaCheck c = check_inertia(1.0, Vec3::Zero(), Ic);
  EXPECT_FALSE(c.valid());
  EXPECT_TRUE(c.finite && c.mass_positive && c.symmetric);
  EXPECT_FALSE(c.positive_semidefinite);
  EXPECT_FALSE(c.positive_definite);
  // With one moment negative, the largest exceeds the sum of the other two.
  EXPECT_FALSE(c.triangle_inequality);
  EXPECT_TRUE(Close(c.principal_moments, Vec3(-0.1, 1.0, 1.0)));
}

TEST(SpatialErrors, PointMassIsRefusedByCheckedConstructorOnly) {
  const Mat3 Ic = Mat3::Zero();
  const Vec3 c(0.5, -0.25, 1.0);
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(2.0, c, Ic), InvalidArgument);
  EXPECT_NE(invalid_argument_message([&] { RigidBodyInertia::from_mass_com_inertia(2.0, c, Ic); }).find("singular"),
            std::string::npos);
  const InertiaCheck chk = check_inertia(2.0, c, Ic);
  EXPECT_FALSE(chk.valid());
  EXPECT_TRUE(chk.finite && chk.mass_positive && chk.symmetric && chk.positive_semidefinite && chk.triangle_inequality);
  EXPECT_FALSE(chk.positive_definite);

  // unchecked() accepts it: a point mass at c has Ibar = m (c.c 1 - c c^T).
  RigidBodyInertia I;
  EXPECT_NO_THROW(I = RigidBodyInertia::unchecked(2.0, c, Ic));
  EXPECT_EQ(I.mass(), 2.0);
  EXPECT_TRUE(Close(I.com(), c));
  EXPECT_TRUE(Close(I.inertia_origin(), Mat3(2.0 * (c.dot(c) * Mat3::Identity() - c * c.transpose()))));
  EXPECT_TRUE(Close(I.inertia_com(), Mat3::Zero()));
}

TEST(SpatialErrors, TriangleInequality) {
  const Mat3 Ic = Vec3(1.0, 1.0, 3.0).asDiagonal();
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic), InvalidArgument);
  EXPECT_NE(invalid_argument_message([&] {
              RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic);
            }).find("triangle inequality"),
            std::string::npos);
  const InertiaCheck c = check_inertia(1.0, Vec3::Zero(), Ic);
  EXPECT_FALSE(c.valid());
  EXPECT_TRUE(c.finite && c.mass_positive && c.symmetric && c.positive_definite);
  EXPECT_FALSE(c.triangle_inequality);
  EXPECT_TRUE(Close(c.principal_moments, Vec3(1.0, 1.0, 3.0)));
  // The limiting case (a thin disc / rod-like equality) is accepted.
  EXPECT_TRUE(check_inertia(1.0, Vec3::Zero(), Mat3(Vec3(1.0, 1.0, 2.0).asDiagonal())).valid());
}

TEST(SpatialErrors, NonFiniteInertia) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const Mat3 Ic = Vec3(0.2, 0.3, 0.4).asDiagonal();
  Mat3 Ic_inf = Ic;
  Ic_inf(1, 1) = inf;

  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(nan, Vec3::Zero(), Ic), InvalidArgument);
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic_inf), InvalidArgument);
  EXPECT_THROW(RigidBodyInertia::from_mass_com_inertia(1.0, Vec3(0, nan, 0), Ic), InvalidArgument);
  const std::string msg_nan =
      invalid_argument_message([&] { RigidBodyInertia::from_mass_com_inertia(nan, Vec3::Zero(), Ic); });
  EXPECT_NE(msg_nan.find("non-finite"), std::string::npos) << msg_nan;
  // A NaN mass is not a negative mass: the message names only the real problem.
  EXPECT_EQ(msg_nan.find("negative"), std::string::npos) << msg_nan;
  const std::string msg_inf =
      invalid_argument_message([&] { RigidBodyInertia::from_mass_com_inertia(1.0, Vec3::Zero(), Ic_inf); });
  EXPECT_NE(msg_inf.find("non-finite"), std::string::npos) << msg_inf;

  for (const InertiaCheck& c : {check_inertia(nan, Vec3::Zero(), Ic), check_inertia(1.0, Vec3::Zero(), Ic_inf)}) {
    EXPECT_FALSE(c.finite);
    EXPECT_FALSE(c.valid());
    EXPECT_EQ(c.describe().find("non-finite"), 0u) << c.describe();
  }
}

TEST(SpatialErrors, BadRotationInput) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Non-unit quaternion.
  const Quat q(1.0, 0.5, 0.0, 0.0);
  EXPECT_THROW(Transform::from_quaternion(q), InvalidArgument);
  const std::string msg_q = invalid_argument_message([&] { Transform::from_quaternion(q); });
  EXPECT_NE(msg_q.find("not unit"), std::string::npos) << msg_q;
  EXPECT_NO_THROW(Transform::from_quaternion(q.normalized()));
  EXPECT_THROW(Transform::from_quaternion(Quat(nan, 0, 0, 0)), InvalidArgument);
  EXPECT_THROW(Transform::from_quaternion(Quat::Identity(), Vec3(0, nan, 0)), InvalidArgument);
  // Zero axis.
  EXPECT_THROW(Transform::axis_angle(Vec3::Zero(), 0.3), InvalidArgument);
  const std::string msg_axis = invalid_argument_message([&] { Transform::axis_angle(Vec3::Zero(), 0.3); });
  EXPECT_NE(msg_axis.find("zero-length axis"), std::string::npos) << msg_axis;
  // Non-finite angle / axis.
  EXPECT_THROW(Transform::axis_angle(Vec3::UnitX(), nan), InvalidArgument);
  const std::string msg_nan = invalid_argument_message([&] { Transform::axis_angle(Vec3::UnitX(), nan); });
  EXPECT_NE(msg_nan.find("non-finite"), std::string::npos) << msg_nan;
  EXPECT_THROW(Transform::axis_angle(Vec3(nan, 0, 1), 0.3), InvalidArgument);
}

// =================================================================== printing, equality

TEST(SpatialMisc, Printing) {
  std::ostringstream sm, sf, sx, si;
  sm << Motion(Vec3(1.5, -2.25, 3.0), Vec3(4.5, 5.0, -6.75));
  sf << Force(Vec3(0.5, 1.25, -7.0), Vec3(8.0, -9.5, 10.0));
  sx << Transform(featherstone_rotz(0.0), Vec3(1.5, -2.5, 3.25));
  si << RigidBodyInertia::from_mass_com_inertia(2.5, Vec3(0.5, 0.0, -0.25), Vec3(0.25, 0.5, 0.625).asDiagonal());
  const std::string m = sm.str(), f = sf.str(), x = sx.str(), in = si.str();
  EXPECT_NE(m.find("Motion("), std::string::npos) << m;
  for (const char* s : {"1.5", "-2.25", "4.5", "-6.75"}) EXPECT_NE(m.find(s), std::string::npos) << m;
  EXPECT_NE(f.find("Force("), std::string::npos) << f;
  for (const char* s : {"0.5", "1.25", "-7", "-9.5", "10"}) EXPECT_NE(f.find(s), std::string::npos) << f;
  EXPECT_NE(x.find("Transform("), std::string::npos) << x;
  for (const char* s : {"1.5", "-2.5", "3.25"}) EXPECT_NE(x.find(s), std::string::npos) << x;
  EXPECT_NE(in.find("RigidBodyInertia("), std::string::npos) << in;
  for (const char* s : {"mass=2.5", "-0.25"}) EXPECT_NE(in.find(s), std::string::npos) << in;
}

TEST(SpatialMisc, IsApproxBothWays) {
  Rng g(8001);
  for (int i = 0; i < kSamples; ++i) {
    const Motion m = random_motion(g);
    const Force f = random_force(g);
    const Transform X = random_transform(g);
    const RigidBodyInertia I = random_inertia(g);
    // A relative perturbation of 1e-14 is inside the default 1e-12; 1e-6 is not.
    const double tiny = 1e-14, big = 1e-6;
    const Motion m1(m.angular * (1 + tiny), m.linear), m2(m.angular * (1 + big), m.linear);
    const Force f1(f.angular, f.linear * (1 - tiny)), f2(f.angular, f.linear * (1 - big));
    const Transform X1(X.E, X.r * (1 + tiny)), X2(X.E, X.r * (1 + big) + Vec3::Constant(big));
    const RigidBodyInertia I1 =
        RigidBodyInertia::from_parameters(I.mass() * (1 + tiny), I.first_moment(), I.inertia_origin());
    const RigidBodyInertia I2 =
        RigidBodyInertia::from_parameters(I.mass() * (1 + big), I.first_moment(), I.inertia_origin());
    ASSERT_TRUE(m.isApprox(m1) && m1.isApprox(m)) << "sample " << i;
    ASSERT_FALSE(m.isApprox(m2) || m2.isApprox(m)) << "sample " << i;
    ASSERT_TRUE(f.isApprox(f1) && f1.isApprox(f)) << "sample " << i;
    ASSERT_FALSE(f.isApprox(f2) || f2.isApprox(f)) << "sample " << i;
    ASSERT_TRUE(X.isApprox(X1) && X1.isApprox(X)) << "sample " << i;
    ASSERT_FALSE(X.isApprox(X2) || X2.isApprox(X)) << "sample " << i;
    ASSERT_TRUE(I.isApprox(I1) && I1.isApprox(I)) << "sample " << i;
    ASSERT_FALSE(I.isApprox(I2) || I2.isApprox(I)) << "sample " << i;
    // Explicit looser tolerance accepts the bigger perturbation both ways.
    ASSERT_TRUE(m.isApprox(m2, 1e-5) && m2.isApprox(m, 1e-5)) << "sample " << i;
    ASSERT_TRUE(X.isApprox(X2, 1e-5) && X2.isApprox(X, 1e-5)) << "sample " << i;
  }
  // Rotation differences are seen too.
  EXPECT_FALSE(Transform::rot_x(0.1).isApprox(Transform::rot_x(0.1 + 1e-6)));
  EXPECT_TRUE(Transform::Identity().isApprox(Transform::rot_x(0.0)));
}

TEST(SpatialMisc, VectorArithmetic) {
  Rng g(8002);
  for (int i = 0; i < kSamples; ++i) {
    const Motion a = random_motion(g), b = random_motion(g);
    const Force f = random_force(g), h = random_force(g);
    const double s = uniform(g, -3.0, 3.0);
    ASSERT_TRUE(Close((a + b).vector(), a.vector() + b.vector()));
    ASSERT_TRUE(Close((a - b).vector(), a.vector() - b.vector()));
    ASSERT_TRUE(Close((-a).vector(), -a.vector()));
    ASSERT_TRUE(Close((s * a).vector(), s * a.vector()));
    ASSERT_TRUE(Close((f + h).vector(), f.vector() + h.vector()));
    ASSERT_TRUE(Close((f * s).vector(), s * f.vector()));
    Motion c = a;
    c += b;
    c -= b;
    ASSERT_TRUE(Close(c, a));
    ASSERT_TRUE(Close(Motion(a.vector()), a));
    ASSERT_TRUE(Close(Force(f.vector()), f));
  }
  Motion z = Motion(Vec3::Ones(), Vec3::Ones());
  z.setZero();
  EXPECT_TRUE(z.vector().isZero(0.0));
  EXPECT_TRUE(Force::Zero().vector().isZero(0.0));
  EXPECT_TRUE(RigidBodyInertia::Zero().matrix().isZero(0.0));
}

}  // namespace
