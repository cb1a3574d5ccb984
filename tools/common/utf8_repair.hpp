// Invalid UTF-8 in a trace's bytes, replaced so that a strict parser
// (simdjson validates UTF-8) reads the event: each maximal invalid subpart
// becomes U+FFFD (Unicode ch. 3 and the WHATWG decoder's rule, as the SDK's
// JSON writer does): "\xE2\x82" -> one U+FFFD, "\xC0\x80" -> two, a lone
// "\xFF" -> one. Valid sequences and ASCII are copied as they are.
// TraceReader calls it for an event that fails simdjson::validate_utf8, so
// valid input never pays for it. cut_utf8 (below) serves the report too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace jitscope::tools {

// true when every byte of `s` is ASCII (below 0x80), so it is valid UTF-8:
// most events of most traces, which then skip simdjson::validate_utf8 (a
// call through its CPU dispatch, and 3% of the report's time). 16 bytes at a
// time, as two 64-bit words ORed together.
inline bool is_ascii(std::string_view s) noexcept {
  const char* p = s.data();
  std::size_t n = s.size();
  std::uint64_t any = 0;
  for (; n >= 16; p += 16, n -= 16) {
    std::uint64_t a, b;
    std::memcpy(&a, p, 8);
    std::memcpy(&b, p + 8, 8);
    any |= a | b;
  }
  for (; n > 0; ++p, --n) any |= static_cast<unsigned char>(*p);
  return (any & 0x8080808080808080ull) == 0;
}

// `s` whole when it is at most `max_bytes` long, else its first bytes up
// to `max_bytes`, never inside a character, then "…": text a report keeps
// from a trace, bounded in bytes whatever the trace wrote.
inline std::string cut_utf8(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  std::size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // a continuation byte
  std::string out(s.substr(0, n));
  out += "…";
  return out;
}

// Appends `in` to *out with its invalid subparts replaced; returns how many
// were replaced.
std::uint64_t append_repaired_utf8(std::string_view in, std::string* out);

}  // namespace jitscope::tools
