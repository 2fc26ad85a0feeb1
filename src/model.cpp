// Model construction, validation, lookup, configuration space, summary.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <numbers>
#include <sstream>

#include "plucker/errors.hpp"
#include "plucker/model/model.hpp"

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
bool has_unit_quaternion(const JointModel& j, int& offset) {
  if (std::holds_alternative<JointSpherical>(j)) return offset = 0, true;
  if (std::holds_alternative<JointFreeFlyer>(j)) return offset = 3, true;
  return false;
}
}  // namespace

Model::Model(std::string base_name) {
  parent_.push_back(-1);
  children_.emplace_back();
  subtree_.push_back({0});
  support_.emplace_back();
  X_tree_.emplace_back();
  X_tree_translation_.push_back(1);
  inertia_.emplace_back();
  joint_.emplace_back(JointFixed{});
  idx_q_.push_back(0);
  idx_v_.push_back(0);
  nq_j_.push_back(0);
  nv_j_.push_back(0);
  limits_.emplace_back();
  subtree_v_end_.push_back(0);
  subtree_nv_.push_back(0);
  body_names_.push_back(base_name);
  joint_names_.push_back("");
  body_index_[base_name] = 0;
}

int Model::add_body(int parent, const JointModel& joint, const Transform& X_tree, const RigidBodyInertia& inertia,
                    const std::string& body_name, const std::string& joint_name, const JointLimits& limits) {
  const int i = nbodies();
  if (parent < 0 || parent >= i)
    throw ModelError("add_body '" + body_name + "': unknown parent body index " + std::to_string(parent));
  if (body_name.empty()) throw ModelError("add_body: empty body name");
  if (joint_name.empty()) throw ModelError("add_body '" + body_name + "': empty joint name");
  if (body_index_.count(body_name)) throw ModelError("add_body: duplicate body name '" + body_name + "'");
  if (joint_index_.count(joint_name)) throw ModelError("add_body: duplicate joint name '" + joint_name + "'");
  if (!X_tree.E.allFinite() || !X_tree.r.allFinite())
    throw ModelError("add_body '" + body_name + "': non-finite joint placement (joint '" + joint_name + "')");
  if ((X_tree.E * X_tree.E.transpose() - Mat3::Identity()).cwiseAbs().maxCoeff() > 1e-9)
    throw ModelError("add_body '" + body_name + "': joint placement rotation is not orthonormal (joint '" +
                     joint_name + "')");
  if (!inertia.matrix().allFinite()) throw ModelError("add_body '" + body_name + "': non-finite inertia");
  if (inertia.mass() < 0.0) throw ModelError("add_body '" + body_name + "': negative mass");

  const int nq = plucker::joint_nq(joint), nv = plucker::joint_nv(joint);
  JointLimits lim = limits;
  auto fill = [&](VecX& x, int n, double value, const char* what) {
    if (x.size() == 0) x = VecX::Constant(n, value);
    else if (x.size() != n)
      throw ModelError("add_body '" + body_name + "': joint '" + joint_name + "' " + what + " limit has size " +
                       std::to_string(x.size()) + ", expected " + std::to_string(n));
  };
  fill(lim.lower, nq, -kInf, "lower");
  fill(lim.upper, nq, kInf, "upper");
  fill(lim.velocity, nv, kInf, "velocity");
  fill(lim.effort, nv, kInf, "effort");
  for (int k = 0; k < nq; ++k)
    if (std::isnan(lim.lower[k]) || std::isnan(lim.upper[k]) || lim.lower[k] > lim.upper[k])
      throw ModelError("add_body '" + body_name + "': joint '" + joint_name + "' has lower limit > upper limit");

  parent_.push_back(parent);
  children_.emplace_back();
  children_[parent].push_back(i);
  subtree_.push_back({i});
  for (int a = parent; a > 0; a = parent_[a]) subtree_[a].push_back(i);
  subtree_[0].push_back(i);
  support_.push_back(support_[parent]);
  support_.back().push_back(i);
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
  subtree_v_end_.push_back(nv_ + nv);
  subtree_nv_.push_back(nv);
  for (int a = parent; a >= 0; a = parent_[a]) {
    subtree_v_end_[a] = std::max(subtree_v_end_[a], nv_ + nv);
    subtree_nv_[a] += nv;
    if (a > 0 && subtree_v_end_[a] - idx_v_[a] != subtree_nv_[a]) contiguous_subtrees_ = false;
  }
  nq_ += nq;
  nv_ += nv;
  auto append = [](VecX& all, const VecX& x) {
    VecX out(all.size() + x.size());
    out << all, x;
    all = out;
  };
  append(lower_, lim.lower);
  append(upper_, lim.upper);
  append(velocity_limit_, lim.velocity);
  append(effort_limit_, lim.effort);
  limits_.push_back(std::move(lim));
  body_names_.push_back(body_name);
  joint_names_.push_back(joint_name);
  body_index_[body_name] = i;
  joint_index_[joint_name] = i;
  return i;
}

