"""Batched evaluations and simulation rollouts spread over a Dask cluster.

For the studies and datasets that need more than one machine (parameter sweeps, Monte-Carlo
over states, data for learning): the model is sent once to every worker (it pickles), each chunk
of states runs there through plucker's batched functions, and the results come back in order.

    from dask.distributed import Client
    import plucker, plucker_sweep
    client = Client("tcp://scheduler:8786")              # or Client(LocalCluster(n_workers=4))
    model = plucker.Model.from_urdf("robot.urdf")
    QDD = plucker_sweep.evaluate(client, model, "aba", Q, V, TAU)   # as plucker.aba_batch
    trajectories = plucker_sweep.rollouts(client, model, Q0, seconds=1.0)

Dask (Debian's python3-distributed) is imported on first use only.
"""
import numpy as np

import plucker
from plucker_control import rk4_step

_BATCHED = {
    "rnea": (plucker.rnea_batch, 3),  # function, number of state arrays it takes
    "aba": (plucker.aba_batch, 3),
    "crba": (plucker.crba_batch, 1),
    "crba_packed": (plucker.crba_batch_packed, 1),
}


def _evaluate_chunk(model, algorithm, threads, *arrays):
    fn, _ = _BATCHED[algorithm]
    return fn(model, *arrays, threads=threads)


def _chunks(n, chunk_size):
    return [(start, min(n, start + chunk_size)) for start in range(0, n, chunk_size)]


def evaluate(client, model, algorithm, *arrays, chunk_size=20000, threads_per_task=1):
    """plucker's batched `algorithm` ('rnea', 'aba', 'crba', 'crba_packed') on the states given as
    row arrays (Q; or Q, V, A for rnea; Q, V, TAU for aba), in chunks of `chunk_size` states spread
    over the client's workers. Returns the single-process batched call's array: to the bit when
    chunk_size is a multiple of 8 (the SIMD lane groups are then the same), else to rounding."""
    if algorithm not in _BATCHED:
        raise ValueError(f"plucker_sweep.evaluate: unknown algorithm '{algorithm}' (valid: {', '.join(_BATCHED)})")
    count = _BATCHED[algorithm][1]
    if len(arrays) != count:
        raise ValueError(f"plucker_sweep.evaluate: '{algorithm}' takes {count} state arrays, {len(arrays)} given")
    arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in arrays]
    n = arrays[0].shape[0]
    if any(a.shape[0] != n for a in arrays):
        raise ValueError("plucker_sweep.evaluate: the state arrays have different numbers of rows")
    if chunk_size < 1:
        raise ValueError("plucker_sweep.evaluate: chunk_size must be >= 1")
    [model_on_workers] = client.scatter([model], broadcast=True)  # one copy per worker
    futures = [client.submit(_evaluate_chunk, model_on_workers, algorithm, threads_per_task,
                             *[a[lo:hi] for a in arrays], pure=False)
               for lo, hi in _chunks(n, chunk_size)]
    return np.concatenate(client.gather(futures), axis=0)


def simulate(model, q, v, seconds, dt=1e-3, sample=10, on_step=None):
    """Passive motion (tau = 0) under gravity from (q, v): RK4 on the configuration manifold
    (plucker.integrate) with step dt. Returns (Q, V), the states every `sample` steps and the last
    one. on_step(k, steps), if given, is called after each step (a progress indicator)."""
    steps = int(round(seconds / dt))
    zero = np.zeros(model.nv)
    q, v = np.array(q, dtype=np.float64), np.array(v, dtype=np.float64)
    out_q, out_v = [q.copy()], [v.copy()]
    def passive(t, q, v):
        return plucker.aba(model, q, v, zero)

    for k in range(1, steps + 1):
        q, v = rk4_step(model, q, v, dt, passive)
        if k % sample == 0 or k == steps:
            out_q.append(q.copy())
            out_v.append(v.copy())
        if on_step is not None:
            on_step(k, steps)
    return np.array(out_q), np.array(out_v)


def _rollout_chunk(model, Q0, V0, seconds, dt, sample):
    """simulate() from each (q0, v0)."""
    runs = [simulate(model, q, v, seconds, dt, sample) for q, v in zip(Q0, V0)]
    return np.array([r[0] for r in runs]), np.array([r[1] for r in runs])


def rollouts(client, model, Q0, V0=None, seconds=1.0, dt=1e-3, sample=10, chunk_size=8):
    """Simulation rollouts (simulate()) from many initial states over the client's workers.
    Returns (Q, V) of shapes (len(Q0), samples, nq or nv): seconds / (dt sample) + 1 samples when
    the steps are a multiple of `sample`."""
    Q0 = np.atleast_2d(np.asarray(Q0, dtype=np.float64))
    V0 = np.zeros((Q0.shape[0], model.nv)) if V0 is None else np.atleast_2d(np.asarray(V0, dtype=np.float64))
    if Q0.shape[1] != model.nq or V0.shape != (Q0.shape[0], model.nv):
        raise ValueError(f"plucker_sweep.rollouts: Q0 must be (N, {model.nq}) and V0 (N, {model.nv})")
    if not (seconds > 0 and dt > 0 and sample >= 1):
        raise ValueError("plucker_sweep.rollouts: seconds and dt must be > 0, sample >= 1")
    [model_on_workers] = client.scatter([model], broadcast=True)
    futures = [client.submit(_rollout_chunk, model_on_workers, Q0[lo:hi], V0[lo:hi], seconds, dt, sample, pure=False)
               for lo, hi in _chunks(Q0.shape[0], chunk_size)]
    parts = client.gather(futures)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
