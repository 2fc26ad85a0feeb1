"""The committed type stubs (python/plucker.pyi) are those of the built module."""
import ast
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))

import make_stubs  # noqa: E402
import plucker  # noqa: E402

STUBS = os.path.join(HERE, "..", "plucker.pyi")


def test_stubs_match_the_module():
    with open(STUBS, encoding="utf-8") as f:
        committed = f.read()
    generated = make_stubs.stubs()
    assert committed == generated, (
        "python/plucker.pyi is out of date: regenerate it with "
        "PYTHONPATH=build/python python3 python/tools/make_stubs.py python/plucker.pyi")


def test_stubs_are_valid_python_and_cover_every_public_name():
    with open(STUBS, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    public = {n for n in dir(plucker) if not n.startswith("_")}
    assert public <= names, sorted(public - names)
    assert "rnea" in names and "Model" in names
