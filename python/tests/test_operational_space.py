"""plucker.operational_space: Khatib's operational-space quantities (J, Jdot_v, Lambda,
Lambda_inv, Jbar, N, bias) by the dense, sparse, recursive and EFPA methods, and the named
functions operational_space_inertia, dynamically_consistent_inverse, task_null_space_projector,
operational_space_bias; damping; the auto choice.

Evidence, not assertion: the identities Lambda Lambda^-1 = I, J Jbar = I, N^2 = N, J N = 0 and
N M^-1 = M^-1 N^T; Lambda^-1 against J minv(q) J^T; the operational-space equation closed through
plucker.aba; Jdot_v against central differences of J(q(t)) v; the two task frames related by the
frame's rotation; row subsets; Featherstone's (1997) load independence of Jbar; errors.

Tolerances: relative, C * eps * cond with C = 100 and cond = cond(M) + cond(Lambda^-1) (the
first-order error of a product through M^-1 and Lambda; cond(M) alone for Lambda^-1); finite differences with h = 1e-5 to
1e-7 (1 + |Jdot_v|) (truncation h^2 and rounding eps / h are both below 1e-9 here).
"""
import numpy as np
import pytest

import plucker
from conftest import load_quiet, requires_models, zoo

C = 100.0
EPS = np.finfo(float).eps

HUMANOID_TASKS = ["l_sole", ("r_sole", "all"), ("l_hand_tip", "position"), ("head", "orientation")]


def cond(A):
    w = np.linalg.eigvalsh(A)
    return w[-1] / w[0]


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b), 1e-300)


def arm_urdf(tool_mass=0.3, n=7):
    """A serial arm of n revolute joints (axes z, y, x in turn) and a tool link (fixed joint: merged
    into the last body, so its mass is a payload on it) with the given mass."""
    axes = ["0 0 1", "0 1 0", "1 0 0"]
    links = ['<link name="base"><inertial><mass value="3"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" '
             'iyz="0" izz="0.1"/></inertial></link>']
    joints = []
    parent = "base"
    for k in range(n):
        links.append(f'<link name="l{k}"><inertial><origin xyz="0 0 0.15"/><mass value="{1.5 - 0.1 * k}"/>'
                     f'<inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.025" iyz="0.002" izz="0.01"/></inertial></link>')
        joints.append(f'<joint name="j{k}" type="revolute"><parent link="{parent}"/><child link="l{k}"/>'
                      f'<origin xyz="0.02 0 {0.3 if k else 0.1}" rpy="0.1 0 0.2"/><axis xyz="{axes[k % 3]}"/>'
                      '<limit lower="-2.5" upper="2.5" effort="50" velocity="3"/></joint>')
        parent = f"l{k}"
    links.append(f'<link name="tool"><inertial><origin xyz="0.03 -0.02 0.11"/><mass value="{tool_mass}"/>'
                 '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.015" iyz="0" izz="0.01"/></inertial></link>')
    joints.append(f'<joint name="tool_mount" type="fixed"><parent link="{parent}"/><child link="tool"/>'
                  '<origin xyz="0.05 -0.1 0.2" rpy="0.3 -0.4 0.7"/></joint>')
    return '<?xml version="1.0"?><robot name="arm">' + "".join(links + joints) + "</robot>"


def state(m, seed):
    rng = np.random.default_rng(seed)
    return plucker.random_configuration(m, seed), rng.uniform(-1, 1, m.nv)


CASES = {
    "humanoid_floating": (lambda: plucker.build_humanoid(seed=8), HUMANOID_TASKS),
    "quadruped_floating": (lambda: plucker.build_quadruped(seed=2),
                           [("LF_FOOT", "position"), ("RH_FOOT", [5, 3]), ("trunk", "all")]),
    "arm7_tool": (lambda: plucker.Model.from_urdf_string(arm_urdf()), ["tool"]),
    "arm7_tool_and_elbow": (lambda: plucker.Model.from_urdf_string(arm_urdf()),
                            [("tool", "position"), ("l4", "position")]),
    "zoo_panda": (lambda: zoo("panda"), ["panda_hand_tcp"]),
    "zoo_talos_full": (lambda: zoo("talos_full", True),
                       ["left_sole_link", "right_sole_link", ("wrist_left_ft_tool_link", "position")]),
}
_cache = {}


