// URDF loader (see include/plucker/io/urdf.hpp for the mapping and the validation policy).
//
// One parse, four steps:
//  1. Limits: a linear pass over the raw bytes refuses documents beyond the caps of
//     urdf_limits (size, markup nodes, attributes per element and in all, nesting depth)
//     before tinyxml2 sees them: tinyxml2's duplicate-attribute check is quadratic in the
//     attributes of one element (40,000 attributes took 13 s), and its DOM costs ~100 bytes
//     per node.
//  2. Pre-scan: the document is parsed with tinyxml2 and every element the loader uses is
//     read and checked here, so that errors name the file and the link/joint: names (valid
//     UTF-8), structure (names, types, parents, children), numbers (finite, parsable, within
//     the physical range), masses, axes, limits, mimic targets. The DOM is dropped after it.
//  3. Graph and plan: one tree, bodies numbered depth-first in document order, fixed joints
//     merged; the URDF semantics are applied here (defaults: origin identity, axis 1 0 0,
//     lower/upper 0, mimic multiplier 1 / offset 0; poses by Transform::from_rpy_xyz;
//     inertia tensors rotated by the inertial origin's rpy), with the policy checks.
//  4. The Model is built from the plan.
#include "plucker/io/urdf.hpp"

#include <tinyxml2.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "plucker/errors.hpp"
#include "plucker/model/physical_range.hpp"

namespace plucker {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kAxisNormTol = 1e-6;    // |norm - 1| above this: warn (always normalised)
constexpr double kAxisZeroTol = 1e-9;    // |axis| below this on a movable joint: refuse
constexpr double kInertiaRelTol = 1e-9;  // inertia checks, relative to the tensor's magnitude
// An inertia tensor below mass * this (kg m^2: a body one micrometre across) is a point mass.
constexpr double kNegligibleInertia = 1e-12;
constexpr const char* kLoopHint =
    "URDF cannot express kinematic loops; declare the loop-closing joint as a <loop_joint> element "
    "(see docs/loops.md)";
constexpr const char* kRangeDoc = "docs/urdf.md, \"Physical range\"";
constexpr const char* kLimitsDoc = "docs/urdf.md, \"Limits\"";
// Longest quotation of an input string in a message (longer ones are cut, with their length).
constexpr size_t kMaxQuote = 200;

enum class JType { Revolute, Continuous, Prismatic, Fixed, Floating, Planar };

bool movable_with_axis(JType t) {
  return t == JType::Revolute || t == JType::Continuous || t == JType::Prismatic || t == JType::Planar;
}

// ------------------------------------------------------------------ UTF-8 and quoting
/// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF), or 0 if there is none.
size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  size_t len = 0;
  unsigned cp = 0;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2, cp = c & 0x1Fu;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3, cp = c & 0x0Fu;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4, cp = c & 0x07u;
  else
    return 0;
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const unsigned b = byte(i + k);
    if ((b & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (b & 0x3Fu);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return len;
}

/// Offset of the first byte that is not part of well-formed UTF-8, or npos.
size_t invalid_utf8_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t len = utf8_length(s, i);
    if (len == 0) return i;
    i += len;
  }
  return std::string_view::npos;
}

std::string hex_byte(unsigned char c) {
  static const char digits[] = "0123456789abcdef";
  return std::string("\\x") + digits[c >> 4] + digits[c & 15];
}

