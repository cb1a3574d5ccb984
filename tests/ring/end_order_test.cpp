// Spans (and phases) ended out of order (issue 18): an outer span's end also
// ends the spans opened inside it, which are marked; their own ends then end
// nothing, and a span begun later at the same depth is never taken for them.
// Counted in the stats and said once at stop.
#include "quiet_ring.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.h>
#include <jitscope/compile.hpp>

#include <map>
#include <memory>
#include <optional>

namespace jitscope::testing {
namespace {

using nlohmann::json;

std::map<std::string, json> spans_by_name(const json& trace) {
  std::map<std::string, json> out;
  for (const auto& e : events_with_ph(trace, "X")) out[e["name"].get<std::string>()] = e;
  return out;
}

std::size_t count_named(const json& trace, const std::string& name) {
  std::size_t n = 0;
  for (const auto& e : events_with_ph(trace, "X")) n += e["name"] == name ? 1 : 0;
  return n;
}

long long end_ns(const json& e) { return to_ns(e["ts"]) + to_ns(e["dur"]); }
bool marked(const json& e) {
  return e.contains("args") && e["args"].value("jitscope_ended_with_outer", false);
}

TEST(EndOrder, AnOuterEndEndsTheSpansInsideItAndTheirEndsEndNothing) {
  ScopedSession session(test_config("end_order"));
  ASSERT_TRUE(session.status().ok());
  StderrCapture err;
  {
    auto outer = std::make_unique<Span>("outer");
    auto middle = std::make_unique<Span>("middle");
    auto inner = std::make_unique<Span>("inner");
    outer->end();  // out of order: middle and inner are open
    // Opened after: it takes middle's depth, and middle's end must not end it.
    Span later("later");
    Span later_child("later_child");
    // An arg to a span ended with its outer one goes nowhere, never to the
    // span opened since at its place (later_child).
    middle->arg("stray", 1);
    middle->end();
    inner->end();
    EXPECT_TRUE(later.recording());
    later_child.end();
    later.end();
  }
  { JITSCOPE_SPAN("after"); }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_ended_out_of_order, 1u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(err.text(),
            "jitscope: 1 span(s) were ended while spans opened inside them were still open; "
            "those ended with them, marked jitscope_ended_with_outer\n");

  const json trace = load_trace(session.path());
  auto spans = spans_by_name(trace);
  ASSERT_EQ(spans.size(), 6u);
  EXPECT_FALSE(marked(spans["outer"]));
  EXPECT_TRUE(marked(spans["middle"]));
  EXPECT_TRUE(marked(spans["inner"]));
  EXPECT_FALSE(marked(spans["later"]));
  EXPECT_FALSE(marked(spans["later_child"]));
  for (const auto& [name, e] : spans) {
    EXPECT_FALSE(e.contains("args") && e["args"].contains("stray")) << name;
  }
  // Nested, each inside the one it was opened in, all ending by outer's end.
  EXPECT_LE(to_ns(spans["outer"]["ts"]), to_ns(spans["middle"]["ts"]));
  EXPECT_LE(to_ns(spans["middle"]["ts"]), to_ns(spans["inner"]["ts"]));
  EXPECT_LE(end_ns(spans["inner"]), end_ns(spans["middle"]));
  EXPECT_LE(end_ns(spans["middle"]), end_ns(spans["outer"]));
  // later_child is inside later, and both come after outer.
  EXPECT_GE(to_ns(spans["later"]["ts"]), end_ns(spans["outer"]));
  EXPECT_LE(end_ns(spans["later_child"]), end_ns(spans["later"]));
  const json* s = metadata(trace, "jitscope_stats");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ((*s)["args"]["spans_ended_out_of_order"], 1);
  EXPECT_EQ((*s)["args"]["unbalanced_ends"], 0);
}

// In order, nothing is counted or said.
TEST(EndOrder, NestedEndsAreNotCounted) {
  ScopedSession session(test_config("end_order_nested"));
  ASSERT_TRUE(session.status().ok());
  StderrCapture err;
  {
    Span a("a");
    Span b("b");
    b.end();
    Span c("c");
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_ended_out_of_order, 0u);
  EXPECT_EQ(err.text(), "");
}

// Phases are spans too: a phase ended before the one opened inside it.
TEST(EndOrder, APhaseEndedBeforeItsInnerPhase) {
  ScopedSession session(test_config("end_order_phase"));
  ASSERT_TRUE(session.status().ok());
  {
    std::optional<Phase> outer(std::in_place, "order_outer_phase");
    Phase inner("order_inner_phase");
    outer.reset();
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_ended_out_of_order, 1u);
  const json trace = load_trace(session.path());
  auto spans = spans_by_name(trace);
  ASSERT_TRUE(spans.count("order_inner_phase"));
  EXPECT_TRUE(marked(spans["order_inner_phase"]));
  EXPECT_LE(end_ns(spans["order_inner_phase"]), end_ns(spans["order_outer_phase"]));
}

// A column phase opened in unit A and ended while unit B (opened inside the
// phase) is current: its µs are A's, not B's.
TEST(EndOrder, APhaseEndedInsideAnotherUnitChargesItsOwn) {
  ScopedSession session(test_config("end_order_units"));
  ASSERT_TRUE(session.status().ok());
  CompileId a_id, b_id;
  {
    CompileUnit a(CompileUnitOptions{.frame = "order_unit_a"});
    a_id = a.id();
    std::optional<Phase> phase(std::in_place, "order_column_phase",
                               PhaseOptions{.column = "order_column_us"});
    {
      CompileUnit b(CompileUnitOptions{.frame = "order_unit_b"});
      b_id = b.id();
      phase.reset();
    }
  }
  session.finish();
  std::optional<CompileRecord> a_rec, b_rec;
  for (const CompileRecord& r : recent_compile_records()) {
    if (r.has_compile_id && r.compile_id == a_id) a_rec = r;
    if (r.has_compile_id && r.compile_id == b_id) b_rec = r;
  }
  ASSERT_TRUE(a_rec && b_rec);
  EXPECT_EQ(a_rec->columns.count("order_column_us"), 1u);
  EXPECT_EQ(b_rec->columns.count("order_column_us"), 0u);
}

// The End slots reserved at begin stay exact when an outer end closes the
// spans inside it: an inner span that is never ended itself (a C handle
// left open, as an outer end allows) gives its slot back with its outer
// span. Were it kept reserved, 100 of them would eat this 64-slot ring and
// every later span would be dropped (or, under kBlock, wait for the flusher).
TEST(EndOrder, InnerSpansNeverEndedThemselvesGiveTheirSlotsBackWithTheirOuterEnd) {
  Config cfg = test_config("end_order_reserved");
  cfg.ring_capacity = 64;
  cfg.overflow = OverflowPolicy::kBlock;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  StderrCapture err;  // stop() says the ends out of order
  for (int i = 0; i < 100; ++i) {
    jitscope_span outer = jitscope_span_open("outer");
    jitscope_span inner = jitscope_span_open("inner");  // never closed
    (void)inner;
    jitscope_span_close(&outer);
  }
  Span after("after", {{"a", 1}, {"b", 2}, {"c", 3}});
  EXPECT_TRUE(after.recording());
  after.end();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.spans_ended_out_of_order, 100u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  const json trace = load_trace(session.path());
  EXPECT_EQ(count_named(trace, "inner"), 100u);
  EXPECT_EQ(count_named(trace, "after"), 1u);
}

// A stale end (a copy of a handle already closed) ends nothing and takes
// no other span's reserved slot: the span open at the time still ends
// whole when the ring is full.
TEST(EndOrder, AStaleHandleClosedAgainTakesNoOtherSpansSlot) {
  const NoEarlyWake quiet;  // the ring fills with nothing drained until stop
  Config cfg = test_config("end_order_stale");
  cfg.ring_capacity = 64;
  cfg.overflow = OverflowPolicy::kDrop;
  cfg.flush_interval = std::chrono::minutes(1);  // nothing drains the ring until stop
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  jitscope_span a = jitscope_span_open("a");
  jitscope_span copy = a;
  jitscope_span_close(&a);
  jitscope_span b = jitscope_span_open("b");
  jitscope_span_close(&copy);                              // closed already
  for (int i = 0; i < 200; ++i) JITSCOPE_INSTANT("fill");  // the ring fills up
  jitscope_span_close(&b);
  const SessionStats stats = session.finish();
  EXPECT_GT(stats.events_dropped, 0u) << "the ring was meant to fill";
  EXPECT_EQ(stats.spans_incomplete, 0u) << "b's End found no room";
  const json trace = load_trace(session.path());
  EXPECT_EQ(count_named(trace, "b"), 1u);
}

}  // namespace
}  // namespace jitscope::testing
