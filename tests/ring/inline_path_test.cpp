// The inline hot path (detail/hot.hpp): a span's common case written by
// header code straight into the thread's ring. It must write what the
// library's out-of-line begin writes, keep the End's slot reserved, and hand
// every case it does not handle (dropped Begins open, a full ring, string
// args) to the library.
#include "quiet_ring.hpp"
#include "ring/producer.hpp"
#include "ring/thread_registry.hpp"
#include "trace_support.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

// The record at ring position `pos` of the calling thread (slots keep their
// bytes after the flusher has copied them out).
const detail::Record& record_at(std::uint64_t pos) { return detail::t_hot->producer.at(pos); }
// Positions count bytes: the position `n` records after `pos`.
constexpr std::uint64_t pos_after(std::uint64_t pos, std::uint64_t n) {
  return pos + n * detail::kRecordBytes;
}
std::uint64_t tail_now() { return detail::t_hot->producer.tail.load(std::memory_order_relaxed); }
// Records written so far into the calling thread's ring (its positions
// start where no other ring's do).
std::uint64_t used_now() {
  return (tail_now() - detail::t_state->ring.start()) / detail::kRecordBytes;
}

// Every test here counts what a ring holds when nothing drains it before
// stop: the ring's early wake of the flusher (at half full) is off.
class QuietRings : public ::testing::Environment {
  void SetUp() override { quiet_.emplace(); }
  void TearDown() override { quiet_.reset(); }
  std::optional<NoEarlyWake> quiet_;
};
[[maybe_unused]] ::testing::Environment* const kQuietRings =
    ::testing::AddGlobalTestEnvironment(new QuietRings);

Config quiet_config(const std::string& stem, std::size_t capacity) {
  Config cfg = test_config(stem);
  cfg.ring_capacity = capacity;
  cfg.overflow = OverflowPolicy::kDrop;
  cfg.flush_interval = std::chrono::minutes(1);  // nothing drains the ring until stop
  return cfg;
}

// Registers the calling thread with a span begun through the library (left
// open: the caller ends it) and checks that the inline path's gate opened.
detail::SpanToken begin_registering_span(std::uint32_t s) {
  const detail::SpanToken first = detail::begin_static(s, 100, "lib");
  EXPECT_NE(detail::t_hot->session, 0u) << "the gate is open on a plain session";
  return first;
}

// A session on the clock the inline path does not read (x86 only: elsewhere
// CLOCK_MONOTONIC is the only clock, and the inline path's).
Config other_clock_config(const std::string& stem, std::size_t capacity) {
  Config cfg = quiet_config(stem, capacity);
  cfg.clock = ClockChoice::kMonotonic;
  return cfg;
}

// Each X slice's args by its name.
std::map<std::string, json> x_args_by_name(const json& trace) {
  std::map<std::string, json> args;
  for (const json& e : events_with_ph(trace, "X")) {
    args[e["name"].get<std::string>()] = e.value("args", json::object());
  }
  return args;
}

TEST(InlinePath, ABeginWritesTheRecordTheLibrarysBeginWrites) {
  ScopedSession session(quiet_config("inline_same", 1024));
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  // Registers the thread (the library's path), then one of each.
  const detail::SpanToken first = detail::begin_static(s, 100, "lib");
  ASSERT_NE(detail::t_hot->session, 0u) << "the gate is open on a plain session";
  const std::uint64_t at = tail_now();
  // The inline begin reads the session's clock itself, after its gate.
  const std::uint64_t before = detail::read_clock(s);
  const detail::SpanToken inlined = detail::begin_span(s, "inline");
  const std::uint64_t after = detail::read_clock(s);
  ASSERT_EQ(tail_now(), pos_after(at, 1));
  const detail::SpanToken library = detail::begin_static(s, 300, "lib2");

  const detail::Record& a = record_at(at);
  const detail::Record& b = record_at(pos_after(at, 1));
  EXPECT_EQ(a.kind, detail::RecordKind::kBegin);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.name_len, b.name_len);
  EXPECT_EQ(a.index, b.index);  // a Begin's index is not read
  EXPECT_GE(a.ts, before);
  EXPECT_LE(a.ts, after);
  EXPECT_STREQ(a.name, "inline");
  // Serials: the ring position after the Begin, never 0; each on the stack
  // at its span's depth.
  EXPECT_TRUE(inlined.recorded());
  EXPECT_TRUE(library.recorded());
  EXPECT_EQ(inlined.serial(), pos_after(at, 1));
  EXPECT_EQ(library.serial(), pos_after(at, 2));
  EXPECT_EQ(detail::t_hot->serial_of(1), pos_after(at, 1));
  EXPECT_EQ(detail::t_hot->serial_of(2), pos_after(at, 2));
  EXPECT_EQ(detail::t_state->depth(), 3u);

  // Ends: inline and library alike write one End each, innermost first.
  const std::uint64_t before_end = detail::read_clock(s);
  detail::end_span_now(library);
  const std::uint64_t after_end = detail::read_clock(s);
  const detail::Record& e = record_at(pos_after(at, 2));
  EXPECT_EQ(e.kind, detail::RecordKind::kEnd);
  EXPECT_GE(e.ts, before_end);
  EXPECT_LE(e.ts, after_end);
  detail::end_span_now(inlined);
  detail::end_span(first, 600);
  EXPECT_EQ(record_at(pos_after(at, 3)).kind, detail::RecordKind::kEnd);
  EXPECT_EQ(record_at(pos_after(at, 4)).kind, detail::RecordKind::kEnd);
  EXPECT_EQ(detail::t_state->depth(), 0u);
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  auto spans = events_with_ph(load_trace(session.path()), "X");
  ASSERT_EQ(spans.size(), 3u);
}

