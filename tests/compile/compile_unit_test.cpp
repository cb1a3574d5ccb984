// Compile units, phases, event data, records and tables (compile.hpp).
//
// Not covered here: the step logger and progress bar (step_log_test), the
// duplicate-warning LRU (dedup_test), the pass_pipeline sample end to end
// (its own tests), and costs (bench/). Durations come from real sleeps, so
// tests check relations (>=, ==) between them, never wall-clock values.
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <fcntl.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>

namespace jitscope {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::load_trace;
using testing::temp_path;

// A session writing a trace and a metrics file, with exact (blocking) rings.
class CompileSession {
 public:
  explicit CompileSession(const std::string& stem) {
    cfg_ = testing::test_config(stem);
    cfg_.metrics_path = temp_path(stem + ".metrics");
    cfg_.overflow = OverflowPolicy::kBlock;
    const Status st = start(cfg_);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  ~CompileSession() { (void)stop(); }
  SessionStats finish() {
    SessionStats stats;
    const Status st = stop(&stats);
    EXPECT_TRUE(st.ok()) << st.message();
    trace_ = load_trace(cfg_.output_path);
    lines_ = testing::read_json_lines(cfg_.metrics_path);
    return stats;
  }
  const json& trace() const { return trace_; }
  const std::vector<json>& lines() const { return lines_; }
  std::vector<json> slices(const std::string& name) const {
    std::vector<json> out;
    for (const json& e : trace_) {
      if (e.value("ph", "") == "X" && e.value("name", "") == name) out.push_back(e);
    }
    return out;
  }
  json slice(const std::string& name) const {
    auto s = slices(name);
    EXPECT_EQ(s.size(), 1u) << name;
    return s.empty() ? json::object() : s[0];
  }

 private:
  Config cfg_;
  json trace_;
  std::vector<json> lines_;
};

class Compile : public ::testing::Test {
 protected:
  void SetUp() override {
    reset_compile_state();
    clear_recompile_context_hooks();
    set_model_name("model");
  }
};

const CompileRecord* find_record(const std::vector<CompileRecord>& rs, const std::string& id) {
  for (const CompileRecord& r : rs) {
    if (r.has_compile_id && r.compile_id.str() == id) return &r;
  }
  return nullptr;
}

TEST_F(Compile, CompileIdsCountFramesAndAttempts) {
  std::vector<std::string> ids;
  for (const char* frame : {"f", "g", "f", "", "f", "g"}) {
    CompileUnit unit({.frame = frame});
    ids.push_back(unit.id().str());
    EXPECT_EQ(unit.is_recompile(), unit.id().attempt > 0);
  }
  // f -> frame 0, g -> frame 1, "" -> a fresh frame each time.
  EXPECT_EQ(ids, (std::vector<std::string>{"0/0", "1/0", "0/1", "2/0", "0/2", "1/1"}));
  EXPECT_EQ((CompileId{3, 1}.display()), "[3/1]");
}

TEST_F(Compile, NamesUseModelGraphStackAndAGlobalGraphCounter) {
  set_model_name("resnet");
  std::vector<std::string> names;
  {
    CompileUnit a({.graph = "fwd"});
    a.close();  // the record moves out at close; the name stays readable
    names.push_back(a.name());
    const std::vector<CompileRecord> records = recent_compile_records();
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records.back().name, "resnet__fwd_0");
    EXPECT_EQ(records.back().unit_key, "resnet__fwd");  // no key or frame: the name less _nth
  }
  {
    GraphNameScope outer("joint");
    CompileUnit b({.graph = "bwd"});
    names.push_back(b.name());
    CompileUnit nested({.graph = "inner"});  // a unit inside a unit: the stack grows
    names.push_back(nested.name());
  }
  std::thread([&] {
    CompileUnit c({.graph = "fwd"});  // another thread: its own stack, the same counter
    names.push_back(c.name());
  }).join();
  EXPECT_EQ(names, (std::vector<std::string>{"resnet__fwd_0", "resnet__joint_bwd_1",
                                             "resnet__joint_bwd_inner_2", "resnet__fwd_3"}));
}

// The slice's name "[id] name" sits in the unit when short and on the heap
// when long: either way the slice, the record and name() agree, at every
// length around the switch (the inline store holds 47 bytes and a NUL).
TEST_F(Compile, ShortAndLongNamesAgreeInTheSliceTheRecordAndName) {
  CompileSession session("unit_names");
  std::vector<std::string> graphs;
  std::vector<std::string> names;
  for (std::size_t length : {0, 1, 31, 32, 33, 34, 200}) {
    graphs.push_back(std::string(length, 'g'));
    CompileUnit unit({.graph = graphs.back()});
    names.push_back(unit.name());
  }
  session.finish();
  const std::vector<CompileRecord> records = recent_compile_records();
  ASSERT_EQ(records.size(), graphs.size());
  for (std::size_t i = 0; i < graphs.size(); ++i) {
    const std::string expected = "model__" + graphs[i] + "_" + std::to_string(i);
    EXPECT_EQ(names[i], expected);
    EXPECT_EQ(records[i].name, expected);
    const std::string slice_name = records[i].compile_id.display() + " " + expected;
    EXPECT_EQ(session.slice(slice_name).value("name", ""), slice_name) << i;
  }
}

// name() is made at its first call (from the slice's display name): the
// same text from every thread that asks at once, open or closed, and the
// same object each time.
TEST_F(Compile, ANameAskedFromManyThreadsAtOnceIsOneStableString) {
  set_model_name("m");
  CompileUnit unit({.frame = "k", .graph = "g"});
  std::vector<const std::string*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = &unit.name(); });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string* n : seen) EXPECT_EQ(n, seen[0]);
  const std::string open_name = unit.name();
  unit.close();
  EXPECT_EQ(&unit.name(), seen[0]);
  EXPECT_EQ(unit.name(), open_name);
  ASSERT_FALSE(recent_compile_records().empty());
  EXPECT_EQ(recent_compile_records().back().name, open_name);
  EXPECT_TRUE(open_name.starts_with("m__g_")) << open_name;
}

