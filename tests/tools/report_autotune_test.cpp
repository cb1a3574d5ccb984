// Autotuning accounted (issue 40): jitscope::Autotune in a real session, and
// jitscope-report's autotune section read back as JSON. The expected figures
// are worked out here, from a scripted trace whose times are known (compile
// and benchmark sums, wall time, time to the winner, time on trials that
// did not win), and from the instants a real session wrote (read with
// nlohmann, not the report's reader), in both trace forms.
#include "autotune_support.hpp"
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/autotune.hpp>
#include <jitscope/compile.hpp>

#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing::report {
namespace {

// An autotune instant on `pid` at `ts` ns, args {tune, trial (>= 0), more}.
std::string tune_event(const std::string& what, long long ts, int tune, int trial,
                       const std::string& more = "", int pid = 1) {
  std::string args = R"("tune":)" + std::to_string(tune);
  if (trial >= 0) args += R"(,"trial":)" + std::to_string(trial);
  if (!more.empty()) args += "," + more;
  return R"({"ph":"i","s":"t","name":"autotune_)" + what + R"(","pid":)" + std::to_string(pid) +
         R"(,"tid":1,"ts":)" + us(ts) + R"(,"args":{)" + args + "}}";
}

// A step ending at `end` ns, `ns` long.
std::string step(long long end, int tune, int trial, const char* which, long long ns, int pid = 1) {
  return tune_event("step", end, tune, trial,
                    R"("step":")" + std::string(which) + R"(","ns":)" + std::to_string(ns), pid);
}

TEST(ReportAutotune, ScriptedSessionsGiveTheirSumsWinnerAndWaste) {
  const long long ms = 1'000'000;
  // Session 1 (pid 1, "matmul"): from 10 ms to 100 ms. Trial 0 compiles 5 ms
  // and benchmarks 2 ms; trial 1 (the winner) compiles 6 ms, benchmarks 3 ms
  // then 1 ms more, its last step ending at 60 ms; trial 2's compile is unit
  // 0/0 (a 20 ms slice ending at 40 ms) and it benchmarks 4 ms; trial 3
  // failed to build after 1 ms.
  // Session 2 (pid 2, "softmax", same tune id): no end in the trace, no
  // winner; two trials of 7 ms and 8 ms.
  const std::vector<std::string> events = {
      tune_event("start", 10 * ms, 1, -1, R"("kernel":"matmul")"),
      tune_event("trial", 11 * ms, 1, 0, R"("config":"block=64, warps=2","block":64,"warps":2)"),
      step(16 * ms, 1, 0, "compile", 5 * ms),
      step(18 * ms, 1, 0, "benchmark", 2 * ms),
      tune_event("result", 18 * ms, 1, 0, R"("value":12.5)"),
      tune_event("trial", 19 * ms, 1, 1, R"("config":"block=128, warps=4")"),
      step(25 * ms, 1, 1, "compile", 6 * ms),
      step(28 * ms, 1, 1, "benchmark", 3 * ms),
      tune_event("trial", 29 * ms, 1, 2, R"("config":"block=256, warps=8")"),
      unit_event("0/0", "matmul_b256", 20 * ms, 20 * ms),
      tune_event("compiled_by", 41 * ms, 1, 2, R"("compile_id":"0/0")"),
      step(45 * ms, 1, 2, "benchmark", 4 * ms),
      tune_event("result", 45 * ms, 1, 2, R"("value":9.75)"),
      step(60 * ms, 1, 1, "benchmark", 1 * ms),
      tune_event("result", 60 * ms, 1, 1, R"("value":7.25)"),
      tune_event("trial", 61 * ms, 1, 3, R"("config":"block=512, warps=16")"),
      step(62 * ms, 1, 3, "compile", 1 * ms),
      tune_event("failed", 62 * ms, 1, 3, R"("reason":"too many registers")"),
      tune_event("winner", 63 * ms, 1, 1),
      tune_event("end", 100 * ms, 1, -1, R"("trials":4)"),
      tune_event("start", 5 * ms, 1, -1, R"("kernel":"softmax")", 2),
      tune_event("trial", 6 * ms, 1, 0, R"("config":"rows=1")", 2),
      step(13 * ms, 1, 0, "compile", 7 * ms, 2),
      tune_event("trial", 14 * ms, 1, 1, R"("config":"rows=2")", 2),
      step(22 * ms, 1, 1, "benchmark", 8 * ms, 2),
      // Another tool's instant of the name, without a tune id: not counted.
      R"({"ph":"i","s":"t","name":"autotune_start","pid":1,"tid":1,"ts":1.0,"args":{"x":1}})",
  };
  const json rep = report_json({trace_of(events, "autotune"), "--section", "autotune"});
  ASSERT_TRUE(rep.contains("autotune")) << rep.dump();
  ASSERT_EQ(rep["autotune"].size(), 2u) << rep.dump(1);

  const json& a = rep["autotune"][0];  // with a wall time: first
  EXPECT_EQ(a["kernel"], "matmul");
  EXPECT_EQ(a["pid"], 1);
  EXPECT_EQ(a["trials"], 4);
  EXPECT_EQ(a["compile_ns"], (5 + 6 + 20 + 1) * ms);
  EXPECT_EQ(a["benchmark_ns"], (2 + 3 + 4 + 1) * ms);
  EXPECT_EQ(a["wall_ns"], 90 * ms);
  EXPECT_EQ(a["time_to_winner_ns"], (60 - 10) * ms);
  EXPECT_EQ(a["not_won_ns"], (5 + 2) * ms + (20 + 4) * ms + 1 * ms);
  EXPECT_EQ(a["winner"], 1);
  EXPECT_EQ(a["winner_config"], "block=128, warps=4");
  ASSERT_EQ(a["trial_rows"].size(), 4u);
  const json& t2 = a["trial_rows"][2];
  EXPECT_EQ(t2["compile_ns"], 20 * ms);
  EXPECT_EQ(t2["units"], json::array({"0/0"}));
  EXPECT_EQ(t2["units_missing"], 0);
  EXPECT_DOUBLE_EQ(t2["result"].get<double>(), 9.75);
  EXPECT_EQ(a["trial_rows"][1]["winner"], true);
  EXPECT_EQ(a["trial_rows"][0]["config"], "block=64, warps=2");
  EXPECT_EQ(a["trial_rows"][3]["failed"], "too many registers");
  EXPECT_TRUE(a["trial_rows"][3]["result"].is_null());

  const json& b = rep["autotune"][1];
  EXPECT_EQ(b["kernel"], "softmax");
  EXPECT_EQ(b["pid"], 2);
  EXPECT_EQ(b["trials"], 2);
  EXPECT_TRUE(b["wall_ns"].is_null());
  EXPECT_TRUE(b["time_to_winner_ns"].is_null());
  EXPECT_TRUE(b["winner"].is_null());
  EXPECT_EQ(b["not_won_ns"], (7 + 8) * ms);

  // The table form names the winner and the failure.
  const Result text = report({trace_of(events, "autotune_text"), "--section", "autotune"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("#1 block=128, warps=4"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("failed: too many registers"), std::string::npos) << text.out;
}

// A unit shared by trials counts once in the session, and not as time not
// won when the winner shares it; each trial's own row still shows it.
TEST(ReportAutotune, AUnitSharedByTrialsCountsOnce) {
  const long long ms = 1'000'000;
  const std::vector<std::string> events = {
      tune_event("start", 0, 7, -1, R"("kernel":"fused")"),
      unit_event("0/0", "fused_all", 1 * ms, 20 * ms),
      unit_event("1/0", "fused_alone", 21 * ms, 5 * ms, 2),
      tune_event("trial", 30 * ms, 7, 0, R"("config":"a=0")"),
      tune_event("trial", 30 * ms, 7, 1, R"("config":"a=1")"),
      tune_event("trial", 30 * ms, 7, 2, R"("config":"a=2")"),
      tune_event("compiled_by", 31 * ms, 7, 0, R"("compile_id":"0/0")"),
      tune_event("compiled_by", 31 * ms, 7, 1, R"("compile_id":"0/0")"),
      tune_event("compiled_by", 31 * ms, 7, 2, R"("compile_id":"1/0")"),
      step(33 * ms, 7, 0, "benchmark", 2 * ms),
      step(36 * ms, 7, 1, "benchmark", 3 * ms),
      step(40 * ms, 7, 2, "benchmark", 4 * ms),
      tune_event("winner", 41 * ms, 7, 1),
      tune_event("end", 50 * ms, 7, -1),
  };
  const json rep = report_json({trace_of(events, "autotune_shared"), "--section", "autotune"});
  ASSERT_EQ(rep["autotune"].size(), 1u) << rep.dump(1);
  const json& a = rep["autotune"][0];
  EXPECT_EQ(a["compile_ns"], (20 + 5) * ms);  // 0/0 once, 1/0 once
  EXPECT_EQ(a["benchmark_ns"], (2 + 3 + 4) * ms);
  EXPECT_EQ(a["not_won_ns"], 2 * ms + (5 + 4) * ms);  // 0/0 is the winner's too
  EXPECT_EQ(a["time_to_winner_ns"], 36 * ms);
  for (int i : {0, 1}) EXPECT_EQ(a["trial_rows"][i]["compile_ns"], 20 * ms) << i;
}

// Text a hand-made trace makes as long as it likes is kept cut at 1 KiB,
// never inside a character, then "…".
TEST(ReportAutotune, LongTextIsKeptCutAtOneKibibyte) {
  const std::string kernel(3000, 'k');
  std::string config = "x";  // then 1,000 two-byte characters: byte 1,024 is inside one
  for (int i = 0; i < 1000; ++i) config += "\xC3\xA9";  // é
  const std::string reason(5000, 'r');
  const std::vector<std::string> events = {
      tune_event("start", 0, 4, -1, R"("kernel":")" + kernel + "\""),
      tune_event("trial", 1000, 4, 0, R"("config":")" + config + "\""),
      tune_event("trial", 2000, 4, 1, R"("config":"short")"),
      tune_event("failed", 3000, 4, 1, R"("reason":")" + reason + "\""),
      tune_event("end", 4000, 4, -1),
  };
  const json rep = report_json({trace_of(events, "autotune_long"), "--section", "autotune"});
  ASSERT_EQ(rep["autotune"].size(), 1u) << rep.dump(1);
  const json& a = rep["autotune"][0];
  EXPECT_EQ(a["kernel"], std::string(1024, 'k') + "\xE2\x80\xA6");
  // 1 + 511 * 2 = 1,023 bytes: the character at 1,023-1,024 is left out whole.
  EXPECT_EQ(a["trial_rows"][0]["config"], config.substr(0, 1023) + "\xE2\x80\xA6");
  EXPECT_EQ(a["trial_rows"][1]["config"], "short");
  EXPECT_EQ(a["trial_rows"][1]["failed"], std::string(1024, 'r') + "\xE2\x80\xA6");
}

