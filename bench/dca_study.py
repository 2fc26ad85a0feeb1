#!/usr/bin/env python3
"""The divide-and-conquer algorithm's study (issue 20): the plots and tables of docs/dca.md.

    /usr/bin/python3 bench/dca_study.py [--reuse] [--bench build/plucker_bench]

Two measurements, cached as JSON under build/bench/ (--reuse keeps what is there):

1. Accuracy (`plucker_bench --dca_accuracy`): relative error of the ABA and of both DCA variants
   against the quadruple-precision reference of bench/fd_study.cpp on chains and binary random
   trees of 4 .. 1024 bodies: dca_accuracy.json -> docs/dca_accuracy.png.
2. Time and operation counts (`plucker_bench --dca_timing`): wall time of the ABA and the DCA
   with 1 and 2 threads, and dca_cost's total and critical-path operation counts, on chains,
   trees, chain1024 and talos_full: dca_timing.json -> docs/dca_parallel.png.

Prints the Markdown tables of docs/dca.md.
"""
import argparse
import json
import math
import os
import subprocess

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "build", "bench")
DOCS = os.path.join(REPO, "docs")


def measure(bench, flag, name, reuse):
    path = os.path.join(OUT, name)
    if not (reuse and os.path.exists(path)):
        os.makedirs(OUT, exist_ok=True)
        cmd = [bench, flag, "--out=" + OUT]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    with open(path) as f:
        return json.load(f)


def accuracy(rows):
    worst = {}  # (family, n, method) -> worst rel_err; (family, n) -> worst cond
    for r in rows:
        key = (r["family"], r["n"], r["method"])
        worst[key] = max(worst.get(key, 0.0), r["rel_err"])
        worst[(r["family"], r["n"])] = max(worst.get((r["family"], r["n"]), 0.0), r["cond"])
    families = ["chain", "tree_bf2"]
    ns = sorted({r["n"] for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    style = {"aba": ("C0", "o", "ABA"), "dca": ("C3", "s", "DCA basic (world frame)"),
             "dca_accurate": ("C2", "^", "DCA accurate (body frames)")}
    for ax, fam in zip(axes, families):
        for meth, (col, mk, label) in style.items():
            xs = [n for n in ns if (fam, n, meth) in worst]
            ax.loglog(xs, [worst[(fam, n, meth)] for n in xs], color=col, marker=mk, label=label)
        xs = [n for n in ns if (fam, n) in worst]
        ax.loglog(xs, [worst[(fam, n)] * 2.2e-16 for n in xs], color="0.5", ls="--", label="cond(M) eps")
        ax.set_title({"chain": "unbranched chains (build_chain)", "tree_bf2": "binary random trees"}[fam])
        ax.set_xlabel("bodies N")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xscale("log", base=2)
    axes[0].set_ylabel("worst |qdd - qdd_ref| / |qdd_ref|")
    axes[0].legend(fontsize=8)
    fig.suptitle("divide-and-conquer algorithm: accuracy against a quadruple-precision reference")
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "dca_accuracy.png"), dpi=110)
    print("\n| model | N | cond(M) | aba | dca (basic) | dca_accurate | basic / aba | accurate / aba |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for fam in families:
        for n in ns:
            if (fam, n, "aba") not in worst:
                continue
            a, b, c = (worst[(fam, n, m)] for m in ("aba", "dca", "dca_accurate"))
            print(f"| {fam} | {n} | {worst[(fam, n)]:.2e} | {a:.1e} | {b:.1e} | {c:.1e} | {b / a:.0f} | {c / a:.2g} |")


def parallel(rows):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for fam, col in (("chain", "C0"), ("tree_bf2", "C1")):
        rs = sorted((r for r in rows if r["family"] == fam), key=lambda r: r["bodies"])
        n = [r["bodies"] for r in rs]
        axes[0].loglog(n, [r["ops_total"] for r in rs], color=col, marker="o", label=f"{fam}: total")
        axes[0].loglog(n, [r["ops_critical_path"] for r in rs], color=col, marker="^", ls="--",
                       label=f"{fam}: critical path")
        axes[0].loglog(n, [r["ops_kinematics"] for r in rs], color=col, marker="x", ls=":",
                       label=f"{fam}: kinematics pass")
        axes[1].loglog(n, [r["aba_ns"] for r in rs], color=col, marker="o", label=f"{fam}: ABA")
        axes[1].loglog(n, [r["dca_accurate_1t_ns"] for r in rs], color=col, marker="s", ls="--",
                       label=f"{fam}: DCA 1 thread")
        axes[1].loglog(n, [r["dca_accurate_2t_ns"] for r in rs], color=col, marker="^", ls=":",
                       label=f"{fam}: DCA 2 threads")
    axes[0].set_title("operations per call (dca_cost, accurate variant)")
    axes[1].set_title("wall time per call, this machine")
    axes[1].set_ylabel("ns")
    for ax in axes:
        ax.set_xlabel("bodies N")
        ax.set_xscale("log", base=2)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "dca_parallel.png"), dpi=110)
    print("\n| model | bodies | levels | ops total | ops critical path | aba ns | dca 1t ns | dca_accurate 1t ns"
          " | dca_accurate 2t ns | 2t speed-up | aba / dca 2t |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['model']} | {r['bodies']} | {r['levels']} | {r['ops_total']} | {r['ops_critical_path']} | "
              f"{r['aba_ns']:.0f} | {r['dca_basic_1t_ns']:.0f} | {r['dca_accurate_1t_ns']:.0f} | "
              f"{r['dca_accurate_2t_ns']:.0f} | {r['dca_accurate_1t_ns'] / r['dca_accurate_2t_ns']:.2f} | "
              f"{r['aba_ns'] / r['dca_accurate_2t_ns']:.2f} |")
    chains = sorted((r for r in rows if r["family"] == "chain"), key=lambda r: r["bodies"])
    if len(chains) >= 2:
        steps = [(b["ops_critical_path"] - a["ops_critical_path"]) / math.log2(b["bodies"] / a["bodies"])
                 for a, b in zip(chains, chains[1:])]
        print(f"\nchain critical path: + {min(steps):.0f} .. {max(steps):.0f} operations per doubling of N")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reuse", action="store_true", help="reuse the JSON under build/bench")
    ap.add_argument("--bench", default=os.path.join(REPO, "build", "plucker_bench"))
    args = ap.parse_args()
    accuracy(measure(args.bench, "--dca_accuracy", "dca_accuracy.json", args.reuse))
    parallel(measure(args.bench, "--dca_timing", "dca_timing.json", args.reuse))


if __name__ == "__main__":
    main()
