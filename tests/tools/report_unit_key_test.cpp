// The compare gate matches compile units by their stable identity, end to
// end: a real session compiles the same frames in one order, another
// compiles them in the reverse order on a pool of threads with one frame
// made slower, and `jitscope-report --baseline` flags exactly that frame.
// By name (model__graph_<n>, n in compile order) every unit would read as
// removed plus added, and the slow one would go unflagged or the wrong one
// be flagged.
// Timing: the units sleep (30 ms; the slow one 30 + 90 ms), and the gate
// asks for +100 % and 40 ms, so a sleep that overshoots on a busy machine
// by less than 30 ms cannot flag a unit it should not.
// Not covered: the comparison's statistics (report_compare_test).
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace jitscope::testing::report {
namespace {

using namespace std::chrono_literals;

const std::vector<std::string> kFrames = {"attention", "layernorm", "matmul", "softmax"};

struct RunFiles {
  std::string trace, metrics;
};

void compile_frame(const std::string& frame, std::chrono::milliseconds extra) {
  static const PhaseKey kLower("lower", {.column = "lower_us"});
  CompileUnit unit({.frame = frame});
  Phase lower(kLower);
  std::this_thread::sleep_for(30ms + extra);
}

RunFiles run_session(const std::string& stem, bool reversed, const std::string& slow) {
  reset_compile_state();
  Config cfg = test_config(stem);
  cfg.metrics_path = temp_path(stem + ".metrics");
  RunFiles run{cfg.output_path, cfg.metrics_path};
  ScopedSession session(cfg);
  EXPECT_TRUE(session.status().ok()) << session.status().message();
  std::vector<std::string> order = kFrames;
  if (reversed) std::reverse(order.begin(), order.end());
  const auto cost = [&](const std::string& f) { return f == slow ? 90ms : 0ms; };
  if (!reversed) {
    for (const std::string& f : order) compile_frame(f, cost(f));
  } else {
    // A pool: whichever worker is free takes the next frame.
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (int w = 0; w < 2; ++w) {
      pool.emplace_back([&] {
        for (std::size_t i; (i = next.fetch_add(1)) < order.size();) {
          compile_frame(order[i], cost(order[i]));
        }
      });
    }
    for (std::thread& t : pool) t.join();
  }
  (void)session.finish();
  return run;
}

TEST(ReportUnitKey, TheGateFlagsExactlyTheSlowerFrameWhateverTheCompileOrder) {
  const RunFiles base = run_session("unit_key_base", /*reversed=*/false, "");
  const RunFiles slow = run_session("unit_key_slow", /*reversed=*/true, "matmul");
  const std::vector<std::string> gate = {"--fail-if-slower", "100", "--min-change-ms", "40"};
  std::vector<std::string> args = {"--baseline", base.trace, "--baseline-metrics",
                                   base.metrics, slow.trace, "--metrics",
                                   slow.metrics, "--format", "json"};
  args.insert(args.end(), gate.begin(), gate.end());
  const Result r = report(args);
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  // The verdict names matmul, and no other frame.
  EXPECT_NE(r.err.find("matmul"), std::string::npos) << r.err;
  for (const std::string& other : {"attention", "layernorm", "softmax"}) {
    EXPECT_EQ(r.err.find(other), std::string::npos) << other << " flagged: " << r.err;
  }
  // Every frame is matched across the runs: none reads as removed or added.
  const json rep = json::parse(r.out);
  EXPECT_EQ(rep["comparison"]["added"], 0) << rep["comparison"].dump();
  EXPECT_EQ(rep["comparison"]["removed"], 0) << rep["comparison"].dump();
  std::size_t matched = 0;
  for (const json& u : rep["units"]) {
    for (const std::string& f : kFrames) matched += u["name"] == f ? 1 : 0;
  }
  EXPECT_EQ(matched, kFrames.size()) << rep["units"].dump();

  // The same runs compared with no change but the order: the gate passes.
  const RunFiles again = run_session("unit_key_again", /*reversed=*/true, "");
  args[4] = again.trace;
  args[6] = again.metrics;
  const Result same = report(args);
  EXPECT_EQ(same.code, 0) << same.out << same.err;
}

}  // namespace
}  // namespace jitscope::testing::report
