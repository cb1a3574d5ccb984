// The CUDA driver, loaded with dlopen("libcuda.so.1"): the samples never
// link libcuda, so they build, start and compile on machines without one
// (NVRTC, LLVM and nvJitLink need no GPU). Types come from cuda.h.
#pragma once

#include <cuda.h>

#include <string>

namespace sample_common {

struct Driver {
  void* lib = nullptr;
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuDeviceGetCount) cuDeviceGetCount = nullptr;
  decltype(&::cuDeviceGet) cuDeviceGet = nullptr;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
  decltype(&::cuDeviceGetName) cuDeviceGetName = nullptr;
  decltype(&::cuDevicePrimaryCtxRetain) cuDevicePrimaryCtxRetain = nullptr;
  decltype(&::cuDevicePrimaryCtxRelease_v2) cuDevicePrimaryCtxRelease = nullptr;
  decltype(&::cuCtxSetCurrent) cuCtxSetCurrent = nullptr;
  decltype(&::cuCtxSynchronize) cuCtxSynchronize = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  decltype(&::cuModuleUnload) cuModuleUnload = nullptr;
  decltype(&::cuMemAlloc_v2) cuMemAlloc = nullptr;
  decltype(&::cuMemFree_v2) cuMemFree = nullptr;
  decltype(&::cuMemcpyHtoD_v2) cuMemcpyHtoD = nullptr;
  decltype(&::cuMemcpyDtoH_v2) cuMemcpyDtoH = nullptr;
  decltype(&::cuMemsetD32_v2) cuMemsetD32 = nullptr;
  decltype(&::cuLaunchKernel) cuLaunchKernel = nullptr;
  decltype(&::cuEventCreate) cuEventCreate = nullptr;
  decltype(&::cuEventRecord) cuEventRecord = nullptr;
  decltype(&::cuEventSynchronize) cuEventSynchronize = nullptr;
  // Spelled out: cuEventElapsedTime_v2 is only declared by CUDA 12.8+ headers.
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;  // _v2 or the v1 symbol
  decltype(&::cuEventDestroy_v2) cuEventDestroy = nullptr;
  // Optional: better messages only.
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuGetErrorString) cuGetErrorString = nullptr;
};

// The one driver table of the process (filled by open_gpu).
Driver& driver();

// "CUDA_ERROR_NO_BINARY_FOR_GPU (no kernel image is available...; code 209)".
std::string cu_error(CUresult r);

// Device 0 and, once created, its primary context for loads and launches.
struct Gpu {
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int major = 0;
  int minor = 0;
};

// Loads the driver and finds device 0, able to run cubins built for `arch`.
// On failure returns why, in words for a line such as
// "no CUDA driver (libcuda.so.1: cannot open shared object file...)" or
// "the GPU (NVIDIA A100, sm_80) cannot run sm_90 cubins"; empty on success.
std::string open_gpu(const std::string& arch, Gpu* gpu);
// Retains the device's primary context and makes it current on this
// thread; empty, or why not. Called once the jitscope session runs, so that
// its CUPTI collector sees the context created.
std::string create_context(Gpu* gpu);
// Releases the primary context (after every module and buffer is freed).
void close_gpu(Gpu* gpu);
// Makes the GPU's context current on the calling thread; false + error text.
bool use_gpu_on_this_thread(const Gpu& gpu, std::string* error);

}  // namespace sample_common
