"""plucker_control: the decoupled motion/force split of a task frame in frictionless contact and the
hybrid controller (Featherstone's contact model; docs/contact.md, "Hybrid motion/force control").

Evidence, not assertion:
- the motion-subsystem acceleration alpha is computed from the joint accelerations of plucker.aba
  (free) or of a KKT solve with M from the CRBA and C from the RNEA (rigid contact), not from the
  operational-space quantities the controller uses;
- the environment's wrench enters through aba's f_ext (not through J^T);
- the joint-space subspaces are checked for M-orthogonality with M from the CRBA;
- a simulation of the 6-DoF example arm against two stiffnesses: with the measured contact force
  cancelled, the surface error follows the closed form of e'' + 2 w e' + w^2 e = 0 and is the same
  for both; without it, the environment's effect dies out with the motion loop; the non-decoupled
  comparisons show the couplings (motion -> force, force loop -> motion).
Tolerances: relative C eps cond (C = 100, cond = cond(M) + cond(Lambda^-1)) for the identities;
the simulation's bounds are stated where they are asserted.
"""
import os
import sys

import numpy as np
import pytest

import plucker
from conftest import load_quiet, model_path, requires_models

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
import plucker_control as pc  # noqa: E402

EPS = np.finfo(float).eps
# the panda's mimic finger: the operational-space quantities and aba both treat the tree
pytestmark = pytest.mark.filterwarnings("ignore::plucker.ModelWarning")
ARM = os.path.join(HERE, "..", "..", "examples", "models", "plucker_arm.urdf")


def cond(A):
    s = np.linalg.svd(A, compute_uv=False)
    return s[0] / s[-1]


def arm():
    return plucker.Model.from_urdf(ARM), "tool0"


def panda():
    return load_quiet(model_path("panda")), "panda_hand_tcp"


def state(model, seed):
    rng = np.random.default_rng(seed)
    q = plucker.neutral(model)
    if model.nv >= 7:
        q[3], q[5] = -1.5, 1.5
    else:
        q[:6] = [0.2, -1.0, 1.2, -0.6, 0.9, 0.3][: model.nv]
    q = q + 0.3 * rng.standard_normal(model.nv)
    return q, rng.standard_normal(model.nv), rng


def contacts(rng):
    """Point contact (normal, off-centre point), a flat face (k = 3), and a random force subspace
    (k = 2) with a non-orthonormal basis of its motion freedoms."""
    T2 = rng.standard_normal((6, 2))
    N2 = pc.motion_freedoms(T2) @ (np.eye(4) + 0.5 * rng.standard_normal((4, 4)))
    return [(pc.point_contact([0.3, -0.2, 1.0], [0.01, 0.02, -0.03]), None),
            (pc.face_contact([0.0, 0.4, 1.0], [0.0, 0.0, -0.02]), None),
            (T2, N2)]


def xdd_of(dec, vdot):
    return dec.J @ vdot + dec.Jdot_v


MODELS = [pytest.param(arm, id="arm"), pytest.param(panda, id="panda", marks=requires_models)]


@pytest.mark.parametrize("load", MODELS)
def test_decoupling_identities(load):
    model, frame = load()
    for seed in range(3):
        q, v, rng = state(model, seed)
        for T, N in contacts(rng):
            dec = pc.decompose(model, q, v, frame, T, N)
            k = dec.T.shape[1]
            tol = 100 * EPS * (cond(dec.M) + cond(dec.Phi))
            a_m, f = rng.standard_normal(6 - k), rng.standard_normal(k)
            tau0 = rng.standard_normal(model.nv)
            tau = pc.hybrid_torque(dec, a_m, f, tau0)
            scale = 1 + np.abs(a_m).max() + np.abs(f).max()

            # Free space: alpha = a_m, and neither the force command nor the posture torque moves it.
            alpha = dec.motion_coordinates @ xdd_of(dec, plucker.aba(model, q, v, tau))
            assert np.abs(alpha - a_m).max() < tol * scale
            tau_f = pc.hybrid_torque(dec, a_m, f + rng.standard_normal(k) * 10, tau0)
            alpha_f = dec.motion_coordinates @ xdd_of(dec, plucker.aba(model, q, v, tau_f))
            assert np.abs(alpha_f - alpha).max() < tol * scale * 10
            # (the force command did move the frame: along Phi T)
            assert np.abs(xdd_of(dec, plucker.aba(model, q, v, tau_f) - plucker.aba(model, q, v, tau))).max() > 1e-3

            # An unknown environment's wrench T lam_e (through aba's f_ext, not J^T) leaves alpha alone.
            lam_e = 20 * rng.standard_normal(k)
            vdot_e = plucker.aba(model, q, v, tau, f_ext={frame: dec.T @ lam_e}, frame="local_world_aligned")
            assert np.abs(dec.motion_coordinates @ xdd_of(dec, vdot_e) - a_m).max() < tol * scale * 20
            gamma_e = dec.force_coordinates @ (xdd_of(dec, vdot_e) - xdd_of(dec, plucker.aba(model, q, v, tau)))
            assert np.abs(gamma_e - lam_e).max() < tol * 20 * (1 + np.abs(lam_e).max())

            # Rigid, fixed environment (KKT with the CRBA and RNEA): lam = f whatever a_m and tau0 are.
            vdot_r, lam = pc.rigid_contact_force(model, q, v, tau, dec)
            assert np.abs(lam - f).max() < tol * scale * 10
            assert np.abs(dec.motion_coordinates @ xdd_of(dec, vdot_r) - a_m).max() < tol * scale * 10
            _, lam_m = pc.rigid_contact_force(model, q, v, pc.hybrid_torque(dec, 5 * a_m + 1, f, -tau0), dec)
            assert np.abs(lam_m - f).max() < tol * scale * 50


