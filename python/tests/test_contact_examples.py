"""The contact example (examples/python/drop_quadruped.py) runs on a short horizon and its results hold."""
import json
import os
import subprocess
import sys

import pytest

from conftest import MODELS_DIR

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "python")


def run(tmp_path, script, *args):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-W", "ignore", os.path.join(EXAMPLES, script), "--out", str(out), *args],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    stem = os.path.splitext(script)[0]
    assert (out / f"{stem}.png").stat().st_size > 10_000  # a plot, not an empty figure
    with open(out / f"{stem}.json") as f:
        return json.load(f)


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


@pytest.mark.skipif(not os.path.exists(os.path.join(MODELS_DIR, "solo12.urdf")), reason="solo12.urdf absent")
def test_drop_quadruped_implicit_holds_a_small_regularisation(tmp_path):
    s = run(tmp_path, "drop_quadruped.py", "--model", os.path.join(MODELS_DIR, "solo12.urdf"), "--seconds", "1.0",
            "--integrator", "implicit_euler", "--regularization", "0.01")
    assert s["landed_all_feet"] and s["final_height"] > 0.15
    assert s["max_joint_speed_last_0.2s"] < 0.05  # no chatter at eps = 0.01 m/s (explicit: ~0.6 rad/s)
