#!/usr/bin/env bash
# jitscope-report's peak RSS and CPU time against the number of compile
# units, on traces the SDK wrote (units_trace.py), for the table and JSON
# forms. Needs build/dev with the Python package (JITSCOPE_WITH_PYTHON).
#   bash bench/report/units_bench.sh [DIR] [UNITS...]   (default: 10000 42000 200000)
# REPORT=/path/to/jitscope-report compares another build on the same traces.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-/tmp/jitscope-units-bench}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(10000 42000 200000)
report=${REPORT:-$root/build/dev/tools/report/jitscope-report}
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$dir"
printf '%-8s %-6s %10s %10s %8s %12s\n' units format "trace MB" "peak MiB" "CPU s" "KiB/unit"
for n in "${counts[@]}"; do
  trace="$dir/units-$n.json"
  [ -s "$trace" ] || PYTHONPATH="$root/build/dev/python" "$python" \
    "$root/bench/report/units_trace.py" "$n" "$trace" > /dev/null
  mb=$(( $(stat -c %s "$trace") / 1000000 ))
  for format in table json; do
    /usr/bin/time -f '%M %U %S' -o "$dir/time" "$report" "$trace" -f "$format" > /dev/null
    read -r kib user sys < "$dir/time"
    awk -v n="$n" -v f="$format" -v mb="$mb" -v kib="$kib" -v u="$user" -v s="$sys" \
      'BEGIN { printf "%-8d %-6s %10d %10.1f %8.2f %12.2f\n", n, f, mb, kib / 1024, u + s, kib / n }'
  done
done
