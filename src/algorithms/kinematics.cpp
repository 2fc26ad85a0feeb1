// Forward kinematics, frames, Jacobians, centre of mass and energy.
#include "plucker/algorithms/kinematics.hpp"

#include "algorithms/frame_kernels.hpp"
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
  Matrix6X dJ;                             ///< jacobian_time_variation
  CentroidalMomentum centroidal;
  /// Per body, world coordinates: the composite inertia of its subtree, and the composite of
  /// d/dt I_k = v_k x* I_k - I_k v_k x over it (centroidal momentum).
  std::vector<RigidBodyInertia> composite;
  std::vector<Mat6> composite_rate;
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
  detail::check_state(model, "forward_kinematics", q, v, a, "a");
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
                              ReferenceFrame frame, const Transform& frame_X_body) {
  check_body(model, body, "body_jacobian");
  forward_kinematics(model, data, q);
  const Transform X = detail::world_to(frame, frame_X_body * data.X_base[body]);  // world -> result
  detail::sized(data.J, 6, model.nv());
  data.J.setZero();
  for (int j = body; j > 0; j = model.parent(j)) {
    visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int k = 0; k < joint_dofs(joint); ++k)
        data.J.col(model.idx_v(j) + k) = X.apply(world_column(data, joint, j, k)).vector();
    });
  }
  return data.J;
}

Motion jacobian_dot_times_v(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                            const Eigen::Ref<const VecX>& v, int body, ReferenceFrame frame,
                            const Transform& frame_X_body) {
  check_body(model, body, "jacobian_dot_times_v");
  forward_kinematics(model, data, q, v);  // data.a: the accelerations at qdd = 0
  return detail::frame_velocity_derivative(frame, frame_X_body, data.X_base[body], data.v[body], data.a[body]);
}

const Matrix6X& jacobian_time_variation(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                        const Eigen::Ref<const VecX>& v, int body, ReferenceFrame frame,
                                        const Transform& frame_X_body) {
  check_body(model, body, "jacobian_time_variation");
  forward_kinematics(model, data, q, v);
  KinematicsWorkspace& ws = detail::workspace<KinematicsWorkspace>(model, data);
  Matrix6X& dJ = detail::sized(ws.dJ, 6, model.nv());
  dJ.setZero();
  const Transform F_X_0 = frame_X_body * data.X_base[body];
  const Transform X = detail::world_to(frame, F_X_0);
  const Motion v_body = apply_inverse(data.X_base[body], data.v[body]);  // world coordinates
  const Motion v_frame = X.apply(v_body);
  const Vec3 origin_velocity = point_velocity(v_body, F_X_0.r);  // world axes
  for (int j = body; j > 0; j = model.parent(j)) {
    const Motion v_j = apply_inverse(data.X_base[j], data.v[j]);
    visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int k = 0; k < joint_dofs(joint); ++k) {
        const Motion s = world_column(data, joint, j, k);
        // A column is constant in its body, so in world coordinates d/dt s = v_j x s; the change
        // of coordinates X moves too: d/dt (X s) = X (v_j x s) + (d/dt X) s, with d/dt X = -v_F x X
        // for the moving frame (Local) and d/dt of the shift to the moving origin (world-aligned).
        Motion ds = X.apply(plucker::cross(v_j, s));
        if (frame == ReferenceFrame::Local) ds = ds - plucker::cross(v_frame, X.apply(s));
        if (frame == ReferenceFrame::LocalWorldAligned) ds.linear += s.angular.cross(origin_velocity);
        dJ.col(model.idx_v(j) + k) = ds.vector();
      }
    });
  }
  return dJ;
}

Motion frame_velocity(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      int body, ReferenceFrame frame, const Transform& frame_X_body) {
  check_body(model, body, "frame_velocity");
  forward_kinematics(model, data, q, v);
  const Transform F_X_0 = frame_X_body * data.X_base[body];
  return detail::world_to(frame, F_X_0).apply(apply_inverse(data.X_base[body], data.v[body]));
}

Motion frame_acceleration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                          const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a, int body,
                          ReferenceFrame frame, const Transform& frame_X_body) {
  check_body(model, body, "frame_acceleration");
  forward_kinematics(model, data, q, v, a);  // data.a = J a + dJ/dt v per body, no gravity
  return detail::frame_velocity_derivative(frame, frame_X_body, data.X_base[body], data.v[body], data.a[body]);
}

