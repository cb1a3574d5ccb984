// The trace writer fed records that break the producer's rules stays
// bounded (and counts them as decode errors). The producer records at most
// kMaxRecordedDepth open spans per thread; more Begins than that with no
// End between them mean Ends were lost, and the writer keeps the depth it
// can have rather than growing its stack with each one.
#include "flush/record_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace jitscope::detail {
namespace {

using nlohmann::json;

TEST(RecordDecode, BeginsDeeperThanAThreadRecordsReplaceTheInnermostAndTheDepthStaysBounded) {
  std::vector<Record> records;
  const std::size_t begins = kMaxRecordedDepth + 40;
  for (std::size_t i = 0; i < begins; ++i) {
    records.push_back(record(RecordKind::kBegin, 1'000 + i, "deep", 0));
  }
  std::size_t spans = 0;
  // Closed as at a stop: every span the writer still holds is written.
  for (const json& e : json::parse(write_json_trace(records, 10'000))) spans += e["ph"] == "X";
  EXPECT_EQ(spans, kMaxRecordedDepth) << "the Begins past the limit replace the innermost";
}

// An instant's args are pushed with it; a record of another kind where one
// is due means they were lost. The instant is written with the args it
// has, counted as one decode error, and the spans after it are written as
// ever, in both forms (also when drain() takes a span's Begin and End
// itself, without handle()).
TEST(RecordDecode, AnInstantWhoseArgsNeverComeIsWrittenWithThoseItHasBeforeTheNextSpan) {
  Records in;
  in.begin(10, "outer", 0);
  in.instant(20, "marker", 2);  // two args announced, one comes
  in.arg_int(0, "a", 7);
  in.begin(30, "inner", 1);
  in.begin(32, "leaf", 2);
  in.end(34);
  in.end(40);
  in.end(50);
  for (const bool perfetto : {false, true}) {
    SCOPED_TRACE(perfetto ? "perfetto" : "json");
    Options o;
    o.perfetto = perfetto;
    const WrittenTrace w = write_trace(in.r, o);
    EXPECT_EQ(w.decode_errors, 1u);
    EXPECT_EQ(w.events, 4u) << "the instant and the three spans";
    ASSERT_EQ(w.files.size(), 1u);
    std::vector<std::string> order;  // ended spans and the instant, in file order
    for (const json& e : events_of(w, perfetto)) {
      if (e["ph"] == "M" || e.value("name", "").starts_with("jitscope_")) continue;
      order.push_back(e["name"]);
      if (e["name"] == "marker") EXPECT_EQ(e["args"], json({{"a", 7}}));
    }
    EXPECT_EQ(order, (std::vector<std::string>{"marker", "leaf", "inner", "outer"}));
  }
}

// A short string travels inside its arg record (kFlagInlineString, at most
// kInlineStringBytes in `ts`). A record that claims more, or member JSON
// inline, is not the producer's: the writer reads only the bytes the record
// holds and counts a decode error, in both forms, and the instant those
// args belong to still gets both.
TEST(RecordDecode, AnInlineStringLongerThanItsRecordIsReadAsTheRecordsBytes) {
  const auto inline_arg = [](const char* key, std::string_view bytes, std::uint64_t claimed,
                             ValueType type) {
    Record a = record(RecordKind::kArg, 0, key, 0, kFlagInlineString);
    std::memcpy(&a.ts, bytes.data(), std::min(bytes.size(), sizeof a.ts));
    a.type = type;
    a.value.u64 = claimed;
    return a;
  };
  Records in;
  in.begin(10, "outer", 0);
  in.instant(20, "marker", 3);
  in.add(inline_arg("ok", "abc", 3, ValueType::kString));
  in.add(inline_arg("long", "12345678", 4000, ValueType::kString));
  in.add(inline_arg("members", "\"k\":1", 1 << 20, ValueType::kJsonMembers));
  in.end(50);
  for (const bool perfetto : {false, true}) {
    SCOPED_TRACE(perfetto ? "perfetto" : "json");
    Options o;
    o.perfetto = perfetto;
    const WrittenTrace w = write_trace(in.r, o);
    EXPECT_EQ(w.decode_errors, 2u);
    bool seen = false;
    for (const json& e : events_of(w, perfetto)) {
      if (e.value("name", "") != "marker") continue;
      seen = true;
      EXPECT_EQ(e["args"]["ok"], "abc");
      EXPECT_EQ(e["args"]["long"], "12345678");
      EXPECT_EQ(e["args"]["members"].get<std::string>().size(), 8u);
    }
    EXPECT_TRUE(seen);
  }
}

}  // namespace
}  // namespace jitscope::detail
