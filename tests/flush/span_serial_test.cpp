// The flusher keeps each thread's open spans (record.hpp): an End record
// names its span by serial (its Begin's ring position), and so does a span's
// arg. The producer writes an End the moment a span ends, whichever span it
// is; these tests feed the writer such records by hand and check what the
// trace makes of them: ends out of order, args on outer spans and on ended
// ones, Ends that name no open span, and nesting past the depth kept.
#include "flush/record_support.hpp"
#include "flush/trace_writer.hpp"
#include "ring/thread_registry.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace jitscope::detail {
namespace {

using nlohmann::json;

struct Written {
  std::vector<json> spans;  // "X" events, in file order
  json stats;               // the jitscope_stats args
};

// Records as the ring holds them from position 0, serials as given; spans
// still open at the end are closed at `close_at`, as at a stop.
Written write(const std::vector<Record>& records, std::uint64_t close_at = 1'000'000) {
  Written out;
  for (const json& e : json::parse(write_json_trace(records, close_at))) {
    if (e["ph"] == "X") out.spans.push_back(e);
    if (e["ph"] == "M" && e["name"] == "jitscope_stats") out.stats = e["args"];
  }
  return out;
}

Record begin(std::uint64_t ts, const char* name) { return record(RecordKind::kBegin, ts, name, 0); }
Record end(std::uint64_t ts, std::uint32_t serial) {
  Record r = record(RecordKind::kEnd, ts, nullptr, 0);
  r.value.u64 = serial;
  return r;
}
Record int_arg(std::uint32_t serial, const char* key, std::int64_t v) {
  Record r = record(RecordKind::kArg, serial, key, 0);
  r.type = ValueType::kInt;
  r.value.i64 = v;
  return r;
}

const json& named(const std::vector<json>& spans, const std::string& name) {
  for (const json& e : spans) {
    if (e["name"] == name) return e;
  }
  static const json none;
  ADD_FAILURE() << "no span " << name;
  return none;
}

TEST(SpanSerials, AnEndOutOfOrderEndsTheSpansInsideItMarkedAndTheirOwnEndsAreDropped) {
  const Written w = write({
      begin(1000, "outer"),  // serial 0
      begin(2000, "inner"),  // serial 1
      end(5000, 0),          // outer ends first
      end(6000, 1),          // inner's own End: its span has ended with outer
      begin(7000, "after"),  // serial 4
      end(8000, 4),
  });
  ASSERT_EQ(w.spans.size(), 3u);
  const json& inner = named(w.spans, "inner");
  const json& outer = named(w.spans, "outer");
  EXPECT_EQ(inner["args"]["jitscope_ended_with_outer"], true);
  EXPECT_FALSE(outer.contains("args")) << outer;
  // Both end at outer's End (inner 1 ns earlier: the tie rule keeps it inside).
  EXPECT_EQ(outer["ts"].get<double>() + outer["dur"].get<double>(), 5.001);
  EXPECT_EQ(inner["ts"].get<double>() + inner["dur"].get<double>(), 5.0);
  EXPECT_EQ(named(w.spans, "after")["dur"].get<double>(), 1.0);
  EXPECT_EQ(w.stats["spans_ended_out_of_order"], 1);
  EXPECT_EQ(w.stats["spans_incomplete"], 0);
  EXPECT_EQ(w.stats["decode_errors"], 0);
}

TEST(SpanSerials, AnArgFindsItsSpanByItsSerialAndOneForAnEndedSpanIsDropped) {
  const Written w = write({
      begin(1000, "outer"),       // serial 0
      begin(2000, "inner"),       // serial 1
      int_arg(0, "on_outer", 7),  // not the innermost
      int_arg(1, "on_inner", 8),
      end(3000, 1),
      int_arg(1, "too_late", 9),  // inner has ended
      end(4000, 0),
  });
  ASSERT_EQ(w.spans.size(), 2u);
  EXPECT_EQ(named(w.spans, "outer")["args"], json({{"on_outer", 7}}));
  EXPECT_EQ(named(w.spans, "inner")["args"], json({{"on_inner", 8}}));
  EXPECT_EQ(w.stats["decode_errors"], 0);
}

TEST(SpanSerials, AnEndNamingNoOpenSpanEndsNothing) {
  const Written w = write({
      begin(1000, "open"),  // serial 0
      end(2000, 77),        // no such span: nothing ends
  });
  ASSERT_EQ(w.spans.size(), 1u);
  const json& open = named(w.spans, "open");
  EXPECT_EQ(open["args"]["incomplete"], true) << "closed at the stop, not by the stray End";
  EXPECT_EQ(w.stats["spans_ended_out_of_order"], 0);
  EXPECT_EQ(w.stats["decode_errors"], 0);
}

// Nesting deeper than the writer keeps: those Begins are dropped and
// counted, and so are their args and Ends; the spans around them are whole.
TEST(SpanSerials, BeginsDeeperThanTheDepthKeptAreDroppedWithTheirEndsAndArgs) {
  constexpr std::size_t kDeep = ThreadDecodeState::kMaxDepth + 5;
  std::vector<Record> records;
  for (std::size_t i = 0; i < kDeep; ++i) records.push_back(begin(1000 + i, "nest"));
  // An arg on the deepest span (dropped) and on the deepest kept one.
  records.push_back(int_arg(static_cast<std::uint32_t>(kDeep - 1), "dropped", 1));
  records.push_back(int_arg(ThreadDecodeState::kMaxDepth - 1, "kept", 2));
  for (std::size_t i = kDeep; i > 0; --i) {
    records.push_back(end(100'000 + kDeep - i, static_cast<std::uint32_t>(i - 1)));
  }
  const Written w = write(records);
  ASSERT_EQ(w.spans.size(), ThreadDecodeState::kMaxDepth);
  std::size_t with_args = 0;
  for (const json& s : w.spans) {
    if (!s.contains("args")) continue;
    ++with_args;
    EXPECT_EQ(s["args"], json({{"kept", 2}}));
  }
  EXPECT_EQ(with_args, 1u);
  EXPECT_EQ(w.stats["events_dropped"], 5);
  EXPECT_EQ(w.stats["spans_ended_out_of_order"], 0);
  EXPECT_EQ(w.stats["spans_incomplete"], 0);
  EXPECT_EQ(w.stats["decode_errors"], 0);
}

}  // namespace
}  // namespace jitscope::detail
