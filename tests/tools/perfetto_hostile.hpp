// Big and hostile Perfetto traces for the tools' memory tests
// (perfetto_memory_test.cpp) and the fuzz corpus (fuzz/corpus/fuzz_perfetto,
// written by that test's DISABLED_WriteFuzzCorpus):
// - sdk_threads: what the SDK writes for a session whose threads come and go
//   (one sequence per thread), packet for packet: the SDK's own encoders for
//   the file's start, the thread descriptors, each sequence's start and its
//   interned names (sdk/src/format/perfetto/), and pf_packet's field order for
//   the events (sdk/src/format/perfetto/trace_perfetto.cpp);
// - open_slices_on_tracks: slices opened deep on one track, all ended, then
//   the same on the next track (a reader that keeps each track's deepest
//   nesting holds them all);
// - long_track_names: many tracks, each with a long name (plain, or in zstd
//   compressed packets: long_track_names_zstd);
// - colliding_tracks: track uuids chosen to fall into one hash bucket;
// - zstd_bomb (with zstd): compressed packets that inflate to far more than
//   they take.
#pragma once

#include "perfetto_trace_builder.hpp"

#include "format/perfetto/interner.hpp"
#include "format/perfetto/tracks.hpp"
#include "format/perfetto/transcode.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#if JITSCOPE_TEST_HAVE_ZSTD
#include <zstd.h>
#endif

