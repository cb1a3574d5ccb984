// mlir_gpu: a small real MLIR GPU compiler, the shape of Triton's backend,
// instrumented end to end with jitscope.
//
//   generate kernels   K kernels as MLIR from three families (kernel_catalog)
//   set up             one threaded MLIRContext, the NVPTX target (once)
//   compile            one compile unit per kernel on --threads workers:
//                      MLIR parse, MLIR lowering to NVVM, translation to LLVM
//                      IR, O3, NVPTX codegen to sm_90 PTX, nvJitLink to a
//                      cubin; a disk cache in front (compile_pool); every
//                      MLIR and LLVM pass a span (pass_instrumentation)
//   write outputs      --out-dir: each kernel's .mlir, .ptx and .cubin
//   run                --run: load, launch and check each kernel on the GPU
//                      (gpu_runner), or one line saying why not
//
// Run with --help for the options.
#include "common/cuda_driver.hpp"
#include "common/trace_session.hpp"
#include "compile_pool.hpp"
#include "disk_cache.hpp"
#include "gpu_runner.hpp"
#include "kernel_catalog.hpp"
#include "kernel_compiler.hpp"
#include "llvm_backend.hpp"
#include "mlir_lowering.hpp"
#include "nvjitlink_link.hpp"
#include "options.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace mlir_gpu {
namespace {

using sample_common::absolute;
using sample_common::TraceSession;

// Each kernel's .mlir, .ptx and .cubin in `dir`; false (said) on failure.
bool write_outputs(const std::string& dir, const std::vector<BuiltKernel>& built) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const BuiltKernel& b : built) {
    if (!b.ok) continue;
    const std::string base = dir + "/" + b.spec.name;
    std::ofstream(base + ".mlir", std::ios::binary) << b.mlir;
    std::ofstream(base + ".ptx", std::ios::binary) << b.ptx;
    std::ofstream cubin(base + ".cubin", std::ios::binary);
    cubin.write(b.cubin.data(), static_cast<std::streamsize>(b.cubin.size()));
    if (!cubin) {
      std::fprintf(stderr, "mlir_gpu: cannot write %s.cubin\n", base.c_str());
      return false;
    }
  }
  return true;
}

int run(const Options& o) {
  sample_common::Gpu gpu;
  std::string no_gpu = o.run ? sample_common::open_gpu("sm_90", &gpu) : "";
  struct GpuGuard {
    sample_common::Gpu* gpu;
    ~GpuGuard() { sample_common::close_gpu(gpu); }  // a no-op once closed
  } gpu_guard{&gpu};
  TraceSession session(o.trace, o.metrics, "mlir_gpu", o.run && no_gpu.empty());
  if (o.run && no_gpu.empty()) no_gpu = sample_common::create_context(&gpu);  // CUPTI sees it made
  JITSCOPE_THREAD_NAME("main");
  jitscope::set_model_name("mlir_gpu");
  DiskCache cache(absolute(o.cache_dir));
  if (!o.no_cache) (void)cache.prepare();  // unusable: said once, the run goes on uncached

  std::vector<KernelSpec> kernels;
  {
    JITSCOPE_SPAN_ARGS("generate kernels", {"kernels", o.kernels});
    kernels = make_kernels(o.kernels);
  }
  std::unique_ptr<MlirLowering> mlir;
  BuildSettings s;
  {
    JITSCOPE_SPAN("set up");
    mlir = std::make_unique<MlirLowering>();
    s.toolchain = toolchain_description(*mlir, o.opt_level);
    s.toolchain_parts = toolchain_parts(*mlir, o.opt_level);
  }
  s.mlir = mlir.get();
  s.cache = o.no_cache ? nullptr : &cache;
  s.inject_error = o.inject_error;
  s.opt_level = o.opt_level;
  if (o.ptxas_check) s.ptxas = o.ptxas;

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<BuiltKernel> built;
  {
    JITSCOPE_SPAN_ARGS("compile", {"kernels", kernels.size()}, {"threads", o.threads});
    built = build_all(kernels, o.threads, s);
  }
  const double compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  int ok = 0, hits = 0, misses = 0;
  std::string failed;
  for (const BuiltKernel& b : built) {
    ok += b.ok;
    hits += b.cache_hit;
    misses += b.cache_miss;
    if (!b.ok) failed += (failed.empty() ? "" : ", ") + b.spec.name;
  }
  bool outputs_ok = true;
  if (!o.out_dir.empty()) {
    JITSCOPE_SPAN("write outputs");
    outputs_ok = write_outputs(o.out_dir, built);
  }
  RunSummary ran;
  if (o.run && no_gpu.empty()) {
    JITSCOPE_SPAN("run");
    ran = run_on_gpu(built);
    for (const std::string& f : ran.failed) std::fprintf(stderr, "mlir_gpu: run %s\n", f.c_str());
  } else if (o.run) {
    std::fprintf(stderr, "mlir_gpu: --run skipped: %s\n", no_gpu.c_str());  // the one line
  }
  // Stop before the context goes: CUPTI hands over its last records at stop.
  const jitscope::SessionStats stats = session.stop();
  sample_common::close_gpu(&gpu);

  if (!o.quiet) {
    std::printf("mlir_gpu: %d kernels, %s, %s\n", o.kernels, llvm_description(o.opt_level).c_str(),
                nvjitlink_description().c_str());
    std::printf("compile wall:     %.1f ms on %d threads\n", compile_ms,
                std::min(o.threads, o.kernels));
    if (o.no_cache) {
      std::printf("cache:            off (--no-cache)\n");
    } else {
      std::printf("cache:            %d hits, %d misses (%s)\n", hits, misses, cache.dir().c_str());
    }
    std::printf("kernels ok:       %d of %d\n", ok, o.kernels);
    if (!o.out_dir.empty()) std::printf("outputs:          %s\n", absolute(o.out_dir).c_str());
    if (ran.ran) {
      std::printf("gpu:              %s, %d of %d kernels ran correctly\n", gpu.name.c_str(),
                  ran.passed, ok);
    }
    if (!session.trace().empty()) {
      std::printf("trace:            %s (%llu events)\n", session.trace().c_str(),
                  static_cast<unsigned long long>(stats.events_written));
    }
    if (!session.metrics().empty()) {
      std::printf("metrics:          %s (%llu records)\n", session.metrics().c_str(),
                  static_cast<unsigned long long>(stats.compile_records_written));
    }
  }
  if (!failed.empty()) {
    std::fprintf(stderr, "mlir_gpu: %d of %d kernels failed: %s\n", o.kernels - ok, o.kernels,
                 failed.c_str());
    return 1;
  }
  return outputs_ok && ran.failed.empty() ? 0 : 1;
}

}  // namespace
}  // namespace mlir_gpu

int main(int argc, char** argv) {
  mlir_gpu::Options options;
  if (const int rc = mlir_gpu::parse_options(argc, argv, &options); rc >= 0) return rc;
  return mlir_gpu::run(options);
}
