// The mock IR the pass_pipeline sample compiles: graphs of op kinds with an
// input shape, built from a fixed seed. Separate from the compiler so that
// what is compiled (the same on every run) reads apart from how.
#pragma once

#include <string>
#include <vector>

namespace pass_pipeline {

struct Shape {
  int rows = 8;
  int cols = 16;
  // Appended, not `"[" + std::to_string(...)`: GCC 12 warns (-Wrestrict) on that at -O2, wrongly.
  std::string str() const {
    std::string out = "[";
    out += std::to_string(rows);
    out += ',';
    out += std::to_string(cols);
    out += ']';
    return out;
  }
};

struct Graph {
  std::string block;  // "block0": the outer graph name (GraphNameScope)
  bool forward = true;
  std::string frame;  // "block0.fwd": what is compiled (same frame: a recompile)
  Shape input;
  std::vector<std::string> ops;  // op kinds in program order
  int fail_kernel = -1;          // this kernel's codegen throws (-1: none)
};

// Graph i: block i/2, forward when i is even, 3 + i%3 matmul layers, each with
// optional constants (folded), 1-3 elementwise ops and an optional identity
// (dead code). Every layer becomes one fused kernel; graph 3's last kernel
// fails in codegen.
std::vector<Graph> make_graphs(int count);

}  // namespace pass_pipeline
