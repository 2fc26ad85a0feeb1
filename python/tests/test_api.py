"""The Python surface of plucker: types, shapes, argument checking, error mapping, and the
identities that tie the algorithms together (ABA inverts RNEA, CRBA = RNEA columns, f_ext
enters as J^T f, ...), on a small URDF written here, on the builders and on the shared
robot models (skipped when absent)."""
import math
import os
import pickle
import re
import warnings

import numpy as np
import pytest

import plucker
from conftest import (FLOATING_URDF, SMALL_MOVABLE, SMALL_URDF, load_quiet, random_state, requires_models,
                      zoo)

# Models for the identity tests: (id, factory). Shared models are loaded lazily (and skipped
# when absent). romeo is excluded (massless fingers: ABA undefined, see test_models.py);
# chain1024 and icub are ill-conditioned, see test_aba_inverts_rnea.
MODEL_FACTORIES = {
    "small": lambda: plucker.Model.from_urdf_string(SMALL_URDF),
    "small_floating": lambda: plucker.Model.from_urdf_string(SMALL_URDF, floating_base=True),
    "floating_joint": lambda: plucker.Model.from_urdf_string(FLOATING_URDF),
    "chain7": lambda: plucker.build_chain(7, seed=3),
    "random_tree": lambda: plucker.build_random_tree(12, branching_factor=1.5, skew=0.4, taper=0.95, seed=2),
    "humanoid": lambda: plucker.build_humanoid(seed=1),
    "humanoid_fixed": lambda: plucker.build_humanoid(seed=1, floating_base=False),
    "quadruped": lambda: plucker.build_quadruped(seed=1),
    "all_joints": lambda: plucker.build_all_joints_tree(seed=1),
}
ZOO_FOR_IDENTITIES = [("ur5", False), ("panda", False), ("iiwa14", True), ("talos_full", True),
                      ("simple_humanoid", True), ("romeo_small", True), ("anymal", True), ("solo12", True),
                      ("hyq", True), ("pr2", True), ("chain32", False)]
for _name, _fb in ZOO_FOR_IDENTITIES:
    MODEL_FACTORIES[f"{_name}{'_ff' if _fb else ''}"] = (lambda n=_name, f=_fb: zoo(n, f))
ZOO_IDS = {f"{n}{'_ff' if f else ''}" for n, f in ZOO_FOR_IDENTITIES}

_models = {}


def get_model(mid):
    if mid not in _models:
        _models[mid] = MODEL_FACTORIES[mid]()
    return _models[mid]


def model_params():
    return [pytest.param(mid, marks=requires_models) if mid in ZOO_IDS else mid for mid in MODEL_FACTORIES]


def close(x, y, rtol):
    """|x - y| <= rtol * max(1, |y|) in the max norm."""
    x, y = np.asarray(x), np.asarray(y)
    return np.max(np.abs(x - y), initial=0.0) <= rtol * max(1.0, np.max(np.abs(y), initial=0.0))


# --------------------------------------------------------------------------- surface
def test_version():
    assert isinstance(plucker.__version__, str)
    assert plucker.__version__.count(".") >= 2


def test_exception_classes():
    assert issubclass(plucker.ModelError, ValueError)
    assert issubclass(plucker.SingularError, ArithmeticError)
    assert issubclass(plucker.ModelWarning, UserWarning)


def test_model_surface(small):
    m = small
    assert (m.nq, m.nv, m.nbodies) == (3, 3, 4)
    assert all(isinstance(x, int) for x in (m.nq, m.nv, m.nbodies))
    assert m.joint_names == SMALL_MOVABLE
    assert m.body_names == ["base", "upper", "slider", "side"]
    assert "tool" in m.frame_names
    assert m.name == "small"
    assert isinstance(m.total_mass, float)
    # Moving bodies only (base excluded); the merged "tool" link adds its mass to "slider".
    assert m.total_mass == pytest.approx(1.5 + 0.7 + 0.2 + 0.9)
    assert m.has_floating_base is False
    for k, name in enumerate(SMALL_MOVABLE):
        assert m.joint_q_index(name) == k
        assert m.joint_v_index(name) == k
        assert m.joint_nq(name) == 1
        assert m.joint_nv(name) == 1
    assert m.joint_kind("shoulder") == "revolute_z"
    assert m.joint_kind("extend") == "prismatic_x"
    assert m.joint_kind("elbow") == "revolute"
    assert m.body_index("slider") == 2
    assert m.parents[1:] == [0, 1, 1]
    lo, hi = m.lower_position_limit, m.upper_position_limit
    assert lo.shape == hi.shape == (3,)
    assert (lo[0], hi[0], lo[1], hi[1]) == (-2, 2, -0.1, 0.3)
    assert math.isinf(lo[2]) and math.isinf(hi[2])  # continuous
    assert m.effort_limit[0] == 50 and m.velocity_limit[1] == 1
    assert m.mimics == []
    r = repr(m)
    assert r.startswith("<plucker.Model 'small'") and "nq=3" in r and "nv=3" in r
    s = m.summary()
    assert isinstance(s, str) and "shoulder" in s and "nq = 3" in s
    assert str(m) == s
    with pytest.raises(TypeError):
        plucker.Model()


def test_gravity_property(small):
    g = small.gravity
    assert isinstance(g, np.ndarray) and g.shape == (3,) and g.dtype == np.float64
    np.testing.assert_array_equal(g, [0, 0, -9.81])
    g[2] = 5.0  # a copy: the model is unchanged
    assert small.gravity[2] == -9.81
    small.gravity = [0, 1, 2]  # list, ints
    np.testing.assert_array_equal(small.gravity, [0, 1, 2])
    small.gravity = np.array([0.0, 0.0, -3.0])
    np.testing.assert_array_equal(small.gravity, [0, 0, -3])
    with pytest.raises(ValueError, match="expected 3"):
        small.gravity = [0, 0]
    with pytest.raises(ValueError, match="not finite"):
        small.gravity = [0, np.nan, 0]
    np.testing.assert_array_equal(small.gravity, [0, 0, -3])


