#!/usr/bin/env bash
# The main job: set up, build, run the instrumented NVRTC JIT sample with a
# trace and a metrics file, print jitscope-report's summary of them and
# write its HTML report beside them.
# usage: scripts/main.sh [output-dir]   (default: build/main-job)
# Run it twice: the second run's compile units are disk-cache hits.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh build
out="${1:-build/main-job}"
mkdir -p "$out"
log="$out/build.log"
# The sample, the tools, and what `cmake --install build/release` copies
# (the README's next step; tests/find_package/main_job.sh reads this line).
main_targets="jitscope_nvrtc_jit jitscope-report jitscope-merge jitscope-ctl jitscope_installed"
echo "jitscope: building (release) ... log in $log"
# shellcheck disable=SC2086 # the targets are words
if ! { cmake --preset release -DJITSCOPE_BUILD_TESTS=OFF -DJITSCOPE_BUILD_BENCH=OFF &&
       cmake --build --preset release --target $main_targets; } \
     >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "jitscope: the build failed; the whole log is in $log" >&2
  exit 1
fi
trace="$out/nvrtc_jit.trace.json"
metrics="$out/nvrtc_jit.metrics.jsonl"
./build/release/samples/nvrtc_jit/jitscope_nvrtc_jit \
  --trace "$trace" --metrics "$metrics" --cache-dir "$out/kernel-cache"
echo
./build/release/tools/report/jitscope-report "$trace" --metrics "$metrics" \
  --section header,compile_times,phases,top_spans,gpu --top 5
html="$out/nvrtc_jit.report.html"
./build/release/tools/report/jitscope-report "$trace" --metrics "$metrics" --format html -o "$html"
# The same sample once more, in Perfetto's native protobuf form (its own
# kernel cache, so it compiles as the first run did).
pftrace="$out/nvrtc_jit.pftrace"
if ! ./build/release/samples/nvrtc_jit/jitscope_nvrtc_jit -q --trace "$pftrace" \
  --metrics "$out/nvrtc_jit.pftrace.metrics.jsonl" --cache-dir "$out/kernel-cache-pftrace" \
  2>"$out/nvrtc_jit.pftrace.log"; then
  cat "$out/nvrtc_jit.pftrace.log" >&2
  exit 1
fi
echo
echo "Per compile unit:  ./build/release/tools/report/jitscope-report $trace --metrics $metrics --section units"
echo "HTML report (units, phase waterfalls, artifacts): open $html in a browser."
echo "Open $trace in https://ui.perfetto.dev (or chrome://tracing)."
echo "Perfetto's native form of a second run: open $pftrace in https://ui.perfetto.dev"
echo "  (jitscope-report and jitscope-merge read it too; docs/perfetto-format.md)."
