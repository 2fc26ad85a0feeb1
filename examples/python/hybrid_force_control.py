#!/usr/bin/python3
"""Hybrid motion/force control (Featherstone's decoupled subsystems) of an arm pushing on a surface.

A sphere of radius 1 cm at the end-effector frame presses on a compliant, frictionless plane of the
plucker.Simulator (linear law f = k x, stiffness unknown to the controller) while the frame follows a
5 cm circle in the plane at a fixed orientation and the normal force is regulated to 10 N.
The contact is a point contact: force subspace T = [0; n], motion freedoms N = [I 0; 0 t1 t2] (the
three rotations and the two tangential translations; world-aligned axes at the sphere's centre).
plucker_control.decompose gives the decoupled split and three controllers are compared, each run
against two stiffnesses:

  decoupled     tau = J^T (Lambda N a_m - T f + bias) + N_null^T tau_0  (plucker_control.hybrid_torque)
  cancelled     the same, a_m corrected by -N^T Phi T (lam - f) with the measured contact force lam
                (the environment's effect on the Euclidean surface coordinates factored out)
  selection     tau = J^T (S Lambda N a_m - T f + bias) + ..., S = N N^T: a Euclidean selection of the
                operational-space force (plucker_control.selection_torque), not decoupled

with the same motion law a_m = sdd_d + Kp e_s + Kd de_s in surface coordinates s = [rotation; t1.p;
t2.p] and the same force law f = f_d + Kv m_f n.pdot (m_f = (T^T Phi T)^-1: damping of the normal
motion). On the panda (../shared/models) the fingers' mimic relation is dropped (in memory) so that
controller and plant are the same tree; the posture task holds the fingers. Without ../shared the
6-DoF example arm is used (no redundancy). The plant is the Simulator's acceleration (ABA with the contact force), integrated by RK4
at 1 ms with the controller evaluated at every stage; a posture torque acts through N_null^T.

Reported: the motion-subsystem acceleration alpha against the command a_m (every step), the
surface-coordinate error e_s for both stiffnesses and its difference between them, the force error,
and for the cancelled controller the deviation of e_s from the closed form of e'' + Kd e' + Kp e = 0.
Writes hybrid_force_control.png and .json.

usage: hybrid_force_control.py [--model URDF] [--frame NAME] [--seconds T] [--stiffness K1 K2]
                               [--tilt DEG] [--out DIR]
"""
import argparse
import json
import os
import re
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # plucker_control from the source tree

import plucker  # noqa: E402
import plucker_control as pc  # noqa: E402

RADIUS = 0.01      # the sphere at the end-effector frame [m]
FORCE = 10.0       # the commanded normal force [N]
CIRCLE = 0.05      # circle radius [m]
FREQ = 0.5         # circle frequency [Hz]
OMEGA = 10.0       # motion bandwidth: Kp = OMEGA^2, Kd = 2 OMEGA
KV = 60.0          # normal-motion damping of the force law [1/s]
DT = 1e-3


def default_model():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    panda = os.path.join(shared, "models", "panda.urdf")
    if os.path.exists(panda):
        return panda, "panda_hand_tcp"
    return os.path.join(HERE, "..", "models", "plucker_arm.urdf"), "tool0"


class Setup:
    def __init__(self, model_path, frame, tilt_deg):
        with open(model_path) as f:
            xml = re.sub(r"<mimic\b[^>]*?/>", "", f.read())  # the tree: see the module doc
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", plucker.ModelWarning)
            self.model = plucker.Model.from_urdf_string(xml, source_name=model_path)
        if self.model.num_constraints:
            raise ValueError(f"{model_path}: the example needs a tree (no loop joints)")
        m = self.model
        self.frame = frame
        q0 = plucker.neutral(m)
        if m.nv >= 7:
            q0[3], q0[5] = -1.5, 1.5  # the panda's ready pose
        else:
            q0[:6] = [0.2, -1.0, 1.2, -0.6, 0.9, 0.3][: m.nv]
        self.q0 = q0
        T0 = plucker.frame_pose(m, q0, frame)
        self.R0, self.p0 = T0[:3, :3], T0[:3, 3]
        c, s = np.cos(np.radians(tilt_deg)), np.sin(np.radians(tilt_deg))
        self.n = np.array([0.0, -s, c])  # the plane's normal: z tilted about x
        self.t1, self.t2 = pc.tangent_basis(self.n)
        self.offset = float(self.n @ self.p0) - RADIUS  # the sphere touches the plane at t = 0
        self.T = pc.point_contact(self.n)  # through the contact point -r n: no moment about the centre
        self.N = np.zeros((6, 5))
        self.N[:3, :3] = np.eye(3)
        self.N[3:, 3], self.N[3:, 4] = self.t1, self.t2
        self.G = self.N.T  # Euclidean surface coordinates: G N = I, G T = 0

    def simulator(self, stiffness):
        sim = plucker.Simulator(self.model, dt=DT)
        sim.add_ground(normal=self.n, offset=self.offset, contact="linear", stiffness=stiffness, damping=0.0,
                       friction=0.0)
        sim.add_sphere(self.frame, center=(0.0, 0.0, 0.0), radius=RADIUS)
        return sim

    def desired(self, t):
        a, w = 2 * np.pi * FREQ * t, 2 * np.pi * FREQ
        p = self.p0 + CIRCLE * (np.sin(a) * self.t1 + (1 - np.cos(a)) * self.t2)
        pd = CIRCLE * w * (np.cos(a) * self.t1 + np.sin(a) * self.t2)
        pdd = CIRCLE * w * w * (-np.sin(a) * self.t1 + np.cos(a) * self.t2)
        return p, pd, pdd

    def surface_error(self, t, q, xd):
        """e_s = [log(R0 R^T); t1.(p_d - p); t2.(p_d - p)] and its rate (xd = J v = [omega; pdot])."""
        T = plucker.frame_pose(self.model, q, self.frame)
        p_d, pd_d, _ = self.desired(t)
        e = np.concatenate([plucker.so3_log(self.R0 @ T[:3, :3].T), self.G[3:, 3:] @ (p_d - T[:3, 3])])
        de = np.concatenate([-xd[:3], self.G[3:, 3:] @ (pd_d - xd[3:])])
        return e, de


