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
// (h_i = 1) copies I^C_i and six rows of the block. For a revolute joint about a body axis
// whose X_tree is a pure translation, X_up = (rot_k(q), r) and Eq. 9 and the force
// transforms take the plane rotation's cheaper products. Full writes the lower triangle as
// it goes (columns of the column-major M), not by a mirror at the end.
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

// The same for X = (rot_A(q), r), the X_up of a revolute joint about body axis A whose X_tree
// is a pure translation: E^T only turns the plane of the other two axes i, j,
// (E^T x)_i = c x_i - s x_j, (E^T x)_j = s x_i + c x_j with s, c = sin q, cos q (12 flops
// instead of 30 per column for f' and E^T n).
template <int A>
void forces_to_parent(double s, double c, const Vec3& r, Matrix6XRowMajor& F, int c0, int k) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
  double* n[3] = {&F(0, c0), &F(1, c0), &F(2, c0)};
  double* f[3] = {&F(3, c0), &F(4, c0), &F(5, c0)};
#pragma GCC ivdep
  for (int col = 0; col < k; ++col) {
    double fr[3], nr[3];
    fr[A] = f[A][col];
    fr[i] = c * f[i][col] - s * f[j][col];
    fr[j] = s * f[i][col] + c * f[j][col];
    nr[A] = n[A][col];
    nr[i] = c * n[i][col] - s * n[j][col];
    nr[j] = s * n[i][col] + c * n[j][col];
    n[0][col] = nr[0] + r[1] * fr[2] - r[2] * fr[1];
    n[1][col] = nr[1] + r[2] * fr[0] - r[0] * fr[2];
    n[2][col] = nr[2] + r[0] * fr[1] - r[1] * fr[0];
    f[i][col] = fr[i];
    f[j][col] = fr[j];
  }
}

// target += X^T I X (Eq. 9), X = (E, r) = i_X_lambda(i), I = (m, h, Ibar) about body i's origin,
// given h1 = E^T h and the upper triangle of R = E^T Ibar E:
//   h' = h1 + m r,   Ibar' = R - (h1 r^T + r h'^T) + (r.h1 + r.h') 1      (RBDA §2.13)
PLUCKER_HOT inline void add_translated(const Vec3& r, double m, const Vec3& h1, const Mat3& R,
                                      RigidBodyInertia& target) {
  const Vec3 hA = h1 + m * r;
  const double d = r.dot(h1) + r.dot(hA);
  auto entry = [&](int a, int b) { return R(a, b) - (h1[a] * r[b] + r[a] * hA[b]); };
  target.add_parameters(m, hA, entry(0, 0) + d, entry(1, 1) + d, entry(2, 2) + d, entry(0, 1), entry(0, 2),
                        entry(1, 2));
}

// Eq. 9 for any X. Ibar and E^T Ibar E are symmetric: only the 6 upper entries are computed,
// E^T Ibar E as E^T (Ibar E) with 27 + 18 instead of 2 x 27 multiplications.
void add_composite_to_parent(const Transform& X, const RigidBodyInertia& I, RigidBodyInertia& target) {
  const Mat3& E = X.E;
  const Mat3 IE = I.inertia_origin() * E;
  Mat3 R;
  for (int a = 0; a < 3; ++a)
    for (int b = a; b < 3; ++b) R(a, b) = E.col(a).dot(IE.col(b));
  add_translated(X.r, I.mass(), E.transpose() * I.first_moment(), R, target);
}

// Eq. 9 for E = rot_A(q): E^T Ibar E changes only the entries in the (i, j) plane, by the
// double angle C = c^2 - s^2, S = 2 s c; with E^T h, 19m 12a instead of 54m 36a.
template <int A>
void add_composite_to_parent(double s, double c, const Vec3& r, const RigidBodyInertia& I, RigidBodyInertia& target) {
  constexpr int i = (A + 1) % 3, j = (A + 2) % 3;
  const Mat3& B = I.inertia_origin();
  const Vec3& h = I.first_moment();
  Vec3 h1;
  h1[A] = h[A];
  h1[i] = c * h[i] - s * h[j];
  h1[j] = s * h[i] + c * h[j];
  const double C = c * c - s * s, S = 2.0 * s * c;
  const double mean = 0.5 * (B(i, i) + B(j, j)), half_diff = 0.5 * (B(i, i) - B(j, j));
  Mat3 R;  // the upper triangle of E^T B E; (p, q) and (q, p) name the same entry
  auto set = [&R](int p, int q, double x) { R(std::min(p, q), std::max(p, q)) = x; };
  set(A, A, B(A, A));
  set(A, i, c * B(A, i) - s * B(A, j));
  set(A, j, s * B(A, i) + c * B(A, j));
  set(i, i, mean + half_diff * C - B(i, j) * S);
  set(j, j, mean - half_diff * C + B(i, j) * S);
  set(i, j, half_diff * S + B(i, j) * C);
  add_translated(r, I.mass(), h1, R, target);
}

