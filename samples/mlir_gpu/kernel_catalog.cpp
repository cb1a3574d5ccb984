// The kernel families as MLIR text (see kernel_catalog.hpp). Each renderer
// writes what a DSL frontend such as Triton's would hand to its backend: a
// gpu.module with one kernel, every shape static.
#include "kernel_catalog.hpp"

#include <string>
#include <vector>

namespace mlir_gpu {
namespace {

constexpr std::int64_t kElements = 1 << 20;  // axpy and reduce inputs

std::string num(std::int64_t v) { return std::to_string(v); }

// "memref<1048576xf32>", or with `space` "memref<256xf32, 3>" (workgroup memory).
std::string memref_type(const std::vector<std::int64_t>& shape, int space = 0) {
  std::string t = "memref<";
  for (std::int64_t d : shape) t += num(d) + "x";
  t += "f32";
  if (space != 0) t += ", " + num(space);
  return t + ">";
}

std::string module_open(const std::string& name) {
  return "module attributes {gpu.container_module} {\n  gpu.module @" + name + " {\n";
}
const char* module_close() { return "  }\n}\n"; }

std::string render_axpy(const KernelSpec& k) {
  const std::string t = memref_type({kElements});
  std::string s = module_open(k.name);
  s += "    gpu.func @" + k.name + "(%a: " + t + ", %b: " + t + ", %c: " + t +
       ", %alpha: f32) kernel {\n";
  s += "      %bid = gpu.block_id x\n";
  s += "      %tid = gpu.thread_id x\n";
  s += "      %c0 = arith.constant 0 : index\n";
  s += "      %c1 = arith.constant 1 : index\n";
  s += "      %cb = arith.constant " + num(k.block) + " : index\n";
  s += "      %cu = arith.constant " + num(k.unroll) + " : index\n";
  s += "      %cn = arith.constant " + num(kElements) + " : index\n";
  s += "      %t0 = arith.muli %bid, %cb : index\n";
  s += "      %t1 = arith.addi %t0, %tid : index\n";
  s += "      %base = arith.muli %t1, %cu : index\n";
  s += "      scf.for %k = %c0 to %cu step %c1 {\n";
  s += "        %i = arith.addi %base, %k : index\n";
  s += "        %inside = arith.cmpi ult, %i, %cn : index\n";
  s += "        scf.if %inside {\n";
  s += "          %x = memref.load %a[%i] : " + t + "\n";
  s += "          %y = memref.load %b[%i] : " + t + "\n";
  s += "          %ax = arith.mulf %alpha, %x : f32\n";
  s += "          %r = arith.addf %ax, %y : f32\n";
  s += "          memref.store %r, %c[%i] : " + t + "\n";
  s += "        }\n";
  s += "      }\n";
  s += "      gpu.return\n    }\n";
  return s + module_close();
}

std::string render_reduce(const KernelSpec& k) {
  const std::string in = memref_type({kElements});
  const std::string out = memref_type({kElements / (k.block * k.items)});
  const std::string sh = memref_type({k.block}, 3);
  std::string s = module_open(k.name);
  s += "    gpu.func @" + k.name + "(%in: " + in + ", %out: " + out + ") workgroup(%sh: " + sh +
       ") kernel {\n";
  s += "      %bid = gpu.block_id x\n";
  s += "      %tid = gpu.thread_id x\n";
  s += "      %c0 = arith.constant 0 : index\n";
  s += "      %c1 = arith.constant 1 : index\n";
  s += "      %cb = arith.constant " + num(k.block) + " : index\n";
  s += "      %ci = arith.constant " + num(k.items) + " : index\n";
  s += "      %cbi = arith.constant " + num(k.block * k.items) + " : index\n";
  s += "      %zero = arith.constant 0.0 : f32\n";
  s += "      %first = arith.muli %bid, %cbi : index\n";
  s += "      %start = arith.addi %first, %tid : index\n";
  // Coalesced: item j of every thread is one contiguous block of loads.
  s += "      %sum = scf.for %j = %c0 to %ci step %c1 iter_args(%acc = %zero) -> (f32) {\n";
  s += "        %off = arith.muli %j, %cb : index\n";
  s += "        %i = arith.addi %start, %off : index\n";
  s += "        %x = memref.load %in[%i] : " + in + "\n";
  s += "        %next = arith.addf %acc, %x : f32\n";
  s += "        scf.yield %next : f32\n";
  s += "      }\n";
  s += "      memref.store %sum, %sh[%tid] : " + sh + "\n";
  s += "      gpu.barrier\n";
  // The tree, one step per halving, unrolled here as a DSL would: every
  // barrier stays outside the divergent scf.if.
  for (int stride = k.block / 2; stride >= 1; stride /= 2) {
    const std::string n = num(stride);
    s += "      %s" + n + " = arith.constant " + n + " : index\n";
    s += "      %p" + n + " = arith.cmpi ult, %tid, %s" + n + " : index\n";
    s += "      scf.if %p" + n + " {\n";
    s += "        %o" + n + " = arith.addi %tid, %s" + n + " : index\n";
    s += "        %u" + n + " = memref.load %sh[%tid] : " + sh + "\n";
    s += "        %v" + n + " = memref.load %sh[%o" + n + "] : " + sh + "\n";
    s += "        %w" + n + " = arith.addf %u" + n + ", %v" + n + " : f32\n";
    s += "        memref.store %w" + n + ", %sh[%tid] : " + sh + "\n";
    s += "      }\n";
    s += "      gpu.barrier\n";
  }
  s += "      %lead = arith.cmpi eq, %tid, %c0 : index\n";
  s += "      scf.if %lead {\n";
  s += "        %total = memref.load %sh[%c0] : " + sh + "\n";
  s += "        memref.store %total, %out[%bid] : " + out + "\n";
  s += "      }\n";
  s += "      gpu.return\n    }\n";
  return s + module_close();
}

std::string render_matmul(const KernelSpec& k) {
  const std::string m = memref_type({k.size, k.size});
  const std::string tile = memref_type({k.tile, k.tile}, 3);
  std::string s = module_open(k.name);
  s += "    gpu.func @" + k.name + "(%A: " + m + ", %B: " + m + ", %C: " + m +
       ") workgroup(%As: " + tile + ", %Bs: " + tile + ") kernel {\n";
  s += "      %bx = gpu.block_id x\n";
  s += "      %by = gpu.block_id y\n";
  s += "      %tx = gpu.thread_id x\n";
  s += "      %ty = gpu.thread_id y\n";
  s += "      %c0 = arith.constant 0 : index\n";
  s += "      %c1 = arith.constant 1 : index\n";
  s += "      %ct = arith.constant " + num(k.tile) + " : index\n";
  s += "      %cs = arith.constant " + num(k.size) + " : index\n";
  s += "      %zero = arith.constant 0.0 : f32\n";
  s += "      %r0 = arith.muli %by, %ct : index\n";
  s += "      %row = arith.addi %r0, %ty : index\n";
  s += "      %q0 = arith.muli %bx, %ct : index\n";
  s += "      %col = arith.addi %q0, %tx : index\n";
  s += "      %acc = scf.for %kt = %c0 to %cs step %ct iter_args(%a = %zero) -> (f32) {\n";
  s += "        %ak = arith.addi %kt, %tx : index\n";
  s += "        %av = memref.load %A[%row, %ak] : " + m + "\n";
  s += "        memref.store %av, %As[%ty, %tx] : " + tile + "\n";
  s += "        %bk = arith.addi %kt, %ty : index\n";
  s += "        %bv = memref.load %B[%bk, %col] : " + m + "\n";
  s += "        memref.store %bv, %Bs[%ty, %tx] : " + tile + "\n";
  s += "        gpu.barrier\n";
  s += "        %part = scf.for %k = %c0 to %ct step %c1 iter_args(%p = %a) -> (f32) {\n";
  s += "          %x = memref.load %As[%ty, %k] : " + tile + "\n";
  s += "          %y = memref.load %Bs[%k, %tx] : " + tile + "\n";
  s += "          %xy = arith.mulf %x, %y : f32\n";
  s += "          %q = arith.addf %p, %xy : f32\n";
  s += "          scf.yield %q : f32\n";
  s += "        }\n";
  s += "        gpu.barrier\n";
  s += "        scf.yield %part : f32\n";
  s += "      }\n";
  s += "      memref.store %acc, %C[%row, %col] : " + m + "\n";
  s += "      gpu.return\n    }\n";
  return s + module_close();
}

std::vector<KernelSpec> family_variants(Family f) {
  std::vector<KernelSpec> out;
  auto add = [&](KernelSpec k) {
    k.family = f;
    k.name = std::string(family_name(f)) + "_" + k.variant;
    out.push_back(std::move(k));
  };
  switch (f) {
    case Family::kAxpy:
      for (int block : {256, 128}) {
        for (int unroll : {1, 2, 4, 8}) {
          KernelSpec k;
          k.unroll = unroll;
          k.block = block;
          k.variant = std::string("u").append(num(unroll)).append("_b").append(num(block));
          k.memrefs = {{{kElements}, false}, {{kElements}, false}, {{kElements}, true}};
          k.scalar_arg = true;
          k.grid[0] = static_cast<unsigned>(kElements / (block * unroll));
          k.block_dim[0] = static_cast<unsigned>(block);
          add(k);
        }
      }
      break;
    case Family::kReduce:
      for (int items : {1, 4}) {
        for (int block : {256, 64, 512, 128}) {
          KernelSpec k;
          k.block = block;
          k.items = items;
          k.variant = std::string("b").append(num(block)).append("_i").append(num(items));
          const std::int64_t blocks = kElements / (block * items);
          k.memrefs = {{{kElements}, false}, {{blocks}, true}};
          k.grid[0] = static_cast<unsigned>(blocks);
          k.block_dim[0] = static_cast<unsigned>(block);
          add(k);
        }
      }
      break;
    case Family::kMatmul:
      for (int size : {256, 512}) {
        for (int tile : {16, 8, 32, 4}) {
          KernelSpec k;
          k.size = size;
          k.tile = tile;
          k.variant = std::string("t").append(num(tile)).append("_s").append(num(size));
          k.memrefs = {{{size, size}, false}, {{size, size}, false}, {{size, size}, true}};
          k.grid[0] = k.grid[1] = static_cast<unsigned>(size / tile);
          k.block_dim[0] = k.block_dim[1] = static_cast<unsigned>(tile);
          add(k);
        }
      }
      break;
  }
  return out;
}

constexpr Family kFamilies[] = {Family::kAxpy, Family::kReduce, Family::kMatmul};

}  // namespace

const char* family_name(Family f) {
  switch (f) {
    case Family::kAxpy: return "axpy";
    case Family::kReduce: return "reduce";
    case Family::kMatmul: return "matmul";
  }
  return "?";
}

int catalogue_size() {
  int n = 0;
  for (Family f : kFamilies) n += static_cast<int>(family_variants(f).size());
  return n;
}

std::vector<KernelSpec> make_kernels(int count) {
  std::vector<std::vector<KernelSpec>> variants;
  for (Family f : kFamilies) variants.push_back(family_variants(f));
  std::vector<KernelSpec> out;
  for (std::size_t round = 0; static_cast<int>(out.size()) < count; ++round) {
    bool any = false;
    for (const std::vector<KernelSpec>& family : variants) {
      if (round >= family.size() || static_cast<int>(out.size()) >= count) continue;
      out.push_back(family[round]);
      out.back().index = static_cast<int>(out.size()) - 1;
      any = true;
    }
    if (!any) break;
  }
  return out;
}

std::string render_mlir(const KernelSpec& k, bool broken) {
  std::string text;
  switch (k.family) {
    case Family::kAxpy: text = render_axpy(k); break;
    case Family::kReduce: text = render_reduce(k); break;
    case Family::kMatmul: text = render_matmul(k); break;
  }
  if (broken) {
    // An f32 value used as an index: the parser's verifier names the line.
    const std::size_t at = text.find("gpu.return");
    text.insert(at, "%bad = arith.addi %c1, %zero_f : index\n      ");
    text.insert(text.find("      %c1 = "), "      %zero_f = arith.constant 1.0 : f32\n");
  }
  return text;
}

}  // namespace mlir_gpu
