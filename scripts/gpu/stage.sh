#!/usr/bin/env bash
# Stages a GPU run for a lent device machine (docs/testing.md, "On a GPU
# machine without this project's build dependencies"):
# builds build/gpu (release, the GPU-labelled tests, the samples and the
# tools), then packs what scripts/gpu/run.sh needs into .gpu/ (ignored):
# payload.tar.xz (stripped binaries, ctest files) and libs/ (small Debian
# libraries the device's Ubuntu may lack). Carry .gpu and run
#   bash scripts/gpu/run.sh [ctest | bench [runs] | phases [runs]]
# there. Paths in the binaries and ctest files are this checkout's: run.sh
# links that path to the device's copy.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd -P)
b=build/gpu
if [ ! -f $b/build.ninja ]; then
  cmake --preset release -B $b -DJITSCOPE_BUILD_BENCH=OFF -DJITSCOPE_BUILD_TESTS=ON \
    -DJITSCOPE_BUILD_SAMPLES=ON -DJITSCOPE_BUILD_TOOLS=ON -DPython3_EXECUTABLE=/usr/bin/python3
fi
ninja -C $b gpu_trace_test nvrtc_jit_test mlir_gpu_test jitscope_nvrtc_jit jitscope_mlir_gpu \
  jitscope-report jitscope-merge jitscope_shared jitscope_nvrtc_jit_disabled
st=/tmp/gpustage; rm -rf $st; mkdir -p $st/$b
mkdir -p .gpu
# jitscope_mlir_gpu relinked against LLVM's and MLIR's static libraries: the
# device has no libLLVM-16.so / libMLIR.so, and they are too big to carry.
cmd=$(ninja -C $b -t commands samples/mlir_gpu/jitscope_mlir_gpu | tail -1)
cmd=${cmd/\/usr\/lib\/llvm-16\/lib\/libMLIR.so.16/-Wl,--start-group \/usr\/lib\/llvm-16\/lib\/libMLIR*.a \/usr\/lib\/llvm-16\/lib\/libLLVM*.a -lz -lzstd -ltinfo -Wl,--end-group}
cmd=${cmd/\/usr\/lib\/llvm-16\/lib\/libLLVM-16.so.1/}
cmd=${cmd/-o samples\/mlir_gpu\/jitscope_mlir_gpu/-o samples\/mlir_gpu\/jitscope_mlir_gpu.static}
echo "$cmd" | tr ' ' '\n' | grep -E "llvm|MLIR|-o" | head
(cd $b && eval "$cmd")
if ldd $b/samples/mlir_gpu/jitscope_mlir_gpu.static | grep -q 'libMLIR\|libLLVM'; then
  echo "stage.sh: jitscope_mlir_gpu.static still links libLLVM or libMLIR (its link line changed?)" >&2
  exit 1
fi
for f in tests/gpu_trace_test tests/samples/nvrtc_jit/nvrtc_jit_test tests/samples/mlir_gpu/mlir_gpu_test \
         samples/nvrtc_jit/jitscope_nvrtc_jit samples/nvrtc_jit/jitscope_nvrtc_jit_disabled tools/report/jitscope-report tools/merge/jitscope-merge; do
  mkdir -p $st/$b/$(dirname $f); strip -o $st/$b/$f $b/$f
done
mkdir -p $st/$b/samples/mlir_gpu; strip -o $st/$b/samples/mlir_gpu/jitscope_mlir_gpu $b/samples/mlir_gpu/jitscope_mlir_gpu.static
mkdir -p $st/$b/sdk; for f in $b/sdk/libjitscope.so*; do
  if [ -L $f ]; then cp -a $f $st/$b/sdk/; else strip -o $st/$f $f; fi; done
(find $b -name CTestTestfile.cmake; find $b/include -type f) | while read f; do mkdir -p $st/$(dirname $f); cp $f $st/$f; done
find $b -type d -name tmp | while read d; do mkdir -p $st/$d; done
tar -C $st -cJf .gpu/payload.tar.xz build
rm -rf .gpu/libs; mkdir -p .gpu/libs
for l in libsimdjson.so.14 libz.so.1 libzstd.so.1 libtinfo.so.6 libffi.so.8 libedit.so.2 libbsd.so.0 libmd.so.0; do
  cp -L /lib/x86_64-linux-gnu/$l .gpu/libs/; done
cp -L /usr/local/cuda/lib/libcupti.so.13 .gpu/libs/
echo "$repo" > .gpu/checkout_path
du -sh .gpu/*
