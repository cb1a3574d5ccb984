#!/usr/bin/env bash
# ctest driver (viewer_gpu_flows): runs gpu_trace_writer to write a trace with
# synthetic GPU tracks and launch flows (the CUPTI collector fed by
# tests/cupti/fake_cupti.hpp, no GPU needed), then checks it with Chrome
# DevTools' trace engine (run_viewer_test.sh; exit 77 = skipped).
# usage: run_gpu_then_check.sh <gpu_trace_writer-binary> <work_dir> <trace.json> <expect.json>
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -f "$3"
"$1" "$3"
exec bash "$here/run_viewer_test.sh" "$2" "$3" "$4"
