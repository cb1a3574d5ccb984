#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and
# runs a consumer that uses find_package(jitscope).
# usage: run.sh <build-dir> <scratch-dir> <source-dir-of-consumer>
set -euo pipefail
build="$1"; scratch="$2"; consumer="$3"
rm -rf "$scratch"; mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
# No CUDA for the consumer: the package must not look for it (CUPTI is
# loaded at run time), and the programs must not need it to load.
cmake -S "$consumer" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build "$scratch/build" >/dev/null
for exe in consumer_static consumer_shared; do
  if readelf -d "$scratch/build/$exe" | grep -Eiq 'NEEDED.*(cupti|cuda)'; then
    echo "$exe needs a CUDA library to load" >&2
    exit 1
  fi
  "$scratch/build/$exe" "$scratch/$exe.json"
  grep -q '"name":"consumer"' "$scratch/$exe.json"
done
echo "find_package consumer: static and shared OK"
