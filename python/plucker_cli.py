"""plucker's command-line tool: look at a robot, evaluate an algorithm, simulate, time.

    plucker info ROBOT.urdf                  summary: bodies, joints, mass, DoF, loops, warnings
    plucker eval ROBOT.urdf -a rnea ...      one algorithm at one state (numbers or --json)
    plucker simulate ROBOT.urdf -t 2 -o traj.csv   passive motion under gravity (RK4)
    plucker bench ROBOT.urdf                 ns per call of rnea, crba, aba, minv (batched, 1 thread)
    plucker view ROBOT.urdf [traj.csv]       the robot (and its motion) in the browser: a page on localhost

Exit status: 0 success, 1 the model or the computation failed (message on stderr), 2 bad usage.
"""
import argparse
import functools
import http.server
import json
import os
import shutil
import sys
import tempfile
import time
import warnings

import numpy as np

import plucker
import plucker_sweep

ALGORITHMS = {
    # name: (inputs beyond q, function, what it returns)
    "rnea": (("v", "a"), lambda m, q, v, a: plucker.rnea(m, q, v, a), "tau = ID(q, v, a)"),
    "nle": (("v",), lambda m, q, v: plucker.nonlinear_effects(m, q, v), "h(q, v) = C(q, v) v + g(q)"),
    "gravity": ((), lambda m, q: plucker.gravity_torques(m, q), "g(q)"),
    "crba": ((), lambda m, q: plucker.crba(m, q), "M(q)"),
    "minv": ((), lambda m, q: plucker.minv(m, q), "M(q)^-1"),
    "aba": (("v", "tau"), lambda m, q, v, tau: plucker.aba(m, q, v, tau), "qdd = FD(q, v, tau)"),
    "com": ((), lambda m, q: plucker.center_of_mass(m, q), "centre of mass, world frame [m]"),
    "energy": (("v",), lambda m, q, v: np.array([plucker.kinetic_energy(m, q, v), plucker.potential_energy(m, q)]),
               "[kinetic, potential] [J]"),
}


class UsageError(Exception):
    pass


def vector(text, size, name):
    """A vector from 'x,y,z' (or spaces), checked against the size it must have."""
    try:
        values = np.array([float(x) for x in text.replace(",", " ").split()])
    except ValueError:
        raise UsageError(f"--{name}: '{text}' is not a list of numbers") from None
    if values.size != size:
        raise UsageError(f"--{name}: {values.size} values given, the model needs {size}")
    return values


