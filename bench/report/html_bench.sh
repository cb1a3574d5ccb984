#!/usr/bin/env bash
# jitscope-report --format html on big reports: the page's size and how long
# headless Chromium takes to load it, as a table per unit count. A
# measurement, run by hand, not by ctest (timings are never asserted).
#
# usage: bash bench/report/html_bench.sh [UNITS[,UNITS...]] [RUNS] [BUILD_DIR]
#   UNITS      compile units, a comma list (default 1000,10000)
#   RUNS       page loads per report, each a fresh page (default 5)
#   BUILD_DIR  with jitscope-report and jitscope_trace_gen (default build/release, else build/dev)
#
# The trace and metrics come from jitscope_trace_gen --units N --metrics
# (about 6 KB of trace per unit). Per report, medians over RUNS loads of
# (html_load.mjs): "rows" = navigation start to the first units-table row
# in the DOM, seen by a MutationObserver installed before the page's
# script; and the page's own marks on <body>, ms since navigation:
# data-html-ms (HTML parsed), data-data-ms (data parsed), data-render-ms
# (page built).
# Needs Node.js, Chromium (/usr/bin/chromium or $JITSCOPE_CHROMIUM) and the
# npm registry once: puppeteer-core goes into BUILD_DIR/browser-work with
# npm ci (tests/npm_ci.sh), as the browser tests do.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
IFS=, read -r -a counts <<<"${1:-1000,10000}"
runs="${2:-5}"
# shellcheck source=find_tools.sh
source "$here/find_tools.sh"
find_report_tools "${3:-}" html_bench

npm_dir="$build/browser-work"
bash "$root/tests/browser/ensure_chromium.sh" "$npm_dir"
bash "$root/tests/npm_ci.sh" "$root/tests/browser" "$npm_dir" puppeteer-core html_bench >/dev/null

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
htmls=()
declare -A written_s
for n in "${counts[@]}"; do
  mkdir -p "$dir/$n"
  "$gen" "$dir/$n/trace.json" $((n * 6000)) --units "$n" --metrics "$dir/$n/metrics.jsonl" 2>/dev/null
  start=$(date +%s.%N)
  "$report" "$dir/$n/trace.json" --metrics "$dir/$n/metrics.jsonl" -f html -o "$dir/$n/report.html"
  end=$(date +%s.%N)
  written_s[$n]=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
  htmls+=("$dir/$n/report.html")
done

echo "jitscope-report --format html ($report); Chromium" \
  "$("${JITSCOPE_CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null | awk '{print $2}'); $(nproc) CPUs;" \
  "medians of $runs loads, ms since navigation"
fmt='%7s  %9s  %9s  %8s  %9s  %13s  %9s  %9s  %9s  %11s\n'
# shellcheck disable=SC2059  # the format is this script's own
printf "$fmt" units "page MB" bytes/unit "gzip MB" "written s" "rows (min-max)" html data built "DOM rows/rects"
# shellcheck disable=SC2059
printf "$fmt" ------- --------- --------- -------- --------- ------------- --------- --------- --------- -----------
PUPPETEER_DIR="$npm_dir" node "$here/html_load.mjs" --runs "$runs" "${htmls[@]}" |
  while read -r file rows_ms rows_min rows_max html_ms data_ms built_ms in_dom rects; do
    n="$(basename "$(dirname "$file")")"
    bytes=$(stat -c %s "$file")
    gz=$(gzip -c "$file" | wc -c)
    # shellcheck disable=SC2059
    printf "$fmt" "$n" "$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')" "$((bytes / n))" \
      "$(awk -v b="$gz" 'BEGIN { printf "%.1f", b / 1e6 }')" "${written_s[$n]}" \
      "$rows_ms ($rows_min-$rows_max)" "$html_ms" "$data_ms" "$built_ms" "$in_dom/$rects"
    [[ "$in_dom" -le 100 ]] || echo "html_bench: $in_dom unit rows in the DOM at $n units (one page is 100)" >&2
  done