/// An input string as it may appear in a message: bytes that are not well-formed UTF-8 and
/// control characters written as \xNN, cut after kMaxQuote bytes.
std::string printable(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (out.size() >= kMaxQuote) {
      out += "... (" + std::to_string(s.size()) + " bytes)";
      break;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = utf8_length(s, i);
    if (len == 0 || c < 0x20 || c == 0x7F) {
      out += hex_byte(c);
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

// (Appending, not "'" + printable(s): GCC 12 -Wrestrict false positive, GCC bug 105329.)
std::string squote(std::string_view s) { return std::string(1, '\'').append(printable(s)).append(1, '\''); }
std::string link_ref(std::string_view name) { return "link " + squote(name); }
std::string joint_ref(std::string_view name) { return "joint " + squote(name); }
std::string loop_ref(std::string_view name) { return "loop joint " + squote(name); }

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(6);
  s << x;
  return s.str();
}
std::string fmt(const Vec3& v) { return fmt(v.x()) + " " + fmt(v.y()) + " " + fmt(v.z()); }

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

/// Pose of a frame given by URDF's <origin xyz rpy> (both default to zero).
Transform pose(const std::optional<Vec3>& xyz, const std::optional<Vec3>& rpy) {
  return Transform::from_rpy_xyz(rpy.value_or(Vec3::Zero()), xyz.value_or(Vec3::Zero()));
}

// ------------------------------------------------------------------ pre-scan data
struct Origin {
  std::optional<Vec3> xyz, rpy;
  Transform transform() const { return pose(xyz, rpy); }
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
  std::string name;
  int line = 0;
  JType type = JType::Fixed;
  std::string parent, child;
  int parent_link = -1, child_link = -1;
  Origin origin;
  std::optional<Vec3> axis;            // only read for movable joints; URDF's default is 1 0 0
  bool has_limit = false;              // only read for revolute/continuous/prismatic
  std::optional<double> lower, upper;  // URDF's default: 0
  double effort = 0.0, velocity = 0.0;
  bool has_mimic = false;
  std::string mimic_joint;
  int mimic_leader = -1;
  std::optional<double> multiplier, offset;  // URDF's defaults: 1 and 0
};

const char* type_name(JType t) {
  switch (t) {
    case JType::Revolute:
      return "revolute";
    case JType::Continuous:
      return "continuous";
    case JType::Prismatic:
      return "prismatic";
    case JType::Fixed:
      return "fixed";
    case JType::Floating:
      return "floating";
    case JType::Planar:
      return "planar";
  }
  return "?";
}

struct PreLoopJoint {
  std::string name, type;
  int line = 0;
  std::string link[2];  // predecessor, successor
  Origin origin[2];
  Vec3 axis = Vec3::UnitZ();
  bool actuated = false;
};

// A body of the model to build, compact (a 100,000-link chain holds 100,000 of them next to
// the Model being built): the joint is made in build() from its kind and unit axis.
struct BodyPlan {
  enum class Kind : unsigned char { Base, Revolute, Prismatic, Planar, FreeFlyer };
  Kind kind = Kind::Base;
  int parent = 0;
  int link = -1;  // pre-scan link index (-1: none)
  Vec3 axis = Vec3::UnitZ();
  double lower = -kInf, upper = kInf, velocity = kInf, effort = kInf;  // 1-DoF joints
  Transform X_tree;
  RigidBodyInertia inertia;
  std::string body_name, joint_name;

  JointModel joint() const {
    switch (kind) {
      case Kind::Revolute:
        return make_revolute(axis);
      case Kind::Prismatic:
        return make_prismatic(axis);
      case Kind::Planar:
        return make_planar(axis);
      case Kind::FreeFlyer:
        return JointFreeFlyer{};
      case Kind::Base:
        break;
    }
    return JointFixed{};
  }
  int nv() const { return kind == Kind::Base ? 0 : kind == Kind::Planar ? 3 : kind == Kind::FreeFlyer ? 6 : 1; }
  JointLimits limits() const {
    JointLimits l;  // empty: add_body's defaults (unlimited)
    if (kind == Kind::Revolute || kind == Kind::Prismatic) {
      l.lower = VecX::Constant(1, lower);
      l.upper = VecX::Constant(1, upper);
      l.velocity = VecX::Constant(1, velocity);
      l.effort = VecX::Constant(1, effort);
    }
    return l;
  }
};

struct FramePlan {
  std::string name;
  int body = 0;
  Transform X_body;
};

// Where a link ended up: on a body, as the body's own link (frame -1) or merged into frames_[frame].
struct LinkPlace {
  int body = -1;
  int frame = -1;
};

}  // namespace

namespace {

class Loader {
 public:
  Loader(std::string_view xml, const UrdfOptions& options, const std::string& source)
      : xml_(xml), opt_(options), src_(source) {}
  /// Takes the document (load_urdf's copy of the file), to free it once it is parsed.
  Loader(std::string&& xml, const UrdfOptions& options, const std::string& source)
      : owned_(std::move(xml)), xml_(owned_), opt_(options), src_(source) {}

  Model run() {
    try {
      scan();
      prescan();
      std::string().swap(owned_);  // nothing reads the document after this
      xml_ = {};
      resolve_graph();
      plan();
      release_prescan();
      return build();
    } catch (const ModelError&) {
      throw;
    } catch (const Error& e) {
      // Every check is meant to happen above, with a message naming the link/joint.
      internal(std::string("unexpected error: ") + e.what());
    }
  }

 private:
  std::string owned_;
  std::string_view xml_;
  const UrdfOptions& opt_;
  const std::string& src_;

  std::string robot_name_;
  std::vector<PreLink> links_;
  std::vector<PreJoint> joints_;
  std::unordered_map<std::string, int> link_index_, joint_index_;
  std::vector<PreLoopJoint> loop_joints_;
  std::unordered_set<std::string> loop_names_;
  int root_ = -1;

  std::vector<BodyPlan> bodies_;  // bodies_[0]: the base (inertia collected for reference)
  std::vector<FramePlan> frames_;
  std::vector<LinkPlace> link_place_;  // pre-scan link -> where it ended up
  std::vector<int> body_of_joint_;     // pre-scan joint -> body (-1: merged fixed joint)
  std::vector<MimicRelation> mimics_;
  std::vector<LoopJoint> loop_plans_;

  /// Frees what only the pre-scan and the plan need (large models: ~0.7 KB per link).
  void release_prescan() {
    std::vector<PreLink>().swap(links_);
    std::vector<PreJoint>().swap(joints_);
    std::unordered_map<std::string, int>().swap(link_index_);
    std::unordered_map<std::string, int>().swap(joint_index_);
    std::vector<PreLoopJoint>().swap(loop_joints_);
    std::unordered_set<std::string>().swap(loop_names_);
    std::vector<LinkPlace>().swap(link_place_);
    std::vector<int>().swap(body_of_joint_);
  }

  // ---------------------------------------------------------------- messages
  std::string message(const std::string& what, const std::string& where) const {
    return src_ + ": " + what + (where.empty() ? "" : " (" + where + ")");
  }
  [[noreturn]] void fail(const std::string& what, const std::string& where = "") const {
    throw ModelError(message(what, where));
  }
  [[noreturn]] void internal(const std::string& what) const {
    fail("internal error: " + what + " (the loader accepted a document it then could not build; please report)");
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
    return std::string(1, '<').append(element).append("> at line ").append(std::to_string(line));
  }
  /// 1-based line of a byte offset (counted only when a message needs it).
  int line_at(size_t offset) const {
    offset = std::min(offset, xml_.size());
    return 1 + static_cast<int>(std::count(xml_.begin(), xml_.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
  }

  // ---------------------------------------------------------------- step 1: limits
  // A lexer over the raw bytes that follows tinyxml2's grammar (XMLDocument::Identify,
  // XMLElement::ParseDeep / ParseAttributes): every '<' outside markup starts markup; "<?"
  // runs to "?>", "<!--" to "-->", "<![CDATA[" to "]]>", other "<!" to ">"; any other '<' is
  // a tag: whitespace, an optional '/' (an end tag), a name, attributes (name = 'value' or
  // "value", the value running to the same quote), then '>' or "/>" ("</a x='1'/>" is an empty
  // element to tinyxml2, and end tags may carry attributes). It counts what tinyxml2 would
  // create, and stops where tinyxml2 would stop: at a syntax error (the rest is then parsed
  // by tinyxml2 as part of the current piece, which fails at the same byte) and at an end tag
  // outside every element (tinyxml2 ignores the rest of the document). Linear in the size.
  //
  // It also cuts the document for step 2: each child element of the first top-level <robot>
  // becomes a chunk (its bytes and first line), and the skeleton is the document with every
  // chunk replaced by the newlines it contained (so that lines keep their numbers).
  struct Chunk {
    size_t begin = 0, end = 0;
    int line = 1;
  };
  std::vector<Chunk> chunks_;
  std::string skeleton_;
  size_t link_chunks_ = 0, joint_chunks_ = 0;  // to reserve the pre-scan's tables
  long loop_chunks_ = 0;                       // <loop_joint> elements, for kMaxLoopJoints

  void scan() {
    using namespace urdf_limits;
    const std::string_view s = xml_;
    const size_t n = s.size();
    constexpr size_t npos = std::string_view::npos;
    if (n > kMaxBytes)
      fail("document of " + std::to_string(n) + " bytes, over the cap of " + std::to_string(kMaxBytes) + " bytes (" +
           kLimitsDoc + ")");
    if (n == 0) fail("malformed XML: empty document");
    if (const void* nul = std::memchr(s.data(), '\0', n)) {
      const size_t at = static_cast<size_t>(static_cast<const char*>(nul) - s.data());
      fail("malformed XML: NUL character at byte " + std::to_string(at) + " (line " + std::to_string(line_at(at)) +
           ")");
    }
    auto space = [](char c) {  // XMLUtil::IsWhiteSpace
      const auto u = static_cast<unsigned char>(c);
      return u < 0x80 && std::isspace(u);
    };
    auto name_start = [](char c) {  // XMLUtil::IsNameStartChar
      const auto u = static_cast<unsigned char>(c);
      return u >= 0x80 || std::isalpha(u) || c == ':' || c == '_';
    };
    auto name_char = [&](char c) {  // XMLUtil::IsNameChar
      return name_start(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-';
    };
    long nodes = 0, attributes = 0;
    size_t nodes_over_at = npos, attributes_over_at = npos, loops_over_at = npos;
    int depth = 0;
    bool robot_seen = false, in_robot = false;
    Chunk open;  // the chunk being read (begin = npos: none)
    open.begin = npos;
    size_t line_pos = 0;  // lines counted up to here (chunk starts only move forward)
    int line = 1;
    auto line_of = [&](size_t at) {
      line += static_cast<int>(std::count(s.begin() + static_cast<std::ptrdiff_t>(line_pos),
                                          s.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
      line_pos = at;
      return line;
    };
    auto count_node = [&](size_t at) {
      if (++nodes == kMaxNodes + 1) nodes_over_at = at;
    };
    size_t i = 0;
    while (i < n) {
      const void* lt = std::memchr(s.data() + i, '<', n - i);
      if (!lt) break;
      i = static_cast<size_t>(static_cast<const char*>(lt) - s.data());
      const std::string_view rest = s.substr(i);
      std::string_view start_mark, end_mark;  // the end is searched for after the start
      if (rest.starts_with("<?"))
        start_mark = "<?", end_mark = "?>";
      else if (rest.starts_with("<!--"))
        start_mark = "<!--", end_mark = "-->";
      else if (rest.starts_with("<![CDATA["))
        start_mark = "<![CDATA[", end_mark = "]]>";
      else if (rest.starts_with("<!"))
        start_mark = "<!", end_mark = ">";
      if (!end_mark.empty()) {
        count_node(i);
        const size_t k = s.find(end_mark, i + start_mark.size());
        if (k == npos) break;  // unterminated: tinyxml2 stops here
        i = k + end_mark.size();
        continue;
      }
      // A tag.
      const size_t tag = i;
      size_t j = i + 1;
      while (j < n && space(s[j])) ++j;
      const bool closing = j < n && s[j] == '/';
      if (closing) ++j;
      if (j >= n || !name_start(s[j])) break;  // no name: tinyxml2 stops here
      const size_t name_begin = j;
      while (j < n && name_char(s[j])) ++j;
      const std::string_view name = s.substr(name_begin, j - name_begin);
      long count = 0;
      bool ok = false, closed = false;
      while (true) {
        while (j < n && space(s[j])) ++j;
        if (j >= n) break;
        if (name_start(s[j])) {  // an attribute
          while (j < n && name_char(s[j])) ++j;
          while (j < n && space(s[j])) ++j;
          if (j >= n || s[j] != '=') break;
          ++j;
          while (j < n && space(s[j])) ++j;
          if (j >= n || (s[j] != '"' && s[j] != '\'')) break;
          const size_t quote = s.find(s[j], j + 1);
          if (quote == npos) break;
          j = quote + 1;
          ++count;
        } else if (s[j] == '>') {
          ++j, ok = true;
          break;
        } else if (s[j] == '/' && j + 1 < n && s[j + 1] == '>') {
          j += 2, ok = true, closed = true;
          break;
        } else {
          break;
        }
      }
      // tinyxml2 checks each attribute against the element's earlier ones, error or not.
      if (count > kMaxAttributesPerElement)
        fail("element <" + std::string(closing ? "/" : "") + printable(name) + "> has " + std::to_string(count) +
                 " attributes, over the cap of " + std::to_string(kMaxAttributesPerElement) + " per element (" +
                 kLimitsDoc + ")",
             "line " + std::to_string(line_at(tag)));
      attributes += count;
      if (attributes > kMaxAttributes && attributes_over_at == npos) attributes_over_at = tag;
      if (!ok) break;  // a malformed tag: tinyxml2 stops here
      i = j;
      if (closing && !closed) {  // an end tag
        if (depth == 0) break;   // outside every element: tinyxml2 ends the document here
        --depth;
        if (in_robot && depth == 1 && open.begin != npos) {
          open.end = i;
          chunks_.push_back(open);
          open.begin = npos;
        } else if (in_robot && depth == 0) {
          in_robot = false;
        }
        continue;
      }
      count_node(tag);  // an element, open or empty
      if (depth == 0 && !robot_seen && name == "robot") {
        robot_seen = true;
        in_robot = !closed;
      } else if (in_robot && depth == 1) {
        link_chunks_ += name == "link";
        joint_chunks_ += name == "joint";
        if (name == "loop_joint" && ++loop_chunks_ == kMaxLoopJoints + 1) loops_over_at = tag;
        open.begin = tag;
        open.line = line_of(tag);
        if (closed) {
          open.end = i;
          chunks_.push_back(open);
          open.begin = npos;
        }
      }
      if (!closed && ++depth > kMaxDepth)
        fail("elements nested more than " + std::to_string(kMaxDepth) + " deep, the cap (" + kLimitsDoc + ")",
             "line " + std::to_string(line_at(tag)));
    }
    if (nodes > kMaxNodes)
      fail("document of " + std::to_string(nodes) + " elements and other markup nodes, over the cap of " +
               std::to_string(kMaxNodes) + " (" + kLimitsDoc + ")",
           "the cap is passed at line " + std::to_string(line_at(nodes_over_at)));
    if (attributes > kMaxAttributes)
      fail("document of " + std::to_string(attributes) + " attributes, over the cap of " +
               std::to_string(kMaxAttributes) + " (" + kLimitsDoc + ")",
           "the cap is passed at line " + std::to_string(line_at(attributes_over_at)));
    if (loop_chunks_ > kMaxLoopJoints)
      fail("document of " + std::to_string(loop_chunks_) + " <loop_joint> elements, over the cap of " +
               std::to_string(kMaxLoopJoints) + " (" + kLimitsDoc + ")",
           "the cap is passed at line " + std::to_string(line_at(loops_over_at)));
    if (open.begin != npos) {  // unclosed, or the lexer stopped inside it: the rest is this piece
      open.end = n;
      chunks_.push_back(open);
    }
    if (!chunks_.empty()) {
      size_t pos = 0;
      for (const Chunk& c : chunks_) {
        skeleton_.append(s.substr(pos, c.begin - pos));
        skeleton_.append(static_cast<size_t>(std::count(s.begin() + static_cast<std::ptrdiff_t>(c.begin),
                                                        s.begin() + static_cast<std::ptrdiff_t>(c.end), '\n')),
                         '\n');
        pos = c.end;
      }
      skeleton_.append(s.substr(pos));
    }
  }

  // ---------------------------------------------------------------- number readers
  double read_number(const tinyxml2::XMLElement* e, const char* attr, const std::string& where) const {
    const char* text = e->Attribute(attr);
    if (!text) fail("<" + std::string(e->Name()) + "> has no '" + attr + "' attribute", where);
    double v = 0.0;
    switch (parse_number(text, v)) {
      case NumStatus::Ok:
        return v;
      case NumStatus::NonFinite:
        fail("non-finite or out-of-range number " + squote(text) + " in <" + e->Name() + " " + attr + ">", where);
      case NumStatus::Invalid:
      default:
        fail("invalid number " + squote(text) + " in <" + e->Name() + " " + attr + ">", where);
    }
  }
  std::optional<double> read_optional(const tinyxml2::XMLElement* e, const char* attr, const std::string& where) const {
    if (!e->Attribute(attr)) return std::nullopt;
    return read_number(e, attr, where);
  }
  Vec3 read_vec3(const tinyxml2::XMLElement* e, const char* attr, const std::string& where) const {
    const char* text = e->Attribute(attr);
    if (!text) fail("<" + std::string(e->Name()) + "> has no '" + attr + "' attribute", where);
    std::string_view tokens[3];
    size_t found = 0;
    const std::string_view s(text);
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i])) ++i;
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      if (j > i) {
        if (found < 3) tokens[found] = s.substr(i, j - i);
        ++found;
      }
      i = j;
    }
    const std::string ctx = "<" + std::string(e->Name()) + " " + attr + "=" + squote(text) + ">";
    if (found != 3) fail("expected 3 numbers in " + ctx + ", found " + std::to_string(found), where);
    Vec3 v;
    for (int k = 0; k < 3; ++k) {
      switch (parse_number(tokens[k], v[k])) {
        case NumStatus::Ok:
          break;
        case NumStatus::NonFinite:
          fail("non-finite or out-of-range number " + squote(tokens[k]) + " in " + ctx, where);
        case NumStatus::Invalid:
          fail("invalid number " + squote(tokens[k]) + " in " + ctx, where);
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

  /// A string the model keeps (or that names one) must be valid UTF-8: Python reads every
  /// name as str. `what` says which ("link name", "<parent link>", ...).
  std::string read_name(const char* text, const std::string& what, const char* element, int line) const {
    const std::string_view s(text);
    const size_t bad = invalid_utf8_at(s);
    if (bad != std::string_view::npos)
      fail(what + " " + squote(s) + " is not valid UTF-8 (byte " + hex_byte(static_cast<unsigned char>(s[bad])) +
               " at offset " + std::to_string(bad) + ")",
           where_line(element, line));
    return std::string(s);
  }

  // ---------------------------------------------------------------- physical range
  /// An offset (joint origin, COM, loop-joint frame, composed pose of a merged link) must lie
  /// within physical_range::kMaxLength of its reference frame.
  void check_length(const Vec3& p, const std::string& what, const std::string& where) const {
    const double d = p.stableNorm();  // no overflow for components near the double range
    if (!(d <= physical_range::kMaxLength))
      fail(what + " at " + fmt(d) + " m (xyz " + fmt(p) + "), beyond the physical range of " +
               fmt(physical_range::kMaxLength) + " m (" + kRangeDoc + ")",
           where);
  }

  // ---------------------------------------------------------------- step 2: pre-scan
  // The skeleton is parsed first (the document with <robot>'s child elements cut out), then
  // each child element on its own, with one reused XMLDocument: the DOM never holds more than
  // one link or joint, where the whole document's DOM costs ~100 bytes per element and
  // attribute (270 MB for a 100,000-link chain). tinyxml2 parses an element the same way
  // wherever it stands, so this accepts exactly the documents a whole parse accepts; a
  // malformed element is reported before a defect of an earlier one, as a whole parse would.
  int line_base_ = 0;  // added to tinyxml2's line numbers (1-based within the parsed piece)
  int line(const tinyxml2::XMLElement* e) const { return line_base_ + e->GetLineNum(); }

  /// Parses text (whose first line is first_line of the document) into doc; the message of
  /// the error if it is malformed.
  std::optional<std::string> parse(tinyxml2::XMLDocument& doc, std::string_view text, int first_line) const {
    if (doc.Parse(text.data(), text.size()) == tinyxml2::XML_SUCCESS) return std::nullopt;
    std::string detail = doc.ErrorStr() ? doc.ErrorStr() : "";
    const size_t colon = detail.find(": ");
    detail = colon == std::string::npos ? "" : " (" + printable(std::string_view(detail).substr(colon + 2)) + ")";
    const int at = doc.ErrorLineNum();
    return std::string("malformed XML") + (at > 0 ? " at line " + std::to_string(first_line - 1 + at) : "") + ": " +
           doc.ErrorName() + detail;
  }

  void prescan() {
    tinyxml2::XMLDocument doc(true, tinyxml2::PRESERVE_WHITESPACE);
    if (const auto error = parse(doc, chunks_.empty() ? xml_ : std::string_view(skeleton_), 1)) {
      // A malformed piece (e.g. an element left open, which leaves <robot> open in the
      // skeleton too) is reported in its own words first.
      for (const Chunk& c : chunks_)
        if (const auto piece = parse(doc, xml_.substr(c.begin, c.end - c.begin), c.line)) fail(*piece);
      fail(*error);
    }
    std::string().swap(skeleton_);
    // A defect found before the last piece is parsed waits: malformed XML comes first.
    std::optional<ModelError> first_error;
    try {
      const tinyxml2::XMLElement* robot = doc.FirstChildElement("robot");
      if (!robot) {
        const tinyxml2::XMLElement* root = doc.RootElement();
        fail(root ? "the document element is <" + printable(root->Name()) + ">, expected <robot>"
                  : "no <robot> element");
      }
      const char* rname = robot->Attribute("name");
      if (!rname) fail("<robot> has no name attribute");
      robot_name_ = read_name(rname, "robot name", "robot", line(robot));
      if (chunks_.empty())  // <robot> has no child elements (or they were not cut: parsed whole)
        for (const tinyxml2::XMLElement* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) prescan(e);
      else if (robot->FirstChildElement())
        internal("<robot> at line " + std::to_string(line(robot)) + " kept a child element at line " +
                 std::to_string(line(robot->FirstChildElement())) + " when it was cut into pieces");
    } catch (const ModelError& err) {
      first_error = err;
    }

    links_.reserve(link_chunks_);
    link_index_.reserve(link_chunks_);
    joints_.reserve(joint_chunks_);
    joint_index_.reserve(joint_chunks_);
    for (const Chunk& c : chunks_) {
      line_base_ = 0;
      if (const auto error = parse(doc, xml_.substr(c.begin, c.end - c.begin), c.line)) fail(*error);
      const tinyxml2::XMLElement* e = doc.RootElement();
      if (!e || doc.FirstChild() != doc.LastChild())
        internal("a child of <robot> at line " + std::to_string(c.line) + " was not cut as one element");
      if (first_error) continue;  // only looking for malformed XML now
      line_base_ = c.line - 1;
      try {
        prescan(e);
      } catch (const ModelError& err) {
        first_error = err;
      }
    }
    line_base_ = 0;
    if (first_error) throw *first_error;
    std::vector<Chunk>().swap(chunks_);
    if (links_.empty()) fail("no <link> elements in <robot> " + squote(robot_name_));
  }  // the DOM is freed here: everything the loader needs was copied out

  void prescan(const tinyxml2::XMLElement* e) {
    const std::string_view tag = e->Name();
    if (tag == "link")
      prescan_link(e);
    else if (tag == "joint")
      prescan_joint(e);
    else if (tag == "loop_joint")
      prescan_loop_joint(e);
  }

  // <loop_joint name type [actuated]><predecessor link xyz rpy/><successor .../><axis xyz/></loop_joint>
  // (docs/loops.md). Links are resolved to bodies after the tree is planned.
  void prescan_loop_joint(const tinyxml2::XMLElement* e) {
    PreLoopJoint j;
    j.line = line(e);
    const char* n = e->Attribute("name");
    if (!n || !*n) fail("<loop_joint> has no name attribute", where_line("loop_joint", j.line));
    j.name = read_name(n, "loop joint name", "loop_joint", j.line);
    const std::string where = loop_ref(j.name);
    if (!loop_names_.insert(j.name).second) fail("duplicate loop joint name", where);
    const char* t = e->Attribute("type");
    if (!t) fail("<loop_joint> has no type attribute", where);
    j.type = t;
    if (const char* a = e->Attribute("actuated")) {
      const std::string_view av(a);
      if (av == "true" || av == "1")
        j.actuated = true;
      else if (av != "false" && av != "0")
        fail("actuated must be true or false, got " + squote(a), where);
    }
    const char* tags[2] = {"predecessor", "successor"};
    for (int k = 0; k < 2; ++k) {
      const tinyxml2::XMLElement* x = e->FirstChildElement(tags[k]);
      if (!x) fail("<loop_joint> has no <" + std::string(tags[k]) + "> element", where);
      const char* link = x->Attribute("link");
      if (!link) fail("<" + std::string(tags[k]) + "> has no link attribute", where);
      j.link[k] = read_name(link, "<" + std::string(tags[k]) + " link>", tags[k], line(x));
      if (x->Attribute("xyz")) j.origin[k].xyz = read_vec3(x, "xyz", where);
      if (x->Attribute("rpy")) j.origin[k].rpy = read_vec3(x, "rpy", where);
      if (j.origin[k].xyz) check_length(*j.origin[k].xyz, "<" + std::string(tags[k]) + "> frame", where);
    }
    if (const tinyxml2::XMLElement* a = e->FirstChildElement("axis")) j.axis = read_vec3(a, "xyz", where);
    loop_joints_.push_back(std::move(j));
  }

  void prescan_link(const tinyxml2::XMLElement* e) {
    PreLink l;
    l.line = line(e);
    const char* name = e->Attribute("name");
    if (!name || !*name) fail("a <link> has no name", where_line("link", l.line));
    l.name = read_name(name, "link name", "link", l.line);
    const std::string where = link_ref(l.name);
    if (auto it = link_index_.find(l.name); it != link_index_.end())
      fail("duplicate link name (lines " + std::to_string(links_[it->second].line) + " and " + std::to_string(l.line) +
               ")",
           where);
    if (const tinyxml2::XMLElement* in = e->FirstChildElement("inertial")) {
      PreInertial& pi = l.inertial;
      pi.present = true;
      pi.origin = read_origin(in, where);
      if (pi.origin.xyz) check_length(*pi.origin.xyz, "centre of mass (<inertial><origin>)", where);
      const tinyxml2::XMLElement* mass = in->FirstChildElement("mass");
      if (!mass) fail("<inertial> has no <mass>", where);
      pi.mass = read_number(mass, "value", where);
      if (pi.mass < 0.0) fail("negative mass " + fmt(pi.mass), where);
      if (pi.mass > physical_range::kMaxMass)
        fail("mass " + fmt(pi.mass) + " kg, beyond the physical range of " + fmt(physical_range::kMaxMass) + " kg (" +
                 kRangeDoc + ")",
             where);
      const tinyxml2::XMLElement* inertia = in->FirstChildElement("inertia");
      if (!inertia) fail("<inertial> has no <inertia>", where);
      static const char* names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"};
      for (int k = 0; k < 6; ++k) {
        pi.I[k] = read_number(inertia, names[k], where);
        if (!(std::abs(pi.I[k]) <= physical_range::kMaxInertia))
          fail(std::string("inertia entry ") + names[k] + " = " + fmt(pi.I[k]) +
                   " kg m^2, beyond the physical range of " + fmt(physical_range::kMaxInertia) + " kg m^2 (" +
                   kRangeDoc + ")",
               where);
      }
    }
    if (opt_.collision_spheres)
      for (const tinyxml2::XMLElement* c = e->FirstChildElement("collision"); c;
           c = c->NextSiblingElement("collision")) {
        const tinyxml2::XMLElement* geometry = c->FirstChildElement("geometry");
        const tinyxml2::XMLElement* sphere = geometry ? geometry->FirstChildElement("sphere") : nullptr;
        if (!sphere) continue;
        UrdfCollisionSphere cs;
        cs.link = l.name;
        cs.line = line(c);
        const Origin o = read_origin(c, where);
        if (o.xyz) {
          check_length(*o.xyz, "collision sphere centre (<collision><origin>)", where);
          cs.center = *o.xyz;
        }
        cs.radius = read_number(sphere, "radius", where);
        if (!(cs.radius >= 0.0 && cs.radius <= physical_range::kMaxLength))
          fail("collision sphere radius " + fmt(cs.radius) + " at line " + std::to_string(cs.line) + " is not in [0, " +
                   fmt(physical_range::kMaxLength) + "] m",
               where);
        opt_.collision_spheres->push_back(std::move(cs));
      }
    if (opt_.collision_geometry)
      for (const tinyxml2::XMLElement* c = e->FirstChildElement("collision"); c;
           c = c->NextSiblingElement("collision")) {
        const tinyxml2::XMLElement* geometry = c->FirstChildElement("geometry");
        if (!geometry) continue;
        UrdfCollisionGeometry g;
        g.link = l.name;
        g.line = line(c);
        auto size = [&](double x, const char* what) {
          if (!(x >= 0.0 && x <= physical_range::kMaxLength))
            fail(std::string("collision ") + what + " " + fmt(x) + " at line " + std::to_string(g.line) +
                     " is not in [0, " + fmt(physical_range::kMaxLength) + "] m",
                 where);
          return x;
        };
        if (const tinyxml2::XMLElement* sphere = geometry->FirstChildElement("sphere")) {
          g.kind = UrdfCollisionGeometry::Kind::Sphere;
          g.radius = size(read_number(sphere, "radius", where), "sphere radius");
        } else if (const tinyxml2::XMLElement* box = geometry->FirstChildElement("box")) {
          g.kind = UrdfCollisionGeometry::Kind::Box;
          g.size = read_vec3(box, "size", where);
          for (int k = 0; k < 3; ++k) size(g.size[k], "box size");
        } else if (const tinyxml2::XMLElement* cyl = geometry->FirstChildElement("cylinder")) {
          g.kind = UrdfCollisionGeometry::Kind::Cylinder;
          g.radius = size(read_number(cyl, "radius", where), "cylinder radius");
          g.length = size(read_number(cyl, "length", where), "cylinder length");
        } else {
          continue;
        }
        const Origin o = read_origin(c, where);
        if (o.xyz) check_length(*o.xyz, "collision origin (<collision><origin>)", where);
        const Transform X = o.transform();
        g.rotation = X.E.transpose();
        g.position = X.r;
        opt_.collision_geometry->push_back(std::move(g));
      }
    link_index_.emplace(l.name, static_cast<int>(links_.size()));
    links_.push_back(std::move(l));
  }

  void prescan_joint(const tinyxml2::XMLElement* e) {
    PreJoint j;
    j.line = line(e);
    const char* name = e->Attribute("name");
    if (!name || !*name) fail("a <joint> has no name", where_line("joint", j.line));
    j.name = read_name(name, "joint name", "joint", j.line);
    const std::string where = joint_ref(j.name);
    if (auto it = joint_index_.find(j.name); it != joint_index_.end())
      fail("duplicate joint name (lines " + std::to_string(joints_[it->second].line) + " and " +
               std::to_string(j.line) + ")",
           where);
    const char* type = e->Attribute("type");
    if (!type) fail("<joint> has no type", where);
    const std::string_view ts(type);
    if (ts == "revolute")
      j.type = JType::Revolute;
    else if (ts == "continuous")
      j.type = JType::Continuous;
    else if (ts == "prismatic")
      j.type = JType::Prismatic;
    else if (ts == "fixed")
      j.type = JType::Fixed;
    else if (ts == "floating")
      j.type = JType::Floating;
    else if (ts == "planar")
      j.type = JType::Planar;
    else
      fail(
          "unknown joint type " + squote(ts) + " (expected revolute, continuous, prismatic, fixed, floating or planar)",
          where);

    auto link_of = [&](const char* tag) {
      const tinyxml2::XMLElement* x = e->FirstChildElement(tag);
      const char* l = x ? x->Attribute("link") : nullptr;
      if (!l) fail("<joint> has no <" + std::string(tag) + " link=\"...\">", where);
      return read_name(l, std::string(1, '<').append(tag).append(" link>"), tag, line(x));
    };
    j.parent = link_of("parent");
    j.child = link_of("child");
    j.origin = read_origin(e, where);
    if (j.origin.xyz) check_length(*j.origin.xyz, "joint origin", where);

    const char* tname = type_name(j.type);
    if (movable_with_axis(j.type)) {
      if (const tinyxml2::XMLElement* a = e->FirstChildElement("axis")) {
        if (!a->Attribute("xyz")) fail("<axis> has no xyz attribute", where);
        j.axis = read_vec3(a, "xyz", where);
        if (j.axis->stableNorm() < kAxisZeroTol)
          fail("zero-length axis (" + fmt(*j.axis) + ") on a " + tname + " joint", where);
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
        fail(std::string("a ") + tname + " joint needs a <limit> element (with effort and velocity)", where);
      }
    }
    if (const tinyxml2::XMLElement* m = e->FirstChildElement("mimic")) {
      j.has_mimic = true;
      const char* leader = m->Attribute("joint");
      if (!leader) fail("<mimic> has no joint attribute", where);
      j.mimic_joint = read_name(leader, "<mimic joint>", "mimic", line(m));
      j.multiplier = read_optional(m, "multiplier", where);
      j.offset = read_optional(m, "offset", where);
    }
    joint_index_.emplace(j.name, static_cast<int>(joints_.size()));
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
             link_ref(c.name) + ", " + joint_ref(j.name));
      }
      c.parent_joint = k;
      links_[j.parent_link].child_joints.push_back(k);
    }
    for (int k = 0; k < static_cast<int>(joints_.size()); ++k) {
      PreJoint& j = joints_[k];
      if (!j.has_mimic) continue;
      auto it = joint_index_.find(j.mimic_joint);
      if (it == joint_index_.end())
        fail("<mimic> names joint " + squote(j.mimic_joint) + ", which does not exist", joint_ref(j.name));
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
        names.push_back(names.front());  // back to where the cycle started
        fail("the joints form a cycle through links " + name_list(names, " -> ") + "; " + kLoopHint,
             link_ref(links_[cur].name) + ", " + joint_ref(joints_[links_[cur].parent_joint].name));
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

  // ---------------------------------------------------------------- step 3: plan
  /// The link's inertia in its own frame, after the policy checks. Links welded to a fixed
  /// base (`dynamic` false) are checked for hard errors only: their inertia is never used.
  RigidBodyInertia link_inertia(int i, bool dynamic) const {
    const PreLink& l = links_[i];
    const std::string where = link_ref(l.name);
    if (!l.inertial.present) return RigidBodyInertia();
    const PreInertial& in = l.inertial;
    Mat3 Ic;                          // about the COM, in the COM frame
    Ic << in.I[0], in.I[1], in.I[2],  //
        in.I[1], in.I[3], in.I[4],    //
        in.I[2], in.I[4], in.I[5];
    const Transform X = in.origin.transform();  // COM frame in the link frame
    const Vec3& com = X.translation();
    const double m = in.mass;
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
      if (m == 0.0) issues.emplace_back("massless link with a nonzero inertia tensor");
      if (m > 0.0 && !c.positive_definite) issues.emplace_back("rank-deficient inertia tensor");
      if (!c.triangle_inequality) issues.emplace_back("inertia tensor violates the triangle inequality");
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

  /// The joint's unit axis (URDF's default, without <axis>: 1 0 0).
  Vec3 unit_axis(const PreJoint& j) const {
    const Vec3 a = j.axis.value_or(Vec3::UnitX());
    const double n = a.stableNorm();  // no overflow for components near the double range
    if (!(n >= kAxisZeroTol))
      fail("zero-length axis (" + fmt(a) + ") on a " + type_name(j.type) + " joint", joint_ref(j.name));
    if (std::abs(n - 1.0) > kAxisNormTol)
      defect("axis (" + fmt(a) + ") is not a unit vector (norm " + fmt(n) + ")", joint_ref(j.name), "normalised");
    return a / n;
  }

  void plan() {
    const bool free = opt_.root == RootJoint::FreeFlyer;
    body_of_joint_.assign(joints_.size(), -1);
    link_place_.assign(links_.size(), LinkPlace{});
    const auto fixed = static_cast<size_t>(
        std::count_if(joints_.begin(), joints_.end(), [](const PreJoint& j) { return j.type == JType::Fixed; }));
    bodies_.reserve(joints_.size() - fixed + 2);
    frames_.reserve(fixed);
    const std::string& root_name = links_[root_].name;
    const RigidBodyInertia root_inertia = link_inertia(root_, free);
    if (free) {
      const bool world_taken = link_index_.count("world") > 0;
      BodyPlan base;
      base.body_name = world_taken ? "universe" : "world";
      bodies_.push_back(base);
      if (joint_index_.count("root_joint"))
        fail(
            "the URDF already has a joint named 'root_joint', the name of the free-flyer root joint; load it with "
            "RootJoint::Fixed",
            joint_ref("root_joint"));
      BodyPlan b;
      b.parent = 0;
      b.kind = BodyPlan::Kind::FreeFlyer;
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
    link_place_[root_] = {root_body, -1};

    // Depth-first from the root, child joints in document order (an explicit stack, so
    // that deep chains cannot overflow the call stack). Bodies get their index when
    // visited (preorder), so the bodies of every subtree are contiguous.
    struct Item {
      int joint;
      int body;   // body carrying the parent link
      int frame;  // the parent link's frame on that body (-1: the body's own link)
    };
    std::vector<Item> stack;
    auto push_children = [&](int link, int body, int frame) {
      const std::vector<int>& cj = links_[link].child_joints;
      for (size_t k = cj.size(); k-- > 0;) stack.push_back({cj[k], body, frame});
    };
    push_children(root_, root_body, -1);
    while (!stack.empty()) {
      const Item it = stack.back();
      stack.pop_back();
      const PreJoint& j = joints_[it.joint];
      const int c = j.child_link;
      const std::string& cname = links_[c].name;
      // Child frame at q = 0 relative to the body: the joint origin composed with the pose of
      // the parent link on its body (merged fixed links).
      Transform X_joint = j.origin.transform();
      if (it.frame >= 0) {
        X_joint = X_joint * frames_[it.frame].X_body;
        check_length(X_joint.r,
                     std::string(j.type == JType::Fixed ? "pose of the merged link" : "joint origin") +
                         " relative to body " + squote(bodies_[it.body].body_name) + " (composed through fixed joints)",
                     j.type == JType::Fixed ? link_ref(cname) + ", " + joint_ref(j.name) : joint_ref(j.name));
      }
      const RigidBodyInertia Ic = link_inertia(c, !(j.type == JType::Fixed && it.body == 0));
      if (j.type == JType::Fixed) {
        link_place_[c] = {it.body, static_cast<int>(frames_.size())};
        frames_.push_back({cname, it.body, X_joint});
        bodies_[it.body].inertia += Ic.transformed_inverse(X_joint);
        push_children(c, it.body, link_place_[c].frame);
        continue;
      }
      BodyPlan b;
      b.parent = it.body;
      b.X_tree = X_joint;
      b.inertia = Ic;
      b.body_name = cname;
      b.joint_name = j.name;
      b.link = c;
      switch (j.type) {
        case JType::Revolute:
        case JType::Continuous:
        case JType::Prismatic:
          b.kind = j.type == JType::Prismatic ? BodyPlan::Kind::Prismatic : BodyPlan::Kind::Revolute;
          b.axis = unit_axis(j);
          // URDF: lower/upper default to 0; a continuous joint has none. Effort and velocity
          // are required in <limit>, which a continuous joint may omit (then unlimited).
          b.effort = j.has_limit ? j.effort : kInf;
          b.velocity = j.has_limit ? j.velocity : kInf;
          b.lower = j.type == JType::Continuous ? -kInf : j.lower.value_or(0.0);
          b.upper = j.type == JType::Continuous ? kInf : j.upper.value_or(0.0);
          break;
        case JType::Planar:
          b.kind = BodyPlan::Kind::Planar;
          b.axis = unit_axis(j);
          break;
        case JType::Floating:
          b.kind = BodyPlan::Kind::FreeFlyer;
          break;
        case JType::Fixed:
          break;
      }
      const int index = static_cast<int>(bodies_.size());
      body_of_joint_[it.joint] = index;
      link_place_[c] = {index, -1};
      bodies_.push_back(std::move(b));
      push_children(c, index, -1);
    }

    for (const BodyPlan& b : bodies_)
      if (!b.inertia.matrix().allFinite())
        fail(
            "inertia not representable in double precision (mass, inertia, COM offset or fixed-joint origins "
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
      if (!inert[k] && bodies_[k].nv() > 0)
        defect("joint " + squote(bodies_[k].joint_name) +
                   " moves no mass or inertia (its link and everything it carries are massless): the joint-space "
                   "inertia matrix is singular and forward dynamics is undefined",
               link_ref(bodies_[k].body_name) + ", " + joint_ref(bodies_[k].joint_name), "loaded as given");

    // Mimic relations (URDF: multiplier 1 and offset 0 by default).
    for (int k = 0; k < static_cast<int>(joints_.size()); ++k) {
      const PreJoint& j = joints_[k];
      if (!j.has_mimic) continue;
      const PreJoint& leader = joints_[j.mimic_leader];
      if (j.type == JType::Fixed) {
        defect("<mimic> on a fixed joint (merged, it has no coordinate)", joint_ref(j.name), "ignored");
        continue;
      }
      auto one_dof = [](JType t) { return t == JType::Revolute || t == JType::Continuous || t == JType::Prismatic; };
      if (!one_dof(j.type))
        fail(std::string("<mimic> on a ") + type_name(j.type) + " joint (mimic joints must have one DoF)",
             joint_ref(j.name));
      if (!one_dof(leader.type))
        fail("<mimic> names joint " + squote(leader.name) + ", a " + type_name(leader.type) +
                 " joint (the leader must have one DoF)",
             joint_ref(j.name));
      mimics_.push_back(
          {body_of_joint_[k], body_of_joint_[j.mimic_leader], j.multiplier.value_or(1.0), j.offset.value_or(0.0)});
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
    const auto it = link_index_.find(name);
    if (it == link_index_.end()) fail("names link " + squote(name) + ", which does not exist", where);
    const LinkPlace& p = link_place_[it->second];
    return {p.body, p.frame >= 0 ? frames_[p.frame].X_body : Transform()};
  }

  void plan_loop_joints() {
    for (const PreLoopJoint& pj : loop_joints_) {
      const std::string where = loop_ref(pj.name);
      if (joint_index_.count(pj.name)) fail("a <joint> has the same name", where);
      LoopJoint lj;
      lj.name = pj.name;
      static const LoopJointType kTypes[] = {LoopJointType::Revolute,    LoopJointType::Prismatic,
                                             LoopJointType::Cylindrical, LoopJointType::Planar,
                                             LoopJointType::Spherical,   LoopJointType::Fixed};
      bool known = pj.type == "ball" || pj.type == "weld";
      for (LoopJointType t : kTypes) known = known || pj.type == to_string(t);
      if (!known)
        fail("unknown loop joint type " + squote(pj.type) +
                 " (valid: revolute, prismatic, cylindrical, planar, spherical (ball), fixed (weld))",
             where);
      lj.type = parse_loop_joint_type(pj.type);
      const auto [bp, Xp] = locate_link(pj.link[0], where);
      const auto [bs, Xs] = locate_link(pj.link[1], where);
      if (bp == bs)
        fail("predecessor " + link_ref(pj.link[0]) + " and successor " + link_ref(pj.link[1]) +
                 " are rigidly connected (same body after merging fixed joints): nothing to close",
             where);
      lj.predecessor = bp;
      lj.successor = bs;
      lj.X_predecessor = pj.origin[0].transform() * Xp;
      lj.X_successor = pj.origin[1].transform() * Xs;
      check_length(lj.X_predecessor.r, "<predecessor> frame relative to body " + squote(bodies_[bp].body_name), where);
      check_length(lj.X_successor.r, "<successor> frame relative to body " + squote(bodies_[bs].body_name), where);
      const bool has_axis = lj.type != LoopJointType::Spherical && lj.type != LoopJointType::Fixed;
      const double n = pj.axis.stableNorm();
      if (has_axis && !(n > kAxisZeroTol)) fail("zero-length <axis>", where);
      lj.axis = has_axis ? Vec3(pj.axis / n) : Vec3::UnitZ();
      lj.actuated = pj.actuated;
      loop_plans_.push_back(lj);
    }
  }

  // ---------------------------------------------------------------- step 4: build
  Model build() const {
    Model model(bodies_[0].body_name);
    model.set_name(robot_name_);
    const std::string* context = nullptr;
    const char* kind = "joint";
    try {
      if (bodies_[0].inertia.matrix().cwiseAbs().maxCoeff() > 0.0) model.add_inertia(0, bodies_[0].inertia);
      for (size_t k = 1; k < bodies_.size(); ++k) {
        const BodyPlan& b = bodies_[k];
        context = &b.joint_name;
        model.add_body(b.parent, b.joint(), b.X_tree, b.inertia, b.body_name, b.joint_name, b.limits());
      }
      context = nullptr;
      for (const FramePlan& f : frames_) {
        context = &f.name;
        kind = "link";
        model.add_frame(f.name, f.body, f.X_body);
      }
      context = nullptr;
      for (const MimicRelation& m : mimics_) model.add_mimic(m);
      kind = "loop joint";
      for (const LoopJoint& lj : loop_plans_) {
        context = &lj.name;
        model.add_loop_joint(lj);
      }
    } catch (const Error& e) {
      fail(e.what(), context ? std::string(kind) + " " + squote(*context) : "");
    }
    return model;
  }
};

}  // namespace

Model load_urdf_string(const std::string& xml, const UrdfOptions& options, const std::string& source_name) {
  return Loader(std::string_view(xml), options, source_name).run();
}

Model load_urdf_string(const std::string& xml, RootJoint root, const std::string& source_name) {
  UrdfOptions options;
  options.root = root;
  return load_urdf_string(xml, options, source_name);
}

namespace {

const char* file_kind(std::filesystem::file_type t) {
  switch (t) {
    case std::filesystem::file_type::character:
      return "a character device";
    case std::filesystem::file_type::block:
      return "a block device";
    case std::filesystem::file_type::fifo:
      return "a FIFO (named pipe)";
    case std::filesystem::file_type::socket:
      return "a socket";
    default:
      return "not a file of a known kind";
  }
}

}  // namespace

Model load_urdf(const std::string& path, const UrdfOptions& options) {
  namespace fs = std::filesystem;
  // Only regular files: a directory or a device is a mistake, and reading a FIFO or a terminal
  // would wait for input forever. (status() follows symbolic links.)
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) throw ModelError(path + ": no such file");
  if (ec) throw ModelError(path + ": cannot access the file: " + ec.message());
  if (st.type() == fs::file_type::directory) throw ModelError(path + ": is a directory, not a URDF file");
  if (st.type() != fs::file_type::regular)
    throw ModelError(path + ": not a regular file (" + file_kind(st.type()) + "), not a URDF file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > urdf_limits::kMaxBytes)
    throw ModelError(path + ": file of " + std::to_string(size) + " bytes, over the cap of " +
                     std::to_string(urdf_limits::kMaxBytes) + " bytes (" + kLimitsDoc + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path + ": cannot open the file: " + std::strerror(errno));
  // Read at most one byte past the cap (the file may have grown since file_size, and some
  // files, e.g. in /proc, report size 0).
  std::string text(static_cast<size_t>(std::min<std::uintmax_t>(ec ? 0 : size, urdf_limits::kMaxBytes)) + 1, '\0');
  size_t got = 0;
  for (;;) {
    in.read(text.data() + got, static_cast<std::streamsize>(text.size() - got));
    got += static_cast<size_t>(in.gcount());
    if (!in || text.size() > urdf_limits::kMaxBytes) break;  // end of file, error, or over the cap
    text.resize(std::min(2 * text.size(), urdf_limits::kMaxBytes + 1));
  }
  if (in.bad()) throw ModelError(path + ": error while reading the file");
  if (got > urdf_limits::kMaxBytes)
    throw ModelError(path + ": file of more than " + std::to_string(urdf_limits::kMaxBytes) + " bytes, over the cap (" +
                     kLimitsDoc + ")");
  text.resize(got);
  return Loader(std::move(text), options, path).run();
}

Model load_urdf(const std::string& path, RootJoint root) {
  UrdfOptions options;
  options.root = root;
  return load_urdf(path, options);
}

}  // namespace plucker
