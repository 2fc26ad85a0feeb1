// Kinematics: body poses, velocities and accelerations, frames of merged links, body
// Jacobians and their time derivative, centre of mass, energy.
#pragma once

#include "plucker/algorithms/data.hpp"

namespace plucker {

/// Fills data.X_up and data.X_base (poses).
void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);
/// ... and data.v (body velocities, body coordinates).
void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v);
/// ... and data.a (body spatial accelerations, body coordinates, gravity NOT included).
void forward_kinematics(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a);

/// Pose of body i in the world as a 4x4 homogeneous matrix (after forward_kinematics).
Eigen::Matrix4d body_pose(const Data& data, int body);
/// Transform world -> frame for a named frame of the model (after forward_kinematics).
Transform frame_transform(const Model& model, const Data& data, int frame);
/// Pose of a named frame in the world (after forward_kinematics).
Eigen::Matrix4d frame_pose(const Model& model, const Data& data, int frame);

/// Body Jacobian (6 x nv) of `body`: J v is the body's spatial velocity, in world coordinates
/// (frame == World: [omega; velocity of the body point at the world origin]) or in body
/// coordinates (frame == Local). Columns of joints not on the body's support are zero.
/// Computes forward kinematics itself. Returns data.J.
const Matrix6X& body_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, int body,
                              ReferenceFrame frame = ReferenceFrame::World);

/// (d/dt J) v for the body Jacobian of `body` in the same frame: the body's spatial
/// acceleration when qdd = 0 and there is no gravity.
Motion jacobian_dot_times_v(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                            const Eigen::Ref<const VecX>& v, int body, ReferenceFrame frame = ReferenceFrame::World);

/// Centre of mass of the moving bodies, in world coordinates.
Vec3 center_of_mass(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);
/// Jacobian of the centre of mass (3 x nv, world coordinates). Returns data.J_com.
const Matrix3X& center_of_mass_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

/// Kinetic energy 1/2 sum v_i . I_i v_i.
double kinetic_energy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v);
/// Potential energy in the model's uniform gravity field: -sum m_i g . c_i (zero at the world origin).
double potential_energy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

}  // namespace plucker
