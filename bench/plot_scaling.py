#!/usr/bin/python3
"""Plot build/bench/scaling.json (from `plucker_bench --scaling`) as docs/scaling.png.

Log-log: median ns per call of rnea, crba and aba against the number of moving bodies N,
for serial chains (solid) and binary trees (dashed), with O(N) and O(N^2) guides.
Debian's /usr/bin/python3 with matplotlib (python3-matplotlib).
Usage: bench/plot_scaling.py [--in build/bench/scaling.json] [--out docs/scaling.png]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in", dest="inp", default=os.path.join(ROOT, "build", "bench", "scaling.json"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "scaling.png"))
    args = ap.parse_args()
    try:
        with open(args.inp) as f:
            records = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"plot_scaling.py: cannot read {args.inp} ({e}); run `make bench-scaling`")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series = {}  # (topology, algorithm) -> [(n, ns)]
    for r in records:
        series.setdefault((r["topology"], r["algorithm"]), []).append((r["n"], r["ns"]))
    colors = {"rnea": "tab:blue", "crba": "tab:red", "aba": "tab:green"}
    styles = {"chain": "-", "tree": "--"}
    labels = {"chain": "chain", "tree": "binary tree"}

    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    all_n = []
    order = {"rnea": 0, "crba": 1, "aba": 2}
    for (topo, alg), pts in sorted(series.items(), key=lambda kv: (order.get(kv[0][1], 9), kv[0][0])):
        pts.sort()
        n = [p[0] for p in pts]
        t = [p[1] for p in pts]
        all_n += n
        ax.plot(n, t, styles.get(topo, ":"), color=colors.get(alg, "k"), marker="o", markersize=3.5,
                label=f"{alg}, {labels.get(topo, topo)}")
    # O(N) and O(N^2) guides anchored at the smallest rnea chain point.
    base = sorted(series.get(("chain", "rnea"), []))
    if base and all_n:
        n0, t0 = base[0]
        xs = sorted(set(all_n))
        ax.plot(xs, [t0 * x / n0 for x in xs], ":", color="0.6", linewidth=1, label="O(N)")
        ax.plot(xs, [t0 * (x / n0) ** 2 for x in xs], "-.", color="0.6", linewidth=1, label="O(N²)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("number of moving bodies N")
    ax.set_ylabel("median time per call [ns]")
    ax.set_title("plucker: time vs number of bodies (build_chain, build_random_tree bf=2)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    fig.savefig(args.out, dpi=120)
    print(f"plot_scaling.py: wrote {os.path.relpath(args.out, os.getcwd())} ({len(records)} points)")


if __name__ == "__main__":
    main()
