#include "base/json_writer.hpp"
#include "base/put_bytes.hpp"
#include "base/utf8.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

namespace jitscope::detail {
namespace {

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kLow7 = kOnes * 0x7F;
constexpr std::uint64_t kHighs = kOnes * 0x80;
constexpr bool kLittleEndian = std::endian::native == std::endian::little;

// Bit 7 of each byte is set where that byte of w needs attention: < 0x20, '"', '\\' or
// >= 0x80. Each byte is computed on its own 7 low bits (no carry crosses bytes), so the mask
// is exact and its first set byte is the first special byte on either endianness.
inline std::uint64_t special_mask(std::uint64_t w) {
  const std::uint64_t low = w & kLow7;
  const std::uint64_t control = ~(low + kOnes * 0x60);           // low < 0x20
  const std::uint64_t quote = ~((low ^ (kOnes * '"')) + kLow7);  // low == '"'
  const std::uint64_t bslash = ~((low ^ (kOnes * '\\')) + kLow7);
  return (control | quote | bslash | w) & kHighs;
}

inline std::size_t first_flagged_byte(std::uint64_t mask) {
  return static_cast<std::size_t>(kLittleEndian ? std::countr_zero(mask) : std::countl_zero(mask)) /
         8;
}

// Reads 2..7 bytes into a word in memory order, padding with the plain byte 'a', using two
// overlapping loads instead of a byte loop. Little-endian only.
inline std::uint64_t load_short(const unsigned char* p, std::size_t len) {
  std::uint64_t w;
  if (len >= 4) {
    std::uint32_t lo;
    std::uint32_t hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + len - 4, 4);
    w = lo | (std::uint64_t{hi} << (8 * (len - 4)));
  } else {
    std::uint16_t lo;
    std::uint16_t hi;
    std::memcpy(&lo, p, 2);
    std::memcpy(&hi, p + len - 2, 2);
    w = lo | (std::uint64_t{hi} << (8 * (len - 2)));
  }
  const std::uint64_t keep = (std::uint64_t{1} << (8 * len)) - 1;
  return (w & keep) | (kOnes * 'a' & ~keep);
}

// Writes the escape for an ASCII byte that is not plain; returns the new end.
inline char* write_escape(char* d, unsigned char c) {
  d[0] = '\\';
  switch (c) {
    case '"': d[1] = '"'; return d + 2;
    case '\\': d[1] = '\\'; return d + 2;
    case '\b': d[1] = 'b'; return d + 2;
    case '\f': d[1] = 'f'; return d + 2;
    case '\n': d[1] = 'n'; return d + 2;
    case '\r': d[1] = 'r'; return d + 2;
    case '\t': d[1] = 't'; return d + 2;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      d[1] = 'u';
      d[2] = '0';
      d[3] = '0';
      d[4] = kHex[c >> 4];
      d[5] = kHex[c & 0xF];
      return d + 6;
    }
  }
}

// Escapes input from p[i] until `limit` into d and returns the new i. A sequence that starts
// before `limit` may run past it (up to n), so a chunk ends on a sequence boundary. Every step
// consumes at least one input byte below `limit` and writes at most 6 bytes per byte consumed,
// so 6 * (limit - i) bytes of room suffice; that bound also covers the whole-word stores
// below, which write 8 bytes when at least 2 input bytes remain. Forced inline, as is
// put_string: most strings are a few bytes, and call overhead was ~10% of an event.
[[gnu::always_inline]] inline std::size_t escape_into(char*& d, const unsigned char* p,
                                                      std::size_t i, std::size_t limit,
                                                      std::size_t n) {
  while (i < limit) {
    const std::size_t rem = limit - i;
    std::size_t take = 8;  // plain bytes that can be taken from the stored word
    std::uint64_t w;
    if (rem >= 8) {
      std::memcpy(&w, p + i, 8);
    } else if (kLittleEndian && rem >= 2) {
      w = load_short(p + i, rem);
      take = rem;
    } else {  // one byte left (or a big-endian tail): padding keeps the code below shared
      w = kOnes * 'a';
      std::memcpy(&w, p + i, 1);
      take = 1;
    }
    const std::uint64_t mask = special_mask(w);
    if (take >= 2) {
      std::memcpy(d, &w, 8);  // copies the plain prefix; bytes past it get overwritten
    } else if (mask == 0) {
      *d = static_cast<char>(p[i]);
    }
    if (mask == 0) {
      d += take;
      i += take;
      continue;
    }
    const std::size_t plain = first_flagged_byte(mask);  // < take: padding is never flagged
    d += plain;
    i += plain;
    if (p[i] < 0x80) {
      d = write_escape(d, p[i++]);
      continue;
    }
    const int step = utf8_step(p + i, n - i);
    if (step > 0) {
      for (int k = 0; k < step; ++k) *d++ = static_cast<char>(p[i++]);
    } else {
      std::memcpy(d, "\xEF\xBF\xBD", 3);
      d += 3;
      i += static_cast<std::size_t>(-step);
    }
  }
  return i;
}

