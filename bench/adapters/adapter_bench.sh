#!/usr/bin/env bash
# The adapters against the compilers' own pass timing: instructions inside
# each pipeline's run (callgrind, deterministic), as a share over "none" and
# per pass run. docs/performance.md has runs.
#   LLVM: default<O2> on C copies of three functions, six modes (none,
#         LLVM's -time-passes, jitscope with a session, register_callbacks
#         with none (it registers nothing), the callbacks attached with none
#         anyway, jitscope with Options::ir_size).
#   MLIR: samples/mlir_gpu's lowering pipeline on K kernels, six modes
#         (none, MLIR's enableTiming, jitscope with a session, the
#         instrumentation added with none, a session alone, jitscope with
#         Options::ir_size).
#   bash bench/adapters/adapter_bench.sh [copies] [build dir] [kernels]
#   (defaults: 20 build/dev 12; ONLY=llvm or ONLY=mlir runs one;
#   MLIR_ARG=single-thread or no-locations is the MLIR driver's third argument,
#   LLVM_ARG=cold or analyses the LLVM driver's). Both drivers count their
#   second round: what a process does once stays out (LLVM_ARG=cold counts
#   LLVM's first).
set -euo pipefail
copies=${1:-20}
build=${2:-build/dev}
kernels=${3:-12}
only=${ONLY:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# bench TITLE DRIVER SIZE MODE...: one callgrind run per mode, then the table.
bench() {
  local title=$1 driver=$2 size=$3 extra=$4
  shift 4
  [ -x "$driver" ] || { echo "adapter_bench: $driver is missing (build the dev preset with LLVM and MLIR 16)" >&2; return 1; }
  local -A ir
  local mode out
  runs=0
  for mode in "$@"; do
    out=$(cd "$work" && valgrind --tool=callgrind --toggle-collect='*run_pipeline*' \
          --callgrind-out-file="$work/cg.$mode" "$OLDPWD/$driver" "$mode" "$size" $extra 2>&1)
    ir[$mode]=$(grep -o 'Collected : [0-9]*' <<<"$out" | awk '{print $3}')
    if [ -z "${ir[$mode]}" ] || [ "${ir[$mode]}" = 0 ]; then
      echo "adapter_bench: $driver $mode counted nothing (run_pipeline not entered?)" >&2
      return 1
    fi
    if [ "$mode" = jitscope ]; then runs=$(grep -o 'pass runs [0-9]*' <<<"$out" | awk '{print $3}'); fi
  done
  printf '%s, %s pass runs\n' "$title" "$runs"
  printf '%-10s %14s %9s %14s\n' mode instructions "vs none" "per pass run"
  for mode in "$@"; do
    awk -v m="$mode" -v i="${ir[$mode]}" -v n="${ir[none]}" -v r="$runs" \
      'BEGIN { printf "%-10s %14d %+8.2f%% %14.0f\n", m, i, (i - n) * 100 / n, (i - n) / r }'
  done
}

# own FILE REGEX RUNS [LABEL]: the adapter's callbacks' own instructions (callgrind's
# inclusive counts of the functions matching REGEX, each once: exact, and
# free of what the pipeline's own count moves by between processes).
own() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    grep -E "^ *[0-9,]+ .*($2)\(" | grep -v -e lambda -e '=>' |
    awk -v r="$3" -v l="${4:+, $4}" \
      '{ v = $1; gsub(",", "", v); k = $0; sub(/^[^:]*:/, "", k); sub(/ \[.*/, "", k)
         if (!(k in seen)) { seen[k] = 1; t += v } }
       END { printf "%-24s %9d %24.0f\n", "callbacks (own" l ")", t, t / r }'
}

if [ "$only" != mlir ]; then
  bench "LLVM default<O2> on $copies copies${LLVM_ARG:+ ($LLVM_ARG)}" \
    "$build/bench/jitscope_llvm_o2_driver" "$copies" \
    "${LLVM_ARG:-}" \
    none timing jitscope attached anyway sized
  own "$work/cg.jitscope" 'jitscope::llvm::CallbackState::(begin(<(true|false)>)?|end|end_deferred)' \
    "$runs"
  own "$work/cg.sized" \
    'jitscope::llvm::CallbackState::(begin(<(true|false)>)?|end|end_deferred|end_sized)' "$runs" sized
fi
if [ "$only" != llvm ]; then
  [ "$only" = mlir ] || echo
  bench "MLIR mlir_gpu lowering on $kernels kernels${MLIR_ARG:+ ($MLIR_ARG)}" \
    "$build/bench/jitscope_mlir_pipeline_driver" "$kernels" "${MLIR_ARG:-}" \
    none timing jitscope attached session sized
  own "$work/cg.jitscope" 'jitscope::mlir::Instrumentation::run[A-Za-z]+' "$runs"
  own "$work/cg.sized" 'jitscope::mlir::Instrumentation::run[A-Za-z]+' "$runs" sized
fi
