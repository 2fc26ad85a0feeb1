"""Compliant contact and plucker.Simulator (docs/contact.md), against independent references:
a 1-D RK4 integration of m xdd = -f(x, xdot) written here, the closed-form coefficients of
restitution, the static penetration m g = k x^n, tan(theta) = mu on an incline."""
import math
import os
import threading

import numpy as np
import pytest

import plucker

from conftest import MODELS_DIR

R, M = 0.1, 1.0
BALL = f"""<?xml version="1.0"?>
<robot name="ball"><link name="ball"><inertial><mass value="{M}"/>
<inertia ixx="{0.4 * M * R * R}" ixy="0" ixz="0" iyy="{0.4 * M * R * R}" iyz="0" izz="{0.4 * M * R * R}"/>
</inertial></link></robot>"""
DAMPING = {"linear": 2 * 0.1 * math.sqrt(1e5 * M), "hunt_crossley": 0.3e5, "azad_featherstone": 200.0}


def ball(gravity=9.81):
    m = plucker.Model.from_urdf_string(BALL, floating_base=True)
    m.gravity = [0, 0, -gravity]
    return m


def reference_exit_velocity(contact, v_in, k=1e5, d=0.0, n=1.5, h=2e-7):
    """m xdd = -f(x, xdot), f clamped at 0, from x = 0, xdot = v_in, by RK4 (step h)."""
    def acc(x, xd):
        if x < 0:
            return 0.0
        if contact == "linear":
            f = k * x + d * xd
        elif contact == "hunt_crossley":
            f = x ** n * (k + d * xd)
        else:
            f = k * x ** n + d * x ** (n - 1) * xd
        return -max(f, 0.0) / M

    x, v, first = 0.0, v_in, True
    while True:
        a1 = acc(x, v)
        a2 = acc(x + h / 2 * v, v + h / 2 * a1)
        a3 = acc(x + h / 2 * (v + h / 2 * a1), v + h / 2 * a2)
        a4 = acc(x + h * (v + h / 2 * a2), v + h * a3)
        xn = x + h / 6 * (v + 2 * (v + h / 2 * a1) + 2 * (v + h / 2 * a2) + (v + h * a3))
        vn = v + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        if not first and xn <= 0:
            return v + x / (x - xn) * (vn - v)
        x, v, first = xn, vn, False


@pytest.mark.parametrize("contact", ["linear", "hunt_crossley", "azad_featherstone"])
def test_bouncing_sphere_matches_the_one_dimensional_reference(contact):
    d = DAMPING[contact]
    for v_in in (0.5, 2.0):
        sim = plucker.Simulator(ball(0.0), dt=2e-5, integrator="rk4")
        sim.add_ground(contact=contact, stiffness=1e5, damping=d, exponent=1.5, friction=0.0)
        sim.add_sphere("ball", radius=R)
        q0 = np.array([0, 0, R, 0, 0, 0, 1.0])
        v0 = np.array([0, 0, 0, 0, 0, -v_in])
        Q, V, F = sim.rollout(q0, v0, np.zeros((3000, 6)))
        assert Q[-1, 2] > R  # it has left
        ref = reference_exit_velocity(contact, v_in, d=d, h=1e-6)
        assert V[-1, 5] == pytest.approx(-ref, rel=1e-4)
        e = plucker.coefficient_of_restitution(contact, v_in, mass=M, stiffness=1e5, damping=d, exponent=1.5)
        assert e == pytest.approx(-ref / v_in, rel=1e-4)
        assert F.shape == (3000, 1, 3) and F[:, 0, 2].min() >= 0.0  # the ground only pushes


def test_restitution_closed_forms():
    # Linear: e = exp(-zeta pi / sqrt(1 - zeta^2)) is the unclamped value; the clamp (no pulling)
    # ends contact earlier, so e is larger, and the same at every speed.
    e1 = plucker.coefficient_of_restitution("linear", 0.5, damping=DAMPING["linear"])
    e2 = plucker.coefficient_of_restitution("linear", 3.0, damping=DAMPING["linear"])
    assert e1 == pytest.approx(e2, rel=1e-13)
    assert e1 > math.exp(-0.1 * math.pi / math.sqrt(1 - 0.01))
    # Hunt-Crossley with lambda = 3/2 alpha k: e ~ 1 - alpha v_in for small alpha v_in.
    alpha = 0.2
    for v in (0.01, 0.05):
        e = plucker.coefficient_of_restitution("hunt_crossley", v, damping=1.5 * alpha * 1e5)
        assert e == pytest.approx(1 - 1.5 * alpha * v * 2 / 3, abs=(alpha * v) ** 2)
    assert plucker.coefficient_of_restitution("azad_featherstone", 1.0, damping=0.0) == 1.0


