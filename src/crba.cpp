// Composite-rigid-body algorithm, link coordinates (paper 000 §3.2, Eqs. 9-10):
//
//   for i = N..1:
//     f^C_i(i) = I^C_i h_i;  M_ij = h_i^T f^C_j(i) for every j in nu(i)      (Eq. 10)
//     I^C_lambda(i) += lambdaX*_i I^C_i iX_lambda(i)                         (Eq. 9)
//     f^C_j(lambda(i)) = lambdaX*_i f^C_j(i) for every j in nu(i)
//
// Only the support paths are walked, so the zero blocks of branch-induced sparsity are
// never touched. When the subtree of every body occupies a contiguous range of velocity
// indices (depth-first numbering), the forces f^C_j of a whole subtree are kept side by
// side as the columns of one 6 x k block and moved to the parent frame by one batched
// transform; otherwise each column is carried up its own support path.
#include "detail/recursion.hpp"
#include "plucker/algorithms/crba.hpp"

namespace plucker {
namespace {

// F <- X^T F for a block of force columns [moment; force]: f' = E^T f, n' = E^T n + r x f'.
template <class Block>
void forces_to_parent(const Transform& X, Block&& F) {
  for (Eigen::Index c = 0; c < F.cols(); ++c) {
    double* col = F.col(c).data();
    const Force f = X.apply_inverse(Force(Eigen::Map<const Vec3>(col), Eigen::Map<const Vec3>(col + 3)));
    Eigen::Map<Vec3>{col} = f.angular;
    Eigen::Map<Vec3>{col + 3} = f.linear;
  }
}

}  // namespace

void detail::crba_unchecked(const Model& model, Data& data, const double* q, Triangle triangle) {
  const int n = model.nbodies();
  detail::evaluate_sincos(data, q);
  for (int i = 1; i < n; ++i) {
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      data.X_up[i] = detail::joint_compose(joint, data, q, model.idx_q(i), model.X_tree(i));
    });
    data.I_composite[i] = model.inertia(i);  // I^C_i = I_i, then Eq. 9 below
  }

  Matrix6X& F = data.U;  // column k holds f^C of velocity k, in the frame of the current body
  data.M.setZero();
  const bool blocks = model.has_contiguous_subtrees();
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (J::NV == 1) {
        if (blocks) {  // the common case, written out: one row of M from one 1 x 6 x k product
          const double one = 1.0;
          const Motion h = joint.motion(&one);
          F.col(iv) = (data.I_composite[i] * h).vector();  // f^C_i(i) = I^C_i h_i
          const int k = model.subtree_v_end(i) - iv;
          data.M.row(iv).segment(iv, k).noalias() = h.vector().transpose().lazyProduct(F.middleCols(iv, k));  // Eq. 10
          return;
        }
      }
      if constexpr (J::NV != 0) {
        const int nv = joint.nv();
        const Mat6 IC = data.I_composite[i].matrix();
        F.middleCols(iv, nv) = joint.times_S(IC);  // f^C_i(i) = I^C_i h_i
        if (blocks) {
          const int end = model.subtree_v_end(i);
          for (int c = iv; c < end; ++c) {  // M_ij = h_i^T f^C_j(i), j in nu(i)   (Eq. 10)
            double out[6];
            joint.project(Force(Vec6(F.col(c))), out);
            for (int r = 0; r < nv; ++r) data.M(iv + r, c) = out[r];
          }
        } else {
          for (int k = 0; k < nv; ++k) {  // carry each column of i up its support path
            Force f(Vec6(F.col(iv + k)));
            double out[6];
            for (int j = i;;) {
              detail::visit_joint(model.joint(j), [&](const auto& joint_j) {
                joint_j.project(f, out);
                for (int r = 0; r < joint_j.nv(); ++r) data.M(model.idx_v(j) + r, iv + k) = out[r];
              });
              if (model.parent(j) == 0) break;
              f = data.X_up[j].apply_inverse(f);
              j = model.parent(j);
            }
          }
        }
      }
    });
    if (p > 0) {
      data.I_composite[i].add_transformed_inverse_to(data.X_up[i], data.I_composite[p]);  // Eq. 9
      if (blocks) {
        const int end = model.subtree_v_end(i);
        if (end > iv) forces_to_parent(data.X_up[i], F.middleCols(iv, end - iv));
      }
    }
  }
  if (triangle == Triangle::Full) data.M.triangularView<Eigen::StrictlyLower>() = data.M.transpose();
}

const MatX& crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, Triangle triangle) {
  detail::check_data(model, data, "crba");
  model.check_configuration(q, "crba: q");
  detail::crba_unchecked(model, data, q.data(), triangle);
  return data.M;
}

}  // namespace plucker
