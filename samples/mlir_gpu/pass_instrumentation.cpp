// A span per pass, from jitscope's adapters (docs/compiler-adapters.md): one
// call each for MLIR's pass manager and LLVM's new pass manager.
#include "pass_instrumentation.hpp"

#include <llvm/IR/PassInstrumentation.h>
#include <mlir/Pass/PassManager.h>
#include <jitscope/llvm.hpp>
#include <jitscope/mlir.hpp>

namespace mlir_gpu {

void instrument(mlir::PassManager& pm) {
  pm.addInstrumentation(jitscope::mlir::make_instrumentation());
}

void instrument(llvm::PassInstrumentationCallbacks& callbacks) {
  // The registration's state is shared with the callbacks: dropping it is fine.
  (void)jitscope::llvm::register_callbacks(callbacks);
}

}  // namespace mlir_gpu
