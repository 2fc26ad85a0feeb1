#!/usr/bin/python3
"""A dataset for learning forward dynamics, generated with the batched ABA.

Draws N random states (q within the joint limits, v and tau uniform), evaluates
qdd = FD(q, v, tau) for all of them in one aba_batch call (all cores, SIMD lanes), checks a
sample against the single-state aba and the batch against inverse dynamics (rnea_batch at the
computed qdd gives tau back), and times the batched call against a Python loop of aba.
Writes batched_dataset.npz (Q, V, TAU, QDD), batched_dataset.png and batched_dataset.json.

usage: batched_dataset.py [--model URDF] [--floating-base] [--states N] [--out DIR]
       (default model: ../shared/models/talos_full.urdf with a free-flyer base if present,
        else examples/models/plucker_arm.urdf)
"""
import argparse
import json
import os
import time

import numpy as np

import plucker

HERE = os.path.dirname(os.path.abspath(__file__))


def default_model():
    shared = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
    talos = os.path.join(shared, "models", "talos_full.urdf")
    if os.path.exists(talos):
        return talos, True
    return os.path.join(HERE, "..", "models", "plucker_arm.urdf"), False


def main(argv=None):
    model_path, floating = default_model()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=model_path)
    parser.add_argument("--floating-base", action="store_true", default=floating)
    parser.add_argument("--states", type=int, default=20000)
    parser.add_argument("--out", default=".")
    args = parser.parse_args(argv)

    model = plucker.Model.from_urdf(args.model, floating_base=args.floating_base)
    rng = np.random.default_rng(0)
    n = args.states
    Q = np.stack([plucker.random_configuration(model, seed=int(s)) for s in rng.integers(0, 2**31, n)])
    V = rng.uniform(-1.0, 1.0, (n, model.nv))
    TAU = rng.uniform(-10.0, 10.0, (n, model.nv))

    start = time.perf_counter()
    QDD = plucker.aba_batch(model, Q, V, TAU)
    batch_s = time.perf_counter() - start

    loop_n = min(n, 2000)
    start = time.perf_counter()
    single = np.stack([plucker.aba(model, Q[k], V[k], TAU[k]) for k in range(loop_n)])
    loop_s = (time.perf_counter() - start) * n / loop_n

    scale = np.maximum(np.abs(single).max(axis=1, keepdims=True), 1.0)
    max_diff_single = float(np.max(np.abs(QDD[:loop_n] - single) / scale))
    tau_back = plucker.rnea_batch(model, Q, V, QDD)
    backward_error = float(np.max(np.abs(tau_back - TAU)) / np.max(np.abs(TAU)))

    os.makedirs(args.out, exist_ok=True)
    np.savez_compressed(os.path.join(args.out, "batched_dataset.npz"), Q=Q, V=V, TAU=TAU, QDD=QDD)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_t, ax_h) = plt.subplots(1, 2, figsize=(10, 4))
    rates = [n / loop_s, n / batch_s]
    ax_t.bar(["loop of aba (Python)", "aba_batch"], rates)
    ax_t.set_ylabel("states per second")
    ax_t.set_yscale("log")
    ax_t.set_title(f"{os.path.basename(args.model)}: nv = {model.nv}")
    ax_h.hist(np.log10(np.abs(QDD).max(axis=1)), bins=50)
    ax_h.set_xlabel("log10 max |qdd| per state")
    ax_h.set_ylabel("states")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, "batched_dataset.png"), dpi=120)

    summary = {"model": os.path.basename(args.model), "floating_base": args.floating_base, "states": n,
               "nv": model.nv, "batch_states_per_s": n / batch_s, "loop_states_per_s": n / loop_s,
               "max_rel_diff_batch_vs_single": max_diff_single, "backward_error": backward_error}
    with open(os.path.join(args.out, "batched_dataset.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
