// Model construction, validation, lookup, configuration space, summary.
#include "plucker/model/model.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <numbers>
#include <sstream>

#include "base/text.hpp"
#include "plucker/errors.hpp"
#include "plucker/model/physical_range.hpp"

namespace plucker {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether coordinate k of joint j is an angle (sampling fallback pi) or a length (fallback 1).
double sampling_fallback(const JointModel& j) {
  return std::visit(
      [](const auto& jj) -> double {
        using J = std::decay_t<decltype(jj)>;
        if constexpr (std::is_same_v<J, JointRevoluteX> || std::is_same_v<J, JointRevoluteY> ||
                      std::is_same_v<J, JointRevoluteZ> || std::is_same_v<J, JointRevolute> ||
                      std::is_same_v<J, JointHelical> || std::is_same_v<J, JointCylindrical>)
          return std::numbers::pi;
        else
          return 1.0;
      },
      j);
}
using text::printable;
std::string format_number(double x) { return text::number(x); }
namespace range = physical_range;

/// Names are what errors quote and what Python shows: non-empty, valid UTF-8. `what` is the
/// caller and the kind of name ("add_body: body name").
void check_name(const std::string& name, const std::string& fn, const std::string& kind) {
  if (name.empty()) throw ModelError(fn + ": empty " + kind);
  if (!text::valid_utf8(name)) throw ModelError(fn + ": " + kind + " '" + printable(name) + "' is not valid UTF-8");
}

/// A placement (X_tree, a frame, a loop-joint frame): finite, orthonormal, within the range.
void check_placement(const Transform& X, const std::string& what) {
  if (!X.E.allFinite() || !X.r.allFinite()) throw ModelError(what + ": non-finite value");
  if ((X.E * X.E.transpose() - Mat3::Identity()).cwiseAbs().maxCoeff() > 1e-9)
    throw ModelError(what + ": the rotation is not orthonormal");
  if (!(X.r.norm() <= range::kMaxLength))
    throw ModelError(what + ": offset of " + format_number(X.r.norm()) + " m is beyond the physical range (" +
                     format_number(range::kMaxLength) + " m)");
}

/// A body's inertia: finite, mass >= 0, within the physical range (docs/urdf.md).
void check_body_inertia(const RigidBodyInertia& I, const std::string& where) {
  if (!std::isfinite(I.mass()) || !I.first_moment().allFinite() || !I.inertia_origin().allFinite())
    throw ModelError(where + "non-finite inertia");
  if (I.mass() < 0.0) throw ModelError(where + "negative mass " + format_number(I.mass()));
  if (!(I.mass() <= range::kMaxMass))
    throw ModelError(where + "mass " + format_number(I.mass()) + " kg is beyond the physical range (" +
                     format_number(range::kMaxMass) + " kg)");
  if (!(I.com().norm() <= range::kMaxLength))
    throw ModelError(where + "centre of mass " + format_number(I.com().norm()) +
                     " m from the body origin is beyond the physical range (" + format_number(range::kMaxLength) +
                     " m)");
  const double largest = I.inertia_com().cwiseAbs().maxCoeff();
  if (!(largest <= range::kMaxInertia))
    throw ModelError(where + "rotational inertia " + format_number(largest) + " kg m^2 is beyond the physical range (" +
                     format_number(range::kMaxInertia) + " kg m^2)");
}

/// A joint built by hand (not through the make_* factories): finite unit axes, an orthonormal
/// planar basis, a finite general subspace.
void check_joint(const JointModel& joint, const std::string& where) {
  auto unit = [&](const Vec3& a, const char* what) {
    if (!a.allFinite() || std::abs(a.norm() - 1.0) > 1e-9)
      throw ModelError(where + what + " (" + format_number(a.x()) + ", " + format_number(a.y()) + ", " +
                       format_number(a.z()) + ") is not a finite unit vector");
  };
  std::visit(
      [&](const auto& j) {
        using J = std::decay_t<decltype(j)>;
        if constexpr (std::is_same_v<J, JointRevolute> || std::is_same_v<J, JointPrismatic> ||
                      std::is_same_v<J, JointHelical> || std::is_same_v<J, JointCylindrical>) {
          unit(j.axis, "joint axis");
          if constexpr (std::is_same_v<J, JointHelical>)
            if (!std::isfinite(j.pitch)) throw ModelError(where + "non-finite helical pitch");
        } else if constexpr (std::is_same_v<J, JointPlanar>) {
          if (!j.basis.allFinite() || (j.basis.transpose() * j.basis - Mat3::Identity()).cwiseAbs().maxCoeff() > 1e-9)
            throw ModelError(where + "planar joint basis is not orthonormal");
        } else if constexpr (std::is_same_v<J, JointGeneral>) {
          if (!j.subspace.allFinite() || j.subspace.cols() < 1 || j.subspace.cols() > 6)
            throw ModelError(where + "general joint subspace must be finite with 1 to 6 columns");
        }
      },
      joint);
}

bool has_unit_quaternion(const JointModel& j, int& offset) {
  if (std::holds_alternative<JointSpherical>(j)) return offset = 0, true;
  if (std::holds_alternative<JointFreeFlyer>(j)) return offset = 3, true;
  return false;
}
}  // namespace

