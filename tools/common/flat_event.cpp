#include "flat_event.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace jitscope::tools {
namespace {

// Each reader below takes the position of a value and returns the
// position after it, or nullptr for no, and stores what it read straight
// into the event. (Positions by value, not through a reference: a char
// load may alias a pointer in memory, which makes the compiler store and
// reload it at every byte. Results straight into the event: a string_view
// stored as two words in a temporary and copied on as one 16-byte load
// stalls on store forwarding, a third of the parse's time, perf.)

constexpr bool is_digit(char c) noexcept { return static_cast<unsigned char>(c - '0') < 10; }

// A string at p ('"'): printable ASCII up to its closing quote. No to a
// backslash, a control byte or a byte past ASCII (simdjson unescapes and
// validates those). Sixteen bytes at a time where SSE2 is: the event's
// buffer has kJsonPadding readable bytes past its end.
const char* plain_string(const char* p, const char* end, std::string_view* text) noexcept {
  if (*p != '"') return nullptr;
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

// A number read in the same pass as it is checked: an integer of up to
// 18 digits (what simdjson's get_int64 takes, with no overflow), and a
// time in µs of the form -?digits(.d{1,3})? with up to 15 integer digits,
// in exact ns (as parse_us_to_ns reads it).
struct Number {
  bool is_integer = false, is_plain_time = false;
  std::int64_t integer = 0, time_ns = 0;
};

// Digits eight at a time (SWAR), where a byte at a time took about 8
// instructions a digit (a trace time has 14): the 8 bytes at p, read as one
// little-endian word. The event's buffer has kJsonPadding readable bytes
// past its end, so the word may reach past it; only bytes before `end`
// are taken.
static_assert(kJsonPadding >= 8);
std::uint64_t word_at(const char* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// How many of the word's bytes, from the first, are ASCII digits (0 to 8).
unsigned leading_digits(std::uint64_t v) noexcept {
  const std::uint64_t x = v ^ 0x3030303030303030u;  // a digit's byte: 0 to 9
  // Any high-nibble bit, or a low nibble past 9 (+6 carries into bit 4;
  // nibbles added apart, so no carry crosses a byte).
  const std::uint64_t not_digit =
      (x & 0xF0F0F0F0F0F0F0F0u) |
      (((x & 0x0F0F0F0F0F0F0F0Fu) + 0x0606060606060606u) & 0x1010101010101010u);
  return not_digit == 0 ? 8 : static_cast<unsigned>(__builtin_ctzll(not_digit)) / 8;
}

// The value of the word's first k digits (1 <= k <= 8): moved to the top,
// zeros before them, then summed in pairs, fours and eights.
std::uint64_t digits_value(std::uint64_t v, unsigned k) noexcept {
  std::uint64_t x = ((v ^ 0x3030303030303030u) & 0x0F0F0F0F0F0F0F0Fu) << (8 * (8 - k));
  x = (x * 10 + (x >> 8)) & 0x00FF00FF00FF00FFu;
  x = (x * 100 + (x >> 16)) & 0x0000FFFF0000FFFFu;
  return (x * 10000 + (x >> 32)) & 0xFFFFFFFFu;
}

constexpr std::uint64_t kPow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

// How many digits lead at p, at most 8 and none at or past `end`, and
// their word.
unsigned digits_at(const char* p, const char* end, std::uint64_t* word) noexcept {
  *word = word_at(p);
  const unsigned k = leading_digits(*word);
  const std::ptrdiff_t left = end - p;
  return static_cast<std::ptrdiff_t>(k) <= left ? k : static_cast<unsigned>(left < 0 ? 0 : left);
}

// A run of 8 digits or more at p, from its 9th: the rest counted, and
// taken into *value (which wraps past 19 digits: then not used).
const char* more_digits(const char* p, const char* end, std::uint64_t* value) noexcept {
  for (; p < end && is_digit(*p); ++p) *value = *value * 10 + static_cast<std::uint64_t>(*p - '0');
  return p;
}

// JSON's grammar, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, at p.
// Digits are read eight at a time (a trace time has 14).
const char* number(const char* p, const char* end, Number* n) noexcept {
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  if (p >= end || !is_digit(*p)) return nullptr;
  const char* const int_start = p;
  std::uint64_t whole = 0;  // wraps past 19 digits: then not used
  if (*p == '0') {
    ++p;
  } else {
    std::uint64_t w;
    const unsigned k = digits_at(p, end, &w);  // 1 or more: *p is a digit
    whole = digits_value(w, k);
    p += k;
    if (k == 8) {
      const unsigned k2 = digits_at(p, end, &w);
      if (k2 != 0) whole = whole * kPow10[k2] + digits_value(w, k2);
      p += k2;
      if (k2 == 8) p = more_digits(p, end, &whole);
    }
  }
  const auto int_digits = p - int_start;
  std::uint64_t frac = 0;
  std::ptrdiff_t frac_digits = 0;
  bool fraction = false, exponent = false;
  if (p < end && *p == '.') {
    fraction = true;
    ++p;
    std::uint64_t w;
    const unsigned k = digits_at(p, end, &w);
    if (k == 0) return nullptr;
    const unsigned kept = k < 3 ? k : 3;  // ns: the first three
    frac = digits_value(w, kept);
    const char* const frac_start = p;
    p += k;
    if (k == 8) {
      std::uint64_t ignored = 0;
      p = more_digits(p, end, &ignored);
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
  const auto sign = [&](std::uint64_t v) {
    return negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  };
  n->is_integer = !fraction && !exponent && int_digits <= 18;
  if (n->is_integer) n->integer = sign(whole);
  n->is_plain_time = !exponent && int_digits <= 15 && frac_digits <= 3;
  if (n->is_plain_time) n->time_ns = sign(whole * 1000 + frac * kPow10[3 - frac_digits]);
  return p;
}

const char* literal(const char* p, const char* end, std::string_view word) noexcept {
  if (static_cast<std::size_t>(end - p) < word.size() || std::memcmp(p, word.data(), word.size()))
    return nullptr;
  return p + word.size();
}

// Any scalar at p, checked and passed over; objects and arrays are no.
const char* skip_scalar(const char* p, const char* end) noexcept {
  std::string_view text;
  Number n;
  switch (*p) {
    case '"': return plain_string(p, end, &text);
    case 't': return literal(p, end, "true");
    case 'f': return literal(p, end, "false");
    case 'n': return literal(p, end, "null");
    default: return number(p, end, &n);
  }
}

// A scalar's raw token (a string with its quotes), as simdjson's
// raw_json_token gives it.
const char* raw_scalar(const char* p, const char* end, std::string_view* raw) noexcept {
  const char* const after = skip_scalar(p, end);
  if (after != nullptr) *raw = std::string_view(p, static_cast<std::size_t>(after - p));
  return after;
}

// pid or tid: an integer, or a string's text; other values are simdjson's.
const char* id_value(const char* p, const char* end, bool* has, TraceId* id) noexcept {
  *id = TraceId{};
  const char* after;
  if (*p == '"') {
    after = plain_string(p, end, &id->text);
    id->is_string = true;
  } else {
    Number n;
    after = number(p, end, &n);
    if (after == nullptr || !n.is_integer) return nullptr;
    id->number = n.integer;
  }
  *has = after != nullptr;
  return after;
}

// ts or dur: a number in µs (a quoted one is simdjson's).
const char* time_value(const char* p, const char* end, bool* has, std::int64_t* ns) noexcept {
  Number n;
  const char* const after = number(p, end, &n);
  if (after == nullptr) return nullptr;
  if (n.is_plain_time) {
    *ns = n.time_ns;
  } else if (!parse_us_to_ns(std::string_view(p, static_cast<std::size_t>(after - p)), ns)) {
    return nullptr;
  }
  *has = true;
  return after;
}

// true, or any other scalar (false).
const char* flag_value(const char* p, const char* end, bool* flag) noexcept {
  const char* const after = skip_scalar(p, end);
  *flag = after != nullptr && *p == 't';
  return after;
}

// One member of the event, as EventDecoder::decode reads it.
const char* event_member(std::string_view k, const char* p, const char* end,
                         DecodedEvent* out) noexcept {
  if (k.size() > 8) {
    if (k != "compile_id") return skip_scalar(p, end);
    const char* const after = plain_string(p, end, &out->compile_id);
    out->has_compile_id = !out->compile_id.empty();
    return after;
  }
  switch (k.empty() ? 0 : k[0]) {
    case 'p':
      if (k == "ph") return plain_string(p, end, &out->ph);
      if (k == "pid") return id_value(p, end, &out->has_pid, &out->pid);
      break;
    case 'n':
      if (k == "name") return plain_string(p, end, &out->name);
      break;
    case 'c':
      if (k == "cat") return plain_string(p, end, &out->cat);
      break;
    case 't':
      if (k == "ts") return time_value(p, end, &out->has_ts, &out->ts_ns);
      if (k == "tid") return id_value(p, end, &out->has_tid, &out->tid);
      break;
    case 'd':
      if (k == "dur") return time_value(p, end, &out->has_dur, &out->dur_ns);
      break;
    case 'i':
      if (k == "id" || k == "id2") return raw_scalar(p, end, &out->id);
      break;
    case 'b':
      if (k == "bind_id") return raw_scalar(p, end, &out->bind_id);
      if (k == "bp") return plain_string(p, end, &out->bp);
      break;
    case 's':
      if (k == "s") return plain_string(p, end, &out->scope);
      break;
    case 'a':
      if (k == "args") return nullptr;  // not an object: simdjson counts it ignored
      break;
    default: break;
  }
  return skip_scalar(p, end);
}

// One member of args, as EventDecoder::decode reads it.
const char* args_member(std::string_view k, const char* p, const char* end,
                        DecodedEvent* out) noexcept {
  if (k == "compile_id") {
    const char* const after = plain_string(p, end, &out->compile_id);
    out->has_compile_id = !out->compile_id.empty();
    return after;
  }
  if (k == "name") return plain_string(p, end, &out->arg_name);
  if (k == "compiled_by") return plain_string(p, end, &out->compiled_by);
  if (k == "compiled_by_id") return plain_string(p, end, &out->compiled_by_id);
  if (k == "unit_key") return plain_string(p, end, &out->unit_key);
  if (k == "frame") return plain_string(p, end, &out->frame);
  if (k == "correlation") {
    if (*p == '-' || is_digit(*p)) {
      // Another number (1.5, 2^63) is simdjson's to judge.
      Number n;
      const char* const after = number(p, end, &n);
      if (after == nullptr || !n.is_integer) return nullptr;
      out->has_correlation = true;
      out->correlation = n.integer;
      return after;
    }
    out->has_correlation = false;
    return skip_scalar(p, end);
  }
  if (k == "attached") return flag_value(p, end, &out->attached);
  if (k == "failed") return flag_value(p, end, &out->failed);
  if (k == "incomplete") return flag_value(p, end, &out->incomplete);
  if (k == "device") out->has_device = true;
  if (k == "stream") out->has_stream = true;
  if (k == "grid") out->has_grid = true;
  if (k == "bytes") out->has_bytes = true;
  return skip_scalar(p, end);
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
    if (p >= end || (p = plain_string(p, end, &key)) == nullptr) return nullptr;
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
    if (*at == '{') {
      if (key != "args") return static_cast<const char*>(nullptr);
      out->has_args = true;
      out->args_begin_ = at;
      out->event_end_ = end;
      return members(at, end, [&](std::string_view arg_key, const char* value_at) {
        return *value_at == '{' || *value_at == '[' ? nullptr
                                                    : args_member(arg_key, value_at, end, out);
      });
    }
    return *at == '[' ? nullptr : event_member(key, at, end, out);
  });
  return after == end;
}

}  // namespace jitscope::tools