// The example: outer 10 ms containing inner 4 ms.
TEST_F(Compile, NestedColumnPhasesChargeEachColumnAndDurationOnlyOnce) {
  static const PhaseKey kOuter("outer", {.column = "outer_us"});
  static const PhaseKey kInner("inner", {.column = "inner_us"});
  CompileSession session("nested_phases");
  {
    CompileUnit unit({.frame = "k"});
    Phase outer(kOuter);
    std::this_thread::sleep_for(6ms);
    {
      Phase inner(kInner);
      std::this_thread::sleep_for(4ms);
    }
  }
  session.finish();
  ASSERT_EQ(session.lines().size(), 1u);
  const json& rec = session.lines()[0];
  const auto outer_us = rec["outer_us"].get<std::uint64_t>();
  const auto inner_us = rec["inner_us"].get<std::uint64_t>();
  EXPECT_GE(outer_us, 10000u);
  EXPECT_GE(inner_us, 4000u);
  EXPECT_LT(inner_us, outer_us);
  EXPECT_EQ(rec["duration_us"].get<std::uint64_t>(), outer_us);  // not outer + inner
  // The trace slices agree with the columns to within the µs truncation.
  const long long outer_ns = testing::to_ns(session.slice("outer")["dur"]);
  EXPECT_NEAR(static_cast<double>(outer_ns) / 1000.0, static_cast<double>(outer_us), 50.0);
  EXPECT_EQ(session.slice("outer")["cat"], "phase");

  // compile_times: both keys, one duration each; the cumulative total counts outer only.
  const std::vector<PhaseTimes> times = phase_times();
  ASSERT_EQ(times.size(), 2u);
  EXPECT_EQ(times[0].key, "outer");
  EXPECT_EQ(times[0].count, 1u);
  EXPECT_EQ(times[1].key, "inner");
  EXPECT_EQ(times[1].column, "inner_us");
}

// Outermost is per unit: a column phase around a unit, or a unit inside
// another unit's column phase, does not hide the inner unit's phases.
TEST_F(Compile, OutermostColumnPhaseIsCountedWithinEachUnit) {
  static const PhaseKey kAround("around", {.column = "around_us"});
  static const PhaseKey kInside("inside", {.column = "inside_us"});
  {
    Phase around(kAround);
    CompileUnit outer({.frame = "outer"});
    {
      Phase p(kInside);
      std::this_thread::sleep_for(1ms);
      CompileUnit nested({.frame = "nested"});
      Phase q(kInside);
      std::this_thread::sleep_for(1ms);
    }
  }
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 2u);  // "around" ended outside both: it went to the runtime record
  const CompileRecord& nested = records[0];
  const CompileRecord& outer = records[1];
  EXPECT_EQ(nested.compile_id.str(), "1/0");
  EXPECT_GE(nested.columns.at("inside_us"), 1000u);
  EXPECT_EQ(nested.duration_us, nested.columns.at("inside_us"));
  EXPECT_GE(outer.columns.at("inside_us"), 2000u);  // p spans q's time too
  EXPECT_EQ(outer.duration_us, outer.columns.at("inside_us"));
  EXPECT_EQ(outer.columns.count("around_us"), 0u);
  EXPECT_GE(runtime_record().columns.at("around_us"), outer.columns.at("inside_us"));
}

TEST_F(Compile, AKeptEventRefIsRefusedOnceItsEventEnded) {
  EventRef kept;
  {
    JITSCOPE_PHASE("short_lived");
    kept = event("short_lived");
    EXPECT_TRUE(kept.set(DataLevel::kTrace, "k", 1).ok());
  }
  const Status st = kept.set(DataLevel::kTrace, "k", 2);  // ASan would flag a read of the frame
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no longer open"), std::string::npos) << st.message();
  std::thread([&] { EXPECT_FALSE(kept.set(DataLevel::kTrace, "k", 3).ok()); }).join();
}

TEST_F(Compile, KeysJitscopeWritesCannotBeShadowed) {
  const PhaseKey shadow("shadowing_phase", {.column = "duration_us"});
  EXPECT_FALSE(shadow.status().ok());
  EXPECT_NE(shadow.status().message().find("jitscope writes itself"), std::string::npos);
  static const PhaseKey kEvent("shadow_event", {.compile_event = true});
  CompileUnit unit({.frame = "shadow"});
  Phase p(kEvent);
  EXPECT_FALSE(event("shadow_event").set(DataLevel::kTrace, "compile_id", "x").ok());
  EXPECT_FALSE(event("shadow_event").set(DataLevel::kCompileEvent, "duration_us", 7).ok());
  EXPECT_TRUE(event("shadow_event").set(DataLevel::kTrace, "duration_us", 7).ok());  // trace only
  p.end();
  EXPECT_FALSE(toplevel_event().set(DataLevel::kTrace, "fail_type", "x").ok());  // a unit arg
}

