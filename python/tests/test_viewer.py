"""The browser viewer (viewer/, `plucker view`) in headless Chromium.

The page is written by the CLI for a robot and a trajectory, then opened by Debian's chromium
(WebGL through SwiftShader, on the CPU):
  * screenshots at two times: not blank, the robot's colour present, and the robot's pixels move;
  * the page's own kinematics (the URDF read by urdf-loader, q mapped onto its joints, three.js
    matrices) against plucker's forward kinematics, link by link, to 1e-9 m: the two read the URDF
    and compose the transforms independently; also the root free-flyer, planar joints,
    primitives and mimic joints.
Skipped only when chromium or node/npm are not installed (scripts/install-deps.sh --viewer).
Each browser run is bounded (60 s); one takes about 2-4 s.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

import plucker
import plucker_cli

HERE = os.path.dirname(os.path.abspath(__file__))
ARM = os.path.join(HERE, "..", "..", "examples", "models", "plucker_arm.urdf")
SHARED = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WIDTH, HEIGHT = 800, 600

if CHROMIUM is None:
    pytest.skip("chromium is not installed (scripts/install-deps.sh --viewer)", allow_module_level=True)
if shutil.which("node") is None or shutil.which("npm") is None:
    pytest.skip("node/npm are not installed, so the viewer is not built (scripts/install-deps.sh --viewer)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def bundle():
    # node is here, so the build must have made the bundle: a missing one is a failure, not a skip.
    return plucker_cli.viewer_bundle()


def cli(*args, env=None):
    e = dict(os.environ, **(env or {}))
    e["PYTHONPATH"] = os.pathsep.join([os.path.join(HERE, ".."), e.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "plucker_cli", *args], capture_output=True, text=True, env=e,
                          timeout=120)


def browse(page, query, tmp_path, *mode):
    """Runs headless chromium on page/index.html?query; returns its stdout (the DOM with --dump-dom)."""
    args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-dev-shm-usage", "--hide-scrollbars",
            # WebGL without a GPU: ANGLE on SwiftShader (Chromium's CPU Vulkan), which headless
            # Chromium refuses for WebGL unless told it may use it.
            "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
            f"--user-data-dir={tmp_path / 'chromium-profile'}", f"--window-size={WIDTH},{HEIGHT}",
            "--virtual-time-budget=5000", *mode, f"file://{os.path.abspath(page)}/index.html?{query}"]
    p = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def page_state(page, query, tmp_path):
    dom = browse(page, query, tmp_path, "--dump-dom")
    assert 'data-ready="1"' in dom, dom[-2000:]
    m = re.search(r'<pre id="state"[^>]*>(.*?)</pre>', dom, re.S)
    return json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                      .replace("&gt;", ">"))


def screenshot(page, query, tmp_path, name):
    png = tmp_path / name
    browse(page, query, tmp_path, f"--screenshot={png}")
    return read_png(png)


def read_png(path):
    """RGB pixels (H, W, 3) of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + w * bpp)
    out = np.zeros((h, w * bpp), dtype=np.int32)
    prev = np.zeros(w * bpp, dtype=np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 0:
            row = line
        elif f == 1:  # Sub: running sum along the row, per channel
            row = np.cumsum(line.reshape(w, bpp), axis=0).reshape(-1) % 256
        elif f == 2:  # Up
            row = (line + prev) % 256
        else:  # Average, Paeth: byte by byte
            row = np.zeros_like(line)
            for i in range(w * bpp):
                a = row[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                if f == 3:
                    row[i] = (line[i] + (a + b) // 2) % 256
                else:
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    row[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) % 256
        out[y], prev = row, row
    return out.reshape(h, w, bpp)[:, :, :3]


def robot_pixels(img):
    """Pixels of the capsules' orange (COLORS.fallback in viewer/src/geometry.js, lit): red well above
    blue. The background, the grid and the control bar are grey; the COM marker is purple."""
    r, g, b = img[:, :, 0], img[:, :, 1], img[:, :, 2]
    return (r - b > 60) & (r > g)


@pytest.fixture(scope="module")
def arm_page(tmp_path_factory, bundle):
    d = tmp_path_factory.mktemp("arm")
    p = cli("simulate", ARM, "-t", "1", "--sample", "0.05", "-o", str(d / "arm.csv"))
    assert p.returncode == 0, p.stderr
    p = cli("view", ARM, str(d / "arm.csv"), "--out", str(d / "page"))
    assert p.returncode == 0, p.stderr
    return d / "page", d / "arm.csv"


def test_screenshots_show_the_robot_moving(arm_page, tmp_path):
    page, _ = arm_page
    first = screenshot(page, "t=0&paused=1", tmp_path, "t0.png")
    later = screenshot(page, "t=1&paused=1", tmp_path, "t1.png")
    assert first.shape == (HEIGHT, WIDTH, 3)
    for img in (first, later):
        assert img.std() > 10  # not a blank page (a uniform image has 0)
        assert robot_pixels(img).sum() > 800  # the arm is drawn (about 3000 pixels here)
    a, b = robot_pixels(first), robot_pixels(later)
    moved = (a ^ b).sum()
    assert moved > 0.3 * min(a.sum(), b.sum()), (a.sum(), b.sum(), moved)  # it fell in 1 s
    # Away from the robot and the control bar (the clock changes), the two pictures are the same.
    rest = ~(a | b)
    rest[-60:, :] = False
    assert np.mean(np.abs(first - later).max(axis=2)[rest] > 40) < 0.01


def link_errors(state, model, q):
    """Largest difference between each link's world pose drawn by the page and plucker's."""
    worst = 0.0
    for name, flat in state["links"].items():
        drawn = np.array(flat).reshape(4, 4).T  # three.js stores column-major
        worst = max(worst, np.abs(drawn - plucker.frame_pose(model, q, name)).max())
    return worst


def test_page_kinematics_match_plucker(arm_page, tmp_path):
    page, csv_path = arm_page
    t, Q, _ = plucker_cli.read_trajectory(str(csv_path))
    m = plucker.Model.from_urdf(ARM)
    k = 7
    s = page_state(page, f"t={t[k]!r}&paused=1&com=1", tmp_path)
    assert s["sample"] == k and s["weight"] < 1e-9
    assert set(s["links"]) == set(m.body_names) | set(m.frame_names)
    assert link_errors(s, m, Q[k]) < 1e-9
    np.testing.assert_allclose(s["com"], plucker.center_of_mass(m, Q[k]), rtol=0, atol=1e-9)
    # Between two samples the page interpolates q linearly: the pose of the mean configuration.
    s = page_state(page, f"t={(t[k] + t[k + 1]) / 2!r}&paused=1", tmp_path)
    assert s["sample"] == k and abs(s["weight"] - 0.5) < 1e-9
    assert link_errors(s, m, (Q[k] + Q[k + 1]) / 2) < 1e-9
    assert s["drawn"] == {"visual": 0, "collision": 0, "capsules": 8}  # the arm has no geometry


# A floating robot with every kind of joint the page maps, and the primitives it draws: a
# tilted planar joint (posed from plucker's kinematics), continuous, prismatic, a floating joint
# below the root, a merged fixed link, <visual> box and cylinder, a <collision> sphere, and links
# with nothing (capsules).
TEST_ROBOT = """<?xml version="1.0"?>
<robot name="viewer_test">
  <material name="blue"><color rgba="0.2 0.3 0.9 1"/></material>
  <link name="base"><inertial><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
    </inertial><visual><geometry><box size="0.4 0.2 0.1"/></geometry><material name="blue"/></visual></link>
  <link name="slider"><inertial><origin xyz="0.05 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><origin xyz="0 0 0.05" rpy="0.3 0 0"/><geometry><cylinder radius="0.03" length="0.2"/></geometry></visual></link>
  <link name="wheel"><inertial><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
    </inertial><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="rod"><inertial><origin xyz="0 0 0.1"/><mass value="0.3"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="tip"/>
  <link name="drone"><inertial><mass value="0.2"/><inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/>
    </inertial></link>
  <joint name="plane" type="planar"><parent link="base"/><child link="slider"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.1 -0.2 0.3"/><axis xyz="1 1 0.5"/></joint>
  <joint name="spin" type="continuous"><parent link="slider"/><child link="wheel"/>
    <origin xyz="0.2 0 0" rpy="0 0.4 0"/><axis xyz="0 1 0"/></joint>
  <joint name="slide" type="prismatic"><parent link="base"/><child link="rod"/>
    <origin xyz="-0.2 0 0" rpy="0.5 0 0"/><axis xyz="0 0.6 0.8"/><limit lower="-0.1" upper="0.1" effort="1" velocity="1"/></joint>
  <joint name="fly" type="floating"><parent link="base"/><child link="drone"/>
    <origin xyz="0 0.3 0.2" rpy="0.2 0.1 -0.4"/></joint>
  <joint name="fix" type="fixed"><parent link="rod"/><child link="tip"/><origin xyz="0 0 0.25" rpy="0 0 1"/></joint>
</robot>
"""


def test_floating_base_planar_joint_and_primitives(tmp_path, bundle):
    urdf = tmp_path / "viewer_test.urdf"
    urdf.write_text(TEST_ROBOT)
    m = plucker.Model.from_urdf(str(urdf), floating_base=True)
    Q = np.stack([plucker.random_configuration(m, seed=s) for s in range(3)])
    Q[:, 2] += 1.0  # above the ground
    (tmp_path / "traj.json").write_text(json.dumps({"t": [0.0, 0.5, 1.0], "q": Q.tolist()}))
    # 7 columns more than the fixed-base model's nq: the CLI takes them as the free-flyer root
    p = cli("view", str(urdf), str(tmp_path / "traj.json"), "--out", str(tmp_path / "page"))
    assert p.returncode == 0, p.stderr
    for k in (1, 2):
        s = page_state(tmp_path / "page", f"t={0.5 * k}&paused=1", tmp_path)
        assert s["sample"] == k and s["weight"] == 0
        assert set(s["links"]) == {"base", "slider", "wheel", "rod", "tip", "drone"}
        assert link_errors(s, m, Q[k]) < 1e-9
    assert s["drawn"] == {"visual": 2, "collision": 1, "capsules": 3}
    assert s["missing_meshes"] == 0


@pytest.mark.parametrize("name,floating", [("solo12", True), ("panda", False)])
def test_shared_robots(name, floating, tmp_path, bundle):
    """solo12 (meshes only, not shipped: capsules; free-flyer root) and panda (a mimic finger)."""
    path = os.path.join(SHARED, "models", f"{name}.urdf")
    if not os.path.exists(path):
        pytest.skip(f"{path} not found")
    m = plucker.Model.from_urdf(path, floating_base=floating)
    q = plucker.random_configuration(m, seed=3)
    (tmp_path / "q.json").write_text(json.dumps({"t": [0.0], "q": [q.tolist()]}))
    args = ["--floating-base"] if floating else []
    p = cli("view", path, str(tmp_path / "q.json"), "--out", str(tmp_path / "page"), *args)
    assert p.returncode == 0, p.stderr
    s = page_state(tmp_path / "page", "paused=1", tmp_path)
    assert link_errors(s, m, q) < 1e-9
    assert s["missing_meshes"] > 0 and s["drawn"]["capsules"] > 0


def test_page_without_data_says_so(arm_page, tmp_path):
    page, _ = arm_page
    broken = tmp_path / "broken"
    shutil.copytree(page, broken)
    os.remove(broken / "data.js")
    dom = browse(broken, "paused=1", tmp_path, "--dump-dom")
    assert 'data-ready="error"' in dom and "no robot data" in dom
