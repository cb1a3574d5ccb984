// jitscope-report's self times (tools/report/self_time.hpp): many late
// spans under deep nesting (fast, exact) and exact self times across the
// 16384-span reorder window.
// Not covered here: the reorder window's cap across threads.
#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

namespace {

using namespace jitscope::testing::report;

TEST(ReportSelfTime, ManyLateSpansUnderDeepNestingAreFastAndExact) {
  // D nested spans in start order (the open stack grows to D - 16384), then
  // M late 1 ns spans inside the outermost only: before, each late span
  // walked the whole open stack (quadratic). Here the approximation for a
  // late span (self = its duration, charged to the innermost open span
  // containing it) is also the exact answer, so compute() must match.
  const long long D = 50000, M = 50000, big = 1000000000;
  std::string content = "[";
  content += x_event("outer", 0, big);
  for (long long i = 1; i < D; ++i) content += ",\n" + x_event("nest", M + i, big - 2 * i - M);
  for (long long j = 0; j < M; ++j) content += ",\n" + x_event("late", j, 1);
  content += "]";
  const std::string path = write_temp("report_late", content);
  const auto t0 = std::chrono::steady_clock::now();
  const Result r =
      run({JITSCOPE_REPORT, path, "--format", "json"}, "/dev/null", std::chrono::seconds(60));
  ASSERT_FALSE(r.timed_out) << "the report took over 60 s";
  ASSERT_EQ(r.code, 0) << r.err;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const json rep = json::parse(r.out);
  expect_matches(rep, compute(json::parse(content)), 10);
  EXPECT_EQ(
      rep["header"]["warnings"][0],
      std::to_string(M) + " spans arrived too far out of order for exact self times (approximated)")
      << rep["header"].dump();
  RecordProperty("seconds", std::to_string(secs));
}

TEST(ReportSelfTime, ExactAcrossTheReorderWindow) {
  // Thread 1, written in end order (children first, as jitscope does):
  // N > 16384 children with a grandchild each, then their parent. Every
  // child and grandchild is released in order: exact. The parent comes
  // more than the window late: its self time is its whole duration (the
  // documented approximation), one late span. Thread 2: the same with
  // fewer spans than the window: all exact.
  const long long N = 20000, n2 = 100;
  std::string content = "[";
  bool first = true;
  auto add = [&](const std::string& e) {
    content += (first ? "" : ",\n") + e;
    first = false;
  };
  for (int tid : {1, 2}) {
    const long long n = tid == 1 ? N : n2;
    for (long long i = 0; i < n; ++i) {
      add(x_event(tid == 1 ? "grand" : "grand2", i * 10 + 1, 2, tid));
      add(x_event(tid == 1 ? "child" : "child2", i * 10, 5, tid));
    }
    add(x_event(tid == 1 ? "parent" : "parent2", 0, n * 10, tid));
  }
  content += "]";
  const std::string path = write_temp("report_window", content);
  const json rep = report_json({path});
  std::map<std::string, long long> self;
  for (const json& row : rep["phases"]) self[row["name"]] = row["self_ns"].get<long long>();
  EXPECT_EQ(self["grand"], N * 2);
  EXPECT_EQ(self["child"], N * 3);
  EXPECT_EQ(self["parent"], N * 10);  // late: its whole duration (exact would be N * 5)
  EXPECT_EQ(self["grand2"], n2 * 2);
  EXPECT_EQ(self["child2"], n2 * 3);
  EXPECT_EQ(self["parent2"], n2 * 5);  // within the window: exact
  ASSERT_EQ(rep["header"]["warnings"].size(), 1u) << rep["header"].dump();
  EXPECT_EQ(rep["header"]["warnings"][0],
            "1 spans arrived too far out of order for exact self times (approximated)");
}

}  // namespace
