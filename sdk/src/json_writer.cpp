#include "json_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

namespace jitscope::detail {
namespace {

// True for bytes copied verbatim: printable ASCII (and DEL) except '"' and '\\'.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[c] = c != '"' && c != '\\';
  return t;
}();

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;

// True when none of the 8 bytes needs attention (< 0x20, '"', '\\', >= 0x80). Exact for an
// all-plain word; a borrow can flag a plain byte only above a special one, which is harmless
// because the caller then rescans that word byte by byte.
inline bool word_is_plain(const unsigned char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  const std::uint64_t quote = w ^ (kOnes * '"');
  const std::uint64_t bslash = w ^ (kOnes * '\\');
  return (((w - kOnes * 0x20) | (quote - kOnes) | (bslash - kOnes) | w) & kHighs) == 0;
}

// Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), or minus the length of
// its maximal invalid subpart: the lead plus the continuation bytes that were still in range.
// Ranges per Unicode Table 3-7, which rule out overlongs, surrogates and > U+10FFFF.
inline int utf8_step(const unsigned char* p, std::size_t avail) {
  const unsigned c = p[0];
  std::size_t need;
  unsigned lo = 0x80;
  unsigned hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;  // else overlong
    if (c == 0xED) hi = 0x9F;  // else surrogate
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;  // else overlong
    if (c == 0xF4) hi = 0x8F;  // else > U+10FFFF
  } else {
    return -1;
  }
  for (std::size_t k = 1; k <= need; ++k) {
    if (k >= avail || p[k] < lo || p[k] > hi) return -static_cast<int>(k);
    lo = 0x80;
    hi = 0xBF;
  }
  return static_cast<int>(need) + 1;
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
// before `limit` may run past it (up to n), so the chunk ends on a sequence boundary. Each
// step starts at a distinct input byte below `limit` and writes at most 6 bytes, so d needs
// 6 * (limit - i) bytes of room.
inline std::size_t escape_into(char*& d, const unsigned char* p, std::size_t i,
                               std::size_t limit, std::size_t n) {
  while (i < limit) {
    while (i + 8 <= limit && word_is_plain(p + i)) {
      std::memcpy(d, p + i, 8);
      d += 8;
      i += 8;
    }
    while (i < limit && kPlain[p[i]]) *d++ = static_cast<char>(p[i++]);
    if (i >= limit) break;
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
// to what was written. The bytes go straight to their final place: escaping into a stack
// buffer and appending that was slower, since the copy's wide loads stall on the escaper's
// narrow stores that have not yet left the store buffer.
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

}  // namespace

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

void append_json_string_body(std::string& out, std::string_view s) {
  append_json_string_parts(out, {}, s, {});
}

void append_json_string(std::string& out, std::string_view s) {
  append_json_string_parts(out, "\"", s, "\"");
}

void append_us(std::string& out, std::uint64_t ns) {
  char buf[32];  // 20 digits of UINT64_MAX / 1000 is 17, + '.' + 3
  char* end = std::to_chars(buf, buf + sizeof buf, ns / 1000).ptr;
  const auto frac = static_cast<unsigned>(ns % 1000);
  end[0] = '.';
  end[1] = static_cast<char>('0' + frac / 100);
  end[2] = static_cast<char>('0' + frac / 10 % 10);
  end[3] = static_cast<char>('0' + frac % 10);
  out.append(buf, static_cast<std::size_t>(end + 4 - buf));
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, static_cast<std::size_t>(end - buf));
}

void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  const char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, static_cast<std::size_t>(end - buf));
}

void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out.append("null", 4);
    return;
  }
  // Shortest form is at most 24 chars ("-2.2250738585072014e-308"); forms like "1e+300" and
  // "-0" are valid JSON numbers.
  char buf[32];
  const char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out.append(buf, static_cast<std::size_t>(end - buf));
}

}  // namespace jitscope::detail
