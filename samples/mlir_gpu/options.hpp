// The command line (CLI11). A bad value gets CLI11's message and exit code 2.
#pragma once

#include <string>

namespace mlir_gpu {

struct Options {
  int kernels = 12;
  int threads = 4;
  int opt_level = 3;  // LLVM's: the O1/O2/O3 pipeline and codegen level
  std::string cache_dir = "mlir_gpu_cache";
  bool no_cache = false;
  std::string out_dir;  // empty: write no .mlir/.ptx/.cubin files
  // Used unless JITSCOPE_TRACE started a session when the program loaded.
  std::string trace = "mlir_gpu.trace.json";
  std::string metrics = "mlir_gpu.metrics.jsonl";  // empty: no metrics file
  bool run = false;  // load and launch each kernel with the CUDA driver
  bool quiet = false;
  std::string inject_error;  // a kernel whose MLIR gets an error (tests)
  // Run CUDA's ptxas on each kernel's PTX, untraced (ptxas_check.hpp).
  bool ptxas_check = false;
  std::string ptxas;  // its path; empty: the one found at build time
};

// Parses argv into *out. Returns -1 to go on, or the exit code to return
// now (0 after --help, 2 after an error, which CLI11 has printed).
int parse_options(int argc, char** argv, Options* out);

}  // namespace mlir_gpu
