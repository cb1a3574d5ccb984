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

void append_escape(std::string& out, unsigned char c) {
  char buf[6] = {'\\', 0, 0, 0, 0, 0};
  std::size_t len = 2;
  switch (c) {
    case '"': buf[1] = '"'; break;
    case '\\': buf[1] = '\\'; break;
    case '\b': buf[1] = 'b'; break;
    case '\f': buf[1] = 'f'; break;
    case '\n': buf[1] = 'n'; break;
    case '\r': buf[1] = 'r'; break;
    case '\t': buf[1] = 't'; break;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      buf[1] = 'u';
      buf[2] = '0';
      buf[3] = '0';
      buf[4] = kHex[c >> 4];
      buf[5] = kHex[c & 0xF];
      len = 6;
    }
  }
  out.append(buf, len);
}

}  // namespace

void append_json_string_body(std::string& out, std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  std::size_t run = 0;  // start of the pending verbatim run, flushed in one append
  while (true) {
    while (i + 8 <= n && word_is_plain(p + i)) i += 8;
    while (i < n && kPlain[p[i]]) ++i;
    if (i >= n) break;
    if (p[i] < 0x80) {
      out.append(s.data() + run, i - run);
      append_escape(out, p[i]);
      run = ++i;
      continue;
    }
    const int step = utf8_step(p + i, n - i);
    if (step > 0) {  // valid sequence: stays in the run
      i += static_cast<std::size_t>(step);
      continue;
    }
    out.append(s.data() + run, i - run);
    out.append("\xEF\xBF\xBD", 3);
    i += static_cast<std::size_t>(-step);
    run = i;
  }
  out.append(s.data() + run, n - run);
}

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  append_json_string_body(out, s);
  out.push_back('"');
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