Model::Model(const std::string& base_name) {
  check_name(base_name, "Model", "base body name");
  parent_.push_back(-1);
  depth_.push_back(0);
  children_.emplace_back();
  open_path_.push_back(0);
  on_open_path_.push_back(1);
  subtree_end_.push_back(0);
  X_tree_.emplace_back();
  X_tree_translation_.push_back(1);
  inertia_.emplace_back();
  joint_.emplace_back(JointFixed{});
  idx_q_.push_back(0);
  idx_v_.push_back(0);
  nq_j_.push_back(0);
  nv_j_.push_back(0);
  limits_.emplace_back();
  body_names_.push_back(base_name);
  joint_names_.emplace_back();
  body_index_[base_name] = 0;
}

int Model::add_body(int parent, const JointModel& joint, const Transform& X_tree, const RigidBodyInertia& inertia,
                    const std::string& body_name, const std::string& joint_name, const JointLimits& limits) {
  const int i = nbodies();
  if (parent < 0 || parent >= i)
    throw ModelError("add_body '" + printable(body_name) + "': unknown parent body index " + std::to_string(parent));
  check_name(body_name, "add_body", "body name");
  check_name(joint_name, "add_body '" + body_name + "'", "joint name");
  if (body_index_.count(body_name)) throw ModelError("add_body: duplicate body name '" + body_name + "'");
  if (joint_index_.count(joint_name)) throw ModelError("add_body: duplicate joint name '" + joint_name + "'");
  const std::string where = "add_body '" + body_name + "' (joint '" + joint_name + "'): ";
  check_placement(X_tree, where + "joint placement X_tree");
  check_body_inertia(inertia, where);
  check_joint(joint, where);

  const int nq = plucker::joint_nq(joint), nv = plucker::joint_nv(joint);
  JointLimits lim = limits;
  auto fill = [&](VecX& x, int n, double value, const char* what) {
    if (x.size() == 0)
      x = VecX::Constant(n, value);
    else if (x.size() != n)
      throw ModelError(where + what + " limit has size " + std::to_string(x.size()) + ", expected " +
                       std::to_string(n));
  };
  fill(lim.lower, nq, -kInf, "lower");
  fill(lim.upper, nq, kInf, "upper");
  fill(lim.velocity, nv, kInf, "velocity");
  fill(lim.effort, nv, kInf, "effort");
  for (int k = 0; k < nq; ++k)
    if (std::isnan(lim.lower[k]) || std::isnan(lim.upper[k]) || lim.lower[k] > lim.upper[k])
      throw ModelError(where + "lower limit > upper limit (or NaN) at coordinate " + std::to_string(k));
  for (int k = 0; k < nv; ++k)
    if (!(lim.velocity[k] >= 0.0) || !(lim.effort[k] >= 0.0))
      throw ModelError(where + "velocity and effort limits must be >= 0 (+inf: none), got " +
                       format_number(lim.velocity[k]) + " and " + format_number(lim.effort[k]) + " at coordinate " +
                       std::to_string(k));

  // Topology, O(1) amortised: the depth, and the depth-first bookkeeping. The new body keeps the
  // numbering depth-first when its parent is on the open path (the root-to-last-body path);
  // every body popped off the path has its whole subtree before index i.
  parent_.push_back(parent);
  depth_.push_back(depth_[parent] + 1);
  children_.emplace_back();
  children_[parent].push_back(i);
  subtree_end_.push_back(0);
  on_open_path_.push_back(0);
  if (contiguous_subtrees_) {
    if (on_open_path_[parent]) {
      while (open_path_.back() != parent) {
        subtree_end_[open_path_.back()] = i;
        on_open_path_[open_path_.back()] = 0;
        open_path_.pop_back();
      }
      open_path_.push_back(i);
      on_open_path_[i] = 1;
    } else {
      contiguous_subtrees_ = false;  // no longer depth-first: subtree_end() is N + 1 from now on
      open_path_.clear();
      open_path_.shrink_to_fit();
    }
  }
  X_tree_.push_back(X_tree);
  X_tree_translation_.push_back(X_tree.E == Mat3::Identity() ? 1 : 0);
  inertia_.push_back(inertia);
  joint_.push_back(joint);
  idx_q_.push_back(nq_);
  idx_v_.push_back(nv_);
  nq_j_.push_back(nq);
  nv_j_.push_back(nv);
  for (int k = 0; k < nv; ++k) joint_of_v_.push_back(i);
  int quaternion_offset = 0;
  if (has_unit_quaternion(joint, quaternion_offset)) unit_blocks_.push_back({nq_ + quaternion_offset, 4, i});
  if (std::holds_alternative<JointPlanar>(joint)) unit_blocks_.push_back({nq_ + 2, 2, i});
  nq_ += nq;
  nv_ += nv;
  lower_.insert(lower_.end(), lim.lower.data(), lim.lower.data() + nq);
  upper_.insert(upper_.end(), lim.upper.data(), lim.upper.data() + nq);
  velocity_limit_.insert(velocity_limit_.end(), lim.velocity.data(), lim.velocity.data() + nv);
  effort_limit_.insert(effort_limit_.end(), lim.effort.data(), lim.effort.data() + nv);
  limits_.push_back(std::move(lim));
  body_names_.push_back(body_name);
  joint_names_.push_back(joint_name);
  body_index_[body_name] = i;
  joint_index_[joint_name] = i;
  return i;
}

