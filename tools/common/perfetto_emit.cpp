// PerfettoDecoder: an event of the JSON form written as its text, or handed
// over as its fields with its args alone as text (Output::kFields, for
// EventDecoder: the same fields, without writing and parsing the rest).
#include "perfetto_state.hpp"

#include "utf8_repair.hpp"

#include <simdjson.h>

#include <algorithm>

namespace jitscope::tools {
namespace {

std::uint64_t magnitude(std::int64_t v) noexcept {
  return v < 0 ? static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v)
               : static_cast<std::uint64_t>(v);
}

// ns as µs with three decimals, as the JSON writer writes a time point.
void append_time(std::string& out, std::int64_t ns) {
  if (ns < 0) out.push_back('-');
  detail::append_us(out, magnitude(ns));
}

// Below this many ns a time's text (15 digits of µs and 3 decimals) reads
// back exactly as the number it was.
constexpr std::uint64_t kPlainTime = 1'000'000'000'000'000'000;

// An event's JSON text beyond its names and args: the keys, the numbers
// (24 bytes each at most), the punctuation. More than write_json writes.
constexpr std::size_t kMostFixedText = 256;

}  // namespace

void PerfettoDecoder::State::emit(const Emit& e, const char* at) {
  // Left to the JSON text, rare and then exact: a time past the plain form
  // (its field is what parse_us_to_ns makes of it, or ignored and counted),
  // and an event whose text might pass the size bound (max_bytes: the
  // names escaped take at most 6 bytes a byte), so that both outputs end a
  // trace with the same error.
  const bool plain_times =
      (!e.has_ts || magnitude(e.ts) < kPlainTime) && (!e.has_dur || e.dur < kPlainTime);
  const std::size_t most_text = kMostFixedText +
                                6 * (e.name.size() + e.cat.size() + e.scope.size()) +
                                e.args_a.size() + e.args_b.size();
  const bool fields_out = output == Output::kFields && plain_times && most_text <= max_bytes;
  if (fields_out) {
    fill_fields(e, at);
  } else {
    write_json(e);
  }
  hand_over(at, fields_out);
}

void PerfettoDecoder::State::write_json(const Emit& e) {
  event.assign("{\"ph\":\"");
  event.append(e.ph);
  event.push_back('"');
  if (!e.scope.empty()) {
    event.append(",\"s\":\"");
    event.append(e.scope);
    event.push_back('"');
  }
  if (e.has_cat) {
    event.append(",\"cat\":");
    detail::append_json_string(event, e.cat);
  }
  event.append(",\"name\":");
  detail::append_json_string(event, e.name);
  if (e.has_id) {
    event.append(",\"id\":");
    detail::append_uint(event, e.id);
  }
  if (e.has_ts) {
    event.append(",\"ts\":");
    append_time(event, e.ts);
  }
  if (e.has_dur) {
    event.append(",\"dur\":");
    detail::append_us(event, e.dur);
  }
  event.append(",\"pid\":");
  detail::append_int(event, e.pid);
  event.append(",\"tid\":");
  detail::append_int(event, e.tid);
  if (e.bp_e) event.append(",\"bp\":\"e\"");
  if (e.has_args()) {
    event.push_back(',');
    e.append_args(event);
  }
  event.push_back('}');
}

