#!/usr/bin/env bash
# ctest browser_large_report: a report of N compile units (gen_units.mjs:
# some failed, some recompiled) rendered with jitscope-report --format html,
# then paged, filtered and sorted in headless Chromium (check_large.mjs).
#
# usage: run_large_test.sh <jitscope-report> <npm_dir> <out_dir> <units>
# exit 0: pass; 77: skipped (Chromium missing and not installable, or the
# npm registry unreachable); anything else: failure.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
err() { echo "run_large_test: ERROR: $*" >&2; }
if [ "$#" -ne 4 ]; then
  echo "usage: $0 <jitscope-report> <npm_dir> <out_dir> <units>" >&2
  exit 2
fi
report="$1"
npm_dir="$2"
out="$3"
units="$4"

bash "$here/ensure_chromium.sh" "$npm_dir" || exit $?
if ! { rm -rf "$out" && mkdir -p "$out"; }; then err "cannot make $out"; exit 2; fi
node "$here/gen_units.mjs" "$out" "$units" || { err "gen_units.mjs failed"; exit 1; }
if ! "$report" "$out/trace.json" --metrics "$out/metrics.jsonl" --format html \
    -o "$out/report.html" 2>"$out/report.err"; then
  err "jitscope-report --format html failed:"
  cat "$out/report.err" >&2
  exit 1
fi
echo "run_large_test: report: $out/report.html ($(stat -c %s "$out/report.html") bytes)"
bash "$here/../npm_ci.sh" "$here" "$npm_dir" puppeteer-core "browser test" || exit $?
PUPPETEER_DIR="$npm_dir" node "$here/check_large.mjs" --html "$out/report.html" \
  --metrics "$out/metrics.jsonl" --trace "$out/trace.json" --screenshot "$out/large.png"
rc=$?
[ "$rc" -eq 77 ] && rc=1
exit "$rc"