// The inline path reads inline_clock() without asking which clock the
// session is on, so its gate stays closed for a session on another clock
// (on x86, CLOCK_MONOTONIC): there every span goes through the library, and
// its times are the session's clock's.
TEST(InlinePath, TheGateStaysClosedForASessionOnAnotherClock) {
#if !defined(__x86_64__) && !defined(__i386__)
  GTEST_SKIP() << "CLOCK_MONOTONIC is the only clock, and the inline path's, here";
#endif
  ScopedSession session(other_clock_config("inline_other_clock", 1024));
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  { JITSCOPE_SPAN("registers"); }
  ASSERT_FALSE(detail::runs_on_inline_clock(s));
  EXPECT_EQ(detail::t_hot->session, 0u);
  EXPECT_EQ(detail::t_hot->other_clock_session, s) << "the library's lean path is open";
  const std::uint64_t at = tail_now();
  const std::uint64_t before = detail::monotonic_ns();
  { JITSCOPE_SPAN("monotonic"); }
  const std::uint64_t after = detail::monotonic_ns();
  ASSERT_EQ(tail_now(), pos_after(at, 2)) << "a Begin and an End, through the library";
  for (std::uint64_t pos : {at, pos_after(at, 1)}) {
    EXPECT_GE(record_at(pos).ts, before) << pos;
    EXPECT_LE(record_at(pos).ts, after) << pos;
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(events_with_ph(load_trace(session.path()), "X").size(), 2u);
}

// Behind the other clock's gate the library does the inline path's work
// with the time it read. Args, ends in and out of order, and a full ring
// (the gate closes while a dropped span is open) come out as they do on
// the inline path.
TEST(InlinePath, TheOtherClocksLeanPathKeepsEveryGuarantee) {
#if !defined(__x86_64__) && !defined(__i386__)
  GTEST_SKIP() << "CLOCK_MONOTONIC is the only clock, and the inline path's, here";
#endif
  ScopedSession session(other_clock_config("inline_other_clock_lean", 64));
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  { JITSCOPE_SPAN("registers"); }
  ASSERT_EQ(detail::t_hot->other_clock_session, s);
  {
    Span outer("outer", {{"a", 1}, {"b", 2.5}});
    Span middle("middle");
    Span inner("inner");
    middle.arg("m", 3);  // not the innermost
    outer.end();         // out of order: middle and inner end with it
  }
  std::vector<std::unique_ptr<Span>> nested;
  std::uint64_t dropped = 0;
  for (int i = 0; i < 40; ++i) {
    nested.push_back(std::make_unique<Span>("nested"));
    if (!nested.back()->recording()) {
      ++dropped;
      EXPECT_EQ(detail::t_hot->other_clock_session, 0u) << "a dropped span is open";
    }
  }
  EXPECT_GT(dropped, 0u) << "the ring never filled";
  while (!nested.empty()) nested.pop_back();
  EXPECT_EQ(detail::t_hot->other_clock_session, s) << "the gate reopens";
  EXPECT_EQ(detail::t_state->depth(), 0u);
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(stats.events_dropped, dropped);
  const json trace = load_trace(session.path());
  std::map<std::string, json> args;
  std::size_t spans = 0;
  for (const json& e : events_with_ph(trace, "X")) {
    ++spans;
    args[e["name"].get<std::string>()] = e.value("args", json::object());
  }
  EXPECT_EQ(spans, 4 + (40 - dropped));
  EXPECT_EQ(args["outer"], json({{"a", 1}, {"b", 2.5}}));
  EXPECT_EQ(args["middle"], json({{"m", 3}, {"jitscope_ended_with_outer", true}}));
  EXPECT_EQ(args["inner"], json({{"jitscope_ended_with_outer", true}}));
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["spans_ended_out_of_order"], 1);
  EXPECT_EQ((*st)["args"]["unbalanced_ends"], 0);
}

// A span left open when its session stopped ends nothing in the next one,
// though the two sessions' first spans have the same place in their rings:
// the inline end trusts a serial's match alone, so no two rings may share a
// position (ThreadState's ring starts).
TEST(InlinePath, ASpanFromAnEarlierSessionEndsNothingInTheNextOne) {
  std::optional<Span> stale;
  std::uint64_t stale_at = 0;
  {
    ScopedSession one(quiet_config("inline_stale_one", 1024));
    ASSERT_TRUE(one.status().ok());
    { JITSCOPE_SPAN("registers"); }
    stale_at = used_now();
    stale.emplace("left_open");
    ASSERT_TRUE(stale->recording());
  }
  ScopedSession two(quiet_config("inline_stale_two", 1024));
  ASSERT_TRUE(two.status().ok());
  { JITSCOPE_SPAN("registers"); }
  ASSERT_EQ(used_now(), stale_at) << "the same events before: the same place in the ring";
  {
    Span now("in_two");
    ASSERT_TRUE(now.recording());
    const std::uint64_t tail = tail_now();
    stale.reset();
    EXPECT_EQ(detail::t_state->depth(), 1u) << "the stale end closed the span of session two";
    EXPECT_EQ(tail_now(), tail) << "the stale end wrote a record";
  }
  const SessionStats stats = two.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  const json trace = load_trace(two.path());
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["unbalanced_ends"], 0);
}

