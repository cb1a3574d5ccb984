// The LLVM half of the compiler: O3 with the new pass manager, then PTX from
// the NVPTX backend, for one target (sm_90, PTX ISA 7.8: the newest LLVM 16
// knows; ptxas of CUDA 12 and 13 accept it).
//
// The NVPTX target is registered once per process (std::call_once); each
// compile thread makes its own TargetMachine, which is not thread-safe.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace mlir_gpu {

struct NvptxTarget {
  static constexpr const char* kTriple = "nvptx64-nvidia-cuda";
  static constexpr const char* kCpu = "sm_90";
  static constexpr const char* kFeatures = "+ptx78";
};

// LLVM's version ("16.0.6") and the target; with the optimization level
// (1 to 3) after them, for cache keys and the summary.
std::string llvm_target_description();
std::string llvm_description(int opt_level = 3);

// A TargetMachine for NvptxTarget at `opt_level` (1 to 3: its codegen level,
// and the pipeline optimize() runs), or null and why in *error.
std::unique_ptr<llvm::TargetMachine> make_target_machine(std::string* error, int opt_level = 3);

// Sets the module's triple and data layout for `tm`, then runs
// buildPerModuleDefaultPipeline at `tm`'s level (O3 for Aggressive, O2 for
// Default, O1 for Less) with a span per pass. Empty, or why not.
std::string optimize(llvm::Module& module, llvm::TargetMachine& tm);

// The module as PTX text (legacy codegen pass manager: one span for it all,
// the phase around it). Empty, or why not.
std::string emit_ptx(llvm::Module& module, llvm::TargetMachine& tm, std::string* ptx);

}  // namespace mlir_gpu