def test_types_and_shapes(small_floating):
    m = small_floating
    q, v, a = random_state(m, 0)
    nq, nv = m.nq, m.nv

    def is_vec(x, n):
        return isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (n,)

    def is_mat(x, r, c):
        return isinstance(x, np.ndarray) and x.dtype == np.float64 and x.shape == (r, c) and x.flags.c_contiguous

    assert is_vec(plucker.rnea(m, q, v, a), nv)
    assert is_vec(plucker.rnea(m, q, v, a, f_ext={"slider": np.ones(6)}), nv)
    assert is_mat(plucker.crba(m, q), nv, nv)
    assert is_vec(plucker.aba(m, q, v, a), nv)
    assert is_vec(plucker.aba(m, q, v, a, f_ext={}), nv)
    assert is_vec(plucker.forward_dynamics_crba(m, q, v, a), nv)
    assert is_vec(plucker.nonlinear_effects(m, q, v), nv)
    assert is_vec(plucker.gravity_torques(m, q), nv)
    assert type(plucker.kinetic_energy(m, q, v)) is float
    assert type(plucker.potential_energy(m, q)) is float
    fk = plucker.forward_kinematics(m, q)
    assert isinstance(fk, dict) and list(fk) == m.body_names
    assert all(is_mat(T, 4, 4) for T in fk.values())
    assert is_vec(plucker.neutral(m), nq)
    assert is_vec(plucker.random_configuration(m, 7), nq)
    assert is_vec(plucker.random_configuration(m), nq)
    assert is_vec(plucker.integrate(m, q, v, 0.01), nq)
    assert is_vec(plucker.integrate(m, q, v), nq)
    assert is_vec(plucker.difference(m, q, plucker.neutral(m)), nv)
    assert is_vec(plucker.normalize(m, q), nq)
    assert is_mat(plucker.body_jacobian(m, q, "slider"), 6, nv)
    assert is_mat(plucker.body_jacobian(m, q, "slider", frame="local"), 6, nv)
    assert is_mat(plucker.body_jacobian(m, q, "tool", "world"), 6, nv)
    assert is_vec(plucker.jacobian_dot_times_v(m, q, v, "side"), 6)
    assert is_vec(plucker.center_of_mass(m, q), 3)
    assert is_mat(plucker.center_of_mass_jacobian(m, q), 3, nv)
    assert is_mat(plucker.frame_pose(m, q, "tool"), 4, 4)
    assert is_mat(plucker.frame_pose(m, q, "upper"), 4, 4)  # a body name works too


def test_returned_arrays_are_fresh_copies(small):
    q, v, a = random_state(small, 1)
    t1 = plucker.rnea(small, q, v, a)
    keep = t1.copy()
    t2 = plucker.rnea(small, q, 2 * v, 3 * a)
    np.testing.assert_array_equal(t1, keep)
    assert not np.shares_memory(t1, t2)
    M1 = plucker.crba(small, q)
    M1[0, 0] = 1e9
    assert plucker.crba(small, q)[0, 0] != 1e9
    J1 = plucker.body_jacobian(small, q, "side")
    J2 = plucker.body_jacobian(small, q, "slider")
    assert not np.shares_memory(J1, J2)
    qdd1 = plucker.aba(small, q, v, a)
    keep = qdd1.copy()
    plucker.aba(small, q, v, 2 * a)
    np.testing.assert_array_equal(qdd1, keep)


def test_array_like_inputs(small):
    """Lists, integer arrays, float32 and non-contiguous slices are all converted."""
    q, v, a = random_state(small, 2)
    ref = plucker.rnea(small, q, v, a)
    np.testing.assert_array_equal(plucker.rnea(small, list(q), tuple(v), list(a)), ref)
    strided = np.zeros((3, 2 * small.nv))
    strided[1, ::2] = v
    assert not strided[1, ::2].flags.c_contiguous
    np.testing.assert_array_equal(plucker.rnea(small, q, strided[1, ::2], a), ref)
    np.testing.assert_array_equal(plucker.rnea(small, q[::-1][::-1], v, np.asfortranarray(a)), ref)
    ints = np.array([1, -2, 3])
    np.testing.assert_array_equal(plucker.rnea(small, ints, ints, ints),
                                  plucker.rnea(small, ints.astype(float), ints.astype(float), ints.astype(float)))
    np.testing.assert_array_equal(plucker.crba(small, [0, 0, 0]), plucker.crba(small, plucker.neutral(small)))
    q32 = q.astype(np.float32)
    np.testing.assert_array_equal(plucker.crba(small, q32), plucker.crba(small, q32.astype(np.float64)))


