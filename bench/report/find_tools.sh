# Sourced by the report benches (report_bench.sh, html_bench.sh):
#   find_report_tools BUILD_DIR NAME
# sets $build, $report and $gen (jitscope-report, jitscope_trace_gen): from
# BUILD_DIR, else the first of build/release and build/dev that has both;
# JITSCOPE_REPORT / JITSCOPE_TRACE_GEN name the binaries instead. Missing:
# a message starting with NAME and exit 2.
find_report_tools() {
  local root b
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  build="$1"
  if [[ -z "$build" ]]; then
    for b in "$root/build/release" "$root/build/dev"; do
      if [[ -x "$b/tools/report/jitscope-report" && -x "$b/bench/report/jitscope_trace_gen" ]]; then build="$b"; break; fi
    done
  fi
  report="${JITSCOPE_REPORT:-${build:+$build/tools/report/jitscope-report}}"
  gen="${JITSCOPE_TRACE_GEN:-${build:+$build/bench/report/jitscope_trace_gen}}"
  if [[ -z "$report" || ! -x "$report" || -z "$gen" || ! -x "$gen" ]]; then
    echo "$2: jitscope-report or jitscope_trace_gen not built (give BUILD_DIR, or build" >&2
    echo "  the targets jitscope-report and jitscope_trace_gen in build/release or build/dev)" >&2
    exit 2
  fi
}
