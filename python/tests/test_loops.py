"""Closed loops from Python: the API surface of issue 7, checked against independent facts
(the three methods agree; the equation of motion holds via rnea; the slider-crank closed form)."""
import math

import numpy as np
import pytest

import plucker

METHODS = ["kkt", "range_space", "null_space"]


def consistent_state(m, rng, spread=0.2):
    q = plucker.assemble(m, plucker.integrate(m, plucker.neutral(m), spread * rng.standard_normal(m.nv)))
    v = plucker.project_velocity(m, q, rng.standard_normal(m.nv))
    return q, v


@pytest.mark.parametrize("build", [plucker.build_four_bar, plucker.build_slider_crank, plucker.build_delta])
def test_methods_agree_and_satisfy_the_equations(build):
    m = build()
    rng = np.random.default_rng(1)
    q, v = consistent_state(m, rng)
    assert np.max(np.abs(plucker.constraint_residual(m, q))) < 1e-11
    L = plucker.constraint_jacobian(m, q)
    assert L.shape == (m.num_constraints, m.nv)
    c = plucker.constraint_bias(m, q, v)
    tau = rng.standard_normal(m.nv)
    results = [plucker.constrained_forward_dynamics(m, q, v, tau, method=meth) for meth in METHODS]
    for qdd, lam in results:
        np.testing.assert_allclose(L @ qdd, c, atol=1e-9)
        # Eq. 15 by the RNEA: M qdd + C - tau = L^T lam
        np.testing.assert_allclose(plucker.rnea(m, q, v, qdd) - tau, L.T @ lam, atol=1e-8)
        np.testing.assert_allclose(qdd, results[0][0], atol=1e-8)
        np.testing.assert_allclose(lam, results[0][1], atol=1e-8)


def test_slider_crank_closed_form():
    m = plucker.build_slider_crank()
    r, l, th0 = 0.2, 0.6, 0.5
    for th in [0.6, 0.7]:
        q = plucker.neutral(m)
        q[0] = th - th0
        q = plucker.assemble(m, q, fixed_joints=["crank_joint"])
        x = plucker.forward_kinematics(m, q)["slider"][0, 3]
        assert x == pytest.approx(r * math.cos(th) + math.sqrt(l * l - (r * math.sin(th)) ** 2), abs=1e-12)


def test_loop_joint_names_and_urdf(tmp_path):
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "models", "four_bar.urdf")
    m = plucker.Model.from_urdf(path)
    assert m.loop_joint_names == ["loop_joint"]
    assert m.num_constraints == 5
    q = plucker.assemble(m, np.array([1.0, 1.0, 1.5]), fixed_joints=["crank_joint"])
    assert q[0] == 1.0
    assert np.max(np.abs(plucker.constraint_residual(m, q))) < 1e-12


def test_add_loop_joint_and_baumgarte():
    m = plucker.build_chain(4)
    assert m.loop_joint_names == []
    poses = plucker.forward_kinematics(m, plucker.neutral(m))
    p = np.linalg.inv(poses["link1"]) @ poses["link4"][:, 3]  # link4's origin in link1, at q = 0
    m.add_loop_joint("close", "ball", "link1", "link4", predecessor_xyz=p[:3])
    assert m.loop_joint_names == ["close"]
    assert m.num_constraints == 3
    q = plucker.assemble(m, plucker.neutral(m) + 0.1)
    v = plucker.project_velocity(m, q, np.ones(m.nv))
    qdd, lam = plucker.constrained_forward_dynamics(m, q, v, np.zeros(m.nv), method="null_space", baumgarte=(5.0, 5.0))
    assert qdd.shape == (m.nv,) and lam.shape == (3,)


def test_bad_input():
    m = plucker.build_four_bar()
    q = plucker.neutral(m)
    with pytest.raises(ValueError):
        plucker.constrained_forward_dynamics(m, q, np.zeros(3), np.zeros(3), method="lu")
    with pytest.raises(ValueError):
        plucker.constrained_forward_dynamics(m, q, np.zeros(2), np.zeros(3))
    with pytest.raises(ValueError):
        plucker.constrained_forward_dynamics(m, q, np.zeros(3), np.zeros(3), baumgarte=(1.0,))
    with pytest.raises(ValueError):
        m.add_loop_joint("bad", "hinge", "crank", "rocker")
    # Actuation that cannot produce a general motion of the 1-DoF linkage: none at all.
    v = plucker.project_velocity(m, q, np.array([1.0, 0.0, 0.0]))
    qdd, _ = plucker.constrained_forward_dynamics(m, q, v, np.array([1.0, 0.0, 0.0]))
    u, lam = plucker.constrained_inverse_dynamics(m, q, v, qdd, ["crank_joint"])
    assert u[0] == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(plucker.SingularError):
        plucker.constrained_inverse_dynamics(m, q, v, qdd, [])


def test_loop_joint_forces_balance_the_tree():
    # The loop joint's world force, applied to the successor (+) and predecessor (-) as external
    # forces, reproduces tau_c = L^T lam: rnea with those forces equals rnea without minus L^T lam.
    m = plucker.build_four_bar()
    rng = np.random.default_rng(3)
    q, v = consistent_state(m, rng)
    qdd, lam = plucker.constrained_forward_dynamics(m, q, v, np.array([0.5, 0.0, 0.0]))
    f = plucker.loop_joint_forces(m, q, lam, frame="world")["loop_joint"]
    L = plucker.constraint_jacobian(m, q)
    tau_with = plucker.rnea(m, q, v, qdd, f_ext={"rocker": f, "coupler": -f}, frame="world")
    np.testing.assert_allclose(tau_with, plucker.rnea(m, q, v, qdd) - L.T @ lam, atol=1e-9)


def test_joint_lists_and_gains_are_checked():
    """Non-str joint names and non-numeric Baumgarte gains used to raise pybind11's RuntimeError
    'Unable to cast Python instance to C++ type'; a str for a list of names iterated its letters."""
    m = plucker.build_four_bar()
    q, z = plucker.neutral(m), np.zeros(3)
    with pytest.raises(ValueError, match=r"fixed_joints must hold names \(str\), got 3"):
        plucker.assemble(m, q, fixed_joints=[3])
    with pytest.raises(ValueError, match=r"fixed_joints must be an iterable of names, got the str 'crank_joint'"):
        plucker.assemble(m, q, fixed_joints="crank_joint")
    with pytest.raises(ValueError, match="fixed_joints must be an iterable"):
        plucker.assemble(m, q, fixed_joints=3)
    np.testing.assert_array_equal(plucker.assemble(m, q, fixed_joints=("crank_joint",)),
                                  plucker.assemble(m, q, fixed_joints=iter(["crank_joint"])))
    with pytest.raises(ValueError, match=r"actuated_joints must hold names \(str\), got 1"):
        plucker.constrained_inverse_dynamics(m, q, z, z, [1])
    with pytest.raises(ValueError, match=r"baumgarte\[0\] \(alpha\) must be a real number, got 'a'"):
        plucker.constrained_forward_dynamics(m, q, z, z, baumgarte=("a", 1.0))
    with pytest.raises(ValueError, match=r"baumgarte\[1\] \(beta\) must be a real number, got None"):
        plucker.constrained_forward_dynamics(m, q, z, z, baumgarte=(1.0, None))