# --------------------------------------------------------------------------- argument errors
def test_wrong_sizes_name_expected_size(small_floating):
    m = small_floating  # nq = 10, nv = 9
    q, v, a = random_state(m, 3)
    with pytest.raises(ValueError, match=r"q has size 9, expected nq = 10"):
        plucker.rnea(m, q[:-1], v, a)
    with pytest.raises(ValueError, match=r"v has size 10, expected nv = 9"):
        plucker.rnea(m, q, np.zeros(10), a)
    with pytest.raises(ValueError, match=r"a has size 2, expected nv = 9"):
        plucker.rnea(m, q, v, [1, 2])
    with pytest.raises(ValueError, match=r"tau has size 0, expected nv = 9"):
        plucker.aba(m, q, v, [])
    with pytest.raises(ValueError, match=r"expected nq = 10"):
        plucker.crba(m, [])
    with pytest.raises(ValueError, match=r"expected nq = 10"):
        plucker.forward_kinematics(m, np.zeros(3))
    with pytest.raises(ValueError, match=r"expected nv = 9"):
        plucker.integrate(m, q, np.zeros(10))
    with pytest.raises(ValueError, match=r"q1 has size 3, expected nq = 10"):
        plucker.difference(m, q, np.zeros(3))
    with pytest.raises(ValueError, match=r"expected nv = 9"):
        plucker.kinetic_energy(m, q, np.zeros(1))
    with pytest.raises(ValueError, match=r"expected nq = 10"):
        plucker.body_jacobian(m, np.zeros(1), "upper")
    with pytest.raises(ValueError, match=r"must be 1-D.*\(2, 5\)"):
        plucker.potential_energy(m, np.zeros((2, 5)))
    with pytest.raises(ValueError):
        plucker.rnea(m, None, v, a)
    with pytest.raises(ValueError):
        plucker.rnea(m, "not a vector", v, a)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_inputs(small_floating, bad):
    m = small_floating
    q, v, a = random_state(m, 4)
    for k in range(3):
        args = [q.copy(), v.copy(), a.copy()]
        args[k][8] = bad
        with pytest.raises(ValueError, match="not finite"):
            plucker.rnea(m, *args)
        with pytest.raises(ValueError, match="not finite"):
            plucker.aba(m, *args)
    vb = v.copy()
    vb[8] = bad
    with pytest.raises(ValueError, match=r"v\[8\] is not finite.*joint 'elbow'"):
        plucker.nonlinear_effects(m, q, vb)
    qb = q.copy()
    qb[0] = bad
    with pytest.raises(ValueError, match=r"q\[0\] is not finite.*joint 'root_joint'"):
        plucker.crba(m, qb)
    with pytest.raises(ValueError, match="not finite"):
        plucker.integrate(m, q, v, bad)


def test_non_unit_quaternion_is_refused(small_floating):
    q = plucker.neutral(small_floating)
    q[3:7] = [0.0, 0.0, 0.0, 2.0]
    with pytest.raises(ValueError, match="quaternion of joint 'root_joint' is not unit"):
        plucker.rnea(small_floating, q, np.zeros(9), np.zeros(9))
    np.testing.assert_allclose(plucker.normalize(small_floating, q), plucker.neutral(small_floating))
    q[3:7] = 0.0
    with pytest.raises(ValueError, match="root_joint"):
        plucker.normalize(small_floating, q)


def test_unknown_names(small):
    q = plucker.neutral(small)
    for fn in (small.joint_q_index, small.joint_v_index, small.joint_nq, small.joint_nv, small.joint_kind):
        with pytest.raises(ValueError, match="'nope'"):
            fn("nope")
    with pytest.raises(ValueError, match="'nope'"):
        small.body_index("nope")
    with pytest.raises(ValueError, match="'nope'"):
        plucker.body_jacobian(small, q, "nope")
    with pytest.raises(ValueError, match="'nope'"):
        plucker.frame_pose(small, q, "nope")
    with pytest.raises(ValueError, match="'nope'"):
        plucker.jacobian_dot_times_v(small, q, np.zeros(3), "nope")
    with pytest.raises(ValueError, match="frame must be 'world', 'local' or 'local_world_aligned'"):
        plucker.body_jacobian(small, q, "side", frame="body")
    z = np.zeros(3)
    with pytest.raises(ValueError, match="unknown body 'nope'"):
        plucker.rnea(small, q, z, z, f_ext={"nope": np.zeros(6)})
    with pytest.raises(ValueError, match="unknown body 'nope'"):
        plucker.aba(small, q, z, z, f_ext={"side": np.zeros(6), "nope": np.zeros(6)})


def test_f_ext_value_checks(small):
    q, z = plucker.neutral(small), np.zeros(3)
    with pytest.raises(ValueError, match=r"f_ext\['side'\] has size 3, expected 6"):
        plucker.rnea(small, q, z, z, f_ext={"side": [1, 2, 3]})
    with pytest.raises(ValueError, match=r"f_ext\['side'\]\[4\] is not finite"):
        plucker.rnea(small, q, z, z, f_ext={"side": [0, 0, 0, 0, np.nan, 0]})
    with pytest.raises(ValueError, match="f_ext"):
        plucker.rnea(small, q, z, z, f_ext=[np.zeros(6)])
    with pytest.raises(ValueError, match="f_ext keys"):
        plucker.rnea(small, q, z, z, f_ext={3: np.zeros(6)})


def test_seed_checks(small):
    with pytest.raises(ValueError, match="seed"):
        plucker.random_configuration(small, -1)
    with pytest.raises(ValueError, match="seed"):
        plucker.random_configuration(small, 2**64)
    with pytest.raises(ValueError, match="seed"):
        plucker.random_configuration(small, 1.5)
    plucker.random_configuration(small, 2**64 - 1)
    plucker.random_configuration(small, np.uint64(5))


# --------------------------------------------------------------------------- loading
def test_floating_base_adds_root_joint(small, small_floating):
    assert small_floating.nv == small.nv + 6
    assert small_floating.nq == small.nq + 7
    assert small_floating.joint_names == ["root_joint"] + SMALL_MOVABLE
    assert small_floating.joint_q_index("root_joint") == 0
    assert small_floating.joint_v_index("root_joint") == 0
    assert small_floating.joint_nq("root_joint") == 7
    assert small_floating.joint_nv("root_joint") == 6
    assert small_floating.joint_kind("root_joint") == "free_flyer"
    assert small_floating.joint_q_index("shoulder") == 7
    assert small_floating.joint_v_index("shoulder") == 6
    assert small_floating.has_floating_base
    assert small_floating.body_names[:2] == ["world", "base"]
    np.testing.assert_array_equal(plucker.neutral(small_floating)[:7], [0, 0, 0, 0, 0, 0, 1])
    # The root link's inertia now moves.
    assert small_floating.total_mass == pytest.approx(small.total_mass + 2.0)


