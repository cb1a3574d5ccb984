// nvJitLink: PTX to a cubin for sm_90, every result checked. Runs on the
// CPU: no GPU and no driver are needed.
#pragma once

#include <string>
#include <vector>

namespace mlir_gpu {

struct LinkResult {
  std::string error;  // the failing call, when it failed
  std::string log;    // nvJitLink's error log
  std::vector<char> cubin;
};

// "nvJitLink 13.0 -arch=sm_90 -O3": for cache keys and the summary.
std::string nvjitlink_description();

LinkResult link_ptx(const std::string& ptx, const std::string& input_name);

}  // namespace mlir_gpu
