"""Analytical derivatives: plucker.rnea_derivatives / aba_derivatives against Richardson-
extrapolated central differences of rnea / aba (q stepped by plucker.integrate: the tangent-space
convention), the batched forms against the per-state calls, and argument errors.

Tolerance: 1e-8 relative to (1 + the largest entry), as in tests/test_derivatives.cpp (there
1e-9; observed errors ~1e-12 relative)."""
import numpy as np
import pytest

import plucker
from conftest import random_state

TOL = 1e-8


def richardson(g, h=1e-3):
    def central(s):
        return (g(s) - g(-s)) / (2 * s)

    return (4 * central(h / 2) - central(h)) / 3


def fd_jacobians(m, q, v, f):
    # Columns along integrate(q, e_k t) and v + e_k t (f may return any number of rows).
    dq = np.column_stack([richardson(lambda t: f(plucker.integrate(m, q, e, t), v)) for e in np.eye(m.nv)])
    dv = np.column_stack([richardson(lambda t: f(q, v + t * e)) for e in np.eye(m.nv)])
    return dq, dv


def close(analytic, fd):
    return np.abs(analytic - fd).max() <= TOL * (1 + np.abs(fd).max())


@pytest.mark.parametrize("floating", [False, True])
def test_rnea_derivatives_match_finite_differences(small, small_floating, floating):
    m = small_floating if floating else small
    q, v, a = random_state(m, 5)
    dtau_dq, dtau_dv = plucker.rnea_derivatives(m, q, v, a)
    assert dtau_dq.shape == (m.nv, m.nv) and dtau_dv.shape == (m.nv, m.nv)
    fd_q, fd_v = fd_jacobians(m, q, v, lambda qq, vv: plucker.rnea(m, qq, vv, a))
    assert close(dtau_dq, fd_q) and close(dtau_dv, fd_v)


def test_external_forces_by_name(small_floating):
    m = small_floating
    q, v, a = random_state(m, 6)
    f_ext = {"upper": [0.1, -0.2, 0.3, 1.0, 2.0, -1.0], "tool": [0.0, 0.5, 0.0, 0.0, 0.0, 3.0]}
    for frame in ("world", "local"):
        dtau_dq, dtau_dv = plucker.rnea_derivatives(m, q, v, a, f_ext=f_ext, frame=frame)
        fd_q, fd_v = fd_jacobians(m, q, v, lambda qq, vv: plucker.rnea(m, qq, vv, a, f_ext=f_ext, frame=frame))
        assert close(dtau_dq, fd_q) and close(dtau_dv, fd_v), frame


def test_aba_derivatives_match_finite_differences(small_floating):
    m = small_floating
    q, v, tau = random_state(m, 7)
    dqdd_dq, dqdd_dv, dqdd_dtau = plucker.aba_derivatives(m, q, v, tau)
    fd_q, fd_v = fd_jacobians(m, q, v, lambda qq, vv: plucker.aba(m, qq, vv, tau))
    assert close(dqdd_dq, fd_q) and close(dqdd_dv, fd_v)
    M = plucker.crba(m, q)
    assert np.abs(dqdd_dtau @ M - np.eye(m.nv)).max() <= 1e-10
    # d qdd / d x = -M^-1 d tau / d x at a = qdd (implicit function theorem), with M from crba.
    dtau_dq, dtau_dv = plucker.rnea_derivatives(m, q, v, plucker.aba(m, q, v, tau))
    assert np.abs(M @ dqdd_dq + dtau_dq).max() <= 1e-10 * (1 + np.abs(dtau_dq).max())
    assert np.abs(M @ dqdd_dv + dtau_dv).max() <= 1e-10 * (1 + np.abs(dtau_dv).max())


@pytest.mark.parametrize("threads", [1, 2])
def test_batches_agree_with_single_calls(small_floating, threads):
    m = small_floating
    B = 5
    rows = [random_state(m, 20 + b) for b in range(B)]
    Q, V, A = (np.array([r[k] for r in rows]) for k in range(3))
    dq, dv = plucker.rnea_derivatives_batch(m, Q, V, A, threads=threads)
    fq, fv, ft = plucker.aba_derivatives_batch(m, Q, V, A, threads=threads)
    assert dq.shape == (B, m.nv, m.nv) and ft.shape == (B, m.nv, m.nv)
    # Groups of batch_lanes() states run in SIMD lanes, whose sums are rounded in another order
    # than the single-state call's: 1e-12 relative to each matrix's norm (tests/test_batch.cpp
    # holds them to bounds derived per state, with cond(M) for the ABA's).
    def close_to(x, y):
        return np.abs(x - y).max() <= 1e-12 * max(1.0, np.abs(y).max())

    for b in range(B):
        rq, rv = plucker.rnea_derivatives(m, Q[b], V[b], A[b])
        assert close_to(dq[b], rq) and close_to(dv[b], rv)
        aq, av, at = plucker.aba_derivatives(m, Q[b], V[b], A[b])
        assert close_to(fq[b], aq) and close_to(fv[b], av) and close_to(ft[b], at)


def test_bad_arguments_are_named(small):
    m = small
    q, v, a = random_state(m, 8)
    with pytest.raises(ValueError, match="rnea_derivatives: q has size"):
        plucker.rnea_derivatives(m, q[:-1], v, a)
    bad = v.copy()
    bad[1] = np.nan
    with pytest.raises(ValueError, match=r"v\[1\] is not finite"):
        plucker.aba_derivatives(m, q, bad, a)
    with pytest.raises(ValueError, match="state 1"):
        Q = np.array([q, q])
        V = np.array([v, bad])
        plucker.rnea_derivatives_batch(m, Q, V, np.array([a, a]))


@pytest.mark.parametrize("method", ["kkt", "range_space", "null_space"])
def test_constrained_derivatives_match_finite_differences(method):
    # A four-bar off its constraint manifold, with Baumgarte terms: the derivatives of the very
    # solve constrained_forward_dynamics does (tests/test_constrained_derivatives.cpp covers more).
    m = plucker.build_four_bar()
    q = plucker.integrate(m, plucker.assemble(m, plucker.neutral(m)), [0.01, -0.02, 0.015])
    rng = np.random.default_rng(9)
    v, tau = rng.normal(size=m.nv), rng.normal(size=m.nv)
    kw = dict(method=method, baumgarte=(3.0, 5.0))
    dq, dv, dt, lq, lv, lt = plucker.constrained_forward_dynamics_derivatives(m, q, v, tau, **kw)
    assert dq.shape == (m.nv, m.nv)
    # The four-bar in 3-D has redundant rows (rank 2 of 5): lam is the minimum-norm multiplier,
    # and its derivative is returned too.
    assert lq.shape == lv.shape == lt.shape == (m.num_constraints, m.nv)
    for part, analytic in ((0, (dq, dv, dt)), (1, (lq, lv, lt))):
        f = lambda qq, vv, tt: plucker.constrained_forward_dynamics(m, qq, vv, tt, **kw)[part]  # noqa: E731
        fd_q, fd_v = fd_jacobians(m, q, v, lambda qq, vv: f(qq, vv, tau))
        fd_t = np.column_stack([richardson(lambda t: f(q, v, tau + t * e)) for e in np.eye(m.nv)])
        for a, fd in zip(analytic, (fd_q, fd_v, fd_t)):
            assert np.abs(a - fd).max() <= 1e-7 * (1 + np.abs(fd).max())
