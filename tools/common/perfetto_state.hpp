// PerfettoDecoder's state (perfetto_decoder.hpp), shared by its source
// files: perfetto_decoder.cpp (packets, sequences, clocks, tracks),
// perfetto_events.cpp (track events as events of the JSON form),
// perfetto_emit.cpp (an event as its JSON text or its fields) and
// perfetto_args.cpp (interned data, debug annotations as JSON args).
#pragma once

#include "event_decoder.hpp"
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

// A malformed packet: thrown inside the decoder, caught by packet(), which
// turns it into "byte N: <what>" (`at` points into the packet).
struct PerfettoBad {
  const char* at;
  std::string what;
};

struct PerfettoDecoder::State {
  static constexpr int kMaxAnnotationDepth = 64;
  // What an allocation of n bytes takes from malloc (glibc: a chunk of n + 8
  // rounded up to 16, 32 at least): memory is counted in chunks, so that a
  // file of many small things is bounded like one of a few big ones.
  static constexpr std::size_t chunk(std::size_t n) noexcept {
    return n == 0 ? 0 : n + 8 < 32 ? 32 : (n + 8 + 15) & ~std::size_t{15};
  }
  // A track keeps this many ended slices' room, and an ended slice up to
  // this many bytes of strings, for the next BEGIN (trim()).
  static constexpr std::size_t kKeptSlices = 8;
  static constexpr std::size_t kKeptSliceBytes = 256;

