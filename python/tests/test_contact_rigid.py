"""Rigid contact from Python (docs/contact.md, "Rigid contact"): plucker.solve_lcp against a
brute-force enumeration of active sets, Newton's restitution of a bouncing ball, a box's rest
forces summing to m g, options and errors."""
import itertools

import numpy as np
import pytest

import plucker

R = 0.1
BALL = f"""<?xml version="1.0"?>
<robot name="ball"><link name="ball"><inertial><mass value="1.0"/>
<inertia ixx="{0.4 * R * R}" ixy="0" ixz="0" iyy="{0.4 * R * R}" iyz="0" izz="{0.4 * R * R}"/>
</inertial></link></robot>"""


def enumerate_lcp(M, q, tol=1e-9):
    """All solutions of LCP(M, q) over the 2^n active sets (least squares on each)."""
    n = len(q)
    out = []
    for mask in itertools.product([False, True], repeat=n):
        A = np.flatnonzero(mask)
        z = np.zeros(n)
        if len(A):
            za = np.linalg.lstsq(M[np.ix_(A, A)], -q[A], rcond=None)[0]
            if np.max(np.abs(M[np.ix_(A, A)] @ za + q[A])) > tol:
                continue
            z[A] = za
        w = M @ z + q
        if z.min() >= -tol and w.min() >= -tol:
            out.append(z)
    return out


def test_solve_lcp_matches_enumeration_and_is_complementary():
    rng = np.random.default_rng(11)
    worst = 0.0
    for n in range(1, 6):
        for _ in range(40):
            A = rng.normal(size=(n, n))
            M = A @ A.T + 0.1 * np.eye(n)
            q = rng.normal(size=n)
            z = plucker.solve_lcp(M, q)
            w = M @ z + q
            assert z.min() >= 0 and w.min() >= -1e-12 and abs(z @ w) < 1e-12
            (ref,) = enumerate_lcp(M, q)
            worst = max(worst, np.max(np.abs(z - ref)))
    assert worst < 1e-10


def test_solve_lcp_errors():
    M = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert enumerate_lcp(M, np.array([-1.0, -1.0])) == []
    with pytest.raises(plucker.SingularError, match="secondary ray"):
        plucker.solve_lcp(M, [-1.0, -1.0])
    with pytest.raises(ValueError, match="shape"):
        plucker.solve_lcp(np.eye(3), [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        plucker.solve_lcp([[np.nan, 0], [0, 1]], [-1.0, 1.0])


def ball_sim(e, mu=0.0):
    m = plucker.Model.from_urdf_string(BALL, floating_base=True)
    sim = plucker.Simulator(m, dt=1e-3)
    sim.add_ground(contact="rigid", restitution=e, friction=mu)
    sim.add_sphere("ball", radius=R)
    return sim


@pytest.mark.parametrize("e", [0.0, 0.5, 0.9])
def test_ball_bounces_with_newtons_restitution(e):
    sim = ball_sim(e)
    q = np.array([0, 0, R + 0.4, 0, 0, 0, 1.0])
    v = np.zeros(6)
    for _ in range(2000):
        vz = v[5]
        q, v = sim.step(q, v)
        if sim.rigid_report()["active"]:
            assert abs(v[5] + e * vz) <= 4e-16 * abs(vz)  # post-impact = -e pre-impact
            assert vz < -2.5  # ~ sqrt(2 g 0.4) = 2.8 m/s
            break
    else:
        pytest.fail("no impact")


def test_box_rests_with_weight_on_its_corners():
    box = plucker.Model.from_urdf_string(BALL.replace('"ball"', '"box"'), floating_base=True)
    sim = plucker.Simulator(box, dt=1e-3)
    sim.add_ground(contact="rigid", friction=0.5)
    for x, y in [(-0.1, -0.1), (-0.1, 0.1), (0.1, -0.1), (0.1, 0.1)]:
        sim.add_point("box", (x, y, -0.05))
    Q, V, F = sim.rollout([0, 0, 0.05, 0, 0, 0, 1.0], np.zeros(6), np.zeros((200, 6)))
    assert np.max(np.abs(V)) < 1e-12
    assert np.allclose(F[:, :, 2].sum(axis=1), 9.81, rtol=1e-10, atol=0)
    # No net tangential force at rest on a level plane (the four corners' friction is statically
    # indeterminate: PGS may leave a self-equilibrated set of tangential forces, which cancel).
    assert np.max(np.abs(F[:, :, :2].sum(axis=1))) < 1e-9


def test_rigid_options_and_errors():
    sim = ball_sim(0.5)
    sim.set_rigid_options(contact_tolerance=1e-8, pgs_tolerance=1e-10)
    with pytest.raises(ValueError, match="contact_tolerance"):
        sim.set_rigid_options(contact_tolerance=-1.0)
    with pytest.raises(ValueError, match="restitution"):
        sim.add_ground(contact="rigid", restitution=1.5)
    sim.integrator = "rk4"
    with pytest.raises(ValueError, match="rigid"):
        sim.step([0, 0, 1.0, 0, 0, 0, 1.0], np.zeros(6))
    assert plucker.coefficient_of_restitution("rigid", 1.0) == 0.0