def case(cid):
    if cid not in _cache:
        build, tasks = CASES[cid]
        _cache[cid] = (build(), tasks)
    return _cache[cid]


def case_params():
    return [pytest.param(c, marks=requires_models) if c.startswith("zoo_") else c for c in CASES]


@pytest.mark.parametrize("cid", case_params())
def test_identities_and_minv_path(cid):
    m, tasks = case(cid)
    for seed in range(3):
        q, v = state(m, seed)
        r = plucker.operational_space(m, q, v, tasks)
        k = r.J.shape[0]
        M, Minv = plucker.crba(m, q), plucker.minv(m, q)
        c = C * EPS * (cond(M) + cond(r.Lambda_inv))
        assert r.J.shape == (k, m.nv) and r.Jbar.shape == (m.nv, k) and r.N.shape == (m.nv, m.nv)
        assert np.array_equal(r.Lambda, r.Lambda.T) and np.array_equal(r.Lambda_inv, r.Lambda_inv.T)
        assert np.linalg.norm(r.Lambda @ r.Lambda_inv - np.eye(k)) <= C * EPS * cond(r.Lambda_inv)
        assert np.linalg.norm(r.J @ r.Jbar - np.eye(k)) <= c
        sN = 1 + np.linalg.norm(r.N)  # N is a projector (|N| >= 1) or zero (square regular J)
        assert np.linalg.norm(r.N @ r.N - r.N) <= c * sN
        assert np.linalg.norm(r.J @ r.N) <= c * np.linalg.norm(r.J) * sN
        # N^T is the dynamically consistent projector: N M^-1 = M^-1 N^T.
        assert np.linalg.norm(r.N @ Minv - Minv @ r.N.T) <= c * np.linalg.norm(Minv) * sN
        assert rel(r.Lambda_inv, r.J @ Minv @ r.J.T) <= C * EPS * cond(M)  # M^-1 by minv, no LTDL
        assert rel(r.Lambda, np.linalg.inv(r.J @ Minv @ r.J.T)) <= c
        # bias = Lambda (J M^-1 C - Jdot v) with C = nonlinear_effects.
        h = plucker.nonlinear_effects(m, q, v)
        assert rel(r.bias, r.Lambda @ (r.J @ Minv @ h - r.Jdot_v)) <= c


@pytest.mark.parametrize("frame", ["local", "local_world_aligned"])
@pytest.mark.parametrize("cid", case_params())
def test_equation_through_aba(cid, frame):
    """F = Lambda xdd + bias, tau = J^T F: the ABA's qdd gives J qdd + Jdot_v = xdd."""
    m, tasks = case(cid)
    rng = np.random.default_rng(5)
    for seed in range(2):
        q, v = state(m, 10 + seed)
        r = plucker.operational_space(m, q, v, tasks, frame=frame)
        xdd = rng.uniform(-2, 2, r.J.shape[0])
        qdd = plucker.aba(m, q, v, r.J.T @ (r.Lambda @ xdd + r.bias))
        err = np.linalg.norm(r.J @ qdd + r.Jdot_v - xdd) / (np.linalg.norm(xdd) + np.linalg.norm(r.Jdot_v) + 1)
        assert err <= max(1e-9, C * EPS * (cond(plucker.crba(m, q)) + cond(r.Lambda_inv))), err


@pytest.mark.parametrize("frame", ["local", "local_world_aligned"])
@pytest.mark.parametrize("cid", case_params())
def test_jdot_v_is_the_derivative_of_jv(cid, frame):
    """Jdot_v = d/dt (J(q(t)) v) along q(t) = integrate(q, v t), by central differences."""
    m, tasks = case(cid)
    h = 1e-5
    q, v = state(m, 20)
    jdv = plucker.operational_space(m, q, v, tasks, frame=frame).Jdot_v
    jp = plucker.operational_space(m, plucker.integrate(m, q, v, h), v, tasks, frame=frame).J @ v
    jm = plucker.operational_space(m, plucker.integrate(m, q, v, -h), v, tasks, frame=frame).J @ v
    assert np.linalg.norm((jp - jm) / (2 * h) - jdv) <= 1e-7 * (1 + np.linalg.norm(jdv))


