#!/usr/bin/python3
"""Floating-point operation counts of plucker's algorithms, measured (issue 5; `make flops`).

This machine has no hardware performance counters, so the operations are counted from
the instructions themselves: plucker_flops (bench/flops_driver.cpp) runs one algorithm
call inside plucker_flops_region(); callgrind, collecting only inside that function
(callees included: libplucker, libm, libstdc++), gives the execution count of every
instruction address; objdump gives the instruction at each address. With the build of
`make flops` (no -march, -DEIGEN_DONT_VECTORIZE, no auto-vectoriser) the arithmetic is
scalar SSE2 (mulsd, addsd, ...), so counting instructions counts operations. Packed
instructions (*pd, *ps) are counted lane by lane, FMAs as one mul plus one add.

    count_flops.py --driver build-flops/plucker_flops --out build-flops --doc docs/flops.md
    count_flops.py --parse callgrind.out [--reps K]      # counts of one callgrind file
    count_flops.py --from-json build-flops/flops.json --doc docs/flops.md   # report only

Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

REGION = "*plucker_flops_region*"
ALGOS = ["rnea", "nonlinear_effects", "gravity_torques", "crba", "aba", "forward_kinematics"]
SIZES = [8, 16, 32, 64]
# chain: build_chain (rotated joint frames); tree: binary tree; axischain: a chain whose X_tree are
# pure translations and whose joints turn about body z (the plane-rotation path of the CRBA).
FAMILIES = ["chain", "tree", "axischain"]
URDFS = [("ur5.urdf", False), ("panda.urdf", False), ("iiwa14.urdf", False),
         ("anymal.urdf", True), ("hyq.urdf", True), ("talos_full.urdf", True)]

# ---------------------------------------------------------------------------
# Instruction classes
# ---------------------------------------------------------------------------
ARITH = {"add": "add", "sub": "add", "mul": "mul", "div": "div", "sqrt": "sqrt",
         "hadd": "add", "hsub": "add", "addsub": "add"}
ARITH_RE = re.compile(r"^v?(addsub|hadd|hsub|add|sub|mul|div|sqrt)(sd|ss|pd|ps)$")
FMA_RE = re.compile(r"^vf(n?)m(add|sub|addsub|subadd)(132|213|231)(sd|ss|pd|ps)$")
BITWISE_RE = re.compile(r"^v?(xor|and|andn|or)(pd|ps)$")      # negation, abs, zeroing
COMPARE_RE = re.compile(r"^v?(u?comis[sd]|cmp\w*(sd|ss|pd|ps)|min(sd|ss|pd|ps)|max(sd|ss|pd|ps))$")
CONVERT_RE = re.compile(r"^v?(cvt\w+|round(sd|ss|pd|ps))$")
X87_RE = re.compile(r"^f(add|sub|subr|mul|div|divr|sqrt)p?[sl]?$|^fi(add|sub|mul|div)[sl]?$")


def lanes(suffix, operands):
    """Number of arithmetic lanes of an SSE/AVX instruction (scalar: 1)."""
    if suffix in ("sd", "ss"):
        return 1
    width = 512 if "%zmm" in operands else 256 if "%ymm" in operands else 128
    return width // (64 if suffix == "pd" else 32)


def classify(mnemonic, operands):
    """The counts one execution of an instruction adds. packed_lanes and single: the flops
    done by packed / single-precision instructions (already in mul, add, ...)."""
    m = ARITH_RE.match(mnemonic)
    if m:
        n = lanes(m.group(2), operands)
        out = {ARITH[m.group(1)]: n}
        if m.group(2) in ("pd", "ps"):
            out["packed_lanes"] = n
        if m.group(2) in ("ss", "ps"):
            out["single"] = n
        return out
    m = FMA_RE.match(mnemonic)
    if m:
        n = lanes(m.group(4), operands)
        out = {"mul": n, "add": n, "fma": n}
        if m.group(4) in ("pd", "ps"):
            out["packed_lanes"] = 2 * n
        if m.group(4) in ("ss", "ps"):
            out["single"] = 2 * n
        return out
    if BITWISE_RE.match(mnemonic):
        return {"fp_bitwise": 1}
    if COMPARE_RE.match(mnemonic):
        return {"fp_compare": 1}
    if CONVERT_RE.match(mnemonic):
        return {"fp_convert": 1}
    if X87_RE.match(mnemonic):
        return {"x87": 1}
    return {}


COUNT_KEYS = ["mul", "add", "div", "sqrt", "fma", "packed_lanes", "single", "fp_bitwise", "fp_compare",
              "fp_convert", "x87", "instructions"]

# ---------------------------------------------------------------------------
# objdump: address -> (mnemonic, operands); the function names come from callgrind, which
# reads the symbol tables and debug information (objdump only sees the dynamic symbols of
# a stripped libm)
# ---------------------------------------------------------------------------
_disasm_cache = {}


def disassemble(path):
    if path in _disasm_cache:
        return _disasm_cache[path]
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True,
                          capture_output=True, text=True).stdout
    insns = {}
    line_re = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$")
    for line in text.splitlines():
        m = line_re.match(line)
        if m:
            mnem = m.group(2)
            ops = m.group(3)
            if mnem in ("rep", "repz", "repnz", "lock", "notrack", "bnd", "data16") and ops:
                mnem, _, ops = ops.partition(" ")  # prefix: the instruction is the next word
            insns[int(m.group(1), 16)] = (mnem, ops.split("#")[0].strip())
    _disasm_cache[path] = insns
    return insns


# ---------------------------------------------------------------------------
# callgrind output: self cost (Ir) per (object, address)
# ---------------------------------------------------------------------------
def parse_callgrind(path):
    """{(object, address): [executions, function]}: self cost (Ir) of every instruction.

    Positions are absolute with --compress-pos=no; relative ones (+n, -n, *) are handled too.
    The cost line after a calls= line is the inclusive cost of that call, not self cost.
    """
    costs = {}
    npos, obj, fn, last_addr, skip_next = 1, None, "?", 0, False
    names = {}  # "(id) name" string compression, in case --compress-strings=yes was used

    def name(val, kind):
        m = re.match(r"^\((\d+)\)\s*(.*)$", val)
        if not m:
            return val
        if m.group(2):
            names[(kind, m.group(1))] = m.group(2)
        return names[(kind, m.group(1))]

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            if line.startswith("positions:"):
                npos = len(line.split()[1:])
                continue
            if line.startswith("ob="):
                obj = name(line[3:], "ob")
                continue
            if line.startswith("fn="):
                fn = name(line[3:], "fn")
                continue
            key = line.split("=", 1)[0]
            if key in ("cob", "cfn", "cfi", "cfl", "fl", "fi", "fe"):
                # file names and a callee's names: only kept for the (id) -> name table; they
                # do not change the object or function that the following self costs belong to
                name(line.split("=", 1)[1], {"cob": "ob", "cfn": "fn"}.get(key, "fl"))
                continue
            if line.startswith("calls="):
                skip_next = True
                continue
            c0 = line[0]
            if not (c0.isdigit() or c0 in "+-*"):
                continue  # fl=, fi=, fe=, summary:, totals:, ...
            fields = line.split()
            tok = fields[0]
            if tok.startswith("0x"):
                addr = int(tok, 16)
            elif tok[0] in "+-":
                addr = last_addr + int(tok, 0)
            elif tok == "*":
                addr = last_addr
            else:
                addr = int(tok, 0)
            last_addr = addr
            if skip_next:
                skip_next = False
                continue
            ir = int(fields[npos]) if len(fields) > npos else 0
            if ir:
                entry = costs.setdefault((obj, addr), [0, fn])
                entry[0] += ir
    return costs


def short_name(name):
    """A C++ function name without parameters and clone suffixes; template arguments are
    dropped too, except in Eigen's kernels, where they say which product it is."""
    name = re.sub(r" \[clone [^\]]*\]", "", name).replace("(anonymous namespace)", "{anon}")
    name = re.sub(r"^(void|auto|bool|double|int) ", "", name)
    eigen = name.startswith("Eigen::")
    if eigen:
        name = re.sub(r"Eigen::Matrix<double, (-?\d+), (-?\d+)(, \d+)*>", r"M\1x\2", name)
        name = re.sub(r"Eigen::|internal::|, ?double|<double, double>|const|(assign|sub_assign|add_assign)_op",
                      lambda m: m.group(1) or "", name).replace("M-1", "MX").replace("x-1", "xX")
    prev = None
    while prev != name:
        prev = name
        if not eigen:
            name = re.sub(r"<[^<>]*>", "", name)
        name = re.sub(r"\((?!\))[^()]*\)", "", name)  # keeps operator()
    return re.sub(r"\s+", " ", name.replace("{lambda#", "{lambda #")).replace(" >", ">").strip()


