#!/usr/bin/env bash
# ctest driver (label: perfetto): runs a program three times, writing its
# trace in the JSON form (<prefix>.json), in the Perfetto form
# (<prefix>.pftrace) and in the Perfetto form with compressed packets
# (<prefix>.<codec>.pftrace, JITSCOPE_COMPRESSION=<codec>, which the
# program's Config takes from the environment), then requires
# jitscope-report to say the same of all three (report_agree.py: the
# table's rows and the JSON report's counts and names; times differ between
# runs and are left out). The .pftrace files are then checked by the
# pftrace.<test>.* checks (jitscope_check_pftrace) that ctest runs after this.
#
# usage: both_forms.sh <jitscope-report> <prefix> <codec> <program> [args...]
#   every argument @TRACE@ becomes the trace's path; <codec>: deflate or zstd.
# The program may exit 0 or 1 (a sample reporting a failed compile), the
# same in both runs.
# Exit: 0 when the reports agree, 1 otherwise (the differences on stdout).
set -u
if [ "$#" -lt 4 ]; then
  echo "usage: $0 <jitscope-report> <prefix> <codec> <program> [args...]" >&2
  exit 2
fi
report="$1"
prefix="$2"
codec="$3"
shift 3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$(dirname "$prefix")"
prefix="$(cd "$(dirname "$prefix")" && pwd)/$(basename "$prefix")"
for form in json pftrace "$codec.pftrace"; do
  trace="$prefix.$form"
  compression=none
  [ "$form" = "$codec.pftrace" ] && compression="$codec"
  rm -f "$trace"
  args=()
  for a in "$@"; do args+=("${a//@TRACE@/$trace}"); done
  # Run in the files' folder: what a program writes beside it (a sample's
  # default metrics file) stays there.
  (cd "$(dirname "$prefix")" && JITSCOPE_COMPRESSION="$compression" exec "${args[@]}") \
    >"$prefix.$form.out" 2>&1
  rc=$?
  # The program's own status must not depend on the form (a sample with an
  # injected compile error exits 1 in both).
  if [ "$form" = json ]; then
    json_rc=$rc
  elif [ "$rc" -ne "$json_rc" ]; then
    echo "both_forms: the json run exited $json_rc, the $form run $rc:"
    cat "$prefix.$form.out"
    exit 1
  fi
  if [ "$rc" -gt 1 ]; then
    echo "both_forms: the $form run failed ($rc):"
    cat "$prefix.$form.out"
    exit 1
  fi
  [ -s "$trace" ] || { echo "both_forms: the $form run wrote no $trace"; exit 1; }
  "$report" "$trace" >"$prefix.$form.report.txt" 2>"$prefix.$form.report.err" &&
    "$report" "$trace" --format json >"$prefix.$form.report.json" 2>>"$prefix.$form.report.err" || {
    echo "both_forms: jitscope-report failed on $trace:"
    cat "$prefix.$form.report.err"
    exit 1
  }
done
# Any python3 will do: report_agree.py needs only the standard library.
python3 "$here/report_agree.py" "$prefix.json.report" "$prefix.pftrace.report" || exit 1
exec python3 "$here/report_agree.py" "$prefix.json.report" "$prefix.$codec.pftrace.report"