// Grows `out` by up to `room` bytes, lets write(dst) fill them and returns its end, then trims
// to what was written. The bytes go straight to their final place; escaping into a stack
// buffer and appending that measured 10-20% slower per event.
template <class Write>
inline void write_into(std::string& out, std::size_t room, Write write) {
#if defined(__cpp_lib_string_resize_and_overwrite)
  const std::size_t old = out.size();
  out.resize_and_overwrite(old + room, [&](char* base, std::size_t) {
    return static_cast<std::size_t>(write(base + old) - base);
  });
#else
  const std::size_t old = out.size();
  out.resize(old + room);  // zero-fills, the price of staying within C++20
  char* base = out.data();
  out.resize(static_cast<std::size_t>(write(base + old) - base));
#endif
}

// Number writers: d needs kNumberRoom bytes.
constexpr std::size_t kNumberRoom = kJsonNumberRoom;

inline char* put_int(char* d, std::int64_t v) { return std::to_chars(d, d + 24, v).ptr; }
inline char* put_uint(char* d, std::uint64_t v) { return std::to_chars(d, d + 24, v).ptr; }

// The digits of 00 to 99, two by two.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
inline char* put_two_digits(char* d, std::uint32_t v) {  // v < 100
  std::memcpy(d, &kDigitPairs[2 * v], 2);
  return d + 2;
}
// Exactly 8 digits of v < 10^8, leading zeros kept.
inline char* put_eight_digits(char* d, std::uint32_t v) {
  const std::uint32_t hi = v / 10000, lo = v % 10000;
  d = put_two_digits(d, hi / 100);
  d = put_two_digits(d, hi % 100);
  d = put_two_digits(d, lo / 100);
  return put_two_digits(d, lo % 100);
}

// A trace's times are µs since boot, 10 digits and more: the low 8 go by
// pairs with no length to find, and only the rest through to_chars (60 of
// 120 instructions a time, callgrind). Durations, mostly short, go whole.
inline char* put_us(char* d, std::uint64_t ns) {
  const std::uint64_t us = ns / 1000;  // at most 17 digits
  const auto frac = static_cast<std::uint32_t>(ns % 1000);
  if (us < 100'000'000) {
    d = std::to_chars(d, d + 8, static_cast<std::uint32_t>(us)).ptr;
  } else {
    d = std::to_chars(d, d + 9, us / 100'000'000).ptr;
    d = put_eight_digits(d, static_cast<std::uint32_t>(us % 100'000'000));
  }
  *d++ = '.';
  *d++ = static_cast<char>('0' + frac / 100);
  return put_two_digits(d, frac % 100);
}

inline char* put_double(char* d, double v) {
  if (!std::isfinite(v)) {  // JSON has no spelling for these
    std::memcpy(d, "null", 4);
    return d + 4;
  }
  // The shortest form is at most 24 chars ("-2.2250738585072014e-308"); forms such as
  // "1e+300" and "-0" are valid JSON numbers. From 2^63 up in magnitude it always has an
  // exponent: the plain shortest form of e.g. 2^65 is the integer 36893488147419103232, which
  // parsers that keep integers in 64 bits (simdjson: jitscope-report, jitscope-merge) reject.
  if (std::fabs(v) >= 0x1p63) {
    return std::to_chars(d, d + kNumberRoom, v, std::chars_format::scientific).ptr;
  }
  return std::to_chars(d, d + kNumberRoom, v).ptr;
}

