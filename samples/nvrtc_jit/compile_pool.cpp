// One kernel's build as one compile unit, on a pool of threads (see compile_pool.hpp).
#include "compile_pool.hpp"

#include "common/unit_report.hpp"
#include "disk_cache.hpp"
#include "toolchain.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace nvrtc_jit {
namespace {

using sample_common::cu_error;
using sample_common::Driver;
using sample_common::driver;
using sample_common::use_gpu_on_this_thread;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// The shared helpers (common/unit_report.hpp), with this sample's name.
void record(std::string_view key, const jitscope::FieldValue& value) {
  sample_common::record_field("nvrtc_jit", key, value);
}

void fail(jitscope::CompileUnit& unit, BuiltKernel& out, std::string_view stage,
          const std::string& error, const std::string& log) {
  out.ok = false;
  out.error = error;
  unit.fail(stage, error);
  sample_common::report_failure("nvrtc_jit", out.spec.name, stage, error, log);
}

// A cache hit on an entry that a unit of this run stored (a worker
// process's): this unit waited for that one.
void wait_for_producer(jitscope::CompileUnit& unit, const CubinProducer& producer,
                       const BuildSettings& s) {
  if (producer.pid <= 0 || s.run.empty() || producer.run != s.run) return;
  unsigned frame = 0, attempt = 0;
  if (std::sscanf(producer.compile_id.c_str(), "%u/%u", &frame, &attempt) != 2) return;
  (void)unit.waits_for({.frame = frame, .attempt = attempt}, producer.pid);  // no session: ok
}

void build_one(const KernelSpec& k, const BuildSettings& s, BuiltKernel& out) {
  out.spec = k;
  jitscope::CompileUnit unit({.frame = k.name, .graph = family_name(k.family)});
  out.unit_id = unit.id();
  record("kernel", k.name);
  record("family", family_name(k.family));
  record("variant", k.variant);
  record("arch", s.toolchain->arch);

  std::string source;
  {
    JITSCOPE_PHASE("generate", {.column = "generate_us"});
    source = render_source(k, k.name == s.inject_error);
  }
  out.source_bytes = source.size();
  record("source_bytes", out.source_bytes);
  // What this compile read and produced, under the session's artifacts
  // folder (off without a metrics file: the Status is not an error here).
  (void)unit.artifact("source", source, "cu");

  std::string key;
  if (s.cache != nullptr) {
    CachedCubin cached;
    DiskCache::Lookup found = DiskCache::Lookup::kMiss;
    std::string hash;
    {
      JITSCOPE_PHASE("cache lookup", {.column = "cache_lookup_us"});
      key = DiskCache::key_text(*s.toolchain, k.name, source);
      hash = DiskCache::key_hash(key);
      found = s.cache->load(k.name, key, &cached);
    }
    out.cache_hit = found == DiskCache::Lookup::kHit;
    out.cache_miss = !out.cache_hit;
    // The key's parts by name, so that jitscope-report can say which part
    // made a lookup miss (docs/caches.md).
    std::string options;
    for (const std::string& o : s.toolchain->nvrtc_options)
      options += (options.empty() ? "" : " ") + o;
    for (const std::string& o : s.toolchain->link_options) options += " " + o;
    const std::string toolchain =
        "nvrtc " + s.toolchain->nvrtc_version + ", nvjitlink " + s.toolchain->nvjitlink_version;
    const std::string family = k.name.size() > k.variant.size()
                                   ? k.name.substr(0, k.name.size() - k.variant.size() - 1)
                                   : k.name;
    const std::string source_hash = DiskCache::key_hash(source);
    unit.cache_lookup("disk_cache",
                      {{"toolchain", toolchain},
                       {"arch", s.toolchain->arch},
                       {"options", options},
                       {"kernel", family},
                       {"config", k.variant},
                       {"source", source_hash}},
                      out.cache_hit ? jitscope::CacheOutcome::kHit : jitscope::CacheOutcome::kMiss);
    if (out.cache_hit) {
      out.cubin = std::move(cached.cubin);
      out.ltoir_bytes = cached.ltoir_bytes;
      wait_for_producer(unit, cached.producer, s);
    }
    record("cache", out.cache_hit ? "hit" : "miss");
    record("cache_key", hash);
  } else {
    record("cache", "off");
  }

  if (!out.cache_hit) {
    if (!s.compile) {  // the parent of worker processes: they should have stored it
      const std::string where = s.cache != nullptr ? s.cache->dir() : "(no cache)";
      return fail(unit, out, "cache",
                  "no cubin in the cache " + where + " (its worker process did not store it)", {});
    }
    BuildOutput ltoir;
    {
      JITSCOPE_PHASE("nvrtc", {.column = "nvrtc_time_us"});
      const Clock::time_point t0 = Clock::now();
      ltoir = compile_to_ltoir(*s.toolchain, source, k.name + ".cu");
      out.nvrtc_ms = ms_since(t0);
    }
    // NVRTC's log holds its warnings too: kept whatever the result.
    if (!ltoir.log.empty()) (void)unit.artifact("nvrtc_log", ltoir.log, "log");
    if (!ltoir.ok) return fail(unit, out, "nvrtc", ltoir.error, ltoir.log);
    out.ltoir_bytes = ltoir.bytes.size();
    // -dlto: NVRTC emits LTO-IR, not PTX; the cubin is what runs.
    (void)unit.artifact("ltoir", std::string_view(ltoir.bytes.data(), ltoir.bytes.size()), "ltoir");
    BuildOutput cubin;
    {
      JITSCOPE_PHASE("nvjitlink", {.column = "nvjitlink_time_us"});
      const Clock::time_point t0 = Clock::now();
      cubin = link_to_cubin(*s.toolchain, ltoir.bytes, k.name + ".ltoir");
      out.nvjitlink_ms = ms_since(t0);
    }
    if (!cubin.log.empty()) (void)unit.artifact("nvjitlink_log", cubin.log, "log");
    if (!cubin.ok) return fail(unit, out, "nvjitlink", cubin.error, cubin.log);
    (void)unit.artifact("cubin", std::string_view(cubin.bytes.data(), cubin.bytes.size()), "cubin");
    out.cubin = std::move(cubin.bytes);
    if (s.cache != nullptr) {
      JITSCOPE_PHASE("cache store", {.column = "cache_store_us"});
      // A failure is said once. The entry names this unit, for a unit of
      // this run that reads it (wait_for_producer).
      (void)s.cache->store(
          k.name, key, out.cubin, out.ltoir_bytes,
          {jitscope::active() ? static_cast<long long>(::getpid()) : 0, unit.id().str(), s.run});
    }
  }
  record("ltoir_bytes", out.ltoir_bytes);
  record("cubin_bytes", out.cubin.size());

  if (s.gpu != nullptr) {
    JITSCOPE_PHASE("load", {.column = "load_us"});
    const Driver& d = driver();
    if (const CUresult r = d.cuModuleLoadData(&out.module, out.cubin.data()); r != CUDA_SUCCESS) {
      out.module = nullptr;
      return fail(unit, out, "load", "cuModuleLoadData failed: " + cu_error(r), {});
    }
    if (const CUresult r = d.cuModuleGetFunction(&out.function, out.module, k.name.c_str());
        r != CUDA_SUCCESS) {
      out.function = nullptr;
      return fail(unit, out, "load", "cuModuleGetFunction(" + k.name + ") failed: " + cu_error(r),
                  {});
    }
  }
  out.ok = true;
}

}  // namespace

