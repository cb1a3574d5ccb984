// The compile layer's host boundary (base/boundary.hpp at every catch in
// sdk/src/compile): out of memory in a compile call never escapes and is
// never silent. It gives one deduplicated `jitscope: <what> failed: out of
// memory` line (or a failed Status naming it), and the host goes on: a later
// call works, the session's trace still loads.
//
// Out of memory is made on purpose: this binary replaces the global
// operator new (tests/fail_allocation.hpp), and FailingAllocations makes one
// chosen allocation on the test's own thread throw std::bad_alloc (gtest and
// the flusher thread are never touched). Some tests count allocations inside the SDK (the comment
// at each says which one fails); `fired()` checks the failure happened.
//
// Not covered here: the boundary helpers themselves (boundary_test), the
// progress bar's drawing (step_log_test).
#include "fail_allocation.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/step_log.hpp>

#include <cstdlib>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

namespace jitscope {
namespace {

using nlohmann::json;
using testing::load_trace;
using FailingAllocations = testing::FailOneAllocation;

// Longer than std::string's inline buffer (15 bytes): copying one allocates.
const std::string kLong(48, 'x');

// The X slices of a loaded trace whose name contains `part`.
std::vector<json> slices_named(const json& trace, const std::string& part) {
  std::vector<json> out;
  for (const json& e : trace) {
    if (e.value("ph", "") == "X" && e.value("name", "").find(part) != std::string::npos) {
      out.push_back(e);
    }
  }
  return out;
}

const CompileRecord* last_record_of(const std::vector<CompileRecord>& records,
                                    const std::string& id) {
  const CompileRecord* found = nullptr;
  for (const CompileRecord& r : records) {
    if (r.has_compile_id && r.compile_id.str() == id) found = &r;
  }
  return found;
}
// Not on a temporary: the pointer would dangle.
const CompileRecord* last_record_of(std::vector<CompileRecord>&&, const std::string&) = delete;

class CompileBoundary : public ::testing::Test {
 protected:
  void SetUp() override {
    reset_compile_state();
    clear_recompile_context_hooks();
    set_model_name("model");
  }
  void TearDown() override {
    clear_recompile_context_hooks();
    set_model_name("model");
    set_step_sink({});
  }
};

TEST_F(CompileBoundary, SetModelNameOutOfMemorySaysSoOnceAndKeepsTheOldName) {
  testing::ScopedSession session(testing::test_config("boundary_model_name"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i) {
    FailingAllocations oom;  // the name's copy
    set_model_name(kLong);
    EXPECT_TRUE(oom.fired());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: setting the model name failed: out of memory\n");
  EXPECT_EQ(model_name(), "model");
  set_model_name(kLong);  // the host goes on
  EXPECT_EQ(model_name(), kLong);
  {
    CompileUnit unit({.graph = "g"});
    EXPECT_EQ(unit.name(), kLong + "__g_0");
  }
  session.finish();
  EXPECT_EQ(slices_named(load_trace(session.path()), kLong + "__g_0").size(), 1u);
}

TEST_F(CompileBoundary, FailOutOfMemorySaysSoOnceAndTheUnitStillCloses) {
  testing::ScopedSession session(testing::test_config("boundary_fail"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  ::testing::internal::CaptureStderr();
  {
    CompileUnit unit({.frame = "failing", .graph = "oom"});
    for (int i = 0; i < 3; ++i) {
      FailingAllocations oom;  // the fail_type's copy
      unit.fail(kLong, "reason");
      EXPECT_TRUE(oom.fired());
    }
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: recording a compile error in its unit failed: out of "
            "memory\n");
  {
    CompileUnit unit({.frame = "failing", .graph = "fine"});
    unit.fail(kLong, "bad shape");  // the host goes on
  }
  const auto records = recent_compile_records();
  const CompileRecord* first = last_record_of(records, "0/0");
  const CompileRecord* second = last_record_of(records, "0/1");
  ASSERT_NE(first, nullptr) << "the unit closed and wrote its record";
  ASSERT_NE(second, nullptr);
  EXPECT_TRUE(first->failed);
  EXPECT_TRUE(second->failed);
  EXPECT_EQ(second->fail_type, kLong);
  EXPECT_EQ(second->fail_reason, "bad shape");
  session.finish();
  const auto fine = slices_named(load_trace(session.path()), "model__fine_1");
  ASSERT_EQ(fine.size(), 1u);
  EXPECT_EQ(fine[0]["args"]["fail_reason"], "bad shape");
}

TEST_F(CompileBoundary, CacheEventOutOfMemorySaysSoOnceAndLaterEventsCount) {
  testing::ScopedSession session(testing::test_config("boundary_cache"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  const std::string cache = "a_cache_whose_name_needs_the_heap";
  ::testing::internal::CaptureStderr();
  {
    CompileUnit unit({.graph = "cached"});
    for (int i = 0; i < 3; ++i) {
      FailingAllocations oom;  // the cache name's copy
      if (i % 2 == 0) {
        unit.cache_hit("k", cache);
      } else {
        unit.cache_miss("k", cache);
      }
      EXPECT_TRUE(oom.fired());
    }
    unit.cache_hit("k1", cache);  // the host goes on
    unit.cache_miss("k2", cache);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: recording a cache hit or miss failed: out of memory\n");
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].caches.count(cache), 1u);
  const CacheCounts& c = records[0].caches.at(cache);
  EXPECT_EQ(c.hits, 1u);
  EXPECT_EQ(c.misses, 1u);
  session.finish();
  EXPECT_EQ(slices_named(load_trace(session.path()), "model__cached_0").size(), 1u);
}

TEST_F(CompileBoundary, GraphNameOutOfMemorySaysSoOnceAndNamesStayBalanced) {
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    FailingAllocations oom;  // the name's copy
    GraphNameScope lost(kLong);
    EXPECT_TRUE(oom.fired());
    CompileUnit unit({.graph = "g"});
    EXPECT_EQ(unit.name(), "model__g_" + std::to_string(i)) << "a lost name just names less";
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: pushing a graph name failed: out of memory\n");
  GraphNameScope outer("outer");  // the host goes on
  CompileUnit unit({.graph = "g"});
  EXPECT_EQ(unit.name(), "model__outer_g_2");
}

TEST_F(CompileBoundary, ExceptionTypeOutOfMemoryKeepsTheMessageAndSaysSo) {
  ::testing::internal::CaptureStderr();
  {
    CompileUnit unit({.graph = "thrown"});
    for (int i = 0; i < 2; ++i) {
      try {
        throw std::runtime_error("bad shape");
      } catch (...) {
        FailingAllocations oom;  // the demangled type name's copy
        unit.fail_with_current_exception();
        EXPECT_TRUE(oom.fired());
      }
    }
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: naming the type of a compile error failed: out of memory\n");
  {
    CompileUnit unit({.graph = "thrown"});
    try {
      throw std::runtime_error("bad shape");
    } catch (...) {
      unit.fail_with_current_exception();  // the host goes on
    }
  }
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].failed);
  EXPECT_EQ(records[0].fail_type, "std::exception");
  EXPECT_EQ(records[0].fail_reason, "bad shape") << "what() needs no allocation: it is kept";
  EXPECT_EQ(records[1].fail_type, "std::runtime_error");
  EXPECT_EQ(records[1].fail_reason, "bad shape");
}

TEST_F(CompileBoundary, AHookFailureThatCannotBeQuotedIsStillRecordedAndTheUnitKept) {
  register_recompile_context_hook([]() -> std::string {
    std::runtime_error error(kLong);  // its text is allocated here, not below
    FailingAllocations::arm(0);       // the next allocation: jitscope quoting it
    throw error;
  });
  { CompileUnit first({.frame = "hooked"}); }  // attempt 0 runs no hooks
  ::testing::internal::CaptureStderr();
  {
    FailingAllocations oom(FailingAllocations::kNotYet);
    CompileUnit again({.frame = "hooked"});
    EXPECT_TRUE(oom.fired());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: quoting a recompile context hook's exception failed: "
            "out of memory\n");
  const auto records = recent_compile_records();
  const CompileRecord* again = last_record_of(records, "0/1");
  ASSERT_NE(again, nullptr) << "the unit is recorded";
  EXPECT_EQ(again->recompile_user_contexts, std::vector<std::string>{"<hook failed>"});
}

TEST_F(CompileBoundary, AThrowingHookIsDataNotALine) {
  register_recompile_context_hook([]() -> std::string { throw std::runtime_error("bad hook"); });
  register_recompile_context_hook([]() -> std::string { throw 7; });
  { CompileUnit first({.frame = "hooked"}); }
  ::testing::internal::CaptureStderr();
  { CompileUnit again({.frame = "hooked"}); }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  const auto records = recent_compile_records();
  const CompileRecord* again = last_record_of(records, "0/1");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->recompile_user_contexts,
            (std::vector<std::string>{"<hook failed: bad hook>", "<hook failed>"}));
}

TEST_F(CompileBoundary, PhaseDurationListOutOfMemorySaysSoOnceAndTheCountsStayExact) {
  static const PhaseKey kKey("boundary_listed_phase");
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    FailingAllocations oom;  // the duration list's growth (no session: nothing else allocates)
    { Phase p(kKey); }
    EXPECT_TRUE(oom.fired());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: listing a phase's duration failed: out of memory\n");
  { Phase p(kKey); }  // the host goes on
  std::vector<PhaseTimes> times = phase_times();
  ASSERT_EQ(times.size(), 1u);
  EXPECT_EQ(times[0].count, 3u);
  EXPECT_EQ(times[0].durations_ns.size(), 1u);
  EXPECT_NE(compile_times(TableFormat::kText).find("(2 more)"), std::string::npos);
}

TEST_F(CompileBoundary, CompileEventOutOfMemorySaysSoOnceAndLaterEventsAreRecorded) {
  static const PhaseKey kKey("boundary_compile_event_phase", {.compile_event = true});
  ::testing::internal::CaptureStderr();
  {
    CompileUnit unit({.graph = "events"});
    for (int i = 0; i < 2; ++i) {
      // Allocation 0 grows the phase's duration list (1 slot, then 2);
      // allocation 1 is the compile event's name, the one that fails.
      FailingAllocations oom(1);
      { Phase p(kKey); }
      EXPECT_TRUE(oom.fired());
    }
    { Phase p(kKey); }  // the host goes on
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: adding a phase to its compile record failed: out of memory\n");
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].compile_events.size(), 1u);
  EXPECT_EQ(records[0].compile_events[0].name, "boundary_compile_event_phase");
  EXPECT_EQ(phase_times().at(0).count, 3u) << "the per-key times are kept";
}

TEST_F(CompileBoundary, WaitOutOfMemorySaysSoOnceAndTheCounterKeepsIt) {
  WaitCounter waits("boundary_wait_counter");
  ::testing::internal::CaptureStderr();
  {
    CompileUnit unit({.graph = "waits"});
    for (int i = 0; i < 2; ++i) {
      WaitCounter::Guard g = waits.wait();
      FailingAllocations oom;  // the record's entry for this counter
      g.end();
      EXPECT_TRUE(oom.fired());
    }
    { WaitCounter::Guard g = waits.wait(); }  // the host goes on
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: adding a wait to its compile record failed: out of memory\n");
  EXPECT_EQ(waits.count(), 3u);
  const auto records = recent_compile_records();
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].waits.count("boundary_wait_counter"), 1u);
  EXPECT_EQ(records[0].waits.at("boundary_wait_counter").count, 1u);
}

TEST_F(CompileBoundary, SliceDataOutOfMemorySaysSoOnceAndTheSliceStays) {
  testing::ScopedSession session(testing::test_config("boundary_slice_data"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  static const PhaseKey kKey("boundary_data_phase");
  const std::string kRows = "rows_in_the_input_batch";  // its args do not fit inline
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 2; ++i) {
    Phase p(kKey);
    ASSERT_TRUE(p.event().set(DataLevel::kTrace, kRows, 12).ok());
    FailingAllocations oom;  // the slice's args, once past the string's inline buffer
    p.end();
    EXPECT_TRUE(oom.fired());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: writing event data into a trace slice failed: out of "
            "memory\n");
  {
    Phase p(kKey);  // the host goes on
    ASSERT_TRUE(p.event().set(DataLevel::kTrace, kRows, 13).ok());
  }
  session.finish();
  const auto slices = slices_named(load_trace(session.path()), "boundary_data_phase");
  ASSERT_EQ(slices.size(), 3u);
  int with_rows = 0;
  for (const json& s : slices) {
    if (s.contains("args") && s["args"].contains(kRows)) {
      ++with_rows;
      EXPECT_EQ(s["args"][kRows], 13);
    }
  }
  EXPECT_EQ(with_rows, 1);
}

TEST_F(CompileBoundary, LookupTextOutOfMemorySaysSoOnce) {
  ::testing::internal::CaptureStderr();
  {
    FailingAllocations oom;  // the text saying why nothing was found
    const EventRef ref = event("no_event_has_this_name");
    EXPECT_TRUE(oom.fired());
    EXPECT_FALSE(ref.found());
    EXPECT_FALSE(ref.set(DataLevel::kTrace, "k", 1).ok()) << "still refused, without a reason";
  }
  {
    FailingAllocations oom;  // the same for the outermost event: said once, above
    const EventRef ref = toplevel_event();
    EXPECT_TRUE(oom.fired());
    EXPECT_FALSE(ref.found());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: explaining why no event was found failed: out of memory\n");
  EXPECT_EQ(event("no_event_has_this_name").lookup_error(),  // the host goes on
            "no open phase or compile unit named 'no_event_has_this_name' on "
            "this thread");
}

TEST_F(CompileBoundary, DataOutOfMemoryIsAFailedStatusNamingWhatFailed) {
  ::testing::internal::CaptureStderr();
  CompileUnit unit({.graph = "data"});
  Status metric;
  Status data;
  {
    FailingAllocations oom;  // the metric key's copy into the record
    metric = unit.set(kLong, 1);
    EXPECT_TRUE(oom.fired());
  }
  {
    FailingAllocations oom;  // the unit's event data block
    data = toplevel_event().set(DataLevel::kTrace, kLong, 1);
    EXPECT_TRUE(oom.fired());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "the caller decides what to log";
  EXPECT_FALSE(metric.ok());
  EXPECT_EQ(metric.message(), "adding a metric failed: out of memory");
  EXPECT_FALSE(data.ok());
  EXPECT_EQ(data.message(), "adding event data failed: out of memory");
  EXPECT_TRUE(unit.set(kLong, 1).ok());  // the host goes on
  EXPECT_TRUE(toplevel_event().set(DataLevel::kTrace, kLong, 1).ok());
}

TEST_F(CompileBoundary, StepLoggerOutOfMemorySaysWhatWasDropped) {
  std::vector<std::string> got;
  set_step_sink([&got](LogLevel, std::string_view line) { got.emplace_back(line); });
  ::testing::internal::CaptureStderr();
  {
    FailingAllocations oom;  // the stage's copy
    StepLogger logger(kLong);
    EXPECT_TRUE(oom.fired());
    EXPECT_EQ(logger.stage(), "");
  }
  StepLogger logger("lower");
  {
    FailingAllocations oom;  // the line, once the message is appended
    logger.log(kLong);
    EXPECT_TRUE(oom.fired());
  }
  {
    FailingAllocations oom;  // the description's copy
    CompileProgress bar(kLong, 2);
    EXPECT_TRUE(oom.fired());
  }
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "jitscope: naming a compile step failed: out of memory\n"
            "jitscope: writing a step log line failed: out of memory\n"
            "jitscope: describing the progress bar failed: out of memory\n");
  EXPECT_TRUE(got.empty()) << "the line is dropped, not cut";
  logger.log("fused");  // the host goes on
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "Step " + std::to_string(logger.step()) + ": fused");
}

// Every allocation of a recompile (hooks, a compile-event phase with data,
// cache traffic, a metric, the close and the record) fails in turn, one per
// run. Nothing escapes, every line is a `jitscope:` line said once, and
// every record written is whole: a record whose copy was cut short by the
// failure is never written.
TEST_F(CompileBoundary, EachAllocationOfAUnitCanFailWithoutHarm) {
  static const PhaseKey kKey("boundary_sweep_phase",
                             {.column = "sweep_time_us", .compile_event = true});
  const std::string graph = "a_graph_name_that_needs_the_heap";
  register_recompile_context_hook([] { return std::string(40, 'c'); });
  ::testing::internal::CaptureStderr();
  long runs = 0;
  for (long n = 0;; ++n) {
    ASSERT_LT(n, 5000) << "the injected failure never stops firing";
    reset_compile_state();
    { CompileUnit first({.frame = "sweep", .graph = graph}); }
    bool fired = false;
    {
      FailingAllocations oom(n);
      {
        CompileUnit unit({.frame = "sweep", .graph = graph, .recompile_reason = kLong});
        {
          Phase p(kKey);
          p.event().try_set(DataLevel::kCompileEvent, kLong, 1);
        }
        unit.cache_hit(kLong);
        (void)unit.set("a_metric_that_needs_the_heap", 2);
      }
      fired = oom.fired();
    }
    for (const CompileRecord& r : recent_compile_records()) {
      EXPECT_TRUE(r.has_compile_id) << "run " << n << ": " << r.to_json();
      EXPECT_NE(r.name.find(graph), std::string::npos) << "run " << n << ": " << r.to_json();
    }
    if (!fired) break;  // every allocation has failed once
    ++runs;
  }
  const std::vector<std::string> lines =
      jitscope::testing::lines_of(::testing::internal::GetCapturedStderr());
  RecordProperty("failed_allocations", static_cast<int>(runs));
  RecordProperty("lines", static_cast<int>(lines.size()));
  EXPECT_GT(runs, 10);
  EXPECT_FALSE(lines.empty());
  std::map<std::string, int> seen;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.rfind("jitscope: ", 0), 0u) << line;
    EXPECT_EQ(++seen[line], 1) << "said twice: " << line;
  }
  // The run where nothing failed recorded everything.
  const auto records = recent_compile_records();
  const CompileRecord* whole = last_record_of(records, "0/1");
  ASSERT_NE(whole, nullptr);
  EXPECT_EQ(whole->recompile_user_contexts, std::vector<std::string>{std::string(40, 'c')});
  EXPECT_EQ(whole->compile_events.size(), 1u);
  EXPECT_EQ(whole->caches.at("cache").hits, 1u);
  EXPECT_EQ(whole->columns.count("sweep_time_us"), 1u);
}

}  // namespace
}  // namespace jitscope
