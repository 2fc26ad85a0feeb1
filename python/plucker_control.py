"""Hybrid motion/force control with dynamically decoupled subsystems (Featherstone's contact model),
and rk4_step, the simulation step of the control examples.

A robot's task frame (an end-effector) touches its environment through a frictionless contact
described by two dual subspaces at the frame (world-aligned axes at the frame's origin, plucker's
"local_world_aligned"; motion = [omega; v], force = [moment; force]):

    T (6 x k)      the force subspace: the wrenches the contact can exert on the robot, f_c = T lam;
    N (6 x 6-k)    the motion freedoms: the relative motions it allows, with N^T T = 0.

A point contact of normal n at the frame origin has T = [0; n], N = [I 0; 0 t1 t2]; a flat face adds
the two tangential moments to T. With the operational-space quantities of the frame (Phi = Lambda^-1
= J M^-1 J^T and the bias mu + p of plucker.operational_space) the task-space equation of motion is

    xdd = Phi (F + T lam - bias),       tau = J^T F + N_null^T tau_0.

**Decomposition** (Featherstone & Khatib 1998; Featherstone, Sonck & Khatib 1999; Featherstone
2004: the motion and force subsystems made independent by a change of basis in the dual spaces).
The motion space splits as span(N) + span(Phi T), the force space as span(Lambda N) + span(T), and
the two splits are dual: (Lambda N)^T (Phi T) = N^T T = 0. In these bases

    xdd = N alpha + Phi T gamma,        F - bias = Lambda N f_m + T f_f
    alpha = (N^T Lambda N)^-1 N^T Lambda xdd   (= f_m)
    gamma = (T^T Phi T)^-1 T^T xdd             (= f_f + lam, times T^T Phi T)

so the motion coordinates alpha depend only on f_m and the force coordinates only on f_f and the
contact force lam, whatever the environment does (it acts through T only). In the joint space the
same split gives three M-orthogonal subspaces of joint velocities (M^-1-orthogonal torques):
motion S_m = M^-1 J^T Lambda N, force S_f = M^-1 J^T T, and the null space of J (redundancy).

**Controller.** tau = J^T (Lambda N a_m - T f + bias) + N_null^T tau_0 gives alpha = a_m exactly,
and against a rigid environment (T^T xdd = 0, a constant T) the contact force lam = f, whatever a_m
and tau_0 are. A compliant or moving environment changes lam and gamma only.

The formulas are derived here from the abstracts and the dual-space construction above; the papers'
own equations were not available to check them against (the documentation's contact page, section
"Hybrid motion/force control", says which statements are confirmed).
"""
from typing import NamedTuple

import numpy as np

import plucker

_TOL = 1e-9  # relative tolerance of the subspace checks (N^T T = 0, ranks)


class Decomposition(NamedTuple):
    """The dynamically decoupled motion/force split of a task frame in contact (see the module doc).

    Task space (6-vectors at the frame, world-aligned axes): T (6, k), N (6, 6-k), Lambda, Phi, bias,
    J (6, nv), Jdot_v (6,); Lambda_motion = N^T Lambda N, Phi_force = T^T Phi T; the coordinate maps
    motion_coordinates (6-k, 6): alpha = motion_coordinates @ xdd, force_coordinates (k, 6): gamma =
    force_coordinates @ xdd, with xdd = N alpha + Phi T gamma.
    Joint space: S_motion (nv, 6-k) = M^-1 J^T Lambda N, S_force (nv, k) = M^-1 J^T T, N_null (nv, nv)
    = I - Jbar J (the redundancy; tau_0 enters as N_null^T tau_0), M (nv, nv)."""
    T: np.ndarray
    N: np.ndarray
    J: np.ndarray
    Jdot_v: np.ndarray
    Lambda: np.ndarray
    Phi: np.ndarray
    bias: np.ndarray
    Lambda_motion: np.ndarray
    Phi_force: np.ndarray
    motion_coordinates: np.ndarray
    force_coordinates: np.ndarray
    S_motion: np.ndarray
    S_force: np.ndarray
    N_null: np.ndarray
    M: np.ndarray