def test_frames_are_related_by_the_rotation():
    m = plucker.Model.from_urdf_string(arm_urdf())
    q, v = state(m, 3)
    loc = plucker.operational_space(m, q, v, ["tool"])
    lwa = plucker.operational_space(m, q, v, ["tool"], frame="local_world_aligned")
    R = plucker.frame_pose(m, q, "tool")[:3, :3]
    R6 = np.kron(np.eye(2), R)
    assert rel(lwa.J, R6 @ loc.J) <= 1e-13
    assert rel(lwa.Lambda, R6 @ loc.Lambda @ R6.T) <= 1e-10
    assert rel(lwa.Jbar, loc.Jbar @ R6.T) <= 1e-10
    assert np.linalg.norm(lwa.N - loc.N) <= 1e-10 * np.linalg.norm(loc.N)
    # The local J is body_jacobian's in the frame's coordinates.
    assert rel(loc.J, plucker.body_jacobian(m, q, "tool", frame="local")) <= 1e-14
    # Jdot_v: local rows are body_jacobian's jacobian_dot_times_v (spatial acceleration in the frame);
    # world-aligned linear rows add omega x v (the classical acceleration of the origin).
    assert rel(loc.Jdot_v, plucker.jacobian_dot_times_v(m, q, v, "tool", frame="local")) <= 1e-14
    w, lin = (loc.J @ v)[:3], (loc.J @ v)[3:]
    classical = np.concatenate([loc.Jdot_v[:3], loc.Jdot_v[3:] + np.cross(w, lin)])
    assert rel(lwa.Jdot_v, R6 @ classical) <= 1e-13


def test_row_subsets():
    m = plucker.Model.from_urdf_string(arm_urdf())
    q, v = state(m, 4)
    full = plucker.operational_space(m, q, v, ["tool"])
    for rows, idx in [("position", [3, 4, 5]), ("orientation", [0, 1, 2]), ([5, 0, 3], [5, 0, 3]), ((4,), [4]),
                      (np.array([1, 2]), [1, 2])]:
        r = plucker.operational_space(m, q, v, [("tool", rows)])
        assert np.array_equal(r.J, full.J[idx])
        assert np.array_equal(r.Jdot_v, full.Jdot_v[idx])
        assert rel(r.Lambda_inv, full.Lambda_inv[np.ix_(idx, idx)]) <= 1e-14
        assert rel(r.Lambda, np.linalg.inv(full.Lambda_inv[np.ix_(idx, idx)])) <= 1e-10


def test_jbar_is_independent_of_the_load():
    """Featherstone 1997: a payload on the task body leaves Jbar unchanged; Lambda gains the
    payload's inertia. With position rows only Jbar does change."""
    light = plucker.Model.from_urdf_string(arm_urdf(tool_mass=0.3))
    heavy = plucker.Model.from_urdf_string(arm_urdf(tool_mass=4.0))
    for seed in range(3):
        q, v = state(light, 30 + seed)
        for frame in ("local", "local_world_aligned"):
            a = plucker.operational_space(light, q, v, ["tool"], frame=frame)
            b = plucker.operational_space(heavy, q, v, ["tool"], frame=frame)
            tol = C * EPS * (cond(plucker.crba(light, q)) + cond(a.Lambda_inv))
            assert rel(b.Jbar, a.Jbar) <= tol
            assert rel(b.Lambda, a.Lambda) > 1e-3
            # Lambda gains the extra 3.7 kg of the tool, a point mass at the tool's centre of mass:
            # its linear block is 3.7 * 1 in any axes.
            dL = b.Lambda - a.Lambda
            assert np.linalg.norm(dL[3:, 3:] - 3.7 * np.eye(3)) <= tol * np.linalg.norm(b.Lambda)
        pa = plucker.operational_space(light, q, v, [("tool", "position")])
        pb = plucker.operational_space(heavy, q, v, [("tool", "position")])
        assert rel(pb.Jbar, pa.Jbar) > 1e-4


