// Spans, phases and attachments begun in one callback and ended in another
// (issue 18): movable Span, begin_phase/PhaseHandle, attach_thread/
// ThreadAttachment, ends out of order and on the wrong thread, and
// exclusive (self-time) metrics columns.
//
// Durations come from real sleeps, so tests check relations between them
// (a column equals the unit's duration, or exceeds it by a nested phase),
// never wall-clock values.
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <thread>
#include <vector>

namespace jitscope::testing {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class Handles : public ::testing::Test {
 protected:
  void SetUp() override { reset_compile_state(); }
};

// A copy: phase_times() returns a temporary.
std::optional<PhaseTimes> times_of(const std::vector<PhaseTimes>& all, const std::string& key) {
  for (const PhaseTimes& t : all) {
    if (t.key == key) return t;
  }
  return std::nullopt;
}

CompileRecord last_record() {
  const std::vector<CompileRecord> records = recent_compile_records();
  return records.empty() ? CompileRecord() : records.back();
}

std::vector<json> slices_named(const json& trace, const std::string& name) {
  std::vector<json> out;
  for (const json& e : events_with_ph(trace, "X")) {
    if (e.value("name", "") == name) out.push_back(e);
  }
  return out;
}

// A pass manager's shape: "before" callbacks push, "after" callbacks end the
// span they are given by name, whatever the order.
struct CallbackTracer {
  std::map<std::string, Span> open;
  void before(const std::string& name) { open.emplace(name, Span(std::string_view(name))); }
  void after(const std::string& name) {
    auto it = open.find(name);
    if (it == open.end()) return;
    it->second.end();
    open.erase(it);
  }
};

TEST_F(Handles, MovedSpansEndOnceByHandleInAnyOrder) {
  ScopedSession session(test_config("handles_spans"));
  ASSERT_TRUE(session.status().ok());
  {
    CallbackTracer tracer;
    tracer.before("pass_a");
    tracer.before("pass_b");
    tracer.after("pass_a");  // out of order: pass_b ends with it, marked
    tracer.after("pass_b");  // ends nothing
    tracer.before("pass_c");
    tracer.after("pass_c");

    Span first("first");
    Span second("second");
    second = std::move(first);  // ends "second" now; "first" lives on in `second`
    EXPECT_FALSE(first.recording());
    first.end();  // moved-from: ends nothing
    EXPECT_TRUE(second.recording());
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_ended_out_of_order, 1u);
  EXPECT_EQ(stats.spans_incomplete, 0u);

  const json trace = load_trace(session.path());
  for (const char* name : {"pass_a", "pass_b", "pass_c", "first", "second"}) {
    EXPECT_EQ(slices_named(trace, name).size(), 1u) << name;
  }
  const json a = slices_named(trace, "pass_a").at(0);
  const json b = slices_named(trace, "pass_b").at(0);
  EXPECT_TRUE(b["args"].value("jitscope_ended_with_outer", false));
  EXPECT_LE(to_ns(b["ts"]) + to_ns(b["dur"]), to_ns(a["ts"]) + to_ns(a["dur"]));
  // "second" ended at the move, before "first" (which began before it) ended.
  const json first = slices_named(trace, "first").at(0);
  const json second = slices_named(trace, "second").at(0);
  EXPECT_LE(to_ns(second["ts"]) + to_ns(second["dur"]), to_ns(first["ts"]) + to_ns(first["dur"]));
}

TEST_F(Handles, APhaseBegunInOneCallbackEndsInAnotherInItsUnit) {
  static const PhaseKey kKey("handle_phase", {.column = "handle_us"});
  ScopedSession session(test_config("handles_phase"));
  ASSERT_TRUE(session.status().ok());
  CompileId id;
  {
    CompileUnit unit({.frame = "handles"});
    id = unit.id();
    PhaseHandle handle = begin_phase(kKey, {{"pass", "inline"}});
    ASSERT_TRUE(handle.open());
    PhaseHandle stored = std::move(handle);  // kept in the hook's state
    EXPECT_FALSE(handle.open());
    std::this_thread::sleep_for(2ms);
    EXPECT_TRUE(stored.event().set(DataLevel::kTrace, "ops", 7).ok());
    stored.end();
    EXPECT_FALSE(stored.open());
    stored.end();  // idempotent
    EXPECT_FALSE(stored.event().found());
  }
  (void)session.finish();

  const CompileRecord r = last_record();
  EXPECT_EQ(r.compile_id, id);
  ASSERT_EQ(r.columns.count("handle_us"), 1u);
  EXPECT_GE(r.columns.at("handle_us"), 2000u);
  EXPECT_EQ(r.duration_us, r.columns.at("handle_us"));  // the outermost column phase
  const std::optional<PhaseTimes> t = times_of(phase_times(), "handle_phase");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->count, 1u);

