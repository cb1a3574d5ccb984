// The kernels this compiler builds: three families of MLIR GPU kernels with
// parameter variants, each rendered as MLIR text (gpu, arith, memref and scf
// dialects) holding one gpu.module with one `gpu.func ... kernel`.
//
//   axpy     c = alpha * a + b over 2^20 floats; U consecutive elements per
//            thread (unroll U: 1, 2, 4, 8), block size 128 or 256
//   reduce   block sums of 2^20 floats in workgroup memory: block size B
//            (64..512), I items per thread (1, 4), a tree of log2(B) steps
//   matmul   C = A * B, square S x S (256, 512), T x T tiles (4..32) staged
//            in workgroup memory, barriers around each tile
//
// make_kernels(K) takes the families round robin, each family's variants in
// order, so any K has all three families as soon as K >= 3.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mlir_gpu {

enum class Family { kAxpy, kReduce, kMatmul };

// One memref argument as the kernel receives it after lowering: MLIR's
// memref descriptor (allocated and aligned pointers, offset, sizes, strides).
struct MemrefArg {
  std::vector<std::int64_t> shape;
  bool output = false;
};

struct KernelSpec {
  int index = 0;
  Family family = Family::kAxpy;
  std::string name;     // "axpy_u4_b256": the gpu.module, gpu.func and PTX entry name
  std::string variant;  // "u4_b256"
  // The family's parameters (unused ones 0).
  int unroll = 0, block = 0, items = 0, size = 0, tile = 0;
  // How it is launched: the memrefs, a trailing f32 scalar (axpy), the grid.
  std::vector<MemrefArg> memrefs;
  bool scalar_arg = false;
  unsigned grid[3] = {1, 1, 1};
  unsigned block_dim[3] = {1, 1, 1};
};

const char* family_name(Family f);
int catalogue_size();
std::vector<KernelSpec> make_kernels(int count);

// The kernel's MLIR module. `broken`: with a type error MLIR reports (tests).
std::string render_mlir(const KernelSpec& k, bool broken = false);

}  // namespace mlir_gpu
