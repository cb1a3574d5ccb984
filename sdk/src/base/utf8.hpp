// UTF-8 well-formedness, shared by the SDK's JSON writer and the tools'
// reader (which repairs what it reads the same way the writer escapes).
#pragma once

#include <cstddef>

namespace jitscope::detail {

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

}  // namespace jitscope::detail
