#!/usr/bin/env python3
"""Balance studies (issue #22): velocity gains (Featherstone, RSS 2015 / IJRR 35(14) 2016) and the
simple planar model of balancing with its four-term preview controller (Featherstone, ISRR 2015 /
IJRR 2017; Azad & Featherstone, Autonomous Robots 40(1) 2016).

Computes the velocity gains of planar and spatial pendulums on a point foot with
plucker_studies.velocity_gain (plucker.crba / plucker.minv), checks them against closed forms and
simulated impulses, sweeps the mass and length distribution of a triple pendulum, simulates the
balance controller (RK4 over plucker.aba) for push recovery and command tracking with and without
the preview filter, and analyses HyQ (../shared/models/hyq.urdf) standing on a diagonal pair of
feet, the gains on a rolling foot (vs its radius) and on a compliant support area (vs its
stiffness, checked against plucker.Simulator); then the triple pendulum following a commanded
balance-joint move while its other joint moves, the controller designed from link masses wrong by
10 % (every sign pattern) and by growing amounts until it fails (closed-loop poles and static
equilibria of the true robot under the wrong law, checked against the simulations), and a grid
of initial tilts with the recovery boundary under stated torque and travel limits. Writes
docs/studies/balance.md and its PNG figures (the tilt grid runs on two processes).

    PYTHONPATH=build/python:python /usr/bin/python3 studies/balance.py [--quick] [--out DIR]

Deterministic (no random input). --quick runs coarser sweeps and shorter simulations (tests).
"""
import itertools
import math
import os
import sys
import time
import warnings
import xml.etree.ElementTree as ET

import numpy as np

import study_pages as sp  # first: it puts python/ and build/python/ on sys.path

import plucker  # noqa: E402
import plucker_studies as ps  # noqa: E402

MODELS_DIR = sp.MODELS_DIR

FULL = dict(simplex_step=0.025, sim_dt=1e-3, sim_T=5.0, track_T=6.0, record=10,
            compliant_k=(0.0, 20.0, 100.0, 1e3, 1e4, 1e5), robust_dt=4e-3, margin_step=0.02,
            sweep_eps=(0.1, 0.2, 0.3, 0.4, 0.5), tilt_T=4.0, tilt_dt=5e-3, tilt_n=(11, 9))
QUICK = dict(simplex_step=0.1, sim_dt=4e-3, sim_T=2.5, track_T=3.0, record=5, compliant_k=(100.0,), robust_dt=5e-3,
             margin_step=0.2, sweep_eps=(0.5,), tilt_T=2.0, tilt_dt=5e-3, tilt_n=(3, 2))

# The double pendulum of the controller study and the checks: a leg (link 1) and a heavy body (link 2).
DP = dict(lengths=[1.0, 0.8], masses=[2.0, 3.0], coms=[0.45, 0.3], inertias=[0.15, 0.4])
# A triple pendulum: leg, thigh-like middle link, heavy top (torso with a large inertia).
TP = dict(lengths=[0.5, 0.5, 0.6], masses=[1.0, 1.5, 5.0], coms=[0.25, 0.25, 0.25], inertias=[0.02, 0.03, 0.4])


fmt = sp.fmt_sig  # numbers in the page's tables


def impulse_gain(model, q0, joint, impulse=0.5, eps=1e-4, substeps=20):
    """Gain from a simulated torque pulse (minus the same interval without it)."""
    j = model.joint_v_index(joint)
    out = []
    for scale in (1.0, 0.0):
        tau = np.zeros(model.nv)
        tau[j] = scale * impulse / eps
        _, Q, V = ps.rk4_rollout(model, q0, np.zeros(model.nv), lambda t, q, v: tau, eps, eps / substeps)
        D = ps.horizontal_directions(model, q0)
        out.append((V[-1], float((D @ plucker.center_of_mass_jacobian(model, Q[-1]) @ V[-1])[0])))
    dv = out[0][0] - out[1][0]
    dxd = out[0][1] - out[1][1]
    return dxd / dv[j]


def study_checks():
    rows = []
    m = ps.planar_chain(**DP)
    (l1, _), (m1, m2), (c1, c2), (I1, I2) = DP["lengths"], DP["masses"], DP["coms"], DP["inertias"]
    for q in [(0.0, 0.0), (0.1, 0.5), (-0.3, 1.2)]:
        q1, q2 = q
        H11 = I1 + I2 + m1 * c1 ** 2 + m2 * (l1 ** 2 + c2 ** 2 + 2 * l1 * c2 * math.cos(q2))
        H12 = I2 + m2 * (c2 ** 2 + l1 * c2 * math.cos(q2))
        J1 = (m1 * c1 * math.cos(q1) + m2 * (l1 * math.cos(q1) + c2 * math.cos(q1 + q2))) / (m1 + m2)
        J2 = m2 * c2 * math.cos(q1 + q2) / (m1 + m2)
        closed = J2 - J1 * H12 / H11
        lib = ps.velocity_gain(m, np.array(q), "joint2")
        sim = impulse_gain(m, np.array(q), "joint2")
        rows.append(("double", f"({q1}, {q2})", "joint2", closed, lib, sim, abs(lib - closed), abs(sim - lib)))
    m3 = ps.planar_chain(**TP)
    q3 = np.array([0.1, -0.4, 0.6])
    for j, other in (("joint2", 3), ("joint3", 2)):
        welded = ps.planar_chain(**TP, locked={other: q3[other - 1]})
        qw = np.delete(q3, other - 1)
        lib = ps.velocity_gain(m3, q3, j)
        rows.append(("triple, locked", "(0.1, -0.4, 0.6)", j, ps.velocity_gain(welded, qw, j), lib,
                     impulse_gain(welded, qw, j), abs(lib - ps.velocity_gain(welded, qw, j)), abs(impulse_gain(welded, qw, j) - lib)))
        lib = ps.velocity_gain(m3, q3, j, others="free")
        sim = impulse_gain(m3, q3, j)
        rows.append(("triple, free", "(0.1, -0.4, 0.6)", j, "", lib, sim, "", abs(sim - lib)))
    return rows


# ------------------------------------------------------------------------ 2. triple pendulum design
def simplex(step):
    n = int(round(1 / step))
    pts = []
    for i in range(1, n - 1):
        for k in range(1, n - i):
            pts.append((i * step, (n - i - k) * step, k * step))
    return np.array(pts)


def design_sweep(cfg):
    """Gains at the upright pose for mass fractions (equal lengths) and length fractions (equal
    masses) of a triple pendulum of total mass 1 kg and height 1 m, uniform rods."""
    out = {}
    for kind in ("mass", "length"):
        pts = simplex(cfg["simplex_step"])
        G2, G3, Tc, G2f, G3f = [], [], [], [], []
        for f in pts:
            lengths = [1 / 3] * 3 if kind == "mass" else list(f)
            masses = list(f) if kind == "mass" else [1 / 3] * 3
            m = ps.planar_chain(lengths, masses)
            q = np.zeros(3)
            b = ps.planar_balance_model(m, q)
            G2.append(b.gains["joint2"])
            G3.append(b.gains["joint3"])
            Tc.append(b.Tc)
            G2f.append(ps.velocity_gain(m, q, "joint2", others="free"))
            G3f.append(ps.velocity_gain(m, q, "joint3", others="free"))
        out[kind] = dict(pts=pts, G2=np.array(G2), G3=np.array(G3), Tc=np.array(Tc), G2f=np.array(G2f), G3f=np.array(G3f))
    return out


def named_designs():
    """A few triple pendulums of mass 1 kg and height 1 m, upright: the gains and Tc."""
    designs = [
        ("uniform", [1 / 3] * 3, [1 / 3] * 3),
        ("heavy bottom (0.6, 0.3, 0.1)", [1 / 3] * 3, [0.6, 0.3, 0.1]),
        ("heavy top (0.1, 0.3, 0.6)", [1 / 3] * 3, [0.1, 0.3, 0.6]),
        ("heavy middle (0.2, 0.6, 0.2)", [1 / 3] * 3, [0.2, 0.6, 0.2]),
        ("long bottom link (0.6, 0.2, 0.2)", [0.6, 0.2, 0.2], [1 / 3] * 3),
        ("long top link (0.2, 0.2, 0.6)", [0.2, 0.2, 0.6], [1 / 3] * 3),
        ("long top, heavy top", [0.2, 0.2, 0.6], [0.1, 0.3, 0.6]),
    ]
    rows = []
    for name, lengths, masses in designs:
        m = ps.planar_chain(lengths, masses)
        b = ps.planar_balance_model(m, np.zeros(3))
        rows.append((name, b.gains["joint2"], b.gains["joint3"], b.Tc, b.height,
                     b.gains["joint2"] * b.Tc, b.gains["joint3"] * b.Tc))
    return rows


# ------------------------------------------------------------------------ 2b. 3-D point contact
def spatial_double_pendulum_urdf(lengths, masses, coms, inertias, contact_height=0.0, link1_offset=0.0):
    """A spatial double pendulum on a point contact: three passive revolute joints (x, y, z
    axes, through the contact point; massless links between them) then link 1 (z up), a 2-DoF hip
    (joint2y about y, then joint2x about x) and link 2; inertias isotropic about each COM.
    contact_height: the contact joints' axes meet at (0, 0, contact_height) (the centre of a
    rolling ball foot of that radius); link1_offset: link 1 (its COM and the hip) is raised by that
    much above the contact joints (a rigid foot reaching down to a pivot on the ground)."""
    (l1, _), (m1, m2), (c1, c2), (I1, I2) = lengths, masses, coms, inertias
    c1, l1 = c1 + link1_offset, l1 + link1_offset
    out = ['<?xml version="1.0"?>', '<robot name="spatial_double">', '<link name="ground"/>',
           '<link name="cx"/>', '<link name="cy"/>', '<link name="hip"/>']
    for name, m, c, I in (("link1", m1, c1, I1), ("link2", m2, c2, I2)):
        out.append(f'<link name="{name}"><inertial><origin xyz="0 0 {c!r}"/><mass value="{m!r}"/>'
                   f'<inertia ixx="{I!r}" ixy="0" ixz="0" iyy="{I!r}" iyz="0" izz="{I!r}"/></inertial></link>')
    joints = [("contact_x", "ground", "cx", contact_height, "1 0 0"), ("contact_y", "cx", "cy", 0.0, "0 1 0"),
              ("contact_z", "cy", "link1", 0.0, "0 0 1"), ("joint2y", "link1", "hip", l1, "0 1 0"),
              ("joint2x", "hip", "link2", 0.0, "1 0 0")]
    for name, parent, child, z, axis in joints:
        out.append(f'<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/>'
                   f'<origin xyz="0 0 {z!r}"/><axis xyz="{axis}"/></joint>')
    out.append("</robot>")
    return "\n".join(out)


def study_spatial():
    m = plucker.Model.from_urdf_string(spatial_double_pendulum_urdf(**DP))
    contact = ["contact_x", "contact_y", "contact_z"]
    planar = ps.planar_chain(**DP)
    rows = []
    for q in (np.zeros(5), np.array([0.1, -0.2, 0.3, 0.5, -0.4])):
        G = ps.velocity_gain_matrix(m, q, ["joint2y", "joint2x"], contact_joints=contact)
        rows.append((q, G))
    # Sagittal motion only (x tilt and hip x at 0): the x row of the joint2y column is the planar gain.
    qs = np.array([0.0, 0.1, 0.0, 0.5, 0.0])
    Gs = ps.velocity_gain_matrix(m, qs, ["joint2y", "joint2x"], contact_joints=contact)
    Gp = ps.velocity_gain(planar, np.array([0.1, 0.5]), "joint2")
    # An impulse on joint2x at the general configuration, simulated (contact joints torque-free).
    q = rows[1][0]
    D = ps.horizontal_directions(m, q, contact)
    eps = 1e-4
    res = []
    for scale in (1.0, 0.0):
        tau = np.zeros(5)
        tau[4] = scale * 0.5 / eps
        _, Q, V = ps.rk4_rollout(m, q, np.zeros(5), lambda t, qq, vv: tau, eps, eps / 20)
        res.append((V[-1], D @ plucker.center_of_mass_jacobian(m, Q[-1]) @ V[-1]))
    dv = res[0][0] - res[1][0]
    sim = (res[0][1] - res[1][1]) / dv[4]
    free = ps.velocity_gain_matrix(m, q, ["joint2x"], others="free", contact_joints=contact)[:, 0]
    return dict(rows=rows, sagittal=(Gs, Gp), impulse=(sim, free))


# ------------------------------------------------------------------------ 5. rolling contact
ROLL_R = np.linspace(0.0, 0.5, 51)
UNIFORM3 = dict(lengths=[1 / 3] * 3, masses=[1 / 3] * 3)


def rolling_time_constant(model, q, r):
    """Tc of the rolling robot: H_r11 / (m g h), h = COM height above the foot's centre (gravity's
    moment about the contact point is m g x with x measured from the centre's vertical)."""
    b = ps.planar_balance_model(model, q)
    Hr, _ = ps.rolling_inertia(model, q, r)
    return math.sqrt(Hr[0, 0] / (b.mass * b.gravity * b.height))


