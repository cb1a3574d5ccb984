#!/usr/bin/env bash
# Viewer test: checks a jitscope Chrome trace with Chrome DevTools' trace engine.
#
# usage: run_viewer_test.sh <work_dir> <trace.json> <expect.json>
#
# Installs the pinned @paulirish/trace_engine into <work_dir> with `npm ci`
# from the committed package-lock.json (tests/npm_ci.sh: skipped when
# <work_dir> already holds an install made from the same lock file), then
# runs check_trace.mjs.
#
# exit 0: pass; 77: skipped because the npm registry is unreachable
# (ctest SKIP_RETURN_CODE); anything else: failure.
set -u

SKIP=77
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

err() { echo "run_viewer_test: ERROR: $*" >&2; }

if [ "$#" -ne 3 ]; then
  echo "usage: $0 <work_dir> <trace.json> <expect.json>" >&2
  exit 2
fi
work_dir="$1"
trace="$2"
expect="$3"

for f in "$trace" "$expect"; do
  if [ ! -f "$f" ]; then err "no such file: $f"; exit 2; fi
done
trace="$(cd "$(dirname "$trace")" && pwd)/$(basename "$trace")"
expect="$(cd "$(dirname "$expect")" && pwd)/$(basename "$expect")"

mkdir -p "$work_dir" || { err "cannot create $work_dir"; exit 2; }
work_dir="$(cd "$work_dir" && pwd)"

# The pinned engine into work_dir (exit 77 when the registry is unreachable).
bash "$here/../npm_ci.sh" "$here" "$work_dir" @paulirish/trace_engine "viewer test"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

TRACE_ENGINE_DIR="$work_dir" node "$here/check_trace.mjs" "$trace" "$expect"
rc=$?
[ "$rc" -eq "$SKIP" ] && rc=1
exit "$rc"