TEST_F(Compile, ColumnPhasesChargeWithoutASessionToo) {
  static const PhaseKey kWork("work", {.column = "work_us"});
  {
    CompileUnit unit({.frame = "nosession"});
    for (int i = 0; i < 3; ++i) {
      Phase p(kWork);
      std::this_thread::sleep_for(1ms);
    }
  }
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_GE(records[0].columns.at("work_us"), 3000u);
  EXPECT_EQ(records[0].duration_us, records[0].columns.at("work_us"));  // three outermost runs
  ASSERT_EQ(phase_times().size(), 1u);
  EXPECT_EQ(phase_times()[0].count, 3u);
  EXPECT_EQ(phase_times()[0].durations_ns.size(), 3u);
}

// A unit keeps a few slots for its column phases (on its own thread and
// on attached ones); more distinct columns than that take the record's
// lock instead. Every column lands either way, with each run's time.
TEST_F(Compile, MoreDistinctColumnsThanTheUnitsSlotsAreAllCharged) {
  constexpr int kColumns = 40;
  std::vector<std::unique_ptr<PhaseKey>> keys;
  for (int i = 0; i < kColumns; ++i) {
    const std::string name = "many_" + std::to_string(i);
    keys.push_back(std::make_unique<PhaseKey>(name, PhaseOptions{.column = name + "_us"}));
  }
  auto run_all = [&] {
    for (int i = 0; i < kColumns; ++i) {
      Phase p(*keys[static_cast<std::size_t>(i)]);
      std::this_thread::sleep_for(100us);
    }
  };
  {
    CompileUnit unit({.frame = "many_columns"});
    run_all();
    std::thread worker([ref = unit.ref(), &run_all] {
      UnitScope scope(ref);
      run_all();
    });
    worker.join();
  }
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 1u);
  const CompileRecord& r = records[0];
  ASSERT_EQ(r.columns.size(), static_cast<std::size_t>(kColumns));
  std::uint64_t sum = 0;
  for (int i = 0; i < kColumns; ++i) {
    const std::string column = "many_" + std::to_string(i) + "_us";
    ASSERT_EQ(r.columns.count(column), 1u) << column;
    EXPECT_GE(r.columns.at(column), 200u) << column;  // two runs of at least 100 µs
    sum += r.columns.at(column);
  }
  // The unit's own thread's runs are outermost: the duration is theirs alone.
  EXPECT_LE(r.duration_us, sum);
  EXPECT_GE(r.duration_us, static_cast<std::uint64_t>(kColumns) * 100u);
}

TEST_F(Compile, ABadColumnNameIsRefusedAndThePhaseStillRuns) {
  const PhaseKey bad("bad_column_phase", {.column = "elapsed_ms"});
  EXPECT_FALSE(bad.status().ok());
  EXPECT_NE(bad.status().message().find("must end in \"_us\""), std::string::npos);
  { Phase p(bad); }
  ASSERT_EQ(phase_times().size(), 1u);
  EXPECT_EQ(phase_times()[0].column, "");
  const PhaseKey again("bad_column_phase", {.column = "other_us"});
  EXPECT_FALSE(again.status().ok());  // first registration wins, and says so
}

TEST_F(Compile, PhasesOutsideAnyUnitGoToTheRuntimeRecord) {
  static const PhaseKey kLoad("load_artifacts", {.column = "load_us"});
  static const PhaseKey kCompile("compile_step", {.column = "compile_us"});
  CompileSession session("runtime_split");
  {
    Phase p(kLoad);
    std::this_thread::sleep_for(2ms);
  }
  EXPECT_TRUE(runtime_record().is_runtime);
  EXPECT_GE(runtime_record().columns.at("load_us"), 2000u);
  {
    CompileUnit unit({.frame = "x"});  // opening a unit writes the runtime record so far
    Phase p(kCompile);
  }
  {
    Phase p(kLoad);  // a second runtime stretch, written at stop
  }
  session.finish();
  ASSERT_EQ(session.lines().size(), 3u);
  const json& rt1 = session.lines()[0];
  const json& unit = session.lines()[1];
  const json& rt2 = session.lines()[2];
  EXPECT_TRUE(rt1["is_runtime"].get<bool>());
  EXPECT_TRUE(rt1["compile_id"].is_null());
  EXPECT_GE(rt1["load_us"].get<std::uint64_t>(), 2000u);
  EXPECT_EQ(rt1["duration_us"], rt1["load_us"]);
  // The record starts when the phase began, not when it was charged.
  EXPECT_GE(rt1["end_time_us"].get<std::uint64_t>() - rt1["start_time_us"].get<std::uint64_t>(),
            rt1["load_us"].get<std::uint64_t>());
  EXPECT_FALSE(rt1.contains("compile_us"));
  EXPECT_FALSE(unit["is_runtime"].get<bool>());
  EXPECT_EQ(unit["compile_id"], "0/0");
  EXPECT_TRUE(unit.contains("compile_us"));
  EXPECT_FALSE(unit.contains("load_us"));
  EXPECT_TRUE(rt2["is_runtime"].get<bool>());
  EXPECT_TRUE(rt2.contains("load_us"));
}

