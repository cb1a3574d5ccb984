// A streaming reader for Chrome Trace Event Format JSON: jitscope's traces,
// `clang -ftime-trace`, PyTorch profiler traces, anything Perfetto opens;
// and for Perfetto's protobuf TrackEvent form, handed over as the same JSON
// events.
//
// Quickstart
//   jitscope::tools::TraceReader reader;
//   std::string error;
//   bool ok = reader.read("trace.json",
//       [&](const jitscope::tools::RawEvent& e) { /* e.json: one event, as written */ return true;
//       },
//       [&](const jitscope::tools::TopLevelField& f) { /* "otherData" etc. */ },
//       &error);
//   if (!ok) std::fprintf(stderr, "%s\n", error.c_str());   // "<path>: byte N: <what>"
//
// What it reads
// - The array form `[{...},{...}]` and the object form
//   `{"traceEvents":[...], "otherData":{...}, ...}` (members in any order,
//   other members handed to on_field as raw JSON).
// - The array form may stop without its `]` (Chrome's form for a trace whose
//   writer died; jitscope writes it that way until a clean stop): success,
//   unterminated() == true. A dangling `,` after the last event is allowed
//   there too, and so is an end inside the last event (a full disk, a kill
//   mid-write): that partial event is dropped. The object form must be
//   complete.
// - What Perfetto and Chrome load although it is not strict JSON is read,
//   and counted in repairs() (repair_warnings() words them): a UTF-8 byte
//   order mark before the trace (skipped), a `,` right before the events
//   array's `]` (ignored), the partial last event above, and invalid UTF-8
//   inside an event (each maximal invalid subpart replaced by U+FFFD, the
//   JSON writer's rule, so the event parses and names stay valid UTF-8).
//
// - Perfetto's protobuf form (`.pftrace`, docs/perfetto-format.md), known
//   by its first bytes (perfetto_reader.hpp), gzip'd or not: each packet is
//   turned into the JSON events the JSON writer writes for it
//   (perfetto_decoder.hpp has the mapping), handed to on_event like the
//   JSON form's; on_field is not called; protobuf() says so. A cut last
//   packet is a repair (cut_event, cut_packet); what it skipped is counted in
//   repairs().perfetto. With set_decoded_fields(true) (jitscope-report) an
//   event comes as its decoded fields and its args alone (RawEvent::fields),
//   for EventDecoder, which then gives what the JSON text would have given,
//   at half the reading CPU. Errors are "<path>: byte N: <what>" as below. Its
//   memory, read buffer included, is bounded by max_memory() (512 MiB) in
//   bytes, and inflating compressed packets by the input's size
//   (perfetto_decoder.hpp, "Bounds").
//
// - Gzip'd input (`.json.gz`, what Kineto writes and Perfetto opens),
//   known by its magic bytes 1f 8b whatever the name, stdin too, is read
//   through zlib as a stream (input_file.hpp): concatenated members are one
//   text; everything above applies to that text (a gzip'd trace cut inside
//   its last event is the cut trace); a corrupt or cut-off gzip stream is an
//   error.
//
// How it reads
// - In chunks (16 MiB by default; less for a smaller plain regular file,
//   and from 64 KiB doubling up for an input of unknown size) with read(2), or inflated into the
//   same chunk from a 256 KiB compressed buffer: memory is one chunk plus the largest event (or the
//   largest other top-level member), never the file. One event (or member) may be at most
//   max_event_bytes() (256 MiB by default): a larger one is an error, so a
//   hostile file cannot make the reader (and a decoder after it, ~8x the
//   event) take gigabytes.
// - Element boundaries come from a scanner (json_scan.hpp: 64-byte blocks as
//   bit masks with SSE2, a byte loop for the rest) that tracks strings,
//   escapes and bracket nesting (bounded at kMaxDepth; deeper input is an
//   error, never a recursion). Events are not parsed here: decode them with
//   EventDecoder (event_decoder.hpp) or any JSON parser.
// - Cost: about 1 GB/s on one core, read(2) included (measured on a 2-vCPU
//   VM, jitscope-like events of ~170 bytes); no allocation per event.
//
// Errors ("<path>: byte N: <what>", N = offset of the offending byte, or of
// the end of input for truncations; in the inflated text for gzip): empty input (a BOM alone too),
// not JSON / not a trace, an event that is not an object, an event larger than max_event_bytes()
// ("byte N: an event larger than 256 MiB", N = where the event starts; "a
// top-level member larger than ..." likewise), mismatched or too deeply nested brackets,
// input ending inside the object form (its events array included), a missing
// traceEvents array, garbage after the end, read errors; for gzip, "corrupt
// gzip data at compressed byte C: <zlib's reason>", "the gzip stream is cut
// off at compressed byte C (member M has no end)", "data after gzip member M
// is not gzip (compressed byte C)", and, built without zlib, "<path>: gzip
// input (it starts with 1f 8b), but the tools were built without zlib (...)". Open errors read
// "<path>: cannot open: <reason>" / "<path>: is a directory" / "<path>: is not a
// regular file (a FIFO); ..." (input_file.hpp: a FIFO or device is never opened).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::tools {

