// NVRTC (CUDA C++ to LTO-IR) and nvJitLink (LTO-IR to a cubin), with every
// result checked. These run on the CPU: no GPU and no driver are needed.
// Uninstrumented on purpose: the compile units and phases live in
// compile_pool.cpp, where one kernel's build reads top to bottom.
#pragma once

#include <string>
#include <vector>

namespace nvrtc_jit {

// One target and the options derived from it; part of every cache key.
struct Toolchain {
  std::string arch;                        // "sm_90"
  std::vector<std::string> nvrtc_options;  // --gpu-architecture=compute_90 -dlto ...
  std::vector<std::string> link_options;   // -lto -arch=sm_90 ...
  std::string nvrtc_version;               // "13.0"
  std::string nvjitlink_version;           // "13.0"
};

// Empty if `arch` is a valid "sm_<digits>[a|f]" that this NVRTC can target,
// else why not (listing the architectures it supports).
std::string check_arch(const std::string& arch);

// The toolchain for `arch` (already checked), with both libraries' versions;
// `extra` NVRTC options go after the sample's own.
Toolchain make_toolchain(const std::string& arch, const std::vector<std::string>& extra = {});

struct BuildOutput {
  bool ok = false;
  std::string error;  // the failing call and its result, when !ok
  std::string log;    // NVRTC's program log or nvJitLink's error log
  std::vector<char> bytes;
};

// NVRTC: source to LTO-IR (nvrtcGetLTOIR). `program_name` names it in the log.
BuildOutput compile_to_ltoir(const Toolchain& tc, const std::string& source,
                             const std::string& program_name);
// nvJitLink: LTO-IR to a cubin for tc.arch.
BuildOutput link_to_cubin(const Toolchain& tc, const std::vector<char>& ltoir,
                          const std::string& input_name);

}  // namespace nvrtc_jit
