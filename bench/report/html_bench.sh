#!/usr/bin/env bash
# jitscope-report --format html at 10,000 units: the page's size and how
# long a headless Chromium takes to load it (HTML parsed, data parsed, page
# built: the data-html-ms, data-data-ms and data-render-ms that the page's
# script puts on <body>, ms since navigation). A measurement, run by hand.
#
# usage: bash bench/report/html_bench.sh [UNITS] [RUNS] [BUILD_DIR]
#   UNITS      compile units (default 10000)
#   RUNS       page loads (default 5)
#   BUILD_DIR  with jitscope-report and jitscope_trace_gen (default build/release, else build/dev)
# Needs chromium (Debian: /usr/bin/chromium).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
units="${1:-10000}"
runs="${2:-5}"
# shellcheck source=find_tools.sh
source "$here/find_tools.sh"
find_report_tools "${3:-}" html_bench
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [[ -z "$browser" ]]; then
  echo "html_bench: no chromium found" >&2
  exit 2
fi

dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
# About 6 KB of trace per unit: the generator stops at the byte budget or the units.
"$gen" "$dir/trace.json" $((units * 6000)) --units "$units" --metrics "$dir/metrics.jsonl" 2>/dev/null
start=$(date +%s.%N)
"$report" "$dir/trace.json" --metrics "$dir/metrics.jsonl" -f html -o "$dir/report.html"
end=$(date +%s.%N)
size=$(stat -c %s "$dir/report.html")
gz=$(gzip -c "$dir/report.html" | wc -c)
awk -v u="$units" -v s="$size" -v g="$gz" -v t0="$start" -v t1="$end" 'BEGIN {
  printf "%d units: %.1f MB page (%.0f bytes/unit), %.1f MB gzip'"'"'d; written in %.2f s\n",
         u, s / 1e6, s / u, g / 1e6, t1 - t0 }'
for ((i = 0; i < runs; ++i)); do
  "$browser" --headless --no-sandbox --disable-gpu --dump-dom "file://$dir/report.html" \
      2>/dev/null > "$dir/dom.html"
  html=$(grep -o 'data-html-ms="[0-9]*"' "$dir/dom.html" | grep -o '[0-9]*')
  data=$(grep -o 'data-data-ms="[0-9]*"' "$dir/dom.html" | grep -o '[0-9]*')
  built=$(grep -o 'data-render-ms="[0-9]*"' "$dir/dom.html" | grep -o '[0-9]*')
  rows=$(grep -o 'class="unit-row[^"]*"' "$dir/dom.html" | wc -l)
  rects=$(grep -o 'class="unit-\(bar\|bin\)[^"]*"' "$dir/dom.html" | wc -l)
  echo "load $((i + 1)): HTML parsed at ${html} ms, data parsed at ${data} ms, page built at ${built} ms" \
       "(${rows} table rows, ${rects} timeline rects in the DOM)"
done