TEST_F(Compile, MetricsLineHasExactlyTheDocumentedFields) {
  static const PhaseKey kParse("parse", {.column = "parse_us"});
  static const PhaseKey kCodegen("codegen", {.column = "codegen_us", .compile_event = true});
  register_recompile_context_hook([] { return std::string("epoch=3"); });
  CompileSession session("metrics_fields");
  const std::uint64_t before_us =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  { CompileUnit first({.frame = "matmul", .graph = "fwd"}); }
  {
    CompileUnit unit({.frame = "matmul",
                      .graph = "bwd",
                      .is_forward = false,
                      .recompile_reason = "shape changed: [8] -> [16]"});
    unit.cache_miss("h2");
    unit.cache_miss("h1");
    unit.cache_hit("k9", "kernel");
    { Phase p(kParse); }
    {
      Phase p(kCodegen);
      ASSERT_TRUE(event("codegen").set(DataLevel::kCompileEvent, "kernels", 4).ok());
    }
    ASSERT_TRUE(unit.add_to_set("ops", "mul").ok());
    ASSERT_TRUE(unit.add_to_set("ops", "add").ok());
    ASSERT_TRUE(unit.add_to_set("ops", "mul").ok());
    ASSERT_TRUE(unit.set("backend", "mock").ok());
    ASSERT_TRUE(unit.increment("graphs", 2).ok());
  }
  session.finish();
  ASSERT_EQ(session.lines().size(), 2u);
  const json& r = session.lines()[1];
  std::set<std::string> keys;
  for (auto it = r.begin(); it != r.end(); ++it) keys.insert(it.key());
  EXPECT_EQ(r["unit_key"], r["frame"]);  // no key given: the frame
  EXPECT_EQ(keys, (std::set<std::string>{"compile_id",
                                         "frame_id",
                                         "attempt",
                                         "name",
                                         "unit_key",
                                         "frame",
                                         "is_runtime",
                                         "is_forward",
                                         "start_time_us",
                                         "end_time_us",
                                         "duration_us",
                                         "parse_us",
                                         "codegen_us",
                                         "recompile_reason",
                                         "recompile_user_contexts",
                                         "caches",
                                         "compile_events",
                                         "ops",
                                         "backend",
                                         "graphs"}));
  EXPECT_EQ(r["compile_id"], "0/1");
  EXPECT_EQ(r["frame_id"], 0);
  EXPECT_EQ(r["attempt"], 1);
  EXPECT_EQ(r["name"], "model__bwd_1");
  EXPECT_FALSE(r["is_runtime"].get<bool>());
  EXPECT_FALSE(r["is_forward"].get<bool>());
  EXPECT_GE(r["start_time_us"].get<std::uint64_t>(), before_us);
  EXPECT_GE(r["end_time_us"].get<std::uint64_t>(), r["start_time_us"].get<std::uint64_t>());
  EXPECT_EQ(r["duration_us"].get<std::uint64_t>(),
            r["parse_us"].get<std::uint64_t>() + r["codegen_us"].get<std::uint64_t>());
  EXPECT_EQ(r["recompile_reason"], "shape changed: [8] -> [16]");
  EXPECT_EQ(r["recompile_user_contexts"], json::array({"epoch=3"}));
  EXPECT_EQ(r["caches"]["cache"]["misses"], 2);
  EXPECT_EQ(r["caches"]["cache"]["miss_keys"], json::array({"h1", "h2"}));  // sorted
  EXPECT_EQ(r["caches"]["kernel"]["hits"], 1);
  EXPECT_EQ(r["caches"]["kernel"]["hit_keys"], json::array({"k9"}));
  ASSERT_EQ(r["compile_events"].size(), 1u);
  EXPECT_EQ(r["compile_events"][0]["name"], "codegen");
  EXPECT_EQ(r["compile_events"][0]["kernels"], 4);
  EXPECT_EQ(r["ops"], json::array({"add", "mul"}));  // a set: sorted, once each
  EXPECT_EQ(r["backend"], "mock");
  EXPECT_EQ(r["graphs"], 2);
  // The first compile was not a recompile: no hook output, no reason.
  EXPECT_FALSE(session.lines()[0].contains("recompile_user_contexts"));
  EXPECT_FALSE(session.lines()[0].contains("recompile_reason"));
  // The same record is kept in memory.
  const auto recent = recent_compile_records();
  ASSERT_EQ(recent.size(), 2u);
  EXPECT_EQ(json::parse(recent[1].to_json()), r);
}

