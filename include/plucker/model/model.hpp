// The kinematic-tree model of Featherstone & Orin, "Robot Dynamics: Equations and Algorithms", ICRA 2000, §3.1
// (generalised joints as in Jain, "Unified Formulation of Dynamics for Serial Rigid Multibody Systems", J. Guidance,
// Control, and Dynamics 1991, §2).
//
// Bodies are numbered 0..N with parent(i) < i; body 0 is the fixed base ("world"
// for a floating-base robot, the URDF root link for a fixed-base one). Joint i
// connects parent(i) to body i: the body-i frame is  X_up(i) = X_J(q_i) * X_tree(i)
// relative to the parent frame (both as Plucker transforms, parent -> child).
//
// A Model is an immutable description once built (topology, joint kinds, transforms,
// inertias, names, limits); everything an algorithm writes lives in Data.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "plucker/model/joints.hpp"
#include "plucker/model/loop_joint.hpp"

namespace plucker {

/// q_follower = multiplier * q_leader + offset (URDF `<mimic>`). Not enforced by the tree
/// algorithms (the mimic joint is an independent coordinate for rnea/crba/aba); the
/// constraint API (constraints/) adds it to the loop constraints phi(q) = 0.
struct MimicRelation {
  int follower = 0;  ///< joint (= body) index of the mimic joint
  int leader = 0;    ///< joint (= body) index of the joint it follows
  double multiplier = 1.0;
  double offset = 0.0;
};

/// A named frame rigidly attached to a body (e.g. a URDF link merged by a fixed joint).
struct Frame {
  std::string name;
  int body = 0;      ///< the body it is attached to
  Transform X_body;  ///< frame_X_body: body coordinates -> frame coordinates
};

/// Limits of one joint (size nq for positions, nv for velocity and effort); +-inf when unknown.
struct JointLimits {
  VecX lower, upper, velocity, effort;
};

class Model {
 public:
  /// An empty model: only the fixed base (body 0), named `base_name`.
  explicit Model(const std::string& base_name = "world");

  /// Appends body i = nbodies() with joint i from `parent` (an existing body). X_tree is the
  /// joint frame relative to the parent frame (parent -> joint frame). Returns i.
  /// Throws ModelError for an unknown parent, a duplicate name or an empty name.
  int add_body(int parent, const JointModel& joint, const Transform& X_tree, const RigidBodyInertia& inertia,
               const std::string& body_name, const std::string& joint_name, const JointLimits& limits = {});
  /// Attaches a named frame to a body.
  int add_frame(const std::string& name, int body, const Transform& X_body);
  /// Adds inertia (expressed in the body frame) to an existing body, e.g. a merged fixed link.
  void add_inertia(int body, const RigidBodyInertia& inertia);
  void add_mimic(const MimicRelation& mimic);
  /// Adds a loop-closing joint (Featherstone & Orin 2000, §3.4). Throws ModelError for an empty or duplicate
  /// name, unknown or equal bodies, a zero axis (normalised otherwise) or non-finite frames.
  /// Returns its index. Make Data after the last loop joint is added.
  int add_loop_joint(const LoopJoint& joint);

  const std::string& name() const { return name_; }
  void set_name(const std::string& name);

  // ---- sizes ----
  int nbodies() const { return static_cast<int>(parent_.size()); }  ///< N + 1 (includes the base)
  int nq() const { return nq_; }
  int nv() const { return nv_; }

