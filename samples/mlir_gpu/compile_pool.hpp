// Builds kernels on a pool of worker threads, one jitscope compile unit per
// kernel (frame = the kernel's name: family and parameters), with these
// phases, each a metrics column of the unit's record:
//
//   generate        generate_us        render the MLIR text
//   cache lookup    cache_lookup_us    read and verify the disk cache entry
//   mlir_parse      mlir_parse_us      MLIR text -> module     (misses only, so on)
//   mlir_lower      mlir_lower_us      the MLIR pipeline, a span per pass
//   llvm_translate  llvm_translate_us  LLVM dialect -> LLVM IR
//   llvm_opt        llvm_opt_us        new pass manager O3, a span per pass
//   nvptx_codegen   nvptx_codegen_us   LLVM IR -> PTX (NVPTX backend)
//   nvjitlink       nvjitlink_us       PTX -> sm_90 cubin
//   cache store     cache_store_us     atomic write of the entry
//
// With --ptxas-check, CUDA's ptxas then assembles the PTX as a child
// process, in the unit but outside every phase and span (ptxas_check.hpp):
// its time is the unit's unexplained time, and the record's ptxas_check_ns.
//
// The record (and the unit's trace slice) also gets kernel, family, variant,
// cache ("hit"/"miss"/"off"), cache_key, mlir_bytes, mlir_hash, llvm_ir_bytes
// (the optimized IR as text; misses only), ptx_bytes, ptx_hash and
// cubin_bytes (and ptxas_check_ns with --ptxas-check); cache traffic is in
// caches.disk_cache.
#pragma once

#include "kernel_catalog.hpp"
#include "kernel_compiler.hpp"

#include <jitscope/compile.hpp>

#include <string>
#include <vector>

namespace mlir_gpu {

class DiskCache;
class MlirLowering;

struct BuiltKernel {
  KernelSpec spec;
  bool ok = false;
  std::string error;  // why it failed (already printed)
  bool cache_hit = false;
  bool cache_miss = false;
  std::string mlir;
  std::string ptx;
  std::vector<char> cubin;
  // The unit that built it: the runner loads the cubin later, under a
  // jitscope::LoadScope, so its kernels' GPU slices name this unit.
  jitscope::CompileUnitRef unit;
};

struct BuildSettings {
  MlirLowering* mlir = nullptr;
  DiskCache* cache = nullptr;                  // null: --no-cache
  std::string toolchain;                       // everything but the source that decides the output
  std::vector<ToolchainPart> toolchain_parts;  // the same by part (kernel_compiler.hpp)
  std::string inject_error;                    // a kernel whose MLIR gets an error
  int opt_level = 3;                           // LLVM's (make_target_machine)
  std::string ptxas;                           // --ptxas-check's ptxas; empty: no check
};

// Builds every kernel on `threads` threads; results in the kernels' order.
// Never throws; a kernel that fails says why on stderr and in its record.
std::vector<BuiltKernel> build_all(const std::vector<KernelSpec>& kernels, int threads,
                                   const BuildSettings& settings);

}  // namespace mlir_gpu