// With a session on, a record's Unix times come from the same clock reads
// as its trace slice (the session's clock anchored to the wall clock at
// start): they sit within the wall-clock reads around the unit, and their
// difference is the slice's duration.
TEST_F(Compile, RecordTimesAreTheSlicesOwnOnTheWallClock) {
  auto unix_us = [] {
    return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
  };
  CompileSession session("record_wall_times");
  std::this_thread::sleep_for(3ms);  // away from the anchor taken at start
  const std::uint64_t before_us = unix_us();
  {
    CompileUnit unit({.frame = "wall"});
    std::this_thread::sleep_for(5ms);
  }
  const std::uint64_t after_us = unix_us();
  session.finish();
  ASSERT_EQ(session.lines().size(), 1u);
  const json& r = session.lines()[0];
  const auto start = r["start_time_us"].get<std::uint64_t>();
  const auto end = r["end_time_us"].get<std::uint64_t>();
  constexpr std::uint64_t kSlackUs = 200;  // the anchor's pairing and the estimate's rate
  EXPECT_GE(start + kSlackUs, before_us);
  EXPECT_LE(end, after_us + kSlackUs);
  EXPECT_GE(end - start, 5000u);
  const json slice = session.slice("[0/0] model__graph_0");
  const double dur_us = slice["dur"].get<double>();
  EXPECT_NEAR(static_cast<double>(end - start), dur_us, 2.0 + dur_us * 0.01);
}

TEST_F(Compile, TheThreeLevelsLandWhereTheyShould) {
  static const PhaseKey kPasses("passes");
  static const PhaseKey kEmit("emit", {.compile_event = true});
  CompileSession session("levels");
  {
    CompileUnit unit({.frame = "levels"});
    Phase passes(kPasses);
    {
      Phase emit(kEmit);
      EXPECT_TRUE(event("emit").set(DataLevel::kTrace, "trace_only", 1).ok());
      EXPECT_TRUE(event("emit").set(DataLevel::kCompileEvent, "event_too", 2).ok());
      EXPECT_TRUE(event("passes").increment(DataLevel::kTrace, "count", 5).ok());
      EXPECT_TRUE(passes.event().increment(DataLevel::kTrace, "count", 2).ok());
    }
    EXPECT_TRUE(toplevel_event().set(DataLevel::kMetric, "metric_too", "yes").ok());
    EXPECT_TRUE(toplevel_event().add_to_set(DataLevel::kMetric, "tags", 3).ok());
    EXPECT_TRUE(toplevel_event().add_to_set(DataLevel::kMetric, "tags", 1).ok());
  }
  session.finish();
  const json emit = session.slice("emit");
  EXPECT_EQ(emit["cat"], "compile_event");
  EXPECT_EQ(emit["args"]["trace_only"], 1);
  EXPECT_EQ(emit["args"]["event_too"], 2);
  EXPECT_EQ(session.slice("passes")["args"]["count"], 7);
  const json unit_slice = session.slice("[0/0] model__graph_0");
  EXPECT_EQ(unit_slice["cat"], "compile_unit");
  EXPECT_EQ(unit_slice["args"]["metric_too"], "yes");
  EXPECT_EQ(unit_slice["args"]["tags"], json::array({1, 3}));

  ASSERT_EQ(session.lines().size(), 1u);
  const json& r = session.lines()[0];
  EXPECT_EQ(r["metric_too"], "yes");
  EXPECT_EQ(r["tags"], json::array({1, 3}));
  EXPECT_FALSE(r.contains("trace_only"));
  EXPECT_FALSE(r.contains("event_too"));
  EXPECT_FALSE(r.contains("count"));
  ASSERT_EQ(r["compile_events"].size(), 1u);
  EXPECT_EQ(r["compile_events"][0]["event_too"], 2);
  EXPECT_FALSE(r["compile_events"][0].contains("trace_only"));
}

TEST_F(Compile, SetRefusesToOverwriteUnlessAsked) {
  CompileUnit unit({.frame = "overwrite"});
  static const PhaseKey kP("p");
  Phase p(kP);
  EXPECT_TRUE(event("p").set(DataLevel::kTrace, "k", 1).ok());
  const Status again = event("p").set(DataLevel::kTrace, "k", 2);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("already set"), std::string::npos) << again.message();
  EXPECT_TRUE(event("p").set(DataLevel::kTrace, "k", 3, /*overwrite=*/true).ok());

  EXPECT_TRUE(unit.set("m", 1).ok());
  EXPECT_FALSE(unit.set("m", 2).ok());
  EXPECT_TRUE(unit.set("m", 2, true).ok());
  EXPECT_TRUE(unit.set("load_us", 40).ok());  // a column
  EXPECT_FALSE(unit.set("load_us", 41).ok());
  EXPECT_TRUE(unit.increment("load_us", 2).ok());
  p.end();
  unit.close();
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].fields.at("m").value.as_int(), 2);
  EXPECT_EQ(records[0].columns.at("load_us"), 42u);
}