struct DecodedEvent;  // event_decoder.hpp

// One element of the trace's event array.
struct RawEvent {
  std::string_view json;  // the element as written, `{` to `}` (invalid UTF-8 replaced)
  std::uint64_t offset;   // its byte offset in the input
  // json.data() + json.size() is followed by at least kJsonPadding readable
  // bytes (simdjson::SIMDJSON_PADDING), so simdjson may parse it in place.

  // Set only by the protobuf form read with set_decoded_fields(true): the
  // event's fields other than its args, as EventDecoder would read them off
  // its JSON text, and `json` is then `{"args":{...}}` with its args alone
  // (empty when it has none). EventDecoder::decode takes both. Null for the
  // rare event whose times are not plain (10^18 ns and beyond): its json
  // is then the whole event, as without the option.
  const DecodedEvent* fields = nullptr;
  // With fields: they hold the members of args that EventDecoder reads
  // (compile_id, failed, ...) too, so that it does not parse json's text.
  bool args_read = false;
};

// A top-level member of the object form other than "traceEvents".
struct TopLevelField {
  std::string key;       // as written between the quotes (escapes not decoded)
  std::string raw_json;  // its value, exactly as written
};

// simdjson::SIMDJSON_PADDING, without making every user include simdjson.
inline constexpr std::size_t kJsonPadding = 64;

// What a read of the protobuf form skipped (perfetto_decoder.hpp).
struct PerfettoSkips {
  std::uint64_t needs_state = 0;     // packets needing incremental state never cleared: skipped
  std::uint64_t unknown_clock = 0;   // events on a sequence clock with no snapshot: skipped
  std::uint64_t unended = 0;         // slices begun and never ended: dropped
  std::uint64_t unmatched_ends = 0;  // slice ends on a track with none open: ignored
  std::uint64_t unknown_iids = 0;    // interned ids never defined: empty names

  bool any() const noexcept {
    return needs_state > 0 || unknown_clock > 0 || unended > 0 || unmatched_ends > 0 ||
           unknown_iids > 0;
  }
};

// What a read accepted that strict JSON would refuse (see the file comment),
// and what it skipped in the protobuf form.
struct InputRepairs {
  bool bom = false;                       // a UTF-8 byte order mark at the start, skipped
  std::uint64_t trailing_commas = 0;      // a ',' right before the events array's ']'
  bool cut_event = false;                 // the input ends inside the array form's last event
  bool cut_packet = false;                // (protobuf: inside its last packet)
  std::uint64_t cut_event_offset = 0;     // where that event (packet) starts
  std::uint64_t cut_event_bytes = 0;      // and how much of it there is
  std::uint64_t invalid_utf8 = 0;         // invalid UTF-8 subparts replaced by U+FFFD
  std::uint64_t invalid_utf8_events = 0;  // in this many events
  PerfettoSkips perfetto;

  bool any() const noexcept {
    return bom || trailing_commas > 0 || cut_event || invalid_utf8 > 0 || perfetto.any();
  }
};

// One line per kind of repair, with its count ("1 event cut off by the end
// of the input (its 12 bytes from byte 80 dropped)"): the tools' warnings.
std::vector<std::string> repair_warnings(const InputRepairs& r);

class InputFile;

class TraceReader {
 public:
  static constexpr std::size_t kDefaultChunkSize = std::size_t{16} << 20;
  static constexpr int kMaxDepth = 256;  // brackets inside one event / member value