// An instant without args and a counter with a static name are written
// inline as the library writes them, and leave the room kept for the Ends
// owed: a span open while instants fill the ring still ends.
TEST(InlinePath, InstantsAndCountersInlineWriteTheLibrarysRecordsAndKeepTheEndsRoom) {
  ScopedSession session(quiet_config("inline_single", 64));
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  { JITSCOPE_SPAN("registers"); }
  ASSERT_NE(detail::t_hot->session, 0u) << "the gate is open on a plain session";
  const std::uint64_t at = tail_now();
  const std::uint64_t before = detail::read_clock(s);
  JITSCOPE_INSTANT("inline_instant");
  detail::instant(s, detail::read_clock(s), "library_instant", {}, nullptr, 0);
  JITSCOPE_COUNTER("inline_counter", 2.5);
  detail::counter(s, detail::read_clock(s), "library_counter", {}, 2.5);
  const std::uint64_t after = detail::read_clock(s);
  ASSERT_EQ(tail_now(), pos_after(at, 4)) << "one record each";
  for (std::uint64_t inlined : {at, pos_after(at, 2)}) {
    const detail::Record& a = record_at(inlined);
    const detail::Record& b = record_at(pos_after(inlined, 1));
    EXPECT_EQ(a.kind, b.kind) << (inlined - at) / detail::kRecordBytes;
    EXPECT_EQ(a.type, b.type) << (inlined - at) / detail::kRecordBytes;
    EXPECT_EQ(a.flags, b.flags) << (inlined - at) / detail::kRecordBytes;
    EXPECT_EQ(a.index, b.index) << (inlined - at) / detail::kRecordBytes;
    EXPECT_EQ(a.name_len, b.name_len) << (inlined - at) / detail::kRecordBytes;
    EXPECT_GE(a.ts, before);
    EXPECT_LE(a.ts, b.ts);
  }
  EXPECT_LE(record_at(pos_after(at, 3)).ts, after);
  EXPECT_EQ(record_at(at).kind, detail::RecordKind::kInstant);
  EXPECT_STREQ(record_at(at).name, "inline_instant");
  EXPECT_EQ(record_at(pos_after(at, 2)).kind, detail::RecordKind::kCounter);
  EXPECT_STREQ(record_at(pos_after(at, 2)).name, "inline_counter");
  EXPECT_EQ(record_at(pos_after(at, 2)).value.f64, 2.5);

  std::uint64_t written = 0;
  std::uint64_t dropped = 0;
  {
    // Three open: a room test that counted their Ends short (in bytes of
    // position: 3 * 32) would let the instants take one.
    Span open("open");
    Span open2("open");
    Span open3("open");
    ASSERT_TRUE(open3.recording());
    for (int i = 0; i < 100; ++i) {
      const std::uint64_t tail = tail_now();
      if (i % 2 == 0) {
        JITSCOPE_INSTANT("fill");
      } else {
        JITSCOPE_COUNTER("fill_counter", i);
      }
      (tail_now() != tail ? written : dropped) += 1;
    }
  }
  EXPECT_GT(dropped, 0u) << "the ring never filled";
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u) << "an instant or a counter took the End's slot";
  EXPECT_EQ(stats.events_dropped, dropped);
  const json trace = load_trace(session.path());
  EXPECT_EQ(events_with_ph(trace, "X").size(), 4u);
  std::uint64_t fills = 0;
  for (const char* ph : {"I", "C"}) {
    for (const json& e : events_with_ph(trace, ph)) {
      fills += e["name"] == "fill" || e["name"] == "fill_counter";
    }
  }
  EXPECT_EQ(fills, written);
}

// Past depth 256 the thread's depth parks at the stack's last entry (no
// serial), so an inline end never reads past the stack or takes another span
// for the innermost: an end out of order across the untracked spans closes
// them all, and spans after it record and end inline again.
TEST(InlinePath, EndsAcrossSpansPastTheDepthLimitKeepTheStackWhole) {
  ScopedSession session(quiet_config("inline_parked", 4096));
  ASSERT_TRUE(session.status().ok());
  std::vector<std::unique_ptr<Span>> open;
  for (int i = 0; i < 300; ++i) open.push_back(std::make_unique<Span>("deep"));
  EXPECT_EQ(detail::t_state->depth(), 300u);
  EXPECT_EQ(detail::t_hot->depth_x8, detail::kParkedDepth * 8);
  open[299].reset();  // untracked: ends the innermost through the library
  EXPECT_EQ(detail::t_state->depth(), 299u);
  // 267 open: a stack indexed modulo 256 would find the span at depth 10 on top.
  while (open.size() > 267) open.pop_back();
  open[10].reset();  // out of order: the 256 spans inside it end with it
  EXPECT_EQ(detail::t_state->depth(), 10u);
  {
    Span after("after");
    EXPECT_TRUE(after.recording());
    EXPECT_EQ(detail::t_hot->depth_x8, 11u * 8);
  }
  EXPECT_EQ(detail::t_state->depth(), 10u);
  while (!open.empty()) open.pop_back();  // those ended with open[10] end nothing
  EXPECT_EQ(detail::t_state->depth(), 0u);
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(stats.events_dropped, 45u) << "the spans past depth 255";
  const json trace = load_trace(session.path());
  std::map<std::string, std::size_t> spans;
  for (const json& e : events_with_ph(trace, "X")) ++spans[e["name"].get<std::string>()];
  EXPECT_EQ(spans["deep"], 255u);
  EXPECT_EQ(spans["after"], 1u);
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["unbalanced_ends"], 0);
}

