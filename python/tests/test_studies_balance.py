"""Balance studies (issue #22): velocity gains, the simple planar model, the balance controller.

Checks, each against something independent of the code under test:
- the double pendulum's velocity gain against its 2-DoF closed form (JSIM and COM written out);
- the gain against a simulated impulse: a short stiff torque pulse integrated with RK4 over
  plucker.aba, its velocity changes compared with the gain (free others), and with a model in
  which the other joints are welded (locked others);
- the simple model's two equations (L dot = m g x, x dot = L/(m g Tc^2) + G qd) against finite
  differences of a simulated trajectory;
- the controller designed from wrong masses: uniform errors with an ideal servo change nothing
  (closed form); the static equilibrium of the true robot under the wrong law against where the
  simulation settles, the linearised poles against the simulated decay or growth rate (on both
  sides of the stability boundary), the simple model's steady-state offset formula against the
  equilibrium; every 10 % sign pattern balances through the commanded moves within stated bounds;
- initial tilts: small ones against the linearised closed loop's peaks, moderate ones recovered
  within the stated limits, a large one not;
- bad input gets a clear error.
"""
import math
import os
import sys

import numpy as np
import pytest

import plucker
import plucker_studies as ps

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "studies"))

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


# ------------------------------------------------------------------ the balance controller
def hold(q0):
    return lambda t: (q0, np.zeros(len(q0)), np.zeros(len(q0)))


@pytest.mark.parametrize("p", [3.0, 8.0])
def test_four_term_law_places_the_full_robots_poles(p):
    # Linearise the *full* nonlinear robot (plucker.aba) under the law at the balance point by
    # central differences: its characteristic polynomial must be (s + p)^4, which the gains were
    # designed for from the two-number model alone.
    m = ps.planar_chain(**DP)
    q0 = ps.balanced_configuration(m, np.array([0.0, 0.5]))
    ctl = ps.PlanarBalanceController(m, "joint2", q0, p, hold(q0))

    def f(z):
        return np.concatenate([z[2:], plucker.aba(m, z[:2], z[2:], ctl.torque(0.0, z[:2], z[2:]))])

    z0 = np.concatenate([q0, np.zeros(2)])
    A = np.column_stack([(f(z0 + e) - f(z0 - e)) / 2e-6 for e in 1e-6 * np.eye(4)])
    np.testing.assert_allclose(np.poly(A), np.poly([-p] * 4), rtol=1e-5)


def test_balanced_configuration_puts_com_over_the_foot():
    m = ps.planar_chain(**TP)
    q = ps.balanced_configuration(m, np.array([0.3, 0.4, -0.9]))
    assert q[1:] == pytest.approx([0.4, -0.9])
    assert abs(plucker.center_of_mass(m, q)[0]) < 1e-12  # the contact point is the origin


def test_push_recovery():
    m = ps.planar_chain(**DP)
    q0 = ps.balanced_configuration(m, np.array([0.0, 0.5]))
    top = plucker.frame_pose(m, q0, "link2")[:3, 3] + 0.8 * plucker.frame_pose(m, q0, "link2")[:3, 2]
    v0 = ps.point_impulse(m, q0, "link2", top, [0.5, 0.0, 0.0])
    ctl = ps.PlanarBalanceController(m, "joint2", q0, 5.0, hold(q0))
    T, Q, V = ps.rk4_rollout(m, q0, v0, ctl.torque, 3.0, 2e-3, record_every=10)
    x = np.array([ps.planar_balance_model(m, q).x for q in Q])
    assert np.max(np.abs(x)) < 0.1  # the COM never leaves a 10 cm band around the foot
    assert abs(x[-1]) < 2e-3 and abs(Q[-1, 1] - q0[1]) < 1e-2  # back to the balanced pose
    late = T > 2.0
    assert np.max(np.abs(x[late])) < 0.2 * np.max(np.abs(x))  # the error has decayed


def test_point_impulse_changes_angular_momentum_by_the_impulses_moment():
    # L = H_1. v is the angular momentum about the contact axis (y through the origin); a push
    # iota at point p changes it by (p x iota) . y — an independent statement of mechanics.
    m = ps.planar_chain(**DP)
    q = np.array([0.2, 0.7])
    p = plucker.frame_pose(m, q, "link2")[:3, 3] + 0.5 * plucker.frame_pose(m, q, "link2")[:3, 2]
    iota = np.array([1.3, 0.0, -0.4])
    dv = ps.point_impulse(m, q, "link2", p, iota)
    assert plucker.crba(m, q)[0] @ dv == pytest.approx(np.cross(p, iota)[1], rel=1e-12)


