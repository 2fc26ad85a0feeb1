#!/usr/bin/env bash
# Build the browser viewer (viewer/) into OUT_DIR/dist (index.html, viewer.js), where
# `plucker view` finds it (build/python/../viewer/dist). Run by every `cmake --build` (target
# plucker_viewer); does nothing when node or npm is missing (scripts/install-deps.sh --viewer).
#
#   scripts/build-viewer.sh SOURCE_DIR OUT_DIR      e.g. scripts/build-viewer.sh . build/viewer
#
# The sources are copied into OUT_DIR, `npm ci` installs the locked packages there (again only
# when package-lock.json changed), then esbuild bundles (only when a source is newer than the bundle).
set -euo pipefail
src=$(cd "$1/viewer" && pwd)
out=$2

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "plucker viewer: node/npm not found, viewer not built (scripts/install-deps.sh --viewer installs them)"
  exit 0
fi
mkdir -p "$out/src"
out=$(cd "$out" && pwd)

if ! cmp -s "$src/package-lock.json" "$out/node_modules/.plucker-lock" 2>/dev/null; then
  echo "plucker viewer: npm ci in $out"
  cp "$src/package.json" "$src/package-lock.json" "$out/"
  # --ignore-scripts: no install scripts of dependencies run (esbuild's only checks its binary).
  if ! (cd "$out" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    echo "plucker viewer: npm ci failed (offline? it fetches the locked packages from the npm registry once);" \
         "configure with -DPLUCKER_BUILD_VIEWER=OFF to build without the viewer" >&2
    exit 1
  fi
  cp "$src/package-lock.json" "$out/node_modules/.plucker-lock"
  rm -f "$out/dist/viewer.js"
fi

stale=0
[[ -f "$out/dist/viewer.js" && -f "$out/dist/index.html" ]] || stale=1
for f in "$src/build.mjs" "$src"/src/*; do
  [[ "$f" -nt "$out/dist/viewer.js" ]] && stale=1
done
((stale)) || exit 0
echo "plucker viewer: bundling into $out/dist"
rm -rf "$out/src"
cp -r "$src/src" "$src/build.mjs" "$out/"
(cd "$out" && node build.mjs dist)
