#!/usr/bin/env bash
# usage: run_standalone.sh <app> <libjitscope_nvtx.so> <trace.json> [<viewer work dir> <expect.json>]
# Checks that an uninstrumented program's NVTX ranges reach a trace through
# the injection library alone, with the exact counts it emits; with the last
# two arguments, Chrome DevTools' trace engine then reads the trace
# (tests/viewer; exit 77 when npm is unreachable).
set -euo pipefail
app="$1" injection="$2" trace="$3"
rm -f "$trace"
NVTX_INJECTION64_PATH="$injection" JITSCOPE_TRACE="$trace" "$app"
count() { grep -o "\"name\":\"$1\"" "$trace" | wc -l; }
fail=0
check() {
  local got; got=$(count "$1")
  if [[ "$got" != "$2" ]]; then echo "FAIL: $1 appears $got times, want $2"; fail=1; fi
}
check vendor.outer 2
check vendor.inner 2
check standalone.mark 1
check vendor.gemm 1
check standalone.async 2  # its "b" and its "e"
grep -q '"cat":"vendorlib"' "$trace" || { echo "FAIL: no vendorlib category"; fail=1; }
# The session stopped at exit: the array is closed (the viewer test parses it all).
[[ "$(tail -n 1 "$trace")" == "]" ]] || { echo "FAIL: $trace does not end with ]"; fail=1; }
[[ $fail == 0 && $# -ge 5 ]] || exit $fail
exec bash "$(dirname "$0")/../viewer/run_viewer_test.sh" "$4" "$trace" "$5"