TEST_F(Compile, EveryMisuseIsAClearErrorAndTryFormsAreSilent) {
  auto expect_error = [](const Status& st, const std::string& part) {
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
  };
  // Nothing open at all.
  expect_error(event("nope").set(DataLevel::kTrace, "k", 1),
               "no open phase or compile unit named 'nope'");
  expect_error(toplevel_event().set(DataLevel::kMetric, "k", 1),
               "no phase or compile unit is open");
  toplevel_event().try_set(DataLevel::kMetric, "k", 1);  // silently nothing

  static const PhaseKey kOuter("outer_phase");
  static const PhaseKey kInner("inner_phase");
  {
    // A phase but no unit: metric data has nowhere to go.
    Phase outer(kOuter);
    expect_error(event("outer_phase").set(DataLevel::kMetric, "k", 1), "no compile unit is open");
  }
  CompileUnit unit({.frame = "misuse"});
  Phase outer(kOuter);
  Phase inner(kInner);
  expect_error(event("inner_phase").set(DataLevel::kMetric, "k", 1),
               "is not the outermost open event");
  expect_error(event("inner_phase").set(DataLevel::kCompileEvent, "k", 1),
               "is not a compile event");
  ASSERT_TRUE(event("inner_phase").set(DataLevel::kTrace, "s", "text").ok());
  expect_error(event("inner_phase").increment(DataLevel::kTrace, "s"), "only an integer field");
  expect_error(event("inner_phase").add_to_set(DataLevel::kTrace, "s", 1), "not a set");
  expect_error(event("inner_phase").set(DataLevel::kTrace, "", 1), "must not be empty");
  expect_error(unit.set("compile_id", "9/9"), "written by jitscope");
  expect_error(unit.set("x_us", "soon"), "whole microseconds");
  event("inner_phase").try_set(DataLevel::kMetric, "k", 1);
  event("inner_phase").try_increment(DataLevel::kTrace, "s");
  event("missing").try_add_to_set(DataLevel::kTrace, "k", 1);
  inner.end();
  expect_error(inner.event().set(DataLevel::kTrace, "k", 1), "the phase is not open");
  outer.end();
  // The toplevel event is the unit: metric data is accepted there.
  EXPECT_TRUE(toplevel_event().set(DataLevel::kMetric, "k", 1).ok());
  unit.close();
  expect_error(unit.set("late", 1), "already closed");
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].fields.size(), 1u);  // only "k": refused calls left nothing behind
  EXPECT_EQ(records[0].fields.count("k"), 1u);
}

TEST_F(Compile, AUnitLeftByAnExceptionRecordsTheFailureAndClosesItsSpans) {
  static const PhaseKey kCodegen("codegen_fail", {.column = "codegen_us"});
  CompileSession session("failure");
  try {
    CompileUnit unit({.frame = "boom"});
    JITSCOPE_SPAN("inside");
    Phase p(kCodegen);
    throw std::runtime_error("register allocation failed");
  } catch (const std::runtime_error&) {
  }
  {
    CompileUnit unit({.frame = "caught"});
    try {
      throw std::out_of_range("tile 7 out of range");
    } catch (...) {
      unit.fail_with_current_exception();
    }
  }
  {
    CompileUnit unit({.frame = "explicit"});
    unit.fail("UnsupportedOp", "no lowering for op 'fft'");
  }
  { CompileUnit ok({.frame = "fine"}); }
  session.finish();
  ASSERT_EQ(session.lines().size(), 4u);
  EXPECT_EQ(session.lines()[0]["fail_type"], "exception");
  EXPECT_NE(session.lines()[0]["fail_reason"].get<std::string>().find("exception left"),
            std::string::npos);
  EXPECT_EQ(session.lines()[1]["fail_type"], "std::out_of_range");
  EXPECT_EQ(session.lines()[1]["fail_reason"], "tile 7 out of range");
  EXPECT_EQ(session.lines()[2]["fail_type"], "UnsupportedOp");
  EXPECT_FALSE(session.lines()[3].contains("fail_type"));
  // Every slice was closed by the unwinding, none left incomplete.
  const json inside = session.slice("inside");
  EXPECT_FALSE(inside["args"].contains("incomplete"));
  EXPECT_EQ(session.slice("codegen_fail")["args"]["compile_id"], "0/0");
  const json unit_slice = session.slice("[0/0] model__graph_0");
  EXPECT_EQ(unit_slice["args"]["fail_type"], "exception");
  EXPECT_FALSE(unit_slice["args"].contains("incomplete"));
}

TEST_F(Compile, EveryEventOnAThreadInAUnitCarriesItsCompileId) {
  CompileSession session("ids_on_events");
  { JITSCOPE_SPAN("before_any_unit"); }
  {
    CompileUnit unit({.frame = "a"});
    JITSCOPE_SPAN("span_in_unit");
    JITSCOPE_INSTANT("instant_in_unit");
    JITSCOPE_COUNTER("counter_in_unit", 5);
    {
      CompileUnit inner({.frame = "b"});
      JITSCOPE_SPAN("span_in_inner");
    }
    JITSCOPE_SPAN("span_after_inner");
  }
  JITSCOPE_INSTANT("instant_outside");
  session.finish();
  EXPECT_FALSE(session.slice("before_any_unit").contains("args"));
  EXPECT_EQ(session.slice("span_in_unit")["args"]["compile_id"], "0/0");
  EXPECT_EQ(session.slice("span_in_inner")["args"]["compile_id"], "1/0");
  EXPECT_EQ(session.slice("span_after_inner")["args"]["compile_id"], "0/0");
  for (const json& e : session.trace()) {
    if (e.value("name", "") == "instant_in_unit") EXPECT_EQ(e["args"]["compile_id"], "0/0");
    if (e.value("name", "") == "instant_outside") EXPECT_FALSE(e.contains("args"));
    if (e.value("name", "") == "counter_in_unit") {
      EXPECT_EQ(e["compile_id"], "0/0");  // beside the series, not among them
      EXPECT_EQ(e["args"], json({{"value", 5}}));
    }
  }
}