  // ---- topology (Featherstone's notation: lambda(i) parent, mu(i) children, nu(i) subtree) ----
  // Stored in O(N): parents, children, depths, and for depth-first models (every subtree a
  // contiguous index range, as the URDF loader numbers them) the end of each subtree.
  int parent(int i) const { return parent_[i]; }
  const std::vector<int>& parents() const { return parent_; }
  const std::vector<int>& children(int i) const { return children_[i]; }  ///< mu(i)
  /// nu(i): the bodies of the subtree of i, ascending (i first). O(size) for a depth-first
  /// model, O(N) otherwise.
  std::vector<int> subtree(int i) const;
  /// The bodies from the root to i (excluding 0, including i). O(depth).
  std::vector<int> support(int i) const;
  int depth(int i) const { return depth_[i]; }  ///< number of joints between the base and body i
  /// True when every subtree occupies a contiguous range of body indices, [i, subtree_end(i)),
  /// and so of velocity indices (depth-first numbering, as the URDF loader produces);
  /// algorithms then work on whole column blocks.
  bool has_contiguous_subtrees() const { return contiguous_subtrees_; }
  /// One past the last body of the subtree of i (depth-first models; N + 1 otherwise).
  int subtree_end(int i) const { return !contiguous_subtrees_ || on_open_path_[i] ? nbodies() : subtree_end_[i]; }
  /// One past the last velocity index of the subtree of i: with contiguous subtrees the
  /// subtree's velocities are [idx_v(i), subtree_v_end(i)); otherwise nv (an upper bound).
  int subtree_v_end(int i) const {
    const int end = subtree_end(i);
    return end == nbodies() ? nv_ : idx_v_[end];
  }

  // ---- per body / per joint ----
  const Transform& X_tree(int i) const { return X_tree_[i]; }
  /// True when X_tree(i) is a pure translation (E = 1 exactly): then a joint about a body axis
  /// gives an X_up(q) whose rotation turns one coordinate plane only, and the algorithms take
  /// cheaper products (39 of talos_full's 45 joints, every joint of solo12).
  bool X_tree_is_translation(int i) const { return X_tree_translation_[i] != 0; }
  const RigidBodyInertia& inertia(int i) const { return inertia_[i]; }
  const JointModel& joint(int i) const { return joint_[i]; }
  int idx_q(int i) const { return idx_q_[i]; }
  int idx_v(int i) const { return idx_v_[i]; }
  int joint_nq(int i) const { return nq_j_[i]; }
  int joint_nv(int i) const { return nv_j_[i]; }
  const JointLimits& limits(int i) const { return limits_[i]; }
  /// Lower/upper position limits and velocity/effort limits, stacked over all joints.
  Eigen::Map<const VecX> lower_position_limit() const { return stacked(lower_); }
  Eigen::Map<const VecX> upper_position_limit() const { return stacked(upper_); }
  Eigen::Map<const VecX> velocity_limit() const { return stacked(velocity_limit_); }
  Eigen::Map<const VecX> effort_limit() const { return stacked(effort_limit_); }
  /// The joint that owns velocity index k.
  int joint_of_v(int k) const { return joint_of_v_[k]; }

  // ---- names ----
  const std::string& body_name(int i) const { return body_names_[i]; }
  const std::string& joint_name(int i) const { return joint_names_[i]; }
  const std::vector<std::string>& body_names() const { return body_names_; }
  /// Joint names for bodies 1..N (joint i moves body i), including fixed ones.
  std::vector<std::string> joint_names() const { return {joint_names_.begin() + 1, joint_names_.end()}; }
  /// Names of the joints with nv > 0, in model order.
  std::vector<std::string> movable_joint_names() const;
  /// Index lookup; throws InvalidArgument naming the unknown name.
  int body_index(const std::string& name) const;
  int joint_index(const std::string& name) const;
  bool has_body(const std::string& name) const { return body_index_.count(name) > 0; }
  bool has_joint(const std::string& name) const { return joint_index_.count(name) > 0; }

  // ---- frames, mimic ----
  const std::vector<Frame>& frames() const { return frames_; }
  int frame_index(const std::string& name) const;
  bool has_frame(const std::string& name) const { return frame_index_.count(name) > 0; }
  const std::vector<MimicRelation>& mimics() const { return mimics_; }