Vec3 frame_classical_acceleration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a, int body,
                                  ReferenceFrame frame, const Transform& frame_X_body) {
  if (frame == ReferenceFrame::World)
    throw InvalidArgument(
        "frame_classical_acceleration: frame World is not a point of the body; use 'local' or "
        "'local_world_aligned'");
  const Motion a_F = frame_acceleration(model, data, q, v, a, body, frame, frame_X_body);
  if (frame == ReferenceFrame::LocalWorldAligned) return a_F.linear;  // already classical
  return classical_acceleration(frame_X_body.apply(data.v[body]), a_F);
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

Vec3 center_of_mass_jacobian_dot_times_v(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                         const Eigen::Ref<const VecX>& v) {
  forward_kinematics(model, data, q, v);  // data.a at qdd = 0, no gravity
  double mass = 0.0;
  Vec3 sum = Vec3::Zero();  // sum of m_k times the classical acceleration of body k's centre of mass
  for (int k = 1; k < model.nbodies(); ++k) {
    const RigidBodyInertia& I = model.inertia(k);
    const Vec3 a_com = classical_acceleration(data.v[k], data.a[k], I.com());  // body coordinates
    sum += I.mass() * (data.X_base[k].E.transpose() * a_com);
    mass += I.mass();
  }
  if (!(mass > 0.0)) throw InvalidArgument("center_of_mass_jacobian_dot_times_v: the model has no mass");
  return sum / mass;
}

namespace {

/// A_G (and with Rate, dA_G/dt, h_G, dA_G/dt v): each column of A_0 = sum_k I_k J_k (world
/// coordinates, momentum about the world origin) is the subtree's composite inertia times the
/// joint's column, I^c_j s_j; d/dt of it is (sum_k d/dt I_k) s_j + I^c_j (v_j x s_j). A_G is A_0
/// with its moments taken about the centre of mass c: n_G = n_0 - c x f (and d/dt of that shift
/// contributes -cdot x f).
template <bool Rate>
const CentroidalMomentum& centroidal(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                     const Eigen::Ref<const VecX>* v, const char* fn) {
  if constexpr (Rate)
    forward_kinematics(model, data, q, *v);
  else
    forward_kinematics(model, data, q);
  KinematicsWorkspace& ws = detail::workspace<KinematicsWorkspace>(model, data);
  CentroidalMomentum& out = ws.centroidal;
  const int n = model.nbodies(), nv = model.nv();
  ws.composite.resize(static_cast<std::size_t>(n));
  if constexpr (Rate) ws.composite_rate.resize(static_cast<std::size_t>(n));
  double mass = 0.0;
  Vec3 first_moment = Vec3::Zero(), linear_momentum = Vec3::Zero();
  for (int i = 1; i < n; ++i) {
    const RigidBodyInertia I = model.inertia(i).transformed_inverse(data.X_base[i]);  // world
    ws.composite[i] = I;
    mass += I.mass();
    first_moment += I.first_moment();
    if constexpr (Rate) {
      const Motion v_i = apply_inverse(data.X_base[i], data.v[i]);
      const Mat6 Im = I.matrix();
      ws.composite_rate[i].noalias() = plucker::crf(v_i) * Im - Im * plucker::crm(v_i);
      linear_momentum += (I * v_i).linear;
    }
  }
  if (!(mass > 0.0)) throw InvalidArgument(std::string(fn) + ": the model has no mass");
  for (int i = n - 1; i > 0; --i) {
    const int p = model.parent(i);
    if (p == 0) continue;
    ws.composite[p] += ws.composite[i];
    if constexpr (Rate) ws.composite_rate[p] += ws.composite_rate[i];
  }
  out.mass = mass;
  out.com = first_moment / mass;
  out.com_velocity = linear_momentum / mass;
  detail::sized(out.A, 6, nv);
  if constexpr (Rate) detail::sized(out.dA, 6, nv);
  for (int j = 1; j < n; ++j) {
    const Motion v_j = Rate ? apply_inverse(data.X_base[j], data.v[j]) : Motion();
    visit_joint(model, j, [&](const auto& joint, const auto&) PLUCKER_INLINE {
      for (int k = 0; k < joint_dofs(joint); ++k) {
        const int c = model.idx_v(j) + k;
        const Motion s = world_column(data, joint, j, k);
        const Force a0 = ws.composite[j] * s;
        out.A.col(c) << a0.angular - out.com.cross(a0.linear), a0.linear;
        if constexpr (Rate) {
          const Force da0 = Force(Vec6(ws.composite_rate[j] * s.vector())) + ws.composite[j] * plucker::cross(v_j, s);
          out.dA.col(c) << da0.angular - out.com.cross(da0.linear) - out.com_velocity.cross(a0.linear), da0.linear;
        }
      }
    });
  }
  if constexpr (Rate) {
    out.h = Force(Vec6(out.A * *v));
    out.dA_v = Force(Vec6(out.dA * *v));
  } else {
    out.dA.setZero();
    out.h = Force();
    out.dA_v = Force();
    out.com_velocity.setZero();
  }
  return out;
}

}  // namespace

const CentroidalMomentum& centroidal_momentum_matrix(const Model& model, Data& data, const Eigen::Ref<const VecX>& q) {
  return centroidal<false>(model, data, q, nullptr, "centroidal_momentum_matrix");
}

const CentroidalMomentum& centroidal_momentum_time_variation(const Model& model, Data& data,
                                                             const Eigen::Ref<const VecX>& q,
                                                             const Eigen::Ref<const VecX>& v) {
  return centroidal<true>(model, data, q, &v, "centroidal_momentum_time_variation");
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
