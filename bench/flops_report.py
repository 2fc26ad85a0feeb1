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

# The operations layer's kernels as measured by plucker_flops --op (bench/count_flops.py), with
# the hand count of the same operation where the compact forms above give it: (what, m, a) or
# (what, None, None). "+=" kernels add their result into the target (the entries added).
OP_KERNELS = {
    "apply_motion": ("X m, general E", *OP["X m"]),
    "apply_inverse_force": ("X^T f, general E", *OP["X^T f"]),
    "apply_inverse_force_axis": ("X^T f, E a plane rotation about z: E^T turns two rows of n and f "
                                 "(4m 2a each), r x f' + n (6m 6a)", 14, 10),
    "crf": ("v x* f", *OP["v x* f"]),
    "crm": ("v x m: (w x w', w x u' + u x w')", 18, 12),
    "times_rigid": ("I v, rigid (m, h, Ibar)", *OP["I v"]),
    "body_force": ("I a + v x* I v (Eq. 5)", 2 * OP["I v"][0] + OP["v x* f"][0],
                   2 * OP["I v"][1] + OP["v x* f"][1] + 6),
    "times_articulated": ("I^A c, I^A a symmetric 6x6, c general", 36, 30),
    "congruence_rigid": ("I_p += X^T I X (Eq. 9), general E; 10 entries added",
                         OP["X^T I X (rigid)"][0], OP["X^T I X (rigid)"][1] + 10),
    "congruence_rigid_axis": ("the same, E a plane rotation about z", None, None),
    "congruence_articulated": ("I^A_p += X^T I^a X (Eq. 12), general E; 21 entries added",
                               OP["X^T I^A X (articulated)"][0], OP["X^T I^A X (articulated)"][1] + 21),
    "congruence_articulated_axis": ("the same, E a plane rotation about z", None, None),
}


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


def congruence_note(ops):
    """Whether the two congruences come in under, at or over their hand counts (the numbers are
    in the sentence before)."""
    notes = []
    for name, what in (("congruence_rigid", "Eq. 9's rigid congruence"),
                       ("congruence_articulated", "Eq. 12's articulated one")):
        m, a = OP_KERNELS[name][1:]
        if name in ops and m is not None:
            ref = m + a
            rel = "under" if ops[name] < ref else "over" if ops[name] > ref else "at"
            notes.append(f"{what} comes in {rel} its hand count")
    return (" " + "; ".join(notes) + ".") if notes else ""


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


def _fit(data, family, algo, kind, value):
    for f in data["fits"]:
        if (f["family"], f["algo"], f["kind"], f["value"]) == (family, algo, kind, value):
            return f
    return None


def _num(x):
    return f"{x:,}" if isinstance(x, int) else f"{x:,.1f}"


def _q(s):
    return Fraction(s) if "." not in s else Fraction(s).limit_denominator(1000)


def _per_body_by_function(rows, algo, short_name):
    """flops per additional body by function: (f(n2) - f(n1)) / (n2 - n1) over the two largest chains."""
    chain = sorted((r for r in rows if r["family"] == "chain" and r["algo"] == algo), key=lambda r: r["nv"])
    if len(chain) < 2:
        return []
    r1, r2 = chain[-2], chain[-1]

    def by_name(r):
        out = {}
        for f in r["functions"]:
            k = short_name(f["name"])
            out[k] = out.get(k, 0) + f["flops"]
        return out
    a, b = by_name(r1), by_name(r2)
    d = r2["nv"] - r1["nv"]
    slopes = [(k, Fraction(b.get(k, 0) - a.get(k, 0), d)) for k in set(a) | set(b)]
    return sorted([x for x in slopes if x[1]], key=lambda x: -x[1])


