"""docs/flops.md from build-flops/flops.json (called by bench/count_flops.py --doc).

Also holds the reference operation counts derived by hand from paper 000 (Featherstone &
Orin 2000, Eqs. 1-14) for a chain of revolute joints about the body z axis, link
coordinates, compact transforms X = (E, r) and 10-parameter inertias (m, h, Ibar).
"""
from fractions import Fraction

# ---------------------------------------------------------------------------
# Per-operation costs (multiplications, additions); 3x3 * 3-vector = 9m 6a, a x b = 6m 3a.
# ---------------------------------------------------------------------------
OPS = [
    ("X_J X_tree", "E = Rz(q) E_tree: rows x, y of each of 3 columns turned (4m 2a per column); r = r_tree", 12, 6),
    ("X m", "(E w, E (u - r x w)): 2 E*x, one cross, one 3-add", 24, 18),
    ("X^T f", "(E^T n + r x E^T f, E^T f): 2 E^T*x, one cross, one 3-add", 24, 18),
    ("I v", "(Ibar w + h x u, m u - h x w): Ibar*w, 2 crosses, m*u, two 3-adds", 24, 18),
    ("v x* f", "(w x n + u x f, w x f): 3 crosses, one 3-add", 18, 12),
    ("v x (e_z qd)", "(w x e_z qd, u x e_z qd) = (w_y qd, -w_x qd, 0, u_y qd, -u_x qd, 0)", 4, 0),
    ("X^T I X (rigid)", "m' = m; h1 = E^T h (9m 6a), h' = h1 + m r (3m 3a); Ibar' = E^T Ibar E (Ibar E 27m 18a, "
     "6 upper entries of E^T(Ibar E) 18m 12a) - (h1 r^T + r h'^T) (6 entries, 12m 12a) + (r.h1 + r.h') 1 "
     "(6m 5a, 3a)", 75, 59),
    ("X^T I^A X (articulated)", "I^A = [A B; B^T C] (A, C symmetric): E^T A E, E^T C E (45m 30a each), E^T B E "
     "(54m 36a); then the shift by r: B' + r x C' (18m 18a), 6 entries of A' + r x B'^T - B'' r x (24m 24a)",
     186, 138),
]
OP = {name: (m, a) for name, _, m, a in OPS}


def _sum(steps):
    return sum(m for _, m, _a in steps), sum(a for _, _m, a in steps)


# Per body i with a parent that is not the base (lambda(i) != 0), revolute about z (h_i = e_z:
# h^T f = f_z and I h = a column of I, both free).
RNEA_STEPS = [
    ("X_J X_tree", *OP["X_J X_tree"]),
    ("Eq. 3: v = X v_p + e_z qd", OP["X m"][0], OP["X m"][1] + 1),
    ("Eq. 4: a = X a_p + v x e_z qd + e_z qdd", OP["X m"][0] + OP["v x (e_z qd)"][0], OP["X m"][1] + 4 + 1),
    ("Eq. 5: f = I a + v x* I v", 2 * OP["I v"][0] + OP["v x* f"][0], 2 * OP["I v"][1] + OP["v x* f"][1] + 6),
    ("Eq. 8: tau = e_z^T f", 0, 0),
    ("Eq. 7: f_p += X^T f", OP["X^T f"][0], OP["X^T f"][1] + 6),
]
CRBA_BODY_STEPS = [
    ("X_J X_tree", *OP["X_J X_tree"]),
    ("f^C_i = I^C_i e_z, M_ij = e_z^T f^C_j", 0, 0),
    ("Eq. 9: I^C_p += X^T I^C_i X", OP["X^T I X (rigid)"][0], OP["X^T I X (rigid)"][1] + 10),
]
CRBA_PAIR_STEPS = [("f^C_j(lambda(i)) = X^T f^C_j(i), per j in nu(i)", *OP["X^T f"])]
ABA_STEPS = [
    ("X_J X_tree", *OP["X_J X_tree"]),
    ("pass 1: v = X v_p + e_z qd", OP["X m"][0], OP["X m"][1] + 1),
    ("pass 1: c = v x e_z qd", *OP["v x (e_z qd)"]),
    ("pass 1: p^A = v x* I v", OP["I v"][0] + OP["v x* f"][0], OP["I v"][1] + OP["v x* f"][1]),
    ("pass 2: U = I^A e_z, D = U_z, u = tau - p_z, 1/D (+1 div)", 0, 1),
    ("Eq. 12: I^a = I^A - U (U/D)^T (21 entries)", 6 + 21, 21),
    ("Eq. 13: p^a = p^A + I^a c + U u/D (c has 4 nonzeros)", 24 + 1 + 6, 18 + 6 + 6),
    ("Eq. 12: I^A_p += X^T I^a X", OP["X^T I^A X (articulated)"][0], OP["X^T I^A X (articulated)"][1] + 21),
    ("Eq. 12: p^A_p += X^T p^a", OP["X^T f"][0], OP["X^T f"][1] + 6),
    ("pass 3: a' = X a_p + c", OP["X m"][0], OP["X m"][1] + 4),
    ("Eq. 14: qdd = (u - U^T a') / D", 6 + 1, 5 + 1),
    ("pass 3: a = a' + e_z qdd", 0, 1),
]
ABA_DIV = 1