def study_rolling():
    out = {}
    for name, params in (("TP", TP), ("uniform", UNIFORM3)):
        m = ps.planar_chain(**params)
        q = np.zeros(3)
        rows = {key: [] for key in ("G2", "G3", "G2g", "G3g", "Tc")}
        for r in ROLL_R:
            rows["G2"].append(ps.velocity_gain(m, q, "joint2", radius=r))
            rows["G3"].append(ps.velocity_gain(m, q, "joint3", radius=r))
            rows["G2g"].append(ps.velocity_gain(m, q, "joint2", radius=r, reference="ground"))
            rows["G3g"].append(ps.velocity_gain(m, q, "joint3", radius=r, reference="ground"))
            rows["Tc"].append(rolling_time_constant(m, q, r))
        out[name] = {k: np.array(v) for k, v in rows.items()}
        out[name]["height"] = ps.planar_balance_model(m, q).height
    # r -> 0 on the triple pendulum (TP), q general
    m = ps.planar_chain(**TP)
    q = np.array([0.1, -0.4, 0.6])
    G0 = ps.velocity_gain(m, q, "joint3")
    out["limit"] = [(r, ps.velocity_gain(m, q, "joint3", radius=r) - G0) for r in (1e-2, 1e-3, 1e-5, 1e-7)]
    out["limit_G0"] = G0
    # The instant of rolling is a rotation about the contact point: a second model pinned there.
    C = ["contact_x", "contact_y", "contact_z"]
    checks = []
    for r in (0.05, 0.2):
        roll = plucker.Model.from_urdf_string(spatial_double_pendulum_urdf(**DP, contact_height=r))
        pin = plucker.Model.from_urdf_string(spatial_double_pendulum_urdf(**DP, link1_offset=r))
        for qv in (np.array([0.0, 0.0, 0.0, 0.5, 0.0]), np.array([0.0, 0.0, 0.8, -0.3, 0.6])):
            Gr = ps.velocity_gain_matrix(roll, qv, ["joint2y", "joint2x"], contact_joints=C, radius=r, reference="ground")
            Gc = ps.velocity_gain_matrix(roll, qv, ["joint2y", "joint2x"], contact_joints=C, radius=r)
            Gp = ps.velocity_gain_matrix(pin, qv, ["joint2y", "joint2x"], contact_joints=C)
            Hr, _ = ps.rolling_inertia(roll, qv, r, C)
            checks.append((r, qv, Gc, Gr, Gp, float(np.max(np.abs(Gr - Gp))),
                           float(np.max(np.abs(Hr - plucker.crba(pin, qv))))))
    out["pin"] = checks
    return out


# ------------------------------------------------------------------------ 6. compliant support
COMPLIANT_K = np.concatenate([[0.0], np.logspace(0, 6, 121)])
FOOT_POINTS = np.linspace(-0.1, 0.1, 5)  # the sole's contact points (m), 0.2 m wide


def simulated_compliant_gain(model, q0, joint, k, T, eps=5e-4, dqd=1e-3):
    """The mean-gain experiment on plucker.Simulator: the foot pressed 1 mm into a linear
    compliant ground at FOOT_POINTS (stiffness k / sum s_i^2 each, no damping or friction, so the
    rotational stiffness is k), joint ramped to dqd within eps and held, the other non-contact
    joints held; returns COM displacement / joint displacement after T (k = 0: plucker.aba)."""
    if k == 0.0:
        def acc(q, v, tau):
            return plucker.aba(model, q, v, tau)
    else:
        sim = plucker.Simulator(model, dt=1e-3)
        sim.add_ground(offset=1e-3, contact="linear", stiffness=k / np.sum(FOOT_POINTS ** 2), damping=0.0, friction=0.0)
        for s in FOOT_POINTS:
            sim.add_point("link1", position=(s, 0.0, 0.0))
        acc = sim.acceleration
    j = model.joint_v_index(joint)
    P = np.arange(1, model.nv)

    def cmd(t):
        out = np.zeros(P.size)
        out[j - 1] = dqd / eps if t < eps else 0.0
        return out
    _, Q, _ = ps.prescribed_rollout(acc, q0, np.zeros(model.nv), P, cmd, T, eps / 4)
    D = ps.horizontal_directions(model, Q[-1])
    x = float((D @ (plucker.center_of_mass(model, Q[-1]) - ps.contact_point(model, Q[-1])))[0])
    return x / (Q[-1, j] - Q[0, j]), T - eps / 2  # the ramp delays the step by eps/2


def study_compliant(cfg):
    out = {}
    m = ps.planar_chain(**DP)
    q = np.zeros(2)
    b = ps.planar_balance_model(m, q)
    out["dp"] = dict(Tc=b.Tc, kcrit=b.mass * b.gravity * b.height, point=ps.velocity_gain(m, q, "joint2"),
                     JA=float(plucker.center_of_mass_jacobian(m, q)[0, 1]), windows={})
    for T in (0.1, b.Tc, 2 * b.Tc):
        out["dp"]["windows"][T] = np.array([ps.compliant_contact_gain(m, q, ["joint2"], k, T)[0, 0] for k in COMPLIANT_K])
    sims = []
    for k in cfg["compliant_k"]:
        g, Teff = simulated_compliant_gain(m, q, "joint2", k, b.Tc)
        sims.append((k, g, ps.compliant_contact_gain(m, q, ["joint2"], k, Teff)[0, 0]))
    out["dp"]["sims"] = sims
    m3 = ps.planar_chain(**TP)
    q3 = np.zeros(3)
    b3 = ps.planar_balance_model(m3, q3)
    JA = plucker.center_of_mass_jacobian(m3, q3)[0]
    out["tp"] = dict(Tc=b3.Tc, kcrit=b3.mass * b3.gravity * b3.height, JA=(JA[1], JA[2]),
                     point=(ps.velocity_gain(m3, q3, "joint2"), ps.velocity_gain(m3, q3, "joint3")),
                     G=np.array([ps.compliant_contact_gain(m3, q3, ["joint2", "joint3"], k, b3.Tc)[0] for k in COMPLIANT_K]))
    g3, Teff = simulated_compliant_gain(m3, q3, "joint3", 1e3, b3.Tc)
    out["tp"]["sim"] = (1e3, g3, ps.compliant_contact_gain(m3, q3, ["joint3"], 1e3, Teff)[0, 0])
    return out


