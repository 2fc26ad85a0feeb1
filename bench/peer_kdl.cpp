// Orocos KDL 1.5 (Debian liborocos-kdl-dev + libkdl-parser-dev) adapter.
//
// KDL has no floating base (kdl_parser turns a floating joint into a fixed one and drops
// the root link's inertia), so only fixed-base models are compared. When every movable
// joint lies on one root-to-leaf path and nothing with mass hangs off that path, the
// model is a KDL::Chain and the chain solvers are used (the fast ones):
//   ID: ChainIdSolver_RNE::CartToJnt
//   M : ChainDynParam::JntToMass
//   FD: ChainFdSolver_RNE::CartToJnt (KDL's FD: RNE bias + JntToMass + LDL solve)
// Otherwise (branched models such as panda) only ID through TreeIdSolver_RNE.
#include <kdl/chain.hpp>
#include <kdl/chaindynparam.hpp>
#include <kdl/chainfdsolver_recursive_newton_euler.hpp>
#include <kdl/chainidsolver_recursive_newton_euler.hpp>
#include <kdl/jntarray.hpp>
#include <kdl/jntspaceinertiamatrix.hpp>
#include <kdl/tree.hpp>
#include <kdl/treeidsolver_recursive_newton_euler.hpp>
#include <kdl_parser/kdl_parser.hpp>
#include <map>

#include "peers.hpp"

namespace plucker_bench {
namespace {

bool movable(const KDL::Segment& s) { return s.getJoint().getType() != KDL::Joint::Fixed; }

bool massless(const KDL::Segment& s) {
  const KDL::RigidBodyInertia& I = s.getInertia();
  if (I.getMass() != 0.0) return false;
  const KDL::RotationalInertia R = I.getRotationalInertia();
  for (int k = 0; k < 9; ++k)
    if (R.data[k] != 0.0) return false;
  return true;
}

class KdlPeer final : public Peer {
 public:
  explicit KdlPeer(const ModelDesc& desc) : desc_(desc) {}

  std::string init() {
    if (desc_.floating) return "KDL has no floating base (fixed-base comparison only)";
    if (!kdl_parser::treeFromFile(desc_.urdf, tree_)) return "kdl_parser::treeFromFile failed";
    if (static_cast<int>(tree_.getNrOfJoints()) != desc_.nv)
      return "nv differs: kdl " + std::to_string(tree_.getNrOfJoints()) + ", plucker " + std::to_string(desc_.nv);
    const KDL::SegmentMap& segs = tree_.getSegments();
    const std::string root = tree_.getRootSegment()->first;

    // Serial? Find a leaf whose root path holds every movable joint.
    std::string tip;
    for (auto it = segs.begin(); it != segs.end(); ++it) {
      if (!GetTreeElementChildren(it->second).empty()) continue;
      int count = 0;
      for (auto s = it; s->first != root; s = GetTreeElementParent(s->second))
        if (movable(GetTreeElementSegment(s->second))) ++count;
      if (count == desc_.nv) {
        tip = it->first;
        break;
      }
    }
    if (!tip.empty()) {
      std::map<std::string, bool> on_path;
      for (auto s = segs.find(tip); s->first != root; s = GetTreeElementParent(s->second)) on_path[s->first] = true;
      for (auto it = segs.begin(); it != segs.end(); ++it)
        if (it->first != root && !on_path.count(it->first) && !massless(GetTreeElementSegment(it->second))) {
          tip.clear();  // a massive branch off the path: the chain would drop it
          break;
        }
    }
    std::map<std::string, int> kdl_index;  // joint name -> KDL q index
    const KDL::Vector g(desc_.gravity[0], desc_.gravity[1], desc_.gravity[2]);
    if (!tip.empty()) {
      serial_ = tree_.getChain(root, tip, chain_);
      if (!serial_) return "Tree::getChain failed";
      int k = 0;
      for (const KDL::Segment& s : chain_.segments)
        if (movable(s)) kdl_index[s.getJoint().getName()] = k++;
      id_chain_ = std::make_unique<KDL::ChainIdSolver_RNE>(chain_, g);
      dyn_ = std::make_unique<KDL::ChainDynParam>(chain_, g);
      fd_ = std::make_unique<KDL::ChainFdSolver_RNE>(chain_, g);
      wrenches_.assign(chain_.getNrOfSegments(), KDL::Wrench::Zero());
    } else {
      for (auto it = segs.begin(); it != segs.end(); ++it)
        if (it->first != root && movable(GetTreeElementSegment(it->second)))
          kdl_index[GetTreeElementSegment(it->second).getJoint().getName()] = GetTreeElementQNr(it->second);
      id_tree_ = std::make_unique<KDL::TreeIdSolver_RNE>(tree_, g);
    }
    perm_.assign(desc_.nv, -1);
    for (const JointDesc& j : desc_.joints) {
      auto it = kdl_index.find(j.name);
      if (it == kdl_index.end()) return "joint '" + j.name + "' not found in the KDL tree";
      perm_[j.idx_v] = it->second;  // fixed base: idx_q == idx_v, one coordinate each
    }
    return "";
  }

