// O3 and NVPTX codegen with LLVM 16 (see llvm_backend.hpp).
#include "llvm_backend.hpp"

#include "pass_instrumentation.hpp"

#include <llvm/ADT/SmallString.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include <mutex>
#include <optional>
#include <string>

namespace mlir_gpu {
namespace {

const llvm::Target* nvptx_target(std::string* error) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  std::string why;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(NvptxTarget::kTriple, why);
  if (target == nullptr) *error = "LLVM has no NVPTX target: " + why;
  return target;
}

}  // namespace

std::string llvm_target_description() {
  return std::string("LLVM ") + LLVM_VERSION_STRING + " " + NvptxTarget::kTriple + " " +
         NvptxTarget::kCpu + " " + NvptxTarget::kFeatures;
}

std::string llvm_description(int opt_level) {
  return llvm_target_description() + " O" + std::to_string(opt_level);
}

std::unique_ptr<llvm::TargetMachine> make_target_machine(std::string* error, int opt_level) {
  const llvm::Target* target = nvptx_target(error);
  if (target == nullptr) return nullptr;
  const llvm::CodeGenOpt::Level level = opt_level <= 1   ? llvm::CodeGenOpt::Less
                                        : opt_level == 2 ? llvm::CodeGenOpt::Default
                                                         : llvm::CodeGenOpt::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(NvptxTarget::kTriple, NvptxTarget::kCpu, NvptxTarget::kFeatures,
                                  llvm::TargetOptions(), std::nullopt, std::nullopt, level));
  if (!tm) *error = "cannot create an NVPTX TargetMachine for " + std::string(NvptxTarget::kCpu);
  return tm;
}

std::string optimize(llvm::Module& module, llvm::TargetMachine& tm) {
  module.setTargetTriple(NvptxTarget::kTriple);
  module.setDataLayout(tm.createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  instrument(callbacks);
  llvm::PassBuilder builder(&tm, llvm::PipelineTuningOptions(), std::nullopt, &callbacks);
  tm.registerPassBuilderCallbacks(builder);  // NVVMReflect, NVVMIntrRange
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  const llvm::OptimizationLevel level =
      tm.getOptLevel() == llvm::CodeGenOpt::Less      ? llvm::OptimizationLevel::O1
      : tm.getOptLevel() == llvm::CodeGenOpt::Default ? llvm::OptimizationLevel::O2
                                                      : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);

  std::string broken;
  llvm::raw_string_ostream os(broken);
  if (llvm::verifyModule(module, &os)) {
    return "the module is broken after O" + std::to_string(level.getSpeedupLevel()) + ": " +
           os.str();
  }
  return {};
}

std::string emit_ptx(llvm::Module& module, llvm::TargetMachine& tm, std::string* ptx) {
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr, llvm::CGFT_AssemblyFile)) {
    return "the NVPTX TargetMachine cannot emit assembly";
  }
  codegen.run(module);
  ptx->assign(text.begin(), text.end());
  if (ptx->empty()) return "the NVPTX backend wrote no PTX";
  return {};
}

}  // namespace mlir_gpu