def test_result_type_and_copies():
    m = plucker.build_humanoid(seed=8)
    q, v = state(m, 1)
    r = plucker.operational_space(m, q, v, HUMANOID_TASKS)
    assert isinstance(r, plucker.OperationalSpaceResult)
    assert r._fields == ("J", "Jdot_v", "Lambda", "Lambda_inv", "Jbar", "N", "bias", "dependent_rows", "method")
    assert r.J.shape == (6 + 6 + 3 + 3, m.nv)
    J = r.J.copy()
    r.J[:] = 0.0  # a copy: the next call is unaffected
    assert np.array_equal(plucker.operational_space(m, q, v, HUMANOID_TASKS).J, J)


def test_singular_tasks():
    m = plucker.Model.from_urdf_string(arm_urdf())
    q, v = state(m, 6)
    with pytest.raises(plucker.SingularError, match=r"row 6 \(task 1, frame 'tool', angular x\) is a linear combination"):
        plucker.operational_space(m, q, v, ["tool", "tool"])
    with pytest.raises(plucker.SingularError, match=r"task 0, body 'base', angular x\) is zero"):
        plucker.operational_space(m, q, v, ["base"])
    # l1 is moved by two joints: its 6-D task is rank-deficient.
    with pytest.raises(plucker.SingularError, match="is a linear combination of the rows before it"):
        plucker.operational_space(m, q, v, ["l1"])


def test_argument_errors():
    m = plucker.Model.from_urdf_string(arm_urdf())
    q, v = state(m, 7)
    with pytest.raises(ValueError, match=r"tasks\[1\]: unknown body or frame 'nowhere'"):
        plucker.operational_space(m, q, v, ["tool", "nowhere"])
    with pytest.raises(ValueError, match="got the str 'tool'"):
        plucker.operational_space(m, q, v, "tool")
    with pytest.raises(ValueError, match="no tasks given"):
        plucker.operational_space(m, q, v, [])
    with pytest.raises(ValueError, match=r"tasks\[0\]: rows must be 'all', 'position', 'orientation'"):
        plucker.operational_space(m, q, v, [("tool", "linear")])
    with pytest.raises(ValueError, match=r"tasks\[0\]: row 6 out of range"):
        plucker.operational_space(m, q, v, [("tool", [0, 6])])
    with pytest.raises(ValueError, match="row indices must be integers"):
        plucker.operational_space(m, q, v, [("tool", [0, 1.5])])
    with pytest.raises(ValueError, match=r"row 1 \(angular y\) given twice"):
        plucker.operational_space(m, q, v, [("tool", [1, 1])])
    with pytest.raises(ValueError, match=r"tasks\[0\] must be a name or a \(name, rows\) pair"):
        plucker.operational_space(m, q, v, [("tool", "all", 3)])
    with pytest.raises(ValueError, match="unknown reference frame 'spatial'"):
        plucker.operational_space(m, q, v, ["tool"], frame="spatial")
    with pytest.raises(ValueError, match="unknown operational-space method 'banana'"):
        plucker.operational_space(m, q, v, ["tool"], method="banana")
    with pytest.raises(ValueError, match=r"operational_space: q has size 3"):
        plucker.operational_space(m, q[:3], v, ["tool"])
    bad = v.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match=r"v\[2\] is not finite"):
        plucker.operational_space(m, q, bad, ["tool"])


@requires_models
def test_panda_hand_and_fingers():
    """The panda's hand TCP (a frame merged by fixed joints) with its 9 DoF (7 arm + 2 fingers)."""
    m = zoo("panda")
    q, v = state(m, 9)
    r = plucker.operational_space(m, q, v, ["panda_hand_tcp"])
    assert r.J.shape == (6, 9)
    assert np.all(r.J[:, 7:] == 0.0)  # the fingers do not move the hand
    # The fingers' joints are in the null space: N leaves their torques alone.
    assert np.allclose(r.N[7:, 7:], np.eye(2), atol=1e-12)


