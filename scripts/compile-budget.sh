#!/usr/bin/env bash
# The compile budget of issue 16, measured: (1) a user's translation unit that calls every public
# algorithm (scripts/every_algorithm.cpp), compiled with the Release flags; (2) each of the
# library's own sources, from build/compile_commands.json (the largest is the budget's real
# test: templates stay inside src/); (3) with --clean-build, a clean build of library + tests +
# Python bindings with -j2 in a fresh directory. CPU seconds (user + sys) and peak memory from
# /usr/bin/time. Run after `make build`. Budget: (1) and each of (2) under 20 s and 1 GB;
# (3) under 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
[[ -f $build/compile_commands.json ]] || { echo "compile-budget: run make build first" >&2; exit 1; }
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

measure() {  # measure <label> <command...>: prints label, CPU s, peak MB
  /usr/bin/time -f '%U %S %M' -o "$out/time" "${@:2}" > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
  read -r user sys kb < "$out/time"
  printf '%-44s %7.1f s CPU %7.0f MB\n' "$1" "$(echo "$user + $sys" | bc)" "$(echo "$kb / 1024" | bc)"
}

echo "compiler: $($cxx --version | head -1)"
measure "scripts/every_algorithm.cpp (user TU, -O3)" \
  "$cxx" -std=c++20 -O3 -DNDEBUG -Iinclude -I/usr/include/eigen3 -c scripts/every_algorithm.cpp -o "$out/every.o"
"$cxx" "$out/every.o" "$build/libplucker.a" -ltinyxml2 -pthread -o "$out/every"
"$out/every"

echo "library sources, largest first (CPU s, peak MB):"
python3 - "$build/compile_commands.json" "$out" <<'PY'
import json, os, shlex, subprocess, sys
rows = []
for e in json.load(open(sys.argv[1])):
    if "/src/" not in e["file"] or "/python/" in e["file"]:
        continue
    args = shlex.split(e["command"])
    args[args.index("-o") + 1] = os.path.join(sys.argv[2], "x.o")
    timing = os.path.join(sys.argv[2], "time")
    subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", timing] + args, cwd=e["directory"], check=True)
    user, sys_, kb = open(timing).read().split()
    rows.append((float(user) + float(sys_), int(kb) / 1024, os.path.relpath(e["file"])))
for cpu, mb, f in sorted(rows, reverse=True):
    print(f"  {f:<44} {cpu:7.1f} s CPU {mb:7.0f} MB")
PY

if [[ ${1:-} == --clean-build ]]; then
  start=$SECONDS
  cmake -S . -B "$out/clean" -DCMAKE_BUILD_TYPE=Release -DPLUCKER_BUILD_BENCH=OFF -DPLUCKER_BUILD_EXAMPLES=OFF > /dev/null
  cmake --build "$out/clean" -j2 > "$out/clean.log" 2>&1 || { tail -30 "$out/clean.log"; exit 1; }
  echo "clean build (library + tests + Python bindings, -j2): $((SECONDS - start)) s wall"
fi
