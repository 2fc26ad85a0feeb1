"""Joint limits in the Simulator as penalties (Simulator.set_joint_limits): the joint rests at
the static penetration k delta = its gravity torque, the energy with the limit's spring is
conserved without damping, the limit never pulls, and it is off by default."""
import numpy as np
import pytest

import plucker

# A horizontal 1 kg link on a revolute joint about y: gravity rotates it down (q > 0 about +y
# tips the COM at +x down), until the upper limit 0.3 rad stops it.
ARM = """<robot name="limited"><link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-0.3" upper="0.3" effort="100" velocity="10"/></joint></robot>"""


@pytest.fixture
def arm():
    return plucker.Model.from_urdf_string(ARM)


def test_rests_at_the_static_penetration(arm):
    sim = plucker.Simulator(arm, dt=1e-3, integrator="rk4")
    sim.set_joint_limits(stiffness=1e4, damping=50.0)
    Q, V, _ = sim.rollout(np.array([0.0]), np.array([0.0]), np.zeros((3000, 1)))
    q, v = Q[-1], V[-1]
    g = plucker.gravity_torques(arm, q)[0]  # the torque that holds the link at q
    delta = q[0] - 0.3
    assert delta > 0 and abs(v[0]) < 1e-9
    assert abs(1e4 * delta + g) < 1e-8 * abs(g)  # k delta balances the gravity torque (g < 0 here)
    assert sim.joint_limits == {"enabled": True, "stiffness": 1e4, "damping": 50.0}


def test_energy_with_the_limit_spring_is_conserved(arm):
    """Without damping the total energy (with 1/2 k delta^2) is conserved up to the integrator's
    error, which converges: the penalty's force has a kink at the limit, so RK4 loses its fourth
    order at the crossing steps (measured drift 3.9e-5, 6.2e-6, 1.1e-6 J at dt = 1e-4, 5e-5,
    2.5e-5 s: ratios 6.2, 5.6, between second and third order)."""
    drift = []
    for dt in (1e-4, 5e-5, 2.5e-5):
        sim = plucker.Simulator(arm, dt=dt, integrator="rk4")
        sim.set_joint_limits(stiffness=1e4, damping=0.0)
        Q, V, _ = sim.rollout(np.array([-0.2]), np.array([0.0]), np.zeros((int(round(0.5 / dt)), 1)))
        assert Q[:, 0].max() > 0.3  # it reached the limit and bounced off it
        e = np.array([sim.energy(q, v)["total"] for q, v in zip(Q[::10], V[::10])])
        drift.append(np.ptp(e) / np.abs(e).max())
    assert drift[0] / drift[1] > 4 and drift[1] / drift[2] > 4
    assert drift[2] < 2e-6


def test_never_pulls_and_off_by_default(arm):
    sim = plucker.Simulator(arm, dt=1e-3)
    # off: the link falls through the limit
    Q, _, _ = sim.rollout(np.array([0.0]), np.array([0.0]), np.zeros((800, 1)))
    assert Q[-1, 0] > 1.0 and sim.joint_limits["enabled"] is False
    # a joint leaving its limit fast: a large damping would pull it back; the clamp keeps the force >= 0
    sim.set_joint_limits(stiffness=10.0, damping=1e4)
    acc_free = plucker.aba(arm, np.array([0.31]), np.array([-5.0]), np.zeros(1))
    assert np.allclose(sim.acceleration(np.array([0.31]), np.array([-5.0])), acc_free, atol=1e-12)
    with pytest.raises(ValueError, match="stiffness and damping"):
        sim.set_joint_limits(stiffness=-1.0)
