#include "flat_event.hpp"

#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace jitscope::tools {
namespace {

enum class Kind : std::uint8_t { kString, kNumber, kTrue, kFalse, kNull };

// One scalar value: a string's text between its quotes (it has no escapes,
// so that is its value) and its raw token (quotes included), or a
// number's or literal's token.
struct Scalar {
  Kind kind;
  std::string_view text;
  std::string_view raw;
  // A number read in the same pass: an integer of up to 18 digits (what
  // simdjson's get_int64 takes, with no overflow), and a time in µs of the
  // form -?digits(.d{1,3})? with up to 15 integer digits, in exact ns (as
  // parse_us_to_ns reads it).
  bool is_integer = false, is_plain_time = false;
  std::int64_t integer = 0, time_ns = 0;
};

constexpr bool is_digit(char c) noexcept { return static_cast<unsigned char>(c - '0') < 10; }

// Each reader below takes the position of what it reads and returns the
// position after it, or nullptr for no. (By value, not through a
// reference: a char load may alias a pointer in memory, which would make
// the compiler store and reload it at every byte.)

// A string at p ('"'): printable ASCII up to its closing quote. No to a
// backslash, a control byte or a byte past ASCII (simdjson unescapes and
// validates those). Sixteen bytes at a time where SSE2 is: the event's
// buffer has kJsonPadding readable bytes past its end.
const char* plain_string(const char* p, const char* end, std::string_view* text) noexcept {
  const char* const start = ++p;
#if defined(__SSE2__)
  static_assert(kJsonPadding >= 16);
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  for (;; p += 16) {
    if (p >= end) return nullptr;
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed: below 0x20, and 0x80 and up, are both less than ' '.
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash)),
                     _mm_cmplt_epi8(bytes, space));
    const int mask = _mm_movemask_epi8(stop);
    if (mask != 0) {
      p += __builtin_ctz(static_cast<unsigned>(mask));
      break;
    }
  }
  if (p >= end || *p != '"') return nullptr;
#else
  for (;; ++p) {
    if (p >= end) return nullptr;
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') break;
    if (c < 0x20 || c >= 0x80 || c == '\\') return nullptr;
  }
#endif
  *text = std::string_view(start, static_cast<std::size_t>(p - start));
  return p + 1;
}

// A number at p, by JSON's grammar -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
// read into `v` as it is checked.
const char* number(const char* p, const char* end, Scalar* v) noexcept {
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  if (p >= end || !is_digit(*p)) return nullptr;
  const char* const int_start = p;
  std::uint64_t whole = 0;  // wraps past 19 digits: then not used
  if (*p == '0') {
    ++p;
  } else {
    for (; p < end && is_digit(*p); ++p) whole = whole * 10 + static_cast<std::uint64_t>(*p - '0');
  }
  const auto int_digits = p - int_start;
  std::uint64_t frac = 0;
  std::ptrdiff_t frac_digits = 0;
  bool fraction = false, exponent = false;
  if (p < end && *p == '.') {
    fraction = true;
    const char* const frac_start = ++p;
    if (p >= end || !is_digit(*p)) return nullptr;
    for (; p < end && is_digit(*p); ++p) {
      if (p - frac_start < 3) frac = frac * 10 + static_cast<std::uint64_t>(*p - '0');
    }
    frac_digits = p - frac_start;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    exponent = true;
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    if (p >= end || !is_digit(*p)) return nullptr;
    while (p < end && is_digit(*p)) ++p;
  }
  const auto sign = [&](std::uint64_t n) {
    return negative ? -static_cast<std::int64_t>(n) : static_cast<std::int64_t>(n);
  };
  v->is_integer = !fraction && !exponent && int_digits <= 18;
  if (v->is_integer) v->integer = sign(whole);
  v->is_plain_time = !exponent && int_digits <= 15 && frac_digits <= 3;
  if (v->is_plain_time) {
    for (auto d = frac_digits; d < 3; ++d) frac *= 10;
    v->time_ns = sign(whole * 1000 + frac);
  }
  return p;
}

const char* literal(const char* p, const char* end, std::string_view word) noexcept {
  if (static_cast<std::size_t>(end - p) < word.size() || std::memcmp(p, word.data(), word.size()))
    return nullptr;
  return p + word.size();
}

// A scalar at p; objects and arrays are not (the caller handles args).
const char* scalar(const char* p, const char* end, Scalar* v) noexcept {
  const char* const start = p;
  switch (*p) {
    case '"':
      v->kind = Kind::kString;
      p = plain_string(p, end, &v->text);
      break;
    case 't': v->kind = Kind::kTrue; p = literal(p, end, "true"); break;
    case 'f': v->kind = Kind::kFalse; p = literal(p, end, "false"); break;
    case 'n': v->kind = Kind::kNull; p = literal(p, end, "null"); break;
    case '{':
    case '[': return nullptr;
    default:
      v->kind = Kind::kNumber;
      p = number(p, end, v);
      break;
  }
  if (p == nullptr) return nullptr;
  v->raw = std::string_view(start, static_cast<std::size_t>(p - start));
  if (v->kind != Kind::kString) v->text = v->raw;
  return p;
}

// An integer simdjson's get_int64 reads: one of up to 18 digits. Other
// numbers are no (1.5, 1e3, 2^63).
bool small_integer(const Scalar& v, std::int64_t* out) noexcept {
  if (v.kind != Kind::kNumber || !v.is_integer) return false;
  *out = v.integer;
  return true;
}

