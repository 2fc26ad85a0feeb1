"""plucker_studies (the JSIM-conditioning helpers) and studies/jsim_conditioning.py.

Checks: the condition number against closed forms (one link; the planar two-link arm's 2x2 JSIM)
and against numpy.linalg.cond (SVD) of plucker.crba; invariances that make it a property of the
mechanism (first joint angle of a fixed-base chain, scaling every mass, scaling every length);
the unit handling of floating bases (S M S, length rescaling, interlacing with the fixed base);
the free-base Schur complement against the joint block of M^-1; the script's --quick run.
"""
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import plucker
import plucker_studies as ps

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "studies"))
import jsim_conditioning as study  # noqa: E402

TWO_LINK = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="{c1} 0 0"/><mass value="{m1}"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="{I1}"/></inertial></link>
  <link name="l2"><inertial><origin xyz="{c2} 0 0"/><mass value="{m2}"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="{I2}"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
    <origin xyz="{l1} 0 0"/><axis xyz="0 0 1"/></joint>
</robot>
"""
P2 = dict(m1=2.0, m2=1.5, l1=0.7, c1=0.3, c2=0.4, I1=0.05, I2=0.03)


def two_link_closed_form(q2, m1, m2, l1, c1, c2, I1, I2):
    """The planar two-link arm's JSIM (textbook): eigenvalues from trace and determinant."""
    a = I1 + I2 + m1 * c1 ** 2 + m2 * (l1 ** 2 + c2 ** 2)
    b = m2 * l1 * c2
    d = I2 + m2 * c2 ** 2
    M = np.array([[a + 2 * b * math.cos(q2), d + b * math.cos(q2)], [d + b * math.cos(q2), d]])
    half_tr, det = 0.5 * np.trace(M), np.linalg.det(M)
    disc = math.sqrt(half_tr ** 2 - det)
    return M, (half_tr + disc) / (half_tr - disc)


@pytest.mark.parametrize("q2", [0.0, 0.4, 1.3, 2.9, -2.0])
def test_two_link_condition_matches_closed_form(q2):
    m = plucker.Model.from_urdf_string(TWO_LINK.format(**P2))
    c = ps.jsim_condition(m, np.array([0.7, q2]))
    M, cond = two_link_closed_form(q2, **P2)
    np.testing.assert_allclose(c.matrix, M, rtol=1e-13, atol=1e-15)
    assert c.cond == pytest.approx(cond, rel=1e-12)
    # Eigen-decomposition: M V = V diag(w), V orthonormal, ascending.
    np.testing.assert_allclose(M @ c.eigenvectors, c.eigenvectors * c.eigenvalues, atol=1e-14)
    np.testing.assert_allclose(c.eigenvectors.T @ c.eigenvectors, np.eye(2), atol=1e-14)
    assert c.eigenvalues[0] <= c.eigenvalues[1]


def test_one_link_is_perfectly_conditioned():
    m = plucker.build_random_tree(1)
    c = ps.jsim_condition(m, np.array([0.3]))
    assert c.cond == 1.0
    assert c.eigenvalues[0] == pytest.approx(plucker.crba(m, np.array([0.3]))[0, 0], rel=1e-15)


@pytest.mark.parametrize("build", [lambda: plucker.build_chain(12, seed=3), lambda: plucker.build_random_tree(20, 2.0, 0.3, 0.95, 1),
                                   lambda: plucker.build_humanoid(0, True), lambda: plucker.build_quadruped(1, False)])
def test_condition_matches_numpy_svd_cond(build):
    m = build()
    for seed in range(3):
        q = plucker.random_configuration(m, seed)
        c = ps.jsim_condition(m, q)
        ref = np.linalg.cond(plucker.crba(m, q))  # SVD: sigma_max / sigma_min
        # Both from the same M; eigh and SVD agree to ~ eps * cond relative (cond <= 1e6 here).
        assert c.cond < 1e7
        assert c.cond == pytest.approx(ref, rel=1e-12 * max(c.cond, 1.0) + 1e-12)


def test_first_joint_angle_leaves_the_condition_number_unchanged():
    # A fixed-base chain's M depends on the relative configuration only: turning joint 1 rotates
    # the whole mechanism about a fixed axis (no gravity in M).
    for m in (plucker.build_chain(9, seed=4), plucker.build_random_tree(15, 1.0, 0.2, 0.9, 2)):
        q = plucker.random_configuration(m, 7)
        ref = ps.jsim_condition(m, q).cond
        for q1 in (-2.5, 0.0, 1.0, 3.0):
            q[0] = q1
            assert ps.jsim_condition(m, q).cond == pytest.approx(ref, rel=1e-11)


