// Model <-> text (plucker/io/model_text.hpp). One function per record describes its fields for
// both directions (`fields(io, ...)` with a Writer or a Reader), so the two cannot drift apart.
#include "plucker/io/model_text.hpp"

#include <charconv>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "plucker/errors.hpp"
#include "plucker/model/joints.hpp"
#include "plucker/model/loop_joint.hpp"

namespace plucker {
namespace {

constexpr std::string_view kHeader = "plucker-model 1";

class Writer {
 public:
  static constexpr bool reading = false;
  void record(std::string_view tag) {
    if (!out_.empty()) out_ += '\n';
    out_ += tag;
  }
  void number(double x) {
    // Hexadecimal floating point: exact, and independent of the C locale (unlike printf's %a).
    char buf[40];
    const auto end = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::hex).ptr;
    out_ += ' ';
    out_.append(buf, end);
  }
  void integer(int x) { out_ += ' ' + std::to_string(x); }
  void name(const std::string& s) {  // length-prefixed: any bytes, spaces included
    out_ += ' ' + std::to_string(s.size()) + ':' + s;
  }
  std::string take() { return std::move(out_) + '\n'; }

 private:
  std::string out_;
};

class Reader {
 public:
  static constexpr bool reading = true;
  explicit Reader(std::string_view text) : text_(text) {}

  /// Starts the next record; false at the end of the text.
  bool next_record(std::string& tag) {
    skip_newline();
    if (pos_ >= text_.size()) return false;
    tag = token("a record name");
    return true;
  }
  double number() {
    const std::string t = token("a number");
    double x = 0.0;
    const auto [end, ec] = std::from_chars(t.c_str(), t.c_str() + t.size(), x, std::chars_format::hex);
    if (ec != std::errc() || end != t.c_str() + t.size()) fail("'" + t + "' is not a number");
    return x;
  }
  int integer() {
    const std::string t = token("an integer");
    char* end = nullptr;
    const long x = std::strtol(t.c_str(), &end, 10);
    if (end != t.c_str() + t.size() || x < -1'000'000'000L || x > 1'000'000'000L) fail("'" + t + "' is not an integer");
    return static_cast<int>(x);
  }
  std::string name() {
    const std::string t = token_until(':', "a name (length:bytes)");
    char* end = nullptr;
    const long n = std::strtol(t.c_str(), &end, 10);
    if (end != t.c_str() + t.size() || n < 0 || static_cast<std::size_t>(n) > text_.size() - pos_)
      fail("bad name length '" + t + "'");
    std::string s(text_.substr(pos_, static_cast<std::size_t>(n)));
    for (char c : s) line_ += c == '\n';
    pos_ += static_cast<std::size_t>(n);
    return s;
  }
  void end_record() {
    if (pos_ < text_.size() && text_[pos_] != '\n') fail("unexpected '" + token("") + "' at the end of the record");
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ModelError("model_from_text: line " + std::to_string(line_) + ": " + what);
  }