bool string_field(const Scalar& v, std::string_view* out) noexcept {
  if (v.kind != Kind::kString) return false;  // simdjson counts it ignored
  *out = v.text;
  return true;
}

// pid or tid: an integer, or a string's text.
bool id_field(const Scalar& v, bool* has, TraceId* id) noexcept {
  *id = TraceId{};
  if (v.kind == Kind::kString) {
    id->is_string = true;
    id->text = v.text;
  } else if (!small_integer(v, &id->number)) {
    return false;
  }
  *has = true;
  return true;
}

bool time_field(const Scalar& v, bool* has, std::int64_t* ns) noexcept {
  if (v.kind != Kind::kNumber) return false;
  if (v.is_plain_time) {
    *ns = v.time_ns;
  } else if (!parse_us_to_ns(v.raw, ns)) {
    return false;
  }
  *has = true;
  return true;
}

// One member of the event, as EventDecoder::decode reads it.
bool event_member(std::string_view k, const Scalar& v, DecodedEvent* out) noexcept {
  if (k.size() > 8) {
    if (k != "compile_id") return true;
    if (!string_field(v, &out->compile_id)) return false;
    out->has_compile_id = !out->compile_id.empty();
    return true;
  }
  switch (k.empty() ? 0 : k[0]) {
    case 'p':
      if (k == "ph") return string_field(v, &out->ph);
      if (k == "pid") return id_field(v, &out->has_pid, &out->pid);
      break;
    case 'n':
      if (k == "name") return string_field(v, &out->name);
      break;
    case 'c':
      if (k == "cat") return string_field(v, &out->cat);
      break;
    case 't':
      if (k == "ts") return time_field(v, &out->has_ts, &out->ts_ns);
      if (k == "tid") return id_field(v, &out->has_tid, &out->tid);
      break;
    case 'd':
      if (k == "dur") return time_field(v, &out->has_dur, &out->dur_ns);
      break;
    case 'i':
      if (k == "id" || k == "id2") out->id = v.raw;
      break;
    case 'b':
      if (k == "bind_id") out->bind_id = v.raw;
      if (k == "bp") return string_field(v, &out->bp);
      break;
    case 's':
      if (k == "s") return string_field(v, &out->scope);
      break;
    case 'a':
      if (k == "args") return false;  // not an object: simdjson counts it ignored
      break;
    default: break;
  }
  return true;
}

// One member of args, as EventDecoder::decode reads it.
bool args_member(std::string_view k, const Scalar& v, DecodedEvent* out) noexcept {
  if (k == "compile_id") {
    if (!string_field(v, &out->compile_id)) return false;
    out->has_compile_id = !out->compile_id.empty();
  } else if (k == "name") {
    return string_field(v, &out->arg_name);
  } else if (k == "compiled_by") {
    return string_field(v, &out->compiled_by);
  } else if (k == "compiled_by_id") {
    return string_field(v, &out->compiled_by_id);
  } else if (k == "correlation") {
    out->has_correlation = small_integer(v, &out->correlation);
    // Another number (1.5, 2^63) is simdjson's to judge.
    if (!out->has_correlation && v.kind == Kind::kNumber) return false;
  } else if (k == "device") {
    out->has_device = true;
  } else if (k == "stream") {
    out->has_stream = true;
  } else if (k == "grid") {
    out->has_grid = true;
  } else if (k == "bytes") {
    out->has_bytes = true;
  } else if (k == "attached") {
    out->attached = v.kind == Kind::kTrue;
  } else if (k == "failed") {
    out->failed = v.kind == Kind::kTrue;
  } else if (k == "incomplete") {
    out->incomplete = v.kind == Kind::kTrue;
  } else if (k == "unit_key") {
    return string_field(v, &out->unit_key);
  } else if (k == "frame") {
    return string_field(v, &out->frame);
  }
  return true;
}

// Members of an object at p ('{') up to its '}', each handed to
// `member(key, position of its value)`, which returns the position after
// the value.
template <typename Member>
const char* members(const char* p, const char* end, Member&& member) noexcept {
  ++p;
  if (p < end && *p == '}') return p + 1;
  for (;;) {
    std::string_view key;
    if (p >= end || *p != '"' || (p = plain_string(p, end, &key)) == nullptr) return nullptr;
    if (p + 1 >= end || *p != ':') return nullptr;
    if ((p = member(key, p + 1)) == nullptr || p >= end) return nullptr;
    if (*p == '}') return p + 1;
    if (*p != ',') return nullptr;
    ++p;
  }
}

}  // namespace

bool decode_flat(const RawEvent& raw, DecodedEvent* out) noexcept {
  const char* const begin = raw.json.data();
  const char* const end = begin + raw.json.size();
  if (begin == end || *begin != '{') return false;
  const char* const after = members(begin, end, [&](std::string_view key, const char* at) {
    Scalar v;
    if (*at == '{') {
      if (key != "args") return static_cast<const char*>(nullptr);
      out->has_args = true;
      out->args_begin_ = at;
      out->event_end_ = end;
      return members(at, end, [&](std::string_view arg_key, const char* value_at) {
        const char* next = scalar(value_at, end, &v);
        return next != nullptr && args_member(arg_key, v, out) ? next : nullptr;
      });
    }
    const char* next = scalar(at, end, &v);
    return next != nullptr && event_member(key, v, out) ? next : nullptr;
  });
  return after == end;
}

}  // namespace jitscope::tools
