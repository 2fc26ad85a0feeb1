#!/usr/bin/python3
"""Plot the demo trajectory: joint angles, energies, and the integrators' energy drift.

usage: plot_demo.py trajectory.csv demo.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    with open(src) as f:
        rows = list(csv.DictReader(f))
    t = [float(r["t"]) for r in rows]
    joints = [k for k in rows[0] if k.startswith("q_")]
    fig, (ax_q, ax_e, ax_d) = plt.subplots(3, 1, figsize=(9, 10), sharex=True)
    for j in joints:
        ax_q.plot(t, [float(r[j]) for r in rows], label=j[2:])
    ax_q.set_ylabel("joint angle [rad]")
    ax_q.set_title("plucker demo: passive motion from rest under gravity")
    ax_q.legend(fontsize=8, ncol=3)
    kin = [float(r["kinetic"]) for r in rows]
    pot = [float(r["potential"]) for r in rows]
    tot = [float(r["total_rk4"]) for r in rows]
    ax_e.plot(t, kin, label="kinetic")
    ax_e.plot(t, pot, label="potential")
    ax_e.plot(t, tot, label="total (RK4)", color="k")
    ax_e.set_ylabel("energy [J]")
    ax_e.legend(fontsize=8)
    e0 = tot[0]
    floor = 1e-16 * abs(e0)  # below double-precision resolution of E itself
    ax_d.semilogy(t, [max(abs(e - e0), floor) for e in tot], label="RK4, dt = 1 ms", color="k")
    ax_d.semilogy(t, [max(abs(float(r["total_symplectic_euler"]) - e0), floor) for r in rows],
                  label="semi-implicit Euler, dt = 1 ms", color="tab:red", alpha=0.7)
    ax_d.set_ylabel("|E(t) - E(0)| [J]")
    ax_d.set_xlabel("time [s]")
    ax_d.legend(fontsize=8)
    ax_d.set_title("energy error of the integrators (the true dynamics conserve energy exactly)", fontsize=9)
    fig.tight_layout()
    fig.savefig(dst, dpi=110)
    print(f"plot written to {dst}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
