#!/usr/bin/python3
"""Whole-body operational-space control of talos_full: two feet and two hands as tasks, a posture in the null space.

Formulation: one stacked task (not a priority hierarchy). The four task frames, left and right sole
and left and right wrist tool frame, each a full 6-D task in world-aligned axes at the frame origin
(plucker.operational_space(..., frame="local_world_aligned"), m = 24 rows), give from the library
Lambda (24 x 24), the bias mu + p, the dynamically consistent inverse Jbar and the null-space
projector N = I - Jbar J:
    tau = J^T F + N^T tau_0,   F = Lambda a* + (mu + p),
    a*  = xdd_d + Kp e + Kd (xd_d - J v),   e = [log(R_d R^T); p_d - p] per task,
    tau_0 = C + M (Kp_n (q_0 - q) - Kd_n v)   (the posture task, C = nonlinear_effects).
With this tau the stacked task acceleration is exactly a*, so each position error obeys
e'' + Kd e' + Kp e = 0 (Kp = w^2, Kd = 2 w): e(t) = (e0 + (e0' + w e0) t) exp(-w t), which the
simulated errors must follow to the integrator's accuracy (reported and tested). N^T keeps the
posture torque out of the task space: J M^-1 N^T tau_0 = 0 (the largest value is reported; Jbar^T
computed by the library is what makes N^T dynamically consistent).

The feet are held by their tasks, not by contact, so the pelvis is fixed to the world (a test
stand): with a free-flying pelvis and no contact, J^T F would ask for a force on the unactuated
base. The plant is the same model's ABA, integrated by a short RK4 loop (the controller evaluated
at each stage; plucker.Simulator is not used because no contact is involved). Motion: the hands
start 3 cm off their references (an initial error) and then follow 4 cm circles; the right foot
lifts 3 cm and sets down, the left foot holds its pose. The 12 gripper joints are mimic joints in
the URDF, loaded as independent coordinates; the posture task holds them.

Writes operational_space_whole_body.png and operational_space_whole_body.json in --out.
Needs ../shared/models/talos_full.urdf (PLUCKER_SHARED_DIR); exits with a message if absent.

usage: operational_space_whole_body.py [--seconds T] [--dt DT] [--method M] [--out DIR] [--no-plot]
"""
import argparse
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # plucker_control from the source tree

import plucker  # noqa: E402
import plucker_control as pc  # noqa: E402

TASKS = ["left_sole_link", "right_sole_link", "wrist_left_ft_tool_link", "wrist_right_ft_tool_link"]


def talos_path():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    path = os.path.join(shared, "models", "talos_full.urdf")
    return path if os.path.exists(path) else None


def initial_posture(model):
    """Knees and elbows bent: away from the legs' and arms' kinematic singularities."""
    q0 = plucker.neutral(model)
    bend = {"leg_left_3_joint": -0.4, "leg_left_4_joint": 0.8, "leg_left_5_joint": -0.4,
            "leg_right_3_joint": -0.4, "leg_right_4_joint": 0.8, "leg_right_5_joint": -0.4,
            "arm_left_1_joint": 0.3, "arm_left_2_joint": 0.4, "arm_left_4_joint": -1.2,
            "arm_right_1_joint": -0.3, "arm_right_2_joint": -0.4, "arm_right_4_joint": -1.2,
            "torso_2_joint": 0.1}
    for name, value in bend.items():
        q0[model.joint_q_index(name)] = value
    return q0


