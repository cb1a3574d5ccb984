#include "event_decoder.hpp"

#include "flat_event.hpp"
#include "json_scan.hpp"

#include <simdjson.h>

#include <cstring>
#include <type_traits>

namespace jitscope::tools {

namespace od = simdjson::ondemand;
static_assert(kJsonPadding == simdjson::SIMDJSON_PADDING);

struct EventDecoder::Impl {
  od::parser parser;
  od::parser args_parser;
  od::document args_doc;  // the args being read by arg() / arg_string()

  // Opens `ev`'s args as an object, in place: they lie inside the event,
  // whose padded buffer continues past them.
  bool open_args(const DecodedEvent& ev, od::object* obj) {
    const std::string_view args = ev.args_json();
    return !args.empty() &&
           args_parser.iterate(args.data(), args.size(), args.size() + simdjson::SIMDJSON_PADDING)
                   .get(args_doc) == simdjson::SUCCESS &&
           args_doc.get_object().get(*obj) == simdjson::SUCCESS;
  }
};

namespace {

// A key as written (escapes not decoded: trace writers do not escape key names).
// (Keys are short: a plain loop beats memchr's setup. The closing quote is
// there: simdjson has checked the structure up to this key.)
std::string_view raw_key(od::field& f) noexcept {
  const char* k = f.key().raw();
  const char* q = k;
  while (*q != '"') ++q;
  return std::string_view(k, static_cast<std::size_t>(q - k));
}

// The raw JSON of a value: a scalar's token, or a whole object/array/string
// (matched in the event's bytes, which end at `end`).
std::string_view raw_value(od::value& v, const char* end) noexcept {
  const std::string_view tok = v.raw_json_token();
  if (tok.empty()) return tok;
  if (tok.front() == '{' || tok.front() == '[') {
    const std::size_t n = JsonScanState::match(tok.data(), end);
    return std::string_view(tok.data(), n);
  }
  return trim_json_ws(tok);
}

// DecodedEvent{}, all zero bytes, with a call to memset. GCC's generic
// tuning expands a constant clear of more than 64 bytes (this one is 360)
// as `rep stos`, whose start-up was 70 % of decode()'s own time (perf, the
// report on a .pftrace); glibc's memset takes the size at run time.
static_assert(std::is_trivially_copyable_v<DecodedEvent>);
volatile std::size_t event_bytes = sizeof(DecodedEvent);
void clear(DecodedEvent* e) noexcept { std::memset(static_cast<void*>(e), 0, event_bytes); }

}  // namespace

EventDecoder::EventDecoder(Path path)
    : impl_(std::make_unique<Impl>()), fast_(path == Path::kFastest) {}
EventDecoder::~EventDecoder() = default;

bool EventDecoder::decode(const RawEvent& raw, DecodedEvent* out, std::string* error) {
  if (raw.fields == nullptr) return decode_json(raw, out, error);
  if (raw.args_read) {
    // Every field, its args' members too: the text `{"args":{...}}` is
    // only found, for args_json().
    *out = *raw.fields;
    out->offset = raw.offset;
    out->args_begin_ = out->event_end_ = nullptr;
    if (!raw.json.empty()) {
      constexpr std::string_view kArgs = "{\"args\":";
      out->args_begin_ = raw.json.data() + kArgs.size();
      out->event_end_ = raw.json.data() + raw.json.size();
    }
    return true;
  }
  // The protobuf form's fields, and its args as `{"args":{...}}` (RawEvent::fields).
  if (raw.json.empty()) {
    clear(out);
    out->offset = raw.offset;
  } else if (!decode_json(raw, out, error)) {
    return false;
  }
  const DecodedEvent& f = *raw.fields;
  out->ph = f.ph;
  out->name = f.name;
  out->cat = f.cat;
  out->has_pid = f.has_pid;
  out->has_tid = f.has_tid;
  out->pid = f.pid;
  out->tid = f.tid;
  out->has_ts = f.has_ts;
  out->has_dur = f.has_dur;
  out->ts_ns = f.ts_ns;
  out->dur_ns = f.dur_ns;
  out->id = f.id;
  out->bind_id = f.bind_id;
  out->bp = f.bp;
  out->scope = f.scope;
  return true;
}

bool EventDecoder::decode_json(const RawEvent& raw, DecodedEvent* out, std::string* error) {
  clear(out);
  out->offset = raw.offset;
  if (fast_) {
    if (decode_flat(raw, out)) return true;
    clear(out);
    out->offset = raw.offset;
  }
  const char* const end = raw.json.data() + raw.json.size();
  auto bad = [&](simdjson::error_code e) {
    if (error != nullptr) {
      *error = "byte " + std::to_string(raw.offset) +
               ": event is not valid JSON: " + simdjson::error_message(e);
    }
    return false;
  };
  auto read_string = [&](od::value& v, std::string_view* s) {
    if (v.get_string().get(*s) != simdjson::SUCCESS) {
      *s = {};
      ++fields_ignored_;
    }
  };
  auto read_id = [&](od::value& v, bool* has, TraceId* id) {
    // A duplicate key ({"pid":"x","pid":1}) replaces the earlier value whole:
    // the last one wins, as for the other fields.
    *id = TraceId{};
    // The usual case first: an int64 (a failed get_int64 does not consume
    // the value, so the type's own path below reads it then).
    if (v.get_int64().get(id->number) == simdjson::SUCCESS) {
      *has = true;
      return;
    }
    id->number = 0;
    *has = false;
    od::json_type t;
    if (v.type().get(t) != simdjson::SUCCESS) {
      ++fields_ignored_;
      return;
    }
    if (t == od::json_type::number) {
      if (v.get_int64().get(id->number) == simdjson::SUCCESS) {
        *has = true;
        return;
      }
      // 1.5 or 2^64: keep its text.
      id->is_string = true;
      id->text = trim_json_ws(v.raw_json_token());
      *has = true;
    } else if (t == od::json_type::string) {
      if (v.get_string().get(id->text) == simdjson::SUCCESS) {
        id->is_string = true;
        *has = true;
      }
    } else {
      ++fields_ignored_;
    }
  };
  auto read_time = [&](od::value& v, bool* has, std::int64_t* ns) {
    if (parse_us_to_ns(v.raw_json_token(), ns)) {
      *has = true;
    } else {
      ++fields_ignored_;
    }
  };

  od::document doc;
  simdjson::error_code e =
      impl_->parser
          .iterate(raw.json.data(), raw.json.size(), raw.json.size() + simdjson::SIMDJSON_PADDING)
          .get(doc);
  if (e) return bad(e);
  od::object obj;
  if ((e = doc.get_object().get(obj))) return bad(e);
  for (auto fr : obj) {
    // By reference: copying field/value objects costs store-forwarding stalls.
    if ((e = fr.error())) return bad(e);
    od::field& f = fr.value_unsafe();
    const std::string_view k = raw_key(f);
    od::value& v = f.value();
    if (k.size() > 8) {
      if (k == "compile_id")
        read_string(v, &out->compile_id), out->has_compile_id = !out->compile_id.empty();
      continue;
    }
    switch (k.empty() ? 0 : k[0]) {
      case 'p':
        if (k == "ph")
          read_string(v, &out->ph);
        else if (k == "pid")
          read_id(v, &out->has_pid, &out->pid);
        break;
      case 'n':
        if (k == "name") read_string(v, &out->name);
        break;
      case 'c':
        if (k == "cat") read_string(v, &out->cat);
        break;
      case 't':
        if (k == "ts")
          read_time(v, &out->has_ts, &out->ts_ns);
        else if (k == "tid")
          read_id(v, &out->has_tid, &out->tid);
        break;
      case 'd':
        if (k == "dur") read_time(v, &out->has_dur, &out->dur_ns);
        break;
      case 'i':
        if (k == "id" || k == "id2") out->id = raw_value(v, end);
        break;
      case 'b':
        if (k == "bind_id")
          out->bind_id = raw_value(v, end);
        else if (k == "bp")
          read_string(v, &out->bp);
        break;
      case 's':
        if (k == "s") read_string(v, &out->scope);
        break;
      case 'a': {
        if (k != "args") break;
        const std::string_view tok = v.raw_json_token();
        if (tok.empty() || tok.front() != '{') {
          ++fields_ignored_;
          break;
        }
        out->has_args = true;
        out->args_begin_ = tok.data();  // args_json() finds its end when asked
        out->event_end_ = end;
        od::object args;
        if ((e = v.get_object().get(args))) return bad(e);
        for (auto ar : args) {
          if ((e = ar.error())) return bad(e);
          od::field& af = ar.value_unsafe();
          const std::string_view ak = raw_key(af);
          od::value& av = af.value();
          if (ak == "compile_id") {
            read_string(av, &out->compile_id);
            out->has_compile_id = !out->compile_id.empty();
          } else if (ak == "name") {
            read_string(av, &out->arg_name);
          } else if (ak == "compiled_by") {
            read_string(av, &out->compiled_by);
          } else if (ak == "compiled_by_id") {
            read_string(av, &out->compiled_by_id);
          } else if (ak == "correlation") {
            out->has_correlation = av.get_int64().get(out->correlation) == simdjson::SUCCESS;
          } else if (ak == "device") {
            out->has_device = true;
          } else if (ak == "stream") {
            out->has_stream = true;
          } else if (ak == "grid") {
            out->has_grid = true;
          } else if (ak == "bytes") {
            out->has_bytes = true;
          } else if (ak == "attached" || ak == "failed" || ak == "incomplete") {
            bool b = false;
            const bool is_true = av.get_bool().get(b) == simdjson::SUCCESS && b;
            (ak == "attached" ? out->attached
             : ak == "failed" ? out->failed
                              : out->incomplete) = is_true;
          } else if (ak == "unit_key" || ak == "frame") {
            // Not counted when of another type: other tools' args may use
            // these keys for anything (the report reads them off unit slices).
            std::string_view text;
            if (av.get_string().get(text) == simdjson::SUCCESS) {
              (ak == "unit_key" ? out->unit_key : out->frame) = text;
            }
          }
        }
        break;
      }
      default: break;
    }
  }
  // Something after the object (current_location() is OUT_OF_BOUNDS at the end).
  const char* rest = nullptr;
  if (doc.current_location().get(rest) == simdjson::SUCCESS) return bad(simdjson::TRAILING_CONTENT);
  return true;
}

std::string_view DecodedEvent::args_json() const noexcept {
  if (args_begin_ == nullptr) return {};
  return std::string_view(args_begin_, JsonScanState::match(args_begin_, event_end_));
}

bool EventDecoder::arg(const DecodedEvent& ev, std::string_view key, std::string_view* raw) {
  od::object obj;
  if (!impl_->open_args(ev, &obj)) return false;
  const std::string_view args = ev.args_json();
  od::value v;
  if (obj.find_field_unordered(key).get(v) != simdjson::SUCCESS) return false;
  *raw = raw_value(v, args.data() + args.size());
  return !raw->empty();
}

bool EventDecoder::arg_string(const DecodedEvent& ev, std::string_view key, std::string* out) {
  od::object obj;
  if (!impl_->open_args(ev, &obj)) return false;
  std::string_view s;
  if (obj.find_field_unordered(key).get_string().get(s) != simdjson::SUCCESS) return false;
  out->assign(s);
  return true;
}

}  // namespace jitscope::tools
