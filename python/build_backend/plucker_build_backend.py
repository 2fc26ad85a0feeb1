"""The PEP 517 build backend of `pip install .`: drives this project's CMake build.

It is in the source tree and uses the standard library only (pyproject.toml: requires = []),
so pip's isolated build environment needs nothing from a package index: `pip install .` works
offline with Debian's packages (cmake, g++, pybind11-dev, python3-dev, libeigen3-dev,
libtinyxml2-dev). The wheel holds the extension module `plucker`, its type stubs, the
command-line tool (`plucker_cli`, installed as the `plucker` command), `plucker_sweep` (Dask),
`plucker_studies` (helpers of studies/), and the browser viewer's bundle as `plucker_viewer/` when the build directory has it (`make build`
with node and npm: build/viewer/dist; the backend itself never runs npm, which needs the network).

The CMake build directory is PLUCKER_BUILD_DIR if set (an existing build is reused as it is
configured: `make build` then `pip install .` compiles nothing twice), else build-pip/ in the
source tree, configured for the module alone (no tests, benchmarks or examples).
"""
import base64
import csv
import glob
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _version():
    with open(os.path.join(SOURCE_DIR, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(plucker\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("plucker build backend: no `project(plucker VERSION ...)` in CMakeLists.txt")
    return m.group(1)


def _metadata():
    return "\n".join([
        "Metadata-Version: 2.1",
        "Name: plucker",
        f"Version: {_version()}",
        "Summary: Rigid-body robot dynamics (spatial vector algebra, RNEA, CRBA, ABA, closed loops)",
        "Requires-Python: >=3.9",
        "Requires-Dist: numpy",
        "",
    ])


def _tag():
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}-{platform}"


def _dist_info():
    return f"plucker-{_version()}.dist-info"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    path = os.path.join(metadata_directory, _dist_info())
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return _dist_info()


def _build_module():
    """Builds the extension with CMake; returns the path of the module file."""
    build = os.environ.get("PLUCKER_BUILD_DIR") or os.path.join(SOURCE_DIR, "build-pip")
    build = os.path.abspath(build)
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", SOURCE_DIR, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                        "-DPLUCKER_BUILD_TESTS=OFF", "-DPLUCKER_BUILD_BENCH=OFF",
                        "-DPLUCKER_BUILD_EXAMPLES=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
                       check=True, stdout=sys.stderr)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    subprocess.run(["cmake", "--build", build, "--target", "plucker_python", "-j", jobs],
                   check=True, stdout=sys.stderr)
    modules = glob.glob(os.path.join(build, "python", "plucker*.so"))
    if len(modules) != 1:
        raise RuntimeError(f"plucker build backend: expected one module in {build}/python, found {modules}")
    return modules[0]


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return [name, f"sha256={digest}", str(len(data))]


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    module = _build_module()
    with open(module, "rb") as f:
        files = {os.path.basename(module): f.read()}
    for extra in ("plucker.pyi", "plucker_cli.py", "plucker_sweep.py", "plucker_studies.py",
                  "plucker_control.py"):
        with open(os.path.join(SOURCE_DIR, "python", extra), "rb") as f:
            files[extra] = f.read()
    viewer = os.path.join(os.path.dirname(os.path.dirname(module)), "viewer", "dist")
    for name in ("index.html", "viewer.js"):
        if os.path.isfile(os.path.join(viewer, name)):
            with open(os.path.join(viewer, name), "rb") as f:
                files[f"plucker_viewer/{name}"] = f.read()
    info = _dist_info()
    files[f"{info}/entry_points.txt"] = b"[console_scripts]\nplucker = plucker_cli:main\n"
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = "\n".join([
        "Wheel-Version: 1.0", "Generator: plucker_build_backend", "Root-Is-Purelib: false",
        f"Tag: {_tag()}", ""]).encode()
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    for name, data in files.items():
        writer.writerow(_record_line(name, data))
    writer.writerow([f"{info}/RECORD", "", ""])
    files[f"{info}/RECORD"] = record.getvalue().encode()
    name = f"plucker-{_version()}-{_tag()}.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as whl:
        for path, data in files.items():
            whl.writestr(path, data)
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks (or, outside a checkout, the tree without build directories)."""
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=SOURCE_DIR, check=True, capture_output=True,
                                text=True).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        listed = []
        for root, dirs, names in os.walk(SOURCE_DIR):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build"))]
            listed += [os.path.relpath(os.path.join(root, n), SOURCE_DIR) for n in names]
    base = f"plucker-{_version()}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for rel in filter(None, listed):
            tar.add(os.path.join(SOURCE_DIR, rel), arcname=f"{base}/{rel}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
