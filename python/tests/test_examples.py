"""The Python examples (examples/python/) run on a short horizon and their results hold."""
import json
import math
import os
import subprocess
import sys

import pytest

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


def test_computed_torque_follows_the_linear_error_dynamics(tmp_path):
    s = run(tmp_path, "computed_torque.py", "--seconds", "0.5")
    # e(t) = e0 (1 + w t) exp(-w t) exactly for the feedback-linearised arm; RK4 at 1 ms.
    assert s["max_excess_over_envelope"] < 1e-8
    assert s["final_error_computed_torque"] < 0.05 * (1 + 10 * 0.5) * math.exp(-10 * 0.5) + 1e-8
    assert s["final_error_pd"] > 10 * s["final_error_computed_torque"]


@pytest.mark.parametrize("method", ["kkt", "range_space", "null_space"])
def test_closed_loop_conserves_energy_and_the_loop(tmp_path, method):
    s = run(tmp_path, "closed_loop.py", "--seconds", "0.5", "--method", method)
    assert s["max_energy_drift"] < 1e-8 * s["energy"]
    assert s["max_constraint_residual"] < 1e-9
    assert s["crank_range"][1] - s["crank_range"][0] > 0.5  # it moved


def test_batched_dataset_agrees_with_single_state_and_inverse_dynamics(tmp_path):
    s = run(tmp_path, "batched_dataset.py", "--states", "300")
    assert s["max_rel_diff_batch_vs_single"] < 1e-12
    assert s["backward_error"] < 1e-10
    assert (tmp_path / "out" / "batched_dataset.npz").exists()


def test_trajectory_optimization_converges_on_the_derivatives(tmp_path):
    s = run(tmp_path, "trajectory_optimization.py", "--iterations", "8")
    # iLQR on aba_derivatives: every accepted step lowers the cost, which falls by > 50x in 8
    # iterations (100 -> 1.0 on the panda, 130 -> 1.6 on examples/models/plucker_arm.urdf), and
    # the arm ends within 2 cm of the target (2.4 mm and 5.4 mm measured).
    assert s["monotone"] and s["iterations"] >= 5
    assert s["final_cost"] < 0.02 * s["initial_cost"]
    assert s["final_distance"] < 0.02


@pytest.mark.parametrize("model", ["default", "arm"])
def test_operational_space_control_gives_the_commanded_task_acceleration(tmp_path, model):
    arm = ["--model", os.path.join(EXAMPLES, "..", "models", "plucker_arm.urdf"), "--frame", "tool0"]
    s = run(tmp_path, "operational_space_control.py", "--seconds", "0.4", *(arm if model == "arm" else []))
    # F = Lambda a* + (mu + p) makes the task acceleration a*, so the position error follows the
    # critically damped linear solution to RK4's accuracy at 1 ms (2.2e-11 m measured on the
    # panda), and the posture torque through N^T leaves the task untouched (2.5e-12 measured).
    assert s["max_deviation_from_linear_error_dynamics"] < 1e-8
    assert s["max_task_acceleration_from_null_space_torque"] < 1e-8
    assert s["final_position_error"] < 0.2 * s["initial_position_error"]
    assert s["final_orientation_error"] < 1e-6


def test_hybrid_force_control_confines_the_environment_to_the_force_subsystem(tmp_path):
    s = run(tmp_path, "hybrid_force_control.py", "--seconds", "1.2")
    # Stiffness 1e4 and 1e5 N/m, a 10 N step and a 5 cm circle (panda, or the 6-DoF arm without
    # ../shared). The motion-subsystem acceleration is the command at every step (3e-12 measured on the
    # panda); with the measured contact force cancelled the surface error is the closed form and the
    # same for both stiffnesses (2e-12 m); the decoupled law's force stays within 1e-5 N of the command
    # while circling, the force-selection law's does not (4.8 N off on the panda).
    for c in ("decoupled", "cancelled"):
        assert s[c]["max_alpha_minus_command"] < 1e-9
        assert max(s[c]["max_force_error_after_0.5s"]) < 1e-4
    assert max(s["cancelled"]["max_deviation_from_closed_form"]) < 1e-9
    assert s["cancelled"]["max_position_difference"] < 1e-9
    assert s["decoupled"]["max_position_difference_after_1s"] < 1e-5
    assert min(s["force_selection"]["max_force_error_after_0.5s"]) > 0.05
    assert s["acceleration_selection"]["max_alpha_minus_command"] > 1.0
    peaks = s["decoupled"]["peak_force"]
    assert peaks[1] - peaks[0] > 1.0  # the force transient depends on the environment