def count(callgrind_file, reps=1):
    """Counts per algorithm call (Fractions when reps does not divide them), and per function."""
    costs = parse_callgrind(callgrind_file)
    totals = {k: 0 for k in COUNT_KEYS}
    per_func = {}
    missing = 0
    for (obj, addr), (n, func) in costs.items():
        insns = disassemble(obj)
        if addr not in insns:
            missing += n
            continue
        mnem, ops = insns[addr]
        c = classify(mnem, ops)
        c["instructions"] = 1
        pf = per_func.setdefault(func, {"object": os.path.basename(obj), "instructions": 0, "flops": 0,
                                        "packed_lanes": 0})
        pf["instructions"] += n
        for k, v in c.items():
            totals[k] += n * v
            if k in ("mul", "add", "div", "sqrt"):
                pf["flops"] += n * v
            if k == "packed_lanes":
                pf["packed_lanes"] += n * v
    if missing:
        raise SystemExit(f"count_flops: {missing} executed instructions of {callgrind_file} not at an "
                         "instruction address of objdump's listing (address mapping broken)")
    totals["flops"] = totals["mul"] + totals["add"] + totals["div"] + totals["sqrt"]
    # The two parts of a call that are not the dynamics: argument checks (Model::check_*:
    # x - x == 0 finiteness tests, quaternion norms) and sin/cos of q (sincos_batch, kept out of
    # line in this build by PLUCKER_COUNT_FLOPS; src/spatial/sincos.hpp). Both by function name:
    # packed instructions are no guide, the operations layer's column blocks use them too.
    totals["checks"] = sum(d["flops"] for f, d in per_func.items() if "::check_" in short_name(f))
    totals["sincos"] = sum(d["flops"] for f, d in per_func.items() if "sincos" in short_name(f))
    totals["core"] = totals["flops"] - totals["checks"] - totals["sincos"]

    def per_call(x):
        q = Fraction(x, reps)
        return int(q) if q.denominator == 1 else float(q)

    result = {k: per_call(v) for k, v in totals.items()}
    result["objects"] = sorted({os.path.basename(obj) for obj, _ in costs})
    funcs = sorted(per_func.items(), key=lambda kv: (-kv[1]["flops"], -kv[1]["instructions"]))
    result["functions"] = [dict(name=name, **{k: (per_call(v) if k != "object" else v) for k, v in d.items()})
                           for name, d in funcs if d["flops"] or d["instructions"] * 20 >= totals["instructions"]]
    return result