  // A sequence-scoped clock (64..127) as its ClockSnapshot defined it:
  // trace-clock ns = value * multiplier + offset.
  struct SeqClock {
    std::uint32_t id = 0;
    bool incremental = false;
    std::uint64_t multiplier = 1;
    std::uint64_t last = 0;  // an incremental clock's value after the latest packet
    std::int64_t offset = 0;
  };
  // Keys the file chooses (uuids, sequence ids, interned ids), hashed with
  // a seed of this process: std::hash of an integer is the integer, and a
  // file of 200,000 uuids that are multiples of the bucket count took 50 s
  // to insert (a million, hours).
  struct Hash {
    std::size_t operator()(std::uint64_t v) const noexcept;  // perfetto_memory.cpp
  };
  // Interned strings, all kinds in one table per sequence (one table costs
  // one bucket array: the SDK's many short-lived threads intern few names).
  // kArgName and kString entries are kept as JSON strings, quoted and
  // escaped (only ever written so); names and categories as in the file.
  enum class Table : std::uint8_t { kName, kCategory, kArgName, kString };
  struct Iid {
    std::uint64_t iid;
    Table kind;
    bool operator==(const Iid&) const = default;
  };
  struct IidHash {
    std::size_t operator()(const Iid& k) const noexcept {
      return Hash{}(k.iid) ^ static_cast<std::size_t>(k.kind);
    }
  };
  using Strings = std::unordered_map<Iid, std::string, IidHash>;
  // The last strings looked up, by kind and iid (direct-mapped, 2 of each
  // kind): most events name the same few. Map nodes never move, and a
  // redefined iid's string changes in place, so the pointers stay right
  // until the sequence is reset (which clears them with the table).
  struct Recent {
    std::uint64_t iid = 0;
    const std::string* text = nullptr;
  };
  static constexpr std::size_t kRecentPerKind = 2;
  struct Sequence {
    bool valid = false;          // incremental state cleared, and not lost since
    bool has_track = false;      // track_event_defaults.track_uuid
    std::uint32_t clock_id = 0;  // trace_packet_defaults.timestamp_clock_id; 0: the trace clock
    std::uint64_t track = 0;
    Strings interned;
    Recent recent[4 * kRecentPerKind];
    std::vector<SeqClock> clocks;
    std::size_t interned_bytes = 0;  // the table's entries, overhead included
    std::size_t table = 0;           // its bucket array
    // Its strings' version: new when it is made, reset, or a string it had
    // is redefined; from State::generations, so no two are the same, in
    // this sequence or another.
    std::uint64_t generation = 0;
  };
  // Output::kFields: the args members EventDecoder reads into a
  // DecodedEvent (compile_id, failed, ...), noted in order as they are
  // written, so that it takes them without parsing the text again. A
  // string by its place in the text written (which may move before it is
  // handed over). `plain` is false where an arg has a form only
  // EventDecoder's parse settles (a string with escapes, a compile_id that
  // is not a string, a double correlation), or there were more than
  // kNotes: the text is parsed then, as the JSON form's.
  struct ArgsRead {
    enum class Field : std::uint8_t {
      kCompileId,
      kName,
      kCompiledBy,
      kCompiledById,
      kUnitKey,
      kFrame,
      kCorrelation,  // size 1 if an int64 (ArgsRead::correlation), else 0
      kDevice,
      kStream,
      kGrid,
      kBytes,
      kAttached,  // size 1 if true
      kFailed,
      kIncomplete,
    };
    struct Note {
      std::uint32_t at, size;
      Field field;
    };
    // A GPU kernel's event has 8 (device, stream, grid, bytes, correlation
    // and its compile unit's three).
    static constexpr std::size_t kNotes = 8;
    Note notes[kNotes];
    std::int64_t correlation = 0;  // the last int64 one's
    std::uint8_t count = 0;
    bool plain = true;
    void clear() noexcept { count = 0, plain = true; }
    void add(Field f, std::uint32_t at, std::uint32_t size) noexcept {
      if (count == kNotes) {
        plain = false;
        return;
      }
      notes[count++] = Note{at, size, f};
    }
  };
  struct OpenSlice {
    std::string head;  // the category (cat_size bytes), then the name, as in the packet
    std::string args;  // the BEGIN's args, members without braces
    std::size_t cat_size = 0;
    bool has_cat = false;
    std::int64_t ts = 0;
    std::int64_t pid = 0, tid = 0;
  };
  struct Track {
    bool is_process = false, is_thread = false;
    bool has_parent = false;
    bool has_named = false;
    std::uint64_t parent = 0;
    std::int64_t pid = 0, tid = 0;
    std::string name;  // the descriptor's name (an NVTX domain, a counter)
    // The process or thread name last written as "M", as a hash: only
    // compared, and a thread's name kept whole for every track would cost
    // what a hostile file asks (a collision would drop one rename).
    std::uint64_t named = 0;
    std::vector<OpenSlice> open;  // [0, depth) open; kept beyond for their room (trim())
    // kFields: what of open[i].args EventDecoder reads (beside them, so
    // that kJson's slices carry none); at most as many as `open`.
    std::vector<ArgsRead> reads;
    std::size_t depth = 0;
  };
  // Where an event on a track goes in the JSON form.
  struct Place {
    std::int64_t pid = 0, tid = 0;
    bool process = false;  // a process track: instants are "s":"p"
  };
  // One event of the JSON form, before emit() writes it as text or hands
  // its fields over (Output::kFields). Views into the packet or the state.
  // (No `= {}` of the whole: GCC clears a struct this size with `rep stos`,
  // slow to start, 13 % of track_event's time.)
  struct Emit {
    Emit(std::string_view ph_, std::string_view name_, std::int64_t ts_, std::int64_t pid_,
         std::int64_t tid_) noexcept
        : ph(ph_), name(name_), ts(ts_), pid(pid_), tid(tid_) {}
    std::string_view ph;  // "X", "I", "M", "C", "s", "f"
    std::string_view name;
    std::string_view scope = {};  // an instant's "p" or "t"
    std::string_view cat = {};    // as in the packet, like name: escaped or repaired on the way out
    std::string_view args_a = {}, args_b = {};  // args members as JSON text, without braces
    const ArgsRead* read_a = nullptr;           // kFields: what of args_a EventDecoder reads
    const ArgsRead* read_b = nullptr;
    std::int64_t ts;
    std::int64_t pid, tid;
    std::uint64_t dur = 0;
    std::uint64_t id = 0;  // a flow's
    bool has_cat = false, has_id = false, has_ts = true, has_dur = false;
    bool bp_e = false;         // a flow's end binds to the enclosing slice ("bp":"e")
    bool args_always = false;  // "args":{} even when there are none (metadata)

