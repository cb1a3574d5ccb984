// One kernel's build as one compile unit, on a pool of threads (see compile_pool.hpp).
#include "compile_pool.hpp"

#include "common/unit_report.hpp"
#include "disk_cache.hpp"
#include "kernel_compiler.hpp"
#include "llvm_backend.hpp"
#include "ptxas_check.hpp"

#include <llvm/Target/TargetMachine.h>
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace mlir_gpu {
namespace {

// The shared helpers (common/unit_report.hpp), with this sample's name.
void record(std::string_view key, const jitscope::FieldValue& value) {
  sample_common::record_field("mlir_gpu", key, value);
}

void fail(jitscope::CompileUnit& unit, BuiltKernel& out, std::string_view stage,
          const std::string& error, const std::string& log) {
  out.ok = false;
  out.error = error;
  unit.fail(stage, error);
  sample_common::report_failure("mlir_gpu", out.spec.name, stage, error, log);
}

void build_one(const KernelSpec& k, const BuildSettings& s, llvm::TargetMachine& tm,
               BuiltKernel& out) {
  out.spec = k;
  jitscope::CompileUnit unit({.frame = k.name, .graph = family_name(k.family)});
  out.unit = unit.ref();
  record("kernel", k.name);
  record("family", family_name(k.family));
  record("variant", k.variant);
  {
    JITSCOPE_PHASE("generate", {.column = "generate_us"});
    out.mlir = render_mlir(k, k.name == s.inject_error);
  }
  record("mlir_bytes", out.mlir.size());
  const std::string mlir_hash = fnv1a_hex(out.mlir.data(), out.mlir.size());
  record("mlir_hash", mlir_hash);
  // Under the session's artifacts folder; off without a metrics file.
  (void)unit.artifact("mlir", out.mlir, "mlir");

  const std::string key = s.toolchain + "\nkernel " + k.name + "\n" + out.mlir;
  const std::string key_hash = DiskCache::key_hash(key);
  if (s.cache != nullptr) {
    CachedKernel cached;
    {
      JITSCOPE_PHASE("cache lookup", {.column = "cache_lookup_us"});
      out.cache_hit = s.cache->load(k.name, key, &cached);
    }
    // The key's parts by name, so that jitscope-report can say which part
    // made a lookup miss (docs/caches.md).
    std::vector<jitscope::CacheKeyPart> parts;
    for (const ToolchainPart& p : s.toolchain_parts) parts.push_back({p.name, p.value});
    parts.push_back({"kernel", k.name});
    parts.push_back({"source", mlir_hash});
    unit.cache_lookup("disk_cache", parts.data(), parts.size(),
                      out.cache_hit ? jitscope::CacheOutcome::kHit : jitscope::CacheOutcome::kMiss);
    if (out.cache_hit) {
      out.ptx = std::move(cached.ptx);
      out.cubin = std::move(cached.cubin);
    } else {
      out.cache_miss = true;
    }
    record("cache", out.cache_hit ? "hit" : "miss");
    record("cache_key", key_hash);
  } else {
    record("cache", "off");
  }

  if (!out.cache_hit) {
    CompiledKernel compiled =
        compile_kernel(*s.mlir, tm, out.mlir, k.name,
                       [&unit](std::string_view kind, std::string_view content,
                               std::string_view ext) { (void)unit.artifact(kind, content, ext); });
    if (!compiled.ok()) return fail(unit, out, compiled.stage, compiled.error, compiled.log);
    if (compiled.llvm_ir_bytes != 0) record("llvm_ir_bytes", compiled.llvm_ir_bytes);
    out.ptx = std::move(compiled.ptx);
    out.cubin = std::move(compiled.cubin);
    if (s.cache != nullptr) {
      JITSCOPE_PHASE("cache store", {.column = "cache_store_us"});
      (void)s.cache->store(k.name, key, {out.ptx, out.cubin});  // a failure is said once
    }
  }
  if (!s.ptxas.empty()) {
    // No phase on purpose: an uninstrumented call out, as the report sees one.
    const PtxasCheck check = run_ptxas(s.ptxas, out.ptx, k.name);
    record("ptxas_check_ns", check.ns);
    if (!check.ok()) return fail(unit, out, "ptxas_check", check.error, check.log);
  }
  record("ptx_bytes", out.ptx.size());
  record("ptx_hash", fnv1a_hex(out.ptx.data(), out.ptx.size()));
  record("cubin_bytes", out.cubin.size());
  out.ok = true;
}

}  // namespace

std::vector<BuiltKernel> build_all(const std::vector<KernelSpec>& kernels, int threads,
                                   const BuildSettings& settings) {
  std::vector<BuiltKernel> built(kernels.size());
  const int count = std::max(1, std::min<int>(threads, static_cast<int>(kernels.size())));
  // Worker w starts with kernel w, then takes the next one free: every
  // worker compiles at least one kernel however the threads are scheduled.
  std::atomic<std::size_t> next{static_cast<std::size_t>(count)};
  auto worker = [&](int w) {
    JITSCOPE_THREAD_NAME("compile worker " + std::to_string(w));
    std::string tm_error;
    // One TargetMachine per thread: it is not thread-safe.
    const std::unique_ptr<llvm::TargetMachine> tm =
        make_target_machine(&tm_error, settings.opt_level);
    // relaxed: the counter only hands out indices; join() publishes the results.
    for (std::size_t i = static_cast<std::size_t>(w); i < kernels.size();
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      BuiltKernel& out = built[i];
      if (!tm) {
        out.spec = kernels[i];
        out.error = tm_error;
        std::fprintf(stderr, "mlir_gpu: kernel %s failed: %s\n", kernels[i].name.c_str(),
                     tm_error.c_str());
        continue;
      }
      try {
        build_one(kernels[i], settings, *tm, out);
      } catch (const std::exception& e) {  // out of memory in a string: fail the kernel, go on
        out.ok = false;
        out.error = std::string("exception: ") + e.what();
        std::fprintf(stderr, "mlir_gpu: kernel %s failed: %s\n", kernels[i].name.c_str(),
                     out.error.c_str());
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(count));
  for (int w = 0; w < count; ++w) pool.emplace_back(worker, w);
  for (std::thread& t : pool) t.join();
  return built;
}

}  // namespace mlir_gpu