# ---------------------------------------------------------------------------
# Running the driver under callgrind
# ---------------------------------------------------------------------------
def run_case(driver, args, workdir, reps=1):
    fd, out = tempfile.mkstemp(prefix="callgrind.", suffix=".out", dir=workdir)
    os.close(fd)
    cmd = ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--compress-pos=no", "--compress-strings=no",
           f"--toggle-collect={REGION}", f"--callgrind-out-file={out}", driver, *args, f"--reps={reps}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"count_flops: {' '.join(cmd)} failed:\n{p.stderr[-3000:]}")
    meta = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', p.stdout.strip().splitlines()[-1]))
    meta = {k: v.strip('"') for k, v in meta.items()}
    res = count(out, reps)
    os.unlink(out)
    return meta, res


def validate(driver, workdir):
    """The counter on kernels counted by hand; any mismatch stops the run."""
    rows = []
    for name in ("matvec3", "normalize3"):
        for reps in (1, 3):
            meta, res = run_case(driver, [f"--validate={name}"], workdir, reps)
            expect = {k: int(meta["expect_" + k]) for k in ("mul", "add", "div", "sqrt")}
            got = {k: res[k] for k in expect}
            ok = got == expect and res["packed_lanes"] == 0
            rows.append(dict(name=name, reps=reps, expect=expect, got=got, ok=ok,
                             instructions=res["instructions"]))
            print(f"validate {name:<11} reps={reps}: expected {fmt_counts(expect)}, measured "
                  f"{fmt_counts(got)} per call -> {'OK' if ok else 'MISMATCH'}")
            if not ok:
                raise SystemExit("count_flops: validation failed; the counts below would be wrong")
    return rows


# The operations layer's kernels measured one by one (plucker_flops --op=NAME), each with its
# hand count where the paper's compact forms give one (flops_report.OP_KERNELS).
OP_KERNELS = ["apply_motion", "apply_inverse_force", "apply_inverse_force_axis", "crf", "crm", "times_rigid",
              "body_force", "times_articulated", "congruence_rigid", "congruence_rigid_axis",
              "congruence_articulated", "congruence_articulated_axis"]


