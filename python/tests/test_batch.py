"""Batched algorithms: plucker.rnea_batch / aba_batch / crba_batch agree with the per-state
loop to rounding (states are evaluated several at once in SIMD lanes), for any thread count
and batch size, and refuse bad batches up front."""
import threading

import numpy as np
import pytest

import plucker
from conftest import random_state


def states(m, B, seed=0):
    rows = [random_state(m, seed + b) for b in range(B)]
    Q = np.array([r[0] for r in rows]).reshape(B, m.nq)
    V = np.array([r[1] for r in rows]).reshape(B, m.nv)
    A = np.array([r[2] for r in rows]).reshape(B, m.nv)
    return Q, V, A


# As tests/test_batch.cpp: 1e-12 relative to the norm of the result for RNEA and CRBA; for
# ABA the forward-error bound of a solve, 1e-12 cond(M) (|qdd| + |tau - bias| / |M|), twice.
TOL = 1e-12


@pytest.mark.parametrize("B", [0, 1, 2, 7, 19])
@pytest.mark.parametrize("threads", [1, 2, 0])
def test_batch_agrees_with_loop(small_floating, B, threads):
    m = small_floating
    Q, V, A = states(m, B)
    tau = plucker.rnea_batch(m, Q, V, A, threads=threads)
    qdd = plucker.aba_batch(m, Q, V, A, threads=threads)
    M = plucker.crba_batch(m, Q, threads=threads)
    assert tau.shape == (B, m.nv) and qdd.shape == (B, m.nv) and M.shape == (B, m.nv, m.nv)
    for b in range(B):
        tau_ref = plucker.rnea(m, Q[b], V[b], A[b])
        assert np.linalg.norm(tau[b] - tau_ref) <= TOL * max(1.0, np.linalg.norm(tau_ref))
        M_ref = plucker.crba(m, Q[b])
        assert np.linalg.norm(M[b] - M_ref) <= TOL * np.linalg.norm(M_ref)
        qdd_ref = plucker.aba(m, Q[b], V[b], A[b])
        eig = np.linalg.eigvalsh(M_ref)
        rhs = A[b] - plucker.rnea(m, Q[b], V[b], np.zeros(m.nv))
        bound = 2 * TOL * eig[-1] / eig[0] * (np.linalg.norm(qdd_ref) + np.linalg.norm(rhs) / eig[-1])
        assert np.linalg.norm(qdd[b] - qdd_ref) <= bound


@pytest.mark.parametrize("threads", [1, 2])
def test_packed_crba_batch_is_the_pattern_of_each_m(small_floating, threads):
    m = small_floating
    Q, _, _ = states(m, 11, seed=3)
    row_start, col = plucker.jsim_pattern(m)
    assert row_start.shape == (m.nv + 1,) and row_start[0] == 0 and row_start[-1] == col.shape[0]
    P = plucker.crba_batch_packed(m, Q, threads=threads)
    assert P.shape == (11, col.shape[0])
    for b in range(11):
        M_ref = plucker.crba(m, Q[b])
        M = np.zeros((m.nv, m.nv))
        for k in range(m.nv):  # row k: the ancestors of DoF k ascending, then k
            cols = col[row_start[k]:row_start[k + 1]]
            assert cols[-1] == k and np.all(np.diff(cols) > 0)
            M[k, cols] = P[b, row_start[k]:row_start[k + 1]]
        M = M + np.tril(M, -1).T
        assert np.linalg.norm(M - M_ref) <= TOL * np.linalg.norm(M_ref)


def test_batch_accepts_non_contiguous_and_lists(small):
    Q, V, A = states(small, 3)
    ref = plucker.rnea_batch(small, Q, V, A, threads=1)
    np.testing.assert_array_equal(plucker.rnea_batch(small, np.asfortranarray(Q), V.tolist(), A, threads=1), ref)


