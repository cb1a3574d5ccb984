#!/usr/bin/env bash
# Instructions per operation, counted by callgrind: (Ir(2N) - Ir(N)) / N on
# the calling thread (the hot path) and on the flusher (writing the event).
# usage: bench/instructions.sh [build dir] [N]   (defaults: build/dev 100000)
# FORMS="span args" limits the forms (jitscope_instr_probe lists them all);
# TRACE_FORM=perfetto counts the flusher writing the protobuf form (default json);
# JITSCOPE_CLOCK=monotonic counts the library's path, which a session on
# CLOCK_MONOTONIC takes on x86 (the inline path reads only the TSC there).
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
build="${1:-build/dev}"
n="${2:-100000}"
probe="$build/bench/jitscope_instr_probe"
[ -x "$probe" ] || { echo "no $probe: cmake --build $build --target jitscope_instr_probe" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Per-thread totals of one run: "caller flusher".
totals() {
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/$1.$2" \
    "$probe" "$1" "$2" "${TRACE_FORM:-json}" >/dev/null 2>&1
  for t in 01 02; do
    f="$work/$1.$2-$t"
    if [ -f "$f" ]; then grep -m1 -E '^(summary|totals):' "$f" | awk '{printf "%s ", $2}'; else printf "0 "; fi
  done
}
printf "%-10s %14s %14s\n" form "caller Ir/op" "flusher Ir/op"
forms="${FORMS:-floor span args args_macro args_string off dynamic dynamic_long instant counter phase phase_off unit unit_phase}"
for form in $forms; do
  read -r c1 f1 <<<"$(totals "$form" "$n")"
  read -r c2 f2 <<<"$(totals "$form" $((2 * n)))"
  awk -v f="$form" -v c1="$c1" -v c2="$c2" -v f1="$f1" -v f2="$f2" -v n="$n" \
    'BEGIN { printf "%-10s %14.1f %14.1f\n", f, (c2 - c1) / n, (f2 - f1) / n }'
done
