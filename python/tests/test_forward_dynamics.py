"""plucker.forward_dynamics (every method of FORWARD_DYNAMICS_METHODS), plucker.minv and
plucker.forward_dynamics_choice: every method agrees with the ABA and with a dense solve of the
CRBA's M, M^-1 M = I, external forces, argument errors, SingularError on romeo; the
divide-and-conquer methods with threads and dca_cost.

Tolerance: |qdd - qdd_ref| <= C * cond(M) * eps * (|qdd_ref| + (|tau| + |c|) / lambda_max(M))
(2-norms, C = 10; cg / pcg stop at a relative residual of 1e-14, so eps is replaced by 1e-14 for
them), the forward-error bound of a backward-stable solve. The basic divide-and-conquer method 'dca'
(world-frame handle equations, docs/dca.md) is held to C = 1e3: its error grows with the world-frame
lever arms (largest observed C about 100 in tests/test_forward_dynamics.cpp)."""
import numpy as np
import pytest

import plucker
from conftest import requires_models, zoo

C = 10.0
C_DCA_BASIC = 1e3
EPS = np.finfo(float).eps
EXPECTED_METHODS = ("aba", "crba_cholesky", "crba_ltdl", "direct_cholesky", "symmetry_cholesky", "cg", "pcg",
                    "innovations", "minv", "global_sparse", "cfa", "dca", "dca_accurate", "auto")

MODELS = {
    "chain12": lambda: plucker.build_chain(12, seed=3),
    "tree_bf1.5": lambda: plucker.build_random_tree(24, branching_factor=1.5, skew=0.4, taper=0.95, seed=2),
    "tree_bf2": lambda: plucker.build_random_tree(31, branching_factor=2.0, skew=0.7, taper=0.9, seed=4),
    "tree_bf3": lambda: plucker.build_random_tree(40, branching_factor=3.0, skew=0.3, taper=0.95, seed=5),
    "humanoid": lambda: plucker.build_humanoid(seed=1),
    "quadruped": lambda: plucker.build_quadruped(seed=1),
    "all_joints": lambda: plucker.build_all_joints_tree(seed=1),
}
ZOO = [("ur5", False), ("panda", False), ("talos_full", True), ("anymal", True), ("icub", True), ("pr2", True)]
for _name, _fb in ZOO:
    MODELS[f"zoo_{_name}"] = (lambda n=_name, f=_fb: zoo(n, f))
_cache = {}


def get_model(mid):
    if mid not in _cache:
        _cache[mid] = MODELS[mid]()
    return _cache[mid]


def model_params():
    return [pytest.param(mid, marks=requires_models) if mid.startswith("zoo_") else mid for mid in MODELS]


def random_state(m, seed):
    rng = np.random.default_rng(seed)
    return plucker.random_configuration(m, seed), rng.uniform(-1, 1, m.nv), rng.uniform(-10, 10, m.nv)


def bound(M, ref, tau, c, eps=EPS, const=C):
    w = np.linalg.eigvalsh(M)
    return const * (w[-1] / w[0]) * eps * (np.linalg.norm(ref) + (np.linalg.norm(tau) + np.linalg.norm(c)) / w[-1])


def test_method_names():
    assert tuple(plucker.FORWARD_DYNAMICS_METHODS) == EXPECTED_METHODS


@pytest.mark.parametrize("mid", model_params())
def test_every_method_agrees_with_aba_and_dense_solve(mid):
    m = get_model(mid)
    for seed in range(2):
        q, v, tau = random_state(m, 100 + seed)
        M = plucker.crba(m, q)
        c = plucker.nonlinear_effects(m, q, v)
        dense = np.linalg.solve(M, tau - c)
        ref = plucker.aba(m, q, v, tau)
        for method in plucker.FORWARD_DYNAMICS_METHODS:
            if method == "cfa" and not plucker.cfa_topology(m)["covered"]:
                with pytest.raises(ValueError, match="starts a branch"):
                    plucker.forward_dynamics(m, q, v, tau, method=method)
                continue
            if method == "cfa" and mid == "zoo_icub":
                # icub's wrist links are point masses (zero rotational inertia): the CFA needs every
                # main-chain body's I^-1 and says so, naming the body.
                with pytest.raises(plucker.SingularError, match="body 'l_wrist_1'.*singular spatial inertia"):
                    plucker.forward_dynamics(m, q, v, tau, method=method)
                continue
            qdd = plucker.forward_dynamics(m, q, v, tau, method=method)
            assert qdd.shape == (m.nv,) and np.all(np.isfinite(qdd))
            eps = 1e-14 if method in ("cg", "pcg") else EPS
            const = C_DCA_BASIC if method == "dca" else C
            for r in (ref, dense):
                assert np.linalg.norm(qdd - r) <= bound(M, r, tau, c, eps, const), (mid, seed, method)


