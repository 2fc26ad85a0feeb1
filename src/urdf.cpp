// URDF loader (see include/plucker/io/urdf.hpp for the mapping and the validation policy).
//
// Two passes:
//  1. Pre-scan: the document is parsed with tinyxml2 (bounded nesting depth) and every
//     element the loader uses is checked here, so that errors name the file and the
//     link/joint: structure (names, types, parents, children, one tree), numbers (finite,
//     parsable), masses, axes, limits, mimic targets.
//  2. urdfdom (urdf::parseURDF) parses a sanitized copy written from the pre-scanned
//     values: only <link>/<inertial> and <joint> with the elements used for dynamics,
//     links and joints renamed l<i>/j<k> (index into the pre-scan), numbers written in
//     shortest round-trip form. urdfdom therefore sees only input already vetted (it
//     gives poor errors, leaks the links of a cycle, and rejects files for irrelevant
//     reasons such as an undefined visual material), while supplying the URDF semantics
//     (defaults, pose from rpy). The model is built from urdfdom's result, visiting links
//     in document order (urdfdom's own maps are sorted by name).
#include "plucker/io/urdf.hpp"

#include <tinyxml2.h>
#include <urdf_parser/urdf_parser.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "plucker/errors.hpp"

namespace plucker {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kAxisNormTol = 1e-6;   // |norm - 1| above this: warn (always normalised)
constexpr double kAxisZeroTol = 1e-9;   // |axis| below this on a movable joint: refuse
constexpr double kInertiaRelTol = 1e-9; // inertia checks, relative to the tensor's magnitude
// An inertia tensor below mass * this (kg m^2: a body one micrometre across) is a point mass.
constexpr double kNegligibleInertia = 1e-12;
constexpr const char* kLoopHint =
    "URDF cannot express kinematic loops; declare the loop-closing joint as a <loop_joint> element "
    "(see docs/loops.md)";

enum class JType { Revolute, Continuous, Prismatic, Fixed, Floating, Planar };

bool movable_with_axis(JType t) {
  return t == JType::Revolute || t == JType::Continuous || t == JType::Prismatic || t == JType::Planar;
}

std::string squote(const std::string& s) { return "'" + s + "'"; }
std::string link_ref(const std::string& name) { return "link '" + name + "'"; }
std::string joint_ref(const std::string& name) { return "joint '" + name + "'"; }

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}
std::string fmt(const Vec3& v) { return fmt(v.x()) + " " + fmt(v.y()) + " " + fmt(v.z()); }

/// Shortest representation that reads back to exactly x.
std::string exact(double x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), x);
  return std::string(buf, res.ptr);
}
std::string exact(const Vec3& v) { return exact(v.x()) + " " + exact(v.y()) + " " + exact(v.z()); }

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

enum class NumStatus { Ok, Invalid, NonFinite };

/// A decimal number (locale-independent; surrounding whitespace and one leading '+' allowed).
NumStatus parse_number(std::string_view s, double& out) {
  s = trim(s);
  if (s.size() > 1 && s.front() == '+' && (std::isdigit(static_cast<unsigned char>(s[1])) || s[1] == '.'))
    s.remove_prefix(1);
  if (s.empty()) return NumStatus::Invalid;
  double v = 0.0;
  const auto res = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
  if (res.ec == std::errc::result_out_of_range) return NumStatus::NonFinite;
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return NumStatus::Invalid;
  if (!std::isfinite(v)) return NumStatus::NonFinite;
  out = v;
  return NumStatus::Ok;
}

// ------------------------------------------------------------------ pre-scan data
struct Origin {
  std::optional<Vec3> xyz, rpy;
};

struct PreInertial {
  bool present = false;
  Origin origin;
  double mass = 0.0;
  double I[6] = {0, 0, 0, 0, 0, 0};  // ixx ixy ixz iyy iyz izz
};

struct PreLink {
  std::string name;
  int line = 0;
  PreInertial inertial;
  int parent_joint = -1;
  std::vector<int> child_joints;  // document order
};

struct PreJoint {
  std::string name, type_str;
  int line = 0;
  JType type = JType::Fixed;
  std::string parent, child;
  int parent_link = -1, child_link = -1;
  Origin origin;
  std::optional<Vec3> axis;  // only read for movable joints
  bool has_limit = false;    // only read for revolute/continuous/prismatic
  std::optional<double> lower, upper;
  double effort = 0.0, velocity = 0.0;
  bool has_mimic = false;
  std::string mimic_joint;
  int mimic_leader = -1;
  std::optional<double> multiplier, offset;
};

struct PreLoopJoint {
  std::string name, type;
  std::string link[2];  // predecessor, successor
  Origin origin[2];
  Vec3 axis = Vec3::UnitZ();
  bool actuated = false;
};

struct BodyPlan {
  int parent = 0;
  JointModel joint;
  Transform X_tree;
  RigidBodyInertia inertia;
  std::string body_name, joint_name;
  JointLimits limits;
  int link = -1;   // pre-scan link index (-1: none)
  int jidx = -1;   // pre-scan joint index (-1: the added root_joint)
};

struct FramePlan {
  std::string name;
  int body = 0;
  Transform X_body;
};

