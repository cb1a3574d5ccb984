// The trace writer's tie rule (ThreadDecodeState::tie_floor_ns): records
// whose clock reads tie (a clock coarser than the work between events) are
// written 1 ns apart in record order, so a viewer that adds ts + dur in
// floating-point µs (Chrome DevTools) sees the nesting the program had.
// The writer is fed records directly, with a clock whose ticks are ns.
// Not covered here: the session path (span_test's nesting test and the
// DevTools viewer test drive that).
#include "flush/record_support.hpp"
#include "format/trace_writer.hpp"
#include "ring/thread_registry.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace jitscope::detail {
namespace {

using nlohmann::json;

// A captured NVTX push/pop range (two slots: the record and its CapturedExtra).
std::vector<Record> captured_range(std::uint64_t begin, std::uint64_t end, const char* name) {
  Record r =
      record(RecordKind::kCaptured, begin, name, static_cast<std::uint8_t>(CapturedKind::kRange));
  r.value.u64 = end;
  Record extra{};
  static_assert(sizeof(CapturedExtra) == sizeof(Record));
  const CapturedExtra x{nullptr, 0, 0, 0, 0};
  std::memcpy(&extra, &x, sizeof x);
  return {r, extra};
}

// The events of one writer fed `records` on one thread, in file order; with
// `close_at`, the spans still open are closed there as at a stop or a crash.
std::vector<json> write(const std::vector<Record>& records, std::uint64_t close_at = 0) {
  std::vector<json> out;
  for (const json& e : json::parse(write_json_trace(records, close_at))) {
    if (e["ph"] == "X" || e["ph"] == "I") out.push_back(e);
  }
  return out;
}

const json& named(const std::vector<json>& events, const std::string& name) {
  for (const json& e : events) {
    if (e["name"] == name) return e;
  }
  static const json none;
  ADD_FAILURE() << "no event " << name;
  return none;
}

// As DevTools computes it: doubles.
double end_us(const json& e) { return e["ts"].get<double>() + e.value("dur", 0.0); }

// Exactly, in ns (the writer's three decimals).
long long ns(double us) { return std::llround(us * 1000.0); }
long long end_ns(const json& e) { return ns(e["ts"].get<double>()) + ns(e.value("dur", 0.0)); }

TEST(TieBreak, AParentAndItsOnlyChildThatTieAtBothEndsAreWrittenApart) {
  const std::vector<json> ev = write({
      record(RecordKind::kBegin, 5'000'000'000'123, "parent", 0),
      record(RecordKind::kBegin, 5'000'000'000'123, "child", 1),
      record(RecordKind::kEnd, 5'000'000'002'000, nullptr, 0),
      record(RecordKind::kEnd, 5'000'000'002'000, nullptr, 0),
  });
  const json& parent = named(ev, "parent");
  const json& child = named(ev, "child");
  EXPECT_EQ(parent["ts"], child["ts"]) << "begins that tie may stay tied";
  EXPECT_EQ(child["dur"].get<double>(), 1.877);
  EXPECT_EQ(parent["dur"].get<double>(), 1.878) << "1 ns later, no more";
  EXPECT_LT(end_us(child), end_us(parent)) << "the child ends inside its parent, in doubles too";
}

TEST(TieBreak, AnEventAtTheVeryNsASpanEndedBeginsAfterIt) {
  const std::vector<json> ev = write({
      record(RecordKind::kBegin, 7'000'000'000'100, "first", 0),
      record(RecordKind::kEnd, 7'000'000'000'900, nullptr, 0),
      record(RecordKind::kInstant, 7'000'000'000'900, "mark", 0),
      record(RecordKind::kBegin, 7'000'000'000'900, "second", 0),
      record(RecordKind::kEnd, 7'000'000'000'950, nullptr, 0),
  });
  const json& first = named(ev, "first");
  EXPECT_GT(named(ev, "mark")["ts"].get<double>(), end_us(first));
  EXPECT_GT(named(ev, "second")["ts"].get<double>(), end_us(first));
  EXPECT_EQ(first["dur"].get<double>(), 0.8) << "an end with no tie keeps its time";
}

TEST(TieBreak, AnInstantAtItsSpansEndStaysInsideIt) {
  const std::vector<json> ev = write({
      record(RecordKind::kBegin, 9'000'000'000'000, "span", 0),
      record(RecordKind::kInstant, 9'000'000'000'500, "inside", 0),
      record(RecordKind::kEnd, 9'000'000'000'500, nullptr, 0),
  });
  EXPECT_LT(named(ev, "inside")["ts"].get<double>(), end_us(named(ev, "span")));
}

TEST(TieBreak, SpansClosedAtAStopKeepTheirNesting) {
  // Three nested spans still open when the session stops at the ns the
  // innermost began: each is closed there, 1 ns inside its parent.
  const std::vector<json> ev = write(
      {
          record(RecordKind::kBegin, 3'000'000'000'000, "outer", 0),
          record(RecordKind::kBegin, 3'000'000'000'500, "middle", 1),
          record(RecordKind::kBegin, 3'000'000'000'500, "inner", 2),
      },
      3'000'000'000'500);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_LT(end_us(named(ev, "inner")), end_us(named(ev, "middle")));
  EXPECT_LT(end_us(named(ev, "middle")), end_us(named(ev, "outer")));
  EXPECT_EQ(named(ev, "outer")["dur"].get<double>(), 0.502);
}

TEST(TieBreak, ACapturedRangeEndsAfterTheSpansInsideItAndInsideItsParent) {
  // span P { NVTX range R { span C } }, all ending in the same ns.
  std::vector<Record> records = {
      record(RecordKind::kBegin, 4'000'000'000'000, "P", 0),
      record(RecordKind::kBegin, 4'000'000'000'200, "C", 1),
      record(RecordKind::kEnd, 4'000'000'000'900, nullptr, 0),
  };
  for (const Record& r : captured_range(4'000'000'000'100, 4'000'000'000'900, "R")) {
    records.push_back(r);
  }
  records.push_back(record(RecordKind::kEnd, 4'000'000'000'900, nullptr, 0));
  const std::vector<json> ev = write(records);
  const json& range = named(ev, "R");
  EXPECT_EQ(ns(range["ts"].get<double>()), 4'000'000'000'100) << "a range's begin stays";
  EXPECT_EQ(end_ns(named(ev, "C")), 4'000'000'000'900);
  EXPECT_EQ(end_ns(range), 4'000'000'000'901);
  EXPECT_EQ(end_ns(named(ev, "P")), 4'000'000'000'902);
}

TEST(TieBreak, TimesWithoutTiesAreWrittenAsRecorded) {
  const std::vector<json> ev = write({
      record(RecordKind::kBegin, 1'000, "outer", 0),
      record(RecordKind::kBegin, 1'010, "inner", 1),
      record(RecordKind::kEnd, 1'020, nullptr, 0),
      record(RecordKind::kEnd, 1'030, nullptr, 0),
  });
  EXPECT_EQ(named(ev, "outer")["ts"].get<double>(), 1.0);
  EXPECT_EQ(named(ev, "outer")["dur"].get<double>(), 0.03);
  EXPECT_EQ(named(ev, "inner")["ts"].get<double>(), 1.01);
  EXPECT_EQ(named(ev, "inner")["dur"].get<double>(), 0.01);
}

}  // namespace
}  // namespace jitscope::detail
