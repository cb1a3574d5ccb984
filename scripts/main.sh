#!/usr/bin/env bash
# The main job: set up, build, and run the instrumented sample with a trace,
# printing a summary. usage: scripts/main.sh [trace-path]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh build
cmake --preset release -DJITSCOPE_BUILD_TESTS=OFF -DJITSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build --preset release --target jitscope_hello
trace="${1:-build/hello.trace.json}"
./build/release/samples/hello/jitscope_hello --trace "$trace"