@pytest.mark.parametrize("mid", model_params())
def test_minv_times_m_is_identity(mid):
    m = get_model(mid)
    q, _, _ = random_state(m, 7)
    M = plucker.crba(m, q)
    Minv = plucker.minv(m, q)
    assert Minv.shape == (m.nv, m.nv)
    np.testing.assert_array_equal(Minv, Minv.T)
    w = np.linalg.eigvalsh(M)
    assert np.max(np.abs(Minv @ M - np.eye(m.nv))) <= C * (w[-1] / w[0]) * EPS


def test_external_forces_enter_every_method():
    m = plucker.build_humanoid(seed=2)
    q, v, tau = random_state(m, 11)
    f_ext = {"l_hand": [0.1, -0.2, 0.3, 5.0, -3.0, 20.0], "torso": [1.0, 0.0, -0.5, 0.0, 8.0, 0.0]}
    for frame in ("world", "local"):
        ref = plucker.aba(m, q, v, tau, f_ext=f_ext, frame=frame)
        assert not np.allclose(ref, plucker.aba(m, q, v, tau))
        for method in plucker.FORWARD_DYNAMICS_METHODS:  # the humanoid: limbs short enough for 'cfa'
            qdd = plucker.forward_dynamics(m, q, v, tau, method=method, f_ext=f_ext, frame=frame)
            if method == "dca":  # world-frame DCA: an error of ~5e-12 |qdd| spread over every entry
                assert np.linalg.norm(qdd - ref) <= 1e-9 * np.linalg.norm(ref), (method, frame)
            else:
                assert np.allclose(qdd, ref, rtol=1e-9, atol=1e-9), (method, frame)


def test_auto_and_choice():
    for m in (plucker.build_chain(32), plucker.build_humanoid(), plucker.build_random_tree(64, 3.0, 0.5, 1.0)):
        choice = plucker.forward_dynamics_choice(m)
        method, reason = choice  # a named tuple
        assert choice.method == method and choice.reason == reason
        assert method in ("aba", "crba_ltdl")
        assert method in reason and "ns" in reason
        q, v, tau = random_state(m, 3)
        np.testing.assert_array_equal(plucker.forward_dynamics(m, q, v, tau),
                                      plucker.forward_dynamics(m, q, v, tau, method=method))
    assert plucker.forward_dynamics_choice(plucker.build_chain(64)).method == "aba"


def test_argument_errors():
    m = plucker.build_chain(4)
    q, v, tau = random_state(m, 1)
    with pytest.raises(ValueError, match="crba_ltdl"):
        plucker.forward_dynamics(m, q, v, tau, method="cholesky")
    with pytest.raises(ValueError, match="tau has size 3"):
        plucker.forward_dynamics(m, q, v, tau[:3], method="pcg")
    with pytest.raises(ValueError, match="q"):
        plucker.minv(m, q[:2])


@requires_models
def test_romeo_every_method_raises_singular_error():
    m = zoo("romeo", True)
    q, v, tau = random_state(m, 5)
    assert not plucker.cfa_topology(m)["covered"]  # romeo is no chain: 'cfa' refuses its topology first
    for method in plucker.FORWARD_DYNAMICS_METHODS:
        if method == "cfa":
            with pytest.raises(ValueError, match="starts a branch"):
                plucker.forward_dynamics(m, q, v, tau, method=method)
            continue
        with pytest.raises(plucker.SingularError, match="joint '"):
            plucker.forward_dynamics(m, q, v, tau, method=method)
    with pytest.raises(plucker.SingularError):
        plucker.minv(m, q)


