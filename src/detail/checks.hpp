// Argument checks shared by the algorithms: done once at the API boundary, so the
// recursions themselves never test or throw.
#pragma once

#include <string>

#include "plucker/algorithms/rnea.hpp"
#include "plucker/errors.hpp"
#include "sincos.hpp"

namespace plucker::detail {

inline void check_data(const Model& model, const Data& data, const char* fn) {
  if (data.nbodies != model.nbodies() || data.nq != model.nq() || data.nv != model.nv())
    throw InvalidArgument(std::string(fn) + ": Data was made for a different model (nbodies " +
                          std::to_string(data.nbodies) + " vs " + std::to_string(model.nbodies()) + ")");
}

inline void check_forces(const Model& model, ExternalForces f_ext, const char* fn) {
  if (static_cast<int>(f_ext.size()) != model.nbodies())
    throw InvalidArgument(std::string(fn) + ": f_ext has " + std::to_string(f_ext.size()) +
                          " entries, expected nbodies = " + std::to_string(model.nbodies()));
  for (int i = 0; i < model.nbodies(); ++i)
    if (!f_ext[i].angular.allFinite() || !f_ext[i].linear.allFinite())
      throw InvalidArgument(std::string(fn) + ": f_ext is not finite on body '" + model.body_name(i) + "'");
}

/// Dispatch once per body to the joint kind's kernel.
template <class F>
inline decltype(auto) visit_joint(const JointModel& joint, F&& f) {
  return std::visit(std::forward<F>(f), joint);
}

/// X_J(q_i) X_tree(i), using the sines and cosines that the algorithm evaluated for all of q
/// at once (Data::sin_q, cos_q) when the joint kind can use them.
template <class J>
inline Transform joint_compose(const J& joint, const Data& data, const double* q, int iq, const Transform& X_tree) {
  if constexpr (requires { joint.compose_sc(0.0, 0.0, X_tree); })
    return joint.compose_sc(data.sin_q[iq], data.cos_q[iq], X_tree);
  else
    return joint.compose(q + iq, X_tree);
}

/// Evaluates sin and cos of every coordinate of q into Data (see sincos.hpp).
inline void evaluate_sincos(Data& data, const double* q) {
  sincos_batch(q, data.sin_q.data(), data.cos_q.data(), data.nq);
}

/// Compile-time sizes of a joint kind's per-joint matrices (NV may be Dynamic, at most 6).
template <class J>
struct JointDims {
  static constexpr int nv = J::NV;
  static constexpr int max = J::NV == Eigen::Dynamic ? 6 : J::NV;
  using MatU = Eigen::Matrix<double, 6, nv, 0, 6, max>;
  using MatD = Eigen::Matrix<double, nv, nv, 0, max, max>;
  using VecD = Eigen::Matrix<double, nv, 1, 0, max, 1>;
};

/// Relative size below which a joint-space pivot counts as zero (massless moving subtree).
inline constexpr double kSingularPivot = 1e-12;

}  // namespace plucker::detail