def run(setup, controller, stiffness, seconds):
    m, sim = setup.model, setup.simulator(stiffness)
    kp, kd, kp_n, kd_n = OMEGA**2, 2 * OMEGA, 25.0, 10.0

    def tau_of(t, q, v):
        d = pc.decompose(m, q, v, setup.frame, setup.T, setup.N)
        xd = d.J @ v
        e, de = setup.surface_error(t, q, xd)
        a_m = np.concatenate([np.zeros(3), setup.G[3:, 3:] @ setup.desired(t)[2]]) + kp * e + kd * de
        m_f = 1.0 / d.Phi_force[0, 0]
        f = FORCE + KV * m_f * float(setup.n @ xd[3:])
        tau0 = kp_n * (setup.q0 - q) - kd_n * v
        if controller == "force_selection":
            return pc.selection_torque(d, a_m, [f], tau0), d, a_m
        if controller == "acceleration_selection":  # the damping as an acceleration along n, through Lambda
            return pc.acceleration_selection_torque(d, a_m, [-KV * float(setup.n @ xd[3:])], [FORCE], tau0), d, a_m
        if controller == "cancelled":
            lam = float(setup.n @ sim.contacts(q, v)["force"][0])  # the force sensor
            a_m = a_m - pc.environment_leak(d, setup.G)[:, 0] * (lam - f)
        return pc.hybrid_torque(d, a_m, [f], tau0), d, a_m

    def acceleration(t, q, v):
        return sim.acceleration(q, v, tau_of(t, q, v)[0])

    q, v = setup.q0.copy(), np.zeros(m.nv)
    steps = int(round(seconds / DT))
    log = {k: [] for k in ("t", "e", "force", "penetration", "alpha_err")}
    for k in range(steps + 1):
        t = k * DT
        tau, d, a_m = tau_of(t, q, v)
        a = sim.acceleration(q, v, tau)
        alpha = d.motion_coordinates @ (d.J @ a + d.Jdot_v)
        contact = sim.contacts(q, v)
        log["t"].append(t)
        log["e"].append(setup.surface_error(t, q, d.J @ v)[0])
        log["force"].append(float(setup.n @ contact["force"][0]))
        log["penetration"].append(float(contact["penetration"][0]))
        log["alpha_err"].append(float(np.abs(alpha - a_m).max()))
        if k == steps:
            break
        q, v = pc.rk4_step(m, q, v, DT, acceleration, t)
    return {k: np.array(val) for k, val in log.items()}