def load(args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = plucker.Model.from_urdf(args.urdf, floating_base=args.floating_base, strict=args.strict)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    return model, [str(w.message) for w in caught]


def configuration(model, args):
    if args.q is not None:
        return vector(args.q, model.nq, "q")
    return plucker.random_configuration(model, seed=args.seed) if args.seed is not None else plucker.neutral(model)


def cmd_info(args):
    model, warned = load(args)
    if args.json:
        print(json.dumps({"name": model.name, "nq": model.nq, "nv": model.nv, "nbodies": model.nbodies,
                          "total_mass": model.total_mass, "floating_base": model.has_floating_base,
                          "joints": model.joint_names, "bodies": model.body_names,
                          "loop_joints": model.loop_joint_names, "constraints": model.num_constraints,
                          "mimics": [str(x) for x in model.mimics], "warnings": warned}, indent=2))
    else:
        print(model.summary())
        print(f"loop joints: {', '.join(model.loop_joint_names) or 'none'} ({model.num_constraints} constraints); "
              f"mimic relations: {len(model.mimics)}; warnings: {len(warned)}")
    return 0


def cmd_eval(args):
    model, _ = load(args)
    inputs, fn, meaning = ALGORITHMS[args.algorithm]
    q = configuration(model, args)
    values = []
    for name in inputs:
        text = getattr(args, name)
        values.append(np.zeros(model.nv) if text is None else vector(text, model.nv, name))
    result = np.asarray(fn(model, q, *values))
    if args.json:
        print(json.dumps({"algorithm": args.algorithm, "meaning": meaning, "q": q.tolist(),
                          **{n: v.tolist() for n, v in zip(inputs, values)}, "result": result.tolist()}))
    else:
        print(f"{args.algorithm}: {meaning}")
        with np.printoptions(precision=args.precision, suppress=True, linewidth=120):
            print(result)
    return 0


def cmd_simulate(args):
    model, _ = load(args)
    if args.seconds <= 0 or args.dt <= 0:
        raise UsageError("--seconds and --dt must be positive")
    steps = int(round(args.seconds / args.dt))
    progress = sys.stderr.isatty() and steps > 20000

    def show(k, n):
        if k % 2000 == 0 or k == n:
            print(f"\r{100 * k // n:3d}% ", end="\n" if k == n else "", file=sys.stderr, flush=True)

    every = max(1, int(round(args.sample / args.dt)))
    Q, V = plucker_sweep.simulate(model, configuration(model, args), np.zeros(model.nv), args.seconds, args.dt, every,
                                  on_step=show if progress else None)
    times = [min(k * every, steps) * args.dt for k in range(len(Q))]
    names = [f"q{k}" for k in range(model.nq)] + [f"v{k}" for k in range(model.nv)]
    with open(args.out, "w") as out:
        out.write(",".join(["t"] + names + ["energy"]) + "\n")
        for t, q, v in zip(times, Q, V):
            e = plucker.kinetic_energy(model, q, v) + plucker.potential_energy(model, q)
            out.write(",".join(f"{x:.17g}" for x in [t, *q, *v, e]) + "\n")
    print(f"wrote {args.out}: {steps + 1} steps of {args.dt:g} s, {args.seconds:g} s of passive motion (RK4)")
    return 0


def cmd_bench(args):
    model, _ = load(args)
    rng = np.random.default_rng(0)
    n = args.states
    Q = np.stack([plucker.random_configuration(model, seed=int(s)) for s in rng.integers(0, 2**31, n)])
    V, A = rng.uniform(-1, 1, (n, model.nv)), rng.uniform(-1, 1, (n, model.nv))
    TAU = plucker.rnea_batch(model, Q, V, A, threads=1)
    cases = {"rnea": lambda: plucker.rnea_batch(model, Q, V, A, threads=1),
             "crba": lambda: plucker.crba_batch(model, Q, threads=1),
             "aba": lambda: plucker.aba_batch(model, Q, V, TAU, threads=1)}
    print(f"{model.name}: nq = {model.nq}, nv = {model.nv}; ns per state, batched, one thread, median of {args.reps}")
    for name, run in cases.items():
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            run()
            times.append((time.perf_counter() - start) / n * 1e9)
        print(f"  {name:5s} {np.median(times):10.1f}")
    times = []
    for _ in range(args.reps):
        start = time.perf_counter()
        for k in range(min(n, 200)):
            plucker.minv(model, Q[k])
        times.append((time.perf_counter() - start) / min(n, 200) * 1e9)
    print(f"  {'minv':5s} {np.median(times):10.1f}  (single-state calls from Python)")
    return 0


VIEWER_FILES = ("index.html", "viewer.js")


def viewer_bundle():
    """The directory of the built viewer (index.html, viewer.js): $PLUCKER_VIEWER_DIR, else next to
    the plucker module, installed (plucker_viewer/) or in the build tree (build/python/../viewer/dist)."""
    here = os.path.dirname(os.path.abspath(plucker.__file__))
    candidates = [os.environ["PLUCKER_VIEWER_DIR"]] if os.environ.get("PLUCKER_VIEWER_DIR") else [
        os.path.join(here, "plucker_viewer"), os.path.join(here, "..", "viewer", "dist")]
    for d in candidates:
        if all(os.path.isfile(os.path.join(d, f)) for f in VIEWER_FILES):
            return os.path.normpath(d)
    raise RuntimeError("the viewer is not built (looked in " + ", ".join(os.path.normpath(d) for d in candidates)
                       + "): build it with `make build` where node and npm are installed "
                       "(scripts/install-deps.sh --viewer), or set PLUCKER_VIEWER_DIR")


def read_trajectory(path):
    """Times and q columns of a trajectory file: the CSV of `plucker simulate` (t, q0..q{nq-1}, anything
    else ignored), a CSV with a column q_<joint> per one-coordinate joint (build/examples/demo's), or JSON
    {"t": [...], "q": [[...], ...]}. Returns (t, q, names) where names is None for positional columns."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.lower().endswith(".json") or text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
            t, q = np.asarray(doc["t"], dtype=float), np.asarray(doc["q"], dtype=float)
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a trajectory (JSON with arrays 't' and 'q' of numbers): {e}") from None
        if q.ndim != 2 or t.ndim != 1 or q.shape[0] != t.size:
            raise ValueError(f"{path}: 'q' must be a list of {t.size} rows (one per time), got shape {q.shape}")
        return t, q, None
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty file")
    header = [h.strip() for h in lines[0].split(",")]
    if "t" not in header:
        raise ValueError(f"{path}: no column 't' in the header (expected t, q0, q1, ... as `plucker simulate` writes)")
    positional = [h for h in header if h[:1] == "q" and h[1:].isdigit()]
    named = [h for h in header if h.startswith("q_")]
    if positional:
        n = len(positional)
        if sorted(int(h[1:]) for h in positional) != list(range(n)):
            raise ValueError(f"{path}: the q columns are not q0..q{n - 1}")
        columns, names = [header.index(f"q{k}") for k in range(n)], None
    elif named:
        columns, names = [header.index(h) for h in named], [h[2:] for h in named]
    else:
        raise ValueError(f"{path}: no q columns (q0, q1, ... or q_<joint>) in the header")
    rows = []
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != len(header):
            raise ValueError(f"{path}, line {number}: {len(cells)} values, the header has {len(header)}")
        try:
            rows.append([float(cells[header.index("t")])] + [float(cells[c]) for c in columns])
        except ValueError:
            raise ValueError(f"{path}, line {number}: not a number") from None
    if not rows:
        raise ValueError(f"{path}: no samples after the header")
    table = np.array(rows)
    return table[:, 0], table[:, 1:], names


def urdf_joint_links(path):
    """URDF joint name -> (parent link, child link), for the joints the page poses from plucker's kinematics."""
    import xml.etree.ElementTree as ET

    links = {}
    for j in ET.parse(path).getroot().iter("joint"):
        parent, child = j.find("parent"), j.find("child")
        if parent is not None and child is not None:
            links[j.get("name")] = (parent.get("link"), child.get("link"))
    return links


def view_data(args):
    """The page's data: the URDF text and the trajectory, in the format the viewer page reads."""
    model, _ = load(args)
    if args.trajectory is None:
        t, Q = np.zeros(1), plucker.neutral(model)[None, :]
    else:
        t, Q, names = read_trajectory(args.trajectory)
        if names is None and Q.shape[1] == model.nq + 7 and not args.floating_base and not model.has_floating_base:
            # 7 more columns than the fixed-base model: [x y z qx qy qz qw] of a free-flyer root
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # load() has shown them
                model = plucker.Model.from_urdf(args.urdf, floating_base=True, strict=args.strict)
        if names is not None:
            unknown = [n for n in names if n not in model.joint_names]
            if unknown:
                raise ValueError(f"{args.trajectory}: column(s) {', '.join('q_' + n for n in unknown)} name no joint "
                                 f"of {model.name} (its joints: {', '.join(model.joint_names)})")
            missing = [n for n in model.joint_names if n not in names]
            if missing or model.nq != len(names):
                raise ValueError(f"{args.trajectory}: no column for joint(s) {', '.join(missing) or '(multi-coordinate)'}"
                                 f" of {model.name}; use positional columns q0..q{model.nq - 1}")
            full = np.zeros((len(t), model.nq))
            for k, n in enumerate(names):
                full[:, model.joint_q_index(n)] = Q[:, k]
            Q = full
        elif Q.shape[1] != model.nq:
            hint = "" if model.has_floating_base else f" ({model.nq + 7} with --floating-base)"
            raise ValueError(f"{args.trajectory}: {Q.shape[1]} q columns, but {model.name} has nq = {model.nq}{hint}: "
                             f"joints {', '.join(model.joint_names)}")
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(Q))):
            raise ValueError(f"{args.trajectory}: non-finite values")
        if np.any(np.diff(t) <= 0):
            k = int(np.argmax(np.diff(t) <= 0))
            raise ValueError(f"{args.trajectory}: times must increase (sample {k + 1}: t = {t[k + 1]:g} after {t[k]:g})")
    joints, poses = [], {}
    pose_joints = []
    for name in model.joint_names:
        kind = model.joint_kind(name)
        for family in ("revolute", "prismatic"):
            if kind == family or kind.startswith(family + "_"):
                kind = family
        if kind not in ("revolute", "prismatic", "free_flyer", "spherical"):
            kind = "pose"
            pose_joints.append(name)
        joints.append({"name": name, "kind": kind, "q": model.joint_q_index(name), "nq": model.joint_nq(name)})
    links = urdf_joint_links(args.urdf) if pose_joints else {}
    com = []
    for k, q in enumerate(Q):
        try:
            com.append(plucker.center_of_mass(model, q).tolist())
            for name in pose_joints:
                parent, child = links[name]
                rel = np.linalg.solve(plucker.frame_pose(model, q, parent), plucker.frame_pose(model, q, child))
                poses.setdefault(name, []).append(rel[:3, 3].tolist() + quaternion(rel[:3, :3]))
        except ValueError as e:
            raise ValueError(f"{args.trajectory}: sample {k} (t = {t[k]:g}): {e}") from None
    with open(args.urdf, encoding="utf-8") as f:
        urdf = f.read()
    trajectory = {"format": "plucker-trajectory/1", "t": t.tolist(), "q": Q.tolist(), "joints": joints, "com": com}
    if poses:
        trajectory["poses"] = poses
    return {"robot": model.name, "urdf": urdf, "source": os.path.abspath(args.urdf), "trajectory": trajectory}


