// The kernels this JIT builds: four families of CUDA C++ kernels, each with
// parameter variants an autotuner chooses between.
//
//   gelu    y = gelu(x)   elementwise; float/float2/float4 accesses x unroll 1-8
//   silu    y = silu(x)   the same shapes, another op
//   reduce  sum(x)        block size 64-1024 x items per thread 1-8
//   matmul  C = A * B     square tiles 8/16/32 x rows per thread 1-8
//
// make_kernels(k) takes the first k of a fixed, round-robin order over the
// families, so any k covers every family it can and is the same on every run.
#pragma once

#include <string>
#include <vector>

namespace nvrtc_jit {

enum class Family { kGelu, kSilu, kReduce, kMatmul };

struct KernelSpec {
  int index = 0;  // position in make_kernels' list (the shard key of --processes)
  Family family = Family::kGelu;
  std::string name;     // "matmul_t16_r2": the extern "C" entry, the compile unit's frame
  std::string variant;  // "t16_r2"
  // elementwise
  int vec = 1;     // floats per memory access (1, 2, 4)
  int unroll = 1;  // accesses per thread
  // reduce
  int block = 256;  // threads per block
  int items = 1;    // elements summed per thread before the block reduction
  // matmul
  int tile = 16;  // square tile edge; the block is tile x (tile / rows)
  int rows = 1;   // output rows per thread
};

const char* family_name(Family f);
inline constexpr int kFamilyCount = 4;

// How many kernels the catalogue has (the largest valid --kernels).
int catalogue_size();

// The first `count` kernels (1 <= count <= catalogue_size()).
std::vector<KernelSpec> make_kernels(int count);

// The kernel's CUDA C++ source. `inject_error` adds a line NVRTC rejects (for
// the error-path tests: the kernel fails with NVRTC's log, the run goes on).
std::string render_source(const KernelSpec& k, bool inject_error = false);

}  // namespace nvrtc_jit