@pytest.mark.parametrize("mid", ["chain12", "tree_bf2", "humanoid", "all_joints"])
@pytest.mark.parametrize("preconditioned", [False, True])
def test_solve_conjugate_gradient_reports_iterations_and_residual(mid, preconditioned):
    m = get_model(mid)
    q, _, b = random_state(m, 21)
    M = plucker.crba(m, q)
    r = plucker.solve_conjugate_gradient(m, q, b, preconditioned=preconditioned, tolerance=1e-12)
    x, iterations, residual, backward_error = r  # a named tuple
    assert type(r).__name__ == "ConjugateGradientResult" and (r.x is x, r.iterations, r.residual) == (
        True, iterations, residual)
    assert isinstance(iterations, int) and 1 <= iterations <= 10 * m.nv
    # Converged: the true relative residual within the tolerance, or at the floor of rounding
    # (backward error 10 eps, out of reach of the relative residual when cond(M) is large).
    assert isinstance(residual, float) and 0 <= residual
    assert residual <= 1e-12 or backward_error <= 10 * np.finfo(float).eps
    # The reported residual is the true one at exit.
    assert np.linalg.norm(M @ x - b) <= 1e-12 * np.linalg.norm(b) + bound(M, x, b, 0 * b)
    assert np.linalg.norm(x - np.linalg.solve(M, b)) <= bound(M, x, b, 0 * b, 1e-12)
    # Fewer iterations for a looser tolerance.
    assert plucker.solve_conjugate_gradient(m, q, b, preconditioned, 1e-3).iterations <= iterations


def test_solve_conjugate_gradient_at_its_cap_raises_convergence_error():
    """Stopping at max_iterations above the tolerance raises plucker.ConvergenceError carrying the
    iterations done and the residual reached (as the C++ solvers do once the core merge lands)."""
    m = get_model("tree_bf2")
    q, _, b = random_state(m, 22)
    with pytest.raises(plucker.ConvergenceError) as info:
        plucker.solve_conjugate_gradient(m, q, b, max_iterations=1)
    e = info.value
    assert isinstance(e, ArithmeticError) and e.iterations == 1 and isinstance(e.residual, float)
    assert e.residual > 1e-14 and "solve_conjugate_gradient" in str(e)
    with pytest.raises(plucker.ConvergenceError) as info:
        plucker.solve_conjugate_gradient(m, q, b, preconditioned=True, tolerance=0.0, max_iterations=3)
    assert info.value.iterations == 3
    # b = 0 needs no iteration.
    r = plucker.solve_conjugate_gradient(m, q, np.zeros(m.nv), max_iterations=0)
    assert r.iterations == 0 and not np.any(r.x)


def test_solve_conjugate_gradient_argument_errors():
    m = plucker.build_chain(4)
    q, _, b = random_state(m, 1)
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="max_iterations"):
            plucker.solve_conjugate_gradient(m, q, b, max_iterations=bad)
    with pytest.raises(ValueError, match=r"b has size 3, expected nv = 4"):
        plucker.solve_conjugate_gradient(m, q, b[:3])
    with pytest.raises(ValueError, match=r"b\[1\] is not finite \(nan\) at joint 'joint2'"):
        plucker.solve_conjugate_gradient(m, q, [0, np.nan, 0, 0])
    with pytest.raises(ValueError, match="tolerance"):
        plucker.solve_conjugate_gradient(m, q, b, tolerance=-1.0)


@requires_models
def test_solve_conjugate_gradient_singular():
    m = zoo("romeo", True)
    with pytest.raises(plucker.SingularError, match="joint '"):
        plucker.solve_conjugate_gradient(m, plucker.random_configuration(m, 0), np.ones(m.nv))