METHODS = ["dense", "sparse", "recursive", "efpa"]  # the methods auto chooses from


@pytest.mark.parametrize("cid", case_params())
def test_all_methods_agree_with_dense(cid):
    """Every method against the dense one (Featherstone 2010's basic matrix method), relative
    errors within C eps (cond(M) + cond(Lambda^-1)); 'auto' runs the method the choice names."""
    m, tasks = case(cid)
    for seed in range(2):
        q, v = state(m, seed + 20)
        d = plucker.operational_space(m, q, v, tasks, method="dense")
        tol = C * EPS * (cond(d.Lambda_inv) + cond(plucker.crba(m, q)))
        for meth in METHODS + ["dca"]:
            r = plucker.operational_space(m, q, v, tasks, method=meth)
            assert r.method == meth
            for name in ("Lambda_inv", "Lambda", "Jbar"):
                assert rel(getattr(r, name), getattr(d, name)) <= tol, (cid, meth, name)
            assert np.linalg.norm(r.N - d.N) / (1 + np.linalg.norm(d.N)) <= tol, (cid, meth)
            assert np.linalg.norm(r.bias - d.bias) / (1 + np.linalg.norm(d.bias)) <= tol, (cid, meth)
        a = plucker.operational_space(m, q, v, tasks)
        assert a.method == plucker.operational_space_choice(m, tasks).method


@pytest.mark.parametrize("cid", ["humanoid_floating", "arm7_tool_and_elbow"])
def test_named_functions(cid):
    """operational_space_inertia, dynamically_consistent_inverse, task_null_space_projector and
    operational_space_bias against the formulas with M^-1 from plucker.minv (an independent path)."""
    m, tasks = case(cid)
    q, v = state(m, 31)
    J = plucker.operational_space(m, q, v, tasks, method="dense").J
    Minv = plucker.minv(m, q)
    Lam = np.linalg.inv(J @ Minv @ J.T)
    tol = C * EPS * (cond(J @ Minv @ J.T) + cond(plucker.crba(m, q)))
    Jbar = Minv @ J.T @ Lam
    C_ = plucker.nonlinear_effects(m, q, v)
    Jdv = plucker.operational_space(m, q, v, tasks, method="sparse").Jdot_v
    bias = Jbar.T @ C_ - Lam @ Jdv
    for meth in METHODS + ["auto"]:
        L = plucker.operational_space_inertia(m, q, tasks, method=meth)
        assert L.shape == (J.shape[0], J.shape[0])
        assert rel(L, Lam) <= tol, meth
        assert rel(plucker.dynamically_consistent_inverse(m, q, tasks, method=meth), Jbar) <= tol, meth
        N = plucker.task_null_space_projector(m, q, tasks, method=meth)
        assert np.linalg.norm(N - (np.eye(m.nv) - Jbar @ J)) / (1 + np.linalg.norm(N)) <= tol, meth
        b = plucker.operational_space_bias(m, q, v, tasks, method=meth)
        assert np.linalg.norm(b - bias) / (1 + np.linalg.norm(bias)) <= tol, meth


def test_full_tasks_give_6k_by_6k():
    m = plucker.build_humanoid(seed=3)
    q, _ = state(m, 2)
    assert plucker.operational_space_inertia(m, q, ["l_sole", "r_sole", "l_hand_tip"]).shape == (18, 18)
    assert plucker.dynamically_consistent_inverse(m, q, ["l_sole", "r_sole"]).shape == (m.nv, 12)
    assert plucker.task_null_space_projector(m, q, ["l_sole"]).shape == (m.nv, m.nv)