def write_report(data, path, short_name):
    rows = data["rows"]
    L = []
    w = L.append
    w("# Floating-point operations per call (measured)\n")
    w("Issue 5 asked for flops per DoF, measured, against Featherstone's operation counts. "
      "Generated by `make flops` (bench/count_flops.py, bench/flops_report.py); do not edit by hand.\n")
    w(f"- date: {data['date']}, source commit {data.get('commit', '?')}")
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
    w("3. `valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no "
      "--toggle-collect=*plucker_flops_region*` records the execution count of every instruction "
      "executed inside that function, callees included: libplucker (linked statically into the "
      "non-PIE driver) and any shared library (listed by callgrind as its own object, with addresses "
      "relative to its load address, as objdump prints them). The cost line after each `calls=` line "
      "is the callee's inclusive cost and is skipped, so every instruction is counted once.")
    w("4. `objdump -d` of each object gives the instruction at each address; every executed address "
      "must be an instruction start of the listing, or the run stops. mul = `mulsd`; add = `addsd` + "
      "`subsd`; div = `divsd`; sqrt = `sqrtsd`; a packed instruction (`*pd`, `*ps`) counts once per "
      "lane; an FMA would count as one mul and one add. Sign flips and masks (`xorpd`, `andpd`), "
      "comparisons and conversions are not flops (their counts are in flops.json). "
      "flops = mul + add + div + sqrt.\n")
    objects = sorted({o for r in rows for o in r["objects"]})
    libm = [o for o in objects if o.startswith("libm")]
    per_coord = sorted({Fraction(r["sincos"], r["nq"]) for r in rows if r["nq"]})
    w("Objects whose code ran inside the regions: "
      + ", ".join(f"`{o}`" for o in objects) + ". "
      + ("libm's sin/cos ran in some regions and are counted like everything else. " if libm else
         "No libm code ran: the algorithms take sin/cos of q from plucker's own vectorised kernel "
         "(src/spatial/sincos.hpp), which calls libm only for |q| >= 1e5. ")
      + "That kernel (2-lane SSE2 GCC vector extensions, which the no-vectorisation flags do not "
      "remove) is kept out of line in this build (`PLUCKER_COUNT_FLOPS`), and its operations are "
      "reported as `sin/cos` below, padding lanes included (in these runs "
      + " / ".join(frac(k) for k in per_coord) + " per coordinate of q). Packed instructions are "
      "counted once per lane; besides the kernel, the operations layer's column blocks (the CRBA's "
      "X^T f on two columns at once) use them. `checks`: the flops of the argument checks "
      "(`Model::check_configuration`, `check_tangent`: finiteness tests as x - x, quaternion norms). "
      "`core` = flops - sin/cos - checks: the dynamics proper, which is what the hand count below "
      "covers.\n")
    w("The counts are exact for the state drawn. They can depend on the state only through branches; "
      "in these algorithms the branches follow the model (joint types, tree), apart from the range "
      "test of the sin/cos kernel.\n")
    w("**Validation** (re-run by every `make flops`; a mismatch stops it): the counter on two "
      "kernels counted by hand, called 1 and 3 times in the region.\n")
    w(_row(["kernel", "calls", "expected per call", "measured per call", ""]))
    w(_row(["---", "---:", "---", "---", "---"]))
    for v in data["validation"]:
        fmt = lambda c: ", ".join(f"{c[k]} {k}" for k in ("mul", "add", "div", "sqrt") if c[k])
        w(_row([v["name"], v["reps"], fmt(v["expect"]), fmt(v["got"]), "OK" if v["ok"] else "MISMATCH"]))
    w("\n`matvec3` is a 3x3 matrix times a 3-vector (9 mul, 6 add); `normalize3` is x / |x| "
      "(3 mul, 2 add, 1 sqrt, 3 div).\n")

    if data.get("ops"):
        w("**The operations layer, one operation at a time** (`plucker_flops --op=NAME`: the "
          "operation of src/spatial/ops.hpp / inertia_ops.hpp as the recursions instantiate it on "
          "double, in an out-of-line wrapper; the recursions inline them, so the algorithms' rows "
          "below cannot be split by function). Derived: the compact forms of the table at the end.\n")
        w(_row(["operation", "what", "mul", "add", "flops", "derived (m, a)", "derived flops"]))
        w(_row(["---", "---", "---:", "---:", "---:", "---", "---:"]))
        for o in data["ops"]:
            what, m, a = OP_KERNELS.get(o["name"], ("", None, None))
            w(_row([f"`{o['name']}`", what, o["mul"], o["add"], o["flops"],
                    f"{m}m {a}a" if m is not None else "-", m + a if m is not None else "-"]))
        w("")

    w("## Results\n")
    w("Per call; n = nv (DoF).\n")
    w(_row(["model", "n", "algorithm", "mul", "add", "div", "sqrt", "flops", "flops/DoF", "sin/cos",
            "checks", "core/DoF", "instructions"]))
    w(_row(["---", "---:", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"]))
    for r in rows:
        w(_row([r["model"], r["nv"], r["algo"], _num(r["mul"]), _num(r["add"]), r["div"], r["sqrt"],
                _num(r["flops"]), f"{r['flops'] / r['nv']:.1f}", _num(r["sincos"]), _num(r["checks"]),
                f"{r['core'] / r['nv']:.1f}", _num(r["instructions"])]))
    w("\nchain:n = `build_chain(n)` (revolute joints about body z and y alternately, small random "
      "joint-frame rotations); tree:n = `build_random_tree(n, 2, 0, 1)` (binary tree, parent(i) = "
      "floor(i/2), revolute z, pure-translation X_tree, numbered breadth-first); axischain:n = "
      "`build_random_tree(n, 1, 0, 1)` (a chain of revolute-z joints with pure-translation X_tree, "
      "numbered depth-first). URDF models from ../shared/models; (free-flyer) = a 6-DoF free-flyer "
      "root joint (its 6 DoF belong to one body, so the per-DoF figures drop). "
      "crba = `crba(q)`, the full symmetric M (the lower triangle costs writes, no flops); "
      "nonlinear_effects = rnea with qdd = 0, gravity_torques = rnea with v = qdd = 0, "
      "forward_kinematics = poses, velocities and accelerations (q, v, a).\n")

    w("## Fits over n\n")
    w("Exact least squares (rational arithmetic) over n = " +
      ", ".join(str(n) for n in sorted({r['nv'] for r in rows if r['family'] == 'chain'})) +
      "; the residuals are exact, in flops. P = the number of (DoF, ancestor DoF) pairs (the nonzeros of "
      "M's strict lower triangle): n(n - 1)/2 for a chain, sum floor(log2 i) for the binary tree.\n")
    w(_row(["family", "algorithm", "counted", "fit", "residuals"]))
    w(_row(["---", "---", "---", "---", "---"]))
    for f in data["fits"]:
        w(_row([f["family"], f["algo"], "all" if f["value"] == "flops" else "core", f"`{f['formula']}`",
                ", ".join(f["residuals"])]))
    w("")

    w("## Per body, by function\n")
    w("Flops per additional body of the chain ((flops at n = 64 - flops at n = 32) / 32), by the function "
      "that executed them (inlined code counts in the function it was inlined into).\n")
    for algo in ("rnea", "aba", "forward_kinematics"):
        slopes = _per_body_by_function(rows, algo, short_name)
        if not slopes:
            continue
        w(f"**{algo}**\n")
        w(_row(["function", "flops per body"]))
        w(_row(["---", "---:"]))
        for name, sl in slopes:
            w(_row([f"`{name}`", frac(sl)]))
        w("")

    w("## Reference: Featherstone's algorithms, counted by hand\n")
    w("**Published counts.** RBDA (Featherstone 2008, ch. 10) and the Featherstone & Orin handbook "
      "chapter tabulate operation counts of these algorithms. I searched the reference material available "
      "to me for those tables and did not find them, so no published number is quoted here. The reference "
      "below is derived by hand from the algorithms as written in paper 000 (Featherstone & Orin, "
      "\"Robot Dynamics: Equations and Algorithms\", ICRA 2000; ../shared/papers/000_*.txt): RNEA "
      "Eqs. 1-8 in link coordinates, CRBA Eqs. 9-10 (the paper's link-coordinate listing), ABA "
      "Eqs. 11-14 in link coordinates, for a chain of revolute joints about the body z axis, with compact "
      "Plücker transforms X = (E, r) (rotation E, translation r) and 10-parameter inertias I = (m, h = m c, "
      "Ibar about the body origin). h_i = e_z makes h^T f (= f_z) and I h (a column of I) free. "
      "sin/cos of q are not counted, nor are argument checks; compare with the `core` counts.\n")
    w("Per-operation costs (m = multiplications, a = additions/subtractions; a 3x3 matrix times a "
      "3-vector is 9m 6a, a cross product 6m 3a):\n")
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
    w(f"\nTotal over the chain: 18 n (X of every body) + {sum(_sum(CRBA_BODY_STEPS[1:]))} (n - 1) "
      f"(Eq. 9 for bodies 2..n) + {sum(_sum(CRBA_PAIR_STEPS))} n(n - 1)/2 = "
      f"**{poly_str_frac([c0, c1, c2])}** flops.\n")
    w("**ABA** (Eqs. 11-14), per body whose parent is not the base:\n")
    w(_steps_table(ABA_STEPS, extra="1 div"))
    w("")

    w("### Measured / derived\n")
    w("Per-body slopes of the chain fits (core: without sin/cos and argument checks; all: everything) "
      "against the derived per-body counts; for the CRBA the coefficients of the quadratic fit.\n")
    w(_row(["quantity", "measured, core", "measured, all", "derived", "core / derived", "all / derived"]))
    w(_row(["---", "---:", "---:", "---:", "---:", "---:"]))

    def line(label, core, total, ref):
        w(_row([label, frac(core), frac(total), frac(ref), f"{float(core) / float(ref):.2f}",
                f"{float(total) / float(ref):.2f}"]))
    for algo in ("rnea", "aba"):
        fc, fa = _fit(data, "chain", algo, "linear", "core"), _fit(data, "chain", algo, "linear", "flops")
        if fc and fa:
            line(f"{algo}: flops per body", _q(fc["coef"][0]), _q(fa["coef"][0]), reference_slope(algo))
    fc, fa = _fit(data, "chain", "crba", "quadratic", "core"), _fit(data, "chain", "crba", "quadratic", "flops")
    if fc and fa:
        line("crba: n^2 coefficient", _q(fc["coef"][0]), _q(fa["coef"][0]), c2)
        line("crba: n coefficient", _q(fc["coef"][1]), _q(fa["coef"][1]), c1)
        for r in rows:
            if r["family"] == "chain" and r["algo"] == "crba" and r["nv"] == max(fc["n"]):
                line(f"crba: total at n = {r['nv']}", r["core"], r["flops"], crba_reference(r["nv"]))
    w("")
    analysis(data, short_name, w)
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


def analysis(data, short_name, w):
    rows = data["rows"]

    def row(model, algo):
        return next((r for r in rows if r["model"] == model and r["algo"] == algo), None)

    def slope(algo, value="core"):
        f = _fit(data, "chain", algo, "linear", value)
        return _q(f["coef"][0]) if f else None

    big = max((r["nv"] for r in rows if r["family"] == "chain"), default=None)
    if big is None:
        return
    chain = f"chain:{big}"
    rn, ab = row(chain, "rnea"), row(chain, "aba")
    w("### Why the measured counts differ\n")
    ops = {o["name"]: o["flops"] for o in data.get("ops", [])}

    def kernel(name):
        """(measured flops, derived flops or None) of an operations-layer kernel."""
        _what, m, a = OP_KERNELS[name]
        return ops.get(name), (m + a if m is not None else None)

    w(f"- **sin/cos of q**: {frac(Fraction(rn['sincos'], rn['nq']))} flops per coordinate, for every "
      "algorithm (the 2-lane polynomial kernel of src/spatial/sincos.hpp: Cody-Waite range reduction and "
      "fdlibm's degree-13/14 polynomials), padding lanes included. The paper's algorithms take sin/cos "
      "as given.")
    w(f"- **argument checks**: {frac(Fraction(rn['checks'], rn['nv']))} flops per DoF for rnea "
      "(finiteness of q, v and qdd, each `x - x`), counted as subtractions though they are tests.")
    if ops:
        bad = [n for n in OP_KERNELS if n in ops and kernel(n)[1] is not None and ops[n] != kernel(n)[1]]
        same = [n for n in OP_KERNELS if n in ops and kernel(n)[1] is not None and ops[n] == kernel(n)[1]]
        w("- **the operations**: " + (", ".join(f"`{n}`" for n in same) + " take exactly their hand counts"
          if same else "no operation takes exactly its hand count")
          + ("; " + ", ".join(f"`{n}` {ops[n]} against {kernel(n)[1]}" for n in bad) if bad else "")
          + " (table above)."
          + congruence_note(ops))
    r_ref = reference_slope("rnea")
    rnea_ops = None
    if all(n in ops for n in ("apply_motion", "body_force", "apply_inverse_force")):
        rnea_ops = 2 * ops["apply_motion"] + ops["body_force"] + ops["apply_inverse_force"]
    w(f"- **RNEA**: {frac(slope('rnea'))} core flops per body against {r_ref} derived "
      f"(ratio {float(slope('rnea')) / r_ref:.3f}). Per body src/algorithms/rnea.cpp applies two motion "
      "transforms (Eqs. 3-4), one body force (Eq. 5) and one force transform (Eq. 7)"
      + (f", {rnea_ops} flops measured one by one" if rnea_ops is not None else "")
      + "; the rest is X_J X_tree, the joint terms S qd and v x S qd (the velocity product is added to "
      "all three components of each 3-vector, one of them a zero, where the hand count adds two) and "
      "the parent's accumulation.")
    c2, c1, _ = crba_reference_poly()
    fq = _fit(data, "chain", "crba", "quadratic", "core")
    if fq:
        w(f"- **CRBA**: the n^2 coefficient is {fq['coef'][0]} measured and {frac(c2)} derived: one force "
          "transform X^T f (24m 18a) per (body, ancestor) pair, the paper's inner loop "
          "f^C_j(lambda(i)) = X^T f^C_j(i) (src/algorithms/crba.cpp moves the block of a subtree's columns "
          "through one transform, src/spatial/columns.hpp; the operations per column are the same). The "
          f"n coefficient is {fq['coef'][1]} against {frac(c1)} (X_J X_tree and Eq. 9 per body). On the "
          "binary tree the pair count P replaces n(n - 1)/2 (see the P fits): branch-induced sparsity, no "
          "work for the zero blocks of M.")
    fx = _fit(data, "axischain", "crba", "quadratic", "core")
    fp = _fit(data, "axischain", "crba", "pairs", "core")
    if fx and fp:
        cr, cra = ops.get("congruence_rigid"), ops.get("congruence_rigid_axis")
        w(f"- **CRBA, plane-rotation path** (axischain: every X_tree a pure translation, every joint about "
          f"body z; 39 of talos_full's 45 joints and all of solo12's are of this kind): X_up = (rot_z(q), r), "
          "a transform type of its own (`AxisTransform`), so the operations overload on it: E^T turns only "
          "two rows of n and f (8m 4a per column) and n += r x f' costs 6m 6a, 24 flops per (body, "
          f"ancestor) pair instead of 42. Measured: {fp['formula']} (core), n^2 coefficient {fx['coef'][0]}."
          + (f" Eq. 9 on this transform measures {cra} flops against {cr} for a general rotation." if cr and cra
             else ""))
    a_ref = reference_slope("aba")
    ca, ca_ref = kernel("congruence_articulated")
    w(f"- **ABA**: {frac(slope('aba'))} core flops per body against {a_ref} derived "
      f"(ratio {float(slope('aba')) / a_ref:.2f}). The articulated inertias are held by their 21 distinct "
      "entries (`ArticulatedT`, src/spatial/inertia_ops.hpp), so that Eqs. 12-13 use the structure the hand "
      "count uses:")
    if ca is not None:
        w(f"  - Eq. 12's I^A_p += X^T I^a X (`add_congruence` on packed inertias): {ca} flops against "
          f"{ca_ref}: E^T A E and E^T C E by their six entries, of the symmetric A' its upper triangle, the 21 "
          "entries accumulated;")
    w("  - the rank-1 update I^A - (U D^-1) U^T (`subtract_symmetric_products`): the 21 distinct entries;")
    w("  - I^a c (`times_velocity_product`): the columns of I^a where c = v x e_k qd is zero are skipped.")
    if rn["instructions"]:
        w(f"- **instructions per flop** ({chain}): rnea {rn['instructions'] / rn['flops']:.2f}, "
          f"aba {ab['instructions'] / ab['flops']:.2f}, crba {row(chain, 'crba')['instructions'] / row(chain, 'crba')['flops']:.2f} "
          "(loads, stores, shuffles, index arithmetic and the joint-type dispatch: a flop count says little "
          "about time on its own; see docs/benchmarks.md for timings).")
    w("- **free-flyer models**: the six DoF of the root share one body (one transform, one inertia), so "
      "the flops per DoF drop; the ABA's 6x6 D = S^T I^A S of the free-flyer is inverted by an LLT, "
      "whence its 6 square roots and extra divisions.")
    w("- **vectorised builds** (`make bench`, `-march=native`) were not measured: there the library uses "
      "4-lane products in places (the AVX2 forms of src/spatial/vec3.hpp) and Eigen's SIMD, whose padding "
      "lanes would count as "
      "operations; these counts are those of the scalar build.")
