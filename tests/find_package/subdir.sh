#!/usr/bin/env bash
# add_subdirectory(jitscope) installs nothing of jitscope's into the
# consumer's install by default, and its install rules on request.
# usage: subdir.sh <jitscope-source> <scratch-dir> <consumer-source>
set -euo pipefail
source_dir="$1"; scratch="$2"; consumer="$3"
rm -rf "$scratch"; mkdir -p "$scratch"
# What these two configures look at is the SDK's install rules: the
# compiler adapters and the Python package stay off (finding LLVM and MLIR
# took 10 of each configure's 12 s).
off=(-DJITSCOPE_WITH_CUDA=OFF -DJITSCOPE_WITH_LLVM=OFF -DJITSCOPE_WITH_MLIR=OFF
     -DJITSCOPE_WITH_PYTHON=OFF)
rules() {  # the install rules jitscope's sdk directory generated
  cat "$1/jitscope/sdk/cmake_install.cmake"
}
cmake -S "$consumer" -B "$scratch/default" -G Ninja -DJITSCOPE_SOURCE_DIR="$source_dir" \
  "${off[@]}" >/dev/null
if rules "$scratch/default" | grep -q 'jitscopeTargets\|include/jitscope'; then
  echo "FAIL: add_subdirectory(jitscope) installs jitscope by default" >&2
  exit 1
fi
cmake -S "$consumer" -B "$scratch/asked" -G Ninja -DJITSCOPE_SOURCE_DIR="$source_dir" \
  "${off[@]}" -DJITSCOPE_INSTALL=ON >/dev/null
if ! rules "$scratch/asked" | grep -q 'jitscopeTargets'; then
  echo "FAIL: JITSCOPE_INSTALL=ON did not generate jitscope's install rules" >&2
  exit 1
fi
echo "add_subdirectory consumer: installs jitscope only when asked"
