#!/usr/bin/env bash
# On a lent GPU machine, over .gpu/ from scripts/gpu/stage.sh (carried):
# the GPU-labelled and sample ctest entries, both samples with CUPTI, the
# report on their traces, a merge of worker processes' traces, and the
# Python package's GPU test built there for its python3. With "ctest",
# only the ctest entries; with "bench", bench/nvrtc_jit_overhead.sh with
# CUPTI on and off; with "phases", each run's compile phase and the rest.
# Logs and traces go to $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1
t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 ))s] $*"; }
stamp machine
nvidia-smi -L; nvidia-smi --query-gpu=driver_version,name --format=csv,noheader
uname -r; head -2 /etc/os-release; which g++ gcc cmake ctest python3 zstd xz 2>&1 | head
root=$(pwd -P)
home=$(cat .gpu/checkout_path)  # the staging checkout's path, baked into the binaries
if [ "$root" != "$home" ]; then
  if [ -e "$home" ] && [ ! -L "$home" ]; then
    echo "run.sh: $home exists and is not a link: the staged paths cannot be made" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$home")" && ln -sfnT "$root" "$home" || exit 1
fi
cd "$home" || exit 1
stamp unpack
python3 - <<'PY'
import tarfile
tarfile.open('.gpu/payload.tar.xz').extractall('.')
PY
ls build/gpu/sdk
# CUDA libraries: the machine's own first, ours (13.0, same as the build) last.
cudalibs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$d" ] && cudalibs="$cudalibs:$d"
done
for n in libnvrtc.so.13 libnvJitLink.so.13 libcupti.so.13; do
  f=$(find / -xdev -name "$n" -not -path "/proc/*" 2>/dev/null | head -1); echo "$n: $f"
  [ -n "$f" ] && cudalibs="$cudalibs:$(dirname "$f")"
done
export LD_LIBRARY_PATH="${cudalibs#:}:$home/.gpu/libs"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
for b in build/gpu/tests/gpu_trace_test build/gpu/samples/nvrtc_jit/jitscope_nvrtc_jit build/gpu/samples/mlir_gpu/jitscope_mlir_gpu build/gpu/tools/report/jitscope-report; do
  echo "-- $b"; ldd "$b" | grep -E "not found|jitscope|nvrtc|nvJit|cupti|cuda" ; done
if [ "${1:-}" = phases ]; then
  # Where the instrumented sample's extra time goes with the GPU: each run's
  # wall, its "compile wall" line, and the rest (load, autotune, run, stop),
  # alternating with the JITSCOPE_DISABLE twin; CUPTI off.
  runs=${2:-15}
  mkdir -p /tmp/ph && cd /tmp/ph
  for i in $(seq 1 "$runs"); do
    for b in jitscope_nvrtc_jit jitscope_nvrtc_jit_disabled; do
      t0=$(date +%s%N)
      JITSCOPE_CUPTI=off "$home/build/gpu/samples/nvrtc_jit/$b" --kernels 24 --workers 4 --no-cache \
        --trace t.json --metrics m.jsonl > out.txt 2>&1
      t1=$(date +%s%N)
      c=$(awk '/^compile wall:/ {print $3}' out.txt)
      echo "$b $(( (t1 - t0) / 1000 )) $c"
    done
  done | awk '{ wall[$1] = wall[$1] " " $2 / 1000; comp[$1] = comp[$1] " " $3; rest[$1] = rest[$1] " " ($2 / 1000 - $3) }
    END { for (b in wall) { print b; print "  wall ms:   " wall[b]; print "  compile:   " comp[b]; print "  rest ms:   " rest[b] } }'
  stamp done
  exit 0
fi
if [ "${1:-}" = bench ]; then
  # What jitscope costs nvrtc_jit end to end with a GPU (autotuning and
  # launches), CUPTI on (the default with a GPU) and off.
  runs=${2:-21}
  stamp "nvrtc_jit overhead, compile only (--no-gpu)"
  bash bench/nvrtc_jit_overhead.sh build/gpu -r "$runs" -w 4 --no-gpu
  stamp "nvrtc_jit overhead, with the GPU, CUPTI on (auto)"
  bash bench/nvrtc_jit_overhead.sh build/gpu -r "$runs" -w 4
  stamp "nvrtc_jit overhead, with the GPU, JITSCOPE_CUPTI=off"
  JITSCOPE_CUPTI=off bash bench/nvrtc_jit_overhead.sh build/gpu -r "$runs" -w 4
  stamp done
  exit 0
