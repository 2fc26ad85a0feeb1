#!/usr/bin/env bash
# Install the Debian packages plucker needs. Idempotent and silent when
# everything is already installed.
#
#   scripts/install-deps.sh            core build/test dependencies
#   scripts/install-deps.sh --bench    + peer libraries for the benchmarks
#   scripts/install-deps.sh --fuzz     + clang and libFuzzer runtime
#   scripts/install-deps.sh --clang    + clang (make test-clang)
#   scripts/install-deps.sh --flops    + valgrind and objdump (operation counts)
#   scripts/install-deps.sh --docs     + Sphinx, MyST and Doxygen (make docs)
#   scripts/install-deps.sh --node     + nodejs and npm, when `node` / `npm` are not on PATH
#                                        (the browser viewer's build: npm ci + esbuild)
#   scripts/install-deps.sh --viewer   --node + chromium (the viewer's headless-browser test)
set -euo pipefail

packages=(
  build-essential cmake
  libeigen3-dev libtinyxml2-dev
  libgtest-dev libbenchmark-dev
  pybind11-dev python3-dev python3-numpy python3-pytest python3-matplotlib python3-venv python3-distributed
)
bench_packages=(libmujoco-dev liborocos-kdl-dev libkdl-parser-dev libdart-dev libdart-utils-urdf-dev)
fuzz_packages=(clang libclang-rt-14-dev)
flops_packages=(valgrind binutils)
# Sphinx with MyST reads the existing Markdown pages and autodocs the compiled module; Doxygen the
# C++ headers. Sphinx's own theme (alabaster): no theme package.
docs_packages=(python3-sphinx python3-myst-parser doxygen)

for arg in "$@"; do
  case "$arg" in
    --bench) packages+=("${bench_packages[@]}") ;;
    --fuzz) packages+=("${fuzz_packages[@]}") ;;
    --clang) packages+=(clang) ;;
    --flops) packages+=("${flops_packages[@]}") ;;
    --docs) packages+=("${docs_packages[@]}") ;;
    --node|--viewer)
      # Debian's nodejs 18 and npm 9 when there is no node at all; a node from elsewhere
      # (NodeSource's bundles its npm) is kept as it is: Debian's npm would conflict with it.
      command -v node >/dev/null 2>&1 || packages+=(nodejs)
      command -v npm >/dev/null 2>&1 || packages+=(npm)
      if [[ "$arg" == --viewer ]]; then packages+=(chromium); fi ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg'" >&2; exit 2 ;;
  esac
done

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

echo "install-deps.sh: installing ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "install-deps.sh: not root and sudo not found; install manually: ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
