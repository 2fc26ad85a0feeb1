// Tests of the URDF loader (include/plucker/io/urdf.hpp).
//
//  * Real robots (PLUCKER_SHARED_DIR/models, see its README): every file loads with the DoF
//    of the README table, fixed and free-flyer; mass is conserved between the two; the
//    defective files are refused in strict mode and warned about (naming links) otherwise.
//  * Mapping: a small URDF loads into exactly the model built by hand with add_body
//    (merged fixed link, inertial rpy, prismatic, oblique revolute, continuous); merged
//    fixed links become frames whose pose composes the fixed origins; bodies are numbered
//    depth-first in document order.
//  * Refusals: each malformed input is a ModelError naming the file and the link/joint.
//  * Limits of the input document, the physical range, valid UTF-8 names, paths that are not
//    regular files: refused with the cap / value / line.
//
// Tolerance: the loader and the hand-built model build the same transforms and inertias by
// different routes (e.g. merged inertias through transformed_inverse vs the 6x6 congruence);
// both are a few roundings of O(1) quantities (~1e-16), compared at 1e-12. (Until the loader
// supplied the URDF semantics itself it went through urdfdom's rpy -> quaternion -> matrix
// conversion, which these tests also accepted at 1e-12.)
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "plucker/errors.hpp"
#include "plucker/io/urdf.hpp"

