// Articulated-body algorithm, link coordinates (paper 000 §3.3; paper 002 Eqs. 45-46, 60
// for d-DoF joints through the d x d inverse D_i^-1 = (S_i^T I^A_i S_i)^-1):
//   pass 1 (out): v_i, c_i = v_i x h_i qd_i, I^A_i = I_i, p^A_i = v_i x* I_i v_i - f^x_i
//   pass 2 (in):  U_i = I^A_i h_i, D_i = h_i^T U_i, u_i = tau_i - h_i^T p^A_i
//                 I^a = I^A_i - U_i D_i^-1 U_i^T                 (Eq. 12)
//                 p^a = p^A_i + I^a c_i + U_i D_i^-1 u_i          (Eq. 12-13)
//                 I^A_p += pX_i* I^a iX_p,  p^A_p += pX_i* p^a
//   pass 3 (out): a' = iX_p a_p + c_i, qdd_i = D_i^-1 (u_i - U_i^T a'), a_i = a' + h_i qdd_i  (Eq. 14)
#include <cmath>
#include <sstream>

#include "detail/recursion.hpp"
#include "plucker/algorithms/aba.hpp"

namespace plucker {
namespace {

using detail::ForceInput;

[[noreturn]] void throw_singular(const Model& model, int i, double pivot, double scale) {
  std::ostringstream m;
  m << "forward dynamics undefined: joint '" << model.joint_name(i) << "' (body '" << model.body_name(i)
    << "') has a singular articulated inertia (pivot " << pivot << ", scale " << scale
    << "): the subtree it moves has no mass or inertia along its motion";
  throw SingularError(m.str());
}

template <ForceInput F>
void aba_impl(const Model& model, Data& data, const double* q, const double* v, const double* tau,
              const Force* f_ext) {
  const int n = model.nbodies();
  detail::begin_outward_pass<F>(model, data, q);

  // Pass 1.
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      const Transform& X = data.X_up[i] = detail::joint_compose(joint, data, q, model.idx_q(i), model.X_tree(i));
      const double* qd = v + model.idx_v(i);
      data.v[i] = X.apply(data.v[p]);
      detail::add_joint_motion(joint, data.v[i], qd);
      data.c[i] = detail::velocity_product(joint, data.v[i], qd);
    });
    const RigidBodyInertia& I = model.inertia(i);
    data.I_articulated[i] = ArticulatedBodyInertia(I);
    data.p_articulated[i] = cross(data.v[i], I * data.v[i]);
    detail::subtract_external_force<F>(data, i, p, f_ext, data.p_articulated[i]);
  }

  // Pass 2.
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = detail::JointDims<J>;
      ArticulatedBodyInertia& IA = data.I_articulated[i];
      Force pa = data.p_articulated[i];
      if constexpr (J::NV == 0) {
        if (p > 0) {
          IA.add_transformed_inverse_to(data.X_up[i], data.I_articulated[p]);
          data.p_articulated[p] += data.X_up[i].apply_inverse(pa + IA * data.c[i]);
        }
      } else {
        const int nv = joint.nv(), iv = model.idx_v(i);
        const typename Dims::MatU U = joint.times_S(IA.matrix());
        typename Dims::MatD D;
        typename Dims::VecD u;
        if constexpr (J::NV == Eigen::Dynamic) {
          D.resize(nv, nv);
          u.resize(nv);
        }
        for (int k = 0; k < nv; ++k) joint.project(Force(Vec6(U.col(k))), D.col(k).data());
        joint.project(pa, u.data());
        u = Eigen::Map<const VecX>(tau + iv, nv) - u;
        const double scale = IA.matrix().diagonal().maxCoeff();
        Eigen::Map<typename Dims::MatD> Dinv(data.D_inv.data() + data.D_offset[i], nv, nv);
        if constexpr (J::NV == 1) {
          if (!(D(0, 0) > detail::kSingularPivot * scale)) throw_singular(model, i, D(0, 0), scale);
          Dinv(0, 0) = 1.0 / D(0, 0);
        } else {
          Eigen::LLT<typename Dims::MatD> llt(D);
          const double min_pivot = llt.matrixLLT().diagonal().minCoeff();
          if (llt.info() != Eigen::Success || !(min_pivot * min_pivot > detail::kSingularPivot * scale))
            throw_singular(model, i, min_pivot * min_pivot, scale);
          Dinv.setIdentity();
          llt.solveInPlace(Dinv);
        }
        data.U.middleCols(iv, nv) = U;
        data.u.segment(iv, nv) = u;
        if (p > 0) {
          const typename Dims::MatU UDinv = U * Dinv;
          IA.matrix().noalias() -= UDinv * U.transpose();                              // Eq. 12
          pa += IA * data.c[i] + Force(Vec6(UDinv * u));                               // Eq. 12-13
          IA.add_transformed_inverse_to(data.X_up[i], data.I_articulated[p]);
          data.p_articulated[p] += data.X_up[i].apply_inverse(pa);
        }
      }
    });
  }

  // Pass 3.
  for (int i = 1; i < n; ++i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      using Dims = detail::JointDims<J>;
      const Motion a_prime = data.X_up[i].apply(data.a[p]) + data.c[i];
      if constexpr (J::NV == 0) {
        data.a[i] = a_prime;
      } else {
        const int nv = joint.nv(), iv = model.idx_v(i);
        Eigen::Map<const typename Dims::MatD> Dinv(data.D_inv.data() + data.D_offset[i], nv, nv);
        const typename Dims::VecD rhs =
            data.u.segment(iv, nv) - data.U.middleCols(iv, nv).transpose() * a_prime.vector();
        auto qdd = data.qdd.segment(iv, nv);
        qdd.noalias() = Dinv * rhs;                                                     // Eq. 14
        data.a[i] = a_prime;
        detail::add_joint_motion(joint, data.a[i], data.qdd.data() + iv);
      }
    });
  }
}

}  // namespace

void detail::aba_unchecked(const Model& model, Data& data, const double* q, const double* v, const double* tau) {
  aba_impl<ForceInput::None>(model, data, q, v, tau, nullptr);
}

const VecX& aba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                const Eigen::Ref<const VecX>& tau) {
  detail::check_data(model, data, "aba");
  model.check_configuration(q, "aba: q");
  model.check_tangent(v, "aba: v");
  model.check_tangent(tau, "aba: tau");
  aba_impl<ForceInput::None>(model, data, q.data(), v.data(), tau.data(), nullptr);
  return data.qdd;
}

const VecX& aba(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                const Eigen::Ref<const VecX>& tau, ExternalForces f_ext, ReferenceFrame frame) {
  detail::check_data(model, data, "aba");
  model.check_configuration(q, "aba: q");
  model.check_tangent(v, "aba: v");
  model.check_tangent(tau, "aba: tau");
  detail::check_forces(model, f_ext, "aba");
  if (frame == ReferenceFrame::World)
    aba_impl<ForceInput::World>(model, data, q.data(), v.data(), tau.data(), f_ext.data());
  else
    aba_impl<ForceInput::Local>(model, data, q.data(), v.data(), tau.data(), f_ext.data());
  return data.qdd;
}

}  // namespace plucker