@pytest.mark.parametrize("floating", [False, True])
def test_scaling_every_mass_leaves_the_condition_number_unchanged(floating):
    base = study.tree_urdf(10, 2.0, 0.9, floating=floating)
    heavy = study.tree_urdf(10, 2.0, 0.9, floating=floating, link_mass=37.0)
    m1 = plucker.Model.from_urdf_string(base, floating_base=floating)
    m2 = plucker.Model.from_urdf_string(heavy, floating_base=floating)
    q = plucker.random_configuration(m1, 5)
    np.testing.assert_allclose(plucker.crba(m2, q), 37.0 * plucker.crba(m1, q), rtol=1e-12, atol=1e-12)
    for L in (1.0, 0.2):
        assert ps.jsim_condition(m2, q, length_scale=L).cond == pytest.approx(ps.jsim_condition(m1, q, length_scale=L).cond, rel=1e-10)


def test_length_scaling_fixed_base_invariant_floating_base_needs_the_unit():
    # Scaling every length by s multiplies a revolute-only JSIM by s^2 (cond unchanged). With a
    # floating base the translational rows change unit: cond(model scaled by s, L s) = cond(model, L).
    s = 3.0
    mx1 = plucker.Model.from_urdf_string(study.tree_urdf(8, link_length=0.2))
    mx2 = plucker.Model.from_urdf_string(study.tree_urdf(8, link_length=0.2 * s))
    q = plucker.random_configuration(mx1, 2)
    assert ps.jsim_condition(mx2, q).cond == pytest.approx(ps.jsim_condition(mx1, q).cond, rel=1e-10)
    mf1 = plucker.Model.from_urdf_string(study.tree_urdf(8, link_length=0.2, floating=True), floating_base=True)
    mf2 = plucker.Model.from_urdf_string(study.tree_urdf(8, link_length=0.2 * s, floating=True), floating_base=True)
    qf = plucker.random_configuration(mf1, 2)
    qf2 = qf.copy()
    qf2[:3] *= s
    for L in (0.05, 1.0):
        assert ps.jsim_condition(mf2, qf2, length_scale=L * s).cond == pytest.approx(
            ps.jsim_condition(mf1, qf, length_scale=L).cond, rel=1e-10)
    assert ps.characteristic_length(mf2, qf2) == pytest.approx(s * ps.characteristic_length(mf1, qf), rel=1e-12)
    # ... and the value does depend on the unit: in millimetres the base's translations (eigenvalues
    # ~ m L^2) become the softest modes and cond grows by more than 10x over metres.
    assert ps.jsim_condition(mf1, qf, length_scale=1e-3).cond > 10 * ps.jsim_condition(mf1, qf, length_scale=1.0).cond


def test_unit_scaling_hits_exactly_the_translational_dofs():
    m = plucker.Model.from_urdf_string(study.tree_urdf(4, floating=True), floating_base=True)
    np.testing.assert_array_equal(ps.translational_dofs(m), [3, 4, 5])
    q = plucker.random_configuration(m, 1)
    M = plucker.crba(m, q)
    c = ps.jsim_condition(m, q, length_scale=0.1)
    S = np.diag([1, 1, 1, 0.1, 0.1, 0.1, 1, 1, 1])
    np.testing.assert_allclose(c.matrix, S @ M @ S, rtol=1e-15, atol=0)
    p = plucker.build_chain(3)  # revolute only: every length_scale gives M itself
    assert ps.translational_dofs(p).size == 0
    qp = np.array([0.1, 0.2, 0.3])
    assert ps.jsim_condition(p, qp, length_scale=0.01).cond == ps.jsim_condition(p, qp).cond


def test_floating_base_contains_the_fixed_base_jsim():
    # The fixed chain's M is the floating chain's M without the base's x, y rotations and its
    # translations (the root's rotation about z is joint 1): interlacing, cond can only grow.
    n = 7
    mx = plucker.Model.from_urdf_string(study.tree_urdf(n, link_length=0.3))
    mf = plucker.Model.from_urdf_string(study.tree_urdf(n, link_length=0.3, floating=True), floating_base=True)
    for seed in range(4):
        qf = plucker.random_configuration(mf, seed)
        qx = np.concatenate([[0.0], qf[7:]])
        keep = [2] + list(range(6, mf.nv))
        np.testing.assert_allclose(plucker.crba(mf, qf)[np.ix_(keep, keep)], plucker.crba(mx, qx), rtol=1e-12, atol=1e-14)
        for L in (0.01, 0.3, 10.0):
            assert ps.jsim_condition(mf, qf, length_scale=L).cond >= ps.jsim_condition(mx, qx).cond * (1 - 1e-12)


def test_free_base_joint_inertia_is_the_inverse_of_the_joint_block_of_minv():
    m = plucker.build_humanoid(2, True)
    q = plucker.random_configuration(m, 3)
    S = ps.free_base_joint_inertia(m, q)
    Minv = plucker.minv(m, q)  # the library's own M^-1 (ABA-based), not the inverse of crba
    np.testing.assert_allclose(S @ Minv[6:, 6:], np.eye(m.nv - 6), atol=1e-9)