def measure_ops(driver, workdir):
    """Flops of each operation of the operations layer, per call (two calls in the region)."""
    rows = []
    for name in OP_KERNELS:
        _meta, res = run_case(driver, [f"--op={name}"], workdir, reps=2)
        rows.append(dict(name=name, **{k: res[k] for k in ("mul", "add", "div", "sqrt", "flops", "instructions")}))
        print(f"op {name:<28} {fmt_counts(res):<24} flops {res['flops']:>5} instructions {res['instructions']:>5}")
    return rows


def fmt_counts(c):
    return " ".join(f"{c[k]} {k}" for k in ("mul", "add", "div", "sqrt") if c[k])


# ---------------------------------------------------------------------------
# Exact least-squares fits (Fractions): flops = sum_k c_k n^k
# ---------------------------------------------------------------------------
def fit_exact(rows, basis, value="flops"):
    """Least squares value ~ sum_k c_k basis_k(row), in rational arithmetic: (coef, residuals)."""
    X = [[Fraction(b(r)) for b in basis] for r in rows]
    y = [Fraction(r[value]) for r in rows]
    m = len(basis)
    A = [[sum(x[i] * x[j] for x in X) for j in range(m)] for i in range(m)]
    b = [sum(x[i] * yy for x, yy in zip(X, y)) for i in range(m)]
    for i in range(m):  # Gauss-Jordan, exact
        piv = next(r for r in range(i, m) if A[r][i] != 0)
        A[i], A[piv], b[i], b[piv] = A[piv], A[i], b[piv], b[i]
        for r in range(m):
            if r != i and A[r][i] != 0:
                f = A[r][i] / A[i][i]
                A[r] = [a - f * c for a, c in zip(A[r], A[i])]
                b[r] -= f * b[i]
    coef = [b[i] / A[i][i] for i in range(m)]
    resid = [yy - sum(c * xx for c, xx in zip(coef, x)) for x, yy in zip(X, y)]
    return coef, resid


# name -> (basis functions, their names in the formula)
FIT_MODELS = {
    "linear": ([lambda r: r["nv"], lambda r: 1], ["n", ""]),
    "quadratic": ([lambda r: r["nv"] ** 2, lambda r: r["nv"], lambda r: 1], ["n^2", "n", ""]),
    "pairs": ([lambda r: r["pairs"], lambda r: r["nv"], lambda r: 1], ["P", "n", ""]),
}


def frac_str(q):
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{float(q):.3f}"