# ------------------------------------------------------------------------ 3. the controller
def smooth_step(t, t0, t1, a, b):
    """a -> b between t0 and t1 (quintic, zero velocity and acceleration at both ends): (y, yd, ydd)."""
    if t <= t0:
        return a, 0.0, 0.0
    if t >= t1:
        return b, 0.0, 0.0
    T = t1 - t0
    s = (t - t0) / T
    y = a + (b - a) * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)
    yd = (b - a) * (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / T
    ydd = (b - a) * (60 * s - 180 * s ** 2 + 120 * s ** 3) / T ** 2
    return y, yd, ydd


def simulate(model, ctl, q0, v0, T, dt, record):
    t, Q, V = ps.rk4_rollout(model, q0, v0, ctl.torque, T, dt, record_every=record)
    bm = [ps.planar_balance_model(model, q, v) for q, v in zip(Q, V)]
    return dict(t=t, Q=Q, V=V, x=np.array([b.x for b in bm]), L=np.array([b.L for b in bm]),
                lean=np.array([math.atan2(b.x, b.height) for b in bm]),
                tau=np.array([ctl.torque(tt, q, v) for tt, q, v in zip(t, Q, V)]))


def study_control(cfg):
    R = {}
    p = 5.0
    m = ps.planar_chain(**DP)
    q0 = ps.balanced_configuration(m, np.array([0.0, 0.5]))
    R["dp_model"] = ps.planar_balance_model(m, q0)
    R["dp_q0"] = q0
    hold = lambda t: (q0, np.zeros(2), np.zeros(2))  # noqa: E731
    # Closed-loop poles of the full nonlinear robot under the law, linearised by central differences.
    ctl = ps.PlanarBalanceController(m, "joint2", q0, p, hold)

    def f(z):
        return np.concatenate([z[2:], plucker.aba(m, z[:2], z[2:], ctl.torque(0.0, z[:2], z[2:]))])

    z0 = np.concatenate([q0, np.zeros(2)])
    A = np.zeros((4, 4))
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-6
        A[:, i] = (f(z0 + e) - f(z0 - e)) / 2e-6
    R["charpoly"] = (np.poly(A), np.poly([-p] * 4))
    # Push recovery: a horizontal impulse at the hip (joint 2, the top of link 1).
    hip = plucker.frame_pose(m, q0, "link2")[:3, 3]
    R["push"] = {}
    for impulse in (0.3, 0.6):
        v0 = ps.point_impulse(m, q0, "link1", hip, [impulse, 0.0, 0.0])
        R["push"][impulse] = simulate(m, ctl, q0, v0, cfg["sim_T"], cfg["sim_dt"], cfg["record"])
    # Command tracking: the balance joint moves from 0.5 to -0.3 rad in 1 s starting at t = 1 s,
    # without and with the preview filter (reverse-time low-pass with time constant Tc at q0).
    Tc = R["dp_model"].Tc
    grid = np.arange(0.0, cfg["track_T"] + 2.0, 1e-3)
    raw = np.array([smooth_step(t, 1.0, 2.0, 0.5, -0.3)[0] for t in grid])
    filt = ps.reverse_time_lowpass(grid, raw, Tc)
    R["track"] = {}
    for name, series in (("no preview", raw), ("preview", filt)):
        def cmd(t, series=series):
            qc = np.array([0.0, float(np.interp(t, grid, series))])
            return qc, np.zeros(2), np.zeros(2)

        c = ps.PlanarBalanceController(m, "joint2", q0, p, cmd)
        R["track"][name] = simulate(m, c, q0, np.zeros(2), cfg["track_T"], cfg["sim_dt"], cfg["record"])
        R["track"][name]["cmd"] = np.interp(R["track"][name]["t"], grid, raw)
    # Triple pendulum: joint 3 (the heavy top) balances while joint 2 follows a 0.4 rad move; with
    # and without the compensation of the other joint's movement (the "third number").
    m3 = ps.planar_chain(**TP)
    q3 = ps.balanced_configuration(m3, np.array([0.0, 0.3, -0.3]))
    R["tp_model"] = ps.planar_balance_model(m3, q3)
    R["tp_q0"] = q3

    def cmd3(t):
        y, yd, ydd = smooth_step(t, 1.0, 1.8, q3[1], q3[1] + 0.4)
        return np.array([0.0, y, q3[2]]), np.array([0.0, yd, 0.0]), np.array([0.0, ydd, 0.0])

    R["other"] = {}
    for name, comp in (("ignored", False), ("compensated", True)):
        c = ps.PlanarBalanceController(m3, "joint3", q3, p, cmd3, compensate_others=comp)
        R["other"][name] = simulate(m3, c, q3, np.zeros(3), cfg["track_T"], cfg["sim_dt"], cfg["record"])
    return R


# ------------------------------------------------------------------------ 4. HyQ on two diagonal feet
HYQ_STANCE = {"lf": (0.0, 0.7, -1.4), "rh": (0.0, -0.7, 1.4)}  # (haa, hfe, kfe), knees as in HyQ's limits
HYQ_SWING = {"rf": (0.0, 0.9, -1.8), "lh": (0.0, -0.9, 1.8)}


def hyq_diagonal_urdf(path):
    """HyQ's URDF text with a new root: a passive revolute joint "support" about the line through
    the LF and RH feet (at HYQ_STANCE), so the robot balances on that diagonal pair of feet with
    the stance legs held rigid. Returns (urdf text, q of the 12 leg joints, line direction)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plucker.ModelWarning)
        fixed = plucker.Model.from_urdf(path, floating_base=False)
    q = np.zeros(fixed.nq)
    for leg, vals in list(HYQ_STANCE.items()) + list(HYQ_SWING.items()):
        for jn, val in zip(("haa", "hfe", "kfe"), vals):
            q[fixed.joint_q_index(f"{leg}_{jn}_joint")] = val
    p1 = plucker.frame_pose(fixed, q, "lf_foot")[:3, 3]
    p2 = plucker.frame_pose(fixed, q, "rh_foot")[:3, 3]
    if abs(p1[2] - p2[2]) > 1e-9:
        raise ValueError(f"HyQ stance feet not level ({p1[2]} vs {p2[2]})")
    d = (p2 - p1) / np.linalg.norm(p2 - p1)
    tree = ET.parse(path)
    robot = tree.getroot()
    robot.insert(0, ET.fromstring('<link name="ground"/>'))
    robot.insert(1, ET.fromstring('<link name="support_pivot"/>'))
    robot.insert(2, ET.fromstring(
        f'<joint name="support" type="continuous"><parent link="ground"/><child link="support_pivot"/>'
        f'<origin xyz="0 0 0"/><axis xyz="{d[0]!r} {d[1]!r} {d[2]!r}"/></joint>'))
    robot.insert(3, ET.fromstring(
        f'<joint name="support_to_base" type="fixed"><parent link="support_pivot"/><child link="base_link"/>'
        f'<origin xyz="{-p1[0]!r} {-p1[1]!r} {-p1[2]!r}"/></joint>'))
    for gz in robot.findall("gazebo"):
        robot.remove(gz)
    return ET.tostring(robot, encoding="unicode"), q, d


def study_hyq():
    path = os.path.join(MODELS_DIR, "hyq.urdf")
    if not os.path.exists(path):
        return None
    text, qlegs, d = hyq_diagonal_urdf(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plucker.ModelWarning)
        m = plucker.Model.from_urdf_string(text, source_name="hyq_diagonal")
    q = np.concatenate([[0.0], qlegs])
    q = ps.balanced_configuration(m, q)
    b = ps.planar_balance_model(m, q)
    rows = []
    for leg in HYQ_SWING:
        for jn in ("haa", "hfe", "kfe"):
            name = f"{leg}_{jn}_joint"
            locked = ps.velocity_gain(m, q, name)
            free = ps.velocity_gain(m, q, name, others="free")
            rows.append((name, locked, free, locked * b.Tc))
    return dict(model=b, q=q, rows=rows, mass=m.total_mass, tilt=q[0], line=d, leg_mass=_link_mass(path, "lf_"))


def _link_mass(path, prefix):
    """Total mass of the URDF's links whose names start with prefix (one leg)."""
    total = 0.0
    for link in ET.parse(path).getroot().findall("link"):
        mass = link.find("inertial/mass")
        if mass is not None and link.get("name").startswith(prefix):
            total += float(mass.get("value"))
    return total


# ------------------------------------------------------------------------ plots and page
def plots(R, out):
    import matplotlib.tri as mtri
    files = {}

    # Design sweeps: ternary-like maps over (bottom, top) fractions.
    for kind in ("mass", "length"):
        S = R["design"][kind]
        x, y = S["pts"][:, 0], S["pts"][:, 2]
        tri = mtri.Triangulation(x, y)
        fig, axs = sp.new_figure(1, 3, figsize=(14, 4.2))
        for ax, key, title in zip(axs, ("G2", "G3", "Tc"), ("G of joint 2 (m/rad)", "G of joint 3 (m/rad)", "Tc (s)")):
            cs = ax.tricontourf(tri, S[key], levels=20, cmap="viridis")
            fig.colorbar(cs, ax=ax)
            sp.label_axes(ax, f"{kind} fraction of link 1 (bottom)", f"{kind} fraction of link 3 (top)", title)
        files[f"design_{kind}"] = sp.save_figure(
            fig, out, f"balance_design_{kind}.png",
            f"Triple pendulum, 1 kg, 1 m, upright, others locked: {kind} distribution "
            f"({'equal lengths' if kind == 'mass' else 'equal masses'})")

    C = R["control"]
    fig, axs = sp.new_figure(1, 3, figsize=(14, 3.8))
    for imp, s in C["push"].items():
        axs[0].plot(s["t"], s["x"] * 100, label=f"push {imp} N s")
        axs[1].plot(s["t"], s["Q"][:, 1], label=f"push {imp} N s")
        axs[2].plot(s["t"], s["tau"][:, 1], label=f"push {imp} N s")
    for ax, ylabel in zip(axs, ("COM offset x (cm)", "joint 2 (rad)", "joint 2 torque (N m)")):
        sp.label_axes(ax, "t (s)", ylabel, legend=True, grid=True)
    files["push"] = sp.save_figure(fig, out, "balance_push.png",
                                   "Double pendulum on a point foot: recovery from a push at the hip (p = 5 /s)")

    fig, axs = sp.new_figure(1, 2, figsize=(12, 3.8))
    for name, s in C["track"].items():
        axs[0].plot(s["t"], s["Q"][:, 1], label=name)
        axs[1].plot(s["t"], np.degrees(s["lean"]), label=name)
    s = C["track"]["no preview"]
    axs[0].plot(s["t"], s["cmd"], "k--", label="command")
    for ax, ylabel in zip(axs, ("joint 2 (rad)", "lean angle of the COM (deg)")):
        sp.label_axes(ax, "t (s)", ylabel, legend=True, grid=True)
    files["tracking"] = sp.save_figure(
        fig, out, "balance_tracking.png",
        "Double pendulum: tracking a joint-2 command while balancing, without and with the preview filter")

    fig, axs = sp.new_figure(1, 2, figsize=(12, 3.8))
    for name, s in C["other"].items():
        axs[0].plot(s["t"], s["Q"][:, 2] - C["tp_q0"][2], label=f"joint 3, other motion {name}")
        axs[1].plot(s["t"], s["x"] * 100, label=name)
    axs[0].plot(C["other"]["ignored"]["t"], C["other"]["ignored"]["Q"][:, 1] - C["tp_q0"][1], "k--", label="joint 2 (commanded move)")
    for ax, ylabel in zip(axs, ("change of joint angle (rad)", "COM offset x (cm)")):
        sp.label_axes(ax, "t (s)", ylabel, legend=True, grid=True)
    files["other"] = sp.save_figure(fig, out, "balance_other_motion.png",
                                    "Triple pendulum balancing with joint 3 while joint 2 moves 0.4 rad")

    RR = R["rolling"]
    fig, axs = sp.new_figure(1, 2, figsize=(12, 3.8))
    for name, style in (("TP", "-"), ("uniform", "--")):
        S = RR[name]
        axs[0].plot(ROLL_R, S["G2"], "C0" + style, label=f"{name}: joint 2, rel. contact")
        axs[0].plot(ROLL_R, S["G3"], "C1" + style, label=f"{name}: joint 3, rel. contact")
        axs[0].plot(ROLL_R, S["G2g"], "C2" + style, label=f"{name}: joint 2, ground")
        axs[0].plot(ROLL_R, S["G3g"], "C3" + style, label=f"{name}: joint 3, ground")
        axs[1].plot(ROLL_R, S["Tc"], "k" + style, label=name)
    axs[0].axhline(0.0, color="grey", lw=0.5)
    for ax, ylabel in zip(axs, ("velocity gain G (m/rad)", "Tc of the rolling robot (s)")):
        sp.label_axes(ax, "foot radius r (m)", ylabel, legend=7, grid=True)
    files["rolling"] = sp.save_figure(fig, out, "balance_rolling.png",
                                      "Triple pendulums upright on a rolling foot (others locked): gain vs radius")

    CC = R["compliant"]
    fig, axs = sp.new_figure(1, 2, figsize=(12, 3.8))
    d = CC["dp"]
    kk = np.maximum(COMPLIANT_K, 0.3)  # k = 0 drawn at the left edge
    for T, G in d["windows"].items():
        axs[0].semilogx(kk, G, label=f"window T = {T:.3f} s")
    ks = [max(k, 0.3) for k, _, _ in d["sims"]]
    axs[0].semilogx(ks, [g for _, g, _ in d["sims"]], "ko", mfc="none", label="Simulator, T = Tc")
    axs[0].axhline(d["point"], color="grey", ls=":", label="point contact (impulse)")
    axs[0].axhline(d["JA"], color="grey", ls="--", label="foot locked (J_A)")
    axs[0].axvline(d["kcrit"], color="r", lw=0.5, label="k = m g h")
    t = CC["tp"]
    axs[1].semilogx(kk, t["G"][:, 0], label="joint 2")
    axs[1].semilogx(kk, t["G"][:, 1], label="joint 3")
    axs[1].semilogx([t["sim"][0]], [t["sim"][1]], "ko", mfc="none", label="Simulator (joint 3)")
    axs[1].axvline(t["kcrit"], color="r", lw=0.5, label="k = m g h")
    for ax, title in zip(axs, ("double pendulum, joint 2", f"triple pendulum TP, window T = Tc = {t['Tc']:.3f} s")):
        sp.label_axes(ax, "support stiffness k (N m/rad); k = 0 at the left edge", "mean gain over the window (m/rad)",
                      title, legend=7, grid=True)
    files["compliant"] = sp.save_figure(
        fig, out, "balance_compliant.png",
        "Compliant support area: velocity gain vs rotational stiffness (upright, others locked)")
    return files


def metrics(s, q_target, joint):
    t = s["t"]
    err = np.abs(s["Q"][:, joint] - q_target)
    return dict(max_x=float(np.max(np.abs(s["x"]))), end_x=float(abs(s["x"][-1])), end_err=float(err[-1]),
                max_tau=float(np.max(np.abs(s["tau"][:, joint]))), T=float(t[-1]),
                settle=float(t[np.flatnonzero(err > 0.01 * max(err.max(), 1e-12))[-1]]) if np.any(err > 0.01 * max(err.max(), 1e-12)) else 0.0)


def write_page(R, files, quick, seconds):
    C = R["control"]
    w = sp.Page(fmt)  # w(text) appends a block of the page
    w("# Balance: velocity gains and the simple planar model of balancing\n")
    w("Issue #22 (balance parts). Generated by `studies/balance.py`"
      + (" **with --quick (coarse sweeps, short simulations)**" if quick else "")
      + f" in {seconds:.0f} s; every number below is printed by that run. Library: "
      "`python/plucker_studies.py` (velocity gains, the simple model, the controller, an RK4 "
      "integrator over `plucker.aba`); tests: `python/tests/test_studies_balance.py`.\n")
    w("## Sources, and what could be checked\n")
    w("Paper 003 holds only the abstracts of the four papers. The formulas below were looked up in "
      "public sources with the project's search tool; the only public text found was the first page "
      "of the IJRR 2017 preprint (title, abstract, introduction). No public copy of the RSS 2015 / "
      "IJRR 2016 velocity-gain paper or of the body of the 2017 paper was reachable, so:\n")
    w("* **Confirmed from the abstracts** (paper 003, and the 2017 preprint's first page): velocity "
      "gains are ratios of a change in the COM's motion to the action at the actuated joints, defined "
      "for planar and spatial robots on a point / rolling contact; the examples are a triple pendulum's "
      "design and a hydraulic quadruped; the planar model reduces balancing to two numbers plus a third "
      "for the effect of other motions; the controller is a four-term law whose gains are simple "
      "functions of the two numbers and one user-chosen speed, plus a reverse-time low-pass filter on "
      "a preview of the command that makes the robot lean in anticipation.")
    w("* **The definition used here** (the brief's statement of it, not the paper's text): the velocity "
      "gain of an actuated joint is the change in the COM's horizontal velocity divided by the change in "
      "that joint's velocity, both caused by an impulse at that joint (none at the passive contact "
      "joint). Everything else below — the closed forms, the model's two equations, the gain formula "
      "of the four-term law, the filter's time constant — is **derived here** from that definition and "
      "from rigid-body mechanics, and checked numerically; it is *not* copied from the papers, and "
      "where it may differ from them (symbols, normalisation, sign) it is said so.")
    w("* **Not confirmable**: the papers' numerical results (gain values of their triple pendulum and "
      "quadruped, the controller's gains in their examples). The section *Agreement with the papers* "
      "compares only with the qualitative statements of the abstracts.\n")

    w("## 1. The velocity gain\n")
    w("A planar robot on a point foot is modelled with its first joint a passive revolute about a "
      "horizontal axis through the contact point (joint index 1, coordinate q1); the other joints may "
      "be actuated. With H = `plucker.crba(model, q)` and J the horizontal row of "
      "`plucker.center_of_mass_jacobian` (direction u = n x up for the axis n, so a positive foot "
      "rotation of an upright robot moves its COM along +u), an impulse iota at joint a and none at "
      "the foot gives H dqd = e_a iota. With every other actuated joint held (**locked**: a stiff servo):\n")
    w("    dqd_1 = -(H_1a / H_11) dqd_a,      G_a = d(xdot)/d(qd_a) = J_a - J_1 H_1a / H_11\n")
    w("With the other joints **free** (no impulse at them either): dqd = W e_a iota, W = `plucker.minv`, "
      "and G_a = J W e_a / W_aa. The two agree for a double pendulum. In 3-D (a point contact: up to three "
      "passive revolutes through the contact point), P = the contact DoFs and A = the actuated ones, "
      "G = J_A - J_P H_PP^-1 H_PA is a 2 x n_A matrix (both horizontal directions); this is the same "
      "definition applied to a spherical contact, not a formula confirmed against the paper.\n")
    w("The generalized momentum of the foot joint, L = H_1. qd, is the angular momentum about the contact "
      "point (its axis passes through it). An impulse at an actuated joint does not change L (it is an "
      "internal impulse, and the contact exerts no moment about the axis), so the alternative reading "
      "\"change of angular momentum per change of joint velocity\" is zero; the COM velocity is the "
      "quantity that changes. Writing qd_1 = (L - H_1A qd_A)/H_11 in xdot = J qd gives the exact identity\n")
    w("    xdot = (J_1 / H_11) L + sum_a G_a qd_a,     J_1 = COM height h above the contact,\n")
    w("and since the foot is torque-free and rotating the whole robot about the contact does not change "
      "its kinetic energy, L dot = -dV/dq1 = m g x (x = the COM's horizontal offset). These two equations "
      "are the simple model (section 3).\n")
    w("### Checks\n")
    w("Closed form: the double pendulum's JSIM and COM Jacobian written out (H11 = I1 + I2 + m1 c1^2 + "
      "m2 (l1^2 + c2^2 + 2 l1 c2 cos q2), H12 = I2 + m2 (c2^2 + l1 c2 cos q2), J1 = (m1 c1 cos q1 + "
      "m2 (l1 cos q1 + c2 cos(q1+q2)))/m, J2 = m2 c2 cos(q1+q2)/m). Simulated impulse: a torque pulse "
      "0.5/eps N m for eps = 1e-4 s at the joint from rest, RK4 over `plucker.aba` (20 steps), minus the "
      "same interval without the pulse; locked gains of the triple pendulum against a model with the "
      "other joint welded (a URDF fixed joint) at its angle.\n")
    w.table(["robot", "q", "joint", "closed form / welded model", "velocity_gain", "simulated impulse",
             "abs(lib - closed)", "abs(sim - lib)"], R["checks"], end="")
    w("\nThe simulated gains agree to the pulse's O(eps) error; the tests hold them to 2e-4 (double) and "
      "2e-3 (triple) relative and show the error shrinking with eps.\n")
    w("A point mass on massless links has G = 0 (J2 = c2 and J1 H12/H11 = (l1+c2) c2/(l1+c2)): at constant "
      "angular momentum, internal motion cannot move the COM of a point mass. The gain comes from the "
      "distribution of mass and rotational inertia: for the double pendulum upright, "
      "G H11 = J2 (I1 + m1 c1^2 + I2 + m2 (l1+c2)^2) - h (I2 + m2 c2 (l1+c2)), and a large rotational "
      "inertia I2 of the top link drives G negative (G -> I2 (m2 c2/m - h)/H11 as I2 dominates): moving the "
      "top link forward moves the COM backward, like a reaction wheel.\n")

    S = R["spatial"]
    w("### 3-D point contact\n")
    w("A spatial double pendulum (contact: three passive revolutes x, y, z through the contact point with "
      "massless links between them; a 2-DoF hip joint2y then joint2x; isotropic link inertias, DP "
      "parameters below). Gain matrix rows: horizontal x, y; columns: joint2y, joint2x. (Signs follow "
      "the axes: a positive rotation about +y leans toward +x, about +x toward -y.)\n")
    for q, G in S["rows"]:
        w(f"* q = {np.array2string(q, precision=2, separator=', ')}: G = "
          f"{np.array2string(G, precision=5, separator=', ').replace(chr(10), '')}")
    Gs, Gp = S["sagittal"]
    sim, free = S["impulse"]
    w(f"* sagittal configuration (only contact_y = 0.1 and joint2y = 0.5 non-zero): G[x, joint2y] = {Gs[0, 0]:.10f}, "
      f"the planar double pendulum's gain at (0.1, 0.5) = {Gp:.10f}; cross terms {Gs[1, 0]:.2e}, {Gs[0, 1]:.2e}.")
    w(f"* simulated impulse at joint2x (general q, others free): dxdot/dqd = {np.array2string(sim, precision=5)}, "
      f"velocity_gain_matrix(..., others='free') = {np.array2string(free, precision=5)}.\n")

    w("## 2. Design of a triple pendulum\n")
    w("Triple pendulums of total mass 1 kg and height 1 m (uniform rods, m l^2/12 about each COM), upright "
      "(q = 0), balancing with joint 2 or joint 3 while the other actuated joint is locked. Left maps: "
      "mass fractions with equal lengths; right: length fractions with equal masses. The x axis is the "
      "bottom link's share, the y axis the top link's (the middle link has the rest). G is in metres of "
      "COM velocity per radian of joint velocity; Tc = sqrt(H11/(m g h)) is the toppling time constant. "
      "")
    for f in (files["design_mass"], files["design_length"]):
        w.figure(f)
    D = R["design"]
    for kind in ("mass", "length"):
        S = D[kind]
        i2, i3 = np.argmax(np.abs(S["G2"])), np.argmax(np.abs(S["G3"]))
        w(f"* {kind} sweep ({len(S['pts'])} designs): G2 from {S['G2'].min():.4f} to {S['G2'].max():.4f}, largest |G2| "
          f"= {abs(S['G2'][i2]):.4f} at fractions {np.array2string(S['pts'][i2], precision=3)}; G3 from "
          f"{S['G3'].min():.4f} to {S['G3'].max():.4f}, largest |G3| = {abs(S['G3'][i3]):.4f} at "
          f"{np.array2string(S['pts'][i3], precision=3)}; Tc from {S['Tc'].min():.3f} to {S['Tc'].max():.3f} s.")
    w("")
    w.table(["design (lengths or masses bottom..top)", "G2 (m/rad)", "G3 (m/rad)", "Tc (s)", "COM height (m)",
             "G2 Tc (m s/rad)", "G3 Tc (m s/rad)"], R["designs"], end="")
    w("\nG Tc is a combined figure (derived here, not from the papers): in the linear model below, the "
      "diverging component x + Tc xdot of the COM is changed by G Tc per unit change of joint velocity, "
      "so 1/(G Tc) is the joint speed needed to cancel one metre of it.\n")
    allneg = all(np.all(D[k][g] < 0) for k in ("mass", "length") for g in ("G2", "G3"))
    w("What the sweeps show (this study's reading of its own maps; the paper's conclusions could not be read):\n")
    w(f"* {'Every' if allneg else 'Not every'} design's gains are negative at the upright pose: moving a joint "
      "forward at constant angular momentum moves the COM backward, the links' rotational inertia acting "
      "like a reaction wheel (a point-mass chain would have zero gain).")
    Sm, Sl = D["mass"], D["length"]
    w(f"* Mass distribution (equal lengths): |G3| is largest ({abs(Sm['G3']).max():.4f} m/rad) with the mass in "
      f"the middle and top links and collapses as the top link gets light (to {abs(Sm['G3']).min():.4f}); |G2| is "
      f"largest ({abs(Sm['G2']).max():.4f}) with the mass split between the bottom and top links over a light "
      f"middle one. Mass at the top raises Tc ({Sm['Tc'].min():.3f} -> {Sm['Tc'].max():.3f} s): it topples more slowly.")
    w(f"* Length distribution (equal masses): a long top link over a short middle link maximises both gains "
      f"(|G2| up to {abs(Sl['G2']).max():.4f}, |G3| up to {abs(Sl['G3']).max():.4f} m/rad); a long bottom link makes "
      f"both small (down to {abs(Sl['G2']).min():.4f} and {abs(Sl['G3']).min():.4f}). Tc moves the other way "
      f"({Sl['Tc'].min():.3f} to {Sl['Tc'].max():.3f} s, smallest with the long top link).")
    share = {k: float(np.mean(np.abs(D[k]["G2"]) > np.abs(D[k]["G3"]))) for k in ("mass", "length")}
    w(f"* Joint 2 has the larger gain in {share['mass'] * 100:.0f} % of the mass designs and "
      f"{share['length'] * 100:.0f} % of the length designs; joint 3 beats it only when the top link is long "
      "(and heavy). A long, massive top body on a short middle link is the design that serves both joints; "
      "by G Tc the long-top designs of the table lead for both joints.\n")

    w("\n## 3. The simple planar model and the four-term balance controller\n")
    w("From section 1, for any planar robot on a point foot, with L the angular momentum about the "
      "contact point and x the COM's horizontal offset:\n")
    w("    L dot = m g x,      x dot = L / (m g Tc^2) + G qd,      Tc^2 = H11 / (m g h)\n")
    w("(exact at every instant; Tc and G depend on the configuration, `planar_balance_model`). Hence "
      "L'' = L/Tc^2 + m g G qd and, for constant Tc and G, L''' = L'/Tc^2 + m g G qdd: with the balance "
      "joint's acceleration qdd as the input, the robot is a fourth-order system in (L, L', L'', q) "
      "described by two numbers, Tc and G. The four-term law\n")
    w("    qdd = kdd L'' + kd L' + kL L + kq (q - q_c)\n")
    w("has the closed-loop characteristic polynomial s^4 - mgG kdd s^3 - (kq + 1/Tc^2 + mgG kd) s^2 - "
      "mgG kL s + kq/Tc^2 (derived here). Placing all four poles at s = -p (p chosen by the user, the "
      "speed of balancing) gives\n")
    w("    kdd = -4p/(mgG),  kd = -(6p^2 + p^4 Tc^2 + 1/Tc^2)/(mgG),  kL = -4p^3/(mgG),  kq = p^4 Tc^2\n")
    w("— gains that are simple functions of Tc, G and p, as the abstract says; whether they are the "
      "paper's exact expressions (its choice of pole pattern or normalisation) could not be checked. The "
      "closed loop from the command to the joint is q/q_c = (1 - Tc s)(1 + Tc s)/(1 + s/p)^4: the zero at "
      "s = +1/Tc makes it non-minimum-phase (the joint first moves the wrong way, so the robot can lean "
      "into the move). Filtering the command with the reverse-time low-pass 1/(1 - Tc s), i.e. "
      "q_f(t) = (1/Tc) int_t^inf exp(-(s - t)/Tc) q_c(s) ds (needs the command Tc or so ahead), cancels that "
      "zero: q/q_c = (1 + Tc s)/(1 + s/p)^4. This is our reading of the abstract's \"reverse-time low-pass "
      "filter acting on a preview of the command signal\".\n")
    w("In the simulation the balance joint is acceleration-controlled as the model assumes: the torques "
      "that give the actuated joints the commanded accelerations with no torque at the foot are computed "
      "from the full model (`plucker.crba`, `plucker.nonlinear_effects`); L, L' = m g x and L'' = m g xdot "
      "come from the state; Tc and G are recomputed from the current configuration at every step. The "
      "robot is integrated with RK4 over `plucker.aba` "
      f"(dt = {R['cfg']['sim_dt'] * 1e3:g} ms).\n")
    pa, pb = C["charpoly"]
    dm = C["dp_model"]
    w(f"**Double pendulum** (link 1: 1 m, 2 kg, COM 0.45 m, I 0.15; link 2: 0.8 m, 3 kg, COM 0.3 m, I 0.4 kg m^2), "
      f"balanced with joint 2 = 0.5 rad (foot angle {C['dp_q0'][0]:.4f} rad puts the COM over the foot): "
      f"Tc = {dm.Tc:.4f} s, G = {dm.gains['joint2']:.5f} m/rad, COM height {dm.height:.4f} m; p = 5 /s.\n")
    w(f"Closed-loop characteristic polynomial of the *full nonlinear robot* under the law, linearised at the "
      f"balanced state by central differences through `plucker.aba`: {np.array2string(pa, precision=6)}; "
      f"(s + 5)^4 = {np.array2string(pb, precision=6)}. The model's linearisation is exact at the balance "
      "point (Tc and G frozen there, the neglected terms are products of velocities), so the poles land "
      "where the design puts them.\n")
    w.figure(files["push"], "push")
    for imp, s in C["push"].items():
        mt = metrics(s, C["dp_q0"][1], 1)
        w(f"* push {imp} N s at the hip: largest COM offset {mt['max_x'] * 100:.2f} cm, largest joint-2 excursion "
          f"{np.max(np.abs(s['Q'][:, 1] - C['dp_q0'][1])):.3f} rad, joint 2 back within 1 % of its "
          f"largest excursion after {mt['settle']:.2f} s, at t = {mt['T']:.1f} s |x| = {mt['end_x']:.1e} m and "
          f"joint-2 error {mt['end_err']:.1e} rad; peak joint-2 torque {mt['max_tau']:.1f} N m.")
    w(f"\nThe joint swings far for a modest push because this robot's gain is small (|G| = "
      f"{abs(dm.gains['joint2']):.3f} m/rad): the COM velocity the push gives must be cancelled by joint "
      "velocity times G. That is the practical meaning of the velocity gain.")
    w("")
    w.figure(files["tracking"], "tracking")
    for name, s in C["track"].items():
        q2 = s["Q"][:, 1]
        wrong = float(max(0.0, q2.max() - 0.5))
        mt = metrics(s, -0.3, 1)
        pre = s["t"] < 1.0
        w(f"* {name}: joint 2 moves the wrong way (above its start, 0.5 rad) by at most {wrong:.4f} rad; "
          f"lean before the command starts (t < 1 s) up to {np.degrees(np.max(np.abs(s['lean'][pre]))):.2f} deg; "
          f"largest lean {np.degrees(np.max(np.abs(s['lean']))):.2f} deg; at t = {mt['T']:.1f} s joint-2 error "
          f"{mt['end_err']:.1e} rad, |x| = {mt['end_x']:.1e} m.")
    w("\nWithout preview the joint swings against the command first (the non-minimum-phase zero); with the "
      "preview filter the robot starts leaning before the command moves, and the joint goes straight to "
      "its target.\n")
    tm = C["tp_model"]
    w(f"**Triple pendulum** (TP parameters below), balancing with joint 3 (the heavy top) while joint 2 "
      f"follows a 0.4 rad move in 0.8 s: Tc = {tm.Tc:.4f} s, G3 = {tm.gains['joint3']:.5f} m/rad, "
      f"G2 = {tm.gains['joint2']:.5f} m/rad (G2/G3 = {tm.gains['joint2'] / tm.gains['joint3']:.3f} is the "
      "effect of the other motion: the third number's role). \"Compensated\" controls "
      "q3 + (G2/G3) q2 instead of q3, so joint 2's move enters the law as a known move of the balance "
      "joint; \"ignored\" treats it as a disturbance.\n")
    w.figure(files["other"], "other")
    for name, s in C["other"].items():
        dev = s["Q"][:, 2] - C["tp_q0"][2]
        w(f"* other motion {name}: largest COM offset {np.max(np.abs(s['x'])) * 100:.2f} cm, largest joint-3 "
          f"excursion {np.max(np.abs(dev)):.4f} rad, final joint-3 error {abs(dev[-1]):.1e} rad.")
    w("")

    w("## 4. HyQ on a diagonal pair of feet\n")
    H = R["hyq"]
    if H is None:
        w("Skipped: ../shared/models/hyq.urdf is not present.\n")
    else:
        hb = H["model"]
        w("The paper's quadruped example could not be read, so its set-up (which support, which pose, which "
          "joints) is not known here; this is our analysis of the same kind on HyQ's published "
          "dimensions and inertias, taken from `../shared/models/hyq.urdf` (example-robot-data's "
          "hyq_no_sensors.urdf, read at run time, not copied). Set-up: HyQ stands on its LF and RH feet "
          f"(stance legs haa, hfe, kfe = {HYQ_STANCE['lf']} and {HYQ_STANCE['rh']} rad), RF and LH lifted "
          f"({HYQ_SWING['rf']}, {HYQ_SWING['lh']}); the two point feet make a line contact, modelled as a "
          "passive revolute joint about the line through them (direction "
          f"{np.array2string(H['line'], precision=4)} in the trunk frame), rotated by {H['tilt']:.5f} rad so the COM "
          f"is over the line. Total mass {H['mass']:.2f} kg, COM {hb.height:.4f} m above the line, "
          f"Tc = {hb.Tc:.4f} s. Gains (COM velocity across the line per joint velocity):\n")
        w.table(["swing-leg joint", "G locked (m/rad)", "G free (m/rad)", "G Tc (m s/rad)"], H["rows"], end="")
        w("\nThe stance legs are held rigid: with both stance feet on the ground each stance-leg joint is in a "
          "closed loop (the body and the two stance legs form a loop through the ground), which this "
          "open-chain gain does not describe; a loop-closure version (`plucker.constraint_jacobian`) is left "
          "for later. For scale, the double pendulum of section 3 has G = -0.07 m/rad.\n")
        best = max(H["rows"], key=lambda r: abs(r[1]))
        w(f"* The largest gain is the swing legs' hip abduction/adduction ({best[0]}: {best[1]:.5f} m/rad): "
          "swinging a whole leg sideways, across the support line, moves the most mass the farthest. "
          "The sagittal joints (hfe, kfe) move the leg roughly along the line and have gains an order of "
          "magnitude smaller.")
        w(f"* Even the best is small: HyQ's legs are light ({H['leg_mass']:.1f} kg each) against its "
          f"{H['mass']:.1f} kg total, so a 1 rad/s swing of one leg moves the COM by about "
          f"{abs(best[1]) * 1000:.1f} mm/s, and the two swing legs' HAA joints together (same-sign gains "
          f"when moved in opposite senses) about twice that. Balancing HyQ on two diagonal feet by leg "
          f"motion alone is therefore slow: with Tc = {hb.Tc:.3f} s, cancelling a 1 cm COM error through "
          f"the diverging component x + Tc xdot needs a joint speed change of about "
          f"{0.01 / abs(best[1] * hb.Tc):.1f} rad/s of one HAA joint.\n")

    write_rolling_and_compliant(R, files, w)
    write_new_sections(R, files, w)
    w("## Agreement with the papers\n")
    w(AGREEMENT)
    w("\n## Parameters\n")
    w(f"* DP (double pendulum): {DP}")
    w(f"* TP (triple pendulum of the controller study): {TP}")
    w(f"* sweep step: {R['cfg']['simplex_step']}; simulation dt {R['cfg']['sim_dt']} s, push horizon "
      f"{R['cfg']['sim_T']} s, tracking horizon {R['cfg']['track_T']} s.\n")
    w("")  # the page ends in a blank line
    return w.text()


def _zero_crossing(x, y):
    k = np.flatnonzero(np.sign(y[:-1]) != np.sign(y[1:]))
    if k.size == 0:
        return None
    i = int(k[0])
    return float(x[i] - y[i] * (x[i + 1] - x[i]) / (y[i + 1] - y[i]))


def write_rolling_and_compliant(R, files, w):
    RR = R["rolling"]
    w("## 5. Rolling contact\n")
    w("A foot of radius r (a wheel in the plane, a ball in 3-D) rolls on the horizontal ground without "
      "slipping. Convention: the model's contact joints pass through the foot's **centre** C (the model is "
      "the robot as if pinned at C); the contact point P = C - r up moves as the foot rolls. Derived here "
      "from the rolling constraint (the papers' formulas could not be read):\n")
    w("* No slip: P's material point has zero velocity, so C moves with v_C = omega x (C - P) = r omega x up "
      "(omega the foot's angular velocity); in the plane v_C = r qd_1 u (u the horizontal direction of "
      "section 1). v_C = R qd, R nonzero only in the contact columns.")
    w("* Every body moves as in the model plus the translation v_C, so the kinetic energy is "
      "1/2 qd' H qd + m v_C . (J_c qd) + 1/2 m |v_C|^2 and the rolling robot's inertia matrix is "
      "**H_r = H + m (R' J_c + J_c' R) + m R' R** (`plucker_studies.rolling_inertia`). In the plane: "
      "H_r11 = H11 + 2 m r J_1 + m r^2 (the parallel-axis theorem about P), H_r1j = H1j + m r J_j.")
    w("* An impulse sees only the instant's velocity constraint, so the gains are those of section 1 with "
      "H_r in place of H: G = J_A - J_P H_r,PP^-1 H_r,PA (locked others; `velocity_gain(..., radius=r)`). "
      "Two velocities can be meant: the COM's velocity **relative to the contact point** (the default, "
      "`reference='contact'`: gravity's moment about the contact is m g x with x = c - P, so this is the "
      "one balance depends on), whose rows are the model's own J (P moves with C horizontally); and the "
      "COM's **absolute** velocity (`reference='ground'`), rows J + R. They differ by r times the "
      "foot's rate change, -r H_r,1a / H_r,11 in the plane.")
    w("* Gravity: the potential does not see r (C stays at height r), so the rolling robot's toppling "
      "time constant is Tc_r^2 = H_r11 / (m g h), h the COM height above **C**.\n")
    w("Checks (tests): the planar double pendulum on a wheel against a closed form written from the "
      "bodies' positions (1e-12 relative, both references, q = (0, 0), (0.1, 0.5), (-0.3, 1.2), "
      "r = 0.02, 0.3); the rolling robot's H_r and its ground-referenced gains against a **second "
      "model pinned at the contact point** (built with the foot's centre offset r above the pin), in "
      "the plane at any foot angle and in 3-D for a ball foot:\n")
    rows = []
    for r, qv, Gc, Gr, Gp, dG, dH in RR["pin"]:
        rows.append((f"{r:g}", np.array2string(qv, precision=2), np.array2string(Gr, precision=5).replace("\n", ""),
                     np.array2string(Gp, precision=5).replace("\n", ""), f"{dG:.1e}", f"{dH:.1e}"))
    w.table(["r (m)", "q (3-D double pendulum)", "G rolling, ground (rows x, y)", "G pinned at P", "max abs dG",
             "max abs(H_r - H_pin)"], rows, end="")
    w("\nr -> 0 (triple pendulum TP at q = (0.1, -0.4, 0.6), joint 3, point-contact gain "
      f"{RR['limit_G0']:.6f} m/rad): G(r) - G(0) = "
      + ", ".join(f"{d:.3e} (r = {r:g})" for r, d in RR["limit"])
      + ": linear in r (the tests hold |G(r) - G(0)| <= 1 m^-1 x r and the slope to 1e-3).\n")
    w.figure(files["rolling"], "rolling")
    for name, label in (("TP", "TP"), ("uniform", "uniform triple pendulum (1 kg, 1 m)")):
        S = RR[name]
        z2 = _zero_crossing(ROLL_R, S["G2"])
        z3 = _zero_crossing(ROLL_R, S["G3"])
        w(f"* {label}, upright (COM {S['height']:.3f} m above C): relative to the contact, G2 goes from "
          f"{S['G2'][0]:.4f} (point) to {S['G2'][-1]:.4f} m/rad at r = {ROLL_R[-1]:g} m and G3 from "
          f"{S['G3'][0]:.4f} to {S['G3'][-1]:.4f}; they cross zero at r = "
          f"{'%.3f' % z2 if z2 is not None else 'never'} and {'%.3f' % z3 if z3 is not None else 'never'} m. "
          f"Absolute (ground) gains change little: G2 {S['G2g'][0]:.4f} -> {S['G2g'][-1]:.4f}, G3 "
          f"{S['G3g'][0]:.4f} -> {S['G3g'][-1]:.4f}. Tc grows from {S['Tc'][0]:.3f} to {S['Tc'][-1]:.3f} s.")
    w("\nReading (ours): a rolling foot changes little how much a joint motion moves the COM over the "
      "ground, but it moves the contact point with it. Leaning the upper body back (negative gain on a "
      "point foot) rolls the foot forward, under the COM, so relative to the support the gain shrinks, "
      "passes through zero (at that radius the joint cannot move the COM relative to the support at "
      "all: it cannot balance the robot) and changes sign for larger feet. A large foot also topples "
      "more slowly (larger Tc). Whether this matches the paper's rolling-contact results could not be "
      "checked.\n")

    CC = R["compliant"]
    d, t = CC["dp"], CC["tp"]
    w("## 6. Compliant support area\n")
    w("A foot standing on a support area (a line in the plane) whose distributed normal compliance "
      "resists its tilting: a rotational stiffness k (N m/rad) at the contact joint(s) (k = k_p sum s_i^2 "
      "for points of stiffness k_p at distances s_i from the pivot; kappa w^3/12 for a line of width w and "
      "stiffness kappa per unit length about its centre; a matrix in 3-D). **A spring gives no impulse**, "
      "so the impulse gain of section 1 is the point-contact gain at every finite stiffness; the stiffness "
      "acts over time. The gain as a function of the stiffness is therefore defined here over a time "
      "window T (derived here, not from the papers): the robot at rest in equilibrium, the actuated joint "
      "starts moving at a constant velocity, the other joints held, and G(k, T) = the mean COM velocity "
      "over [0, T] per unit joint velocity (COM displacement / joint displacement). For the linearised "
      "robot (K_g = the Hessian of the potential, `plucker_studies.gravity_stiffness`),\n")
    w("    H_PP qdd_P + H_PA qdd_A + (K_c + K_g,PP) q_P + K_g,PA q_A = 0,   q_A = dqd_A t,  "
      "dqd_P(0+) = -H_PP^-1 H_PA dqd_A\n")
    w("solved in the modes of K_c + K_g,PP (K phi = lambda H_PP phi), z = lambda T^2:\n")
    w("    G(k, T) = J_A + J_P Phi [ S(z) Phi' (-H_PA) + T^2 F(z) Phi' (-K_g,PA) ],   S = sin(sqrt z)/sqrt z,  "
      "F = (1 - S)/z\n")
    w("(`plucker_studies.compliant_contact_gain`; sinh for z < 0, series near z = 0). Limits: "
      "**k -> infinity**: G -> J_A, the COM Jacobian column of a fixed-base robot (the foot locked to the "
      "ground); **T -> 0**: the point-contact gain, for every k; **k = 0**: in the plane "
      "G = G_point sinh(T/Tc)/(T/Tc), the point-contact robot (which topples during the window: the simple "
      "model's x = G Tc sinh(t/Tc) qd). Between, with k > m g h the foot oscillates at "
      "sqrt((k - m g h)/H11) and the mean gain swings around J_A before settling on it.\n")
    w("Check against `plucker.Simulator` (independent: contact forces from five preloaded linear "
      "contact points across a 0.2 m sole, no damping or friction, the joint ramped to 1e-3 rad/s within "
      "0.5 ms by torques solved from the simulator's accelerations, RK4 at 0.125 ms; the formula is taken "
      "at the window T - 0.25 ms for the ramp's delay). Double pendulum upright, joint 2, T = Tc = "
      f"{d['Tc']:.4f} s; point gain {d['point']:.5f}, J_A = {d['JA']:.5f} m/rad, m g h = {d['kcrit']:.2f} N m/rad:\n")
    w.table(["k (N m/rad)", "Simulator", "formula", "abs. difference"],
            [(k, g, gf, abs(g - gf)) for k, g, gf in d["sims"]], fmt=["g", fmt, fmt, ".1e"], end="")
    w(f"\nTriple pendulum TP, joint 3, k = {t['sim'][0]:g}, T = Tc = {t['Tc']:.4f} s: Simulator "
      f"{t['sim'][1]:.6f}, formula {t['sim'][2]:.6f} (difference {abs(t['sim'][1] - t['sim'][2]):.1e}). "
      "The tests hold the double pendulum's to 2e-5 at T = 0.3 s.\n")
    w.figure(files["compliant"], "compliant")
    Gw = d["windows"]
    Tmid = sorted(Gw)[1]
    w(f"* Double pendulum, T = Tc: G(0) = {Gw[Tmid][0]:.4f} (the point-contact robot, larger than the "
      f"impulse gain {d['point']:.4f} because it topples), G at k = m g h = "
      f"{np.interp(d['kcrit'], COMPLIANT_K, Gw[Tmid]):.4f}, G at k = 1e6 = {Gw[Tmid][-1]:.4f} "
      f"(J_A = {d['JA']:.4f}). The gain changes sign near k = "
      f"{_zero_crossing(COMPLIANT_K, Gw[Tmid]):.0f} N m/rad: a stiff enough support turns the reaction-wheel "
      "effect (the COM moves back when the upper body leans forward) into the fixed-base one (it moves "
      "forward).")
    w(f"* TP, T = Tc: joint 2 from {t['G'][0, 0]:.4f} (k = 0) to {t['G'][-1, 0]:.4f} (J_A = {t['JA'][0]:.4f}), "
      f"joint 3 from {t['G'][0, 1]:.4f} to {t['G'][-1, 1]:.4f} (J_A = {t['JA'][1]:.4f}); m g h = {t['kcrit']:.1f} N m/rad.")
    w("* Which regime a robot is in is set by k against m g h and H11/T^2: a support much stiffer than "
      "H11/T^2 + m g h over the controller's time scale T makes the robot a fixed-base one for balancing "
      "(the COM is moved by ankle-like action on the ground, the velocity gain of a point foot no longer "
      "limits it); a softer one leaves the point-contact gain in charge.\n")


# ------------------------------------------------------------------------ 7-9. commanded motion, mass errors, tilts
P_BAL = 5.0  # the user-chosen speed p of every controller below (1/s)
# Scenarios: the robot, its balance joint, the nominal joint angles, and the commanded moves
# (velocity index, from, to, start, end) as quintic steps; the balance joint's move is preview-filtered.
SCENARIOS = {
    "DP": dict(params=DP, q=(0.0, 0.5), joint="joint2", moves=((1, 0.5, -0.3, 1.5, 2.5),)),
    "TP": dict(params=TP, q=(0.0, 0.3, -0.3), joint="joint3", moves=((2, -0.3, 0.1, 1.5, 2.5), (1, 0.3, 0.6, 1.8, 2.6))),
}
MASS_ERRORS = (0.1, 0.2, 0.3, 0.4, 0.5)
SS_TOL = 0.1  # rad: a steady-state balance-joint error above this is "no longer tracking"


def mass_error_params(params, errors):
    """The chain's parameters with link i's mass and inertia scaled by (1 + errors[i]) (COMs,
    lengths unchanged): the model a controller is designed from when the masses are wrong."""
    if len(errors) != len(params["masses"]) or any(not (-1.0 < e < 10.0) for e in errors):
        raise ValueError(f"mass_error_params: need one error in (-1, 10) per link, got {errors}")
    out = dict(params)
    out["masses"] = [m * (1 + e) for m, e in zip(params["masses"], errors)]
    out["inertias"] = [I * (1 + e) for I, e in zip(params["inertias"], errors)]
    return out


def error_patterns(n):
    """(label, signs): each link alone +-1, then all 2^n sign patterns."""
    out = []
    for i in range(n):
        for s in (1, -1):
            signs = [0] * n
            signs[i] = s
            out.append(signs)
    out += [list(p) for p in itertools.product((1, -1), repeat=n)]
    return [("(" + ", ".join({1: "+", -1: "-", 0: "0"}[s] for s in signs) + ")", signs) for signs in out]


def scenario_command(scen, Tc, t_end, preview="combined", hold=False, ratio=None):
    """command(t) for PlanarBalanceController and raw(t) (the unfiltered commanded angles).
    preview: "none"; "balance" filters the balance joint's own command; "combined" filters the
    quantity the law controls, q_b + ratio . q (ratio = the controller's G_j/G_b for the other
    joints), and gives the balance joint that minus the other joints' raw part, so that their
    moves are previewed too."""
    n = len(scen["q"])
    b = len(scen["q"]) - 1 if scen["joint"] == f"joint{n}" else int(scen["joint"][5:]) - 1
    moves = () if hold else scen["moves"]
    q0 = np.array(scen["q"], dtype=float)

    def raw(t):
        qc, qdc, qddc = q0.copy(), np.zeros(n), np.zeros(n)
        for j, a, c, t0, t1 in moves:
            qc[j], qdc[j], qddc[j] = smooth_step(t, t0, t1, a, c)
        return qc, qdc, qddc

    if preview not in ("none", "balance", "combined"):
        raise ValueError(f"scenario_command: preview must be 'none', 'balance' or 'combined', got {preview!r}")
    r = np.zeros(n) if ratio is None or preview != "combined" else np.asarray(ratio, dtype=float)
    grid = np.arange(0.0, t_end + 10 * Tc, 1e-3)
    series = np.array([raw(t)[0][b] + r @ raw(t)[0] for t in grid])
    if preview != "none":
        series = ps.reverse_time_lowpass(grid, series, Tc)

    def command(t):
        qc, qdc, qddc = raw(t)
        qc[b] = float(np.interp(t, grid, series)) - r @ qc
        qdc[b] = qddc[b] = 0.0
        return qc, qdc, qddc

    return command, raw, b


def controller(name, errors, servo=False, preview="combined", hold=False, t_end=6.0):
    """The balance controller of scenario `name` designed from the masses scaled by (1 + errors)
    (nominal pose and preview Tc from that model too), and the true robot it drives."""
    scen = SCENARIOS[name]
    true = ps.planar_chain(**scen["params"])
    wrong = ps.planar_chain(**mass_error_params(scen["params"], errors))
    qn = ps.balanced_configuration(wrong, np.array(scen["q"]))
    bm = ps.planar_balance_model(wrong, qn)
    b = int(scen["joint"][5:]) - 1
    ratio = np.array([0.0] + [bm.gains[f"joint{j + 1}"] / bm.gains[scen["joint"]] if j != b else 0.0
                              for j in range(1, len(scen["q"]))])
    command, raw, b = scenario_command(scen, bm.Tc, t_end, preview, hold, ratio)
    ctl = ps.PlanarBalanceController(wrong, scen["joint"], qn, P_BAL, command, torque_model=true if servo else None)
    return true, wrong, ctl, raw, b


def run_tracking(name, errors, T, dt, record, preview="combined"):
    """The scenario on the true robot, controller from wrong masses, from rest at the closed loop's
    equilibrium; metrics against the raw command and the predicted final equilibrium."""
    true, wrong, ctl, raw, b = controller(name, errors, preview=preview, t_end=T)
    q0 = ps.balanced_configuration(true, np.array(SCENARIOS[name]["q"]))
    try:
        q0 = ps.closed_loop_equilibrium(true, ctl.torque, q0)
    except ArithmeticError:
        pass  # no equilibrium near the pose: start there, balanced, at rest
    try:
        t, Q, V = ps.rk4_rollout(true, q0, np.zeros(true.nv), ctl.torque, T, dt, record_every=record)
    except (ValueError, FloatingPointError) as exc:
        return dict(failed=str(exc).split(":")[-1].strip())
    x = np.array([ps.planar_balance_model(true, q).x for q in Q])
    cmd = np.array([raw(tt)[0] for tt in t])
    tau = np.array([ctl.torque(tt, q, v) for tt, q, v in zip(t, Q, V)])
    try:
        qe = ps.closed_loop_equilibrium(true, ctl.torque, Q[-1], t=T)
        lam = np.linalg.eigvals(ps.closed_loop_matrix(true, ctl.torque, qe, t=T))
    except (ArithmeticError, ValueError):
        qe, lam = np.full(true.nv, np.nan), np.full(2 * true.nv, np.nan)
    others = [j for j in range(1, true.nv) if j != b]
    # Decay after the last move: slope of log |z - z_eq| over the last 40 % of the run.
    t_moves = max(m[4] for m in SCENARIOS[name]["moves"])
    win = t >= max(t_moves + 1.0, 0.6 * T)
    dev = np.linalg.norm(np.hstack([Q - qe, V]), axis=1)
    ok = win.sum() >= 3 and np.all(np.isfinite(dev[win])) and np.all(dev[win] > 1e-12)
    slope = float(np.polyfit(t[win], np.log(dev[win]), 1)[0]) if ok else float("nan")
    return dict(t=t, Q=Q, V=V, x=x, cmd=cmd, tau=tau, b=b, qe=qe, lam=lam,
                peak_x=float(np.max(np.abs(x))), end_x=float(abs(x[-1])), end_v=float(np.max(np.abs(V[-1]))),
                err_b=float(abs(Q[-1, b] - cmd[-1, b])), pred_err_b=float(abs(qe[b] - cmd[-1, b])),
                err_o=float(max([abs(Q[-1, j] - cmd[-1, j]) for j in others], default=0.0)),
                track_b=float(np.max(np.abs(Q[:, b] - cmd[:, b]))), max_tau=float(np.max(np.abs(tau))),
                decay=slope, max_re=float(np.max(lam.real)))


def simple_model_offset(name, errors):
    """First-order steady-state error of the balance joint (simple model, ideal servo): at rest
    L = L'' = 0, so the law leaves kd m g x_w + kq e = 0, where x_w is the wrong model's COM
    offset with the true COM over the foot: e = x_w (6p^2 + p^4 Tc^2 + 1/Tc^2) / (G p^4 Tc^2)."""
    scen = SCENARIOS[name]
    true = ps.planar_chain(**scen["params"])
    wrong = ps.planar_chain(**mass_error_params(scen["params"], errors))
    q = ps.balanced_configuration(true, np.array(scen["q"]))
    bw = ps.planar_balance_model(wrong, q)
    G, Tc, p = bw.gains[scen["joint"]], bw.Tc, P_BAL
    return bw.x * (6 * p ** 2 + p ** 4 * Tc ** 2 + 1 / Tc ** 2) / (G * p ** 4 * Tc ** 2)


def margin_curve(name, signs, eps_grid, servo):
    """Along errors = eps * signs: the steady-state balance-joint error and the largest real part
    of the closed-loop poles at the equilibrium (continuation in eps); stops when the equilibrium
    is lost (Newton fails: the steady state runs away)."""
    scen = SCENARIOS[name]
    true = ps.planar_chain(**scen["params"])
    guess = ps.balanced_configuration(true, np.array(scen["q"]))
    err, re = [], []
    for eps in eps_grid:
        _, _, ctl, raw, b = controller(name, [eps * s for s in signs], servo=servo, hold=True)
        try:
            qe = ps.closed_loop_equilibrium(true, ctl.torque, guess)
        except (ArithmeticError, ValueError):
            break
        guess = qe
        err.append(qe[b] - scen["q"][b])
        re.append(float(np.max(np.linalg.eigvals(ps.closed_loop_matrix(true, ctl.torque, qe)).real)))
    return np.array(err), np.array(re)


def first_crossing(eps, y, level):
    """Smallest eps where y crosses level (linear interpolation), None if it never does."""
    for i in range(1, len(y)):
        if (y[i - 1] - level) * (y[i] - level) <= 0 and y[i] != y[i - 1]:
            return float(eps[i - 1] + (level - y[i - 1]) * (eps[i] - eps[i - 1]) / (y[i] - y[i - 1]))
    return None


def study_mass_errors(cfg):
    out = {}
    dt, T, rec = cfg["robust_dt"], cfg["track_T"], cfg["record"] // 2 or 1
    eps_grid = np.arange(cfg["margin_step"], 0.6 + 1e-9, cfg["margin_step"])
    for name in ("DP", "TP"):
        n = len(SCENARIOS[name]["q"])
        R = dict(runs={}, margins={}, eps_grid=eps_grid)
        R["runs"]["none"] = run_tracking(name, [0.0] * n, T, dt, rec)
        for label, signs in error_patterns(n):
            R["runs"][label] = run_tracking(name, [0.1 * s for s in signs], T, dt, rec)
        for servo in (False, True):
            for label, signs in error_patterns(n):
                e, re = margin_curve(name, signs, eps_grid, servo)
                g = eps_grid[:len(re)]
                fail = first_crossing(g, re, 0.0)
                lost = None if len(re) == len(eps_grid) else float(eps_grid[len(re)])
                R["margins"][(servo, label)] = dict(err=e, re=re, eps=g, unstable=fail, lost=lost,
                                                    track=first_crossing(g, np.abs(e), SS_TOL))
        # The simple model's first-order steady-state error against the equilibrium solve (ideal servo).
        R["offsets"] = []
        for label, signs in error_patterns(n)[:2 * n]:
            for eps in (0.02, 0.1):
                _, _, ctl, raw, b = controller(name, [eps * s for s in signs], servo=True, hold=True)
                true = ps.planar_chain(**SCENARIOS[name]["params"])
                qe = ps.closed_loop_equilibrium(true, ctl.torque, ps.balanced_configuration(true, np.array(SCENARIOS[name]["q"])))
                R["offsets"].append((label, eps, simple_model_offset(name, [eps * s for s in signs]), qe[b] - SCENARIOS[name]["q"][b]))

        # The worst sign pattern: the one that fails first (loses stability, its equilibrium, or
        # tracking), with the wrong torques; simulated at each error magnitude of MASS_ERRORS.
        def first_fail(label):
            M = R["margins"][(False, label)]
            cands = [v for v in (M["unstable"], M["lost"], M["track"]) if v is not None]
            return min(cands) if cands else 1.0
        signs_only = error_patterns(n)[2 * n:]
        worst = min(signs_only, key=lambda ls: first_fail(ls[0]))
        R["worst"] = worst[0]
        R["sweep"] = {}
        for eps in cfg["sweep_eps"]:
            R["sweep"][eps] = run_tracking(name, [eps * s for s in worst[1]], T, dt, rec)
        out[name] = R
    return out


class _Fell(Exception):
    pass


def tilt_torque_limit(name):
    """The stated torque limit of the tilt study: m g h, the torque that holds the whole robot's
    weight at its COM height (per actuated joint)."""
    scen = SCENARIOS[name]
    m = ps.planar_chain(**scen["params"])
    b = ps.planar_balance_model(m, ps.balanced_configuration(m, np.array(scen["q"])))
    return b.mass * b.gravity * b.height


TILT_TRAVEL = 1.5  # rad: the stated limit on the balance joint's excursion from its nominal angle


def _tilt_trial(args):
    """One initial tilt: the robot rotated rigidly about the foot by `lean` (rad) and spinning at
    `rate` (rad/s) about it, the controller holding the nominal pose. Peaks are taken over every
    torque evaluation of the integrator."""
    name, lean, rate, T, dt = args
    scen = SCENARIOS[name]
    m = ps.planar_chain(**scen["params"])
    q0 = ps.balanced_configuration(m, np.array(scen["q"]))
    b = m.joint_v_index(scen["joint"])
    z = np.zeros(m.nv)
    ctl = ps.PlanarBalanceController(m, scen["joint"], q0, P_BAL, lambda t: (q0, z, z))
    peak = dict(tau=0.0, travel=0.0)

    def torque(t, q, v):
        travel = abs(q[b] - q0[b])
        if travel > math.pi:
            raise _Fell("the balance joint turned by more than pi")
        tau = ctl.torque(t, q, v)
        peak["tau"] = max(peak["tau"], float(np.max(np.abs(tau))))
        peak["travel"] = max(peak["travel"], travel)
        return tau

    qi, vi = q0.copy(), z.copy()
    qi[0] += lean
    vi[0] = rate
    try:
        _, Q, V = ps.rk4_rollout(m, qi, vi, torque, T, dt, record_every=int(round(T / dt)))
    except (ValueError, FloatingPointError, _Fell) as exc:
        return dict(ok=False, why=str(exc).split(":")[-1].strip(), **peak)
    x = ps.planar_balance_model(m, Q[-1]).x
    ok = abs(x) < 1e-3 and np.max(np.abs(Q[-1] - q0)) < 1e-2 and np.max(np.abs(V[-1])) < 1e-2
    return dict(ok=bool(ok), why="" if ok else f"not settled (x = {x:.2g} m)", **peak)


def linear_tilt_peaks(name, T, dt=1e-3):
    """The linearised closed loop (closed_loop_matrix at the balance point) and the torque law's
    Jacobian: the responses to a unit lean and a unit rate, as (t, torque rows, balance joint row),
    so that the peak for any (lean, rate) is max_t |lean y1 + rate y2|."""
    scen = SCENARIOS[name]
    m = ps.planar_chain(**scen["params"])
    q0 = ps.balanced_configuration(m, np.array(scen["q"]))
    b = m.joint_v_index(scen["joint"])
    n = m.nv
    z = np.zeros(n)
    ctl = ps.PlanarBalanceController(m, scen["joint"], q0, P_BAL, lambda t: (q0, z, z))
    A = ps.closed_loop_matrix(m, ctl.torque, q0)
    h = 1e-6
    K = np.column_stack([(ctl.torque(0, q0 + e[:n], e[n:]) - ctl.torque(0, q0 - e[:n], -e[n:])) / (2 * h)
                         for e in h * np.eye(2 * n)])
    Z = np.zeros((2 * n, 2))
    Z[0, 0], Z[n, 1] = 1.0, 1.0
    out = [Z.copy()]
    for _ in range(int(round(T / dt))):
        k1 = A @ Z
        k2 = A @ (Z + 0.5 * dt * k1)
        k3 = A @ (Z + 0.5 * dt * k2)
        k4 = A @ (Z + dt * k3)
        Z = Z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(Z.copy())
    Zs = np.array(out)  # (steps, 2n, 2)
    return dict(tau=np.einsum("ij,sjk->sik", K[1:], Zs), tau0=ctl.torque(0.0, q0, z)[1:], travel=Zs[:, b, :], A=A)


def linear_tilt_peak(lin, lean, rate):
    """(peak |torque|, peak travel) the linearised closed loop predicts for one initial tilt (the
    torque is the static holding torque plus the linear response)."""
    tau = lin["tau0"][None, :] + lin["tau"][:, :, 0] * lean + lin["tau"][:, :, 1] * rate
    return float(np.max(np.abs(tau))), float(np.max(np.abs(lin["travel"][:, 0] * lean + lin["travel"][:, 1] * rate)))


def study_tilts(cfg):
    from multiprocessing import get_context
    out = {}
    T, dt = cfg["tilt_T"], cfg["tilt_dt"]
    for name, lean_max in (("DP", 0.15), ("TP", 0.15)):
        leans = np.linspace(-lean_max, lean_max, cfg["tilt_n"][0])
        rates = np.linspace(-0.4, 0.4, cfg["tilt_n"][1])
        jobs = [(name, float(a), float(w), T, dt) for w in rates for a in leans]
        with get_context("fork").Pool(2) as pool:
            res = pool.map(_tilt_trial, jobs)
        grid = np.array(res, dtype=object).reshape(len(rates), len(leans))
        lin = linear_tilt_peaks(name, T)
        # Linear predictions of the peaks on a fine grid (they are homogeneous in (lean, rate)).
        fl, fr = np.linspace(-lean_max, lean_max, 121), np.linspace(-0.4, 0.4, 81)
        Lg, Rg = np.meshgrid(fl, fr)
        yt = lin["tau"]  # (steps, n-1, 2)
        ptau = np.max(np.abs(lin["tau0"][None, :, None, None] + yt[:, :, 0][:, :, None, None] * Lg
                             + yt[:, :, 1][:, :, None, None] * Rg), axis=(0, 1))
        ytr = lin["travel"]
        ptr = np.max(np.abs(ytr[:, 0][:, None, None] * Lg + ytr[:, 1][:, None, None] * Rg), axis=0)
        # ... and the linear predictions at the simulated grid points, to compare.
        lin_pts = np.array([[linear_tilt_peak(lin, a, w) for a in leans] for w in rates])
        i = int(np.argmax(np.abs(ytr[:, 0])))
        m = ps.planar_chain(**SCENARIOS[name]["params"])
        Tc = ps.planar_balance_model(m, ps.balanced_configuration(m, np.array(SCENARIOS[name]["q"]))).Tc
        out[name] = dict(leans=leans, rates=rates, grid=grid, tau_max=tilt_torque_limit(name), fine=(fl, fr, ptau, ptr),
                         lin_pts=lin_pts, A=lin["A"], k=float(ytr[i, 1] / ytr[i, 0]), Tc=Tc)
    return out


def study_tp_tracking(cfg):
    return {pv: run_tracking("TP", [0.0, 0.0, 0.0], cfg["track_T"], cfg["robust_dt"], max(cfg["record"] // 2, 1), preview=pv)
            for pv in ("combined", "balance", "none")}


PREVIEW_LABEL = {"combined": "preview of q3 + r q2", "balance": "preview of q3 only", "none": "no preview"}


def plots_new(R, out):
    files = {}
    TT = R["tp_tracking"]
    fig, axs = sp.new_figure(1, 3, figsize=(15, 3.8))
    for pv, style in (("combined", "-"), ("balance", "-."), ("none", "--")):
        s = TT[pv]
        lab = PREVIEW_LABEL[pv]
        axs[0].plot(s["t"], s["Q"][:, 2], "C0" + style, label=f"joint 3, {lab}")
        axs[0].plot(s["t"], s["Q"][:, 1], "C1" + style, label=f"joint 2, {lab}")
        axs[1].plot(s["t"], s["Q"][:, 2] - s["cmd"][:, 2], "C0" + style, label=f"joint 3 - command, {lab}")
        axs[1].plot(s["t"], s["Q"][:, 1] - s["cmd"][:, 1], "C1" + style, label=f"joint 2 - command, {lab}")
        axs[2].plot(s["t"], s["x"] * 100, "k" + style, label=lab)
    s = TT["combined"]
    axs[0].plot(s["t"], s["cmd"][:, 2], "k:", label="commands")
    axs[0].plot(s["t"], s["cmd"][:, 1], "k:")
    for ax, ylabel in zip(axs, ("joint angle (rad)", "tracking error (rad)", "COM offset x (cm)")):
        sp.label_axes(ax, "t (s)", ylabel, legend=7, grid=True)
    files["tp_tracking"] = sp.save_figure(
        fig, out, "balance_tp_tracking.png",
        "Triple pendulum: balance joint 3 commanded -0.3 -> 0.1 rad while joint 2 moves 0.3 -> 0.6 rad")

    M = R["mass_errors"]
    fig, axs = sp.new_figure(2, 2, figsize=(13, 7))
    for row, name in enumerate(("DP", "TP")):
        runs = M[name]["runs"]
        b = runs["none"]["b"]
        for label, s in runs.items():
            if "failed" in s:
                continue
            kw = dict(color="k", lw=2, label="true masses") if label == "none" else dict(lw=0.8, label=label)
            axs[row, 0].plot(s["t"], s["Q"][:, b], **kw)
            axs[row, 1].plot(s["t"], s["x"] * 100, **kw)
        axs[row, 0].plot(runs["none"]["t"], runs["none"]["cmd"][:, b], "k:", label="command")
        sp.label_axes(axs[row, 0], "t (s)", f"{name}: joint {b + 1} (rad)", legend=dict(fontsize=6, ncol=2), grid=True)
        sp.label_axes(axs[row, 1], "t (s)", f"{name}: COM offset x (cm)", grid=True)
    files["mass_errors"] = sp.save_figure(
        fig, out, "balance_mass_errors.png",
        "Controller designed with each link's mass and inertia wrong by 10 % (signs per link), run on the true robot")

    fig, axs = sp.new_figure(2, 2, figsize=(13, 7))
    for row, name in enumerate(("DP", "TP")):
        for (servo, label), c in M[name]["margins"].items():
            if servo:
                continue
            lw = 2 if label == M[name]["worst"] else 0.8
            axs[row, 0].plot(c["eps"] * 100, c["re"], lw=lw, label=label)
            axs[row, 1].plot(c["eps"] * 100, np.abs(c["err"]), lw=lw, label=label)
        axs[row, 0].axhline(0, color="r", lw=0.7)
        axs[row, 0].axhline(-P_BAL, color="grey", ls=":", lw=0.7)
        axs[row, 1].axhline(SS_TOL, color="r", lw=0.7)
        axs[row, 1].set_yscale("log")
        sp.label_axes(axs[row, 0], "mass error magnitude (%)", f"{name}: max Re(pole) (1/s)",
                      legend=dict(fontsize=6, ncol=2), grid=True)
        sp.label_axes(axs[row, 1], "mass error magnitude (%)", f"{name}: |steady joint error| (rad)", grid=True)
    files["margins"] = sp.save_figure(
        fig, out, "balance_margins.png",
        "Closed-loop poles and steady-state error at the equilibrium vs the size of the mass error "
        "(wrong torques; a line ends where the equilibrium is lost)")

    TI = R["tilts"]
    fig, axs = sp.new_figure(1, 2, figsize=(13, 4.8))
    for ax, name in zip(axs, ("DP", "TP")):
        S = TI[name]
        fl, fr, ptau, ptr = S["fine"]
        ax.contour(fl, fr, ptau, levels=[S["tau_max"]], colors="C0", linestyles="-")
        ax.contour(fl, fr, ptr, levels=[TILT_TRAVEL], colors="C1", linestyles="-")
        simt = np.array([[g["tau"] for g in row] for row in S["grid"]], dtype=float)
        if min(simt.shape) > 1:
            ax.contour(S["leans"], S["rates"], simt, levels=[S["tau_max"]], colors="C0", linestyles="--")
            simr = np.array([[g["travel"] for g in row] for row in S["grid"]], dtype=float)
            ax.contour(S["leans"], S["rates"], simr, levels=[TILT_TRAVEL], colors="C1", linestyles="--")
        for i, w in enumerate(S["rates"]):
            for k, a in enumerate(S["leans"]):
                g = S["grid"][i, k]
                within = g["tau"] <= S["tau_max"] and g["travel"] <= TILT_TRAVEL
                if g["ok"] and within:
                    ax.plot(a, w, "go", ms=5)
                elif g["ok"]:
                    ax.plot(a, w, "^", color="orange", ms=5)
                else:
                    ax.plot(a, w, "rx", ms=6)
        sp.label_axes(ax, "initial lean about the foot (rad)", "initial rate about the foot (rad/s)",
                      f"{name}: torque limit {S['tau_max']:.0f} N m (blue), travel {TILT_TRAVEL} rad (orange)", grid=True)
    files["tilts"] = sp.save_figure(
        fig, out, "balance_tilts.png",
        "Initial tilts: o recovered within the limits, ^ recovered beyond a limit, x fell; "
        "solid: linearised prediction of each limit, dashed: simulated")
    return files


def _c(v, d=3):
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{d}g}"


def _range(a, d):
    return f"{_c(float(np.min(a)), d)} .. {_c(float(np.max(a)), d)}" if np.size(a) else "-"


def write_new_sections(R, files, w):
    TT = R["tp_tracking"]
    tm = R["control"]["tp_model"]
    w("## 7. Triple pendulum: a commanded move of the balance joint while the other joint moves\n")
    w("Triple pendulum TP balanced with joint 3 (p = 5 /s, the other joint's motion compensated as in "
      "section 3, r = G2/G3): joint 3 is commanded from -0.3 to 0.1 rad between t = 1.5 and 2.5 s (quintic "
      "step) while joint 2 follows 0.3 -> 0.6 rad between t = 1.8 and 2.6 s (servo kp = 400, kv = 40). The "
      "law controls q3 + r q2, so joint 2's move is also a command to it. Three commands: no preview; the "
      "reverse-time low-pass (time constant Tc) on joint 3's own command only; and on the combined command "
      "q3c + r q2c (joint 3 then gets the filtered sum minus r q2c). The robot starts at rest, "
      "balanced, at the closed loop's equilibrium. Tracking error = joint angle minus the raw (unfiltered) "
      "command.\n")
    w.figure(files["tp_tracking"], "tp tracking")
    rows = []
    for pv in ("combined", "balance", "none"):
        s = TT[pv]
        rows.append((PREVIEW_LABEL[pv], s["peak_x"] * 100, float(np.max(np.abs(s["Q"][:, 2] - s["cmd"][:, 2]))),
                     float(np.min(s["Q"][:, 2]) - (-0.3)), float(np.max(np.abs(s["Q"][:, 1] - s["cmd"][:, 1]))),
                     s["err_b"], s["err_o"], s["end_x"], s["max_tau"]))
    w.table(["command", "peak COM offset (cm)", "max abs(joint 3 - command) (rad)", "joint 3 below its start (rad)",
             "max abs(joint 2 - command) (rad)", "final joint-3 error (rad)", "final joint-2 error (rad)", "final abs(x) (m)",
             "peak torque (N m)"], rows, end="")
    dip = {pv: float(-0.3 - np.min(TT[pv]["Q"][:, 2])) for pv in TT}
    w(f"\nWithout preview joint 3 first moves the wrong way, {dip['none']:.3f} rad below its start, before "
      f"rising (the non-minimum-phase zero at s = 1/Tc = {1 / tm.Tc:.2f} /s). Filtering joint 3's own command "
      f"leaves a dip of {dip['balance']:.3f} rad: the response to joint 2's move, which reaches the law "
      "through q3 + r q2 unfiltered. Filtering the combined command leaves "
      f"{dip['combined']:.3f} rad: the law now moves q3 + r q2 smoothly, but joint 2 moves faster than the "
      "balanced quantity can follow, and q3 = (q3 + r q2) - r q2 gives back the difference. Peak COM offsets: "
      + ", ".join(f"{PREVIEW_LABEL[pv]} {TT[pv]['peak_x'] * 100:.2f} cm" for pv in ("none", "balance", "combined"))
      + " (the previewed commands lean earlier, which costs COM excursion before the move and saves it during "
      "it). The large error against the raw command with preview is the intended lead. All three end on the "
      "commands with the COM over the foot.\n")

    M = R["mass_errors"]
    w("## 8. Robustness to mass errors\n")
    w("The controller is designed from a model whose link masses (and, in proportion, the links' rotational "
      "inertias about their COMs) are wrong by a fraction e_i per link; COM positions and lengths are right. "
      "Everything the law uses comes from the wrong model: L, x and x dot estimated from the measured q and "
      "v, Tc and G, the nominal pose, the preview filter's Tc, and the torques that realise the commanded "
      "accelerations. It runs on the true robot (`plucker.aba` with the true masses). Patterns: each link "
      "alone +-e, and all 2^n sign patterns (+-e on every link). Scenarios: the double pendulum's "
      "joint-2 move of section 3 (0.5 -> -0.3 rad, here between t = 1.5 and 2.5 s, with preview) and the "
      "triple pendulum's moves of section 7 (combined preview); RK4 at "
      f"{R['cfg']['robust_dt'] * 1e3:g} ms over {R['cfg']['track_T']:g} s, from rest at the closed loop's "
      "equilibrium.\n")
    w("Independent checks: (a) the final state of each simulation against the closed loop's **static "
      "equilibrium** solved directly (`plucker_studies.closed_loop_equilibrium`: Newton on the plant's "
      "accelerations at rest, no simulation); (b) the decay rate fitted to the simulation's last 40 % "
      "(slope of log |state - equilibrium|) against the largest real part of the **linearised closed-loop "
      "poles** at that equilibrium (`plucker_studies.closed_loop_matrix`: central differences through "
      "the true robot's `plucker.aba`); (c) the steady-state error against the simple model's first-order "
      "formula (below).\n")
    w.figure(files["mass_errors"], "mass errors")
    for name in ("DP", "TP"):
        runs = M[name]["runs"]
        nom = runs["none"]
        b = nom["b"]
        rows = []
        for label, s in runs.items():
            if "failed" in s:
                rows.append((label, "fell: " + s["failed"], "", "", "", "", "", "", ""))
                continue
            dev = float(np.max(np.abs(s["Q"][:, b] - np.interp(s["t"], nom["t"], nom["Q"][:, b]))))
            rows.append(("true masses" if label == "none" else label, s["peak_x"] * 100, dev, s["err_b"],
                         _c(abs(s['err_b'] - s['pred_err_b']), 2), s["err_o"], _c(s["max_re"], 4), _c(s["decay"], 4), s["max_tau"]))
        w(f"**{'Double' if name == 'DP' else 'Triple'} pendulum, 10 % errors** (signs per link, bottom to top; "
          f"balance joint {b + 1}):\n")
        w.table(["errors", "peak COM offset (cm)", "max abs(q_b - q_b without error) (rad)", "final balance-joint error (rad)",
                 "abs(sim - static equilibrium) (rad)", "final other-joint error (rad)", "max Re(pole) (1/s)",
                 "fitted decay (1/s)", "peak torque (N m)"], rows)
    # summary at 10 %
    for name in ("DP", "TP"):
        runs = {k: v for k, v in M[name]["runs"].items() if k != "none" and "failed" not in v}
        worst_x = max(runs.items(), key=lambda kv: kv[1]["peak_x"])
        worst_e = max(runs.items(), key=lambda kv: kv[1]["err_b"])
        worst_re = max(runs.items(), key=lambda kv: kv[1]["max_re"])
        nf = len(M[name]["runs"]) - 1 - len(runs)
        w(f"* {name} at 10 %: {len(runs)} of {len(runs) + nf} patterns balance and reach their commands' "
          f"neighbourhood; peak COM offset {M[name]['runs']['none']['peak_x'] * 100:.2f} cm without error, at most "
          f"{worst_x[1]['peak_x'] * 100:.2f} cm with ({worst_x[0]}); the slowest closed-loop pole "
          f"{worst_re[1]['max_re']:.2f} /s ({worst_re[0]}; -5 by design); the largest steady-state error of the "
          f"balance joint {worst_e[1]['err_b']:.3f} rad ({worst_e[0]}), none without error.")
    w("")
    w("**Why the steady state moves.** At rest L = L'' = 0, so the law leaves kd m g x_w + kq (q_b - q_c) = 0, "
      "where x_w is the COM offset the *wrong* model computes while the true COM is over the foot (the "
      "plant insists on that). Hence, to first order (ideal servo, gains at the wrong model's Tc and G),\n")
    w("    q_b - q_c = x_w (6p^2 + p^4 Tc^2 + 1/Tc^2) / (G p^4 Tc^2)\n")
    w("a COM estimate error magnified by 1/G (|G| is 0.05 to 0.07 m/rad here) and by "
      "1 + 6/(p Tc)^2 + 1/(p Tc)^4 (about 3 at p = 5 /s, Tc = 0.35 s). A 1 mm error in the estimated COM costs "
      "about 0.04 rad of joint error. Uniform errors (every link scaled alike) leave the COM, Tc, G and the "
      "gains' products unchanged: with the ideal servo they have no effect at all (the tests check this), and "
      "with wrong torques only through the gravity torque's scale. Check of the formula against the "
      "equilibrium solve (ideal servo; single-link errors):\n")
    for name in ("DP", "TP"):
        w.table(["robot", "errors", "e", "formula (rad)", "static equilibrium (rad)", "ratio"],
                [(name, lab, eps, f1, eq, f1 / eq if eq else float("nan")) for lab, eps, f1, eq in M[name]["offsets"]])
    w("\n**Sweeping the error magnitude.** Along each pattern e * signs, e = "
      f"{M['DP']['eps_grid'][0]:.2f} .. {M['DP']['eps_grid'][-1]:.2f}, the equilibrium is continued in e and "
      "its poles computed; it fails where a pole crosses into the right half plane (unstable), where the "
      f"equilibrium disappears (no rest state near the command), or, for tracking, where the steady-state "
      f"error passes {SS_TOL} rad. Two torque models: the wrong model's (as above) and an ideal acceleration "
      "servo (torques from the true model, only the balance law's estimates wrong).\n")
    w.figure(files["margins"], "margins")
    for name in ("DP", "TP"):
        rows = []
        for (servo, label), c in M[name]["margins"].items():
            rows.append((label, "ideal servo" if servo else "wrong torques", _c(c["unstable"]), _c(c["lost"]),
                         _c(c["track"]), _c(float(np.interp(0.1, c["eps"], np.abs(c["err"]))), 4) if len(c["eps"]) and c["eps"][-1] >= 0.1 else "lost"))
        w(f"{name}: error magnitude where each pattern fails (-: not within {M[name]['eps_grid'][-1]:.2f})\n")
        w.table(["errors", "torques", "unstable at e =", "equilibrium lost at e =", f"steady error > {SS_TOL} rad at e =",
                 "steady error at e = 0.1 (rad)"], rows)
    for name in ("DP", "TP"):
        rows = []
        for eps, s in M[name]["sweep"].items():
            if "failed" in s:
                rows.append((f"{eps:g}", "fell: " + s["failed"], "", "", "", ""))
                continue
            if s["end_v"] > 1e-2 or s["end_x"] > 1e-3:
                status = "balancing, still moving"
            elif s["err_b"] > SS_TOL:
                status = "settled off target"
            else:
                status = "settled on target"
            rows.append((f"{eps:g}", status, s["peak_x"] * 100, s["err_b"], s["end_v"], _c(s["max_re"], 4)))
        w(f"{name}, worst pattern {M[name]['worst']} (the one failing first), simulated at each magnitude:\n")
        w.table(["e", f"at t = {R['cfg']['track_T']:g} s", "peak COM offset (cm)", "final balance-joint error (rad)",
                 "final max abs(v) (rad/s)", "max Re(pole) at the final equilibrium"], rows)

    w("**Verdict.**\n")
    lost_at = {}
    for name in ("DP", "TP"):
        Mn = M[name]["margins"]
        wrong = {lab: c for (servo, lab), c in Mn.items() if not servo}

        def first(key):
            vals = [(c[key], lab) for lab, c in wrong.items() if c[key] is not None]
            return min(vals) if vals else (None, "-")
        un, lo, tr = first("unstable"), first("lost"), first("track")
        lost_at[name] = min(v for v in (un[0], lo[0], 1.0) if v is not None)
        runs = {k: v for k, v in M[name]["runs"].items() if k != "none" and "failed" not in v}
        e10 = max(v["err_b"] for v in runs.values())
        re10 = max(v["max_re"] for v in runs.values())
        w(f"* {name}: with 10 % errors in any pattern it balances (slowest pole {re10:.2f} /s instead of -5, "
          f"COM excursion within {max(v['peak_x'] for v in runs.values()) * 100:.2f} cm against "
          f"{M[name]['runs']['none']['peak_x'] * 100:.2f} cm) and follows the commanded moves, but settles up to "
          f"{e10:.3f} rad off the balance joint's command. Balance is first lost at e = {_c(un[0])} (a pole "
          f"crosses, pattern {un[1]}) or "
          + (f"e = {_c(lo[0])} (the equilibrium disappears, pattern {lo[1]})" if lo[0] is not None else
             f"never by losing its equilibrium within e <= {M[name]['eps_grid'][-1]:.2f}")
          + "; the "
          f"steady-state error at the nominal pose exceeds {SS_TOL} rad from e = {_c(tr[0])} (pattern {tr[1]}).")
    w("\nSo the paper's robustness claim holds for **balance** at 10 % mass errors, with margin (the worst "
      f"pattern loses balance at {lost_at['DP'] * 100:.0f} % on DP and {lost_at['TP'] * 100:.0f} % on TP, others "
      "later or not within the sweep), and the simulated runs agree with the poles and the static equilibria. It does **not** hold for **tracking accuracy** in this form of the law: the "
      "steady state is set by the model's estimate of the COM, amplified by about 3/|G|, so 10 % errors "
      "leave joint errors of 0.1 to 0.5 rad on these small-gain robots. A correction of the COM estimate "
      "(e.g. from the measured foot torque or a slow integral of the balance error) would be needed; it is "
      "not part of the four-term law studied here.\n")

    TI = R["tilts"]
    w("## 9. Recovery from initial tilts\n")
    w("The robot (true masses) starts rotated rigidly about its foot by a lean angle (rad, positive = "
      "toward +x) and spinning about the foot at a rate (rad/s), and the controller (p = 5 /s) holds the "
      "nominal pose. Recovered: at the end (RK4 at "
      f"{R['cfg']['tilt_dt'] * 1e3:g} ms over {R['cfg']['tilt_T']:g} s) |x| < 1 mm, every joint within 0.01 rad "
      "of its nominal angle and every rate below 0.01 rad/s; fell: the COM went below the foot, the balance "
      "joint's gain vanished, it turned by more than pi, or the state diverged. Stated limits: joint torque "
      f"|tau| <= m g h (DP {TI['DP']['tau_max']:.1f} N m, TP {TI['TP']['tau_max']:.1f} N m; the controller is "
      f"not saturated, the peak is recorded) and balance-joint travel <= {TILT_TRAVEL} rad. Independent "
      "prediction: the linearised closed loop at the balance point (`plucker_studies.closed_loop_matrix` and "
      "the torque law's Jacobian, both by central differences): the travel is linear in the initial state, "
      "the torque the static holding torque plus a linear response, so each limit's predicted boundary is a "
      "closed convex curve around the origin.\n")
    w.figure(files["tilts"], "tilts")
    for name in ("DP", "TP"):
        S = TI[name]
        g = S["grid"]
        ok = np.array([[c["ok"] for c in row] for row in g])
        within = np.array([[c["ok"] and c["tau"] <= S["tau_max"] and c["travel"] <= TILT_TRAVEL for c in row] for row in g])
        simt = np.array([[c["tau"] for c in row] for row in g], dtype=float)
        simr = np.array([[c["travel"] for c in row] for row in g], dtype=float)
        lt, lr = S["lin_pts"][:, :, 0], S["lin_pts"][:, :, 1]
        A, W = np.meshgrid(S["leans"], S["rates"])
        use = ok & (np.abs(A) + np.abs(W) > 0)
        small = use & (np.abs(A) + TI[name]["Tc"] * np.abs(W) <= 0.03)
        w(f"* {name} (Tc = {S['Tc']:.3f} s): {int(ok.sum())} of {ok.size} initial states recovered without limits, "
          f"{int(within.sum())} within both limits. Peaks, simulated / linearised, over the recovered states "
          f"with |lean| + Tc |rate| <= 0.03 rad: torque {_range(simt[small] / lt[small], 4)}, travel "
          f"{_range(simr[small] / lr[small], 4)}; over all recovered states torque {_range(simt[use] / lt[use], 3)}, "
          f"travel {_range(simr[use] / lr[use], 3)}. The linearised travel "
          f"depends on lean + k rate with k = {S['k']:.3f} s (at the time of its peak), close to Tc.")
        fails = sorted({c["why"] for row in g for c in row if not c["ok"]})
        if fails:
            w(f"  Every fall: {'; '.join(fails)}.")
    w("\nThe boundary, row by row (leans within both limits; simulated: the extreme recovered grid points, "
      "grid step " + f"{TI['DP']['leans'][1] - TI['DP']['leans'][0]:.3f}" + " rad; linearised: the interval on a 0.0025 rad grid):\n")
    rows = []
    for i, wv in enumerate(TI["DP"]["rates"]):
        row = [f"{wv:.2f}"]
        for name in ("DP", "TP"):
            S = TI[name]
            c = [a for a, g in zip(S["leans"], S["grid"][i]) if g["ok"] and g["tau"] <= S["tau_max"] and g["travel"] <= TILT_TRAVEL]
            row.append(f"{min(c):.3f} .. {max(c):.3f}" if c else "none")
            fl, fr, ptau, ptr = S["fine"]
            j = int(np.argmin(np.abs(fr - wv)))
            inside = fl[(ptau[j] <= S["tau_max"]) & (ptr[j] <= TILT_TRAVEL)]
            row.append(f"{inside.min():.3f} .. {inside.max():.3f}" if inside.size else "none")
        rows.append(tuple(row))
    w.table(["rate (rad/s)", "DP simulated", "DP linearised", "TP simulated", "TP linearised"], rows, end="")
    w("\nReading: the basin is a diagonal band in the (lean, rate) plane, bounded by straight lines of "
      "constant lean + Tc x rate, the simple model's diverging component (x + Tc x dot)/h: the linearised "
      "closed loop's travel depends on exactly that combination (k above equals Tc), and so do the "
      "simulated boundaries. Within the band, the balance joint must travel about (x + Tc x dot)/|G| "
      "(times a factor of the closed loop), so a small gain makes a narrow band: without limits the "
      "controller still recovers every state whose required travel stays below pi (every fall in the "
      "grid is the balance joint turning over); with the stated limits the travel limit and the torque "
      "limit bind at similar places. The linearisation predicts the peaks well near the origin and "
      "to within the ratios above out to the band's edge, where the varying G and Tc (the controller "
      "reschedules them) and the gravity torque's nonlinearity take over.\n")


AGREEMENT = """* Gains as ratios of COM velocity change to actuated-joint velocity change, computed from the JSIM of
  the robot with a passive contact joint: implemented as stated, for planar and 3-D point contacts,
  with `plucker.crba` and `plucker.minv`; checked against a closed form and simulated impulses.
* The planar model's "two numbers": Tc and G, both simple functions of the mechanism's physical
  properties (the inertia about the contact point, the COM height, the mass and the gain); the "third
  number": the other joints' gains relative to the balance joint's. Both equations are verified
  along simulated trajectories (tests).
* The four-term law with gains that are "trivial functions of the two model parameters and a single
  value chosen by the user": reproduced (our pole placement); the full nonlinear robot's closed-loop
  poles land on the design. The preview filter makes the robot "lean in anticipation" and removes the
  wrong-way joint motion (figure above).
* Rolling contacts (planar and 3-D) and compliant contact areas, which the velocity-gain abstract
  says the paper treats: implemented from the rolling constraint and the linearised compliant
  support (sections 5 and 6), with our own choices where the definition is open (the reference of
  the COM velocity on a rolling foot; the time window over which a compliant support's gain is
  measured). The paper's own formulas and numbers for them could not be read or compared.
* Numbers from the papers (their triple pendulum's and quadruped's gains) could not be compared: no
  public text of those sections was reachable. The qualitative conclusions above are this study's own.
"""


def run(cfg):
    R = dict(cfg=cfg)
    R["checks"] = study_checks()
    R["spatial"] = study_spatial()
    R["design"] = design_sweep(cfg)
    R["designs"] = named_designs()
    R["control"] = study_control(cfg)
    R["hyq"] = study_hyq()
    R["rolling"] = study_rolling()
    R["compliant"] = study_compliant(cfg)
    R["tp_tracking"] = study_tp_tracking(cfg)
    R["mass_errors"] = study_mass_errors(cfg)
    R["tilts"] = study_tilts(cfg)
    return R


def build(quick, out, t0):
    R = run(QUICK if quick else FULL)
    files = plots(R, out)
    files.update(plots_new(R, out))
    return write_page(R, files, quick=quick, seconds=time.time() - t0), files


def main(argv=None):
    return sp.main(argv, __doc__, "coarse sweeps, short simulations (tests)", "balance.md", build)


if __name__ == "__main__":
    sys.exit(main())
