// PTX to a cubin with nvJitLink (see nvjitlink_link.hpp).
#include "nvjitlink_link.hpp"

#include <nvJitLink.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>

namespace mlir_gpu {
namespace {

const char* const kOptions[] = {"-arch=sm_90", "-O3"};

std::string call_failed(const char* call, nvJitLinkResult r) {
  return std::string(call) + " failed (nvJitLinkResult " + std::to_string(static_cast<int>(r)) +
         ")";
}

}  // namespace

std::string nvjitlink_description() {
  unsigned major = 0, minor = 0;
  std::string s = "nvJitLink ";
  s += nvJitLinkVersion(&major, &minor) == NVJITLINK_SUCCESS
           ? std::to_string(major) + "." + std::to_string(minor)
           : "unknown";
  for (const char* o : kOptions) s += std::string(" ") + o;
  return s;
}

LinkResult link_ptx(const std::string& ptx, const std::string& input_name) {
  LinkResult out;
  nvJitLinkHandle handle = nullptr;
  const char* options[std::size(kOptions)];  // nvJitLinkCreate takes them non-const
  std::copy(std::begin(kOptions), std::end(kOptions), options);
  if (const nvJitLinkResult r = nvJitLinkCreate(&handle, std::size(options), options);
      r != NVJITLINK_SUCCESS) {
    out.error = call_failed("nvJitLinkCreate", r);
    return out;
  }
  struct Destroy {
    nvJitLinkHandle* h;
    ~Destroy() { (void)nvJitLinkDestroy(h); }
  } destroy{&handle};
  auto fail = [&](const char* call, nvJitLinkResult r) {
    out.error = call_failed(call, r);
    std::size_t size = 0;
    if (nvJitLinkGetErrorLogSize(handle, &size) == NVJITLINK_SUCCESS && size > 1) {
      std::string log(size, '\0');
      if (nvJitLinkGetErrorLog(handle, log.data()) == NVJITLINK_SUCCESS) {
        while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
        out.log = std::move(log);
      }
    }
    return out;
  };
  // The PTX with its terminating NUL, as nvJitLink reads text inputs.
  if (const nvJitLinkResult r = nvJitLinkAddData(handle, NVJITLINK_INPUT_PTX, ptx.c_str(),
                                                 ptx.size() + 1, input_name.c_str());
      r != NVJITLINK_SUCCESS) {
    return fail("nvJitLinkAddData", r);
  }
  if (const nvJitLinkResult r = nvJitLinkComplete(handle); r != NVJITLINK_SUCCESS) {
    return fail("nvJitLinkComplete", r);
  }
  std::size_t size = 0;
  if (const nvJitLinkResult r = nvJitLinkGetLinkedCubinSize(handle, &size);
      r != NVJITLINK_SUCCESS) {
    return fail("nvJitLinkGetLinkedCubinSize", r);
  }
  out.cubin.assign(size, '\0');
  if (const nvJitLinkResult r = nvJitLinkGetLinkedCubin(handle, out.cubin.data());
      r != NVJITLINK_SUCCESS) {
    out.cubin.clear();
    return fail("nvJitLinkGetLinkedCubin", r);
  }
  if (out.cubin.empty()) out.error = "nvJitLink returned an empty cubin";
  return out;
}

}  // namespace mlir_gpu
