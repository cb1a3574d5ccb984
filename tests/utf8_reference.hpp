// The UTF-8 rule jitscope's JSON writer promises, written out a second,
// independent way (plainly, byte by byte, apart from the writer's
// word-at-a-time code), for the tests and the fuzz targets to check against.
#pragma once

#include <string>
#include <string_view>

namespace jitscope::testing {

// `s` with each maximal invalid UTF-8 subpart (Unicode 15 §3.9, Table 3-7
// well-formed sequences) replaced by U+FFFD: what the writer promises a
// parser reads back (the Unicode / WHATWG rule).
inline std::string replace_invalid_utf8(std::string_view s) {
  static constexpr std::string_view kFffd = "\xEF\xBF\xBD";
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const unsigned c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    std::size_t trail = 0;          // continuation bytes a well-formed sequence has
    unsigned lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      trail = 1;
    } else if (c == 0xE0) {
      trail = 2, lo = 0xA0;
    } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
      trail = 2;
    } else if (c == 0xED) {
      trail = 2, hi = 0x9F;
    } else if (c == 0xF0) {
      trail = 3, lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
      trail = 3;
    } else if (c == 0xF4) {
      trail = 3, hi = 0x8F;
    } else {  // 0x80..0xC1, 0xF5..0xFF never start a sequence
      out.append(kFffd);
      ++i;
      continue;
    }
    std::size_t k = 1;
    for (; k <= trail; ++k) {
      if (i + k >= s.size()) break;
      const unsigned b = static_cast<unsigned char>(s[i + k]);
      if (b < lo || b > hi) break;
      lo = 0x80, hi = 0xBF;
    }
    if (k > trail) {
      out.append(s.substr(i, trail + 1));
      i += trail + 1;
    } else {
      out.append(kFffd);  // the lead and the continuation bytes that were in range
      i += k;
    }
  }
  return out;
}

}  // namespace jitscope::testing
