// The protobuf form read with TraceReader::set_decoded_fields (what
// jitscope-report does): each event handed over as its fields and its args
// alone, decoded by EventDecoder to exactly what the JSON text the reader
// otherwise writes decodes to. The JSON text is the reference.
//
// Covered: every kind of event (perfetto_trace_builder.hpp's), with unknown
// fields, cut at every byte; hand-built edge cases (invalid UTF-8 and
// escapes in names and categories, inline and interned; times and
// durations past 10^18 ns and below zero; an end before its begin; a NaN
// counter; args of the wrong type and given twice; unknown iids; process
// and task flows); traces the SDK wrote; errors and a stop by the callback.
// Not covered here: speed (bench/report/units_bench.sh).
#include "perfetto_fields_support.hpp"

#include "base/spawn_flow.hpp"  // sdk/src

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace {

using namespace jitscope::testing::pfenc;
using jitscope::testing::decode;
using jitscope::testing::Decoded;
using jitscope::testing::expect_same;
using jitscope::testing::write_trace;
namespace tools = jitscope::tools;
namespace ev = pf::event;

TEST(PerfettoFields, EveryKindOfEventDecodesAsItsJsonText) {
  for (const bool noise : {false, true}) {
    const auto steps = every_kind(noise);
    const std::string path = write_trace(trace_of(steps));
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{1} << 20}) {
      const Decoded d = expect_same(path, chunk);
      ASSERT_TRUE(d.ok) << d.error;
      EXPECT_EQ(d.events.size(), events_of(steps, steps.size()).size());
    }
  }
}

TEST(PerfettoFields, ACutTraceDecodesTheSameAtEveryByte) {
  const std::string bytes = trace_of(every_kind());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE(n);
    expect_same(write_trace(bytes.substr(0, n)));
    if (::testing::Test::HasFailure()) break;
  }
}

// A thread sequence with absolute times (no incremental clock), for
// event_at.
Msg absolute_thread(std::uint32_t seq, std::uint64_t track) {
  return on_sequence(seq)
      .varint(pf::packet::kSequenceFlags, pf::packet::kSeqIncrementalStateCleared)
      .msg(pf::packet::kTracePacketDefaults,
           Msg().msg(pf::defaults::kTrackEventDefaults,
                     Msg().varint(pf::defaults::kTrackUuid, track)));
}