  const char* library() const override { return "kdl"; }

  std::string method(Task task, std::string& why) const override {
    switch (task) {
      case Task::InverseDynamics:
        return serial_ ? "ChainIdSolver_RNE" : "TreeIdSolver_RNE";
      case Task::MassMatrix:
        if (serial_) return "ChainDynParam::JntToMass";
        why = "KDL's mass matrix exists for serial chains only";
        return "";
      case Task::ForwardDynamics:
        if (serial_) return "ChainFdSolver_RNE";
        why = "KDL's forward dynamics exists for serial chains only";
        return "";
    }
    return "";
  }

  void set_pool(const StatePool& p) override {
    const int nv = desc_.nv;
    auto convert = [&](const double* x) {
      KDL::JntArray out(nv);
      for (int k = 0; k < nv; ++k) out(perm_[k]) = x[k];
      return out;
    };
    q_.clear(), v_.clear(), a_.clear(), tau_.clear();
    for (int i = 0; i < p.n; ++i) {
      q_.push_back(convert(p.qi(i)));
      v_.push_back(convert(p.vi(i)));
      a_.push_back(convert(p.ai(i)));
      tau_.push_back(convert(p.taui(i)));
    }
    out_ = KDL::JntArray(nv);
    H_ = KDL::JntSpaceInertiaMatrix(nv);
  }

  void run(Task task, int i) override {
    switch (task) {
      case Task::InverseDynamics:
        if (serial_)
          id_chain_->CartToJnt(q_[i], v_[i], a_[i], wrenches_, out_);
        else
          id_tree_->CartToJnt(q_[i], v_[i], a_[i], wrench_map_, out_);
        break;
      case Task::MassMatrix:
        dyn_->JntToMass(q_[i], H_);
        break;
      case Task::ForwardDynamics:
        fd_->CartToJnt(q_[i], v_[i], tau_[i], wrenches_, out_);
        break;
    }
  }

  void compute(Task task, int i, double* out) override {
    run(task, i);
    const int nv = desc_.nv;
    if (task == Task::MassMatrix) {
      for (int c = 0; c < nv; ++c)
        for (int r = 0; r < nv; ++r) out[static_cast<std::size_t>(c) * nv + r] = H_(perm_[r], perm_[c]);
    } else {
      for (int k = 0; k < nv; ++k) out[k] = out_(perm_[k]);
    }
  }

 private:
  ModelDesc desc_;
  KDL::Tree tree_;
  KDL::Chain chain_;
  bool serial_ = false;
  std::unique_ptr<KDL::ChainIdSolver_RNE> id_chain_;
  std::unique_ptr<KDL::ChainDynParam> dyn_;
  std::unique_ptr<KDL::ChainFdSolver_RNE> fd_;
  std::unique_ptr<KDL::TreeIdSolver_RNE> id_tree_;
  KDL::Wrenches wrenches_;
  KDL::WrenchMap wrench_map_;
  std::vector<int> perm_;  // plucker dof -> KDL index
  std::vector<KDL::JntArray> q_, v_, a_, tau_;
  KDL::JntArray out_;
  KDL::JntSpaceInertiaMatrix H_;
};

}  // namespace

std::unique_ptr<Peer> make_kdl_peer(const ModelDesc& desc, std::string& why) {
  auto peer = std::make_unique<KdlPeer>(desc);
  why = peer->init();
  if (!why.empty()) return nullptr;
  return peer;
}

}  // namespace plucker_bench