    bool has_args() const noexcept { return args_always || !args_a.empty() || !args_b.empty(); }
    // `"args":{A,B}`: the BEGIN's members, then the END's (the last of a key counts).
    void append_args(std::string& out) const {
      out.append("\"args\":{");
      out.append(args_a);
      if (!args_a.empty() && !args_b.empty()) out.push_back(',');
      out.append(args_b);
      out.push_back('}');
    }
  };

  std::function<bool(const RawEvent&)> on_event;
  Output output = Output::kJson;
  std::size_t max_bytes;
  PerfettoSkips skips;
  std::uint64_t events = 0;
  std::size_t largest = 0;
  bool stopped = false;

  std::unordered_map<std::uint32_t, Sequence, Hash> sequences;
  std::unordered_map<std::uint64_t, Track, Hash> tracks;
  Sequence* last_sequence = nullptr;  // the last found, with its key (sequence(), track())
  std::uint32_t last_sequence_id = 0;
  Track* last_track = nullptr;
  std::uint64_t last_track_uuid = 0;
  std::uint32_t primary_clock = detail::pf::clock::kBoottime;    // Perfetto's default
  std::vector<std::pair<std::uint32_t, std::int64_t>> snapshot;  // latest absolute one, ns
  std::size_t interned_bytes = 0;
  std::size_t open_bytes = 0;     // the open slices' strings, by size
  std::uint64_t generations = 0;  // the last Sequence::generation given

  // The last event's args as append_args wrote them, for the next event
  // with the same annotations on the same sequence (a unit's spans carry
  // the same compile_id): its text copied, not written again. Small args
  // only, and none that named an unknown iid (each is counted).
  static constexpr std::size_t kMemoBytes = 256;
  struct ArgsMemo {
    std::uint64_t generation = 0;  // the sequence's when kept (Sequence::generation); 0: none
    std::string key;               // the annotations' bytes, each after its size
    std::string text;              // the members written
    ArgsRead read;
  } memo;

  // Memory (perfetto_memory.cpp): everything the decoder holds, and the
  // caller's buffer around the packet, against max_memory.
  std::size_t max_memory;
  std::size_t held = 0;      // kept between packets: sequences, tracks, interned strings, slices
  std::size_t outside = 0;   // the caller's buffer holding the packet
  std::size_t inflated = 0;  // a compressed packet's output, while its packets are decoded
  std::uint64_t inflated_total = 0;  // all compressed packets' output so far
  std::uint64_t packet_end = 0;      // the input's bytes up to the end of the packet

  // The packet being decoded: where its bytes are in the input.
  const char* base = nullptr;
  std::uint64_t offset = 0;
  bool inflating = false;  // decoding the packets of a compressed packet

  std::string event;           // the event being written, then its padding
  std::size_t event_room = 0;  // its room when memory was last checked
  DecodedEvent fields;         // Output::kFields: the event handed over, beside its args in `event`
  bool args_read = false;      // fields holds its args' members too (RawEvent::args_read)
  std::string fixed_name, fixed_cat;  // kFields: a name or category with invalid UTF-8, repaired
  std::string numbers;                // kFields: a flow's id as text
  std::string scratch;                // END args, instant args
  ArgsRead scratch_read;              // kFields: what of scratch's args EventDecoder reads
  std::string cats;                   // the event's categories, ','-joined
  std::vector<std::string_view> annotations;
  std::vector<std::uint64_t> flows, terminating, ids;

  State(std::function<bool(const RawEvent&)> fn, std::size_t max, std::size_t memory, Output out)
      : on_event(std::move(fn)), output(out), max_bytes(max == 0 ? 1 : max), max_memory(memory) {}