std::vector<int> Model::subtree(int i) const {
  std::vector<int> out;
  if (contiguous_subtrees_) {
    for (int j = i; j < subtree_end(i); ++j) out.push_back(j);
    return out;
  }
  std::vector<char> inside(parent_.size(), 0);  // parent(j) < j: one ascending pass
  inside[i] = 1;
  out.push_back(i);
  for (int j = i + 1; j < nbodies(); ++j)
    if (inside[parent_[j]]) inside[j] = 1, out.push_back(j);
  return out;
}

std::vector<int> Model::support(int i) const {
  std::vector<int> out(static_cast<std::size_t>(depth_[i]));
  for (int j = i, k = depth_[i] - 1; j > 0; j = parent_[j], --k) out[k] = j;
  return out;
}

int Model::add_frame(const std::string& name, int body, const Transform& X_body) {
  check_name(name, "add_frame", "frame name");
  if (body < 0 || body >= nbodies()) throw ModelError("add_frame '" + name + "': unknown body " + std::to_string(body));
  if (frame_index_.count(name)) throw ModelError("add_frame: duplicate frame name '" + name + "'");
  check_placement(X_body, "add_frame '" + name + "': placement");
  frames_.push_back({name, body, X_body});
  frame_index_[name] = static_cast<int>(frames_.size()) - 1;
  return frame_index_[name];
}

void Model::add_inertia(int body, const RigidBodyInertia& inertia) {
  if (body < 0 || body >= nbodies()) throw ModelError("add_inertia: unknown body " + std::to_string(body));
  const std::string where = "add_inertia on body '" + body_names_[body] + "': ";
  check_body_inertia(inertia, where);
  check_body_inertia(inertia_[body] + inertia, where + "the sum: ");
  inertia_[body] += inertia;
}

