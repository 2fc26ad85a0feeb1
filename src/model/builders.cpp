// Procedural model builders (see include/plucker/model/builders.hpp).
#include "plucker/model/builders.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <string>

#include "model/builder_parts.hpp"
#include "plucker/errors.hpp"

namespace plucker {

using namespace builder_parts;

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
    const Vec3 com = 0.5 * len * dir + uniform_vec3(rng, -0.01, 0.01);
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
Model build_random_tree(int n, double branching_factor, double skew, double taper, std::uint64_t seed) {
  if (n < 0) throw InvalidArgument("build_random_tree: n = " + std::to_string(n) + " must be >= 0");
  if (!std::isfinite(branching_factor) || branching_factor < 1.0)
    throw InvalidArgument("build_random_tree: branching factor " + std::to_string(branching_factor) +
                          " must be finite and >= 1");
  if (!std::isfinite(taper) || taper <= 0.0)
    throw InvalidArgument("build_random_tree: taper " + std::to_string(taper) + " must be finite and > 0");
  if (!std::isfinite(skew)) throw InvalidArgument("build_random_tree: non-finite skew");
  Rng rng(seed);
  Model model("base");
  model.set_name("random_tree");
  std::vector<double> len(n + 1, 0.0);
  const double cbf = std::ceil(branching_factor);
  for (int i = 1; i <= n; ++i) {
    const int parent = static_cast<int>(std::floor((i - 2 + cbf) / branching_factor));
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

  // Torso and head. One draw per statement, in the order of the builder parts' note on draw order.
  const double torso_link_m = M(1.0);
  const double torso_link_z = L(0.12);
  const int torso_link = model.add_body(pelvis, RZ, xlt(Vec3(0.0, 0.0, torso_link_z)), small_link(torso_link_m, 0.1),
                                        "torso_link", "torso_z", limits1(-1.0, 1.0, 6.0, 150.0));
  const double torso_h = L(0.45);
  const int torso =
      model.add_body(torso_link, RY, Transform(), box(M(18.0), Vec3(0.2, 0.32, torso_h), Vec3(0.0, 0.0, 0.5 * torso_h)),
                     "torso", "torso_y", limits1(-0.5, 1.2, 6.0, 150.0));
  const int neck = model.add_body(torso, RZ, xlt(Vec3(0.0, 0.0, torso_h)), small_link(M(0.5), 0.06), "neck", "neck_z",
                                  limits1(-1.2, 1.2, 6.0, 15.0));
  const double head_com_z = L(0.11);
  const double head_m = M(4.5);
  model.add_body(neck, RY, Transform(), box(head_m, Vec3(0.18, 0.16, 0.22), Vec3(0.0, 0.0, head_com_z)), "head",
                 "neck_y", limits1(-0.6, 0.8, 6.0, 15.0));

  // Arms.
  for (int side = 0; side < 2; ++side) {
    const bool right = side == 1;
    const double s = right ? -1.0 : 1.0;
    const std::string p = right ? "r_" : "l_";
    const double sh1_m = M(0.4);
    const double sh1_y = L(0.2);
    const int sh1 = model.add_body(torso, RY, xlt(Vec3(0.0, s * sh1_y, 0.85 * torso_h)), small_link(sh1_m, 0.08),
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
    const double h1_m = M(0.6);
    const double h1_z = L(0.08);
    const double h1_y = L(0.09);
    const int h1 = model.add_body(pelvis, RZ, xlt(Vec3(0.0, s * h1_y, -h1_z)), small_link(h1_m, 0.08), p + "hip_link1",
                                  p + "hip_z", mirrored(limits1(-0.7, 0.7, 10.0, 200.0), right));
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
  // One draw per statement, in the order of the builder parts' note on draw order.
  const double trunk_com_x = L(0.01);
  const double trunk_m = M(25.0);
  const RigidBodyInertia trunk_inertia = box(trunk_m, Vec3(0.55, 0.3, 0.18), Vec3(trunk_com_x, 0.0, 0.0));
  const int trunk =
      floating_base ? model.add_body(0, JointFreeFlyer{}, Transform(), trunk_inertia, "trunk", "root_joint")
                    : model.add_body(0, JointFixed{}, xlt(Vec3(0.0, 0.0, 0.6)), trunk_inertia, "trunk", "root_joint");
  const char* names[4] = {"LF", "RF", "LH", "RH"};
  for (int leg = 0; leg < 4; ++leg) {
    const bool front = leg < 2, right = leg % 2 == 1;
    const double sx = front ? 1.0 : -1.0, sy = right ? -1.0 : 1.0;
    const std::string p = std::string(names[leg]) + "_";
    const double hip_m = M(1.2);
    const double hip_y = L(0.12);
    const double hip_x = L(0.28);
    const int hip = model.add_body(trunk, JointRevoluteX{}, xlt(Vec3(sx * hip_x, sy * hip_y, 0.0)),
                                   box(hip_m, Vec3(0.1, 0.08, 0.08), Vec3(sx * 0.04, sy * 0.03, 0.0)), p + "HIP",
                                   p + "HAA", mirrored(limits1(-0.72, 0.49, 7.5, 80.0), right));
    const double thigh_len = L(0.28);
    const double thigh_m = M(0.9);
    const double thigh_y = L(0.08);
    const double thigh_x = L(0.06);
    const int thigh =
        model.add_body(hip, JointRevoluteY{}, xlt(Vec3(sx * thigh_x, sy * thigh_y, 0.0)),
                       rod(thigh_m, thigh_len, 0.035, Vec3::UnitZ(), Vec3(0.0, sy * 0.01, -0.45 * thigh_len)),
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
    const Vec3 dims = uniform_vec3(rng, 0.05, 0.2);
    const Vec3 com = uniform_vec3(rng, -0.1, 0.1);
    // Rotate the box's principal axes: Ic = R diag R^T.
    const RigidBodyInertia b = box(m, dims, Vec3::Zero());
    const Mat3 R = rotation(random_vector(rng, 0.0, 1.0));
    return RigidBodyInertia::from_mass_com_inertia(m, com, R * b.inertia_com() * R.transpose());
  };
  auto placement = [&]() {
    const Mat3 R = rotation(random_vector(rng, 0.0, 0.5));
    const Vec3 p = random_vector(rng, 0.1, 0.3);
    return Transform::from_pose(R, p);
  };
  auto add = [&](int parent, const JointModel& j, const std::string& name, const JointLimits& lim = {}) {
    const Transform X = placement();
    const RigidBodyInertia I = inertia();
    return model.add_body(parent, j, X, I, name, name + "_joint", lim);
  };
  auto lims = [](std::initializer_list<double> lo, std::initializer_list<double> hi) {
    JointLimits l;
    // Element by element: GCC 12 warns (-Warray-bounds) on a packet load from a 1-element list.
    l.lower.resize(static_cast<Eigen::Index>(lo.size()));
    l.upper.resize(static_cast<Eigen::Index>(hi.size()));
    std::copy(lo.begin(), lo.end(), l.lower.data());
    std::copy(hi.begin(), hi.end(), l.upper.data());
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