// Ring starts keep every position a ring of 2^35 records reaches a multiple
// of a record, below 2^61 (clear of SpanToken's flag bits, and far from a
// wrap at 2^64), and distinct for 2^20 thread states in a row.
TEST(InlinePath, RingStartsStayClearOfTheTokensFlagBits) {
  constexpr std::uint64_t kFlags = detail::SpanToken::kUnrecordedBit |
                                   detail::SpanToken::kLibraryEndBit |
                                   detail::SpanToken::kUntrackedBit;
  constexpr std::uint64_t kRingBytes = (std::uint64_t{1} << 35) * detail::kRecordBytes;
  constexpr std::uint64_t kStates = std::uint64_t{1} << detail::kRingStartStates;
  for (std::uint64_t n :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 16, std::uint64_t{1} << 17,
        std::uint64_t{1} << 18, kStates - 1, kStates, std::uint64_t{1} << 24,
        (std::uint64_t{1} << 32) + 5, ~std::uint64_t{0}}) {
    const std::uint64_t start = detail::ring_start(n);
    EXPECT_EQ(start % detail::kRecordBytes, 0u) << n;
    EXPECT_EQ((start + kRingBytes) & kFlags, 0u) << n;
    if ((n + 1) % kStates != 0) {
      EXPECT_GE(detail::ring_start(n + 1) - start, kRingBytes) << n;
    }
  }
  // A ring at the last start: records go round its storage and come back whole.
  detail::Ring ring(64, nullptr, detail::ring_start(kStates - 1));
  detail::Record out[64];
  for (std::uint64_t i = 0; i < 1000; ++i) {
    detail::Record r{};
    r.ts = i;
    ASSERT_TRUE(ring.push(r)) << i;
    ASSERT_EQ(ring.read_available(), 1u);
    ASSERT_EQ(ring.pop(out, 64), 1u);
    ASSERT_EQ(out[0].ts, i);
  }
  EXPECT_EQ(ring.write_available(), 64u);
}

// An untracked span (past depth 256) closed by an outer end ends nothing
// when its own end comes, though another span was opened since at its
// depth: it is known by an id of its own, not by its depth.
TEST(InlinePath, AStaleUntrackedEndLeavesASpanOpenedSinceAtItsDepth) {
  ScopedSession session(quiet_config("inline_untracked_stale", 4096));
  ASSERT_TRUE(session.status().ok());
  std::vector<std::unique_ptr<Span>> open;
  for (int i = 0; i < 257; ++i) open.push_back(std::make_unique<Span>("deep"));
  Span stale = std::move(*open.back());  // depth 256: untracked
  open.pop_back();
  open[200].reset();  // out of order: ends the spans at depths 200..256, `stale` among them
  ASSERT_EQ(detail::t_state->depth(), 200u);
  std::vector<std::unique_ptr<Span>> reopened;
  for (int i = 200; i < 257; ++i) reopened.push_back(std::make_unique<Span>("again"));
  ASSERT_EQ(detail::t_state->depth(), 257u);
  stale.end();
  EXPECT_EQ(detail::t_state->depth(), 257u) << "the stale end closed the span now at its depth";
  while (!reopened.empty()) reopened.pop_back();
  EXPECT_EQ(detail::t_state->depth(), 200u);
  while (!open.empty()) open.pop_back();
  EXPECT_EQ(detail::t_state->depth(), 0u);
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  const json trace = load_trace(session.path());
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["spans_ended_out_of_order"], 1);
  EXPECT_EQ((*st)["args"]["unbalanced_ends"], 0);
}

// Spans nested until the ring is full: every recorded span keeps its End
// (reserved at its Begin), the rest are counted, and while a dropped span is
// open the inline path stands aside.
TEST(InlinePath, AFullRingKeepsEveryEndAndClosesTheGateWhileADroppedSpanIsOpen) {
  ScopedSession session(quiet_config("inline_full", 64));
  ASSERT_TRUE(session.status().ok());
  std::vector<std::unique_ptr<Span>> open;
  std::size_t recorded = 0;
  std::size_t dropped = 0;
  bool gate_closed_seen = false;
  for (int i = 0; i < 100; ++i) {
    open.push_back(std::make_unique<Span>("nested"));
    if (open.back()->recording()) {
      ++recorded;
    } else {
      ++dropped;
      EXPECT_EQ(detail::t_hot->session, 0u) << "a dropped span is open: the gate must be closed";
      gate_closed_seen = true;
    }
  }
  EXPECT_TRUE(gate_closed_seen);
  // 64 slots: each recorded span takes its Begin and keeps one for its End.
  EXPECT_EQ(recorded, 32u);
  EXPECT_EQ(dropped, 68u);
  while (!open.empty()) open.pop_back();  // innermost first
  EXPECT_EQ(detail::t_state->depth(), 0u);
  EXPECT_NE(detail::t_hot->session, 0u) << "the gate reopens once no dropped span is open";
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, dropped);
  EXPECT_EQ(stats.spans_incomplete, 0u) << "an End found no room";
  const json trace = load_trace(session.path());
  EXPECT_EQ(events_with_ph(trace, "X").size(), recorded);
}

