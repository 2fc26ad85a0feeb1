#!/usr/bin/env bash
# The Python install paths of the README, as a new user runs them: (1) `cmake --install` into a
# venv used as the prefix, (2) `pip install .` into another venv, offline (--no-index) and with
# pip's build isolation (the in-tree backend needs nothing from an index). Each venv then imports
# plucker without PYTHONPATH, from inside the venv, evaluates an RNEA, and runs `plucker info`.
# usage: run.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
src=$1 build=$2 work=$3
python=/usr/bin/python3
rm -rf "$work"
mkdir -p "$work"
unset PYTHONPATH

check='
import sys, numpy as np, plucker
prefix = sys.argv[1]
assert plucker.__file__.startswith(prefix), (plucker.__file__, prefix)
import os
assert os.path.exists(os.path.join(os.path.dirname(plucker.__file__), "plucker.pyi"))  # type stubs
import plucker_control  # the pure-Python modules installed beside it
assert plucker_control.__file__.startswith(prefix), (plucker_control.__file__, prefix)
m = plucker.build_chain(4, seed=2)
q = np.linspace(-0.5, 0.5, m.nq)
tau = plucker.rnea(m, q, np.ones(m.nv), np.zeros(m.nv))
assert np.all(np.isfinite(tau)) and tau.shape == (m.nv,)
print(plucker.__file__, plucker.__version__, tau)
'

"$python" -m venv --system-site-packages "$work/cmake-venv"
cmake --install "$build" --prefix "$work/cmake-venv" > "$work/cmake-install.log"
(cd "$work" && cmake-venv/bin/python -c "$check" "$work/cmake-venv")
"$work/cmake-venv/bin/plucker" info "$src/examples/models/four_bar.urdf" | grep -q "loop joints: loop_joint"

"$python" -m venv --system-site-packages "$work/pip-venv"
PLUCKER_BUILD_DIR="$build" "$work/pip-venv/bin/python" -m pip install --no-index --quiet "$src" \
  > "$work/pip-install.log" 2>&1 || { cat "$work/pip-install.log"; exit 1; }
(cd "$work" && pip-venv/bin/python -c "$check" "$work/pip-venv")
"$work/pip-venv/bin/plucker" info "$src/examples/models/four_bar.urdf" | grep -q "loop joints: loop_joint"
# The viewer's bundle (built when node and npm exist) is installed beside the module, where
# `plucker view` finds it.
if [[ -f "$build/viewer/dist/viewer.js" ]]; then
  for venv in cmake-venv pip-venv; do
    "$work/$venv/bin/plucker" view "$src/examples/models/four_bar.urdf" --out "$work/$venv-view" > /dev/null
    cmp "$build/viewer/dist/viewer.js" "$work/$venv-view/viewer.js"
  done
  echo "install test: both installs carry the viewer (plucker view)"
fi
echo "install test: cmake --install and pip install . both import plucker and run the plucker command"
