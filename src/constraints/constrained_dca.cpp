// constrained_forward_dynamics by the divide-and-conquer algorithm (Featherstone 1999, part 1:
// a loop-closing joint joins two handles of one subassembly, and the assembly formula solves for
// its force there). The assembly itself is in the DCA (algorithms/dca.cpp); this file gives each
// loop joint's frame C, constraint directions T (the rows of L, paper 000 Eq. 18), motion
// subspace, and the stabilised relative acceleration that the three other methods impose:
//   T^T C (a_s - a_p) = -T^T e - 2 alpha T^T C (v_s - v_p) - beta^2 phi
// (a, v: world spatial accelerations and velocities of the successor and predecessor; e: the
// terms from the motion of frame C, as in loop_bias), i.e. L qdd = c - 2 alpha L v - beta^2 phi.
//
// Mimic relations (gears, q_f = r q_l + offset) are not joints between two handles, and the 1999
// papers do not cover them: they are closed around the DCA by the range-space method (paper 000
// Eq. 21 on their rows G), with the loop-closed DCA as the tree solve:
//   qdd = qdd_0 + H G^T mu,   (G H G^T) mu = -2 alpha G v - beta^2 phi_G - G qdd_0
// qdd_0: the DCA without the gears; H G^T: one homogeneous DCA per gear (v = 0, no gravity, no
// loop bias or actuation: the map tau -> qdd of the loop-closed mechanism, applied to the gear's
// generalised force G_k^T); the loops' forces are combined with the same mu. O((g + 1) N) work
// for g gears, each solve of O(log N) depth.
#include <Eigen/Eigenvalues>
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
  S = loop_motion_subspace(joint, dir);
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

/// The loop joints' geometry without bias or actuation: the homogeneous solves of the gears.
class HomogeneousLoopTerms final : public DcaLoopHook {
 public:
  void terms(const Model& model, Data& data, std::vector<DcaLoop>& loops) const override {
    for (std::size_t l = 0; l < loops.size(); ++l) {
      const LoopJoint& joint = model.loop_joints()[l];
      DcaLoop& L = loops[l];
      L.C = loop_frames(data, joint).C;
      loop_subspaces(joint, loop_directions(joint), L.T, L.S);
      L.c.setZero();
      L.f_tau.setZero();
    }
  }
};

/// The scratch of the gears' range-space step (sized once: no allocation when warm).
struct DcaGearsWorkspace : WorkspaceOf<DcaGearsWorkspace> {
  static constexpr Slot slot = Slot::DcaGears;
  explicit DcaGearsWorkspace(const Model& model) {
    const int nv = model.nv(), g = static_cast<int>(model.mimics().size());
    const int nl = static_cast<int>(model.loop_joints().size());
    zero_v = VecX::Zero(nv);
    gear_force = VecX::Zero(nv);
    HGt = MatX::Zero(nv, g);
    loop_f = MatX::Zero(6 * nl, g);
    K = MatX::Zero(g, g);
    rhs = mu = VecX::Zero(g);
    eig.compute(MatX::Identity(g, g));  // sized, and its status set (the size constructor leaves it unset)
  }
  VecX zero_v, gear_force;  ///< v = 0; G_k^T
  MatX HGt;                 ///< nv x g: H G^T
  MatX loop_f;              ///< 6 nl x g: the loops' forces (in their frames C) of each homogeneous solve
  MatX K;                   ///< G H G^T
  VecX rhs, mu;
  Eigen::SelfAdjointEigenSolver<MatX> eig;
};

/// G_k^T: the generalised force of gear k's multiplier (its row of L is e_f - r e_l).
void gear_force(const Model& model, const MimicRelation& gear, VecX& f) {
  f.setZero();
  f[model.idx_v(gear.follower)] += 1.0;
  f[model.idx_v(gear.leader)] -= gear.multiplier;
}

/// G_k x: gear k's row of L (e_f - r e_l) times x.
double gear_row_times(const Model& model, const MimicRelation& gear, const double* x) {
  return x[model.idx_v(gear.follower)] - gear.multiplier * x[model.idx_v(gear.leader)];
}

/// The stabilised right-hand side of gear k's acceleration row, G_k qdd = -2 alpha G_k v - beta^2
/// phi_k (its c is 0: L is constant on a gear's row).
double gear_target(const Model& model, const MimicRelation& gear, const double* v, double phi,
                   const ConstrainedOptions& options) {
  return -2.0 * options.baumgarte_alpha * gear_row_times(model, gear, v) -
         options.baumgarte_beta * options.baumgarte_beta * phi;
}

