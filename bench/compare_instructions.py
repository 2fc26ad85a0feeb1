#!/usr/bin/env python3
"""Instructions per algorithm call of two plucker_flops drivers (before / after a change).

Runs each driver under callgrind (instructions executed inside plucker_flops_region only, as
bench/count_flops.py does) for every model and algorithm, and prints a Markdown table of the
two counts and their ratio. Used for the architecture step's "no speed lost" gate (issue 16,
docs/performance_notes.md): build the driver of each commit in its own build directory
(-DPLUCKER_BUILD_FLOPS=ON; the scalar flags of `make flops`, or e.g. -march=haswell for the
AVX2 code), then

    bench/compare_instructions.py --before OLD/plucker_flops --after NEW/plucker_flops
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

ALGOS = ["rnea", "crba", "aba", "minv", "batch_rnea", "batch_crba", "batch_aba"]
MODELS = ["chain:8", "chain:64", "tree:64", "axischain:64", "urdf:ur5.urdf", "urdf:panda.urdf",
          "urdf-ff:hyq.urdf", "urdf-ff:solo12.urdf", "urdf-ff:talos_full.urdf"]


def instructions(driver, model, algo, shared, workdir):
    if model.startswith("urdf"):
        kind, name = model.split(":", 1)
        path = os.path.join(shared, "models", name)
        if not os.path.exists(path):
            return None
        model = f"{kind}:{path}"
    fd, out = tempfile.mkstemp(prefix="callgrind.", dir=workdir)
    os.close(fd)
    cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=*plucker_flops_region*", f"--callgrind-out-file={out}",
           driver, f"--model={model}", f"--algo={algo}", "--reps=4"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        os.unlink(out)
        return None  # e.g. an algorithm the older driver does not have
    text = open(out).read()
    os.unlink(out)
    m = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    return int(m.group(1)) / 4 if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared"))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="instr.")
    cases = [(m, a) for m in MODELS for a in ALGOS]

    def one(case):
        m, a = case
        return (m, a, instructions(os.path.abspath(args.before), m, a, args.shared, workdir),
                instructions(os.path.abspath(args.after), m, a, args.shared, workdir))

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(one, cases))
    os.rmdir(workdir)
    print("| model | algorithm | before | after | after / before |")
    print("| --- | --- | ---: | ---: | ---: |")
    for m, a, b, n in rows:
        if b is None and n is None:
            continue
        ratio = f"{n / b:.3f}" if b and n else "-"
        fmt = lambda x: f"{x:,.0f}" if x is not None else "-"
        print(f"| {m.split('/')[-1]} | {a} | {fmt(b)} | {fmt(n)} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
