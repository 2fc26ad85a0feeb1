// Procedural model builders (see include/plucker/model/builders.hpp).
#include "plucker/model/builders.hpp"

#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>

#include "plucker/errors.hpp"

namespace plucker {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
using Rng = std::mt19937_64;

double uniform(Rng& rng, double lo, double hi) { return detail::uniform(rng, lo, hi); }
/// 1 +- fraction.
double perturb(Rng& rng, double fraction) { return 1.0 + uniform(rng, -fraction, fraction); }

/// Solid cylinder (rod) of mass m, length L and radius rad along unit direction dir, COM at com.
RigidBodyInertia rod(double m, double L, double rad, const Vec3& dir, const Vec3& com) {
  const Vec3 d = dir.normalized();
  const Mat3 ddT = d * d.transpose();
  const double axial = 0.5 * m * rad * rad;
  const double transverse = m * (3.0 * rad * rad + L * L) / 12.0;
  const Mat3 Ic = axial * ddT + transverse * (Mat3::Identity() - ddT);
  return RigidBodyInertia::from_mass_com_inertia(m, com, Ic);
}

/// Solid box of mass m and edge lengths dims (along the body x, y, z axes), COM at com.
RigidBodyInertia box(double m, const Vec3& dims, const Vec3& com) {
  const Vec3 s = dims.cwiseProduct(dims);
  const Mat3 Ic = (m / 12.0) * Vec3(s.y() + s.z(), s.x() + s.z(), s.x() + s.y()).asDiagonal().toDenseMatrix();
  return RigidBodyInertia::from_mass_com_inertia(m, com, Ic);
}

/// Rotation matrix exp(w) of a rotation vector.
Mat3 rotation(const Vec3& w) { return detail::quat_exp(w).toRotationMatrix(); }

Vec3 random_unit(Rng& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vec3 v;
  do v = Vec3(n(rng), n(rng), n(rng));
  while (v.norm() < 1e-3);
  return v.normalized();
}

/// Limits of a 1-DoF joint.
JointLimits limits1(double lower, double upper, double velocity, double effort) {
  JointLimits l;
  l.lower = VecX::Constant(1, lower);
  l.upper = VecX::Constant(1, upper);
  l.velocity = VecX::Constant(1, velocity);
  l.effort = VecX::Constant(1, effort);
  return l;
}

/// Limits (lower, upper) mirrored for the right side of the body: roll/yaw ranges swap sign.
JointLimits mirrored(const JointLimits& l, bool mirror) {
  if (!mirror) return l;
  JointLimits m = l;
  m.lower = -l.upper;
  m.upper = -l.lower;
  return m;
}

/// A small link between co-located joints (e.g. inside a 3-DoF hip).
RigidBodyInertia small_link(double m, double size) { return box(m, Vec3::Constant(size), Vec3::Zero()); }

Transform xlt(const Vec3& p) { return Transform::translation(p); }
}  // namespace

