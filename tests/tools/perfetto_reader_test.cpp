// perfetto_reader_test: TraceReader on Perfetto's protobuf form, with traces
// built by hand (perfetto_encoder.hpp, perfetto_trace_builder.hpp): every
// kind of event as the exact JSON event text, at several chunk sizes;
// interning, sequence clocks (incremental, unit multipliers) and absolute
// clock conversion; incremental state cleared, never cleared and lost;
// unknown fields; a cut at every byte (success, the cut counted, nothing
// from the partial packet); corrupt inputs with their exact errors; the
// bounds; gzip'd protobuf; a callback that stops the read.
// Not covered here: the tools' output on protobuf input
// (perfetto_tools_test.cpp); the SDK's own writer (tests/perfetto/).
#include "perfetto_trace_builder.hpp"
#include "trace_reader_support.hpp"
#include "trace_support.hpp"

#include <perfetto_decoder.hpp>
#include <perfetto_reader.hpp>
#include <trace_reader.hpp>

#if JITSCOPE_TEST_HAVE_ZLIB
#include "gzip_support.hpp"
#endif
#if JITSCOPE_TEST_HAVE_ZLIB && JITSCOPE_TEST_HAVE_ZSTD
#include <zlib.h>
#include <zstd.h>
#endif

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace jitscope::testing::pfenc;
using jitscope::testing::read_with;
using jitscope::testing::ReaderOutput;
namespace tools = jitscope::tools;
namespace ev = pf::event;

std::string write_pftrace(const std::string& bytes) {
  return jitscope::testing::write_trace_file(bytes, "pftrace");
}

std::vector<std::string> jsons(const ReaderOutput& r) {
  std::vector<std::string> out;
  for (const auto& e : r.events) out.push_back(e.first);
  return out;
}

TEST(PerfettoReader, EveryKindOfEventAsTheJsonWriterWritesIt) {
  const auto steps = every_kind();
  const std::string path = write_pftrace(trace_of(steps));
  for (const std::size_t chunk :
       {std::size_t{1}, std::size_t{5}, tools::TraceReader::kDefaultChunkSize}) {
    SCOPED_TRACE(chunk);
    const ReaderOutput r = read_with(path, chunk);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(jsons(r), events_of(steps, steps.size()));
    EXPECT_FALSE(r.unterminated);
    EXPECT_FALSE(r.repairs.any()) << ::testing::PrintToString(r.warnings);
  }
  tools::TraceReader reader;
  ASSERT_TRUE(reader.read(
      path, [](const tools::RawEvent&) { return true; }, nullptr, nullptr));
  EXPECT_TRUE(reader.protobuf());
  EXPECT_EQ(reader.bytes_read(), trace_of(steps).size());
}

TEST(PerfettoReader, UnknownFieldsChangeNothing) {
  const auto steps = every_kind(/*noise=*/true);
  std::string bytes = trace_of(steps);
  // Another top-level field of the Trace, between packets and at the end.
  const std::string other = Msg().bytes(2, "not a packet").varint(3, 9).str();
  bytes.insert(trace({steps[0].packet}).size(), other);
  bytes += other;
  const ReaderOutput r = read_with(write_pftrace(bytes), 3);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(jsons(r), events_of(every_kind(), steps.size()));
}

