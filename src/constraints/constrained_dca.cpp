// constrained_forward_dynamics by the divide-and-conquer algorithm (Featherstone 1999, part 1:
// a loop-closing joint joins two handles of one subassembly, and the assembly formula solves for
// its force there). The assembly itself is in the DCA (algorithms/dca.cpp); this file gives each
// loop joint's frame C, constraint directions T (the rows of L, paper 000 Eq. 18), motion
// subspace, and the stabilised relative acceleration that the three other methods impose:
//   T^T C (a_s - a_p) = -T^T e - 2 alpha T^T C (v_s - v_p) - beta^2 phi
// (a, v: world spatial accelerations and velocities of the successor and predecessor; e: the
// terms from the motion of frame C, as in loop_bias), i.e. L qdd = c - 2 alpha L v - beta^2 phi.
#include <cmath>
#include <string>

#include "algorithms/dca_loops.hpp"
#include "constraints/loop_kernels.hpp"
#include "plucker/algorithms/forward_dynamics.hpp"
#include "plucker/algorithms/kinematics.hpp"
#include "plucker/constraints/constrained_dynamics.hpp"
#include "plucker/constraints/loop_constraints.hpp"
#include "plucker/errors.hpp"

namespace plucker::detail {
namespace {

/// T (angular directions first, then linear, as the rows of L) and S of a loop joint, in C.
void loop_subspaces(const LoopJoint& joint, const LoopDirections& dir, DcaLoop::Mat6x& T, DcaLoop::Mat6x& S) {
  T.setZero(6, dir.n_angular + dir.n_linear);
  for (int m = 0; m < dir.n_angular; ++m) T.col(m).head<3>() = dir.angular[m];
  for (int m = 0; m < dir.n_linear; ++m) T.col(dir.n_angular + m).tail<3>() = dir.linear[m];
  S.setZero(6, loop_joint_dof(joint.type));
  switch (joint.type) {  // as loop_joint_motion_subspace
    case LoopJointType::Revolute:
      S.col(0).head<3>() = dir.a;
      break;
    case LoopJointType::Prismatic:
      S.col(0).tail<3>() = dir.a;
      break;
    case LoopJointType::Cylindrical:
      S.col(0).head<3>() = dir.a, S.col(1).tail<3>() = dir.a;
      break;
    case LoopJointType::Planar:
      S.col(0).head<3>() = dir.a, S.col(1).tail<3>() = dir.b1, S.col(2).tail<3>() = dir.b2;
      break;
    case LoopJointType::Spherical:
      S.topRows<3>().setIdentity();
      break;
    case LoopJointType::Fixed:
      break;
  }
}

/// The terms of the loop-closure equations: e (the motion of frame C, as loop_bias) in C.
Motion frame_terms(const Data& data, const LoopJoint& joint, const LoopFrames& f) {
  const int s = joint.successor, p = joint.predecessor;
  const Motion vs = data.X_base[s].apply_inverse(data.v[s]), vp = data.X_base[p].apply_inverse(data.v[p]);
  const Motion v_rel = vs - vp;
  const Vec3 x = v_rel.linear + v_rel.angular.cross(f.ps);  // relative velocity at p_s
  const Vec3 ps_dot = vs.linear + vs.angular.cross(f.ps);   // velocity of the point p_s
  Motion e = Motion::Zero();
  e.angular = -(f.Rp.transpose() * vp.angular.cross(v_rel.angular));
  e.linear = f.Rp.transpose() * (v_rel.angular.cross(ps_dot) - vp.angular.cross(x));
  return e;
}

class LoopTerms final : public DcaLoopHook {
 public:
  LoopTerms(const double* q, const ConstrainedOptions& options) : q_(q), options_(options) {}
  void terms(const Model& model, Data& data, std::vector<DcaLoop>& loops) const override {
    loop_residual(model, data, q_, data.loops.phi.data());  // phi (rows of loop joints in model order)
    const double a2 = 2.0 * options_.baumgarte_alpha, b2 = options_.baumgarte_beta * options_.baumgarte_beta;
    const bool forces = options_.loop_joint_forces.size() > 0;
    int row = 0, u = 0;
    for (std::size_t l = 0; l < loops.size(); ++l) {
      const LoopJoint& joint = model.loop_joints()[l];
      DcaLoop& L = loops[l];
      const LoopFrames f = loop_frames(data, joint);
      const LoopDirections dir = loop_directions(joint);
      L.C = f.C;
      loop_subspaces(joint, dir, L.T, L.S);
      const Motion e = frame_terms(data, joint, f);
      const Motion v_rel = f.C.apply(Motion(data.X_base[joint.successor].apply_inverse(data.v[joint.successor]) -
                                            data.X_base[joint.predecessor].apply_inverse(data.v[joint.predecessor])));
      const Vec6 e6 = e.vector(), v6 = v_rel.vector();
      const int m = static_cast<int>(L.T.cols());
      L.c.setZero();
      for (int k = 0; k < m; ++k) {  // rhs_k = -T_k^T e - 2 alpha T_k^T C v_rel - beta^2 phi_k
        const double rhs = -L.T.col(k).dot(e6) - a2 * L.T.col(k).dot(v6) - b2 * data.loops.phi[row + k];
        L.c += rhs * L.T.col(k);  // c = T rhs (T orthonormal)
      }
      row += m;
      L.f_tau.setZero();
      if (joint.actuated) {
        const int d = static_cast<int>(L.S.cols());
        if (forces) L.f_tau = L.S * options_.loop_joint_forces.segment(u, d);  // S u on the successor
        u += d;
      }
    }
  }

