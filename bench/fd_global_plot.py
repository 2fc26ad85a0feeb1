#!/usr/bin/env python3
"""Plots the global formulation's accuracy study and the CFA's operation counts.

    /usr/bin/python3 bench/fd_global_plot.py [build/bench/fd_global.json]

Input: `plucker_bench --fd_global --out=build/bench` (bench/fd_study.cpp). Output:
docs/fd_global.png (left: worst relative error of qdd against the quadruple-precision reference vs
the number of bodies, per model family and method, with cond(M) eps for scale; right: the CFA's
floating-point operations on the critical path, cyclic reduction vs serial, and its total work) and
the table printed on stdout (pasted into docs/algorithms/global_formulation.md).
"""
import collections
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EPS = 2.220446049250313e-16
METHODS = ["aba", "crba_ltdl", "global_sparse", "cfa", "cfa_serial"]
FAMILIES = ["chain", "twig_chain", "tree_bf2"]
STYLE = {"aba": ("k", "o"), "crba_ltdl": ("tab:gray", "s"), "global_sparse": ("tab:blue", "^"),
         "cfa": ("tab:red", "v"), "cfa_serial": ("tab:orange", "x")}


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build", "bench", "fd_global.json")
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    worst = collections.defaultdict(float)   # (family, bodies, method) -> worst rel err
    cond = collections.defaultdict(float)    # (family, bodies) -> worst cond(M)
    counts = {}                              # (family, bodies) -> (levels, cfa path, cfa total, serial path)
    for r in rows:
        key = (r["family"], r["bodies"])
        err = r["rel_err"]
        if err is not None and not (isinstance(err, float) and math.isnan(err)):
            worst[key + (r["method"],)] = max(worst[key + (r["method"],)], err)
        cond[key] = max(cond[key], r["cond"])
        if r["method"] == "cfa_serial" and r["cfa_levels"] > 0:
            counts[key] = (r["cfa_levels"], r["cfa_critical_path"], r["cfa_total"], r["serial_critical_path"])

    fig, axes = plt.subplots(1, len(FAMILIES) + 1, figsize=(18, 4.6))
    for ax, fam in zip(axes, FAMILIES):
        sizes = sorted({b for (f, b) in cond if f == fam})
        for m in METHODS:
            pts = [(b, worst[(fam, b, m)]) for b in sizes if (fam, b, m) in worst]
            if pts:
                c, mk = STYLE[m]
                ax.loglog([p[0] for p in pts], [max(p[1], 1e-17) for p in pts], color=c, marker=mk, label=m)
        ax.loglog(sizes, [cond[(fam, b)] * EPS for b in sizes], "k:", label="cond(M) eps")
        ax.set_title(fam + (" (cfa covers N = 16 only)" if fam == "tree_bf2" else ""))
        ax.set_xlabel("bodies")
        ax.set_ylabel("worst |qdd - ref| / |ref|")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    ax = axes[-1]
    for fam, mk in (("chain", "o"), ("twig_chain", "s")):
        sizes = sorted(b for (f, b) in counts if f == fam)
        if not sizes:
            continue
        ax.semilogx(sizes, [counts[(fam, b)][1] for b in sizes], color="tab:red", marker=mk,
                    label=f"cfa critical path ({fam})")
        ax.semilogx(sizes, [counts[(fam, b)][3] for b in sizes], color="tab:orange", marker=mk,
                    label=f"serial critical path ({fam})")
        ax.semilogx(sizes, [counts[(fam, b)][2] for b in sizes], color="tab:gray", marker=mk, ls="--",
                    label=f"cfa total work ({fam})")
    ax.set_yscale("log")
    ax.set_xlabel("bodies")
    ax.set_ylabel("flops")
    ax.set_title("CFA: critical path (O(log N)) vs work (O(N))")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    out = os.path.join(REPO, "docs", "fd_global.png")
    fig.savefig(out, dpi=100)
    print("wrote", out)

    print("\n| model | bodies | cond(M) | " + " | ".join(METHODS) + " |")
    print("|---|---:|---:|" + "---:|" * len(METHODS))
    for fam in FAMILIES + ["tapered_chain"]:
        for b in sorted({b for (f, b) in cond if f == fam}):
            cells = [f"{worst[(fam, b, m)]:.1e}" if (fam, b, m) in worst else "-" for m in METHODS]
            print(f"| {fam} | {b} | {cond[(fam, b)]:.1e} | " + " | ".join(cells) + " |")
    print("\n| model | bodies | CR levels | CR critical path | serial critical path | CR total work |")
    print("|---|---:|---:|---:|---:|---:|")
    for (fam, b), (lv, cp, tot, sp) in sorted(counts.items()):
        print(f"| {fam} | {b} | {lv} | {cp:.0f} | {sp:.0f} | {tot:.0f} |")


if __name__ == "__main__":
    main()
