// Unexplained time (issue 40): a unit's wall time outside every span on its
// threads, and where its longest such gap sits, on constructed units whose
// gaps are known: the JSON's self_ns and longest_gap, and the units
// section's "unexplained" table (most first, the share, the gap's offset
// from the unit's start). The gaps themselves against a brute force over
// random nestings: report_aggregator_test's SelfTime test.
#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jitscope::testing::report {
namespace {

const json* unit_in(const json& rep, const std::string& cid) {
  for (const json& u : rep["units"]) {
    if (u["compile_id"] == cid) return &u;
  }
  return nullptr;
}

// Unit 0/0, 0-100 ms on thread 1: phases at 10-30 and 50-60 (a pass inside
// the first), so gaps of 10, 20 and 40 ms: 70 unexplained, the longest at
// 60 ms. Unit 1/0, 200-230 ms on thread 2: one phase over all of it but
// 2 ms at its start (2 unexplained, the gap at 0). Unit 2/0: fully covered.
std::string constructed_trace() {
  return trace_of(
      {
          unit_span("0/0", "lower", 10 * kMs, 20 * kMs),
          unit_span("0/0", "InstCombinePass", 12 * kMs, 5 * kMs),
          unit_span("0/0", "codegen", 50 * kMs, 10 * kMs),
          unit_event("0/0", "graph_a", 0, 100 * kMs),
          unit_span("1/0", "lower", 202 * kMs, 28 * kMs, 2),
          unit_event("1/0", "graph_b", 200 * kMs, 30 * kMs, 2),
          unit_span("2/0", "lower", 300 * kMs, 5 * kMs, 3),
          unit_event("2/0", "graph_c", 300 * kMs, 5 * kMs, 3),
      },
      "unexplained");
}

TEST(ReportUnexplained, EachUnitsUnexplainedTimeAndLongestGap) {
  const json rep = report_json({constructed_trace()});
  const json* a = unit_in(rep, "0/0");
  const json* b = unit_in(rep, "1/0");
  const json* c = unit_in(rep, "2/0");
  ASSERT_TRUE(a && b && c) << rep["units"].dump();
  EXPECT_EQ((*a)["self_ns"], 70 * kMs);  // 10 + 20 + 40
  EXPECT_EQ((*a)["longest_gap"]["start_ns"], 60 * kMs);
  EXPECT_EQ((*a)["longest_gap"]["dur_ns"], 40 * kMs);
  EXPECT_EQ((*b)["self_ns"], 2 * kMs);
  EXPECT_EQ((*b)["longest_gap"]["start_ns"], 200 * kMs);
  EXPECT_EQ((*b)["longest_gap"]["dur_ns"], 2 * kMs);
  EXPECT_EQ((*c)["self_ns"], 0);
  EXPECT_TRUE((*c)["longest_gap"].is_null());
}

TEST(ReportUnexplained, TheTableListsTheUnitsWithTheMostFirst) {
  const Result r = report({constructed_trace(), "--section", "units", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::size_t at = r.out.find("# unexplained");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string table = r.out.substr(at);
  // CSV: times in ns; the gap's offset from the unit's start.
  const std::string first = "0/0,graph_a,100000000,70000000,70.0%,40000000,60000000";
  const std::string second = "1/0,graph_b,30000000,2000000,6.7%,2000000,0";
  const std::size_t p1 = table.find(first), p2 = table.find(second);
  EXPECT_NE(p1, std::string::npos) << table;
  EXPECT_NE(p2, std::string::npos) << table;
  EXPECT_LT(p1, p2);
  EXPECT_EQ(table.find("2/0,"), std::string::npos) << "a unit with none is not listed";
}

// A parent's "spawn" slice (note_child_process) at `at` on thread 1 of pid 1.
std::string spawn(long long at, int child_pid) {
  return R"({"ph":"X","cat":"jitscope.process","name":"spawn","pid":1,"tid":1,"ts":)" + us(at) +
         R"(,"dur":0,"args":{"compile_id":"0/0","child_pid":)" + std::to_string(child_pid) +
         R"(,"label":"ptxas"}})";
}

// A merged trace: the parent's unit (pid 1, 0-100 ms on thread 1) has
// phases at 0-10 and 90-100 and spawns three children: pid 2 at 15 ms,
// whose units run 20-45 and 60-70 ms (inside the parent's gap, idle
// between them) and 120-150 ms (after it); pid 3 at 92 ms, whose unit runs
// 92-99 ms inside the parent's "link" phase (no gap to explain); pid 4,
// with no unit in the trace. The parent's gap: 10-90 (the spawn slices, 0
// long, do not split it): 80 ms outside its spans, of which its child's
// 25 + 10 explained; unexplained 45, the longest left 70-90. Then a unit
// on the same thread, 100-200 ms, that spawned nothing: pid 2's unit at
// 120-150 explains none of it.
TEST(ReportUnexplained, AChildProcessesUnitsExplainTheParentsGapAfterMerge) {
  const std::string trace = trace_of(
      {
          unit_span("0/0", "lower", 0, 10 * kMs),
          spawn(15 * kMs, 2),
          in_pid(unit_event("0/0", "child_ptxas", 20 * kMs, 25 * kMs, 20), 2),
          in_pid(unit_event("1/0", "child_second", 60 * kMs, 10 * kMs, 20), 2),
          in_pid(unit_event("2/0", "child_late", 120 * kMs, 30 * kMs, 20), 2),
          spawn(92 * kMs, 3),
          in_pid(unit_event("0/0", "child_fast", 92 * kMs, 7 * kMs, 30), 3),
          spawn(95 * kMs, 4),
          unit_span("0/0", "link", 90 * kMs, 10 * kMs),
          unit_event("0/0", "parent", 0, 100 * kMs),
          unit_event("1/0", "other", 100 * kMs, 100 * kMs),
      },
      "unexplained_children");
  const json rep = report_json({trace});
  const json* parent = nullptr;
  const json* other = nullptr;
  for (const json& u : rep["units"]) {
    if (u["name"] == "parent") parent = &u;
    if (u["name"] == "other") other = &u;
  }
  ASSERT_TRUE(parent && other) << rep["units"].dump();
  EXPECT_EQ((*parent)["self_ns"], 80 * kMs);
  EXPECT_EQ((*parent)["in_children_ns"], 35 * kMs);
  EXPECT_EQ((*parent)["unexplained_ns"], 45 * kMs);
  EXPECT_EQ((*parent)["longest_gap"]["start_ns"], 70 * kMs);
  EXPECT_EQ((*parent)["longest_gap"]["dur_ns"], 20 * kMs);
  EXPECT_EQ((*other)["self_ns"], 100 * kMs);
  EXPECT_EQ((*other)["in_children_ns"], 0);
  EXPECT_EQ((*other)["longest_gap"]["start_ns"], 100 * kMs);
  EXPECT_EQ((*other)["longest_gap"]["dur_ns"], 100 * kMs);

  const Result r = report({trace, "--section", "units", "--format", "csv"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string table = r.out.substr(r.out.find("# unexplained"));
  EXPECT_NE(table.find("in_children_ns"), std::string::npos) << table;
  // The other unit (100 ms, no spans) first, the parent's 45 after it.
  const std::size_t child = table.find(",other,100000000,100000000,,100.0%");
  const std::size_t parent_row =
      table.find(",parent,100000000,45000000,35000000,45.0%,20000000,70000000");
  EXPECT_NE(child, std::string::npos) << table;
  EXPECT_NE(parent_row, std::string::npos) << table;
  EXPECT_LT(child, parent_row);
}

}  // namespace
}  // namespace jitscope::testing::report
