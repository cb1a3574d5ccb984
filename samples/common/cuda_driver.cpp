// The CUDA driver through dlopen (see cuda_driver.hpp).
#include "common/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstring>
#include <string>

namespace sample_common {
namespace {

template <class F>
bool load_symbol(void* lib, const char* name, F& out, std::string* missing) {
  void* p = ::dlsym(lib, name);
  if (p == nullptr) {
    if (missing != nullptr) *missing += std::string(missing->empty() ? "" : ", ") + name;
    return false;
  }
  static_assert(sizeof(F) == sizeof(void*));
  std::memcpy(&out, &p, sizeof out);  // a data pointer to a function pointer, without a cast
  return true;
}

// Empty, or why the driver could not be loaded.
std::string load_driver() {
  Driver& d = driver();
  if (d.lib != nullptr) return {};
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return std::string("no CUDA driver (") + (why != nullptr ? why : "libcuda.so.1 not found") +
           ")";
  }
  std::string missing;
  bool ok = true;
  ok &= load_symbol(lib, "cuInit", d.cuInit, &missing);
  ok &= load_symbol(lib, "cuDeviceGetCount", d.cuDeviceGetCount, &missing);
  ok &= load_symbol(lib, "cuDeviceGet", d.cuDeviceGet, &missing);
  ok &= load_symbol(lib, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, &missing);
  ok &= load_symbol(lib, "cuDeviceGetName", d.cuDeviceGetName, &missing);
  ok &= load_symbol(lib, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, &missing);
  ok &= load_symbol(lib, "cuDevicePrimaryCtxRelease_v2", d.cuDevicePrimaryCtxRelease, &missing);
  ok &= load_symbol(lib, "cuCtxSetCurrent", d.cuCtxSetCurrent, &missing);
  ok &= load_symbol(lib, "cuCtxSynchronize", d.cuCtxSynchronize, &missing);
  ok &= load_symbol(lib, "cuModuleLoadData", d.cuModuleLoadData, &missing);
  ok &= load_symbol(lib, "cuModuleGetFunction", d.cuModuleGetFunction, &missing);
  ok &= load_symbol(lib, "cuModuleUnload", d.cuModuleUnload, &missing);
  ok &= load_symbol(lib, "cuMemAlloc_v2", d.cuMemAlloc, &missing);
  ok &= load_symbol(lib, "cuMemFree_v2", d.cuMemFree, &missing);
  ok &= load_symbol(lib, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, &missing);
  ok &= load_symbol(lib, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, &missing);
  ok &= load_symbol(lib, "cuMemsetD32_v2", d.cuMemsetD32, &missing);
  ok &= load_symbol(lib, "cuLaunchKernel", d.cuLaunchKernel, &missing);
  ok &= load_symbol(lib, "cuEventCreate", d.cuEventCreate, &missing);
  ok &= load_symbol(lib, "cuEventRecord", d.cuEventRecord, &missing);
  ok &= load_symbol(lib, "cuEventSynchronize", d.cuEventSynchronize, &missing);
  ok &= load_symbol(lib, "cuEventDestroy_v2", d.cuEventDestroy, &missing);
  // cuEventElapsedTime_v2 is CUDA 12.8+; older drivers have the same call unversioned.
  if (!load_symbol(lib, "cuEventElapsedTime_v2", d.cuEventElapsedTime, nullptr)) {
    ok &= load_symbol(lib, "cuEventElapsedTime", d.cuEventElapsedTime, &missing);
  }
  load_symbol(lib, "cuGetErrorName", d.cuGetErrorName, nullptr);
  load_symbol(lib, "cuGetErrorString", d.cuGetErrorString, nullptr);
  if (!ok) {
    ::dlclose(lib);
    d = Driver{};
    return "the CUDA driver lacks " + missing;
  }
  d.lib = lib;
  return {};
}

// sm_90 -> {9, 0}; sm_100a -> {10, 0} with suffix "a". Assumes check_arch passed.
void arch_numbers(const std::string& arch, int* major, int* minor, std::string* suffix) {
  std::size_t i = 3;
  int n = 0;
  while (i < arch.size() && arch[i] >= '0' && arch[i] <= '9') n = n * 10 + (arch[i++] - '0');
  *major = n / 10;
  *minor = n % 10;
  *suffix = arch.substr(i);
}

}  // namespace

