#!/usr/bin/python3
"""A quadruped (solo12) dropped onto compliant ground: it lands on its four feet and settles.

The robot (floating base) starts at rest with its base 0.3 m above the ground, legs in a standing
pose (HFE +-0.8 rad, KFE -+1.6 rad). Each foot carries a contact sphere (radius 0.02 m, centred at
the FOOT frame) against a Hunt-Crossley ground (k = 1e5 N/m^1.5, lambda = 0.3 k, regularised
Coulomb friction mu = 0.8, regularisation velocity 0.1 m/s: at 1 ms, 0.05 m/s and below make the
light feet chatter with the explicit step, see docs/contact.md). Two runs of plucker.Simulator
(semi-implicit Euler by default; --integrator implicit_euler holds eps = 0.01 m/s at 1 ms):
  * standing: a PD + gravity-compensation controller on the 12 joints,
        tau = Kp (q_des - q) - Kd v + g(q)   (joint rows; the base is unactuated),
    keeps the robot up: it lands, bounces, settles at a constant height;
  * passive: zero torques, the legs fold and the robot ends on its base and knees (extra contact
    spheres there), in one C++ rollout.
Writes drop_quadruped.png (base height, foot penetration, energy), drop_quadruped.json and
drop_quadruped_trajectory.csv: the standing run at 100 Hz in the format of `plucker simulate`
(t, q0.., v0.., energy; here the simulator's total, elastic energy included), for
`plucker view solo12.urdf drop_quadruped_trajectory.csv` (make demo writes that page).

usage: drop_quadruped.py [--model URDF] [--seconds T] [--dt DT] [--regularization EPS]
                         [--integrator NAME] [--out DIR]
       (default model: solo12 of ../shared/models; exits cleanly when absent)
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import plucker

HERE = os.path.dirname(os.path.abspath(__file__))
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


def default_model():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    return os.path.join(shared, "models", "solo12.urdf")


def standing_pose(model, height=0.3):
    """solo12's actuated joints, a standing pose q_des, the drop state q0 (base at `height`), and
    the q / v indices of the actuated joints."""
    joints = [n for n in model.joint_names if n != "root_joint" and model.joint_nv(n) == 1]
    q_des = plucker.neutral(model)
    for leg, sign in (("FL", 1), ("FR", 1), ("HL", -1), ("HR", -1)):
        q_des[model.joint_q_index(f"{leg}_HFE")] = 0.8 * sign
        q_des[model.joint_q_index(f"{leg}_KFE")] = -1.6 * sign
    q0 = q_des.copy()
    q0[2] = height
    iq = np.array([model.joint_q_index(n) for n in joints])
    iv = np.array([model.joint_v_index(n) for n in joints])
    return joints, q_des, q0, iq, iv


def make_simulator(model, dt, regularization, integrator, extra_spheres=False):
    sim = plucker.Simulator(model, dt=dt, integrator=integrator)
    sim.add_ground(normal=(0, 0, 1), offset=0.0, contact="hunt_crossley", stiffness=1e5, damping=0.3e5,
                   exponent=1.5, friction=0.8, regularization=regularization)
    for foot in FEET:
        sim.add_sphere(foot, center=(0, 0, 0), radius=0.02)
    if extra_spheres:  # the base's corners and the knees, for the passive fall
        for x in (-0.2, 0.2):
            for y in (-0.1, 0.1):
                sim.add_sphere("base_link", center=(x, y, 0), radius=0.03)
        for leg in ("FL", "FR", "HL", "HR"):
            sim.add_sphere(f"{leg}_LOWER_LEG", radius=0.02)
    return sim


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=default_model())
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument("--regularization", type=float, default=0.1,
                        help="friction regularisation velocity [m/s]; below ~0.1 the explicit step chatters at 1 ms")
    parser.add_argument("--integrator", default="semi_implicit_euler",
                        help="semi_implicit_euler, rk4 or implicit_euler (holds eps = 0.01 m/s at 1 ms)")
    parser.add_argument("--out", default=".")
    args = parser.parse_args(argv)
    if not os.path.exists(args.model):
        print(f"drop_quadruped.py: {args.model} not found; nothing to do")
        return 0

    model = plucker.Model.from_urdf(args.model, floating_base=True)
    joints, q_des, q0, iq, iv = standing_pose(model)
    kp, kd = 6.0, 0.2
    steps = int(round(args.seconds / args.dt))

    # ---- standing: the controller in a Python loop around sim.step
    sim = make_simulator(model, args.dt, args.regularization, args.integrator)
    q, v = q0.copy(), np.zeros(model.nv)
    t_wall = time.perf_counter()
    height, pen, energy, active = [q[2]], [sim.contacts(q, v)["penetration"]], [sim.energy(q, v)["total"]], []
    joint_speed = []
    states = [(q.copy(), v.copy())]
    for _ in range(steps):
        tau = np.zeros(model.nv)
        g = plucker.gravity_torques(model, q)
        tau[iv] = kp * (q_des[iq] - q[iq]) - kd * v[iv] + g[iv]
        q, v = sim.step(q, v, tau)
        c = sim.contacts(q, v)
        height.append(q[2])
        pen.append(c["penetration"])
        active.append(c["active"])
        energy.append(sim.energy(q, v)["total"])
        joint_speed.append(np.max(np.abs(v[iv])))
        states.append((q.copy(), v.copy()))
    loop_rate = steps / (time.perf_counter() - t_wall)
    height, pen, energy = np.array(height), np.array(pen), np.array(energy)

    # ---- passive: zero torques, one rollout in C++
    passive = make_simulator(model, args.dt, args.regularization, args.integrator, extra_spheres=True)
    t_wall = time.perf_counter()
    Qp, Vp, Fp, Dp = passive.rollout(q0, np.zeros(model.nv), np.zeros((steps, model.nv)), diagnostics=True)
    rollout_rate = steps / (time.perf_counter() - t_wall)

    t = np.arange(steps + 1) * args.dt
    weight = model.total_mass * 9.81
    expected_pen = plucker.static_penetration("hunt_crossley", weight / 4)
    os.makedirs(args.out, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    axes[0].plot(t, height, label="PD + gravity compensation")
    axes[0].plot(t, Qp[:, 2], label="passive (zero torque)")
    axes[0].set_ylabel("base height [m]")
    axes[0].legend()
    for k, foot in enumerate(FEET):
        axes[1].plot(t, 1e3 * np.maximum(pen[:, k], 0), label=foot)
    axes[1].axhline(1e3 * expected_pen, color="k", ls="--", lw=0.8, label="(m g / 4k)^(2/3)")
    axes[1].set_ylabel("foot penetration [mm]")
    axes[1].legend(ncol=3, fontsize=8)
    axes[2].plot(t, energy, label="PD (kinetic + potential + elastic)")
    axes[2].plot(t, Dp["energy"], label="passive")
    axes[2].set_ylabel("energy [J]")
    axes[2].set_xlabel("time [s]")
    axes[2].legend()
    fig.suptitle(f"{os.path.basename(args.model)} dropped from 0.3 m, {args.integrator}, dt = {args.dt:g} s")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "drop_quadruped.png"), dpi=110)

    tail = slice(max(1, steps - int(0.2 / args.dt)), None)
    summary = {
        "model": os.path.basename(args.model), "seconds": args.seconds, "dt": args.dt,
        "initial_height": float(height[0]),
        "final_height": float(height[-1]),
        "min_height": float(height.min()),
        "height_range_last_0.2s": float(np.ptp(height[tail])),
        "max_joint_speed_last_0.2s": float(np.max(joint_speed[tail.start - 1:])),
        "regularization": args.regularization,
        "integrator": args.integrator,
        "landed_all_feet": bool(np.all(active[-1])),
        "max_penetration": float(pen.max()),
        "final_penetration": [float(x) for x in pen[-1]],
        "static_penetration_quarter_weight": float(expected_pen),
        "initial_energy": float(energy[0]),
        "final_energy": float(energy[-1]),
        "passive_final_height": float(Qp[-1, 2]),
        "passive_max_penetration": float(Dp["penetration"].max()),
        "steps_per_second_python_loop": float(loop_rate),
        "steps_per_second_rollout": float(rollout_rate),
    }
    every = max(1, int(round(0.01 / args.dt)))
    with open(os.path.join(args.out, "drop_quadruped_trajectory.csv"), "w") as f:
        f.write(",".join(["t"] + [f"q{k}" for k in range(model.nq)] + [f"v{k}" for k in range(model.nv)] + ["energy"]))
        f.write("\n")
        for k in range(0, steps + 1, every):
            q, v = states[k]
            f.write(",".join(f"{x:.17g}" for x in [k * args.dt, *q, *v, energy[k]]) + "\n")
    with open(os.path.join(args.out, "drop_quadruped.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
