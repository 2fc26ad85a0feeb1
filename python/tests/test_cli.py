"""The command-line tool (python/plucker_cli.py): outputs, exit codes, errors on stderr."""
import csv
import json
import os
import subprocess
import sys

import numpy as np

import plucker

HERE = os.path.dirname(os.path.abspath(__file__))
ARM = os.path.join(HERE, "..", "..", "examples", "models", "plucker_arm.urdf")
FOUR_BAR = os.path.join(HERE, "..", "..", "examples", "models", "four_bar.urdf")


def cli(*args):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, ".."), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "plucker_cli", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_info():
    p = cli("info", ARM, "--json")
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    m = plucker.Model.from_urdf(ARM)
    assert (info["nq"], info["nv"], info["joints"]) == (m.nq, m.nv, m.joint_names)
    assert abs(info["total_mass"] - m.total_mass) < 1e-12
    p = cli("info", FOUR_BAR)
    assert p.returncode == 0 and "loop joints: loop_joint (5 constraints)" in p.stdout


def test_eval_matches_the_library():
    m = plucker.Model.from_urdf(ARM)
    q = plucker.random_configuration(m, seed=4)
    v = np.linspace(-1, 1, m.nv)
    p = cli("eval", ARM, "-a", "rnea", "--seed", "4", "--v", " ".join(map(repr, v)), "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    np.testing.assert_array_equal(out["q"], q)
    np.testing.assert_allclose(out["result"], plucker.rnea(m, q, v, np.zeros(m.nv)), rtol=0, atol=0)
    p = cli("eval", ARM, "-a", "crba")
    assert p.returncode == 0 and p.stdout.startswith("crba: M(q)")


def test_simulate_writes_a_trajectory_that_conserves_energy(tmp_path):
    out = tmp_path / "traj.csv"
    p = cli("simulate", ARM, "-t", "0.5", "-o", str(out))
    assert p.returncode == 0, p.stderr
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 51 and float(rows[-1]["t"]) == 0.5
    energy = [float(r["energy"]) for r in rows]
    assert max(energy) - min(energy) < 1e-6 * max(1.0, abs(energy[0]))  # passive, RK4 at 1 ms
    assert abs(float(rows[-1]["q1"]) - float(rows[0]["q1"])) > 1e-3  # it fell


def test_bench_prints_each_algorithm():
    p = cli("bench", ARM, "--states", "50", "--reps", "1")
    assert p.returncode == 0, p.stderr
    for name in ("rnea", "crba", "aba", "minv"):
        assert f"  {name}" in p.stdout


def test_errors_exit_codes_and_stderr():
    p = cli("eval", ARM, "-a", "rnea", "--v", "1 2")
    assert p.returncode == 2 and "the model needs 6" in p.stderr and p.stdout == ""
    p = cli("info", "/nonexistent/robot.urdf")
    assert p.returncode == 1 and "robot.urdf" in p.stderr and p.stdout == ""
    p = cli("eval", ARM, "-a", "nosuch")
    assert p.returncode == 2 and "invalid choice" in p.stderr
    p = cli("--help")
    assert p.returncode == 0 and "plucker info ROBOT.urdf" in p.stdout
