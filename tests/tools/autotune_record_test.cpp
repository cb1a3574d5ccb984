// A tuning session's metrics record (issue 40): one "record":"autotune" line
// per jitscope::Autotune in the metrics file, its figures the ones the
// trace's instants hold (read with nlohmann, summed here), and
// jitscope-report --metrics counting it apart from the runtime records.
#include "autotune_support.hpp"
#include "compile/autotune_ledger.hpp"
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/autotune.hpp>
#include <jitscope/compile.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing::report {
namespace {

std::vector<json> autotune_records(const std::string& metrics) {
  std::vector<json> out;
  for (json& r : read_json_lines(metrics)) {
    if (r.value("record", "") == "autotune") out.push_back(std::move(r));
  }
  return out;
}

Config with_metrics(const std::string& stem) {
  Config cfg = trace_config(temp_path(stem + ".json"), TraceFormat::kJson);
  cfg.metrics_path = temp_path(stem + ".metrics.jsonl");
  return cfg;
}

// The record's wall and time to the winner convert a difference of TSC
// readings with the session's calibration when it ends; the trace's times
// each reading with the flusher's when it wrote them. The two agree to a
// fraction of a part per million (3 ns in 12 ms seen); 100 ppm, where a
// step missed or counted twice would be off by 100 µs or more.
bool near(long long record, long long trace) {
  const long long diff = record > trace ? record - trace : trace - record;
  return diff <= 2 + trace / 10'000;
}

TEST(AutotuneRecord, ARealSessionsRecordIsItsInstants) {
  const Config cfg = with_metrics("autotune_record");
  CompileId unit;
  run_tuning(cfg, &unit);
  const Written w = read_written(load_events(cfg.output_path));
  ASSERT_EQ(w.trials, 3);
  const std::vector<json> records = autotune_records(cfg.metrics_path);
  ASSERT_EQ(records.size(), 1u);
  const json& r = records[0];
  EXPECT_TRUE(r["compile_id"].is_null()) << "not a unit's record";
  EXPECT_FALSE(r.contains("unit")) << "not made inside a unit";
  EXPECT_EQ(r["kernel"], "gemm");
  EXPECT_EQ(r["trials"], 3);
  EXPECT_EQ(r["failed"], 0);
  EXPECT_EQ(r["winner"], 1);
  EXPECT_EQ(r["winner_config"], "block=128, fast_math=true");
  EXPECT_DOUBLE_EQ(r["winner_result"].get<double>(), 9.0);
  long long compile = 0, benchmark = 0, not_won = 0;
  ASSERT_EQ(r["trial_rows"].size(), 3u);
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const json& row = r["trial_rows"][static_cast<std::size_t>(i)];
    compile += w.compile.count(i) ? w.compile.at(i) : 0;
    benchmark += w.benchmark.at(i);
    if (i != 1) not_won += (w.compile.count(i) ? w.compile.at(i) : 0) + w.benchmark.at(i);
    EXPECT_EQ(row["trial"], i);
    EXPECT_EQ(row["benchmark_ns"], w.benchmark.at(i));
    EXPECT_DOUBLE_EQ(row["result"].get<double>(), 10.0 - i);
    EXPECT_FALSE(row.contains("failed"));
  }
  EXPECT_EQ(r["trial_rows"][0]["config"], "block=64, fast_math=false");
  EXPECT_EQ(r["trial_rows"][2]["compile_steps_ns"], 0) << "its compile is its unit's own record";
  EXPECT_EQ(r["trial_rows"][2]["units"], json::array({unit.str()}));
  EXPECT_GE(compile, 900'000);    // 300 + 600 µs slept
  EXPECT_GE(benchmark, 600'000);  // 3 x 200 µs
  EXPECT_EQ(r["compile_steps_ns"], compile);
  EXPECT_EQ(r["benchmark_ns"], benchmark);
  EXPECT_EQ(r["not_won_steps_ns"], not_won);
  EXPECT_PRED2(near, r["wall_ns"].get<long long>(), w.end - w.start);
  EXPECT_PRED2(near, r["winner_last_step_ns"].get<long long>(), w.last_end.at(1) - w.start);
  EXPECT_LE(r["start_time_us"].get<long long>(), r["end_time_us"].get<long long>());
  EXPECT_FALSE(r.contains("trial_rows_dropped"));
  EXPECT_EQ(detail::ledger_open_count(), 0u);

  // The report with the metrics file: a tuning session's record, not a
  // runtime one, and the unit still joined to its own record.
  const json rep = report_json({cfg.output_path, "--metrics", cfg.metrics_path});
  EXPECT_EQ(rep["header"]["metrics"]["autotune_records"], 1) << rep["header"].dump();
  EXPECT_EQ(rep["header"]["metrics"]["runtime_records"], 0) << rep["header"].dump();
  EXPECT_EQ(rep["header"]["metrics"]["units"], 1) << rep["header"].dump();
}

// Made inside a unit: the record names it. A failed trial's reason is its
// row's; with no winner, every trial's time is time not won.
TEST(AutotuneRecord, AFailedTrialAndNoWinnerInsideAUnit) {
  const Config cfg = with_metrics("autotune_record_failed");
  CompileId outer;
  {
    reset_compile_state();
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    CompileUnit unit({.frame = "tuning"});
    outer = unit.id();
    Autotune tune("softmax");
    const AutotuneTrial a = tune.trial({{"rows", 1}});
    const AutotuneTrial b = tune.trial({{"rows", 2}});
    { auto c = a.compile(); }
    { auto c = b.compile(); }
    b.failed("too many registers");
  }
  const Written w = read_written(load_events(cfg.output_path));
  const std::vector<json> records = autotune_records(cfg.metrics_path);
  ASSERT_EQ(records.size(), 1u);
  const json& r = records[0];
  EXPECT_EQ(r["unit"], outer.str());
  EXPECT_EQ(r["failed"], 1);
  EXPECT_TRUE(r["winner"].is_null());
  EXPECT_FALSE(r.contains("winner_last_step_ns"));
  EXPECT_EQ(r["trial_rows"][1]["failed"], "too many registers");
  EXPECT_FALSE(r["trial_rows"][0].contains("failed"));
  EXPECT_EQ(r["not_won_steps_ns"], w.compile.at(0) + w.compile.at(1));
  EXPECT_EQ(r["compile_steps_ns"], r["not_won_steps_ns"]);
  EXPECT_EQ(r["benchmark_ns"], 0);
}

// Trials past the rows kept still count in the sums; a winner past them
// still has its time to the winner, without its config.
TEST(AutotuneRecord, TrialsPastTheRowsKeptCountInTheSums) {
  const Config cfg = with_metrics("autotune_record_many");
  constexpr int kTrials = 1003;
  {
    reset_compile_state();
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    Autotune tune("many");
    AutotuneTrial last;
    for (int i = 0; i < kTrials; ++i) {
      last = tune.trial({{"i", i}});
      auto c = last.compile();
    }
    tune.winner(last);
  }
  const Written w = read_written(load_events(cfg.output_path));
  ASSERT_EQ(w.trials, kTrials);
  long long compile = 0;
  for (const auto& [trial, ns] : w.compile) compile += ns;
  const std::vector<json> records = autotune_records(cfg.metrics_path);
  ASSERT_EQ(records.size(), 1u);
  const json& r = records[0];
  EXPECT_EQ(r["trials"], kTrials);
  EXPECT_EQ(r["trial_rows"].size(), 1000u);
  EXPECT_EQ(r["trial_rows_dropped"], kTrials - 1000);
  EXPECT_EQ(r["compile_steps_ns"], compile);
  EXPECT_EQ(r["not_won_steps_ns"], compile - w.compile.at(kTrials - 1));
  EXPECT_EQ(r["winner"], kTrials - 1);
  EXPECT_FALSE(r.contains("winner_config"));
  EXPECT_PRED2(near, r["winner_last_step_ns"].get<long long>(),
               w.last_end.at(kTrials - 1) - w.start);
}

// A tuning session whose jitscope session stopped before it ended writes
// no record, nor into the next session's file; a step ended after its
// Autotune is gone (on the session still on) is harmless and counted
// nowhere; and the ledger forgets every one of them.
TEST(AutotuneRecord, NoRecordOnceItsSessionStoppedAndNothingKept) {
  std::optional<Autotune> tune;
  AutotuneTrial trial;
  const Config first = with_metrics("autotune_record_first");
  {
    ScopedSession session(first);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    tune.emplace("early");
    trial = tune->trial({{"x", 1}});
    EXPECT_EQ(detail::ledger_open_count(), 1u);
  }
  const Config second = with_metrics("autotune_record_second");
  {
    ScopedSession session(second);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    tune.reset();  // its session stopped: forgotten, not written
    EXPECT_EQ(detail::ledger_open_count(), 0u);
    std::optional<AutotuneStep> late;
    {
      Autotune kept("kept");
      late.emplace(kept.trial({{"y", 2}}).compile());
    }
    late.reset();  // after its Autotune, inside the session
    EXPECT_EQ(detail::ledger_open_count(), 0u);
  }
  EXPECT_TRUE(autotune_records(first.metrics_path).empty());
  const std::vector<json> records = autotune_records(second.metrics_path);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["kernel"], "kept");
  EXPECT_EQ(records[0]["compile_steps_ns"], 0) << "its step ended after it";
  EXPECT_EQ(records[0]["trials"], 1);
}

// Without a metrics file nothing is kept; text past 1 KiB is cut between
// characters, and a trial keeps its first 64 units.
TEST(AutotuneRecord, NothingKeptWithoutAMetricsFileAndTextIsBounded) {
  {
    ScopedSession session(test_config("autotune_record_no_metrics"));
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    Autotune tune("unkept");
    (void)tune.trial({{"x", 1}});
    EXPECT_EQ(detail::ledger_open_count(), 0u);
  }
  const Config cfg = with_metrics("autotune_record_bounded");
  std::string kernel(1023, 'k');
  kernel += "\xC3\xA9tail";  // a 2-byte character across the 1,024th byte
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    Autotune tune(kernel);
    const AutotuneTrial t = tune.trial({{"x", 1}});
    for (std::uint32_t i = 0; i < 70; ++i) t.compiled_by(CompileId{i, 0});
    t.failed(std::string(5000, 'r'));
  }
  const std::vector<json> records = autotune_records(cfg.metrics_path);
  ASSERT_EQ(records.size(), 1u);
  const json& r = records[0];
  EXPECT_EQ(r["kernel"], std::string(1023, 'k') + "\xE2\x80\xA6");
  EXPECT_EQ(r["trial_rows"][0]["units"].size(), 64u);
  EXPECT_EQ(r["trial_rows"][0]["units"][63], "63/0");
  EXPECT_EQ(r["trial_rows"][0]["units_not_kept"], 6);
  EXPECT_EQ(r["trial_rows"][0]["failed"], std::string(1024, 'r') + "\xE2\x80\xA6");
}