 private:
  const double* q_;
  const ConstrainedOptions& options_;
};

}  // namespace

const VecX& constrained_forward_dynamics_dca(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                             const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& tau,
                                             const ConstrainedOptions& options) {
  const bool basic = options.method == ConstrainedMethod::Dca;
  if (options.threads < 1)
    throw InvalidArgument("constrained_forward_dynamics: threads must be at least 1, got " +
                          std::to_string(options.threads));
  if (model.num_constraints() == 0) {  // a tree
    data.loops.rank = 0;
    data.loops.acceleration_residual = 0.0;
    return forward_dynamics_dca(model, data, q, v, tau, basic ? DcaVariant::Basic : DcaVariant::Accurate,
                                options.threads);
  }
  const LoopTerms hook(q.data(), options);
  const DcaLoopsResult result = forward_dynamics_dca_loops(model, data, q.data(), v.data(), tau.data(), basic,
                                                           options.threads, options.rank_tolerance, hook);
  std::vector<DcaLoop>& loops = result.loops;
  // lambda = T^T f per loop (T orthonormal, the rows of L); the residual of the acceleration
  // constraints from the accelerations of qdd (one forward pass).
  forward_kinematics(model, data, q, v, data.qdd);
  VecX& lambda = data.loops.lambda;
  double residual = 0.0;
  int row = 0, rank = 0;
  for (std::size_t l = 0; l < loops.size(); ++l) {
    const LoopJoint& joint = model.loop_joints()[l];
    const DcaLoop& L = loops[l];
    const int m = static_cast<int>(L.T.cols());
    lambda.segment(row, m).noalias() = L.T.transpose() * L.f;
    const Vec6 a_rel = L.C.apply(Motion(data.X_base[joint.successor].apply_inverse(data.a[joint.successor]) -
                                        data.X_base[joint.predecessor].apply_inverse(data.a[joint.predecessor])))
                           .vector();
    for (int k = 0; k < m; ++k) residual = std::max(residual, std::abs(L.T.col(k).dot(a_rel) - L.T.col(k).dot(L.c)));
    rank += L.rank;
    row += m;
  }
  data.loops.rank = rank;
  data.loops.acceleration_residual = residual;
  if (result.tree_rank_deficient) {
    // Redundant constraints (a direction dropped at a loop's closure or at a tree joint above it):
    // the loop forces are valid (tau_c = L^T lambda is unique) but, for a redundancy that spans
    // two loops or a loop and the tree, not the minimum-norm lambda of the other methods. Made
    // minimum-norm here, densely (O(nv nc^2)), by the rank-revealing step of those methods on L.
    LoopsWorkspace& lw = workspace<LoopsWorkspace>(model, data);
    constraint_jacobian(model, data, q);
    lw.tau_c.noalias() = data.loops.L.transpose() * lambda;
    const int r = reveal_rank(lw, data.loops.L, options.rank_tolerance, false);
    min_norm_multipliers(lw, r, lw.tau_c, lambda);
    data.loops.rank = r;
  }
  data.loops.range_space_fell_back = false;
  return data.qdd;
}

}  // namespace plucker::detail
