"""Frames and the everyday API: the three reference frames, dJ/dt, frame accelerations, the
centroidal momentum, world-aligned external forces, SO(3)/SE(3) helpers, frames and payloads
added from Python, limit checks, the once-per-model warning of tree algorithms on loop models.

Each quantity is checked against something computed another way: finite differences along
q(t) = integrate(q, v t + a t^2 / 2), the momentum balance of a floating robot (dh_G/dt = sum of
the external wrenches, with qdd from the ABA), conversions written out here, closed forms.
"""
import os
import pickle
import warnings

import numpy as np
import pytest

import plucker

HERE = os.path.dirname(os.path.abspath(__file__))
ARM = os.path.join(HERE, "..", "..", "examples", "models", "plucker_arm.urdf")
FOUR_BAR = os.path.join(HERE, "..", "..", "examples", "models", "four_bar.urdf")
FRAMES = ("world", "local", "local_world_aligned")


def skew(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


@pytest.fixture(scope="module")
def humanoid():
    """A floating-base humanoid with a tool frame offset and rotated from its last body."""
    m = plucker.build_humanoid(seed=3)
    m.add_frame("tool", m.body_names[-1], xyz=(0.07, -0.03, 0.11), rpy=(0.3, -0.2, 0.5))
    return m


def state(m, seed):
    rng = np.random.default_rng(seed)
    return plucker.random_configuration(m, seed=seed), rng.standard_normal(m.nv), rng.standard_normal(m.nv)


def along(m, q, v, a, t):
    return plucker.integrate(m, q, v * t + 0.5 * a * t * t)


@pytest.mark.parametrize("name", ["tool", None])
def test_jacobians_in_three_frames(humanoid, name):
    m = humanoid
    name = name or m.body_names[-1]
    q, v, _ = state(m, 1)
    T = plucker.frame_pose(m, q, name)
    R, p = T[:3, :3], T[:3, 3]
    J = {f: plucker.body_jacobian(m, q, name, f) for f in FRAMES}
    # world-aligned = world axes at the frame origin: the linear rows are the origin's velocity
    h = 1e-6
    pdot = (plucker.frame_pose(m, plucker.integrate(m, q, v, h), name)[:3, 3] -
            plucker.frame_pose(m, plucker.integrate(m, q, v, -h), name)[:3, 3]) / (2 * h)
    assert np.allclose(J["local_world_aligned"][3:] @ v, pdot, rtol=0, atol=1e-8 * (1 + np.abs(pdot).max()))
    # the same rows from the spatial (world) Jacobian: v_p = v_0 + omega x p
    lwa = np.vstack([J["world"][:3], J["world"][3:] - skew(p) @ J["world"][:3]])
    assert np.allclose(lwa, J["local_world_aligned"], atol=1e-12)
    # local = the world-aligned rows rotated into the frame's axes
    assert np.allclose(np.vstack([R.T @ lwa[:3], R.T @ lwa[3:]]), J["local"], atol=1e-12)
    assert np.allclose(plucker.frame_velocity(m, q, v, name, "local_world_aligned"), J["local_world_aligned"] @ v,
                       atol=1e-12)
    # the operational-space task Jacobian uses the same frames
    for f in FRAMES:
        assert np.allclose(plucker.operational_space(m, q, v, [name], frame=f).J, J[f], atol=1e-12)


@pytest.mark.parametrize("frame", FRAMES)
def test_jacobian_time_variation_against_finite_differences(humanoid, frame):
    m = humanoid
    q, v, _ = state(m, 2)
    h = 1e-6
    for name in ("tool", m.body_names[5]):
        dJ = plucker.jacobian_time_variation(m, q, v, name, frame)
        fd = (plucker.body_jacobian(m, plucker.integrate(m, q, v, h), name, frame) -
              plucker.body_jacobian(m, plucker.integrate(m, q, v, -h), name, frame)) / (2 * h)
        assert np.abs(dJ - fd).max() < 1e-7 * (1 + np.abs(dJ).max())
        assert np.allclose(dJ @ v, plucker.jacobian_dot_times_v(m, q, v, name, frame), atol=1e-12)


def test_frame_acceleration_and_classical_acceleration(humanoid):
    m = humanoid
    q, v, a = state(m, 4)
    h = 1e-4
    pos = [plucker.frame_pose(m, along(m, q, v, a, t), "tool") for t in (-h, 0.0, h)]
    p_ddot = (pos[2][:3, 3] - 2 * pos[1][:3, 3] + pos[0][:3, 3]) / h**2  # classical, world axes
    R = pos[1][:3, :3]
    lwa = plucker.frame_acceleration(m, q, v, a, "tool", "local_world_aligned")
    assert np.allclose(lwa[3:], p_ddot, rtol=0, atol=1e-5 * (1 + np.abs(p_ddot).max()))
    local = plucker.frame_acceleration(m, q, v, a, "tool", "local", classical=True)
    assert np.allclose(local[3:], R.T @ p_ddot, rtol=0, atol=1e-5 * (1 + np.abs(p_ddot).max()))
    assert np.allclose(local[:3], R.T @ lwa[:3], atol=1e-12)
    for f in FRAMES:  # J a + dJ/dt v
        expected = plucker.body_jacobian(m, q, "tool", f) @ a + plucker.jacobian_time_variation(m, q, v, "tool", f) @ v
        assert np.allclose(plucker.frame_acceleration(m, q, v, a, "tool", f), expected, atol=1e-10)
    with pytest.raises(ValueError, match="classical"):
        plucker.frame_acceleration(m, q, v, a, "tool", "world", classical=True)


def test_centroidal_momentum_balance(humanoid):
    """A free-floating robot: d h_G / dt = [0; m g] whatever the joint torques (the internal
    forces cancel), with qdd from the ABA; with an external force f at a point r, + [(r - c) x f; f]."""
    m = humanoid
    q, v, _ = state(m, 5)
    rng = np.random.default_rng(7)
    tau = np.concatenate([np.zeros(6), rng.standard_normal(m.nv - 6)])
    c = plucker.centroidal_momentum(m, q, v)
    qdd = plucker.aba(m, q, v, tau)
    hdot = c.A @ qdd + c.dA_v
    expected = np.concatenate([np.zeros(3), c.mass * m.gravity])
    assert np.allclose(hdot, expected, atol=1e-9 * c.mass * 10)
    f = np.array([3.0, -1.0, 2.0])
    r = plucker.frame_pose(m, q, "tool")[:3, 3]
    qdd = plucker.aba(m, q, v, tau, f_ext={"tool": np.concatenate([np.zeros(3), f])}, frame="local_world_aligned")
    expected = np.concatenate([np.cross(r - c.com, f), c.mass * m.gravity + f])
    assert np.allclose(c.A @ qdd + c.dA_v, expected, atol=1e-8)


def test_centroidal_matrix_derivative_and_com_terms(humanoid):
    m = humanoid
    q, v, _ = state(m, 6)
    c = plucker.centroidal_momentum(m, q, v)
    assert np.allclose(c.A[3:], c.mass * plucker.center_of_mass_jacobian(m, q), atol=1e-12)
    assert np.allclose(c.com, plucker.center_of_mass(m, q), atol=1e-14)
    assert np.allclose(c.h, c.A @ v) and np.allclose(c.com_velocity, c.h[3:] / c.mass)
    h = 1e-6
    Ap = plucker.centroidal_momentum(m, plucker.integrate(m, q, v, h)).A
    Am = plucker.centroidal_momentum(m, plucker.integrate(m, q, v, -h)).A
    assert np.abs(c.dA - (Ap - Am) / (2 * h)).max() < 1e-7 * (1 + np.abs(c.dA).max())
    assert np.allclose(c.dA @ v, c.dA_v, atol=1e-12)
    com_acc = plucker.center_of_mass_jacobian_dot_times_v(m, q, v)
    assert np.allclose(com_acc, c.dA_v[3:] / c.mass, atol=1e-10)
    without_v = plucker.centroidal_momentum(m, q)
    assert np.allclose(without_v.A, c.A) and without_v.dA is None and without_v.h is None


def test_centroidal_momentum_of_one_free_body():
    """One free-flying box: h_G = [R I_c omega_body; m cdot] in closed form."""
    urdf = """<robot name="box"><link name="b"><inertial><origin xyz="0.1 -0.2 0.05"/><mass value="2.5"/>
      <inertia ixx="0.3" ixy="0.01" ixz="0.02" iyy="0.4" iyz="-0.03" izz="0.5"/></inertial></link></robot>"""
    m = plucker.Model.from_urdf_string(urdf, floating_base=True)
    q = plucker.random_configuration(m, seed=1)
    v = np.array([0.3, -0.7, 1.1, 0.5, 0.2, -0.4])
    c = plucker.centroidal_momentum(m, q, v)
    R = plucker.frame_pose(m, q, "b")[:3, :3]
    Ic = np.array([[0.3, 0.01, 0.02], [0.01, 0.4, -0.03], [0.02, -0.03, 0.5]])
    com_body = np.array([0.1, -0.2, 0.05])
    cdot = R @ (v[3:] + np.cross(v[:3], com_body))
    assert np.allclose(c.h, np.concatenate([R @ Ic @ v[:3], 2.5 * cdot]), atol=1e-13)


def test_world_aligned_external_forces(humanoid):
    m = humanoid
    q, v, a = state(m, 8)
    body = m.body_names[7]
    w = np.array([0.4, -0.3, 0.2, 5.0, -2.0, 1.0])
    p_body = plucker.frame_pose(m, q, body)[:3, 3]
    p_tool = plucker.frame_pose(m, q, "tool")[:3, 3]
    as_world = lambda p: np.concatenate([w[:3] + np.cross(p, w[3:]), w[3:]])
    tau = plucker.rnea(m, q, v, a, f_ext={body: w, "tool": w}, frame="local_world_aligned")
    expected = plucker.rnea(m, q, v, a, f_ext={body: as_world(p_body), "tool": as_world(p_tool)}, frame="world")
    assert np.allclose(tau, expected, atol=1e-10)
    qdd = plucker.aba(m, q, v, tau, f_ext={body: w}, frame="local_world_aligned")
    assert np.allclose(qdd, plucker.forward_dynamics_crba(m, q, v, tau, f_ext={body: w}, frame="local_world_aligned"),
                       atol=1e-9)
    # derivatives: the force keeps its world direction and moves with the body's origin
    dq, dv = plucker.rnea_derivatives(m, q, v, a, f_ext={body: w}, frame="local_world_aligned")
    h = 1e-6
    fd = np.empty_like(dq)
    for k in range(m.nv):
        e = np.zeros(m.nv)
        e[k] = h
        fd[:, k] = (plucker.rnea(m, plucker.integrate(m, q, e), v, a, f_ext={body: w}, frame="local_world_aligned") -
                    plucker.rnea(m, plucker.integrate(m, q, -e), v, a, f_ext={body: w},
                                 frame="local_world_aligned")) / (2 * h)
    assert np.abs(dq - fd).max() < 1e-6 * (1 + np.abs(dq).max())
    with pytest.raises(ValueError, match="world-aligned force on a frame"):
        plucker.rnea_derivatives(m, q, v, a, f_ext={"tool": w}, frame="local_world_aligned")
    with pytest.raises(ValueError, match="local_world_aligned"):
        plucker.rnea(m, q, v, a, frame="spatial")


def test_loop_joint_forces_in_three_frames():
    m = plucker.build_four_bar()
    q = plucker.assemble(m, plucker.neutral(m) + 0.1)
    lam = np.arange(1.0, m.num_constraints + 1)
    world = plucker.loop_joint_forces(m, q, lam, frame="world")
    lwa = plucker.loop_joint_forces(m, q, lam, frame="local_world_aligned")
    local = plucker.loop_joint_forces(m, q, lam, frame="local")
    for name in world:
        f_w, f_a = np.asarray(world[name]), np.asarray(lwa[name])
        assert np.allclose(f_w[3:], f_a[3:]) and np.linalg.norm(f_a) > 0
        # same force, moments about different points: n_0 = n_C + p_C x f, with |f| preserved
        assert np.isclose(np.linalg.norm(np.asarray(local[name])[3:]), np.linalg.norm(f_a[3:]))


def test_so3_se3_exp_log_and_jacobians():
    rng = np.random.default_rng(0)
    h = 1e-6
    for scale in (1e-9, 1e-3, 0.5, 1.0 - 1e-9, 1.0 + 1e-9, 2.0, 3.0):
        w = rng.standard_normal(3)
        w *= scale / np.linalg.norm(w)
        xi = np.concatenate([w, rng.standard_normal(3)])
        R, T = plucker.so3_exp(w), plucker.se3_exp(xi)
        assert np.allclose(R.T @ R, np.eye(3), atol=1e-15) and np.isclose(np.linalg.det(R), 1.0)
        assert np.allclose(plucker.so3_log(R), w, atol=1e-14)
        assert np.allclose(plucker.se3_log(T), xi, atol=1e-13)
        # Rodrigues in closed form
        t, W = np.linalg.norm(w), skew(w)
        assert np.allclose(R, np.eye(3) + np.sin(t) / t * W + (1 - np.cos(t)) / t**2 * W @ W, atol=1e-14)
        for side in ("right", "left"):
            J3, J6 = plucker.so3_jacobian(w, side), plucker.se3_jacobian(xi, side)
            fd3, fd6 = np.empty((3, 3)), np.empty((6, 6))
            for k in range(6):
                e = np.zeros(6)
                e[k] = h
                Tp, Tm = plucker.se3_exp(xi + e), plucker.se3_exp(xi - e)
                if side == "right":
                    fd6[:, k] = (plucker.se3_log(np.linalg.inv(T) @ Tp) - plucker.se3_log(np.linalg.inv(T) @ Tm)) / (2 * h)
                else:
                    fd6[:, k] = (plucker.se3_log(Tp @ np.linalg.inv(T)) - plucker.se3_log(Tm @ np.linalg.inv(T))) / (2 * h)
                if k < 3:
                    Rp, Rm = plucker.so3_exp(w + e[:3]), plucker.so3_exp(w - e[:3])
                    fd3[:, k] = ((plucker.so3_log(R.T @ Rp) - plucker.so3_log(R.T @ Rm)) if side == "right" else
                                 (plucker.so3_log(Rp @ R.T) - plucker.so3_log(Rm @ R.T))) / (2 * h)
            assert np.abs(J3 - fd3).max() < 1e-8, (scale, side)
            assert np.abs(J6 - fd6).max() < 1e-7 * (1 + np.abs(xi).max()), (scale, side)
            assert np.allclose(plucker.so3_jacobian_inverse(w, side) @ J3, np.eye(3), atol=1e-12)
            assert np.allclose(plucker.se3_jacobian_inverse(xi, side) @ J6, np.eye(6), atol=1e-11)
    # the series (|omega| < 1) and the closed form (|omega| >= 1) of the SE(3) block agree at the seam
    xi = np.array([0.6, 0.8, 0.0, 1.0, -2.0, 0.5])
    below, above = plucker.se3_jacobian(xi * (1 - 1e-12)), plucker.se3_jacobian(xi * (1 + 1e-12))
    assert np.abs(below - above).max() < 1e-10
    # near pi the log stays in the ball of radius pi
    w = np.array([0.0, 0.0, np.pi - 1e-12])
    assert np.allclose(np.abs(plucker.so3_log(plucker.so3_exp(w))), np.abs(w), atol=1e-9)


def test_quaternion_helpers():
    rng = np.random.default_rng(1)
    for _ in range(20):
        qa, qb = rng.standard_normal(4), rng.standard_normal(4)
        qa, qb = qa / np.linalg.norm(qa), qb / np.linalg.norm(qb)
        Ra, Rb = plucker.quaternion_to_matrix(qa), plucker.quaternion_to_matrix(qb)
        assert np.allclose(Ra, plucker.so3_exp(plucker.quaternion_log(qa)), atol=1e-13)
        assert np.allclose(plucker.quaternion_to_matrix(plucker.quaternion_multiply(qa, qb)), Ra @ Rb, atol=1e-13)
        back = plucker.matrix_to_quaternion(Ra)
        assert back[3] >= 0 and np.allclose(np.abs(back @ qa), 1.0)
        w = plucker.quaternion_log(qa)
        assert np.allclose(plucker.quaternion_to_matrix(plucker.quaternion_exp(w)), Ra, atol=1e-13)
    # [x y z w]: a rotation of pi/2 about z
    assert np.allclose(plucker.quaternion_to_matrix([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]),
                       [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)
    with pytest.raises(ValueError, match="not a unit quaternion"):
        plucker.quaternion_to_matrix([1, 1, 0, 0])
    with pytest.raises(ValueError, match="not a rotation matrix"):
        plucker.so3_log(np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="shape"):
        plucker.so3_log(np.eye(4))
    with pytest.raises(ValueError, match="not finite"):
        plucker.se3_exp([0, 0, np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="last row"):
        plucker.se3_log(np.ones((4, 4)))
    with pytest.raises(ValueError, match="side"):
        plucker.so3_jacobian([0, 0, 1], side="up")


def test_add_frame_payload_and_lookup():
    m = plucker.Model.from_urdf(ARM)
    last = m.body_names[-1]
    m.add_frame("flange", last, xyz=(0.0, 0.0, 0.1))
    m.add_frame("tcp", "flange", xyz=(0.02, 0.0, 0.05), rpy=(0.0, np.pi / 2, 0.0))
    assert m.frame_body("tcp") == last and m.frame_body(last) == last
    q = plucker.random_configuration(m, seed=2)
    assert np.allclose(plucker.frame_pose(m, q, "tcp"), plucker.frame_pose(m, q, last) @ m.frame_placement("tcp"),
                       atol=1e-14)
    g0 = plucker.gravity_torques(m, q)
    J = plucker.body_jacobian(m, q, "tcp", "local_world_aligned")
    mass0 = m.total_mass
    m.add_payload("tcp", 1.5)  # a point mass at the tcp
    assert np.isclose(m.total_mass, mass0 + 1.5)
    # holding a point mass m at the tcp takes -J_lin^T (m g) more
    assert np.allclose(plucker.gravity_torques(m, q) - g0, -J[3:].T @ (1.5 * m.gravity), atol=1e-10)
    copy = pickle.loads(pickle.dumps(m))
    assert np.allclose(plucker.gravity_torques(copy, q), plucker.gravity_torques(m, q), atol=0)
    assert copy.frame_names == m.frame_names
    with pytest.raises(ValueError, match="mass"):
        m.add_payload("tcp", -1.0)
    with pytest.raises(ValueError):
        m.add_payload("tcp", 1.0, inertia=[[1, 0, 0], [0, 1, 0], [0, 0, 5]])  # triangle inequality
    with pytest.raises(ValueError, match="unknown body or frame"):
        m.add_frame("x", "no_such_link")
    with pytest.raises(plucker.ModelError):
        m.add_frame("tcp", last)  # duplicate


def test_check_limits():
    m = plucker.Model.from_urdf(ARM)
    q = plucker.neutral(m)
    assert m.check_limits(q, np.zeros(m.nv), np.zeros(m.nv)) == []
    q[1] = 4.0
    v = np.zeros(m.nv)
    v[0] = -3.5
    tau = np.zeros(m.nv)
    tau[2] = 151.0
    found = m.check_limits(q, v, tau)
    assert len(found) == 3
    assert "q[1] = 4 at joint" in found[0] and "above its upper limit 3.1416" in found[0]
    assert "velocity limit 3.15" in found[1] and "effort limit 150" in found[2]
    assert m.check_limits(tau=tau, tolerance=2.0) == []
    with pytest.raises(ValueError, match="3 limit violation"):
        m.check_limits(q, v, tau, raise_error=True)
    with pytest.raises(ValueError, match="size"):
        m.check_limits(q=np.zeros(m.nq + 1))


def test_tree_algorithms_warn_once_on_loop_models():
    m = plucker.Model.from_urdf(FOUR_BAR)
    assert "loop joints" in m.summary() and "constraint rows" in m.summary()
    q, v = plucker.neutral(m), np.zeros(m.nv)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plucker.rnea(m, q, v, v)
        plucker.crba(m, q)
        plucker.constrained_forward_dynamics(m, q, v, v)
    msgs = [str(w.message) for w in caught if issubclass(w.category, plucker.ModelWarning)]
    assert len(msgs) == 1 and msgs[0].startswith("rnea:") and "ignores" in msgs[0]
    tree = plucker.Model.from_urdf(ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plucker.rnea(tree, plucker.neutral(tree), np.zeros(tree.nv), np.zeros(tree.nv))
