#!/usr/bin/env bash
# ctest driver (viewer_merged_spawn_flows): nvrtc_jit --processes 2 writes a
# parent trace and one per worker, jitscope-merge --children makes them one,
# and Chrome DevTools' trace engine checks the result (run_viewer_test.sh;
# exit 77 = skipped): each worker's arrow from the parent's "spawn" (inside
# "compile (2 processes)") to its "spawned" (inside its first compile unit)
# is bound at both ends.
# usage: run_spawn_merge_then_check.sh <nvrtc_jit> <jitscope-merge> <work_dir> <out_dir> <expect.json>
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -rf "$4"
mkdir -p "$4"
"$1" --kernels 4 --workers 1 --processes 2 --no-gpu -q --cache-dir "$4/cache" \
  --trace "$4/jit.trace.json" --metrics "$4/jit.metrics.jsonl"
"$2" -q --children -o "$4/merged.json" "$4/jit.trace.json"
exec bash "$here/run_viewer_test.sh" "$3" "$4/merged.json" "$5"
