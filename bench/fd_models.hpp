// The models of the forward-dynamics comparison (plucker_bench --fd, --fd_ops, --fd_accuracy;
// bench/fd_study.py): chains and branched random trees of growing size, the robot-like builders,
// sets of free-floating bodies and chains of ball joints.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "plucker/model/builders.hpp"

namespace plucker_bench {

struct FdModel {
  std::string family;  // "chain", "tree_bf2", "robot", "free_bodies", "ball_chain", "tapered_chain"
  std::string name;    // unique, e.g. "chain32", "tree_bf2_32"
  std::function<plucker::Model()> build;
};

/// n bodies, each attached to the world by its own free-flyer, or a chain of n ball joints:
/// block-diagonal / block-chain joint-space inertias, where CRBA + LTDL beats the ABA's 6 x 6
/// (3 x 3) articulated-inertia work per joint.
inline plucker::Model multi_dof_bodies(int n, bool ball_chain) {
  plucker::Model m;
  for (int k = 0; k < n; ++k) {
    const plucker::JointModel joint =
        ball_chain ? plucker::JointModel(plucker::JointSpherical{}) : plucker::JointModel(plucker::JointFreeFlyer{});
    const plucker::Vec3 c(0.1, 0.02 * k, 0.0), moments(0.01, 0.02 + 0.001 * k, 0.025);
    m.add_body(ball_chain ? k : 0, joint, plucker::Transform::translation(plucker::Vec3(0.2, 0.0, 0.0)),
               plucker::RigidBodyInertia::from_mass_com_inertia(1.0 + 0.1 * k, c, moments.asDiagonal()),
               "body" + std::to_string(k + 1), "joint" + std::to_string(k + 1));
  }
  return m;
}

/// Every model of the comparison. Trees: build_random_tree(N, bf, skew 0.5, taper 1) (equal links:
/// a tapered 128-body tree would end in nearly massless links). chain30 and humanoid_fixed are
/// paper 003's 30-DoF comparison; tapered_chain (autoTree taper 0.95) is the ill-conditioned chain
/// of the accuracy study.
inline std::vector<FdModel> fd_models() {
  std::vector<FdModel> out;
  for (int n : {4, 8, 16, 30, 32, 64, 128}) {
    out.push_back({"chain", "chain" + std::to_string(n), [n] { return plucker::build_chain(n); }});
    if (n == 30) continue;
    for (double bf : {1.5, 2.0, 3.0, 5.0}) {
      const std::string fam = bf == 1.5 ? "tree_bf1.5" : "tree_bf" + std::to_string(static_cast<int>(bf));
      out.push_back(
          {fam, fam + "_" + std::to_string(n), [n, bf] { return plucker::build_random_tree(n, bf, 0.5, 1.0); }});
    }
  }
  out.push_back({"robot", "humanoid_fixed", [] { return plucker::build_humanoid(0, false); }});
  out.push_back({"robot", "humanoid_ff", [] { return plucker::build_humanoid(0, true); }});
  out.push_back({"robot", "quadruped_fixed", [] { return plucker::build_quadruped(0, false); }});
  out.push_back({"robot", "quadruped_ff", [] { return plucker::build_quadruped(0, true); }});
  out.push_back({"robot", "all_joints_ff", [] { return plucker::build_all_joints_tree(0); }});
  for (int n : {1, 2, 4, 8, 16})
    out.push_back({"free_bodies", "free_bodies" + std::to_string(n), [n] { return multi_dof_bodies(n, false); }});
  for (int n : {2, 4, 8, 16})
    out.push_back({"ball_chain", "ball_chain" + std::to_string(n), [n] { return multi_dof_bodies(n, true); }});
  for (int n : {4, 8, 16, 32, 64})
    out.push_back({"tapered_chain", "tapered_chain" + std::to_string(n),
                   [n] { return plucker::build_random_tree(n, 1.0, 0.5, 0.95); }});
  return out;
}

}  // namespace plucker_bench
