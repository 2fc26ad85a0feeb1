"""Balance studies (issue #22): velocity gains, the simple planar model, the balance controller.

Checks, each against something independent of the code under test:
- the double pendulum's velocity gain against its 2-DoF closed form (JSIM and COM written out);
- the gain against a simulated impulse: a short stiff torque pulse integrated with RK4 over
  plucker.aba, its velocity changes compared with the gain (free others), and with a model in
  which the other joints are welded (locked others);
- the simple model's two equations (L dot = m g x, x dot = L/(m g Tc^2) + G qd) against finite
  differences of a simulated trajectory;
- bad input gets a clear error.
"""
import math

import numpy as np
import pytest

import plucker
import plucker_studies as ps

G0 = 9.81
DP = dict(lengths=[1.0, 0.8], masses=[2.0, 3.0], coms=[0.45, 0.3], inertias=[0.15, 0.4])


def double_pendulum_closed_form(q1, q2, lengths, masses, coms, inertias):
    """(H, J, G): the planar double pendulum on a point foot, q1 = the foot's angle from vertical,
    q2 = the knee's relative angle, x = horizontal, positive toward the lean; J = d x_com / dq."""
    (l1, _), (m1, m2), (c1, c2), (I1, I2) = lengths, masses, coms, inertias
    m = m1 + m2
    H11 = I1 + I2 + m1 * c1 ** 2 + m2 * (l1 ** 2 + c2 ** 2 + 2 * l1 * c2 * math.cos(q2))
    H12 = I2 + m2 * (c2 ** 2 + l1 * c2 * math.cos(q2))
    H22 = I2 + m2 * c2 ** 2
    J1 = (m1 * c1 * math.cos(q1) + m2 * (l1 * math.cos(q1) + c2 * math.cos(q1 + q2))) / m
    J2 = m2 * c2 * math.cos(q1 + q2) / m
    return np.array([[H11, H12], [H12, H22]]), np.array([J1, J2]), J2 - J1 * H12 / H11


