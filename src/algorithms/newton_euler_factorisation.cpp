// The global formulation of a kinematic tree (paper 000 §3.5, Eqs. 23-29): N unconstrained
// bodies with composite vectors a, f in M^6N / F^6N and inertia I = diag(I_i), held together
// by the joint constraints P a = H qdd + Hdot qd (Eq. 29; P the incidence matrix: identity
// blocks on the diagonal, minus identity at (i, parent(i)), in world coordinates; H = diag(h_i)).
// Substituting S = P^-1 H into Eq. 26 gives the Newton-Euler factorisation
//   M = H^T P^-T I P^-1 H
// computed here as the operators it is made of, one column of M per unit qdd_k:
//   P^-1 H e_k: every body of the subtree of joint k accelerates by h_k (a_i = a_parent + h_i e_k)
//   I:          f_i = I_i a_i, body by body
//   P^-T:       F_i = f_i + sum of F over the children (the forces summed over subtrees)
//   H^T:        M_ik = h_i^T F_i.
// O(N nv), never a dense 6N x 6N product: the reference form against which the CRBA is checked.
#include "algorithms/fd_kernels.hpp"

namespace plucker {
namespace {

struct NewtonEulerWorkspace : detail::WorkspaceOf<NewtonEulerWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Global;
  explicit NewtonEulerWorkspace(const Model& model)
      : I(static_cast<std::size_t>(model.nbodies())),
        a(static_cast<std::size_t>(model.nbodies())),
        f(static_cast<std::size_t>(model.nbodies())),
        h(6, model.nv()) {}
  std::vector<Mat6> I;     ///< world inertias (the blocks of I)
  std::vector<Vec6> a, f;  ///< P^-1 H e_k, then I (.) and P^-T (.)
  Matrix6X h;              ///< the blocks of H in world coordinates, one column per DoF
};

}  // namespace

const MatX& mass_matrix_newton_euler(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  const char* fn = "mass_matrix_newton_euler";
  const detail::DataUse use(model, data, fn);
  detail::check_arguments(fn, [&] { model.check_configuration(q, "q"); });
  NewtonEulerWorkspace& ws = detail::workspace<NewtonEulerWorkspace>(model, data);
  const int n = model.nbodies(), nv = model.nv();
  detail::compute_poses(model, data, q.data());
  data.X_base.resize(static_cast<std::size_t>(n));
  data.X_base[0] = Transform();
  for (int i = 1; i < n; ++i) {
    const Transform& X = data.X_base[i] = data.X_up[i] * data.X_base[model.parent(i)];  // i_X_0
    ws.I[i] = model.inertia(i).transformed_inverse(X).matrix();
    ops::visit_joint(model, i, [&](const auto& joint, const auto&) {
      for (int c = 0; c < ops::joint_dofs(joint); ++c) {
        Motion s;
        ops::add_column<double>(s, ops::column(joint, c), 1.0);
        ws.h.col(model.idx_v(i) + c) = X.apply_inverse(s).vector();
      }
    });
  }
  MatX& M = detail::sized(data.M, nv, nv);
  for (int k = 0; k < nv; ++k) {
    const int j = model.joint_of_v(k);
    for (int i = 1; i < n; ++i) {  // a = P^-1 H e_k
      const int p = model.parent(i);
      ws.a[i] = p > 0 ? ws.a[p] : Vec6::Zero();
      if (i == j) ws.a[i] += ws.h.col(k);
      ws.f[i].noalias() = ws.I[i] * ws.a[i];  // I a
    }
    for (int i = n - 1; i > 0; --i)  // P^-T
      if (model.parent(i) > 0) ws.f[model.parent(i)] += ws.f[i];
    for (int i = 1; i < n; ++i) {  // H^T
      const int d = model.joint_nv(i);
      if (d > 0)
        M.col(k).segment(model.idx_v(i), d).noalias() = ws.h.middleCols(model.idx_v(i), d).transpose() * ws.f[i];
    }
  }
  return M;
}

}  // namespace plucker
