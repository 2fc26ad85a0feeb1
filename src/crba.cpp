// Composite-rigid-body algorithm (paper 000 §3.2).
//
// Eqs. 9-10 in absolute (world) coordinates: with every h_j and I^C_i expressed in one
// frame, M_ji = h_j^T I^C_i h_i for each j on the support path of i, and the composite
// inertias accumulate by plain addition (Eq. 9). The paper notes the link-coordinate form
// wins only for small n; in world coordinates each M entry is one 6-vector dot product
// instead of one force transform per entry, and the zero blocks of branch-induced
// sparsity are never visited (only the support path of each body is walked).
#include "detail/checks.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker {

const MatX& crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, Triangle triangle) {
  detail::check_data(model, data, "crba");
  model.check_configuration(q, "crba: q");
  const int n = model.nbodies();

  // Poses, world-frame motion subspaces h_i and body inertias I_i.
  data.X_base[0] = Transform();
  detail::evaluate_sincos(data, q.data());
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      data.X_up[i] = detail::joint_compose(joint, data, q.data(), model.idx_q(i), model.X_tree(i));
      data.X_base[i] = data.X_up[i] * data.X_base[p];
      using J = std::decay_t<decltype(joint)>;
      if constexpr (J::NV == 1) {
        const double one = 1.0;
        data.S_world.col(model.idx_v(i)) = data.X_base[i].apply_inverse(joint.motion(&one)).vector();
      } else if constexpr (J::NV != 0) {
        const MatS6 S = joint.S();
        for (int k = 0; k < S.cols(); ++k)
          data.S_world.col(model.idx_v(i) + k) = data.X_base[i].apply_inverse(Motion(Vec6(S.col(k)))).vector();
      }
    });
    data.I_composite[i] = model.inertia(i).transformed_inverse(data.X_base[i]);
  }

  data.M.setZero();
  for (int i = n - 1; i > 0; --i) {
    const int nv_i = model.joint_nv(i), col = model.idx_v(i);
    // I^C_i is complete here: every child (index > i) has already been added (Eq. 9).
    for (int k = 0; k < nv_i; ++k) {
      const Force F = data.I_composite[i] * Motion(Vec6(data.S_world.col(col + k)));  // f^C_i = I^C_i h_i
      const Vec6 Fv = F.vector();
      for (int j = i; j > 0; j = model.parent(j)) {  // support path of i: Eq. 10
        const int row = model.idx_v(j);
        for (int r = 0; r < model.joint_nv(j); ++r) data.M(row + r, col + k) = data.S_world.col(row + r).dot(Fv);
      }
    }
    const int p = model.parent(i);
    if (p > 0) data.I_composite[p] += data.I_composite[i];  // Eq. 9
  }
  // Within a multi-DoF joint's diagonal block the loop above wrote the full block; above the
  // diagonal it wrote M(j, i) with j an ancestor, so j < i and M is upper-triangular-complete.
  if (triangle == Triangle::Full) data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose();
  return data.M;
}

}  // namespace plucker
