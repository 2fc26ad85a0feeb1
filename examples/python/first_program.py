"""The first Python program of the documentation ("Getting started" includes this file).

Loads a URDF (fixed base, then floating base), evaluates forward dynamics, inverse dynamics and
the joint-space inertia matrix at a random state, and checks that they agree:
M(q) qdd + C(q, v) = tau and rnea(q, v, qdd) = tau. The ABA, the CRBA and the RNEA are three
separate recursions, so the agreement is a check. Exit status 0 when every relative residual is
below 1e-9.

    python3 examples/python/first_program.py [model.urdf]
"""
import sys

import numpy as np

import plucker

path = sys.argv[1] if len(sys.argv) > 1 else "examples/models/plucker_arm.urdf"
worst = 0.0
for floating_base in (False, True):
    m = plucker.Model.from_urdf(path, floating_base=floating_base)
    print(m)                                      # name, nq, nv, total mass
    q = plucker.random_configuration(m, seed=1)   # within the joint limits; unit quaternion
    v = np.full(m.nv, 0.5)                        # rad/s and m/s
    tau = np.zeros(m.nv)                          # no torque: it falls under gravity

    qdd = plucker.aba(m, q, v, tau)               # forward dynamics, O(N)
    M = plucker.crba(m, q)                        # joint-space inertia, (nv, nv)
    C = plucker.nonlinear_effects(m, q, v)        # Coriolis, centrifugal and gravity terms
    tau_id = plucker.rnea(m, q, v, qdd)           # inverse dynamics of that acceleration

    scale = np.linalg.norm(M @ qdd) + np.linalg.norm(C) + np.linalg.norm(tau)
    r_crba = np.linalg.norm(M @ qdd + C - tau) / scale
    r_rnea = np.linalg.norm(tau_id - tau) / scale
    if floating_base:  # q = [x y z qx qy qz qw | joints], v = [omega; v] in body coordinates | joints
        print("  base position", q[:3], "quaternion [qx qy qz qw]", q[3:7])
    print(f"  relative residuals: M qdd + C - tau {r_crba:.3g}, rnea(q, v, qdd) - tau {r_rnea:.3g}")
    worst = max(worst, r_crba, r_rnea)
sys.exit(0 if worst < 1e-9 else 1)
