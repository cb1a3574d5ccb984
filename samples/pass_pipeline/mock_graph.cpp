// The sample's graphs, from a fixed seed (see mock_graph.hpp).
#include "mock_graph.hpp"

#include <cstdint>
#include <utility>

namespace pass_pipeline {
namespace {

// A fixed-seed generator (the graphs are the same on every run).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint32_t next(std::uint32_t bound) {
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>((s_ >> 33) % bound);
  }

 private:
  std::uint64_t s_;
};

}  // namespace

std::vector<Graph> make_graphs(int count) {
  static const char* const kElementwise[] = {"add", "relu", "mul", "gelu", "softmax"};
  Rng rng(0x5eed);
  std::vector<Graph> graphs;
  for (int i = 0; i < count; ++i) {
    Graph g;
    g.block = "block" + std::to_string(i / 2);
    g.forward = i % 2 == 0;
    g.frame = g.block + (g.forward ? ".fwd" : ".bwd");
    const int layers = 3 + i % 3;
    for (int l = 0; l < layers; ++l) {
      if (rng.next(2) == 0) g.ops.emplace_back("const");
      g.ops.emplace_back("matmul");
      const int elementwise = 1 + static_cast<int>(rng.next(3));
      for (int e = 0; e < elementwise; ++e) g.ops.emplace_back(kElementwise[rng.next(5)]);
      if (rng.next(3) == 0) g.ops.emplace_back("identity");
    }
    if (i == 3) g.fail_kernel = layers - 1;
    graphs.push_back(std::move(g));
  }
  return graphs;
}

}  // namespace pass_pipeline
