// Per-pass spans for both pass managers: one jitscope span per MLIR pass
// (and analysis) and per LLVM new-PM pass, named after the pass, on the
// thread that runs it (jitscope::mlir and jitscope::llvm).
#pragma once

namespace mlir {
class PassManager;
}
namespace llvm {
class PassInstrumentationCallbacks;
}

namespace mlir_gpu {

void instrument(mlir::PassManager& pm);
void instrument(llvm::PassInstrumentationCallbacks& callbacks);

}  // namespace mlir_gpu