void Model::add_mimic(const MimicRelation& m) {
  if (m.follower <= 0 || m.follower >= nbodies() || m.leader <= 0 || m.leader >= nbodies())
    throw ModelError("add_mimic: unknown joint index");
  const std::string& name = joint_names_[m.follower];
  if (m.follower == m.leader) throw ModelError("add_mimic: joint '" + name + "' mimics itself");
  if (nv_j_[m.follower] != 1 || nv_j_[m.leader] != 1)
    throw ModelError("add_mimic: joint '" + name + "' and its leader '" + joint_names_[m.leader] +
                     "' must both have one DoF");
  if (!(std::abs(m.multiplier) <= range::kMaxMimicMultiplier))
    throw ModelError("add_mimic: joint '" + name + "': multiplier " + format_number(m.multiplier) +
                     " is beyond the physical range (|multiplier| <= " + format_number(range::kMaxMimicMultiplier) +
                     ")");
  if (!(std::abs(m.offset) <= range::kMaxLength))
    throw ModelError("add_mimic: joint '" + name + "': offset " + format_number(m.offset) +
                     " is beyond the physical range (|offset| <= " + format_number(range::kMaxLength) + ")");
  mimic_leader_.resize(parent_.size(), -1);
  if (mimic_leader_[m.follower] >= 0)
    throw ModelError("add_mimic: joint '" + name + "' already mimics joint '" +
                     joint_names_[mimic_leader_[m.follower]] + "'");
  // Every follower has one leader, so the relations form a forest of in-trees; a new one closes a
  // cycle exactly when its leader is already connected to its follower (union-find, O(N) in all).
  for (std::size_t k = mimic_set_.size(); k < parent_.size(); ++k) mimic_set_.push_back(static_cast<int>(k));
  auto find = [this](int x) {
    while (mimic_set_[x] != x) x = mimic_set_[x] = mimic_set_[mimic_set_[x]];
    return x;
  };
  const int a = find(m.follower), b = find(m.leader);
  if (a == b)
    throw ModelError("add_mimic: joint '" + name + "' mimicking joint '" + joint_names_[m.leader] +
                     "' closes a cycle of mimic relations");
  mimic_set_[a] = b;
  mimic_leader_[m.follower] = m.leader;
  mimics_.push_back(m);
  ++num_constraints_;
}

int Model::add_loop_joint(const LoopJoint& joint) {
  check_name(joint.name, "add_loop_joint", "name");
  const std::string where = "add_loop_joint '" + joint.name + "': ";
  if (loop_joint_index_.count(joint.name))
    throw ModelError("add_loop_joint: duplicate loop joint name '" + joint.name + "'");
  if (joint_index_.count(joint.name)) throw ModelError(where + "a tree joint already has this name");
  for (int b : {joint.predecessor, joint.successor})
    if (b < 0 || b >= nbodies()) throw ModelError(where + "unknown body " + std::to_string(b));
  if (joint.predecessor == joint.successor)
    throw ModelError(where + "predecessor and successor are the same body '" + body_names_[joint.successor] + "'");
  for (const Transform* X : {&joint.X_predecessor, &joint.X_successor}) {
    if (!X->E.allFinite() || !X->r.allFinite() || !X->E.isUnitary(1e-6) || !(X->E.determinant() > 0.0))
      throw ModelError(where + "joint frame is not a finite rigid transform");
    if (!(X->r.norm() <= range::kMaxLength))
      throw ModelError(where + "joint frame offset of " + format_number(X->r.norm()) +
                       " m is beyond the physical range (" + format_number(range::kMaxLength) + " m)");
  }
  // Nearly-rotations (e.g. from a few printed digits) are projected onto SO(3) and axes
  // normalised; an exact rotation or unit axis is kept to the bit, so that a model read back
  // from its text (model_text.hpp) is the same model.
  auto rotation = [](const Mat3& E) -> Mat3 {
    if ((E.transpose() * E - Mat3::Identity()).cwiseAbs().maxCoeff() <= 1e-14) return E;
    return Eigen::Quaterniond(E).normalized().toRotationMatrix();
  };
  LoopJoint lj = joint;
  lj.X_predecessor.E = rotation(joint.X_predecessor.E);
  lj.X_successor.E = rotation(joint.X_successor.E);
  const bool has_axis = joint.type != LoopJointType::Spherical && joint.type != LoopJointType::Fixed;
  if (has_axis) {
    const double norm = joint.axis.norm();
    if (!std::isfinite(norm) || norm < 1e-9) throw ModelError(where + "zero or non-finite axis");
    if (std::abs(norm - 1.0) > 1e-15) lj.axis = joint.axis / norm;
  }
  loop_joint_index_.emplace(lj.name, static_cast<int>(loop_joints_.size()));
  loop_joints_.push_back(lj);
  num_constraints_ += loop_joint_constraints(lj.type);
  if (lj.actuated) num_loop_actuators_ += loop_joint_dof(lj.type);
  return static_cast<int>(loop_joints_.size()) - 1;
}