int Model::add_frame(const std::string& name, int body, const Transform& X_body) {
  if (body < 0 || body >= nbodies()) throw ModelError("add_frame '" + name + "': unknown body " + std::to_string(body));
  if (frame_index_.count(name)) throw ModelError("add_frame: duplicate frame name '" + name + "'");
  frames_.push_back({name, body, X_body});
  frame_index_[name] = static_cast<int>(frames_.size()) - 1;
  return frame_index_[name];
}

void Model::add_inertia(int body, const RigidBodyInertia& inertia) {
  if (body < 0 || body >= nbodies()) throw ModelError("add_inertia: unknown body " + std::to_string(body));
  inertia_[body] += inertia;
}

void Model::add_mimic(const MimicRelation& m) {
  if (m.follower <= 0 || m.follower >= nbodies() || m.leader <= 0 || m.leader >= nbodies())
    throw ModelError("add_mimic: unknown joint index");
  if (nv_j_[m.follower] != 1 || nv_j_[m.leader] != 1)
    throw ModelError("add_mimic: joint '" + joint_names_[m.follower] + "' and its leader '" +
                     joint_names_[m.leader] + "' must both have one DoF");
  if (!std::isfinite(m.multiplier) || !std::isfinite(m.offset))
    throw ModelError("add_mimic: joint '" + joint_names_[m.follower] + "': non-finite multiplier or offset");
  mimics_.push_back(m);
  ++num_constraints_;
}

int Model::add_loop_joint(const LoopJoint& joint) {
  const std::string where = "add_loop_joint '" + joint.name + "': ";
  if (joint.name.empty()) throw ModelError("add_loop_joint: empty name");
  for (const LoopJoint& other : loop_joints_)
    if (other.name == joint.name) throw ModelError("add_loop_joint: duplicate loop joint name '" + joint.name + "'");
  if (joint_index_.count(joint.name))
    throw ModelError(where + "a tree joint already has this name");
  for (int b : {joint.predecessor, joint.successor})
    if (b < 0 || b >= nbodies()) throw ModelError(where + "unknown body " + std::to_string(b));
  if (joint.predecessor == joint.successor)
    throw ModelError(where + "predecessor and successor are the same body '" + body_names_[joint.successor] + "'");
  for (const Transform* X : {&joint.X_predecessor, &joint.X_successor})
    if (!X->E.allFinite() || !X->r.allFinite() || !X->E.isUnitary(1e-6))
      throw ModelError(where + "joint frame is not a finite rigid transform");
  LoopJoint lj = joint;
  lj.X_predecessor.E = Eigen::Quaterniond(joint.X_predecessor.E).normalized().toRotationMatrix();
  lj.X_successor.E = Eigen::Quaterniond(joint.X_successor.E).normalized().toRotationMatrix();
  const bool has_axis = joint.type != LoopJointType::Spherical && joint.type != LoopJointType::Fixed;
  if (has_axis) {
    const double norm = joint.axis.norm();
    if (!std::isfinite(norm) || norm < 1e-9) throw ModelError(where + "zero or non-finite axis");
    lj.axis = joint.axis / norm;
  }
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
  for (size_t k = 0; k < loop_joints_.size(); ++k)
    if (loop_joints_[k].name == name) return static_cast<int>(k);
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
        << "' is not unit (norm " << std::sqrt(n2) << "); normalize(model, q) first";
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
    std::visit([&](const auto& j) { j.random(rng, lim.lower.data(), lim.upper.data(), fallback, q.data() + model.idx_q(i)); },
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
    std::visit([&](const auto& j) {
      j.integrate(q.data() + model.idx_q(i), v.data() + model.idx_v(i), dt, out.data() + model.idx_q(i));
    }, model.joint(i));
  return out;
}

VecX difference(const Model& model, const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& q1) {
  model.check_configuration(q0, "difference: q0");
  model.check_configuration(q1, "difference: q1");
  VecX v(model.nv());
  for (int i = 1; i < model.nbodies(); ++i)
    std::visit([&](const auto& j) {
      j.difference(q0.data() + model.idx_q(i), q1.data() + model.idx_q(i), v.data() + model.idx_v(i));
    }, model.joint(i));
  return v;
}

void normalize(const Model& model, Eigen::Ref<VecX> q) {
  if (q.size() != model.nq())
    throw InvalidArgument("normalize: q has size " + std::to_string(q.size()) + ", expected nq = " +
                          std::to_string(model.nq()));
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
  if (!model.mimics().empty()) s << ", " << model.mimics().size() << " mimic relations (not enforced by tree algorithms)";
  s << "\n";
  s << "  " << std::left << std::setw(4) << "#" << std::setw(28) << "body" << std::setw(28) << "joint"
    << std::setw(14) << "kind" << std::setw(8) << "parent" << std::setw(10) << "mass" << "q/v index\n";
  for (int i = 1; i < model.nbodies(); ++i) {
    s << "  " << std::left << std::setw(4) << i << std::setw(28) << model.body_name(i) << std::setw(28)
      << model.joint_name(i) << std::setw(14) << joint_kind(model.joint(i)) << std::setw(8) << model.parent(i)
      << std::setw(10) << std::setprecision(4) << model.inertia(i).mass() << model.idx_q(i) << "/" << model.idx_v(i)
      << "\n";
  }
  return s.str();
}

}  // namespace plucker
