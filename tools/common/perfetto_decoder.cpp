// PerfettoDecoder: packets, sequences, clocks, tracks and events
// (perfetto_decoder.hpp); args and interned data are in perfetto_args.cpp.
#include "perfetto_state.hpp"

#include <algorithm>

namespace jitscope::tools {
namespace {

namespace pf = detail::pf;
using proto::Field;
using proto::FieldReader;

bool is_sequence_clock(std::uint64_t id) noexcept { return id >= 64 && id < 128; }

}  // namespace

PerfettoDecoder::PerfettoDecoder(std::function<bool(const RawEvent&)> on_event,
                                 std::size_t max_bytes, std::size_t max_memory, Output output)
    : s_(std::make_unique<State>(std::move(on_event), max_bytes, max_memory, output)) {}
PerfettoDecoder::~PerfettoDecoder() = default;

bool PerfettoDecoder::packet(std::string_view bytes, std::uint64_t offset, std::string* error) {
  s_->base = bytes.data();
  s_->offset = offset;
  s_->packet_end = offset + bytes.size();
  try {
    s_->packet(bytes);
    if (!s_->buffers_small()) s_->settle_buffers();
  } catch (const PerfettoBad& b) {
    if (s_->stopped) return false;  // on_event said stop: *error is the callback's
    if (error != nullptr) {
      *error = "byte " + std::to_string(offset + static_cast<std::uint64_t>(b.at - bytes.data())) +
               ": " + b.what;
    }
    return false;
  }
  return !s_->stopped;
}

void PerfettoDecoder::finish() {
  for (auto& [uuid, t] : s_->tracks) {
    s_->skips.unended += t.depth;
    t.depth = 0;
  }
  s_->open_bytes = 0;
}

void PerfettoDecoder::set_buffer_bytes(std::size_t bytes) noexcept { s_->outside = bytes; }
std::size_t PerfettoDecoder::memory() const noexcept { return s_->in_use(); }

bool PerfettoDecoder::stopped() const noexcept { return s_->stopped; }
std::uint64_t PerfettoDecoder::events() const noexcept { return s_->events; }
std::size_t PerfettoDecoder::largest_event() const noexcept { return s_->largest; }
const PerfettoSkips& PerfettoDecoder::skips() const noexcept { return s_->skips; }

void PerfettoDecoder::State::packet(std::string_view bytes) {
  FieldReader r(bytes);
  Field f;
  std::uint64_t ts = 0;
  bool has_ts = false, has_clock = false, lost = false;
  std::uint32_t seq_id = 0, flags = 0, clock_id = 0;
  std::string_view event, interned, defaults, descriptor, snapshot_bytes, compressed;
  const char* event_at = nullptr;
  const char* compressed_at = nullptr;
  bool zstd = false;
  while (r.next(&f)) {
    switch (f.number) {
      case pf::packet::kTimestamp:
        want(f, pf::kVarint, "TracePacket.timestamp");
        ts = f.value;
        has_ts = true;
        break;
      case pf::packet::kTrustedPacketSequenceId:
        want(f, pf::kVarint, "TracePacket.trusted_packet_sequence_id");
        seq_id = static_cast<std::uint32_t>(f.value);
        break;
      case pf::packet::kSequenceFlags:
        want(f, pf::kVarint, "TracePacket.sequence_flags");
        flags = static_cast<std::uint32_t>(f.value);
        break;
      case pf::packet::kTimestampClockId:
        want(f, pf::kVarint, "TracePacket.timestamp_clock_id");
        clock_id = static_cast<std::uint32_t>(f.value);
        has_clock = true;
        break;
      case pf::packet::kPreviousPacketDropped:
        want(f, pf::kVarint, "TracePacket.previous_packet_dropped");
        lost = f.value != 0;
        break;
      case pf::packet::kTrackEvent:
        want(f, pf::kLengthDelimited, "TracePacket.track_event");
        event = f.bytes;
        event_at = f.start;
        break;
      case pf::packet::kInternedData:
        want(f, pf::kLengthDelimited, "TracePacket.interned_data");
        interned = f.bytes;
        break;
      case pf::packet::kTracePacketDefaults:
        want(f, pf::kLengthDelimited, "TracePacket.trace_packet_defaults");
        defaults = f.bytes;
        break;
      case pf::packet::kTrackDescriptor:
        want(f, pf::kLengthDelimited, "TracePacket.track_descriptor");
        descriptor = f.bytes;
        break;
      case pf::packet::kClockSnapshot:
        want(f, pf::kLengthDelimited, "TracePacket.clock_snapshot");
        snapshot_bytes = f.bytes;
        break;
      case pf::packet::kCompressedPackets:
      case pf::packet::kZstdCompressedPackets:
        want(f, pf::kLengthDelimited,
             f.number == pf::packet::kCompressedPackets ? "TracePacket.compressed_packets"
                                                        : "TracePacket.zstd_compressed_packets");
        compressed = f.bytes;
        compressed_at = f.start;
        zstd = f.number == pf::packet::kZstdCompressedPackets;
        break;
      default: break;  // another data source's packet, or a field jitscope does not use
    }
  }
  check(r);
  if (compressed_at != nullptr) {
    compressed_packets(compressed, zstd, compressed_at);
    return;
  }

  Sequence& seq = sequence(seq_id, bytes.data());
  // Data lost before this packet invalidates what the sequence built up
  // (Perfetto: until the next clear).
  if (lost) seq.valid = false;
  if ((flags & pf::packet::kSeqIncrementalStateCleared) != 0) {
    reset(seq);
    seq.valid = true;
  }
  if ((flags & pf::packet::kSeqNeedsIncrementalState) != 0 && !seq.valid) {
    ++skips.needs_state;
    return;
  }
  if (!defaults.empty()) {
    FieldReader d(defaults);
    while (d.next(&f)) {
      if (f.number == pf::defaults::kTimestampClockId) {
        want(f, pf::kVarint, "TracePacketDefaults.timestamp_clock_id");
        seq.clock_id = static_cast<std::uint32_t>(f.value);
      } else if (f.number == pf::defaults::kTrackEventDefaults) {
        want(f, pf::kLengthDelimited, "TracePacketDefaults.track_event_defaults");
        FieldReader t(f.bytes);
        Field g;
        while (t.next(&g)) {
          if (g.number != pf::defaults::kTrackUuid) continue;
          want(g, pf::kVarint, "TrackEventDefaults.track_uuid");
          seq.has_track = true;
          seq.track = g.value;
        }
        check(t);
      }
    }
    check(d);
  }
  if (!interned.empty()) interned_data(seq, interned);
  if (snapshot_bytes.data() != nullptr) clock_snapshot(seq, snapshot_bytes);
  if (!descriptor.empty()) track_descriptor(descriptor);

  // The packet's time on the trace clock. A packet that defines clocks does
  // not move them (its own timestamp is not a delta from them).
  const std::uint32_t clock = has_clock ? clock_id : seq.clock_id;
  std::int64_t time = static_cast<std::int64_t>(ts);
  if (clock != 0 && is_sequence_clock(clock)) {
    const auto k = std::find_if(seq.clocks.begin(), seq.clocks.end(),
                                [&](const SeqClock& c) { return c.id == clock; });
    if (k == seq.clocks.end()) {
      if (event_at != nullptr) ++skips.unknown_clock;
      return;
    }
    std::uint64_t value = ts;
    if (k->incremental) {
      if (has_ts && snapshot_bytes.data() == nullptr) k->last += ts;
      value = k->last;
    }
    time = static_cast<std::int64_t>(value * k->multiplier + static_cast<std::uint64_t>(k->offset));
  } else if (clock != 0) {
    time = to_trace_clock(clock, ts);
  }
  if (event_at != nullptr) track_event(seq, event, time);
}

PerfettoDecoder::State::Sequence& PerfettoDecoder::State::find_sequence(std::uint32_t id,
                                                                        const char* at) {
  const auto it = sequences.find(id);
  if (it != sequences.end()) {
    last_sequence_id = id;
    return *(last_sequence = &it->second);
  }
  // No bound on their number: the SDK writes one per thread, and threads
  // come and go in a long-running compiler. Each costs its bytes.
  hold(chunk(sizeof(void*) + sizeof(std::pair<std::uint32_t, Sequence>)), at);
  const std::size_t before = buckets(sequences.bucket_count());
  Sequence& s = sequences[id];
  s.generation = ++generations;
  hold(buckets(sequences.bucket_count()) - before, at);  // a rehash's new bucket array
  last_sequence_id = id;
  last_sequence = &s;
  return s;
}

void PerfettoDecoder::State::reset(Sequence& s) {
  interned_bytes -= s.interned_bytes;
  drop(s.interned_bytes + s.table + room(s.clocks));
  s = Sequence{};
  s.generation = ++generations;
}

std::int64_t PerfettoDecoder::State::to_trace_clock(std::uint32_t clock,
                                                    std::uint64_t value) const {
  const auto v = static_cast<std::int64_t>(value);
  if (clock == primary_clock) return v;
  const std::int64_t* from = nullptr;
  const std::int64_t* to = nullptr;
  for (const auto& [id, ns] : snapshot) {
    if (id == clock) from = &ns;
    if (id == primary_clock) to = &ns;
  }
  if (from == nullptr || to == nullptr) return v;  // no relation known: taken as the trace clock
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(v) -
                                   static_cast<std::uint64_t>(*from) +
                                   static_cast<std::uint64_t>(*to));
}

