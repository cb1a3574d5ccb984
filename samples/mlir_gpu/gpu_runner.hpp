// --run: loads each cubin with the CUDA driver (dlopen'ed, shared with
// nvrtc_jit: ../common/cuda_driver.hpp), launches it once on inputs made here and
// checks its output against the CPU. main.cpp opens the GPU (or says in one
// line why there is none, and runs nothing).
#pragma once

#include "common/cuda_driver.hpp"
#include "compile_pool.hpp"

#include <string>
#include <vector>

namespace mlir_gpu {

struct RunSummary {
  bool ran = false;
  int passed = 0;
  std::vector<std::string> failed;  // kernel: what went wrong
};

// One span per kernel ("run <kernel>"), on the calling thread, which has
// `gpu`'s context current.
RunSummary run_on_gpu(const std::vector<BuiltKernel>& built);

}  // namespace mlir_gpu