std::vector<std::string> Model::loop_joint_names() const {
  std::vector<std::string> out;
  for (const LoopJoint& j : loop_joints_) out.push_back(j.name);
  return out;
}

int Model::loop_joint_index(const std::string& name) const {
  if (const auto it = loop_joint_index_.find(name); it != loop_joint_index_.end()) return it->second;
  throw InvalidArgument("unknown loop joint '" + name + "'");
}

std::vector<std::string> Model::movable_joint_names() const {
  std::vector<std::string> out;
  for (int i = 1; i < nbodies(); ++i)
    if (nv_j_[i] > 0) out.push_back(joint_names_[i]);
  return out;
}

int Model::body_index(const std::string& name) const {
  auto it = body_index_.find(name);
  if (it == body_index_.end()) throw InvalidArgument("unknown body '" + name + "'");
  return it->second;
}
int Model::joint_index(const std::string& name) const {
  auto it = joint_index_.find(name);
  if (it == joint_index_.end()) throw InvalidArgument("unknown joint '" + name + "'");
  return it->second;
}
int Model::frame_index(const std::string& name) const {
  auto it = frame_index_.find(name);
  if (it == frame_index_.end()) throw InvalidArgument("unknown frame '" + name + "'");
  return it->second;
}

void Model::set_name(const std::string& name) {
  if (!text::valid_utf8(name)) throw ModelError("set_name: '" + printable(name) + "' is not valid UTF-8");
  name_ = name;
}

void Model::set_gravity(const Vec3& g) {
  if (!g.allFinite()) throw InvalidArgument("set_gravity: non-finite gravity");
  gravity_ = g;
}

double Model::total_mass() const {
  double m = 0.0;
  for (int i = 1; i < nbodies(); ++i) m += inertia_[i].mass();
  return m;
}

bool Model::has_floating_base() const {
  return nbodies() > 1 && parent_[1] == 0 && std::holds_alternative<JointFreeFlyer>(joint_[1]);
}

void Model::check_configuration(const Eigen::Ref<const VecX>& q, const char* what) const {
  if (q.size() != nq_) {
    std::ostringstream m;
    m << what << " has size " << q.size() << ", expected nq = " << nq_;
    throw InvalidArgument(m.str());
  }
  if (!q.allFinite()) {  // slow path only to name the joint
    for (int i = 1; i < nbodies(); ++i)
      for (int k = 0; k < nq_j_[i]; ++k)
        if (!std::isfinite(q[idx_q_[i] + k]))
          throw InvalidArgument(std::string(what) + " is not finite at joint '" + joint_names_[i] + "'");
  }
  // Quaternions and planar (cos, sin) pairs must be unit: X_J is not a rotation otherwise.
  for (const UnitBlock& u : unit_blocks_) {
    const double n2 = q.segment(u.q_index, u.size).squaredNorm();
    if (std::abs(n2 - 1.0) > 2e-6) {  // |n^2 - 1| ~ 2 |n - 1|: a 1e-6 tolerance on the norm
      std::ostringstream m;
      m << what << ": " << (u.size == 4 ? "quaternion" : "(cos, sin) pair") << " of joint '" << joint_names_[u.joint]
        << "' is not unit (norm " << format_number(std::sqrt(n2)) << "); normalize(model, q) first";
      throw InvalidArgument(m.str());
    }
  }
}

void Model::check_tangent(const Eigen::Ref<const VecX>& v, const char* what) const {
  if (v.size() != nv_) {
    std::ostringstream m;
    m << what << " has size " << v.size() << ", expected nv = " << nv_;
    throw InvalidArgument(m.str());
  }
  if (!v.allFinite()) {
    for (int k = 0; k < nv_; ++k)
      if (!std::isfinite(v[k]))
        throw InvalidArgument(std::string(what) + " is not finite at joint '" + joint_names_[joint_of_v_[k]] + "'");
  }
}

// ---------------------------------------------------------------- configuration space
VecX neutral(const Model& model) {
  VecX q(model.nq());
  for (int i = 1; i < model.nbodies(); ++i)
    std::visit([&](const auto& j) { j.neutral(q.data() + model.idx_q(i)); }, model.joint(i));
  return q;
}