fi
stamp "ctest: gpu and sample tests (python apart)"
# gtest_discover_tests' include files of tests not carried: empty.
grep -rhoE 'include\("[^"]+"\)' build/gpu --include=CTestTestfile.cmake | sed -E 's/include\("(.*)"\)/\1/' |
  while read -r f; do [ -e "$f" ] || : > "$f"; done
timeout 300 ctest --test-dir build/gpu -R "nvrtc_jit_|mlir_gpu_|gpu_nvrtc" -E python --output-on-failure --timeout 300 -j4 -V > "$OUT/ctest.txt" 2>&1; echo "ctest rc=$?"
grep -E "Test +#|tests passed|FAIL|Skipped|\\*\\*\\*" "$OUT/ctest.txt" | head -60
[ "${1:-}" = ctest ] && exit 0
mkdir -p /tmp/s && cd /tmp/s
stamp "nvrtc_jit sample"
timeout 90 $home/build/gpu/samples/nvrtc_jit/jitscope_nvrtc_jit --trace nvrtc.trace.json --metrics nvrtc.metrics.jsonl --cache-dir kc; echo "rc=$?"
timeout 60 $home/build/gpu/tools/report/jitscope-report nvrtc.trace.json --metrics nvrtc.metrics.jsonl --section header,compile_times,phases,top_spans,gpu --top 5; echo "report rc=$?"
stamp "nvrtc_jit sample, pftrace, JITSCOPE_CUPTI=on, processes"
JITSCOPE_CUPTI=on timeout 90 $home/build/gpu/samples/nvrtc_jit/jitscope_nvrtc_jit -q --trace nvrtc.pftrace --metrics nvrtc.pf.metrics.jsonl --cache-dir kc2 --processes 2; echo "rc=$?"
timeout 60 $home/build/gpu/tools/report/jitscope-report nvrtc.pftrace --metrics nvrtc.pf.metrics.jsonl --section header,gpu --top 5; echo "report rc=$?"
stamp "merge the pftrace run with its workers, report"
timeout 60 $home/build/gpu/tools/merge/jitscope-merge --children nvrtc.pftrace -o merged.json; echo "merge rc=$?"
timeout 60 $home/build/gpu/tools/report/jitscope-report merged.json --section header,gpu --top 3 | head -30; echo "report rc=$?"
stamp "mlir_gpu sample --run"
timeout 90 $home/build/gpu/samples/mlir_gpu/jitscope_mlir_gpu --run --trace mlir.trace.json --metrics mlir.metrics.jsonl --cache-dir mc; echo "rc=$?"
timeout 60 $home/build/gpu/tools/report/jitscope-report mlir.trace.json --metrics mlir.metrics.jsonl --section header,compile_times,phases,gpu --top 5; echo "report rc=$?"
stamp "python gpu_loading"
cd "$home"
py=python3
inc=$($py -c "import sysconfig; print(sysconfig.get_paths()['include'])")
suf=$($py -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
mkdir -p /tmp/pyjs/jitscope && cp python/jitscope/*.py /tmp/pyjs/jitscope/
if [ -f "$inc/Python.h" ] && timeout 120 bash -c "ls python/src/*.cpp | xargs -P 16 -I{} sh -c 'g++ -std=c++20 -O1 -fPIC -fvisibility=hidden -c {} -o /tmp/pyjs/\$(basename {}).o -DPY_SSIZE_T_CLEAN -fvisibility-inlines-hidden -fno-strict-aliasing -I$inc -Isdk/include -Isdk/src -Ibuild/gpu/include -DNDEBUG'" &&
   g++ -shared /tmp/pyjs/*.o -o /tmp/pyjs/jitscope/_jitscope$suf -Lbuild/gpu/sdk -ljitscope -Wl,-rpath,$home/build/gpu/sdk; then
  mkdir -p /tmp/jspy
  PYTHONPATH=/tmp/pyjs JSPY_TMP=/tmp/jspy PYTHONDONTWRITEBYTECODE=1 JSTEST_GPU_REQUIRE=1 timeout 120 $py -m pytest -q -p no:cacheprovider python/tests/gpu_loading.py; echo "pytest rc=$?"
else
  echo "python module not built (Python.h at $inc?)"
fi
stamp "artifacts"
cd /tmp/s && tar czf "$OUT/artifacts.tar.gz" *.json *.jsonl *.pftrace $home/build/gpu/tests/tmp 2>/dev/null; ls -la "$OUT"
stamp done
