#!/usr/bin/env python3
"""Cost study of the operational-space methods (docs/operational_space.md, "Cost study").

    /usr/bin/python3 scripts/operational_space_costs.py [--build build] [--calls 2000] [--out docs/operational_space_costs.json]

Builds the models as URDF files in a temporary folder (chains of N revolute bodies, binary trees
of depth d, and an ASIMO-like humanoid from published overall dimensions), runs
build/examples/operational_space_costs on each (one JSON line per method and output set: ns per
call, the operation count of the method's formula), and prints

  * the measured times and their ratios (dense : sparse : recursive : efpa) per model and task set;
  * the least-squares fit of the per-method calibration (ns = ns_per_op * operations + overhead,
    relative errors), to paste into kCalibration in src/algorithms/operational_space.cpp;
  * how often 'auto' picks the fastest method, and its loss when it does not.

The results are written to --out as JSON (the docs' tables are made from it by hand).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METHODS = ["dense", "sparse", "recursive", "efpa"]
AXES = ["0 0 1", "0 1 0", "1 0 0"]


def inertial(mass, com, inertia):
    ixx, iyy, izz = inertia
    return (f'<inertial><origin xyz="{com[0]} {com[1]} {com[2]}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def rod(mass, length):
    """A slender link along z: COM at mid-length, rod inertia about the COM (radius 0.03 m)."""
    r = 0.03
    ix = mass * (3 * r * r + length * length) / 12.0
    return inertial(mass, (0, 0, length / 2), (ix, ix, 0.5 * mass * r * r))


def joint(name, parent, child, xyz, axis, kind="revolute", rpy="0.1 -0.05 0.07"):
    lim = '<limit lower="-2.5" upper="2.5" effort="100" velocity="5"/>' if kind != "fixed" else ""
    ax = f'<axis xyz="{axis}"/>' if kind != "fixed" else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{lim}</joint>')


def chain_urdf(n):
    links = ['<link name="base">' + rod(2.0, 0.1) + "</link>"]
    joints = []
    for k in range(n):
        links.append(f'<link name="l{k}">' + rod(1.0, 0.2) + "</link>")
        joints.append(joint(f"j{k}", "base" if k == 0 else f"l{k - 1}", f"l{k}", "0 0 0.2", AXES[k % 3]))
    return '<robot name="chain%d">' % n + "".join(links + joints) + "</robot>", f"l{n - 1}"


def binary_tree_urdf(depth):
    """Body 1 at depth 1; each body has two children down to `depth`. Returns the URDF and the leaves."""
    links = ['<link name="base">' + rod(2.0, 0.1) + "</link>"]
    joints = []
    level, leaves, count = ["base"], [], 0
    for d in range(1, depth + 1):
        nxt = []
        for p in level:
            for side in ((1, -1) if p != "base" else (0,)):
                name = f"b{count}"
                count += 1
                links.append(f'<link name="{name}">' + rod(1.0 * 0.8 ** d, 0.25 * 0.9 ** d) + "</link>")
                # Joint frames turned differently per body (generic axes: no planar sub-branches).
                rpy = "%.3f %.3f %.3f" % (0.3 * side + 0.4 * math.sin(count), 0.6 * math.cos(1.7 * count),
                                          0.5 * math.sin(2.3 * count))
                joints.append(joint(f"j{name}", p, name, f"{0.05 * side} 0 {0.25 * 0.9 ** (d - 1)}",
                                    AXES[count % 3], rpy=rpy))
                nxt.append(name)
        level = nxt
    # A tip frame at the end of each leaf link (a body's own joint does not move its origin).
    for leaf in level:
        links.append(f'<link name="{leaf}_tip"/>')
        joints.append(joint(f"{leaf}_tip_mount", leaf, f"{leaf}_tip", f"0 0 {0.25 * 0.9 ** depth}", "", "fixed", "0 0 0"))
    leaves = [leaf + "_tip" for leaf in level]
    return '<robot name="bintree%d">' % depth + "".join(links + joints) + "</robot>", leaves


def asimo_urdf():
    """An ASIMO-like humanoid (the 2005 'Next-Generation' ASIMO's published figures: height 1.30 m,
    mass 54 kg, 34 DoF: head 3, torso 1, each arm 7 (shoulder 3, elbow 1, wrist 3), each hand 2,
    each leg 6). Segment lengths and masses are apportioned from the height and mass with human
    anthropometric fractions (Winter, 'Biomechanics and Motor Control of Human Movement'); they
    are not Honda's. Free-flyer pelvis; end-effectors: the palms and the feet."""
    H, Mtot = 1.30, 54.0
    L = {"thigh": 0.245 * H, "shank": 0.246 * H, "foot": 0.039 * H, "upper_arm": 0.186 * H,
         "forearm": 0.146 * H, "hand": 0.05 * H, "finger": 0.04 * H, "torso": 0.288 * H, "neck": 0.052 * H,
         "head": 0.13 * H, "hip_w": 0.191 * H / 2, "shoulder_w": 0.259 * H / 2}
    Mf = {"pelvis": 0.142, "torso": 0.355, "head": 0.081, "upper_arm": 0.028, "forearm": 0.016,
          "hand": 0.004, "finger": 0.001, "thigh": 0.1, "shank": 0.0465, "foot": 0.0145}
    links, joints = [], []

    def link(name, mass_frac, length, small=False):
        m = max(Mtot * mass_frac, 0.05)
        links.append(f'<link name="{name}">' + (inertial(m, (0, 0, 0), (1e-3, 1e-3, 1e-3)) if small
                                                 else rod(m, length)) + "</link>")

    def dof_chain(prefix, parent, xyz, axes, frac, length):
        """Joints `axes` at one place (massless small links between them, as spherical joints are
        built from revolutes), the last carrying the segment."""
        p = parent
        for k, ax in enumerate(axes):
            last = k == len(axes) - 1
            name = prefix if last else f"{prefix}_{k}"
            link(name, frac if last else 0.0, length, small=not last)
            joints.append(joint(f"{prefix}_j{k}", p, name, xyz if k == 0 else "0 0 0", ax, rpy="0 0 0"))
            p = name
        return p

    link("pelvis", Mf["pelvis"], 0.15)
    torso = dof_chain("torso", "pelvis", "0 0 0.1", ["0 0 1"], Mf["torso"], L["torso"])
    dof_chain("head", torso, f"0 0 {L['torso']}", ["0 0 1", "0 1 0", "1 0 0"], Mf["head"], L["head"])
    for s, side in (("l", 1), ("r", -1)):
        ua = dof_chain(f"{s}_upper_arm", torso, f"0 {side * L['shoulder_w']} {L['torso'] * 0.9}",
                       ["0 1 0", "1 0 0", "0 0 1"], Mf["upper_arm"], L["upper_arm"])
        fa = dof_chain(f"{s}_forearm", ua, f"0 0 {L['upper_arm']}", ["0 1 0"], Mf["forearm"], L["forearm"])
        palm = dof_chain(f"{s}_palm", fa, f"0 0 {L['forearm']}", ["0 0 1", "0 1 0", "1 0 0"], Mf["hand"], L["hand"])
        f1 = dof_chain(f"{s}_finger1", palm, f"0 0 {L['hand']}", ["0 1 0"], Mf["finger"], L["finger"])
        dof_chain(f"{s}_finger2", f1, f"0 0 {L['finger']}", ["0 1 0"], Mf["finger"], L["finger"])
        th = dof_chain(f"{s}_thigh", "pelvis", f"0 {side * L['hip_w']} -0.05", ["0 0 1", "1 0 0", "0 1 0"],
                       Mf["thigh"], L["thigh"])
        sh = dof_chain(f"{s}_shank", th, f"0 0 {-L['thigh']}", ["0 1 0"], Mf["shank"], L["shank"])
        dof_chain(f"{s}_foot", sh, f"0 0 {-L['shank']}", ["0 1 0", "1 0 0"], Mf["foot"], L["foot"])
    return '<robot name="asimo_like">' + "".join(links + joints) + "</robot>"


