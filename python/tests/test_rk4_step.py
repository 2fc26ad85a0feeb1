"""plucker_control.rk4_step, the simulation step of the control examples.

Evidence, not assertion:
- a free rigid body (centre of mass at its origin, so gravity exerts no moment) spinning about a principal axis of its inertia keeps its body angular
  velocity, and its orientation turns about that axis at that rate: the closed form
  R(t) = R0 exp(omega t) (plucker.so3_exp), against the quaternion the step integrates (5e-12);
- the global error of a chain's passive motion falls 16x per halving of dt (fourth order: the
  ratio between 12 and 20), measured against the same integration at dt = 0.005 / 16;
- the quaternion of a tumbling free flyer stays unit (1e-13) without renormalisation;
- dt <= 0 is refused.
"""
import os
import sys

import numpy as np
import pytest

import plucker

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import plucker_control as pc  # noqa: E402

SPINNER = """<robot name="spinner"><link name="body"><inertial><origin xyz="0 0 0"/><mass value="2"/>
<inertia ixx="0.3" iyy="0.5" izz="0.7" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


def spinner():  # its centre of mass at the body origin: gravity exerts no moment on it
    return plucker.Model.from_urdf_string(SPINNER, floating_base=True)


def quat_to_matrix(qxyzw):
    x, y, z, w = qxyzw
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def passive(model):
    zero = np.zeros(model.nv)
    return lambda t, q, v: plucker.aba(model, q, v, zero)


def run(model, q, v, dt, seconds):
    f = passive(model)
    for k in range(int(round(seconds / dt))):
        q, v = pc.rk4_step(model, q, v, dt, f, k * dt)
    return q, v


def test_spin_about_a_principal_axis_matches_the_closed_form():
    m = spinner()
    q0 = plucker.neutral(m)
    omega = np.array([0.0, 0.0, 3.0])  # body z: a principal axis
    v0 = np.concatenate([omega, [0.1, 0.0, 0.0]])
    q, v = run(m, q0, v0, 1e-3, 1.0)
    np.testing.assert_allclose(v[:3], omega, atol=1e-12)
    R_exact = plucker.so3_exp(omega * 1.0)
    np.testing.assert_allclose(quat_to_matrix(q[3:7]), R_exact, atol=5e-12)


def test_fourth_order_convergence():
    m = plucker.build_chain(3, seed=2)
    q0 = np.array([0.4, -0.3, 0.8])
    v0 = np.array([0.5, 1.0, -0.7])
    reference, _ = run(m, q0, v0, 0.005 / 16, 1.0)
    errors = [np.abs(run(m, q0, v0, dt, 1.0)[0] - reference).max() for dt in (0.02, 0.01, 0.005)]
    ratios = [errors[0] / errors[1], errors[1] / errors[2]]
    assert all(12.0 < r < 20.0 for r in ratios), (errors, ratios)


def test_quaternion_stays_unit_while_tumbling():
    m = spinner()
    v0 = np.array([1.0, 2.0, 3.0, 0.0, 0.0, 0.0])  # not a principal axis: it tumbles
    q, _ = run(m, plucker.neutral(m), v0, 1e-3, 2.0)
    assert abs(np.linalg.norm(q[3:7]) - 1.0) < 1e-13


def test_bad_step_is_refused():
    m = plucker.build_chain(2)
    with pytest.raises(ValueError, match="dt must be > 0"):
        pc.rk4_step(m, np.zeros(2), np.zeros(2), 0.0, passive(m))