@pytest.mark.parametrize("contact", ["linear", "hunt_crossley", "azad_featherstone"])
def test_resting_sphere_settles_to_the_static_penetration(contact):
    sim = plucker.Simulator(ball(), dt=1e-4)
    sim.add_ground(contact=contact, damping=DAMPING[contact], friction=0.5)
    sim.add_sphere("ball", radius=R)
    Q, V, F, D = sim.rollout([0, 0, R + 0.01, 0, 0, 0, 1], np.zeros(6), np.zeros((100000, 6)), diagnostics=True)
    x = R - Q[-1, 2]
    expected = plucker.static_penetration(contact, M * 9.81)
    assert x == pytest.approx(expected, rel=1e-6)
    assert D["penetration"][-1, 0] == pytest.approx(expected, rel=1e-6)
    assert D["active"][-1, 0] and not D["active"][0, 0]
    assert F[-1, 0, 2] == pytest.approx(M * 9.81, rel=1e-5)
    assert D["energy"][-1] < D["energy"][0] - 0.01


def test_friction_on_an_incline():
    mu, eps, g = 0.5, 1e-3, 9.81

    def block_speed(theta, seconds):
        urdf = """<robot name="block"><link name="block"><inertial><mass value="1"/>
        <inertia ixx="0.0041667" ixy="0" ixz="0" iyy="0.0041667" iyz="0" izz="0.0066667"/></inertial></link></robot>"""
        m = plucker.Model.from_urdf_string(urdf, floating_base=True)
        sim = plucker.Simulator(m, dt=1e-4)
        n = (math.sin(theta), 0, math.cos(theta))
        sim.add_ground(normal=n, contact="linear", stiffness=1e5, damping=2 * math.sqrt(1e5 / 4), friction=mu,
                       regularization=eps)
        for sx in (-0.1, 0.1):
            for sy in (-0.1, 0.1):
                sim.add_point("block", (sx, sy, -0.05))
        x0 = g * math.cos(theta) / 4e5
        q0 = np.r_[(0.05 - x0) * np.array(n), 0, math.sin(theta / 2), 0, math.cos(theta / 2)]
        Q, V, F = sim.rollout(q0, np.zeros(6), np.zeros((int(seconds / 1e-4), 6)))
        # body-frame linear velocity: its x axis points down the slope
        return V[:, 3]

    theta = math.atan(0.8 * mu)
    creep = eps * 0.8 / math.sqrt(1 - 0.64)
    assert abs(block_speed(theta, 2.0)[-1]) == pytest.approx(creep, rel=2e-2)
    theta = math.atan(1.5 * mu)
    v = block_speed(theta, 1.0)
    a = (v[-1] - v[5000]) / 0.5
    assert a == pytest.approx(g * (math.sin(theta) - mu * math.cos(theta)), rel=1e-4)


def test_implicit_euler_holds_stiff_friction_at_a_large_step():
    """dt mu g / eps = 4.9 > 2: the explicit step cannot hold the block; the linearly implicit one
    gives the closed-form creep speed."""
    mu, eps, g, theta = 0.5, 1e-3, 9.81, math.atan(0.4)
    urdf = """<robot name="block"><link name="block"><inertial><mass value="1"/>
    <inertia ixx="0.0041667" ixy="0" ixz="0" iyy="0.0041667" iyz="0" izz="0.0066667"/></inertial></link></robot>"""
    m = plucker.Model.from_urdf_string(urdf, floating_base=True)
    speeds = {}
    for integrator in ("implicit_euler", "semi_implicit_euler"):
        sim = plucker.Simulator(m, dt=1e-3, integrator=integrator)
        assert sim.integrator == integrator
        n = (math.sin(theta), 0, math.cos(theta))
        sim.add_ground(normal=n, contact="linear", stiffness=1e5, damping=2 * math.sqrt(1e5 / 4), friction=mu,
                       regularization=eps)
        for sx in (-0.1, 0.1):
            for sy in (-0.1, 0.1):
                sim.add_point("block", (sx, sy, -0.05))
        q0 = np.r_[(0.05 - g * math.cos(theta) / 4e5) * np.array(n), 0, math.sin(theta / 2), 0, math.cos(theta / 2)]
        Q, V, F = sim.rollout(q0, np.zeros(6), np.zeros((2000, 6)))
        speeds[integrator] = V[-1, 3]
    creep = eps * 0.8 / math.sqrt(1 - 0.64)
    assert speeds["implicit_euler"] == pytest.approx(creep, rel=1e-6)
    assert abs(speeds["semi_implicit_euler"] - creep) > 100 * creep