def run(seconds=1.0, dt=2e-3, method="auto", out=None, plot=True, path=None):
    """Simulates the controller; returns the summary dict (and writes the files when out is given)."""
    path = path or talos_path()
    if path is None:
        raise FileNotFoundError("talos_full.urdf not found (set PLUCKER_SHARED_DIR)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plucker.ModelWarning)  # the grippers' mimic joints (see above)
        model = plucker.Model.from_urdf(path)
    q0 = initial_posture(model)
    T0 = [plucker.frame_pose(model, q0, name) for name in TASKS]
    omega, omega_n = 20.0, 5.0
    kp, kd, kp_n, kd_n = omega**2, 2 * omega, omega_n**2, 2 * omega_n
    radius, freq, lift, offset = 0.04, 1.0, 0.03, 0.03
    wa = 2 * np.pi * freq

    def desired(k, t):
        """Position, velocity and acceleration of task k's origin; its orientation is held."""
        p0 = T0[k][:3, 3]
        if k == 1:  # the right foot lifts and sets down: z = lift (1 - cos) / 2
            s = np.array([0.0, 0.0, 1.0])
            return (p0 + s * lift * (1 - np.cos(wa * t)) / 2, s * lift * wa * np.sin(wa * t) / 2,
                    s * lift * wa * wa * np.cos(wa * t) / 2)
        if k >= 2:  # a hand: a circle in the x-z plane starting 3 cm above where the hand is
            sgn = 1.0 if k == 2 else -1.0
            c = p0 + np.array([0.0, 0.0, offset - radius])
            a = sgn * wa * t
            return (c + radius * np.array([np.sin(a), 0.0, np.cos(a)]),
                    sgn * wa * radius * np.array([np.cos(a), 0.0, -np.sin(a)]),
                    -wa * wa * radius * np.array([np.sin(a), 0.0, np.cos(a)]))
        return p0, np.zeros(3), np.zeros(3)

    worst_leak = 0.0
    ran = set()

    def controller(t, q, v):
        nonlocal worst_leak
        r = plucker.operational_space(model, q, v, TASKS, frame="local_world_aligned", method=method)
        ran.add(r.method)
        xd = r.J @ v
        a_star = np.empty(24)
        for k, name in enumerate(TASKS):
            T = plucker.frame_pose(model, q, name)
            p, pd, pdd = desired(k, t)
            e = np.concatenate([plucker.so3_log(T0[k][:3, :3] @ T[:3, :3].T), p - T[:3, 3]])
            a_star[6 * k:6 * k + 6] = (np.concatenate([np.zeros(3), pdd]) + kp * e
                                       + kd * (np.concatenate([np.zeros(3), pd]) - xd[6 * k:6 * k + 6]))
        F = r.Lambda @ a_star + r.bias
        M = plucker.crba(model, q)
        tau0 = plucker.nonlinear_effects(model, q, v) + M @ (kp_n * (q0 - q) - kd_n * v)
        null = r.N.T @ tau0
        leak = r.J @ np.linalg.solve(M, null)
        worst_leak = max(worst_leak, float(np.abs(leak).max()) / (1.0 + float(np.abs(null).max())))
        return r.J.T @ F + null

    def acceleration(t, q, v):
        return plucker.aba(model, q, v, controller(t, q, v))

    q, v = q0.copy(), np.zeros(model.nv)
    steps = int(round(seconds / dt))
    t_log, pos_err, ori_err, posture = [], [], [], []
    deviation = 0.0  # largest |e(t) - closed-form e(t)| over the four position errors
    e0 = [desired(k, 0.0)[0] - T0[k][:3, 3] for k in range(4)]
    ed0 = [desired(k, 0.0)[1] for k in range(4)]  # v = 0 at t = 0
    for step in range(steps + 1):
        t = step * dt
        errs, oris = [], []
        for k, name in enumerate(TASKS):
            T = plucker.frame_pose(model, q, name)
            e = desired(k, t)[0] - T[:3, 3]
            exact = (e0[k] + (ed0[k] + omega * e0[k]) * t) * np.exp(-omega * t)
            deviation = max(deviation, float(np.abs(e - exact).max()))
            errs.append(float(np.linalg.norm(e)))
            oris.append(float(np.linalg.norm(plucker.so3_log(T0[k][:3, :3] @ T[:3, :3].T))))
        t_log.append(t)
        pos_err.append(errs)
        ori_err.append(oris)
        posture.append(float(np.linalg.norm(q - q0)))
        if step == steps:
            break
        q, v = pc.rk4_step(model, q, v, dt, acceleration, t)

    pos_err, ori_err = np.array(pos_err), np.array(ori_err)
    late = np.array(t_log) >= 0.5 * seconds
    summary = {
        "model": os.path.basename(path), "tasks": TASKS, "nv": model.nv, "task_rows": 24,
        "method": method, "methods_ran": sorted(ran), "seconds": seconds, "dt": dt, "omega": omega,
        "initial_position_error": [float(x) for x in pos_err[0]],
        "max_position_error_second_half": [float(x) for x in pos_err[late].max(axis=0)],
        "max_orientation_error": [float(x) for x in ori_err.max(axis=0)],
        "max_deviation_from_linear_error_dynamics": deviation,
        "max_relative_task_acceleration_from_null_space_torque": worst_leak,
        "final_posture_distance": posture[-1],
        "final_posture_largest": [model.joint_names[int(np.argmax(np.abs(q - q0)))], float(np.abs(q - q0).max())],
    }
    if out is not None:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "operational_space_whole_body.json"), "w") as fh:
            json.dump(summary, fh, indent=2)
        if plot:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots(1, 2, figsize=(12, 4.4))
            for k, name in enumerate(TASKS):
                ax[0].semilogy(t_log, np.maximum(pos_err[:, k], 1e-16), label=f"{name}: |position error| [m]")
            ax[0].semilogy(t_log, np.maximum(ori_err.max(axis=1), 1e-16), "k:", label="largest |orientation error| [rad]")
            ax[0].set_xlabel("time [s]")
            ax[0].set_title("talos_full (pelvis fixed): four 6-D tasks, stacked")
            ax[0].legend(fontsize=7)
            ax[1].plot(t_log, posture)
            ax[1].set_xlabel("time [s]")
            ax[1].set_ylabel("|q - q_0| [rad]")
            ax[1].set_title("posture (null-space task)")
            fig.tight_layout()
            fig.savefig(os.path.join(out, "operational_space_whole_body.png"), dpi=110)
    return summary


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--dt", type=float, default=2e-3)
    parser.add_argument("--method", default="auto")
    parser.add_argument("--out", default=".")
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    if talos_path() is None:
        print("talos_full.urdf not found under PLUCKER_SHARED_DIR/models: nothing to do")
        return 0
    summary = run(args.seconds, args.dt, args.method, args.out, not args.no_plot)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
