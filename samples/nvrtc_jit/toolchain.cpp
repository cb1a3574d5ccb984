// NVRTC and nvJitLink calls, every result checked (see toolchain.hpp).
#include "toolchain.hpp"

#include <nvJitLink.h>
#include <nvrtc.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace nvrtc_jit {
namespace {

// "sm_90a" -> 90 (and the suffix in *suffix); -1 if it is not sm_<digits>[a|f].
int parse_sm(const std::string& arch, std::string* suffix) {
  if (arch.size() < 4 || arch.compare(0, 3, "sm_") != 0) return -1;
  std::size_t i = 3;
  int number = 0;
  while (i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])) != 0) {
    number = number * 10 + (arch[i] - '0');
    if (number > 10000) return -1;
    ++i;
  }
  if (i == 3) return -1;
  const std::string rest = arch.substr(i);
  if (!rest.empty() && rest != "a" && rest != "f") return -1;
  if (suffix != nullptr) *suffix = rest;
  return number;
}

std::vector<int> supported_archs() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> archs(static_cast<std::size_t>(n));
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

std::string nvrtc_error(nvrtcResult r, const char* call) {
  const char* s = nvrtcGetErrorString(r);
  return std::string(call) + " failed: " + (s != nullptr ? s : "unknown error") + " (code " +
         std::to_string(static_cast<int>(r)) + ")";
}

std::string nvjitlink_error(nvJitLinkResult r, const char* call) {
  // nvJitLink has no error-string call in every version: the enum's names.
  static const char* const kNames[] = {"NVJITLINK_SUCCESS",
                                       "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
                                       "NVJITLINK_ERROR_MISSING_ARCH",
                                       "NVJITLINK_ERROR_INVALID_INPUT",
                                       "NVJITLINK_ERROR_PTX_COMPILE",
                                       "NVJITLINK_ERROR_NVVM_COMPILE",
                                       "NVJITLINK_ERROR_INTERNAL",
                                       "NVJITLINK_ERROR_THREADPOOL",
                                       "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
                                       "NVJITLINK_ERROR_FINALIZE",
                                       "NVJITLINK_ERROR_NULL_INPUT",
                                       "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
                                       "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
                                       "NVJITLINK_ERROR_ARCH_MISMATCH",
                                       "NVJITLINK_ERROR_OUTDATED_LIBRARY",
                                       "NVJITLINK_ERROR_MISSING_FATBIN",
                                       "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
                                       "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
                                       "NVJITLINK_ERROR_LTO_NOT_ENABLED"};
  const int code = static_cast<int>(r);
  const char* name =
      code >= 0 && code < static_cast<int>(std::size(kNames)) ? kNames[code] : "NVJITLINK_ERROR";
  return std::string(call) + " failed: " + name + " (code " + std::to_string(code) + ")";
}

// Trailing NULs and newlines off a log.
std::string trimmed(std::string log) {
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::vector<const char*> c_strings(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  out.reserve(v.size());
  for (const std::string& s : v) out.push_back(s.c_str());
  return out;
}

}  // namespace

std::string check_arch(const std::string& arch) {
  std::string suffix;
  const int sm = parse_sm(arch, &suffix);
  const std::vector<int> archs = supported_archs();
  std::string list;
  for (int a : archs) list += (list.empty() ? "sm_" : ", sm_") + std::to_string(a);
  if (sm < 0) return "'" + arch + "' is not an architecture like sm_90 (supported: " + list + ")";
  if (std::find(archs.begin(), archs.end(), sm) == archs.end()) {
    return "this NVRTC cannot target " + arch + " (supported: " + list + ")";
  }
  return {};
}

Toolchain make_toolchain(const std::string& arch, const std::vector<std::string>& extra) {
  Toolchain tc;
  tc.arch = arch;
  const std::string virtual_arch = "compute_" + arch.substr(3);
  // -dlto: LTO-IR instead of PTX, so nvJitLink optimizes at link time.
  tc.nvrtc_options = {"--gpu-architecture=" + virtual_arch, "-dlto", "--std=c++17",
                      "--extra-device-vectorization"};
  tc.nvrtc_options.insert(tc.nvrtc_options.end(), extra.begin(), extra.end());
  tc.link_options = {"-lto", "-arch=" + arch, "-O3"};
  int major = 0, minor = 0;
  tc.nvrtc_version = nvrtcVersion(&major, &minor) == NVRTC_SUCCESS
                         ? std::to_string(major) + "." + std::to_string(minor)
                         : "unknown";
  unsigned link_major = 0, link_minor = 0;
  tc.nvjitlink_version = nvJitLinkVersion(&link_major, &link_minor) == NVJITLINK_SUCCESS
                             ? std::to_string(link_major) + "." + std::to_string(link_minor)
                             : "unknown";
  return tc;
}