@pytest.mark.parametrize("q", [(0.0, 0.0), (0.1, 0.4), (-0.3, 1.2), (0.7, -2.0)])
def test_double_pendulum_gain_matches_closed_form(q):
    m = ps.planar_chain(**DP)
    H, J, G = double_pendulum_closed_form(*q, **DP)
    qa = np.array(q)
    np.testing.assert_allclose(plucker.crba(m, qa), H, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(plucker.center_of_mass_jacobian(m, qa)[0], J, rtol=1e-13, atol=1e-14)
    assert ps.velocity_gain(m, qa, "joint2") == pytest.approx(G, rel=1e-12, abs=1e-14)
    # With two joints only, locking or freeing "the others" is the same (there are none).
    assert ps.velocity_gain(m, qa, "joint2", others="free") == pytest.approx(G, rel=1e-12, abs=1e-14)


def test_point_mass_on_massless_leg_has_zero_gain():
    # All the mass in one point at the top of link 2 and nothing else: moving joint 2 at constant
    # angular momentum cannot move the COM (G = J2 - J1 H12/H11 = c - (l1+c) c/(l1+c) = 0).
    # (planar_chain gives a point mass 1e-6 m l^2 of inertia: the gain is that small, ~1e-7 m.)
    m = ps.planar_chain([1.0, 0.5], [1e-6, 4.0], coms=[0.5, 0.5], inertias=[0.0, 0.0])
    assert abs(ps.velocity_gain(m, np.array([0.0, 0.0]), "joint2")) < 1e-6
    # and a rotational inertia of link 2 makes it negative: I2 (m2 c2/m - h) / H11 < 0.
    m = ps.planar_chain([1.0, 0.5], [1e-6, 4.0], coms=[0.5, 0.5], inertias=[0.0, 0.5])
    assert ps.velocity_gain(m, np.array([0.0, 0.0]), "joint2") == pytest.approx(0.5 * (0.5 - 1.5) / (0.5 + 4 * 1.5 ** 2), rel=1e-5)


def impulse_response(model, q0, joint, impulse, eps, substeps=20):
    """Velocity change of a torque pulse impulse/eps on [0, eps] at `joint` from rest, minus the
    same interval without the pulse (which removes gravity's first-order effect)."""
    j = model.joint_v_index(joint)

    def run(scale):
        tau = np.zeros(model.nv)
        tau[j] = scale * impulse / eps
        _, Q, V = ps.rk4_rollout(model, q0, np.zeros(model.nv), lambda t, q, v: tau, eps, eps / substeps)
        return Q[-1], V[-1]

    q1, v1 = run(1.0)
    q0_, v0_ = run(0.0)
    D = ps.horizontal_directions(model, q0)
    xd1 = (D @ plucker.center_of_mass_jacobian(model, q1) @ v1)[0]
    xd0 = (D @ plucker.center_of_mass_jacobian(model, q0_) @ v0_)[0]
    return v1 - v0_, xd1 - xd0


@pytest.mark.parametrize("q", [(0.0, 0.3), (0.2, -0.8)])
def test_double_pendulum_gain_matches_simulated_impulse(q):
    m = ps.planar_chain(**DP)
    q = np.array(q)
    G = ps.velocity_gain(m, q, "joint2")
    errs = []
    for eps in (1e-3, 1e-4):
        dv, dxd = impulse_response(m, q, "joint2", 0.5, eps)
        errs.append(abs(dxd / dv[1] - G))
        # No impulse at the foot: its momentum H_1. v is unchanged (to the pulse's O(eps) error).
        assert abs(plucker.crba(m, q)[0] @ dv) < 50 * eps
    assert errs[1] < 2e-4 * max(abs(G), 0.01)
    assert errs[1] < 0.2 * errs[0]  # the error is the pulse's: it shrinks with eps (first order)


TP = dict(lengths=[0.9, 0.7, 0.5], masses=[3.0, 2.0, 5.0], coms=[0.4, 0.35, 0.2], inertias=[0.2, 0.1, 0.5])


@pytest.mark.parametrize("joint", ["joint2", "joint3"])
def test_triple_pendulum_free_gain_matches_impulse(joint):
    m = ps.planar_chain(**TP)
    q = np.array([0.1, -0.4, 0.6])
    G = ps.velocity_gain(m, q, joint, others="free")
    dv, dxd = impulse_response(m, q, joint, 0.5, 1e-4)
    assert dxd / dv[m.joint_v_index(joint)] == pytest.approx(G, rel=2e-3, abs=2e-5)


@pytest.mark.parametrize("joint,other", [("joint2", 3), ("joint3", 2)])
def test_triple_pendulum_locked_gain_matches_welded_model(joint, other):
    # The locked gain of the full model = the gain of the model with the other joint welded at
    # its angle, and the welded model's gain is checked by its own simulated impulse.
    q = np.array([0.1, -0.4, 0.6])
    m = ps.planar_chain(**TP)
    G = ps.velocity_gain(m, q, joint, others="locked")
    welded = ps.planar_chain(**TP, locked={other: q[other - 1]})
    qw = np.delete(q, other - 1)
    assert ps.velocity_gain(welded, qw, joint) == pytest.approx(G, rel=1e-12, abs=1e-14)
    dv, dxd = impulse_response(welded, qw, joint, 0.5, 1e-4)
    assert dxd / dv[welded.joint_v_index(joint)] == pytest.approx(G, rel=2e-3, abs=2e-5)
    # and the free gain differs (the other joint moves under the impulse), so the option matters.
    assert abs(ps.velocity_gain(m, q, joint, others="free") - G) > 1e-3


def test_simple_model_equations_along_a_trajectory():
    # L dot = m g x and x dot = L/(m g Tc^2) + sum G_j qd_j, with L = H_1. v, hold at every
    # instant while the robot moves under arbitrary joint torques (no torque at the foot).
    m = ps.planar_chain(**TP)
    dt = 1e-3

    def tau(t, q, v):
        return np.array([0.0, 3.0 * math.sin(7 * t), -2.0 * math.cos(5 * t)])

    T, Q, V = ps.rk4_rollout(m, np.array([0.02, 0.1, -0.1]), np.array([0.1, 0.0, 0.3]), tau, 0.3, dt)
    L = np.array([plucker.crba(m, q)[0] @ v for q, v in zip(Q, V)])
    x = np.array([ps.planar_balance_model(m, q).x for q in Q])
    Ldot = (L[2:] - L[:-2]) / (2 * dt)  # central differences, O(dt^2)
    bm = [ps.planar_balance_model(m, q, v) for q, v in zip(Q, V)]
    np.testing.assert_allclose(Ldot, [b.mass * G0 * b.x for b in bm[1:-1]], atol=2e-5 * np.max(np.abs(Ldot)) + 1e-6)
    xdot_fd = (x[2:] - x[:-2]) / (2 * dt)
    xdot_model = [b.L / (b.mass * G0 * b.Tc ** 2) + b.gains["joint2"] * v[1] + b.gains["joint3"] * v[2]
                  for b, v in zip(bm[1:-1], V[1:-1])]
    np.testing.assert_allclose(xdot_fd, xdot_model, atol=1e-5)
    np.testing.assert_allclose(xdot_fd, [b.xdot for b in bm[1:-1]], atol=1e-5)


def test_time_constant_of_a_single_inverted_pendulum():
    # One link, point mass at height h: Tc = sqrt(h/g); with a rod's own inertia, sqrt(H11/(m g c)).
    m = ps.planar_chain([1.0], [2.0], coms=[1.0], inertias=[0.0])  # (1e-6 m l^2 of inertia)
    assert ps.planar_balance_model(m, np.zeros(1)).Tc == pytest.approx(math.sqrt(1.0 / G0), rel=1e-6)
    m = ps.planar_chain([1.0], [2.0])
    assert ps.planar_balance_model(m, np.zeros(1)).Tc == pytest.approx(math.sqrt((1 / 3) / (G0 * 0.5)), rel=1e-12)


def test_bad_input_is_named():
    m = ps.planar_chain(**DP)
    q = np.zeros(2)
    with pytest.raises(ValueError, match="no joint named 'knee'"):
        ps.velocity_gain(m, q, "knee")
    with pytest.raises(ValueError, match="contact joint .*passive"):
        ps.velocity_gain(m, q, "contact")
    with pytest.raises(ValueError, match="q has shape"):
        ps.velocity_gain(m, np.zeros(3), "joint2")
    with pytest.raises(ValueError, match="non-finite"):
        ps.velocity_gain(m, np.array([0.0, np.nan]), "joint2")
    with pytest.raises(ValueError, match="others"):
        ps.velocity_gain(m, q, "joint2", others="loose")
    with pytest.raises(TypeError, match="plucker.Model"):
        ps.velocity_gain("robot", q, "joint2")
    # A first joint that is not revolute is not a point foot.
    slider = plucker.Model.from_urdf_string(ps.planar_chain_urdf([1.0, 1.0], [1.0, 1.0]).replace(
        '<joint name="contact" type="continuous">', '<joint name="contact" type="prismatic"><limit lower="-1" upper="1" effort="1" velocity="1"/>'))
    with pytest.raises(ValueError, match="contact joint 'contact' is prismatic"):
        ps.velocity_gain(slider, q, "joint2")
    # A vertical contact axis has no horizontal direction of motion.
    vertical = plucker.Model.from_urdf_string(ps.planar_chain_urdf([1.0, 1.0], [1.0, 1.0]).replace(
        '<axis xyz="0 1 0"/></joint>', '<axis xyz="0 0 1"/></joint>', 1))
    with pytest.raises(ValueError, match="vertical axis"):
        ps.velocity_gain(vertical, q, "joint2")
    with pytest.raises(ValueError, match="not above the contact point"):
        ps.planar_balance_model(m, np.array([math.pi, 0.0]))
    with pytest.raises(ValueError, match="masses"):
        ps.planar_chain([1.0, 1.0], [1.0])