def test_jacobi_scaling_is_invariant_under_diagonal_rescaling():
    m = plucker.build_quadruped(0, True)
    q = plucker.random_configuration(m, 4)
    jac = ps.jsim_condition(m, q, scaling="jacobi")
    np.testing.assert_allclose(np.diag(jac.matrix), 1.0, rtol=1e-14)
    # Any choice of length unit gives the same Jacobi-scaled matrix, and it is far better than SI here.
    d = ps.unit_scaling(m, 0.01)
    Md = plucker.crba(m, q) * d[:, None] * d[None, :]
    r = 1 / np.sqrt(np.diag(Md))
    assert ps.spd_condition(Md * r[:, None] * r[None, :])[0] == pytest.approx(jac.cond, rel=1e-10)
    assert jac.cond < ps.jsim_condition(m, q).cond


def test_joint_shares_and_labels():
    m = plucker.build_quadruped(0, True)
    c = ps.jsim_condition(m, plucker.neutral(m))
    sh = ps.joint_shares(m, c.eigenvectors[:, -1])
    assert sum(sh.values()) == pytest.approx(1.0, rel=1e-14)
    assert set(sh) >= {"root_joint.rot", "root_joint.trans", "LF_HAA"}
    # In SI the stiffest mode of a 30 kg quadruped is its base's translation (eigenvalue ~ the mass).
    assert sh["root_joint.trans"] > 0.9
    assert c.eigenvalues[-1] == pytest.approx(m.total_mass, rel=0.2)
    labels = ps.dof_labels(m)
    assert labels[:6] == [f"root_joint.{k}" for k in ("wx", "wy", "wz", "vx", "vy", "vz")] and labels[6] == "LF_HAA"


def test_singular_jsim_reports_inf():
    m = plucker.Model.from_urdf_string(study.tree_urdf(3, link_mass=0.0))  # every link massless: M = 0
    assert m.total_mass == 0.0
    with pytest.raises(ValueError, match="no positive eigenvalue"):
        ps.jsim_condition(m, np.zeros(3))
    # A massless leaf body: M is singular (its joint moves nothing).
    m2 = plucker.Model.from_urdf_string(study.tree_urdf(3, taper=1e-9))
    assert ps.jsim_condition(m2, np.zeros(3)).cond == math.inf


def test_bad_inputs_raise_clear_errors():
    m = plucker.build_chain(3)
    with pytest.raises(ValueError, match="q has shape"):
        ps.jsim_condition(m, np.zeros(4))
    with pytest.raises(ValueError, match="length_scale"):
        ps.jsim_condition(m, np.zeros(3), length_scale=0.0)
    with pytest.raises(ValueError, match="unknown scaling"):
        ps.jsim_condition(m, np.zeros(3), scaling="svd")
    with pytest.raises(TypeError, match="plucker.Model"):
        ps.jsim_condition("chain", np.zeros(3))
    with pytest.raises(ValueError, match="free-flyer"):
        ps.characteristic_length(m, np.zeros(3))
    with pytest.raises(ValueError, match="not symmetric"):
        ps.spd_condition(np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="indefinite"):
        ps.spd_condition(np.array([[1.0, 0.0], [0.0, -1.0]]))
    with pytest.raises(ValueError, match="> 0"):
        ps.fit_power_law([1, 2, 3], [1, 0, 3])


def test_fit_power_law_recovers_an_exact_exponent():
    x = np.array([4.0, 8, 16, 32, 64])
    p, c, r2 = ps.fit_power_law(x, 0.7 * x ** 3.25)
    assert p == pytest.approx(3.25, abs=1e-12) and c == pytest.approx(0.7, rel=1e-12) and r2 == pytest.approx(1.0)


def test_long_chain_soft_mode_tends_to_the_counter_rotation_closed_form():
    # Identical thin rods (centroidal inertia 1.015 m l^2 / 12): every link spinning at +-w about its
    # centre gives joint rates 2w and the Rayleigh quotient 1.015 m l^2 / 48 (m = l = 1 here).
    m = plucker.Model.from_urdf_string(study.tree_urdf(96))
    c = ps.jsim_condition(m, np.zeros(96))
    limit = 1.015 / 48
    assert limit < c.eigenvalues[0] < 1.002 * limit
    v = c.eigenvectors[:, 0]
    assert np.sum(np.sign(v[1:]) != np.sign(v[:-1])) >= 90  # alternating signs: a zig-zag


def test_quick_study_writes_its_page(tmp_path):
    t = time.time()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-W", "ignore", os.path.join(REPO, "studies", "jsim_conditioning.py"),
                           "--quick", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120, env=env)
    elapsed = time.time() - t
    assert proc.returncode == 0, proc.stderr
    assert elapsed < 30.0, f"--quick took {elapsed:.1f} s"
    page = (tmp_path / "jsim_conditioning.md").read_text()
    for heading in ("## 1. Configuration", "## 2. Number of links", "## 3. Link sizes", "## 4. Connectivity",
                    "## 5. Fixed vs floating", "## 6. Eigenvectors", "## 7. The shared robots", "## Agreement with the paper"):
        assert heading in page
    assert "0 of " in page  # the interlacing check found no violation
    for png in ("jsim_configuration.png", "jsim_links.png", "jsim_taper.png", "jsim_connectivity.png",
                "jsim_floating.png", "jsim_eigenvectors.png"):
        assert (tmp_path / png).stat().st_size > 10_000, png
        assert f"({png})" in page