TEST(PerfettoReader, SequenceClockUnitsAndUnknownClocks) {
  std::vector<Msg> p{process_head(), descriptor(process_track(1, 5, "")),
                     descriptor(thread_track(2, 1, 5, 6, "")),
                     thread_head(2, 2, 7'000'000, /*multiplier=*/1000)};
  p.push_back(event_at(2, 3, typed(ev::kInstant).bytes(ev::kName, "a")));  // 3 µs after 7 ms
  p.push_back(event_at(2, 2, typed(ev::kInstant).bytes(ev::kName, "b")));  // 2 µs later
  // Sequence 3 says its events are on clock 64 but never defines it.
  p.push_back(on_sequence(3)
                  .varint(pf::packet::kSequenceFlags, pf::packet::kSeqIncrementalStateCleared)
                  .msg(pf::packet::kTracePacketDefaults,
                       Msg().varint(pf::defaults::kTimestampClockId, 64)));
  p.push_back(event_at(3, 1, typed(ev::kInstant).varint(ev::kTrackUuid, 2).bytes(ev::kName, "c")));
  const ReaderOutput r = read_with(write_pftrace(trace(p)), 64);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(jsons(r), (std::vector<std::string>{
                          R"({"ph":"I","s":"t","name":"a","ts":7003.000,"pid":5,"tid":6})",
                          R"({"ph":"I","s":"t","name":"b","ts":7005.000,"pid":5,"tid":6})"}));
  EXPECT_EQ(r.repairs.perfetto.unknown_clock, 1u);
}

TEST(PerfettoReader, IncrementalStateClearedNeverClearedAndLost) {
  std::vector<Msg> p{process_head(), descriptor(process_track(1, 5, "")),
                     descriptor(thread_track(2, 1, 5, 6, ""))};
  Msg names;
  intern(names, pf::interned::kEventNames, 1, "first");
  // Needs state before its sequence was ever cleared: skipped.
  p.push_back(event_at(2, 1, typed(ev::kInstant).varint(ev::kNameIid, 1), &names));
  p.push_back(thread_head(2, 2, 1'000'000));
  p.push_back(event_at(2, 1, typed(ev::kSliceBegin).varint(ev::kNameIid, 1), &names));
  p.push_back(event_at(2, 1, typed(ev::kSliceEnd)));
  // Data lost before this packet: skipped until the next clear.
  p.push_back(event_at(2, 1, typed(ev::kInstant).varint(ev::kNameIid, 1))
                  .varint(pf::packet::kPreviousPacketDropped, 1));
  p.push_back(event_at(2, 1, typed(ev::kInstant).varint(ev::kNameIid, 1)));
  // Cleared again: a new table and a new clock start.
  Msg renamed;
  intern(renamed, pf::interned::kEventNames, 1, "second");
  p.push_back(thread_head(2, 2, 5'000'000));
  p.push_back(event_at(2, 2, typed(ev::kInstant).varint(ev::kNameIid, 1), &renamed));
  p.push_back(event_at(2, 1, typed(ev::kInstant).varint(ev::kNameIid, 2)));  // never defined
  p.push_back(event_at(2, 1, typed(ev::kSliceEnd)));                         // none open
  p.push_back(event_at(2, 1, typed(ev::kSliceBegin).bytes(ev::kName, "open at the end")));
  const ReaderOutput r = read_with(write_pftrace(trace(p)), 7);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(jsons(r), (std::vector<std::string>{
                          R"({"ph":"X","name":"first","ts":1000.001,"dur":0.001,"pid":5,"tid":6})",
                          R"({"ph":"I","s":"t","name":"second","ts":5000.002,"pid":5,"tid":6})",
                          R"({"ph":"I","s":"t","name":"","ts":5000.003,"pid":5,"tid":6})"}));
  EXPECT_EQ(r.repairs.perfetto.needs_state, 3u);
  EXPECT_EQ(r.repairs.perfetto.unknown_iids, 1u);
  EXPECT_EQ(r.repairs.perfetto.unmatched_ends, 1u);
  EXPECT_EQ(r.repairs.perfetto.unended, 1u);
  EXPECT_EQ(r.warnings,
            (std::vector<std::string>{
                "3 packets that need incremental state their sequence lost or never had (skipped)",
                "1 slice begun and never ended (dropped)",
                "1 slice end with no slice open on its track (ignored)",
                "1 interned id never defined (its name left empty)"}));
}

