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
// side as the columns of one 6 x k block (row-major, Data::F_composite) and moved to the
// parent frame by one transform whose loop runs along the rows in SIMD lanes; otherwise
// each column is carried up its own support path. Unit-axis joints (h_i = e_k) read
// f^C_i off the compact inertia and row i of M off row k of the block; a free-flyer
// (h_i = 1) copies I^C_i and six rows of the block.
#include <algorithm>
#include <string>

#include "detail/recursion.hpp"
#include "plucker/algorithms/crba.hpp"
#include "plucker/algorithms/forward_dynamics.hpp"  // dof_parents
#include "plucker/errors.hpp"

namespace plucker {
namespace {

// F <- X^T F for the force columns c0..c0+k-1 of the row-major F: f' = E^T f, n' = E^T n + r x f'
// (the force transform lambda_X*_i, RBDA §2.8). Each row is contiguous, so the loop over the
// columns runs in SIMD lanes (the rows never overlap, hence ivdep).
void forces_to_parent(const Transform& X, Matrix6XRowMajor& F, int c0, int k) {
  const Mat3& E = X.E;
  const Vec3& r = X.r;
  double* n0 = &F(0, c0); double* n1 = &F(1, c0); double* n2 = &F(2, c0);
  double* f0 = &F(3, c0); double* f1 = &F(4, c0); double* f2 = &F(5, c0);
#pragma GCC ivdep
  for (int c = 0; c < k; ++c) {
    const double fx = E(0, 0) * f0[c] + E(1, 0) * f1[c] + E(2, 0) * f2[c];
    const double fy = E(0, 1) * f0[c] + E(1, 1) * f1[c] + E(2, 1) * f2[c];
    const double fz = E(0, 2) * f0[c] + E(1, 2) * f1[c] + E(2, 2) * f2[c];
    const double nx = E(0, 0) * n0[c] + E(1, 0) * n1[c] + E(2, 0) * n2[c];
    const double ny = E(0, 1) * n0[c] + E(1, 1) * n1[c] + E(2, 1) * n2[c];
    const double nz = E(0, 2) * n0[c] + E(1, 2) * n1[c] + E(2, 2) * n2[c];
    n0[c] = nx + r[1] * fz - r[2] * fy;
    n1[c] = ny + r[2] * fx - r[0] * fz;
    n2[c] = nz + r[0] * fy - r[1] * fx;
    f0[c] = fx;
    f1[c] = fy;
    f2[c] = fz;
  }
}

// target += X^T I X (Eq. 9), X = (E, r) = i_X_lambda(i), I = (m, h, Ibar) about body i's origin:
//   h' = h1 + m r with h1 = E^T h,   Ibar' = E^T Ibar E - (h1 r^T + r h'^T) + (r.h1 + r.h') 1
// (RBDA §2.13). Both Ibar and Ibar' are symmetric: only the 6 upper entries are computed,
// E^T Ibar E as E^T (Ibar E) with 27 + 18 instead of 2 x 27 multiplications.
void add_composite_to_parent(const Transform& X, const RigidBodyInertia& I, RigidBodyInertia& target) {
  const Mat3& E = X.E;
  const Vec3& r = X.r;
  const double m = I.mass();
  const Vec3 h1 = E.transpose() * I.first_moment();
  const Vec3 hA = h1 + m * r;
  const Mat3 IE = I.inertia_origin() * E;
  const double d = r.dot(h1) + r.dot(hA);
  auto entry = [&](int a, int b) { return E.col(a).dot(IE.col(b)) - (h1[a] * r[b] + r[a] * hA[b]); };
  target.add_parameters(m, hA, entry(0, 0) + d, entry(1, 1) + d, entry(2, 2) + d, entry(0, 1), entry(0, 2),
                        entry(1, 2));
}

// Column c of F = I e_k, read off the compact inertia I = [Ibar hx; hx^T m 1] (column k), entry
// by entry: I is I^C_i, just updated entry by entry by its last child (add_parameters), and
// reading it back as 2-lane packets stalled store forwarding.
void inertia_column(const RigidBodyInertia& I, int k, Matrix6XRowMajor& F, int c) {
  const Mat3& Ib = I.inertia_origin();
  const Vec3& h = I.first_moment();
  const int a = k % 3, i = (a + 1) % 3, j = (a + 2) % 3;
  if (k < 3) {  // [Ibar e_k; e_k x h]
    F(0, c) = Ib(0, k);
    F(1, c) = Ib(1, k);
    F(2, c) = Ib(2, k);
    F(3 + a, c) = 0.0;
    F(3 + i, c) = -h[j];
    F(3 + j, c) = h[i];
  } else {  // [h x e_a; m e_a]
    F(a, c) = 0.0;
    F(i, c) = h[j];
    F(j, c) = -h[i];
    F(3 + a, c) = I.mass();
    F(3 + i, c) = 0.0;
    F(3 + j, c) = 0.0;
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

  Matrix6XRowMajor& F = data.F_composite;  // column k: f^C of velocity k, in the frame of the current body
  const bool blocks = model.has_contiguous_subtrees();
  // Entries of the upper triangle that the walk never writes are zeros of branch-induced
  // sparsity; for Full the strict lower triangle is overwritten by the mirror at the end.
  MatX& M = data.M;
  const int nv_total = model.nv();
  if (triangle == Triangle::Full && blocks)  // plain loops: cheaper than Eigen's triangular views at small nv
    for (int c = 0; c < nv_total; ++c) std::fill_n(M.col(c).data(), c + 1, 0.0);
  else
    std::fill_n(M.data(), M.size(), 0.0);
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (detail::unit_axis_row<J> >= 0) {
        if (blocks) {  // the common case: h_i = e_k, so f^C_i(i) = I^C_i e_k and row i of M is row k of F
          constexpr int k = detail::unit_axis_row<J>;
          inertia_column(data.I_composite[i], k, F, iv);  // f^C_i(i) = I^C_i h_i
          const int cols = model.subtree_v_end(i) - iv;
          data.M.row(iv).segment(iv, cols) = F.row(k).segment(iv, cols);  // Eq. 10
          return;
        }
      } else if constexpr (std::is_same_v<J, JointFreeFlyer>) {
        if (blocks) {  // S = 1 (v = [omega; v] in body coordinates): f^C_i(i) = I^C_i, rows of M = rows of F
          F.middleCols<6>(iv) = data.I_composite[i].matrix();
          const int cols = model.subtree_v_end(i) - iv;
          for (int r = 0; r < 6; ++r) data.M.row(iv + r).segment(iv, cols) = F.row(r).segment(iv, cols);  // Eq. 10
          return;
        }
      } else if constexpr (J::NV == 1) {
        if (blocks) {  // one row of M from one 1 x 6 x k product
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
      add_composite_to_parent(data.X_up[i], data.I_composite[i], data.I_composite[p]);  // Eq. 9
      if (blocks) {
        const int end = model.subtree_v_end(i);
        if (end > iv) forces_to_parent(data.X_up[i], F, iv, end - iv);
      }
    }
  }
  if (triangle == Triangle::Full)
    for (int c = 0; c < nv_total; ++c)
      for (int r = c + 1; r < nv_total; ++r) M(r, c) = M(c, r);
}

const MatX& crba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, Triangle triangle) {
  detail::check_data(model, data, "crba");
  model.check_configuration(q, "crba: q");
  detail::crba_unchecked(model, data, q.data(), triangle);
  return data.M;
}

JsimPattern jsim_pattern(const Model& model) {
  const std::vector<int> lambda = dof_parents(model);
  const int nv = model.nv();
  JsimPattern pattern;
  pattern.row_start.assign(static_cast<std::size_t>(nv) + 1, 0);
  std::vector<int> ancestors;
  for (int k = 0; k < nv; ++k) {
    ancestors.clear();
    for (int j = k; j >= 0; j = lambda[static_cast<std::size_t>(j)]) ancestors.push_back(j);
    pattern.col.insert(pattern.col.end(), ancestors.rbegin(), ancestors.rend());  // ascending, k last
    pattern.row_start[static_cast<std::size_t>(k) + 1] = static_cast<int>(pattern.col.size());
  }
  return pattern;
}

namespace {
void check_pattern_sizes(const char* fn, const JsimPattern& pattern, Eigen::Index M_rows, Eigen::Index M_cols,
                         Eigen::Index packed_size) {
  const Eigen::Index nv = static_cast<Eigen::Index>(pattern.row_start.size()) - 1;
  if (nv < 0 || static_cast<Eigen::Index>(pattern.col.size()) != pattern.nnz())
    throw InvalidArgument(std::string(fn) + ": the pattern is not one jsim_pattern made");
  if (M_rows != nv || M_cols != nv)
    throw InvalidArgument(std::string(fn) + ": M is " + std::to_string(M_rows) + " x " + std::to_string(M_cols) +
                          ", expected nv x nv = " + std::to_string(nv) + " x " + std::to_string(nv));
  if (packed_size != pattern.nnz())
    throw InvalidArgument(std::string(fn) + ": packed has " + std::to_string(packed_size) +
                          " entries, expected the pattern's nnz = " + std::to_string(pattern.nnz()));
}
}  // namespace

void pack_jsim(const JsimPattern& pattern, const Eigen::Ref<const MatX>& M, Eigen::Ref<VecX> packed) {
  check_pattern_sizes("pack_jsim", pattern, M.rows(), M.cols(), packed.size());
  const std::vector<int>& start = pattern.row_start;
  const std::vector<int>& col = pattern.col;
  for (std::size_t k = 0; k + 1 < start.size(); ++k)
    for (int e = start[k]; e < start[k + 1]; ++e)
      packed[e] = M(col[static_cast<std::size_t>(e)], static_cast<Eigen::Index>(k));  // upper triangle, column k
}

void unpack_jsim(const JsimPattern& pattern, const Eigen::Ref<const VecX>& packed, Eigen::Ref<MatX> M) {
  check_pattern_sizes("unpack_jsim", pattern, M.rows(), M.cols(), packed.size());
  M.setZero();
  const std::vector<int>& start = pattern.row_start;
  const std::vector<int>& col = pattern.col;
  for (std::size_t k = 0; k + 1 < start.size(); ++k)
    for (int e = start[k]; e < start[k + 1]; ++e) {
      const Eigen::Index r = static_cast<Eigen::Index>(k), j = col[static_cast<std::size_t>(e)];
      M(r, j) = M(j, r) = packed[e];
    }
}

}  // namespace plucker
