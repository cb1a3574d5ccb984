// jitscope-report on a flight-recorder snapshot (issue 39): the head says
// what triggered it and names the unit, and that unit comes first in the
// units table, in the text and JSON forms; a snapshot asked for by call
// names no unit and keeps the usual order.
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace jitscope::testing::report {
namespace {

bool appears(const std::string& path) {
  for (int i = 0; i < 4000 && ::access(path.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ::access(path.c_str(), F_OK) == 0;
}

// The trace's extension: the snapshot's form.
std::string snapshot_of(const Config& cfg, const std::string& ext, int n) {
  return cfg.output_path.substr(0, cfg.output_path.size() - ext.size()) + ".snapshot." +
         std::to_string(::getpid()) + "." + std::to_string(n) + ext;
}

class ReportSnapshot : public ::testing::TestWithParam<std::string> {};

TEST_P(ReportSnapshot, TheTriggeringUnitComesFirstAndTheHeadNamesIt) {
  const std::string ext = GetParam();
  Config cfg = test_config("report_snapshot");
  cfg.output_path.replace(cfg.output_path.size() - 5, 5, ext);
  cfg.flight_recorder_bytes = 1 << 20;
  cfg.snapshot_min_interval = std::chrono::milliseconds(0);
  cfg.snapshot_slow_unit = std::chrono::milliseconds(200);  // far from a fast unit, even preempted
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  { CompileUnit a({.frame = "first"}); }
  std::string slow_id;  // "[3/0]" -> "3/0"
  {
    CompileUnit slow({.frame = "the_slow_one"});
    const std::string shown = slow.id().display();
    slow_id = shown.substr(1, shown.size() - 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  const std::string alarm = snapshot_of(cfg, ext, 1);
  ASSERT_TRUE(appears(alarm));
  { CompileUnit b({.frame = "after"}); }
  ASSERT_TRUE(snapshot().ok());
  const std::string asked = snapshot_of(cfg, ext, 2);
  ASSERT_TRUE(appears(asked));
  session.finish();

  const json rep = report_json({alarm});
  const json& snap = rep["header"]["snapshot"];
  EXPECT_EQ(snap["trigger"].get<std::string>().rfind("slow compile unit [", 0), 0u) << snap;
  const json& units = rep["units"];
  ASSERT_GE(units.size(), 2u) << rep.dump();
  EXPECT_EQ(snap["compile_id"], slow_id);
  EXPECT_EQ(units[0]["compile_id"], slow_id);
  EXPECT_EQ(units[0]["frame"], "the_slow_one");
  EXPECT_NE(units[1]["frame"], "the_slow_one");

  // Its totals are those of the events the snapshot holds, exactly.
  expect_matches(rep, compute(load_events(alarm)), 10);

  const Result text = report({alarm});
  EXPECT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("slow compile unit ["), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(first in the units table)"), std::string::npos) << text.out;

  // By call: no unit named, units by compile id.
  const json plain = report_json({asked});
  EXPECT_EQ(plain["header"]["snapshot"]["trigger"], "api");
  EXPECT_TRUE(plain["header"]["snapshot"]["compile_id"].is_null());
  const json& in_order = plain["units"];
  ASSERT_EQ(in_order.size(), 3u) << plain.dump();
  EXPECT_EQ(in_order[0]["frame"], "first");
  EXPECT_EQ(in_order[1]["frame"], "the_slow_one");
  EXPECT_EQ(in_order[2]["frame"], "after");
}

INSTANTIATE_TEST_SUITE_P(Forms, ReportSnapshot, ::testing::Values(".json", ".pftrace"),
                         [](const auto& info) { return info.param.substr(1); });

}  // namespace
}  // namespace jitscope::testing::report