// Cut anywhere from the end of the first packet on: success, the packets
// before the cut as if the file ended there, and the cut counted.
TEST(PerfettoReader, CutAtEveryByte) {
  const auto steps = every_kind();
  const std::string bytes = trace_of(steps);
  std::vector<std::size_t> ends;  // each packet's end
  for (std::size_t i = 1; i <= steps.size(); ++i) {
    std::vector<Step> first(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(i));
    ends.push_back(trace_of(first).size());
  }
  for (std::size_t cut = ends[0]; cut < bytes.size(); ++cut) {
    SCOPED_TRACE(cut);
    std::size_t whole = 0;
    while (whole < ends.size() && ends[whole] <= cut) ++whole;
    const std::string path = write_pftrace(bytes.substr(0, cut));
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{4096}}) {
      const ReaderOutput r = read_with(path, chunk);
      ASSERT_TRUE(r.ok) << r.error;
      ASSERT_EQ(jsons(r), events_of(steps, whole));
      const bool at_boundary = ends[whole - 1] == cut;
      ASSERT_EQ(r.repairs.cut_event, !at_boundary);
      if (!at_boundary) {
        EXPECT_TRUE(r.repairs.cut_packet);
        EXPECT_EQ(r.repairs.cut_event_offset, ends[whole - 1]);
        EXPECT_EQ(r.repairs.cut_event_bytes, cut - ends[whole - 1]);
        EXPECT_EQ(r.warnings.front(), "1 packet cut off by the end of the input (its " +
                                          std::to_string(cut - ends[whole - 1]) +
                                          " bytes from byte " + std::to_string(ends[whole - 1]) +
                                          " dropped)");
      }
    }
  }
}

struct Corrupt {
  std::string bytes;
  std::string error;  // after "<path>: "
};

TEST(PerfettoReader, CorruptInputsAreErrorsWithByteOffsets) {
  const std::string head = trace({process_head()});
  const std::size_t h = head.size();
  const std::size_t body = h + 2;                // a packet's tag and one-byte length
  const std::string seq = on_sequence(1).str();  // 2 bytes
  auto packet = [&](const std::string& b) { return head + trace({Msg().raw(seq + b)}); };
  std::vector<Corrupt> cases{
      {packet(Msg().bytes(pf::packet::kTimestamp, "x").str()),
       "byte " + std::to_string(body + 2) + ": TracePacket.timestamp has wire type 2, expected 0"},
      {packet("\x5a\x32xyz"),  // track_event, 50 bytes long, in a packet with 3 left
       "byte " + std::to_string(body + 3) + ": a length past the end of its message"},
      {packet("\x40" + std::string(11, '\xff')),
       "byte " + std::to_string(body + 3) + ": a malformed varint (longer than 10 bytes)"},
      {packet("\x5a\x02\x48\x05"),  // a TrackEvent of TYPE_STATE: not in the JSON form, no error
       ""},
      {packet(Msg().msg(pf::packet::kTrackEvent, Msg().fixed64(ev::kType, 1)).str()),
       "byte " + std::to_string(body + 4) + ": TrackEvent.type has wire type 1, expected 0"},
      {head + "\x08\x01",
       "byte " + std::to_string(h) + ": Trace.packet has wire type 0, expected 2"},
      {head + "\x0a" + std::string(11, '\xff'),
       "byte " + std::to_string(h) + ": a malformed varint (a packet's length)"},
      {head + "\x13",
       "byte " + std::to_string(h) + ": a Trace field of wire type 3 (not in Perfetto's schema)"},
      {packet("\x0f"),
       "byte " + std::to_string(body + 2) + ": wire type 3, 4, 6 or 7 (not in Perfetto's schema)"},
  };
  {
    Msg deep = arg_int("leaf", 1);
    for (int i = 0; i < 70; ++i) deep = Msg().msg(pf::annotation::kDictEntries, deep);
    const Msg p = on_sequence(1).msg(pf::packet::kTrackEvent,
                                     typed(ev::kInstant).msg(ev::kDebugAnnotations, deep));
    Corrupt c{head + trace({p}), ""};
    const ReaderOutput r = read_with(write_pftrace(c.bytes), 64);
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.error.find("debug annotations nested deeper than 64 levels"), std::string::npos)
        << r.error;
  }
  for (const Corrupt& c : cases) {
    const std::string path = write_pftrace(c.bytes);
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{1} << 20}) {
      const ReaderOutput r = read_with(path, chunk);
      if (c.error.empty()) {
        EXPECT_TRUE(r.ok) << r.error;
        continue;
      }
      EXPECT_FALSE(r.ok);
      EXPECT_EQ(r.error, path + ": " + c.error);
    }
  }
}

