#!/usr/bin/env bash
# ctest's python tests: one pytest file with the interpreter the package was
# built for. Exit 77 (skipped) when that interpreter has no pytest, naming
# the fix.
#
# usage: run_pytest.sh <python> <test file> [pytest args...]
set -u
py="$1"
shift
if ! "$py" -c "import pytest" 2>/dev/null; then
  echo "python tests SKIPPED: $py has no pytest. Install python3-pytest and configure with" \
       "-DPython3_EXECUTABLE=/usr/bin/python3 (scripts/test.sh picks it when it has pytest)."
  exit 77
fi
exec "$py" -m pytest -q -p no:cacheprovider "$@"