def test_damped_lambda_and_dependent_rows():
    """A task with dependent rows: damping=0 raises naming them; damping > 0 gives the finite
    (J M^-1 J^T + damping^2 I)^-1 (checked with minv) and lists the rows."""
    m = plucker.Model.from_urdf_string(arm_urdf())
    q, v = state(m, 6)
    tasks = ["tool", ("tool", [3, 0])]  # rows 6, 7 repeat rows 3, 0
    with pytest.raises(plucker.SingularError, match="linear combination"):
        plucker.operational_space(m, q, v, tasks)
    Minv = plucker.minv(m, q)
    for meth in METHODS:
        r = plucker.operational_space(m, q, v, tasks, method=meth, damping=0.05)
        assert r.dependent_rows == [6, 7]
        A = r.J @ Minv @ r.J.T + 0.05 ** 2 * np.eye(8)
        tol = C * EPS * (np.linalg.norm(A) / 0.05 ** 2 + cond(plucker.crba(m, q)))
        assert np.all(np.isfinite(r.Lambda)) and np.all(np.isfinite(r.N))
        assert rel(r.Lambda, np.linalg.inv(A)) <= tol, meth
        assert rel(r.Jbar, Minv @ r.J.T @ np.linalg.inv(A)) <= tol, meth
        L = plucker.operational_space_inertia(m, q, tasks, method=meth, damping=0.05)
        assert rel(L, r.Lambda) <= 1e-12
    full = plucker.operational_space(m, q, v, ["tool"], damping=0.05)
    assert full.dependent_rows == []
    with pytest.raises(ValueError, match="damping must be finite and >= 0"):
        plucker.operational_space_inertia(m, q, ["tool"], damping=-1.0)


def test_outputs_and_choice():
    m = plucker.build_humanoid(seed=3)
    q, v = state(m, 4)
    tasks = ["l_sole", "r_sole", "l_hand_tip", "r_hand_tip"]
    r = plucker.operational_space(m, q, v, tasks, outputs="lambda")
    assert r.Jbar.size == 0 and r.N.size == 0 and r.bias.size == 0
    assert np.array_equal(r.Lambda, plucker.operational_space(m, q, v, tasks, method=r.method).Lambda)
    c = plucker.operational_space_choice(m, tasks)
    assert c.method in METHODS
    assert set(c.predicted_ns) == set(METHODS)
    assert c.method == min(c.predicted_ns, key=c.predicted_ns.get)
    assert "predicted" in c.reason
    with pytest.raises(ValueError, match="unknown operational-space method 'banana'"):
        plucker.operational_space_inertia(m, q, tasks, method="banana")
    with pytest.raises(ValueError, match="unknown output 'x'"):
        plucker.operational_space(m, q, v, tasks, outputs=["jbar", "x"])


def test_cost_study_driver(tmp_path):
    """examples/operational_space_costs (the cost study's timer, scripts/operational_space_costs.py)
    runs on a small model: one row per method and output set, every Lambda within 1e-10 of dense,
    operation counts positive. Skipped when the examples are not built."""
    import json
    import os
    import subprocess
    exe = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(plucker.__file__))), "examples",
                       "operational_space_costs")
    if not os.path.exists(exe):
        pytest.skip("examples/operational_space_costs not built")
    path = tmp_path / "arm.urdf"
    path.write_text(arm_urdf())
    out = subprocess.run([exe, str(path), "fixed", "tool:position,l4:position", "3"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    timed = METHODS + ["dca", "dca/2t", "dca/4t"]
    assert sorted((r["method"], r["outputs"]) for r in rows) == sorted(
        (m, o) for m in timed for o in ("lambda", "all"))
    for r in rows:
        assert r["rel_err"] < 1e-10 and r["operations"] > 0 and r["ns"] > 0 and r["m"] == 6
        assert r["auto"] in METHODS
    bad = subprocess.run([exe, str(path), "sideways", "tool"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "root must be 'fixed' or 'free'" in bad.stderr
    singular = subprocess.run([exe, str(path), "fixed", "tool,tool"], capture_output=True, text=True, timeout=60)
    assert singular.returncode == 1 and "SingularError" not in singular.stderr and "is singular" in singular.stderr
