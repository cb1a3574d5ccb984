// One kernel's compile, MLIR text to a cubin, as a library: the mlir_gpu
// program runs it on its thread pool (compile_pool.cpp), and
// samples/python_driver's C++ extension runs it for a Python DSL. Each stage
// is a jitscope phase of the compile unit current on the calling thread
// (whoever opened it: C++ or Python), a metrics column of its record:
//
//   mlir_parse      mlir_parse_us      MLIR text -> module
//   mlir_lower      mlir_lower_us      the MLIR pipeline, a span per pass
//   llvm_translate  llvm_translate_us  LLVM dialect -> LLVM IR
//   llvm_opt        llvm_opt_us        new pass manager O3, a span per pass
//   nvptx_codegen   nvptx_codegen_us   LLVM IR -> PTX (NVPTX backend)
//   nvjitlink       nvjitlink_us       PTX -> sm_90 cubin
//
// The library links libjitscope.so, so that a Python extension built on it
// shares the session, the rings and the current unit with the jitscope
// package (docs/python.md, "Mixing with C++ extensions").
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class TargetMachine;
}

namespace mlir_gpu {

class MlirLowering;

struct CompiledKernel {
  std::string stage;  // the failing stage; empty: it worked
  std::string error;  // why
  std::string log;    // the tool's diagnostics
  std::string ptx;
  std::vector<char> cubin;
  // The optimized IR as text: 0 without a session or an artifact sink (the
  // IR is printed only for those).
  std::size_t llvm_ir_bytes = 0;
  bool ok() const { return stage.empty(); }
};

// What the stages leave behind besides the cubin: (kind, content, extension),
// e.g. ("llvm_ir", <text>, "ll"). Called only while a session records.
using ArtifactSink = std::function<void(std::string_view, std::string_view, std::string_view)>;

// Compiles the kernel `name` (its gpu.module and gpu.func) from `mlir`.
// Never throws for a compile error: the result says which stage failed.
CompiledKernel compile_kernel(MlirLowering& lowering, llvm::TargetMachine& tm,
                              const std::string& mlir, const std::string& name,
                              const ArtifactSink& artifacts = {});

// Everything but the source that decides the output: LLVM's version and
// target, the MLIR pipeline and nvJitLink's options (for cache keys).
std::string toolchain_description(const MlirLowering& lowering, int opt_level = 3);
// The same by part, named: what the cache's lookups record as their key's
// parts (with the kernel and its source), so that a miss names the part
// that changed (docs/caches.md).
struct ToolchainPart {
  std::string name, value;
};
std::vector<ToolchainPart> toolchain_parts(const MlirLowering& lowering, int opt_level = 3);

}  // namespace mlir_gpu