void PerfettoDecoder::State::fill_fields(const Emit& e, const char* at) {
  // Each field as EventDecoder reads it off write_json's text: names
  // unescaped, so as in the packet, but with invalid UTF-8 replaced as the
  // JSON writer replaces it.
  bool repaired = false;
  auto text = [&](std::string_view s, std::string* fixed) {
    if (is_ascii(s) || simdjson::validate_utf8(s.data(), s.size())) return s;
    fixed->clear();
    append_repaired_utf8(s, fixed);
    repaired = true;
    return std::string_view(*fixed);
  };
  // Every field EventDecoder::decode takes from here is set (those of
  // args by read_args, below).
  fields.ph = e.ph;
  fields.scope = e.scope;
  fields.cat = e.has_cat ? text(e.cat, &fixed_cat) : std::string_view();
  fields.name = text(e.name, &fixed_name);
  fields.has_pid = fields.has_tid = true;
  fields.pid = TraceId{false, e.pid, {}};
  fields.tid = TraceId{false, e.tid, {}};
  fields.has_ts = e.has_ts;  // below kPlainTime (emit()): as the text reads back
  fields.ts_ns = e.has_ts ? e.ts : 0;
  fields.has_dur = e.has_dur;
  fields.dur_ns = e.has_dur ? static_cast<std::int64_t>(e.dur) : 0;
  fields.id = {};
  if (e.has_id) {
    numbers.clear();
    detail::append_uint(numbers, e.id);
    fields.id = numbers;
  }
  fields.bind_id = {};
  fields.bp = e.bp_e ? std::string_view("e") : std::string_view();
  if (repaired) check_memory(at);
  // The args as text, for EventDecoder::arg(); the members it reads on
  // every event as noted while they were written, or else read off that
  // text as for the JSON form.
  event.clear();
  if (e.has_args()) {
    event.push_back('{');
    e.append_args(event);
    event.push_back('}');
  }
  args_read = read_args(e);
}

bool PerfettoDecoder::State::read_args(const Emit& e) {
  const bool a = !e.args_a.empty(), b = !e.args_b.empty();
  if ((a && (e.read_a == nullptr || !e.read_a->plain)) ||
      (b && (e.read_b == nullptr || !e.read_b->plain))) {
    return false;
  }
  // As decode_json leaves them: the BEGIN's members, then the END's (the
  // last of a key counts).
  DecodedEvent& d = fields;
  d.has_args = e.has_args();
  d.compile_id = d.arg_name = d.compiled_by = d.compiled_by_id = d.unit_key = d.frame = {};
  d.has_correlation = false;
  d.correlation = 0;
  d.has_device = d.has_stream = d.has_grid = d.has_bytes = false;
  d.attached = d.failed = d.incomplete = false;
  auto apply = [&d](std::string_view text, const ArgsRead& r) {
    using F = ArgsRead::Field;
    for (std::size_t i = 0; i < r.count; ++i) {
      const ArgsRead::Note& n = r.notes[i];
      const std::string_view s(text.data() + n.at, n.size);
      switch (n.field) {
        case F::kCompileId: d.compile_id = s; break;
        case F::kName: d.arg_name = s; break;
        case F::kCompiledBy: d.compiled_by = s; break;
        case F::kCompiledById: d.compiled_by_id = s; break;
        case F::kUnitKey: d.unit_key = s; break;
        case F::kFrame: d.frame = s; break;
        case F::kCorrelation:  // one not an int64 leaves the value (simdjson's get)
          d.has_correlation = n.size != 0;
          if (n.size != 0) d.correlation = r.correlation;
          break;
        case F::kDevice: d.has_device = true; break;
        case F::kStream: d.has_stream = true; break;
        case F::kGrid: d.has_grid = true; break;
        case F::kBytes: d.has_bytes = true; break;
        case F::kAttached: d.attached = n.size != 0; break;
        case F::kFailed: d.failed = n.size != 0; break;
        case F::kIncomplete: d.incomplete = n.size != 0; break;
      }
    }
  };
  if (a) apply(e.args_a, *e.read_a);
  if (b) apply(e.args_b, *e.read_b);
  d.has_compile_id = !d.compile_id.empty();
  return true;
}

void PerfettoDecoder::State::hand_over(const char* at, bool with_fields) {
  check_size(event, at, "an event");
  // Only a grown event can have passed the bound since the last check.
  if (event.capacity() > event_room) {
    check_memory(at, kJsonPadding);
    event_room = event.capacity() + kJsonPadding;
  }
  ++events;
  largest = std::max(largest, event.size());
  const std::size_t size = event.size();
  event.append(kJsonPadding, ' ');  // what simdjson may read past the event
  RawEvent raw{std::string_view(event.data(), size), offset};
  if (with_fields) {
    raw.fields = &fields;
    raw.args_read = args_read;
  }
  if (!on_event(raw)) {
    stopped = true;
    bad(at, "");  // unwinds; packet() returns false and keeps the callback's error
  }
}

}  // namespace jitscope::tools