// A dynamic name of up to kInlineNameBytes goes inline: its Begin and its
// bytes are the records the library's general begin writes for it.
TEST(InlinePath, ADynamicNameInlineWritesTheLibrarysRecordsAndBytes) {
  ScopedSession session(quiet_config("inline_dynamic", 1024));
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  const detail::SpanToken first = begin_registering_span(s);
  std::vector<detail::SpanToken> open;
  // Each size class of the last slot's copy (0, 1-3, 4-7, 8-15, 16-32),
  // and names of more than one slot.
  const std::size_t lengths[] = {0,  1,  2,  3,  4,  7,  8,
                                 15, 16, 24, 32, 33, 70, detail::kInlineNameBytes};
  for (const std::size_t len : lengths) {
    std::string name;
    for (std::size_t i = 0; i < len; ++i) name += static_cast<char>('a' + (i * 7 + len) % 26);
    const std::uint64_t slots = (len + detail::kRecordBytes - 1) / detail::kRecordBytes;
    const std::uint64_t at = tail_now();
    detail::SpanToken inlined;
    ASSERT_TRUE(detail::begin_dynamic_batch(s, name, inlined)) << len;
    ASSERT_EQ(tail_now(), pos_after(at, 1 + slots)) << len;
    EXPECT_EQ(inlined.serial_word, pos_after(at, 1)) << "an inline end matches it";
    // The library's general path (begin_marked with no flags) for the same name.
    const std::uint64_t lib_at = tail_now();
    const detail::SpanToken library = detail::begin_marked(s, 5, nullptr, name, 0, 0);
    ASSERT_EQ(tail_now(), pos_after(lib_at, 1 + slots)) << len;
    const detail::Record& a = record_at(at);
    const detail::Record& b = record_at(lib_at);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.flags, b.flags);
    EXPECT_EQ(a.flags, detail::kFlagDynamicName);
    EXPECT_EQ(a.name_len, b.name_len);
    EXPECT_EQ(a.name_len, len);
    EXPECT_EQ(a.name, nullptr);
    for (std::uint64_t i = 0; i < slots; ++i) {
      const std::size_t chunk = std::min<std::size_t>(len - i * 32, detail::kRecordBytes);
      const auto* x = reinterpret_cast<const char*>(&record_at(pos_after(at, 1 + i)));
      const auto* y = reinterpret_cast<const char*>(&record_at(pos_after(lib_at, 1 + i)));
      EXPECT_EQ(std::string(x, chunk), std::string(y, chunk)) << len << " slot " << i;
      EXPECT_EQ(std::string(x, chunk), name.substr(i * 32, chunk)) << len << " slot " << i;
    }
    open.push_back(inlined);
    open.push_back(library);
  }
  // Past the inline length: the library's path.
  const std::string long_name(detail::kInlineNameBytes + 1, 'z');
  detail::SpanToken unused;
  EXPECT_FALSE(detail::begin_dynamic_batch(s, long_name, unused));
  while (!open.empty()) {
    detail::end_span_now(open.back());
    open.pop_back();
  }
  detail::end_span(first, detail::read_clock(s));
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(events_with_ph(load_trace(session.path()), "X").size(), 2 * std::size(lengths) + 1);
}

// A phase's begin (begin_marked: a static name, flags, no value) and its
// end with a time given (end_span) take the inline path's records when the
// gate is open: one Begin with the phase's flags, one End at that time.
TEST(InlinePath, APhasesBeginAndEndWithATimeGivenTakeTheLeanPath) {
  ScopedSession session(quiet_config("inline_marked", 1024));
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  const detail::SpanToken first = begin_registering_span(s);
  const std::uint64_t at = tail_now();
  const std::uint64_t begin_ts = detail::read_clock(s);
  const detail::SpanToken phase =
      detail::begin_marked(s, begin_ts, "phase", {}, detail::kFlagPhase, 0);
  ASSERT_EQ(tail_now(), pos_after(at, 1));
  EXPECT_EQ(phase.serial_word, pos_after(at, 1)) << "no library end needed";
  const detail::Record& b = record_at(at);
  EXPECT_EQ(b.kind, detail::RecordKind::kBegin);
  EXPECT_EQ(b.flags, detail::kFlagPhase);
  EXPECT_EQ(b.ts, begin_ts);
  EXPECT_STREQ(b.name, "phase");
  const std::uint64_t end_ts = detail::read_clock(s);
  detail::end_span(phase, end_ts);
  ASSERT_EQ(tail_now(), pos_after(at, 2));
  EXPECT_EQ(record_at(pos_after(at, 1)).kind, detail::RecordKind::kEnd);
  EXPECT_EQ(record_at(pos_after(at, 1)).ts, end_ts);
  EXPECT_EQ(detail::t_state->depth(), 1u);
  // A unit's begin carries a value (its compile id): the library's path,
  // which writes it.
  const detail::SpanToken unit =
      detail::begin_marked(s, detail::read_clock(s), "unit", {}, detail::kFlagUnit, 0x1234);
  EXPECT_EQ(record_at(pos_after(at, 2)).value.u64, 0x1234u);
  detail::end_span(unit, detail::read_clock(s));
  detail::end_span(first, detail::read_clock(s));
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  const json trace = load_trace(session.path());
  const auto phases = events_with_ph(trace, "X");
  ASSERT_EQ(phases.size(), 3u);
  bool found = false;
  for (const json& e : phases) {
    if (e["name"] == "phase") {
      found = true;
      EXPECT_EQ(e["cat"], "phase");
    }
  }
  EXPECT_TRUE(found);
}