  // perfetto_decoder.cpp
  void packet(std::string_view bytes);
  // Packets come in runs of one sequence (a thread's): the last one first,
  // inline. (Entries are never erased, and a map's rehash keeps their
  // addresses.) find_sequence and find_track look in the maps.
  Sequence& sequence(std::uint32_t id, const char* at) {
    if (last_sequence != nullptr && last_sequence_id == id) return *last_sequence;
    return find_sequence(id, at);
  }
  Sequence& find_sequence(std::uint32_t id, const char* at);
  void reset(Sequence& s);
  void clock_snapshot(Sequence& seq, std::string_view bytes);
  std::int64_t to_trace_clock(std::uint32_t clock, std::uint64_t value) const;
  void track_descriptor(std::string_view bytes);
  Track& track(std::uint64_t uuid, const char* at) {
    if (last_track != nullptr && last_track_uuid == uuid) return *last_track;
    return find_track(uuid, at);
  }
  Track& find_track(std::uint64_t uuid, const char* at);
  Place place(const Track& t) const {
    if (t.is_thread) return Place{t.pid, t.tid, false};  // the SDK's tracks
    return place_by_parents(t);
  }
  Place place_by_parents(const Track& t) const;

  // perfetto_inflate.cpp: the packets of a compressed packet, decoded.
  void compressed_packets(std::string_view bytes, bool zstd, const char* at);

  // perfetto_memory.cpp
  // Bytes `s` holds beyond the object itself (0 while its text is inline).
  static std::size_t heap(const std::string& s) noexcept {
    const auto text = reinterpret_cast<std::uintptr_t>(s.data());
    const auto self = reinterpret_cast<std::uintptr_t>(&s);
    const bool inside = text >= self && text < self + sizeof s;  // the short-string buffer
    return inside ? 0 : chunk(s.capacity() + 1);
  }
  // Bytes a vector's elements take.
  template <class V>
  static std::size_t room(const V& v) noexcept {
    return chunk(v.capacity() * sizeof(typename V::value_type));
  }
  // A hash table's bucket array (one bucket is inline).
  static std::size_t buckets(std::size_t count) noexcept {
    return count > 1 ? chunk(count * sizeof(void*)) : 0;
  }
  // A map entry: the node (its link, key and value) and the string it holds.
  static std::size_t entry(std::size_t node, const std::string& s) noexcept {
    return chunk(sizeof(void*) + node) + heap(s);
  }
  std::size_t in_use() const noexcept;           // held, outside and the buffers of the packet
  void hold(std::size_t bytes, const char* at);  // held += bytes, within max_memory
  void drop(std::size_t bytes) noexcept { held -= bytes; }
  void check_memory(const char* at, std::size_t more = 0) const;
  [[noreturn]] void over_memory(const char* at, std::size_t more) const;
  // Room for one more element of `v`, counted before a growth allocates it.
  template <class V>
  void make_room(V& v, const char* at) {
    if (v.size() < v.capacity()) return;
    const std::size_t want = v.capacity() == 0 ? 1 : 2 * v.capacity();
    check_memory(at, chunk(want * sizeof(typename V::value_type)));
    v.reserve(want);
  }
  // `s` rebuilt in place (its heap() was `before`): a room far beyond its
  // text given back (the JSON writer's escaping asks for 6x a name's size,
  // and a kept string keeps its room), held adjusted.
  void refit(std::string& s, std::size_t before, const char* at) {
    // Most often nothing to do: the room it had was enough, and not far beyond.
    if (heap(s) == before && s.capacity() <= 2 * s.size() + 64) return;
    refit_room(s, before, at);
  }
  void refit_room(std::string& s, std::size_t before, const char* at);
  // After a slice ended: its strings' room and the track's deepest nesting
  // given back beyond what a next BEGIN reuses.
  void trim(Track& t, OpenSlice& ended) {
    if (heap(ended.head) + heap(ended.args) <= kKeptSliceBytes &&
        (t.open.size() <= kKeptSlices || t.depth > t.open.size() / 4)) {
      return;  // the usual case, inline
    }
    trim_room(t, ended);
  }
  void trim_room(Track& t, OpenSlice& ended);
  // After a packet: the per-packet buffers' room past what events need.
  // A per-packet buffer keeps its room up to kKeptBufferBytes.
  static constexpr std::size_t kKeptBufferBytes = std::size_t{1} << 20;
  void settle_buffers() noexcept;
  // Nearly every packet leaves all of them small: one test for all.
  bool buffers_small() const noexcept {
    return event.capacity() + scratch.capacity() + cats.capacity() + fixed_name.capacity() +
               fixed_cat.capacity() + annotations.capacity() * sizeof(std::string_view) +
               (flows.capacity() + terminating.capacity() + ids.capacity()) *
                   sizeof(std::uint64_t) <=
           kKeptBufferBytes;
  }
  // How far a compressed packet may inflate from here, with `window` bytes
  // more in use meanwhile: the largest-event bound, the inflate-work bound
  // and the memory left; *what names the binding one for the error.
  std::size_t inflate_limit(std::size_t window, std::string* what) const;

