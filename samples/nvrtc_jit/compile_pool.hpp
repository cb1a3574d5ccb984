// Builds kernels on a pool of worker threads, one jitscope compile unit per
// kernel (frame = the kernel's name), with these phases, each a metrics column:
//
//   generate       generate_us         render the CUDA C++ source
//   cache lookup   cache_lookup_us     read and verify the disk cache entry
//   nvrtc          nvrtc_time_us       source -> LTO-IR           (misses only)
//   nvjitlink      nvjitlink_time_us   LTO-IR -> cubin            (misses only)
//   cache store    cache_store_us      atomic write of the entry  (misses only)
//   load           load_us             cuModuleLoadData + cuModuleGetFunction (GPU only)
//
// The load happens inside the unit so that jitscope's CUPTI collector tags
// every later launch of the kernel with the unit that built it (compiled_by).
// The unit's record (and its trace slice) also gets kernel, family, variant,
// arch, cache ("hit"/"miss"/"off"), cache_key, source_bytes, ltoir_bytes and
// cubin_bytes; cache traffic is in its caches.disk_cache.
#pragma once

#include "common/cuda_driver.hpp"
#include "kernel_catalog.hpp"

#include <jitscope/compile.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nvrtc_jit {

struct Toolchain;
class DiskCache;

struct BuiltKernel {
  KernelSpec spec;
  bool ok = false;
  std::string error;  // why it failed, when !ok (already printed)
  bool cache_hit = false;
  bool cache_miss = false;  // looked up and not found (or a bad entry)
  std::uint64_t source_bytes = 0;
  std::uint64_t ltoir_bytes = 0;
  std::vector<char> cubin;
  double nvrtc_ms = 0;
  double nvjitlink_ms = 0;
  jitscope::CompileId unit_id;  // the unit that built it (the autotuner's trials name it)
  CUmodule module = nullptr;    // loaded (GPU only)
  CUfunction function = nullptr;
};

struct BuildSettings {
  const Toolchain* toolchain = nullptr;
  DiskCache* cache = nullptr;               // null: --no-cache
  const sample_common::Gpu* gpu = nullptr;  // null: compile only, load nothing
  bool compile = true;                      // false: the cubin must already be in the cache
                                            // (the parent, after its worker processes)
  std::string inject_error;                 // a kernel whose source gets a compile error
  // This run's id (worker_processes.hpp's run_id), with worker processes:
  // a unit that stores a cubin names itself and the run in the entry, and
  // a unit that reads an entry of the same run waited for the unit that
  // stored it (jitscope::CompileUnit::waits_for): the report's critical
  // path crosses into that worker. Empty: entries name no unit.
  std::string run;
  std::string thread_label = "compile worker";
};

// Builds every kernel on `workers` threads; results in the kernels' order.
// Never throws; a kernel that fails says why on stderr and in its record.
std::vector<BuiltKernel> build_all(const std::vector<KernelSpec>& kernels, int workers,
                                   const BuildSettings& settings);

// Unloads what build_all loaded.
void unload_all(std::vector<BuiltKernel>& built);

}  // namespace nvrtc_jit
