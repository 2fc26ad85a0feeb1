"""Every robot of shared/models loads, fixed and floating, with the DoF of the models README,
and its dynamics run; romeo's massless fingers make ABA raise plucker.SingularError."""
import re

import numpy as np
import pytest

import plucker
from conftest import ZOO_DOF, model_path, random_state, requires_models, zoo

pytestmark = requires_models


@pytest.mark.parametrize("floating_base", [False, True])
@pytest.mark.parametrize("name", sorted(ZOO_DOF))
def test_zoo_model_dof(name, floating_base):
    m = zoo(name, floating_base)
    dof = ZOO_DOF[name]
    assert m.nv == dof + 6 * floating_base
    assert m.nq == dof + 7 * floating_base  # continuous joints (pr2) are plain angles: nq = nv
    assert len(m.joint_names) == dof + floating_base
    assert m.has_floating_base == floating_base
    if floating_base:
        assert m.joint_names[0] == "root_joint"
        assert m.joint_q_index("root_joint") == 0 and m.joint_nq("root_joint") == 7
    assert len(m.body_names) == m.nbodies
    assert m.total_mass > 0
    # Indices cover q and v exactly once, in model order.
    assert [m.joint_v_index(n) for n in m.joint_names] == sorted(m.joint_v_index(n) for n in m.joint_names)
    assert sum(m.joint_nv(n) for n in m.joint_names) == m.nv
    assert sum(m.joint_nq(n) for n in m.joint_names) == m.nq


@pytest.mark.parametrize("name", sorted(ZOO_DOF))
def test_zoo_model_dynamics_run(name):
    for floating_base in (False, True):
        m = zoo(name, floating_base)
        q, v, a = random_state(m, 0)
        tau = plucker.rnea(m, q, v, a)
        assert tau.shape == (m.nv,) and np.all(np.isfinite(tau))
        M = plucker.crba(m, q)
        assert M.shape == (m.nv, m.nv) and np.all(np.isfinite(M))
        assert np.isfinite(plucker.kinetic_energy(m, q, v)) and np.isfinite(plucker.potential_energy(m, q))
        if name != "romeo":
            qdd = plucker.aba(m, q, v, tau)
            assert np.all(np.isfinite(qdd))


def test_strict_refuses_zoo_defects():
    """romeo's massless fingers are a defect strict loading refuses (plucker.ModelError)."""
    with pytest.raises(plucker.ModelError):
        plucker.Model.from_urdf(model_path("romeo"), strict=True)
    # ur5 has none.
    assert plucker.Model.from_urdf(model_path("ur5"), strict=True).nv == 6


FINGER = re.compile(r"joint '([LR](Finger\d+|Thumb\d+|Hand))'")


@pytest.mark.parametrize("floating_base", [False, True])
def test_romeo_aba_raises_singular_error(floating_base):
    """romeo.urdf has 24 massless finger links: M(q) is singular and forward dynamics is
    undefined. ABA must say so, naming a finger joint, rather than return NaN."""
    m = zoo("romeo", floating_base)
    q, v, _ = random_state(m, 1)
    tau = np.zeros(m.nv)
    with pytest.raises(plucker.SingularError) as info:
        plucker.aba(m, q, v, tau)
    assert FINGER.search(str(info.value)), str(info.value)
    assert isinstance(info.value, ArithmeticError)
    with pytest.raises(plucker.SingularError) as info:
        plucker.forward_dynamics_crba(m, q, v, tau)
    assert FINGER.search(str(info.value)), str(info.value)
    # Inverse dynamics is still defined.
    assert np.all(np.isfinite(plucker.rnea(m, q, v, np.ones(m.nv))))
