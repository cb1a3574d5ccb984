#!/usr/bin/env bash
# Builds and runs the whole test suite with a CMake preset (configure, build, test).
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
# The Python package builds for, and its tests run with, one interpreter
# (scripts/python_arg.sh says which).
read -r -a python_arg <<<"$(bash scripts/python_arg.sh)"
# The preset's workflow (configure, build, test), as three steps: the
# workflow takes no -D, and configuring twice cost CI a configure.
cmake --preset "$preset" "${python_arg[@]}"
cmake --build --preset "$preset"
# The tests' files (about 0.5 GB a run) from runs more than a day old: most
# are named per run (pid and start time), the rest each run writes again.
find "build/$preset/tests" -path '*/tmp/*' -type f -mmin +1440 -delete 2>/dev/null || true
ctest --preset "$preset"
