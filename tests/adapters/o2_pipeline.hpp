// LLVM's default<O2> pipeline over one module parsed from text, built as opt
// builds it over the caller's callbacks object: for the LLVM adapter's test
// and its bench (bench/adapters/llvm_o2_driver.cpp). PassBuilder writes into
// the callbacks object, so pipelines that share one are made one at a time.
// Inside namespace jitscope, `llvm` is jitscope::llvm: LLVM's is ::llvm.
#pragma once

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/SourceMgr.h>

#include <memory>
#include <optional>
#include <string>

namespace jitscope::testing {

struct O2Pipeline {
  // `standard`: LLVM's StandardInstrumentations too, registered before the
  // pipeline is made (its optnone handling is what skips passes). `error`
  // says why when `parsed` is false.
  O2Pipeline(::llvm::PassInstrumentationCallbacks& pic, const std::string& ir, bool standard)
      : pb(nullptr, ::llvm::PipelineTuningOptions(), std::nullopt, &pic) {
    ::llvm::SMDiagnostic diagnostic;
    module = ::llvm::parseAssemblyString(ir, diagnostic, context);
    if (!module) {
      error = diagnostic.getMessage().str();
      return;
    }
    if (standard) {
      instrumentations.emplace(context, /*DebugLogging=*/false);
      instrumentations->registerCallbacks(pic, &fam);
    }
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    if (::llvm::Error e = pb.parsePassPipeline(mpm, "default<O2>")) {
      error = ::llvm::toString(std::move(e));
      return;
    }
    parsed = true;
  }
  void run() { mpm.run(*module, mam); }

  ::llvm::LLVMContext context;
  std::unique_ptr<::llvm::Module> module;
  ::llvm::LoopAnalysisManager lam;
  ::llvm::FunctionAnalysisManager fam;
  ::llvm::CGSCCAnalysisManager cgam;
  ::llvm::ModuleAnalysisManager mam;
  std::optional<::llvm::StandardInstrumentations> instrumentations;
  ::llvm::PassBuilder pb;
  ::llvm::ModulePassManager mpm;
  bool parsed = false;
  std::string error;
};

}  // namespace jitscope::testing