// Dynamic names of every length around the inline limit, nested, through a
// small ring that wraps many times (a name's bytes cross the ring's end):
// each span in the trace has its own name.
TEST(InlinePath, DynamicNamesThroughAWrappingRingKeepEveryByte) {
  Config cfg = test_config("inline_dynamic_wrap");
  cfg.ring_capacity = 64;
  cfg.overflow = OverflowPolicy::kBlock;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  std::map<std::string, int> made;
  for (int round = 0; round < 40; ++round) {
    for (std::size_t len = 0; len <= detail::kInlineNameBytes + 8; len += 3) {
      std::string outer_name = std::to_string(round) + ":" + std::string(len, 'o');
      outer_name.resize(len);
      Span outer{std::string_view(outer_name)};
      std::string inner_name(len, static_cast<char>('a' + round % 26));
      { Span inner{std::string_view(inner_name)}; }
      ++made[outer_name];
      ++made[inner_name];
    }
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  std::map<std::string, int> seen;
  for (const json& e : events_with_ph(load_trace(session.path()), "X")) {
    ++seen[e["name"].get<std::string>()];
  }
  EXPECT_EQ(seen, made);
}

// Scalar args go inline with their Begin; a string arg sends the whole span
// through the library; an arg on a span that is not the innermost goes by
// its slot. The trace has the same args either way.
TEST(InlinePath, ArgsInlineAndThroughTheLibraryAreTheSame) {
  ScopedSession session(test_config("inline_args"));
  ASSERT_TRUE(session.status().ok());
  {
    Span scalar("scalar", {{"i", -3}, {"u", 7u}, {"d", 1.5}, {"b", true}});
    Span mixed("mixed", {{"i", -3}, {"u", 7u}, {"d", 1.5}, {"b", true}, {"s", "text"}});
    Span inner("inner");
    scalar.arg("later", 9);  // not the innermost: two spans open inside it
    mixed.arg("later", 9);
  }
  session.finish();
  std::map<std::string, json> args = x_args_by_name(load_trace(session.path()));
  ASSERT_EQ(args.size(), 3u);
  json expected = {{"i", -3}, {"u", 7}, {"d", 1.5}, {"b", true}, {"later", 9}};
  EXPECT_EQ(args["scalar"], expected);
  expected["s"] = "text";
  EXPECT_EQ(args["mixed"], expected);
}

// JITSCOPE_SPAN_ARGS evaluates its args only with a session on, once.
TEST(InlinePath, MacroArgsAreEvaluatedOnlyWithASession) {
  int calls = 0;
  auto count = [&calls] { return ++calls; };
  { JITSCOPE_SPAN_ARGS("off", {"n", count()}); }
  EXPECT_EQ(calls, 0);
  ScopedSession session(test_config("inline_macro"));
  ASSERT_TRUE(session.status().ok());
  {
    JITSCOPE_SPAN_ARGS("on", {"n", count()}, {"s", "str"});
    JITSCOPE_SPAN_ARGS("scalar", {"n", count()}, {"d", 0.25});
  }
  EXPECT_EQ(calls, 2);
  session.finish();
  std::map<std::string, json> args = x_args_by_name(load_trace(session.path()));
  EXPECT_EQ(args["on"], json({{"n", 1}, {"s", "str"}}));
  EXPECT_EQ(args["scalar"], json({{"n", 2}, {"d", 0.25}}));
}

// An arg expression that throws reaches the caller (as when the caller
// built the list) and leaves nothing recorded.
TEST(InlinePath, AThrowingMacroArgReachesTheCallerAndRecordsNothing) {
  ScopedSession session(test_config("inline_throw"));
  ASSERT_TRUE(session.status().ok());
  auto fail = []() -> int { throw std::runtime_error("arg failed"); };
  bool caught = false;
  try {
    JITSCOPE_SPAN_ARGS("throws", {"n", fail()});
  } catch (const std::runtime_error& e) {
    caught = std::string(e.what()) == "arg failed";
  }
  EXPECT_TRUE(caught);
  { JITSCOPE_SPAN("after"); }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  std::vector<std::string> names;
  for (const json& e : events_with_ph(load_trace(session.path()), "X")) {
    names.push_back(e["name"].get<std::string>());
  }
  EXPECT_EQ(names, std::vector<std::string>{"after"});
}

// In `outer`, with the ring filled to 4 free slots (room for a Begin, one
// arg and the two Ends, outer's and its own, not for a Begin with its three
// args), the span `make_three` opens; then the session's X slices' args by
// name, once its stats say two args were dropped.
template <class MakeThree>
std::map<std::string, json> args_of_three_in_four_slots(ScopedSession& session,
                                                        MakeThree make_three) {
  {
    Span outer("outer");
    while (64 - used_now() > 4) JITSCOPE_INSTANT("fill");
    const Span three = make_three();
    EXPECT_TRUE(three.recording());
  }
  session.finish();
  const json trace = load_trace(session.path());
  const json* st = metadata(trace, "jitscope_stats");
  EXPECT_NE(st, nullptr);
  if (st != nullptr) {
    EXPECT_EQ((*st)["args"]["args_dropped"], 2) << "one of three's args fits, two do not";
  }
  return x_args_by_name(trace);
}

// More scalar args than one inline batch takes (8), and a batch that does
// not fit the ring while its Begin does: each goes through the library with
// the values it was given, none lost or moved to another span.
TEST(InlinePath, ArgsBeyondABatchAndABatchThatDoesNotFitKeepEveryValue) {
  ScopedSession session(quiet_config("inline_batch_edges", 64));
  ASSERT_TRUE(session.status().ok());
  {
    Span nine("nine", {{"a0", 0},
                       {"a1", 1},
                       {"a2", 2.5},
                       {"a3", true},
                       {"a4", 4u},
                       {"a5", -5},
                       {"a6", 6},
                       {"a7", 7},
                       {"a8", 8}});
  }
  const std::map<std::string, json> args = args_of_three_in_four_slots(session, [] {
    return Span("three", {{"x", 1}, {"y", 2}, {"z", 3}});
  });
  EXPECT_EQ(args.at("nine"), json({{"a0", 0},
                                   {"a1", 1},
                                   {"a2", 2.5},
                                   {"a3", true},
                                   {"a4", 4},
                                   {"a5", -5},
                                   {"a6", 6},
                                   {"a7", 7},
                                   {"a8", 8}}));
  EXPECT_EQ(args.at("three"), json({{"x", 1}}));
  EXPECT_EQ(args.at("outer"), json::object());
}

// The same batch with short strings among its args: the library writes
// the span and then each arg that fits, from the list itself (the batch
// holds a string's bytes, not the string).
TEST(InlinePath, AShortStringBatchThatDoesNotFitKeepsTheArgThatFits) {
  ScopedSession session(quiet_config("inline_string_batch_edge", 64));
  ASSERT_TRUE(session.status().ok());
  const std::map<std::string, json> args = args_of_three_in_four_slots(session, [] {
    return Span("three", {{"x", "abc"}, {"y", 2}, {"z", "12345678"}});
  });
  EXPECT_EQ(args.at("three"), json({{"x", "abc"}}));
}

// An arg for a span with a dropped span below it names it by its place
// among the recorded spans, not by its depth: found out of line (the gate
// is closed) from the serials of the open spans.
TEST(InlinePath, AnArgAboveADroppedSpanReachesItsOwnSpan) {
  ScopedSession session(quiet_config("inline_arg_above_dropped", 64));
  ASSERT_TRUE(session.status().ok());
  {
    Span a("a");
    // 6 free slots: too few for b (a Begin with a 100-byte name, 1 + 4
    // slots, and its End beside a's), enough for c, its arg and a's arg
    // (each with the Ends owed: a's and c's).
    while (64 - used_now() > 6) JITSCOPE_INSTANT("fill");
    Span b(std::string(100, 'b'));
    EXPECT_FALSE(b.recording());
    Span c("c");
    ASSERT_TRUE(c.recording());
    c.arg("on_c", 1);
    a.arg("on_a", 2);
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  const json trace = load_trace(session.path());
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["args_dropped"], 0);
  std::map<std::string, json> args = x_args_by_name(trace);
  ASSERT_EQ(args.size(), 2u) << "a and c; b was dropped";
  EXPECT_EQ(args["c"], json({{"on_c", 1}}));
  EXPECT_EQ(args["a"], json({{"on_a", 2}}));
}

// A span begun with its args above a dropped span: the inline batch numbers
// its args by the depth, which counts the dropped span, so the gate (by
// depth, HotThread::begin_gate) must stay closed at every depth while one
// is open, and the library, which counts only recorded spans, writes them.
TEST(InlinePath, ArgsGivenAtTheBeginAboveADroppedSpanReachTheirOwnSpan) {
  ScopedSession session(quiet_config("inline_batch_above_dropped", 64));
  ASSERT_TRUE(session.status().ok());
  {
    Span a("a");
    ASSERT_NE(detail::t_hot->session, 0u) << "the gate is open on a plain session";
    // 8 free slots: too few for b (a Begin with a 200-byte name, 1 + 7
    // slots, and its End beside a's), enough for c and d with an arg each
    // (a Begin, an arg and an End, beside the Ends owed).
    while (64 - used_now() > 8) JITSCOPE_INSTANT("fill");
    Span b(std::string(200, 'b'));
    EXPECT_FALSE(b.recording());
    ASSERT_EQ(detail::t_hot->begin_gate_at(detail::t_hot->depth_x8), 0u)
        << "a dropped span is open: the gate at this depth must be closed";
    Span c("c", {{"on_c", 1}});
    ASSERT_TRUE(c.recording());
    JITSCOPE_SPAN_ARGS("d", {"on_d", 2});
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.spans_incomplete, 0u);
  const json trace = load_trace(session.path());
  std::map<std::string, json> args = x_args_by_name(trace);
  ASSERT_EQ(args.size(), 3u) << "a, c and d; b was dropped";
  EXPECT_EQ(args["a"], json::object());
  EXPECT_EQ(args["c"], json({{"on_c", 1}}));
  EXPECT_EQ(args["d"], json({{"on_d", 2}}));
}

// The gate by depth holds the session word only at the depths the thread
// has used (so that a dropped span's close and reopen rewrite only those),
// never from the depth limit on, and 0 everywhere while closed.
std::vector<std::uint32_t> gate_entries(const detail::HotThread& h) {
  std::vector<std::uint32_t> entries;
  for (std::uint64_t d = 0; d < detail::kOpenSerials; ++d)
    entries.push_back(h.begin_gate_at(d * 8));
  return entries;
}
std::vector<std::uint32_t> word_below(std::uint32_t word, std::size_t depths) {
  std::vector<std::uint32_t> entries(detail::kOpenSerials, 0);
  for (std::size_t d = 0; d < depths; ++d) entries[d] = word;
  return entries;
}

TEST(InlinePath, TheGateByDepthOpensOnlyTheDepthsInUseAndNeverPastTheLimit) {
  auto h = std::make_unique<detail::HotThread>();
  EXPECT_EQ(gate_entries(*h), word_below(0, 0));
  h->open_gate(7);
  EXPECT_EQ(gate_entries(*h), word_below(7, 16));
  h->widen_gate(10);  // already open there
  EXPECT_EQ(gate_entries(*h), word_below(7, 16));
  h->widen_gate(40);
  EXPECT_EQ(gate_entries(*h), word_below(7, 56));
  h->open_gate(0);  // a dropped span: closed at every depth
  EXPECT_EQ(gate_entries(*h), word_below(0, 0));
  h->widen_gate(100);  // closed: nothing opens
  EXPECT_EQ(gate_entries(*h), word_below(0, 0));
  h->open_gate(7);
  EXPECT_EQ(gate_entries(*h), word_below(7, 56));
  h->widen_gate(250);
  EXPECT_EQ(gate_entries(*h), word_below(7, detail::kMaxRecordedDepth));
  h->widen_gate(300);
  EXPECT_EQ(gate_entries(*h), word_below(7, detail::kMaxRecordedDepth));
}

// In a session: spans opened deeper than the gate's first depths go through
// the library once, which opens the gate there for the next ones.
TEST(InlinePath, SpansDeeperThanTheGatesFirstDepthsOpenItForTheNextOnes) {
  ScopedSession session(quiet_config("inline_gate_widens", 1024));
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  { JITSCOPE_SPAN("registers"); }
  ASSERT_EQ(detail::t_hot->session, s) << "the gate is open on a plain session";
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<std::unique_ptr<Span>> open;
    for (int i = 0; i < 60; ++i) {
      open.push_back(std::make_unique<Span>("nested"));
      ASSERT_TRUE(open.back()->recording()) << i;
    }
    EXPECT_EQ(detail::t_hot->begin_gate_at(59 * 8), s) << "pass " << pass;
    while (!open.empty()) open.pop_back();
  }
  // Open at the depths used and a step past them, closed beyond.
  const std::uint32_t depths = detail::t_hot->gate_depths;
  EXPECT_GE(depths, 60u);
  EXPECT_LE(depths, 60u + detail::HotThread::kGateDepthsStep);
  EXPECT_EQ(gate_entries(*detail::t_hot), word_below(s, depths));
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(events_with_ph(load_trace(session.path()), "X").size(), 121u);
}

