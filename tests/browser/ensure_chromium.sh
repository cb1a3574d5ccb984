#!/usr/bin/env bash
# Makes sure the browser tests have Chromium: $JITSCOPE_CHROMIUM, else
# Debian's /usr/bin/chromium. When it is missing and we are root, installs
# Debian's `chromium` with apt-get (serialized on <work_dir>/.chromium.lock,
# since ctest -j runs both browser tests at once).
#
# usage: ensure_chromium.sh <work_dir>
#
# exit 0: the browser is there; 77: it is not and cannot be installed (one
# line on stdout says why and how: ctest SKIP_RETURN_CODE); 1: the browser
# JITSCOPE_CHROMIUM names is not there; 2: usage.
set -u

SKIP=77
if [ "$#" -ne 1 ]; then
  echo "usage: $0 <work_dir>" >&2
  exit 2
fi
work_dir="$1"
browser="${JITSCOPE_CHROMIUM:-/usr/bin/chromium}"

if [ -x "$browser" ]; then
  exit 0
fi
if [ -n "${JITSCOPE_CHROMIUM:-}" ]; then
  # Named on purpose: a wrong name is a failure, not a reason to skip.
  echo "ensure_chromium: ERROR: JITSCOPE_CHROMIUM=$browser is not an executable file" >&2
  exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "browser test SKIPPED: $browser is not installed (install it: sudo apt-get install -y chromium)"
  exit "$SKIP"
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser test SKIPPED: $browser is not installed and there is no apt-get to install it" \
    "(install Chromium and set JITSCOPE_CHROMIUM to its executable)"
  exit "$SKIP"
fi

mkdir -p "$work_dir" || { echo "ensure_chromium: cannot create $work_dir" >&2; exit 2; }
if command -v flock >/dev/null 2>&1; then
  exec 8>"$work_dir/.chromium.lock"
  flock 8
fi
[ -x "$browser" ] && exit 0  # installed by the test that held the lock

log="$work_dir/apt-chromium.log"
echo "ensure_chromium: $browser is missing; installing Debian's chromium (apt-get install -y chromium)" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists may be empty (a fresh container): update once if the
# first try cannot find the package.
apt-get install -y -q --no-install-recommends chromium >"$log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
  apt-get update -q >>"$log" 2>&1
  apt-get install -y -q --no-install-recommends chromium >>"$log" 2>&1
  rc=$?
fi
if [ "$rc" -ne 0 ]; then
  why="$(grep -E '^(E|W): ' "$log" | head -n 1)"
  echo "browser test SKIPPED: $browser is not installed and apt-get install -y chromium failed" \
    "(${why:-exit $rc; see $log})"
  exit "$SKIP"
fi
if [ ! -x "$browser" ]; then
  echo "ensure_chromium: ERROR: apt-get installed chromium, but $browser is not there (see $log)" >&2
  exit 1
fi
echo "ensure_chromium: installed $("$browser" --version 2>/dev/null)" >&2
exit 0
