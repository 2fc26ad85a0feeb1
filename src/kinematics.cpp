// Forward kinematics, frames, Jacobians, centre of mass and energy.
#include "detail/checks.hpp"
#include "plucker/algorithms/kinematics.hpp"

namespace plucker {
namespace {

// Poses (and velocities / accelerations when given); a excludes gravity.
template <bool WithVelocity, bool WithAcceleration>
void kinematics_impl(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  data.X_base[0] = Transform();
  data.v[0].setZero();
  data.a[0].setZero();
  detail::evaluate_sincos(data, q);
  for (int i = 1; i < model.nbodies(); ++i) {
    const int p = model.parent(i);
    detail::visit_joint(model.joint(i), [&](const auto& joint) {
      const Transform& X = data.X_up[i] = detail::joint_compose(joint, data, q, model.idx_q(i), model.X_tree(i));
      data.X_base[i] = X * data.X_base[p];
      if constexpr (WithVelocity) {
        const Motion vJ = joint.motion(v + model.idx_v(i));
        data.v[i] = X.apply(data.v[p]) + vJ;
        data.a[i] = X.apply(data.a[p]) + cross(data.v[i], vJ);
        if constexpr (WithAcceleration) data.a[i] += joint.motion(a + model.idx_v(i));
      }
    });
  }
}

void check_body(const Model& model, int body, const char* fn) {
  if (body < 0 || body >= model.nbodies())
    throw InvalidArgument(std::string(fn) + ": body index " + std::to_string(body) + " out of range [0, " +
                          std::to_string(model.nbodies()) + ")");
}

}  // namespace

void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  detail::check_data(model, data, "forward_kinematics");
  model.check_configuration(q, "forward_kinematics: q");
  kinematics_impl<false, false>(model, data, q.data(), nullptr, nullptr);
}

void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v) {
  detail::check_data(model, data, "forward_kinematics");
  model.check_configuration(q, "forward_kinematics: q");
  model.check_tangent(v, "forward_kinematics: v");
  kinematics_impl<true, false>(model, data, q.data(), v.data(), nullptr);
}

void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a) {
  detail::check_data(model, data, "forward_kinematics");
  model.check_configuration(q, "forward_kinematics: q");
  model.check_tangent(v, "forward_kinematics: v");
  model.check_tangent(a, "forward_kinematics: a");
  kinematics_impl<true, true>(model, data, q.data(), v.data(), a.data());
}

Eigen::Matrix4d body_pose(const Data& data, int body) { return data.X_base.at(body).homogeneous(); }

Transform frame_transform(const Model& model, const Data& data, int frame) {
  if (frame < 0 || frame >= static_cast<int>(model.frames().size()))
    throw InvalidArgument("frame_transform: frame index " + std::to_string(frame) + " out of range");
  const Frame& f = model.frames()[frame];
  return f.X_body * data.X_base[f.body];
}

Eigen::Matrix4d frame_pose(const Model& model, const Data& data, int frame) {
  return frame_transform(model, data, frame).homogeneous();
}

const Matrix6X& body_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, int body,
                              ReferenceFrame frame) {
  check_body(model, body, "body_jacobian");
  forward_kinematics(model, data, q);
  data.J.setZero();
  for (int j = body; j > 0; j = model.parent(j)) {
    detail::visit_joint(model.joint(j), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (J::NV != 0) {
        const auto S = joint.times_S(Mat6::Identity().eval());
        for (int k = 0; k < S.cols(); ++k) {
          Motion column = data.X_base[j].apply_inverse(Motion(Vec6(S.col(k))));  // world coordinates
          if (frame == ReferenceFrame::Local) column = data.X_base[body].apply(column);
          data.J.col(model.idx_v(j) + k) = column.vector();
        }
      }
    });
  }
  return data.J;
}

Motion jacobian_dot_times_v(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                            const Eigen::Ref<const VecX>& v, int body, ReferenceFrame frame) {
  check_body(model, body, "jacobian_dot_times_v");
  forward_kinematics(model, data, q, v);
  // a_body with qdd = 0 is d/dt(J_local v); in world coordinates d/dt(J_world v) = 0X_i a_i
  // (the derivative of i_X_0 contributes v_i x v_i = 0).
  return frame == ReferenceFrame::Local ? data.a[body] : data.X_base[body].apply_inverse(data.a[body]);
}

Vec3 center_of_mass(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  forward_kinematics(model, data, q);
  double mass = 0.0;
  Vec3 h = Vec3::Zero();
  for (int i = 1; i < model.nbodies(); ++i) {
    const RigidBodyInertia& I = model.inertia(i);
    const Transform& X = data.X_base[i];
    h += I.mass() * X.r + X.E.transpose() * I.first_moment();  // m * (world position of the COM)
    mass += I.mass();
  }
  if (!(mass > 0.0)) throw InvalidArgument("center_of_mass: the model has no mass");
  data.com = h / mass;
  return data.com;
}

const Matrix3X& center_of_mass_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  forward_kinematics(model, data, q);
  const int n = model.nbodies();
  for (int i = 0; i < n; ++i) {
    const RigidBodyInertia& I = model.inertia(i);
    data.subtree_mass[i] = i == 0 ? 0.0 : I.mass();
    data.subtree_first_moment[i] =
        i == 0 ? Vec3::Zero() : Vec3(I.mass() * data.X_base[i].r + data.X_base[i].E.transpose() * I.first_moment());
  }
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i);
    data.subtree_mass[p] += data.subtree_mass[i];
    data.subtree_first_moment[p] += data.subtree_first_moment[i];
  }
  const double mass = data.subtree_mass[0];
  if (!(mass > 0.0)) throw InvalidArgument("center_of_mass_jacobian: the model has no mass");
  // Column of joint j: sum over its subtree of m_k (s.lin + s.ang x c_k) = M_j s.lin + s.ang x h_j.
  for (int j = 1; j < n; ++j) {
    detail::visit_joint(model.joint(j), [&](const auto& joint) {
      using J = std::decay_t<decltype(joint)>;
      if constexpr (J::NV != 0) {
        const auto S = joint.times_S(Mat6::Identity().eval());
        for (int k = 0; k < S.cols(); ++k) {
          const Motion s = data.X_base[j].apply_inverse(Motion(Vec6(S.col(k))));
          data.J_com.col(model.idx_v(j) + k) =
              (data.subtree_mass[j] * s.linear + s.angular.cross(data.subtree_first_moment[j])) / mass;
        }
      }
    });
  }
  data.com = data.subtree_first_moment[0] / mass;
  return data.J_com;
}

double kinetic_energy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                      const Eigen::Ref<const VecX>& v) {
  forward_kinematics(model, data, q, v);
  double T = 0.0;
  for (int i = 1; i < model.nbodies(); ++i) T += model.inertia(i).kinetic_energy(data.v[i]);
  return T;
}

double potential_energy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  forward_kinematics(model, data, q);
  double V = 0.0;
  for (int i = 1; i < model.nbodies(); ++i) {
    const RigidBodyInertia& I = model.inertia(i);
    const Vec3 h_world = I.mass() * data.X_base[i].r + data.X_base[i].E.transpose() * I.first_moment();
    V -= model.gravity().dot(h_world);
  }
  return V;
}

}  // namespace plucker