// The same past the first 64 depths: a dropped span at depth 70 and args
// on spans at depths 63, 64, 129 and 132, whose places among the recorded
// spans count the dropped one below them across the stack's bit words.
TEST(InlinePath, ArgsFarAboveADroppedSpanReachTheirOwnSpans) {
  ScopedSession session(quiet_config("inline_arg_deep", 1024));
  ASSERT_TRUE(session.status().ok());
  std::vector<std::unique_ptr<Span>> open;
  auto open_at_depth = [&open] {
    open.push_back(std::make_unique<Span>("d" + std::to_string(open.size())));
  };
  for (int i = 0; i < 70; ++i) open_at_depth();  // each: Begin, name, End owed
  // 200 free slots beside the 70 Ends owed: too few for a Begin with an
  // 8,000-byte name (1 + 250 slots and its End), enough for 62 more spans
  // (3 slots each) and 4 args.
  while (1024 - used_now() > 70 + 200) JITSCOPE_INSTANT("fill");
  open.push_back(std::make_unique<Span>(std::string(8000, 'x')));
  EXPECT_FALSE(open.back()->recording());
  for (int i = 0; i < 62; ++i) open_at_depth();
  for (int depth : {63, 64, 129, 132}) {
    ASSERT_TRUE(open[depth]->recording()) << depth;
    open[depth]->arg("depth", depth);
  }
  while (!open.empty()) open.pop_back();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 1u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  std::map<std::string, json> args = x_args_by_name(load_trace(session.path()));
  EXPECT_EQ(args.size(), 132u);
  for (const auto& [name, a] : args) {
    const int depth = std::stoi(name.substr(1));
    if (depth == 63 || depth == 64 || depth == 129 || depth == 132) {
      EXPECT_EQ(a, json({{"depth", depth}})) << name;
    } else {
      EXPECT_EQ(a, json::object()) << name;
    }
  }
}

}  // namespace
}  // namespace jitscope::testing