def main(argv=None):
    model_path, frame_name = default_model()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=model_path)
    parser.add_argument("--frame", default=frame_name)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--stiffness", type=float, nargs=2, default=[1e4, 1e5], metavar=("K1", "K2"))
    parser.add_argument("--tilt", type=float, default=0.0, help="plane tilt about world x [deg]")
    parser.add_argument("--out", default=".")
    args = parser.parse_args(argv)
    if args.seconds <= 0 or min(args.stiffness) <= 0:
        parser.error("--seconds and --stiffness must be positive")

    setup = Setup(args.model, args.frame, args.tilt)
    controllers = ("decoupled", "cancelled", "force_selection", "acceleration_selection")
    runs = {(c, k): run(setup, c, k, args.seconds) for c in controllers for k in args.stiffness}
    k1, k2 = args.stiffness
    t = runs[(controllers[0], k1)]["t"]
    settle = t >= 0.5  # after the force transient (settled to 1 % by 0.15 s)
    late = t >= min(1.0, t[-1])  # and after the motion loop's response to it, ~exp(-OMEGA t)

    # The closed form of the cancelled controller's surface error: e(0) = 0, e'(0) = -sdot(0) + sdot_d(0).
    de0 = np.concatenate([np.zeros(3), setup.G[3:, 3:] @ setup.desired(0.0)[1]])
    exact = np.outer(t * np.exp(-OMEGA * t), de0)

    summary = {"model": os.path.basename(args.model), "frame": args.frame, "seconds": args.seconds, "dt": DT,
               "nv": setup.model.nv, "stiffness": [k1, k2], "tilt_deg": args.tilt, "force_command": FORCE,
               "circle_radius": CIRCLE, "Kp": OMEGA**2, "Kd": 2 * OMEGA, "Kv": KV}
    def settling(r):  # the last time the force is off by more than 1 % of the command
        off = np.nonzero(np.abs(r["force"] - FORCE) > 0.01 * FORCE)[0]
        return float(r["t"][off[-1]]) if off.size else 0.0

    for c in controllers:
        a, b = runs[(c, k1)], runs[(c, k2)]
        both = (a, b)
        entry = {
            "max_alpha_minus_command": float(max(a["alpha_err"].max(), b["alpha_err"].max())),
            "max_position_error": [float(np.abs(r["e"][:, 3:]).max()) for r in both],
            "max_rotation_error": [float(np.abs(r["e"][:, :3]).max()) for r in both],
            "max_position_difference": float(np.abs(a["e"][:, 3:] - b["e"][:, 3:]).max()),
            "max_rotation_difference": float(np.abs(a["e"][:, :3] - b["e"][:, :3]).max()),
            "max_position_difference_after_1s": float(np.abs(a["e"][late, 3:] - b["e"][late, 3:]).max()),
            "max_rotation_difference_after_1s": float(np.abs(a["e"][late, :3] - b["e"][late, :3]).max()),
            "peak_force": [float(r["force"].max()) for r in both],
            "force_settling_time_1pct": [settling(r) for r in both],
            "max_force_error_after_0.5s": [float(np.abs(r["force"][settle] - FORCE).max()) for r in both],
            "final_penetration": [float(r["penetration"][-1]) for r in both],
        }
        if c == "cancelled":
            entry["max_deviation_from_closed_form"] = [float(np.abs(r["e"] - exact).max()) for r in both]
        summary[c] = entry

    os.makedirs(args.out, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(12, 8))
    style = {k1: "-", k2: "--"}
    colour = {"decoupled": "C0", "cancelled": "C2", "force_selection": "C3", "acceleration_selection": "C1"}
    for c in controllers:
        for k in args.stiffness:
            r = runs[(c, k)]
            label = f"{c}, k = {k:.0e} N/m"
            ax[0, 0].plot(r["t"], 1e3 * np.linalg.norm(r["e"][:, 3:], axis=1), style[k], color=colour[c], label=label)
            ax[1, 0].plot(r["t"], r["force"], style[k], color=colour[c], label=label)
        diff = np.linalg.norm(runs[(c, k1)]["e"][:, 3:] - runs[(c, k2)]["e"][:, 3:], axis=1)
        ax[0, 1].semilogy(t, np.maximum(diff, 1e-16), color=colour[c], label=c)
    for c in ("decoupled", "cancelled"):
        for k in args.stiffness:
            ax[1, 1].semilogy(t, np.maximum(runs[(c, k)]["alpha_err"], 1e-17), style[k], color=colour[c],
                              label=f"{c}, k = {k:.0e}")
    for c in ("force_selection", "acceleration_selection"):
        ax[1, 1].semilogy(t, np.maximum(runs[(c, k1)]["alpha_err"], 1e-17), color=colour[c], label=c)
    ax[0, 0].set_ylabel("|tangential position error| [mm]")
    ax[0, 0].set_title(f"tracking along the surface: {os.path.basename(args.model)}")
    ax[0, 1].set_ylabel("|p-part of e_s(k1) - e_s(k2)| [m]")
    ax[0, 1].set_title("effect of the environment's stiffness on the surface error")
    ax[1, 0].set_ylabel("normal contact force [N]")
    ax[1, 0].set_title(f"force regulation (command {FORCE} N)")
    ax[1, 1].set_ylabel("max |alpha - a_m|")
    ax[1, 1].set_title("motion-subsystem acceleration vs command")
    for a_ in ax.flat:
        a_.set_xlabel("time [s]")
        a_.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "hybrid_force_control.png"), dpi=110)
    with open(os.path.join(args.out, "hybrid_force_control.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