  const auto slices = slices_named(load_trace(session.path()), "handle_phase");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["args"]["compile_id"], id.str());
  EXPECT_EQ(slices[0]["args"]["pass"], "inline");
  EXPECT_EQ(slices[0]["args"]["ops"], 7);
}

TEST_F(Handles, PhaseHandlesEndedOutOfOrderKeepTheirOwnDurationsAndUnits) {
  static const PhaseKey kOuter("ooo_outer", {.column = "ooo_outer_us"});
  static const PhaseKey kInner("ooo_inner", {.column = "ooo_inner_us"});
  {
    CompileUnit unit;
    PhaseHandle outer = begin_phase(kOuter);
    std::this_thread::sleep_for(1ms);
    PhaseHandle inner = begin_phase(kInner);
    std::this_thread::sleep_for(2ms);
    outer.end();  // before the phase opened inside it
    std::this_thread::sleep_for(3ms);
    inner.end();
  }
  const CompileRecord r = last_record();
  ASSERT_EQ(r.columns.count("ooo_outer_us"), 1u);
  ASSERT_EQ(r.columns.count("ooo_inner_us"), 1u);
  // Each phase is timed from its own begin to its own end.
  EXPECT_GE(r.columns.at("ooo_outer_us"), 3000u);
  EXPECT_GE(r.columns.at("ooo_inner_us"), 5000u);
  // Only the outer one was outermost: the unit's duration is its time.
  EXPECT_EQ(r.duration_us, r.columns.at("ooo_outer_us"));
  // The thread's stack is clean again: a new unit sees no stale phase.
  CompileUnit next;
  EXPECT_EQ(toplevel_event().found(), true);
  EXPECT_TRUE(toplevel_event().set(DataLevel::kMetric, "clean", true).ok());
}

TEST_F(Handles, ADroppedHandleEndsItsPhase) {
  static const PhaseKey kKey("dropped_phase");
  { PhaseHandle handle = begin_phase(kKey); }
  { PhaseHandle by_name = begin_phase("dropped_by_name"); }
  for (const char* key : {"dropped_phase", "dropped_by_name"}) {
    const std::optional<PhaseTimes> t = times_of(phase_times(), key);
    ASSERT_TRUE(t.has_value()) << key;
    EXPECT_EQ(t->count, 1u) << key;
  }
}

TEST_F(Handles, AnEndOnAnotherThreadIsRefusedSaidOnceAndHurtsNothing) {
  static const PhaseKey kKey("wrong_thread_phase", {.column = "wrong_thread_us"});
  StderrCapture err;
  PhaseHandle handle;
  ThreadAttachment attachment;
  CompileUnit unit;
  // Began on a thread of its own, so that the refused frames stay on a
  // stack nobody uses again.
  std::thread([&] {
    handle = begin_phase(kKey);
    attachment = attach_thread(unit.ref());
  }).join();
  ASSERT_TRUE(handle.open());
  ASSERT_TRUE(attachment.attached());
  handle.end();  // this thread did not begin it
  attachment.detach();
  // Refused: still open, so that their own thread could still end them
  // (ARefusedEndLeavesThePhaseForItsOwnThreadToEnd).
  EXPECT_TRUE(handle.open());
  EXPECT_TRUE(attachment.attached());
  const std::string text = err.text();
  EXPECT_NE(text.find("jitscope: ending a phase on a thread other than the one that opened it: "
                      "refused"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("jitscope: leaving a compile unit on a thread other than the one that "
                      "opened it: refused"),
            std::string::npos)
      << text;
  EXPECT_FALSE(times_of(phase_times(), "wrong_thread_phase").has_value());  // never ended
  // This thread's own stack is untouched: its unit is still the current one.
  CompileId id;
  ASSERT_TRUE(current_compile_id(&id));
  EXPECT_EQ(id, unit.id());
}

// The refusal says the phase "stays open there until that thread ends it":
// the handle keeps it, and the owning thread's later end times it into its
// unit (the handle used to be emptied by the refused end, and the time lost).
TEST_F(Handles, ARefusedEndLeavesThePhaseForItsOwnThreadToEnd) {
  static const PhaseKey kKey("refused_then_ended", {.column = "refused_then_ended_us"});
  StderrCapture quiet;  // the refusal's line, already covered above
  PhaseHandle handle;
  ThreadAttachment attachment;
  std::promise<CompileUnitRef> opened;
  std::promise<void> refused;
  std::thread owner([&] {
    CompileUnit unit({.frame = "refused_then_ended"});
    handle = begin_phase(kKey);
    opened.set_value(unit.ref());
    refused.get_future().wait();
    std::this_thread::sleep_for(2ms);
    handle.end();  // its own thread: ends it
    EXPECT_FALSE(handle.open());
  });
  const CompileUnitRef ref = opened.get_future().get();
  ASSERT_TRUE(ref.valid());
  handle.end();  // not this thread's
  EXPECT_TRUE(handle.open());
  refused.set_value();
  owner.join();
  const CompileRecord r = last_record();
  EXPECT_EQ(r.frame, "refused_then_ended");
  ASSERT_EQ(r.columns.count("refused_then_ended_us"), 1u) << r.to_json();
  EXPECT_GE(r.columns.at("refused_then_ended_us"), 2000u);
  EXPECT_EQ(runtime_record().columns.count("refused_then_ended_us"), 0u);
  const std::optional<PhaseTimes> t = times_of(phase_times(), "refused_then_ended");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->count, 1u);
}

