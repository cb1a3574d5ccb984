#!/usr/bin/env bash
# jitscope-report's peak RSS, CPU time, MB and events per CPU-second against
# the number of compile units, on traces the SDK wrote (units_trace.py) in
# both forms (.json and .pftrace), for the table and JSON outputs. Needs
# build/dev with the Python package (JITSCOPE_WITH_PYTHON) to write them.
#   bash bench/report/units_bench.sh [DIR] [UNITS...]   (default: 2000 42000 200000)
# REPORT=/path/to/jitscope-report times another build on the same traces
# (default: build/release's if built, else build/dev's); FORMS="json" limits
# the trace forms; REPORT_ARGS="--no-huge-pages" passes arguments to it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-/tmp/jitscope-units-bench}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(2000 42000 200000)
report=${REPORT:-$root/build/release/tools/report/jitscope-report}
[ -x "$report" ] || report=$root/build/dev/tools/report/jitscope-report
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$dir"
echo "report: $report"
printf '%-8s %-8s %-6s %9s %9s %9s %7s %9s %10s %9s\n' units trace output "trace MB" "events" \
  "peak MiB" "CPU s" "MB/CPU-s" "Mev/CPU-s" "KiB/unit"
for n in "${counts[@]}"; do
  for form in ${FORMS:-json pftrace}; do
    trace="$dir/units-$n.$form"
    if [ ! -s "$trace" ] || [ ! -s "$trace.events" ]; then
      PYTHONPATH="$root/build/dev/python" "$python" "$root/bench/report/units_trace.py" "$n" \
        "$trace" | awk '{print $3}' > "$trace.events"
    fi
    events=$(cat "$trace.events")
    mb=$(awk -v b="$(stat -c %s "$trace")" 'BEGIN { printf "%.1f", b / 1e6 }')
    for output in table json; do
      # shellcheck disable=SC2086  # REPORT_ARGS: words
      /usr/bin/time -f '%M %U %S' -o "$dir/time" "$report" "$trace" -f "$output" ${REPORT_ARGS:-} > /dev/null
      read -r kib user sys < "$dir/time"
      awk -v n="$n" -v t="$form" -v o="$output" -v mb="$mb" -v ev="$events" -v kib="$kib" \
        -v u="$user" -v s="$sys" 'BEGIN { cpu = u + s;
          printf "%-8d %-8s %-6s %9.1f %9d %9.1f %7.2f %9.0f %10.2f %9.2f\n",
            n, t, o, mb, ev, kib / 1024, cpu, mb / cpu, ev / cpu / 1e6, kib / n }'
    done
  done
done
