#!/usr/bin/env bash
# Runs a tests/perfetto Python script with what it needs: Debian's protoc
# (protobuf-compiler) and a python3 that imports google.protobuf
# (python3-protobuf). Debian's module lives in /usr/lib/python3/dist-packages,
# which only Debian's /usr/bin/python3 reads: a python3 earlier on PATH
# (pyenv, a venv) may lack it, so both are tried. When missing and we are
# root, installs both with apt-get (serialized on a lock, since ctest -j runs
# the checks at once).
#
# usage: with_protobuf.sh <work_dir> <script.py> [args...]
#
# exit 77: protoc or python3-protobuf is missing and cannot be installed (one
# line on stdout says why: ctest SKIP_RETURN_CODE), or the script says with
# 78 that a file needs a module still missing (python3-zstandard, installed
# here too when it can be, but optional); otherwise the script's status (77
# from the script itself becomes 1: only a missing dependency skips).
set -u
SKIP=77
if [ "$#" -lt 2 ]; then
  echo "usage: $0 <work_dir> <script.py> [args...]" >&2
  exit 2
fi
work_dir="$1"
shift

# One with zstandard too (python3-zstandard, for zstd-compressed packets)
# first, else one with google.protobuf only. Debian's first: it is the one
# apt-get installs them for, and a python3 earlier on PATH may be a pyenv
# shim (0.4 s a start). One start of each says both: every check runs this,
# and starting Python four times was a third of a check's time. Prints
# "<1 if zstandard imports, else 0> <path>" (the path last: it may hold spaces).
find_python() {
  local py path zstd found="" tried="" probe='import google.protobuf
try:
    import zstandard
    print(1)
except Exception:
    print(0)'
  for py in /usr/bin/python3 python3; do
    path="$(command -v "$py" 2>/dev/null)" || continue
    [ "$path" = "$tried" ] && continue
    tried="$path"
    zstd="$("$path" -c "$probe" 2>/dev/null)" || continue
    if [ "$zstd" = 1 ]; then
      echo "1 $path"
      return 0
    fi
    [ -n "$found" ] || found="0 $path"
  done
  [ -n "$found" ] && echo "$found"
}

read -r has_zstd python <<<"$(find_python)"
if [ -z "$python" ] || ! command -v protoc >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "perfetto test SKIPPED: protoc or python3-protobuf is missing" \
      "(install them: sudo apt-get install -y protobuf-compiler python3-protobuf)"
    exit "$SKIP"
  fi
  mkdir -p "$work_dir" || { echo "with_protobuf: cannot create $work_dir" >&2; exit 2; }
  if command -v flock >/dev/null 2>&1; then
    exec 8>"$work_dir/.protobuf.lock"
    flock 8
  fi
  read -r has_zstd python <<<"$(find_python)"
  if [ -z "$python" ] || ! command -v protoc >/dev/null 2>&1; then
    log="$work_dir/apt-protobuf.log"
    echo "with_protobuf: installing protobuf-compiler python3-protobuf" >&2
    export DEBIAN_FRONTEND=noninteractive
    # Empty package lists (a fresh container): update once, then retry.
    if ! apt-get install -y -q --no-install-recommends protobuf-compiler python3-protobuf \
      >"$log" 2>&1; then
      apt-get update -q >>"$log" 2>&1
      apt-get install -y -q --no-install-recommends protobuf-compiler python3-protobuf >>"$log" 2>&1
    fi
    read -r has_zstd python <<<"$(find_python)"
    if [ -z "$python" ] || ! command -v protoc >/dev/null 2>&1; then
      why="$(grep -E '^(E|W): ' "$log" | head -n 1)"
      echo "perfetto test SKIPPED: protoc or python3-protobuf is missing and apt-get could not" \
        "install them (${why:-see $log})"
      exit "$SKIP"
    fi
  fi
  exec 8>&-
fi
# python3-zstandard (zstd-compressed packets) is optional: tried once when
# missing and we are root; without it only files with zstd packets skip.
if [ "${has_zstd:-0}" != 1 ] && [ "$(id -u)" -eq 0 ] &&
  command -v apt-get >/dev/null 2>&1 && mkdir -p "$work_dir" &&
  [ ! -e "$work_dir/.zstandard-tried" ]; then
  if command -v flock >/dev/null 2>&1; then
    exec 8>"$work_dir/.protobuf.lock"
    flock 8
  fi
  if [ ! -e "$work_dir/.zstandard-tried" ]; then
    touch "$work_dir/.zstandard-tried"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      python3-zstandard >"$work_dir/apt-zstandard.log" 2>&1 || true
  fi
  exec 8>&-
  read -r has_zstd python <<<"$(find_python)"
fi
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the source tree
"$python" "$@"
rc=$?
[ "$rc" -eq "$SKIP" ] && rc=1
if [ "$rc" -eq 78 ]; then
  echo "perfetto test SKIPPED: a module the check needs is missing (see above)"
  rc=$SKIP
fi
exit "$rc"