class Loader {
 public:
  Loader(const std::string& xml, const UrdfOptions& options, const std::string& source)
      : xml_(xml), opt_(options), src_(source) {}

  Model run() {
    try {
      prescan();
      resolve_graph();
      const urdf::ModelInterfaceSharedPtr um = parse_with_urdfdom();
      plan(*um);
      return build();
    } catch (const ModelError&) {
      throw;
    } catch (const Error& e) {
      // Every check is meant to happen above, with a message naming the link/joint.
      internal(std::string("unexpected error: ") + e.what());
    }
  }

 private:
  const std::string& xml_;
  const UrdfOptions& opt_;
  const std::string& src_;

  std::string robot_name_;
  std::vector<PreLink> links_;
  std::vector<PreJoint> joints_;
  std::unordered_map<std::string, int> link_index_, joint_index_;
  std::vector<PreLoopJoint> loop_joints_;
  int root_ = -1;

  std::vector<BodyPlan> bodies_;  // bodies_[0]: the base (inertia collected for reference)
  std::vector<FramePlan> frames_;
  std::vector<int> body_of_joint_;  // pre-scan joint -> body (-1: merged fixed joint)
  std::vector<MimicRelation> mimics_;
  std::vector<LoopJoint> loop_plans_;

  // ---------------------------------------------------------------- messages
  std::string message(const std::string& what, const std::string& where) const {
    return src_ + ": " + what + (where.empty() ? "" : " (" + where + ")");
  }
  [[noreturn]] void fail(const std::string& what, const std::string& where = "") const {
    throw ModelError(message(what, where));
  }
  void emit(const std::string& msg) const {
    if (opt_.on_warning)
      opt_.on_warning(msg);
    else
      std::cerr << "plucker: warning: " << msg << std::endl;
  }
  /// A real-robot defect: refused in strict mode, a warning ("<what>; <action>") otherwise.
  void defect(const std::string& what, const std::string& where, const std::string& action) const {
    if (opt_.strict) fail("[strict] " + what, where);
    emit(message(what + "; " + action, where));
  }

  static std::string where_line(const char* element, int line) {
    return "<" + std::string(element) + "> at line " + std::to_string(line);
  }

