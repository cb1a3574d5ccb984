// Per-pass spans for both pass managers: one jitscope span per MLIR pass and
// per LLVM new-PM pass, named after the pass, on the thread that runs it.
//
// A stand-in: when the adapters land, these two calls become
// jitscope::mlir::make_instrumentation and jitscope::llvm::register_callbacks.
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
