#!/usr/bin/env bash
# What jitscope costs the nvrtc_jit sample, end to end: runs the instrumented
# binary and its JITSCOPE_DISABLE twin alternately, R times each, with
# --no-cache (so that NVRTC and nvJitLink really run) and the same kernels
# and workers, and prints each one's median wall time and the overhead
# (instrumented / disabled - 1), and the same for CPU time (user + sys).
# The budget (docs/performance.md) is < 1%. On a machine busy with other work the noise
# between runs is larger than that: raise -r and read the CPU line too.
#
#   bench/nvrtc_jit_overhead.sh BUILD_DIR [options]
#   bench/nvrtc_jit_overhead.sh INSTRUMENTED_BINARY DISABLED_BINARY [options]
#     -k, --kernels K   kernels per run (default 24)
#     -w, --workers W   compile threads (default 2)
#     -r, --runs R      runs of each binary (default 5)
#     -o, --out DIR     where the runs write traces (default: a temporary folder, removed)
#     --no-gpu          pass --no-gpu (compile only) on a GPU machine too
#
# Builds nothing: BUILD_DIR is a configured and built tree, e.g. build/release
# (cmake --build build/release --target jitscope_nvrtc_jit jitscope_nvrtc_jit_disabled).
# The instrumented runs write a trace and a metrics file, as a user's would.
# Medians, not means: one slow run (another process on the machine) must not
# decide the result. The order alternates (I D D I I D ...) so that a drift in
# the machine's speed hits both sides alike.
set -euo pipefail

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
}

kernels=24
workers=2
runs=5
out_dir=""
extra=()
positional=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -k|--kernels) kernels="${2:?}"; shift 2 ;;
    -w|--workers) workers="${2:?}"; shift 2 ;;
    -r|--runs) runs="${2:?}"; shift 2 ;;
    -o|--out) out_dir="${2:?}"; shift 2 ;;
    --no-gpu) extra+=(--no-gpu); shift ;;
    -h|--help) usage ;;
    -*) echo "nvrtc_jit_overhead: unknown option $1" >&2; usage ;;
    *) positional+=("$1"); shift ;;
  esac
done
for v in "$kernels" "$workers" "$runs"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "nvrtc_jit_overhead: '$v' is not a positive integer" >&2; exit 2; }
done

case ${#positional[@]} in
  1) instrumented="${positional[0]}/samples/nvrtc_jit/jitscope_nvrtc_jit"
     disabled="${positional[0]}/samples/nvrtc_jit/jitscope_nvrtc_jit_disabled" ;;
  2) instrumented="${positional[0]}"; disabled="${positional[1]}" ;;
  *) usage ;;
esac
for b in "$instrumented" "$disabled"; do
  [[ -x "$b" ]] || { echo "nvrtc_jit_overhead: $b is not an executable (build it first)" >&2; exit 1; }
done

if [[ -z "$out_dir" ]]; then
  out_dir="$(mktemp -d "${TMPDIR:-/tmp}/nvrtc_jit_overhead.XXXXXX")"
  trap 'rm -rf "$out_dir"' EXIT
fi
mkdir -p "$out_dir"

# One run; prints its wall time and its CPU time (user + sys, all threads), in
# ns. CPU time is the steadier number on a busy machine. A failing run stops
# the bench.
run_once() {  # binary tag
  local t0 t1 cpu TIMEFORMAT='%3U %3S'
  t0=$(date +%s%N)
  if ! { time "$1" --kernels "$kernels" --workers "$workers" --no-cache --quiet "${extra[@]}" \
           --trace "$out_dir/$2.trace.json" --metrics "$out_dir/$2.metrics.jsonl" \
           >"$out_dir/$2.out" 2>"$out_dir/$2.err"; } 2>"$out_dir/$2.time"; then
    echo "nvrtc_jit_overhead: $1 failed; its stderr:" >&2
    cat "$out_dir/$2.err" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  cpu=$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$out_dir/$2.time")
  echo "$((t1 - t0)) $cpu"
}

median_ms() {  # ns values... -> median in ms
  printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 }
    END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1e6 }'
}
to_ms() { for v in "$@"; do awk -v v="$v" 'BEGIN { printf " %.1f", v / 1e6 }'; done; }

echo "nvrtc_jit overhead: $kernels kernels, $workers workers, --no-cache, $runs runs each"
echo "  instrumented: $instrumented"
echo "  disabled:     $disabled"
run_once "$instrumented" warmup-i >/dev/null  # page cache, NVRTC's first load
run_once "$disabled" warmup-d >/dev/null
inst_wall=() inst_cpu=() dis_wall=() dis_cpu=()
measure() {  # i|d run
  local wall cpu
  if [[ $1 == i ]]; then
    read -r wall cpu < <(run_once "$instrumented" "i$2")
    inst_wall+=("$wall"); inst_cpu+=("$cpu")
  else
    read -r wall cpu < <(run_once "$disabled" "d$2")
    dis_wall+=("$wall"); dis_cpu+=("$cpu")
  fi
}
for ((r = 0; r < runs; ++r)); do
  if ((r % 2 == 0)); then measure i "$r"; measure d "$r"; else measure d "$r"; measure i "$r"; fi
done

echo "  instrumented wall (ms):$(to_ms "${inst_wall[@]}")"
echo "  disabled wall (ms):    $(to_ms "${dis_wall[@]}")"
echo "  instrumented cpu (ms): $(to_ms "${inst_cpu[@]}")"
echo "  disabled cpu (ms):     $(to_ms "${dis_cpu[@]}")"
awk -v i="$(median_ms "${inst_wall[@]}")" -v d="$(median_ms "${dis_wall[@]}")" \
    -v ic="$(median_ms "${inst_cpu[@]}")" -v dc="$(median_ms "${dis_cpu[@]}")" 'BEGIN {
  printf "median wall: instrumented %.1f ms, disabled %.1f ms\n", i, d
  printf "overhead:    %+.2f %% wall (instrumented / disabled - 1)\n", (i / d - 1) * 100
  printf "median cpu:  instrumented %.1f ms, disabled %.1f ms (%+.2f %%)\n", ic, dc, (ic / dc - 1) * 100 }'
