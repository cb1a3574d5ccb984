// nvrtc_jit: jitscope's main sample, a small but real GPU JIT instrumented
// end to end.
//
//   generate kernels   K CUDA C++ kernels from four families (kernel_catalog)
//   compile            one compile unit per kernel on --workers threads:
//                      generate, cache lookup, nvrtc (LTO-IR), nvjitlink
//                      (cubin), cache store, and with a GPU load (compile_pool)
//                      -- or, with --processes N, in N worker processes with
//                      traces of their own, noted in this trace
//                      (jitscope::note_child_process), then "load" here
//   autotune           per family, every variant timed on the GPU (autotuner)
//   run winners        the fastest correct variant of each family, once more
//   release            modules, buffers and the context freed
//
// Without a CUDA driver or device it says so in one line and stops after
// linking: NVRTC and nvJitLink need no GPU. Run with --help for the options.
#include "autotuner.hpp"
#include "common/cuda_driver.hpp"
#include "common/trace_session.hpp"
#include "compile_pool.hpp"
#include "disk_cache.hpp"
#include "kernel_catalog.hpp"
#include "options.hpp"
#include "toolchain.hpp"
#include "worker_processes.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace nvrtc_jit {
namespace {

using sample_common::absolute;
using sample_common::close_gpu;
using sample_common::create_context;
using sample_common::Gpu;
using sample_common::open_gpu;
using sample_common::TraceSession;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Tally {
  int ok = 0, hits = 0, misses = 0;
  double nvrtc_ms = 0, nvjitlink_ms = 0;
  std::vector<std::string> failed;
};

Tally tally(const std::vector<BuiltKernel>& built) {
  Tally t;
  for (const BuiltKernel& b : built) {
    t.ok += b.ok ? 1 : 0;
    t.hits += b.cache_hit ? 1 : 0;
    t.misses += b.cache_miss ? 1 : 0;
    t.nvrtc_ms += b.nvrtc_ms;
    t.nvjitlink_ms += b.nvjitlink_ms;
    if (!b.ok) t.failed.push_back(b.spec.name);
  }
  return t;
}

// A worker process (--worker-process i --of n): compile kernels i, i+n, ...
// into the cache, with a session of its own. Prints only errors.
int run_worker_process(const Options& o) {
  const Toolchain tc = make_toolchain(o.arch, o.nvrtc_extra);
  DiskCache cache(absolute(o.cache_dir));
  TraceSession session(o.trace, o.metrics, "nvrtc_jit worker " + std::to_string(o.worker_index),
                       /*gpu=*/false);
  JITSCOPE_THREAD_NAME("main");
  jitscope::set_model_name("nvrtc_jit");
  if (!cache.prepare()) return 1;  // the parent reads the cubins from there: nothing to do
  std::vector<KernelSpec> shard;
  {
    JITSCOPE_SPAN_ARGS("generate kernels", {"kernels", o.kernels}, {"shard", o.worker_index});
    for (const KernelSpec& k : make_kernels(o.kernels)) {
      if (k.index % o.worker_count == o.worker_index) shard.push_back(k);
    }
  }
  std::vector<BuiltKernel> built;
  {
    JITSCOPE_SPAN_ARGS("compile", {"kernels", shard.size()}, {"workers", o.workers});
    BuildSettings s;
    s.toolchain = &tc;
    s.cache = &cache;
    s.inject_error = o.inject_error;
    if (const char* run = std::getenv(kRunIdVariable)) s.run = run;  // from the parent
    built = build_all(shard, o.workers, s);
  }
  return tally(built).failed.empty() ? 0 : 1;
}

int run(const Options& o) {
  const Toolchain tc = make_toolchain(o.arch, o.nvrtc_extra);
  DiskCache cache(absolute(o.cache_dir));
  Gpu gpu;
  std::string no_gpu = o.no_gpu ? "--no-gpu" : open_gpu(o.arch, &gpu);
  struct GpuGuard {
    Gpu* gpu;
    ~GpuGuard() { close_gpu(gpu); }  // on early returns; a no-op once released
  } gpu_guard{&gpu};
  TraceSession session(o.trace, o.metrics, "nvrtc_jit", no_gpu.empty());
  if (no_gpu.empty()) no_gpu = create_context(&gpu);  // after start: CUPTI sees it created
  const bool use_gpu = no_gpu.empty();
  JITSCOPE_THREAD_NAME("main");
  jitscope::set_model_name("nvrtc_jit");
  const bool cache_ok = o.no_cache || cache.prepare();

  std::vector<KernelSpec> kernels;
  {
    JITSCOPE_SPAN_ARGS("generate kernels", {"kernels", o.kernels});
    kernels = make_kernels(o.kernels);
  }
  BuildSettings s;
  s.toolchain = &tc;
  s.cache = o.no_cache ? nullptr : &cache;
  s.gpu = use_gpu ? &gpu : nullptr;
  s.inject_error = o.inject_error;

  const Clock::time_point t0 = Clock::now();
  std::vector<BuiltKernel> built;
  std::vector<WorkerProcess> workers;
  bool workers_ok = true;
  double compile_ms = 0;
  if (o.processes >= 2) {
    if (!cache_ok) {
      std::fprintf(stderr,
                   "nvrtc_jit: --processes needs a usable --cache-dir: the worker "
                   "processes hand their cubins back through it\n");
      return 1;
    }
    {
      jitscope::Span span("compile (" + std::to_string(o.processes) + " processes)",
                          {{"kernels", o.kernels}, {"workers_per_process", o.workers}});
      // The workers' files are named after this session's (or, untraced, after the options).
      const bool traced = !session.trace().empty();
      const std::string trace = traced ? session.trace() : absolute(o.trace);
      const std::string metrics = traced ? session.metrics() : absolute(o.metrics);
      workers_ok = spawn_workers(o.processes, worker_arguments(o), trace, metrics, &workers);
      // Each worker's own trace, listed in this one as soon as it runs, so
      // that a parent that dies waiting still names them (jitscope-merge
      // --children follows the list).
      for (const WorkerProcess& w : workers) {
        if (w.pid <= 0 || !jitscope::active()) continue;
        if (const jitscope::Status st = jitscope::note_child_process(w.pid, w.trace, w.label);
            !st) {
          std::fprintf(stderr, "nvrtc_jit: note_child_process: %s\n", st.message().c_str());
        }
      }
      workers_ok &= wait_workers(&workers, o.worker_timeout_s);
    }
    compile_ms = ms_since(t0);
    if (!workers_ok) {
      std::fprintf(stderr, "nvrtc_jit: a compile worker process failed (see above): stopping\n");
      return 1;
    }
    // The cubins are in the cache now; this process loads them, one unit
    // each, which waited for the worker's unit that stored it.
    s.compile = false;
    s.run = run_id();
    s.thread_label = "load worker";
    JITSCOPE_SPAN_ARGS("load", {"kernels", kernels.size()});
    built = build_all(kernels, o.workers, s);
  } else {
    JITSCOPE_SPAN_ARGS("compile", {"kernels", kernels.size()}, {"workers", o.workers});
    built = build_all(kernels, o.workers, s);
    compile_ms = ms_since(t0);
  }
  const Tally t = tally(built);

  std::vector<FamilyWinner> winners;
  bool gpu_ok = true;
  if (use_gpu) {
    gpu_ok = autotune_and_run(built, o.reps, &winners);
  } else {
    // The one line that says what was skipped and why.
    const std::string of = t.ok == o.kernels ? "" : " of " + std::to_string(o.kernels);
    std::fprintf(stderr,
                 "nvrtc_jit: %s: compiled and linked %d%s kernels; load, autotune and "
                 "run skipped\n",
                 no_gpu.c_str(), t.ok, of.c_str());
  }
  {
    JITSCOPE_SPAN("release");
    unload_all(built);
  }
  // Stop before the context goes: CUPTI hands over its last records at stop.
  const jitscope::SessionStats stats = session.stop();
  close_gpu(&gpu);

  if (!o.quiet) {
    std::map<std::string, int> per_family;
    for (const KernelSpec& k : kernels) ++per_family[family_name(k.family)];
    std::string families;
    for (const auto& [name, n] : per_family) {
      families += (families.empty() ? "" : ", ") + name + " " + std::to_string(n);
    }
    std::printf("nvrtc_jit: %d kernels (%s) for %s, NVRTC %s, nvJitLink %s\n", o.kernels,
                families.c_str(), tc.arch.c_str(), tc.nvrtc_version.c_str(),
                tc.nvjitlink_version.c_str());
    if (o.processes >= 2) {
      std::string pids;
      for (const WorkerProcess& w : workers)
        pids += (pids.empty() ? "" : ", ") + std::to_string(w.pid);
      std::printf("compiled by:      %d worker processes x %d threads (pids %s)\n", o.processes,
                  o.workers, pids.c_str());
      std::printf("compile wall:     %.1f ms (NVRTC and nvJitLink ran in the worker processes)\n",
                  compile_ms);
    } else {
      std::printf("compiled by:      %d worker threads\n", std::min(o.workers, o.kernels));
      std::printf(
          "compile wall:     %.1f ms (summed over threads: nvrtc %.1f ms, nvjitlink %.1f ms)\n",
          compile_ms, t.nvrtc_ms, t.nvjitlink_ms);
    }
    if (o.no_cache) {
      std::printf("cache:            off (--no-cache)\n");
    } else {
      std::printf("cache:            %d hits, %d misses%s (%s)\n", t.hits, t.misses,
                  o.processes >= 2 ? " in this process, reading the workers' cubins" : "",
                  cache.dir().c_str());
    }
    std::printf("kernels ok:       %d of %d\n", t.ok, o.kernels);
    if (use_gpu) {
      std::printf("gpu:              %s (sm_%d%d)\n", gpu.name.c_str(), gpu.major, gpu.minor);
      for (const FamilyWinner& w : winners) {
        std::printf("  winner %-8s %-16s %10.2f us  (of %d variants)\n", w.family.c_str(),
                    w.kernel.c_str(), w.avg_us, w.variants);
      }
    } else {
      std::printf("gpu:              none (%s)\n", no_gpu.c_str());
    }
    if (!session.trace().empty()) {
      std::printf("trace:            %s (%llu events)\n", session.trace().c_str(),
                  static_cast<unsigned long long>(stats.events_written));
      for (const WorkerProcess& w : workers) std::printf("                  %s\n", w.trace.c_str());
    } else {
#if defined(JITSCOPE_DISABLE)
      std::printf("trace:            none (jitscope compiled out: JITSCOPE_DISABLE)\n");
#else
      std::printf("trace:            none (the session did not start: see above)\n");
#endif
    }
    if (!session.metrics().empty()) {
      std::printf("metrics:          %s (%llu records)\n", session.metrics().c_str(),
                  static_cast<unsigned long long>(stats.compile_records_written));
      for (const WorkerProcess& w : workers) {
        if (!w.metrics.empty()) std::printf("                  %s\n", w.metrics.c_str());
      }
    }
  }
  if (!t.failed.empty()) {
    std::string names;
    for (const std::string& n : t.failed) names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "nvrtc_jit: %zu of %d kernels failed: %s\n", t.failed.size(), o.kernels,
                 names.c_str());
    return 1;
  }
  return gpu_ok ? 0 : 1;
}

}  // namespace
}  // namespace nvrtc_jit

int main(int argc, char** argv) {
  nvrtc_jit::Options options;
  if (const int rc = nvrtc_jit::parse_options(argc, argv, &options); rc >= 0) return rc;
  return options.worker_index >= 0 ? nvrtc_jit::run_worker_process(options)
                                   : nvrtc_jit::run(options);
}