std::vector<BuiltKernel> build_all(const std::vector<KernelSpec>& kernels, int workers,
                                   const BuildSettings& settings) {
  std::vector<BuiltKernel> built(kernels.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&](int w) {
    JITSCOPE_THREAD_NAME(settings.thread_label + " " + std::to_string(w));
    static_cast<void>(w);  // unused when JITSCOPE_DISABLE compiles the name out
    std::string gpu_error;
    const bool gpu_ok =
        settings.gpu == nullptr || use_gpu_on_this_thread(*settings.gpu, &gpu_error);
    // relaxed: the counter only hands out indices; join() publishes the results.
    for (std::size_t i = next.fetch_add(1, std::memory_order_relaxed); i < kernels.size();
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      BuiltKernel& out = built[i];
      if (!gpu_ok) {
        out.spec = kernels[i];
        out.error = gpu_error;
        std::fprintf(stderr, "nvrtc_jit: kernel %s failed: %s\n", kernels[i].name.c_str(),
                     gpu_error.c_str());
        continue;
      }
      try {
        build_one(kernels[i], settings, out);
      } catch (const std::exception& e) {  // out of memory in a string: fail the kernel, go on
        out.ok = false;
        out.error = std::string("exception: ") + e.what();
        std::fprintf(stderr, "nvrtc_jit: kernel %s failed: %s\n", kernels[i].name.c_str(),
                     out.error.c_str());
      }
    }
  };
  const int threads = std::max(1, std::min<int>(workers, static_cast<int>(kernels.size())));
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(threads));
  for (int w = 0; w < threads; ++w) pool.emplace_back(worker, w);
  for (std::thread& t : pool) t.join();
  return built;
}

void unload_all(std::vector<BuiltKernel>& built) {
  for (BuiltKernel& b : built) {
    if (b.module != nullptr) (void)driver().cuModuleUnload(b.module);
    b.module = nullptr;
    b.function = nullptr;
  }
}

}  // namespace nvrtc_jit