// A session's trials past the kept 10,000 still count in its sums, as
// trials and as time, but not as rows.
TEST(ReportAutotune, TrialsPastTheKeptOnesStillCount) {
  const long long ms = 1'000'000;
  const int kTrials = 10'003;
  std::vector<std::string> events = {tune_event("start", 0, 3, -1, R"("kernel":"many")")};
  for (int i = 0; i < kTrials; ++i) {
    events.push_back(
        tune_event("trial", i * ms, 3, i, R"("config":"i=)" + std::to_string(i) + "\""));
    events.push_back(step(i * ms + ms, 3, i, "compile", ms));
  }
  events.push_back(
      tune_event("compiled_by", kTrials * ms, 3, kTrials - 1, R"("compile_id":"0/0")"));
  events.push_back(unit_event("0/0", "late", kTrials * ms, 7 * ms));
  events.push_back(tune_event("winner", kTrials * ms, 3, 2));
  events.push_back(tune_event("end", (kTrials + 10) * ms, 3, -1));
  const json rep = report_json({trace_of(events, "autotune_many"), "--section", "autotune"});
  ASSERT_EQ(rep["autotune"].size(), 1u);
  const json& a = rep["autotune"][0];
  EXPECT_EQ(a["trials"], kTrials);
  EXPECT_EQ(a["trials_not_kept"], 3);
  EXPECT_EQ(a["trial_rows"].size(), 10'000u);
  EXPECT_EQ(a["compile_ns"], kTrials * ms + 7 * ms);  // the last trial's unit too
  EXPECT_EQ(a["not_won_ns"], (kTrials - 1) * ms + 7 * ms);
  EXPECT_EQ(a["time_to_winner_ns"], 3 * ms);
}

