"""The contact example (examples/python/drop_quadruped.py) runs on a short horizon and its results hold."""
import os

import pytest

from conftest import MODELS_DIR
from test_examples import run  # runs an example with --out, checks its plot, returns its JSON


@pytest.mark.skipif(not os.path.exists(os.path.join(MODELS_DIR, "solo12.urdf")), reason="solo12.urdf absent")
def test_drop_quadruped_lands_and_stands(tmp_path):
    s = run(tmp_path, "drop_quadruped.py", "--model", os.path.join(MODELS_DIR, "solo12.urdf"), "--seconds", "1.0")
    assert s["landed_all_feet"]
    assert s["final_height"] > 0.15  # the controller keeps it up
    assert s["passive_final_height"] < s["final_height"] - 0.05  # without it the legs fold
    assert s["height_range_last_0.2s"] < 2e-3  # settled
    assert s["max_joint_speed_last_0.2s"] < 0.05  # no friction chatter
    assert s["final_energy"] < s["initial_energy"]
    assert s["max_penetration"] < 0.02
    # the trajectory for `plucker view`: 100 Hz, the CLI's columns, ending where the summary says
    import numpy as np
    import plucker_cli

    t, Q, names = plucker_cli.read_trajectory(str(tmp_path / "out" / "drop_quadruped_trajectory.csv"))
    assert names is None and Q.shape == (101, 19)
    np.testing.assert_allclose(t, np.arange(101) * 0.01, rtol=0, atol=1e-12)
    assert (Q[0, 2], Q[-1, 2]) == (s["initial_height"], s["final_height"])


@pytest.mark.skipif(not os.path.exists(os.path.join(MODELS_DIR, "solo12.urdf")), reason="solo12.urdf absent")
def test_drop_quadruped_implicit_holds_a_small_regularisation(tmp_path):
    s = run(tmp_path, "drop_quadruped.py", "--model", os.path.join(MODELS_DIR, "solo12.urdf"), "--seconds", "1.0",
            "--integrator", "implicit_euler", "--regularization", "0.01")
    assert s["landed_all_feet"] and s["final_height"] > 0.15
    assert s["max_joint_speed_last_0.2s"] < 0.05  # no chatter at eps = 0.01 m/s (explicit: ~0.6 rad/s)


@pytest.mark.skipif(not os.path.exists(os.path.join(MODELS_DIR, "solo12.urdf")), reason="solo12.urdf absent")
def test_drop_rigid_robots_land_and_hold(tmp_path):
    s = run(tmp_path, "drop_rigid.py", "--models", MODELS_DIR, "--seconds", "1.0")
    solo = s["solo12"]
    assert solo["final_active"] == 4  # on its four feet
    assert solo["final_height"] > 0.15
    assert solo["height_range_last_0.2s"] < 2e-3  # settled
    assert abs(solo["mean_vertical_force_over_weight_last_0.2s"] - 1.0) < 0.01  # the ground carries it
    assert solo["max_penetration"] < 1e-3
    if "talos_full" in s:
        talos = s["talos_full"]
        assert talos["final_active"] >= 4  # standing on its soles
        # Both soles flat: the 4 bottom corners of each sole box carry load (before the contact
        # margin, the position correction tipped each foot from edge to edge every step: 4 of 8).
        assert talos["final_loaded_points"] == 8
        # Settled: every joint slower than 0.02 rad/s over the last 0.2 s (measured 6.0e-3 rad/s;
        # 0.34 rad/s before, the rocking feet)
        assert talos["max_joint_speed_last_0.2s"] < 0.02
        assert abs(talos["mean_vertical_force_over_weight_last_0.2s"] - 1.0) < 0.01
        assert talos["height_range_last_0.2s"] < 2e-3
        assert talos["foot_slip_after_landing"] < 1e-6  # the feet hold (measured 1.7e-11 m)
        assert talos["max_penetration"] < 1e-3


@pytest.mark.skipif(not os.path.exists(os.path.join(MODELS_DIR, "solo12.urdf")), reason="solo12.urdf absent")
def test_drop_quadruped_keeps_standing_for_ten_seconds(tmp_path):
    # The standing test: PD + gravity compensation keeps solo12 standing 10 s after the drop
    # (measured: height 0.2198 m, range over the last 0.2 s 2.9e-9 m, joint speeds 2e-7 rad/s,
    # each foot at the static penetration (m g / 4k)^(2/3) = 1.55489 mm to 1e-11).
    s = run(tmp_path, "drop_quadruped.py", "--model", os.path.join(MODELS_DIR, "solo12.urdf"), "--seconds", "10")
    assert s["landed_all_feet"] and s["final_height"] > 0.2
    assert s["height_range_last_0.2s"] < 1e-6 and s["max_joint_speed_last_0.2s"] < 1e-4
    for p in s["final_penetration"]:
        assert abs(p - s["static_penetration_quarter_weight"]) < 1e-6 * s["static_penetration_quarter_weight"]