def test_reverse_time_lowpass_matches_closed_forms():
    T = 0.3
    t = np.linspace(0.0, 4.0, 4001)
    step = (t >= 2.0).astype(float)
    y = ps.reverse_time_lowpass(t, step, T)
    expect = np.where(t >= 2.0, 1.0, np.exp(-(2.0 - t) / T))
    # the step is a ramp over one sample on the grid: compare away from it
    far = np.abs(t - 2.0) > 2e-3
    np.testing.assert_allclose(y[far], expect[far], atol=5e-3)
    # a ramp u = t (held after the end): y = t + T exactly, away from the end (e^-30 there)
    T = 0.1
    y = ps.reverse_time_lowpass(t, t, T)
    inner = t < 4.0 - 30 * T
    np.testing.assert_allclose(y[inner], t[inner] + T, rtol=1e-12, atol=1e-9)
    with pytest.raises(ValueError, match="increasing"):
        ps.reverse_time_lowpass(t[::-1], t, T)


def test_preview_filter_removes_the_wrong_way_motion():
    m = ps.planar_chain(**DP)
    q0 = ps.balanced_configuration(m, np.array([0.0, 0.5]))
    Tc = ps.planar_balance_model(m, q0).Tc
    grid = np.arange(0.0, 5.0, 1e-3)
    raw = np.clip((grid - 1.0) / 1.0, 0.0, 1.0) * (-0.8) + 0.5  # 0.5 -> -0.3 rad over 1 s from t = 1 s
    result = {}
    for name, series in (("raw", raw), ("preview", ps.reverse_time_lowpass(grid, raw, Tc))):
        ctl = ps.PlanarBalanceController(
            m, "joint2", q0, 5.0, lambda t, s=series: (np.array([0.0, np.interp(t, grid, s)]), np.zeros(2), np.zeros(2)))
        T, Q, V = ps.rk4_rollout(m, q0, np.zeros(2), ctl.torque, 3.0, 4e-3, record_every=5)
        x = np.array([ps.planar_balance_model(m, q).x for q in Q])
        result[name] = (T, Q, x)
    T, Q, x = result["raw"]
    assert Q[:, 1].max() - 0.5 > 0.05  # non-minimum phase: the joint first moves against the command
    T, Q, x = result["preview"]
    assert Q[:, 1].max() - 0.5 < 0.02  # the preview filter removes (most of) it
    assert np.max(np.abs(x[T < 1.0])) > 1e-3  # ... by leaning before the command moves
    assert abs(Q[-1, 1] + 0.3) < 0.02 and abs(x[-1]) < 5e-3  # and it arrives, balanced