def test_urdf_floating_joint_keeps_its_name():
    m = plucker.Model.from_urdf_string(FLOATING_URDF)
    assert (m.nq, m.nv) == (8, 7)
    assert m.joint_names == ["torso_float", "hip"]
    assert m.joint_kind("torso_float") == "free_flyer"
    assert m.joint_nq("torso_float") == 7 and m.joint_nv("torso_float") == 6


def test_from_urdf_file_and_pathlike(tmp_path, small):
    p = tmp_path / "small.urdf"
    p.write_text(SMALL_URDF)
    for path in (str(p), p):
        m = plucker.Model.from_urdf(path)
        assert (m.nq, m.nv, m.joint_names) == (small.nq, small.nv, small.joint_names)
    m = plucker.Model.from_urdf(str(p), floating_base=True, strict=True)
    assert m.nv == small.nv + 6
    with pytest.raises(FileNotFoundError):
        plucker.Model.from_urdf(str(tmp_path / "missing.urdf"))


def test_invalid_urdf_raises_model_error():
    with pytest.raises(plucker.ModelError):
        plucker.Model.from_urdf_string("<robot name='x'><link name='a'/>")  # malformed XML
    with pytest.raises(plucker.ModelError, match="nowhere"):
        plucker.Model.from_urdf_string(SMALL_URDF.replace('<child link="side"/>', '<child link="nowhere"/>'))
    with pytest.raises(ValueError, match="my_robot.urdf"):  # ModelError is a ValueError
        plucker.Model.from_urdf_string("<robot/>", source_name="my_robot.urdf")