TEST(PerfettoFields, EdgeCasesDecodeAsTheirJsonText) {
  namespace an = pf::annotation;
  const std::string bad_utf8 =
      "n\xE2\x82"
      "a\xFF\xC0\x80";
  std::vector<Msg> p;
  p.push_back(descriptor(process_track(1, -5, "proc \xF0\x9F")));
  p.push_back(
      descriptor(thread_track(2, 1, -5, std::numeric_limits<std::int64_t>::min(), "t\x01")));
  p.push_back(descriptor(named_track(3, 2,
                                     "dom\xC3"
                                     "ain")));
  p.push_back(descriptor(named_track(4, 1, "counter \"c\"", true)));
  p.push_back(absolute_thread(2, 2));
  Msg interned;
  intern(interned, pf::interned::kEventNames, 1, bad_utf8);
  intern(interned, pf::interned::kEventCategories, 1, "cat\xED\xA0\x80");  // a surrogate
  intern(interned, pf::interned::kEventCategories, 2, "two");
  intern(interned, pf::interned::kDebugAnnotationNames, 1, "compile_id");
  intern(interned, pf::interned::kDebugAnnotationNames, 2, "k\"ey\n");
  intern(interned, pf::interned::kDebugAnnotationStringValues, 1, "v\xFF");
  // Interned names and categories with invalid UTF-8, args of every kind.
  p.push_back(event_at(
      2, 10,
      typed(ev::kSliceBegin)
          .varint(ev::kNameIid, 1)
          .varint(ev::kCategoryIids, 1)
          .varint(ev::kCategoryIids, 2)
          .msg(ev::kDebugAnnotations, arg_string("failed", "no"))
          .msg(ev::kDebugAnnotations, arg_bool("incomplete", true))
          .msg(ev::kDebugAnnotations, Msg().varint(an::kNameIid, 2).varint(an::kStringValueIid, 1))
          .msg(ev::kDebugAnnotations, arg_int("correlation", -7))
          .msg(ev::kDebugAnnotations, Msg().varint(an::kNameIid, 9).varint(an::kIntValue, 1)),
      &interned));
  // The END's args after the BEGIN's: a key given twice, the last one counts.
  p.push_back(event_at(
      2, 25,
      typed(ev::kSliceEnd)
          .msg(ev::kDebugAnnotations, Msg().varint(an::kNameIid, 1).varint(an::kIntValue, 3))
          .msg(ev::kDebugAnnotations, arg_bool("failed", true))
          .msg(ev::kDebugAnnotations, arg_bool("incomplete", false))));
  // Inline names with escapes and invalid UTF-8; an unknown name iid.
  p.push_back(event_at(2, 30,
                       typed(ev::kSliceBegin)
                           .bytes(ev::kName, "q\"\\\t\x1f" + bad_utf8)
                           .bytes(ev::kCategories, bad_utf8)));
  p.push_back(event_at(2, 20, typed(ev::kSliceEnd)));  // ends before it began: 0 long
  p.push_back(event_at(2, 40, typed(ev::kInstant).varint(ev::kNameIid, 77)));
  // Times at and past 10^18 ns, and a duration past it.
  for (const std::uint64_t ts :
       {999'999'999'999'999'999ull, 1'000'000'000'000'000'000ull, 9'223'372'036'854'775'807ull}) {
    p.push_back(event_at(2, ts, typed(ev::kInstant).bytes(ev::kName, "far")));
  }
  p.push_back(event_at(2, 1, typed(ev::kSliceBegin).bytes(ev::kName, "long")));
  p.push_back(event_at(2, 9'223'372'036'854'775'807ull, typed(ev::kSliceEnd)));
  // Times below zero: ts is read as int64.
  p.push_back(event_at(2, static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::min()),
                       typed(ev::kInstant).bytes(ev::kName, "min")));
  p.push_back(event_at(2, static_cast<std::uint64_t>(-1'000'000'000'000'000'001ll),
                       typed(ev::kInstant).bytes(ev::kName, "negative")));
  p.push_back(event_at(2, static_cast<std::uint64_t>(-5ll),
                       typed(ev::kSliceBegin).bytes(ev::kName, "neg")));
  p.push_back(event_at(2, 7, typed(ev::kSliceEnd)));
  // Counters: an int, a NaN (written null), on a named track and by name.
  p.push_back(
      event_at(1, 50, typed(ev::kCounter).varint(ev::kTrackUuid, 4).varint(ev::kCounterValue, 9)));
  p.push_back(
      event_at(1, 51,
               typed(ev::kCounter)
                   .varint(ev::kTrackUuid, 4)
                   .bytes(ev::kName, "by name")
                   .dbl(ev::kDoubleCounterValue, std::numeric_limits<double>::quiet_NaN())));
  // A slice on the named track: its name is the category.
  p.push_back(
      event_at(2, 60, typed(ev::kSliceBegin).varint(ev::kTrackUuid, 3).bytes(ev::kName, "r")));
  p.push_back(event_at(2, 61, typed(ev::kSliceEnd).varint(ev::kTrackUuid, 3)));
  // Metadata with nested args; an instant on the process.
  p.push_back(
      event_at(1, 70,
               typed(ev::kInstant)
                   .varint(ev::kTrackUuid, 1)
                   .bytes(ev::kCategories, pf::kMetadataCategory)
                   .bytes(ev::kName, "jitscope_session")
                   .msg(ev::kDebugAnnotations,
                        arg_dict("cupti", {arg_string("state", "off"), arg_double("x", 0.5)}))));
  p.push_back(event_at(1, 71, typed(ev::kInstant).varint(ev::kTrackUuid, 1).bytes(ev::kName, "p")));
  // Launch, spawn and task flows, begun and ended.
  namespace flow = jitscope::detail;
  const std::uint64_t spawn = flow::kSpawnFlowLow | 12345;
  const std::uint64_t task = flow::kTaskFlowLow | 678;
  ASSERT_TRUE(flow::is_process_flow(spawn) && flow::is_task_flow(task));
  p.push_back(event_at(2, 80,
                       typed(ev::kInstant)
                           .bytes(ev::kName, "flows")
                           .fixed64(ev::kFlowIds, 5)
                           .fixed64(ev::kFlowIds, spawn)
                           .fixed64(ev::kTerminatingFlowIds, task)
                           .fixed64(ev::kTerminatingFlowIds, ~0ull)));
  const Decoded d =
      expect_same(write_trace(trace(p)), tools::TraceReader::kDefaultChunkSize, false);
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_EQ(d.events.size(), 22u);
  // As text: the two instants at 10^18 ns and beyond, the two below
  // -10^18, and the slice longer than that.
  EXPECT_EQ(d.with_fields, 22u - 5u);
  // The edges were reached: a repaired name, the ignored compile_id (an
  // int), times past the plain form, the flows' ids.
  std::string all;
  for (const std::string& e : d.events) all += e + "\n";
  EXPECT_NE(all.find("n\xEF\xBF\xBD"
                     "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"),
            std::string::npos)
      << all;
  EXPECT_GE(d.ignored, 1u);
  EXPECT_NE(all.find("|9223372036854775807|"), std::string::npos) << all;
  EXPECT_NE(all.find(std::to_string(spawn)), std::string::npos) << all;
}

