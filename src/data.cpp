#include "plucker/algorithms/data.hpp"

#include "detail/loop_kernels.hpp"

#include "plucker/algorithms/forward_dynamics.hpp"

namespace plucker {

Data::Data(const Model& model) : nbodies(model.nbodies()), nq(model.nq()), nv(model.nv()) {
  const std::size_t n = static_cast<std::size_t>(nbodies);
  X_up.resize(n);
  X_base.resize(n);
  v.resize(n);
  a.resize(n);
  f.resize(n);
  sin_q = VecX::Zero(nq);
  cos_q = VecX::Zero(nq);
  tau = VecX::Zero(nv);
  I_composite.resize(n);
  M = MatX::Zero(nv, nv);
  F_composite = Matrix6XRowMajor::Zero(6, nv);
  I_articulated.resize(n);
  p_articulated.resize(n);
  c.resize(n);
  U = Matrix6X::Zero(6, nv);
  D_offset.resize(n, 0);
  int offset = 0;
  for (int i = 0; i < nbodies; ++i) {
    D_offset[i] = offset;
    offset += model.joint_nv(i) * model.joint_nv(i);
  }
  D_inv = VecX::Zero(offset);
  u = VecX::Zero(nv);
  qdd = VecX::Zero(nv);
  L = MatX::Zero(nv, nv);
  rhs = VecX::Zero(nv);
  J = Matrix6X::Zero(6, nv);
  J_com = Matrix3X::Zero(3, nv);
  subtree_mass.resize(n, 0.0);
  subtree_first_moment.resize(n, Vec3::Zero());
  f_ext_body.resize(n);

  // ==== forward-dynamics family (forward_dynamics.hpp) ====
  dof_parent = dof_parents(model);
  dof_run_start.assign(static_cast<std::size_t>(nv), 0);
  for (int k = 0; k < nv; ++k) dof_run_start[k] = k > 0 && dof_parent[k] == k - 1 ? dof_run_start[k - 1] : k;
  fd_block.assign(n, 0);
  int block = 0;
  for (int i = 0; i < nbodies; ++i) {
    fd_block[i] = block;
    block += model.joint_nv(i) * model.joint_nv(i);
  }
  fd_R.resize(n);
  fd_P.resize(n);
  fd_y.resize(n);
  fd_alpha.resize(n);
  fd_U = Matrix6X::Zero(6, nv);
  fd_D = VecX::Zero(block);
  fd_Dinv = VecX::Zero(block);
  fd_precond = VecX::Zero(block);
  for (VecX* x : {&fd_b, &fd_x, &fd_r, &fd_z, &fd_p, &fd_Mp, &fd_zero, &fd_pivot_scale}) *x = VecX::Zero(nv);
  fd_F.resize(n);
  for (int i = 1; i < nbodies; ++i) fd_F[i] = Matrix6X::Zero(6, nv - model.idx_v(i));
  Minv = MatX::Zero(nv, nv);
  fd_auto_method = static_cast<int>(forward_dynamics_choice(model).method);

  loops.nc = model.num_constraints();
  loops.phi = VecX::Zero(loops.nc);
  loops.c = VecX::Zero(loops.nc);
  loops.lambda = VecX::Zero(loops.nc);
  loops.L = MatX::Zero(loops.nc, nv);
  loops.S_world = Matrix6X::Zero(6, nv);
  loops.solver.ws->resize(nv, loops.nc, model.num_loop_actuators());
}

}  // namespace plucker
