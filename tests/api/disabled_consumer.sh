#!/usr/bin/env bash
# A consumer compiled out (JITSCOPE_DISABLE) needs no jitscope library and
# never starts a session: it runs and exits 0, start() says it is compiled
# out, no trace or metrics file appears although JITSCOPE_TRACE and
# JITSCOPE_METRICS are set (ctest sets them to TRACE and METRICS), and the
# binary neither needs a jitscope library nor refers to a jitscope symbol it
# does not define. Its own jitscope symbols (inline functions not inlined)
# are all in jitscope::disabled (or the shared jitscope::detail), never a
# library name.
# usage: disabled_consumer.sh CONSUMER TRACE METRICS
set -euo pipefail
consumer=$1 trace=$2 metrics=$3
status=0
fail() {
  echo "FAIL: $*"
  status=1
}

[[ "${JITSCOPE_TRACE:-}" == "$trace" ]] || fail "JITSCOPE_TRACE is not set to $trace"
rm -f "$trace" "$metrics" "${trace%.json}".*.json
rc=0
out=$("$consumer" 2>&1) || rc=$?
echo "$out"
[[ $rc -eq 0 ]] || fail "the consumer exited with $rc"
grep -q '^start(): ok=0 message="jitscope is compiled out (JITSCOPE_DISABLE)' <<<"$out" ||
  fail "start() did not say that jitscope is compiled out"
for f in "$trace" "$metrics" "${trace%.json}".*.json; do
  [[ -e "$f" ]] && fail "a session wrote $f"
done

needed=$(readelf -d "$consumer" | awk '/NEEDED/ {print $5}')
echo "needs:" $needed
grep -qi jitscope <<<"$needed" && fail "it needs a jitscope library: $needed"
undefined=$(nm -C --undefined-only "$consumer" | grep -i jitscope || true)
[[ -n "$undefined" ]] && fail "undefined jitscope symbols:"$'\n'"$undefined"
# Every jitscope:: name in a defined symbol is jitscope::disabled or jitscope::detail.
outside=$(nm -C --defined-only "$consumer" | grep -o 'jitscope::[A-Za-z_]*' |
  grep -Ev '^jitscope::(disabled|detail)$' | sort -u || true)
[[ -n "$outside" ]] && fail "symbols outside jitscope::disabled:"$'\n'"$outside"
# The C API's static inline copies may stay as local symbols (-O0), never global.
global_c=$(nm --defined-only "$consumer" | awk '$2 ~ /^[A-Z]$/ && $3 ~ /^jitscope/ {print $3}')
[[ -n "$global_c" ]] && fail "global C jitscope symbols:"$'\n'"$global_c"

[[ $status -eq 0 ]] && echo "ok: compiled out, no library, no session"
exit $status
