#!/usr/bin/env bash
# jitscope-report --format html on 1,000 and 10,000 compile units: the HTML
# file's size and its load time in headless Chromium (navigation start to
# the units table's first row, median of 5 loads: html_load.mjs). Run by
# hand, not by ctest (timings are never asserted).
#
# usage: bash bench/report/html_bench.sh [BUILD_DIR] [UNITS...]
#   BUILD_DIR  the build with jitscope-report (default build/release, else build/dev);
#              JITSCOPE_REPORT names the binary instead
#   UNITS      unit counts (default 1000 10000)
# Needs Node.js, Chromium (/usr/bin/chromium or $JITSCOPE_CHROMIUM) and the
# npm registry once: puppeteer-core is installed into BUILD_DIR/browser-work
# with npm ci (tests/npm_ci.sh), as the browser tests do.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-}"
if [[ -z "$build" ]]; then
  for b in "$root/build/release" "$root/build/dev"; do
    if [[ -x "$b/tools/report/jitscope-report" ]]; then build="$b"; break; fi
  done
fi
report="${JITSCOPE_REPORT:-${build:+$build/tools/report/jitscope-report}}"
if [[ -z "$report" || ! -x "$report" ]]; then
  echo "html_bench: jitscope-report not built (give BUILD_DIR, or build jitscope-report" >&2
  echo "  in build/release or build/dev)" >&2
  exit 2
fi
shift || true
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(1000 10000)

npm_dir="$build/browser-work"
bash "$root/tests/browser/ensure_chromium.sh" "$npm_dir"
bash "$root/tests/npm_ci.sh" "$root/tests/browser" "$npm_dir" puppeteer-core "html_bench" >/dev/null

work="$build/html_bench"
htmls=()
declare -A render_s
for n in "${counts[@]}"; do
  dir="$work/$n"
  rm -rf "$dir"
  node "$root/tests/browser/gen_units.mjs" "$dir" "$n" >/dev/null
  start=$(date +%s.%N)
  "$report" "$dir/trace.json" --metrics "$dir/metrics.jsonl" --format html -o "$dir/report.html"
  end=$(date +%s.%N)
  render_s[$n]=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
  htmls+=("$dir/report.html")
done

echo "jitscope-report --format html ($report), Chromium $("${JITSCOPE_CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null | awk '{print $2}'), $(nproc) CPUs"
printf '%8s  %12s  %10s  %10s  %16s  %9s  %11s\n' units "html bytes" "bytes/unit" "report (s)" "load ms (median)" "min-max" "rows in DOM"
printf '%8s  %12s  %10s  %10s  %16s  %9s  %11s\n' -------- ------------ ---------- ---------- ---------------- --------- -----------
PUPPETEER_DIR="$npm_dir" node "$here/html_load.mjs" --runs 5 "${htmls[@]}" |
  while read -r file median min max rows; do
    n="$(basename "$(dirname "$file")")"
    bytes=$(stat -c %s "$file")
    printf '%8s  %12s  %10s  %10s  %16s  %9s  %11s\n' "$n" "$bytes" "$((bytes / n))" "${render_s[$n]}" "$median" "$min-$max" "$rows"
  done
