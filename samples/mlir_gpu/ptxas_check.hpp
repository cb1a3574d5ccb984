// --ptxas-check: CUDA's ptxas assembles a kernel's PTX again, as a child
// process, the way a Triton-like compiler calls out to ptxas. The sample
// runs it outside every jitscope span on purpose, as an uninstrumented call
// out would be: jitscope-report's unexplained time shows where it sat in
// its unit (docs/unexplained-time.md), and the record's ptxas_check_ns (the
// sample's own clock around the child) says how long it took.
#pragma once

#include <cstdint>
#include <string>

namespace mlir_gpu {

struct PtxasCheck {
  std::string error;     // empty: ptxas took the PTX
  std::string log;       // what ptxas said
  std::uint64_t ns = 0;  // from its spawn to its exit, on the steady clock
  bool ok() const { return error.empty(); }
};

// Writes `ptx` into a private scratch folder, runs `ptxas -arch=sm_90
// <file> -o <file>.cubin` there and waits; removes the folder. Never throws
// for a failure of its own (the result says it).
PtxasCheck run_ptxas(const std::string& ptxas, const std::string& ptx, const std::string& kernel);

// The ptxas found when the sample was built ("" if none).
std::string default_ptxas();

}  // namespace mlir_gpu