  // ---- closed loops (constraints/) ----
  const std::vector<LoopJoint>& loop_joints() const { return loop_joints_; }
  std::vector<std::string> loop_joint_names() const;
  int loop_joint_index(const std::string& name) const;  ///< throws InvalidArgument naming an unknown name
  /// Rows of phi(q) = 0: 6 - dof for each loop joint, then one per mimic relation.
  int num_constraints() const { return num_constraints_; }
  /// Actuator coordinates of the actuated loop joints (sum of their DoFs): the size of tau_a.
  int num_loop_actuators() const { return num_loop_actuators_; }

  // ---- physics ----
  const Vec3& gravity() const { return gravity_; }
  void set_gravity(const Vec3& g);
  double total_mass() const;
  /// True when joint 1 is a free-flyer attached to the base (a floating-base robot).
  bool has_floating_base() const;

  /// Checks that q has size nq, is finite and has unit quaternions and unit planar (cos, sin)
  /// pairs (to 1e-6); throws
  /// InvalidArgument naming the argument (`what`) and the offending joint otherwise.
  void check_configuration(const Eigen::Ref<const VecX>& q, const char* what = "q") const;
  /// Checks size nv and finiteness.
  void check_tangent(const Eigen::Ref<const VecX>& v, const char* what) const;

 private:
  static Eigen::Map<const VecX> stacked(const std::vector<double>& x) {
    return {x.data(), static_cast<Eigen::Index>(x.size())};
  }
  std::vector<int> parent_, depth_;
  std::vector<std::vector<int>> children_;
  // Depth-first bookkeeping: the open path (the bodies from the root to the last body added)
  // and, for the bodies that left it, the end of their subtree.
  std::vector<int> open_path_, subtree_end_;
  std::vector<char> on_open_path_;
  std::vector<Transform> X_tree_;
  std::vector<char> X_tree_translation_;
  std::vector<RigidBodyInertia> inertia_;
  std::vector<JointModel> joint_;
  std::vector<int> idx_q_, idx_v_, nq_j_, nv_j_, joint_of_v_;
  std::vector<JointLimits> limits_;
  std::vector<double> lower_, upper_, velocity_limit_, effort_limit_;
  std::vector<std::string> body_names_, joint_names_;
  std::unordered_map<std::string, int> body_index_, joint_index_, frame_index_;
  std::vector<Frame> frames_;
  std::vector<MimicRelation> mimics_;
  std::vector<int> mimic_set_;     ///< union-find over joints, for add_mimic's cycle test
  std::vector<int> mimic_leader_;  ///< per joint: the joint it mimics, or -1
  std::vector<LoopJoint> loop_joints_;
  std::unordered_map<std::string, int> loop_joint_index_;
  int num_constraints_ = 0, num_loop_actuators_ = 0;
  struct UnitBlock {
    int q_index, size, joint;  ///< a unit quaternion (size 4) or planar (cos, sin) pair (size 2) in q
  };
  std::vector<UnitBlock> unit_blocks_;
  bool contiguous_subtrees_ = true;
  Vec3 gravity_ = Vec3(0.0, 0.0, -9.81);
  std::string name_ = "model";
  int nq_ = 0, nv_ = 0;
};

// ---- configuration space (Lie-group aware on quaternion joints) ----
VecX neutral(const Model& model);
/// Uniform within the position limits; unlimited coordinates use [-pi, pi] for angles and
/// [-1, 1] for lengths; quaternions uniform on SO(3).
VecX random_configuration(const Model& model, std::mt19937_64& rng);
/// q (+) v dt, exact on spherical/free-flyer/planar joints (group exponential).
VecX integrate(const Model& model, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v, double dt = 1.0);
/// v such that integrate(q0, v, 1) == q1.
VecX difference(const Model& model, const Eigen::Ref<const VecX>& q0, const Eigen::Ref<const VecX>& q1);
/// Normalises the quaternions (and planar cos/sin pairs) in place.
void normalize(const Model& model, Eigen::Ref<VecX> q);

/// One-paragraph human-readable summary: bodies, joints, nq/nv, total mass.
std::string summary(const Model& model);

}  // namespace plucker
