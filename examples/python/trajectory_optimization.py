#!/usr/bin/python3
"""Reaching with an arm by iLQR, on the analytical derivatives of forward dynamics.

The arm starts at rest and must bring its last link's origin to a target point and stop there
after T seconds, with the least effort. Discrete dynamics (semi-implicit Euler, step dt):
    v+ = v + dt qdd(q, v, u),   q+ = q + dt v+,   qdd = plucker.aba(q, v, u)
and cost
    sum_k 1/2 r |u_k - g(q_k)|^2 + 1/2 w_v |v_k|^2  +  1/2 w_p |p(q_N) - p*|^2 + 1/2 w_s |v_N|^2
(effort measured from the gravity torques g). iLQR (Li & Todorov 2004) linearises the dynamics
along the current trajectory with plucker.aba_derivatives (d qdd / d q, d qdd / d v,
d qdd / d tau = M^-1), solves the LQR subproblem backwards (Gauss-Newton cost Hessians,
Levenberg-Marquardt regularisation) and takes the largest step of a backtracking line search
that lowers the cost. Writes trajectory_optimization.png (cost per iteration, the
end-effector path, the torques) and trajectory_optimization.json.

The arm's joints must all be vector-space joints (nq == nv: revolute, prismatic), so that
q+ = q + dt v+ is the configuration update.

usage: trajectory_optimization.py [--model URDF] [--iterations K] [--out DIR]
       (default model: the panda of ../shared/models, else examples/models/plucker_arm.urdf)
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import plucker

HERE = os.path.dirname(os.path.abspath(__file__))


def default_model():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    panda = os.path.join(shared, "models", "panda.urdf")
    return panda if os.path.exists(panda) else os.path.join(HERE, "..", "models", "plucker_arm.urdf")


class Reach:
    def __init__(self, model, body, target, dt=0.02, steps=50, r=1e-3, w_v=1e-2, w_p=1e3, w_stop=10.0):
        self.m, self.body, self.target = model, body, np.asarray(target, float)
        self.dt, self.N, self.r, self.w_v, self.w_p, self.w_stop = dt, steps, r, w_v, w_p, w_stop
        self.n = model.nv

    def step(self, q, v, u):
        v1 = v + self.dt * plucker.aba(self.m, q, v, u)
        return q + self.dt * v1, v1

    def step_jacobians(self, q, v, u):
        """A = d(q+, v+)/d(q, v), B = d(q+, v+)/du from aba_derivatives."""
        n, dt = self.n, self.dt
        dq, dv, du = plucker.aba_derivatives(self.m, q, v, u)
        I = np.eye(n)
        dv1 = np.hstack([dt * dq, I + dt * dv])  # d v+ / d(q, v)
        dq1 = np.hstack([I, dt * I]) + dt * dv1  # d q+ / d(q, v)
        return np.vstack([dq1, dv1]), np.vstack([dt * dt * du, dt * du])

    def point(self, q):
        """Position of the body's origin in the world and its Jacobian (3 x nv)."""
        p = plucker.forward_kinematics(self.m, q)[self.body][:3, 3]
        J = plucker.body_jacobian(self.m, q, self.body, frame="world")  # [omega; velocity at world origin]
        skew = np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])
        return p, J[3:] - skew @ J[:3]

    def rollout(self, q0, U):
        Q, V = [q0], [np.zeros(self.n)]
        for u in U:
            q, v = self.step(Q[-1], V[-1], u)
            Q.append(q)
            V.append(v)
        return np.array(Q), np.array(V)

    def cost(self, Q, V, U):
        g = np.array([plucker.gravity_torques(self.m, q) for q in Q[:-1]])
        running = 0.5 * self.r * np.sum((U - g) ** 2) + 0.5 * self.w_v * np.sum(V[:-1] ** 2)
        p, _ = self.point(Q[-1])
        return running + 0.5 * self.w_p * np.sum((p - self.target) ** 2) + 0.5 * self.w_stop * np.sum(V[-1] ** 2)

    def backward(self, Q, V, U, mu):
        """The LQR subproblem: feedforward k and gains K per step, or None if not positive."""
        n, N = self.n, self.N
        p, Jp = self.point(Q[-1])
        Vx = np.concatenate([self.w_p * Jp.T @ (p - self.target), self.w_stop * V[-1]])
        Vxx = np.zeros((2 * n, 2 * n))
        Vxx[:n, :n] = self.w_p * Jp.T @ Jp
        Vxx[n:, n:] = self.w_stop * np.eye(n)
        ks, Ks = [None] * N, [None] * N
        for k in reversed(range(N)):
            q, v, u = Q[k], V[k], U[k]
            A, B = self.step_jacobians(q, v, u)
            dg = plucker.rnea_derivatives(self.m, q, np.zeros(n), np.zeros(n))[0]  # d g / d q
            e = u - plucker.gravity_torques(self.m, q)
            lx = np.concatenate([-self.r * dg.T @ e, self.w_v * v])
            lu = self.r * e
            lxx = np.zeros((2 * n, 2 * n))
            lxx[:n, :n] = self.r * dg.T @ dg
            lxx[n:, n:] = self.w_v * np.eye(n)
            lux = np.hstack([-self.r * dg, np.zeros((n, n))])
            Qx, Qu = lx + A.T @ Vx, lu + B.T @ Vx
            Qxx = lxx + A.T @ Vxx @ A
            Quu = self.r * np.eye(n) + B.T @ Vxx @ B + mu * np.eye(n)
            Qux = lux + B.T @ Vxx @ A
            try:
                L = np.linalg.cholesky(Quu)
            except np.linalg.LinAlgError:
                return None
            solve = lambda X: np.linalg.solve(L.T, np.linalg.solve(L, X))  # noqa: E731
            kk, KK = -solve(Qu), -solve(Qux)
            ks[k], Ks[k] = kk, KK
            Vx = Qx + KK.T @ Quu @ kk + KK.T @ Qu + Qux.T @ kk
            Vxx = Qxx + KK.T @ Quu @ KK + KK.T @ Qux + Qux.T @ KK
            Vxx = 0.5 * (Vxx + Vxx.T)
        return ks, Ks

    def forward(self, Q, V, U, ks, Ks, alpha):
        Qn, Vn, Un = [Q[0]], [V[0]], []
        for k in range(self.N):
            dx = np.concatenate([Qn[-1] - Q[k], Vn[-1] - V[k]])
            u = U[k] + alpha * ks[k] + Ks[k] @ dx
            q, v = self.step(Qn[-1], Vn[-1], u)
            Un.append(u)
            Qn.append(q)
            Vn.append(v)
        return np.array(Qn), np.array(Vn), np.array(Un)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=default_model())
    ap.add_argument("--iterations", type=int, default=60)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plucker.ModelWarning)  # e.g. the panda's mimic finger
        model = plucker.Model.from_urdf(args.model)
    if model.nq != model.nv:
        sys.exit("trajectory_optimization.py: the arm needs vector-space joints only (nq == nv)")
    movable = [b for b in model.body_names if "finger" not in b]
    body = movable[-1]
    q0 = np.clip(np.zeros(model.nq), model.lower_position_limit, model.upper_position_limit)
    problem = Reach(model, body, target=[0.0] * 3)
    p0, _ = problem.point(q0)
    # A reachable target: where the body is at another configuration.
    lo, hi = model.lower_position_limit, model.upper_position_limit
    q_goal = np.clip(q0 + 0.6 * np.cos(np.arange(model.nq)), lo, hi)
    problem.target = problem.point(q_goal)[0]

    U = np.array([plucker.gravity_torques(model, q0)] * problem.N)  # hold still
    Q, V = problem.rollout(q0, U)
    costs, mu, derivative_seconds = [problem.cost(Q, V, U)], 1e-6, 0.0
    for _ in range(args.iterations):
        t0 = time.perf_counter()
        bw = problem.backward(Q, V, U, mu)
        derivative_seconds += time.perf_counter() - t0
        if bw is None:
            mu *= 10
            continue
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01):
            Qn, Vn, Un = problem.forward(Q, V, U, *bw, alpha)
            c = problem.cost(Qn, Vn, Un)
            if c < costs[-1]:
                break
        else:
            mu *= 10
            continue
        improvement = (costs[-1] - c) / costs[-1]
        Q, V, U = Qn, Vn, Un
        costs.append(c)
        mu = max(mu / 3, 1e-9)
        if improvement < 1e-9:
            break

    p_final, _ = problem.point(Q[-1])
    summary = {
        "model": os.path.basename(args.model),
        "body": body,
        "iterations": len(costs) - 1,
        "initial_cost": costs[0],
        "final_cost": costs[-1],
        "costs": costs,
        "monotone": bool(np.all(np.diff(costs) < 0)),
        "final_distance": float(np.linalg.norm(p_final - problem.target)),
        "initial_distance": float(np.linalg.norm(p0 - problem.target)),
        "final_speed": float(np.linalg.norm(V[-1])),
        "seconds_in_backward_passes": derivative_seconds,
    }
    with open(os.path.join(args.out, "trajectory_optimization.json"), "w") as f:
        json.dump(summary, f, indent=1)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    ax[0].semilogy(costs, "o-")
    ax[0].set_xlabel("iLQR iteration")
    ax[0].set_ylabel("cost")
    ax[0].set_title("convergence")
    path = np.array([problem.point(q)[0] for q in Q])
    t = problem.dt * np.arange(problem.N + 1)
    for k, name in enumerate("xyz"):
        ax[1].plot(t, path[:, k], label=f"p_{name}")
        ax[1].axhline(problem.target[k], ls=":", color=f"C{k}")
    ax[1].set_xlabel("t [s]")
    ax[1].set_ylabel("position of " + body + " [m]")
    ax[1].set_title(f"reaching: final distance {summary['final_distance']:.1e} m")
    ax[1].legend()
    ax[2].plot(t[:-1], U - np.array([plucker.gravity_torques(model, q) for q in Q[:-1]]))
    ax[2].set_xlabel("t [s]")
    ax[2].set_ylabel("tau - g(q) [N m]")
    ax[2].set_title("torques beyond gravity compensation")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "trajectory_optimization.png"), dpi=90)
    print(f"{summary['iterations']} iterations: cost {costs[0]:.3g} -> {costs[-1]:.3g}, "
          f"distance {summary['initial_distance']:.3f} -> {summary['final_distance']:.2e} m, "
          f"final speed {summary['final_speed']:.2e} rad/s")


if __name__ == "__main__":
    main()
