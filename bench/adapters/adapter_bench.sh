#!/usr/bin/env bash
# The LLVM adapter against LLVM's own pass timing: instructions inside
# default<O2>'s run (callgrind, deterministic) in five modes (none, LLVM's
# -time-passes, jitscope with a session, register_callbacks with none (it
# registers nothing), and the callbacks attached with none anyway), each
# as a share over "none" and per pass run. docs/performance.md has a run.
#   bash bench/adapters/adapter_bench.sh [copies] [build dir]   (default: 20 build/dev)
set -euo pipefail
copies=${1:-20}
build=${2:-build/dev}
driver="$build/bench/jitscope_llvm_o2_driver"
[ -x "$driver" ] || { echo "adapter_bench: $driver is missing (build the dev preset with LLVM 16)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A ir
runs=0
for mode in none timing jitscope attached anyway; do
  out=$(cd "$work" && valgrind --tool=callgrind --toggle-collect='*run_pipeline*' \
        --callgrind-out-file="$work/cg.$mode" "$OLDPWD/$driver" "$mode" "$copies" 2>&1)
  ir[$mode]=$(grep -o 'Collected : [0-9]*' <<<"$out" | awk '{print $3}')
  if [ "$mode" = jitscope ]; then runs=$(grep -o 'pass runs [0-9]*' <<<"$out" | awk '{print $3}'); fi
done
printf 'default<O2> on %s copies, %s pass runs\n' "$copies" "$runs"
printf '%-10s %14s %9s %14s\n' mode instructions "vs none" "per pass run"
for mode in none timing jitscope attached anyway; do
  awk -v m="$mode" -v i="${ir[$mode]}" -v n="${ir[none]}" -v r="$runs" \
    'BEGIN { printf "%-10s %14d %+8.2f%% %14.0f\n", m, i, (i - n) * 100 / n, (i - n) / r }'
done