namespace jitscope::testing::pfhostile {

namespace pfenc = jitscope::testing::pfenc;
namespace pf = jitscope::detail::pf;
namespace pfw = jitscope::detail::pfw;
namespace wire = jitscope::detail::wire;

// A TrackEvent packet on a thread's sequence as the SDK's pf_packet writes
// it: timestamp (a delta on clock 64), sequence id, the TrackEvent (type,
// category and name ids for a BEGIN, annotations), the interned names it
// defines, SEQ_NEEDS_INCREMENTAL_STATE.
inline std::string sdk_event_packet(std::uint32_t seq, std::uint64_t delta, std::uint32_t type,
                                    std::uint64_t cat_iid, std::uint64_t name_iid,
                                    std::string_view annotations, std::string_view defs) {
  std::string event;
  wire::append_varint_field(event, pf::tag(pf::event::kType, pf::kVarint), type);
  if (type != pf::event::kSliceEnd) {
    wire::append_varint_field(event, pf::tag(pf::event::kCategoryIids, pf::kVarint), cat_iid);
    wire::append_varint_field(event, pf::tag(pf::event::kNameIid, pf::kVarint), name_iid);
  }
  event.append(annotations);
  std::string body;
  wire::append_varint_field(body, pf::tag(pf::packet::kTimestamp, pf::kVarint), delta);
  wire::append_varint_field(body, pf::tag(pf::packet::kTrustedPacketSequenceId, pf::kVarint), seq);
  wire::append_bytes_field(body, pf::tag(pf::packet::kTrackEvent, pf::kLengthDelimited), event);
  if (!defs.empty()) {
    wire::append_bytes_field(body, pf::tag(pf::packet::kInternedData, pf::kLengthDelimited), defs);
  }
  wire::append_varint_field(body, pf::tag(pf::packet::kSequenceFlags, pf::kVarint),
                            pf::packet::kSeqNeedsIncrementalState);
  std::string packet;
  wire::append_bytes_field(packet, pf::tag(pf::trace::kPacket, pf::kLengthDelimited), body);
  return packet;
}

// A session of `threads` threads, each recording one span ("work", with an
// arg) and ending before the next starts, as a long-running compiler's
// workers come and go. Tids repeat every `tid_period` threads (the kernel
// reuses them: pid_max is 32768 on many machines), as in the SDK's own file.
inline std::string sdk_threads(std::size_t threads, std::int64_t pid = 4242,
                               std::int64_t tid_period = 30000) {
  std::string out;
  std::uint64_t now = 1'000'000'000;
  pfw::append_file_start(out, now, now + 5'000'000, 1'700'000'000'000'000'000);
  pfw::ProcessSequence process;
  process.start_file(now);
  process.transcode(R"({"ph":"M","name":"process_name","pid":)" + std::to_string(pid) +
                        R"(,"tid":0,"args":{"name":"compiler"}})",
                    out);
  process.settle(true);
  for (std::size_t i = 0; i < threads; ++i) {
    const std::int64_t tid = pid + 1 + static_cast<std::int64_t>(i) % tid_period;
    const auto seq = static_cast<std::uint32_t>(2 + i);
    process.transcode(R"({"ph":"M","name":"thread_name","pid":)" + std::to_string(pid) +
                          ",\"tid\":" + std::to_string(tid) + R"(,"args":{"name":"worker"}})",
                      out);
    process.settle(true);
    now += 1000;
    pfw::append_sequence_start(out, seq, pfw::thread_track(pid, tid), now);
    pfw::Interner interner;
    const std::uint64_t cat = interner.intern_static(pfw::Interner::kCategory, "jitscope");
    const std::uint64_t name = interner.intern_static(pfw::Interner::kName, "work");
    std::string arg;  // {name_iid: "worker", int_value: i}, an arg of the span's own
    const std::uint64_t key = interner.intern_static(pfw::Interner::kAnnotation, "worker");
    const std::size_t at =
        wire::begin_nested(arg, pf::tag(pf::event::kDebugAnnotations, pf::kLengthDelimited));
    wire::append_varint_field(arg, pf::tag(pf::annotation::kNameIid, pf::kVarint), key);
    wire::append_varint_field(arg, pf::tag(pf::annotation::kIntValue, pf::kVarint), i);
    wire::end_nested(arg, at);
    out += sdk_event_packet(seq, 0, pf::event::kSliceBegin, cat, name, arg, interner.take());
    interner.settle(true);
    out += sdk_event_packet(seq, 500 + i % 7, pf::event::kSliceEnd, 0, 0, {}, {});
  }
  return out;
}

// On each of `tracks` thread tracks (one sequence), `depth` slices begun,
// nested, then all ended; the next track only after. Each slice's name is
// interned once and `name_bytes` long, so the file stays small while the
// slices open at once hold depth * name_bytes.
inline std::string open_slices_on_tracks(int tracks, std::size_t depth, std::size_t name_bytes) {
  using namespace pfenc;
  std::string out = trace({process_head(), descriptor(process_track(1, 42, "app"))});
  for (int t = 0; t < tracks; ++t) {
    const std::uint64_t uuid = 100 + static_cast<std::uint64_t>(t);
    const auto seq = static_cast<std::uint32_t>(2 + t);
    out += trace({descriptor(thread_track(uuid, 1, 42, 7 + t, "t")), thread_head(seq, uuid, 0)});
    Msg interned;
    intern(interned, pf::interned::kEventNames, 1, std::string(name_bytes, 'n'));
    const Msg begin = typed(pf::event::kSliceBegin).varint(pf::event::kNameIid, 1);
    out += trace({event_at(seq, 1, begin, &interned)});
    const std::string again = trace({event_at(seq, 1, begin)});
    const std::string end = trace({event_at(seq, 1, typed(pf::event::kSliceEnd))});
    for (std::size_t i = 1; i < depth; ++i) out += again;
    for (std::size_t i = 0; i < depth; ++i) out += end;
  }
  return out;
}

// `tracks` named tracks (an NVTX domain's shape: a name, a parent), each
// name `name_bytes` long and different from the others.
inline std::string long_track_names(std::size_t tracks, std::size_t name_bytes) {
  using namespace pfenc;
  std::string out = trace({process_head(), descriptor(process_track(1, 42, "app"))});
  std::string name(name_bytes, 'd');
  for (std::size_t t = 0; t < tracks; ++t) {
    name.replace(0, 8, std::to_string(10'000'000 + t));
    out += trace({descriptor(named_track(100 + t, 1, name))});
  }
  return out;
}

// `tracks` track descriptors whose uuids are multiples of `stride`: with an
// integer's std::hash (the integer) and `stride` the table's bucket count,
// every one lands in one bucket, and inserting them is quadratic.
inline std::string colliding_tracks(std::size_t tracks, std::uint64_t stride) {
  using namespace pfenc;
  std::string out = trace({process_head(), descriptor(process_track(1, 42, "app"))});
  for (std::size_t t = 1; t <= tracks; ++t) {
    out += trace({descriptor(Msg().varint(pf::track::kUuid, t * stride))});
  }
  return out;
}

#if JITSCOPE_TEST_HAVE_ZSTD
// `bytes` as one zstd frame, in `z` (its room reused from call to call).
inline std::string_view zstd_of(std::string_view bytes, std::string& z) {
  if (z.size() < ZSTD_compressBound(bytes.size())) z.resize(ZSTD_compressBound(bytes.size()));
  return std::string_view(z).substr(
      0, ZSTD_compress(z.data(), z.size(), bytes.data(), bytes.size(), 1));
}

// `packets` zstd compressed packets, each holding `inner` bytes of empty
// TrackEvent packets on sequence 1: a few KiB each, thousands of times that
// to inflate and decode.
inline std::string zstd_bomb(int packets, std::size_t inner) {
  using namespace pfenc;
  const std::string one = trace({on_sequence(1).msg(pf::packet::kTrackEvent, Msg())});
  std::string payload;
  payload.reserve(inner + one.size());
  while (payload.size() + one.size() <= inner) payload += one;
  std::string room;
  const std::string_view z = zstd_of(payload, room);
  std::string out = trace({process_head()});
  for (int i = 0; i < packets; ++i) {
    out += trace({Msg().bytes(pf::packet::kZstdCompressedPackets, z)});
  }
  return out;
}

// long_track_names' descriptors in zstd compressed packets of `per_packet`
// tracks each, after a packet of `filler` bytes (an unknown field): input
// that lets them inflate (1024 bytes per byte of input), so that the memory
// bound is what stops them, with a file of a few MiB. One descriptor is
// encoded, then copied with its uuid and the name's first bytes patched.
inline std::string long_track_names_zstd(std::size_t tracks, std::size_t name_bytes,
                                         std::size_t per_packet, std::size_t filler) {
  using namespace pfenc;
  std::string out = trace({process_head(), descriptor(process_track(1, 42, "app")),
                           on_sequence(1).bytes(900, std::string(filler, 'f'))});
  constexpr std::uint64_t kFirst = std::uint64_t{1} << 42;  // uuids of one varint length
  const std::string one = trace({descriptor(named_track(kFirst, 1, std::string(name_bytes, 'd')))});
  std::string uuid;
  wire::append_varint(uuid, kFirst);
  const std::size_t uuid_at = one.find(uuid), name_at = one.find("dddddddd");
  std::string batch, room;
  batch.reserve(per_packet * one.size());
  for (std::size_t t = 0; t < tracks; ++t) {
    batch += one;
    char* p = batch.data() + batch.size() - one.size();
    std::string id;
    wire::append_varint(id, kFirst + t);
    std::copy(id.begin(), id.end(), p + uuid_at);
    const std::string prefix = std::to_string(10'000'000 + t);  // names differ
    std::copy(prefix.begin(), prefix.end(), p + name_at);
    if ((t + 1) % per_packet == 0 || t + 1 == tracks) {
      out += trace({Msg().bytes(pf::packet::kZstdCompressedPackets, zstd_of(batch, room))});
      batch.clear();
    }
  }
  return out;
}
#endif

}  // namespace jitscope::testing::pfhostile
