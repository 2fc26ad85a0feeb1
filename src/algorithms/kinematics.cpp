// Forward kinematics, frames, Jacobians, centre of mass and energy.
#include "plucker/algorithms/kinematics.hpp"

#include "algorithms/workspace.hpp"
#include "base/text.hpp"

namespace plucker {
namespace {

using namespace ops;

// Poses (and velocities / accelerations when given); a excludes gravity.
template <bool WithVelocity, bool WithAcceleration>
void kinematics_impl(const Model& model, Data& data, const double* q, const double* v, const double* a) {
  data.X_base.resize(static_cast<std::size_t>(model.nbodies()));
  data.X_base[0] = Transform();
  data.v[0].setZero();
  data.a[0].setZero();
  detail::evaluate_sincos(data, q);
  for (int i = 1; i < model.nbodies(); ++i) {
    const int p = model.parent(i), iv = model.idx_v(i);
    visit_joint(model, i, [&](const auto& joint, const auto& X_tree) PLUCKER_INLINE {
      const auto X = compose(joint, detail::joint_q(model, data, q, i), X_tree);
      data.X_up[i] = to_transform(X);
      data.X_base[i] = data.X_up[i] * data.X_base[p];
      if constexpr (WithVelocity) {
        Motion vJ;
        add_motion(joint, vJ, v + iv);
        data.v[i] = apply(X, data.v[p]) + vJ;
        data.a[i] = apply(X, data.a[p]) + velocity_product(joint, data.v[i], v + iv);
        if constexpr (WithAcceleration) add_motion(joint, data.a[i], a + iv);
      }
    });
  }
}

/// Column k of joint j's motion subspace, in world coordinates (after forward kinematics).
template <class J>
Motion world_column(const Data& data, const J& joint, int j, int k) {
  Motion s;
  add_column<double>(s, column(joint, k), 1.0);
  return apply_inverse(data.X_base[j], s);
}

struct KinematicsWorkspace : detail::WorkspaceOf<KinematicsWorkspace> {
  static constexpr detail::Slot slot = detail::Slot::Kinematics;
  explicit KinematicsWorkspace(const Model& model)
      : subtree_mass(static_cast<std::size_t>(model.nbodies())),
        subtree_first_moment(static_cast<std::size_t>(model.nbodies())) {}
  std::vector<double> subtree_mass;
  std::vector<Vec3> subtree_first_moment;  ///< world coordinates
};

void check_body(const Model& model, int body, const char* fn) {
  if (body < 0 || body >= model.nbodies())
    throw InvalidArgument(std::string(fn) + ": body index " + std::to_string(body) + " out of range [0, " +
                          std::to_string(model.nbodies()) + ")");
}

}  // namespace

void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  const detail::DataUse use(model, data, "forward_kinematics");
  detail::check_arguments("forward_kinematics", [&] { model.check_configuration(q, "q"); });
  kinematics_impl<false, false>(model, data, q.data(), nullptr, nullptr);
}

void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v) {
  const detail::DataUse use(model, data, "forward_kinematics");
  detail::check_arguments("forward_kinematics", [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
  });
  kinematics_impl<true, false>(model, data, q.data(), v.data(), nullptr);
}

void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a) {
  const detail::DataUse use(model, data, "forward_kinematics");
  detail::check_arguments("forward_kinematics", [&] {
    model.check_configuration(q, "q");
    model.check_tangent(v, "v");
    model.check_tangent(a, "a");
  });
  kinematics_impl<true, true>(model, data, q.data(), v.data(), a.data());
}

Eigen::Matrix4d body_pose(const Data& data, int body) {
  if (body < 0 || body >= static_cast<int>(data.X_base.size()))
    throw InvalidArgument("body_pose: body index " + std::to_string(body) +
                          " out of range, or no poses yet (call "
                          "forward_kinematics first)");
  return data.X_base[static_cast<std::size_t>(body)].homogeneous();
}

Transform frame_transform(const Model& model, const Data& data, int frame) {
  detail::check_data(model, data, "frame_transform");
  if (frame < 0 || frame >= static_cast<int>(model.frames().size()))
    throw InvalidArgument("frame_transform: frame index " + std::to_string(frame) + " out of range");
  if (data.X_base.size() != static_cast<std::size_t>(model.nbodies()))
    throw InvalidArgument("frame_transform: no poses yet (call forward_kinematics first)");
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
  detail::sized(data.J, 6, model.nv());
  data.J.setZero();
  for (int j = body; j > 0; j = model.parent(j)) {
    visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int k = 0; k < joint_dofs(joint); ++k) {
        Motion s = world_column(data, joint, j, k);  // world coordinates
        if (frame == ReferenceFrame::Local) s = apply(data.X_base[body], s);
        data.J.col(model.idx_v(j) + k) = s.vector();
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
  return frame == ReferenceFrame::Local ? data.a[body] : apply_inverse(data.X_base[body], data.a[body]);
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
  KinematicsWorkspace& ws = detail::workspace<KinematicsWorkspace>(model, data);
  std::vector<double>& subtree_mass = ws.subtree_mass;
  std::vector<Vec3>& subtree_first_moment = ws.subtree_first_moment;
  detail::sized(data.J_com, 3, model.nv());
  const int n = model.nbodies();
  for (int i = 0; i < n; ++i) {
    const RigidBodyInertia& I = model.inertia(i);
    subtree_mass[i] = i == 0 ? 0.0 : I.mass();
    subtree_first_moment[i] =
        i == 0 ? Vec3::Zero() : Vec3(I.mass() * data.X_base[i].r + data.X_base[i].E.transpose() * I.first_moment());
  }
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i);
    subtree_mass[p] += subtree_mass[i];
    subtree_first_moment[p] += subtree_first_moment[i];
  }
  const double mass = subtree_mass[0];
  if (!(mass > 0.0)) throw InvalidArgument("center_of_mass_jacobian: the model has no mass");
  // Column of joint j: sum over its subtree of m_k (s.lin + s.ang x c_k) = M_j s.lin + s.ang x h_j.
  for (int j = 1; j < n; ++j) {
    visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int k = 0; k < joint_dofs(joint); ++k) {
        const Motion s = world_column(data, joint, j, k);
        data.J_com.col(model.idx_v(j) + k) =
            (subtree_mass[j] * s.linear + s.angular.cross(subtree_first_moment[j])) / mass;
      }
    });
  }
  data.com = subtree_first_moment[0] / mass;
  return data.J_com;
}

double kinetic_energy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                      const Eigen::Ref<const VecX>& v) {
  forward_kinematics(model, data, q, v);
  double T = 0.0;
  for (int i = 1; i < model.nbodies(); ++i) T += 0.5 * dot(data.v[i], times(model.inertia(i), data.v[i]));
  if (!std::isfinite(T))
    throw NumericalError("kinetic_energy: " + text::number(T) +
                         ": the velocities are outside the range of double "
                         "precision");
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