TEST(PerfettoReader, BoundsArePerRead) {
  const std::string bytes = trace_of(every_kind());
  const std::string path = write_pftrace(bytes);
  tools::TraceReader reader;
  reader.set_max_event_bytes(20);
  std::string error;
  EXPECT_FALSE(reader.read(
      path, [](const tools::RawEvent&) { return true; }, nullptr, &error));
  EXPECT_EQ(error, path + ": byte 0: a packet larger than 20 bytes");
  // Interned strings are bounded too: one name over the bound.
  Msg interned;
  intern(interned, pf::interned::kEventNames, 1, std::string(300, 'n'));
  const std::string big =
      trace({process_head(), on_sequence(1).msg(pf::packet::kInternedData, interned)});
  reader.set_max_event_bytes(330);
  EXPECT_FALSE(reader.read(
      write_pftrace(big), [](const tools::RawEvent&) { return true; }, nullptr, &error));
  EXPECT_NE(error.find("interned strings of more than 330 bytes"), std::string::npos) << error;
  // And an event's categories: one interned category named again and again
  // by a small packet must not grow them past the bound first.
  Msg category;
  intern(category, pf::interned::kEventCategories, 1, std::string(300, 'c'));
  Msg repeated = typed(ev::kInstant);
  for (int i = 0; i < 8; ++i) repeated.varint(ev::kCategoryIids, 1);
  const std::string many = trace({process_head(), on_sequence(1)
                                                      .msg(pf::packet::kInternedData, category)
                                                      .varint(pf::packet::kTimestamp, 1)
                                                      .msg(pf::packet::kTrackEvent, repeated)});
  reader.set_max_event_bytes(1000);
  EXPECT_FALSE(reader.read(
      write_pftrace(many), [](const tools::RawEvent&) { return true; }, nullptr, &error));
  EXPECT_NE(error.find("an event's categories larger than 1000 bytes"), std::string::npos) << error;
}

TEST(PerfettoReader, CallbackStopsTheRead) {
  const std::string path = write_pftrace(trace_of(every_kind()));
  tools::TraceReader reader;
  std::string error;
  int seen = 0;
  EXPECT_FALSE(reader.read(
      path,
      [&](const tools::RawEvent&) {
        if (++seen < 2) return true;
        error = "stopped here";
        return false;
      },
      nullptr, &error));
  EXPECT_EQ(error, "stopped here");
  EXPECT_EQ(seen, 2);
}