def formula(coef, names):
    terms = [frac_str(c) + (" " + n if n else "") for c, n in zip(coef, names)]
    return " + ".join(terms).replace("+ -", "- ")


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--driver", help="plucker_flops executable")
    ap.add_argument("--out", default="build-flops", help="directory for flops.json")
    ap.add_argument("--doc", help="write the Markdown report here (e.g. docs/flops.md)")
    ap.add_argument("--shared", default=None, help="shared data directory (default: ../shared)")
    ap.add_argument("--quick", action="store_true", help="validation and chains only")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--parse", help="count one callgrind output file and exit")
    ap.add_argument("--reps", type=int, default=1, help="with --parse: algorithm calls in the region")
    ap.add_argument("--from-json", help="only rewrite --doc from this flops.json (no runs)")
    args = ap.parse_args()

    if args.from_json:
        if not args.doc:
            ap.error("--from-json needs --doc")
        from flops_report import write_report  # bench/flops_report.py
        with open(args.from_json) as f:
            write_report(json.load(f), args.doc, short_name)
        print(f"wrote {args.doc}")
        return

    if args.parse:
        res = count(args.parse, args.reps)
        print(json.dumps(res, indent=1))
        return
    if not args.driver:
        ap.error("--driver or --parse is required")
    driver = os.path.abspath(args.driver)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = os.path.abspath(args.shared or os.environ.get("PLUCKER_SHARED_DIR") or os.path.join(root, "..", "shared"))
    os.makedirs(args.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="flops.", dir=args.out)

    print("== validation of the counter (hand-counted kernels)")
    validation = validate(driver, workdir)
    print("== the operations layer, one operation at a time")
    ops = measure_ops(driver, workdir)

    cases = []
    for family in FAMILIES:
        if args.quick and family != "chain":
            continue
        for n in SIZES:
            for algo in ALGOS:
                cases.append((family, f"{family}:{n}", algo))
    if not args.quick:
        for urdf, ff in URDFS:
            path = os.path.join(shared, "models", urdf)
            if not os.path.exists(path):
                print(f"count_flops: {path} not found, skipped")
                continue
            for algo in ALGOS:
                cases.append(("urdf", f"{'urdf-ff' if ff else 'urdf'}:{path}", algo))

    print(f"== {len(cases)} runs under callgrind")

    def one(case):
        family, spec, algo = case
        meta, res = run_case(driver, [f"--model={spec}", f"--algo={algo}"], workdir)
        label = spec.split(":", 1)[0] if family == "urdf" else family
        model = (os.path.basename(spec.split(":", 1)[1]).replace(".urdf", "") +
                 (" (free-flyer)" if spec.startswith("urdf-ff") else "")) if family == "urdf" else spec
        return dict(family=family if family != "urdf" else label, model=model, algo=algo,
                    nv=int(meta["nv"]), nq=int(meta["nq"]), nbodies=int(meta["nbodies"]),
                    pairs=int(meta["pairs"]), **res)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(one, cases))
    os.rmdir(workdir) if not os.listdir(workdir) else None

    hdr = f"{'model':<26} {'nv':>3} {'algorithm':<18} {'mul':>7} {'add':>7} {'div':>4} {'sqrt':>4} " \
          f"{'flops':>8} {'/DoF':>6} {'sincos':>6} {'checks':>6} {'core':>7} {'core/DoF':>8} {'instr':>8}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        print(f"{r['model']:<26} {r['nv']:>3} {r['algo']:<18} {r['mul']:>7} {r['add']:>7} {r['div']:>4} "
              f"{r['sqrt']:>4} {r['flops']:>8} {r['flops'] / r['nv']:>6.1f} {r['sincos']:>6} {r['checks']:>6} "
              f"{r['core']:>7} {r['core'] / r['nv']:>8.1f} {r['instructions']:>8}")

    fits = []
    for family in FAMILIES:
        for algo in ALGOS:
            pts = [r for r in rows if r["family"] == family and r["algo"] == algo]
            if len(pts) < 3:
                continue
            for kind in (("linear", "quadratic", "pairs") if algo == "crba" else ("linear",)):
                if kind == "quadratic" and family == "tree":
                    continue  # n^2 only describes the chains; P does all
                basis, names = FIT_MODELS[kind]
                for value in ("flops", "core"):
                    coef, resid = fit_exact(pts, basis, value)
                    fits.append(dict(family=family, algo=algo, kind=kind, value=value, n=[r["nv"] for r in pts],
                                     coef=[frac_str(c) for c in coef], formula=formula(coef, names),
                                     residuals=[frac_str(e) for e in resid]))
    print("== fits flops(n)")
    for f in fits:
        print(f"{f['family']:<6} {f['algo']:<19} {f['value']:<6} {f['formula']:<36} residuals {f['residuals']}")

    env = environment(driver)
    out = dict(date=env["date"], commit=env["commit"], compiler=env["compiler"], flags=env["flags"],
               valgrind=env["valgrind"], validation=validation, ops=ops, rows=rows, fits=fits)
    jpath = os.path.join(args.out, "flops.json")
    with open(jpath, "w") as f:
        json.dump(out, f, indent=1)
    print(f"wrote {jpath}")
    if args.doc:
        from flops_report import write_report  # bench/flops_report.py
        write_report(out, args.doc, short_name)
        print(f"wrote {args.doc}")


def environment(driver):
    def first_line(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True).stdout.splitlines()[0].strip()
        except (OSError, IndexError):
            return "?"
    flags = "?"
    cache = os.path.join(os.path.dirname(driver), "CMakeCache.txt")
    if os.path.exists(cache):
        vals = dict(re.findall(r"^(CMAKE_CXX_FLAGS(?:_RELEASE)?|CMAKE_CXX_COMPILER):\w+=(.*)$",
                               open(cache).read(), re.M))
        flags = (vals.get("CMAKE_CXX_FLAGS", "") + " " + vals.get("CMAKE_CXX_FLAGS_RELEASE", "")).strip()
        compiler = first_line([vals.get("CMAKE_CXX_COMPILER", "c++"), "--version"])
    else:
        compiler = first_line(["c++", "--version"])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return dict(date=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                commit=first_line(["git", "-C", root, "rev-parse", "--short", "HEAD"]),
                compiler=compiler, flags=flags, valgrind=first_line(["valgrind", "--version"]))


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main()
