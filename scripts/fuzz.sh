#!/usr/bin/env bash
# Builds the libFuzzer targets (CMake preset `fuzz`: clang-14, ASan + UBSan)
# and runs each for N seconds, two at a time, seeded from the corpus kept in
# the repository (fuzz/corpus/<target>, read only: new units go to a
# temporary folder). Prints executions, exec/s and coverage per target;
# exits non-zero if any target crashed, timed out, leaked or ran out of
# memory (its input is then in build/fuzz/artifacts/).
#
# usage: scripts/fuzz.sh [seconds-per-target]        (default 60)
#   FUZZ_TARGETS="fuzz_report fuzz_merge"   only these targets
#   FUZZ_JOBS=2                             targets run at once (default 2)
#   FUZZ_BUILD_JOBS=2                       compile jobs (default 2)
#   FUZZ_MERGE=1                            afterwards, keep in fuzz/corpus/<target>
#                                           its named seeds and, up to 60 files and
#                                           1 MB, the units (its own and the new
#                                           ones) that add the most coverage
#                                           (libFuzzer -merge=1, then
#                                           fuzz/select_corpus.py; needs python3)
#   FUZZ_RUNS=10000000                      also stop a target after this many
#                                           executions (the long run: fuzz/README.md)
#   FUZZ_ARGS="-use_value_profile=1"       extra libFuzzer flags for every target
# Logs: build/fuzz/logs/<target>.log.
#
# -entropic=0: libFuzzer's entropic schedule spent ~40% of fuzz_report's time
# in InputCorpus::UpdateFeatureFrequency (16k features); without it the same
# coverage came 1.7x faster.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz.sh [seconds-per-target]" >&2
  exit 2
fi
all_targets=(fuzz_json_writer fuzz_config_env fuzz_report fuzz_merge fuzz_perfetto)
read -r -a targets <<<"${FUZZ_TARGETS:-${all_targets[*]}}"
for t in "${targets[@]}"; do
  if [[ " ${all_targets[*]} " != *" $t "* ]]; then
    echo "fuzz.sh: unknown target '$t' (known: ${all_targets[*]})" >&2
    exit 2
  fi
done
jobs_at_once="${FUZZ_JOBS:-2}"

bash scripts/setup-deps.sh test

build=build/fuzz
mkdir -p "$build/logs" "$build/artifacts"
start=$SECONDS
if ! cmake --preset fuzz >"$build/logs/configure.log" 2>&1; then
  tail -n 30 "$build/logs/configure.log" >&2
  echo "fuzz.sh: configure failed (log: $build/logs/configure.log)" >&2
  exit 1
fi
if ! cmake --build --preset fuzz -j "${FUZZ_BUILD_JOBS:-2}" >"$build/logs/build.log" 2>&1; then
  tail -n 40 "$build/logs/build.log" >&2
  echo "fuzz.sh: build failed (log: $build/logs/build.log)" >&2
  exit 1
fi
echo "fuzz.sh: configured and built the fuzzers in $((SECONDS - start)) s; fuzzing ${targets[*]} for ${seconds} s each, ${jobs_at_once} at a time"

# New units go to a fresh folder of our own build tree (not /tmp, which other
# jobs on a shared machine clean up by name), removed at the end.
work="$(mktemp -d "$PWD/$build/units.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The largest input each target is given: enough for a few dozen events.
max_len() {
  case "$1" in
    fuzz_config_env) echo 1024 ;;
    fuzz_json_writer) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

run_target() {
  local t="$1"
  local dict=()
  [ -f "fuzz/$t.dict" ] && dict=("-dict=fuzz/$t.dict")
  mkdir -p "$work/$t"
  local rc=0
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
    "$build/fuzz/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -max_len="$(max_len "$t")" -entropic=0 -print_final_stats=1 "${dict[@]}" \
      ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} ${FUZZ_ARGS:-} \
      -artifact_prefix="$build/artifacts/$t-" "$work/$t" "fuzz/corpus/$t" \
      >"$build/logs/$t.log" 2>&1 || rc=$?
  echo "$rc" >"$work/$t.rc"
}

fuzz_start=$SECONDS
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n || true; done
  run_target "$t" &
done
wait
fuzz_wall=$((SECONDS - fuzz_start))

stat_of() {  # stat_of LOG NAME: libFuzzer's final `stat::NAME: value`
  sed -n "s/^stat::$2: *//p" "$1" | tail -n 1
}

failed=0
printf '%-18s %-6s %12s %9s %7s %8s %12s %8s\n' target result executions exec/s cov ft corpus new
for t in "${targets[@]}"; do
  log="$build/logs/$t.log"
  rc="$(cat "$work/$t.rc" 2>/dev/null || echo 1)"
  last="$(grep -E '^#[0-9]+' "$log" | grep 'cov: ' | tail -n 1 || true)"
  cov="$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")"
  corp="$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")"
  result=ok
  [ "$rc" != 0 ] && result=FAILED && failed=1
  printf '%-18s %-6s %12s %9s %7s %8s %12s %8s\n' "$t" "$result" \
    "$(stat_of "$log" number_of_executed_units)" "$(stat_of "$log" average_exec_per_sec)" \
    "${cov:--}" "${ft:--}" "${corp:--}" "$(stat_of "$log" new_units_added)"
done
echo "fuzz.sh: fuzzing took ${fuzz_wall} s; logs in $build/logs/"

for t in "${targets[@]}"; do
  rc="$(cat "$work/$t.rc" 2>/dev/null || echo 1)"
  if [ "$rc" != 0 ]; then
    echo "== $t failed (exit $rc): the end of $build/logs/$t.log ==" >&2
    grep -E 'ERROR|FUZZ CHECK|SUMMARY|Test unit written|leak|timeout|out-of-memory' "$build/logs/$t.log" | head -n 20 >&2 || true
    tail -n 40 "$build/logs/$t.log" >&2
  elif [ "${FUZZ_MERGE:-0}" = 1 ] && [ -n "$(ls -A "$work/$t")" ]; then
    # One merge pass (edges only, -use_counters=0): the named seeds first,
    # then the corpus's units and the new ones; fuzz/select_corpus.py keeps
    # the seeds and the units that add the most, 60 files / 1 MB in all.
    mkdir -p "$work/$t.seeds"
    find "fuzz/corpus/$t" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' \
      -exec cp {} "$work/$t.seeds/" \;
    "$build/fuzz/$t" -merge=1 -use_counters=0 -merge_control_file="$work/$t.control" \
      -max_len="$(max_len "$t")" "$work/$t.seeds" "fuzz/corpus/$t" "$work/$t" \
      >"$build/logs/$t.merge.log" 2>&1
    python3 fuzz/select_corpus.py "$work/$t.control" "fuzz/corpus/$t"
  fi
done
exit "$failed"