// Events the SDK wrote in the protobuf form (write_sdk_trace: spans with
// typed args and text to escape, a unit that failed, an instant, a counter).
TEST(PerfettoFields, SdkTracesDecodeAsTheirJsonText) {
  const Decoded d = expect_same(
      jitscope::testing::write_sdk_trace("pf_fields_sdk", jitscope::TraceFormat::kPerfetto));
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_GE(d.events.size(), 30u);
}

// The size bound on an event is its JSON text's: a name of control bytes
// (6 bytes each as text) passes it in the text long before the packet
// does. Each length around the bound gives the same events and error.
TEST(PerfettoFields, TheEventSizeBoundGivesTheSameError) {
  constexpr std::size_t kBound = 400;
  std::size_t refused = 0;
  for (std::size_t n = 0; n < 90; ++n) {
    SCOPED_TRACE(n);
    const std::string name(n, '\x01');
    const std::vector<Msg> p = {descriptor(thread_track(2, 1, 5, 6, "t")), absolute_thread(2, 2),
                                event_at(2, 10, typed(ev::kInstant).bytes(ev::kName, name)),
                                event_at(2, 20, typed(ev::kSliceBegin).bytes(ev::kName, "after")),
                                event_at(2, 30, typed(ev::kSliceEnd))};
    const Decoded d =
        expect_same(write_trace(trace(p)), tools::TraceReader::kDefaultChunkSize, false, kBound);
    if (!d.ok) {
      ++refused;
      EXPECT_NE(d.error.find("an event larger than 400 bytes"), std::string::npos) << d.error;
    }
  }
  // Some lengths pass the bound and some do not (about 52 bytes and up).
  EXPECT_GT(refused, 10u);
  EXPECT_LT(refused, 80u);
}

TEST(PerfettoFields, ErrorsAndAStopAreTheSame) {
  const auto steps = every_kind();
  const std::string bytes = trace_of(steps);
  // A malformed packet in the middle: the same error after the same events.
  std::string broken = bytes;
  const std::vector<Step> first_half(steps.begin(), steps.begin() + steps.size() / 2);
  broken.insert(trace_of(first_half).size(),
                trace({event_at(2, 1, typed(ev::kSliceBegin).varint(ev::kName, 3))}));
  const Decoded e = expect_same(write_trace(broken));
  EXPECT_FALSE(e.ok);
  EXPECT_NE(e.error.find(": byte "), std::string::npos) << e.error;
  // The callback's stop: read() false with its error, no event after it.
  const std::string path = write_trace(bytes);
  const Decoded text = decode(path, false, 1 << 20, 3);
  const Decoded direct = decode(path, true, 1 << 20, 3);
  EXPECT_FALSE(direct.ok);
  EXPECT_EQ(direct.error, "stopped");
  EXPECT_EQ(direct.events, text.events);
  EXPECT_EQ(direct.events.size(), 3u);
}

}  // namespace