// ------------------------------------------------------------------------------ chain
Model build_chain(int n, const std::vector<Vec3>& axes, std::uint64_t seed) {
  if (n < 0) throw InvalidArgument("build_chain: n = " + std::to_string(n) + " must be >= 0");
  if (axes.empty()) throw InvalidArgument("build_chain: empty list of joint axes");
  std::vector<JointModel> joints;
  std::vector<Vec3> unit_axes;
  for (const Vec3& a : axes) {
    joints.push_back(make_revolute(a));  // validates (zero-length / non-finite axis)
    unit_axes.push_back(a.normalized());
  }
  Rng rng(seed);
  Model model("base");
  model.set_name("chain");
  Vec3 prev_dir = Vec3::UnitX();
  double prev_len = 0.0;
  for (int k = 0; k < n; ++k) {
    const std::size_t a = static_cast<std::size_t>(k) % axes.size();
    const Vec3& axis = unit_axes[a];
    // Link direction: orthogonal to the joint axis, preferring x.
    const Vec3 ref = std::abs(axis.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitZ();
    const Vec3 dir = (ref - ref.dot(axis) * axis).normalized();
    const double len = uniform(rng, 0.1, 0.3);
    const double mass = uniform(rng, 0.5, 2.0);
    const double radius = uniform(rng, 0.02, 0.04);
    const Vec3 com =
        0.5 * len * dir + Vec3(uniform(rng, -0.01, 0.01), uniform(rng, -0.01, 0.01), uniform(rng, -0.01, 0.01));
    Vec3 w;
    for (int c = 0; c < 3; ++c) w[c] = uniform(rng, -0.1, 0.1) / std::sqrt(3.0);
    const Transform X_tree = Transform::from_pose(rotation(w), prev_len * prev_dir);
    const std::string id = std::to_string(k + 1);
    model.add_body(k, joints[a], X_tree, rod(mass, len, radius, dir, com), "link" + id, "joint" + id);
    prev_dir = dir;
    prev_len = len;
  }
  return model;
}

// ------------------------------------------------------------------------------ autoTree-like
Model build_random_tree(int n, double bf, double skew, double taper, std::uint64_t seed) {
  if (n < 0) throw InvalidArgument("build_random_tree: n = " + std::to_string(n) + " must be >= 0");
  if (!std::isfinite(bf) || bf < 1.0)
    throw InvalidArgument("build_random_tree: branching factor " + std::to_string(bf) + " must be finite and >= 1");
  if (!std::isfinite(taper) || taper <= 0.0)
    throw InvalidArgument("build_random_tree: taper " + std::to_string(taper) + " must be finite and > 0");
  if (!std::isfinite(skew)) throw InvalidArgument("build_random_tree: non-finite skew");
  Rng rng(seed);
  Model model("base");
  model.set_name("random_tree");
  std::vector<double> len(n + 1, 0.0);
  const double cbf = std::ceil(bf);
  for (int i = 1; i <= n; ++i) {
    const int parent = static_cast<int>(std::floor((i - 2 + cbf) / bf));
    const double scale = std::pow(taper, i - 1);
    len[i] = scale * perturb(rng, 0.03);
    const double mass = scale * perturb(rng, 0.03);
    const int depth = parent == 0 ? 1 : model.depth(parent) + 1;
    const double angle = skew * (depth - 1);
    const Vec3 axis(0.0, -std::sin(angle), std::cos(angle));  // Rx(angle) z
    const Transform X_tree = parent == 0 ? Transform() : xlt(Vec3(len[parent], 0.0, 0.0));
    const Mat3 Ic = mass * len[i] * len[i] * Vec3(0.0025, 1.015 / 12.0, 1.015 / 12.0).asDiagonal().toDenseMatrix();
    const std::string id = std::to_string(i);
    model.add_body(parent, make_revolute(axis), X_tree,
                   RigidBodyInertia::from_mass_com_inertia(mass, Vec3(0.5 * len[i], 0.0, 0.0), Ic), "link" + id,
                   "joint" + id);
  }
  return model;
}

// ------------------------------------------------------------------------------ humanoid
Model build_humanoid(std::uint64_t seed, bool floating_base) {
  Rng rng(seed);
  auto L = [&](double nominal) { return nominal * perturb(rng, 0.03); };  // lengths +-3 %
  auto M = [&](double nominal) { return nominal * perturb(rng, 0.05); };  // masses +-5 %
  Model model("world");
  model.set_name(floating_base ? "humanoid" : "humanoid_fixed");

  const JointModel RX = JointRevoluteX{}, RY = JointRevoluteY{}, RZ = JointRevoluteZ{};
  const int pelvis = floating_base
                         ? model.add_body(0, JointFreeFlyer{}, Transform(),
                                          box(M(9.0), Vec3(0.2, 0.3, 0.15), Vec3::Zero()), "pelvis", "root_joint")
                         : model.add_body(0, JointFixed{}, xlt(Vec3(0.0, 0.0, 1.0)),
                                          box(M(9.0), Vec3(0.2, 0.3, 0.15), Vec3::Zero()), "pelvis", "root_joint");

  // Torso and head.
  const int torso_link = model.add_body(pelvis, RZ, xlt(Vec3(0.0, 0.0, L(0.12))), small_link(M(1.0), 0.1), "torso_link",
                                        "torso_z", limits1(-1.0, 1.0, 6.0, 150.0));
  const double torso_h = L(0.45);
  const int torso =
      model.add_body(torso_link, RY, Transform(), box(M(18.0), Vec3(0.2, 0.32, torso_h), Vec3(0.0, 0.0, 0.5 * torso_h)),
                     "torso", "torso_y", limits1(-0.5, 1.2, 6.0, 150.0));
  const int neck = model.add_body(torso, RZ, xlt(Vec3(0.0, 0.0, torso_h)), small_link(M(0.5), 0.06), "neck", "neck_z",
                                  limits1(-1.2, 1.2, 6.0, 15.0));
  model.add_body(neck, RY, Transform(), box(M(4.5), Vec3(0.18, 0.16, 0.22), Vec3(0.0, 0.0, L(0.11))), "head", "neck_y",
                 limits1(-0.6, 0.8, 6.0, 15.0));

  // Arms.
  for (int side = 0; side < 2; ++side) {
    const bool right = side == 1;
    const double s = right ? -1.0 : 1.0;
    const std::string p = right ? "r_" : "l_";
    const int sh1 = model.add_body(torso, RY, xlt(Vec3(0.0, s * L(0.2), 0.85 * torso_h)), small_link(M(0.4), 0.08),
                                   p + "shoulder_link1", p + "shoulder_y", limits1(-3.0, 1.2, 8.0, 50.0));
    const int sh2 = model.add_body(sh1, RX, Transform(), small_link(M(0.4), 0.08), p + "shoulder_link2",
                                   p + "shoulder_x", mirrored(limits1(-0.3, 2.8, 8.0, 50.0), right));
    const double upper_len = L(0.28);
    const int upper = model.add_body(sh2, RZ, Transform(),
                                     rod(M(2.0), upper_len, 0.04, Vec3::UnitZ(), Vec3(0.0, 0.0, -0.5 * upper_len)),
                                     p + "upper_arm", p + "shoulder_z", mirrored(limits1(-1.5, 1.5, 8.0, 30.0), right));
    const double fore_len = L(0.25);
    const int fore = model.add_body(upper, RY, xlt(Vec3(0.0, 0.0, -upper_len)),
                                    rod(M(1.2), fore_len, 0.035, Vec3::UnitZ(), Vec3(0.0, 0.0, -0.5 * fore_len)),
                                    p + "forearm", p + "elbow", limits1(-2.5, 0.0, 8.0, 30.0));
    const int w1 = model.add_body(fore, RZ, xlt(Vec3(0.0, 0.0, -fore_len)), small_link(M(0.2), 0.05), p + "wrist_link1",
                                  p + "wrist_z", mirrored(limits1(-1.5, 1.5, 10.0, 10.0), right));
    const int w2 = model.add_body(w1, RX, Transform(), small_link(M(0.2), 0.05), p + "wrist_link2", p + "wrist_x",
                                  mirrored(limits1(-0.5, 0.5, 10.0, 10.0), right));
    const double hand_len = L(0.16);
    const int hand =
        model.add_body(w2, RY, Transform(), box(M(0.5), Vec3(0.04, 0.08, hand_len), Vec3(0.0, 0.0, -0.5 * hand_len)),
                       p + "hand", p + "wrist_y", limits1(-1.2, 1.2, 10.0, 10.0));
    model.add_frame(p + "hand_tip", hand, xlt(Vec3(0.0, 0.0, -hand_len)));
  }

  // Legs.
  for (int side = 0; side < 2; ++side) {
    const bool right = side == 1;
    const double s = right ? -1.0 : 1.0;
    const std::string p = right ? "r_" : "l_";
    const int h1 = model.add_body(pelvis, RZ, xlt(Vec3(0.0, s * L(0.09), -L(0.08))), small_link(M(0.6), 0.08),
                                  p + "hip_link1", p + "hip_z", mirrored(limits1(-0.7, 0.7, 10.0, 200.0), right));
    const int h2 = model.add_body(h1, RX, Transform(), small_link(M(0.6), 0.08), p + "hip_link2", p + "hip_x",
                                  mirrored(limits1(-0.5, 0.8, 10.0, 200.0), right));
    const double thigh_len = L(0.42);
    const int thigh = model.add_body(h2, RY, Transform(),
                                     rod(M(7.0), thigh_len, 0.07, Vec3::UnitZ(), Vec3(0.0, 0.0, -0.45 * thigh_len)),
                                     p + "thigh", p + "hip_y", limits1(-2.0, 0.6, 10.0, 200.0));
    const double shank_len = L(0.40);
    const int shank = model.add_body(thigh, RY, xlt(Vec3(0.0, 0.0, -thigh_len)),
                                     rod(M(3.5), shank_len, 0.05, Vec3::UnitZ(), Vec3(0.0, 0.0, -0.45 * shank_len)),
                                     p + "shank", p + "knee", limits1(0.0, 2.4, 10.0, 250.0));
    const int ankle = model.add_body(shank, RY, xlt(Vec3(0.0, 0.0, -shank_len)), small_link(M(0.3), 0.05),
                                     p + "ankle_link", p + "ankle_y", limits1(-0.8, 0.6, 12.0, 100.0));
    const double foot_h = L(0.08);
    const int foot =
        model.add_body(ankle, RX, Transform(), box(M(1.0), Vec3(0.22, 0.1, 0.06), Vec3(0.04, 0.0, -0.6 * foot_h)),
                       p + "foot", p + "ankle_x", mirrored(limits1(-0.4, 0.4, 12.0, 100.0), right));
    model.add_frame(p + "sole", foot, xlt(Vec3(0.04, 0.0, -foot_h)));
  }
  return model;
}

// ------------------------------------------------------------------------------ quadruped
Model build_quadruped(std::uint64_t seed, bool floating_base) {
  Rng rng(seed);
  auto L = [&](double nominal) { return nominal * perturb(rng, 0.03); };
  auto M = [&](double nominal) { return nominal * perturb(rng, 0.05); };
  Model model("world");
  model.set_name(floating_base ? "quadruped" : "quadruped_fixed");
  const RigidBodyInertia trunk_inertia = box(M(25.0), Vec3(0.55, 0.3, 0.18), Vec3(L(0.01), 0.0, 0.0));
  const int trunk =
      floating_base ? model.add_body(0, JointFreeFlyer{}, Transform(), trunk_inertia, "trunk", "root_joint")
                    : model.add_body(0, JointFixed{}, xlt(Vec3(0.0, 0.0, 0.6)), trunk_inertia, "trunk", "root_joint");
  const char* names[4] = {"LF", "RF", "LH", "RH"};
  for (int leg = 0; leg < 4; ++leg) {
    const bool front = leg < 2, right = leg % 2 == 1;
    const double sx = front ? 1.0 : -1.0, sy = right ? -1.0 : 1.0;
    const std::string p = std::string(names[leg]) + "_";
    const int hip = model.add_body(trunk, JointRevoluteX{}, xlt(Vec3(sx * L(0.28), sy * L(0.12), 0.0)),
                                   box(M(1.2), Vec3(0.1, 0.08, 0.08), Vec3(sx * 0.04, sy * 0.03, 0.0)), p + "HIP",
                                   p + "HAA", mirrored(limits1(-0.72, 0.49, 7.5, 80.0), right));
    const double thigh_len = L(0.28);
    const int thigh =
        model.add_body(hip, JointRevoluteY{}, xlt(Vec3(sx * L(0.06), sy * L(0.08), 0.0)),
                       rod(M(0.9), thigh_len, 0.035, Vec3::UnitZ(), Vec3(0.0, sy * 0.01, -0.45 * thigh_len)),
                       p + "THIGH", p + "HFE", limits1(-1.6, 1.6, 7.5, 80.0));
    const double shank_len = L(0.30);
    const int shank =
        model.add_body(thigh, JointRevoluteY{}, xlt(Vec3(0.0, 0.0, -thigh_len)),
                       rod(M(0.4), shank_len, 0.02, Vec3::UnitZ(), Vec3(0.0, 0.0, -0.45 * shank_len)), p + "SHANK",
                       p + "KFE", front ? limits1(-2.7, 0.1, 7.5, 80.0) : limits1(-0.1, 2.7, 7.5, 80.0));
    model.add_frame(p + "FOOT", shank, xlt(Vec3(0.0, 0.0, -shank_len)));
  }
  return model;
}

// ------------------------------------------------------------------------------ every joint kind
Model build_all_joints_tree(std::uint64_t seed) {
  Rng rng(seed);
  Model model("world");
  model.set_name("all_joints");
  auto inertia = [&]() {
    const double m = uniform(rng, 0.5, 2.0);
    const Vec3 dims(uniform(rng, 0.05, 0.2), uniform(rng, 0.05, 0.2), uniform(rng, 0.05, 0.2));
    const Vec3 com(uniform(rng, -0.1, 0.1), uniform(rng, -0.1, 0.1), uniform(rng, -0.1, 0.1));
    // Rotate the box's principal axes: Ic = R diag R^T.
    const RigidBodyInertia b = box(m, dims, Vec3::Zero());
    const Mat3 R = rotation(random_unit(rng) * uniform(rng, 0.0, 1.0));
    return RigidBodyInertia::from_mass_com_inertia(m, com, R * b.inertia_com() * R.transpose());
  };
  auto placement = [&]() {
    const Mat3 R = rotation(random_unit(rng) * uniform(rng, 0.0, 0.5));
    const Vec3 p = random_unit(rng) * uniform(rng, 0.1, 0.3);
    return Transform::from_pose(R, p);
  };
  auto add = [&](int parent, const JointModel& j, const std::string& name, const JointLimits& lim = {}) {
    const Transform X = placement();
    const RigidBodyInertia I = inertia();
    return model.add_body(parent, j, X, I, name, name + "_joint", lim);
  };
  auto lims = [](std::initializer_list<double> lo, std::initializer_list<double> hi) {
    JointLimits l;
    l.lower = Eigen::Map<const VecX>(lo.begin(), static_cast<Eigen::Index>(lo.size()));
    l.upper = Eigen::Map<const VecX>(hi.begin(), static_cast<Eigen::Index>(hi.size()));
    return l;
  };
  const Vec3 general_axis = Vec3(0.3, -0.5, 0.8).normalized();

  JointLimits ff = lims({-2, -2, -2, -kInf, -kInf, -kInf, -kInf}, {2, 2, 2, kInf, kInf, kInf, kInf});
  const int base = model.add_body(0, JointFreeFlyer{}, Transform(), inertia(), "base", "root_joint", ff);  // 1
  const int rx = add(base, JointRevoluteX{}, "link_rx", lims({-1.5}, {1.5}));                              // 2
  const int ry = add(rx, JointRevoluteY{}, "link_ry");                                                     // 3
  const int rz = add(ry, JointRevoluteZ{}, "link_rz", lims({-2.0}, {0.5}));                                // 4
  const int fixed = add(rz, JointFixed{}, "link_fixed");                                                   // 5
  const int rev = add(fixed, make_revolute(general_axis), "link_rev");                                     // 6
  const int px = add(base, JointPrismaticX{}, "link_px", lims({-0.3}, {0.4}));                             // 7
  const int py = add(px, JointPrismaticY{}, "link_py");                                                    // 8
  const int pz = add(py, JointPrismaticZ{}, "link_pz", lims({-0.1}, {0.2}));                               // 9
  const int pg = add(pz, make_prismatic(Vec3(-0.2, 0.9, 0.4)), "link_prismatic");                          // 10
  add(rev, make_helical(Vec3(0.6, 0.2, -0.7), 0.05), "link_helical", lims({-2.0}, {2.0}));                 // 11
  const int cyl =
      add(base, make_cylindrical(Vec3(0.1, 0.7, 0.7)), "link_cylindrical", lims({-kInf, -0.2}, {kInf, 0.2}));  // 12
  const int planar =
      add(cyl, make_planar(), "link_planar", lims({-0.5, -0.5, -kInf, -kInf}, {0.5, 0.5, kInf, kInf}));  // 13
  add(rz, make_planar(Vec3(1.0, 1.0, 0.5)), "link_planar_tilted");                                       // 14
  const int sph = add(planar, JointSpherical{}, "link_spherical");                                       // 15
  {
    // Rotation about and translation along the z axis through (0.05, -0.03, 0): commuting columns.
    const Vec3 point(0.05, -0.03, 0.0), u = Vec3::UnitZ();
    MatS6 S = MatS6::Zero(6, 2);
    S.col(0) << u, point.cross(u);
    S.col(1) << Vec3::Zero(), u;
    add(sph, make_general_joint(S), "link_general2");  // 16
  }
  {
    // Screw about the general axis through (0.1, -0.05, 0.02) with pitch 0.07 m/rad.
    const Vec3 point(0.1, -0.05, 0.02);
    MatS6 S = MatS6::Zero(6, 1);
    S.col(0) << general_axis, point.cross(general_axis) + 0.07 * general_axis;
    add(pg, make_general_joint(S), "link_general1", lims({-1.0}, {1.0}));  // 17
  }
  return model;
}

}  // namespace plucker

