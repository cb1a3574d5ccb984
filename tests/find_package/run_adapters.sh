#!/usr/bin/env bash
# Installs the build tree into a scratch prefix, then builds and runs a
# consumer of find_package(jitscope COMPONENTS llvm mlir); also checks that
# asking for no component never loads LLVM's package.
# usage: run_adapters.sh <build-dir> <scratch-dir> <consumer-source> <tests-dir>
set -euo pipefail
build="$1"; scratch="$2"; consumer="$3"; tests="$4"
rm -rf "$scratch"; mkdir -p "$scratch"
cmake --install "$build" --prefix "$scratch/prefix" >/dev/null
# Optimized, as compilers build: GCC's warnings that need the optimizer
# (-Wmaybe-uninitialized, -Warray-bounds...) then check the inline headers.
cmake -S "$consumer" -B "$scratch/build" -G Ninja -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DJITSCOPE_TESTS_DIR="$tests" -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build "$scratch/build" >/dev/null
"$scratch/build/adapters_consumer" "$scratch/adapters_consumer.json"
# Without components, the package must not define the adapters or look for LLVM.
mkdir -p "$scratch/plain"
cat > "$scratch/plain/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(plain LANGUAGES CXX)
find_package(jitscope REQUIRED CONFIG)
if(TARGET jitscope::llvm OR TARGET LLVM)
  message(FATAL_ERROR "find_package(jitscope) without components loaded LLVM")
endif()
CMAKE
cmake -S "$scratch/plain" -B "$scratch/plain/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" >/dev/null
echo "find_package adapters consumer: OK"