TEST(ReportAutotune, ARealSessionsFiguresAreItsInstants) {
  for (const TraceFormat format : {TraceFormat::kJson, TraceFormat::kPerfetto}) {
    const bool is_json = format == TraceFormat::kJson;
    SCOPED_TRACE(is_json ? "json" : "perfetto");
    const std::string trace = temp_path(is_json ? "autotune.json" : "autotune.pftrace");
    run_tuning(trace_config(trace, format));
    const json rep = report_json({trace, "--section", "autotune,units"});
    ASSERT_EQ(rep["autotune"].size(), 1u) << rep.dump(1);
    const json& a = rep["autotune"][0];
    EXPECT_EQ(a["kernel"], "gemm");
    EXPECT_EQ(a["trials"], 3);
    EXPECT_EQ(a["winner"], 1);
    EXPECT_EQ(a["winner_config"], "block=128, fast_math=true");
    EXPECT_EQ(a["trial_rows"][0]["config"], "block=64, fast_math=false");
    EXPECT_DOUBLE_EQ(a["trial_rows"][2]["result"].get<double>(), 8.0);
    ASSERT_EQ(rep["units"].size(), 1u);
    const long long unit_wall = rep["units"][0]["wall_ns"].get<long long>();
    EXPECT_EQ(a["trial_rows"][2]["units"], json::array({rep["units"][0]["compile_id"]}));
    if (!is_json) continue;  // the instants are read from the JSON form
    Written w = read_written(load_events(trace));
    ASSERT_EQ(w.trials, 3);
    EXPECT_EQ(w.compile[2], 0);  // its compile is the unit alone
    long long compile = unit_wall, benchmark = 0, not_won = unit_wall;
    for (int i = 0; i < 3; ++i) {
      compile += w.compile[i];
      benchmark += w.benchmark[i];
      if (i != 1) not_won += w.compile[i] + w.benchmark[i];
      EXPECT_EQ(a["trial_rows"][i]["benchmark_ns"], w.benchmark[i]) << i;
    }
    EXPECT_GE(w.compile[0], 300'000);
    EXPECT_EQ(a["compile_ns"], compile);
    EXPECT_EQ(a["benchmark_ns"], benchmark);
    EXPECT_EQ(a["not_won_ns"], not_won);
    EXPECT_EQ(a["wall_ns"], w.end - w.start);
    EXPECT_EQ(a["time_to_winner_ns"], w.last_end[1] - w.start);
  }
}

// A tuning session outlives the jitscope session it began in: the next
// session gets none of its events.
TEST(ReportAutotune, ALaterSessionGetsNothingOfAnEarlierTuningSession) {
  std::optional<Autotune> tune;
  AutotuneTrial trial;
  {
    ScopedSession first(test_config("autotune_first"));
    ASSERT_TRUE(first.status().ok()) << first.status().message();
    tune.emplace("early");
    trial = tune->trial({{"x", 1}});
    ASSERT_NE(tune->id(), 0u);
  }
  ScopedSession second(test_config("autotune_second"));
  ASSERT_TRUE(second.status().ok()) << second.status().message();
  { AutotuneStep c = trial.compile(); }
  trial.result(1.0);
  trial.failed("late");
  trial.compiled_by(CompileId{});
  tune->winner(trial);
  (void)tune->trial({{"x", 2}});
  tune.reset();  // its end
  instant("marker");
  (void)second.finish();
  int markers = 0;
  for (const json& e : load_trace(second.path())) {
    const std::string name = e.value("name", "");
    markers += name == "marker";
    EXPECT_NE(name.rfind("autotune", 0), 0u) << e.dump();
  }
  EXPECT_EQ(markers, 1);
}

// No session: nothing recorded, and every call is harmless.
TEST(ReportAutotune, WithoutASessionNothingIsRecorded) {
  Autotune tune("idle");
  EXPECT_EQ(tune.id(), 0u);
  AutotuneTrial t = tune.trial({{"x", 1}});
  EXPECT_EQ(t.index(), 0u);
  { auto c = t.compile(); }
  t.result(1.0);
  t.failed("no");
  t.compiled_by(CompileId{});
  tune.winner(t);
  EXPECT_EQ(tune.trials(), 1u);
}

}  // namespace
}  // namespace jitscope::testing::report
