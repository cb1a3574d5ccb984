#!/usr/bin/env bash
# ctest browser_pass_pipeline_report: the pass_pipeline sample's HTML report
# opened in headless Chromium and checked from its DOM (check_report.mjs).
#
# usage: run_report_test.sh <jitscope_pass_pipeline> <jitscope-report> <npm_dir> <out_dir> <screenshot.png>
#
# Runs the sample with --trace/--metrics into a fresh <out_dir>, renders
# <out_dir>/report.html with jitscope-report --format html (and, from a
# second run as the baseline, <out_dir>/compare.html), installs the
# pinned puppeteer-core into <npm_dir> (tests/npm_ci.sh), and runs the check;
# a full-page screenshot goes to <screenshot.png>.
#
# exit 0: pass; 77: skipped, only when Chromium is missing and cannot be
# installed or the npm registry is unreachable (one line says which);
# anything else: failure.
set -u

SKIP=77
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
err() { echo "run_report_test: ERROR: $*" >&2; }

if [ "$#" -ne 5 ]; then
  echo "usage: $0 <jitscope_pass_pipeline> <jitscope-report> <npm_dir> <out_dir> <screenshot.png>" >&2
  exit 2
fi
sample="$1"
report="$2"
npm_dir="$3"
out="$4"
shot="$5"

bash "$here/ensure_chromium.sh" "$npm_dir"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

if ! { rm -rf "$out" && mkdir -p "$out" "$(dirname "$shot")"; }; then err "cannot make $out"; exit 2; fi
out="$(cd "$out" && pwd)"

if ! "$sample" --trace "$out/trace.json" --metrics "$out/metrics.jsonl" >"$out/sample.log" 2>&1; then
  err "$sample failed:"
  cat "$out/sample.log" >&2
  exit 1
fi
if ! "$report" "$out/trace.json" --metrics "$out/metrics.jsonl" --format html \
    -o "$out/report.html" 2>"$out/report.err"; then
  err "jitscope-report --format html failed:"
  cat "$out/report.err" >&2
  exit 1
fi
# A second run as the baseline of the first: the page gets its comparison.
if ! "$sample" --trace "$out/base.trace.json" --metrics "$out/base.metrics.jsonl" >>"$out/sample.log" 2>&1 ||
   ! "$report" --baseline "$out/base.trace.json" --baseline-metrics "$out/base.metrics.jsonl" \
     "$out/trace.json" --metrics "$out/metrics.jsonl" --format html -o "$out/compare.html" \
     2>"$out/compare.err"; then
  err "the --baseline report failed:"
  cat "$out/sample.log" "$out/compare.err" >&2
  exit 1
fi
# Runs with compiler passes (the LLVM adapter's shape: "ir" args, and its
# IR sizes), GVNPass 3 ms slower in the new one: the gate fails (3) naming
# it and llvm_opt.
pass_trace() {  # <file> <GVNPass ms>
  local gvn_us=$(($2 * 1000)) pm_us=$((10000 + $2 * 1000 + 20))
  printf '%s\n' "[" \
    "{\"ph\":\"X\",\"name\":\"InstCombinePass\",\"pid\":1,\"tid\":1,\"ts\":1010,\"dur\":10000,\"args\":{\"compile_id\":\"0/0\",\"ir\":\"function\",\"ir_size_before\":40,\"ir_size_after\":31}}," \
    "{\"ph\":\"X\",\"name\":\"GVNPass\",\"pid\":1,\"tid\":1,\"ts\":11020,\"dur\":$gvn_us,\"args\":{\"compile_id\":\"0/0\",\"ir\":\"function\",\"ir_size_before\":31,\"ir_size_after\":29}}," \
    "{\"ph\":\"X\",\"name\":\"PassManager<llvm::Module>\",\"pid\":1,\"tid\":1,\"ts\":1000,\"dur\":$pm_us,\"args\":{\"compile_id\":\"0/0\",\"ir\":\"module\",\"ir_size_before\":40,\"ir_size_after\":29}}," \
    "{\"ph\":\"X\",\"name\":\"llvm_opt\",\"pid\":1,\"tid\":1,\"ts\":500,\"dur\":$((pm_us + 1000)),\"args\":{\"compile_id\":\"0/0\"}}," \
    "{\"ph\":\"X\",\"cat\":\"compile_unit\",\"name\":\"[0/0] k\",\"pid\":1,\"tid\":1,\"ts\":0,\"dur\":$((pm_us + 3000)),\"args\":{\"compile_id\":\"0/0\",\"unit_key\":\"k\"}}" \
    "]" >"$1"
}
pass_trace "$out/passes.base.json" 5
pass_trace "$out/passes.new.json" 8
"$report" --baseline "$out/passes.base.json" "$out/passes.new.json" --fail-if-slower 5 \
  --gate-on self --format html -o "$out/passes.html" 2>"$out/passes.err"
rc=$?
if [ "$rc" -ne 3 ]; then
  err "the per-pass --baseline report exited $rc, not 3 (a regression):"
  cat "$out/passes.err" >&2
  exit 1
fi
# Tuning sessions (fixture/autotune_trace.json, the figures of
# report_autotune_test's scripted trace): the autotune section.
if ! "$report" "$here/fixture/autotune_trace.json" --format html -o "$out/autotune.html" \
    2>"$out/autotune.err"; then
  err "the autotune report failed:"
  cat "$out/autotune.err" >&2
  exit 1
fi
# Units on 3 threads of one process and a worker process, with waits
# (fixture/critical_path_trace.json, report_critical_path_test's pool): the
# critical path section.
if ! "$report" "$here/fixture/critical_path_trace.json" --format html -o "$out/critical_path.html" \
    2>"$out/critical_path.err"; then
  err "the critical path report failed:"
  cat "$out/critical_path.err" >&2
  exit 1
fi
echo "run_report_test: report: $out/report.html ($(stat -c %s "$out/report.html") bytes)"

bash "$here/../npm_ci.sh" "$here" "$npm_dir" puppeteer-core "browser test"
rc=$?
[ "$rc" -eq 0 ] || exit "$rc"

PUPPETEER_DIR="$npm_dir" node "$here/check_report.mjs" --html "$out/report.html" \
  --metrics "$out/metrics.jsonl" --trace "$out/trace.json" --screenshot "$shot" \
  --compare-html "$out/compare.html" --passes-html "$out/passes.html" \
  --autotune-html "$out/autotune.html" --critical-path-html "$out/critical_path.html"
rc=$?
[ "$rc" -eq "$SKIP" ] && rc=1
exit "$rc"
