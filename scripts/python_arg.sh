#!/usr/bin/env bash
# Prints the CMake argument that picks the interpreter the Python package
# builds for and its tests run with, or nothing: the first python3 on PATH
# unless that one has no pytest and Debian's /usr/bin/python3 has
# (python3-pytest), as on machines where a pyenv python3 comes first
# (another one: configure with -DPython3_EXECUTABLE=...). For
# scripts/test.sh and .ci/run, which must configure alike.
if ! python3 -c "import pytest" 2>/dev/null && /usr/bin/python3 -c "import pytest" 2>/dev/null; then
  echo "-DPython3_EXECUTABLE=/usr/bin/python3"
fi
