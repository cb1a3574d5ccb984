#!/usr/bin/env bash
# ctest driver: runs the mlir_gpu sample (6 kernels, 2 compile threads, no
# cache: every kernel compiles) to write a trace, then checks it with Chrome
# DevTools' trace engine (run_viewer_test.sh; exit 77 = skipped).
# usage: run_mlir_gpu_then_check.sh <mlir_gpu-binary> <work_dir> <out_dir> <expect.json>
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$3"
"$1" --kernels 6 --threads 2 --no-cache --trace "$3/trace.json" --metrics "" --quiet
exec bash "$here/run_viewer_test.sh" "$2" "$3/trace.json" "$4"
