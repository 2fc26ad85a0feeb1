// Interface between the benchmark driver (main.cpp and the modes, built with plucker's Eigen
// settings) and the peer adapters (bench/peer_<name>.cpp, in the shared library
// plucker_bench_peers, built like Debian's MuJoCo/KDL/DART: no -march=native, 16-byte
// Eigen alignment).
//
// Nothing Eigen crosses this interface: only std::string, std::vector<double> and
// plain arrays, so the two Eigen configurations never share an object.
//
// Coordinates. Every state and every result crossing the interface is in PLUCKER's
// coordinates (the adapter converts to and from its own, outside the timed region):
//   * q, v, a, tau are stacked per joint at JointDesc::idx_q / idx_v;
//   * a revolute/prismatic joint has one coordinate (angle or length);
//   * the free-flyer root: q = [x y z qx qy qz qw] (pose of the root link in the world,
//     quaternion body-to-world), v = [omega; v_o] = the root's spatial velocity in ROOT
//     (body) coordinates, angular first (v_o: velocity of the root-frame origin);
//     a = dv/dt of that body-frame vector; tau = [moment; force] in root coordinates.
//   * the joint-space inertia matrix is nv x nv, column-major, in that ordering.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace plucker_bench {

/// What a peer is asked to time: the same task as one of plucker's algorithms.
enum class Task {
  InverseDynamics,  ///< tau = ID(q, v, a)            (compared with plucker's rnea)
  MassMatrix,       ///< M(q)                        (compared with plucker's crba)
  ForwardDynamics,  ///< qdd = FD(q, v, tau)          (compared with plucker's aba)
};
inline const char* task_name(Task t) {
  switch (t) {
    case Task::InverseDynamics:
      return "ID";
    case Task::MassMatrix:
      return "M";
    case Task::ForwardDynamics:
      return "FD";
  }
  return "?";
}

/// One movable joint of the plucker model.
struct JointDesc {
  std::string name;  ///< URDF joint name ("root_joint" for the added free-flyer)
  int idx_q = 0, idx_v = 0, nq = 1, nv = 1;
  bool free_flyer = false;
};

/// The model as the peers need it.
struct ModelDesc {
  std::string name;       ///< benchmark model name ("ur5", "solo12_ff")
  std::string urdf;       ///< URDF with <visual>/<collision> removed (a temp file)
  std::string root_link;  ///< name of the URDF root link
  bool floating = false;  ///< a free-flyer root was added (root_joint)
  int nq = 0, nv = 0;
  std::vector<JointDesc> joints;  ///< movable joints, plucker order
  double gravity[3] = {0.0, 0.0, -9.81};
};

/// A pool of states in plucker coordinates, column-major: state i of q is
/// q[i * nq .. i * nq + nq).
struct StatePool {
  int n = 0, nq = 0, nv = 0;
  std::vector<double> q, v, a, tau;
  const double* qi(int i) const { return q.data() + static_cast<std::size_t>(i) * nq; }
  const double* vi(int i) const { return v.data() + static_cast<std::size_t>(i) * nv; }
  const double* ai(int i) const { return a.data() + static_cast<std::size_t>(i) * nv; }
  const double* taui(int i) const { return tau.data() + static_cast<std::size_t>(i) * nv; }
};

/// One peer library bound to one model.
class Peer {
 public:
  virtual ~Peer() = default;
  /// "mujoco", "kdl", "dart".
  virtual const char* library() const = 0;
  /// What is timed for this task ("" when the peer cannot do it on this model); `why`
  /// receives the reason when it cannot.
  virtual std::string method(Task task, std::string& why) const = 0;
  /// Converts the pool to the peer's own coordinates (not timed).
  virtual void set_pool(const StatePool& pool) = 0;
  /// The timed call: the task on state i of the pool, starting from q (and v, a / tau).
  virtual void run(Task task, int i) = 0;
  /// The task on state i, result converted to plucker coordinates: nv values for
  /// ID and FD, nv * nv (column-major) for M.
  virtual void compute(Task task, int i, double* out) = 0;
};

/// Creates the adapter, or returns nullptr and sets `why` (e.g. the loader's error).
using PeerFactory = std::unique_ptr<Peer> (*)(const ModelDesc& model, std::string& why);

// The adapters are built into the shared library plucker_bench_peers with hidden
// visibility (see CMakeLists.txt); only these factories are exported.
#define PLUCKER_BENCH_PEER_API __attribute__((visibility("default")))
#ifdef PLUCKER_HAVE_MUJOCO
PLUCKER_BENCH_PEER_API std::unique_ptr<Peer> make_mujoco_peer(const ModelDesc& model, std::string& why);
#endif
/// The contact benchmark's world (bench/contact.cpp): the model of ModelDesc with a sphere of
/// `radius` on each foot (the body's URDF link name, the centre in that link's frame) and a
/// ground plane z = 0, Coulomb friction mu, time step dt; a joint PD controller
/// tau = kp (q_des - q) - kd v on the 1-DoF joints; `steps` steps from q0 (plucker coordinates,
/// v = 0) per rollout, `reps` rollouts per thread count. Timed: the mj_step loop with the
/// PD torques written into qfrc_applied. Results in plucker's conventions where they are states.
struct ContactWorld {
  std::vector<std::string> foot_bodies;
  std::vector<double> foot_centers;  ///< 3 per foot
  double radius = 0.02, mu = 0.8, dt = 1e-3, kp = 6.0, kd = 0.2;
  std::vector<double> q0, q_des;  ///< plucker coordinates (nq)
  int steps = 2000, reps = 5, batch = 8;
};
struct ContactTiming {
  std::string method;                  ///< what mj_step was configured to do
  std::vector<double> seconds_single;  ///< one rollout of `steps` steps, per rep
  std::vector<double> seconds_batch;   ///< `batch` rollouts on 2 threads, per rep
  double final_height = 0.0;           ///< base z at the end of a rollout
  int final_contacts = 0;              ///< MuJoCo's d->ncon then
  double final_force_z = 0.0;          ///< sum of the contact forces' z components then
};
#ifdef PLUCKER_HAVE_MUJOCO
/// Runs the contact world in MuJoCo; returns "" or why it cannot.
PLUCKER_BENCH_PEER_API std::string mujoco_contact_timing(const ModelDesc& model, const ContactWorld& world,
                                                         ContactTiming& out);
