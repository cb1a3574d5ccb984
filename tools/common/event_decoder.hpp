// Decodes the fields of one trace event (a RawEvent from TraceReader) that
// the tools use, in one simdjson On Demand pass over the event in place.
//
// Quickstart
//   jitscope::tools::EventDecoder decoder;
//   jitscope::tools::DecodedEvent ev;
//   reader.read(path, [&](const jitscope::tools::RawEvent& raw) {
//     std::string why;
//     if (!decoder.decode(raw, &ev, &why)) { error = path + ": " + why; return false; }
//     if (ev.ph == "X" && ev.has_dur) total[std::string(ev.name)] += ev.dur_ns;
//     return true;
//   }, nullptr, &error);
//
// What it reads: ph, name, cat, pid, tid (numbers or strings: Chrome allows
// both, PyTorch's profiler writes strings for some), ts and dur in exact ns
// (parse_us_to_ns on the raw token), id / id2 / bind_id (raw tokens), the
// top-level compile_id of jitscope's counters, and from args: compile_id,
// name (metadata), jitscope's GPU args (compiled_by, compiled_by_id,
// correlation, device, stream, grid, bytes), attached, failed, incomplete,
// unit_key and frame. Anything else in args on demand: args_json() or
// EventDecoder::arg(). A key given twice: the last one counts.
//
// Lifetimes: every string_view in a DecodedEvent points into the RawEvent or
// the decoder's own buffer: valid until the next decode() and while the
// RawEvent's bytes are (inside the TraceReader callback).
//
// Leniency: a field of an unexpected type (a boolean pid, "ts":"abc") is
// treated as missing and counted in fields_ignored(); a quoted number
// ("ts":"12.5") is read. An event that is not valid JSON is an error
// ("byte N: event is not valid JSON: <why>"): bad structure, invalid UTF-8,
// trailing content. On Demand validates what it walks, so a malformed
// scalar in a member the decoder skips ({"x":tru}) is not noticed.
//
// How: an event of the common shape (scalars and an args object of
// scalars, no white space, no escapes, ASCII text) goes through a strict
// parser of that shape (flat_event.hpp); any other, and any the fast path
// declines, through simdjson On Demand, which is the reference for what
// both read. EventDecoder(Path::kGeneral) always takes simdjson (tests).
//
// Cost (callgrind, SDK-written events of ~130 bytes): about 1,600
// instructions an event on the fast path, 2,500 through simdjson's stage 1
// and On Demand walk (docs/performance.md, "a parser for the common event
// shape").
#pragma once

#include "trace_reader.hpp"

#include <charconv>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace jitscope::tools {

// A pid or tid: a number, or a string (its unescaped text).
struct TraceId {
  bool is_string = false;
  std::int64_t number = 0;
  std::string_view text;  // is_string only

  friend bool operator==(const TraceId& a, const TraceId& b) noexcept {
    return a.is_string == b.is_string && (a.is_string ? a.text == b.text : a.number == b.number);
  }
};

struct DecodedEvent {
  std::string_view ph;    // "X", "B", "E", "M", "C", "i"/"I", "s"/"f", "b"/"e"...; empty if none
  std::string_view name;  // unescaped; empty if none
  std::string_view cat;
  bool has_pid = false, has_tid = false;
  TraceId pid, tid;
  bool has_ts = false, has_dur = false;
  std::int64_t ts_ns = 0, dur_ns = 0;
  std::string_view id;       // raw token of "id" (or the raw object of "id2"); empty if none
  std::string_view bind_id;  // raw token of "bind_id"
  std::string_view bp;       // flow binding point ("e")
  std::string_view scope;    // instant scope "s"

  // From args (or, for compile_id, beside them: jitscope's counters).
  bool has_args = false;
  bool has_compile_id = false;
  std::string_view compile_id;      // "3/1"
  std::string_view arg_name;        // args.name: process_name / thread_name metadata
  std::string_view compiled_by;     // "[0/0] model__fwd_0"
  std::string_view compiled_by_id;  // "0/0"
  bool has_correlation = false;
  std::int64_t correlation = 0;
  bool has_device = false, has_stream = false, has_grid = false, has_bytes = false;
  bool attached = false;             // a compile unit's slice on a thread attached with UnitScope
  bool failed = false;               // args.failed is true (an adapter's failed pass)
  bool incomplete = false;           // args.incomplete is true (open at a crash)
  std::string_view unit_key, frame;  // a compile unit slice's args (unescaped)

  std::uint64_t offset = 0;  // the RawEvent's offset

  // The raw args object ("{...}") as written, or empty; found on each call
  // (a scan of the args bytes), not during decode().
  std::string_view args_json() const noexcept;

  // Set by decode(): where args starts, where the event ends.
  const char* args_begin_ = nullptr;
  const char* event_end_ = nullptr;
};

class EventDecoder {
 public:
  enum class Path { kFastest, kGeneral };
  explicit EventDecoder(Path path = Path::kFastest);
  ~EventDecoder();
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // false with *error = "byte N: event is not valid JSON: <why>" for an event
  // simdjson rejects (N = the event's offset). A RawEvent with fields (the
  // protobuf form, TraceReader::set_decoded_fields): those, and the args
  // read from its text as for the JSON form.
  bool decode(const RawEvent& raw, DecodedEvent* out, std::string* error);

  // args.<key> of the last decoded event, as its raw JSON token or value
  // (strings with their quotes, objects and arrays whole), parsed on demand
  // (a second pass over args). false when absent or args is not an object.
  bool arg(const DecodedEvent& ev, std::string_view key, std::string_view* raw);
  // The same, for a string arg: its unescaped text (valid until the next call).
  bool arg_string(const DecodedEvent& ev, std::string_view key, std::string* out);
  // The same, for an integer arg: true when the whole token is a number of
  // T ("12"; with kQuotedToo also "\"12\"", as ids are written by some
  // tools), else false and *out unchanged ("12.5", "12ms", "-3" for an
  // unsigned T).
  enum class Quoted : bool { kNo, kToo };
  template <class T>
  bool arg_integer(const DecodedEvent& ev, std::string_view key, T* out,
                   Quoted quoted = Quoted::kNo) {
    std::string_view raw;
    if (!arg(ev, key, &raw)) return false;
    if (quoted == Quoted::kToo && raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
      raw = raw.substr(1, raw.size() - 2);
    }
    T v{};
    const auto [end, ec] = std::from_chars(raw.data(), raw.data() + raw.size(), v);
    if (raw.empty() || ec != std::errc() || end != raw.data() + raw.size()) return false;
    *out = v;
    return true;
  }

  // Fields of an unexpected type, treated as missing, since construction.
  std::uint64_t fields_ignored() const noexcept { return fields_ignored_; }

 private:
  bool decode_json(const RawEvent& raw, DecodedEvent* out, std::string* error);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t fields_ignored_ = 0;
  bool fast_ = true;
};

}  // namespace jitscope::tools