// ============================================================================================
// Closed-loop mechanisms
// ============================================================================================
namespace plucker {
namespace {

constexpr double kRodRadius = 0.02;

/// A rod of length len along the body's +x axis from its origin.
RigidBodyInertia x_rod(double mass, double len) {
  return rod(mass, len, kRodRadius, Vec3::UnitX(), Vec3(0.5 * len, 0.0, 0.0));
}

Transform planar_pose(double angle, const Vec3& p) {
  return Transform::from_pose(Eigen::AngleAxisd(angle, Vec3::UnitZ()).toRotationMatrix(), p);
}

/// The intersection of circle(c1, r1) and circle(c2, r2) in the x-y plane on the side `branch`
/// (+1: left of c1 -> c2). Throws InvalidArgument when they do not meet.
Vec3 circle_intersection(const Vec3& c1, double r1, const Vec3& c2, double r2, int branch, const char* what) {
  const Vec3 d = c2 - c1;
  const double L = d.norm();
  if (!(L > 0.0) || L > r1 + r2 || L < std::abs(r1 - r2))
    throw InvalidArgument(std::string(what) + ": the linkage cannot close at the requested angle");
  const double a = (r1 * r1 - r2 * r2 + L * L) / (2.0 * L);
  // Tangent circles (a linkage at a singular, collinear configuration): h = sqrt(r1^2 - a^2)
  // turns the rounding error of a into an O(sqrt(eps)) offset, so an a within its rounding
  // error of +-r1 counts as tangency (h = 0), whatever the compiler's contraction of a.
  const double a_rounding = 4.0 * std::numeric_limits<double>::epsilon() * (r1 * r1 + r2 * r2 + L * L) / (2.0 * L);
  const double h = r1 - std::abs(a) <= a_rounding ? 0.0 : std::sqrt((r1 - a) * (r1 + a));
  const Vec3 u = d / L, n(-u.y(), u.x(), 0.0);
  return c1 + a * u + (branch >= 0 ? h : -h) * n;
}

double angle_of(const Vec3& d) { return std::atan2(d.y(), d.x()); }

}  // namespace

Model build_four_bar(const FourBarParams& p) {
  for (double len : {p.ground, p.crank, p.coupler, p.rocker})
    if (!(len > 0.0) || !std::isfinite(len)) throw InvalidArgument("build_four_bar: link lengths must be positive");
  if (!(p.density > 0.0)) throw InvalidArgument("build_four_bar: density must be positive");
  const Vec3 A = Vec3::Zero(), D(p.ground, 0.0, 0.0);
  const Vec3 B = A + p.crank * Vec3(std::cos(p.crank_angle), std::sin(p.crank_angle), 0.0);
  const Vec3 C = circle_intersection(B, p.coupler, D, p.rocker, p.branch, "build_four_bar");
  const double coupler_angle = angle_of(C - B), rocker_angle = angle_of(C - D);
  Model model("ground");
  model.set_name("four_bar");
  model.set_gravity(Vec3(0.0, -9.81, 0.0));
  const int crank = model.add_body(0, JointRevoluteZ{}, planar_pose(p.crank_angle, Vec3::Zero()),
                                   x_rod(p.density * p.crank, p.crank), "crank", "crank_joint");
  // Every q is an offset from the nominal (assembled) angle, which is in X_tree.
  const int coupler = model.add_body(crank, JointRevoluteZ{},
                                     planar_pose(coupler_angle - p.crank_angle, Vec3(p.crank, 0.0, 0.0)),
                                     x_rod(p.density * p.coupler, p.coupler), "coupler", "coupler_joint");
  const int rocker = model.add_body(0, JointRevoluteZ{}, planar_pose(rocker_angle, D),
                                    x_rod(p.density * p.rocker, p.rocker), "rocker", "rocker_joint");
  LoopJoint lj;
  lj.name = "loop_joint";
  lj.type = LoopJointType::Revolute;
  lj.predecessor = coupler;
  lj.X_predecessor = Transform::translation(Vec3(p.coupler, 0.0, 0.0));
  lj.successor = rocker;
  // Successor frame: the same point, with the coupler frame's orientation at q = 0.
  lj.X_successor = planar_pose(coupler_angle - rocker_angle, Vec3(p.rocker, 0.0, 0.0));
  lj.axis = Vec3::UnitZ();
  model.add_loop_joint(lj);
  return model;
}

Model build_slider_crank(const SliderCrankParams& p) {
  if (!(p.crank > 0.0) || !(p.rod > p.crank) || !(p.density > 0.0) || !(p.slider_mass > 0.0))
    throw InvalidArgument("build_slider_crank: need crank > 0, rod > crank, positive density and slider mass");
  const Vec3 B = p.crank * Vec3(std::cos(p.crank_angle), std::sin(p.crank_angle), 0.0);
  const double x0 = B.x() + std::sqrt(p.rod * p.rod - B.y() * B.y());  // slider on the x axis
  const double rod_angle = angle_of(Vec3(x0, 0.0, 0.0) - B);
  Model model("ground");
  model.set_name("slider_crank");
  model.set_gravity(Vec3(0.0, -9.81, 0.0));
  const int crank = model.add_body(0, JointRevoluteZ{}, planar_pose(p.crank_angle, Vec3::Zero()),
                                   x_rod(p.density * p.crank, p.crank), "crank", "crank_joint");
  const int rod_body = model.add_body(crank, JointRevoluteZ{}, planar_pose(rod_angle - p.crank_angle, Vec3(p.crank, 0.0, 0.0)),
                                      x_rod(p.density * p.rod, p.rod), "rod", "rod_joint");
  const int slider = model.add_body(0, JointPrismaticX{}, Transform::translation(Vec3(x0, 0.0, 0.0)),
                                    box(p.slider_mass, Vec3(0.08, 0.05, 0.05), Vec3::Zero()), "slider",
                                    "slider_joint");
  LoopJoint lj;
  lj.name = "wrist_pin";
  lj.predecessor = rod_body;
  lj.X_predecessor = Transform::translation(Vec3(p.rod, 0.0, 0.0));
  lj.successor = slider;
  lj.X_successor = planar_pose(rod_angle, Vec3::Zero());  // the rod frame's orientation at q = 0
  model.add_loop_joint(lj);
  return model;
}

Model build_delta(const DeltaParams& p) {
  for (double x : {p.base_radius, p.platform_radius, p.arm, p.forearm, p.arm_mass, p.rod_mass, p.platform_mass})
    if (!(x > 0.0) || !std::isfinite(x)) throw InvalidArgument("build_delta: every dimension and mass must be positive");
  // Symmetric nominal pose: elbow E = (base_radius + arm cos a) e_r - arm sin a z; platform
  // attachment P = platform_radius e_r + z0 z with |E - P| = forearm.
  const double h = p.base_radius + p.arm * std::cos(p.arm_angle) - p.platform_radius;
  if (!(h < p.forearm)) throw InvalidArgument("build_delta: the forearms are too short to reach the platform");
  const double ez = -p.arm * std::sin(p.arm_angle);
  const double z0 = ez - std::sqrt(p.forearm * p.forearm - h * h);
  Model model("base");
  model.set_name("delta");
  const Vec3 z = Vec3::UnitZ();
  int platform = -1;
  Vec3 platform_origin = Vec3::Zero();  // world position of the platform frame (leg 1's wrist)
  const RigidBodyInertia cross_piece = box(0.01, Vec3(0.01, 0.01, 0.01), Vec3::Zero());
  for (int leg = 0; leg < 3; ++leg) {
    const double gamma = 2.0 * std::numbers::pi * leg / 3.0;
    const Vec3 e_r(std::cos(gamma), std::sin(gamma), 0.0), u(-std::sin(gamma), std::cos(gamma), 0.0);
    // Arm frame: x radial along the arm, y = u (the actuated axis), tilted down by arm_angle.
    Mat3 R_arm;
    R_arm << e_r, u, e_r.cross(u);
    R_arm = Eigen::AngleAxisd(p.arm_angle, u).toRotationMatrix() * R_arm;
    const Vec3 base_point = p.base_radius * e_r;
    const std::string id = std::to_string(leg + 1);
    const int arm = model.add_body(0, JointRevoluteY{}, Transform::from_pose(R_arm, base_point),
                                   x_rod(p.arm_mass, p.arm), "arm_" + id, "arm_" + id + "_joint");
    const Vec3 elbow = base_point + p.arm * (R_arm * Vec3::UnitX());
    const Vec3 attach = p.platform_radius * e_r + z0 * z;
    const Vec3 d = (attach - elbow).normalized();  // forearm direction
    const Vec3 n = u.cross(d).normalized();
    Mat3 R_rod;
    R_rod << d, n, d.cross(n);  // forearm frame: x along it, y = n
    // Elbow universal joint: about u (parallel to the actuated axis), then about n.
    const int elbow_cross = model.add_body(arm, make_revolute(R_rod.transpose() * u),
                                           Transform::from_pose(R_arm.transpose() * R_rod, Vec3(p.arm, 0.0, 0.0)),
                                           cross_piece, "elbow_" + id, "elbow_" + id + "_u");
    const int forearm = model.add_body(elbow_cross, JointRevoluteY{}, Transform(), x_rod(p.rod_mass, p.forearm),
                                       "forearm_" + id, "elbow_" + id + "_n");
    // Wrist universal joint: about n (parallel to the elbow's second axis), then about u.
    const int wrist_cross = model.add_body(forearm, JointRevoluteY{}, Transform::translation(Vec3(p.forearm, 0.0, 0.0)),
                                           cross_piece, "wrist_" + id, "wrist_" + id + "_n");
    if (leg == 0) {
      platform_origin = attach;  // the platform frame is world-aligned at q = 0
      platform = model.add_body(wrist_cross, make_revolute(u), Transform::from_pose(R_rod.transpose(), Vec3::Zero()),
                                rod(p.platform_mass, 0.02, p.platform_radius, z, z0 * z - platform_origin), "platform",
                                "wrist_1_u");
    } else {
      LoopJoint lj;
      lj.name = "wrist_" + id + "_u";
      lj.type = LoopJointType::Revolute;
      lj.predecessor = wrist_cross;
      lj.X_predecessor = Transform::from_pose(R_rod.transpose(), Vec3::Zero());  // world-aligned at q = 0
      lj.successor = platform;
      lj.X_successor = Transform::translation(attach - platform_origin);
      lj.axis = u;
      model.add_loop_joint(lj);
    }
  }
  model.add_frame("platform_center", platform, Transform::translation(z0 * z - platform_origin));
  return model;
}

Model build_random_loops(int n, int loops, LoopJointType type, double branching_factor, std::uint64_t seed) {
  if (n < 3 || loops < 0) throw InvalidArgument("build_random_loops: need n >= 3 and loops >= 0");
  // autoTree's joint axes all lie in one plane family (Rx(angle) z) with links along x, which
  // makes random spatial loops degenerate; turn every joint frame by a random rotation (< 0.8 rad).
  const Model tree = build_random_tree(n, branching_factor, 0.5, 1.0, seed);
  Rng turn(seed ^ 0x7077ULL);
  Model model("base");
  model.set_name("random_loops");
  for (int i = 1; i < tree.nbodies(); ++i) {
    const Vec3 w(uniform(turn, -0.45, 0.45), uniform(turn, -0.45, 0.45), uniform(turn, -0.45, 0.45));
    const Transform X_tree = Transform::from_pose(rotation(w), Vec3::Zero()) * tree.X_tree(i);
    model.add_body(tree.parent(i), tree.joint(i), X_tree, tree.inertia(i), tree.body_name(i), tree.joint_name(i));
  }
  // World poses at neutral (every joint's transform is the identity there).
  std::vector<Transform> X_base(model.nbodies());
  for (int i = 1; i < model.nbodies(); ++i) X_base[i] = model.X_tree(i) * X_base[model.parent(i)];
  Rng rng(seed ^ 0x5eed100b5ULL);
  auto path_length = [&](int a, int b) {  // joints between a and b through their common ancestor
    int joints = 0;
    while (a != b) {
      if (a > b) a = model.parent(a);
      else b = model.parent(b);
      ++joints;
    }
    return joints;
  };
  for (int k = 0; k < loops; ++k) {
    int a = 0, b = 0, attempts = 0;
    do {
      if (++attempts > 100000)
        throw InvalidArgument("build_random_loops: no two bodies are joined through " +
                              std::to_string(loop_joint_constraints(type) + 3) +
                              " or more joints; use a larger or less branched tree");
      a = static_cast<int>(uniform(rng, 0.0, n + 1.0)) % (n + 1);
      b = static_cast<int>(uniform(rng, 0.0, n + 1.0)) % (n + 1);
    } while (a == b || path_length(a, b) < loop_joint_constraints(type) + 3);  // >= 3 DoF per loop
    LoopJoint lj;
    lj.name = "loop" + std::to_string(k + 1);
    lj.type = type;
    lj.predecessor = std::min(a, b);
    lj.successor = std::max(a, b);
    // A joint frame on the predecessor, then the same world pose seen from the successor.
    const Transform frame_p = Transform::from_pose(rotation(Vec3(uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1))),
                                                   Vec3(uniform(rng, -0.1, 0.1), uniform(rng, -0.1, 0.1), uniform(rng, -0.1, 0.1)));
    const Transform frame_X_0 = frame_p * X_base[lj.predecessor];
    lj.X_predecessor = frame_p;
    lj.X_successor = frame_X_0 * X_base[lj.successor].inverse();
    lj.axis = Vec3(uniform(rng, -1, 1), uniform(rng, -1, 1), uniform(rng, -1, 1)).normalized();
    model.add_loop_joint(lj);
  }
  return model;
}

}  // namespace plucker
