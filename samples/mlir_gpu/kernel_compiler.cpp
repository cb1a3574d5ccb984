// MLIR text to a cubin, each stage a phase (see kernel_compiler.hpp).
#include "kernel_compiler.hpp"

#include "llvm_backend.hpp"
#include "mlir_lowering.hpp"
#include "nvjitlink_link.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <memory>
#include <string>
#include <utility>

namespace mlir_gpu {
namespace {

CompiledKernel failed(std::string_view stage, std::string error, std::string log = {}) {
  CompiledKernel out;
  out.stage = stage;
  out.error = std::move(error);
  out.log = std::move(log);
  return out;
}

}  // namespace

CompiledKernel compile_kernel(MlirLowering& lowering, llvm::TargetMachine& tm,
                              const std::string& mlir, const std::string& name,
                              const ArtifactSink& artifacts) {
  const bool keep = artifacts && jitscope::active();
  StepError error;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    JITSCOPE_PHASE("mlir_parse", {.column = "mlir_parse_us"});
    module = lowering.parse(mlir, name + ".mlir", &error);
  }
  if (error) return failed("mlir_parse", error.error, error.log);
  {
    JITSCOPE_PHASE("mlir_lower", {.column = "mlir_lower_us"});
    error = lowering.lower(*module);
  }
  if (error) return failed("mlir_lower", error.error, error.log);
  if (keep) {  // the NVVM-dialect module, as the next stage reads it
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    artifacts("mlir_lowered", os.str(), "mlir");
  }

  llvm::LLVMContext llvm_context;  // per kernel: LLVM contexts are not shared across threads
  std::unique_ptr<llvm::Module> ir;
  {
    JITSCOPE_PHASE("llvm_translate", {.column = "llvm_translate_us"});
    ir = lowering.translate(*module, name, llvm_context, &error);
  }
  if (error) return failed("llvm_translate", error.error, error.log);
  module = nullptr;  // the MLIR module is done with: free it before codegen
  std::string why;
  {
    JITSCOPE_PHASE("llvm_opt", {.column = "llvm_opt_us"});
    why = optimize(*ir, tm);
  }
  if (!why.empty()) return failed("llvm_opt", why);
  CompiledKernel out;
  if (keep) {  // printed for the artifact and its size, not otherwise
    std::string text;
    llvm::raw_string_ostream os(text);
    ir->print(os, nullptr);
    out.llvm_ir_bytes = os.str().size();
    artifacts("llvm_ir", os.str(), "ll");  // after O3
  }
  {
    JITSCOPE_PHASE("nvptx_codegen", {.column = "nvptx_codegen_us"});
    why = emit_ptx(*ir, tm, &out.ptx);
  }
  if (!why.empty()) return failed("nvptx_codegen", why);
  LinkResult link;
  {
    JITSCOPE_PHASE("nvjitlink", {.column = "nvjitlink_us"});
    link = link_ptx(out.ptx, name + ".ptx");
  }
  if (!link.error.empty()) return failed("nvjitlink", link.error, link.log);
  out.cubin = std::move(link.cubin);
  if (keep) {
    artifacts("ptx", out.ptx, "ptx");
    artifacts("cubin", std::string_view(out.cubin.data(), out.cubin.size()), "cubin");
  }
  return out;
}

std::vector<ToolchainPart> toolchain_parts(const MlirLowering& lowering, int opt_level) {
  return {{"mlir_pipeline", lowering.pipeline()},
          {"llvm", llvm_target_description()},
          {"opt_level", "O" + std::to_string(opt_level)},
          {"nvjitlink", nvjitlink_description()}};
}

std::string toolchain_description(const MlirLowering& lowering, int opt_level) {
  return "mlir pipeline " + lowering.pipeline() + "\n" + llvm_description(opt_level) + "\n" +
         nvjitlink_description();
}

}  // namespace mlir_gpu
