#!/usr/bin/python3
"""Legged robots dropped onto rigid ground (contact="rigid"): solo12 lands on its four feet and
settles; talos_full lands on its soles and its feet hold.

Rigid contact (docs/contact.md, "Rigid contact"): each step solves the contact impulses of the
active pairs with Coulomb friction (mu = 0.8, projected Gauss-Seidel over the friction cones) and
Newton's restitution (e = 0 here: a plastic landing), then projects the step's predicted
penetration away. Both robots are held by a joint-space PD controller plus gravity compensation,
    tau = Kp (q_des - q) - Kd v + g(q)    (joint rows; the base is unactuated),
  * solo12: a foot point at each FOOT frame (the contact sphere's centre, radius 0.02 m), standing
    pose HFE +-0.8, KFE -+1.6 rad, base dropped from 0.3 m, Kp = 6 N m/rad, Kd = 0.2 N m s/rad;
  * talos_full: a box on each sole (left_sole_link / right_sole_link, 0.2 m by 0.13 m by 1 cm, its
    bottom face the sole plane: its 8 corners are contacts, the 4 bottom ones touch), straight legs,
    soles 5 cm above the ground;
    gains per joint from the diagonal of M at the start, Kp = w^2 M_ii, Kd = 2 w M_ii (w = 20 rad/s; 40 rad/s is unstable at 1 ms),
    so the light finger and wrist joints stay stable at the explicit step. From the first contact on,
    the leg joints get Kp >= 2000 N m/rad, Kd >= 20 N m s/rad: M_ii of an ankle is the foot's inertia
    (0.01 kg m^2), so w^2 M_ii = 4 N m/rad, far below the m g l ~ 800 N m/rad that keeps the body
    from toppling over its ankles (it did, within 2 s); Kd is capped by the explicit step's stability
    for the foot, Kd dt / M_ii < 2.
Writes drop_rigid.png (base heights, vertical contact force over weight, foot slip) and
drop_rigid.json.

usage: drop_rigid.py [--models DIR] [--seconds T] [--dt DT] [--out DIR]
       (default models: ../shared/models; a robot whose URDF is absent is skipped)
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import plucker

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from drop_quadruped import standing_pose  # noqa: E402  (the same standing pose and drop state)

HERE = os.path.dirname(os.path.abspath(__file__))


def default_models():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    return os.path.join(shared, "models")


def run_robot(name, model, sim, q0, q_des, kp, kd, iq, iv, steps, dt, feet_frames, n_points, stance=None):
    """stance: None, or the gains (kp, kd) used from the first contact on."""
    q, v = q0.copy(), np.zeros(model.nv)
    heights, fz, active, joint_speed, feet = [q[2]], [], [], [], []
    t0 = time.perf_counter()
    for _ in range(steps):
        tau = np.zeros(model.nv)
        g = plucker.gravity_torques(model, q)
        if stance is not None and any(active):
            kp, kd = stance
        tau[iv] = kp * (q_des[iq] - q[iq]) - kd * v[iv] + g[iv]
        q, v = sim.step(q, v, tau)
        rep = sim.rigid_report()
        heights.append(q[2])
        active.append(rep["active"])
        fz.append(sim.last_contacts()["force"][:, 2].sum())
        joint_speed.append(float(np.max(np.abs(v[iv]))))
        feet.append(np.array([plucker.frame_pose(model, q, f)[:3, 3] for f in feet_frames]))
    rate = steps / (time.perf_counter() - t0)
    heights, fz, feet = np.array(heights), np.array(fz), np.array(feet)
    weight = model.total_mass * 9.81
    tail = slice(max(0, steps - int(0.2 / dt)), None)
    touch = int(np.argmax(np.array(active) > 0))
    settle = slice(max(touch + int(0.1 / dt), steps - int(0.3 / dt)), None)
    slip = np.max(np.linalg.norm(feet[settle, :, :2] - feet[settle.start, :, :2], axis=2)) if settle.start < steps else 0.0
    contacts = sim.contacts(q, v)
    summary = {
        "model": name,
        "initial_height": float(heights[0]),
        "final_height": float(heights[-1]),
        "min_height": float(heights.min()),
        "height_range_last_0.2s": float(np.ptp(heights[tail])),
        "max_joint_speed_last_0.2s": float(np.max(np.array(joint_speed)[tail])),
        "final_active": int(active[-1]),
        "final_loaded_points": int(np.count_nonzero(sim.last_contacts()["normal_force"] > 1e-6)),
        "contact_points": n_points,
        "final_vertical_force_over_weight": float(fz[-1] / weight),
        "mean_vertical_force_over_weight_last_0.2s": float(np.mean(fz[tail]) / weight),
        "max_penetration": float(np.max(contacts["penetration"])),
        "foot_slip_after_landing": float(slip),
        "first_contact_step": touch,
        "steps_per_second_python_loop": float(rate),
    }
    return summary, heights, fz / weight, feet


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default=default_models())
    parser.add_argument("--seconds", type=float, default=1.5)
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument("--out", default=".")
    args = parser.parse_args(argv)
    steps = int(round(args.seconds / args.dt))
    results, curves = {}, {}

    solo_path = os.path.join(args.models, "solo12.urdf")
    if os.path.exists(solo_path):
        model = plucker.Model.from_urdf(solo_path, floating_base=True)
        joints, q_des, q0, iq, iv = standing_pose(model)
        sim = plucker.Simulator(model, dt=args.dt)
        sim.add_ground(contact="rigid", friction=0.8, restitution=0.0)
        feet = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
        for foot in feet:
            sim.add_sphere(foot, radius=0.02)
        s, h, f, _ = run_robot("solo12", model, sim, q0, q_des, 6.0, 0.2, iq, iv, steps, args.dt, feet, 4)
        results["solo12"], curves["solo12"] = s, (h, f)

    talos_path = os.path.join(args.models, "talos_full.urdf")
    if os.path.exists(talos_path):
        model = plucker.Model.from_urdf(talos_path, floating_base=True)
        joints = [n for n in model.joint_names if n != "root_joint" and model.joint_nv(n) == 1]
        q_des = plucker.neutral(model)
        soles = ("left_sole_link", "right_sole_link")
        z_sole = min(plucker.frame_pose(model, q_des, s)[2, 3] for s in soles)
        q0 = q_des.copy()
        q0[2] = -z_sole + 0.05
        iq = np.array([model.joint_q_index(n) for n in joints])
        iv = np.array([model.joint_v_index(n) for n in joints])
        Mdiag = np.diag(plucker.crba(model, q0))[iv]
        w = 20.0
        kp, kd = w * w * Mdiag, 2 * w * Mdiag
        sim = plucker.Simulator(model, dt=args.dt)
        sim.add_ground(contact="rigid", friction=0.8, restitution=0.0)
        for sole in soles:  # a 1 cm slab whose bottom face is the sole: 4 bottom corners touch
            sim.add_box(sole, half_extents=(0.1, 0.065, 0.005), center=(0.0, 0.0, 0.005))
        # Stance: the leg joints stiffened to hold the body above the ankles (see the docstring).
        leg = np.array([n.startswith("leg_") for n in joints])
        stance = (np.where(leg, np.maximum(kp, 2000.0), kp), np.where(leg, np.maximum(kd, 20.0), kd))
        s, h, f, _ = run_robot("talos_full", model, sim, q0, q_des, kp, kd, iq, iv, steps, args.dt, soles, 16, stance)
        results["talos_full"], curves["talos_full"] = s, (h, f)

    if not results:
        print(f"drop_rigid.py: no solo12.urdf or talos_full.urdf in {args.models}; nothing to do")
        return 0
    os.makedirs(args.out, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(steps + 1) * args.dt
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for name, (h, f) in curves.items():
        axes[0].plot(t, h - h[-1], label=f"{name} (final {h[-1]:.3f} m)")
        axes[1].plot(t[1:], f, label=name)
    axes[0].set_ylabel("base height - final [m]")
    axes[0].legend()
    axes[1].set_ylabel("sum of vertical contact forces / weight")
    axes[1].set_ylim(-0.5, 6)
    axes[1].set_xlabel("time [s]")
    axes[1].legend()
    fig.suptitle(f"rigid contact (mu = 0.8, e = 0), dt = {args.dt:g} s")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "drop_rigid.png"), dpi=110)
    summary = {"seconds": args.seconds, "dt": args.dt, **results}
    with open(os.path.join(args.out, "drop_rigid.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