def reference_slope(algo):
    """Derived flops per additional body of a long chain (None: not derived)."""
    if algo == "rnea":
        return sum(_sum(RNEA_STEPS))
    if algo == "aba":
        return sum(_sum(ABA_STEPS)) + ABA_DIV
    return None


def crba_reference(n):
    """Derived CRBA flops on an n-body chain: every body its X, bodies 2..n Eq. 9, and
    sum_{i=2..n} (n - i + 1) = n(n-1)/2 force transforms."""
    x = sum(OP["X_J X_tree"])
    body = sum(_sum(CRBA_BODY_STEPS[1:]))
    pair = sum(_sum(CRBA_PAIR_STEPS))
    return x * n + body * (n - 1) + pair * n * (n - 1) // 2


def crba_reference_poly():
    """(c2, c1, c0) of crba_reference(n) = c2 n^2 + c1 n + c0."""
    x = sum(OP["X_J X_tree"])
    body = sum(_sum(CRBA_BODY_STEPS[1:]))
    pair = sum(_sum(CRBA_PAIR_STEPS))
    return Fraction(pair, 2), x + body - Fraction(pair, 2), -body


# ---------------------------------------------------------------------------
# The document
# ---------------------------------------------------------------------------
def _row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _steps_table(steps, extra=None):
    lines = [_row(["step", "mul", "add"]), _row(["---", "---:", "---:"])]
    for name, m, a in steps:
        lines.append(_row([name, m, a]))
    m, a = _sum(steps)
    lines.append(_row(["**total per body**" + (f" (+ {extra})" if extra else ""), f"**{m}**", f"**{a}**"]))
    return "\n".join(lines)


def _fit(data, family, algo, degree):
    for f in data["fits"]:
        if f["family"] == family and f["algo"] == algo and f["degree"] == degree:
            return f
    return None


def _num(x):
    return f"{x:,}" if isinstance(x, int) else f"{x:,.1f}"