def test_bad_batches_raise(small_floating):
    m = small_floating
    Q, V, A = states(m, 4)
    with pytest.raises(ValueError, match=r"Q has shape \(4, "):
        plucker.rnea_batch(m, Q[:, :-1], V, A)
    with pytest.raises(ValueError, match=r"V has shape \(3, "):
        plucker.rnea_batch(m, Q, V[:3], A)
    with pytest.raises(ValueError, match=r"TAU has shape"):
        plucker.aba_batch(m, Q, V, A[0])
    with pytest.raises(ValueError, match=r"Q has shape \(\d+,\)"):
        plucker.crba_batch(m, Q[0])
    with pytest.raises(ValueError, match="threads"):
        plucker.rnea_batch(m, Q, V, A, threads=-1)
    bad = V.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="state 2: v is not finite at joint"):
        plucker.rnea_batch(m, Q, bad, A)
    badq = Q.copy()
    badq[1, 3:7] *= 2.0
    with pytest.raises(ValueError, match="state 1: q: quaternion"):
        plucker.crba_batch(m, badq)


def test_batch_releases_the_gil(small):
    # Two Python threads each run a large batch; with the GIL released they overlap. Only the
    # results are checked (timing is too noisy on a shared machine).
    Q, V, A = states(small, 2000)
    ref = plucker.rnea_batch(small, Q, V, A, threads=1)
    out = [None, None]

    def work(k):
        out[k] = plucker.rnea_batch(small, Q, V, A, threads=1)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for o in out:
        np.testing.assert_array_equal(o, ref)


def _mutate_while_running(run, mutate, timeout=60.0):
    """Runs `run()` in a thread while this thread calls `mutate(k)` (k = 0, 1, ...) until it
    ends. Returns (what run returned, the messages of the RuntimeErrors mutate raised)."""
    result, errors, failure = [], [], []
    done = threading.Event()

    def work():
        try:
            result.append(run())
        except BaseException as e:  # reported below, not lost in the thread
            failure.append(e)
        finally:
            done.set()

    t = threading.Thread(target=work, daemon=True)
    t.start()
    k = 0
    while not done.is_set():
        try:
            mutate(k)
        except RuntimeError as e:
            errors.append(str(e))
        k += 1
    t.join(timeout)
    assert not t.is_alive(), "the batched call did not finish"
    if failure:
        raise failure[0]
    return result[0], errors


def test_model_cannot_change_while_a_batch_runs():
    """Setting Model.gravity from another thread during rnea_batch (GIL released) used to change
    the model under the running call: rows of one result computed with either gravity. One call
    sees one model now: the setter (and add_loop_joint) raise RuntimeError naming the call."""
    m = plucker.build_chain(24, seed=1)
    rng = np.random.default_rng(5)
    B = 20000
    Q, V, A = (rng.uniform(-1, 1, (B, m.nv)) for _ in range(3))
    gravities = ([0.0, 0.0, -9.81], [0.0, 9.81, 0.0])
    refs = []
    for g in gravities:
        m.gravity = g
        refs.append(plucker.rnea_batch(m, Q, V, A, threads=1))
    assert not np.allclose(refs[0], refs[1])

    def set_gravity(k):
        m.gravity = gravities[k % 2]

    all_errors = []
    for _ in range(4):
        tau, errors = _mutate_while_running(lambda: plucker.rnea_batch(m, Q, V, A, threads=1), set_gravity)
        same = [np.all(tau == ref, axis=1) for ref in refs]
        assert np.all(same[0]) or np.all(same[1]), (np.count_nonzero(same[0]), np.count_nonzero(same[1]))
        all_errors += errors
    assert all_errors, "the setter never ran during a batch"
    assert all("rnea_batch" in e and "gravity" in e for e in all_errors), all_errors[0]

    # The other mutator, and the other batched calls.
    names = iter(range(10**9))

    def add_loop(k):
        m.add_loop_joint(f"close{next(names)}", "ball", "link1", "link24")

    for run, call in ((lambda: plucker.crba_batch(m, Q[:4000], threads=1), "crba_batch"),
                      (lambda: plucker.crba_batch_packed(m, Q, threads=1), "crba_batch_packed"),
                      (lambda: plucker.aba_batch(m, Q[:8000], V[:8000], A[:8000], threads=1), "aba_batch")):
        _, errors = _mutate_while_running(run, add_loop)
        assert errors and all(call in e and "add_loop_joint" in e for e in errors), (call, errors[:1])
    # Afterwards the model can change again.
    m.gravity = [0.0, 0.0, -1.0]
    np.testing.assert_array_equal(m.gravity, [0.0, 0.0, -1.0])
