#!/usr/bin/env bash
# ctest driver: runs the pass_pipeline sample (6 graphs, 2 codegen workers) to
# write a trace, then checks it with Chrome DevTools' trace engine
# (run_viewer_test.sh; exit 77 = skipped).
# usage: run_pass_pipeline_then_check.sh <pass_pipeline-binary> <work_dir> <trace.json> <expect.json>
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$1" --trace "$3" --graphs 6 --workers 2
exec bash "$here/run_viewer_test.sh" "$2" "$3" "$4"