def quaternion(R):
    """[qx qy qz qw] of a rotation matrix (Shepperd's method: the largest of the four squares first)."""
    tr = np.trace(R)
    i = int(np.argmax([R[0, 0], R[1, 1], R[2, 2], tr]))
    if i == 3:
        w = np.sqrt(1 + tr) / 2
        q = [(R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w), (R[1, 0] - R[0, 1]) / (4 * w), w]
    else:
        j, k = (i + 1) % 3, (i + 2) % 3
        v = np.zeros(3)
        v[i] = np.sqrt(max(0.0, 1 + R[i, i] - R[j, j] - R[k, k])) / 2
        v[j] = (R[j, i] + R[i, j]) / (4 * v[i])
        v[k] = (R[k, i] + R[i, k]) / (4 * v[i])
        q = [*v, (R[k, j] - R[j, k]) / (4 * v[i])]
    return [float(x) for x in q]


def write_page(out, data, bundle):
    os.makedirs(out, exist_ok=True)
    for name in VIEWER_FILES:
        shutil.copyfile(os.path.join(bundle, name), os.path.join(out, name))
    with open(os.path.join(out, "robot.urdf"), "w", encoding="utf-8") as f:
        f.write(data["urdf"])
    with open(os.path.join(out, "trajectory.json"), "w", encoding="utf-8") as f:
        json.dump(data["trajectory"], f)
    with open(os.path.join(out, "data.js"), "w", encoding="utf-8") as f:
        f.write("window.PLUCKER_DATA = " + json.dumps(data) + ";\n")


