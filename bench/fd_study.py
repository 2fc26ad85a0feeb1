#!/usr/bin/env python3
"""The forward-dynamics study (issue 6): docs/forward_dynamics.md and its PNG plots.

    /usr/bin/python3 bench/fd_study.py [--reuse] [--jobs N]

Three measurements, each cached as JSON under build/bench/ (--reuse keeps what is there):

1. Time of every method vs N on chains and branched trees (`plucker_bench --fd`, the
   -march=native Release build in build-bench/): fd_timing.json.
2. Operation counts by instrumentation: a scalar build in build-opcount/ (Release,
   EIGEN_DONT_VECTORIZE, no auto-vectorisation, so every floating-point operation is one
   scalar SSE2 instruction) runs `plucker_bench --fd_ops=MODEL,METHOD,K` under valgrind's lackey
   tool with K = 0 and K = 1; the difference of lackey's counts of 128-bit-register ALU operations
   (VEX's type for scalar SSE2 double arithmetic: add, sub, mul, div, sqrt, and the xor/and of
   negation and fabs) is the floating-point operation count of one call, and the difference of
   the guest instruction counts its instruction count: fd_opcounts.json.
3. Accuracy of every method against a quadruple-precision reference on chains of growing size and
   condition number (`plucker_bench --fd_accuracy`): fd_accuracy.json.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "build", "bench")
DOCS = os.path.join(REPO, "docs")
BENCH = os.path.join(REPO, "build-bench", "plucker_bench")
OPCOUNT_DIR = os.path.join(REPO, "build-opcount")
OPCOUNT_BENCH = os.path.join(OPCOUNT_DIR, "plucker_bench")

METHODS = ["aba", "crba_cholesky", "crba_ltdl", "direct_cholesky", "symmetry_cholesky", "cg", "pcg",
           "innovations", "minv", "global_sparse", "cfa", "dca", "dca_accurate"]
STYLE = {  # method -> (colour, marker, class)
    "aba": ("C0", "o", "O(N)"), "innovations": ("C1", "s", "O(N) solves"), "minv": ("C2", "^", "O(N^2)"),
    "crba_ltdl": ("C3", "v", "O(N^3)"), "crba_cholesky": ("C4", "<", "O(N^3)"),
    "direct_cholesky": ("C5", ">", "O(N^3)"), "symmetry_cholesky": ("C6", "D", "O(N^3)"),
    "cg": ("C7", "x", "O(N^2) iter."), "pcg": ("C8", "+", "O(N^2) iter."),
    "global_sparse": ("C9", "*", "O(N) global"), "cfa": ("k", "P", "O(N) global"),
    "dca": ("C0", "X", "O(N), O(log N) depth"), "dca_accurate": ("C1", "d", "O(N), O(log N) depth"),
}
OP_MODELS = ["chain4", "chain8", "chain16", "chain30", "chain32", "chain64",
             "tree_bf2_4", "tree_bf2_8", "tree_bf2_16", "tree_bf2_32", "tree_bf2_64",
             "tree_bf5_16", "tree_bf5_32", "tree_bf5_64",
             "humanoid_fixed", "humanoid_ff", "free_bodies8"]


def run(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def load(name):
    with open(os.path.join(OUT, name)) as f:
        return json.load(f)


# ------------------------------------------------------------------------- measurements
def measure_timing(reuse):
    path = os.path.join(OUT, "fd_timing.json")
    if reuse and os.path.exists(path):
        return
    if not os.path.exists(BENCH):
        sys.exit("build-bench/plucker_bench not found: run `make bench` once (or cmake --build build-bench)")
    run([BENCH, "--fd", "--reps=5", "--min_time=0.05", "--out=" + OUT])


def build_opcount():
    if not os.path.exists(os.path.join(OPCOUNT_DIR, "CMakeCache.txt")):
        run(["cmake", "-S", REPO, "-B", OPCOUNT_DIR, "-DCMAKE_BUILD_TYPE=Release",
             "-DCMAKE_CXX_FLAGS=-DEIGEN_DONT_VECTORIZE -fno-tree-vectorize -fno-tree-slp-vectorize",
             "-DPLUCKER_BUILD_TESTS=OFF", "-DPLUCKER_BUILD_PYTHON=OFF", "-DPLUCKER_BUILD_EXAMPLES=OFF",
             "-DPLUCKER_BENCH_MUJOCO=OFF", "-DPLUCKER_BENCH_KDL=OFF", "-DPLUCKER_BENCH_DART=OFF"])
    run(["cmake", "--build", OPCOUNT_DIR, "--target", "plucker_bench", "-j2"])


LACKEY = re.compile(r"==\d+==\s+(\w+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)")
GUEST = re.compile(r"guest instrs\s*:\s*([\d,]+)")


def lackey_counts(model, method, k):
    """(floating-point ALU ops, guest instructions) of `plucker_bench --fd_ops=model,method,k`."""
    p = subprocess.run(["valgrind", "--tool=lackey", "--detailed-counts=yes", OPCOUNT_BENCH,
                        f"--fd_ops={model},{method},{k}"], capture_output=True, text=True, check=True)
    fp = 0
    for m in LACKEY.finditer(p.stderr):
        if m.group(1) in ("F64", "V128"):  # scalar SSE2 double arithmetic is typed V128 by VEX
            fp += int(m.group(4).replace(",", ""))
    instrs = int(GUEST.search(p.stderr).group(1).replace(",", ""))
    cg = re.search(r"cg_iterations (\d+)", p.stdout)
    return fp, instrs, int(cg.group(1)) if cg else 0


def count_one(model, method):
    try:
        f0, i0, _ = lackey_counts(model, method, 0)
        f1, i1, cg = lackey_counts(model, method, 1)
    except subprocess.CalledProcessError:  # the method does not cover the model (cfa: bushy trees)
        return None
    return {"model": model, "method": method, "flops": f1 - f0, "instructions": i1 - i0, "cg_iterations": cg}


def measure_ops(reuse, jobs):
    path = os.path.join(OUT, "fd_opcounts.json")
    done = load("fd_opcounts.json") if reuse and os.path.exists(path) else []
    have = {(r["model"], r["method"]) for r in done}
    todo = [(m, meth) for m in OP_MODELS for meth in METHODS if (m, meth) not in have]
    if not todo:
        return
    build_opcount()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for r in ex.map(lambda a: count_one(*a), todo):
            if r is None:
                continue
            print(f"  {r['model']:16s} {r['method']:18s} {r['flops']:>12,d} flops {r['instructions']:>12,d} instr",
                  flush=True)
            done.append(r)
            with open(path, "w") as f:
                json.dump(done, f, indent=1)


def measure_accuracy(reuse):
    path = os.path.join(OUT, "fd_accuracy.json")
    if reuse and os.path.exists(path):
        return
    run([BENCH, "--fd_accuracy", "--out=" + OUT])


# ------------------------------------------------------------------------- analysis helpers
def size_of(name):
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else None


def by(rows, key_fields, value):
    return {tuple(r[k] for k in key_fields): r[value] for r in rows}


def fmt(x, unit=""):
    if x is None:
        return "-"
    if x >= 1e6:
        return f"{x / 1e6:.2f} M{unit}"
    if x >= 1e4:
        return f"{x / 1e3:.1f} k{unit}"
    return f"{x:.0f}{unit}"


# ------------------------------------------------------------------------- plots
def plot_vs_n(series_of, families, ylabel, title, path, methods=METHODS):
    fig, axes = plt.subplots(1, len(families), figsize=(5.2 * len(families), 4.4), sharey=True)
    for ax, (fam, label) in zip(axes, families):
        for meth in methods:
            pts = sorted(series_of(fam, meth))
            if not pts:
                continue
            c, mk, cls = STYLE[meth]
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=mk, color=c, label=f"{meth} ({cls})")
        ax.set_title(label)
        ax.set_xlabel("N (bodies = DoFs)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel(ylabel)
    axes[-1].legend(fontsize=7, loc="upper left")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reuse", action="store_true", help="keep the JSON already in build/bench")
    ap.add_argument("--jobs", type=int, default=2, help="valgrind runs in parallel")
    ap.add_argument("--skip-ops", action="store_true", help="no operation counts (needs valgrind)")
    args = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    measure_timing(args.reuse)
    if not args.skip_ops:
        measure_ops(args.reuse, args.jobs)
    measure_accuracy(args.reuse)

    timing = [r for r in load("fd_timing.json") if r["algorithm"].startswith("fd_")]
    for r in timing:
        r["method"] = r["algorithm"][3:]
    t = by(timing, ("model", "method"), "ns")
    ops = load("fd_opcounts.json") if os.path.exists(os.path.join(OUT, "fd_opcounts.json")) else []
    fl = by(ops, ("model", "method"), "flops")
    ins = by(ops, ("model", "method"), "instructions")
    acc = load("fd_accuracy.json")
    models = {r["model"]: r for r in load("fd_timing.json")}

    def time_series(fam, meth):
        return [(r["nv"], r["ns"] / 1e3) for r in timing
                if r["family"] == fam and r["method"] == meth and fam != "robot"]

    def op_series(fam, meth):
        return [(size_of(r["model"]), r["flops"]) for r in ops
                if r["method"] == meth and re.fullmatch(fam.replace(".", r"\.") + r"_?\d+", r["model"])]

    plot_vs_n(time_series, [("chain", "unbranched chain"), ("tree_bf2", "binary tree (bf 2)"),
                            ("tree_bf5", "bushy tree (bf 5)")],
              "median time per call (us)", "forward_dynamics(method): time vs N (Release, -march=native)",
              os.path.join(DOCS, "fd_time.png"))
    if ops:
        plot_vs_n(op_series, [("chain", "unbranched chain"), ("tree_bf2", "binary tree (bf 2)"),
                              ("tree_bf5", "bushy tree (bf 5)")],
                  "floating-point operations per call", "forward_dynamics(method): operations counted by valgrind",
                  os.path.join(DOCS, "fd_ops.png"))

    # Accuracy: worst relative error over the states vs cond(M).
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    for ax, (fam, label) in zip(axes, [("chain", "chains build_chain(N), N = 4..128"),
                                       ("tapered_chain", "tapered chains (autoTree taper 0.95), N = 4..64")]):
        cond = {}
        for r in acc:
            if r["family"] == fam:
                cond[r["model"]] = max(cond.get(r["model"], 0.0), r["cond"])
        for meth in METHODS:
            worst = {}
            for r in acc:
                if r["family"] == fam and r["method"] == meth:
                    worst[r["model"]] = max(worst.get(r["model"], 0.0), r["rel_err"])
            pts = sorted((cond[m], e) for m, e in worst.items())
            c, mk, cls = STYLE[meth]
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker=mk, color=c, label=meth)
        xs = sorted({r["cond"] for r in acc if r["family"] == fam})
        ax.loglog(xs, [2.2e-16 * x for x in xs], "k:", label="eps cond(M)")
        ax.set_title(label)
        ax.set_xlabel("cond(M)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("worst |qdd - qdd_ref| / |qdd_ref| (5 states)")
    for ax in axes:
        ax.set_xlabel("largest cond(M) of the 5 states")
    axes[-1].legend(fontsize=7)
    fig.suptitle("accuracy against a quadruple-precision reference")
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "fd_accuracy.png"), dpi=110)
    plt.close(fig)

    # ------------------------------------------------------------------------- the document
    L = []
    w = L.append
    meta = {}
    if os.path.exists(os.path.join(OUT, "meta.json")):
        meta = load("meta.json")
    w("# Forward dynamics: every method, their cost and their accuracy\n")
    w("Generated by `bench/fd_study.py` from `plucker_bench --fd` (time), `plucker_bench --fd_ops` under "
      "valgrind (operation counts) and `plucker_bench --fd_accuracy` (accuracy). The methods are those of "
      "`include/plucker/algorithms/forward_dynamics.hpp` (paper 002 §3-6, generalised to trees; paper 003's "
      "LTDL), all called through `forward_dynamics(model, data, q, v, tau, method)`, so every time includes "
      "the bias forces C and the argument checks.\n")
    w("Models: `build_chain(N)` (revolute joints alternating z / y), `build_random_tree(N, bf, skew 0.5, taper 1)` "
      "(Featherstone's autoTree: bf 1.5, 2, 3, 5), `build_humanoid` (30 actuated DoF; fixed: nv = 30, floating: "
      "nv = 36), `build_quadruped`, `build_all_joints_tree`, sets of free-floating bodies and chains of ball "
      "joints (`bench/fd_models.hpp`). Times: median CPU time per call over 5 repetitions on the shared 2-core "
      "development machine (other builds running: expect +-20 % noise between neighbouring figures).\n")

    # --- paper 003's finding
    w("## Branch-induced sparsity: the O(N^3) path on a humanoid vs on a chain (paper 003)\n")
    w("Featherstone (2005) finds that with the LTDL factorisation the O(N^3) path (CRBA + factorisation) is only "
      "15 % slower than the O(N) articulated-body algorithm on a 30-DoF humanoid, but 2.6x slower on an "
      "unbranched chain of the same size, mainly because the O(N^3) path runs 2.2x faster on the humanoid "
      "than on the chain. Our figures for the same comparison (O(N^3) path = `crba_ltdl`: RNEA for C, CRBA, "
      "LTDL, two sparse triangular solves):\n")
    w("| model | nv | aba ops | crba_ltdl ops | ops ratio | aba time | crba_ltdl time | time ratio |")
    w("|---|---:|---:|---:|---:|---:|---:|---:|")
    for m in ["humanoid_fixed", "chain30", "humanoid_ff"]:
        a_f, l_f = fl.get((m, "aba")), fl.get((m, "crba_ltdl"))
        a_t, l_t = t.get((m, "aba")), t.get((m, "crba_ltdl"))
        nv = models.get(m, {}).get("nv", "")
        w(f"| {m} | {nv} | {fmt(a_f)} | {fmt(l_f)} | {l_f / a_f:.2f} | {fmt(a_t, ' ns')} | {fmt(l_t, ' ns')} | "
          f"{l_t / a_t:.2f} |" if a_f and l_f and a_t and l_t else f"| {m} | {nv} | - | - | - | - | - | - |")
    need = [(m, k) for m in ("chain30", "humanoid_fixed") for k in ("aba", "crba_ltdl")]
    if all(fl.get(x) and t.get(x) and ins.get(x) for x in need):
        def rat(d, m):
            return d[(m, "crba_ltdl")] / d[(m, "aba")]
        gap_ops = fl[("chain30", "crba_ltdl")] / fl[("humanoid_fixed", "crba_ltdl")]
        gap_t = t[("chain30", "crba_ltdl")] / t[("humanoid_fixed", "crba_ltdl")]
        w(f"\n**In operation counts the finding is reproduced**, even more strongly: on the 30-DoF fixed-base humanoid "
          f"the O(N^3) path does {rat(fl, 'humanoid_fixed'):.2f}x the ABA's floating-point operations (paper: 1.15x), "
          f"on the 30-body chain {rat(fl, 'chain30'):.2f}x (paper: 2.6x), and the O(N^3) path itself does "
          f"{gap_ops:.1f}x more operations on the chain than on the humanoid (paper: 2.2x; the ABA's count barely "
          f"changes). **In time the ABA keeps a larger lead**: `crba_ltdl` takes {rat(t, 'humanoid_fixed'):.2f}x the "
          f"ABA's time on the humanoid and {rat(t, 'chain30'):.2f}x on the chain ({gap_t:.1f}x longer on the chain "
          f"than on the humanoid). Time is not operation count: per floating-point operation the O(N^3) path "
          f"executes more bookkeeping instructions (support-path walks, LTDL's parent-array chasing, clearing and "
          f"mirroring the dense nv x nv M, a separate RNEA for C) than the ABA's fixed-size 6 x 6 kernels: its "
          f"instruction count is {rat(ins, 'humanoid_fixed'):.2f}x the ABA's on the humanoid and "
          f"{rat(ins, 'chain30'):.2f}x on the chain (scalar counting build; the -march=native build vectorises part "
          "of the chain's dense work, hence its smaller time ratio). The paper's comparison is in operation "
          "counts, where we agree.\n")
    w("The factorisation alone (`ltdl_cost`, the exact trip counts of its loops): a chain of N DoFs costs "
      "(N^3 - N) / 6 multiply-subtracts like a dense Cholesky, a tree sum_k d_k (d_k + 1) / 2 with d_k the DoF "
      "depth:\n")
    w("| model | nv | sum of DoF depths | LTDL multiply-subtracts | dense (N^3 - N) / 6 |")
    w("|---|---:|---:|---:|---:|")
    for m in ["chain30", "humanoid_fixed", "humanoid_ff", "tree_bf2_32", "tree_bf5_32", "chain64", "tree_bf2_64"]:
        r = models.get(m)
        if r:
            n = r["nv"]
            w(f"| {m} | {n} | {r['depth_sum']} | {r['ltdl_mul']} | {(n ** 3 - n) // 6} |")
    w("")

    # --- time tables
    w("## Time per call vs N\n")
    w("![time vs N](fd_time.png)\n")
    for fam, title in [("chain", "unbranched chains"), ("tree_bf2", "binary trees (bf 2)"),
                       ("tree_bf5", "bushy trees (bf 5)")]:
        names = sorted({r["model"] for r in timing if r["family"] == fam}, key=size_of)
        w(f"\n{title}, median ns per call:\n")
        w("| method | " + " | ".join(f"N={size_of(n)}" for n in names) + " |")
        w("|---|" + "---:|" * len(names))
        for meth in METHODS:
            w(f"| {meth} | " + " | ".join(fmt(t.get((n, meth))) for n in names) + " |")
    w("\nRobots and multi-DoF sets, median ns per call (`auto`: the method it picked, and its time):\n")
    robots = [r["model"] for r in load("fd_timing.json") if r["family"] in ("robot", "free_bodies", "ball_chain")
              and r["algorithm"] == "fd_aba"]
    w("| model | nv | " + " | ".join(METHODS) + " | auto |")
    w("|---|---:|" + "---:|" * (len(METHODS) + 1))
    for m in robots:
        best = min(METHODS, key=lambda k: t.get((m, k), float("inf")))
        cells = []
        for meth in METHODS:
            v = fmt(t.get((m, meth)))
            cells.append(f"**{v}**" if meth == best else v)
        picked = models[m].get("auto_method", "?")
        w(f"| {m} | {models[m]['nv']} | " + " | ".join(cells) + f" | {picked}: {fmt(t.get((m, 'auto')))} |")
    w("\n(bold: fastest.) `auto` compares the predicted times of `aba` and `crba_ltdl` from the topology "
      "(bodies, DoFs, sum of nv_j^2, the sums of DoF depths of the LTDL cost formula, nv^2), with per-term "
      "constants fitted by `bench/fd_calibrate.py` to `plucker_bench --fd`. It picks the ABA on every chain, "
      "tree and robot and CRBA + LTDL on the free-floating bodies, where M is block diagonal and the ABA's 6 x 6 "
      "articulated-inertia work per joint buys nothing.\n")

    # --- operation counts
    if ops:
        w("## Operation counts (instrumented)\n")
        w("Floating-point operations per call counted by valgrind (lackey) on a scalar build (see the script's "
          "docstring): the difference between running the call once and not at all, so model building and "
          "setup are excluded. `cg` / `pcg` counts include all their iterations (shown).\n")
        w("![operations vs N](fd_ops.png)\n")
        w("| model | " + " | ".join(METHODS) + " |")
        w("|---|" + "---:|" * len(METHODS))
        cgit = {(r["model"], r["method"]): r["cg_iterations"] for r in ops}
        for m in OP_MODELS:
            cells = []
            for meth in METHODS:
                v = fmt(fl.get((m, meth)))
                if meth in ("cg", "pcg") and cgit.get((m, meth)):
                    v += f" ({cgit[(m, meth)]} it.)"
                cells.append(v)
            w(f"| {m} | " + " | ".join(cells) + " |")
        w("\nInstructions executed per call (same runs):\n")
        w("| model | " + " | ".join(METHODS) + " |")
        w("|---|" + "---:|" * len(METHODS))
        for m in OP_MODELS:
            w(f"| {m} | " + " | ".join(fmt(ins.get((m, meth))) for meth in METHODS) + " |")

    # --- accuracy
    w("\n## Accuracy on ill-conditioned chains\n")
    w("Relative error |qdd - qdd_ref| / |qdd_ref| (worst of 5 random states) against the same model's dynamics "
      "in quadruple precision (`__float128`: RNEA, direct-method M and L D L^T, `bench/fd_study.cpp`); "
      "`ld-ref` is how far the same reference computed in long double is from it (so a long-double reference "
      "would have sufficed).\n")
    w("![accuracy](fd_accuracy.png)\n")
    accm = sorted({(r["family"], r["model"]) for r in acc}, key=lambda x: (x[0], size_of(x[1])))
    w("| model | nv | cond(M) | ld-ref | " + " | ".join(METHODS) + " |")
    w("|---|---:|---:|---:|" + "---:|" * len(METHODS))
    for fam, m in accm:
        rows = [r for r in acc if r["model"] == m]
        cond = max(r["cond"] for r in rows)
        ld = max(r["long_double_ref_dev"] for r in rows)
        cells = []
        for meth in METHODS:
            errs = [r["rel_err"] for r in rows if r["method"] == meth]
            cells.append(f"{max(errs):.1e}" if errs else "-")
        w(f"| {m} | {rows[0]['nv']} | {cond:.1e} | {ld:.0e} | " + " | ".join(cells) + " |")

    def ratio(meths_a, meths_b, fam):
        import math
        rs = []
        for m in {r["model"] for r in acc if r["family"] == fam}:
            ea = max(r["rel_err"] for r in acc if r["model"] == m and r["method"] in meths_a)
            eb = max(r["rel_err"] for r in acc if r["model"] == m and r["method"] in meths_b)
            if size_of(m) >= 16:
                rs.append(eb / ea)
        return math.exp(sum(math.log(x) for x in rs) / len(rs)) if rs else float("nan")

    g = ratio(["aba"], ["crba_cholesky", "crba_ltdl"], "chain")
    w(f"\nThe articulated-body family (`aba`, `innovations`, `minv`, which never form M) is the most accurate, "
      f"and on chains of 16 or more links the methods that form M (CRBA, direct, symmetry + a Cholesky "
      f"factorisation) lose about {g:.0f}x more (geometric mean of the worst errors), growing with cond(M): the "
      "finding of Ascher et al. (cited in paper 000) and paper 002 that the ABA is more accurate than the CRBA "
      "route. Forming M rounds its entries at the scale of its largest ones; the solve then amplifies those "
      "errors by cond(M), whereas the ABA's recursions never see the ill-conditioned M as a whole. On the "
      "tapered chains, where cond(M) comes mostly from the spread of M's diagonal (the links shrink by 5 % "
      "each), every method stays far below eps cond(M) (the ill-conditioning is mostly a scaling, which "
      "Cholesky-type factorisations are insensitive to), though the M-forming methods are still 10-30x less "
      "accurate than the ABA. `cg` / `pcg` stop at a relative residual of 1e-14 or after 10 nv iterations, "
      "whichever comes first; their error is about that residual times cond(M).\n")
    cg_rows = [r for r in acc if r["method"] in ("cg", "pcg")]
    if cg_rows:
        worst_it = max(cg_rows, key=lambda r: r["cg_iterations"])
        capped = worst_it["cg_iterations"] >= 10 * worst_it["nv"]
        w(f"Largest iteration count: {worst_it['method']} on {worst_it['model']} (nv = {worst_it['nv']}, "
          f"cond(M) = {worst_it['cond']:.1e}): {worst_it['cg_iterations']} iterations"
          + (" (the 10 nv cap, before reaching 1e-14)" if capped else "") +
          ", far more than N: in floating point, conjugate gradient on an ill-conditioned M does not finish in "
          "N steps (in exact arithmetic it would).\n")

    w("## The divide-and-conquer algorithm\n")
    w("`dca` and `dca_accurate` (Featherstone 1999, with `threads=k`) are not in these tables: their study (accuracy "
      "up to 1024 bodies against the same quadruple-precision reference, operation counts of the critical path, "
      "2-thread timings) is in [dca.md](dca.md) (`bench/dca_study.py`).\n")

    path = os.path.join(DOCS, "forward_dynamics.md")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
