"""plucker's command-line tool: look at a robot, evaluate an algorithm, simulate, time.

    plucker info ROBOT.urdf                  summary: bodies, joints, mass, DoF, loops, warnings
    plucker eval ROBOT.urdf -a rnea ...      one algorithm at one state (numbers or --json)
    plucker simulate ROBOT.urdf -t 2 -o traj.csv   passive motion under gravity (RK4)
    plucker bench ROBOT.urdf                 ns per call of rnea, crba, aba, minv (batched, 1 thread)

Exit status: 0 success, 1 the model or the computation failed (message on stderr), 2 bad usage.
"""
import argparse
import json
import sys
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
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as e:
        p.exit(2, f"plucker {args.command}: {e}\n")
    except (ValueError, ArithmeticError, OSError, RuntimeError) as e:  # plucker's errors derive from these
        print(f"plucker {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
