// The MLIR half of the compiler: parse a kernel's MLIR, lower its gpu.module
// to the LLVM and NVVM dialects with a pass pipeline, translate it to LLVM IR.
//
// One MLIRContext serves every compile thread, with MLIR's multithreading on
// (so a module with several gpu.modules lowers them on MLIR's thread pool);
// every dialect and translation is loaded before the threads start, since
// loading one later is not thread-safe. Diagnostics go to the thread that
// raised them (a context-wide handler writing to a thread-local log), so
// each kernel's error text is its own. Nothing here is instrumented beyond
// the per-pass spans (pass_instrumentation.hpp): the compile units and
// phases live in compile_pool.cpp, where one kernel's build reads top to bottom.
#pragma once

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OwningOpRef.h>
#include <mlir/Pass/PassManager.h>

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace mlir_gpu {

// What a failed step says: the failing step and MLIR's diagnostics.
struct StepError {
  std::string error;  // empty: it worked
  std::string log;    // MLIR's diagnostics, one per line
  explicit operator bool() const { return !error.empty(); }
};

class MlirLowering {
 public:
  // `threading`: MLIR's multithreading on the context (off: every pass runs
  // on the calling thread, as bench/adapters/mlir_pipeline_driver counts it).
  explicit MlirLowering(bool threading = true);
  MlirLowering(const MlirLowering&) = delete;
  MlirLowering& operator=(const MlirLowering&) = delete;

  // The lowering pipeline as MLIR prints it ("builtin.module(gpu.module(
  // convert-scf-to-cf, convert-gpu-to-nvvm{index-bitwidth=64 ...}, ...))"):
  // part of every cache key.
  const std::string& pipeline() const { return pipeline_; }
  // The pipeline's passes, added to `pm` (a pass manager on builtin.module).
  static void add_pipeline(mlir::OpPassManager& pm);
  mlir::MLIRContext& context() { return context_; }

  // Parses and verifies `source` (named `name` in diagnostics).
  mlir::OwningOpRef<mlir::ModuleOp> parse(const std::string& source, const std::string& name,
                                          StepError* error);
  // Runs the pipeline on `module`, one span per pass.
  StepError lower(mlir::ModuleOp module);
  // The lowered gpu.module named `kernel` as LLVM IR in `llvm_context`.
  std::unique_ptr<llvm::Module> translate(mlir::ModuleOp module, const std::string& kernel,
                                          llvm::LLVMContext& llvm_context, StepError* error);

 private:
  mlir::MLIRContext context_;
  std::string pipeline_;
};

}  // namespace mlir_gpu
