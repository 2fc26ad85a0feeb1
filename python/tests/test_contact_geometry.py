"""Contact geometry beyond spheres (the Compliant contact and simulation page, "Contact geometry"):
body boxes and capsules, fixed spheres and boxes, and shapes loaded from URDF <collision> boxes and
cylinders, each against a closed form: a box resting on a face or balanced on an edge (forces sum to
m g; compliant static penetration m g / 4 = k x^n per corner), a capsule rolling down an incline
(a = g sin(theta) / (1 + I / (m r^2))), a ball balanced on top of a fixed sphere (force m g, the
unstable equilibrium held), a ball reflected by a fixed box's face and edge (v_out = v - (1 + e)
(v . n) n), a capsule on a fixed box and a fixed sphere; bad input."""
import math

import numpy as np
import pytest

import plucker

G = 9.81


def body(name="b", mass=1.0, inertia=(0.01, 0.01, 0.01)):
    ixx, iyy, izz = inertia
    urdf = f"""<?xml version="1.0"?>
<robot name="{name}"><link name="{name}"><inertial><mass value="{mass}"/>
<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>
</inertial></link></robot>"""
    return plucker.Model.from_urdf_string(urdf, floating_base=True)


def rot_x(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def quat_matrix(q):
    """The rotation of the unit quaternion (x, y, z, w), written out here."""
    x, y, z, w = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_x(a):
    return [math.sin(a / 2), 0, 0, math.cos(a / 2)]


def quat_y(a):
    return [0, math.sin(a / 2), 0, math.cos(a / 2)]


HALF = np.array([0.1, 0.05, 0.05])  # the box of these tests


# ---------------------------------------------------------------------------------------- boxes
def test_rigid_box_rests_on_a_face_with_its_weight_on_four_corners():
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_ground(contact="rigid", friction=0.5)
    sim.add_box("b", HALF)
    assert sim.num_pairs == 8
    q0 = [0, 0, HALF[2], 0, 0, 0, 1.0]
    Q, V, F = sim.rollout(q0, np.zeros(6), np.zeros((200, 6)))
    assert np.max(np.abs(V)) < 1e-12  # zero acceleration
    assert np.allclose(F[:, :, 2].sum(axis=1), G, rtol=1e-10, atol=0)  # forces sum to m g
    c = sim.contacts(Q[-1], V[-1])
    bottom = c["point"][:, 2] < 1e-9
    assert bottom.sum() == 4 and np.all(F[-1, ~bottom] == 0)  # the top corners carry nothing


def test_rigid_box_balanced_on_an_edge_holds_for_a_while():
    # Rotated 45 degrees about x with equal y, z half extents: the bottom edge is under the COM,
    # an unstable equilibrium that rounding leaves alone for a short time.
    half = np.array([0.1, 0.05, 0.05])
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_ground(contact="rigid", friction=0.8)
    sim.add_box("b", half)
    z = half[1] * math.sqrt(2)
    Q, V, F = sim.rollout([0, 0, z, *quat_x(math.pi / 4)], np.zeros(6), np.zeros((100, 6)))
    assert np.allclose(F[:, :, 2].sum(axis=1), G, rtol=1e-9, atol=0)
    assert np.count_nonzero(F[-1, :, 2] > 1e-6) == 2  # the two corners of the edge
    assert np.max(np.abs(V)) < 1e-9
    assert abs(Q[-1, 2] - z) < 1e-9


@pytest.mark.parametrize("edge", [False, True])
def test_compliant_box_settles_to_the_static_penetration(edge):
    k, n = 1e5, 1.5
    sim = plucker.Simulator(body(), dt=2e-4)
    sim.add_ground(contact="hunt_crossley", stiffness=k, damping=3e6, exponent=n, friction=0.8)
    sim.add_box("b", HALF)
    corners = 2 if edge else 4
    x = (G / corners / k) ** (1 / n)  # m g / corners = k x^n at each touching corner
    if edge:
        q0 = [0, 0, HALF[1] * math.sqrt(2), *quat_x(math.pi / 4)]
    else:
        q0 = [0, 0, HALF[2], 0, 0, 0, 1.0]
    Q, V, F = sim.rollout(q0, np.zeros(6), np.zeros((2500, 6)))  # 0.5 s
    assert abs(F[-1, :, 2].sum() - G) < 1e-6 * G
    c = sim.contacts(Q[-1], V[-1])
    pen = np.sort(c["penetration"])[-corners:]
    assert np.allclose(pen, x, rtol=1e-8)  # measured 2e-13 (face), 2.5e-11 (edge)
    assert np.max(np.abs(V[-1])) < 1e-5


def test_box_narrow_phase_against_corners_computed_here():
    # A tilted, offset box on a frame-free body: the 8 slots are its corners, penetration = -z.
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_ground(contact="rigid")
    R = rot_x(0.3)
    c0 = np.array([0.01, -0.02, 0.03])
    sim.add_box("b", HALF, center=c0, rotation=R)
    q = np.array([0.1, 0.2, 0.05, *quat_y(0.2)])
    E = quat_matrix(q[3:])  # the body's rotation
    c = sim.contacts(q, np.zeros(6))
    k = 0
    for sz in (-1, 1):
        for sy in (-1, 1):
            for sx in (-1, 1):
                corner = q[:3] + E @ (c0 + R @ (np.array([sx, sy, sz]) * HALF))
                assert np.allclose(c["point"][k], corner, atol=1e-15)
                assert abs(c["penetration"][k] + corner[2]) < 1e-15
                k += 1


# -------------------------------------------------------------------------------------- capsules
def rolling_capsule(theta, dt, seconds=0.5, r=0.05, m=2.0, I_axis=0.004):
    """A capsule across an incline (rigid, mu = 1), released at rest: its speed down the slope
    and omega r after `seconds`."""
    # The capsule's axis is the body's y axis (across the slope); it rolls about y.
    sim = plucker.Simulator(body(mass=m, inertia=(0.01, I_axis, 0.01)), dt=dt)
    normal = np.array([-math.sin(theta), 0, math.cos(theta)])  # the plane rises along +x
    sim.add_ground(normal=normal, contact="rigid", friction=1.0)
    sim.add_capsule("b", radius=r, length=0.2, rotation=rot_x(-math.pi / 2))
    assert sim.num_pairs == 2
    T = int(round(seconds / dt))
    Q, V, F = sim.rollout([*(r * normal), 0, 0, 0, 1.0], np.zeros(6), np.zeros((T, 6)))
    downhill = -np.array([math.cos(theta), 0, math.sin(theta)])
    speed = downhill @ (quat_matrix(Q[-1, 3:7]) @ V[-1, 3:])  # body-frame velocity to world
    assert np.all(F[-1, :, :] @ normal > 0)  # both end spheres carry load
    return speed, -V[-1, 1] * r


@pytest.mark.parametrize("theta", [0.2, 0.4])
def test_rigid_capsule_rolls_down_an_incline_at_the_rolling_closed_form(theta):
    # Rolling without slip: a = g sin(theta) / (1 + I / (m r^2)). The time-stepping is first order
    # (the body-frame velocity is stepped at the step's start orientation): measured speed errors
    # 4.0e-3, 2.0e-3, 1.0e-3 at dt = 1, 0.5, 0.25 ms (theta = 0.2; 1.6e-2 at 1 ms for theta = 0.4);
    # the Richardson extrapolation
    # 2 v(dt/2) - v(dt) removes the O(dt) term.
    r, m, I_axis, t = 0.05, 2.0, 0.004, 0.5
    exact = G * math.sin(theta) / (1 + I_axis / (m * r * r)) * t
    (v1, w1), (v2, w2) = rolling_capsule(theta, 1e-3), rolling_capsule(theta, 5e-4)
    e1, e2 = v1 / exact - 1, v2 / exact - 1
    assert abs(e1) < 3e-2 and 1.8 < e1 / e2 < 2.2  # first order
    assert abs((2 * v2 - v1) / exact - 1) < 1e-4
    assert abs(w2 / v2 - 1) < 1e-4  # no slip: omega r = v


def test_capsule_on_a_fixed_box_and_on_a_fixed_sphere_carries_its_weight():
    r, length = 0.03, 0.2
    # Lying flat on a fixed box's top face: the two half-segments' deepest points are its ends.
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_obstacle_box(center=(0, 0, -0.5), half_extents=(0.5, 0.5, 0.5), contact="rigid", friction=0.5)
    sim.add_capsule("b", radius=r, length=length, rotation=rot_x(-math.pi / 2))
    assert sim.num_pairs == 2
    Q, V, F = sim.rollout([0, 0, r, 0, 0, 0, 1.0], np.zeros(6), np.zeros((100, 6)))
    assert np.allclose(F[:, :, 2].sum(axis=1), G, rtol=1e-10, atol=0)
    assert np.max(np.abs(V)) < 1e-12
    c = sim.contacts(Q[-1], V[-1])
    assert np.allclose(np.sort(c["point"][:, 1]), [-length / 2, length / 2], atol=1e-9)
    # Across a fixed sphere's top: one contact, under the COM, carrying m g.
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_obstacle_sphere(center=(0, 0, -0.5), radius=0.5, contact="rigid", friction=0.5)
    sim.add_capsule("b", radius=r, length=length, rotation=rot_x(-math.pi / 2))
    assert sim.num_pairs == 1
    Q, V, F = sim.rollout([0, 0, r, 0, 0, 0, 1.0], np.zeros(6), np.zeros((50, 6)))
    assert np.allclose(F[:, 0, 2], G, rtol=1e-10, atol=0) and np.max(np.abs(F[:, 0, :2])) < 1e-12


@pytest.mark.parametrize("obstacle", ["ground", "box"])
def test_compliant_capsule_lying_flat_settles_on_its_two_ends(obstacle):
    # On the ground (2 slots: the end spheres) or a fixed box's top (2 slots: each half's deepest
    # point, ties to the ends): m g / 2 = k x^n at each end.
    r, length, k, n = 0.03, 0.2, 1e5, 1.5
    sim = plucker.Simulator(body(), dt=2e-4)
    models = dict(contact="hunt_crossley", stiffness=k, damping=3e6, exponent=n, friction=0.8)
    if obstacle == "ground":
        sim.add_ground(**models)
    else:
        sim.add_obstacle_box(center=(0, 0, -0.5), half_extents=(0.5, 0.5, 0.5), **models)
    sim.add_capsule("b", radius=r, length=length, rotation=rot_x(-math.pi / 2))
    Q, V, F = sim.rollout([0, 0, r, 0, 0, 0, 1.0], np.zeros(6), np.zeros((2500, 6)))
    c = sim.contacts(Q[-1], V[-1])
    assert np.allclose(c["penetration"], (G / 2 / k) ** (1 / n), rtol=1e-8)  # measured 2.5e-11
    assert np.allclose(np.sort(c["point"][:, 1]), [-length / 2, length / 2], atol=1e-9)
    assert abs(F[-1, :, 2].sum() - G) < 1e-8 * G


def test_capsule_tilted_over_a_box_edge_touches_at_its_deepest_point():
    # A capsule along x, centre beyond the box's edge x = 0, tilted down towards +x: the end over
    # the box (x < 0) is above the face, the segment crosses the edge line (0, z = 0): the deepest
    # point of the first half is the segment point nearest the edge (signed distance, closed form).
    r, length = 0.02, 0.4
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_obstacle_box(center=(-0.5, 0, -0.5), half_extents=(0.5, 0.5, 0.5))
    sim.add_capsule("b", radius=r, length=length, rotation=np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0.0]]))
    tilt = 0.3
    centre = np.array([0.05, 0, 0.0])
    q = np.array([*centre, *quat_y(tilt)])
    c = sim.contacts(q, np.zeros(6))
    u = quat_matrix(q[3:]) @ np.array([1.0, 0, 0])  # the segment's direction (body x)
    a = centre - length / 2 * u
    # Distance from the edge line (the y axis) to points a + s u, in the x-z plane.
    s_star = -(a[[0, 2]] @ u[[0, 2]])
    closest = a + s_star * u
    d_edge = np.linalg.norm(closest[[0, 2]])
    assert 0 < s_star < length / 2  # in the first half, where the edge is the nearest box feature
    assert abs(c["penetration"][0] - (r - d_edge)) < 1e-9
    assert np.allclose(c["normal"][0], closest / d_edge, atol=1e-6)


