#!/usr/bin/env bash
# jitscope-report on big generated traces, in a release build: the median
# throughput of several runs and the peak RSS, for
#   plain    one report of trace A (JSON)
#   gzip     one report of A.gz (gzip -6 of A; MB/s of the inflated JSON)
#   compare  --baseline A B: two traces of that size, read one after the other
#            (MB/s of both traces' JSON together)
#
# usage: bash bench/report/report_bench.sh [BYTES] [RUNS] [DIR]
#   BYTES  each trace's size (default 1073741824: 1 GiB); run it with
#          268435456 too to see that the peak RSS does not grow with the size
#   RUNS   timed runs per case (default 5); the median is reported
#   DIR    where the traces go (default /tmp/jitscope-report-bench): A.json
#          (seed 42), B.json (seed 43), A.json.gz; kept when they exist with
#          the right size, so reruns skip generating. Delete DIR when done.
# Environment:
#   BUILD_DIR  default build/release: configured with the release preset
#              (-O3 -DNDEBUG; without the LLVM/MLIR adapters) and built
#              (jitscope-report, jitscope_trace_gen) by this script
#   NO_BUILD=1 use BUILD_DIR's binaries as they are
#   REPORT     another jitscope-report to time (e.g. an older build's copy,
#              for a before/after on the same traces); implies nothing else
#
# Each timed run is preceded by a read of its inputs into the page cache
# (when they fit in half the available memory), so the runs measure the
# report, not the disk. Wall time, user + system CPU time and the peak RSS
# come from getrusage (python3, a child at a time).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bytes="${1:-1073741824}"
runs="${2:-5}"
dir="${3:-/tmp/jitscope-report-bench}"
build="${BUILD_DIR:-$root/build/release}"

if [[ "${NO_BUILD:-0}" != 1 ]]; then
  if [[ ! -f "$build/CMakeCache.txt" ]]; then
    cmake -S "$root" -B "$build" --preset release -DJITSCOPE_WITH_LLVM=OFF \
      -DJITSCOPE_WITH_MLIR=OFF > /dev/null
  fi
  cmake --build "$build" --target jitscope-report jitscope_trace_gen > /dev/null
fi
report="${REPORT:-$build/tools/report/jitscope-report}"
gen="$build/bench/report/jitscope_trace_gen"
for b in "$report" "$gen"; do
  [[ -x "$b" ]] || { echo "report_bench: $b not built" >&2; exit 2; }
done
build_type=$(awk -F= '/^CMAKE_BUILD_TYPE:/ {print $2}' "$build/CMakeCache.txt")

mkdir -p "$dir"
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
make_trace() {  # path, seed
  if (( $(size_of "$1") < bytes || $(size_of "$1") > bytes + (1 << 20) )); then
    "$gen" "$1" "$bytes" --seed "$2" > /dev/null
    rm -f "$1.gz"
  fi
}
a="$dir/A.json"
b="$dir/B.json"
make_trace "$a" 42
make_trace "$b" 43
[[ -s "$a.gz" ]] || gzip -6 -c "$a" > "$a.gz"

# One run: "wall_s cpu_s maxrss_kib" of the command on stdout.
measure() {
  python3 - "$@" <<'EOF'
import os, resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL)
wall = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
if rc != 0:
    sys.exit("report_bench: exit %d: %s" % (rc, " ".join(sys.argv[1:])))
print("%.3f %.3f %d" % (wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
EOF
}
warm() {  # reads the files into the page cache when they fit
  local total=0 f
  for f in "$@"; do total=$((total + $(size_of "$f"))); done
  local avail_kb
  avail_kb=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
  if (( total / 1024 < avail_kb / 2 )); then cat "$@" > /dev/null; fi
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
echo "jitscope-report ($build_type build: $report), $runs runs per case, median"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %10s %9s %9s %9s %11s %12s %8s\n' case "JSON MB" "wall s" "CPU s" "MB/s" "MB/CPU-s" "peak RSS MiB" "RSS max"
case_run() {  # name, JSON bytes, files to warm, then the report's arguments
  local name=$1 json=$2 files=$3
  shift 3
  local walls=() cpus=() rsss=() i line
  for ((i = 0; i < runs; ++i)); do
    # shellcheck disable=SC2086
    warm $files
    line=$(measure "$report" "$@" --format json --output "$out")
    read -r w c r <<< "$line"
    walls+=("$w"); cpus+=("$c"); rsss+=("$r")
  done
  local mw mc mr xr
  mw=$(printf '%s\n' "${walls[@]}" | median)
  mc=$(printf '%s\n' "${cpus[@]}" | median)
  mr=$(printf '%s\n' "${rsss[@]}" | median)
  xr=$(printf '%s\n' "${rsss[@]}" | sort -g | tail -1)
  awk -v n="$name" -v j="$json" -v w="$mw" -v c="$mc" -v r="$mr" -v x="$xr" 'BEGIN {
    printf "%-8s %10.1f %9.2f %9.2f %9.0f %11.0f %12.1f %8.1f\n", n, j / 1e6, w, c, j / w / 1e6, j / c / 1e6, r / 1024, x / 1024 }'
}
sa=$(size_of "$a")
sb=$(size_of "$b")
case_run plain "$sa" "$a" "$a"
case_run gzip "$sa" "$a.gz" "$a.gz"
case_run compare $((sa + sb)) "$a $b" --baseline "$a" "$b"
echo "(MB/s: JSON bytes / median wall time; MB/CPU-s: / median user + system CPU time, what one"
echo " idle core would give, the figure to compare on a shared machine; gzip: MB of inflated JSON,"
echo " $(size_of "$a.gz") bytes on disk; peak RSS: the median of the runs', and the largest)"
