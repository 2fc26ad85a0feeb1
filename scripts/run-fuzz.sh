#!/usr/bin/env bash
# Run every libFuzzer binary in <dir> for <seconds> each (used by `make fuzz` and CI):
# fuzz_urdf (the loader) and fuzz_dynamics (every algorithm on the models it loads).
# Seeds come from fuzz/corpus/<name>/ (copied: the repo corpus is not modified),
# a dictionary from fuzz/<name>.dict when present;
# crash/leak/timeout artifacts go to <dir>/artifacts/. One input running longer than
# FUZZ_TIMEOUT seconds (default 25) is a finding (a hang), as is one over 2 GB.
set -euo pipefail
dir=${1:?usage: run-fuzz.sh <fuzz-bin-dir> <seconds>}
seconds=${2:-60}
timeout=${FUZZ_TIMEOUT:-25}

shopt -s nullglob
fuzzers=("$dir"/fuzz_*)
if ((${#fuzzers[@]} == 0)); then
  echo "run-fuzz.sh: no fuzz/fuzz_*.cpp targets built"
  exit 0
fi

mkdir -p "$dir/artifacts"
status=0
for bin in "${fuzzers[@]}"; do
  [[ -f "$bin" && -x "$bin" ]] || continue
  name=$(basename "$bin")
  corpus=$(mktemp -d "${TMPDIR:-/tmp}/plucker-corpus-$name.XXXXXX")
  if [[ -d "fuzz/corpus/$name" ]]; then
    cp -r "fuzz/corpus/$name/." "$corpus/"
  fi
  dict=()
  [[ -f "fuzz/$name.dict" ]] && dict=(-dict="fuzz/$name.dict")
  echo "== fuzzing $name for ${seconds}s"
  if ! "$bin" "$corpus" "${dict[@]}" -max_total_time="$seconds" -timeout="$timeout" -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$dir/artifacts/$name-"; then
    echo "run-fuzz.sh: $name FAILED (artifacts in $dir/artifacts/)" >&2
    status=1
  fi
  rm -rf "$corpus"
done
exit $status
