#!/usr/bin/env bash
# Builds and runs the whole test suite with a CMake workflow preset.
# usage: scripts/test.sh [dev|asan|tsan|no-cuda|release]   (default: dev)
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-dev}"
bash scripts/setup-deps.sh test
# The module layering first: a wrong include fails here in a second.
python3 scripts/check_layers.py
# The tests in parallel, one per core, unless the caller says otherwise
# (the browser tests share Chromium under a RESOURCE_LOCK; each test writes
# its own files).
export CTEST_PARALLEL_LEVEL="${CTEST_PARALLEL_LEVEL:-$(nproc)}"
cmake --workflow --preset "$preset"
