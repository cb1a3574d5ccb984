// A span per pass (see pass_instrumentation.hpp). Passes nest (an adaptor
// runs its function passes inside it) and end in reverse order on their
// thread, so each thread keeps a stack of open spans; a deque, so that a
// push never moves an open span.
#include "pass_instrumentation.hpp"

#include <llvm/IR/PassInstrumentation.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassInstrumentation.h>
#include <mlir/Pass/PassManager.h>
#include <jitscope/jitscope.hpp>

#include <deque>
#include <memory>
#include <string_view>

namespace mlir_gpu {
namespace {

thread_local std::deque<jitscope::Span> t_open_passes;

void begin_pass(std::string_view name) { t_open_passes.emplace_back(name); }
void end_pass() {
  if (!t_open_passes.empty()) t_open_passes.pop_back();
}

class PassSpans : public mlir::PassInstrumentation {
 public:
  void runBeforePass(mlir::Pass* pass, mlir::Operation*) override {
    const llvm::StringRef arg = pass->getArgument();  // "convert-gpu-to-nvvm"; adaptors have none
    const llvm::StringRef name = arg.empty() ? pass->getName() : arg;
    begin_pass(std::string_view(name.data(), name.size()));
  }
  void runAfterPass(mlir::Pass*, mlir::Operation*) override { end_pass(); }
  void runAfterPassFailed(mlir::Pass*, mlir::Operation*) override { end_pass(); }
};

}  // namespace

void instrument(mlir::PassManager& pm) { pm.addInstrumentation(std::make_unique<PassSpans>()); }

void instrument(llvm::PassInstrumentationCallbacks& callbacks) {
  callbacks.registerBeforeNonSkippedPassCallback([](llvm::StringRef pass, llvm::Any) {
    begin_pass(std::string_view(pass.data(), pass.size()));
  });
  callbacks.registerAfterPassCallback(
      [](llvm::StringRef, llvm::Any, const llvm::PreservedAnalyses&) { end_pass(); });
  callbacks.registerAfterPassInvalidatedCallback(
      [](llvm::StringRef, const llvm::PreservedAnalyses&) { end_pass(); });
}

}  // namespace mlir_gpu
