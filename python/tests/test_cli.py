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


def fake_bundle(tmp_path):
    """A stand-in for the built viewer (build/viewer/dist): these tests check the CLI, not the page
    (test_viewer.py runs the real page in Chromium)."""
    d = tmp_path / "bundle"
    d.mkdir()
    (d / "index.html").write_text("<!doctype html><title>viewer</title>")
    (d / "viewer.js").write_text("/* viewer */")
    return {"PLUCKER_VIEWER_DIR": str(d)}


def view(*args, env, cwd=None):
    e = dict(os.environ, **env)
    paths = [os.path.join(HERE, "..")] + e.get("PYTHONPATH", "").split(os.pathsep)
    e["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in paths if p)  # absolute: cwd may differ
    return subprocess.run([sys.executable, "-m", "plucker_cli", "view", *args], capture_output=True, text=True,
                          env=e, timeout=120, cwd=cwd)


def page_data(page):
    text = (page / "data.js").read_text()
    prefix = "window.PLUCKER_DATA = "
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix):-2])


def test_view_writes_the_page(tmp_path):
    env = fake_bundle(tmp_path)
    traj = tmp_path / "traj.csv"
    assert cli("simulate", ARM, "-t", "0.2", "-o", str(traj)).returncode == 0
    p = view(ARM, str(traj), "--out", str(tmp_path / "page"), env=env)
    assert p.returncode == 0, p.stderr
    assert f"file://{tmp_path / 'page' / 'index.html'}" in p.stdout
    page = tmp_path / "page"
    assert (page / "viewer.js").read_text() == "/* viewer */"
    assert (page / "robot.urdf").read_text() == open(ARM).read()
    data = page_data(page)
    assert data["robot"] == "plucker_arm" and data["urdf"] == open(ARM).read()
    assert json.loads((page / "trajectory.json").read_text()) == data["trajectory"]
    traj_data = data["trajectory"]
    with open(traj) as f:
        rows = list(csv.DictReader(f))
    m = plucker.Model.from_urdf(ARM)
    # every sample, to the last bit (the CSV has 17 digits, JSON round-trips doubles)
    assert traj_data["t"] == [float(r["t"]) for r in rows]
    assert traj_data["q"] == [[float(r[f"q{k}"]) for k in range(m.nq)] for r in rows]
    assert [(j["name"], j["kind"], j["q"], j["nq"]) for j in traj_data["joints"]] == \
        [(n, "revolute", m.joint_q_index(n), 1) for n in m.joint_names]
    for q, com in zip(traj_data["q"], traj_data["com"]):
        assert com == plucker.center_of_mass(m, np.array(q)).tolist()
    # no trajectory: one sample at the neutral configuration; --no-serve writes ROBOT_view/ here
    p = view(ARM, "--no-serve", env=env, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = page_data(tmp_path / "plucker_arm_view")
    assert data["trajectory"]["t"] == [0.0] and data["trajectory"]["q"] == [plucker.neutral(m).tolist()]


def test_view_reads_joint_named_columns_and_json(tmp_path):
    env = fake_bundle(tmp_path)
    m = plucker.Model.from_urdf(ARM)
    Q = np.stack([plucker.random_configuration(m, seed=s) for s in range(3)])
    # build/examples/demo's CSV: a q_<joint> column per joint, in any order, other columns ignored
    names = list(reversed(m.joint_names))
    lines = [",".join(["t"] + [f"q_{n}" for n in names] + ["energy"])]
    lines += [",".join([repr(0.1 * k)] + [repr(Q[k, m.joint_q_index(n)]) for n in names] + ["0"]) for k in range(3)]
    (tmp_path / "named.csv").write_text("\n".join(lines) + "\n")
    p = view(ARM, str(tmp_path / "named.csv"), "--out", str(tmp_path / "a"), env=env)
    assert p.returncode == 0, p.stderr
    assert page_data(tmp_path / "a")["trajectory"]["q"] == Q.tolist()
    (tmp_path / "q.json").write_text(json.dumps({"t": [0, 0.1, 0.2], "q": Q.tolist()}))
    p = view(ARM, "--out", str(tmp_path / "b"), str(tmp_path / "q.json"), env=env)  # options first works too
    assert p.returncode == 0, p.stderr
    assert page_data(tmp_path / "b")["trajectory"]["q"] == Q.tolist()


def test_view_serves_on_localhost(tmp_path):
    import select
    import signal
    import urllib.request

    env = fake_bundle(tmp_path)
    e = dict(os.environ, **env)
    e["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, ".."), e.get("PYTHONPATH", "")])
    proc = subprocess.Popen([sys.executable, "-m", "plucker_cli", "view", ARM, "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=e)
    try:
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "no URL printed within 60 s"
        line = proc.stdout.readline()
        url = line.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/index.html"), line
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.read().decode() == "<!doctype html><title>viewer</title>"
        with urllib.request.urlopen(url.replace("index.html", "data.js"), timeout=10) as r:
            assert r.read().decode().startswith("window.PLUCKER_DATA = ")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_view_errors(tmp_path):
    env = fake_bundle(tmp_path)

    def fails(code, *args, expect, environment=env):
        p = view(*args, env=environment)
        assert p.returncode == code and expect in p.stderr and p.stdout == "", (p.returncode, p.stderr)

    out = ["--out", str(tmp_path / "page")]
    fails(1, "/nonexistent/robot.urdf", *out, expect="robot.urdf")
    fails(1, ARM, str(tmp_path / "missing.csv"), *out, expect="missing.csv")
    (tmp_path / "short.csv").write_text("t,q0,q1,q2\n0,0,0,0\n")
    fails(1, ARM, str(tmp_path / "short.csv"), *out, expect="3 q columns, but plucker_arm has nq = 6")
    (tmp_path / "named.csv").write_text("t,q_nosuch\n0,0\n")
    fails(1, ARM, str(tmp_path / "named.csv"), *out, expect="q_nosuch name no joint of plucker_arm")
    (tmp_path / "time.csv").write_text("t,q0,q1,q2,q3,q4,q5\n0,0,0,0,0,0,0\n0,0,0,0,0,0,0\n")
    fails(1, ARM, str(tmp_path / "time.csv"), *out, expect="times must increase")
    (tmp_path / "text.csv").write_text("t,q0,q1,q2,q3,q4,q5\n0,0,0,x,0,0,0\n")
    fails(1, ARM, str(tmp_path / "text.csv"), *out, expect="line 2: not a number")
    (tmp_path / "bad.json").write_text('{"t": [0], "q": [[0, 0]]}')
    fails(1, ARM, str(tmp_path / "bad.json"), *out, expect="2 q columns")
    # 13 columns: the arm with a free-flyer root (6 + 7), whose quaternion here is zero
    (tmp_path / "root.csv").write_text("t," + ",".join(f"q{k}" for k in range(13)) + "\n" + ",".join(["0"] * 14) + "\n")
    fails(1, ARM, str(tmp_path / "root.csv"), *out, expect="sample 0 (t = 0): forward_kinematics: q: quaternion of "
          "joint 'root_joint' is not unit (norm 0)")
    fails(1, ARM, *out, expect="the viewer is not built", environment={"PLUCKER_VIEWER_DIR": str(tmp_path / "none")})
    fails(2, ARM, "--port", "70000", expect="not a port number")
    fails(2, ARM, "a.csv", "b.csv", expect="unrecognized arguments: b.csv")
    assert not (tmp_path / "page").exists()  # nothing written on an error
