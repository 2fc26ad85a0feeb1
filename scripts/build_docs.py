#!/usr/bin/env python3
"""Build plucker's documentation site (`make docs`) and check it.

    PYTHONPATH=build/python:python scripts/build_docs.py [--out build/docs]

1. Sphinx (with MyST for the Markdown pages) from docs/, warnings as errors (-W): the pages,
   DEVELOPERS.md (included by docs/conventions.md), the studies (docs/studies/*.md), and the
   Python API reference from the docstrings of the compiled module `plucker` (so the module must
   be built and importable) and of python/plucker_cli.py, python/plucker_sweep.py and
   python/plucker_control.py.
2. Doxygen (docs/Doxyfile) over include/plucker/, warnings as errors, into <out>/html/cpp/.
3. Checks of the result: the Python API page documents every public name of the module (dir(plucker),
   and the public methods and properties of its classes) and of plucker_sweep and plucker_control; the C++ page's link
   to the Doxygen tree resolves; the Doxygen tree documents the core algorithms.

The site is <out>/html/index.html. Nothing is fetched from the network. Exit status 0 when the
build and every check pass; 1 otherwise (the failures on stderr); 2 when a tool is missing
(sphinx-build, myst-parser, doxygen: scripts/install-deps.sh --docs installs them).
"""
import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def missing_tools():
    missing = []
    if importlib.util.find_spec("sphinx") is None:
        missing.append("python3-sphinx")
    if importlib.util.find_spec("myst_parser") is None:
        missing.append("python3-myst-parser")
    if shutil.which("doxygen") is None:
        missing.append("doxygen")
    return missing


def public_names(module):
    """Every public name of a module, and Class.member for its classes' public members."""
    import inspect

    names = []
    for name in dir(module):
        if name.startswith("_"):
            continue
        obj = getattr(module, name)
        origin = getattr(obj, "__module__", None) if callable(obj) else None
        if inspect.ismodule(obj) or origin not in (None, module.__name__):
            continue  # imported from elsewhere (numpy, plucker in plucker_sweep)
        names.append(name)
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            names += [f"{name}.{m}" for m in vars(obj) if not m.startswith("_")]
    return names


def documented_ids(html_file):
    with open(html_file, encoding="utf-8") as f:
        return set(re.findall(r'<dt class="sig sig-object py" id="([^"]+)"', f.read()))


def check(out):
    """The checks of step 3; returns a list of failures."""
    import plucker
    import plucker_control
    import plucker_sweep

    failures = []
    html = os.path.join(out, "html")
    ids = documented_ids(os.path.join(html, "api", "python.html"))
    for module in (plucker, plucker_sweep, plucker_control):
        absent = [n for n in public_names(module) if f"{module.__name__}.{n}" not in ids]
        if absent:
            failures.append(f"api/python.html does not document {module.__name__}: {', '.join(absent)}")
    with open(os.path.join(html, "api", "cpp.html"), encoding="utf-8") as f:
        links = re.findall(r'href="(cpp/[^"#]+)"', f.read())
    if not links:
        failures.append("api/cpp.html has no link to the Doxygen tree")
    for link in links:
        if not os.path.isfile(os.path.join(html, "api", link)):
            failures.append(f"api/cpp.html links to {link}, which the build did not produce")
    cpp = os.path.join(html, "api", "cpp")
    with open(os.path.join(cpp, "namespaceplucker.html"), encoding="utf-8") as f:
        namespace = f.read()
    for function in ("rnea", "crba", "aba", "forward_dynamics", "rnea_derivatives", "operational_space",
                     "constrained_forward_dynamics", "load_urdf"):
        if not re.search(rf">{function}</a>\s*\(", namespace):
            failures.append(f"the Doxygen tree does not document plucker::{function}")
    return failures


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(REPO, "build", "docs"), help="output directory (default build/docs)")
    args = p.parse_args(argv)
    out = os.path.abspath(args.out)

    missing = missing_tools()
    if missing:
        print(f"build_docs.py: missing {' '.join(missing)} (scripts/install-deps.sh --docs)", file=sys.stderr)
        return 2
    try:
        import plucker  # noqa: F401  (autodoc needs it; say so here rather than in a Sphinx traceback)
    except ImportError as e:
        print(f"build_docs.py: cannot import plucker ({e}); build it and set PYTHONPATH=build/python:python",
              file=sys.stderr)
        return 1

    html = os.path.join(out, "html")
    t0 = time.monotonic()
    # -E: read every page again, so that a warning is never hidden by an up-to-date page.
    sphinx = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
              "-d", os.path.join(out, "doctrees"), os.path.join(REPO, "docs"), html]
    if subprocess.run(sphinx, cwd=REPO).returncode != 0:
        print("build_docs.py: sphinx-build failed (warnings are errors)", file=sys.stderr)
        return 1
    t1 = time.monotonic()

    # Doxygen into html/api/cpp/, beside the page that links to it; the configuration from
    # docs/Doxyfile with the output directory appended.
    cpp_parent = os.path.join(html, "api")
    shutil.rmtree(os.path.join(cpp_parent, "cpp"), ignore_errors=True)
    with open(os.path.join(REPO, "docs", "Doxyfile"), encoding="utf-8") as f:
        config = f.read() + f"\nOUTPUT_DIRECTORY = \"{cpp_parent}\"\n"
    if subprocess.run(["doxygen", "-"], input=config, text=True, cwd=REPO).returncode != 0:
        print("build_docs.py: doxygen failed (warnings are errors)", file=sys.stderr)
        return 1
    t2 = time.monotonic()

    failures = check(out)
    for failure in failures:
        print(f"build_docs.py: {failure}", file=sys.stderr)
    if failures:
        return 1
    print(f"build_docs.py: {html}/index.html (sphinx {t1 - t0:.1f} s, doxygen {t2 - t1:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
