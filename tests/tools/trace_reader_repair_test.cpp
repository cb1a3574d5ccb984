// TraceReader on what viewers load although it is not strict JSON (issue
// 17): an array cut inside its last event (dropped), a UTF-8 byte order
// mark (skipped), a ',' before the events array's ']' (ignored) and invalid
// UTF-8 in an event (each maximal invalid subpart replaced by U+FFFD), at
// every chunk size, with the exact events, offsets, repairs() counts and
// repair_warnings() lines; the repaired event keeps simdjson's padding; the
// event decoder reads it; what stays an error (a cut object form, a BOM
// alone, ",," before ']').
// Not covered here: the tools' output for these inputs (report_input_test.cpp).
#include <event_decoder.hpp>
#include <trace_reader.hpp>

#include "trace_reader_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace {

using jitscope::testing::temp_path;
using jitscope::tools::RawEvent;
using jitscope::tools::TraceReader;

const std::string kFffd = "\xEF\xBF\xBD";

using Read = jitscope::testing::ReaderOutput;
using jitscope::testing::read_with;

// `content` read at chunk sizes 1..64 and the default: all the same.
Read read_at_every_chunk_size(const std::string& content) {
  const std::string path = temp_path("reader_repair");
  std::ofstream(path, std::ios::binary) << content;
  const Read first = read_with(path, TraceReader::kDefaultChunkSize);
  for (std::size_t chunk = 1; chunk <= 64; ++chunk) {
    const Read r = read_with(path, chunk);
    EXPECT_EQ(r.ok, first.ok) << "chunk " << chunk;
    EXPECT_EQ(r.error, first.error) << "chunk " << chunk;
    EXPECT_EQ(r.events, first.events) << "chunk " << chunk;
    EXPECT_EQ(r.unterminated, first.unterminated) << "chunk " << chunk;
    EXPECT_EQ(r.warnings, first.warnings) << "chunk " << chunk;
  }
  Read r = first;
  if (r.error.rfind(path + ": ", 0) == 0) r.error = r.error.substr(path.size() + 2);
  return r;
}

using Events = std::vector<std::pair<std::string, std::uint64_t>>;

TEST(TraceReaderRepair, ArrayCutInsideItsLastEvent) {
  struct Case {
    std::string in;
    Events events;
    std::uint64_t cut_at, cut_bytes;
  };
  const std::vector<Case> cases = {
      {"[{\"a\":1},{\"b\":", {{"{\"a\":1}", 1}}, 9, 5},
      {"[{\"a\":\"}", {}, 1, 7},                                      // inside a string
      {"[{\"a\":\"x\\", {}, 1, 8},                                    // after an escape
      {"[{\"a\":1},\n{\"b\":[{\"c\":[", {{"{\"a\":1}", 1}}, 10, 12},  // nested
      {"[{\"n\":\"\xE2\x82", {}, 1, 8},                               // inside a UTF-8 sequence
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    const Read r = read_at_every_chunk_size(c.in);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_TRUE(r.unterminated);
    EXPECT_EQ(r.events, c.events);
    EXPECT_TRUE(r.repairs.cut_event);
    EXPECT_EQ(r.repairs.cut_event_offset, c.cut_at);
    EXPECT_EQ(r.repairs.cut_event_bytes, c.cut_bytes);
    EXPECT_EQ(r.warnings,
              std::vector<std::string>{"1 event cut off by the end of the input (its " +
                                       std::to_string(c.cut_bytes) + " bytes from byte " +
                                       std::to_string(c.cut_at) + " dropped)"});
  }
  // A cut between events is the unterminated form, nothing to warn about.
  const Read between = read_at_every_chunk_size("[{\"a\":1},\n");
  EXPECT_TRUE(between.ok && between.unterminated);
  EXPECT_TRUE(between.warnings.empty());
  EXPECT_FALSE(between.repairs.any());
  // The object form must be complete.
  EXPECT_EQ(read_at_every_chunk_size("{\"traceEvents\":[{\"a").error,
            "byte 19: input ends inside an event that starts at byte 16");
}

TEST(TraceReaderRepair, ByteOrderMarkIsSkipped) {
  const Read r = read_at_every_chunk_size("\xEF\xBB\xBF[{\"a\":1}]");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.events, (Events{{"{\"a\":1}", 4}}));  // offsets stay the file's
  EXPECT_TRUE(r.repairs.bom);
  EXPECT_EQ(r.warnings, std::vector<std::string>{
                            "1 UTF-8 byte order mark at the start of the input (skipped)"});
  const Read object = read_at_every_chunk_size("\xEF\xBB\xBF {\"traceEvents\":[]}");
  EXPECT_TRUE(object.ok) << object.error;
  EXPECT_TRUE(object.repairs.bom);
  // Only at the start, and only whole.
  EXPECT_EQ(read_at_every_chunk_size("\xEF\xBB\xBF").error, "byte 3: empty input: not a trace");
  EXPECT_EQ(read_at_every_chunk_size(" \xEF\xBB\xBF[]").error,
            "byte 1: not a trace: expected '[' or '{', found byte 0xEF");
  EXPECT_EQ(read_at_every_chunk_size("\xEF\xBB[]").error,
            "byte 0: not a trace: expected '[' or '{', found byte 0xEF");
}

