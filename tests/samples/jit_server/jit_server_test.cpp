// The jit_server sample end to end (ctest label: sample): a flight-recorder
// server leaves exactly the snapshots its triggers promise.
//
//   JitServer.LeavesOneSnapshotPerCompileWhileServing   a fresh cache: four
//       warm-up compiles say nothing; the three shapes that arrive while
//       serving each give a "compile while serving" line at their open and
//       one snapshot, in order, each holding its unit; the pathological one
//       is a "slow compile unit" snapshot (one, not two); no trace file; one
//       metrics record per compile; jitscope-report puts the slow unit first
//   JitServer.AWarmCacheStillSaysTheCompilesWhileServing   the same cache
//       again: every compile is a cache hit, none is slow, and the three
//       arrivals are still compiles while serving (the units open)
//
// Durations are real: the slow threshold (1 s) sits far from both kinds of
// compile (about 55 ms, the first about 140 ms with NVRTC's own start, and
// 300 ms once under a loaded CI; the pathological one about 3 s),
// and the arrivals are 10 requests of 20 ms apart, two flush intervals, so
// that no two compiles' snapshots are one (requests that reach one flusher
// cycle are one file, by design).
#include "samples/sample_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#ifndef JITSCOPE_JIT_SERVER
#error "JITSCOPE_JIT_SERVER must name the jitscope_jit_server binary"
#endif

namespace {

using namespace sample_support;  // NOLINT(google-build-using-namespace): test helpers

// The snapshots the run left, by number.
std::vector<fs::path> snapshots_in(const fs::path& dir, int pid) {
  std::vector<fs::path> out;
  for (int n = 1; n < 100; ++n) {
    const fs::path p =
        dir / ("run.trace.snapshot." + std::to_string(pid) + "." + std::to_string(n) + ".json");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

std::string trigger_of(const json& trace) {
  for (const json& e : trace) {
    if (str(e, "ph") == "M" && str(e, "name") == "jitscope_snapshot") return e["args"]["trigger"];
  }
  return {};
}

bool holds_unit(const json& trace, const std::string& frame) {
  for (const json& e : trace) {
    if (str(e, "ph") == "X" && e.contains("args") && str(e["args"], "frame") == frame) return true;
  }
  return false;
}

SampleRun serve(const fs::path& dir, const std::string& tag, const fs::path& cache, int* pid) {
  Started s = start_sample(JITSCOPE_JIT_SERVER, dir, tag,
                           {"--cache", cache.string(), "--requests", "40", "--request-us", "20000",
                            "--slow-unit-ms", "1000"});
  *pid = s.pid;
  return finish(s);
}

struct Expected {
  std::string trigger_head, frame;
};

void expect_snapshots(const fs::path& dir, int pid, const std::vector<Expected>& expected) {
  const std::vector<fs::path> snaps = snapshots_in(dir, pid);
  ASSERT_EQ(snaps.size(), expected.size());
  for (std::size_t i = 0; i < snaps.size(); ++i) {
    SCOPED_TRACE(snaps[i].string());
    const json trace = load_trace(snaps[i]);
    const std::string trigger = trigger_of(trace);
    EXPECT_EQ(trigger.rfind(expected[i].trigger_head, 0), 0u) << trigger;
    EXPECT_NE(trigger.find("(frame " + expected[i].frame + ")"), std::string::npos) << trigger;
    EXPECT_EQ(trigger.find("more)"), std::string::npos) << trigger;  // one request a file
    EXPECT_TRUE(holds_unit(trace, expected[i].frame));
  }
}

TEST(JitServer, LeavesOneSnapshotPerCompileWhileServing) {
  const fs::path dir = test_dir("jit_server_", "fresh");
  int pid = 0;
  const SampleRun r = serve(dir, "run", dir / "cache", &pid);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("compiles:         4 in warm-up, 3 while serving (0 failed)"),
            std::string::npos)
      << r.describe();
  EXPECT_NE(r.out.find("snapshots:        3 written, 0 refused"), std::string::npos)
      << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "opened after mark_ready() in serve_request"), 3)
      << r.describe();
  for (const char* warm : {"scale_128x128", "scale_256x256", "scale_512x128", "scale_1024x64"}) {
    EXPECT_EQ(r.err.find(std::string("(frame ") + warm + ")"), std::string::npos) << warm;
  }
  EXPECT_EQ(count_lines_with(r.err, "jitscope: slow compile unit ["), 1) << r.describe();
  expect_snapshots(dir, pid,
                   {{"compile while serving: unit [", "scale_384x384"},
                    {"slow compile unit [", "generated_2048x2048"},
                    {"compile while serving: unit [", "scale_96x4096"}});
  EXPECT_FALSE(fs::exists(r.trace)) << "a flight recorder writes no trace file";
  EXPECT_EQ(read_json_lines(r.metrics).size(), 7u);

  // The report on the slow one's snapshot: that unit first.
  const fs::path slow = snapshots_in(dir, pid).at(1);
  const SampleRun rep =
      run_program(dir, "report", {JITSCOPE_REPORT, slow.string(), "--format", "json"});
  ASSERT_EQ(rep.exit_code, 0) << rep.describe();
  const json report = json::parse(rep.out);
  EXPECT_EQ(report["units"][0]["frame"], "generated_2048x2048");
  EXPECT_EQ(report["header"]["snapshot"]["compile_id"], report["units"][0]["compile_id"]);
}

TEST(JitServer, AWarmCacheStillSaysTheCompilesWhileServing) {
  const fs::path dir = test_dir("jit_server_", "warm");
  int pid = 0;
  const SampleRun first = serve(dir, "first", dir / "cache", &pid);
  ASSERT_EQ(first.exit_code, 0) << first.describe();
  const SampleRun r = serve(dir, "run", dir / "cache", &pid);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "jitscope: slow compile unit ["), 0) << r.describe();
  expect_snapshots(dir, pid,
                   {{"compile while serving: unit [", "scale_384x384"},
                    {"compile while serving: unit [", "generated_2048x2048"},
                    {"compile while serving: unit [", "scale_96x4096"}});
  for (const json& rec : read_json_lines(r.metrics)) {
    EXPECT_EQ(rec["caches"]["disk_cache"]["hits"], 1) << rec.dump();
  }
}

}  // namespace
