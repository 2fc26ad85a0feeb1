// Procedural models with kinematic loops (plucker/model/builders.hpp): the four-bar linkage,
// the slider-crank, a Delta-type parallel robot and random trees closed by loop joints.
#include <cmath>
#include <numbers>
#include <random>
#include <string>

#include "model/builder_parts.hpp"
#include "plucker/errors.hpp"
#include "plucker/model/builders.hpp"
// ============================================================================================
// Closed-loop mechanisms
// ============================================================================================
namespace plucker {
using namespace builder_parts;
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
  const int coupler =
      model.add_body(crank, JointRevoluteZ{}, planar_pose(coupler_angle - p.crank_angle, Vec3(p.crank, 0.0, 0.0)),
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
  const int rod_body =
      model.add_body(crank, JointRevoluteZ{}, planar_pose(rod_angle - p.crank_angle, Vec3(p.crank, 0.0, 0.0)),
                     x_rod(p.density * p.rod, p.rod), "rod", "rod_joint");
  const int slider = model.add_body(0, JointPrismaticX{}, Transform::translation(Vec3(x0, 0.0, 0.0)),
                                    box(p.slider_mass, Vec3(0.08, 0.05, 0.05), Vec3::Zero()), "slider", "slider_joint");
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
    if (!(x > 0.0) || !std::isfinite(x))
      throw InvalidArgument("build_delta: every dimension and mass must be positive");
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
    // Elbow universal joint: about u (parallel to the actuated axis), then about n. In the rod
    // frame u is e_z exactly (d is orthogonal to u, so d x n = u); computed as R_rod^T u it came
    // out (1e-16, 0, 1) or e_z depending on the compiler's contractions, a general revolute joint
    // under one and the revolute_z one under the other.
    const int elbow_cross =
        model.add_body(arm, JointRevoluteZ{}, Transform::from_pose(R_arm.transpose() * R_rod, Vec3(p.arm, 0.0, 0.0)),
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
    const Vec3 w = uniform_vec3(turn, -0.45, 0.45);
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
      if (a > b)
        a = model.parent(a);
      else
        b = model.parent(b);
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
    // A joint frame on the predecessor, then the same world pose seen from the successor. The
    // offset is drawn before the rotation (the builder parts' note on draw order).
    const Vec3 offset = uniform_vec3(rng, -0.1, 0.1);
    const Vec3 turn_vector = uniform_vec3(rng, -1, 1);
    const Transform frame_p = Transform::from_pose(rotation(turn_vector), offset);
    const Transform frame_X_0 = frame_p * X_base[lj.predecessor];
    lj.X_predecessor = frame_p;
    lj.X_successor = frame_X_0 * X_base[lj.successor].inverse();
    lj.axis = uniform_vec3(rng, -1, 1).normalized();
    model.add_loop_joint(lj);
  }
  return model;
}

}  // namespace plucker