TEST_F(Compile, UnitsOnFourThreadsAtOnceKeepTheirOwnIds) {
  static const PhaseKey kWork("thread_work", {.column = "work_us"});
  constexpr int kThreads = 4;
  constexpr int kSpans = 50;
  CompileSession session("four_threads");
  std::barrier sync(kThreads);
  std::vector<std::string> ids(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      set_thread_name("unit-thread-" + std::to_string(i));
      CompileUnit unit({.frame = "frame" + std::to_string(i)});
      ids[i] = unit.id().str();
      sync.arrive_and_wait();  // all four units are open now
      for (int s = 0; s < kSpans; ++s) {
        Phase p(kWork);
        JITSCOPE_SPAN("thread_span");
      }
      sync.arrive_and_wait();
    });
  }
  for (auto& t : threads) t.join();
  session.finish();
  const auto names = testing::thread_names(session.trace());
  std::map<std::string, std::string> id_of_thread;
  for (int i = 0; i < kThreads; ++i) id_of_thread["unit-thread-" + std::to_string(i)] = ids[i];
  std::map<std::string, int> seen;
  for (const json& e : session.trace()) {
    if (e.value("ph", "") != "X") continue;
    const std::string thread = names.at(e["tid"].get<long>());
    if (!id_of_thread.count(thread)) continue;
    EXPECT_EQ(e["args"]["compile_id"], id_of_thread[thread]) << e.dump();
    ++seen[thread];
  }
  for (const auto& [thread, id] : id_of_thread) EXPECT_EQ(seen[thread], 2 * kSpans + 1) << thread;
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), 4u);
  ASSERT_EQ(session.lines().size(), 4u);
}

// A closed unit's handle (a CompileUnitRef, as a JIT cache keeps per
// kernel) neither keeps its record (the block went to the recent ring and
// the queue at close) nor touches it: with the record evicted from the ring,
// work attached through the handle is refused by `closed` before any write
// (under ASan, a write would be a use after free).
TEST_F(Compile, AClosedUnitsHandleNeverTouchesItsRecord) {
  static const PhaseKey kEvent("late_event", {.column = "late_us", .compile_event = true});
  CompileUnitRef ref;
  {
    CompileUnit unit({.frame = "kept_by_handle"});
    ref = unit.ref();
  }
  for (std::size_t i = 0; i < kRecentRecordCapacity + 2; ++i) CompileUnit({.frame = "evictor"});
  for (const CompileRecord& r : recent_compile_records()) EXPECT_NE(r.frame, "kept_by_handle");
  std::thread late([&] {
    UnitScope scope(ref);
    Phase p(kEvent);  // a compile event: always the unit's locked path
  });
  late.join();
  EXPECT_TRUE(ref.valid());
  for (const CompileRecord& r : recent_compile_records()) {
    EXPECT_NE(r.frame, "kept_by_handle");
    EXPECT_EQ(r.columns.count("late_us"), 0u) << r.frame;
  }
}

TEST_F(Compile, AUnitScopeCarriesTheUnitToAWorkerThread) {
  static const PhaseKey kOwner("owner", {.column = "owner_us"});
  static const PhaseKey kChunk("chunk", {.column = "chunk_us"});
  CompileSession session("unit_scope");
  std::string id;
  {
    CompileUnit unit({.frame = "shared"});
    id = unit.id().str();
    Phase owner(kOwner);
    const CompileUnitRef ref = unit.ref();
    std::thread worker([&] {
      set_thread_name("worker");
      UnitScope scope(ref);
      CompileId seen;
      EXPECT_TRUE(current_compile_id(&seen));
      EXPECT_EQ(seen.str(), id);
      Phase p(kChunk);
      std::this_thread::sleep_for(2ms);
    });
    worker.join();
    EXPECT_TRUE(current_compile_unit().valid());
  }
  EXPECT_FALSE(current_compile_unit().valid());
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.compile_records_written, 1u);
  EXPECT_NE(stats.metrics_path, "");
  const json chunk = session.slice("chunk");
  EXPECT_EQ(chunk["args"]["compile_id"], id);
  ASSERT_EQ(session.lines().size(), 1u);
  const json& r = session.lines()[0];
  EXPECT_GE(r["chunk_us"].get<std::uint64_t>(), 2000u);
  // The worker ran inside the owner's phase: its column is filled, but only
  // the unit's own thread adds to duration_us, which stays within wall time.
  EXPECT_EQ(r["duration_us"], r["owner_us"]);
  EXPECT_LE(r["duration_us"].get<std::uint64_t>(),
            r["end_time_us"].get<std::uint64_t>() - r["start_time_us"].get<std::uint64_t>());
  // The worker's attached slice is marked as such.
  int attached = 0;
  for (const json& e : session.slices("[0/0] model__graph_0")) {
    if (e["args"].value("attached", false)) ++attached;
  }
  EXPECT_EQ(attached, 1);
}