namespace {

using namespace plucker;

constexpr double kTol = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string models_dir() { return std::string(PLUCKER_SHARED_DIR) + "/models"; }

// ------------------------------------------------------------------ helpers
struct Collect {
  std::vector<std::string> warnings;
  UrdfOptions options(RootJoint root = RootJoint::Fixed, bool strict = false) {
    UrdfOptions o;
    o.root = root;
    o.strict = strict;
    o.on_warning = [this](const std::string& m) { warnings.push_back(m); };
    return o;
  }
  int count(const std::string& needle) const {
    int n = 0;
    for (const std::string& w : warnings) n += w.find(needle) != std::string::npos;
    return n;
  }
};

UrdfOptions quiet(RootJoint root = RootJoint::Fixed, bool strict = false) {
  UrdfOptions o;
  o.root = root;
  o.strict = strict;
  o.on_warning = [](const std::string&) {};
  return o;
}

/// The message of the ModelError that loading `xml` throws ("" and a test failure if none).
std::string load_error(const std::string& xml, const UrdfOptions& options = quiet()) {
  try {
    load_urdf_string(xml, options, "test.urdf");
  } catch (const ModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected plucker::ModelError, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected plucker::ModelError, nothing thrown";
  return "";
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << "'" << (needle) << "' not in: " << (haystack)

/// Expects a refusal whose message starts with the file name and contains every needle.
void expect_refused(const std::string& xml, std::initializer_list<std::string> needles,
                    const UrdfOptions& options = quiet()) {
  const std::string msg = load_error(xml, options);
  EXPECT_EQ(msg.rfind("test.urdf: ", 0), 0u) << msg;
  for (const std::string& n : needles) EXPECT_CONTAINS(msg, n);
}

std::string robot(const std::string& body) { return "<robot name='t'>" + body + "</robot>"; }

std::string inertial(double m, const std::string& inertia = "ixx='0.01' ixy='0' ixz='0' iyy='0.01' iyz='0' izz='0.01'",
                     const std::string& origin = "") {
  return "<inertial>" + origin + "<mass value='" + std::to_string(m) + "'/><inertia " + inertia + "/></inertial>";
}
std::string link(const std::string& name, double m = 1.0) {
  return "<link name='" + name + "'>" + inertial(m) + "</link>";
}
std::string joint(const std::string& name, const std::string& type, const std::string& parent, const std::string& child,
                  const std::string& extra = "") {
  std::string lim = (type == "revolute" || type == "prismatic") && extra.find("<limit") == std::string::npos
                        ? "<limit lower='-1' upper='1' effort='10' velocity='2'/>"
                        : "";
  return "<joint name='" + name + "' type='" + type + "'><parent link='" + parent + "'/><child link='" + child + "'/>" +
         lim + extra + "</joint>";
}
/// A valid two-link robot with one revolute joint, as a base for single-defect variants.
std::string two_links(const std::string& joint_extra = "", const std::string& child_link = "") {
  return robot(link("base") + (child_link.empty() ? link("arm") : child_link) +
               joint("j", "revolute", "base", "arm", joint_extra));
}

bool same_transform(const Transform& a, const Transform& b) {
  return (a.E - b.E).cwiseAbs().maxCoeff() <= kTol && (a.r - b.r).cwiseAbs().maxCoeff() <= kTol;
}
bool same_inertia(const RigidBodyInertia& a, const RigidBodyInertia& b) {
  return (a.matrix() - b.matrix()).cwiseAbs().maxCoeff() <= kTol;
}
bool same_vec(const VecX& a, const VecX& b) {
  if (a.size() != b.size()) return false;
  for (Eigen::Index k = 0; k < a.size(); ++k)
    if (!(a[k] == b[k] || std::abs(a[k] - b[k]) <= kTol)) return false;  // == handles infinities
  return true;
}

// ------------------------------------------------------------------ real robots
struct ZooEntry {
  const char* file;
  int dof;     // README "movable DoF" (mimic joints included)
  int mimic;   // README "mimic"
  bool clean;  // loads in strict mode with a free-flyer root
};
const ZooEntry kZoo[] = {
    {"ur5", 6, 0, true},
    {"panda", 9, 1, true},
    {"iiwa14", 7, 0, true},
    {"talos_full", 44, 12, false},
    {"simple_humanoid", 29, 0, true},
    {"romeo", 55, 22, false},
    {"romeo_small", 31, 0, false},
    {"anymal", 12, 0, false},
    {"solo12", 12, 0, true},
    {"hyq", 12, 0, false},
    {"icub", 32, 0, false},
    {"pr2", 30, 10, false},
    {"chain32", 32, 0, true},
    {"chain1024", 1024, 0, true},
};

class UrdfZoo : public ::testing::TestWithParam<ZooEntry> {
 protected:
  std::string path() const { return models_dir() + "/" + GetParam().file + ".urdf"; }
  void SetUp() override {
    if (!std::filesystem::exists(path())) GTEST_SKIP() << path() << " not found (no shared models folder)";
  }
};

TEST_P(UrdfZoo, LoadsWithTheReadmeDofFixedAndFreeFlyer) {
  const ZooEntry& e = GetParam();
  Collect w;
  const Model fixed = load_urdf(path(), w.options(RootJoint::Fixed));
  const Model free = load_urdf(path(), w.options(RootJoint::FreeFlyer));

  // Every movable joint of these files has one DoF; fixed joints are merged.
  EXPECT_EQ(fixed.nv(), e.dof);
  EXPECT_EQ(fixed.nq(), e.dof);
  EXPECT_EQ(fixed.nbodies(), e.dof + 1);
  EXPECT_FALSE(fixed.has_floating_base());
  EXPECT_EQ(free.nv(), e.dof + 6);
  EXPECT_EQ(free.nq(), e.dof + 7);
  EXPECT_EQ(free.nbodies(), e.dof + 2);
  EXPECT_TRUE(free.has_floating_base());
  EXPECT_EQ(free.joint_name(1), "root_joint");
  EXPECT_EQ(free.body_name(1), fixed.body_name(0));  // the root link
  EXPECT_EQ(static_cast<int>(fixed.mimics().size()), e.mimic);
  EXPECT_EQ(static_cast<int>(free.mimics().size()), e.mimic);
  EXPECT_EQ(fixed.frames().size(), free.frames().size());
  for (const Frame& f : fixed.frames()) EXPECT_TRUE(free.has_frame(f.name)) << f.name;

  // Mass: the free-flyer model carries everything; the fixed one keeps what is welded to
  // the base (root link and its fixed descendants) on body 0, outside total_mass().
  EXPECT_GT(free.total_mass(), 0.5);
  EXPECT_LT(free.total_mass(), 1000.0);
  EXPECT_NEAR(fixed.total_mass() + fixed.inertia(0).mass(), free.total_mass(), 1e-9 * free.total_mass());
  EXPECT_EQ(free.inertia(0).mass(), 0.0);

  // Parent before child, and every subtree is a contiguous index range.
  for (int i = 1; i < free.nbodies(); ++i) {
    EXPECT_LT(free.parent(i), i);
    const std::vector<int>& sub = free.subtree(i);
    std::set<int> s(sub.begin(), sub.end());
    EXPECT_EQ(*s.begin(), i);
    EXPECT_EQ(*s.rbegin(), i + static_cast<int>(s.size()) - 1) << "subtree of body " << i << " not contiguous";
  }
}

TEST_P(UrdfZoo, StrictModeRefusesExactlyTheDefectiveFiles) {
  const ZooEntry& e = GetParam();
  if (e.clean) {
    EXPECT_NO_THROW(load_urdf(path(), quiet(RootJoint::FreeFlyer, true)));
    Collect w;
    load_urdf(path(), w.options(RootJoint::FreeFlyer));
    // The only notice a clean file may get is the mimic summary.
    EXPECT_EQ(static_cast<int>(w.warnings.size()), e.mimic > 0 ? 1 : 0);
  } else {
    try {
      load_urdf(path(), quiet(RootJoint::FreeFlyer, true));
      ADD_FAILURE() << e.file << " loaded in strict mode";
    } catch (const ModelError& err) {
      const std::string msg = err.what();
      EXPECT_EQ(msg.rfind(path() + ": ", 0), 0u) << msg;
      EXPECT_CONTAINS(msg, "(link '");
      EXPECT_CONTAINS(msg, "[strict]");
    }
  }
}

TEST_P(UrdfZoo, WarnsAtMostOncePerLink) {
  Collect w;
  load_urdf(path(), w.options(RootJoint::FreeFlyer));
  std::set<std::string> links;
  for (const std::string& m : w.warnings) {
    const size_t p = m.find("(link '");
    if (p == std::string::npos) continue;
    const std::string name = m.substr(p + 7, m.find('\'', p + 7) - (p + 7));
    EXPECT_TRUE(links.insert(name).second) << "two warnings for link " << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, UrdfZoo, ::testing::ValuesIn(kZoo),
                         [](const ::testing::TestParamInfo<ZooEntry>& info) { return std::string(info.param.file); });

class UrdfZooFile : public ::testing::Test {
 protected:
  static std::string path(const char* name) { return models_dir() + "/" + name + ".urdf"; }
  void require(const char* name) {
    if (!std::filesystem::exists(path(name))) GTEST_SKIP() << path(name) << " not found";
  }
};

TEST_F(UrdfZooFile, IcubWarningsNameTheDefectiveLinks) {
  require("icub");
  if (IsSkipped()) return;  // GTEST_SKIP in a helper only leaves the helper
  Collect w;
  load_urdf(path("icub"), w.options(RootJoint::FreeFlyer));
  EXPECT_EQ(w.count("(link 'r_ankle_1')"), 1);  // ~1e-20 tensor: a point mass
  EXPECT_EQ(w.count("(link 'head')"), 1);       // point mass, 1.34 kg
  EXPECT_EQ(w.count("(link 'base_link')"), 1);  // the rank-1 1e-6 dummy root
  // With a fixed base the dummy root carries no dynamics: no warning about it.
  Collect f;
  load_urdf(path("icub"), f.options(RootJoint::Fixed));
  EXPECT_EQ(f.count("(link 'base_link')"), 0);
  EXPECT_EQ(f.count("(link 'r_ankle_1')"), 1);
}

TEST_F(UrdfZooFile, MimicSummaryOncePerModel) {
  require("talos_full");
  if (IsSkipped()) return;  // GTEST_SKIP in a helper only leaves the helper
  Collect w;
  const Model m = load_urdf(path("talos_full"), w.options());
  EXPECT_EQ(w.count("mimic joint(s) are loaded as independent coordinates"), 1);
  EXPECT_EQ(w.count("12 mimic joint(s)"), 1);
  for (const MimicRelation& r : m.mimics()) {
    EXPECT_EQ(m.joint_nv(r.follower), 1);
    EXPECT_EQ(m.joint_nv(r.leader), 1);
    EXPECT_TRUE(std::abs(r.multiplier) == 1.0) << m.joint_name(r.follower);
  }
}

TEST_F(UrdfZooFile, Pr2ContinuousJointsHaveInfinitePositionLimits) {
  require("pr2");
  if (IsSkipped()) return;  // GTEST_SKIP in a helper only leaves the helper
  const Model m = load_urdf(path("pr2"), quiet());
  int continuous = 0;
  for (int i = 1; i < m.nbodies(); ++i)
    if (m.joint_nq(i) == 1 && std::isinf(m.limits(i).lower[0])) {
      ++continuous;
      EXPECT_TRUE(std::isinf(m.limits(i).upper[0]));
    }
  EXPECT_EQ(continuous, 4);  // README: pr2 has 4 continuous joints
}

TEST_F(UrdfZooFile, RootLinkNamedWorldRenamesTheFreeFlyerBase) {
  require("ur5");  // ur5's root link is called "world"
  if (IsSkipped()) return;
  const Model m = load_urdf(path("ur5"), RootJoint::FreeFlyer);
  EXPECT_EQ(m.body_name(0), "universe");
  EXPECT_EQ(m.body_name(1), "world");
  const Model f = load_urdf(path("ur5"), RootJoint::Fixed);
  EXPECT_EQ(f.body_name(0), "world");
  EXPECT_EQ(f.name(), "ur5");
}

// ------------------------------------------------------------------ mapping
// A 5-link robot: base -(revolute, oblique axis)- upper -(fixed)- sensor -(prismatic)- slider,
// upper -(continuous)- wheel. Document order puts the fixed joint before "spin".
const char* kHandmade = R"(<?xml version="1.0"?>
<robot name="handmade">
  <link name="base">
    <inertial><origin xyz="0 0 0.1"/><mass value="3"/>
      <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.05"/></inertial>
  </link>
  <link name="upper">
    <inertial><origin xyz="0.01 0.02 0.2" rpy="0.3 -0.2 0.1"/><mass value="1.5"/>
      <inertia ixx="0.02" ixy="0.001" ixz="-0.002" iyy="0.025" iyz="0.0015" izz="0.015"/></inertial>
  </link>
  <link name="sensor">
    <inertial><origin xyz="0 0.05 0" rpy="0 0 0.5"/><mass value="0.2"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0025"/></inertial>
  </link>
  <link name="slider">
    <inertial><origin xyz="0.1 0 0"/><mass value="0.7"/>
      <inertia ixx="0.003" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.005"/></inertial>
  </link>
  <link name="wheel">
    <inertial><mass value="0.4"/><inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.3" rpy="0.1 0.2 0.3"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-1.5" upper="2" effort="50" velocity="3"/>
    <dynamics damping="0.7" friction="0.1"/>
  </joint>
  <joint name="sensor_mount" type="fixed">
    <parent link="upper"/><child link="sensor"/>
    <origin xyz="0.1 0 0.4" rpy="0 1.5707963267948966 0"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="sensor"/><child link="slider"/>
    <origin xyz="0 0.1 0" rpy="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.25" effort="100" velocity="0.5"/>
  </joint>
  <joint name="spin" type="continuous">
    <parent link="upper"/><child link="wheel"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 0 -1"/>
    <limit effort="5" velocity="20"/>
  </joint>
</robot>
)";

RigidBodyInertia urdf_inertia(double m, const Vec3& xyz, const Vec3& rpy, const Mat3& I) {
  const Mat3 R = Transform::from_rpy_xyz(rpy, Vec3::Zero()).rotation();
  return RigidBodyInertia::unchecked(m, xyz, R * I * R.transpose());
}
Mat3 sym(double xx, double xy, double xz, double yy, double yz, double zz) {
  Mat3 I;
  I << xx, xy, xz, xy, yy, yz, xz, yz, zz;
  return I;
}
JointLimits limits1(double lo, double hi, double vel, double eff) {
  JointLimits l;
  l.lower = VecX::Constant(1, lo);
  l.upper = VecX::Constant(1, hi);
  l.velocity = VecX::Constant(1, vel);
  l.effort = VecX::Constant(1, eff);
  return l;
}

TEST(UrdfMapping, LoadedModelEqualsTheHandBuiltOne) {
  Collect w;
  const Model loaded = load_urdf_string(kHandmade, w.options(), "handmade.urdf");
  EXPECT_TRUE(w.warnings.empty()) << w.warnings.front();

  // By hand. The sensor link is welded to "upper": its inertia is added there, expressed
  // in upper's frame through the 6x6 congruence X^T I X (an independent route from the
  // loader's RigidBodyInertia::transformed_inverse).
  const Transform X_sensor = Transform::from_rpy_xyz(Vec3(0, std::numbers::pi / 2, 0), Vec3(0.1, 0, 0.4));
  const RigidBodyInertia I_base = urdf_inertia(3, Vec3(0, 0, 0.1), Vec3::Zero(), sym(0.1, 0, 0, 0.1, 0, 0.05));
  const RigidBodyInertia I_upper =
      urdf_inertia(1.5, Vec3(0.01, 0.02, 0.2), Vec3(0.3, -0.2, 0.1), sym(0.02, 0.001, -0.002, 0.025, 0.0015, 0.015));
  const RigidBodyInertia I_sensor_own =
      urdf_inertia(0.2, Vec3(0, 0.05, 0), Vec3(0, 0, 0.5), sym(0.001, 0, 0, 0.002, 0, 0.0025));
  const Mat6 Xm = X_sensor.matrix_motion();
  const RigidBodyInertia I_sensor = RigidBodyInertia::from_matrix(Xm.transpose() * I_sensor_own.matrix() * Xm);
  const RigidBodyInertia I_slider = urdf_inertia(0.7, Vec3(0.1, 0, 0), Vec3::Zero(), sym(0.003, 0, 0, 0.004, 0, 0.005));
  const RigidBodyInertia I_wheel = urdf_inertia(0.4, Vec3::Zero(), Vec3::Zero(), sym(0.002, 0, 0, 0.002, 0, 0.003));

  Model hand("base");
  hand.set_name("handmade");
  hand.add_inertia(0, I_base);
  hand.add_body(0, make_revolute(Vec3(0, 0.6, 0.8)), Transform::from_rpy_xyz(Vec3(0.1, 0.2, 0.3), Vec3(0, 0, 0.3)),
                I_upper + I_sensor, "upper", "shoulder", limits1(-1.5, 2, 3, 50));
  hand.add_body(1, make_prismatic(Vec3::UnitX()), Transform::from_rpy_xyz(Vec3(0.2, 0, 0), Vec3(0, 0.1, 0)) * X_sensor,
                I_slider, "slider", "slide", limits1(-0.1, 0.25, 0.5, 100));
  hand.add_body(1, make_revolute(Vec3(0, 0, -1)), Transform::translation(Vec3(0, 0, 0.5)), I_wheel, "wheel", "spin",
                limits1(-kInf, kInf, 20, 5));
  hand.add_frame("sensor", 1, X_sensor);

  ASSERT_EQ(loaded.nbodies(), hand.nbodies());
  EXPECT_EQ(loaded.name(), hand.name());
  EXPECT_EQ(loaded.nq(), hand.nq());
  EXPECT_EQ(loaded.nv(), hand.nv());
  EXPECT_TRUE(same_inertia(loaded.inertia(0), hand.inertia(0)));
  for (int i = 0; i < hand.nbodies(); ++i) {
    SCOPED_TRACE("body " + std::to_string(i) + " " + hand.body_name(i));
    EXPECT_EQ(loaded.body_name(i), hand.body_name(i));
    EXPECT_EQ(loaded.joint_name(i), hand.joint_name(i));
    EXPECT_EQ(loaded.parent(i), hand.parent(i));
    EXPECT_EQ(joint_kind(loaded.joint(i)), joint_kind(hand.joint(i)));
    const MatS6 S_loaded = std::visit([](const auto& j) { return MatS6(j.S()); }, loaded.joint(i));
    const MatS6 S_hand = std::visit([](const auto& j) { return MatS6(j.S()); }, hand.joint(i));
    ASSERT_EQ(S_loaded.cols(), S_hand.cols());
    if (S_hand.cols() > 0) {
      EXPECT_LE((S_loaded - S_hand).cwiseAbs().maxCoeff(), kTol);
    }
    EXPECT_TRUE(same_transform(loaded.X_tree(i), hand.X_tree(i))) << loaded.X_tree(i) << "\nvs\n" << hand.X_tree(i);
    EXPECT_TRUE(same_inertia(loaded.inertia(i), hand.inertia(i)));
    EXPECT_TRUE(same_vec(loaded.limits(i).lower, hand.limits(i).lower));
    EXPECT_TRUE(same_vec(loaded.limits(i).upper, hand.limits(i).upper));
    EXPECT_TRUE(same_vec(loaded.limits(i).velocity, hand.limits(i).velocity));
    EXPECT_TRUE(same_vec(loaded.limits(i).effort, hand.limits(i).effort));
  }
  EXPECT_EQ(joint_kind(loaded.joint(1)), "revolute");     // oblique axis: general revolute
  EXPECT_EQ(joint_kind(loaded.joint(2)), "prismatic_x");  // fast path
  EXPECT_EQ(joint_kind(loaded.joint(3)), "revolute");     // -z is not the +z fast path
  ASSERT_EQ(loaded.frames().size(), 1u);
  EXPECT_EQ(loaded.frames()[0].name, "sensor");
  EXPECT_EQ(loaded.frames()[0].body, 1);
  EXPECT_TRUE(same_transform(loaded.frames()[0].X_body, X_sensor));
}

TEST(UrdfMapping, FixedChainsComposeIntoFramesAndInertia) {
  // base -(rev)- a -(fixed f1)- b -(fixed f2)- c -(rev)- d, plus base -(fixed)- mount.
  const std::string xml =
      robot(link("base") + link("a", 1.0) + link("b", 0.5) + link("c", 0.25) + link("d") + link("mount", 2.0) +
            joint("ja", "revolute", "base", "a", "<origin xyz='0 0 1'/>") +
            joint("f1", "fixed", "a", "b", "<origin xyz='0.1 0.2 0.3' rpy='0.4 0.5 0.6'/>") +
            joint("f2", "fixed", "b", "c", "<origin xyz='-0.3 0.1 0.2' rpy='-0.2 0.1 0.7'/>") +
            joint("jd", "revolute", "c", "d", "<origin xyz='0 0.5 0' rpy='0 0 1'/><axis xyz='0 1 0'/>") +
            joint("fm", "fixed", "base", "mount", "<origin xyz='1 2 3' rpy='0.1 0 0'/>"));
  const Model m = load_urdf_string(xml, quiet());
  const Transform X1 = Transform::from_rpy_xyz(Vec3(0.4, 0.5, 0.6), Vec3(0.1, 0.2, 0.3));
  const Transform X2 = Transform::from_rpy_xyz(Vec3(-0.2, 0.1, 0.7), Vec3(-0.3, 0.1, 0.2));
  const Transform Xd = Transform::from_rpy_xyz(Vec3(0, 0, 1), Vec3(0, 0.5, 0));

  ASSERT_EQ(m.nbodies(), 3);
  EXPECT_EQ(m.body_name(1), "a");
  EXPECT_EQ(m.body_name(2), "d");
  EXPECT_EQ(m.parent(2), 1);
  ASSERT_TRUE(m.has_frame("b") && m.has_frame("c") && m.has_frame("mount"));
  const Frame& b = m.frames()[m.frame_index("b")];
  const Frame& c = m.frames()[m.frame_index("c")];
  const Frame& mount = m.frames()[m.frame_index("mount")];
  EXPECT_EQ(b.body, 1);
  EXPECT_EQ(c.body, 1);
  EXPECT_EQ(mount.body, 0);
  EXPECT_TRUE(same_transform(b.X_body, X1));
  EXPECT_TRUE(same_transform(c.X_body, X2 * X1));
  EXPECT_TRUE(same_transform(mount.X_body, Transform::from_rpy_xyz(Vec3(0.1, 0, 0), Vec3(1, 2, 3))));
  EXPECT_TRUE(same_transform(m.X_tree(2), Xd * X2 * X1));
  // Body a carries a, b and c: 1.75 kg, each link's inertia moved through its frame pose.
  // link(name, m): mass m at the origin, tensor 0.01 * identity.
  auto own = [](double mass) { return RigidBodyInertia::unchecked(mass, Vec3::Zero(), Mat3::Identity() * 0.01); };
  const RigidBodyInertia expected =
      own(1.0) + own(0.5).transformed_inverse(X1) + own(0.25).transformed_inverse(X2 * X1);
  EXPECT_NEAR(m.inertia(1).mass(), 1.75, kTol);
  EXPECT_TRUE(same_inertia(m.inertia(1), expected));
  // The base collects base + mount (reference only; not in total_mass).
  EXPECT_NEAR(m.inertia(0).mass(), 3.0, kTol);
  EXPECT_NEAR(m.total_mass(), 2.75, kTol);
}

TEST(UrdfMapping, BodiesAreNumberedDepthFirstInDocumentOrder) {
  // Document order of the root's child joints: "z" (to zz, which has a child) before "a".
  const std::string xml = robot(link("root") + link("aa") + link("zz") + link("zz2") + link("aa2") +
                                joint("z", "revolute", "root", "zz") + joint("a", "revolute", "root", "aa") +
                                joint("a2", "revolute", "aa", "aa2") + joint("z2", "revolute", "zz", "zz2"));
  const Model m = load_urdf_string(xml, quiet());
  ASSERT_EQ(m.nbodies(), 5);
  EXPECT_EQ(m.body_name(1), "zz");
  EXPECT_EQ(m.body_name(2), "zz2");
  EXPECT_EQ(m.body_name(3), "aa");
  EXPECT_EQ(m.body_name(4), "aa2");
  EXPECT_EQ(m.subtree(1).size(), 2u);
}

TEST(UrdfMapping, FreeFlyerRootCarriesTheRootLink) {
  const std::string xml = robot(link("torso", 5.0) + link("head", 1.0) + link("imu", 0.5) +
                                joint("neck", "revolute", "torso", "head", "<origin xyz='0 0 0.4'/>") +
                                joint("imu_joint", "fixed", "torso", "imu", "<origin xyz='0.1 0 0'/>"));
  const Model m = load_urdf_string(xml, quiet(RootJoint::FreeFlyer));
  ASSERT_EQ(m.nbodies(), 3);
  EXPECT_EQ(m.body_name(0), "world");
  EXPECT_EQ(m.body_name(1), "torso");
  EXPECT_EQ(m.joint_name(1), "root_joint");
  EXPECT_TRUE(std::holds_alternative<JointFreeFlyer>(m.joint(1)));
  EXPECT_TRUE(same_transform(m.X_tree(1), Transform()));
  EXPECT_NEAR(m.inertia(1).mass(), 5.5, kTol);  // torso + welded imu
  EXPECT_NEAR(m.total_mass(), 6.5, kTol);
  EXPECT_EQ(m.frames()[m.frame_index("imu")].body, 1);

  // A URDF joint already called root_joint cannot take the free-flyer's name.
  const std::string clash = robot(link("torso") + link("head") + joint("root_joint", "revolute", "torso", "head"));
  expect_refused(clash, {"'root_joint'", "RootJoint::Fixed"}, quiet(RootJoint::FreeFlyer));
}

TEST(UrdfMapping, FloatingAndPlanarJoints) {
  const std::string xml =
      robot(link("ground") + link("puck") + link("drone") +
            joint("slide_plane", "planar", "ground", "puck", "<origin xyz='0 0 0.1'/><axis xyz='0 1 0'/>") +
            joint("fly", "floating", "ground", "drone", "<origin xyz='1 0 0'/>"));
  const Model m = load_urdf_string(xml, quiet());
  ASSERT_EQ(m.nbodies(), 3);
  ASSERT_TRUE(std::holds_alternative<JointPlanar>(m.joint(1)));
  EXPECT_TRUE(std::get<JointPlanar>(m.joint(1)).basis.col(2).isApprox(Vec3::UnitY(), kTol));
  EXPECT_EQ(m.joint_nq(1), 4);
  EXPECT_EQ(m.joint_nv(1), 3);
  EXPECT_TRUE(std::holds_alternative<JointFreeFlyer>(m.joint(2)));
  EXPECT_EQ(m.joint_name(2), "fly");
  EXPECT_EQ(m.nq(), 11);
  EXPECT_EQ(m.nv(), 9);
  EXPECT_TRUE(same_transform(m.X_tree(2), Transform::translation(Vec3(1, 0, 0))));
}

TEST(UrdfMapping, MimicIsRecordedWithMultiplierAndOffset) {
  const std::string xml =
      robot(link("b") + link("f1") + link("f2") + joint("lead", "prismatic", "b", "f1") +
            joint("follow", "prismatic", "b", "f2", "<mimic joint='lead' multiplier='-2' offset='0.01'/>"));
  Collect w;
  const Model m = load_urdf_string(xml, w.options());
  ASSERT_EQ(m.mimics().size(), 1u);
  EXPECT_EQ(m.mimics()[0].follower, m.joint_index("follow"));
  EXPECT_EQ(m.mimics()[0].leader, m.joint_index("lead"));
  EXPECT_EQ(m.mimics()[0].multiplier, -2.0);
  EXPECT_EQ(m.mimics()[0].offset, 0.01);
  EXPECT_EQ(m.nv(), 2);  // the follower stays an independent coordinate
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_CONTAINS(w.warnings[0],
                  "1 mimic joint(s) are loaded as independent coordinates; tree algorithms do not "
                  "enforce <mimic> (the constraint API, constraints/, does)");
  // Not a defect: strict mode loads it too.
  EXPECT_NO_THROW(load_urdf_string(xml, quiet(RootJoint::Fixed, true)));
}

TEST(UrdfMapping, MissingInertialIsMasslessAndUnknownElementsAreIgnored) {
  const std::string xml = robot(
      "<material name='red'><color rgba='1 0 0 1'/></material><gazebo><plugin name='x'/></gazebo>"
      "<link name='base'/><link name='arm'>" +
      inertial(2.0) +
      "<visual><geometry><mesh filename='package://nowhere/arm.dae'/></geometry><material name='undefined'/>"
      "</visual><collision><geometry><box size='nan x 1'/></geometry></collision></link>" +
      joint("j", "revolute", "base", "arm") + "<transmission name='t'><joint name='j'/></transmission>");
  const Model m = load_urdf_string(xml, quiet(RootJoint::Fixed, true));
  EXPECT_EQ(m.inertia(0).mass(), 0.0);
  EXPECT_NEAR(m.total_mass(), 2.0, kTol);
}

TEST(UrdfMapping, MalformedLoopJointElementsAreRefusedByName) {
  // The extension element of docs/loops.md: every required part is checked and named.
  const std::string base = two_links();
  auto with = [&](const std::string& e) { return std::string(base).insert(base.size() - 8, e); };
  expect_refused(with("<loop_joint name='close'/>"), {"'close'", "no type"});
  expect_refused(with("<loop_joint name='close' type='revolute'><successor link='arm'/></loop_joint>"),
                 {"'close'", "<predecessor>"});
  expect_refused(with("<loop_joint name='close' type='hinge'><predecessor link='base'/><successor link='arm'/>"
                      "</loop_joint>"),
                 {"'close'", "unknown loop joint type 'hinge'"});
  expect_refused(with("<loop_joint name='close' type='spherical'><predecessor link='base'/>"
                      "<successor link='nowhere'/></loop_joint>"),
                 {"'close'", "'nowhere'", "does not exist"});
  expect_refused(with("<loop_joint name='close' type='revolute'><predecessor link='base'/><successor link='arm'/>"
                      "<axis xyz='0 0 0'/></loop_joint>"),
                 {"'close'", "zero-length <axis>"});
  expect_refused(with("<loop_joint name='close' type='fixed'><predecessor link='arm' xyz='nan 0 0'/>"
                      "<successor link='base'/></loop_joint>"),
                 {"'close'", "non-finite"});
  expect_refused(with("<loop_joint name='close' type='fixed'><predecessor link='arm'/><successor link='arm'/>"
                      "</loop_joint>"),
                 {"'close'", "rigidly connected"});
}

// ------------------------------------------------------------------ defects: warn, or refuse if strict
struct DefectCase {
  const char* name;
  std::string xml;
  const char* needle;  // in the warning and in the strict error
  const char* who;     // "(link 'X')" or "(joint 'Y')"
};

std::vector<DefectCase> defect_cases() {
  return {
      {"point_mass",
       two_links("",
                 "<link name='arm'>" + inertial(1.0, "ixx='0' ixy='0' ixz='0' iyy='0' iyz='0' izz='0'") + "</link>"),
       "point mass", "(link 'arm')"},
      {"triangle",
       two_links("", "<link name='arm'>" + inertial(1.0, "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.3'") +
                         "</link>"),
       "triangle inequality", "(link 'arm')"},
      {"rank_deficient",
       two_links("", "<link name='arm'>" +
                         inertial(1e-6, "ixx='1e-6' ixy='1e-6' ixz='1e-6' iyy='1e-6' iyz='1e-6' izz='1e-6'") +
                         "</link>"),
       "rank-deficient", "(link 'arm')"},
      {"massless_with_tensor",
       robot(link("base") + "<link name='arm'>" +
             inertial(0.0, "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='0.1'") + "</link>" +
             joint("j", "revolute", "base", "arm")),
       "massless link with a nonzero inertia tensor", "(link 'arm')"},
      {"non_unit_axis", two_links("<axis xyz='0 0 2'/>"), "not a unit vector", "(joint 'j')"},
      {"massless_moving_joint", robot(link("base") + "<link name='arm'/>" + joint("j", "revolute", "base", "arm")),
       "moves no mass or inertia", "(link 'arm', joint 'j')"},
      {"mimic_on_fixed",
       robot(link("base") + link("arm") + link("tip") + joint("j", "revolute", "base", "arm") +
             joint("weld", "fixed", "arm", "tip", "<mimic joint='j'/>")),
       "<mimic> on a fixed joint", "(joint 'weld')"},
  };
}

TEST(UrdfDefects, LoadedWithOneWarningByDefaultRefusedInStrictMode) {
  for (const DefectCase& c : defect_cases()) {
    SCOPED_TRACE(c.name);
    Collect w;
    EXPECT_NO_THROW(load_urdf_string(c.xml, w.options(), "test.urdf"));
    ASSERT_EQ(w.warnings.size(), 1u);
    EXPECT_EQ(w.warnings[0].rfind("test.urdf: ", 0), 0u) << w.warnings[0];
    EXPECT_CONTAINS(w.warnings[0], c.needle);
    EXPECT_CONTAINS(w.warnings[0], c.who);
    expect_refused(c.xml, {c.needle, c.who, "[strict]"}, quiet(RootJoint::Fixed, true));
  }
}

TEST(UrdfDefects, NonUnitAxisIsNormalisedAndTinyDeviationsAreSilent) {
  Collect w;
  const Model m = load_urdf_string(two_links("<axis xyz='0 3 4'/>"), w.options());
  EXPECT_EQ(w.warnings.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<JointRevolute>(m.joint(1)));
  EXPECT_TRUE(std::get<JointRevolute>(m.joint(1)).axis.isApprox(Vec3(0, 0.6, 0.8), kTol));
  Collect quiet_axis;  // romeo-style 1e-7 deviation: normalised without a warning
  load_urdf_string(two_links("<axis xyz='0.121869 -0.992546 -4.37e-08'/>"), quiet_axis.options());
  EXPECT_TRUE(quiet_axis.warnings.empty());
}

TEST(UrdfDefects, HugeAxisComponentsDoNotOverflow) {
  // Found by fuzz_urdf: |axis| overflowed to inf and the normalised axis became zero.
  Collect w;
  const Model m = load_urdf_string(
      robot(link("a") + link("b") + joint("p", "prismatic", "a", "b", "<axis xyz='2 1 1e308'/>")), w.options());
  const MatS6 S = std::visit([](const auto& j) { return MatS6(j.S()); }, m.joint(1));
  ASSERT_EQ(S.cols(), 1);
  EXPECT_LE((S.col(0) - Motion(Vec3::Zero(), Vec3::UnitZ()).vector()).cwiseAbs().maxCoeff(), kTol);
  EXPECT_EQ(w.count("not a unit vector"), 1);
}

TEST(UrdfDefects, NegligibleTensorIsAPointMass) {
  Collect w;
  const Model m = load_urdf_string(
      two_links(
          "", "<link name='arm'>" +
                  inertial(0.7, "ixx='2.7e-20' ixy='-1.7e-21' ixz='1.4e-20' iyy='5.4e-20' iyz='3.4e-21' izz='1.4e-20'",
                           "<origin xyz='0.1 0 0'/>") +
                  "</link>"),
      w.options());
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_CONTAINS(w.warnings[0], "point mass");
  // Exactly the point mass (the ~1e-20 tensor was set to zero, not kept).
  EXPECT_EQ(m.inertia(1).matrix(), RigidBodyInertia::unchecked(0.7, Vec3(0.1, 0, 0), Mat3::Zero()).matrix());
}

TEST(UrdfDefects, DefaultWarningGoesToStderr) {
  testing::internal::CaptureStderr();
  load_urdf_string(two_links("<axis xyz='0 0 2'/>"), UrdfOptions{}, "noisy.urdf");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_CONTAINS(err, "plucker: warning: noisy.urdf: ");
  EXPECT_CONTAINS(err, "(joint 'j')");
}

// ------------------------------------------------------------------ refusals
TEST(UrdfRefuses, MalformedXml) {
  expect_refused("<robot name='t'><link name='a'></robot>", {"malformed XML"});
  expect_refused("", {"malformed XML"});
  const char with_nul[] = "<robot name='t'><link name='a'/>\0</robot>";
  expect_refused(std::string(with_nul, sizeof(with_nul) - 1), {"malformed XML", "NUL"});
  expect_refused(std::string(200, '<'), {"malformed XML"});
}

TEST(UrdfRefuses, NotARobot) {
  expect_refused("<model name='t'/>", {"<model>", "expected <robot>"});
  expect_refused("<robot><link name='a'/></robot>", {"<robot> has no name"});
  expect_refused("<robot name='t'/>", {"no <link>"});
}

TEST(UrdfRefuses, NonFiniteOrigin) {
  expect_refused(two_links("<origin xyz='0 nan 0'/>"), {"non-finite", "'nan'", "(joint 'j')"});
  expect_refused(two_links("<origin rpy='0 0 inf'/>"), {"non-finite", "(joint 'j')"});
  expect_refused(two_links("<origin xyz='0 1e999 0'/>"), {"non-finite or out-of-range", "(joint 'j')"});
}

TEST(UrdfRefuses, NonFiniteAxis) {
  expect_refused(two_links("<axis xyz='0 -inf 1'/>"), {"non-finite", "<axis xyz", "(joint 'j')"});
}

TEST(UrdfRefuses, NonFiniteMass) {
  expect_refused(two_links("",
                           "<link name='arm'><inertial><mass value='NaN'/><inertia ixx='1' ixy='0' ixz='0' "
                           "iyy='1' iyz='0' izz='1'/></inertial></link>"),
                 {"non-finite", "<mass value>", "(link 'arm')"});
}

TEST(UrdfRefuses, NonFiniteInertia) {
  expect_refused(two_links("", "<link name='arm'>" +
                                   inertial(1.0, "ixx='1' ixy='0' ixz='0' iyy='inf' iyz='0' izz='1'") + "</link>"),
                 {"non-finite", "<inertia iyy>", "(link 'arm')"});
  expect_refused(two_links("", "<link name='arm'>" +
                                   inertial(1.0, "ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'",
                                            "<origin xyz='0 0 0' rpy='nan 0 0'/>") +
                                   "</link>"),
                 {"non-finite", "(link 'arm')"});
}

TEST(UrdfRefuses, NonFiniteLimits) {
  expect_refused(two_links("<limit lower='-1' upper='nan' effort='1' velocity='1'/>"),
                 {"non-finite", "<limit upper>", "(joint 'j')"});
  expect_refused(two_links("<limit lower='-1' upper='1' effort='inf' velocity='1'/>"),
                 {"non-finite", "<limit effort>", "(joint 'j')"});
}

TEST(UrdfRefuses, UnparsableNumbers) {
  expect_refused(two_links("<origin xyz='0 ${pi} 0'/>"), {"invalid number '${pi}'", "(joint 'j')"});
  expect_refused(two_links("<origin xyz='0 0'/>"), {"expected 3 numbers", "(joint 'j')"});
  expect_refused(two_links("", "<link name='arm'>" +
                                   inertial(1.0, "ixx='1,5' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'") + "</link>"),
                 {"invalid number '1,5'", "(link 'arm')"});
}

TEST(UrdfRefuses, NegativeMass) {
  expect_refused(two_links("", "<link name='arm'>" + inertial(-1.0) + "</link>"), {"negative mass", "(link 'arm')"});
}

TEST(UrdfRefuses, InertiaNotPositiveSemidefinite) {
  expect_refused(two_links("", "<link name='arm'>" +
                                   inertial(1.0, "ixx='0.1' ixy='0' ixz='0' iyy='0.1' iyz='0' izz='-0.1'") + "</link>"),
                 {"not positive semi-definite", "(link 'arm')"});
  // Indefinite through products of inertia; refused even on a link merged by a fixed joint.
  const std::string bad =
      "<link name='tool'>" + inertial(1.0, "ixx='0.1' ixy='0.5' ixz='0' iyy='0.1' iyz='0' izz='0.1'") + "</link>";
  expect_refused(robot(link("base") + link("arm") + bad + joint("j", "revolute", "base", "arm") +
                       joint("weld", "fixed", "arm", "tool")),
                 {"not positive semi-definite", "(link 'tool')"});
}

TEST(UrdfRefuses, ZeroLengthAxisOnMovableJoint) {
  expect_refused(two_links("<axis xyz='0 0 0'/>"), {"zero-length axis", "(joint 'j')"});
  expect_refused(robot(link("a") + link("b") + joint("p", "planar", "a", "b", "<axis xyz='0 0 0'/>")),
                 {"zero-length axis", "(joint 'p')"});
  // On a fixed joint the axis is unused (icub and talos write axis="0 0 0" there).
  EXPECT_NO_THROW(
      load_urdf_string(robot(link("a") + link("b") + joint("w", "fixed", "a", "b", "<axis xyz='0 0 0'/>")), quiet()));
}

TEST(UrdfRefuses, LinkWithTwoParents) {
  const std::string xml = robot(link("base") + link("left") + link("right") + link("bar") +
                                joint("jl", "revolute", "base", "left") + joint("jr", "revolute", "base", "right") +
                                joint("jl2", "revolute", "left", "bar") + joint("jr2", "revolute", "right", "bar"));
  expect_refused(xml, {"two parents", "(link 'bar'", "'jl2'", "'jr2'", "<loop_joint>"});
}

TEST(UrdfRefuses, CycleOfJoints) {
  const std::string xml = robot(link("root") + link("a") + link("b") + link("c") +
                                joint("ja", "revolute", "root", "a") + joint("jab", "revolute", "a", "b") +
                                joint("jbc", "revolute", "b", "c") + joint("jca", "revolute", "c", "b"));
  // b has two parents here; a pure cycle (each link one parent) is a separate component:
  expect_refused(xml, {"two parents"});
  const std::string cycle =
      robot(link("root") + link("a") + link("b") + link("c") + joint("jab", "revolute", "a", "b") +
            joint("jbc", "revolute", "b", "c") + joint("jca", "revolute", "c", "a"));
  expect_refused(cycle, {"cycle", "'a'", "'b'", "'c'",
                         "URDF cannot express kinematic loops; declare the loop-closing joint as a <loop_joint> "
                         "element (see docs/loops.md)"});
  // A joint from a link to itself is the shortest cycle.
  expect_refused(robot(link("a") + joint("self", "revolute", "a", "a")), {"cycle", "'a'", "(link 'a'"});
}

TEST(UrdfRefuses, CycleIsListedParentToChild) {
  // The cycle's links in joint order, closing on the first: the last name used to repeat the
  // link where the walk found the cycle ("'b' -> 'c' -> 'a' -> 'a'" for this one).
  const std::string cycle =
      robot(link("root") + link("a") + link("b") + link("c") + joint("jab", "revolute", "a", "b") +
            joint("jbc", "revolute", "b", "c") + joint("jca", "revolute", "c", "a"));
  expect_refused(cycle, {"cycle through links 'b' -> 'c' -> 'a' -> 'b';"});
  expect_refused(robot(link("a") + joint("self", "revolute", "a", "a")), {"cycle through links 'a' -> 'a';"});
}

TEST(UrdfRefuses, JointToMissingLink) {
  expect_refused(robot(link("base") + joint("j", "revolute", "base", "ghost")),
                 {"child link 'ghost' does not exist", "(joint 'j')"});
  expect_refused(robot(link("arm") + joint("j", "revolute", "ghost", "arm")),
                 {"parent link 'ghost' does not exist", "(joint 'j')"});
  expect_refused(robot(link("a") + link("b") + "<joint name='j' type='fixed'><child link='b'/></joint>"),
                 {"no <parent", "(joint 'j')"});
}

TEST(UrdfRefuses, NoRootOrSeveralRoots) {
  expect_refused(robot(link("a") + link("b") + link("c") + joint("j", "revolute", "a", "b")),
                 {"2 root links", "'a'", "'c'", "(link 'c')"});
  // Every link a child: necessarily a cycle, reported as such.
  expect_refused(robot(link("a") + link("b") + joint("j1", "revolute", "a", "b") + joint("j2", "revolute", "b", "a")),
                 {"cycle", "<loop_joint>"});
}

TEST(UrdfRefuses, DuplicatesAndUnknownTypes) {
  expect_refused(robot(link("a") + link("a")), {"duplicate link name", "(link 'a')"});
  expect_refused(
      robot(link("a") + link("b") + link("c") + joint("j", "revolute", "a", "b") + joint("j", "revolute", "a", "c")),
      {"duplicate joint name", "(joint 'j')"});
  expect_refused(robot(link("a") + link("b") + joint("j", "ball", "a", "b")),
                 {"unknown joint type 'ball'", "(joint 'j')"});
  expect_refused(robot("<link/>"), {"<link> has no name"});
}

TEST(UrdfRefuses, BadLimits) {
  expect_refused(
      robot(link("a") + link("b") + "<joint name='j' type='revolute'><parent link='a'/><child link='b'/></joint>"),
      {"needs a <limit>", "(joint 'j')"});
  expect_refused(two_links("<limit lower='1' upper='-1' effort='1' velocity='1'/>"), {"lower limit", "(joint 'j')"});
  expect_refused(two_links("<limit lower='-1' upper='1' velocity='1'/>"), {"'effort'", "(joint 'j')"});
  expect_refused(two_links("<limit lower='-1' upper='1' effort='1' velocity='-1'/>"),
                 {"negative velocity limit", "(joint 'j')"});
}

TEST(UrdfRefuses, BadMimic) {
  expect_refused(two_links("<mimic joint='nobody'/>"), {"'nobody'", "does not exist", "(joint 'j')"});
  expect_refused(two_links("<mimic joint='j'/>"), {"the joint itself", "(joint 'j')"});
  expect_refused(robot(link("a") + link("b") + link("c") + joint("fly", "floating", "a", "b") +
                       joint("j", "revolute", "a", "c", "<mimic joint='fly'/>")),
                 {"leader must have one DoF", "(joint 'j')"});
}

TEST(UrdfRefuses, MissingFile) {
  try {
    load_urdf("/nonexistent/robot.urdf");
    ADD_FAILURE() << "no exception";
  } catch (const ModelError& e) {
    EXPECT_CONTAINS(e.what(), "/nonexistent/robot.urdf");
  }
}

// ------------------------------------------------------------------ limits (docs/urdf.md, "Limits")
// A linear pass over the raw bytes refuses documents beyond urdf_limits before tinyxml2 parses
// them. These tests assert the errors, not times; each input is refused at once now, where the
// loader used to spend seconds to minutes on it (or load it).

std::string attributes(long n) {
  std::string s;
  for (long k = 0; k < n; ++k) s += " a" + std::to_string(k) + "='1'";
  return s;
}

TEST(UrdfLimits, ElementWithManyAttributesIsRefusedBeforeParsing) {
  // Guards the quadratic duplicate-attribute check of tinyxml2: this element took 10.6 s to
  // load (and 200,000 attributes did not finish in 120 s); now refused by the pre-pass.
  const std::string xml = "<robot name='t'>\n<link name='a'" + attributes(40'000) + "/>" + link("b") + "</robot>";
  expect_refused(xml, {"element <link> has 40001 attributes", "over the cap of 64 per element", "(line 2)"});
  // At the cap it loads (the attributes are ignored).
  EXPECT_NO_THROW(load_urdf_string(
      robot("<link name='a'" + attributes(urdf_limits::kMaxAttributesPerElement - 1) + "/>"), quiet()));
}

TEST(UrdfLimits, TooManyAttributesInAllAreRefused) {
  // Guards the memory of the DOM: 4,000,001 attributes spread over elements within the
  // per-element cap (they loaded before, at ~70 bytes of DOM each).
  const long per = urdf_limits::kMaxAttributesPerElement;
  const long elements = urdf_limits::kMaxAttributes / per + 1;
  std::string xml = "<robot name='t'>" + link("a") + "\n";
  const std::string one = "<x" + attributes(per) + "/>";
  xml.reserve(xml.size() + static_cast<size_t>(elements) * one.size() + 16);
  for (long k = 0; k < elements; ++k) xml += one;
  xml += "</robot>";
  expect_refused(xml, {"attributes, over the cap of 4000000", "the cap is passed at line 2"});
}

TEST(UrdfLimits, TooManyElementsAreRefused) {
  // Guards the memory of the DOM: 2,000,001 empty elements (and comments, which tinyxml2
  // keeps as nodes too) loaded before.
  std::string xml = "<robot name='t'>" + link("a") + "\n";
  for (long k = 0; k < urdf_limits::kMaxNodes / 2; ++k) xml += "<x/><!---->";
  xml += "</robot>";
  expect_refused(xml, {"2000005 elements and other markup nodes", "over the cap of 2000000"});
}

TEST(UrdfLimits, TooManyLoopJointsAreRefused) {
  // Guards the quadratic cost of Model::add_loop_joint's duplicate-name check: 1,001 loop
  // joints loaded before (40,000 took 1.2 s, the element cap would allow ~660,000).
  std::string loops;
  for (long k = 0; k <= urdf_limits::kMaxLoopJoints; ++k)
    loops += "\n<loop_joint name='l" + std::to_string(k) +
             "' type='spherical'><predecessor link='a'/><successor link='b'/></loop_joint>";
  const std::string tree = link("a") + link("b") + joint("j", "continuous", "a", "b");
  expect_refused(robot(tree + loops), {"1001 <loop_joint> elements, over the cap of 1000", "passed at line 1002"});
  const size_t last = loops.rfind('\n');
  EXPECT_NO_THROW(load_urdf_string(robot(tree + loops.substr(0, last)), quiet()));
}

TEST(UrdfLimits, DeepNestingIsRefused) {
  // 65 nested elements loaded before (tinyxml2's own cap is 100, with a terse message).
  std::string open, close;
  for (int k = 0; k < urdf_limits::kMaxDepth; ++k) open += "<g>", close += "</g>";
  expect_refused(robot(link("a") + "\n\n" + open + close), {"nested more than 64 deep", "(line 3)"});
  // 64 deep in all, <robot> included, loads.
  open.resize(open.size() - 3), close.resize(close.size() - 4);
  EXPECT_NO_THROW(load_urdf_string(robot(link("a") + open + close), quiet()));
}

TEST(UrdfLimits, LargeDocumentIsRefused) {
  // A 64 MiB comment loaded before; now refused without being parsed.
  std::string xml = robot(link("a") + "<!--");
  xml.append(urdf_limits::kMaxBytes, 'x');
  xml += "--></robot>";
  expect_refused(xml, {"bytes, over the cap of 67108864 bytes"});
}

TEST(UrdfLimits, HundredThousandLinkChainIsWithinTheCaps) {
  // Guards the caps against being set too tight: the elements and attributes of a
  // 100,000-link revolute chain (scripts/gen-chain-urdf.py: 37 MB, 1,000,000 elements,
  // 1,900,000 attributes) must load. The joints are fixed here, so that the model (one body,
  // 99,999 frames) costs no Model::add_body per link; the fixed joints keep their <axis> and
  // <limit>, which the loader reads for movable joints only.
  const int n = 100'000;
  std::string xml = "<?xml version=\"1.0\"?>\n<robot name=\"chain\">\n";
  xml.reserve(380u * n);
  for (int i = 0; i < n; ++i) {
    const std::string li = std::to_string(i);
    xml += "<link name=\"link" + li +
           "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.004\" ixy=\"0\" ixz=\"0\" iyy=\"0.005\" iyz=\"0\" "
           "izz=\"0.002\"/></inertial></link>\n";
    if (i + 1 < n)
      xml += "<joint name=\"joint" + std::to_string(i + 1) + "\" type=\"fixed\"><parent link=\"link" + li +
             "\"/><child link=\"link" + std::to_string(i + 1) +
             "\"/><origin xyz=\"0.01 0 0.1\" rpy=\"0.05 -0.03 0.02\"/><axis xyz=\"0 0 1\"/><limit lower=\"-3.14\" "
             "upper=\"3.14\" effort=\"100\" velocity=\"10\"/></joint>\n";
  }
  xml += "</robot>\n";
  EXPECT_GT(xml.size(), 36'000'000u);
  const Model m = load_urdf_string(xml, quiet(RootJoint::FreeFlyer), "chain.urdf");
  EXPECT_EQ(m.nbodies(), 2);
  EXPECT_EQ(static_cast<int>(m.frames().size()), n - 1);
  EXPECT_NEAR(m.total_mass(), n, 1e-6 * n);
}

TEST(UrdfLimits, ErrorsInPiecesKeepTheirLineAndMalformedXmlComesFirst) {
  // <robot>'s children are parsed one at a time (the DOM never holds the whole document):
  // line numbers are the document's, and malformed XML anywhere is reported before a defect of
  // an earlier element, as a parse of the whole document would.
  expect_refused("<robot name='t'>\n" + link("a") + "\n\n<link name='b'><inertial>\n</link>\n</robot>",
                 {"malformed XML at line 4: XML_ERROR_MISMATCHED_ELEMENT (XMLElement name=inertial)"});
  expect_refused("<robot name='t'>\n<link/>\n" + link("a") + "\n<joint name='j'>\n</robot>", {"malformed XML"});
  expect_refused("<robot name='t'>\n" + link("a") + "\n<link/>\n</robot>", {"<link> has no name", "line 3"});
  expect_refused("<robot name='t'>\n" + link("a") + "\n" + link("b") + "\n<link name='c'>\n</robot>",
                 {"malformed XML"});
  expect_refused("<robot name='t'>" + link("a") + "<!--", {"malformed XML"});
}

TEST(UrdfLimits, PiecesAreCutWhereTinyxml2ReadsTags) {
  // Found by fuzz_urdf's comparison with a whole-document parse: the pre-pass must read tags
  // exactly as tinyxml2 does, or a piece is cut in the wrong place (or a cap is evaded).
  // Whitespace after '<', and end tags with attributes, are tags to tinyxml2; "</x .../>" is
  // an empty element x.
  const Model m = load_urdf_string("<robot name='t'>< link name='a'></link x='1'>\n</link name='b'/>" +
                                       joint("j", "continuous", "a", "b") + "< /robot>",
                                   quiet());
  EXPECT_EQ(m.nbodies(), 2);
  EXPECT_EQ(m.body_name(1), "b");
  // An end tag's attributes count (tinyxml2 checks them for duplicates too).
  expect_refused(robot(link("a") + "<x></x" + attributes(100) + ">"), {"element </x> has 100 attributes"});
  // "<!--->" does not end the comment it starts.
  const Model c = load_urdf_string(robot("<!---> " + link("hidden") + " -->" + link("a")), quiet());
  EXPECT_EQ(c.body_name(0), "a");
  // tinyxml2 ends the document at an end tag outside every element, and ignores the rest.
  expect_refused("<r/></x>" + robot(link("a")) + "<", {"the document element is <r>, expected <robot>"});
  // A defect of <robot> itself waits for the pieces' XML to be checked.
  expect_refused("<robot>" + link("a") + "<link name='b'><inertial></link></robot>", {"malformed XML"});
}

// ------------------------------------------------------------------ URDF semantics (no urdfdom)
TEST(UrdfMapping, UrdfDefaults) {
  // The defaults urdfdom supplied before the loader read the values itself: no <origin> is
  // the identity, no <axis> is 1 0 0, a <limit> without lower/upper is [0, 0], a <mimic>
  // without multiplier/offset is 1 and 0, an <inertial> without <origin> is at the link origin.
  const std::string xml = robot(
      link("b") +
      "<link name='c'><inertial><mass value='2'/><inertia ixx='0.1' ixy='0' ixz='0' iyy='0.2' iyz='0' "
      "izz='0.3'/></inertial></link>" +
      link("d") +
      "<joint name='j' type='revolute'><parent link='b'/><child link='c'/><limit effort='3' velocity='4'/></joint>" +
      "<joint name='k' type='prismatic'><parent link='b'/><child link='d'/><limit effort='3' velocity='4'/>"
      "<mimic joint='j'/></joint>");
  const Model m = load_urdf_string(xml, quiet());
  ASSERT_EQ(m.nbodies(), 3);
  EXPECT_EQ(joint_kind(m.joint(1)), "revolute_x");
  EXPECT_EQ(joint_kind(m.joint(2)), "prismatic_x");
  EXPECT_TRUE(same_transform(m.X_tree(1), Transform()));
  EXPECT_TRUE(same_vec(m.limits(1).lower, VecX::Zero(1)));
  EXPECT_TRUE(same_vec(m.limits(1).upper, VecX::Zero(1)));
  EXPECT_TRUE(same_vec(m.limits(1).effort, VecX::Constant(1, 3)));
  EXPECT_TRUE(same_vec(m.limits(1).velocity, VecX::Constant(1, 4)));
  EXPECT_TRUE(same_inertia(m.inertia(1), RigidBodyInertia::unchecked(2, Vec3::Zero(), sym(0.1, 0, 0, 0.2, 0, 0.3))));
  ASSERT_EQ(m.mimics().size(), 1u);
  EXPECT_EQ(m.mimics()[0].multiplier, 1.0);
  EXPECT_EQ(m.mimics()[0].offset, 0.0);
  // A continuous joint without <limit>: unlimited.
  const Model c = load_urdf_string(robot(link("b") + link("c") + joint("w", "continuous", "b", "c")), quiet());
  EXPECT_TRUE(same_vec(c.limits(1).lower, VecX::Constant(1, -kInf)));
  EXPECT_TRUE(same_vec(c.limits(1).effort, VecX::Constant(1, kInf)));
}

// ------------------------------------------------------------------ physical range
// physical_range.hpp: refused at load in strict and default mode alike, naming the link or
// joint and the value (they loaded before: a joint origin of 1e308 gave rnea = [inf, -inf, ...]).
void expect_refused_both_modes(const std::string& xml, std::initializer_list<std::string> needles) {
  expect_refused(xml, needles, quiet());
  expect_refused(xml, needles, quiet(RootJoint::FreeFlyer, true));
}

TEST(UrdfPhysicalRange, JointOriginBeyondTheRangeIsRefused) {
  expect_refused_both_modes(two_links("<origin xyz='1e308 0 0'/>"),
                            {"joint origin at 1e+308 m", "beyond the physical range of 1e+06 m", "(joint 'j')"});
  expect_refused_both_modes(two_links("<origin xyz='0 -7e5 8e5'/>"), {"joint origin at 1.06301e+06 m", "(joint 'j')"});
  EXPECT_NO_THROW(load_urdf_string(two_links("<origin xyz='0 0 1e6'/>"), quiet()));
}

TEST(UrdfPhysicalRange, CentreOfMassMassAndInertiaBeyondTheRangeAreRefused) {
  expect_refused_both_modes(
      two_links("", "<link name='arm'>" +
                        inertial(1.0, "ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'", "<origin xyz='2e6 0 0'/>") +
                        "</link>"),
      {"centre of mass", "at 2e+06 m", "(link 'arm')"});
  expect_refused_both_modes(two_links("", "<link name='arm'>" + inertial(2e9) + "</link>"),
                            {"mass 2e+09 kg, beyond the physical range of 1e+09 kg", "(link 'arm')"});
  expect_refused_both_modes(
      two_links("", "<link name='arm'>" + inertial(1.0, "ixx='1e22' ixy='0' ixz='0' iyy='1e22' iyz='0' izz='1e22'") +
                        "</link>"),
      {"inertia entry ixx = 1e+22 kg m^2, beyond the physical range of 1e+21 kg m^2", "(link 'arm')"});
  expect_refused_both_modes(
      two_links("",
                "<link name='arm'>" + inertial(1.0, "ixx='1' ixy='-3e21' ixz='0' iyy='1' iyz='0' izz='1'") + "</link>"),
      {"inertia entry ixy = -3e+21", "(link 'arm')"});
  // The root link of a fixed base carries no dynamics, but the range is a hard limit.
  expect_refused(
      robot("<link name='base'>" + inertial(2e9) + "</link>" + link("arm") + joint("j", "revolute", "base", "arm")),
      {"mass 2e+09 kg", "(link 'base')"});
}

TEST(UrdfPhysicalRange, ComposedPosesOfMergedLinksBeyondTheRangeAreRefused) {
  // Each origin is within the range; composed through fixed joints, they are not.
  const std::string chain = link("base") + link("a") + link("b") + link("c") +
                            joint("f1", "fixed", "base", "a", "<origin xyz='9e5 0 0'/>") +
                            joint("f2", "fixed", "a", "b", "<origin xyz='9e5 0 0'/>");
  expect_refused_both_modes(
      robot(chain + joint("j", "revolute", "a", "c")),
      {"pose of the merged link relative to body 'base'", "at 1.8e+06 m", "(link 'b', joint 'f2')"});
  expect_refused_both_modes(
      robot(link("base") + link("a") + link("c") + joint("f1", "fixed", "base", "a", "<origin xyz='9e5 0 0'/>") +
            joint("j", "revolute", "a", "c", "<origin xyz='0 0 9e5'/>")),
      {"joint origin relative to body 'base'", "at 1.27279e+06 m", "(joint 'j')"});
}

TEST(UrdfPhysicalRange, LoopJointFramesBeyondTheRangeAreRefused) {
  const std::string base =
      robot(link("a") + link("b") + link("c") + link("w") + joint("jb", "revolute", "a", "b") +
            joint("jc", "revolute", "a", "c") + joint("fw", "fixed", "c", "w", "<origin xyz='0 9e5 0'/>") + "LOOP");
  auto with = [&](const std::string& loop) { return std::string(base).replace(base.find("LOOP"), 4, loop); };
  expect_refused_both_modes(with("<loop_joint name='close' type='spherical'><predecessor link='b' xyz='0 0 3e6'/>"
                                 "<successor link='c'/></loop_joint>"),
                            {"<predecessor> frame at 3e+06 m", "(loop joint 'close')"});
  // Composed with the pose of a merged link.
  expect_refused_both_modes(with("<loop_joint name='close' type='spherical'><predecessor link='b'/>"
                                 "<successor link='w' xyz='0 9e5 0'/></loop_joint>"),
                            {"<successor> frame relative to body 'c' at 1.8e+06 m", "(loop joint 'close')"});
  EXPECT_NO_THROW(load_urdf_string(with("<loop_joint name='close' type='spherical'><predecessor link='b'/>"
                                        "<successor link='w'/></loop_joint>"),
                                   quiet()));
}

// ------------------------------------------------------------------ names: valid UTF-8
// Every name the model keeps (or that names one) must be valid UTF-8: such names loaded
// before, and Python then raised UnicodeDecodeError on model.body_name(). The message
// escapes the bad bytes and names the line.
TEST(UrdfNames, NonUtf8NamesAreRefusedWithTheLine) {
  const std::string bad = "arm\xff";
  expect_refused(robot("\n" + link("base") + "\n" + link(bad) + joint("j", "revolute", "base", bad)),
                 {"link name 'arm\\xff' is not valid UTF-8", "byte \\xff at offset 3", "(<link> at line 3)"});
  expect_refused(two_links().replace(two_links().find("name='j'"), 8, "name='j\xc0\xaf'"),
                 {"joint name 'j\\xc0\\xaf' is not valid UTF-8", "(<joint> at line 1)"});  // overlong '/'
  expect_refused("<robot name='r\xed\xa0\x80'>" + link("a") + "</robot>",
                 {"robot name 'r\\xed\\xa0\\x80' is not valid UTF-8", "(<robot> at line 1)"});  // a surrogate
  expect_refused(robot(link("a") + link("b") + joint("j", "revolute", "a\xfe", "b")),
                 {"<parent link> 'a\\xfe' is not valid UTF-8", "(<parent> at line 1)"});
  expect_refused(two_links("<mimic joint='\xe9t\xe9'/>"), {"<mimic joint> '\\xe9t\\xe9' is not valid UTF-8"});
  expect_refused(robot(link("a") + link("b") + joint("j", "revolute", "a", "b") +
                       "\n<loop_joint name='l\x80' type='fixed'><predecessor link='a'/><successor link='b'/>"
                       "</loop_joint>"),
                 {"loop joint name 'l\\x80' is not valid UTF-8", "(<loop_joint> at line 2)"});
  expect_refused(robot(link("a") + link("b") + joint("j", "revolute", "a", "b") +
                       "<loop_joint name='l' type='fixed'><predecessor link='a'/><successor link='b\xf5'/>"
                       "</loop_joint>"),
                 {"<successor link> 'b\\xf5' is not valid UTF-8"});
}

TEST(UrdfNames, Utf8NamesLoadAndBytesOutsideNamesAreNotChecked) {
  const std::string xml = "<robot name='Roboter \xc3\xa4'><!-- Latin-1 in a comment: \xe9 -->" + link("Basis") +
                          link("\xe8\x85\x95") +
                          joint("Gelenk \xf0\x9f\xa6\xbe", "continuous", "Basis", "\xe8\x85\x95") + "</robot>";
  const Model m = load_urdf_string(xml, quiet());
  EXPECT_EQ(m.name(), "Roboter \xc3\xa4");
  EXPECT_EQ(m.body_name(1), "\xe8\x85\x95");
  EXPECT_EQ(m.joint_name(1), "Gelenk \xf0\x9f\xa6\xbe");
}

TEST(UrdfNames, ControlCharactersAreEscapedInMessages) {
  expect_refused(robot(link("a") + link("b") + joint("j", "ball\x1b[31m", "a", "b")),
                 {"unknown joint type 'ball\\x1b[31m'"});
}

// ------------------------------------------------------------------ files
TEST(UrdfRefuses, PathsThatAreNotRegularFiles) {
  auto error_of = [](const std::string& path) -> std::string {
    try {
      load_urdf(path, quiet());
    } catch (const ModelError& e) {
      return e.what();
    }
    return "nothing thrown";
  };
  // /dev/null was read as an empty document ("malformed XML: ... XML_ERROR_EMPTY_DOCUMENT").
  EXPECT_CONTAINS(error_of("/dev/null"), "/dev/null: not a regular file (a character device)");
  EXPECT_CONTAINS(error_of(models_dir()), ": is a directory");
  EXPECT_CONTAINS(error_of("/nonexistent/robot.urdf"), "/nonexistent/robot.urdf: no such file");
  // A FIFO: reading it waited for a writer forever.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("plucker_test_urdf_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "robot.urdf").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_CONTAINS(error_of(fifo), "not a regular file (a FIFO (named pipe))");
  std::filesystem::remove_all(dir);
}

}  // namespace
