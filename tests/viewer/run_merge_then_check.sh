#!/usr/bin/env bash
# ctest driver (viewer_merged_gpu_flows): gpu_trace_writer writes two traces
# with GPU tracks and launch flows, jitscope-merge makes them one, and Chrome
# DevTools' trace engine checks the result (run_viewer_test.sh; exit 77 =
# skipped): both inputs' processes, labelled, and every flow still bound.
# usage: run_merge_then_check.sh <gpu_trace_writer> <jitscope-merge> <work_dir> <out_prefix> <expect.json>
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rm -f "$4".a.json "$4".b.json "$4".merged.json
"$1" "$4".a.json
"$1" "$4".b.json
"$2" -o "$4".merged.json "$4".a.json "$4".b.json
exec bash "$here/run_viewer_test.sh" "$3" "$4".merged.json "$5"