def run(exe, urdf, root, tasks, calls, tmp, label):
    path = os.path.join(tmp, label + ".urdf")
    with open(path, "w") as f:
        f.write(urdf)
    out = subprocess.run([exe, path, root, ",".join(tasks), str(calls)], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{label}: {out.stderr.strip()}")
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    for r in rows:
        r["model"], r["task_set"] = label, ",".join(tasks)
    return rows


def cases():
    """(label, urdf, root, tasks, depth of the task bodies in DoFs)."""
    out = []
    for n in (8, 16, 32, 64):
        urdf, tip = chain_urdf(n)
        out.append((f"chain{n}_tip", urdf, "fixed", [tip], n))
    for n in (16, 32):
        urdf, _ = chain_urdf(n)
        out.append((f"chain{n}_tip_mid", urdf, "fixed", [f"l{n - 1}", f"l{n // 2}:position"], n))
    for depth in (4, 5, 6, 7):
        urdf, leaves = binary_tree_urdf(depth)
        # k leaves spread over the tree; their paths must hold at least 3k DoFs (a regular task).
        for k in {4: (1, 2), 5: (1, 2, 4)}.get(depth, (1, 2, 4, 8)):
            pick = [leaves[i * len(leaves) // k] + ":position" for i in range(k)]
            out.append((f"bintree_d{depth}_{k}leaves", urdf, "fixed", pick, depth))
    asimo = asimo_urdf()
    ee = {"1 (left palm)": ["l_palm"], "2 (palms)": ["l_palm", "r_palm"],
          "4 (palms, feet)": ["l_palm", "r_palm", "l_foot", "r_foot"]}
    for name, tasks in ee.items():
        out.append((f"asimo_like {name}", asimo, "free", tasks, None))
    talos = os.path.join(os.environ.get("PLUCKER_SHARED_DIR", "/work/shared/models"), "talos_full.urdf")
    if os.path.exists(talos):
        with open(talos) as f:
            out.append(("talos_full 4 (soles, wrist tools)", f.read(), "free",
                        ["left_sole_link", "right_sole_link", "wrist_left_ft_tool_link", "wrist_right_ft_tool_link"],
                        None))
    return out


def fit(rows):
    """ns = a * operations + b per method, least squares on relative errors."""
    import numpy as np
    cal = {}
    for meth in METHODS:
        rs = [r for r in rows if r["method"] == meth]
        A = np.array([[r["operations"] / r["ns"], 1.0 / r["ns"]] for r in rs])
        coef, *_ = np.linalg.lstsq(A, np.ones(len(rs)), rcond=None)
        coef = np.maximum(coef, 0.0)
        err = A @ coef - 1.0
        cal[meth] = {"ns_per_op": float(coef[0]), "overhead_ns": float(coef[1]),
                     "max_rel_err": float(np.abs(err).max()), "rms_rel_err": float(np.sqrt(np.mean(err ** 2)))}
    return cal


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "operational_space_costs.json"))
    ap.add_argument("--from-json", help="skip the timing: fit and print the rows of an earlier --out")
    ap.add_argument("--machine", default="", help="a description of the machine, stored with the rows")
    args = ap.parse_args()
    if args.from_json:
        with open(args.from_json) as f:
            saved = json.load(f)
        rows, machine = saved["rows"], saved.get("machine", "")
    else:
        exe = os.path.join(args.build, "examples", "operational_space_costs")
        if not os.path.exists(exe):
            raise SystemExit(f"{exe} not found: build the examples (cmake --build {args.build})")
        rows, machine = [], args.machine
        with tempfile.TemporaryDirectory() as tmp:
            for label, urdf, root, tasks, _ in cases():
                safe = "".join(c if c.isalnum() else "_" for c in label)
                case_rows = run(exe, urdf, root, tasks, args.calls, tmp, safe)
                for r in case_rows:  # every row of the case (the example may time more methods than METHODS)
                    r["model"] = label
                rows += case_rows
        try:
            import numpy  # noqa: F401 (the fit needs it; without it, only the rows are written)
        except ImportError:
            with open(args.out, "w") as f:
                json.dump({"rows": rows, "machine": machine}, f, indent=1)
            raise SystemExit("numpy not found: wrote the rows only to " + args.out)
    cal = fit(rows)
    print("%-40s %-6s %4s %4s %3s  %9s %9s %9s %9s  %-22s %s" % (
        "model / tasks", "out", "nv", "N", "m", "dense", "sparse", "recursive", "efpa", "dense:sparse:rec:efpa",
        "auto"))
    auto_loss, built_loss = [], []
    for label in dict.fromkeys(r["model"] for r in rows):
        for out in ("lambda", "all"):
            rs = {r["method"]: r for r in rows if r["model"] == label and r["outputs"] == out}
            ns = [rs[m]["ns"] for m in METHODS]
            best = min(ns)
            ratio = ":".join("%.2f" % (x / rs["sparse"]["ns"]) for x in ns)
            # What auto would pick with the fitted calibration.
            pred = {m: cal[m]["ns_per_op"] * rs[m]["operations"] + cal[m]["overhead_ns"] for m in METHODS}
            pick = min(pred, key=pred.get)
            auto_loss.append(rs[pick]["ns"] / best)
            built_loss.append(rs[rs["dense"]["auto"]]["ns"] / best)  # the library's own pick (its kCalibration)
            r0 = rs["dense"]
            print("%-40s %-6s %4d %4d %3d  %9.0f %9.0f %9.0f %9.0f  %-22s %s%s" % (
                label, out, r0["nv"], r0["bodies"], r0["m"], *ns, ratio, pick,
                "" if rs[pick]["ns"] == best else " (+%.0f%%)" % (100 * (rs[pick]["ns"] / best - 1))))
    print("\ncalibration (paste into kCalibration, order dense, sparse, recursive, efpa):")
    print("constexpr Calibration kCalibration[4] = {" + ", ".join(
        "{%.4g, %.4g}" % (cal[m]["ns_per_op"], cal[m]["overhead_ns"]) for m in METHODS) + "};")
    for m in METHODS:
        print("  %-9s ns/op %.4f overhead %.0f ns; fit error max %.0f%% rms %.0f%%" % (
            m, cal[m]["ns_per_op"], cal[m]["overhead_ns"], 100 * cal[m]["max_rel_err"], 100 * cal[m]["rms_rel_err"]))
    for name, loss in (("fitted", auto_loss), ("as built", built_loss)):
        print("auto (%s): picks the fastest in %d of %d cases; worst loss %.0f%%, mean loss %.1f%%" % (
            name, sum(1 for x in loss if x == 1.0), len(loss), 100 * (max(loss) - 1),
            100 * (sum(loss) / len(loss) - 1)))
    with open(args.out, "w") as f:
        json.dump({"rows": rows, "calibration": cal, "machine": machine}, f, indent=1)
    print("wrote", os.path.relpath(args.out, REPO))


if __name__ == "__main__":
    main()