def _matrix(name, value, rows=None):
    a = np.array(value, dtype=np.float64)
    if a.ndim == 1:
        a = a.reshape(-1, 1)
    if a.ndim != 2 or (rows is not None and a.shape[0] != rows):
        raise ValueError(f"plucker_control: {name} must be a {rows} x k matrix, got shape {np.shape(value)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"plucker_control: {name} has a non-finite entry")
    return a


def _vector(name, value, size):
    a = np.array(value, dtype=np.float64).reshape(-1) if np.ndim(value) else np.array([value], dtype=np.float64)
    if a.shape != (size,):
        raise ValueError(f"plucker_control: {name} must have {size} entries, got {np.size(value)}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"plucker_control: {name} has a non-finite entry")
    return a


def _unit(name, value):
    n = _vector(name, value, 3)
    norm = np.linalg.norm(n)
    if norm == 0.0:
        raise ValueError(f"plucker_control: {name} is zero")
    return n / norm


def point_contact(normal, point=(0.0, 0.0, 0.0)):
    """Force subspace T (6 x 1) of a frictionless point contact: the force along the unit `normal`
    (world axes, pointing from the environment into the robot) through `point` (the contact point
    relative to the task frame's origin, world axes), as the wrench [point x n; n] about the origin."""
    n = _unit("normal", normal)
    p = _vector("point", point, 3)
    return np.concatenate([np.cross(p, n), n]).reshape(6, 1)


def face_contact(normal, point=(0.0, 0.0, 0.0)):
    """Force subspace T (6 x 3) of a frictionless flat face against a plane: the normal force through
    `point` and the moments about the two tangent axes (the face cannot tip), world axes."""
    n = _unit("normal", normal)
    t1, t2 = tangent_basis(n)
    p = _vector("point", point, 3)
    return np.column_stack([np.concatenate([np.cross(p, n), n]), np.concatenate([t1, np.zeros(3)]),
                            np.concatenate([t2, np.zeros(3)])])


def tangent_basis(normal):
    """Two unit vectors t1, t2 with (t1, t2, n) a right-handed orthonormal frame."""
    n = _unit("normal", normal)
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    t1 = np.cross(helper, n)
    t1 /= np.linalg.norm(t1)
    return t1, np.cross(n, t1)


def motion_freedoms(T):
    """An orthonormal basis N (6 x 6-k) of the motion vectors m with T^T m = 0 (the contact's motion
    freedoms: the annihilator of the force subspace in the motion/force duality)."""
    T = check_force_subspace(T)
    _, _, vt = np.linalg.svd(T.T)
    return vt[T.shape[1]:].T.copy()


def check_force_subspace(T):
    """T as a 6 x k float matrix, 1 <= k <= 5, finite, of full column rank; ValueError otherwise."""
    T = _matrix("T", T, rows=6)
    k = T.shape[1]
    if not 1 <= k <= 5:
        raise ValueError(f"plucker_control: T must have 1 to 5 columns (force freedoms), got {k}")
    s = np.linalg.svd(T, compute_uv=False)
    if s[-1] <= _TOL * s[0] or s[0] == 0.0:
        raise ValueError(f"plucker_control: the columns of T are linearly dependent (singular values {s})")
    return T


def check_motion_freedoms(T, N):
    """N as a 6 x (6-k) float matrix of full column rank with N^T T = 0 (to 1e-9 relative to the
    largest entries of N and T); ValueError otherwise."""
    N = _matrix("N", N, rows=6)
    k = T.shape[1]
    if N.shape[1] != 6 - k:
        raise ValueError(f"plucker_control: N must have 6 - k = {6 - k} columns for a T of {k} columns, "
                         f"got {N.shape[1]}")
    s = np.linalg.svd(N, compute_uv=False)
    if s[-1] <= _TOL * s[0] or s[0] == 0.0:
        raise ValueError(f"plucker_control: the columns of N are linearly dependent (singular values {s})")
    residual = np.abs(N.T @ T).max()
    if residual > _TOL * np.abs(N).max() * np.abs(T).max() * 6:
        raise ValueError(f"plucker_control: N is not the annihilator of T: max |N^T T| = {residual:.3g} "
                         f"(the motion freedoms must do no work against the contact forces)")
    return N


def decompose(model, q, v, frame, T, N=None):
    """The decoupled motion/force decomposition of `frame` (a body or frame name of `model`) at
    (q, v) for a contact of force subspace T (6 x k) and motion freedoms N (6 x 6-k; default
    motion_freedoms(T)), world-aligned axes at the frame's origin. Returns a Decomposition."""
    T = check_force_subspace(T)
    N = motion_freedoms(T) if N is None else check_motion_freedoms(T, N)
    if not isinstance(frame, str):
        raise ValueError("plucker_control: frame must be the name of a body or frame (a 6-D task)")
    os_ = plucker.operational_space(model, q, v, [frame], frame="local_world_aligned")
    Lam, Phi = os_.Lambda, os_.Lambda_inv
    Lm = N.T @ Lam @ N                   # the motion subsystem's inertia
    Pf = T.T @ Phi @ T                   # the force subsystem's inverse inertia
    alpha_of = np.linalg.solve(Lm, N.T @ Lam)   # alpha = (N^T Lambda N)^-1 N^T Lambda xdd
    gamma_of = np.linalg.solve(Pf, T.T)         # gamma = (T^T Phi T)^-1 T^T xdd
    Minv_JT = os_.Jbar @ Phi                    # M^-1 J^T = Jbar Lambda^-1
    M = plucker.crba(model, q)
    return Decomposition(T=T, N=N, J=os_.J, Jdot_v=os_.Jdot_v, Lambda=Lam, Phi=Phi, bias=os_.bias,
                         Lambda_motion=Lm, Phi_force=Pf, motion_coordinates=alpha_of,
                         force_coordinates=gamma_of, S_motion=Minv_JT @ Lam @ N, S_force=Minv_JT @ T,
                         N_null=os_.N, M=M)


def hybrid_torque(dec, a_motion, force, tau_posture=None):
    """Joint torques of the decoupled hybrid controller

        tau = J^T (Lambda N a_motion - T force + bias) + N_null^T tau_posture

    a_motion (6-k): the commanded motion-subsystem acceleration (alpha = a_motion exactly);
    force (k): the commanded contact force, in T's coordinates, that the environment exerts on the
    robot (f_c = T force against a rigid environment; the robot pushes with -T force);
    tau_posture (nv, optional): a joint torque filtered through the null space (no task effect)."""
    k = dec.T.shape[1]
    a_m = _vector("a_motion", a_motion, 6 - k)
    f = _vector("force", force, k)
    F = dec.Lambda @ (dec.N @ a_m) - dec.T @ f + dec.bias
    tau = dec.J.T @ F
    if tau_posture is not None:
        tau = tau + dec.N_null.T @ _vector("tau_posture", tau_posture, dec.M.shape[0])
    return tau


def selection_torque(dec, a_motion, force, tau_posture=None):
    """The non-decoupled comparison: the same commands with a Euclidean selection matrix applied to
    the operational-space force (Raibert & Craig's selection matrix, here S = N (N^T N)^-1 N^T),

        tau = J^T (S Lambda N a_motion - T force + bias) + N_null^T tau_posture.

    S Lambda N a_motion has a component Phi-coupled to T: a motion command changes the contact force
    and alpha != a_motion. It coincides with hybrid_torque where Lambda maps span(N) into itself."""
    k = dec.T.shape[1]
    a_m = _vector("a_motion", a_motion, 6 - k)
    f = _vector("force", force, k)
    S = dec.N @ np.linalg.solve(dec.N.T @ dec.N, dec.N.T)
    F = S @ (dec.Lambda @ (dec.N @ a_m)) - dec.T @ f + dec.bias
    tau = dec.J.T @ F
    if tau_posture is not None:
        tau = tau + dec.N_null.T @ _vector("tau_posture", tau_posture, dec.M.shape[0])
    return tau


def acceleration_selection_torque(dec, a_motion, a_force, force, tau_posture=None):
    """The second non-decoupled comparison: a Euclidean selection of the task acceleration, with the
    force loop's output a_force (k) posed as an acceleration along T's columns read as motion vectors
    (the Euclidean identification of the two spaces, as with a Cartesian selection matrix):

        tau = J^T (Lambda (N a_motion + T a_force) - T force + bias) + N_null^T tau_posture.

    Lambda T a_force is not in span(T): the force loop moves the motion subsystem,
    alpha = a_motion + (N^T Lambda N)^-1 N^T Lambda T a_force."""
    k = dec.T.shape[1]
    a_m = _vector("a_motion", a_motion, 6 - k)
    a_f = _vector("a_force", a_force, k)
    f = _vector("force", force, k)
    F = dec.Lambda @ (dec.N @ a_m + dec.T @ a_f) - dec.T @ f + dec.bias
    tau = dec.J.T @ F
    if tau_posture is not None:
        tau = tau + dec.N_null.T @ _vector("tau_posture", tau_posture, dec.M.shape[0])
    return tau


def environment_leak(dec, G):
    """The map from the force subsystem's net force (gamma = f_f + lam, k-vector) to the motion
    measured in coordinates s with sdd = G xdd (G (6-k x 6), G N = I, e.g. the Euclidean surface
    coordinates N^T for an orthonormal N): sdd = alpha + G Phi T gamma. G Phi T is zero only when G
    annihilates Phi T; add -G Phi T (lam_measured - f) to a_motion to cancel it with a force sensor."""
    G = _matrix("G", G)
    if G.shape != (dec.N.shape[1], 6):
        raise ValueError(f"plucker_control: G must be {dec.N.shape[1]} x 6, got {G.shape}")
    if np.abs(G @ dec.N - np.eye(dec.N.shape[1])).max() > 1e-9 * max(1.0, np.abs(G).max() * np.abs(dec.N).max()):
        raise ValueError("plucker_control: G must be a left inverse of N (G N = I)")
    return G @ dec.Phi @ dec.T


def rigid_contact_force(model, q, v, tau, dec):
    """The contact force lam (k) of a rigid, fixed environment at (q, v) under joint torques tau:
    the KKT system [M, -Jc^T; Jc, 0] [vdot; lam] = [tau - C; -T^T Jdot_v] with Jc = T^T J, M by the
    CRBA and C by the RNEA (independent of the operational-space quantities). Returns (vdot, lam)."""
    nv = dec.M.shape[0]
    tau = _vector("tau", tau, nv)
    C = plucker.rnea(model, q, v, np.zeros(nv))
    Jc = dec.T.T @ dec.J
    k = Jc.shape[0]
    K = np.block([[dec.M, -Jc.T], [Jc, np.zeros((k, k))]])
    sol = np.linalg.solve(K, np.concatenate([tau - C, -dec.T.T @ dec.Jdot_v]))
    return sol[:nv], sol[nv:]


def rk4_step(model, q, v, dt, acceleration, t=0.0):
    """One classical Runge-Kutta step of the state (q, v) under qdd = acceleration(t, q, v), the
    controller and plant evaluated at each of the four stages (the examples' simulation loop).

    The configuration moves on its manifold: each stage's q is plucker.integrate(model, q, v_stage,
    h) from the step's start, and the step's q is plucker.integrate of the weighted mean velocity,
    so quaternions stay unit. Returns (q_next, v_next)."""
    if not dt > 0.0:
        raise ValueError(f"plucker_control.rk4_step: dt must be > 0, got {dt!r}")
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    a1 = np.asarray(acceleration(t, q, v), dtype=np.float64)
    q2, v2 = plucker.integrate(model, q, v, dt / 2), v + dt / 2 * a1
    a2 = np.asarray(acceleration(t + dt / 2, q2, v2), dtype=np.float64)
    q3, v3 = plucker.integrate(model, q, v2, dt / 2), v + dt / 2 * a2
    a3 = np.asarray(acceleration(t + dt / 2, q3, v3), dtype=np.float64)
    q4, v4 = plucker.integrate(model, q, v3, dt), v + dt * a3
    a4 = np.asarray(acceleration(t + dt, q4, v4), dtype=np.float64)
    q_next = plucker.integrate(model, q, (v + 2 * v2 + 2 * v3 + v4) / 6, dt)
    return q_next, v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