// The timeline's slices: the session and each step on tracks of their own
// (async b/e pairs), spanning their time, though the thread wrote other
// spans meanwhile. Written on the thread as spans after the fact, the
// writer had started each after the thread's last event: the session's
// came out 0 ns long, and a step's began where its inner span ended.
TEST(AutotuneRecord, TheSessionAndItsStepsSpanTheirTimeOnTracksOfTheirOwn) {
  const Config cfg = with_metrics("autotune_tracks");
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    Autotune tune("tracks");
    const AutotuneTrial a = tune.trial({{"x", 1}});
    const AutotuneTrial b = tune.trial({{"x", 2}});
    for (const AutotuneTrial* t : {&a, &b}) {
      const AutotuneStep step = t->compile();
      Span inner("inner");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    tune.winner(b);
  }
  const json events = load_events(cfg.output_path);
  // Async pairs by (name, id): their begin and end, in ns.
  std::map<std::pair<std::string, long long>, std::pair<long long, long long>> pairs;
  std::vector<std::pair<long long, long long>> inner;
  long long start = -1, end = -1;
  for (const json& e : events) {
    const std::string ph = e.value("ph", ""), name = e.value("name", "");
    if (name == "autotune_start") start = ns_of(e["ts"]);
    if (name == "autotune_end") end = ns_of(e["ts"]);
    if (ph == "X" && name == "inner") inner.emplace_back(ns_of(e["ts"]), ns_of(e["dur"]));
    if (ph != "b" && ph != "e") continue;
    auto& p = pairs[{name, e["id"].get<long long>()}];
    (ph == "b" ? p.first : p.second) = ns_of(e["ts"]);
  }
  ASSERT_GE(start, 0);
  ASSERT_GE(end, start);
  std::vector<std::pair<long long, long long>> sessions, compiles;
  std::set<long long> step_tracks;
  for (const auto& [key, p] : pairs) {
    if (key.first == "autotune session") sessions.push_back(p);
    if (key.first == "autotune compile") {
      compiles.push_back(p);
      step_tracks.insert(key.second);
    }
  }
  ASSERT_EQ(sessions.size(), 1u);
  EXPECT_LE(sessions[0].first, start);
  EXPECT_GE(sessions[0].second, end) << "the session's slice spans its instants";
  ASSERT_EQ(compiles.size(), 2u);
  EXPECT_EQ(step_tracks.size(), 2u) << "a track per trial";
  ASSERT_EQ(inner.size(), 2u);
  std::sort(compiles.begin(), compiles.end());
  std::sort(inner.begin(), inner.end());
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_LE(compiles[i].first, inner[i].first) << i;
    EXPECT_GE(compiles[i].second, inner[i].first + inner[i].second) << i;
  }
}

}  // namespace
}  // namespace jitscope::testing::report