#endif
/// MuJoCo's finite-difference transition derivatives (plucker_bench --derivatives,
/// bench/derivatives_peer.cpp). mjd_transitionFD differentiates ONE mj_step, x' = step(x, u), with
/// x = [q tangent (nv); qvel (nv); act (na)]: A = dx'/dx is (2 nv + na) x (2 nv + na), one column
/// per perturbed state coordinate, each column an mj_step (forward differences: one perturbed
/// step per column plus the nominal one; centered: two per column; the velocity columns skip the
/// position stage, mj_stepSkip(mjSTAGE_POS), in MuJoCo's source). The model is the peer's of
/// make_mujoco_peer (same dynamics), with MuJoCo's Euler integrator (v' = v + h qdd,
/// q' = q + h v') at its default time step, no actuators (na = nu = 0) and no sensors; the state's
/// tau enters as qfrc_applied.
class TransitionFd {
 public:
  virtual ~TransitionFd() = default;
  /// 2 nv + na: the columns of A.
  virtual int columns() const = 0;
  /// The Euler step h (s).
  virtual double timestep() const = 0;
  /// Converts the pool to MuJoCo's coordinates (not timed).
  virtual void set_pool(const StatePool& pool) = 0;
  /// Timed: mj_forward on state i.
  virtual void forward(int i) = 0;
  /// Timed: mjd_transitionFD(eps, centered) on state i, A only.
  virtual void transition(int i, bool centered) = 0;
  /// The mj_step calls one mjd_transitionFD(centered) on state i makes, counted by how far it
  /// advances d->time (MuJoCo 2.2.2 does not restore it) in units of h.
  virtual int steps_per_call(int i, bool centered) = 0;
  /// d qdd / d q and d qdd / d v of state i in plucker's coordinates (nv x nv, column-major;
  /// tangent columns as plucker's aba_derivatives), recovered from the velocity rows of A:
  /// dv'/dq = h dqdd/dq, dv'/dv = I + h dqdd/dv in MuJoCo's coordinates, then mapped (the
  /// free joint exactly, including the terms from its velocity, acceleration and force conversions).
  virtual void qdd_derivatives(int i, bool centered, double* dqdd_dq, double* dqdd_dv) = 0;
};
#ifdef PLUCKER_HAVE_MUJOCO
/// MuJoCo's transition derivatives on the peer model of `model`, finite-difference step eps;
/// nullptr and `why` when it cannot be made.
PLUCKER_BENCH_PEER_API std::unique_ptr<TransitionFd> make_mujoco_transition_fd(const ModelDesc& model, double eps,
                                                                               std::string& why);
#endif
#ifdef PLUCKER_HAVE_KDL
PLUCKER_BENCH_PEER_API std::unique_ptr<Peer> make_kdl_peer(const ModelDesc& model, std::string& why);
#endif
#ifdef PLUCKER_HAVE_DART
PLUCKER_BENCH_PEER_API std::unique_ptr<Peer> make_dart_peer(const ModelDesc& model, std::string& why);
#endif

// ---- small plain-array helpers for the free-flyer conversions (no Eigen) ----

/// Row-major rotation matrix (body -> world) of the unit quaternion [x y z w].
inline void quat_xyzw_to_rot(const double* q, double R[9]) {
  const double x = q[0], y = q[1], z = q[2], w = q[3];
  R[0] = 1 - 2 * (y * y + z * z);
  R[1] = 2 * (x * y - z * w);
  R[2] = 2 * (x * z + y * w);
  R[3] = 2 * (x * y + z * w);
  R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - x * w);
  R[6] = 2 * (x * z - y * w);
  R[7] = 2 * (y * z + x * w);
  R[8] = 1 - 2 * (x * x + y * y);
}
/// out = R x
inline void rot_mul(const double R[9], const double* x, double* out) {
  for (int r = 0; r < 3; ++r) out[r] = R[3 * r] * x[0] + R[3 * r + 1] * x[1] + R[3 * r + 2] * x[2];
}
/// out = R^T x
inline void rot_tmul(const double R[9], const double* x, double* out) {
  for (int c = 0; c < 3; ++c) out[c] = R[c] * x[0] + R[3 + c] * x[1] + R[6 + c] * x[2];
}
/// out = a x b
inline void cross3(const double* a, const double* b, double* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

}  // namespace plucker_bench
