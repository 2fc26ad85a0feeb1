"""plucker_sweep on a local Dask cluster of two worker processes: the results are those of the
single-process batched calls and simulation, bit for bit, and bad arguments are ValueErrors."""
import distributed  # Debian's python3-distributed, installed by scripts/install-deps.sh
import numpy as np
import pytest

import plucker
import plucker_sweep


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def states(m, n, seed=0):
    rng = np.random.default_rng(seed)
    Q = np.stack([plucker.random_configuration(m, seed=int(s)) for s in rng.integers(0, 2**31, n)])
    return Q, rng.uniform(-1, 1, (n, m.nv)), rng.uniform(-1, 1, (n, m.nv))


def test_evaluate_equals_the_batched_calls(client):
    m = plucker.build_humanoid(seed=2)
    Q, V, A = states(m, 1000)
    tau = plucker_sweep.evaluate(client, m, "rnea", Q, V, A, chunk_size=128)
    np.testing.assert_array_equal(tau, plucker.rnea_batch(m, Q, V, A))
    np.testing.assert_array_equal(plucker_sweep.evaluate(client, m, "aba", Q, V, tau, chunk_size=300),
                                  plucker.aba_batch(m, Q, V, tau))
    # Chunks of a multiple of 8 states keep the single-process call's SIMD lane groups (up to 8
    # lanes), so even the CRBA, whose lane and single-state orders of summation differ, is bit-equal;
    # other chunkings agree to rounding.
    M = plucker.crba_batch(m, Q)
    np.testing.assert_array_equal(plucker_sweep.evaluate(client, m, "crba", Q, chunk_size=336), M)
    np.testing.assert_allclose(plucker_sweep.evaluate(client, m, "crba", Q, chunk_size=333), M, rtol=0,
                               atol=1e-13 * np.abs(M).max())
    assert len(client.scheduler_info()["workers"]) == 2


def test_rollouts_equal_the_single_process_simulation(client):
    m = plucker.build_chain(4, seed=1)
    Q0, V0, _ = states(m, 5, seed=3)
    Q, V = plucker_sweep.rollouts(client, m, Q0, V0, seconds=0.05, dt=1e-3, sample=10, chunk_size=2)
    assert Q.shape == (5, 6, m.nq) and V.shape == (5, 6, m.nv)
    ref_q, ref_v = plucker_sweep._rollout_chunk(m, Q0, V0, 0.05, 1e-3, 10)
    np.testing.assert_array_equal(Q, ref_q)
    np.testing.assert_array_equal(V, ref_v)
    # Passive motion: the energy is conserved by RK4 at 1 ms to well below 1e-6 relative.
    e = [plucker.kinetic_energy(m, q, v) + plucker.potential_energy(m, q) for q, v in zip(Q[0], V[0])]
    assert max(e) - min(e) < 1e-6 * max(1.0, abs(e[0]))


def test_bad_arguments(client):
    m = plucker.build_chain(3)
    Q, V, A = states(m, 10)
    with pytest.raises(ValueError, match="unknown algorithm"):
        plucker_sweep.evaluate(client, m, "nosuch", Q)
    with pytest.raises(ValueError, match="takes 3 state arrays"):
        plucker_sweep.evaluate(client, m, "rnea", Q, V)
    with pytest.raises(ValueError, match="different numbers of rows"):
        plucker_sweep.evaluate(client, m, "rnea", Q, V[:5], A)
    with pytest.raises(ValueError, match="Q0 must be"):
        plucker_sweep.rollouts(client, m, Q[:, :2])
