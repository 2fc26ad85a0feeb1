// DART 6.12 (Debian libdart-dev + libdart-utils-urdf-dev) adapter.
//
// Narrow headers only: <dart/dart.hpp> does not compile on Debian (missing ikfast header).
// Loading: DartLoader on the stripped URDF (DART opens every mesh, and they are absent),
// root joint FIXED or FLOATING (a FreeJoint) as plucker's model, default inertia of
// links without <inertial> set to ZERO (DART's default is 1 kg, unit inertia). Damping,
// spring stiffness and Coulomb friction are zeroed and every joint is FORCE-actuated.
//
// Timed work, each starting from a fresh state (which marks DART's caches dirty):
//   ID: setPositions, setVelocities, setAccelerations, computeInverseDynamics()
//   M : setPositions, getMassMatrix()
//   FD: setPositions, setVelocities, setForces, computeForwardDynamics()
//
// Coordinates: a DART FreeJoint has positions [log(R); p] and velocities = the child
// body's spatial velocity in its own frame [omega; v] (angular first), accelerations
// its derivative and forces the body-frame wrench: the same as plucker's free-flyer
// except for the position chart.
#include <dart/dynamics/BodyNode.hpp>
#include <dart/dynamics/DegreeOfFreedom.hpp>
#include <dart/dynamics/FreeJoint.hpp>
#include <dart/dynamics/Inertia.hpp>
#include <dart/dynamics/Joint.hpp>
#include <dart/dynamics/Skeleton.hpp>
#include <dart/utils/urdf/DartLoader.hpp>
#include <map>

#include "peers.hpp"

namespace plucker_bench {
namespace {

class DartPeer final : public Peer {
 public:
  explicit DartPeer(const ModelDesc& desc) : desc_(desc) {}

  std::string init() {
    using dart::utils::DartLoader;
    DartLoader::Options options(nullptr,
                                desc_.floating ? DartLoader::RootJointType::FLOATING : DartLoader::RootJointType::FIXED,
                                dart::dynamics::Inertia(0.0, Eigen::Vector3d::Zero(), Eigen::Matrix3d::Zero()));
    DartLoader loader(options);
    skel_ = loader.parseSkeleton(dart::common::Uri::createFromPath(desc_.urdf));
    if (!skel_) return "DartLoader::parseSkeleton failed";
    skel_->setGravity(Eigen::Vector3d(desc_.gravity[0], desc_.gravity[1], desc_.gravity[2]));
    const int ndof = static_cast<int>(skel_->getNumDofs());
    if (ndof != desc_.nv) return "nv differs: dart " + std::to_string(ndof) + ", plucker " + std::to_string(desc_.nv);
    for (std::size_t j = 0; j < skel_->getNumJoints(); ++j)
      skel_->getJoint(j)->setActuatorType(dart::dynamics::Joint::FORCE);
    for (int k = 0; k < ndof; ++k) {
      dart::dynamics::DegreeOfFreedom* dof = skel_->getDof(k);
      dof->setDampingCoefficient(0.0);
      dof->setSpringStiffness(0.0);
      dof->setCoulombFriction(0.0);
    }
    // Map plucker dofs to DART's.
    std::map<std::string, int> first_dof;  // joint name -> DART index of its first dof
    for (int k = 0; k < ndof; ++k) {
      const dart::dynamics::DegreeOfFreedom* dof = skel_->getDof(k);
      if (dof->getIndexInJoint() == 0) first_dof[dof->getJoint()->getName()] = k;
    }
    perm_.assign(desc_.nv, -1);
    for (const JointDesc& j : desc_.joints) {
      if (j.free_flyer) {
        dart::dynamics::Joint* root = skel_->getRootJoint();
        if (!root || !dynamic_cast<dart::dynamics::FreeJoint*>(root) || root->getNumDofs() != 6)
          return "DART's root joint is not a FreeJoint";
        if (root->getChildBodyNode()->getName() != desc_.root_link)
          return "DART's root body is '" + root->getChildBodyNode()->getName() + "', not '" + desc_.root_link + "'";
        free_q_ = j.idx_q;
        free_v_ = j.idx_v;
        free_dart_ = static_cast<int>(root->getIndexInSkeleton(0));
        for (int c = 0; c < 6; ++c) perm_[j.idx_v + c] = free_dart_ + c;
        continue;
      }
      auto it = first_dof.find(j.name);
      if (it == first_dof.end()) return "joint '" + j.name + "' not found in the DART skeleton";
      perm_[j.idx_v] = it->second;
    }
    return "";
  }