TEST(PerfettoReader, FormIsKnownByItsFirstBytes) {
  using tools::TraceForm;
  EXPECT_EQ(tools::detect_trace_form(""), TraceForm::kJson);
  EXPECT_EQ(tools::detect_trace_form("[{"), TraceForm::kJson);
  EXPECT_EQ(tools::detect_trace_form("\n  \r\t["), TraceForm::kJson);
  EXPECT_EQ(tools::detect_trace_form("\n{"), TraceForm::kJson);
  EXPECT_EQ(tools::detect_trace_form("\n \n"), TraceForm::kUndecided);
  EXPECT_EQ(tools::detect_trace_form("\x0a\x05"), TraceForm::kUndecided);
  EXPECT_EQ(tools::detect_trace_form("\x0a\x05\x50"), TraceForm::kProtobuf);
  EXPECT_EQ(tools::detect_trace_form(std::string_view("\x0a\x00", 2)), TraceForm::kProtobuf);
  EXPECT_EQ(tools::detect_trace_form("\n\x01\x02"), TraceForm::kJson);        // field 0
  EXPECT_EQ(tools::detect_trace_form("\n\x01\x0b"), TraceForm::kJson);        // a group
  EXPECT_EQ(tools::detect_trace_form("\x0a\x20\x50"), TraceForm::kProtobuf);  // length 32
  // JSON that starts with a newline still reads as JSON.
  const ReaderOutput r = read_with(write_pftrace("\n\n[{\"ph\":\"X\"}]"), 1);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.events.size(), 1u);
  EXPECT_EQ(r.events[0].first, "{\"ph\":\"X\"}");
  EXPECT_EQ(r.events[0].second, 3u);
}

#if JITSCOPE_TEST_HAVE_ZLIB
TEST(PerfettoReader, GzipdProtobuf) {
  const auto steps = every_kind();
  const std::string path = write_pftrace(jitscope::testing::gzip_member(trace_of(steps)));
  for (const std::size_t chunk : {std::size_t{1}, tools::TraceReader::kDefaultChunkSize}) {
    const ReaderOutput r = read_with(path, chunk);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(jsons(r), events_of(steps, steps.size()));
  }
}
#endif

#if JITSCOPE_TEST_HAVE_ZLIB && JITSCOPE_TEST_HAVE_ZSTD
// Compressed packets (docs/perfetto-format.md): a TracePacket holding a
// serialized Trace, deflate'd (field 50, a zlib stream) or zstd'd (field 133).
std::string deflated(std::string_view packets) {
  std::string out(compressBound(packets.size()), '\0');
  uLongf n = out.size();
  EXPECT_EQ(compress2(reinterpret_cast<Bytef*>(out.data()), &n,
                      reinterpret_cast<const Bytef*>(packets.data()), packets.size(), 6),
            Z_OK);
  out.resize(n);
  return out;
}
std::string zstded(std::string_view packets) {
  std::string out(ZSTD_compressBound(packets.size()), '\0');
  const std::size_t n = ZSTD_compress(out.data(), out.size(), packets.data(), packets.size(), 3);
  EXPECT_EQ(ZSTD_isError(n), 0u);
  out.resize(n);
  return out;
}
// The Trace's packets, each with its framing.
std::vector<std::string> framed_packets(const std::string& t) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (const std::size_t end = wire::field_end(t, at)) {
    out.push_back(t.substr(at, end - at));
    at = end;
  }
  EXPECT_EQ(at, t.size());
  return out;
}

TEST(PerfettoReader, CompressedPacketsReadAsThePacketsTheyHold) {
  const auto steps = every_kind();
  const std::vector<std::string> packets = framed_packets(trace_of(steps));
  ASSERT_GE(packets.size(), 4u);
  // The first packet plain, the first half of the rest deflate'd, the other
  // half zstd'd in two packets (a boundary between packets of one sequence).
  std::string a, b, c;
  const std::size_t half = 1 + (packets.size() - 1) / 2;
  for (std::size_t i = 1; i < packets.size(); ++i) {
    (i < half ? a : i < half + (packets.size() - half) / 2 ? b : c) += packets[i];
  }
  const std::string bytes =
      packets[0] + trace({Msg().bytes(pf::packet::kCompressedPackets, deflated(a)),
                          Msg().bytes(pf::packet::kZstdCompressedPackets, zstded(b)),
                          Msg().bytes(pf::packet::kZstdCompressedPackets, zstded(c))});
  const std::string path = write_pftrace(bytes);
  for (const std::size_t chunk : {std::size_t{1}, tools::TraceReader::kDefaultChunkSize}) {
    SCOPED_TRACE(chunk);
    const ReaderOutput r = read_with(path, chunk);
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(jsons(r), events_of(steps, steps.size()));
    EXPECT_FALSE(r.repairs.any()) << ::testing::PrintToString(r.warnings);
  }
}

