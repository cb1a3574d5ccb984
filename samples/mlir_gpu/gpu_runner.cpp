// Loads and runs the kernels on the GPU (see gpu_runner.hpp).
//
// After lowering, a kernel takes each memref as MLIR's descriptor, spelled
// out: allocated pointer, aligned pointer, offset, then one size and one
// stride per dimension (all 64-bit), then axpy's f32 alpha. The inputs are
// small integers in floats, so the GPU's sums are exact and compared with ==.
#include "gpu_runner.hpp"

#include "common/cuda_driver.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace mlir_gpu {
namespace {

using sample_common::cu_error;
using sample_common::driver;

std::int64_t elements(const MemrefArg& m) {
  std::int64_t n = 1;
  for (std::int64_t d : m.shape) n *= d;
  return n;
}

// Input `arg` of kernel `k`, element i.
float input_value(const KernelSpec& k, std::size_t arg, std::int64_t i) {
  switch (k.family) {
    case Family::kAxpy: return arg == 0 ? static_cast<float>(i % 7) : 1.0f;
    case Family::kReduce: return static_cast<float>(i % 3);
    case Family::kMatmul: {
      const std::int64_t row = i / k.size, col = i % k.size;
      return arg == 0 ? static_cast<float>((row + col) % 5) : (row == col ? 1.0f : 0.0f);
    }
  }
  return 0;
}

// Empty, or what is wrong with the output.
std::string check_output(const KernelSpec& k, const std::vector<float>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    float want = 0;
    const std::int64_t n = static_cast<std::int64_t>(i);
    switch (k.family) {
      case Family::kAxpy: want = 2.0f * static_cast<float>(n % 7) + 1.0f; break;
      case Family::kReduce: {
        const std::int64_t first = n * k.block * k.items;
        for (std::int64_t j = first; j < first + k.block * k.items; ++j) want += j % 3;
        break;
      }
      case Family::kMatmul: want = input_value(k, 0, n); break;  // A times the identity
    }
    if (out[i] != want) {
      return "element " + std::to_string(i) + " is " + std::to_string(out[i]) + ", expected " +
             std::to_string(want);
    }
  }
  return {};
}

std::string run_one(const BuiltKernel& b) {
  const sample_common::Driver& d = driver();
  const KernelSpec& k = b.spec;
  CUmodule module = nullptr;
  {
    // Loaded at run time, after its unit closed: credited to that unit.
    jitscope::LoadScope loading(b.unit);
    if (const CUresult r = d.cuModuleLoadData(&module, b.cubin.data()); r != CUDA_SUCCESS)
      return "cuModuleLoadData: " + cu_error(r);
  }
  struct Cleanup {
    CUmodule module;
    std::vector<CUdeviceptr> buffers;
    ~Cleanup() {
      for (CUdeviceptr p : buffers) (void)driver().cuMemFree(p);
      (void)driver().cuModuleUnload(module);
    }
  } cleanup{module, {}};
  CUfunction function = nullptr;
  if (const CUresult r = d.cuModuleGetFunction(&function, module, k.name.c_str());
      r != CUDA_SUCCESS)
    return "cuModuleGetFunction: " + cu_error(r);

  std::vector<std::uint64_t> words;  // every descriptor field, in order
  words.reserve(64);
  std::size_t output = 0;
  for (std::size_t a = 0; a < k.memrefs.size(); ++a) {
    const MemrefArg& m = k.memrefs[a];
    const std::int64_t n = elements(m);
    CUdeviceptr p = 0;
    if (const CUresult r = d.cuMemAlloc(&p, static_cast<std::size_t>(n) * sizeof(float));
        r != CUDA_SUCCESS)
      return "cuMemAlloc: " + cu_error(r);
    cleanup.buffers.push_back(p);
    if (m.output) {
      output = a;
    } else {
      std::vector<float> host(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) host[static_cast<std::size_t>(i)] = input_value(k, a, i);
      if (const CUresult r = d.cuMemcpyHtoD(p, host.data(), host.size() * sizeof(float));
          r != CUDA_SUCCESS)
        return "cuMemcpyHtoD: " + cu_error(r);
    }
    words.insert(words.end(), {p, p, 0});
    for (std::int64_t dim : m.shape) words.push_back(static_cast<std::uint64_t>(dim));
    std::int64_t stride = 1;
    std::vector<std::uint64_t> strides(m.shape.size());
    for (std::size_t i = m.shape.size(); i-- > 0;) {
      strides[i] = static_cast<std::uint64_t>(stride);
      stride *= m.shape[i];
    }
    words.insert(words.end(), strides.begin(), strides.end());
  }
  float alpha = 2.0f;
  std::vector<void*> params;
  for (std::uint64_t& w : words) params.push_back(&w);
  if (k.scalar_arg) params.push_back(&alpha);

  if (const CUresult r =
          d.cuLaunchKernel(function, k.grid[0], k.grid[1], k.grid[2], k.block_dim[0],
                           k.block_dim[1], k.block_dim[2], 0, nullptr, params.data(), nullptr);
      r != CUDA_SUCCESS)
    return "cuLaunchKernel: " + cu_error(r);
  if (const CUresult r = d.cuCtxSynchronize(); r != CUDA_SUCCESS)
    return "cuCtxSynchronize: " + cu_error(r);
  std::vector<float> out(static_cast<std::size_t>(elements(k.memrefs[output])));
  if (const CUresult r =
          d.cuMemcpyDtoH(out.data(), cleanup.buffers[output], out.size() * sizeof(float));
      r != CUDA_SUCCESS)
    return "cuMemcpyDtoH: " + cu_error(r);
  return check_output(k, out);
}

}  // namespace

RunSummary run_on_gpu(const std::vector<BuiltKernel>& built) {
  RunSummary s;
  s.ran = true;
  for (const BuiltKernel& b : built) {
    if (!b.ok) continue;
    jitscope::Span span("run " + b.spec.name);
    const std::string error = run_one(b);
    if (error.empty()) {
      ++s.passed;
    } else {
      s.failed.push_back(b.spec.name + ": " + error);
    }
  }
  return s;
}

}  // namespace mlir_gpu
