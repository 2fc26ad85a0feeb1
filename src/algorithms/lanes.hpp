// The batched recursions over W states at once, one state per SIMD lane (spatial/simd.hpp):
// rnea_passes and aba_passes of rnea.hpp / aba.hpp instantiated on simd::Pack, and the CRBA in
// the frames of the subtrees' top bodies, and the derivatives. Used by batch.cpp for every full
// group of W consecutive states. Bodies in batch_lanes.cpp, the derivatives' in derivatives.cpp.
#pragma once

#include <memory>
#include <vector>

#include "algorithms/workspace.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker::detail {

/// The derivatives' lane workspace (derivatives.cpp).
struct DerivativeLanes;
struct DerivativeLanesDeleter {
  void operator()(DerivativeLanes* p) const;
};

/// Per-thread scratch of the lane kernels, sized for a model at construction (so that a warm
/// batched call allocates nothing). Everything is indexed as in Data.
struct LaneScratch {
  explicit LaneScratch(const Model& model);

  using Pack = simd::Pack;
  std::vector<Pack> q, sin_q, cos_q;                   ///< nq: the W states' coordinates, sin, cos
  std::vector<Pack> qd, x;                             ///< nv: velocities; accelerations or torques
  std::vector<Pack> out;                               ///< nv: tau (RNEA) or qdd (ABA)
  std::vector<ops::XformT<Pack>> X_up;                 ///< i_X_lambda(i)
  std::vector<ops::MotionT<Pack>> v, a, c;             ///< velocities, accelerations, v_i x h_i qd_i
  std::vector<ops::ForceT<Pack>> f;                    ///< RNEA: f_i;  ABA: p^A_i
  std::vector<ops::ArticulatedT<Pack>> I_articulated;  ///< ABA: I^A_i, packed
  std::vector<ops::ForceT<Pack>> U;                    ///< ABA: U = I^A S, one column per velocity
  std::vector<Pack> D_inv;                             ///< ABA: joint i's d x d D^-1 at 6 idx_v(i)
  std::vector<Pack> u;                                 ///< ABA: u = tau - S^T p^A
  std::vector<ops::InertiaT<Pack>> I_composite;        ///< CRBA: I^C_i in the frame of the top body t(i)
  std::vector<ops::XformT<Pack>> X_top;                ///< CRBA: i_X_t(i) (bodies below a top body)
  std::vector<ops::MotionT<Pack>> S;  ///< CRBA: h_k, column k of S_i in the frame of t(i), per velocity
  /// The derivatives' own (made by the first batched derivative call on this thread).
  std::unique_ptr<DerivativeLanes, DerivativeLanesDeleter> derivatives;
};

/// X(k, b0 + l) of the W states b0 .. b0 + W - 1 into out[k][l] (one Pack per row), and q of
/// those states with sin and cos of all their coordinates into s.
void gather(const Eigen::Ref<const MatX>& X, Eigen::Index b0, simd::Pack* out);
void load_configurations(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, Eigen::Index b0);

// The recursions for states b0 .. b0 + W - 1 (columns of Q, V, ...), inputs validated.
void rnea_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
                const Eigen::Ref<const MatX>& A, Eigen::Index b0, Eigen::Ref<MatX>& Tau);
/// False (and Qdd untouched) when the articulated inertia of some joint is singular in some lane:
/// the caller then evaluates those states one by one, which names the joint.
bool aba_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q, const Eigen::Ref<const MatX>& V,
               const Eigen::Ref<const MatX>& Tau, Eigen::Index b0, Eigen::Ref<MatX>& Qdd);
/// What crba_lanes writes for state b: Full, Upper: M(q_b) into columns [b nv, (b + 1) nv) of M,
/// the same entries as crba(q_b, triangle) writes; Packed: M(q_b)'s nonzeros in jsim_pattern
/// order into column b.
enum class CrbaOut { Full, Upper, Packed };
void crba_lanes(const Model& model, const JsimPattern& pattern, LaneScratch& s, const Eigen::Ref<const MatX>& Q,
                Eigen::Index b0, CrbaOut out, Eigen::Ref<MatX>& M);

/// d tau / d q and d tau / d v of the W states into their nv x nv blocks of dTau_dq and
/// dTau_dv (columns [b nv, (b + 1) nv)); false when some lane's result is not finite (the caller
/// then evaluates those states one by one, which names what overflowed).
bool rnea_derivatives_lanes(const Model& model, LaneScratch& s, const Eigen::Ref<const MatX>& Q,
                            const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& A, Eigen::Index b0,
                            Eigen::Ref<MatX>& dTau_dq, Eigen::Ref<MatX>& dTau_dv);
/// d qdd / d q, d qdd / d v and M^-1 likewise (data: the thread's workspace, for M^-1); false
/// also when some state's M is singular.
bool aba_derivatives_lanes(const Model& model, LaneScratch& s, Data& data, const Eigen::Ref<const MatX>& Q,
                           const Eigen::Ref<const MatX>& V, const Eigen::Ref<const MatX>& Tau, Eigen::Index b0,
                           Eigen::Ref<MatX>& dQdd_dq, Eigen::Ref<MatX>& dQdd_dv, Eigen::Ref<MatX>& dQdd_dtau);

}  // namespace plucker::detail
