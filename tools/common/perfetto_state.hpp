// PerfettoDecoder's state (perfetto_decoder.hpp), shared by its source
// files: perfetto_decoder.cpp (packets, sequences, clocks, tracks),
// perfetto_events.cpp (track events as JSON events) and perfetto_args.cpp
// (interned data, debug annotations as JSON args).
#pragma once

#include "perfetto_decoder.hpp"
#include "proto_wire.hpp"

#include "base/json_writer.hpp"  // sdk/src: the one escaping writer

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jitscope::tools {
namespace pfjson {  // pieces of the JSON form's events

// ns as µs with three decimals, as the JSON writer writes a time point.
inline void append_time(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out.push_back('-');
    detail::append_us(out, static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(ns));
  } else {
    detail::append_us(out, static_cast<std::uint64_t>(ns));
  }
}

inline void append_place(std::string& out, std::int64_t pid, std::int64_t tid) {
  out.append(",\"pid\":");
  detail::append_int(out, pid);
  out.append(",\"tid\":");
  detail::append_int(out, tid);
}

// `,"cat":C,"name":N` (no "cat" when there is no category).
inline void append_cat_name(std::string& out, std::string_view cat, bool has_cat,
                            std::string_view name) {
  if (has_cat) {
    out.append(",\"cat\":");
    detail::append_json_string(out, cat);
  }
  out.append(",\"name\":");
  detail::append_json_string(out, name);
}

}  // namespace pfjson

// A malformed packet: thrown inside the decoder, caught by packet(), which
// turns it into "byte N: <what>" (`at` points into the packet).
struct PerfettoBad {
  const char* at;
  std::string what;
};

struct PerfettoDecoder::State {
  static constexpr std::size_t kMaxSequences = std::size_t{1} << 16;
  static constexpr std::size_t kMaxTracks = std::size_t{1} << 20;
  static constexpr std::size_t kMaxOpenSlices = std::size_t{1} << 20;
  static constexpr int kMaxAnnotationDepth = 64;

  // A sequence-scoped clock (64..127) as its ClockSnapshot defined it:
  // trace-clock ns = value * multiplier + offset.
  struct SeqClock {
    std::uint32_t id = 0;
    bool incremental = false;
    std::uint64_t multiplier = 1;
    std::uint64_t last = 0;  // an incremental clock's value after the latest packet
    std::int64_t offset = 0;
  };
  using Strings = std::unordered_map<std::uint64_t, std::string>;
  struct Sequence {
    bool valid = false;          // incremental state cleared, and not lost since
    std::uint32_t clock_id = 0;  // trace_packet_defaults.timestamp_clock_id; 0: the trace clock
    bool has_track = false;      // track_event_defaults.track_uuid
    std::uint64_t track = 0;
    Strings names, categories, arg_names, strings;
    std::vector<SeqClock> clocks;
    std::size_t interned_bytes = 0;
  };
  struct OpenSlice {
    std::string head;  // `,"cat":...,"name":...` as the X will have them
    std::string args;  // the BEGIN's args, members without braces
    std::int64_t ts = 0;
    std::int64_t pid = 0, tid = 0;
  };
  struct Track {
    bool is_process = false, is_thread = false;
    bool has_parent = false;
    std::uint64_t parent = 0;
    std::int64_t pid = 0, tid = 0;
    std::string name;             // the descriptor's name (an NVTX domain, a counter)
    std::string named;            // the process or thread name last written as "M"
    std::vector<OpenSlice> open;  // [0, depth) open; kept beyond for their capacity
    std::size_t depth = 0;
  };
  // Where an event on a track goes in the JSON form.
  struct Place {
    std::int64_t pid = 0, tid = 0;
    bool process = false;  // a process track: instants are "s":"p"
  };

  std::function<bool(const RawEvent&)> on_event;
  std::size_t max_bytes;
  PerfettoSkips skips;
  std::uint64_t events = 0;
  std::size_t largest = 0;
  bool stopped = false;

  std::unordered_map<std::uint32_t, Sequence> sequences;
  std::unordered_map<std::uint64_t, Track> tracks;
  std::uint32_t primary_clock = detail::pf::clock::kBoottime;    // Perfetto's default
  std::vector<std::pair<std::uint32_t, std::int64_t>> snapshot;  // latest absolute one, ns
  std::size_t interned_bytes = 0;
  std::size_t open_slices = 0;
  std::size_t open_bytes = 0;

  // The packet being decoded: where its bytes are in the input.
  const char* base = nullptr;
  std::uint64_t offset = 0;
  bool inflating = false;  // decoding the packets of a compressed packet

  std::string event;    // the event being written, then its padding
  std::string scratch;  // END args, instant args
  std::string cats;     // the event's categories, ','-joined
  std::vector<std::string_view> annotations;
  std::vector<std::uint64_t> flows, terminating, ids;

  explicit State(std::function<bool(const RawEvent&)> fn, std::size_t max)
      : on_event(std::move(fn)), max_bytes(max == 0 ? 1 : max) {}

  // perfetto_decoder.cpp
  void packet(std::string_view bytes);
  Sequence& sequence(std::uint32_t id, const char* at);
  void reset(Sequence& s);
  void clock_snapshot(Sequence& seq, std::string_view bytes);
  std::int64_t to_trace_clock(std::uint32_t clock, std::uint64_t value) const;
  void track_descriptor(std::string_view bytes);
  Track& track(std::uint64_t uuid, const char* at);
  Place place(const Track& t) const;

  // perfetto_inflate.cpp: the packets of a compressed packet, decoded.
  void compressed_packets(std::string_view bytes, bool zstd, const char* at);

  // perfetto_events.cpp
  void track_event(Sequence& seq, std::string_view bytes, std::int64_t ts);
  void emit_flows(std::int64_t ts, const Place& where);
  void hand_over(const char* at);

  // perfetto_args.cpp
  void interned_data(Sequence& seq, std::string_view bytes);
  // Appends each annotation as a JSON member (comma-separated, no braces).
  void append_args(Sequence& seq, std::string* out);
  const std::string& lookup(const Strings& table, std::uint64_t iid);
  void annotation(Sequence& seq, std::string_view bytes, std::string* out, bool named, int depth);
  // Bounds a string the decoder builds at max_bytes: "<what> larger than 256 MiB".
  void check_size(const std::string& s, const char* at, const char* what) const;
  std::string limit() const;  // max_bytes as "256 MiB" or "N bytes"

  [[noreturn]] static void bad(const char* at, std::string what) {
    throw PerfettoBad{at, std::move(what)};
  }
  // A known field of the wrong wire type is malformed (Perfetto refuses it too).
  static void want(const proto::Field& f, detail::pf::WireType w, const char* what) {
    if (f.wire != w) {
      bad(f.start, std::string(what) + " has wire type " + std::to_string(f.wire) + ", expected " +
                       std::to_string(static_cast<unsigned>(w)));
    }
  }
  static void check(const proto::FieldReader& r) {
    if (r.failed()) bad(r.error_at(), r.error());
  }
};

}  // namespace jitscope::tools