def test_energy_conservation_order():
    def drift(integrator, dt):
        sim = plucker.Simulator(ball(), dt=dt, integrator=integrator)
        sim.add_ground(contact="hunt_crossley", damping=0.0, friction=0.0)
        sim.add_sphere("ball", radius=R)
        x_rest = plucker.static_penetration("hunt_crossley", M * 9.81)
        Q, V, F, D = sim.rollout([0, 0, R - 0.5 * x_rest, 0, 0, 0, 1], [0.2, 0, 0, 0, 0.3, 0],
                                 np.zeros((int(0.5 / dt), 6)), diagnostics=True)
        return np.max(np.abs(D["energy"] - D["energy"][0]))

    # RK4 on an oscillator loses energy at O(h^5) over a fixed time (measured ratio 31.4)
    assert 14 < drift("rk4", 1e-3) / drift("rk4", 5e-4) < 40
    assert 1.8 < drift("semi_implicit_euler", 1e-4) / drift("semi_implicit_euler", 5e-5) < 2.2


def test_step_equals_rollout_and_contacts_report():
    sim = plucker.Simulator(ball(), dt=1e-3, integrator="rk4")
    sim.add_ground()
    sim.add_sphere("ball", center=(0.01, 0, 0), radius=R)
    sim.add_point("ball", position=(0, 0, -R))
    assert sim.num_pairs == 2 and sim.shapes[1][3] == 0.0
    q, v = np.array([0, 0, R - 1e-3, 0, 0, 0, 1.0]), np.array([0, 0, 1.0, 0.1, 0, -0.2])
    Q, V, F = sim.rollout(q, v, np.zeros((5, 6)))
    for t in range(5):
        q, v = sim.step(q, v)
    np.testing.assert_array_equal(Q[-1], q)
    np.testing.assert_array_equal(V[-1], v)
    c = sim.contacts(Q[0], V[0])
    assert c["penetration"] == pytest.approx([1e-3, 1e-3])
    assert c["active"].all() and c["force"].shape == (2, 3)
    np.testing.assert_allclose(c["force"], F[0], rtol=1e-14)
    e = sim.energy(q, v)
    assert e["total"] == pytest.approx(e["kinetic"] + e["potential"] + e["elastic"])


def test_rollout_batch_equals_single_rollouts():
    sim = plucker.Simulator(ball(), dt=1e-3)
    sim.add_ground(friction=0.5)
    sim.add_sphere("ball", radius=R)
    B, T = 4, 200
    Q0 = np.tile([0, 0, R + 0.05, 0, 0, 0, 1.0], (B, 1))
    Q0[:, 2] += 0.01 * np.arange(B)
    V0 = np.zeros((B, 6))
    V0[:, 3] = np.arange(B)
    TAU = np.zeros((B, T, 6))
    Q, V, F = plucker.rollout_batch(sim, Q0, V0, TAU, threads=2)
    assert Q.shape == (B, T + 1, 7) and V.shape == (B, T + 1, 6) and F.shape == (B, T, 1, 3)
    for b in range(B):
        q, v, f = sim.rollout(Q0[b], V0[b], TAU[b])
        np.testing.assert_array_equal(Q[b], q)
        np.testing.assert_array_equal(V[b], v)
        np.testing.assert_array_equal(F[b], f)
    Q0[2, 6] = 2.0
    with pytest.raises(ValueError, match="state 2"):
        plucker.rollout_batch(sim, Q0, V0, TAU)
    with pytest.raises(ValueError, match="TAU"):
        plucker.rollout_batch(sim, Q0, V0, np.zeros((B, T, 5)))


