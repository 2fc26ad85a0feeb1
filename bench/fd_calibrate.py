#!/usr/bin/env python3
"""Fits the cost model of ForwardDynamicsMethod::Auto (src/forward_dynamics.cpp) to measured times.

    build-bench/plucker_bench --fd            # writes build/bench/fd_timing.json
    /usr/bin/python3 bench/fd_calibrate.py [build/bench/fd_timing.json]

Predicted time (ns) of the two candidates, linear in the terms of the cost formulas:
    aba        = c0 + c1 bodies + c2 nv + c3 sum_j nv_j^2
    crba_ltdl  = c0 + c1 bodies + c2 nv + c3 sum_j nv_j^2 + c4 depth_sum + c5 ltdl_mul + c6 nv^2
(depth_sum = sum_k d_k, ltdl_mul = sum_k d_k (d_k + 1) / 2 over the DoFs, d_k the DoF depth:
ltdl_cost(); nv^2: the dense nv x nv matrix M that the CRBA clears and fills). Non-negative least squares on relative errors (each row divided by the measured
time), so that small and large models weigh alike. Prints the C++ constants to paste into
src/forward_dynamics.cpp, the fit's relative errors, and where the two predictions cross."""
import json
import os
import sys

import numpy as np
from scipy.optimize import nnls

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def features(r, ltdl):
    f = [1.0, r["bodies"], r["nv"], r["sum_joint_nv2"]]
    if ltdl:
        f += [r["depth_sum"], r["ltdl_mul"], r["nv"] ** 2]
    return f


def fit(rows, ltdl):
    A = np.array([features(r, ltdl) for r in rows])
    t = np.array([r["ns"] for r in rows])
    coef, _ = nnls(A / t[:, None], np.ones(len(t)))
    return coef, A @ coef / t - 1.0


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build", "bench", "fd_timing.json")
    rows = json.load(open(path))
    aba = [r for r in rows if r["algorithm"] == "fd_aba"]
    ltdl = [r for r in rows if r["algorithm"] == "fd_crba_ltdl"]
    ca, ea = fit(aba, False)
    cl, el = fit(ltdl, True)
    names = ["Const", "PerBody", "PerDof", "PerJointDof2", "PerDepth", "PerMul", "PerDof2"]
    print("// fitted by bench/fd_calibrate.py to %s (%d + %d timings)" % (os.path.relpath(path, REPO), len(aba), len(ltdl)))
    print("constexpr double " + ", ".join("kAba%s = %.4g" % (n, c) for n, c in zip(names, ca)) + ";")
    print("constexpr double " + ", ".join("kLtdl%s = %.4g" % (n, c) for n, c in zip(names, cl)) + ";")
    print("\nrelative error of the fit: aba max %.0f%% rms %.0f%%; crba_ltdl max %.0f%% rms %.0f%%" %
          (100 * np.abs(ea).max(), 100 * np.sqrt(np.mean(ea ** 2)), 100 * np.abs(el).max(),
           100 * np.sqrt(np.mean(el ** 2))))
    print("\n%-18s %9s %9s %9s %9s  %-9s %-9s" % ("model", "aba", "pred", "ltdl", "pred", "fastest", "predicted"))
    by_model = {r["model"]: r for r in ltdl}
    for r in aba:
        q = by_model.get(r["model"])
        if q is None:
            continue
        pa = np.dot(ca, features(r, False))
        pl = np.dot(cl, features(q, True))
        print("%-18s %9.0f %9.0f %9.0f %9.0f  %-9s %-9s" % (r["model"], r["ns"], pa, q["ns"], pl,
                                                         "aba" if r["ns"] <= q["ns"] else "crba_ltdl",
                                                         "aba" if pa <= pl else "crba_ltdl"))


if __name__ == "__main__":
    main()