void PerfettoDecoder::State::clock_snapshot(Sequence& seq, std::string_view bytes) {
  struct Reading {
    std::uint32_t id = 0;
    std::uint64_t value = 0, multiplier = 1;
    bool incremental = false;
  };
  std::vector<Reading> readings;
  FieldReader r(bytes);
  Field f;
  while (r.next(&f)) {
    if (f.number == pf::clock::kPrimaryTraceClock) {
      want(f, pf::kVarint, "ClockSnapshot.primary_trace_clock");
      primary_clock = static_cast<std::uint32_t>(f.value);
    } else if (f.number == pf::clock::kClocks) {
      want(f, pf::kLengthDelimited, "ClockSnapshot.clocks");
      if (readings.size() >= 64) bad(f.start, "a ClockSnapshot of more than 64 clocks");
      Reading c;
      FieldReader k(f.bytes);
      Field g;
      while (k.next(&g)) {
        switch (g.number) {
          case pf::clock::kClockId:
            want(g, pf::kVarint, "ClockSnapshot.Clock.clock_id");
            c.id = static_cast<std::uint32_t>(g.value);
            break;
          case pf::clock::kTimestamp:
            want(g, pf::kVarint, "ClockSnapshot.Clock.timestamp");
            c.value = g.value;
            break;
          case pf::clock::kIsIncremental:
            want(g, pf::kVarint, "ClockSnapshot.Clock.is_incremental");
            c.incremental = g.value != 0;
            break;
          case pf::clock::kUnitMultiplierNs:
            want(g, pf::kVarint, "ClockSnapshot.Clock.unit_multiplier_ns");
            c.multiplier = g.value == 0 ? 1 : g.value;
            break;
          default: break;
        }
      }
      check(k);
      readings.push_back(c);
    }
  }
  check(r);
  const bool scoped = std::any_of(readings.begin(), readings.end(),
                                  [](const Reading& c) { return is_sequence_clock(c.id); });
  if (!scoped) {
    snapshot.clear();
    for (const Reading& c : readings) {
      snapshot.emplace_back(c.id, static_cast<std::int64_t>(c.value * c.multiplier));
    }
    return;
  }
  // A sequence's own clocks, placed through one absolute clock read at the
  // same instant: the trace clock if there, else the first one.
  const Reading* anchor = nullptr;
  for (const Reading& c : readings) {
    if (is_sequence_clock(c.id)) continue;
    if (anchor == nullptr || c.id == primary_clock) anchor = &c;
  }
  const std::int64_t anchor_ns = anchor == nullptr ? 0 : to_trace_clock(anchor->id, anchor->value);
  for (const Reading& c : readings) {
    if (!is_sequence_clock(c.id)) continue;
    auto k = std::find_if(seq.clocks.begin(), seq.clocks.end(),
                          [&](const SeqClock& s) { return s.id == c.id; });
    if (k == seq.clocks.end()) {
      const std::size_t before = room(seq.clocks);
      make_room(seq.clocks, bytes.data());
      held += room(seq.clocks) - before;  // make_room checked it
      k = seq.clocks.insert(seq.clocks.end(), SeqClock{});
    }
    k->id = c.id;
    k->incremental = c.incremental;
    k->multiplier = c.multiplier;
    k->last = c.value;
    k->offset =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(anchor_ns) - c.value * c.multiplier);
  }
}