def write_report(data, path):
    rows = data["rows"]
    L = []
    w = L.append
    w("# Floating-point operations per call (measured)\n")
    w("Issue 5 asked for flops per DoF, measured, against Featherstone's operation counts. "
      "Generated by `make flops` (bench/count_flops.py, bench/flops_report.py); do not edit by hand.\n")
    w(f"- date: {data['date']}")
    w(f"- compiler: {data['compiler']}")
    w(f"- flags: `{data['flags']}` (no `-march`: the default x86-64 target, SSE2, no FMA)")
    w(f"- {data['valgrind']}\n")

    w("## Method\n")
    w("This machine has no hardware performance counters (`perf` offers software events only), and "
      "valgrind's lackey tool sees scalar SSE arithmetic as 128-bit vector IR, so it cannot count "
      "flops. The operations are counted from the instructions instead:\n")
    w("1. `build-flops/` is a Release build (`-O3`) with `-DEIGEN_DONT_VECTORIZE -fno-tree-vectorize "
      "-fno-tree-slp-vectorize` and no `-march`, so that the compiler emits one scalar SSE2 instruction "
      "(`mulsd`, `addsd`, `subsd`, `divsd`, `sqrtsd`) per floating-point operation.")
    w("2. `plucker_flops` (bench/flops_driver.cpp) builds the model and one random state, runs the "
      "algorithm once as a warm-up, then calls it once inside the `noinline` function "
      "`plucker_flops_region`.")
    w("3. `valgrind --tool=callgrind --dump-instr=yes --toggle-collect=*plucker_flops_region*` "
      "records the execution count of every instruction address executed inside that function, "
      "callees included (libplucker is linked statically; libm, libstdc++ and libc appear as their "
      "own objects, with addresses relative to their load address).")
    w("4. `objdump -d` of each object gives the instruction at each address (every executed address "
      "must be an instruction start of the listing, or the run stops). mul = `mulsd`; add = `addsd` + "
      "`subsd`; div = `divsd`; sqrt = `sqrtsd`; packed instructions (`*pd`, `*ps`) count once per lane "
      "(reported in the `packed` column); an FMA would count as one mul and one add. Sign flips "
      "(`xorpd`), `andpd`, comparisons and conversions are not flops and are reported separately in "
      "flops.json. flops = mul + add + div + sqrt.\n")
    w("The counts are exact for the state drawn (they depend on the state only through branches: "
      "none in these algorithms for revolute chains, apart from the range check of the vectorised "
      "sin/cos).\n")
    w("**Validation** (re-run by every `make flops`; a mismatch stops it): the counter on two "
      "kernels counted by hand, called 1 and 3 times in the region.\n")
    w(_row(["kernel", "calls", "expected per call", "measured per call", ""]))
    w(_row(["---", "---:", "---", "---", "---"]))
    for v in data["validation"]:
        fmt = lambda c: ", ".join(f"{c[k]} {k}" for k in ("mul", "add", "div", "sqrt") if c[k])
        w(_row([v["name"], v["reps"], fmt(v["expect"]), fmt(v["got"]), "OK" if v["ok"] else "MISMATCH"]))
    w("\n`matvec3` is a 3x3 matrix times a 3-vector (9 mul, 6 add); `normalize3` is x / |x| "
      "(3 mul, 2 add, 1 sqrt, 3 div).\n")

    w("## Results\n")
    w("Per call. n = nv (DoF). `packed`: operations done in 2-lane SSE2 instructions (already "
      "included in mul/add), see below. `instr`: all instructions executed in the region.\n")
    w(_row(["model", "n", "algorithm", "mul", "add", "div", "sqrt", "flops", "flops/DoF", "packed", "instr"]))
    w(_row(["---", "---:", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]))
    for r in rows:
        w(_row([r["model"], r["nv"], r["algo"], _num(r["mul"]), _num(r["add"]), r["div"], r["sqrt"],
                _num(r["flops"]), f"{r['flops'] / r['nv']:.1f}", _num(r["packed_lanes"]),
                _num(r["instructions"])]))
    w("\nchain:n = `build_chain(n)` (revolute joints about body z and y alternately, small random "
      "joint-frame rotations); tree:n = `build_random_tree(n, 2, 0, 1)` (binary tree, revolute z). "
      "URDF models from ../shared/models; (free-flyer) = a 6-DoF free-flyer root joint.\n")

    w("## Fits over n\n")
    w("Exact least squares (rational arithmetic) over n = " +
      ", ".join(str(n) for n in sorted({r['nv'] for r in rows if r['family'] == 'chain'})) +
      "; the residuals are exact (flops).\n")
    w(_row(["family", "algorithm", "fit", "residuals"]))
    w(_row(["---", "---", "---", "---"]))
    for f in data["fits"]:
        w(_row([f["family"], f["algo"], f"`{f['formula']}`", ", ".join(f["residuals"])]))
    w("")

    w("## Where the flops go\n")
    for algo in ("rnea", "crba", "aba"):
        big = [r for r in rows if r["family"] == "chain" and r["algo"] == algo]
        if not big:
            continue
        r = max(big, key=lambda r: r["nv"])
        w(f"**{algo}, {r['model']}** ({_num(r['flops'])} flops, {_num(r['instructions'])} instructions): "
          "by function (inlined code counts in the function it was inlined into)\n")
        w(_row(["function", "object", "flops", "packed", "instructions"]))
        w(_row(["---", "---", "---:", "---:", "---:"]))
        for fn in r["functions"][:8]:
            name = fn["name"] if len(fn["name"]) <= 90 else fn["name"][:87] + "..."
            w(_row([f"`{name}`", fn["object"], _num(fn["flops"]), _num(fn["packed_lanes"]),
                    _num(fn["instructions"])]))
        w("")

    w("## Reference: Featherstone's algorithms, counted by hand\n")
    w("**Published counts.** RBDA (Featherstone 2008, ch. 10) and the Featherstone & Orin handbook "
      "chapter tabulate operation counts of these algorithms; I searched the stored reference material "
      "for those tables and did not find them, so no published number is quoted here. The reference "
      "below is derived by hand from the algorithms as written in paper 000 (Featherstone & Orin, "
      "\"Robot Dynamics: Equations and Algorithms\", ICRA 2000; ../shared/papers/000_*.txt): RNEA "
      "Eqs. 1-8 in link coordinates, CRBA Eqs. 9-10 (the paper's link-coordinate listing), ABA "
      "Eqs. 11-14, for a chain of revolute joints about the body z axis, with compact Plücker "
      "transforms X = (E, r) (rotation E, translation r) and 10-parameter inertias I = (m, h = m c, "
      "Ibar about the body origin). h_i = e_z makes h^T f (= f_z) and I h (a column of I) free; "
      "sin/cos of q are not counted (a library call in the paper's setting).\n")
    w("Per-operation costs (m = multiplications, a = additions/subtractions):\n")
    w(_row(["operation", "how", "m", "a"]))
    w(_row(["---", "---", "---:", "---:"]))
    for name, how, m, a in OPS:
        w(_row([f"`{name}`", how, m, a]))
    w("\n**RNEA** (Eqs. 3-8), per body whose parent is not the base:\n")
    w(_steps_table(RNEA_STEPS))
    w("\n**CRBA** (Eqs. 9-10), chain of n bodies: per body, and per pair (i, j in nu(i)) of the "
      "force-transform loop:\n")
    w(_steps_table(CRBA_BODY_STEPS))
    w("")
    w(_steps_table(CRBA_PAIR_STEPS).replace("total per body", "total per pair"))
    c2, c1, c0 = crba_reference_poly()
    w(f"\nTotal: 18 n (X of every body) + {sum(_sum(CRBA_BODY_STEPS[1:]))} (n - 1) + "
      f"{sum(_sum(CRBA_PAIR_STEPS))} n(n - 1)/2 = **{poly_str_frac([c0, c1, c2])}** flops.\n")
    w("**ABA** (Eqs. 11-14), per body whose parent is not the base:\n")
    w(_steps_table(ABA_STEPS, extra="1 div"))
    w("")

    w("### Measured / derived\n")
    w("Slopes (flops per additional body) of the chain fits against the derived per-body counts; "
      "for the CRBA the n^2 and n coefficients of the quadratic fit.\n")
    w(_row(["algorithm", "measured (chain fit)", "derived", "measured / derived"]))
    w(_row(["---", "---:", "---:", "---:"]))
    for algo in ("rnea", "aba"):
        f = _fit(data, "chain", algo, 1)
        if f:
            slope = Fraction(f["coef"][1]) if "." not in f["coef"][1] else float(f["coef"][1])
            ref = reference_slope(algo)
            w(_row([f"{algo} (per body)", f["coef"][1], ref, f"{float(slope) / ref:.2f}"]))
    f = _fit(data, "chain", "crba", 2)
    if f:
        for k, label, ref in ((2, "n^2", c2), (1, "n", c1)):
            w(_row([f"crba ({label} coefficient)", f["coef"][k], frac(ref), f"{float(Fraction(f['coef'][k])) / float(ref):.2f}"]))
        for r in rows:
            if r["family"] == "chain" and r["algo"] == "crba" and r["nv"] == max(f["n"]):
                ref = crba_reference(r["nv"])
                w(_row([f"crba (total, n = {r['nv']})", _num(r["flops"]), _num(ref), f"{r['flops'] / ref:.2f}"]))
    w("")
    w(ANALYSIS)
    with open(path, "w") as fh:
        fh.write("\n".join(L).rstrip() + "\n")


def frac(q):
    q = Fraction(q)
    return str(q.numerator) if q.denominator == 1 else f"{float(q):.1f}"


def poly_str_frac(coef):
    terms = []
    for k in range(len(coef) - 1, -1, -1):
        terms.append(frac(coef[k]) + ("" if k == 0 else " n" if k == 1 else f" n^{k}"))
    return " + ".join(terms).replace("+ -", "- ")


ANALYSIS = """### Why the measured counts differ

(filled in below)
"""
