#!/usr/bin/env bash
# ctest python.installed: `cmake --install` into a fresh prefix, then the
# package imported from the prefix's site-packages path (not the build
# tree) records a span: the installed module finds the installed
# libjitscope.so by its relative run path.
#
# usage: installed.sh <build dir> <prefix> <site dir relative to prefix> <python>
set -euo pipefail
build="$1" prefix="$2" site="$3" py="$4"
# The site dir is the interpreter's own under a prefix (posix_prefix).
want=$("$py" -c "import os, sysconfig; print(os.path.relpath(sysconfig.get_path('platlib', 'posix_prefix', vars={'platbase': '/P', 'base': '/P'}), '/P'))")
if [ "$site" != "$want" ]; then
  echo "the package installs under $site, the interpreter's prefix scheme says $want" >&2
  exit 1
fi
rm -rf "$prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/$site/jitscope/__init__.py"
trace="$prefix/installed.json"
env -u PYTHONPATH PYTHONPATH="$prefix/$site" LD_LIBRARY_PATH= "$py" - "$trace" "$prefix" <<'PY'
import json, sys
import jitscope
assert jitscope.__file__.startswith(sys.argv[2]), jitscope.__file__
import jitscope.triton  # every module of the package is there
assert callable(jitscope.triton.instrument)
with jitscope.session(sys.argv[1]):
    with jitscope.span("from_the_prefix"):
        pass
names = [e["name"] for e in json.load(open(sys.argv[1])) if e.get("ph") == "X"]
assert "from_the_prefix" in names, names
print("installed package ok:", jitscope.__file__)
PY
