"""Models are picklable and copyable (Model.to_text / from_text underneath): the copy is the same
model to the last bit, and a model sent to another process computes the same dynamics there."""
import copy
import multiprocessing
import os
import pickle

import numpy as np
import pytest

import plucker

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("PLUCKER_SHARED_DIR", "")

BUILDERS = [plucker.build_all_joints_tree, plucker.build_four_bar, plucker.build_delta,
            lambda: plucker.build_chain(6, seed=2, axes=[[0.3, -0.2, 0.9]])]


def dynamics(m, seed=3):
    q = plucker.random_configuration(m, seed=seed)
    rng = np.random.default_rng(seed)
    v, a = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
    return plucker.rnea(m, q, v, a), plucker.crba(m, q)


@pytest.mark.parametrize("build", BUILDERS)
def test_pickle_and_copy_give_the_same_model(build):
    m = build()
    for other in (pickle.loads(pickle.dumps(m)), copy.copy(m), copy.deepcopy(m), plucker.Model.from_text(m.to_text())):
        assert other.to_text() == m.to_text()
        assert other.joint_names == m.joint_names and other.loop_joint_names == m.loop_joint_names
        for x, y in zip(dynamics(m), dynamics(other)):
            np.testing.assert_array_equal(x, y)


def test_a_urdf_robot_with_mimics_round_trips():
    path = os.path.join(SHARED, "models", "panda.urdf")
    if not os.path.exists(path):
        pytest.skip("../shared/models absent")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plucker.ModelWarning)
        m = plucker.Model.from_urdf(path, floating_base=True)
    other = pickle.loads(pickle.dumps(m))
    assert len(other.mimics) == len(m.mimics) == 1
    for x, y in zip(dynamics(m), dynamics(other)):
        np.testing.assert_array_equal(x, y)


def _rnea_in_worker(m):
    return dynamics(m)[0]


def test_a_model_sent_to_another_process():
    m = plucker.build_humanoid(seed=1)
    ctx = multiprocessing.get_context("spawn")  # a fresh interpreter: only the pickle crosses
    with ctx.Pool(1) as pool:
        tau = pool.apply(_rnea_in_worker, (m,))
    np.testing.assert_array_equal(tau, dynamics(m)[0])


def test_malformed_text_is_a_model_error():
    text = plucker.build_four_bar().to_text()
    with pytest.raises(plucker.ModelError, match="line"):
        plucker.Model.from_text(text[: len(text) // 2])
    with pytest.raises(plucker.ModelError, match="not a plucker model text"):
        plucker.Model.from_text("hello")
