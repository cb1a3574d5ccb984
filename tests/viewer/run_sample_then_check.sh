#!/usr/bin/env bash
# ctest driver: runs the hello sample to write a trace, then checks it with
# Chrome DevTools' trace engine (run_viewer_test.sh; exit 77 = skipped).
# usage: run_sample_then_check.sh <hello-binary> <work_dir> <trace.json> <expect.json>
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$1" --trace "$3" --threads 4 --kernels 8
exec bash "$here/run_viewer_test.sh" "$2" "$3" "$4"
