#!/usr/bin/python3
"""Computed-torque control of an arm tracking a joint-space trajectory.

The controller cancels the arm's dynamics with the model (feedback linearisation):
    tau = M(q) (qdd_d + Kp e + Kd e_dot) + h(q, v),   e = q_d - q,
so the tracking error obeys e_ddot + Kd e_dot + Kp e = 0 and decays as exp(-w t)(1 + w t)
with Kp = w^2, Kd = 2 w. The plant is the same model's forward dynamics (ABA), integrated
with RK4; a PD controller with gravity compensation alone (tau = diag(M(q)) (Kp e + Kd e_dot)
+ g(q): the same gains, without the coupling and velocity terms) runs beside it. The computed-
torque error must follow the linear envelope to the integrator's accuracy. Writes computed_torque.png and computed_torque.json.

usage: computed_torque.py [--model URDF] [--seconds T] [--out DIR]
       (default model: the panda of ../shared/models, else examples/models/plucker_arm.urdf)
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # plucker_control from the source tree

import plucker  # noqa: E402
import plucker_control as pc  # noqa: E402



def default_model():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    panda = os.path.join(shared, "models", "panda.urdf")
    return panda if os.path.exists(panda) else os.path.join(HERE, "..", "models", "plucker_arm.urdf")


def reference(q0, t):
    """q_d(t) = q0 + a sin(2 pi f t + phase), joint by joint, and its two derivatives."""
    n = len(q0)
    a = 0.3 * np.ones(n)
    w = 2 * np.pi * 0.5 * (1.0 + 0.1 * np.arange(n))
    phase = 0.5 * np.arange(n)
    s, c = np.sin(w * t + phase), np.cos(w * t + phase)
    return q0 + a * s, a * w * c, -a * w * w * s


def simulate(model, controller, q0, seconds, dt):
    qd0, vd0, _ = reference(q0, 0.0)
    q, v = qd0 + 0.05, vd0.copy()  # start 0.05 rad off the path, at the path's velocity
    times, errors = [], []

    def acceleration(t, q, v):
        return plucker.aba(model, q, v, controller(t, q, v))

    for k in range(int(round(seconds / dt)) + 1):
        t = k * dt
        times.append(t)
        errors.append(float(np.max(np.abs(reference(q0, t)[0] - q))))
        q, v = pc.rk4_step(model, q, v, dt, acceleration, t)  # the controller evaluated at each stage
    return np.array(times), np.array(errors)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=default_model())
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--out", default=".")
    args = parser.parse_args(argv)

    model = plucker.Model.from_urdf(args.model)
    if model.nq != model.nv:
        sys.exit("computed_torque.py: the example expects an arm (nq == nv)")
    q0 = plucker.neutral(model)
    omega = 10.0
    kp, kd = omega**2, 2 * omega

    def computed_torque(t, q, v):
        qd, vd, ad = reference(q0, t)
        return plucker.crba(model, q) @ (ad + kp * (qd - q) + kd * (vd - v)) + plucker.nonlinear_effects(model, q, v)

    def pd_gravity(t, q, v):
        qd, vd, _ = reference(q0, t)
        M = plucker.crba(model, q)
        return np.diag(M) * (kp * (qd - q) + kd * (vd - v)) + plucker.gravity_torques(model, q)

    dt = 1e-3
    t, err_ct = simulate(model, computed_torque, q0, args.seconds, dt)
    _, err_pd = simulate(model, pd_gravity, q0, args.seconds, dt)
    bound = 0.05 * np.exp(-omega * t) * (1 + omega * t)  # the linearised error's envelope

    os.makedirs(args.out, exist_ok=True)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.semilogy(t, err_ct, label="computed torque")
    ax.semilogy(t, err_pd, label="PD + gravity compensation")
    ax.semilogy(t, bound, "k--", lw=0.8, label="0.05 exp(-wt)(1 + wt), w = 10/s")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("max |q_d - q| [rad]")
    ax.set_title(f"tracking a joint-space trajectory: {os.path.basename(args.model)}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "computed_torque.png"), dpi=120)

    summary = {"model": os.path.basename(args.model), "seconds": args.seconds, "dt": dt,
               "final_error_computed_torque": float(err_ct[-1]), "final_error_pd": float(err_pd[-1]),
               "max_excess_over_envelope": float(np.max(err_ct - bound))}
    with open(os.path.join(args.out, "computed_torque.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
