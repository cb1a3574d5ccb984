#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then configures, builds and
# runs a consumer that uses find_package(jitscope).
# usage: run.sh <build-dir> <scratch-dir> <source-dir-of-consumer>
set -euo pipefail
build="$1"; scratch="$2"; consumer="$3"
rm -rf "$scratch"; mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
cmake -S "$consumer" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
cmake --build "$scratch/build" >/dev/null
for exe in consumer_static consumer_shared; do
  "$scratch/build/$exe" "$scratch/$exe.json"
  grep -q '"name":"consumer"' "$scratch/$exe.json"
done
echo "find_package consumer: static and shared OK"
