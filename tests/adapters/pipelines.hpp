// One small LLVM pipeline and one small MLIR pipeline, each run on a
// function named `function_name`, for the adapter consumers below.
#pragma once

#include <string>

namespace jitscope_adapter_consumer {
// Each returns false when the IR did not parse or the pipeline failed.
bool run_llvm_pipeline(const std::string& function_name);
bool run_mlir_pipeline(const std::string& function_name);
// The same with the adapters compiled out (JITSCOPE_DISABLE).
bool run_llvm_pipeline_disabled(const std::string& function_name);
bool run_mlir_pipeline_disabled(const std::string& function_name);
}  // namespace jitscope_adapter_consumer