  // perfetto_events.cpp
  void track_event(Sequence& seq, std::string_view bytes, std::int64_t ts);
  void emit_flows(std::int64_t ts, const Place& where);
  // The event as the JSON form's text, or (kFields) as its fields; then hand_over.
  void emit(const Emit& e, const char* at);
  void write_json(const Emit& e);
  void fill_fields(const Emit& e, const char* at);
  // `fields`' args members from what was noted (read_a, read_b); false
  // where something was not (EventDecoder parses the args' text then).
  bool read_args(const Emit& e);
  void hand_over(const char* at, bool with_fields);  // with_fields: `fields` too

  // perfetto_args.cpp
  void interned_data(Sequence& seq, std::string_view bytes);
  // Appends each annotation as a JSON member (comma-separated, no braces);
  // with kFields, notes in *read what EventDecoder would read of them.
  void append_args(Sequence& seq, std::string* out, ArgsRead* read);
  // The annotations' bytes are those `key` holds (ArgsMemo::key).
  bool same_annotations(std::string_view key) const noexcept;
  // `r` where args are noted for EventDecoder (kFields), else null.
  ArgsRead* reading(ArgsRead& r) noexcept { return output == Output::kFields ? &r : nullptr; }
  const std::string& lookup(Sequence& seq, Table kind, std::uint64_t iid);
  enum class ArgKind : std::uint8_t {
    kNull,
    kBool,
    kUint,
    kInt,
    kDouble,
    kString,
    kStringIid,
    kPointer,
    kDict,
    kArray
  };
  // What EventDecoder::decode_json reads of the member just written to
  // `out` (its key's text as written; its value from `value_at`, a string
  // `unescaped` when its text between the quotes is the string), in *r.
  static void note_arg(ArgsRead* r, std::string_view key, ArgKind kind, std::uint64_t value,
                       bool unescaped, const std::string& out, std::size_t value_at);
  void annotation(Sequence& seq, std::string_view bytes, std::string* out, bool named, int depth,
                  ArgsRead* read = nullptr);
  // Bounds a string the decoder builds at max_bytes: "<what> larger than 256 MiB".
  void check_size(const std::string& s, const char* at, const char* what) const {
    if (s.size() > max_bytes) [[unlikely]]
      too_large(at, what);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void too_large(const char* at, const char* what) const;
  std::string limit() const;                        // max_bytes as "256 MiB" or "N bytes"
  static std::string size_text(std::size_t bytes);  // "256 MiB" or "N bytes"

  [[noreturn]] static void bad(const char* at, std::string what) {
    throw PerfettoBad{at, std::move(what)};
  }
  // A known field of the wrong wire type is malformed (Perfetto refuses it too).
  static void want(const proto::Field& f, detail::pf::WireType w, const char* what) {
    if (f.wire != w) [[unlikely]]
      wrong_wire(f, w, what);
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void wrong_wire(const proto::Field& f,
                                                                detail::pf::WireType w,
                                                                const char* what) {
    bad(f.start, std::string(what) + " has wire type " + std::to_string(f.wire) + ", expected " +
                     std::to_string(static_cast<unsigned>(w)));
  }
  static void check(const proto::FieldReader& r) {
    if (r.failed()) bad(r.error_at(), r.error());
  }
};

}  // namespace jitscope::tools
