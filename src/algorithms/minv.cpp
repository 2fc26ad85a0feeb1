// The inverse of the joint-space inertia matrix in closed form (paper 002 §6):
//   psi^-1 = phi^-1 + K H                            (Lemma 6.1)
//   [I + H phi K]^-1 = [I - H psi K]                 (Lemma 6.3)
//   M^-1 = [I - H psi K]* D^-1 [I - H psi K]         (Lemma 6.4)
// Eq. 46 applies this operator to one vector T in O(N): z = psi K T and eps = [I - H psi K] T
// leaves to root, nu = D^-1 eps, then qdd = nu - K* alpha root to leaves. Applying it to the
// matrix T = I (every unit joint force at once) gives M^-1 without forming or factorising M
// (the idea of Carpentier's analytical M^-1 in Pinocchio). The columns are sparse on the way in:
// z(k) is nonzero only in the columns of the subtree nu(k), so the inward sweep costs
// sum_k |nu(k)|; on the way out alpha(k) fills every column, and symmetry halves the work: row
// block k is needed only for the columns >= idx_v(k) (the upper triangle), and so is alpha(k).
// O(N^2) in all, with a 6 x (nv - idx_v(k)) block per body for z(k), then alpha(k), whose
// columns are moved between frames W at a time (spatial/columns.hpp).
#include "algorithms/fd_kernels.hpp"
#include "spatial/columns.hpp"

namespace plucker {
namespace {

using namespace ops;
using RowMajor6X = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::RowMajor>;

struct MinvWorkspace : detail::WorkspaceOf<MinvWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Minv;
  explicit MinvWorkspace(const Model& model) : F(static_cast<std::size_t>(model.nbodies())) {
    for (int i = 1; i < model.nbodies(); ++i) F[i] = RowMajor6X::Zero(6, model.nv() - model.idx_v(i) + kColumnPadding);
  }
  /// Per body k, its 6 x (nv - idx_v(k)) block: z(k) on the way in, alpha(k) on the way out;
  /// column c is velocity index idx_v(k) + c.
  std::vector<RowMajor6X> F;
};

}  // namespace

namespace detail {

const MatX& minv_impl(const Model& model, Data& data) {
  const int n = model.nbodies(), nv = model.nv();
  MinvWorkspace& ws = workspace<MinvWorkspace>(model, data);
  const InnovationsWorkspace& factors = innovations_factor(model, data);  // P, D^-1, U = P H* (Eq. 45)
  MatX& Minv = sized(data.Minv, nv, nv);
  Minv.setZero();
  for (int i = 1; i < n; ++i) ws.F[i].setZero();

  // Inward (Eq. 46 on T = I): eps(k) = T(k) - H(k) z(k), nu(k) = D^-1 eps(k) into row block k,
  // z+(k) = z(k) + G(k) eps(k) = z(k) + U(k) nu(k), z(k+1) += phi(k+1, k) z+(k).
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i), c0 = model.idx_v(i), m = model.subtree_v_end(i) - c0;
    const Columns z = Columns::of(ws.F[i], 0);  // column c <-> velocity index c0 + c: the subtree's
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      const int d = joint_dofs(joint);
      if (d == 0) return;
      const double* Dinv = factors.D_inv.data() + 6 * c0;
      const Force* U = factors.U.data() + c0;
      for (int c = 0; c < m; ++c) {
        Force zc = load_one<Force>(z, c);
        double eps[6], nu[6];
        project(joint, zc, eps);
        for (int r = 0; r < d; ++r) eps[r] = (r == c ? 1.0 : 0.0) - eps[r];  // eps = T(k) - H(k) z(k)
        for (int r = 0; r < d; ++r) {                                        // nu(k) = D^-1 eps(k)
          double s = Dinv[r * d] * eps[0];
          for (int k = 1; k < d; ++k) s += Dinv[r * d + k] * eps[k];
          nu[r] = Minv(c0 + r, c0 + c) = s;
        }
        for (int k = 0; k < d; ++k) zc += U[k] * nu[k];  // z+(k) = z(k) + G(k) eps(k)
        store_one(zc, z, c);
      }
    });
    if (p > 0)  // z(k+1) += phi(k+1, k) z+(k)
      add_apply_inverse_forces(data.X_up[i], z, Columns::of(ws.F[p], c0 - model.idx_v(p)), m);
  }

  // Outward: alpha+(k) = phi*(k+1, k) alpha(k+1), qdd(k) = nu(k) - G*(k) alpha+(k),
  // alpha(k) = alpha+(k) + H*(k) qdd(k), for the columns >= idx_v(k) (the upper triangle).
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i), c0 = model.idx_v(i), w = nv - c0;
    const Columns alpha = Columns::of(ws.F[i], 0);  // all w = nv - c0 columns
    if (p > 0)
      apply_motions(data.X_up[i], Columns::of(ws.F[p], c0 - model.idx_v(p)), alpha, w);  // alpha+(k)
    else
      ws.F[i].setZero();  // the base does not move (at rest, no gravity)
    visit_joint(model, i, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      const int d = joint_dofs(joint);
      if (d == 0) return;
      const double* Dinv = factors.D_inv.data() + 6 * c0;
      Force GT[6];  // rows of G*(k) = D^-1 U^T
      for (int r = 0; r < d; ++r) {
        GT[r] = factors.U[c0] * Dinv[r * d];
        for (int k = 1; k < d; ++k) GT[r] += factors.U[c0 + k] * Dinv[r * d + k];
      }
      for (int c = 0; c < w; ++c) {
        Motion a = load_one<Motion>(alpha, c);
        double qdd[6];
        for (int r = 0; r < d; ++r) qdd[r] = Minv(c0 + r, c0 + c) -= dot(a, GT[r]);  // nu(k) - G*(k) alpha+(k)
        add_motion(joint, a, qdd);  // alpha(k) = alpha+(k) + H*(k) qdd(k)
        store_one(a, alpha, c);
      }
    });
  }
  Minv.triangularView<Eigen::StrictlyLower>() = Minv.transpose();  // symmetry
  return Minv;
}

}  // namespace detail

const MatX& minv(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  const detail::DataUse use(model, data, "minv");
  detail::check_arguments("minv", [&] { model.check_configuration(q, "q"); });
  detail::compute_poses(model, data, q.data());
  return detail::minv_impl(model, data);
}

}  // namespace plucker
