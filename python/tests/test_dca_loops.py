"""The divide-and-conquer algorithm on closed loops: constrained_forward_dynamics(method="dca" or
"dca_accurate") against the three global methods (kkt, range_space, null_space) on the four-bar,
the slider-crank and the Delta robot, with Baumgarte terms off the constraint manifold; threads;
the equation of motion by the RNEA; mimic relations (the geared elbow, loaded from URDF) against
kkt; bad input refused."""
import numpy as np
import pytest

import plucker

DCA = ["dca", "dca_accurate"]
GLOBAL = ["kkt", "range_space", "null_space"]
BUILDERS = [plucker.build_four_bar, plucker.build_slider_crank, plucker.build_delta]

GEARED_ELBOW_URDF = """<robot name="geared_elbow">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="fore"><inertial><origin xyz="0.25 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 1 0"/><mimic joint="shoulder" multiplier="2" offset="0.1"/></joint>
</robot>"""


def state(m, rng, off_manifold):
    q = plucker.assemble(m, plucker.integrate(m, plucker.neutral(m), 0.3 * rng.standard_normal(m.nv)))
    v = plucker.project_velocity(m, q, rng.standard_normal(m.nv))
    if off_manifold:  # phi != 0, L v != 0: the Baumgarte terms matter
        q = plucker.integrate(m, q, 1e-3 * rng.standard_normal(m.nv))
        v = v + 1e-2 * rng.standard_normal(m.nv)
    return q, v


@pytest.mark.parametrize("build", BUILDERS)
@pytest.mark.parametrize("off_manifold", [False, True])
def test_dca_agrees_with_the_global_methods(build, off_manifold):
    m = build()
    rng = np.random.default_rng(5)
    q, v = state(m, rng, off_manifold)
    tau = rng.standard_normal(m.nv)
    gains = (3.0, 5.0) if off_manifold else (0.0, 0.0)
    M = plucker.crba(m, q)
    cond = np.linalg.cond(M)
    ref_qdd, ref_lam = plucker.constrained_forward_dynamics(m, q, v, tau, method="kkt", baumgarte=gains)
    scale = np.linalg.norm(tau) + np.linalg.norm(plucker.rnea(m, q, v, np.zeros(m.nv)))
    # Tolerance: 1e3 cond(M) eps times the size of the result and of the right-hand side.
    tol_qdd = 1e3 * cond * np.finfo(float).eps * (np.linalg.norm(ref_qdd) + scale / np.linalg.eigvalsh(M)[0])
    tol_lam = 1e3 * cond * np.finfo(float).eps * (np.linalg.norm(ref_lam) + scale)
    for meth in GLOBAL[1:]:
        qdd, _ = plucker.constrained_forward_dynamics(m, q, v, tau, method=meth, baumgarte=gains)
        assert np.linalg.norm(qdd - ref_qdd) <= tol_qdd, meth
    L = plucker.constraint_jacobian(m, q)
    for meth in DCA:
        qdd, lam = plucker.constrained_forward_dynamics(m, q, v, tau, method=meth, baumgarte=gains)
        assert np.linalg.norm(qdd - ref_qdd) <= tol_qdd, meth
        assert np.linalg.norm(lam - ref_lam) <= tol_lam, meth
        # Eq. 15 by the RNEA, independent of every solver: M qdd + C - tau = L^T lam.
        np.testing.assert_allclose(plucker.rnea(m, q, v, qdd) - tau, L.T @ lam, atol=1e3 * tol_lam)
        for threads in (2, 3):
            qdd_t, lam_t = plucker.constrained_forward_dynamics(m, q, v, tau, method=meth, baumgarte=gains,
                                                                threads=threads)
            np.testing.assert_array_equal(qdd_t, qdd)
            np.testing.assert_array_equal(lam_t, lam)


def test_a_tree_is_the_dca_of_the_tree():
    m = plucker.build_chain(5)
    rng = np.random.default_rng(6)
    q, v, tau = plucker.neutral(m) + 0.1, rng.standard_normal(m.nv), rng.standard_normal(m.nv)
    qdd, lam = plucker.constrained_forward_dynamics(m, q, v, tau, method="dca_accurate")
    np.testing.assert_allclose(qdd, plucker.aba(m, q, v, tau), atol=1e-10)
    assert lam.shape == (0,)


def test_the_geared_elbow_agrees_with_kkt():
    # A URDF <mimic> (q_elbow = 2 q_shoulder + 0.1), off the relation and stabilised: the DCA closes
    # the gear by the range-space step around its solves; qdd and lambda agree with kkt, and
    # the stabilised relation qdd_e - 2 qdd_s = -2 alpha (v_e - 2 v_s) - beta^2 phi holds.
    g = plucker.Model.from_urdf_string(GEARED_ELBOW_URDF)
    assert g.num_constraints == 1
    q, v, tau = np.array([0.3, 0.65]), np.array([0.4, -0.2]), np.array([1.5, -0.7])
    gains = (2.0, 3.0)
    ref_qdd, ref_lam = plucker.constrained_forward_dynamics(g, q, v, tau, method="kkt", baumgarte=gains)
    phi = q[1] - 2.0 * q[0] - 0.1
    for meth in DCA:
        qdd, lam = plucker.constrained_forward_dynamics(g, q, v, tau, method=meth, baumgarte=gains)
        np.testing.assert_allclose(qdd, ref_qdd, rtol=0, atol=1e-12 * (1 + np.abs(ref_qdd).max()))
        np.testing.assert_allclose(lam, ref_lam, rtol=0, atol=1e-12 * (1 + np.abs(ref_lam).max()))
        assert qdd[1] - 2.0 * qdd[0] == pytest.approx(-4.0 * (v[1] - 2.0 * v[0]) - 9.0 * phi, abs=1e-12)


def test_bad_input_is_refused():
    m = plucker.build_four_bar()
    q, z = plucker.neutral(m), np.zeros(3)
    with pytest.raises(ValueError, match="threads must be at least 1"):
        plucker.constrained_forward_dynamics(m, q, z, z, method="dca", threads=0)
    with pytest.raises(ValueError):
        plucker.constrained_forward_dynamics(m, q, np.zeros(2), z, method="dca")
    with pytest.raises(ValueError, match="not finite"):
        plucker.constrained_forward_dynamics(m, q, z, np.array([0.0, np.nan, 0.0]), method="dca_accurate")
    with pytest.raises(ValueError, match="dca, dca_accurate"):
        plucker.constrained_forward_dynamics(m, q, z, z, method="dcaa")