def test_collision_spheres_from_urdf(tmp_path):
    urdf = BALL.replace("</inertial></link>", """</inertial>
    <collision><geometry><sphere radius="0.1"/></geometry></collision>
    <collision><geometry><mesh filename="x.stl"/></geometry></collision></link>""")
    path = tmp_path / "ball.urdf"
    path.write_text(urdf)
    m = plucker.Model.from_urdf(path, floating_base=True)
    sim = plucker.Simulator(m, dt=1e-4)
    assert sim.add_collision_spheres_from_urdf(path) == 1
    assert sim.shapes[0][0] == "ball" and sim.shapes[0][3] == 0.1
    sim.add_ground(contact="linear", damping=600.0)
    Q, V, F = sim.rollout([0, 0, 0.15, 0, 0, 0, 1], np.zeros(6), np.zeros((20000, 6)))
    assert R - Q[-1, 2] == pytest.approx(plucker.static_penetration("linear", 9.81), rel=1e-6)
    with pytest.raises(ValueError, match="ball"):
        plucker.Simulator(plucker.build_chain(2)).add_collision_spheres_from_urdf(path)


def test_bad_input_raises():
    sim = plucker.Simulator(ball())
    with pytest.raises(ValueError, match="FL_FOOT"):
        sim.add_sphere("FL_FOOT")
    with pytest.raises(ValueError, match="radius"):
        sim.add_sphere("ball", radius=-1)
    with pytest.raises(ValueError, match="stiffness"):
        sim.add_ground(stiffness=-1)
    with pytest.raises(ValueError, match="contact model"):
        sim.add_ground(contact="hertz")
    with pytest.raises(ValueError, match="integrator"):
        plucker.Simulator(ball(), integrator="bdf2")
    with pytest.raises(ValueError, match="dt"):
        plucker.Simulator(ball(), dt=-1)
    sim.add_ground()
    sim.add_sphere("ball", radius=R)
    q, v = [0, 0, 1, 0, 0, 0, 1], np.zeros(6)
    with pytest.raises(ValueError):
        sim.step(q, [0, 0, np.nan, 0, 0, 0])
    with pytest.raises(ValueError):
        sim.step(q[:6], v)
    with pytest.raises(ValueError):
        sim.step(q, v, np.zeros(5))
    with pytest.raises(ValueError):
        sim.rollout(q, v, np.zeros((10, 5)))
    with pytest.raises(ValueError, match="TAU"):
        sim.rollout(q, v, np.full((10, 6), np.inf))


def test_rollout_releases_the_gil():
    sim = plucker.Simulator(ball(), dt=1e-4)
    sim.add_ground()
    sim.add_sphere("ball", radius=R)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            stop.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    sim.rollout([0, 0, 0.5, 0, 0, 0, 1], np.zeros(6), np.zeros((200000, 6)))
    stop.set()
    t.join()
    assert len(ticks) > 5


@pytest.mark.skipif(not os.path.exists(os.path.join(MODELS_DIR, "solo12.urdf")), reason="solo12.urdf absent")
def test_solo12_passive_drop_comes_to_rest_on_the_ground():
    m = plucker.Model.from_urdf(os.path.join(MODELS_DIR, "solo12.urdf"), floating_base=True)
    sim = plucker.Simulator(m, dt=1e-3)
    sim.add_ground(friction=0.8)
    for foot in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"):
        sim.add_sphere(foot, radius=0.02)
    for x in (-0.2, 0.2):
        for y in (-0.1, 0.1):
            sim.add_sphere("base_link", center=(x, y, 0), radius=0.03)
    q0 = plucker.neutral(m)
    q0[2] = 0.5
    Q, V, F, D = sim.rollout(q0, np.zeros(m.nv), np.zeros((3000, m.nv)), diagnostics=True)
    assert D["active"][-1, :4].all()  # four feet down
    # at rest, the ground carries the robot's weight
    assert F[-1, :, 2].sum() == pytest.approx(m.total_mass * 9.81, rel=0.02)
    assert D["energy"][-1] < D["energy"][0]