TEST(TraceReaderRepair, TrailingCommaBeforeTheClosingBracket) {
  for (const std::string in :
       {"[{\"a\":1},]", "[{\"a\":1} ,\n ]\n", "{\"traceEvents\":[{\"a\":1},]}"}) {
    SCOPED_TRACE(in);
    const Read r = read_at_every_chunk_size(in);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_FALSE(r.unterminated);
    ASSERT_EQ(r.events.size(), 1u);
    EXPECT_EQ(r.events[0].first, "{\"a\":1}");
    EXPECT_EQ(r.repairs.trailing_commas, 1u);
    EXPECT_EQ(r.warnings, std::vector<std::string>{
                              "1 trailing ',' before the closing ']' of the events (ignored)"});
  }
  // Two commas, or one in an empty array, are still errors.
  EXPECT_EQ(read_at_every_chunk_size("[{},,]").error,
            "byte 4: an event is not a JSON object (found ',')");
  EXPECT_EQ(read_at_every_chunk_size("[,]").error,
            "byte 1: an event is not a JSON object (found ',')");
}

TEST(TraceReaderRepair, InvalidUtf8IsReplacedAndCounted) {
  // 0xFF: one subpart; C0 80 (overlong): two; E2 82 then '"': one (a
  // truncated sequence is one subpart); ED A0 80 (a surrogate): three. A
  // valid é and € pass as they are.
  const std::string in =
      "[{\"n\":\"a\xFF\"},\n{\"n\":\"ok \xC3\xA9\xE2\x82\xAC\"},\n"
      "{\"n\":\"\xC0\x80\",\"m\":\"\xE2\x82\"},\n{\"n\":\"\xED\xA0\x80\"}]";
  const Read r = read_at_every_chunk_size(in);
  ASSERT_TRUE(r.ok) << r.error;
  const Events want = {
      {"{\"n\":\"a" + kFffd + "\"}", 1},
      {"{\"n\":\"ok \xC3\xA9\xE2\x82\xAC\"}", 13},
      {"{\"n\":\"" + kFffd + kFffd + "\",\"m\":\"" + kFffd + "\"}", 31},
      {"{\"n\":\"" + kFffd + kFffd + kFffd + "\"}", 52},
  };
  EXPECT_EQ(r.events, want);
  EXPECT_EQ(r.repairs.invalid_utf8, 7u);
  EXPECT_EQ(r.repairs.invalid_utf8_events, 3u);
  EXPECT_EQ(r.warnings,
            std::vector<std::string>{"7 invalid UTF-8 sequences in 3 events (replaced by U+FFFD)"});
  // The decoder reads a repaired event.
  jitscope::tools::TraceReader reader;
  jitscope::tools::EventDecoder decoder;
  jitscope::tools::DecodedEvent ev;
  std::vector<std::string> names;
  const std::string path = temp_path("reader_repair_decode");
  std::string named = in;
  for (std::size_t at = 0; (at = named.find("\"n\":", at)) != std::string::npos; at += 7)
    named.replace(at, 4, "\"name\":");
  std::ofstream(path, std::ios::binary) << named;
  std::string error;
  ASSERT_TRUE(reader.read(
      path,
      [&](const RawEvent& e) {
        if (!decoder.decode(e, &ev, &error)) return false;
        names.emplace_back(ev.name);
        return true;
      },
      nullptr, &error))
      << error;
  EXPECT_EQ(names, (std::vector<std::string>{"a" + kFffd, "ok \xC3\xA9\xE2\x82\xAC", kFffd + kFffd,
                                             kFffd + kFffd + kFffd}));
}

TEST(TraceReaderRepair, EveryKindAtOnceOneLineEach) {
  const Read r =
      read_at_every_chunk_size("\xEF\xBB\xBF[{\"n\":\"\xFF\"},{\"n\":\"\xFF\xFF\"},\n{\"x\":");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.warnings, (std::vector<std::string>{
                            "1 UTF-8 byte order mark at the start of the input (skipped)",
                            "1 event cut off by the end of the input (its 5 bytes from byte 26 "
                            "dropped)",
                            "3 invalid UTF-8 sequences in 2 events (replaced by U+FFFD)"}));
  // A second read starts from nothing.
  TraceReader reader;
  const std::string path = temp_path("reader_repair_again");
  std::ofstream(path) << "[{}]";
  std::string error;
  ASSERT_TRUE(reader.read(
      path, [](const RawEvent&) { return true; }, nullptr, &error));
  EXPECT_FALSE(reader.repairs().any());
}

}  // namespace