/// Eq. 9 and the subtree's force columns to the parent for X_up[i] = (rot_k(q), r).
void to_parent_axis(int k, double s, double c, const Vec3& r, const RigidBodyInertia& I, RigidBodyInertia& target,
                    Matrix6XRowMajor& F, int c0, int cols) {
  switch (k) {
    case 0:
      add_composite_to_parent<0>(s, c, r, I, target);
      if (cols > 0) forces_to_parent<0>(s, c, r, F, c0, cols);
      break;
    case 1:
      add_composite_to_parent<1>(s, c, r, I, target);
      if (cols > 0) forces_to_parent<1>(s, c, r, F, c0, cols);
      break;
    default:
      add_composite_to_parent<2>(s, c, r, I, target);
      if (cols > 0) forces_to_parent<2>(s, c, r, F, c0, cols);
  }
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
    if (const int k = detail::kUnitAxisRow[model.joint(i).index()]; k >= 0 && k < 3) {  // revolute, body axis
      const int iq = model.idx_q(i);
      data.X_up[i] = detail::compose_revolute_axis(k, data.sin_q[iq], data.cos_q[iq], model.X_tree(i));
    } else {
      detail::visit_joint(model.joint(i), [&](const auto& joint) {
        data.X_up[i] = detail::joint_compose(joint, data, q, model.idx_q(i), model.X_tree(i));
      });
    }
    data.I_composite[i] = model.inertia(i);  // I^C_i = I_i, then Eq. 9 below
  }

  Matrix6XRowMajor& F = data.F_composite;  // column k: f^C of velocity k, in the frame of the current body
  const bool blocks = model.has_contiguous_subtrees();
  // Entries that the walk never writes are zeros of branch-induced sparsity. With blocks, Full
  // writes each row of the upper triangle also as the column below the diagonal (contiguous in
  // the column-major M); a mirror at the end, read along rows, cost a third of a talos_full_ff
  // CRBA.
  MatX& M = data.M;
  const int nv_total = model.nv();
  const bool lower = triangle == Triangle::Full && blocks;
  std::fill_n(M.data(), M.size(), 0.0);
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    const int unit_row = detail::kUnitAxisRow[model.joint(i).index()];
    if (blocks && unit_row >= 0) {
      // The common case, without a std::visit: h_i = e_k, so f^C_i(i) = I^C_i e_k and row i of
      // M is row k of F (Eq. 10), copied by plain loops (Eigen's strided segment copy cost
      // more than the arithmetic on talos_full).
      inertia_column(data.I_composite[i], unit_row, F, iv);  // f^C_i(i) = I^C_i h_i
      const int cols = model.subtree_v_end(i) - iv;
      const double* f_row = &F(unit_row, iv);
      double* m_row = &M(iv, iv);
      const Eigen::Index stride = M.outerStride();
      for (int c = 0; c < cols; ++c) m_row[c * stride] = f_row[c];
      if (lower) std::copy_n(f_row, cols, m_row);  // column iv below the diagonal
    } else {
      detail::visit_joint(model.joint(i), [&](const auto& joint) {
        using J = std::decay_t<decltype(joint)>;
        if constexpr (std::is_same_v<J, JointFreeFlyer>) {
          if (blocks) {  // S = 1 (v = [omega; v] in body coordinates): f^C_i(i) = I^C_i, rows of M = rows of F
            F.middleCols<6>(iv) = data.I_composite[i].matrix();
            const int cols = model.subtree_v_end(i) - iv;
            for (int r = 0; r < 6; ++r) M.row(iv + r).segment(iv, cols) = F.row(r).segment(iv, cols);  // Eq. 10
            if (lower)  // then column iv + r below the diagonal mirrors row iv + r exactly
              for (int r = 0; r < 6; ++r) {
                const int below = cols - r - 1;
                M.col(iv + r).segment(iv + r + 1, below) = F.row(r).segment(iv + r + 1, below).transpose();
              }
            return;
          }
        } else if constexpr (J::NV == 1) {
          if (blocks) {  // one row of M from one 1 x 6 x k product
            const double one = 1.0;
            const Motion h = joint.motion(&one);
            F.col(iv) = (data.I_composite[i] * h).vector();  // f^C_i(i) = I^C_i h_i
            const int k = model.subtree_v_end(i) - iv;
            M.row(iv).segment(iv, k).noalias() = h.vector().transpose().lazyProduct(F.middleCols(iv, k));  // Eq. 10
            if (lower) M.col(iv).segment(iv, k) = M.row(iv).segment(iv, k).transpose();
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
              for (int r = 0; r < nv; ++r) {
                M(iv + r, c) = out[r];
                if (lower && c > iv + r) M(c, iv + r) = out[r];  // mirrors the own block exactly
              }
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
    }
    if (p > 0) {
      const int end = blocks ? model.subtree_v_end(i) : iv;
      if (unit_row >= 0 && unit_row < 3 && model.X_tree_is_translation(i)) {
        const int iq = model.idx_q(i);  // X_up[i] = (rot_k(q), r), k = unit_row
        to_parent_axis(unit_row, data.sin_q[iq], data.cos_q[iq], model.X_tree(i).r, data.I_composite[i],
                       data.I_composite[p], F, iv, end - iv);  // Eq. 9
      } else {
        add_composite_to_parent(data.X_up[i], data.I_composite[i], data.I_composite[p]);  // Eq. 9
        if (end > iv) forces_to_parent(data.X_up[i], F, iv, end - iv);
      }
    }
  }
  if (triangle == Triangle::Full && !blocks)
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