def test_compensating_the_other_joints_motion_helps():
    m = ps.planar_chain(**TP)
    q0 = ps.balanced_configuration(m, np.array([0.0, 0.3, -0.3]))

    def cmd(t):
        s = min(max((t - 0.5) / 0.8, 0.0), 1.0)
        y = q0[1] + 0.4 * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5)
        yd = 0.4 * (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / 0.8 if 0 < s < 1 else 0.0
        ydd = 0.4 * (60 * s - 180 * s ** 2 + 120 * s ** 3) / 0.64 if 0 < s < 1 else 0.0
        return np.array([0.0, y, q0[2]]), np.array([0.0, yd, 0.0]), np.array([0.0, ydd, 0.0])

    peak = {}
    for comp in (False, True):
        ctl = ps.PlanarBalanceController(m, "joint3", q0, 5.0, cmd, compensate_others=comp)
        T, Q, V = ps.rk4_rollout(m, q0, np.zeros(3), ctl.torque, 3.0, 4e-3, record_every=5)
        x = np.array([ps.planar_balance_model(m, q).x for q in Q])
        peak[comp] = np.max(np.abs(x))
        assert abs(Q[-1, 1] - (q0[1] + 0.4)) < 1e-2 and abs(Q[-1, 2] - q0[2]) < 2e-2 and abs(x[-1]) < 5e-3
    assert peak[True] < peak[False]


def test_controller_and_gain_errors():
    m = ps.planar_chain(**DP)
    q0 = np.zeros(2)
    with pytest.raises(ValueError, match="velocity gain G"):
        ps.balance_gains(0.3, 0.0, 5.0, 9.81, 5.0)
    with pytest.raises(ValueError, match="p = "):
        ps.balance_gains(0.3, 0.1, 5.0, 9.81, -1.0)
    with pytest.raises(ValueError, match="balance joint 'contact'"):
        ps.PlanarBalanceController(m, "contact", q0, 5.0, hold(q0))
    with pytest.raises(ValueError, match="dt > 0"):
        ps.rk4_rollout(m, q0, q0, lambda t, q, v: q0, 1.0, 0.0)


# ------------------------------------------------------------------ 3-D point contact
def test_spatial_gain_matrix():
    import balance as study
    m = plucker.Model.from_urdf_string(study.spatial_double_pendulum_urdf(**DP))
    contact = ["contact_x", "contact_y", "contact_z"]
    planar = ps.planar_chain(**DP)
    # Sagittal motion: the x row of joint2y's column is the planar gain, and nothing couples.
    G = ps.velocity_gain_matrix(m, np.array([0.0, 0.1, 0.0, 0.5, 0.0]), ["joint2y", "joint2x"], contact_joints=contact)
    assert G[0, 0] == pytest.approx(ps.velocity_gain(planar, np.array([0.1, 0.5]), "joint2"), rel=1e-12)
    assert abs(G[1, 0]) < 1e-14 and abs(G[0, 1]) < 1e-14
    # A general configuration: the free gain of joint2x against a simulated impulse (both rows).
    q = np.array([0.1, -0.2, 0.3, 0.5, -0.4])
    R = study.study_spatial()
    sim, free = R["impulse"]
    np.testing.assert_allclose(sim, free, rtol=2e-3, atol=2e-5)
    np.testing.assert_allclose(free, ps.velocity_gain_matrix(m, q, ["joint2x"], others="free", contact_joints=contact)[:, 0])
    with pytest.raises(ValueError, match="must be joint number 1"):
        ps.velocity_gain_matrix(m, q, ["joint2x"], contact_joints=["contact_y"])


# ------------------------------------------------------------------ the study script
def test_quick_study_writes_its_page(tmp_path):
    import os
    import subprocess
    import sys
    env = dict(os.environ)
    r = subprocess.run([sys.executable, os.path.join(study_dir(), "balance.py"), "--quick", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    page = (tmp_path / "balance.md").read_text()
    for fig in ("balance_design_mass.png", "balance_design_length.png", "balance_push.png",
                "balance_tracking.png", "balance_other_motion.png", "balance_rolling.png", "balance_compliant.png",
                "balance_tp_tracking.png", "balance_mass_errors.png", "balance_margins.png", "balance_tilts.png"):
        assert (tmp_path / fig).stat().st_size > 1000 and f"({fig})" in page
    import re
    assert "## Agreement with the papers" in page and not re.search(r"(?<![\^_])\b(nan|inf)\b", page.lower())


def study_dir():
    import os
    return os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "studies")


def test_hyq_on_two_feet():
    import os
    import balance as study
    path = os.path.join(study.MODELS_DIR, "hyq.urdf")
    if not os.path.exists(path):
        pytest.skip("../shared/models/hyq.urdf not present")
    H = study.study_hyq()
    b = H["model"]
    assert abs(b.x) < 1e-10 and b.height > 0.3  # balanced over the support line
    gains = {r[0]: r[1] for r in H["rows"]}
    # HyQ is left-right and front-back symmetric: the two swing legs' HAA gains are opposite.
    assert gains["rf_haa_joint"] == pytest.approx(-gains["lh_haa_joint"], rel=0.05)
    # The hip abduction moves the leg across the line: it has the largest gain.
    assert max(gains, key=lambda k: abs(gains[k])).endswith("haa_joint")


# ------------------------------------------------------------------ rolling contact
def rolling_double_pendulum_closed_form(q1, q2, r, lengths, masses, coms, inertias):
    """(G_contact, G_ground): the planar double pendulum on a wheel of radius r centred on the
    foot joint, rolling without slip. Written out from positions: the wheel centre is at
    (r q1, r); link 1's COM at centre + c1 (sin q1, cos q1); link 2's at centre + l1 (sin q1,
    cos q1) + c2 (sin q12, cos q12). x = COM - contact point (r q1, 0) horizontally."""
    (l1, _), (m1, m2), (c1, c2), (I1, I2) = lengths, masses, coms, inertias
    m = m1 + m2
    s1, k1, s12, k12 = math.sin(q1), math.cos(q1), math.sin(q1 + q2), math.cos(q1 + q2)
    # d(COM_i)/dq1 and d(COM_2)/dq2, (x, z) components
    a1 = (r + c1 * k1, -c1 * s1)
    a2 = (r + l1 * k1 + c2 * k12, -(l1 * s1 + c2 * s12))
    b2 = (c2 * k12, -c2 * s12)
    H11 = I1 + I2 + m1 * (a1[0] ** 2 + a1[1] ** 2) + m2 * (a2[0] ** 2 + a2[1] ** 2)
    H12 = I2 + m2 * (a2[0] * b2[0] + a2[1] * b2[1])
    J1 = (m1 * c1 * k1 + m2 * (l1 * k1 + c2 * k12)) / m  # d x / d q1 (relative to the contact point)
    J2 = m2 * c2 * k12 / m
    G = J2 - J1 * H12 / H11
    return G, G + r * (-H12 / H11)  # the ground frame adds the contact point's velocity r dq1


@pytest.mark.parametrize("q", [(0.0, 0.0), (0.1, 0.5), (-0.3, 1.2)])
@pytest.mark.parametrize("r", [0.02, 0.3])
def test_rolling_double_pendulum_matches_closed_form(q, r):
    m = ps.planar_chain(**DP)
    qa = np.array(q)
    Gc, Gg = rolling_double_pendulum_closed_form(*q, r, **DP)
    assert ps.velocity_gain(m, qa, "joint2", radius=r) == pytest.approx(Gc, rel=1e-12, abs=1e-15)
    assert ps.velocity_gain(m, qa, "joint2", radius=r, reference="ground") == pytest.approx(Gg, rel=1e-12, abs=1e-15)
    # Two joints: locked and free others agree for the rolling contact too.
    assert ps.velocity_gain(m, qa, "joint2", radius=r, others="free") == pytest.approx(Gc, rel=1e-11)


def test_rolling_gain_tends_to_the_point_gain():
    m = ps.planar_chain(**DP)
    q = np.array([0.1, 0.5])
    G0 = ps.velocity_gain(m, q, "joint2")
    assert ps.velocity_gain(m, q, "joint2", radius=0.0, reference="ground") == G0
    slope = (ps.velocity_gain(m, q, "joint2", radius=1e-4) - G0) / 1e-4
    for r in (1e-3, 1e-5, 1e-7):
        d = ps.velocity_gain(m, q, "joint2", radius=r) - G0
        # O(r): |G(r) - G(0)| <= 1 m^-1 * r, and the difference is linear in r to 1e-3 relative
        assert abs(d) <= 1.0 * r and d == pytest.approx(slope * r, rel=2e-2 if r == 1e-3 else 1e-3)
    # 3-D: the spatial double pendulum's 2 x 2 gain matrix
    import balance as study
    ms = plucker.Model.from_urdf_string(study.spatial_double_pendulum_urdf(**DP))
    qs = np.array([0.1, -0.2, 0.3, 0.5, -0.4])
    C = ["contact_x", "contact_y", "contact_z"]
    G0 = ps.velocity_gain_matrix(ms, qs, ["joint2y", "joint2x"], contact_joints=C)
    G1 = ps.velocity_gain_matrix(ms, qs, ["joint2y", "joint2x"], contact_joints=C, radius=1e-7)
    assert np.max(np.abs(G1 - G0)) <= 1.0 * 1e-7 and np.max(np.abs(G1 - G0)) > 0


def pin_chain_urdf(q1, r, lengths, masses, coms, inertias):
    """The double pendulum pinned at the wheel's contact point P instead of rolling: the pin is at
    the origin, and link 1 (at pin angle q1) is offset so that the wheel centre sits at r above
    P: offset d = R_y(-q1) (0, 0, r) = r (-sin q1, 0, cos q1) in link 1's frame."""
    (l1, _), (m1, m2), (c1, c2), (I1, I2) = lengths, masses, coms, inertias
    dx, dz = -r * math.sin(q1), r * math.cos(q1)
    return f"""<?xml version="1.0"?><robot name="pin"><link name="ground"/>
<link name="a"><inertial><origin xyz="{dx!r} 0 {dz + c1!r}"/><mass value="{m1!r}"/>
<inertia ixx="{I1!r}" ixy="0" ixz="0" iyy="{I1!r}" iyz="0" izz="{I1!r}"/></inertial></link>
<link name="b"><inertial><origin xyz="0 0 {c2!r}"/><mass value="{m2!r}"/>
<inertia ixx="{I2!r}" ixy="0" ixz="0" iyy="{I2!r}" iyz="0" izz="{I2!r}"/></inertial></link>
<joint name="pin" type="continuous"><parent link="ground"/><child link="a"/><axis xyz="0 1 0"/></joint>
<joint name="knee" type="continuous"><parent link="a"/><child link="b"/><origin xyz="{dx!r} 0 {dz + l1!r}"/>
<axis xyz="0 1 0"/></joint></robot>"""


@pytest.mark.parametrize("q", [(0.0, 0.0), (0.25, -0.7), (-0.4, 1.1)])
def test_rolling_instant_equals_a_pin_at_the_contact_point(q):
    # At an instant, rolling without slip is a rotation about the contact point: the rolling
    # robot's inertia and impulse response are those of a robot pinned there (another model).
    r = 0.15
    m = ps.planar_chain(**DP)
    pin = plucker.Model.from_urdf_string(pin_chain_urdf(q[0], r, **DP))
    qa = np.array(q)
    Hr, R = ps.rolling_inertia(m, qa, r)
    Hp = plucker.crba(pin, qa)
    np.testing.assert_allclose(Hr, Hp, rtol=1e-12, atol=1e-13)
    Gp = ps.velocity_gain(pin, qa, "knee")  # absolute COM velocity of the pinned robot
    assert ps.velocity_gain(m, qa, "joint2", radius=r, reference="ground") == pytest.approx(Gp, rel=1e-11)
    # relative to the moving contact point: minus r times the foot's rate change -Hp12/Hp11
    assert ps.velocity_gain(m, qa, "joint2", radius=r) == pytest.approx(Gp + r * Hp[0, 1] / Hp[0, 0], rel=1e-11)


@pytest.mark.parametrize("qs", [(0.0, 0.0, 0.0, 0.5, -0.4), (0.0, 0.0, 0.8, -0.3, 0.6)])
def test_rolling_ball_equals_a_pin_at_the_contact_point_3d(qs):
    import balance as study
    r = 0.12
    C = ["contact_x", "contact_y", "contact_z"]
    roll = plucker.Model.from_urdf_string(study.spatial_double_pendulum_urdf(**DP, contact_height=r))
    pin = plucker.Model.from_urdf_string(study.spatial_double_pendulum_urdf(**DP, link1_offset=r))
    q = np.array(qs)  # tilt joints at 0: the ball's centre is straight above the contact point
    Hr, _ = ps.rolling_inertia(roll, q, r, C)
    np.testing.assert_allclose(Hr, plucker.crba(pin, q), rtol=1e-12, atol=1e-13)
    A = ["joint2y", "joint2x"]
    for others in ("locked", "free"):
        Gp = ps.velocity_gain_matrix(pin, q, A, others=others, contact_joints=C)
        Gr = ps.velocity_gain_matrix(roll, q, A, others=others, contact_joints=C, radius=r, reference="ground")
        np.testing.assert_allclose(Gr, Gp, rtol=1e-11, atol=1e-14)


# ------------------------------------------------------------------ compliant support
def _foot_com_x(m, q):
    return float((ps.horizontal_directions(m, q) @ (plucker.center_of_mass(m, q) - ps.contact_point(m, q)))[0])


@pytest.mark.parametrize("k", [0.0, 20.0, 100.0, 1e3, 1e4])
def test_compliant_gain_matches_simulated_compliant_foot(k):
    # The double pendulum upright, its foot pressed (1 mm preload) onto a linear compliant ground
    # at five points across a 0.2 m sole (plucker.Simulator, no friction, no damping): rotational
    # stiffness k = k_p sum s_i^2. Joint 2 ramps to 1e-3 rad/s within eps = 0.5 ms and holds; the
    # COM displacement over joint 2's displacement after T = 0.3 s is compared with the formula
    # at the window T - eps/2 (the ramp's mean delay). k = 0: no contact points (plucker.aba).
    m = ps.planar_chain(**DP)
    q0 = np.zeros(2)
    T, eps, dqd = 0.3, 5e-4, 1e-3
    s_pts = np.linspace(-0.1, 0.1, 5)
    if k == 0.0:
        def acc(q, v, tau):
            return plucker.aba(m, q, v, tau)
    else:
        sim = plucker.Simulator(m, dt=1e-3)
        sim.add_ground(offset=1e-3, contact="linear", stiffness=k / np.sum(s_pts ** 2), damping=0.0, friction=0.0)
        for s in s_pts:
            sim.add_point("link1", position=(s, 0.0, 0.0))
        acc = sim.acceleration
        assert np.max(np.abs(acc(q0, np.zeros(2), plucker.gravity_torques(m, q0)))) < 1e-9  # at rest
    _, Q, _ = ps.prescribed_rollout(acc, q0, np.zeros(2), [1], lambda t: [dqd / eps if t < eps else 0.0], T, eps / 4)
    G_sim = _foot_com_x(m, Q[-1]) / (Q[-1, 1] - Q[0, 1])
    G = ps.compliant_contact_gain(m, q0, ["joint2"], k, T - eps / 2)[0, 0]
    assert G_sim == pytest.approx(G, abs=2e-5)  # measured: <= 9e-6 (linearisation, RK4)


def test_compliant_gain_limits():
    m = ps.planar_chain(**DP)
    q = np.zeros(2)
    b = ps.planar_balance_model(m, q)
    G_point = ps.velocity_gain(m, q, "joint2")
    J_A = plucker.center_of_mass_jacobian(m, q)[0, 1]
    T = 0.3
    # stiff support: the robot is a fixed-base robot, G -> J_A (error ~ |J_P H_PA/H_PP| / sqrt(z))
    for k, tol in ((1e8, 2e-4), (1e12, 2e-6)):
        assert ps.compliant_contact_gain(m, q, ["joint2"], k, T)[0, 0] == pytest.approx(J_A, abs=tol)
    # no support stiffness: the point-contact robot, which topples during the window:
    # x(T) = G Tc sinh(T/Tc) dqd (simple model), so the mean gain is G sinh(T/Tc)/(T/Tc)
    u = T / b.Tc
    assert ps.compliant_contact_gain(m, q, ["joint2"], 0.0, T)[0, 0] == pytest.approx(G_point * math.sinh(u) / u, rel=1e-9)
    # a spring gives no impulse: over a vanishing window every stiffness has the point gain
    for k in (0.0, 50.0, 1e4):
        assert ps.compliant_contact_gain(m, q, ["joint2"], k, 1e-7)[0, 0] == pytest.approx(G_point, rel=1e-9)
    # k = m g h (the support exactly cancels gravity's negative stiffness): the series branch
    kc = b.mass * b.gravity * b.height
    g_at = ps.compliant_contact_gain(m, q, ["joint2"], kc, T)[0, 0]
    assert g_at == pytest.approx(0.5 * (ps.compliant_contact_gain(m, q, ["joint2"], kc * (1 + 1e-7), T)[0, 0]
                                        + ps.compliant_contact_gain(m, q, ["joint2"], kc * (1 - 1e-7), T)[0, 0]), rel=1e-8)
    # 3-D point contact with an isotropic support stiffness
    import balance as study
    ms = plucker.Model.from_urdf_string(study.spatial_double_pendulum_urdf(**DP))
    qs = np.array([0.0, 0.0, 0.3, 0.5, -0.4])
    C = ["contact_x", "contact_y", "contact_z"]
    A = ["joint2y", "joint2x"]
    Gpt = ps.velocity_gain_matrix(ms, qs, A, contact_joints=C)
    np.testing.assert_allclose(ps.compliant_contact_gain(ms, qs, A, 1e3, 1e-7, contact_joints=C), Gpt, rtol=1e-8, atol=1e-12)
    JA = (ps.horizontal_directions(ms, qs, C) @ plucker.center_of_mass_jacobian(ms, qs))[:, 3:]
    np.testing.assert_allclose(ps.compliant_contact_gain(ms, qs, A, 1e12 * np.eye(3), T, contact_joints=C), JA, atol=2e-6)


def test_rolling_and_compliant_bad_input():
    m = ps.planar_chain(**DP)
    q = np.zeros(2)
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="radius"):
            ps.velocity_gain(m, q, "joint2", radius=bad)
        with pytest.raises(ValueError, match="radius"):
            ps.rolling_inertia(m, q, bad)
    with pytest.raises(TypeError, match="radius"):
        ps.velocity_gain(m, q, "joint2", radius="big")
    with pytest.raises(ValueError, match="reference"):
        ps.velocity_gain(m, q, "joint2", radius=0.1, reference="world")
    with pytest.raises(ValueError, match="window"):
        ps.compliant_contact_gain(m, q, ["joint2"], 10.0, 0.0)
    with pytest.raises(ValueError, match="shape"):
        ps.compliant_contact_gain(m, q, ["joint2"], np.eye(2), 0.1)
    with pytest.raises(ValueError, match="semi-definite"):
        ps.compliant_contact_gain(m, q, ["joint2"], -5.0, 0.1)
    with pytest.raises(ValueError, match="finite"):
        ps.compliant_contact_gain(m, q, ["joint2"], float("nan"), 0.1)
    with pytest.raises(ValueError, match="contact joint"):
        ps.compliant_contact_gain(m, q, ["contact"], 10.0, 0.1)


# ------------------------------------------------------------------ model errors and initial tilts
# A controller designed from wrong link masses (and inertias in proportion) drives the true robot.
def _hold_controller(study, name, errors, servo=False):
    true, wrong, ctl, raw, b = study.controller(name, errors, servo=servo, hold=True)
    q0 = ps.balanced_configuration(true, np.array(study.SCENARIOS[name]["q"]))
    return true, ctl, q0, b


def _decay(true, ctl, qe, T, dt=4e-3, kick=1e-4):
    """Simulate from the equilibrium with the foot tilted by `kick`; fitted growth rate of
    |state - equilibrium| over the second half, and the final deviation."""
    q = qe.copy()
    q[0] += kick
    t, Q, V = ps.rk4_rollout(true, q, np.zeros(true.nv), ctl.torque, T, dt, record_every=5)
    dev = np.linalg.norm(np.hstack([Q - qe, V]), axis=1)
    late = t >= T / 2
    return float(np.polyfit(t[late], np.log(dev[late]), 1)[0]), dev


def test_uniform_mass_error_with_an_ideal_servo_changes_nothing():
    # Scaling every mass and inertia by the same factor leaves x, Tc and G unchanged and scales L
    # and m g G alike, so the balance law's accelerations are identical (closed form); with the
    # torques computed from the true model the torques are identical too.
    import balance as study
    for name, n in (("DP", 2), ("TP", 3)):
        _, ctl_true, q0, _ = _hold_controller(study, name, [0.0] * n)
        _, ctl_scaled, _, _ = _hold_controller(study, name, [0.3] * n, servo=True)
        rng = np.random.default_rng(1)
        for _ in range(3):
            q = q0 + 0.05 * rng.standard_normal(n)
            v = 0.2 * rng.standard_normal(n)
            np.testing.assert_allclose(ctl_scaled.torque(0.0, q, v), ctl_true.torque(0.0, q, v), rtol=1e-9, atol=1e-9)


def test_static_equilibrium_and_poles_match_the_simulation_with_wrong_masses():
    # DP, link 1 10 % light and link 2 10 % heavy: the static solve predicts where the simulation
    # settles, and the largest real part of the linearised poles its decay rate (dominant pole
    # -2.93 /s, the next at -3.86: a 5 % tolerance on the fitted slope).
    import balance as study
    true, ctl, q0, b = _hold_controller(study, "DP", [-0.1, 0.1])
    qe = ps.closed_loop_equilibrium(true, ctl.torque, q0)
    lam = np.linalg.eigvals(ps.closed_loop_matrix(true, ctl.torque, qe))
    rate, dev = _decay(true, ctl, qe, 8.0)
    assert np.max(lam.real) < 0
    assert rate == pytest.approx(np.max(lam.real), rel=0.05)
    assert dev[-1] < 1e-3 * dev[0]
    # The steady state differs from the command: the wrong model's COM estimate is biased.
    assert 0.05 < abs(qe[b] - 0.5) < 0.15


@pytest.mark.parametrize("eps", [0.25, 0.35])
def test_the_stability_boundary_predicted_by_the_poles_is_where_the_simulation_fails(eps):
    # DP, errors (-, +): the linearised poles cross into the right half plane at e ~ 0.30 (the
    # study's margin sweep). Below it a small tilt decays, above it it grows, each at the rate the
    # largest real part of the poles says (10 %).
    import balance as study
    true, ctl, q0, b = _hold_controller(study, "DP", [-eps, eps])
    qe = ps.closed_loop_equilibrium(true, ctl.torque, q0)
    re = float(np.max(np.linalg.eigvals(ps.closed_loop_matrix(true, ctl.torque, qe)).real))
    rate, dev = _decay(true, ctl, qe, 6.0, kick=1e-5)
    assert (re < 0) == (eps < 0.3)
    assert rate == pytest.approx(re, rel=0.1)
    if eps < 0.3:
        assert dev[-1] < 0.1 * dev.max()  # after a transient growth (the closed loop is non-normal)
    else:
        assert dev[-1] > 30 * dev[0]


def test_simple_model_steady_state_offset_formula():
    # First-order formula (simple model) against the full static equilibrium, ideal servo, 1 %
    # errors on single links: agreement to 2 % (the relative error grows linearly with e).
    import balance as study
    for name, n in (("DP", 2), ("TP", 3)):
        for i in range(n):
            errors = [0.0] * n
            errors[i] = 0.01
            true, ctl, q0, b = _hold_controller(study, name, errors, servo=True)
            qe = ps.closed_loop_equilibrium(true, ctl.torque, q0)
            assert study.simple_model_offset(name, errors) == pytest.approx(qe[b] - q0[b], rel=0.02)


@pytest.mark.parametrize("name", ["DP", "TP"])
def test_balance_holds_with_ten_percent_mass_errors(name):
    # Every sign pattern of +-10 % on every link: the robot balances through the commanded moves
    # (preview on), the COM stays within a band (about twice the error-free peak: 1.6 cm DP, 1.3 cm
    # TP), and it settles (|x| < 1 mm) where the static solve says (1e-2 rad), the balance joint
    # within 0.2 rad (DP) / 0.6 rad (TP) of its command: the steady-state error the biased COM
    # estimate causes, largest for TP (+, +, -) at the end pose (0.51 rad; the study tabulates it).
    import balance as study
    band, maxerr = {"DP": 0.016, "TP": 0.013}[name], {"DP": 0.2, "TP": 0.6}[name]
    n = len(study.SCENARIOS[name]["q"])
    for label, signs in study.error_patterns(n)[2 * n:]:
        r = study.run_tracking(name, [0.1 * s for s in signs], 6.0, 5e-3, 4)
        assert "failed" not in r, (label, r)
        assert r["peak_x"] < band, label
        assert r["end_x"] < 1e-3 and r["end_v"] < 2e-2, label
        assert r["err_b"] < maxerr, label
        assert abs(r["err_b"] - r["pred_err_b"]) < 1e-2, label
        assert r["max_re"] < -1.0, label


def test_tilt_recovery_subset():
    # Representative initial tilts of the study's grid. Small ones: the peaks of torque and
    # balance-joint travel match the linearised closed loop's prediction (2 %; the nonlinearity
    # shows at a few % by 0.02 rad). Moderate ones recover within the stated limits; a large lean
    # with a rate toward the fall does not.
    import balance as study
    for name in ("DP", "TP"):
        lin = study.linear_tilt_peaks(name, 4.0)
        tau_max = study.tilt_torque_limit(name)
        for lean, rate in ((0.005, 0.0), (-0.003, 0.03)):
            r = study._tilt_trial((name, lean, rate, 4.0, 5e-3))
            assert r["ok"], (name, lean, rate, r)
            pt, pr = study.linear_tilt_peak(lin, lean, rate)
            assert r["tau"] == pytest.approx(pt, rel=0.02) and r["travel"] == pytest.approx(pr, rel=0.02)
        for lean, rate in ((0.03, 0.0), (-0.02, 0.05)):
            r = study._tilt_trial((name, lean, rate, 4.0, 5e-3))
            assert r["ok"] and r["tau"] <= tau_max and r["travel"] <= study.TILT_TRAVEL, (name, lean, rate, r)
        r = study._tilt_trial((name, 0.15, 0.4, 4.0, 5e-3))
        assert not (r["ok"] and r["tau"] <= tau_max and r["travel"] <= study.TILT_TRAVEL)


def test_triple_pendulum_follows_a_balance_joint_command_while_joint_2_moves():
    # Joint 3 (balance) commanded -0.3 -> 0.1 rad while joint 2 moves 0.3 -> 0.6 rad: both end on
    # their commands (1e-3 rad) with the COM over the foot (1 mm) after a COM excursion below 1 cm;
    # previewing the combined command q3 + r q2 cuts joint 3's wrong-way dip to under half of the
    # unfiltered one (0.06 vs 0.32 rad in the study).
    import balance as study
    runs = {pv: study.run_tracking("TP", [0.0, 0.0, 0.0], 6.0, 5e-3, 4, preview=pv) for pv in ("none", "combined")}
    for pv, r in runs.items():
        assert r["err_b"] < 1e-3 and r["err_o"] < 1e-3 and r["end_x"] < 1e-3 and r["peak_x"] < 0.01, pv
    dip = {pv: -0.3 - np.min(r["Q"][:, 2]) for pv, r in runs.items()}
    assert dip["combined"] < 0.5 * dip["none"]
    with pytest.raises(ValueError, match="preview must be"):
        study.run_tracking("TP", [0.0, 0.0, 0.0], 1.0, 5e-3, 4, preview=True)


def test_model_error_tools_bad_input():
    import balance as study
    m = ps.planar_chain(**DP)
    q0 = ps.balanced_configuration(m, np.array([0.0, 0.5]))
    ctl = ps.PlanarBalanceController(m, "joint2", q0, 5.0, hold(q0))
    with pytest.raises(ValueError, match="torque\\(t, q, v\\) must return 2"):
        ps.closed_loop_matrix(m, lambda t, q, v: np.zeros(3), q0)
    with pytest.raises(TypeError, match="callable"):
        ps.closed_loop_equilibrium(m, None, q0)
    with pytest.raises(ValueError, match="q has shape"):
        ps.closed_loop_equilibrium(m, ctl.torque, np.zeros(3))
    with pytest.raises(ArithmeticError, match="equilibrium|stalled"):
        ps.closed_loop_equilibrium(m, lambda t, q, v: np.array([0.0, 100.0]), q0)  # beyond gravity: no rest
    with pytest.raises(ValueError, match="torque_model"):
        ps.PlanarBalanceController(m, "joint2", q0, 5.0, hold(q0), torque_model=ps.planar_chain(**TP))
    with pytest.raises(ValueError, match="one error"):
        study.mass_error_params(DP, [0.1])