  // ---------------------------------------------------------------- number readers
  double read_number(const tinyxml2::XMLElement* e, const char* attr, const std::string& where) const {
    const char* text = e->Attribute(attr);
    if (!text) fail("<" + std::string(e->Name()) + "> has no '" + attr + "' attribute", where);
    double v = 0.0;
    switch (parse_number(text, v)) {
      case NumStatus::Ok: return v;
      case NumStatus::NonFinite:
        fail("non-finite or out-of-range number " + squote(text) + " in <" + e->Name() + " " + attr + ">", where);
      case NumStatus::Invalid:
      default: fail("invalid number " + squote(text) + " in <" + e->Name() + " " + attr + ">", where);
    }
  }
  std::optional<double> read_optional(const tinyxml2::XMLElement* e, const char* attr, const std::string& where) const {
    if (!e->Attribute(attr)) return std::nullopt;
    return read_number(e, attr, where);
  }
  Vec3 read_vec3(const tinyxml2::XMLElement* e, const char* attr, const std::string& where) const {
    const char* text = e->Attribute(attr);
    if (!text) fail("<" + std::string(e->Name()) + "> has no '" + attr + "' attribute", where);
    std::vector<std::string_view> tokens;
    std::string_view s(text);
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i])) ++i;
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      if (j > i) tokens.push_back(s.substr(i, j - i));
      i = j;
    }
    const std::string ctx = "<" + std::string(e->Name()) + " " + attr + "=" + squote(text) + ">";
    if (tokens.size() != 3)
      fail("expected 3 numbers in " + ctx + ", found " + std::to_string(tokens.size()), where);
    Vec3 v;
    for (int k = 0; k < 3; ++k) {
      switch (parse_number(tokens[k], v[k])) {
        case NumStatus::Ok: break;
        case NumStatus::NonFinite:
          fail("non-finite or out-of-range number " + squote(std::string(tokens[k])) + " in " + ctx, where);
        case NumStatus::Invalid: fail("invalid number " + squote(std::string(tokens[k])) + " in " + ctx, where);
      }
    }
    return v;
  }
  Origin read_origin(const tinyxml2::XMLElement* parent, const std::string& where) const {
    Origin o;
    const tinyxml2::XMLElement* e = parent->FirstChildElement("origin");
    if (!e) return o;
    if (e->Attribute("xyz")) o.xyz = read_vec3(e, "xyz", where);
    if (e->Attribute("rpy")) o.rpy = read_vec3(e, "rpy", where);
    return o;
  }

  // ---------------------------------------------------------------- pass 1: pre-scan
  void prescan() {
    const size_t nul = xml_.find('\0');
    if (nul != std::string::npos) fail("malformed XML: NUL character at byte " + std::to_string(nul));
    tinyxml2::XMLDocument doc(true, tinyxml2::PRESERVE_WHITESPACE);
    if (doc.Parse(xml_.data(), xml_.size()) != tinyxml2::XML_SUCCESS) {
      std::string detail = doc.ErrorStr() ? doc.ErrorStr() : doc.ErrorName();
      fail("malformed XML: " + detail);
    }
    const tinyxml2::XMLElement* robot = doc.FirstChildElement("robot");
    if (!robot) {
      const tinyxml2::XMLElement* root = doc.RootElement();
      fail(root ? "the document element is <" + std::string(root->Name()) + ">, expected <robot>"
                : "no <robot> element");
    }
    const char* rname = robot->Attribute("name");
    if (!rname) fail("<robot> has no name attribute");
    robot_name_ = rname;

    for (const tinyxml2::XMLElement* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string_view tag = e->Name();
      if (tag == "link")
        prescan_link(e);
      else if (tag == "joint")
        prescan_joint(e);
      else if (tag == "loop_joint")
        prescan_loop_joint(e);
    }
    if (links_.empty()) fail("no <link> elements in <robot> '" + robot_name_ + "'");
  }

  // <loop_joint name type [actuated]><predecessor link xyz rpy/><successor .../><axis xyz/></loop_joint>
  // (docs/loops.md). Links are resolved to bodies after the tree is planned.
  void prescan_loop_joint(const tinyxml2::XMLElement* e) {
    PreLoopJoint j;
    const char* n = e->Attribute("name");
    if (!n || !*n) fail("<loop_joint> has no name attribute");
    j.name = n;
    const std::string where = "loop joint " + squote(j.name);
    const char* t = e->Attribute("type");
    if (!t) fail("<loop_joint> has no type attribute", where);
    j.type = t;
    if (const char* a = e->Attribute("actuated")) {
      const std::string_view av(a);
      if (av == "true" || av == "1") j.actuated = true;
      else if (av != "false" && av != "0") fail("actuated must be true or false, got " + squote(a), where);
    }
    const char* tags[2] = {"predecessor", "successor"};
    for (int k = 0; k < 2; ++k) {
      const tinyxml2::XMLElement* x = e->FirstChildElement(tags[k]);
      if (!x) fail("<loop_joint> has no <" + std::string(tags[k]) + "> element", where);
      const char* link = x->Attribute("link");
      if (!link) fail("<" + std::string(tags[k]) + "> has no link attribute", where);
      j.link[k] = link;
      if (x->Attribute("xyz")) j.origin[k].xyz = read_vec3(x, "xyz", where);
      if (x->Attribute("rpy")) j.origin[k].rpy = read_vec3(x, "rpy", where);
    }
    if (const tinyxml2::XMLElement* a = e->FirstChildElement("axis")) j.axis = read_vec3(a, "xyz", where);
    for (const PreLoopJoint& other : loop_joints_)
      if (other.name == j.name) fail("duplicate loop joint name", where);
    loop_joints_.push_back(j);
  }

  void prescan_link(const tinyxml2::XMLElement* e) {
    PreLink l;
    l.line = e->GetLineNum();
    const char* name = e->Attribute("name");
    if (!name || !*name) fail("a <link> has no name", where_line("link", l.line));
    l.name = name;
    const std::string where = link_ref(l.name);
    if (link_index_.count(l.name))
      fail("duplicate link name (lines " + std::to_string(links_[link_index_[l.name]].line) + " and " +
               std::to_string(l.line) + ")",
           where);
    if (const tinyxml2::XMLElement* in = e->FirstChildElement("inertial")) {
      PreInertial& pi = l.inertial;
      pi.present = true;
      pi.origin = read_origin(in, where);
      const tinyxml2::XMLElement* mass = in->FirstChildElement("mass");
      if (!mass) fail("<inertial> has no <mass>", where);
      pi.mass = read_number(mass, "value", where);
      if (pi.mass < 0.0) fail("negative mass " + fmt(pi.mass), where);
      const tinyxml2::XMLElement* inertia = in->FirstChildElement("inertia");
      if (!inertia) fail("<inertial> has no <inertia>", where);
      static const char* names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
      for (int k = 0; k < 6; ++k) pi.I[k] = read_number(inertia, names[k], where);
    }
    link_index_[l.name] = static_cast<int>(links_.size());
    links_.push_back(std::move(l));
  }

  void prescan_joint(const tinyxml2::XMLElement* e) {
    PreJoint j;
    j.line = e->GetLineNum();
    const char* name = e->Attribute("name");
    if (!name || !*name) fail("a <joint> has no name", where_line("joint", j.line));
    j.name = name;
    const std::string where = joint_ref(j.name);
    if (joint_index_.count(j.name))
      fail("duplicate joint name (lines " + std::to_string(joints_[joint_index_[j.name]].line) + " and " +
               std::to_string(j.line) + ")",
           where);
    const char* type = e->Attribute("type");
    if (!type) fail("<joint> has no type", where);
    j.type_str = type;
    if (j.type_str == "revolute") j.type = JType::Revolute;
    else if (j.type_str == "continuous") j.type = JType::Continuous;
    else if (j.type_str == "prismatic") j.type = JType::Prismatic;
    else if (j.type_str == "fixed") j.type = JType::Fixed;
    else if (j.type_str == "floating") j.type = JType::Floating;
    else if (j.type_str == "planar") j.type = JType::Planar;
    else
      fail("unknown joint type " + squote(j.type_str) +
               " (expected revolute, continuous, prismatic, fixed, floating or planar)",
           where);

    auto link_of = [&](const char* tag) {
      const tinyxml2::XMLElement* x = e->FirstChildElement(tag);
      const char* l = x ? x->Attribute("link") : nullptr;
      if (!l) fail("<joint> has no <" + std::string(tag) + " link=\"...\">", where);
      return std::string(l);
    };
    j.parent = link_of("parent");
    j.child = link_of("child");
    j.origin = read_origin(e, where);

    if (movable_with_axis(j.type)) {
      if (const tinyxml2::XMLElement* a = e->FirstChildElement("axis")) {
        if (!a->Attribute("xyz")) fail("<axis> has no xyz attribute", where);
        j.axis = read_vec3(a, "xyz", where);
        if (j.axis->stableNorm() < kAxisZeroTol)
          fail("zero-length axis (" + fmt(*j.axis) + ") on a " + j.type_str + " joint", where);
      }
    }
    if (j.type == JType::Revolute || j.type == JType::Prismatic || j.type == JType::Continuous) {
      if (const tinyxml2::XMLElement* lim = e->FirstChildElement("limit")) {
        j.has_limit = true;
        j.lower = read_optional(lim, "lower", where);
        j.upper = read_optional(lim, "upper", where);
        j.effort = read_number(lim, "effort", where);
        j.velocity = read_number(lim, "velocity", where);
        if (j.effort < 0.0) fail("negative effort limit " + fmt(j.effort), where);
        if (j.velocity < 0.0) fail("negative velocity limit " + fmt(j.velocity), where);
        if (j.type != JType::Continuous && j.lower.value_or(0.0) > j.upper.value_or(0.0))
          fail("lower limit " + fmt(j.lower.value_or(0.0)) + " > upper limit " + fmt(j.upper.value_or(0.0)), where);
      } else if (j.type != JType::Continuous) {
        fail("a " + j.type_str + " joint needs a <limit> element (with effort and velocity)", where);
      }
    }
    if (const tinyxml2::XMLElement* m = e->FirstChildElement("mimic")) {
      j.has_mimic = true;
      const char* leader = m->Attribute("joint");
      if (!leader) fail("<mimic> has no joint attribute", where);
      j.mimic_joint = leader;
      j.multiplier = read_optional(m, "multiplier", where);
      j.offset = read_optional(m, "offset", where);
    }
    joint_index_[j.name] = static_cast<int>(joints_.size());
    joints_.push_back(std::move(j));
  }

  static std::string name_list(const std::vector<std::string>& names, const char* sep, size_t max = 12) {
    std::string s;
    for (size_t k = 0; k < names.size() && k < max; ++k) s += (k ? sep : "") + squote(names[k]);
    if (names.size() > max) s += std::string(sep) + "... (" + std::to_string(names.size()) + " in all)";
    return s;
  }

  void resolve_graph() {
    for (int k = 0; k < static_cast<int>(joints_.size()); ++k) {
      PreJoint& j = joints_[k];
      auto find = [&](const std::string& name, const char* role) {
        auto it = link_index_.find(name);
        if (it == link_index_.end())
          fail(std::string(role) + " link " + squote(name) + " does not exist (no <link name=" + squote(name) + ">)",
               joint_ref(j.name));
        return it->second;
      };
      j.parent_link = find(j.parent, "parent");
      j.child_link = find(j.child, "child");
      PreLink& c = links_[j.child_link];
      if (c.parent_joint >= 0) {
        const PreJoint& other = joints_[c.parent_joint];
        fail("link has two parents: joint " + squote(other.name) + " (from link " + squote(other.parent) +
                 ") and joint " + squote(j.name) + " (from link " + squote(j.parent) + "); " + kLoopHint,
             link_ref(c.name) + ", joint '" + j.name + "'");
      }
      c.parent_joint = k;
      links_[j.parent_link].child_joints.push_back(k);
    }
    for (int k = 0; k < static_cast<int>(joints_.size()); ++k) {
      PreJoint& j = joints_[k];
      if (!j.has_mimic) continue;
      auto it = joint_index_.find(j.mimic_joint);
      if (it == joint_index_.end()) fail("<mimic> names joint " + squote(j.mimic_joint) + ", which does not exist",
                                         joint_ref(j.name));
      if (it->second == k) fail("<mimic> names the joint itself", joint_ref(j.name));
      j.mimic_leader = it->second;
    }

    // Cycles: every link has at most one parent here, so walking up from any link either
    // reaches a root or enters a cycle.
    const int n = static_cast<int>(links_.size());
    std::vector<char> state(n, 0);  // 0 unvisited, 1 on the current path, 2 done
    for (int start = 0; start < n; ++start) {
      if (state[start]) continue;
      std::vector<int> path;
      int cur = start;
      while (cur >= 0 && state[cur] == 0) {
        state[cur] = 1;
        path.push_back(cur);
        cur = links_[cur].parent_joint >= 0 ? joints_[links_[cur].parent_joint].parent_link : -1;
      }
      if (cur >= 0 && state[cur] == 1) {
        // path = start, parent(start), ..., and cur is on it: the cycle is path[pos..end].
        size_t pos = 0;
        while (path[pos] != cur) ++pos;
        std::vector<std::string> names;
        for (size_t k = path.size(); k-- > pos;) names.push_back(links_[path[k]].name);  // parent -> child
        names.push_back(links_[cur].name);
        fail("the joints form a cycle through links " + name_list(names, " -> ") + "; " + kLoopHint,
             link_ref(links_[cur].name) + ", joint '" + joints_[links_[cur].parent_joint].name + "'");
      }
      for (int l : path) state[l] = 2;
    }

    std::vector<std::string> roots;
    for (const PreLink& l : links_)
      if (l.parent_joint < 0) roots.push_back(l.name);
    if (roots.empty()) fail("no root link (every link is the child of a joint)");
    if (roots.size() > 1)
      fail(std::to_string(roots.size()) + " root links " + name_list(roots, ", ") +
               ": a URDF must be one tree (every link except the root is the child of exactly one joint)",
           link_ref(roots[1]));
    root_ = link_index_[roots[0]];
  }

  // ---------------------------------------------------------------- pass 2: urdfdom
  // (Not "l" + std::to_string(i): GCC 12 -Wrestrict false positive, GCC bug 105329.)
  static std::string lid(int i) { return std::string(1, 'l').append(std::to_string(i)); }
  static std::string jid(int k) { return std::string(1, 'j').append(std::to_string(k)); }

  std::string sanitized_document() const {
    tinyxml2::XMLPrinter p(nullptr, true);
    auto origin = [&](const Origin& o) {
      if (!o.xyz && !o.rpy) return;
      p.OpenElement("origin");
      if (o.xyz) p.PushAttribute("xyz", exact(*o.xyz).c_str());
      if (o.rpy) p.PushAttribute("rpy", exact(*o.rpy).c_str());
      p.CloseElement();
    };
    p.OpenElement("robot");
    p.PushAttribute("name", "r");
    for (int i = 0; i < static_cast<int>(links_.size()); ++i) {
      const PreLink& l = links_[i];
      p.OpenElement("link");
      p.PushAttribute("name", lid(i).c_str());
      if (l.inertial.present) {
        const PreInertial& in = l.inertial;
        p.OpenElement("inertial");
        origin(in.origin);
        p.OpenElement("mass");
        p.PushAttribute("value", exact(in.mass).c_str());
        p.CloseElement();
        p.OpenElement("inertia");
        static const char* names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
        for (int k = 0; k < 6; ++k) p.PushAttribute(names[k], exact(in.I[k]).c_str());
        p.CloseElement();
        p.CloseElement();
      }
      p.CloseElement();
    }
    for (int k = 0; k < static_cast<int>(joints_.size()); ++k) {
      const PreJoint& j = joints_[k];
      p.OpenElement("joint");
      p.PushAttribute("name", jid(k).c_str());
      p.PushAttribute("type", j.type_str.c_str());
      origin(j.origin);
      p.OpenElement("parent");
      p.PushAttribute("link", lid(j.parent_link).c_str());
      p.CloseElement();
      p.OpenElement("child");
      p.PushAttribute("link", lid(j.child_link).c_str());
      p.CloseElement();
      if (j.axis) {
        p.OpenElement("axis");
        p.PushAttribute("xyz", exact(*j.axis).c_str());
        p.CloseElement();
      }
      if (j.has_limit) {
        p.OpenElement("limit");
        if (j.lower) p.PushAttribute("lower", exact(*j.lower).c_str());
        if (j.upper) p.PushAttribute("upper", exact(*j.upper).c_str());
        p.PushAttribute("effort", exact(j.effort).c_str());
        p.PushAttribute("velocity", exact(j.velocity).c_str());
        p.CloseElement();
      }
      if (j.has_mimic) {
        p.OpenElement("mimic");
        p.PushAttribute("joint", jid(j.mimic_leader).c_str());
        if (j.multiplier) p.PushAttribute("multiplier", exact(*j.multiplier).c_str());
        if (j.offset) p.PushAttribute("offset", exact(*j.offset).c_str());
        p.CloseElement();
      }
      p.CloseElement();
    }
    p.CloseElement();
    return std::string(p.CStr(), static_cast<size_t>(p.CStrSize() > 0 ? p.CStrSize() - 1 : 0));
  }

  [[noreturn]] void internal(const std::string& what) const {
    fail("internal error: " + what + " (the pre-scan accepted a document urdfdom reads differently; please report)");
  }

  urdf::ModelInterfaceSharedPtr parse_with_urdfdom() const {
    urdf::ModelInterfaceSharedPtr um;
    try {
      um = urdf::parseURDF(sanitized_document());
    } catch (const std::exception& e) {
      internal(std::string("urdfdom threw: ") + e.what());
    }
    if (!um) internal("urdfdom rejected the sanitized document");
    // Cross-check the structure.
    if (!um->getRoot() || um->getRoot()->name != lid(root_)) internal("urdfdom found another root link");
    for (int i = 0; i < static_cast<int>(links_.size()); ++i)
      if (!um->getLink(lid(i))) internal("urdfdom lost link '" + links_[i].name + "'");
    static const int types[] = {urdf::Joint::REVOLUTE, urdf::Joint::CONTINUOUS, urdf::Joint::PRISMATIC,
                                urdf::Joint::FIXED, urdf::Joint::FLOATING, urdf::Joint::PLANAR};
    for (int k = 0; k < static_cast<int>(joints_.size()); ++k) {
      const PreJoint& j = joints_[k];
      const urdf::JointConstSharedPtr uj = um->getJoint(jid(k));
      if (!uj || uj->parent_link_name != lid(j.parent_link) || uj->child_link_name != lid(j.child_link) ||
          uj->type != types[static_cast<int>(j.type)] || (j.has_mimic != static_cast<bool>(uj->mimic)) ||
          (j.has_limit && !uj->limits))
        internal("urdfdom reads joint '" + j.name + "' differently");
    }
    return um;
  }

  // ---------------------------------------------------------------- model plan
  static Transform pose(const urdf::Pose& p) {
    Quat q(p.rotation.w, p.rotation.x, p.rotation.y, p.rotation.z);
    q.normalize();
    Transform X;
    X.E = q.toRotationMatrix().transpose();
    X.r << p.position.x, p.position.y, p.position.z;
    return X;
  }

  /// The link's inertia in its own frame, after the policy checks. Links welded to a fixed
  /// base (`dynamic` false) are checked for hard errors only: their inertia is never used.
  RigidBodyInertia link_inertia(const urdf::ModelInterface& um, int i, bool dynamic) const {
    const urdf::LinkConstSharedPtr ul = um.getLink(lid(i));
    const std::string where = link_ref(links_[i].name);
    if (!ul->inertial) return RigidBodyInertia();
    const urdf::Inertial& in = *ul->inertial;
    Mat3 Ic;  // about the COM, in the COM frame
    Ic << in.ixx, in.ixy, in.ixz,  //
        in.ixy, in.iyy, in.iyz,    //
        in.ixz, in.iyz, in.izz;
    const Transform X = pose(in.origin);  // COM frame in the link frame
    const Vec3 com = X.translation();
    const double m = in.mass;
    if (!(std::isfinite(m) && Ic.allFinite() && com.allFinite())) fail("non-finite inertial parameters", where);
    if (m < 0.0) fail("negative mass " + fmt(m), where);
    // Tolerances are relative to the tensor's magnitude, plus an absolute slack of
    // m * kNegligibleInertia: rounding noise of that size (icub writes point masses as
    // tensors of ~1e-20 kg m^2) is not a physical defect.
    const double scale = Ic.cwiseAbs().maxCoeff();
    const double negligible = kNegligibleInertia * m;
    std::vector<std::string> issues;
    std::string action = "loaded as given";
    if (m > 0.0 && scale <= negligible) {
      if (scale > 0.0) {
        issues.push_back("point mass " + fmt(m) + " kg (negligible inertia tensor, largest entry " + fmt(scale) +
                         " kg m^2)");
        Ic.setZero();
        action = "tensor set to zero";
      } else {
        issues.push_back("point mass " + fmt(m) + " kg (zero inertia tensor)");
      }
    } else if (scale > 0.0) {
      // The checks are scale-invariant in the tensor: run them on Ic / scale, so that huge
      // entries cannot overflow the eigenvalue solver.
      const InertiaCheck c = check_inertia(m, com, Ic / scale, std::max(kInertiaRelTol, negligible / scale));
      const std::string moments = " (principal moments " + fmt(Vec3(c.principal_moments * scale)) + ")";
      if (!c.positive_semidefinite) fail("inertia tensor is not positive semi-definite" + moments, where);
      if (m == 0.0) issues.push_back("massless link with a nonzero inertia tensor");
      if (m > 0.0 && !c.positive_definite) issues.push_back("rank-deficient inertia tensor");
      if (!c.triangle_inequality) issues.push_back("inertia tensor violates the triangle inequality");
      if (!issues.empty()) issues.back() += moments;
    }
    if (dynamic && !issues.empty()) {
      std::string what = issues[0];
      for (size_t k = 1; k < issues.size(); ++k) what += "; " + issues[k];
      defect(what, where, action);
    }
    const Mat3 R = X.rotation();
    return RigidBodyInertia::unchecked(m, com, R * Ic * R.transpose());
  }

  Vec3 unit_axis(const urdf::Joint& uj, const PreJoint& j) const {
    const Vec3 a(uj.axis.x, uj.axis.y, uj.axis.z);
    const double n = a.stableNorm();  // no overflow for components near the double range
    if (!(n >= kAxisZeroTol)) fail("zero-length axis (" + fmt(a) + ") on a " + j.type_str + " joint", joint_ref(j.name));
    if (std::abs(n - 1.0) > kAxisNormTol)
      defect("axis (" + fmt(a) + ") is not a unit vector (norm " + fmt(n) + ")", joint_ref(j.name), "normalised");
    return a / n;
  }

  void plan(const urdf::ModelInterface& um) {
    const bool free = opt_.root == RootJoint::FreeFlyer;
    body_of_joint_.assign(joints_.size(), -1);
    const std::string& root_name = links_[root_].name;
    const RigidBodyInertia root_inertia = link_inertia(um, root_, free);
    if (free) {
      const bool world_taken = link_index_.count("world") > 0;
      BodyPlan base;
      base.body_name = world_taken ? "universe" : "world";
      bodies_.push_back(base);
      if (joint_index_.count("root_joint"))
        fail("the URDF already has a joint named 'root_joint', the name of the free-flyer root joint; load it with "
             "RootJoint::Fixed",
             joint_ref("root_joint"));
      BodyPlan b;
      b.parent = 0;
      b.joint = JointFreeFlyer{};
      b.inertia = root_inertia;
      b.body_name = root_name;
      b.joint_name = "root_joint";
      b.link = root_;
      bodies_.push_back(b);
    } else {
      BodyPlan base;
      base.body_name = root_name;
      base.inertia = root_inertia;
      base.link = root_;
      bodies_.push_back(base);
    }
    const int root_body = free ? 1 : 0;

    // Depth-first from the root, child joints in document order (an explicit stack, so
    // that deep chains cannot overflow the call stack). Bodies get their index when
    // visited (preorder), so the bodies of every subtree are contiguous.
    struct Item {
      int joint;
      int body;          // body carrying the parent link
      Transform X_link;  // parent link frame relative to that body: link_X_body
    };
    std::vector<Item> stack;
    auto push_children = [&](int link, int body, const Transform& X) {
      const std::vector<int>& cj = links_[link].child_joints;
      for (size_t k = cj.size(); k-- > 0;) stack.push_back({cj[k], body, X});
    };
    push_children(root_, root_body, Transform());
    while (!stack.empty()) {
      const Item it = stack.back();
      stack.pop_back();
      const PreJoint& j = joints_[it.joint];
      const urdf::Joint& uj = *um.getJoint(jid(it.joint));
      const int c = j.child_link;
      const std::string& cname = links_[c].name;
      const Transform X_joint = pose(uj.parent_to_joint_origin_transform) * it.X_link;  // child frame at q = 0
      const RigidBodyInertia Ic = link_inertia(um, c, !(j.type == JType::Fixed && it.body == 0));
      if (j.type == JType::Fixed) {
        if (!X_joint.r.allFinite() || !X_joint.E.allFinite())
          fail("non-finite pose of the merged fixed link (origins too large)", link_ref(cname));
        frames_.push_back({cname, it.body, X_joint});
        bodies_[it.body].inertia += Ic.transformed_inverse(X_joint);
        push_children(c, it.body, X_joint);
        continue;
      }
      BodyPlan b;
      b.parent = it.body;
      b.X_tree = X_joint;
      b.inertia = Ic;
      b.body_name = cname;
      b.joint_name = j.name;
      b.link = c;
      b.jidx = it.joint;
      switch (j.type) {
        case JType::Revolute:
        case JType::Continuous:
        case JType::Prismatic: {
          const Vec3 a = unit_axis(uj, j);
          b.joint = j.type == JType::Prismatic ? make_prismatic(a) : make_revolute(a);
          const double effort = uj.limits ? uj.limits->effort : kInf;
          const double velocity = uj.limits ? uj.limits->velocity : kInf;
          const double lower = j.type == JType::Continuous ? -kInf : uj.limits->lower;
          const double upper = j.type == JType::Continuous ? kInf : uj.limits->upper;
          b.limits.lower = VecX::Constant(1, lower);
          b.limits.upper = VecX::Constant(1, upper);
          b.limits.velocity = VecX::Constant(1, velocity);
          b.limits.effort = VecX::Constant(1, effort);
          break;
        }
        case JType::Planar: b.joint = make_planar(unit_axis(uj, j)); break;
        case JType::Floating: b.joint = JointFreeFlyer{}; break;
        case JType::Fixed: break;
      }
      const int index = static_cast<int>(bodies_.size());
      body_of_joint_[it.joint] = index;
      bodies_.push_back(std::move(b));
      push_children(c, index, Transform());
    }

    for (const BodyPlan& b : bodies_)
      if (!b.inertia.matrix().allFinite())
        fail("inertia not representable in double precision (mass, inertia, COM offset or fixed-joint origins "
             "too large)",
             b.link >= 0 ? link_ref(links_[b.link].name) : "");

    // A movable joint that carries no inertia at all: its column of the joint-space inertia
    // matrix is zero. (bodies_ is in preorder: children come after their parent.)
    std::vector<char> inert(bodies_.size(), 0);
    for (size_t k = bodies_.size(); k-- > 1;) {
      if (bodies_[k].inertia.matrix().cwiseAbs().maxCoeff() > 0.0) inert[k] = 1;
      if (inert[k]) inert[bodies_[k].parent] = 1;
    }
    for (size_t k = 1; k < bodies_.size(); ++k)
      if (!inert[k] && joint_nv(bodies_[k].joint) > 0)
        defect("joint " + squote(bodies_[k].joint_name) +
                   " moves no mass or inertia (its link and everything it carries are massless): the joint-space "
                   "inertia matrix is singular and forward dynamics is undefined",
               link_ref(bodies_[k].body_name) + ", joint '" + bodies_[k].joint_name + "'", "loaded as given");

    // Mimic relations.
    for (int k = 0; k < static_cast<int>(joints_.size()); ++k) {
      const PreJoint& j = joints_[k];
      if (!j.has_mimic) continue;
      const urdf::JointMimic& um_mimic = *um.getJoint(jid(k))->mimic;
      const PreJoint& leader = joints_[j.mimic_leader];
      if (j.type == JType::Fixed) {
        defect("<mimic> on a fixed joint (merged, it has no coordinate)", joint_ref(j.name), "ignored");
        continue;
      }
      auto one_dof = [](JType t) { return t == JType::Revolute || t == JType::Continuous || t == JType::Prismatic; };
      if (!one_dof(j.type))
        fail("<mimic> on a " + j.type_str + " joint (mimic joints must have one DoF)", joint_ref(j.name));
      if (!one_dof(leader.type))
        fail("<mimic> names joint " + squote(leader.name) + ", a " + leader.type_str +
                 " joint (the leader must have one DoF)",
             joint_ref(j.name));
      mimics_.push_back({body_of_joint_[k], body_of_joint_[j.mimic_leader], um_mimic.multiplier, um_mimic.offset});
    }
    if (!mimics_.empty())
      emit(message(std::to_string(mimics_.size()) +
                       " mimic joint(s) are loaded as independent coordinates; tree algorithms do not enforce "
                       "<mimic> (the constraint API, constraints/, does)",
                   ""));
    plan_loop_joints();
  }

  // A link -> (body, link_X_body): a body's own link, or a link merged into a frame.
  std::pair<int, Transform> locate_link(const std::string& name, const std::string& where) const {
    for (size_t k = 0; k < bodies_.size(); ++k)
      if (bodies_[k].body_name == name) return {static_cast<int>(k), Transform()};
    for (const FramePlan& f : frames_)
      if (f.name == name) return {f.body, f.X_body};
    fail("names link " + squote(name) + ", which does not exist", where);
  }

  void plan_loop_joints() {
    for (const PreLoopJoint& pj : loop_joints_) {
      const std::string where = "loop joint " + squote(pj.name);
      if (joint_index_.count(pj.name)) fail("a <joint> has the same name", where);
      LoopJoint lj;
      lj.name = pj.name;
      try {
        lj.type = parse_loop_joint_type(pj.type);
      } catch (const InvalidArgument& e) {
        fail(e.what(), where);
      }
      const auto [bp, Xp] = locate_link(pj.link[0], where);
      const auto [bs, Xs] = locate_link(pj.link[1], where);
      if (bp == bs)
        fail("predecessor " + link_ref(pj.link[0]) + " and successor " + link_ref(pj.link[1]) +
                 " are rigidly connected (same body after merging fixed joints): nothing to close",
             where);
      lj.predecessor = bp;
      lj.successor = bs;
      lj.X_predecessor = Transform::from_rpy_xyz(pj.origin[0].rpy.value_or(Vec3::Zero()), pj.origin[0].xyz.value_or(Vec3::Zero())) * Xp;
      lj.X_successor = Transform::from_rpy_xyz(pj.origin[1].rpy.value_or(Vec3::Zero()), pj.origin[1].xyz.value_or(Vec3::Zero())) * Xs;
      const bool has_axis = lj.type != LoopJointType::Spherical && lj.type != LoopJointType::Fixed;
      if (has_axis && !(pj.axis.norm() > kAxisZeroTol)) fail("zero-length <axis>", where);
      lj.axis = has_axis ? Vec3(pj.axis.normalized()) : Vec3::UnitZ();
      lj.actuated = pj.actuated;
      loop_plans_.push_back(lj);
    }
  }

  Model build() const {
    Model model(bodies_[0].body_name);
    model.set_name(robot_name_);
    const std::string* context = nullptr;
    try {
      if (bodies_[0].inertia.matrix().cwiseAbs().maxCoeff() > 0.0) model.add_inertia(0, bodies_[0].inertia);
      for (size_t k = 1; k < bodies_.size(); ++k) {
        const BodyPlan& b = bodies_[k];
        context = &b.joint_name;
        model.add_body(b.parent, b.joint, b.X_tree, b.inertia, b.body_name, b.joint_name, b.limits);
      }
      context = nullptr;
      for (const FramePlan& f : frames_) model.add_frame(f.name, f.body, f.X_body);
      for (const MimicRelation& m : mimics_) model.add_mimic(m);
      for (const LoopJoint& lj : loop_plans_) {
        context = &lj.name;
        model.add_loop_joint(lj);
      }
    } catch (const Error& e) {
      fail(e.what(), context ? joint_ref(*context) : "");
    }
    return model;
  }
};

}  // namespace

Model load_urdf_string(const std::string& xml, const UrdfOptions& options, const std::string& source_name) {
  return Loader(xml, options, source_name).run();
}

Model load_urdf_string(const std::string& xml, RootJoint root, const std::string& source_name) {
  UrdfOptions options;
  options.root = root;
  return load_urdf_string(xml, options, source_name);
}

Model load_urdf(const std::string& path, const UrdfOptions& options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ModelError(path + ": is a directory, not a URDF file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path + ": cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ModelError(path + ": error while reading the file");
  return load_urdf_string(text.str(), options, path);
}

Model load_urdf(const std::string& path, RootJoint root) {
  UrdfOptions options;
  options.root = root;
  return load_urdf(path, options);
}

}  // namespace plucker