/// The gears' homogeneous solves: H G^T and the loops' forces. True when a tree joint's or a
/// loop's constraint directions were dropped in one of them.
bool homogeneous_solves(const Model& model, Data& data, DcaGearsWorkspace& gw, const double* q, bool basic,
                        const ConstrainedOptions& options) {
  const HomogeneousLoopTerms hook;
  bool deficient = false;
  for (std::size_t k = 0; k < model.mimics().size(); ++k) {
    gear_force(model, model.mimics()[k], gw.gear_force);
    const DcaLoopsResult h = forward_dynamics_dca_loops(model, data, q, gw.zero_v.data(), gw.gear_force.data(), basic,
                                                        options.threads, options.rank_tolerance, hook, false);
    gw.HGt.col(static_cast<Eigen::Index>(k)) = data.qdd;
    for (std::size_t l = 0; l < h.loops.size(); ++l)
      gw.loop_f.col(static_cast<Eigen::Index>(k)).segment<6>(6 * static_cast<Eigen::Index>(l)) = h.loops[l].f;
    deficient = deficient || h.tree_rank_deficient;
  }
  return deficient;
}

/// mu from (G H G^T) mu = rhs by its eigen-decomposition (eigenvalues at or below the rank
/// tolerance times the largest dropped: redundant gears get no force); qdd and the loops' forces
/// updated. Returns the rank of G H G^T. Throws NumericalError when it is not positive
/// semi-definite beyond rounding.
int close_gears(const Model& model, Data& data, DcaGearsWorkspace& gw, const double* v, int gear_row,
                std::vector<DcaLoop>& loops, const ConstrainedOptions& options, const char* fn) {
  const int g = static_cast<int>(model.mimics().size());
  for (int k = 0; k < g; ++k) {
    const MimicRelation& gear = model.mimics()[static_cast<std::size_t>(k)];
    gw.K.row(k) = gw.HGt.row(model.idx_v(gear.follower)) - gear.multiplier * gw.HGt.row(model.idx_v(gear.leader));
    gw.rhs[k] = gear_target(model, gear, v, data.loops.phi[gear_row + k], options) -
                gear_row_times(model, gear, data.qdd.data());  // - G qdd_0
  }
  for (int k = 0; k < g; ++k)  // symmetrised in place (no temporary)
    for (int j = 0; j < k; ++j) gw.K(k, j) = gw.K(j, k) = 0.5 * (gw.K(k, j) + gw.K(j, k));
  gw.eig.compute(gw.K);
  const auto& e = gw.eig.eigenvalues();
  const double e_max = e.cwiseAbs().maxCoeff();
  if (!(e.minCoeff() >= -1e-6 * e_max))
    throw NumericalError(std::string(fn) + ": G H G^T of the mimic relations (first: joint '" +
                         model.joint_name(model.mimics().front().follower) +
                         "') is not positive semi-definite to working precision");
  const double cut = std::max(options.rank_tolerance, 1e-8) * e_max;
  gw.mu.noalias() = gw.eig.eigenvectors().transpose() * gw.rhs;
  int rank = 0;
  for (int k = 0; k < g; ++k) {
    const bool keep = e[k] > cut;
    rank += keep ? 1 : 0;
    gw.mu[k] = keep ? gw.mu[k] / e[k] : 0.0;
  }
  gw.rhs.noalias() = gw.eig.eigenvectors() * gw.mu;  // mu = V diag(1/e) V^T rhs
  gw.mu = gw.rhs;
  data.qdd.noalias() += gw.HGt * gw.mu;
  for (std::size_t l = 0; l < loops.size(); ++l)
    loops[l].f.noalias() += gw.loop_f.middleRows<6>(6 * static_cast<Eigen::Index>(l)) * gw.mu;
  return rank;
}

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
  const char* fn = basic ? "constrained_forward_dynamics (dca)" : "constrained_forward_dynamics (dca_accurate)";
  const int gears = static_cast<int>(model.mimics().size());
  DcaGearsWorkspace* gw = gears > 0 ? &workspace<DcaGearsWorkspace>(model, data) : nullptr;
  bool deficient = gears > 0 && homogeneous_solves(model, data, *gw, q.data(), basic, options);
  const LoopTerms hook(q.data(), options);
  const DcaLoopsResult result = forward_dynamics_dca_loops(model, data, q.data(), v.data(), tau.data(), basic,
                                                           options.threads, options.rank_tolerance, hook);
  std::vector<DcaLoop>& loops = result.loops;
  deficient = deficient || result.tree_rank_deficient;
  const int gear_row = model.num_constraints() - gears;  // the gears' rows follow the loops' (phi, L, lambda)
  int gear_rank = 0;
  if (gears > 0) {
    gear_rank = close_gears(model, data, *gw, v.data(), gear_row, loops, options, fn);
    deficient = deficient || gear_rank < gears;
    check_finite_result(model, data, data.qdd, fn, "qdd");
  }
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
  for (int k = 0; k < gears; ++k) {  // the gears' rows: G qdd = -2 alpha G v - beta^2 phi_G
    const MimicRelation& gear = model.mimics()[static_cast<std::size_t>(k)];
    const double target = gear_target(model, gear, v.data(), data.loops.phi[gear_row + k], options);
    residual = std::max(residual, std::abs(gear_row_times(model, gear, data.qdd.data()) - target));
    lambda[gear_row + k] = gw->mu[k];
  }
  rank += gear_rank;
  data.loops.rank = rank;
  data.loops.acceleration_residual = residual;
  if (deficient) {
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