[[gnu::always_inline]] inline char* put_string(char* d, std::string_view s) {
  *d++ = '"';
  escape_into(d, reinterpret_cast<const unsigned char*>(s.data()), 0, s.size(), s.size());
  *d++ = '"';
  return d;
}

// pre + escaped s + post, for strings of any length.
void append_json_string_parts(std::string& out, std::string_view pre, std::string_view s,
                              std::string_view post) {
  // Input bytes per step: bounds the over-allocation of a long string to 6x this.
  constexpr std::size_t kChunk = 4096;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  bool first = true;
  do {
    const std::size_t limit = n - i > kChunk ? i + kChunk : n;
    // post is counted every time: the chunk's last sequence may run on to the end of s.
    const std::size_t room = (first ? pre.size() : 0) + 6 * (limit - i) + post.size();
    write_into(out, room, [&](char* d) {
      if (first) {
        for (char c : pre) *d++ = c;  // not memcpy: an empty view may hold nullptr
      }
      i = escape_into(d, p, i, limit, n);
      if (i >= n) {
        for (char c : post) *d++ = c;
      }
      return d;
    });
    first = false;
  } while (i < n);
}

}  // namespace

void append_json_string_body(std::string& out, std::string_view s) {
  append_json_string_parts(out, {}, s, {});
}

void append_json_string(std::string& out, std::string_view s) {
  append_json_string_parts(out, "\"", s, "\"");
}

char* put_json_string(char* d, std::string_view s) noexcept { return put_string(d, s); }

char* put_json_us(char* d, std::uint64_t ns) noexcept { return put_us(d, ns); }

void append_us(std::string& out, std::uint64_t ns) {
  write_into(out, kNumberRoom, [&](char* d) { return put_us(d, ns); });
}

void append_int(std::string& out, std::int64_t v) {
  write_into(out, kNumberRoom, [&](char* d) { return put_int(d, v); });
}

void append_uint(std::string& out, std::uint64_t v) {
  write_into(out, kNumberRoom, [&](char* d) { return put_uint(d, v); });
}

void append_double(std::string& out, double v) {
  write_into(out, kNumberRoom, [&](char* d) { return put_double(d, v); });
}

void append_json_item(std::string& out, bool comma, const std::string_view* key,
                      const JsonScalar& v) {
  using Kind = JsonScalar::Kind;
  const bool text = v.kind == Kind::kString || v.kind == Kind::kRaw;
  const std::size_t key_len = key != nullptr ? key->size() : 0;
  const std::size_t text_len = text ? v.text.size() : 0;
  // Strings this long go in pieces so the temporary over-allocation stays bounded.
  if (key_len + text_len > 4096) {
    if (comma) out.push_back(',');
    if (key != nullptr) append_json_string_parts(out, "\"", *key, "\":");
    if (v.kind == Kind::kKey) return;
    if (v.kind == Kind::kString) {
      append_json_string(out, v.text);
    } else if (v.kind == Kind::kRaw) {
      out.append(v.text);
    } else {
      append_json_item(out, false, nullptr, v);
    }
    return;
  }
  std::size_t room = 1 + (key != nullptr ? 6 * key_len + 3 : 0);
  room += v.kind == Kind::kString ? 6 * text_len + 2
          : v.kind == Kind::kRaw  ? text_len
                                  : kNumberRoom;
  write_into(out, room, [&](char* d) {
    if (comma) *d++ = ',';
    if (key != nullptr) {
      d = put_string(d, *key);
      *d++ = ':';
    }
    switch (v.kind) {
      case Kind::kString: return put_string(d, v.text);
      case Kind::kRaw:
        if (text_len != 0) std::memcpy(d, v.text.data(), text_len);  // data() may be null
        return d + text_len;
      case Kind::kInt: return put_int(d, static_cast<std::int64_t>(v.bits));
      case Kind::kUint: return put_uint(d, v.bits);
      case Kind::kDouble: return put_double(d, std::bit_cast<double>(v.bits));
      case Kind::kUs: return put_us(d, v.bits);
      case Kind::kBool: return put_bytes(d, v.bits != 0 ? "true" : "false");
      case Kind::kKey: return d;
      case Kind::kNull: break;
    }
    return put_bytes(d, "null");
  });
}

}  // namespace jitscope::detail
