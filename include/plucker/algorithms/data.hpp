// The workspace of the algorithms, one per Model and per thread.
//
// Data(model) holds only the O(N) state that every recursion shares (poses, velocities,
// accelerations, forces); each algorithm's own scratch (the CRBA's force columns, the ABA's
// articulated inertias, the O(N^2) blocks of M^-1, the dense matrices) is made on the first
// call that needs it and reused afterwards, so that a user of rnea/aba on a 100,000-body model
// never pays for an nv x nv matrix. Once an algorithm has run on a Data, calling it again
// allocates nothing (tested).
//
// One Data per thread: two calls may not use one Data at the same time (debug builds detect
// it and throw InvalidArgument).
//
// Frames: everything indexed by body is in that body's coordinates unless its name says
// otherwise. X_up[i] = i_X_parent(i); X_base[i] = i_X_0 (world -> body i).
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <vector>

#include "plucker/model/model.hpp"
#include "plucker/spatial/frames.hpp"

namespace plucker {

using Matrix6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
using Matrix3X = Eigen::Matrix<double, 3, Eigen::Dynamic>;

namespace detail {
/// The scratch of one algorithm family, defined in the library beside the algorithm that owns it.
struct Workspace {
  virtual ~Workspace() = default;
  virtual std::unique_ptr<Workspace> clone() const = 0;
};
/// One slot per algorithm family.
inline constexpr int kWorkspaceSlots = 20;
/// The slots; a copy of a Data copies each made workspace.
class WorkspaceSlots {
 public:
  WorkspaceSlots() = default;
  WorkspaceSlots(const WorkspaceSlots& other);
  WorkspaceSlots& operator=(const WorkspaceSlots& other);
  WorkspaceSlots(WorkspaceSlots&&) noexcept = default;
  WorkspaceSlots& operator=(WorkspaceSlots&&) noexcept = default;
  std::unique_ptr<Workspace>& operator[](int k) { return slots_[static_cast<std::size_t>(k)]; }
  const Workspace* get(int k) const { return slots_[static_cast<std::size_t>(k)].get(); }

 private:
  std::array<std::unique_ptr<Workspace>, kWorkspaceSlots> slots_;
};
/// The thread using a Data, and how deeply (debug builds): a second thread is an error.
class UseCounter {
 public:
  UseCounter() = default;
  UseCounter(const UseCounter&) {}
  UseCounter& operator=(const UseCounter&) { return *this; }
  std::atomic<const void*>& owner() const { return owner_; }
  int& depth() const { return depth_; }

 private:
  mutable std::atomic<const void*> owner_{nullptr};
  mutable int depth_ = 0;  ///< written by the owner only
};
}  // namespace detail

struct Data {
  explicit Data(const Model& model);

  // ---- the state every recursion shares (body coordinates) ----
  std::vector<Transform> X_up;  ///< i_X_lambda(i): parent -> body
  std::vector<Motion> v;        ///< body spatial velocities
  std::vector<Motion> a;        ///< body spatial accelerations (gravity included in rnea/aba)
  std::vector<Force> f;         ///< joint forces f^J (Eq. 7)
  VecX sin_q, cos_q;            ///< sin and cos of every coordinate of q, evaluated once per call

  // ---- results (sized on first use) ----
  VecX tau;                       ///< rnea / nonlinear_effects / gravity_torques
  VecX qdd;                       ///< aba / forward dynamics
  MatX M;                         ///< crba (nv x nv); the factorisations work in place on it
  MatX Minv;                      ///< minv (nv x nv); aba_derivatives: d qdd / d tau
  MatX dtau_dq, dtau_dv;          ///< rnea_derivatives (nv x nv; d tau / d a is M)
  MatX dqdd_dq, dqdd_dv;          ///< aba_derivatives (nv x nv)
  std::vector<Transform> X_base;  ///< i_X_0: world -> body (forward_kinematics, Jacobians, world f_ext)
  Matrix6X J;                     ///< body_jacobian (6 x nv)
  Matrix3X J_com;                 ///< center_of_mass_jacobian (3 x nv)
  Vec3 com = Vec3::Zero();        ///< center_of_mass / center_of_mass_jacobian
  struct CgReport {
    int iterations = 0;              ///< iterations done
    double relative_residual = 0.0;  ///< |b - M x| / |b| at exit
    /// The normwise backward error at exit of the system scaled by M's diagonal D:
    /// |D^-1/2 (b - M x)| / (|D^1/2 x| + |D^-1/2 b|) (D^-1/2 M D^-1/2 has unit diagonal).
    double backward_error = 0.0;
    bool converged = false;  ///< relative_residual <= the tolerance asked for, or backward_error <= 10 eps
  } cg;                      ///< the last conjugate-gradient solve
  /// Results of the closed-loop functions (constraints/), sized for Model::num_constraints().
  struct LoopResults {
    int nc = 0;                          ///< Model::num_constraints() when this Data was made
    VecX phi;                            ///< phi(q) (nc)
    MatX L;                              ///< loop Jacobian (nc x nv)
    VecX c;                              ///< bias, L qdd = c (nc)
    VecX lambda;                         ///< constraint multipliers of the last constrained solve (nc)
    int rank = 0;                        ///< rank of L found by the last constrained solve
    double acceleration_residual = 0.0;  ///< max |L qdd - c| of the last constrained solve
    bool range_space_fell_back = false;  ///< the last range_space solve was too ill-conditioned: solved as kkt
    /// constrained_forward_dynamics_derivatives: d qdd / d(q, v, tau) (nv x nv) and
    /// d lambda / d(q, v, tau) (nc x nv).
    MatX dqdd_dq, dqdd_dv, dqdd_dtau, dlambda_dq, dlambda_dv, dlambda_dtau;
  } loops;

  int nbodies = 0, nq = 0, nv = 0;  ///< sizes of the model it was made for

  /// Each algorithm family's scratch; opaque here.
  detail::WorkspaceSlots workspaces;
  mutable detail::UseCounter in_use;
};

}  // namespace plucker
