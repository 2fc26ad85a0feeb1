#include "plucker/algorithms/data.hpp"

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
  S_world = Matrix6X::Zero(6, nv);
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
}

}  // namespace plucker