@pytest.mark.parametrize("load", MODELS)
def test_joint_space_subspaces_are_m_orthogonal_and_span(load):
    model, frame = load()
    q, v, rng = state(model, 7)
    for T, N in contacts(rng):
        dec = pc.decompose(model, q, v, frame, T, N)
        M = plucker.crba(model, q)
        tol = 100 * EPS * (cond(dec.M) + cond(dec.Phi))
        Sm, Sf, Nn = dec.S_motion, dec.S_force, dec.N_null
        norm = np.abs(M).max() * max(np.abs(Sm).max(), np.abs(Sf).max(), 1.0) ** 2
        assert np.abs(Sm.T @ M @ Sf).max() < tol * norm       # motion and force: M-orthogonal
        assert np.abs(Sf.T @ M @ Nn).max() < tol * norm       # and both to the null space of J
        assert np.abs(Sm.T @ M @ Nn).max() < tol * norm
        # torques: J^T Lambda N and J^T T are M^-1-orthogonal (the same statement, dual form)
        Minv = plucker.minv(model, q)
        assert np.abs((dec.J.T @ dec.Lambda @ dec.N).T @ Minv @ (dec.J.T @ dec.T)).max() < tol * norm
        ranks = [np.linalg.matrix_rank(A, tol=1e-9 * max(1.0, np.abs(A).max())) for A in (Sm, Sf, Nn)]
        assert ranks == [6 - dec.T.shape[1], dec.T.shape[1], model.nv - 6]
        assert np.linalg.matrix_rank(np.hstack([Sm, Sf, Nn])) == model.nv  # together: the joint space


@pytest.mark.parametrize("load", MODELS)
def test_the_non_decoupled_controllers_couple(load):
    model, frame = load()
    q, v, rng = state(model, 3)
    T = pc.point_contact([0.2, -0.1, 1.0])
    dec = pc.decompose(model, q, v, frame, T)
    a_m, f = rng.standard_normal(5), np.array([10.0])
    # Selection of the operational-space force: a motion command changes the rigid contact force by
    # -(T^T Phi T)^-1 T^T Phi (S - I) Lambda N a_m (S = N N^T), and does not with the decoupled law.
    S = dec.N @ dec.N.T
    _, lam_s = pc.rigid_contact_force(model, q, v, pc.selection_torque(dec, a_m, f), dec)
    _, lam_d = pc.rigid_contact_force(model, q, v, pc.hybrid_torque(dec, a_m, f), dec)
    predicted = -np.linalg.solve(dec.Phi_force, dec.T.T @ dec.Phi @ (S - np.eye(6)) @ dec.Lambda @ dec.N @ a_m)
    assert abs(lam_s[0] - f[0]) > 1e-3
    assert abs(lam_s[0] - f[0] - predicted[0]) < 1e-9 * (1 + abs(predicted[0]))
    assert abs(lam_d[0] - f[0]) < 1e-9
    # Selection of the acceleration: the force loop's output a_f moves the motion subsystem by
    # (N^T Lambda N)^-1 N^T Lambda T a_f.
    a_f = np.array([3.0])
    tau = pc.acceleration_selection_torque(dec, a_m, a_f, f)
    alpha = dec.motion_coordinates @ xdd_of(dec, plucker.aba(model, q, v, tau))
    leak = dec.motion_coordinates @ dec.T @ a_f
    assert np.abs(leak).max() > 1e-3
    assert np.abs(alpha - a_m - leak).max() < 1e-9 * (1 + np.abs(leak).max())


