"""Shared fixtures of the plucker Python tests.

The module is found through PYTHONPATH (ctest sets it to <build>/python); the robot
models through PLUCKER_SHARED_DIR (default: <repo>/../shared), skipped when absent.
"""
import os
import warnings

import numpy as np
import pytest

import plucker

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED_DIR = os.environ.get("PLUCKER_SHARED_DIR", os.path.join(REPO, "..", "shared"))
MODELS_DIR = os.path.join(SHARED_DIR, "models")

# A small tree exercising every URDF joint type the tests need: revolute, continuous,
# prismatic, fixed (merged into a frame), with a branch and products of inertia.
SMALL_URDF = """<?xml version="1.0"?>
<robot name="small">
  <link name="base">
    <inertial><mass value="2.0"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial>
  </link>
  <link name="upper">
    <inertial><origin xyz="0 0 0.2" rpy="0.1 0 0"/><mass value="1.5"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.025" iyz="0.002" izz="0.01"/></inertial>
  </link>
  <link name="slider">
    <inertial><origin xyz="0.05 0 0"/><mass value="0.7"/>
      <inertia ixx="0.003" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.005"/></inertial>
  </link>
  <link name="tool">
    <inertial><mass value="0.2"/><inertia ixx="0.0002" ixy="0" ixz="0" iyy="0.0002" iyz="0" izz="0.0002"/></inertial>
  </link>
  <link name="side">
    <inertial><origin xyz="0 0.1 0"/><mass value="0.9"/>
      <inertia ixx="0.004" ixy="0" ixz="0.0005" iyy="0.002" iyz="0" izz="0.004"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.1" rpy="0 0 0.3"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="50" velocity="3"/>
  </joint>
  <joint name="extend" type="prismatic">
    <parent link="upper"/><child link="slider"/>
    <origin xyz="0 0 0.4" rpy="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.3" effort="100" velocity="1"/>
  </joint>
  <joint name="tool_mount" type="fixed">
    <parent link="slider"/><child link="tool"/>
    <origin xyz="0.1 0 0" rpy="0 1.5707963 0"/>
  </joint>
  <joint name="elbow" type="continuous">
    <parent link="upper"/><child link="side"/>
    <origin xyz="0 0.05 0.3" rpy="0 0 0"/><axis xyz="0 0.6 0.8"/>
  </joint>
</robot>
"""
SMALL_MOVABLE = ["shoulder", "extend", "elbow"]

# A URDF that declares its own floating joint (it keeps its name).
FLOATING_URDF = """<?xml version="1.0"?>
<robot name="floater">
  <link name="world"/>
  <link name="torso">
    <inertial><mass value="5.0"/><inertia ixx="0.2" ixy="0" ixz="0" iyy="0.3" iyz="0" izz="0.25"/></inertial>
  </link>
  <link name="leg">
    <inertial><origin xyz="0 0 -0.2"/><mass value="1.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial>
  </link>
  <joint name="torso_float" type="floating">
    <parent link="world"/><child link="torso"/>
  </joint>
  <joint name="hip" type="revolute">
    <parent link="torso"/><child link="leg"/>
    <origin xyz="0 0.1 -0.1"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="30" velocity="5"/>
  </joint>
</robot>
"""

# README of shared/models: movable DoF (revolute + continuous + prismatic, mimics included).
ZOO_DOF = {
    "ur5": 6, "panda": 9, "iiwa14": 7, "talos_full": 44, "simple_humanoid": 29, "romeo": 55,
    "romeo_small": 31, "anymal": 12, "solo12": 12, "hyq": 12, "icub": 32, "pr2": 30,
    "chain32": 32, "chain1024": 1024,
}


def model_path(name):
    return os.path.join(MODELS_DIR, name + ".urdf")


def have_models():
    return os.path.isdir(MODELS_DIR) and all(os.path.isfile(model_path(n)) for n in ZOO_DOF)


requires_models = pytest.mark.skipif(not have_models(), reason=f"shared robot models not found in {MODELS_DIR}")


def load_quiet(path_or_xml, floating_base=False, from_string=False):
    """Loads a model with the loader's ModelWarnings (defects of real robot files) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", plucker.ModelWarning)
        if from_string:
            return plucker.Model.from_urdf_string(path_or_xml, floating_base=floating_base)
        return plucker.Model.from_urdf(path_or_xml, floating_base=floating_base)


_zoo_cache = {}


def zoo(name, floating_base=False):
    key = (name, floating_base)
    if key not in _zoo_cache:
        _zoo_cache[key] = load_quiet(model_path(name), floating_base)
    return _zoo_cache[key]


def random_state(m, seed):
    """(q, v, a) with q from random_configuration and v, a standard normal."""
    rng = np.random.default_rng(seed)
    q = plucker.random_configuration(m, seed)
    return q, rng.standard_normal(m.nv), rng.standard_normal(m.nv)


@pytest.fixture
def small():
    return plucker.Model.from_urdf_string(SMALL_URDF)


@pytest.fixture
def small_floating():
    return plucker.Model.from_urdf_string(SMALL_URDF, floating_base=True)