  const char* library() const override { return "dart"; }

  std::string method(Task task, std::string&) const override {
    switch (task) {
      case Task::InverseDynamics:
        return "Skeleton::computeInverseDynamics";
      case Task::MassMatrix:
        return "Skeleton::getMassMatrix";
      case Task::ForwardDynamics:
        return "Skeleton::computeForwardDynamics";
    }
    return "";
  }

  void set_pool(const StatePool& p) override {
    const int nv = desc_.nv;
    auto convert = [&](const double* x) {
      Eigen::VectorXd out(nv);
      for (int k = 0; k < nv; ++k) out(perm_[k]) = x[k];
      return out;
    };
    q_.clear(), v_.clear(), a_.clear(), tau_.clear();
    for (int i = 0; i < p.n; ++i) {
      // Positions: one coordinate per dof, except the free-flyer's [log(R); p].
      Eigen::VectorXd q(nv);
      for (const JointDesc& j : desc_.joints)
        if (!j.free_flyer) q(perm_[j.idx_v]) = p.qi(i)[j.idx_q];
      if (free_v_ >= 0) {
        const double* fq = p.qi(i) + free_q_;
        Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
        T.linear() = Eigen::Quaterniond(fq[6], fq[3], fq[4], fq[5]).toRotationMatrix();
        T.translation() = Eigen::Vector3d(fq[0], fq[1], fq[2]);
        q.segment<6>(free_dart_) = dart::dynamics::FreeJoint::convertToPositions(T);
      }
      q_.push_back(q);
      v_.push_back(convert(p.vi(i)));
      a_.push_back(convert(p.ai(i)));
      tau_.push_back(convert(p.taui(i)));
    }
  }

  void run(Task task, int i) override {
    switch (task) {
      case Task::InverseDynamics:
        skel_->setPositions(q_[i]);
        skel_->setVelocities(v_[i]);
        skel_->setAccelerations(a_[i]);
        skel_->computeInverseDynamics(false, false, false);
        break;
      case Task::MassMatrix:
        skel_->setPositions(q_[i]);
        skel_->getMassMatrix();
        break;
      case Task::ForwardDynamics:
        skel_->setPositions(q_[i]);
        skel_->setVelocities(v_[i]);
        skel_->setForces(tau_[i]);
        skel_->computeForwardDynamics();
        break;
    }
  }

  void compute(Task task, int i, double* out) override {
    run(task, i);
    const int nv = desc_.nv;
    switch (task) {
      case Task::InverseDynamics: {
        const Eigen::VectorXd f = skel_->getForces();
        for (int k = 0; k < nv; ++k) out[k] = f(perm_[k]);
        break;
      }
      case Task::MassMatrix: {
        const Eigen::MatrixXd& M = skel_->getMassMatrix();
        for (int c = 0; c < nv; ++c)
          for (int r = 0; r < nv; ++r) out[static_cast<std::size_t>(c) * nv + r] = M(perm_[r], perm_[c]);
        break;
      }
      case Task::ForwardDynamics: {
        const Eigen::VectorXd qdd = skel_->getAccelerations();
        for (int k = 0; k < nv; ++k) out[k] = qdd(perm_[k]);
        break;
      }
    }
  }

 private:
  ModelDesc desc_;
  dart::dynamics::SkeletonPtr skel_;
  std::vector<int> perm_;  // plucker dof -> DART dof
  int free_q_ = -1, free_v_ = -1, free_dart_ = 0;
  std::vector<Eigen::VectorXd> q_, v_, a_, tau_;
};

}  // namespace

std::unique_ptr<Peer> make_dart_peer(const ModelDesc& desc, std::string& why) {
  auto peer = std::make_unique<DartPeer>(desc);
  why = peer->init();
  if (!why.empty()) return nullptr;
  return peer;
}

}  // namespace plucker_bench
