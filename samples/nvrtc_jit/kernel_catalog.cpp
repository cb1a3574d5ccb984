// Kernel families and their CUDA C++ sources (see kernel_catalog.hpp).
#include "kernel_catalog.hpp"

#include <string>
#include <vector>

namespace nvrtc_jit {
namespace {

std::string str(int v) { return std::to_string(v); }

// Every variant of one family, in the order make_kernels hands them out
// (the first parameter varies fastest, so a few variants already differ).
std::vector<KernelSpec> family_variants(Family f) {
  std::vector<KernelSpec> out;
  const std::string fam = family_name(f);
  switch (f) {
    case Family::kGelu:
    case Family::kSilu:
      for (int unroll : {1, 2, 4, 8}) {
        for (int vec : {1, 2, 4}) {
          KernelSpec k;
          k.family = f;
          k.vec = vec;
          k.unroll = unroll;
          k.variant = std::string("v").append(str(vec)).append("_u").append(str(unroll));
          out.push_back(k);
        }
      }
      break;
    case Family::kReduce:
      for (int items : {1, 4, 2, 8}) {
        for (int block : {256, 64, 512, 128, 1024}) {
          KernelSpec k;
          k.family = f;
          k.block = block;
          k.items = items;
          k.variant = std::string("b").append(str(block)).append("_i").append(str(items));
          out.push_back(k);
        }
      }
      break;
    case Family::kMatmul:
      for (int rows : {1, 2, 4, 8}) {
        for (int tile : {16, 8, 32}) {
          KernelSpec k;
          k.family = f;
          k.tile = tile;
          k.rows = rows;
          k.variant = std::string("t").append(str(tile)).append("_r").append(str(rows));
          out.push_back(k);
        }
      }
      break;
  }
  for (KernelSpec& k : out) k.name = fam + "_" + k.variant;
  return out;
}

std::vector<KernelSpec> catalogue() {
  std::vector<std::vector<KernelSpec>> families;
  for (Family f : {Family::kGelu, Family::kReduce, Family::kMatmul, Family::kSilu}) {
    families.push_back(family_variants(f));
  }
  // Round robin over the families until every variant is placed.
  std::vector<KernelSpec> out;
  for (std::size_t round = 0;; ++round) {
    bool placed = false;
    for (const auto& variants : families) {
      if (round < variants.size()) {
        out.push_back(variants[round]);
        out.back().index = static_cast<int>(out.size()) - 1;
        placed = true;
      }
    }
    if (!placed) return out;
  }
}

// ---- sources ---------------------------------------------------------------

const char* op_body(Family f) {
  // tanh-approximated GELU and SiLU, in fp32.
  return f == Family::kGelu
             ? "  return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));\n"
             : "  return v / (1.0f + expf(-v));\n";
}

std::string elementwise_source(const KernelSpec& k) {
  const char* type = k.vec == 4 ? "float4" : k.vec == 2 ? "float2" : "float";
  std::string apply;
  if (k.vec == 1) {
    apply = "      v = op(v);\n";
  } else {
    static const char* const kLanes[] = {"x", "y", "z", "w"};
    for (int l = 0; l < k.vec; ++l) {
      apply += std::string("      v.") + kLanes[l] + " = op(v." + kLanes[l] + ");\n";
    }
  }
  return std::string("// ") + k.name + ": y = " + family_name(k.family) + "(x), " + str(k.vec) +
         " float(s) per access, " + str(k.unroll) +
         " access(es) per thread.\n"
         "__device__ __forceinline__ float op(float v) {\n" +
         op_body(k.family) +
         "}\n\n"
         "extern \"C\" __global__ void " +
         k.name +
         "(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
         "  constexpr int kVec = " +
         str(k.vec) +
         ";\n"
         "  constexpr int kUnroll = " +
         str(k.unroll) +
         ";\n"
         "  const int packs = n / kVec;\n"
         "  const int first = blockIdx.x * blockDim.x * kUnroll + threadIdx.x;\n"
         "#pragma unroll\n"
         "  for (int u = 0; u < kUnroll; ++u) {\n"
         "    const int p = first + u * blockDim.x;\n"
         "    if (p < packs) {\n"
         "      " +
         type + " v = reinterpret_cast<const " + type + "*>(x)[p];\n" + apply +
         "      reinterpret_cast<" + type +
         "*>(y)[p] = v;\n"
         "    }\n"
         "  }\n"
         "  // The n % kVec tail, by the first threads of block 0.\n"
         "  const int tail = packs * kVec + threadIdx.x;\n"
         "  if (blockIdx.x == 0 && tail < n) y[tail] = op(x[tail]);\n"
         "}\n";
}

std::string reduce_source(const KernelSpec& k) {
  return "// " + k.name + ": *out += sum(x); " + str(k.block) + " threads per block, " +
         str(k.items) +
         " element(s) per thread, warp shuffles, one atomic per block.\n"
         "extern \"C\" __global__ void " +
         k.name +
         "(const float* __restrict__ x, float* __restrict__ out, int n) {\n"
         "  constexpr int kBlock = " +
         str(k.block) +
         ";\n"
         "  constexpr int kItems = " +
         str(k.items) +
         ";\n"
         "  constexpr int kWarps = kBlock / 32;\n"
         "  __shared__ float warp_sums[kWarps];\n"
         "  const int base = blockIdx.x * kBlock * kItems + threadIdx.x;\n"
         "  float s = 0.0f;\n"
         "#pragma unroll\n"
         "  for (int k = 0; k < kItems; ++k) {\n"
         "    const int i = base + k * kBlock;\n"
         "    if (i < n) s += x[i];\n"
         "  }\n"
         "  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);\n"
         "  if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = s;\n"
         "  __syncthreads();\n"
         "  if (threadIdx.x < 32) {\n"
         "    s = threadIdx.x < kWarps ? warp_sums[threadIdx.x] : 0.0f;\n"
         "    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);\n"
         "    if (threadIdx.x == 0) atomicAdd(out, s);\n"
         "  }\n"
         "}\n";
}

std::string matmul_source(const KernelSpec& k) {
  return "// " + k.name + ": C = A * B (n x n, row major); " + str(k.tile) + "x" + str(k.tile) +
         " tiles in shared memory, " + str(k.rows) +
         " output row(s) per thread.\n"
         "extern \"C\" __global__ void " +
         k.name +
         "(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,"
         " int n) {\n"
         "  constexpr int kTile = " +
         str(k.tile) +
         ";\n"
         "  constexpr int kRows = " +
         str(k.rows) +
         ";\n"
         "  __shared__ float as[kTile][kTile + 1];  // +1: no bank conflicts on columns\n"
         "  __shared__ float bs[kTile][kTile + 1];\n"
         "  const int tx = threadIdx.x, ty = threadIdx.y;\n"
         "  const int col = blockIdx.x * kTile + tx;\n"
         "  const int row0 = blockIdx.y * kTile + ty * kRows;\n"
         "  float acc[kRows];\n"
         "#pragma unroll\n"
         "  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;\n"
         "  for (int t = 0; t < n; t += kTile) {\n"
         "#pragma unroll\n"
         "    for (int r = 0; r < kRows; ++r) {\n"
         "      const int rr = ty * kRows + r;\n"
         "      const int arow = row0 + r, acol = t + tx, brow = t + rr;\n"
         "      as[rr][tx] = (arow < n && acol < n) ? a[arow * n + acol] : 0.0f;\n"
         "      bs[rr][tx] = (brow < n && col < n) ? b[brow * n + col] : 0.0f;\n"
         "    }\n"
         "    __syncthreads();\n"
         "#pragma unroll\n"
         "    for (int kk = 0; kk < kTile; ++kk) {\n"
         "      const float bv = bs[kk][tx];\n"
         "#pragma unroll\n"
         "      for (int r = 0; r < kRows; ++r) acc[r] += as[ty * kRows + r][kk] * bv;\n"
         "    }\n"
         "    __syncthreads();\n"
         "  }\n"
         "#pragma unroll\n"
         "  for (int r = 0; r < kRows; ++r) {\n"
         "    if (row0 + r < n && col < n) c[(row0 + r) * n + col] = acc[r];\n"
         "  }\n"
         "}\n";
}

}  // namespace

const char* family_name(Family f) {
  switch (f) {
    case Family::kGelu: return "gelu";
    case Family::kSilu: return "silu";
    case Family::kReduce: return "reduce";
    case Family::kMatmul: return "matmul";
  }
  return "?";
}

int catalogue_size() {
  static const int size = static_cast<int>(catalogue().size());
  return size;
}

std::vector<KernelSpec> make_kernels(int count) {
  std::vector<KernelSpec> all = catalogue();
  if (count >= 0 && static_cast<std::size_t>(count) < all.size()) all.resize(count);
  return all;
}

std::string render_source(const KernelSpec& k, bool inject_error) {
  std::string src;
  switch (k.family) {
    case Family::kGelu:
    case Family::kSilu: src = elementwise_source(k); break;
    case Family::kReduce: src = reduce_source(k); break;
    case Family::kMatmul: src = matmul_source(k); break;
  }
  if (inject_error) src += "static_assert(false, \"injected by --inject-compile-error\");\n";
  return src;
}

}  // namespace nvrtc_jit