# -------------------------------------------------------------------------------- fixed spheres
def test_ball_balanced_on_a_fixed_sphere():
    R, r, k, n = 0.5, 0.1, 1e5, 1.5
    # Rigid: the force is m g and the unstable equilibrium holds for 0.2 s.
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_obstacle_sphere(center=(0, 0, 0), radius=R, contact="rigid", friction=0.5)
    sim.add_sphere("b", radius=r)
    q0 = [0, 0, R + r, 0, 0, 0, 1.0]
    Q, V, F = sim.rollout(q0, np.zeros(6), np.zeros((200, 6)))
    assert np.allclose(F[:, 0, 2], G, rtol=1e-10, atol=0)
    assert np.max(np.abs(Q[:, :3] - Q[0, :3])) < 1e-12
    # Compliant: at the static penetration m g = k x^n the acceleration vanishes ...
    sim = plucker.Simulator(body(), dt=2e-4)
    # damping: about critical at the static penetration (lambda x^n = 2 sqrt(m n k x^(n-1)))
    sim.add_obstacle_sphere(center=(0, 0, 0), radius=R, stiffness=k, damping=1.7e6, exponent=n, friction=0.5)
    sim.add_sphere("b", radius=r)
    x = (G / k) ** (1 / n)
    q_static = [0, 0, R + r - x, 0, 0, 0, 1.0]
    assert np.max(np.abs(sim.acceleration(q_static, np.zeros(6)))) < 1e-9
    # ... and a ball set down at zero penetration settles there (0.3 s).
    Q, V, F = sim.rollout(q0, np.zeros(6), np.zeros((1500, 6)))
    assert abs(Q[-1, 2] - q_static[2]) < 1e-9 and np.max(np.abs(Q[-1, :2])) < 1e-9  # measured 5e-12
    # Off the top by an angle phi the contact normal is radial: force along it = m g cos(phi) at
    # the static penetration for that load, tangential friction m g sin(phi) needed to hold.
    phi = 0.2
    xr = (G * math.cos(phi) / k) ** (1 / n)
    p = (R + r - xr) * np.array([math.sin(phi), 0, math.cos(phi)])
    c = sim.contacts([*p, 0, 0, 0, 1.0], np.zeros(6))
    assert abs(c["penetration"][0] - xr) < 1e-12
    assert np.allclose(c["normal"][0], [math.sin(phi), 0, math.cos(phi)], atol=1e-15)
    assert abs(c["normal_force"][0] - G * math.cos(phi)) < 1e-9