TEST_F(Compile, WaitCountersCountAndSumIntoTheRecordAndTheTrace) {
  WaitCounter waits("compile_worker");
  const std::uint64_t count_before = waits.count();
  CompileSession session("waits");
  {
    CompileUnit unit({.frame = "w"});
    for (int i = 0; i < 3; ++i) {
      auto guard = waits.wait();
      std::this_thread::sleep_for(1ms);
    }
  }
  session.finish();
  EXPECT_EQ(waits.count() - count_before, 3u);
  ASSERT_EQ(session.lines().size(), 1u);
  const json& w = session.lines()[0]["waits"]["compile_worker"];
  EXPECT_EQ(w["count"], 3);
  EXPECT_GE(w["total_us"].get<std::uint64_t>(), 3000u);
  int waiting_samples = 0, total_samples = 0;
  double last_total = 0;
  for (const json& e : session.trace()) {
    if (e.value("ph", "") != "C") continue;
    if (e["name"] == "compile_worker.waiting") ++waiting_samples;
    if (e["name"] == "compile_worker.wait_total_us") {
      ++total_samples;
      last_total = e["args"]["value"].get<double>();
    }
  }
  EXPECT_EQ(waiting_samples, 6);  // at each start and each end
  EXPECT_EQ(total_samples, 6);
  EXPECT_GE(last_total, 3000.0);
}

TEST_F(Compile, RecompileContextsAreCappedAt256Characters) {
  register_recompile_context_hook([] { return std::string(1000, 'x'); });
  register_recompile_context_hook([] { return std::string("short"); });
  register_recompile_context_hook([]() -> std::string { throw std::runtime_error("bad hook"); });
  // 255 ASCII bytes then a 2-byte character: the cut must not split it.
  register_recompile_context_hook([] { return std::string(255, 'a') + "\xc3\xa9"; });
  { CompileUnit first({.frame = "cap"}); }
  { CompileUnit again({.frame = "cap"}); }
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].recompile_user_contexts.empty());
  const auto& ctx = records[1].recompile_user_contexts;
  ASSERT_EQ(ctx.size(), 4u);
  EXPECT_EQ(ctx[0], std::string(256, 'x'));
  EXPECT_EQ(ctx[1], "short");
  EXPECT_EQ(ctx[2], "<hook failed: bad hook>");
  EXPECT_EQ(ctx[3], std::string(255, 'a'));
}

TEST_F(Compile, RecentRecordsKeepTheLast64) {
  for (int i = 0; i < 70; ++i) CompileUnit unit({.frame = "r" + std::to_string(i)});
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), kRecentRecordCapacity);
  for (std::size_t i = 0; i < records.size(); ++i) {  // oldest first, in order
    EXPECT_EQ(records[i].compile_id.str(), std::to_string(6 + i) + "/0");
  }
  EXPECT_EQ(find_record(records, "5/0"), nullptr);
}

TEST_F(Compile, CompileTimesTablesListEveryDurationOrTheAggregate) {
  static const PhaseKey kA("table_a", {.column = "a_us"});
  static const PhaseKey kB("table_b");
  { Phase p(kA); }
  { Phase p(kA); }
  { Phase p(kB); }
  const std::string text = compile_times(TableFormat::kText, false);
  EXPECT_NE(text.find("jitscope compile times:"), std::string::npos);
  EXPECT_NE(text.find("table_a"), std::string::npos);
  const std::string csv = compile_times(TableFormat::kCsv, false);
  // One header and one row per run.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "phase,run,seconds");
  EXPECT_EQ(csv.find("table_a,0,"), csv.find('\n') + 1);
  const std::string agg = compile_times(TableFormat::kCsv, true);
  EXPECT_EQ(agg.substr(0, agg.find('\n')), "phase,count,total_s,mean_s,max_s");
  EXPECT_NE(agg.find("\ntable_a,2,"), std::string::npos);
  EXPECT_NE(agg.find("\ntable_b,1,"), std::string::npos);
  const std::string cumulative = cumulative_time_report(TableFormat::kCsv);
  EXPECT_NE(cumulative.find("\ntable_a,a_us,"), std::string::npos);
  EXPECT_EQ(cumulative.find("table_b"), std::string::npos);  // no column: not a cumulative phase
  EXPECT_NE(cumulative.find("\ntotal,duration_us,"), std::string::npos);
  reset_compile_state();
  EXPECT_TRUE(phase_times().empty());
}

TEST_F(Compile, StopPrintsTheCompileTimesReportWhenAsked) {
  static const PhaseKey kPrinted("printed_phase", {.column = "printed_us"});
  Config cfg = testing::test_config("report_at_stop");
  cfg.compile_times = CompileTimesReport::kCsv;
  ASSERT_TRUE(start(cfg).ok());
  { Phase p(kPrinted); }
  testing::StderrCapture capture;
  (void)stop();
  const std::string err = capture.text();
  EXPECT_NE(err.find("phase,count,total_s,mean_s,max_s\nprinted_phase,1,"), std::string::npos)
      << err;
  EXPECT_NE(err.find("printed_phase,printed_us,"), std::string::npos) << err;
}

TEST_F(Compile, AnUnopenableMetricsFileRefusesTheSession) {
  Config cfg = testing::test_config("bad_metrics");
  cfg.metrics_path = "/nonexistent-dir/metrics.jsonl";
  const Status st = start(cfg);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot open metrics file /nonexistent-dir/metrics.jsonl"),
            std::string::npos);
  EXPECT_FALSE(active());
}

}  // namespace
}  // namespace jitscope
