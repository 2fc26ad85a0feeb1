"""plucker.operational_space(method="dca"): the hybrid divide-and-conquer method (Lambda^-1 as the
inverse articulated inertia of the whole tree seen at the task bodies, assembled serially within
subchains and by the DCA's binary tree across them), and plucker.operational_space_dca_cost.

Evidence: agreement with the dense method (Featherstone 2010's basic matrix method, CRBA and
Cholesky: an independent path) on chains of several lengths, every joint kind, floating bases and
the shared robots, for one and several tasks; Lambda^-1 against J minv(q) J^T; bit-identical
results for any thread count; the critical path's log N growth.

Tolerance: relative, C * eps * (cond(M) + cond(Lambda^-1)) with C = 100 (the first-order error of
products through M^-1 and Lambda).
"""
import numpy as np
import pytest

import plucker
from conftest import requires_models, zoo

C = 100.0
EPS = np.finfo(float).eps


def cond(A):
    w = np.linalg.eigvalsh(A)
    return w[-1] / w[0]


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(a), np.linalg.norm(b), 1e-300)


def check_against_dense(m, tasks, seed, segments=(0, 1), damping=0.0):
    q = plucker.random_configuration(m, seed)
    v = np.random.default_rng(seed).uniform(-1, 1, m.nv)
    d = plucker.operational_space(m, q, v, tasks, method="dense", damping=damping)
    k = d.Lambda_inv.shape[0]
    tol = C * EPS * (cond(plucker.crba(m, q)) + cond(d.Lambda_inv + damping**2 * np.eye(k)))
    Minv = plucker.minv(m, q)
    for seg in segments:
        r = plucker.operational_space(m, q, v, tasks, method="dca", dca_segment=seg, damping=damping)
        assert r.method == "dca"
        assert np.array_equal(r.Lambda_inv, r.Lambda_inv.T)
        assert rel(r.Lambda_inv, d.Lambda_inv) <= tol, (seg, rel(r.Lambda_inv, d.Lambda_inv), tol)
        assert rel(r.Lambda_inv, r.J @ Minv @ r.J.T) <= tol  # M^-1 by minv: no factorisation of M
        assert rel(r.Lambda, d.Lambda) <= tol
        assert rel(r.Jbar, d.Jbar) <= tol
        assert np.linalg.norm(r.N - d.N) / (1 + np.linalg.norm(d.N)) <= tol
        assert np.linalg.norm(r.bias - d.bias) / (1 + np.linalg.norm(d.bias)) <= tol


@pytest.mark.parametrize("n", [1, 2, 4, 9, 16, 31, 50])
def test_chains_of_several_lengths(n):
    m = plucker.build_chain(n, seed=n)
    names = m.body_names
    tasks = [names[-1]] + ([(names[len(names) // 2], "position")] if n >= 3 else [])
    # Below 6 DoFs the 6-D tip task has dependent rows: both methods damped.
    check_against_dense(m, tasks, seed=n, segments=(0, 1, 3, n + 1), damping=0.05 if n < 6 else 0.0)


def test_every_joint_kind_and_floating_bases():
    tree = plucker.build_all_joints_tree(seed=3)  # free-flyer, spherical, planar, cylindrical, helical, general
    check_against_dense(tree, ["link_general2", ("link_helical", "position")], seed=1)
    check_against_dense(tree, [("link_planar_tilted", "orientation")], seed=2)
    hum = plucker.build_humanoid(seed=8)
    check_against_dense(hum, ["l_sole", "r_sole", ("l_hand_tip", "position"), ("head", "orientation")], seed=3)
    check_against_dense(hum, ["r_hand_tip"], seed=4)
    quad = plucker.build_quadruped(seed=2)
    check_against_dense(quad, [("LF_FOOT", "position"), ("RH_FOOT", [5, 3]), ("trunk", "all")], seed=5)


@requires_models
def test_shared_robots():
    check_against_dense(zoo("talos_full", True), ["left_sole_link", "right_sole_link", "wrist_left_ft_tool_link",
                                                  "wrist_right_ft_tool_link"], seed=6)
    check_against_dense(zoo("panda"), [("panda_hand_tcp", "orientation"), ("panda_rightfinger", "position")], seed=7)
    check_against_dense(zoo("anymal", True), [("LF_FOOT", "position"), ("RH_FOOT", "position")], seed=8)


def test_threads_are_bit_identical():
    for m, tasks in ((plucker.build_chain(60, seed=1), None),
                     (plucker.build_humanoid(seed=5), ["l_sole", "r_sole", "l_hand_tip", "r_hand_tip"])):
        tasks = tasks or [m.body_names[-1], (m.body_names[20], "position")]
        q = plucker.random_configuration(m, 9)
        v = np.random.default_rng(9).uniform(-1, 1, m.nv)
        for seg in (1, 0):
            one = plucker.operational_space(m, q, v, tasks, method="dca", dca_segment=seg)
            for threads in (2, 3, 4):
                r = plucker.operational_space(m, q, v, tasks, method="dca", dca_segment=seg, threads=threads)
                assert np.array_equal(r.Lambda_inv, one.Lambda_inv) and np.array_equal(r.Lambda, one.Lambda)
                assert np.array_equal(r.Jbar, one.Jbar) and np.array_equal(r.bias, one.bias)


def test_critical_path_grows_as_log_n():
    rows = {}
    for n in (16, 64, 256, 1024):
        m = plucker.build_chain(n, seed=1)
        rows[n] = plucker.operational_space_dca_cost(m, [m.body_names[-1]])
    # log2 N from 6 to 10 (x 1.67); the total work grows as N (x 16).
    assert rows[1024]["critical_path"] / rows[64]["critical_path"] < 1.5 * 10 / 6
    assert rows[1024]["total"] / rows[64]["total"] > 12
    assert [rows[n]["segment"] for n in rows] == [5, 7, 9, 11]  # ceil(log2(N + 1 bodies))
    serial = plucker.operational_space_dca_cost(plucker.build_chain(64, seed=1), ["link64"], segment=100)
    assert serial["subchains"] == 1 and serial["levels"] == 64
    with pytest.raises(ValueError, match="segment must be >= 0"):
        plucker.operational_space_dca_cost(plucker.build_chain(4), ["link4"], segment=-1)


def test_bad_arguments():
    m = plucker.build_chain(4)
    q = plucker.neutral(m)
    with pytest.raises(ValueError, match="threads must be at least 1, got 0"):
        plucker.operational_space(m, q, q * 0, ["link4"], method="dca", threads=0)
    with pytest.raises(ValueError, match="dca_segment must be >= 0"):
        plucker.operational_space(m, q, q * 0, ["link4"], method="dca", dca_segment=-3)
