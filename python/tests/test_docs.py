"""The documentation: its programs run and check themselves, the site builds without a warning and
documents the whole Python API, and no docstring or header points to a file a user lacks.

The site test needs Sphinx, MyST and Doxygen (scripts/install-deps.sh --docs, which `make test`
runs) and is skipped without them.
"""
import html
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys

import pytest

import plucker
import plucker_cli
import plucker_control
import plucker_sweep

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
def test_first_python_program_agrees_three_ways():
    """examples/python/first_program.py (included by getting_started.md): ABA, CRBA + bias forces
    and RNEA agree to rounding on the fixed-base and the floating-base arm."""
    proc = subprocess.run([sys.executable, os.path.join(REPO, "examples", "python", "first_program.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The free-flyer adds 7 coordinates (position, unit quaternion) and 6 velocities to the 6 joints.
    assert "nq = 6, nv = 6" in proc.stdout and "nq = 13, nv = 12" in proc.stdout
    lines = [line for line in proc.stdout.splitlines() if "relative residuals" in line]
    values = [float(x) for line in lines for x in re.findall(r"tau ([0-9.e+-]+)", line)]
    assert len(values) == 4, proc.stdout
    assert max(values) < 1e-12  # seen: 1e-16 (double rounding of a 6-13 DoF arm)


def test_first_cpp_program_agrees_two_ways():
    """examples/first_program.cpp (included by getting_started.md), as `make build` builds it."""
    exe = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(plucker.__file__))), "examples", "first_program")
    if not os.path.isfile(exe):
        pytest.skip(f"{exe} not built")
    proc = subprocess.run([exe, os.path.join(REPO, "examples", "models", "plucker_arm.urdf")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "nq = 6, nv = 6" in proc.stdout
    values = [float(x) for x in re.findall(r"^relative residual .*= ([0-9.e+-]+)$", proc.stdout, re.M)]
    assert len(values) == 2, proc.stdout
    assert max(values) < 1e-12


def docstrings():
    """(name, docstring) of every public function, class, method and property of the modules."""
    out = []
    for module in (plucker, plucker_sweep, plucker_cli, plucker_control):
        out.append((module.__name__, module.__doc__ or ""))
        for name in dir(module):
            obj = getattr(module, name)
            if name.startswith("_") or inspect.ismodule(obj):
                continue
            out.append((f"{module.__name__}.{name}", getattr(obj, "__doc__", None) or ""))
            if inspect.isclass(obj):
                out += [(f"{module.__name__}.{name}.{m}", getattr(v, "__doc__", None) or "")
                        for m, v in vars(obj).items() if not m.startswith("_")]
    return out


# What a user of the installed module or library does not have: the specification papers by their
# number in the repository, the repository's files.
LACKED = re.compile(r"paper \d{3}|\bdocs/|\bsrc/|DEVELOPERS|\w+\.(?:md|hpp|cpp)\b|RBDA|Ref\. \d")


def test_docstrings_name_papers_and_pages_not_repository_files():
    docs = docstrings()
    assert len(docs) > 100  # the whole API was visited
    bad = [f"{name}: {m.group(0)}" for name, doc in docs for m in [LACKED.search(doc)] if m]
    assert not bad, bad


def test_public_headers_name_papers_not_specification_files():
    bad = []
    for root, _, files in os.walk(os.path.join(REPO, "include", "plucker")):
        for f in files:
            with open(os.path.join(root, f), encoding="utf-8") as fh:
                for k, line in enumerate(fh, 1):
                    comment = line.split("//", 1)[1] if "//" in line else ""
                    m = re.search(r"paper \d{3}|\bdocs/|DEVELOPERS|RBDA|Ref\. \d", comment)
                    if m:
                        bad.append(f"{os.path.relpath(os.path.join(root, f), REPO)}:{k}: {m.group(0)}")
    assert not bad, bad


def docs_tools_missing():
    missing = [pkg for pkg, ok in (("python3-sphinx", importlib.util.find_spec("sphinx")),
                                   ("python3-myst-parser", importlib.util.find_spec("myst_parser")),
                                   ("doxygen", shutil.which("doxygen"))) if not ok]
    return missing


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    missing = docs_tools_missing()
    if missing:
        pytest.skip(f"documentation tools not installed: {' '.join(missing)} (scripts/install-deps.sh --docs)")
    out = tmp_path_factory.mktemp("docs")
    proc = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "build_docs.py"), "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # Sphinx -W, Doxygen warnings as errors
    return out / "html"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def text(path):
    """A page's text: tags removed (code is split into highlighted spans), entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", read(path)))


def test_site_documents_every_public_python_name(site):
    ids = set(re.findall(r'<dt class="sig sig-object py" id="([^"]+)"', read(site / "api" / "python.html")))
    names = [n for n in dir(plucker) if not n.startswith("_")]
    assert len(names) > 50
    assert [n for n in names if f"plucker.{n}" not in ids] == []
    for cls in (plucker.Model, plucker.Simulator):
        members = [m for m in vars(cls) if not m.startswith("_")]
        assert [m for m in members if f"plucker.{cls.__name__}.{m}" not in ids] == []
    assert {"plucker_sweep.evaluate", "plucker_sweep.rollouts"} <= ids
    # The command-line tool's help, generated from its parser, lists every subcommand.
    page = text(site / "api" / "python.html")
    for command in ("info", "eval", "simulate", "bench"):
        assert f"usage: plucker {command}" in page


def test_site_pages(site):
    for page in ("index", "getting_started", "conventions", "references", "api/cpp", "urdf", "loops", "contact",
                 "forward_dynamics", "derivatives", "operational_space", "sweep", "benchmarks", "flops"):
        assert (site / f"{page}.html").is_file(), page
    # The getting-started programs are the tested files, included verbatim.
    start = text(site / "getting_started.html")
    assert "plucker.nonlinear_effects(m, q, v)" in start and "plucker::nonlinear_effects" in start
    # Conventions: DEVELOPERS.md's sections are included, not copied.
    conventions = read(site / "conventions.html")
    for heading in ("Spatial vectors", "Transforms", "Model", "External forces, Jacobians, frame velocities and accelerations", "Units", "Singularity"):
        assert re.search(rf"<h2>{heading}", conventions), heading
    # Every algorithm page cites a paper in full: authors, "title", venue, year.
    pages = sorted((site / "algorithms").glob("*.html"))
    assert len(pages) >= 10
    for page in pages:
        if page.name == "index.html":
            continue
        assert re.search(r"[A-Z]\. [A-Z][a-z]+.*?\"[A-Z][^\"]{15,}\".*?(19|20)\d\d", text(page), re.S), page.name
    # The studies (docs/studies/*.md) are listed when there are any.
    studies = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "docs", "studies"))
                     if f.endswith(".md")) if os.path.isdir(os.path.join(REPO, "docs", "studies")) else []
    index = read(site / "index.html")
    for study in studies:
        assert f'href="studies/{study}.html"' in index, study


def test_cpp_reference(site):
    cpp = site / "api" / "cpp"
    assert (cpp / "index.html").is_file()
    assert 'href="cpp/index.html"' in read(site / "api" / "cpp.html")
    namespace = read(cpp / "namespaceplucker.html")
    for function in ("rnea", "crba", "aba", "aba_derivatives", "operational_space", "load_urdf"):
        assert re.search(rf">{function}</a>\s*\(", namespace), function