  TraceReader() = default;
  // Bytes per read(2); tests use tiny sizes (1 and up) to cross every boundary.
  explicit TraceReader(std::size_t chunk_size) { set_chunk_size(chunk_size); }
  void set_chunk_size(std::size_t bytes) noexcept { chunk_size_ = bytes == 0 ? 1 : bytes; }

  // The largest event (or other top-level member value) accepted, in bytes.
  static constexpr std::size_t kMaxEventBytes = std::size_t{256} << 20;
  void set_max_event_bytes(std::size_t bytes) noexcept {
    max_event_bytes_ = bytes == 0 ? 1 : bytes;
  }
  std::size_t max_event_bytes() const noexcept { return max_event_bytes_; }
  // The most memory the protobuf form's decoder may take, its read buffer
  // included (perfetto_decoder.hpp, "Bounds"); a trace that needs more is
  // an error.
  static constexpr std::size_t kMaxMemoryBytes = std::size_t{512} << 20;
  void set_max_memory(std::size_t bytes) noexcept { max_memory_ = bytes; }
  std::size_t max_memory() const noexcept { return max_memory_; }
  // For readers that decode every event with EventDecoder (the report): the
  // protobuf form hands each event's fields over as decoded (RawEvent::fields)
  // instead of writing its JSON text to be parsed again, half the reading
  // CPU of a .pftrace (docs/performance.md). The JSON form is unchanged.
  // Tools that need an event's text (merge) leave it off.
  void set_decoded_fields(bool on) noexcept { decoded_fields_ = on; }

  // Streams `path` ("-" = stdin). on_event for each element of the events
  // array, in order; returning false stops the read: read() then returns
  // false and leaves *error as the callback set it (or empty). on_field (may
  // be null) for each top-level member other than "traceEvents" of the object
  // form. Returns true at the end of a well-formed input; false with *error
  // set otherwise (see the file comment).
  bool read(const std::string& path, const std::function<bool(const RawEvent&)>& on_event,
            const std::function<void(const TopLevelField&)>& on_field, std::string* error);

  // The array form ended without its closing `]` (last read).
  bool unterminated() const noexcept { return unterminated_; }
  // Events handed to on_event (last read).
  std::uint64_t events() const noexcept { return events_; }
  // Bytes of the trace's text read (last read): inflated, for gzip.
  std::uint64_t bytes_read() const noexcept { return bytes_read_; }
  // The input was gzip (last read).
  bool gzip() const noexcept { return gzip_; }
  // The input was Perfetto's protobuf form (last read).
  bool protobuf() const noexcept { return protobuf_; }
  // The largest event seen (last read), in bytes.
  std::size_t largest_event() const noexcept { return largest_event_; }
  // What the last read repaired or skipped.
  const InputRepairs& repairs() const noexcept { return repairs_; }

 private:
  class Run;
  // The protobuf form (perfetto_reader.cpp); `head`: its first bytes, already read.
  bool read_protobuf(InputFile& in, const std::string& head,
                     const std::function<bool(const RawEvent&)>& on_event, std::string* error);
  std::size_t chunk_size_ = kDefaultChunkSize;
  std::size_t max_event_bytes_ = kMaxEventBytes;
  std::size_t max_memory_ = kMaxMemoryBytes;
  bool decoded_fields_ = false;
  bool unterminated_ = false;
  bool gzip_ = false;
  bool protobuf_ = false;
  std::uint64_t events_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::size_t largest_event_ = 0;
  InputRepairs repairs_;
  std::vector<char> buffer_;  // kept between reads: a second read reuses it
  std::string repaired_;      // an event with its invalid UTF-8 replaced, padded
};

// A trace timestamp or duration token in µs ("23638621744.897", "12",
// "1.5e3", "-3.25") to integer ns. Plain decimals are exact (no floating
// point): up to 3 decimals as written, beyond that rounded half up on the
// magnitude (0.0005 -> 1, -0.0005 -> -1). Exponent forms go through double.
// A string token ("\"12.5\"", some writers quote numbers) is read the same.
// false if it is not a number or does not fit in int64 ns.
bool parse_us_to_ns(std::string_view number_token, std::int64_t* ns);

}  // namespace jitscope::tools