# ---------------------------------------------------------------------------------- fixed boxes
@pytest.mark.parametrize("offset", [0.0, 0.06])
def test_ball_dropped_on_a_fixed_box_reflects_about_the_contact_normal(offset):
    # No gravity, falling at 1 m/s onto the top face (offset 0) or onto the edge x = 0 with the
    # centre 0.06 m beyond it: frictionless rigid contact with restitution e reflects the normal
    # component: v_out = v - (1 + e) (v . n) n, n = (offset, 0, sqrt(r^2 - offset^2)) / r.
    r, e = 0.1, 0.8
    m = body()
    m.gravity = np.zeros(3)
    sim = plucker.Simulator(m, dt=1e-5)
    sim.add_obstacle_box(center=(-0.5, 0, -0.5), half_extents=(0.5, 0.5, 0.5), contact="rigid", friction=0.0,
                         restitution=e)
    sim.add_sphere("b", radius=r)
    x0 = -0.2 if offset == 0 else offset
    Q, V, F = sim.rollout([x0, 0, r + 0.02, 0, 0, 0, 1.0], [0, 0, 0, 0, 0, -1.0], np.zeros((6000, 6)))
    v_in = np.array([0, 0, -1.0])
    h = 0.0 if offset == 0 else offset
    nrm = np.array([h, 0, math.sqrt(r * r - h * h)]) / r
    v_out = v_in - (1 + e) * (v_in @ nrm) * nrm
    # (measured: 0 on the face, 1.6e-13 m/s on the edge)
    assert np.allclose(V[-1, 3:], v_out, rtol=0, atol=1e-9)


