#!/usr/bin/env bash
# ctest driver: runs the mlir_gpu sample (6 kernels, 2 compile threads, no
# cache: every kernel compiles) to write a trace, then checks it with Chrome
# DevTools' trace engine (run_viewer_test.sh; exit 77 = skipped). Each
# worker compiles at least its first kernel (about 150 slices; the pool
# hands out the rest as workers free up, 1 to 5 a worker seen under load),
# hence mlir_gpu_expect.json's 100 slices a worker.
# usage: run_mlir_gpu_then_check.sh <mlir_gpu-binary> <work_dir> <out_dir> <expect.json>
set -eu
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$3"
"$1" --kernels 6 --threads 2 --no-cache --trace "$3/trace.json" --metrics "" --quiet
exec bash "$here/run_viewer_test.sh" "$2" "$3/trace.json" "$4"