def test_model_warnings_and_strict():
    # A movable joint carrying no mass: loaded with a ModelWarning, refused with strict=True.
    xml = SMALL_URDF.replace('<inertial><origin xyz="0 0.1 0"/><mass value="0.9"/>\n'
                             '      <inertia ixx="0.004" ixy="0" ixz="0.0005" iyy="0.002" iyz="0" izz="0.004"/>'
                             '</inertial>', "")
    assert xml != SMALL_URDF
    with pytest.warns(plucker.ModelWarning, match="elbow"):
        m = plucker.Model.from_urdf_string(xml)
    assert m.nv == 3
    with pytest.raises(plucker.ModelError, match="elbow"):
        plucker.Model.from_urdf_string(xml, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", plucker.ModelWarning)  # warnings-as-errors propagates
        with pytest.raises(plucker.ModelWarning):
            plucker.Model.from_urdf_string(xml)
    # ... and its dynamics are undefined.
    q = plucker.neutral(m)
    with pytest.raises(plucker.SingularError, match="elbow"):
        plucker.aba(m, q, np.zeros(3), np.zeros(3))
    with pytest.raises(plucker.SingularError):
        plucker.forward_dynamics_crba(m, q, np.zeros(3), np.zeros(3))


def test_builders():
    c = plucker.build_chain(5)
    assert (c.nq, c.nv, c.joint_names) == (5, 5, [f"joint{k}" for k in range(1, 6)])
    c2 = plucker.build_chain(4, seed=9, axes=[[1, 0, 0]])
    assert all(c2.joint_kind(n) == "revolute_x" for n in c2.joint_names)
    h = plucker.build_humanoid()
    assert (h.nq, h.nv) == (37, 36) and h.has_floating_base
    assert {"l_sole", "r_sole", "l_hand_tip", "r_hand_tip"} <= set(h.frame_names)
    assert (plucker.build_humanoid(floating_base=False).nv) == 30
    assert (plucker.build_quadruped().nq, plucker.build_quadruped().nv) == (19, 18)
    assert plucker.build_quadruped(floating_base=False).nv == 12
    t = plucker.build_all_joints_tree()
    assert (t.nq, t.nv) == (33, 29)
    assert plucker.build_random_tree(10, 2.0, 0.0, 1.0).nv == 10
    # deterministic
    np.testing.assert_array_equal(plucker.crba(plucker.build_chain(6, seed=4), np.ones(6)),
                                  plucker.crba(plucker.build_chain(6, seed=4), np.ones(6)))
    with pytest.raises(ValueError):
        plucker.build_chain(-1)
    with pytest.raises(ValueError):
        plucker.build_random_tree(5, 0.5, 0.0, 1.0)


# --------------------------------------------------------------------------- identities
@pytest.mark.parametrize("mid", model_params())
def test_aba_inverts_rnea(mid):
    """aba(q, v, rnea(q, v, a)) == a to 1e-9 relative.

    ABA and RNEA are exact inverses in exact arithmetic (both solve M qdd + C = tau), so the
    only difference is floating-point rounding, of order cond(M) * eps * (a few). The models
    here have cond(M) <= ~3e7 (measured; eps = 2.2e-16) and a random a is not the worst
    direction: the measured error is <= 3e-13, so 1e-9 leaves a wide margin while still
    catching any real (modelling or indexing) error, which shows up at O(1)."""
    m = get_model(mid)
    for seed in range(3):
        q, v, a = random_state(m, seed)
        tau = plucker.rnea(m, q, v, a)
        qdd = plucker.aba(m, q, v, tau)
        assert close(qdd, a, 1e-9), (mid, seed, np.max(np.abs(qdd - a)))
        # The O(n^3) path agrees too.
        assert close(plucker.forward_dynamics_crba(m, q, v, tau), a, 1e-9)


@requires_models
@pytest.mark.parametrize("name", ["icub", "chain1024"])
def test_aba_inverts_rnea_ill_conditioned(name):
    """icub (point-mass links, cond(M) ~ 4e8) and chain1024 (cond(M) beyond 1e12): the forward
    error of any solver is bounded only by cond(M) * eps, so check the backward error instead
    (the residual of the equations of motion is small relative to tau: ABA is backward stable)
    plus a loose forward error."""
    m = zoo(name, True)
    q, v, a = random_state(m, 0)
    tau = plucker.rnea(m, q, v, a)
    qdd = plucker.aba(m, q, v, tau)
    residual = plucker.rnea(m, q, v, qdd) - tau
    assert np.max(np.abs(residual)) <= 1e-9 * max(1.0, np.max(np.abs(tau)))
    assert close(qdd, a, 1e-5)


@pytest.mark.parametrize("mid", model_params())
def test_crba_columns_and_symmetry(mid):
    m = get_model(mid)
    q, _, _ = random_state(m, 5)
    M = plucker.crba(m, q)
    zero = np.zeros(m.nv)
    g = plucker.rnea(m, q, zero, zero)
    if m.nv <= 64:
        E = np.eye(m.nv)
        cols = np.column_stack([plucker.rnea(m, q, zero, E[i]) - g for i in range(m.nv)])
    else:
        idx = np.linspace(0, m.nv - 1, 16).astype(int)
        cols = np.column_stack([plucker.rnea(m, q, zero, np.eye(m.nv)[i]) - g for i in idx])
        M = M[:, idx]
    scale = max(1.0, np.max(np.abs(M)), np.max(np.abs(g)))
    assert np.max(np.abs(M - cols)) <= 1e-10 * scale
    M = plucker.crba(m, q)
    assert np.max(np.abs(M - M.T)) <= 1e-14 * max(1.0, np.max(np.abs(M)))
    # positive definite (all these models have mass on every moving subtree)
    assert np.min(np.linalg.eigvalsh(M)) > 0


@pytest.mark.parametrize("mid", model_params())
def test_nonlinear_effects_gravity_and_energy(mid):
    m = get_model(mid)
    q, v, _ = random_state(m, 6)
    zero = np.zeros(m.nv)
    rtol = 1e-12
    assert close(plucker.nonlinear_effects(m, q, v), plucker.rnea(m, q, v, zero), rtol)
    assert close(plucker.gravity_torques(m, q), plucker.rnea(m, q, zero, zero), rtol)
    M = plucker.crba(m, q)
    assert plucker.kinetic_energy(m, q, v) == pytest.approx(0.5 * v @ M @ v, rel=1e-10)


@pytest.mark.parametrize("mid", model_params())
def test_f_ext_enters_as_jacobian_transpose(mid):
    """rnea(q, v, a, {b: f}) == rnea(q, v, a) - J_b^T f, with f in world coordinates about the
    world origin and J_b the world-frame body Jacobian (J_b v = body spatial velocity in the
    world, linear part = velocity of the body point at the origin). Same in the local frame."""
    m = get_model(mid)
    q, v, a = random_state(m, 7)
    rng = np.random.default_rng(7)
    tau0 = plucker.rnea(m, q, v, a)
    bodies = m.body_names[1:]
    for body in (bodies[-1], bodies[len(bodies) // 2]):
        for frame in ("world", "local"):
            f = rng.standard_normal(6)
            J = plucker.body_jacobian(m, q, body, frame=frame)
            expected = tau0 - J.T @ f
            tau = plucker.rnea(m, q, v, a, f_ext={body: f}, frame=frame)
            assert close(tau, expected, 1e-10)
            # ABA with the same force recovers a.
            assert close(plucker.aba(m, q, v, tau, f_ext={body: f}, frame=frame), a, 1e-9)
    # Forces on two bodies superpose; a force on the fixed base does nothing.
    f1, f2 = rng.standard_normal(6), rng.standard_normal(6)
    both = plucker.rnea(m, q, v, a, f_ext={bodies[0]: f1, bodies[-1]: f2, m.body_names[0]: f2})
    expected = tau0 - plucker.body_jacobian(m, q, bodies[0]).T @ f1 - plucker.body_jacobian(m, q, bodies[-1]).T @ f2
    assert close(both, expected, 1e-10)


def test_frame_jacobian(small):
    """A frame moves with its body: same world Jacobian; local Jacobian in frame coordinates
    (checked against finite differences of the frame pose)."""
    m = small
    q, v, _ = random_state(m, 8)
    np.testing.assert_array_equal(plucker.body_jacobian(m, q, "tool"), plucker.body_jacobian(m, q, "slider"))
    Jl = plucker.body_jacobian(m, q, "tool", frame="local")
    h = 1e-6
    T0 = plucker.frame_pose(m, q, "tool")
    T1 = plucker.frame_pose(m, plucker.integrate(m, q, v, h), "tool")
    R0, p0 = T0[:3, :3], T0[:3, 3]
    W = R0.T @ (T1[:3, :3] - R0) / h  # R^T dR/dt = [omega_local]x
    omega_local = np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2
    vel_local = R0.T @ (T1[:3, 3] - p0) / h
    np.testing.assert_allclose(Jl @ v, np.concatenate([omega_local, vel_local]), atol=1e-5)


@pytest.mark.parametrize("mid", ["small_floating", "humanoid", "all_joints"])
def test_center_of_mass_jacobian_matches_finite_differences(mid):
    m = get_model(mid)
    q, v, _ = random_state(m, 9)
    h = 1e-7
    fd = (plucker.center_of_mass(m, plucker.integrate(m, q, v, h)) -
          plucker.center_of_mass(m, plucker.integrate(m, q, v, -h))) / (2 * h)
    np.testing.assert_allclose(plucker.center_of_mass_jacobian(m, q) @ v, fd, atol=1e-6)


def test_gravity_affects_potential_energy(small_floating):
    m = small_floating
    q = plucker.random_configuration(m, 10)
    q[:3] = [0.3, -0.2, 1.5]  # lift the base
    pe = plucker.potential_energy(m, q)
    com = plucker.center_of_mass(m, q)
    assert pe == pytest.approx(m.total_mass * 9.81 * com[2], rel=1e-12)
    m.gravity = [0, 0, -2 * 9.81]
    assert plucker.potential_energy(m, q) == pytest.approx(2 * pe, rel=1e-12)
    m.gravity = [1.0, 0, 0]
    assert plucker.potential_energy(m, q) == pytest.approx(-m.total_mass * com[0], rel=1e-12)
    m.gravity = [0, 0, 0]
    assert plucker.potential_energy(m, q) == 0.0
    np.testing.assert_array_equal(plucker.gravity_torques(m, q), np.zeros(m.nv))


@pytest.mark.parametrize("mid", model_params())
def test_forward_kinematics_poses(mid):
    m = get_model(mid)
    q = plucker.random_configuration(m, 11)
    fk = plucker.forward_kinematics(m, q)
    assert list(fk) == m.body_names
    for name, T in fk.items():
        assert T.shape == (4, 4)
        R = T[:3, :3]
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
        assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_array_equal(T[3], [0, 0, 0, 1])
        np.testing.assert_allclose(plucker.frame_pose(m, q, name), T, atol=0)
    np.testing.assert_array_equal(fk[m.body_names[0]], np.eye(4))
    for frame in m.frame_names[:5]:
        T = plucker.frame_pose(m, q, frame)
        np.testing.assert_allclose(T[:3, :3].T @ T[:3, :3], np.eye(3), atol=1e-12)


def test_forward_kinematics_of_free_flyer(small_floating):
    q = plucker.neutral(small_floating)
    q[:3] = [1.0, 2.0, 3.0]
    s = math.sqrt(0.5)
    q[3:7] = [0.0, 0.0, s, s]  # 90 degrees about z, [x y z w]
    T = plucker.forward_kinematics(small_floating, q)["base"]
    np.testing.assert_allclose(T[:3, 3], [1, 2, 3], atol=1e-15)
    np.testing.assert_allclose(T[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)


@pytest.mark.parametrize("mid", ["small_floating", "floating_joint", "humanoid", "all_joints"])
def test_integrate_keeps_quaternions_unit(mid):
    m = get_model(mid)
    rng = np.random.default_rng(12)
    q = plucker.random_configuration(m, 12)
    quat_joints = [n for n in m.joint_names if m.joint_kind(n) in ("free_flyer", "spherical")]
    assert quat_joints
    for _ in range(50):
        q = plucker.integrate(m, q, 10 * rng.standard_normal(m.nv), 0.1)
        for n in quat_joints:
            i = m.joint_q_index(n) + (3 if m.joint_kind(n) == "free_flyer" else 0)
            assert abs(np.linalg.norm(q[i:i + 4]) - 1.0) < 1e-12
    # difference inverts integrate
    v = 0.3 * rng.standard_normal(m.nv)
    np.testing.assert_allclose(plucker.difference(m, q, plucker.integrate(m, q, v)), v, atol=1e-10)
    np.testing.assert_allclose(plucker.integrate(m, q, np.zeros(m.nv), 5.0), q, atol=0)


def test_random_configuration_deterministic(small_floating):
    m = small_floating
    q1, q2 = plucker.random_configuration(m, 42), plucker.random_configuration(m, 42)
    np.testing.assert_array_equal(q1, q2)
    assert not np.array_equal(q1, plucker.random_configuration(m, 43))
    assert not np.array_equal(plucker.random_configuration(m), plucker.random_configuration(m))
    lo, hi = m.lower_position_limit, m.upper_position_limit
    for seed in range(20):
        q = plucker.random_configuration(m, seed)
        assert np.all((q >= lo) | np.isinf(lo)) and np.all((q <= hi) | np.isinf(hi))
        assert abs(np.linalg.norm(q[3:7]) - 1) < 1e-12


def test_forward_kinematics_known_pose(small):
    """At q = 0 the pose of 'upper' is its joint <origin> (xyz 0 0 0.1, yaw 0.3): the pose of
    the body in the world, not its inverse."""
    T = plucker.forward_kinematics(small, [0.0, 0.0, 0.0])["upper"]
    c, s = math.cos(0.3), math.sin(0.3)
    np.testing.assert_allclose(T[:3, :3], [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-15)
    np.testing.assert_allclose(T[:3, 3], [0, 0, 0.1], atol=1e-15)
    # The prismatic joint moves 'slider' along its own x axis.
    T0 = plucker.forward_kinematics(small, [0.0, 0.0, 0.0])["slider"]
    T1 = plucker.forward_kinematics(small, [0.0, 0.25, 0.0])["slider"]
    np.testing.assert_allclose(T1[:3, 3] - T0[:3, 3], 0.25 * T0[:3, 0], atol=1e-15)
    np.testing.assert_allclose(T1[:3, :3], T0[:3, :3], atol=0)


@pytest.mark.parametrize("mid", ["small", "small_floating", "humanoid", "all_joints", "quadruped"])
def test_body_jacobian_matches_pose_finite_differences(mid):
    """J_world v = [omega; velocity of the body point at the world origin] and J_local v =
    [omega; velocity of the body origin] in body coordinates, from central differences of the
    forward_kinematics poses along q(t) = integrate(q, v, t)."""
    m = get_model(mid)
    q, v, _ = random_state(m, 13)
    h = 1e-6
    fk_m = plucker.forward_kinematics(m, plucker.integrate(m, q, v, -h))
    fk_0 = plucker.forward_kinematics(m, q)
    fk_p = plucker.forward_kinematics(m, plucker.integrate(m, q, v, h))
    for body in m.body_names[1:]:
        T, dT = fk_0[body], (fk_p[body] - fk_m[body]) / (2 * h)
        R, p, dR, dp = T[:3, :3], T[:3, 3], dT[:3, :3], dT[:3, 3]

        def vee(W):
            return np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2

        w = vee(dR @ R.T)
        world = np.concatenate([w, dp - np.cross(w, p)])
        local = np.concatenate([vee(R.T @ dR), R.T @ dp])
        Jw = plucker.body_jacobian(m, q, body)
        Jl = plucker.body_jacobian(m, q, body, frame="local")
        scale = 1e-6 * (1 + np.linalg.norm(Jw) * np.linalg.norm(v))
        np.testing.assert_allclose(Jw @ v, world, atol=scale, err_msg=body)
        np.testing.assert_allclose(Jl @ v, local, atol=scale, err_msg=body)


# --------------------------------------------------------------------------- dtypes (issue: reliability)
NON_REAL = [
    pytest.param(lambda n: np.ones(n, dtype=bool), "bool", id="bool"),
    pytest.param(lambda n: [True] * n, "bool", id="list_of_bool"),
    pytest.param(lambda n: np.arange(n).astype("datetime64[s]"), "datetime64[s] (datetime)", id="datetime64"),
    pytest.param(lambda n: np.arange(n).astype("timedelta64[s]"), "timedelta64[s] (timedelta)", id="timedelta64"),
    pytest.param(lambda n: np.zeros(n, dtype=complex), "complex128 (complex)", id="complex"),
    pytest.param(lambda n: np.zeros(n, dtype=object), "object (Python objects)", id="object"),
    pytest.param(lambda n: ["0.5"] * n, "<U3 (strings)", id="list_of_str"),
]


@pytest.mark.parametrize("make, dtype_text", NON_REAL)
def test_non_real_dtypes_are_refused_naming_argument_and_dtype(small_floating, make, dtype_text):
    """bool, datetime/timedelta, complex, object and str arrays used to be cast to float64 (complex
    with only a warning, strings parsed): refused now, naming the argument and the dtype found."""
    m = small_floating
    q, v, a = random_state(m, 20)
    for k, name in enumerate(("q", "v", "a")):
        args = [q, v, a]
        args[k] = make(len(args[k]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy's ComplexWarning must not be how it is refused
            with pytest.raises((TypeError, ValueError), match=rf"^{name} has dtype {re.escape(dtype_text)}"):
                plucker.rnea(m, *args)
    with pytest.raises((TypeError, ValueError), match=rf"^Q has dtype {re.escape(dtype_text)}"):
        plucker.crba_batch(m, np.array([make(m.nq)] * 2))
    with pytest.raises((TypeError, ValueError), match=rf"^gravity has dtype {re.escape(dtype_text)}"):
        m.gravity = make(3)
    with pytest.raises((TypeError, ValueError), match=rf"^f_ext\['side'\] has dtype {re.escape(dtype_text)}"):
        plucker.rnea(m, q, v, a, f_ext={"side": make(6)})
    np.testing.assert_array_equal(m.gravity, [0, 0, -9.81])


def test_real_dtypes_are_accepted(small):
    q, v, a = (np.abs(np.round(3 * x)) for x in random_state(small, 21))  # small whole numbers >= 0
    ref = plucker.rnea(small, q, v, a)
    for dtype in (np.int8, np.uint8, np.int32, np.uint64, np.float16, np.float32, np.longdouble):
        np.testing.assert_array_equal(plucker.rnea(small, *(x.astype(dtype) for x in (q, v, a))), ref,
                                      err_msg=str(dtype))
    np.testing.assert_array_equal(plucker.rnea(small, [int(x) for x in q], v, a), ref)


def test_unconvertible_inputs_name_the_argument(small):
    z = np.zeros(3)
    with pytest.raises(ValueError, match=r"^q cannot be converted to an array of numbers.*inhomogeneous"):
        plucker.rnea(small, [[1.0, 2.0], [3.0]], z, z)
    with pytest.raises(ValueError, match=r"^v is None, expected an array of size nv = 3"):
        plucker.rnea(small, z, None, z)


# --------------------------------------------------------------------------- f_ext (issue: reliability)
class _Items:
    """A mapping-like object whose items() yields what it is given."""

    def __init__(self, items):
        self._items = items

    def items(self):
        return self._items


def test_f_ext_items_yielding_lists_or_bad_pairs(small):
    """items() yielding lists used to raise SystemError ('bad argument to internal function') and
    a 1-tuple IndexError: any (name, force) pair is taken, anything else is a clear ValueError."""
    q, v, a = random_state(small, 22)
    f = np.arange(6.0)
    ref = plucker.rnea(small, q, v, a, f_ext={"side": f})
    np.testing.assert_array_equal(plucker.rnea(small, q, v, a, f_ext=_Items([["side", f]])), ref)
    np.testing.assert_array_equal(plucker.rnea(small, q, v, a, f_ext=_Items([("side", list(f))])), ref)
    for bad in (("side",), ("side", f, 1), "si", 3, None):
        with pytest.raises(ValueError, match=r"f_ext.items\(\) must yield \(name, force\) pairs, got"):
            plucker.rnea(small, q, v, a, f_ext=_Items([bad]))
    with pytest.raises(ValueError, match=r"f_ext.items\(\) must return an iterable"):
        plucker.rnea(small, q, v, a, f_ext=_Items(3))


def _frame_in_body(m, q, frame, body):
    """(R, p): the frame's axes and origin in body coordinates, from the world poses."""
    T = np.linalg.inv(plucker.frame_pose(m, q, body)) @ plucker.frame_pose(m, q, frame)
    return T[:3, :3], T[:3, 3]


@pytest.mark.parametrize("mid, frame_name, body", [("small", "tool", "slider"), ("small_floating", "tool", "slider"),
                                                   ("humanoid", "l_sole", "l_foot"), ("quadruped", "LF_FOOT", "LF_SHANK")])
def test_f_ext_on_a_frame(mid, frame_name, body):
    """A frame name in f_ext puts the force on the frame's body. 'world': the same 6-vector as for
    the body; 'local': [moment about the frame origin; force] in frame coordinates, i.e. on the body
    [R n + p x R f; R f] (R, p: the frame's axes and origin in the body), and tau = rnea - J^T f with
    the frame's local Jacobian."""
    m = get_model(mid)
    q, v, a = random_state(m, 23)
    rng = np.random.default_rng(23)
    f = rng.standard_normal(6)
    tau0 = plucker.rnea(m, q, v, a)
    # world: as if given for the body
    tau_w = plucker.rnea(m, q, v, a, f_ext={frame_name: f}, frame="world")
    assert close(tau_w, plucker.rnea(m, q, v, a, f_ext={body: f}, frame="world"), 1e-12)
    assert close(tau_w, tau0 - plucker.body_jacobian(m, q, frame_name, frame="world").T @ f, 1e-10)
    # local: moved to the body by hand
    R, p = _frame_in_body(m, q, frame_name, body)
    force_b = R @ f[3:]
    f_body = np.concatenate([R @ f[:3] + np.cross(p, force_b), force_b])
    tau_l = plucker.rnea(m, q, v, a, f_ext={frame_name: f}, frame="local")
    assert close(tau_l, plucker.rnea(m, q, v, a, f_ext={body: f_body}, frame="local"), 1e-10)
    assert close(tau_l, tau0 - plucker.body_jacobian(m, q, frame_name, frame="local").T @ f, 1e-10)
    # forward dynamics with the same force recovers a; forces on a frame and its body add up
    assert close(plucker.aba(m, q, v, tau_l, f_ext={frame_name: f}, frame="local"), a, 1e-9)
    assert close(plucker.forward_dynamics(m, q, v, tau_l, method="crba_ltdl", f_ext={frame_name: f}, frame="local"),
                 a, 1e-9)
    both = plucker.rnea(m, q, v, a, f_ext={frame_name: f, body: f}, frame="local")
    assert close(both, tau_l - plucker.body_jacobian(m, q, body, frame="local").T @ f, 1e-10)


# --------------------------------------------------------------------------- messages (issue: reliability)
def test_from_urdf_says_what_is_wrong_with_the_path(tmp_path):
    """/dev/null and directories used to be reported as 'No such URDF file'."""
    with pytest.raises(OSError, match="(?i)not a regular file.*character device") as info:
        plucker.Model.from_urdf("/dev/null")
    assert not isinstance(info.value, FileNotFoundError) and info.value.filename == "/dev/null"
    with pytest.raises(IsADirectoryError, match="(?i)is a directory") as info:
        plucker.Model.from_urdf(tmp_path)
    assert info.value.filename == str(tmp_path)
    fifo = tmp_path / "pipe.urdf"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="(?i)not a regular file.*named pipe"):
        plucker.Model.from_urdf(fifo)
    with pytest.raises(FileNotFoundError, match="No such URDF file"):
        plucker.Model.from_urdf(tmp_path / "missing.urdf")


def _latin1_urdf(tmp_path, xml):
    p = tmp_path / "latin1.urdf"
    p.write_bytes(xml.encode("latin-1"))
    return str(p)


def test_non_utf8_names_and_messages_arrive(tmp_path):
    """Names quoted from a file in another encoding used to give a ModelError with empty args, a
    UnicodeDecodeError from a loader warning, and unreadable name lists: decoded with
    backslashreplace now."""
    bad_link = SMALL_URDF.replace('<child link="side"/>', '<child link="nowh\xe9re"/>')
    with pytest.raises(plucker.ModelError) as info:
        plucker.Model.from_urdf(_latin1_urdf(tmp_path, bad_link))
    assert info.value.args and "nowh\\xe9re" in str(info.value)

    # A name that is not UTF-8 is refused when the model is built (the C++ Model), escaped.
    bad_joint = SMALL_URDF.replace('"elbow"', '"elb\xe9w"')
    with pytest.raises(plucker.ModelError, match=r"elb\\xe9w.*not valid UTF-8"):
        plucker.Model.from_urdf(_latin1_urdf(tmp_path, bad_joint))


# --------------------------------------------------------------------------- new error classes
def test_convergence_and_numerical_error_classes():
    assert issubclass(plucker.ConvergenceError, ArithmeticError)
    assert issubclass(plucker.NumericalError, FloatingPointError)
    e = plucker.ConvergenceError("stopped", 7, 1e-3)
    assert (str(e), e.iterations, e.residual) == ("stopped", 7, 1e-3)
    e2 = pickle.loads(pickle.dumps(e))
    assert type(e2) is plucker.ConvergenceError and (str(e2), e2.iterations, e2.residual) == ("stopped", 7, 1e-3)
    assert plucker.ConvergenceError("x").iterations is None


def test_numerical_error_from_cpp(small):
    with pytest.raises(plucker.NumericalError, match="joint '"):
        plucker.rnea(small, plucker.neutral(small), np.full(3, 1e200), np.zeros(3))


# --------------------------------------------------------------------------- workspace on first use
def test_workspace_is_made_on_first_use(small):
    """Model.from_urdf used to build a plucker::Data at once: made by the first call that needs it."""
    m = plucker.Model.from_urdf_string(SMALL_URDF)
    assert m._has_workspace is False
    q = plucker.neutral(m)
    plucker.random_configuration(m, 0)
    plucker.integrate(m, q, np.zeros(3))
    plucker.forward_dynamics_choice(m)
    plucker.jsim_pattern(m)
    plucker.rnea_batch(m, np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)))
    assert m._has_workspace is False
    np.testing.assert_array_equal(plucker.rnea(m, q, np.zeros(3), np.zeros(3)),
                                  plucker.rnea(small, q, np.zeros(3), np.zeros(3)))
    assert m._has_workspace is True
    c = plucker.build_chain(4)
    plucker.crba(c, np.zeros(4))
    assert c._has_workspace
    c.add_loop_joint("close", "ball", "link1", "link4")  # resizes: the workspace is made again when needed
    assert c._has_workspace is False
    assert plucker.constraint_residual(c, np.zeros(4)).shape == (3,)
    assert c._has_workspace