// A column phase still open when its unit closes ends with the unit, its
// time in the unit's record (not the runtime record's), its slice marked;
// the handle's later end does nothing.
TEST_F(Handles, APhaseStillOpenWhenItsUnitClosesEndsWithTheUnit) {
  static const PhaseKey kKey("outlives_unit", {.column = "outlives_unit_us"});
  ScopedSession session(test_config("handles_outlives_unit"));
  ASSERT_TRUE(session.status().ok());
  PhaseHandle handle;
  CompileId id;
  {
    CompileUnit unit({.frame = "outlives"});
    id = unit.id();
    handle = begin_phase(kKey);
    std::this_thread::sleep_for(2ms);
  }  // the unit closes first
  std::this_thread::sleep_for(3ms);
  handle.end();
  EXPECT_FALSE(handle.open());
  (void)session.finish();

  const CompileRecord r = last_record();
  EXPECT_EQ(r.compile_id, id);
  ASSERT_EQ(r.columns.count("outlives_unit_us"), 1u) << r.to_json();
  EXPECT_GE(r.columns.at("outlives_unit_us"), 2000u);
  EXPECT_EQ(r.duration_us, r.columns.at("outlives_unit_us"));
  EXPECT_EQ(runtime_record().columns.count("outlives_unit_us"), 0u) << "charged to the runtime";
  const std::optional<PhaseTimes> t = times_of(phase_times(), "outlives_unit");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->count, 1u) << "ended once";

  const json trace = load_trace(session.path());
  const auto slices = slices_named(trace, "outlives_unit");
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0]["args"]["jitscope_ended_with_unit"], true);
  EXPECT_EQ(slices[0]["args"]["compile_id"], id.str());
  const auto units = slices_named(trace, id.display() + " " + r.name);
  ASSERT_EQ(units.size(), 1u);
  // Inside its unit's slice.
  EXPECT_LE(slices[0]["ts"].get<double>() + slices[0]["dur"].get<double>(),
            units[0]["ts"].get<double>() + units[0]["dur"].get<double>());
  EXPECT_EQ((*metadata(trace, "jitscope_stats"))["args"]["spans_ended_out_of_order"], 0);
}

TEST_F(Handles, AnAttachedWorkerCarriesTheUnitUntilItDetaches) {
  static const PhaseKey kWorkerPhase("attached_work", {.column = "worker_us"});
  ScopedSession session(test_config("handles_attach"));
  ASSERT_TRUE(session.status().ok());
  CompileId id;
  {
    CompileUnit unit;
    id = unit.id();
    const CompileUnitRef ref = unit.ref();
    std::thread([&] {
      ThreadAttachment attachment = attach_thread(ref);  // runBeforePipeline
      EXPECT_TRUE(attachment.attached());
      CompileId seen;
      EXPECT_TRUE(current_compile_id(&seen));
      EXPECT_EQ(seen, id);
      {
        PhaseHandle phase = begin_phase(kWorkerPhase);
        JITSCOPE_SPAN("worker_span");
        std::this_thread::sleep_for(1ms);
      }
      attachment.detach();  // runAfterPipeline
      EXPECT_FALSE(current_compile_id(&seen));
      JITSCOPE_SPAN("after_detach");
    }).join();
    EXPECT_FALSE(attach_thread(CompileUnitRef()).attached());
  }
  (void)session.finish();
  const CompileRecord r = last_record();
  ASSERT_EQ(r.columns.count("worker_us"), 1u);
  EXPECT_GE(r.columns.at("worker_us"), 1000u);
  EXPECT_EQ(r.duration_us, 0u);  // attached threads run beside the unit: no duration

  const json trace = load_trace(session.path());
  const auto worker = slices_named(trace, "worker_span");
  const auto after = slices_named(trace, "after_detach");
  ASSERT_EQ(worker.size(), 1u);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(worker[0]["args"]["compile_id"], id.str());
  EXPECT_FALSE(after[0].contains("args") && after[0]["args"].contains("compile_id"));
}

