#!/usr/bin/python3
"""Operational-space control (Khatib) of an arm's end-effector, with a posture task in the null space.

The controller works in the task space of the end-effector frame, world-aligned axes at its origin
(plucker.operational_space(..., frame="local_world_aligned")): with Lambda, the bias mu + p and the
dynamically consistent inverse from the library,
    tau = J^T F + N^T tau_0,   F = Lambda a* + (mu + p),
    a*  = xdd_d + Kp e + Kd (xd_d - J v),   e = [log(R_d R^T); p_d - p],
so the task acceleration is exactly a*: the position error obeys e'' + Kd e' + Kp e = 0, whose
solution e(t) = (e0 + (e0' + w e0) t) exp(-w t) (Kp = w^2, Kd = 2 w) the simulated error must
follow to the integrator's accuracy. tau_0 = Kp_n (q_0 - q) - Kd_n v pulls the arm towards a
posture; through N^T it does not disturb the task (J M^-1 N^T tau_0 = 0, reported). The plant is
the same model's ABA, integrated with RK4 (the controller evaluated at each stage). The end-effector
follows a 10 cm circle at a fixed orientation. Writes operational_space_control.png and .json.

On the panda (../shared/models) the fingers' mimic relation is not enforced by the tree dynamics
used here; the posture task holds the fingers. Without ../shared the 6-DoF example arm is used
(no redundancy: N = 0).

usage: operational_space_control.py [--model URDF] [--frame NAME] [--seconds T] [--out DIR]
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



def default_model():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    panda = os.path.join(shared, "models", "panda.urdf")
    if os.path.exists(panda):
        return panda, "panda_hand_tcp"
    return os.path.join(HERE, "..", "models", "plucker_arm.urdf"), "tool0"


def main(argv=None):
    model_path, frame_name = default_model()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=model_path)
    parser.add_argument("--frame", default=frame_name)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--out", default=".")
    args = parser.parse_args(argv)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plucker.ModelWarning)  # the panda's mimic finger (see above)
        model = plucker.Model.from_urdf(args.model)
        q0 = plucker.neutral(model)
        if model.nv >= 7:
            q0[3], q0[5] = -1.5, 1.5  # the panda's usual ready pose (elbow bent, wrist up)
        else:  # away from the 6-DoF arm's wrist and elbow singularities
            q0[:6] = [0.2, -1.0, 1.2, -0.6, 0.9, 0.3][: model.nv]
        T0 = plucker.frame_pose(model, q0, args.frame)
        omega, omega_n = 10.0, 5.0
        kp, kd, kp_n, kd_n = omega**2, 2 * omega, omega_n**2, 2 * omega_n
        radius, freq = 0.05, 0.5
        center = T0[:3, 3] + np.array([0.0, radius, 0.0])  # the circle passes through p0 + 2r y at t=0

        def desired(t):
            a = 2 * np.pi * freq * t
            wa = 2 * np.pi * freq
            p = center + radius * np.array([np.sin(a), np.cos(a), 0.0]) + np.array([0.0, 0.0, 0.02])
            pd = radius * wa * np.array([np.cos(a), -np.sin(a), 0.0])
            pdd = -radius * wa * wa * np.array([np.sin(a), np.cos(a), 0.0])
            return p, pd, pdd

        worst_leak = 0.0

        def controller(t, q, v):
            nonlocal worst_leak
            os_ = plucker.operational_space(model, q, v, [args.frame], frame="local_world_aligned")
            T = plucker.frame_pose(model, q, args.frame)
            p_d, pd_d, pdd_d = desired(t)
            e = np.concatenate([plucker.so3_log(T0[:3, :3] @ T[:3, :3].T), p_d - T[:3, 3]])
            xd = os_.J @ v
            a_star = np.concatenate([np.zeros(3), pdd_d]) + kp * e + kd * (np.concatenate([np.zeros(3), pd_d]) - xd)
            F = os_.Lambda @ a_star + os_.bias
            tau0 = kp_n * (q0 - q) - kd_n * v
            null = os_.N.T @ tau0
            leak = os_.J @ plucker.minv(model, q) @ null
            worst_leak = max(worst_leak, float(np.abs(leak).max()))
            return os_.J.T @ F + null

        dt = 1e-3
        q, v = q0.copy(), np.zeros(model.nv)
        steps = int(round(args.seconds / dt))
        t_log, pos_err, ori_err, posture = [], [], [], []
        p0_err = desired(0.0)[0] - T0[:3, 3]
        pd0_err = desired(0.0)[1]  # v = 0 at t = 0
        envelope_excess = 0.0

        def acceleration(t, q, v):
            return plucker.aba(model, q, v, controller(t, q, v))

        for k in range(steps + 1):
            t = k * dt
            T = plucker.frame_pose(model, q, args.frame)
            e = desired(t)[0] - T[:3, 3]
            exact = (p0_err + (pd0_err + omega * p0_err) * t) * np.exp(-omega * t)
            envelope_excess = max(envelope_excess, float(np.abs(e - exact).max()))
            t_log.append(t)
            pos_err.append(float(np.linalg.norm(e)))
            ori_err.append(float(np.linalg.norm(plucker.so3_log(T0[:3, :3] @ T[:3, :3].T))))
            posture.append(float(np.linalg.norm(q - q0)))
            if k == steps:
                break
            q, v = pc.rk4_step(model, q, v, dt, acceleration, t)

    os.makedirs(args.out, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    ax[0].semilogy(t_log, np.maximum(pos_err, 1e-16), label="|position error| [m]")
    ax[0].semilogy(t_log, np.maximum(ori_err, 1e-16), label="|orientation error| [rad]")
    ax[0].set_xlabel("time [s]")
    ax[0].set_title(f"end-effector tracking: {os.path.basename(args.model)}, '{args.frame}'")
    ax[0].legend()
    ax[1].plot(t_log, posture)
    ax[1].set_xlabel("time [s]")
    ax[1].set_ylabel("|q - q_0| [rad]")
    ax[1].set_title("posture (null-space task)")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "operational_space_control.png"), dpi=120)

    summary = {"model": os.path.basename(args.model), "frame": args.frame, "seconds": args.seconds, "dt": dt,
               "nv": model.nv, "initial_position_error": pos_err[0], "final_position_error": pos_err[-1],
               "final_orientation_error": ori_err[-1],
               "max_deviation_from_linear_error_dynamics": envelope_excess,
               "max_task_acceleration_from_null_space_torque": worst_leak}
    with open(os.path.join(args.out, "operational_space_control.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