PerfettoDecoder::State::Track& PerfettoDecoder::State::find_track(std::uint64_t uuid,
                                                                  const char* at) {
  const auto it = tracks.find(uuid);
  if (it != tracks.end()) {
    last_track_uuid = uuid;
    return *(last_track = &it->second);
  }
  hold(chunk(sizeof(void*) + sizeof(std::pair<std::uint64_t, Track>)), at);
  const std::size_t before = buckets(tracks.bucket_count());
  Track& t = tracks[uuid];
  hold(buckets(tracks.bucket_count()) - before, at);  // a rehash's new bucket array
  last_track_uuid = uuid;
  last_track = &t;
  return t;
}

void PerfettoDecoder::State::track_descriptor(std::string_view bytes) {
  FieldReader r(bytes);
  Field f;
  std::uint64_t uuid = 0;
  bool has_name = false, has_parent = false, process = false, thread = false;
  std::uint64_t parent = 0;
  std::string_view name, own_name;  // the descriptor's name; the process / thread name
  bool has_own_name = false;
  std::int64_t pid = 0, tid = 0;
  while (r.next(&f)) {
    switch (f.number) {
      case pf::track::kUuid:
        want(f, pf::kVarint, "TrackDescriptor.uuid");
        uuid = f.value;
        break;
      case pf::track::kName:
        want(f, pf::kLengthDelimited, "TrackDescriptor.name");
        name = f.bytes;
        has_name = true;
        break;
      case pf::track::kParentUuid:
        want(f, pf::kVarint, "TrackDescriptor.parent_uuid");
        parent = f.value;
        has_parent = true;
        break;
      case pf::track::kProcess:
      case pf::track::kThread: {
        const bool is_thread = f.number == pf::track::kThread;
        want(f, pf::kLengthDelimited,
             is_thread ? "TrackDescriptor.thread" : "TrackDescriptor.process");
        (is_thread ? thread : process) = true;
        FieldReader d(f.bytes);
        Field g;
        while (d.next(&g)) {
          if (g.number == pf::track::kProcessPid) {  // == kThreadPid
            want(g, pf::kVarint, "pid");
            pid = static_cast<std::int32_t>(g.value);
          } else if (is_thread && g.number == pf::track::kThreadTid) {
            want(g, pf::kVarint, "ThreadDescriptor.tid");
            tid = static_cast<std::int32_t>(g.value);
          } else if (g.number == (is_thread ? pf::track::kThreadName : pf::track::kProcessName)) {
            want(g, pf::kLengthDelimited, "process_name / thread_name");
            own_name = g.bytes;
            has_own_name = true;
          }
        }
        check(d);
        break;
      }
      default: break;
    }
  }
  check(r);
  Track& t = track(uuid, bytes.data());
  if (has_name) {
    const std::size_t before = heap(t.name);
    t.name.assign(name);
    refit(t.name, before, bytes.data());
  }
  if (has_parent) {
    t.has_parent = true;
    t.parent = parent;
  }
  if (!process && !thread) return;
  t.is_thread = thread;
  t.is_process = process && !thread;
  t.pid = pid;
  t.tid = thread ? tid : 0;
  if (!has_own_name && has_name) own_name = name, has_own_name = true;
  if (!has_own_name || own_name.empty()) return;
  const std::uint64_t named = std::hash<std::string_view>{}(own_name);
  if (t.has_named && t.named == named) return;
  t.has_named = true;
  t.named = named;
  scratch.assign("\"name\":");
  detail::append_json_string(scratch, own_name);
  Emit e("M", thread ? "thread_name" : "process_name", 0, t.pid, t.tid);
  e.has_ts = false;
  e.args_a = scratch;
  emit(e, bytes.data());
}

PerfettoDecoder::State::Place PerfettoDecoder::State::place_by_parents(const Track& t) const {
  const Track* cur = &t;
  for (int hops = 0; hops < 32 && cur != nullptr; ++hops) {
    if (cur->is_thread) return Place{cur->pid, cur->tid, false};
    if (cur->is_process) return Place{cur->pid, 0, true};
    if (!cur->has_parent) break;
    const auto it = tracks.find(cur->parent);
    cur = it == tracks.end() ? nullptr : &it->second;
  }
  return Place{};  // a track of no process or thread: pid 0, tid 0
}

}  // namespace jitscope::tools