def test_bad_input_is_refused_with_a_clear_error():
    model, frame = arm()
    q, v, _ = state(model, 0)
    T = pc.point_contact([0, 0, 1])
    with pytest.raises(ValueError, match="T must be a 6 x k"):
        pc.decompose(model, q, v, frame, np.ones((5, 1)))
    with pytest.raises(ValueError, match="linearly dependent"):
        pc.decompose(model, q, v, frame, np.hstack([T, 2 * T]))
    with pytest.raises(ValueError, match="1 to 5 columns"):
        pc.decompose(model, q, v, frame, np.eye(6))
    with pytest.raises(ValueError, match="non-finite"):
        pc.decompose(model, q, v, frame, T * np.nan)
    with pytest.raises(ValueError, match="not the annihilator"):
        pc.decompose(model, q, v, frame, T, np.eye(6)[:, 1:])
    with pytest.raises(ValueError, match="6 - k = 5 columns"):
        pc.decompose(model, q, v, frame, T, np.eye(6)[:, :4])
    with pytest.raises(ValueError, match="normal is zero"):
        pc.point_contact([0, 0, 0])
    with pytest.raises(ValueError, match="name of a body or frame"):
        pc.decompose(model, q, v, 3, T)
    dec = pc.decompose(model, q, v, frame, T)
    with pytest.raises(ValueError, match="a_motion must have 5 entries"):
        pc.hybrid_torque(dec, np.zeros(6), [1.0])
    with pytest.raises(ValueError, match="force must have 1 entries"):
        pc.hybrid_torque(dec, np.zeros(5), [1.0, 2.0])
    with pytest.raises(ValueError, match="tau_posture has a non-finite"):
        pc.hybrid_torque(dec, np.zeros(5), [1.0], np.full(model.nv, np.inf))
    with pytest.raises(ValueError, match="left inverse of N"):
        pc.environment_leak(dec, np.zeros((5, 6)))
    with pytest.raises(Exception, match="no_such_frame"):
        pc.decompose(model, q, v, "no_such_frame", T)


def test_surface_tracking_is_invariant_to_the_environment_stiffness():
    """The example's simulation on the 6-DoF arm, 1.2 s at dt = 1 ms, k = 1e4 and 1e5 N/m."""
    import hybrid_force_control as ex

    setup = ex.Setup(ARM, "tool0", 20.0)  # a tilted plane
    runs = {(c, k): ex.run(setup, c, k, 1.2) for c in ("decoupled", "cancelled", "force_selection",
                                                       "acceleration_selection") for k in (1e4, 1e5)}
    t = runs[("cancelled", 1e4)]["t"]
    late = t >= 1.0

    def diff(c, rows=slice(None)):
        return np.abs(runs[(c, 1e4)]["e"][rows] - runs[(c, 1e5)]["e"][rows]).max()

    # alpha = a_m at every step for the decoupled laws and both stiffnesses (aba vs the command).
    for c in ("decoupled", "cancelled"):
        for k in (1e4, 1e5):
            assert runs[(c, k)]["alpha_err"].max() < 1e-9
    # With the contact force measured and cancelled: the surface error is the closed form
    # e = e'(0) t exp(-w t) to RK4's accuracy (2e-12 m measured), the same for both stiffnesses.
    de0 = np.concatenate([np.zeros(3), setup.G[3:, 3:] @ setup.desired(0.0)[1]])
    exact = np.outer(t * np.exp(-ex.OMEGA * t), de0)
    for k in (1e4, 1e5):
        assert np.abs(runs[("cancelled", k)]["e"] - exact).max() < 1e-9
    assert diff("cancelled") < 1e-9
    # Decoupled without a force sensor: the environment moved the surface coordinates only through the
    # force transient (0.57 mm, 5.0 mrad apart), which the motion loop removes (2.7e-6 after 1 s).
    assert diff("decoupled", late) < 1e-5
    # The force error is confined to the force subsystem: after the transient the circling does not
    # disturb the force (4.4e-6 N off measured), the transients differ with the stiffness (peak force
    # 12.5 N against 16.7 N).
    for k in (1e4, 1e5):
        f = runs[("decoupled", k)]["force"][t >= 0.5]
        assert np.abs(f - ex.FORCE).max() < 1e-4
    peaks = [runs[("decoupled", k)]["force"].max() for k in (1e4, 1e5)]
    assert peaks[1] - peaks[0] > 1.0
    # Selection of the operational-space force: the circling drives the force (0.71 N off), and the
    # stiffness then acts on the surface error long after the transient (2.7e-5 after 1 s, 10x).
    f_sel = runs[("force_selection", 1e4)]["force"][t >= 0.5]
    assert np.abs(f_sel - ex.FORCE).max() > 0.05
    assert diff("force_selection", late) > 3 * diff("decoupled", late)
    # Selection of the acceleration: the force loop's damping drives alpha away from the command.
    assert runs[("acceleration_selection", 1e4)]["alpha_err"].max() > 1.0