TEST(PerfettoReader, CorruptCompressedPacketsAreErrorsAtTheirByte) {
  const std::string head = trace({process_head()});
  const std::size_t h = head.size();
  const std::string inner = trace({process_head()});
  std::string bad_zstd = zstded(inner);
  bad_zstd[0] ^= 0x5a;  // zstd's magic number
  const std::string nested =
      trace({Msg().bytes(pf::packet::kZstdCompressedPackets, zstded(inner))});
  const std::string malformed = inner + "\x0a\x03\x40\xff\xff";  // a varint cut short
  struct Case {
    std::string payload;
    std::uint32_t field;
    std::string error;  // the part after "byte N: "
  };
  const std::vector<Case> cases{
      {bad_zstd, pf::packet::kZstdCompressedPackets,
       "TracePacket.zstd_compressed_packets cannot be inflated (zstd: "},
      {deflated(inner).substr(0, deflated(inner).size() - 3), pf::packet::kCompressedPackets,
       "TracePacket.compressed_packets is cut off (its zlib stream has no end)"},
      {zstded(inner).substr(0, zstded(inner).size() - 3), pf::packet::kZstdCompressedPackets,
       "TracePacket.zstd_compressed_packets is cut off (its zstd frame has no end)"},
      {zstded(nested), pf::packet::kZstdCompressedPackets,
       "TracePacket.zstd_compressed_packets, byte " + std::to_string(2) +
           " inflated: a compressed packet inside a compressed packet"},
      {deflated(malformed), pf::packet::kCompressedPackets,
       "TracePacket.compressed_packets, byte " + std::to_string(inner.size() + 3) +
           " inflated: a varint past the end of its message"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    const std::string path = write_pftrace(head + trace({Msg().bytes(c.field, c.payload)}));
    const ReaderOutput r = read_with(path, std::size_t{1} << 20);
    ASSERT_FALSE(r.ok);
    // The compressed field's tag: right after the packet's tag and length.
    const std::size_t packet_len =
        wire::field_size(pf::tag(c.field, pf::kLengthDelimited), c.payload.size());
    const std::size_t at = h + 1 + wire::varint_size(packet_len);
    EXPECT_EQ(r.error.rfind(path + ": byte " + std::to_string(at) + ": " + c.error, 0), 0u)
        << r.error;
  }
  // Inflating is bounded by the largest-event bound: what comes out, and
  // the window a zstd frame asks for before anything comes out.
  tools::TraceReader reader;
  reader.set_max_event_bytes(4096);
  const std::string zeros(1 << 20, '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  // A 1 KiB window, 64 KiB out (a block per KiB: the packet stays small).
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 10);
  const std::string_view some(zeros.data(), 64 << 10);
  std::string small_window(ZSTD_compressBound(some.size()), '\0');
  small_window.resize(
      ZSTD_compress2(cctx, small_window.data(), small_window.size(), some.data(), some.size()));
  ZSTD_freeCCtx(cctx);
  for (const auto& [payload, expected] :
       {std::pair{small_window, std::string("inflates to more than 4096 bytes")},
        std::pair{zstded(zeros), std::string("cannot be inflated (zstd: Frame requires too much "
                                             "memory for decoding)")},
        std::pair{deflated(zeros), std::string("inflates to more than 4096 bytes")}}) {
    const std::uint32_t field = payload == deflated(zeros) ? pf::packet::kCompressedPackets
                                                           : pf::packet::kZstdCompressedPackets;
    std::string error;
    EXPECT_FALSE(reader.read(
        write_pftrace(head + trace({Msg().bytes(field, payload)})),
        [](const tools::RawEvent&) { return true; }, nullptr, &error));
    EXPECT_NE(error.find(expected), std::string::npos) << error;
  }
}
#endif

}  // namespace