@pytest.mark.parametrize("method", ["dca", "dca_accurate"])
def test_dca_threads_give_the_serial_result(method):
    # The levels of the assembly tree on 2 or 3 threads run the same operations per node as one
    # thread: the same qdd bit for bit; and it agrees with the ABA within the family's bound.
    for m in (plucker.build_chain(40, seed=2), plucker.build_random_tree(50, 2.0, 0.5, 0.95, seed=3),
              plucker.build_humanoid(seed=2)):
        q, v, tau = random_state(m, 7)
        serial = plucker.forward_dynamics(m, q, v, tau, method=method)
        for threads in (2, 3):
            np.testing.assert_array_equal(plucker.forward_dynamics(m, q, v, tau, method=method, threads=threads),
                                          serial)
        M = plucker.crba(m, q)
        c = plucker.nonlinear_effects(m, q, v)
        ref = plucker.aba(m, q, v, tau)
        assert np.linalg.norm(serial - ref) <= bound(M, ref, tau, c, const=C_DCA_BASIC if method == "dca" else C)


def test_dca_threads_errors():
    m = plucker.build_chain(4)
    q, v, tau = random_state(m, 1)
    with pytest.raises(ValueError, match="threads applies to the methods 'dca' and 'dca_accurate' only"):
        plucker.forward_dynamics(m, q, v, tau, method="aba", threads=2)
    with pytest.raises(ValueError, match="threads must be at least 1"):
        plucker.forward_dynamics(m, q, v, tau, method="dca", threads=0)


def test_dca_cost_depth_is_logarithmic():
    # A chain of N bodies: a balanced assembly tree of ceil(log2(N + 1)) levels; doubling N doubles
    # the work and adds a constant to the critical path.
    costs = {n: plucker.dca_cost(plucker.build_chain(n)) for n in (64, 128, 256, 512)}
    for n, cost in costs.items():
        assert cost.levels == int(np.ceil(np.log2(n + 1)))
        assert cost.max_handles == 2
    steps = [costs[2 * n].critical_path - costs[n].critical_path for n in (64, 128, 256)]
    assert min(steps) > 0 and max(steps) - min(steps) <= 0.01 * min(steps)
    assert 1.9 < costs[512].total / costs[256].total < 2.1
    assert plucker.dca_cost(plucker.build_chain(8), "basic").levels == 4
    with pytest.raises(ValueError, match="variant must be 'basic' or 'accurate'"):
        plucker.dca_cost(plucker.build_chain(8), "fast")


def test_global_sparse_and_cfa():
    """The two methods of the global formulation by their own entry points: against the ABA (bound
    above), the CFA's two solvers against each other, its topology and operation counts, and its
    errors."""
    m = plucker.build_chain(64, seed=2)
    q, v, tau = random_state(m, 31)
    M = plucker.crba(m, q)
    c = plucker.nonlinear_effects(m, q, v)
    ref = plucker.aba(m, q, v, tau)
    topo = plucker.cfa_topology(m)
    assert topo["covered"] and topo["reason"] == "" and len(topo["chain"]) == 64
    for qdd in (plucker.forward_dynamics_global_sparse(m, q, v, tau),
                plucker.forward_dynamics_cfa(m, q, v, tau),
                plucker.forward_dynamics_cfa(m, q, v, tau, solver="serial")):
        assert np.linalg.norm(qdd - ref) <= bound(M, ref, tau, c)
    plucker.forward_dynamics_cfa(m, q, v, tau)
    counts = plucker.cfa_operation_counts(m)
    assert counts["levels"] == 6 and counts["chain_bodies"] == 64 and counts["branch_bodies"] == 0
    assert 0 < counts["critical_path"] < counts["total"]
    with pytest.raises(ValueError, match="solver"):
        plucker.forward_dynamics_cfa(m, q, v, tau, solver="parallel")
    tree = get_model("tree_bf2")
    assert not plucker.cfa_topology(tree)["covered"]
    qt, vt, tt = random_state(tree, 32)
    with pytest.raises(ValueError, match="forward_dynamics_cfa: joint '.*' starts a branch of"):
        plucker.forward_dynamics_cfa(tree, qt, vt, tt)
