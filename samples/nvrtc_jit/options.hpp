// The command line (CLI11). A bad value gets CLI11's message and exit code 2.
#pragma once

#include <string>
#include <vector>

namespace nvrtc_jit {

struct Options {
  int kernels = 24;
  int workers = 4;
  std::string arch = "sm_90";
  std::string cache_dir = "nvrtc_jit_cache";
  bool no_cache = false;
  std::string trace = "nvrtc_jit.trace.json";
  std::string metrics = "nvrtc_jit.metrics.jsonl";  // empty: no metrics file
  int processes = 0;                                // >= 2: compile in that many worker processes
  int worker_timeout_s = 600;                       // a worker process running longer is killed
  int reps = 20;                                    // timed launches per variant when autotuning
  bool no_gpu = false;                              // compile only, even with a GPU
  bool quiet = false;
  std::string inject_error;              // a kernel whose source gets a compile error (tests)
  std::vector<std::string> nvrtc_extra;  // NVRTC options after the sample's own
  // Hidden: set by the parent on its worker processes.
  int worker_index = -1;  // >= 0: this is worker process `worker_index` of `worker_count`
  int worker_count = 0;
};

// Parses argv into *out. Returns -1 to go on, or the exit code to return
// now (0 after --help, 2 after an error, which CLI11 has printed).
int parse_options(int argc, char** argv, Options* out);

// The options a worker process gets from its parent (paths absolute), less
// its own --trace, --metrics and --worker-process.
std::vector<std::string> worker_arguments(const Options& parent);

}  // namespace nvrtc_jit