// A pass manager's shape: an adaptor phase around pass phases, all charged
// to one column.
void run_nested(const PhaseKey& adaptor, const PhaseKey& pass) {
  PhaseHandle outer = begin_phase(adaptor);
  std::this_thread::sleep_for(2ms);
  for (int i = 0; i < 2; ++i) {
    PhaseHandle inner = begin_phase(pass);
    std::this_thread::sleep_for(2ms);
  }
}

TEST_F(Handles, ExclusiveColumnsSumToWallTimeWhereInclusiveOnesCountNestingTwice) {
  static const PhaseKey kAdaptor("x_adaptor", {.column = "x_passes_us", .exclusive = true});
  static const PhaseKey kPass("x_pass", {.column = "x_passes_us", .exclusive = true});
  static const PhaseKey kInclusiveAdaptor("i_adaptor", {.column = "i_passes_us"});
  static const PhaseKey kInclusivePass("i_pass", {.column = "i_passes_us"});
  {
    CompileUnit unit;
    run_nested(kAdaptor, kPass);
  }
  const CompileRecord exclusive = last_record();
  {
    CompileUnit unit;
    run_nested(kInclusiveAdaptor, kInclusivePass);
  }
  const CompileRecord inclusive = last_record();

  // Self times: the column is the adaptor's wall time, give or take the
  // µs each of the three phases loses to rounding down.
  const std::uint64_t x = exclusive.columns.at("x_passes_us");
  EXPECT_LE(x, exclusive.duration_us);
  EXPECT_GE(x + 3, exclusive.duration_us);
  // Inclusive: the passes are counted in the adaptor and again on their own.
  EXPECT_GE(inclusive.columns.at("i_passes_us"), inclusive.duration_us + 4000);

  const std::vector<PhaseTimes> times = phase_times();
  const std::optional<PhaseTimes> adaptor = times_of(times, "x_adaptor");
  ASSERT_TRUE(adaptor.has_value());
  EXPECT_TRUE(adaptor->exclusive);
  EXPECT_GE(adaptor->total_ns, adaptor->self_ns + 4'000'000);  // the passes' 2 x 2 ms
  EXPECT_GE(adaptor->self_ns, 2'000'000u);
  const std::optional<PhaseTimes> pass = times_of(times, "x_pass");
  ASSERT_TRUE(pass.has_value());
  EXPECT_EQ(pass->self_ns, pass->total_ns);  // nothing inside it
  // The cumulative table shows self time for the exclusive adaptor.
  const std::string table = cumulative_time_report(TableFormat::kCsv);
  char row[96];
  std::snprintf(row, sizeof row, "x_adaptor,x_passes_us,%.6f",
                static_cast<double>(adaptor->self_ns) / 1e9);
  EXPECT_NE(table.find(row), std::string::npos) << table;
}

TEST_F(Handles, AnExclusiveColumnExcludesColumnPhasesOfOtherColumnsToo) {
  static const PhaseKey kLower("mix_lower", {.column = "mix_lower_us", .exclusive = true});
  static const PhaseKey kCodegen("mix_codegen", {.column = "mix_codegen_us"});
  static const PhaseKey kPlain("mix_plain");  // no column: part of its parent's self time
  {
    CompileUnit unit;
    Phase lower(kLower);
    std::this_thread::sleep_for(2ms);
    {
      Phase plain(kPlain);
      std::this_thread::sleep_for(2ms);
      Phase codegen(kCodegen);
      std::this_thread::sleep_for(3ms);
    }
  }
  const CompileRecord r = last_record();
  const std::uint64_t lower = r.columns.at("mix_lower_us");
  const std::uint64_t codegen = r.columns.at("mix_codegen_us");
  EXPECT_GE(lower, 4000u);  // its own 2 ms and the plain phase's 2 ms
  EXPECT_GE(codegen, 3000u);
  EXPECT_LE(lower + codegen, r.duration_us);
  EXPECT_GE(lower + codegen + 2, r.duration_us);
}

TEST_F(Handles, AKeyKeepsTheExclusiveFlagItWasFirstRegisteredWith) {
  const PhaseKey first("flag_key", {.column = "flag_us", .exclusive = true});
  const PhaseKey second("flag_key", {.column = "flag_us"});
  EXPECT_TRUE(first.status().ok());
  ASSERT_FALSE(second.status().ok());
  EXPECT_NE(second.status().message().find("exclusive=true"), std::string::npos)
      << second.status().message();
  EXPECT_EQ(second.stats(), first.stats());
}

}  // namespace
}  // namespace jitscope::testing