def test_ball_rests_on_a_fixed_box_top():
    sim = plucker.Simulator(body(), dt=1e-3)
    sim.add_obstacle_box(center=(0, 0, 0), half_extents=(0.3, 0.3, 0.2), rotation=np.eye(3), contact="rigid")
    sim.add_sphere("b", radius=0.1)
    Q, V, F = sim.rollout([0.1, 0.1, 0.3, 0, 0, 0, 1.0], np.zeros(6), np.zeros((100, 6)))
    assert np.allclose(F[:, 0, 2], G, rtol=1e-10, atol=0) and np.max(np.abs(V)) < 1e-12


# ---------------------------------------------------------------------------------------- URDF
URDF = """<?xml version="1.0"?>
<robot name="r">
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0.1 0 -0.2" rpy="0.3 0 0"/><geometry><box size="0.2 0.1 0.04"/></geometry></collision>
    <collision><origin xyz="0 0.1 0"/><geometry><cylinder radius="0.05" length="0.1"/></geometry></collision>
    <collision><geometry><sphere radius="0.02"/></geometry></collision>
    <collision><geometry><mesh filename="foot.stl"/></geometry></collision>
  </link>
</robot>"""


def test_collision_boxes_and_cylinders_from_urdf(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text(URDF)
    m = plucker.Model.from_urdf(str(path), floating_base=True)
    sim = plucker.Simulator(m)
    sim.add_ground()
    assert sim.add_collision_geometry_from_urdf(path, cylinder_points=6) == 1 + 12 + 1
    kinds = [s[4] for s in sim.shapes]
    assert kinds == ["box"] + ["sphere"] * 13
    assert sim.num_pairs == 8 + 12 + 1
    # The box's corners, from the URDF origin composed here (R = Rx(0.3), body at the identity).
    q = np.array([0, 0, 1.0, 0, 0, 0, 1])
    c = sim.contacts(q, np.zeros(6))
    half = np.array([0.1, 0.05, 0.02])
    k = 0
    for sz in (-1, 1):
        for sy in (-1, 1):
            for sx in (-1, 1):
                corner = q[:3] + np.array([0.1, 0, -0.2]) + rot_x(0.3) @ (np.array([sx, sy, sz]) * half)
                assert np.allclose(c["point"][k], corner, atol=1e-15)
                k += 1
    # The cylinder's rims: points at radius 0.05 about its axis (z), at z = -+0.05.
    rim = np.array([s[2] for s in sim.shapes[1:13]])
    assert np.allclose(np.hypot(rim[:, 0], rim[:, 1] - 0.1), 0.05, atol=1e-15)
    assert np.allclose(np.sort(rim[:, 2]), [-0.05] * 6 + [0.05] * 6, atol=1e-15)


def test_urdf_collision_errors(tmp_path):
    bad = tmp_path / "bad.urdf"
    bad.write_text(URDF.replace('size="0.2 0.1 0.04"', 'size="0.2 -0.1 0.04"'))
    sim = plucker.Simulator(body("base"))
    with pytest.raises(plucker.ModelError, match="box size"):
        sim.add_collision_geometry_from_urdf(bad)
    path = tmp_path / "r.urdf"
    path.write_text(URDF)
    with pytest.raises(ValueError, match="link 'base' is not a body or frame"):
        plucker.Simulator(body("other")).add_collision_geometry_from_urdf(path)
    with pytest.raises(ValueError, match="cylinder_points"):
        sim.add_collision_geometry_from_urdf(path, cylinder_points=2)
    assert sim.num_pairs == 0


# ----------------------------------------------------------------------------------- bad input
def test_bad_geometry_gives_clear_errors():
    sim = plucker.Simulator(body())
    with pytest.raises(ValueError, match="half_extents must be finite and > 0"):
        sim.add_box("b", (0.1, -0.1, 0.1))
    with pytest.raises(ValueError, match="radius must be finite and >= 0"):
        sim.add_capsule("b", radius=-0.1, length=0.1)
    with pytest.raises(ValueError, match="length must be finite and >= 0"):
        sim.add_capsule("b", radius=0.1, length=-0.1)
    with pytest.raises(ValueError, match="no body or frame named 'foot'"):
        sim.add_box("foot", (0.1, 0.1, 0.1))
    with pytest.raises(ValueError, match="rotation must be a rotation matrix"):
        sim.add_box("b", (0.1, 0.1, 0.1), rotation=2 * np.eye(3))
    with pytest.raises(ValueError, match="radius must be finite and > 0"):
        sim.add_obstacle_sphere((0, 0, 0), radius=0.0)
    with pytest.raises(ValueError, match=r"half_extents\[2\] is not finite"):
        sim.add_obstacle_box((0, 0, 0), (1, 1, math.nan))
    with pytest.raises(ValueError, match="half_extents must be finite and > 0"):
        sim.add_obstacle_box((0, 0, 0), (1, 1, 0.0))
    with pytest.raises(ValueError, match=r"center\[1\] is not finite"):
        sim.add_obstacle_box((0, math.inf, 0), (1, 1, 1))
    with pytest.raises(ValueError, match="unknown contact model"):
        sim.add_obstacle_sphere((0, 0, 0), radius=1.0, contact="soft")
    # Box against fixed box: refused whichever comes first, and nothing is added.
    sim.add_box("b", (0.1, 0.1, 0.1))
    with pytest.raises(ValueError, match="body box and a fixed box is not supported"):
        sim.add_obstacle_box((0, 0, -1), (1, 1, 1))
    other = plucker.Simulator(body())
    other.add_obstacle_box((0, 0, -1), (1, 1, 1))
    with pytest.raises(ValueError, match="body box and a fixed box is not supported"):
        other.add_box("b", (0.1, 0.1, 0.1))
    assert sim.num_pairs == 0 and other.num_pairs == 0 and len(other.shapes) == 0
