// The JSON form's cold events as packets on sequence 1 (transcode.hpp).
#include "format/perfetto/transcode.hpp"

#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"
#include "format/perfetto/json_value.hpp"
#include "format/perfetto/tracks.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <utility>

namespace jitscope::detail::pfw {
namespace {

using wire::append_bytes_field;
using wire::append_fixed64_field;
using wire::append_varint_field;
using wire::begin_nested;
using wire::end_nested;
using Type = JsonValue::Type;

constexpr std::uint32_t varint(std::uint32_t field) { return pf::tag(field, pf::kVarint); }
constexpr std::uint32_t nested(std::uint32_t field) { return pf::tag(field, pf::kLengthDelimited); }
constexpr std::uint32_t fixed64(std::uint32_t field) { return pf::tag(field, pf::kFixed64); }

void append_string(std::string& out, std::uint32_t tag, std::string_view s) {
  std::string fixed;
  append_bytes_field(out, tag, valid_utf8(s, fixed));
}

// A TrackEvent packet on sequence 1 is opened with its time, type and
// track, and closed with the definitions it made and its flags.
struct OpenPacket {
  std::size_t packet;
  std::size_t event;
};
OpenPacket open_event_packet(std::string& out, std::uint64_t ts_ns, std::uint32_t type,
                             std::uint64_t track) {
  const std::size_t p = begin_nested(out, nested(pf::trace::kPacket));
  append_varint_field(out, varint(pf::packet::kTimestamp), ts_ns);
  append_varint_field(out, varint(pf::packet::kTrustedPacketSequenceId), kProcessSequence);
  const std::size_t te = begin_nested(out, nested(pf::packet::kTrackEvent));
  append_varint_field(out, varint(pf::event::kType), type);
  append_varint_field(out, varint(pf::event::kTrackUuid), track);
  return {p, te};
}
void close_event_packet(std::string& out, const OpenPacket& at, Interner& interner) {
  end_nested(out, at.event);
  if (const std::string_view defs = interner.take(); !defs.empty()) {
    append_bytes_field(out, nested(pf::packet::kInternedData), defs);
  }
  append_varint_field(out, varint(pf::packet::kSequenceFlags),
                      pf::packet::kSeqNeedsIncrementalState);
  end_nested(out, at.packet);
}
// An event's category and name: interned, or inline when the table is full.
// Returns their ids (0: inline).
std::pair<std::uint64_t, std::uint64_t> append_category_and_name(std::string& out,
                                                                 Interner& interner,
                                                                 std::string_view category,
                                                                 std::string_view name) {
  const std::uint64_t category_iid = interner.intern(Interner::kCategory, category);
  if (category_iid != 0) {
    append_varint_field(out, varint(pf::event::kCategoryIids), category_iid);
  } else {
    append_string(out, nested(pf::event::kCategories), category);
  }
  const std::uint64_t name_iid = interner.intern(Interner::kName, name);
  if (name_iid != 0) {
    append_varint_field(out, varint(pf::event::kNameIid), name_iid);
  } else {
    append_string(out, nested(pf::event::kName), name);
  }
  return {category_iid, name_iid};
}

// A counter sample's value: an integer, or a double (NaN for none).
struct CounterValue {
  bool integer = false;
  std::int64_t i = 0;
  double d = 0;
};
// Its field at `p` (12 bytes at most); returns the end.
char* put_counter_value(char* p, const CounterValue& v) noexcept {
  if (v.integer) {
    p = wire::put_varint(p, varint(pf::event::kCounterValue));
    return wire::put_varint(p, static_cast<std::uint64_t>(v.i));
  }
  p = wire::put_varint(p, fixed64(pf::event::kDoubleCounterValue));
  return wire::put_fixed64(p, std::bit_cast<std::uint64_t>(v.d));
}
constexpr std::size_t kCounterValueRoom = 12;
// The value counter() takes from the JSON form's spelling of `v`
// (json_writer's shortest form), where that is known without spelling it.
// false: a whole number whose shortest form may have an exponent ("1e+05",
// where the exponent is shorter than the zeros), or 2^53 and beyond.
bool counter_value_of(double v, CounterValue& out) noexcept {
  if (!std::isfinite(v)) {  // "null"
    out = {false, 0, std::numeric_limits<double>::quiet_NaN()};
    return true;
  }
  if (v != std::trunc(v)) {  // a '.' or an exponent, and read back it is v
    out = {false, 0, v};
    return true;
  }
  if (std::fabs(v) >= 0x1p53) return false;
  const auto i = static_cast<std::int64_t>(v);
  // Below 2^53 the plain form is the integer's digits, n of them, k the
  // trailing zeros; the exponent form takes n - k digits, a '.' when more
  // than one, and 4 characters of exponent, and wins only where it is
  // shorter (a tie goes to the plain form): from k = 5 ("1e+05") or k = 6
  // ("1.2e+07"). So with fewer than 5 trailing zeros it is an integer.
  if (i % 100000 == 0 && i != 0) return false;
  out = {true, i, 0};
  return true;
}

// The value fields of a DebugAnnotation (docs/perfetto-format.md, "Args").
void append_value(std::string& out, const JsonValue& v) {
  namespace a = pf::annotation;
  switch (v.type) {
    case Type::kNull: break;  // a name without a value
    case Type::kBool: append_varint_field(out, varint(a::kBoolValue), v.boolean ? 1 : 0); break;
    case Type::kString: append_string(out, nested(a::kStringValue), v.string); break;
    case Type::kNumber: {
      std::int64_t i = 0;
      std::uint64_t u = 0;
      if (v.is_integer() && number_as_int(v.number, i)) {
        append_varint_field(out, varint(a::kIntValue), static_cast<std::uint64_t>(i));
      } else if (v.is_integer() && number_as_uint(v.number, u)) {
        append_varint_field(out, varint(a::kUintValue), u);
      } else {
        append_fixed64_field(out, fixed64(a::kDoubleValue),
                             std::bit_cast<std::uint64_t>(number_as_double(v.number)));
      }
      break;
    }
    case Type::kObject:
      for (const auto& [key, member] : v.members) {
        const std::size_t at = begin_nested(out, nested(a::kDictEntries));
        append_string(out, nested(a::kName), key);
        append_value(out, member);
        end_nested(out, at);
      }
      break;
    case Type::kArray:
      for (const JsonValue& item : v.items) {
        const std::size_t at = begin_nested(out, nested(a::kArrayValues));
        append_value(out, item);
        end_nested(out, at);
      }
      break;
  }
}

void append_args(std::string& out, const JsonValue& args, Interner& interner) {
  for (const auto& [key, value] : args.members) {
    const std::size_t at = begin_nested(out, nested(pf::event::kDebugAnnotations));
    if (const std::uint64_t iid = interner.intern(Interner::kAnnotation, key); iid != 0) {
      append_varint_field(out, varint(pf::annotation::kNameIid), iid);
    } else {
      append_string(out, nested(pf::annotation::kName), key);
    }
    append_value(out, value);
    end_nested(out, at);
  }
}

std::int64_t int_of(const JsonValue* v) {
  std::int64_t i = 0;
  if (v != nullptr && v->type == Type::kNumber) number_as_int(v->number, i);
  return i;
}

const std::string& string_of(const JsonValue* v) {
  static const std::string empty;
  return v != nullptr && v->type == Type::kString ? v->string : empty;
}

}  // namespace

bool append_annotations(std::string_view members, Interner& interner, std::string& out) {
  std::string text = "{";
  text.append(members);
  text.push_back('}');
  std::size_t pos = 0;
  JsonValue args;
  if (!parse_json(text, pos, args) || args.type != Type::kObject) return false;
  append_args(out, args, interner);
  return true;
}

struct ProcessSequence::Event {
  const JsonValue& v;
  std::string_view ph, name, cat;
  std::int64_t pid, tid;
};

void ProcessSequence::start_file(std::uint64_t file_ns) {
  ++epoch_;
  file_ns_ = file_ns;
  described_.clear();
  new_described_.clear();
  interner.clear();
}

void ProcessSequence::settle(bool committed) {
  interner.settle(committed);
  if (!committed) {
    for (std::uint64_t uuid : new_described_) described_.erase(uuid);
    ++epoch_;  // ids and tracks counter_static kept may not be in the file
  }
  new_described_.clear();
}

void ProcessSequence::describe(std::uint64_t uuid, std::string& out, std::string_view descriptor) {
  const std::size_t packet = begin_nested(out, nested(pf::trace::kPacket));
  append_varint_field(out, varint(pf::packet::kTrustedPacketSequenceId), kProcessSequence);
  append_bytes_field(out, nested(pf::packet::kTrackDescriptor), descriptor);
  end_nested(out, packet);
  if (described_.insert(uuid).second) new_described_.push_back(uuid);
}

void ProcessSequence::ensure_process(std::int64_t pid, std::string& out) {
  const std::uint64_t uuid = process_track(pid);
  if (described(uuid)) return;
  std::string d;
  append_varint_field(d, varint(pf::track::kUuid), uuid);
  const std::size_t at = begin_nested(d, nested(pf::track::kProcess));
  append_varint_field(d, varint(pf::track::kProcessPid), static_cast<std::uint64_t>(pid));
  if (const auto it = names_.find(uuid); it != names_.end()) {
    append_string(d, nested(pf::track::kProcessName), it->second);
  }
  end_nested(d, at);
  describe(uuid, out, d);
}

void ProcessSequence::ensure_thread(std::int64_t pid, std::int64_t tid, std::string& out) {
  const std::uint64_t uuid = thread_track(pid, tid);
  if (described(uuid)) return;
  ensure_process(pid, out);
  std::string d;
  append_varint_field(d, varint(pf::track::kUuid), uuid);
  append_varint_field(d, varint(pf::track::kParentUuid), process_track(pid));
  const std::size_t at = begin_nested(d, nested(pf::track::kThread));
  append_varint_field(d, varint(pf::track::kThreadPid), static_cast<std::uint64_t>(pid));
  append_varint_field(d, varint(pf::track::kThreadTid), static_cast<std::uint64_t>(tid));
  if (const auto it = names_.find(uuid); it != names_.end()) {
    append_string(d, nested(pf::track::kThreadName), it->second);
  }
  end_nested(d, at);
  describe(uuid, out, d);
}

bool ProcessSequence::transcode(std::string_view json, std::string& out, const Hints& hints) {
  std::size_t pos = 0;
  bool ok = true;
  for (;;) {
    while (pos < json.size() &&
           std::string_view(", \n\r\t").find(json[pos]) != std::string_view::npos) {
      ++pos;
    }
    if (pos >= json.size()) break;
    JsonValue v;
    if (!parse_json(json, pos, v) || v.type != Type::kObject) return false;
    const Event e{v,
                  string_of(v.find("ph")),
                  string_of(v.find("name")),
                  string_of(v.find("cat")),
                  int_of(v.find("pid")),
                  int_of(v.find("tid"))};
    ok = write_event(e, out, hints) && ok;
  }
  return ok;
}

bool ProcessSequence::write_event(const Event& e, std::string& out, const Hints& hints) {
  const JsonValue* args = e.v.find("args");
  if (args != nullptr && args->type != Type::kObject) args = nullptr;
  if (e.ph == "M" && (e.name == "process_name" || e.name == "thread_name")) {
    const std::string_view name = string_of(args != nullptr ? args->find("name") : nullptr);
    const bool process = e.name == "process_name";
    if (!process) ensure_process(e.pid, out);
    const std::uint64_t uuid = process ? process_track(e.pid) : thread_track(e.pid, e.tid);
    std::string d;
    append_varint_field(d, varint(pf::track::kUuid), uuid);
    if (!process) append_varint_field(d, varint(pf::track::kParentUuid), process_track(e.pid));
    const std::size_t at =
        begin_nested(d, nested(process ? pf::track::kProcess : pf::track::kThread));
    append_varint_field(d, varint(process ? pf::track::kProcessPid : pf::track::kThreadPid),
                        static_cast<std::uint64_t>(e.pid));
    if (!process) {
      append_varint_field(d, varint(pf::track::kThreadTid), static_cast<std::uint64_t>(e.tid));
    }
    append_string(d, nested(process ? pf::track::kProcessName : pf::track::kThreadName), name);
    end_nested(d, at);
    describe(uuid, out, d);
    names_[uuid].assign(name.data(), name.size());
    return true;
  }
  if (e.ph == "s" || e.ph == "f") return true;  // carried by Hints (flow_ids)

  // The track.
  std::uint64_t track = 0;
  std::string descriptor;  // for a track described here
  const std::string_view scope = string_of(e.v.find("s"));
  if (e.ph == "M" || ((e.ph == "I" || e.ph == "i") && (scope == "p" || scope == "g"))) {
    ensure_process(e.pid, out);
    track = process_track(e.pid);
  } else if (e.ph == "C") {
    std::uint64_t ts = file_ns_;
    if (const JsonValue* t = e.v.find("ts"); t != nullptr && t->type == Type::kNumber) {
      us_to_ns(t->number, ts);
    }
    const JsonValue* value = args != nullptr ? args->find("value") : nullptr;
    counter(e.pid, e.cat, e.name, ts,
            value != nullptr && value->type == Type::kNumber ? value->number : std::string_view(),
            out);
    return true;
  } else if (e.ph == "b" || e.ph == "e") {
    ensure_process(e.pid, out);
    const JsonValue* id = e.v.find("id");
    track = mix(mix(mix(5, static_cast<std::uint64_t>(e.pid)), e.cat),
                id != nullptr ? mix(0, id->type == Type::kString ? id->string : id->number) : 0);
    if (!described(track)) {
      append_varint_field(descriptor, varint(pf::track::kUuid), track);
      append_string(descriptor, nested(pf::track::kName), e.cat);
      append_varint_field(descriptor, varint(pf::track::kParentUuid), process_track(e.pid));
    }
  } else if (e.ph == "X" || e.ph == "I" || e.ph == "i") {
    ensure_thread(e.pid, e.tid, out);
    track = thread_track(e.pid, e.tid);
    if (hints.domain_track) {
      const std::uint64_t parent = track;
      track = mix(mix(3, parent), e.cat);
      if (!described(track)) {
        append_varint_field(descriptor, varint(pf::track::kUuid), track);
        append_string(descriptor, nested(pf::track::kName), e.cat);
        append_varint_field(descriptor, varint(pf::track::kParentUuid), parent);
      }
    }
  } else {
    return false;
  }
  if (!descriptor.empty()) describe(track, out, descriptor);

  std::uint64_t ts = file_ns_, dur = 0;
  if (const JsonValue* t = e.v.find("ts"); t != nullptr && t->type == Type::kNumber) {
    us_to_ns(t->number, ts);
  }
  if (const JsonValue* d = e.v.find("dur"); d != nullptr && d->type == Type::kNumber) {
    us_to_ns(d->number, dur);
  }
  std::uint32_t type = pf::event::kInstant;
  if (e.ph == "X" || e.ph == "b") type = pf::event::kSliceBegin;
  if (e.ph == "e") type = pf::event::kSliceEnd;

  const auto packet = [&](std::uint32_t event_type, std::uint64_t at_ns, bool full) {
    const OpenPacket at = open_event_packet(out, at_ns, event_type, track);
    if (full) {
      append_category_and_name(
          out, interner, e.ph == "M" ? std::string_view(pf::kMetadataCategory) : e.cat, e.name);
    }
    if (full && args != nullptr) {
      append_args(out, *args, interner);
    }
    if (event_type == pf::event::kSliceBegin || event_type == pf::event::kInstant) {
      if (hints.flow_out != 0) {
        append_fixed64_field(out, fixed64(pf::event::kFlowIds), hints.flow_out);
      }
      if (hints.flow_in != 0) {
        append_fixed64_field(out, fixed64(pf::event::kTerminatingFlowIds), hints.flow_in);
      }
    }
    close_event_packet(out, at, interner);
  };
  packet(type, ts, e.ph != "e");
  if (e.ph == "X") packet(pf::event::kSliceEnd, ts + dur, false);
  return true;
}

void ProcessSequence::counter(std::int64_t pid, std::string_view category, std::string_view name,
                              std::uint64_t ts_ns, std::string_view number, std::string& out,
                              const char* static_name) {
  std::string fixed;
  name = valid_utf8(name, fixed);  // as the JSON form's text has it
  ensure_process(pid, out);
  const std::uint64_t track = mix(mix(4, static_cast<std::uint64_t>(pid)), name);
  if (!described(track)) {
    std::string descriptor;
    append_varint_field(descriptor, varint(pf::track::kUuid), track);
    append_bytes_field(descriptor, nested(pf::track::kName), name);
    append_varint_field(descriptor, varint(pf::track::kParentUuid), process_track(pid));
    append_bytes_field(descriptor, nested(pf::track::kCounter), {});
    describe(track, out, descriptor);
  }
  const OpenPacket at = open_event_packet(out, ts_ns, pf::event::kCounter, track);
  const auto [category_iid, name_iid] = append_category_and_name(out, interner, category, name);
  // A number spelled as an integer that fits int64 is an integer sample (as
  // JsonValue::is_integer decides for args); any other number a double; none
  // (JSON has no spelling for NaN and infinities: "null") a NaN.
  CounterValue v;
  const bool is_number = !number.empty() && number != "null";
  if (is_number && is_integer_token(number) && number_as_int(number, v.i)) {
    v.integer = true;
  } else {
    v.d = is_number ? number_as_double(number) : std::numeric_limits<double>::quiet_NaN();
  }
  char value_field[kCounterValueRoom];
  out.append(value_field,
             static_cast<std::size_t>(put_counter_value(value_field, v) - value_field));
  close_event_packet(out, at, interner);
  // Ids stay under 2^14 (two varint bytes, as CounterSlot::head allows).
  static_assert(Interner::kMaxEntries < (1u << 14));
  if (static_name != nullptr && category_iid != 0 && name_iid != 0) {
    CounterSlot& c = counter_slot(static_name);
    c = {static_name, category.data(), pid, epoch_};
    char* h = c.head;
    *h++ = static_cast<char>(varint(pf::event::kType));
    *h++ = static_cast<char>(pf::event::kCounter);
    h = wire::put_varint(h, varint(pf::event::kTrackUuid));
    h = wire::put_varint(h, track);
    h = wire::put_varint(h, varint(pf::event::kCategoryIids));
    h = wire::put_varint(h, category_iid);
    h = wire::put_varint(h, varint(pf::event::kNameIid));
    h = wire::put_varint(h, name_iid);
    c.head_size = static_cast<std::uint8_t>(h - c.head);
  }
}

ProcessSequence::CounterSlot& ProcessSequence::counter_slot(const char* name) noexcept {
  // Fibonacci hashing, as the interner's cache: literals lie a few bytes apart.
  const std::uint64_t h = reinterpret_cast<std::uintptr_t>(name) * 0x9e3779b97f4a7c15ull;
  return counter_slots_[h >> (64 - std::countr_zero(kCounterSlots))];
}

bool ProcessSequence::counter_static(std::int64_t pid, std::string_view category, const char* name,
                                     std::uint64_t ts_ns, double value, std::string& out) {
  const CounterSlot& c = counter_slot(name);
  CounterValue v;
  if (c.name != name || name == nullptr || c.category != category.data() || c.pid != pid ||
      c.epoch != epoch_ || interner.has_pending() || !counter_value_of(value, v)) {
    return false;  // (pending definitions go with counter()'s packet)
  }
  // counter()'s packet, built on the stack from the kept fields and
  // appended once (a string's append per field cost about 500 instructions
  // a sample, callgrind). Every length is under 128: one byte.
  char value_field[kCounterValueRoom];
  const auto value_size = static_cast<std::size_t>(put_counter_value(value_field, v) - value_field);
  char packet[72];
  char* p = packet + 2;  // after the packet's tag and length
  *p++ = static_cast<char>(varint(pf::packet::kTimestamp));
  p = wire::put_varint(p, ts_ns);
  *p++ = static_cast<char>(varint(pf::packet::kTrustedPacketSequenceId));
  *p++ = static_cast<char>(kProcessSequence);
  *p++ = static_cast<char>(nested(pf::packet::kTrackEvent));
  *p++ = static_cast<char>(c.head_size + value_size);
  p = wire::put_bytes(p, std::string_view(c.head, c.head_size));
  p = wire::put_bytes(p, std::string_view(value_field, value_size));
  *p++ = static_cast<char>(varint(pf::packet::kSequenceFlags));
  *p++ = static_cast<char>(pf::packet::kSeqNeedsIncrementalState);
  packet[0] = static_cast<char>(nested(pf::trace::kPacket));
  packet[1] = static_cast<char>(p - packet - 2);
  out.append(packet, static_cast<std::size_t>(p - packet));
  return true;
}

}  // namespace jitscope::detail::pfw