BuildOutput compile_to_ltoir(const Toolchain& tc, const std::string& source,
                             const std::string& program_name) {
  BuildOutput out;
  nvrtcProgram prog = nullptr;
  if (const nvrtcResult r =
          nvrtcCreateProgram(&prog, source.c_str(), program_name.c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS) {
    out.error = nvrtc_error(r, "nvrtcCreateProgram");
    return out;
  }
  struct Destroy {
    nvrtcProgram* p;
    ~Destroy() { (void)nvrtcDestroyProgram(p); }
  } destroy{&prog};

  const std::vector<const char*> options = c_strings(tc.nvrtc_options);
  const nvrtcResult compiled =
      nvrtcCompileProgram(prog, static_cast<int>(options.size()), options.data());
  // The log also holds warnings: keep it whatever the result.
  std::size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    std::string log(log_size, '\0');
    if (nvrtcGetProgramLog(prog, log.data()) == NVRTC_SUCCESS) out.log = trimmed(std::move(log));
  }
  if (compiled != NVRTC_SUCCESS) {
    out.error = nvrtc_error(compiled, "nvrtcCompileProgram");
    return out;
  }
  std::size_t size = 0;
  if (const nvrtcResult r = nvrtcGetLTOIRSize(prog, &size); r != NVRTC_SUCCESS) {
    out.error = nvrtc_error(r, "nvrtcGetLTOIRSize");
    return out;
  }
  if (size == 0) {
    out.error = "nvrtcGetLTOIRSize returned 0 bytes (was -dlto dropped from the options?)";
    return out;
  }
  out.bytes.assign(size, '\0');
  if (const nvrtcResult r = nvrtcGetLTOIR(prog, out.bytes.data()); r != NVRTC_SUCCESS) {
    out.error = nvrtc_error(r, "nvrtcGetLTOIR");
    out.bytes.clear();
    return out;
  }
  out.ok = true;
  return out;
}

BuildOutput link_to_cubin(const Toolchain& tc, const std::vector<char>& ltoir,
                          const std::string& input_name) {
  BuildOutput out;
  nvJitLinkHandle handle = nullptr;
  std::vector<const char*> options = c_strings(tc.link_options);
  if (const nvJitLinkResult r =
          nvJitLinkCreate(&handle, static_cast<std::uint32_t>(options.size()), options.data());
      r != NVJITLINK_SUCCESS) {
    out.error = nvjitlink_error(r, "nvJitLinkCreate");
    return out;
  }
  struct Destroy {
    nvJitLinkHandle* h;
    ~Destroy() { (void)nvJitLinkDestroy(h); }
  } destroy{&handle};

  auto fail_with_log = [&](nvJitLinkResult r, const char* call) {
    out.error = nvjitlink_error(r, call);
    std::size_t size = 0;
    if (nvJitLinkGetErrorLogSize(handle, &size) == NVJITLINK_SUCCESS && size > 1) {
      std::string log(size, '\0');
      if (nvJitLinkGetErrorLog(handle, log.data()) == NVJITLINK_SUCCESS) {
        out.log = trimmed(std::move(log));
      }
    }
    return out;
  };
  if (const nvJitLinkResult r = nvJitLinkAddData(handle, NVJITLINK_INPUT_LTOIR, ltoir.data(),
                                                 ltoir.size(), input_name.c_str());
      r != NVJITLINK_SUCCESS) {
    return fail_with_log(r, "nvJitLinkAddData");
  }
  if (const nvJitLinkResult r = nvJitLinkComplete(handle); r != NVJITLINK_SUCCESS) {
    return fail_with_log(r, "nvJitLinkComplete");
  }
  std::size_t size = 0;
  if (const nvJitLinkResult r = nvJitLinkGetLinkedCubinSize(handle, &size);
      r != NVJITLINK_SUCCESS) {
    return fail_with_log(r, "nvJitLinkGetLinkedCubinSize");
  }
  if (size == 0) {
    out.error = "nvJitLinkGetLinkedCubinSize returned 0 bytes";
    return out;
  }
  out.bytes.assign(size, '\0');
  if (const nvJitLinkResult r = nvJitLinkGetLinkedCubin(handle, out.bytes.data());
      r != NVJITLINK_SUCCESS) {
    out.bytes.clear();
    return fail_with_log(r, "nvJitLinkGetLinkedCubin");
  }
  out.ok = true;
  return out;
}

}  // namespace nvrtc_jit