Driver& driver() {
  static Driver d;
  return d;
}

std::string cu_error(CUresult r) {
  const Driver& d = driver();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName != nullptr && d.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (d.cuGetErrorString != nullptr && d.cuGetErrorString(r, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  std::string s = name != nullptr ? name : "CUresult";
  s += " (";
  if (text != nullptr) s += std::string(text) + "; ";
  return s + "code " + std::to_string(static_cast<int>(r)) + ")";
}

std::string open_gpu(const std::string& arch, Gpu* gpu) {
  if (std::string why = load_driver(); !why.empty()) return why;
  const Driver& d = driver();
  if (const CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    return std::string(r == CUDA_ERROR_NO_DEVICE ? "no CUDA device" : "no usable CUDA driver") +
           " (cuInit: " + cu_error(r) + ")";
  }
  int count = 0;
  if (const CUresult r = d.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    return "no CUDA device (cuDeviceGetCount: " + cu_error(r) + ")";
  }
  if (count <= 0) return "no CUDA device (the driver sees none)";
  if (const CUresult r = d.cuDeviceGet(&gpu->device, 0); r != CUDA_SUCCESS) {
    return "no CUDA device (cuDeviceGet(0): " + cu_error(r) + ")";
  }
  char name[256] = {};
  if (d.cuDeviceGetName(name, sizeof name - 1, gpu->device) == CUDA_SUCCESS) gpu->name = name;
  if (d.cuDeviceGetAttribute(&gpu->major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                             gpu->device) != CUDA_SUCCESS ||
      d.cuDeviceGetAttribute(&gpu->minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                             gpu->device) != CUDA_SUCCESS) {
    return "cannot read the GPU's compute capability";
  }
  // A cubin runs on its own major version at an equal or higher minor; an
  // "a" (arch-specific) cubin only on exactly its own.
  int major = 0, minor = 0;
  std::string suffix;
  arch_numbers(arch, &major, &minor, &suffix);
  const bool runs =
      gpu->major == major && (suffix == "a" ? gpu->minor == minor : gpu->minor >= minor);
  if (!runs) {
    return "the GPU (" + gpu->name + ", sm_" + std::to_string(gpu->major * 10 + gpu->minor) +
           ") cannot run " + arch + " cubins; pass --arch sm_" +
           std::to_string(gpu->major * 10 + gpu->minor);
  }
  return {};
}

std::string create_context(Gpu* gpu) {
  const Driver& d = driver();
  if (const CUresult r = d.cuDevicePrimaryCtxRetain(&gpu->context, gpu->device);
      r != CUDA_SUCCESS) {
    gpu->context = nullptr;
    return "cannot create a context on the GPU (cuDevicePrimaryCtxRetain: " + cu_error(r) + ")";
  }
  std::string error;
  if (!use_gpu_on_this_thread(*gpu, &error)) {
    close_gpu(gpu);
    return error;
  }
  return {};
}

void close_gpu(Gpu* gpu) {
  if (gpu->context == nullptr) return;
  const Driver& d = driver();
  (void)d.cuCtxSetCurrent(nullptr);
  (void)d.cuDevicePrimaryCtxRelease(gpu->device);
  gpu->context = nullptr;
}

bool use_gpu_on_this_thread(const Gpu& gpu, std::string* error) {
  if (const CUresult r = driver().cuCtxSetCurrent(gpu.context); r != CUDA_SUCCESS) {
    *error = "cuCtxSetCurrent failed: " + cu_error(r);
    return false;
  }
  return true;
}

}  // namespace sample_common