 private:
  void skip_newline() {
    while (pos_ < text_.size() && text_[pos_] == '\n') ++pos_, ++line_;
  }
  std::string token(const char* expected) {
    if (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != ' ' && text_[pos_] != '\n') ++pos_;
    if (pos_ == start) fail(std::string("expected ") + expected);
    return std::string(text_.substr(start, pos_ - start));
  }
  std::string token_until(char stop, const char* expected) {
    if (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
    const std::size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != stop && text_[pos_] != ' ' && text_[pos_] != '\n') ++pos_;
    if (pos_ == start || pos_ >= text_.size() || text_[pos_] != stop) fail(std::string("expected ") + expected);
    ++pos_;  // the stop character
    return std::string(text_.substr(start, pos_ - 1 - start));
  }
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

// ---- the fields of each record, for both directions ----
void field(Writer& io, double& x) { io.number(x); }
void field(Reader& io, double& x) { x = io.number(); }
void field(Writer& io, int& x) { io.integer(x); }
void field(Reader& io, int& x) { x = io.integer(); }
void field(Writer& io, bool& x) { io.integer(x ? 1 : 0); }
void field(Reader& io, bool& x) { x = io.integer() != 0; }
void field(Writer& io, std::string& s) { io.name(s); }
void field(Reader& io, std::string& s) { s = io.name(); }
template <class Io, class Derived>
void field(Io& io, Eigen::MatrixBase<Derived>& m) {
  for (Eigen::Index c = 0; c < m.cols(); ++c)
    for (Eigen::Index r = 0; r < m.rows(); ++r) field(io, m(r, c));
}
template <class Io>
void field(Io& io, Transform& X) {
  field(io, X.E);
  field(io, X.r);
}
/// A vector whose size is written first.
template <class Io>
void sized(Io& io, VecX& x) {
  int n = static_cast<int>(x.size());
  field(io, n);
  if constexpr (Io::reading) {
    if (n < 0 || n > 1'000'000) io.fail("bad vector size " + std::to_string(n));
    x.resize(n);
  }
  field(io, x);
}

// Each joint kind's parameters (none for the body-axis kinds, the fixed, spherical and free-flyer).
template <class Io, class J>
void joint_params(Io&, J&) {}
template <class Io, class J>
requires(std::is_same_v<J, JointRevolute> || std::is_same_v<J, JointPrismatic> ||
         std::is_same_v<J, JointCylindrical>) void joint_params(Io& io, J& j) {  // an axis only
  field(io, j.axis);
}
template <class Io>
void joint_params(Io& io, JointHelical& j) {
  field(io, j.axis);
  field(io, j.pitch);
}
template <class Io>
void joint_params(Io& io, JointPlanar& j) {
  field(io, j.basis);
}
template <class Io>
void joint_params(Io& io, JointGeneral& j) {
  int d = static_cast<int>(j.subspace.cols());
  field(io, d);
  if constexpr (Io::reading) {
    if (d < 1 || d > 6) io.fail("a general joint has 1 to 6 columns, not " + std::to_string(d));
    j.subspace.resize(6, d);
  }
  field(io, j.subspace);
}

void write_joint(Writer& io, const JointModel& joint) {
  std::visit(
      [&](const auto& j) {
        std::string kind(std::decay_t<decltype(j)>::kind);
        io.name(kind);
        auto copy = j;
        joint_params(io, copy);
      },
      joint);
}
template <std::size_t I = 0>
JointModel read_joint_of_kind(Reader& io, const std::string& kind) {
  if constexpr (I == std::variant_size_v<JointModel>) {
    io.fail("unknown joint kind '" + kind + "'");
  } else {
    using J = std::variant_alternative_t<I, JointModel>;
    if (kind != J::kind) return read_joint_of_kind<I + 1>(io, kind);
    J j;
    joint_params(io, j);
    return j;
  }
}

template <class Io>
void limits(Io& io, JointLimits& l) {
  sized(io, l.lower);
  sized(io, l.upper);
  sized(io, l.velocity);
  sized(io, l.effort);
}
template <class Io>
void inertia(Io& io, RigidBodyInertia& I) {
  double m = I.mass();
  Vec3 h = I.first_moment();
  Mat3 Ibar = I.inertia_origin();
  field(io, m);
  field(io, h);
  field(io, Ibar);
  if constexpr (Io::reading) I = RigidBodyInertia::from_parameters(m, h, Ibar);
}
template <class Io>
void frame(Io& io, Frame& f) {
  field(io, f.name);
  field(io, f.body);
  field(io, f.X_body);
}
template <class Io>
void mimic(Io& io, MimicRelation& m) {
  field(io, m.follower);
  field(io, m.leader);
  field(io, m.multiplier);
  field(io, m.offset);
}
template <class Io>
void loop_joint(Io& io, LoopJoint& j) {
  field(io, j.name);
  int type = static_cast<int>(j.type);
  field(io, type);
  if constexpr (Io::reading) {
    if (type < 0 || type > static_cast<int>(LoopJointType::Fixed))
      io.fail("bad loop joint type " + std::to_string(type));
    j.type = static_cast<LoopJointType>(type);
  }
  field(io, j.predecessor);
  field(io, j.successor);
  field(io, j.X_predecessor);
  field(io, j.X_successor);
  field(io, j.axis);
  field(io, j.actuated);
}

}  // namespace

std::string model_to_text(const Model& model) {
  Writer io;
  io.record(kHeader);
  io.record("name");
  std::string s = model.name();
  field(io, s);
  io.record("base");
  s = model.body_name(0);
  field(io, s);
  io.record("gravity");
  Vec3 g = model.gravity();
  field(io, g);
  for (int i = 1; i < model.nbodies(); ++i) {
    io.record("body");
    int parent = model.parent(i);
    std::string body = model.body_name(i), joint = model.joint_name(i);
    field(io, parent);
    field(io, body);
    field(io, joint);
    write_joint(io, model.joint(i));
    Transform X = model.X_tree(i);
    field(io, X);
    RigidBodyInertia I = model.inertia(i);
    inertia(io, I);
    JointLimits l = model.limits(i);
    limits(io, l);
  }
  for (Frame f : model.frames()) {
    io.record("frame");
    frame(io, f);
  }
  for (MimicRelation m : model.mimics()) {
    io.record("mimic");
    mimic(io, m);
  }
  for (LoopJoint j : model.loop_joints()) {
    io.record("loop");
    loop_joint(io, j);
  }
  io.record("end");
  return io.take();
}

Model model_from_text(std::string_view text) {
  Reader io(text);
  std::string tag;
  if (!io.next_record(tag) || tag != "plucker-model" || io.integer() != 1)
    io.fail("not a plucker model text (expected the header '" + std::string(kHeader) + "')");
  io.end_record();
  auto expect = [&](const char* want) {
    if (!io.next_record(tag) || tag != want) io.fail(std::string("expected the record '") + want + "'");
  };
  std::string name, base;
  Vec3 g;
  expect("name");
  field(io, name);
  io.end_record();
  expect("base");
  field(io, base);
  io.end_record();
  expect("gravity");
  field(io, g);
  io.end_record();
  Model model(base);
  model.set_name(name);
  model.set_gravity(g);
  for (;;) {
    if (!io.next_record(tag)) io.fail("the text ends before its 'end' record (truncated?)");
    if (tag == "end") break;
    if (tag == "body") {
      int parent = 0;
      std::string body, joint_name;
      field(io, parent);
      field(io, body);
      field(io, joint_name);
      const JointModel joint = read_joint_of_kind(io, io.name());
      Transform X;
      RigidBodyInertia I;
      JointLimits l;
      field(io, X);
      inertia(io, I);
      limits(io, l);
      model.add_body(parent, joint, X, I, body, joint_name, l);
    } else if (tag == "frame") {
      Frame f;
      frame(io, f);
      model.add_frame(f.name, f.body, f.X_body);
    } else if (tag == "mimic") {
      MimicRelation m;
      mimic(io, m);
      model.add_mimic(m);
    } else if (tag == "loop") {
      LoopJoint j;
      loop_joint(io, j);
      model.add_loop_joint(j);
    } else {
      io.fail("unknown record '" + tag + "'");
    }
    io.end_record();
  }
  io.end_record();
  if (io.next_record(tag)) io.fail("text after the 'end' record");
  return model;
}

}  // namespace plucker