def cmd_view(args):
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: not a port number (0 to 65535; 0 picks a free one)")
    bundle = viewer_bundle()
    data = view_data(args)
    serve = not args.no_serve and args.out is None
    if args.out is not None:
        out = args.out
    elif serve:
        out = tempfile.mkdtemp(prefix="plucker-view-")
    else:  # next to the trajectory, or in the current directory
        base = args.trajectory or os.path.basename(args.urdf)
        out = os.path.splitext(base)[0] + "_view"
    write_page(out, data, bundle)
    index = os.path.abspath(os.path.join(out, "index.html"))
    if not serve:
        print(f"wrote {out}/: open file://{index} in a browser (or serve it: python3 -m http.server -d {out})")
        return 0
    handler = functools.partial(QuietHandler, directory=out)
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    except OSError as e:
        shutil.rmtree(out, ignore_errors=True)
        raise OSError(f"cannot serve on 127.0.0.1:{args.port} ({e.strerror}); choose another port with --port "
                      "(0 picks a free one)") from None
    print(f"serving {data['robot']} at http://127.0.0.1:{server.server_address[1]}/index.html (Ctrl-C to stop)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        shutil.rmtree(out, ignore_errors=True)
    return 0


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no line per request on stderr
        pass


def parser():
    p = argparse.ArgumentParser(prog="plucker", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.split("\n")[2:]))
    p.add_argument("--version", action="version", version=f"plucker {plucker.__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def command(name, help_text):
        c = sub.add_parser(name, help=help_text, description=help_text)
        c.add_argument("urdf", help="the robot's URDF file")
        c.add_argument("--floating-base", action="store_true", help="add a free-flyer root joint")
        c.add_argument("--strict", action="store_true", help="refuse the harmless defects that are otherwise warned of")
        return c

    c = command("info", "summary of a robot: bodies, joints, mass, DoF, loops, warnings")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.set_defaults(run=cmd_info)

    c = command("eval", "evaluate one algorithm at one state")
    c.add_argument("-a", "--algorithm", required=True, choices=sorted(ALGORITHMS))
    c.add_argument("--q", help="configuration (nq numbers; default: neutral, or random with --seed)")
    c.add_argument("--seed", type=int, help="random configuration within the joint limits")
    for name in ("v", "a", "tau"):
        c.add_argument(f"--{name}", help=f"{name} (nv numbers; default zeros)")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    c.add_argument("--precision", type=int, default=6)
    c.set_defaults(run=cmd_eval)

    c = command("simulate", "passive motion under gravity from rest, RK4, written as CSV")
    c.add_argument("-t", "--seconds", type=float, required=True)
    c.add_argument("--dt", type=float, default=1e-3, help="step [s] (default 1e-3)")
    c.add_argument("--sample", type=float, default=1e-2, help="output interval [s] (default 1e-2)")
    c.add_argument("--q", help="initial configuration (default: neutral, or random with --seed)")
    c.add_argument("--seed", type=int)
    c.add_argument("-o", "--out", required=True, help="CSV file: t, q..., v..., energy")
    c.set_defaults(run=cmd_simulate)

    c = command("bench", "time rnea, crba, aba (batched, one thread) and minv on random states")
    c.add_argument("--states", type=int, default=1000)
    c.add_argument("--reps", type=int, default=5)
    c.set_defaults(run=cmd_bench)

    c = command("view", "show the robot and its trajectory in the browser (writes a static page, serves it on localhost)")
    c.add_argument("trajectory", nargs="?", help="CSV of `plucker simulate` (t, q0, ...) or JSON {t, q}; "
                   "default: the neutral configuration. 7 extra q columns imply --floating-base")
    c.add_argument("--out", metavar="DIR", help="write the page (index.html, viewer.js, data.js, robot.urdf, "
                   "trajectory.json) into DIR and do not serve it")
    c.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0: any free port)")
    c.add_argument("--no-serve", action="store_true", help="only write the page (default DIR: TRAJECTORY_view/, "
                   "or ROBOT_view/ here)")
    c.set_defaults(run=cmd_view)
    return p


def main(argv=None):
    p = parser()
    args, extra = p.parse_known_args(argv)
    # argparse fills an optional positional with nothing when an option follows the one before it
    # (`view ROBOT.urdf --floating-base traj.csv`): take the trajectory from what is left over.
    if extra and getattr(args, "trajectory", "") is None and len(extra) == 1 and not extra[0].startswith("-"):
        args.trajectory, extra = extra[0], []
    if extra:
        p.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.run(args)
    except UsageError as e:
        p.exit(2, f"plucker {args.command}: {e}\n")
    except (ValueError, ArithmeticError, OSError, RuntimeError) as e:  # plucker's errors derive from these
        print(f"plucker {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
