#!/usr/bin/env bash
# jitscope-report on a big trace: wall time, peak RSS, events/s.
#
# usage: bash bench/report/report_bench.sh [TRACE] [BYTES] [BUILD_DIR]
#   TRACE      where to write the synthetic trace (default BUILD_DIR/report_bench.trace.json;
#              kept if it exists with at least BYTES bytes, so reruns skip generating).
#              A name ending in .gz: the plain trace is TRACE without .gz, gzip'd to TRACE
#              (gzip -6, kept too), and the report reads the gzip'd one; throughput is
#              then in MB of inflated JSON per second
#   BYTES      its size (default 1073741824: 1 GiB)
#   BUILD_DIR  the build with jitscope-report and jitscope_trace_gen (default build/release,
#              else build/dev); set JITSCOPE_REPORT / JITSCOPE_TRACE_GEN to name the binaries
#
# Build first, e.g.:
#   cmake --preset release && cmake --build build/release --target jitscope-report jitscope_trace_gen
# Peak RSS comes from /usr/bin/time -v when installed, else from VmHWM in /proc.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=find_tools.sh
source "$here/find_tools.sh"
find_report_tools "${3:-}" report_bench
bytes="${2:-1073741824}"
trace="${1:-${build}/report_bench.trace.json}"
plain="${trace%.gz}"

size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
if (( $(size_of "$plain") < bytes )); then
  echo "generating $plain ($bytes bytes) ..."
  start=$(date +%s.%N)
  "$gen" "$plain" "$bytes"
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" -v b="$(size_of "$plain")" \
    'BEGIN { printf "generated in %.2f s (%.0f MB/s)\n", e - s, b / (e - s) / 1e6 }'
  [[ "$trace" == "$plain" ]] || rm -f "$trace"
fi
if [[ "$trace" != "$plain" && ! -s "$trace" ]]; then
  echo "gzip'ing it to $trace ..."
  gzip -6 -c "$plain" > "$trace"
fi
size=$(size_of "$plain")   # the JSON text's size (inflated, for a .gz)
file_size=$(size_of "$trace")

out="$(mktemp)"
timing="$(mktemp)"
trap 'rm -f "$out" "$timing"' EXIT

# One untimed read to put the file in the page cache (the timed run then
# measures the report, not the disk), when it fits in half the free memory.
avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
if (( size / 1024 < avail_kb / 2 )); then cat "$trace" > /dev/null; fi

if [[ -x /usr/bin/time ]]; then
  /usr/bin/time -v "$report" "$trace" --format json --output "$out" 2> "$timing"
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$timing" |
         awk -F: '{ s = 0; for (i = 1; i <= NF; ++i) s = s * 60 + $i; print s }')
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$timing")
  user=$(awk -F': ' '/User time/ {print $2}' "$timing")
  sys=$(awk -F': ' '/System time/ {print $2}' "$timing")
else
  # No GNU time: poll VmHWM (peak RSS) in /proc while it runs.
  start=$(date +%s.%N)
  "$report" "$trace" --format json --output "$out" &
  pid=$!
  rss_kb=0
  while kill -0 "$pid" 2>/dev/null; do
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
    (( ${hwm:-0} > rss_kb )) && rss_kb=$hwm
    sleep 0.05
  done
  wait "$pid"
  end=$(date +%s.%N)
  wall=$(awk -v s="$start" -v e="$end" 'BEGIN { print e - s }')
  user="?"; sys="?"
fi

events=$(grep -o '"events":[0-9]*' "$out" | head -1 | cut -d: -f2)
spans=$(grep -o '"spans":[0-9]*' "$out" | head -1 | cut -d: -f2)
units=$(grep -o '"compile_id":"[^"]*","name":"[^"]*","in_trace"' "$out" | wc -l)
awk -v size="$size" -v wall="$wall" -v rss="$rss_kb" -v ev="$events" -v sp="$spans" \
    -v un="$units" -v user="$user" -v sys="$sys" -v trace="$trace" -v fsize="$file_size" 'BEGIN {
  printf "trace:        %s\n", trace
  printf "trace size:   %.1f MiB (%d bytes)\n", size / 1048576, size
  if (fsize != size) printf "gzip'"'"'d size:  %.1f MiB (%d bytes, %.1f%%)\n", fsize / 1048576, fsize, 100 * fsize / size
  printf "events:       %d (%d spans, %d compile units)\n", ev, sp, un
  printf "wall time:    %.2f s (user %s s, sys %s s)\n", wall, user, sys
  printf "throughput:   %.0f MB/s, %.2f M events/s\n", size / wall / 1e6, ev / wall / 1e6
  printf "peak RSS:     %.1f MiB (%.2f%% of the trace size)\n", rss / 1024, 100 * rss * 1024 / size
}'
