// Composite-rigid-body algorithm, link coordinates (paper 000 §3.2, Eqs. 9-10):
//
//   for i = N..1:
//     f^C_i(i) = I^C_i h_i;  M_ij = h_i^T f^C_j(i) for every j in nu(i)      (Eq. 10)
//     I^C_lambda(i) += lambdaX*_i I^C_i iX_lambda(i)                         (Eq. 9)
//     f^C_j(lambda(i)) = lambdaX*_i f^C_j(i) for every j in nu(i)
//
// Only the support paths are walked, so the zeros of branch-induced sparsity are never touched.
// With depth-first numbering the forces f^C_j of a subtree are the contiguous columns of one
// 6 x k block, moved to the parent frame at once (spatial/columns.hpp); otherwise each column is
// carried up its own support path (the same products, in another order). The transforms are
// typed (model/joint_kernels.hpp): for a revolute joint about a body axis whose X_tree is a pure
// translation, X_up = (rot_k(q), r) and Eqs. 9-10 take the plane rotation's cheaper products.
#include "plucker/algorithms/crba.hpp"

#include <algorithm>

#include "algorithms/workspace.hpp"
#include "spatial/columns.hpp"

namespace plucker {
namespace {

using namespace ops;
using RowMajor6X = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>;

struct CrbaWorkspace : detail::WorkspaceOf<CrbaWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Crba;
  explicit CrbaWorkspace(const Model& model)
      : I_composite(static_cast<std::size_t>(model.nbodies())), F(RowMajor6X::Zero(6, model.nv() + kColumnPadding)) {}
  std::vector<RigidBodyInertia> I_composite;  ///< I^C_i, body coordinates (Eq. 9)
  /// Column j: f^C_j in the frame of the body being processed (rows contiguous: columns as lanes).
  RowMajor6X F;
};

/// Rows iv.. of M for the joint's columns r: M(iv + r, c) = h_r^T F(:, c) for c in [iv, end), and
/// with `mirror` the same values below the diagonal, M(c, iv + r) for c > iv + r (a contiguous
/// piece of a column of M). For a unit column h = e_k the values are row k of F.
template <class J>
void project_rows(const J& joint, const RowMajor6X& F, int iv, int end, bool mirror, MatX& M) {
  const Eigen::Index stride = M.outerStride();
  for (int r = 0; r < joint_dofs(joint); ++r) {
    const int row = iv + r;
    double* m_row = &M(row, iv);
    double* m_col = &M(0, row);
    const auto s = column(joint, r);
    if constexpr (std::is_same_v<std::decay_t<decltype(s)>, UnitColumn>) {
      const double* f_row = &F(s.row, 0);
      for (int c = iv; c < end; ++c) m_row[(c - iv) * stride] = f_row[c];
      if (mirror) std::copy(f_row + row + 1, f_row + end, m_col + row + 1);
    } else {
      // h^T F(:, c) from the rows of F that h touches (weights w, zero rows skipped).
      constexpr bool angular = std::is_same_v<std::decay_t<decltype(s)>, AngularColumn>;
      constexpr bool linear = std::is_same_v<std::decay_t<decltype(s)>, LinearColumn>;
      double w[6] = {};
      if constexpr (angular || linear) {
        for (int k = 0; k < 3; ++k) w[(linear ? 3 : 0) + k] = s.a[k];
      } else {
        for (int k = 0; k < 3; ++k) w[k] = s.angular[k], w[3 + k] = s.linear[k];
      }
      constexpr int first = linear ? 3 : 0, last = angular ? 3 : 6;
      for (int c = iv; c < end; ++c) {
        double x = w[first] * F(first, c);
        for (int k = first + 1; k < last; ++k) x += w[k] * F(k, c);
        m_row[(c - iv) * stride] = x;
        if (mirror && c > row) m_col[c] = x;
      }
    }
  }
}

}  // namespace

void detail::crba_unchecked(const Model& model, Data& data, const double* q, Triangle triangle) {
  CrbaWorkspace& ws = workspace<CrbaWorkspace>(model, data);
  MatX& M = sized(data.M, model.nv(), model.nv());
  const int n = model.nbodies();
  evaluate_sincos(data, q);
  for (int i = 1; i < n; ++i) {
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      compose_up(joint, joint_q(model, data, q, i), X_tree, data.X_up[i]);
    });
    ws.I_composite[i] = model.inertia(i);  // I^C_i = I_i, then Eq. 9 below
  }
  std::fill_n(M.data(), M.size(), 0.0);  // the entries never written are zeros of branch-induced sparsity
  const bool blocks = model.has_contiguous_subtrees();
  const bool mirror = triangle == Triangle::Full;

  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), iv = model.idx_v(i), end = blocks ? model.subtree_v_end(i) : iv;
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      const int d = joint_dofs(joint);
      for (int k = 0; k < d; ++k)  // f^C_i(i) = I^C_i h_i
        store_one(times_column<double>(ws.I_composite[i], column(joint, k)), Columns::of(ws.F, iv + k), 0);
      if (blocks) {
        project_rows(joint, ws.F, iv, end, mirror, M);  // M_ij = h_i^T f^C_j(i), j in nu(i)   (Eq. 10)
      } else {
        for (int k = 0; k < d; ++k) {  // carry column iv + k up the support path of i   (Eq. 10)
          Force f(Vec6(ws.F.col(iv + k)));
          for (int j = i;;) {
            visit_joint(model, j, [&](const auto& joint_j, const auto&) PLUCKER_INLINE {
              double out[6];
              project(joint_j, f, out);
              for (int r = 0; r < joint_j.nv(); ++r) M(model.idx_v(j) + r, iv + k) = out[r];
            });
            if (model.parent(j) == 0) break;
            f = apply_inverse(data.X_up[j], f);
            j = model.parent(j);
          }
        }
      }
      if (p > 0) {
        const auto& X = x_up(joint, joint_q(model, data, q, i), X_tree, data.X_up[i]);
        add_congruence(X, ws.I_composite[i], ws.I_composite[p]);                 // Eq. 9
        if (end > iv) apply_inverse_forces(X, Columns::of(ws.F, iv), end - iv);  // f^C_j(lambda(i))
      }
    });
  }
  if (mirror && !blocks)
    for (int c = 0; c < model.nv(); ++c)
      for (int r = c + 1; r < model.nv(); ++r) M(r, c) = M(c, r);
}

const MatX& crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, Triangle triangle) {
  const detail::DataUse use(model, data, "crba");
  detail::check_arguments("crba", [&] { model.check_configuration(q, "q"); });
  detail::crba_unchecked(model, data, q.data(), triangle);
  return data.M;
}

}  // namespace plucker
