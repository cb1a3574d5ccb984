#!/usr/bin/env bash
# `pip install --no-build-isolation` of python/ into a --target folder (PEP
# 668 leaves Debian's own site-packages to apt), packaging this build tree
# (JITSCOPE_BUILD_DIR: setup.py builds the module there instead of a fresh
# Release tree), then imported from that folder alone: the package must be
# self-contained, its module loading the libjitscope.so beside it.
# usage: pip_install.sh <build dir> <scratch dir> <python> <source dir>
set -euo pipefail
build=$1 scratch=$2 python=$3 src=$4
if ! "$python" -m pip --version >/dev/null 2>&1 || ! "$python" -c "import setuptools" 2>/dev/null; then
  echo "skipped: $python has no pip or setuptools (Debian: apt-get install python3-pip python3-setuptools)"
  exit 77
fi
rm -rf "$scratch"
mkdir -p "$scratch"
site="$scratch/site"
JITSCOPE_BUILD_DIR="$build" "$python" -m pip install --quiet --no-build-isolation --no-deps \
  --no-index --target "$site" "$src/python"
cd "$scratch"
env -u PYTHONPATH PYTHONPATH="$site" "$python" - "$site" "$scratch/trace.json" <<'PY'
import os, sys
site, trace = os.path.realpath(sys.argv[1]), sys.argv[2]
import jitscope
assert os.path.realpath(jitscope.__file__).startswith(site), jitscope.__file__
import jitscope.triton  # every module of the package is there
assert callable(jitscope.triton.instrument)
with open("/proc/self/maps") as maps:
    libs = {line.split()[-1] for line in maps if "libjitscope.so" in line}
assert libs and all(os.path.realpath(p).startswith(site) for p in libs), libs
assert jitscope.start(trace, cupti="off")
with jitscope.compile_unit("pip") as unit:
    with jitscope.span("installed"):
        pass
stats = jitscope.stop()
assert stats.events_written >= 2, stats
print("pip-installed jitscope", jitscope.__version__, "from", site)
PY
