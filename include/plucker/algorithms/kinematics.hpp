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

// The frame-level functions below take a body and, optionally, a frame fixed to it
// (frame_X_body = Frame::X_body, body coordinates -> frame coordinates; identity: the body's own
// frame), and a ReferenceFrame for the result's coordinates: World (world axes, about the world
// origin: spatial), Local (the frame's axes, about its origin) or LocalWorldAligned (world axes,
// about the frame's origin).

/// Jacobian (6 x nv) of the frame: J v is its spatial velocity [omega; v] in `frame`
/// coordinates (World: v = velocity of the body point at the world origin; Local and
/// LocalWorldAligned: of the frame origin). Columns of joints not on the body's support are
/// zero. Computes forward kinematics itself. Returns data.J.
const Matrix6X& body_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, int body,
                              ReferenceFrame frame = ReferenceFrame::World,
                              const Transform& frame_X_body = Transform());

/// d/dt (J v) at qdd = 0 for the Jacobian above, in the same coordinates (no gravity): with
/// LocalWorldAligned [omega_dot; the classical acceleration of the frame origin].
Motion jacobian_dot_times_v(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                            const Eigen::Ref<const VecX>& v, int body, ReferenceFrame frame = ReferenceFrame::World,
                            const Transform& frame_X_body = Transform());

/// dJ/dt (6 x nv), the time derivative of the Jacobian above along v: dJ/dt v equals
/// jacobian_dot_times_v. Computes forward kinematics itself. Returns a workspace matrix of `data`
/// (valid until the next call).
const Matrix6X& jacobian_time_variation(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                        const Eigen::Ref<const VecX>& v, int body,
                                        ReferenceFrame frame = ReferenceFrame::World,
                                        const Transform& frame_X_body = Transform());

/// The frame's spatial velocity J v and acceleration d/dt (J v) = J a + dJ/dt v in `frame`
/// coordinates, from (q, v, a) (a: joint accelerations; gravity not included).
Motion frame_velocity(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v,
                      int body, ReferenceFrame frame = ReferenceFrame::World,
                      const Transform& frame_X_body = Transform());
Motion frame_acceleration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                          const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a, int body,
                          ReferenceFrame frame = ReferenceFrame::World, const Transform& frame_X_body = Transform());
/// The classical (conventional) acceleration of the frame origin, in the frame's axes (Local) or
/// in world axes (LocalWorldAligned; World is refused: the world origin is no point of the body).
Vec3 frame_classical_acceleration(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                  const Eigen::Ref<const VecX>& v, const Eigen::Ref<const VecX>& a, int body,
                                  ReferenceFrame frame = ReferenceFrame::LocalWorldAligned,
                                  const Transform& frame_X_body = Transform());

/// Centre of mass of the moving bodies, in world coordinates.
Vec3 center_of_mass(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);
/// Jacobian of the centre of mass (3 x nv, world coordinates). Returns data.J_com.
const Matrix3X& center_of_mass_jacobian(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

/// d/dt (J_com v) at qdd = 0: the centre of mass's acceleration when every joint acceleration is
/// zero and there is no gravity (world coordinates).
Vec3 center_of_mass_jacobian_dot_times_v(const Model& model, Data& data, const Eigen::Ref<const VecX>& q,
                                         const Eigen::Ref<const VecX>& v);

/// The centroidal momentum (Orin & Goswami, "Centroidal momentum matrix of a humanoid robot",
/// Autonomous Robots 35(2-3), 2013): h_G = A_G v = [angular momentum about the centre of mass;
/// linear momentum], world axes, a force vector [moment; force] at the centre of mass.
struct CentroidalMomentum {
  Matrix6X A;                        ///< A_G (6 x nv), the centroidal momentum matrix
  Matrix6X dA;                       ///< dA_G/dt (6 x nv) along v (centroidal_momentum_time_variation only)
  Force h;                           ///< h_G = A_G v (time_variation only; zero otherwise)
  Force dA_v;                        ///< dA_G/dt v: dh_G/dt = A_G qdd + dA_v (time_variation only)
  Vec3 com = Vec3::Zero();           ///< centre of mass (world)
  Vec3 com_velocity = Vec3::Zero();  ///< (time_variation only)
  double mass = 0.0;
};
/// A_G at q (and the centre of mass, the mass). Results in a workspace of `data`.
const CentroidalMomentum& centroidal_momentum_matrix(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);
/// A_G, dA_G/dt, h_G, dA_G/dt v at (q, v). Results in a workspace of `data`.
const CentroidalMomentum& centroidal_momentum_time_variation(const Model& model, Data& data,
                                                             const Eigen::Ref<const VecX>& q,
                                                             const Eigen::Ref<const VecX>& v);

/// Kinetic energy 1/2 sum v_i . I_i v_i.
double kinetic_energy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q, const Eigen::Ref<const VecX>& v);
/// Potential energy in the model's uniform gravity field: -sum m_i g . c_i (zero at the world origin).
double potential_energy(const Model& model, Data& data, const Eigen::Ref<const VecX>& q);

}  // namespace plucker