VecX random_configuration(const Model& model, std::mt19937_64& rng) {
  VecX q(model.nq());
  for (int i = 1; i < model.nbodies(); ++i) {
    const JointLimits& lim = model.limits(i);
    const double fallback = sampling_fallback(model.joint(i));
    std::visit(
        [&](const auto& j) { j.random(rng, lim.lower.data(), lim.upper.data(), fallback, q.data() + model.idx_q(i)); },
        model.joint(i));
  }
  return q;
}

VecX integrate(const Model& model, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v, double dt) {
  model.check_configuration(q, "integrate: q");
  model.check_tangent(v, "integrate: v");
  if (!std::isfinite(dt)) throw InvalidArgument("integrate: non-finite dt");
  VecX out(model.nq());
  for (int i = 1; i < model.nbodies(); ++i)
    std::visit(
        [&](const auto& j) {
          j.integrate(q.data() + model.idx_q(i), v.data() + model.idx_v(i), dt, out.data() + model.idx_q(i));
        },
        model.joint(i));
  return out;
}

VecX difference(const Model& model, const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& q1) {
  model.check_configuration(q0, "difference: q0");
  model.check_configuration(q1, "difference: q1");
  VecX v(model.nv());
  for (int i = 1; i < model.nbodies(); ++i)
    std::visit(
        [&](const auto& j) {
          j.difference(q0.data() + model.idx_q(i), q1.data() + model.idx_q(i), v.data() + model.idx_v(i));
        },
        model.joint(i));
  return v;
}

void normalize(const Model& model, Eigen::Ref<VecX> q) {
  if (q.size() != model.nq())
    throw InvalidArgument("normalize: q has size " + std::to_string(q.size()) +
                          ", expected nq = " + std::to_string(model.nq()));
  for (int i = 1; i < model.nbodies(); ++i)
    std::visit([&](const auto& j) { j.normalize(q.data() + model.idx_q(i)); }, model.joint(i));
}

std::string summary(const Model& model) {
  std::ostringstream s;
  int movable = 0;
  for (int i = 1; i < model.nbodies(); ++i) movable += model.joint_nv(i) > 0;
  s << "Model '" << model.name() << "': " << model.nbodies() - 1 << " moving bodies (+ base '" << model.body_name(0)
    << "'), " << movable << " movable joints, nq = " << model.nq() << ", nv = " << model.nv()
    << ", total mass = " << std::setprecision(6) << model.total_mass() << " kg";
  if (!model.frames().empty()) s << ", " << model.frames().size() << " frames";
  if (!model.mimics().empty())
    s << ", " << model.mimics().size() << " mimic relations (not enforced by tree algorithms)";
  s << "\n";
  s << "  " << std::left << std::setw(4) << "#" << std::setw(28) << "body" << std::setw(28) << "joint" << std::setw(14)
    << "kind" << std::setw(8) << "parent" << std::setw(10) << "mass"
    << "q/v index\n";
  for (int i = 1; i < model.nbodies(); ++i) {
    s << "  " << std::left << std::setw(4) << i << std::setw(28) << model.body_name(i) << std::setw(28)
      << model.joint_name(i) << std::setw(14) << joint_kind(model.joint(i)) << std::setw(8) << model.parent(i)
      << std::setw(10) << std::setprecision(4) << model.inertia(i).mass() << model.idx_q(i) << "/" << model.idx_v(i)
      << "\n";
  }
  if (!model.loop_joints().empty()) {
    s << "  loop joints (enforced by the constrained functions only):\n";
    for (const LoopJoint& lj : model.loop_joints())
      s << "    " << lj.name << ": " << to_string(lj.type) << ", '" << model.body_name(lj.predecessor) << "' -> '"
        << model.body_name(lj.successor) << "', " << 6 - loop_joint_dof(lj.type) << " constraint rows"
        << (lj.actuated ? ", actuated" : "") << "\n";
  }
  if (!model.mimics().empty()) {
    s << "  mimic relations (enforced by the constrained functions only):\n";
    for (const MimicRelation& mr : model.mimics())
      s << "    " << model.joint_name(mr.follower) << " = " << std::setprecision(6) << mr.multiplier << " * "
        << model.joint_name(mr.leader) << " + " << mr.offset << "\n";
  }
  return s.str();
}

}  // namespace plucker
