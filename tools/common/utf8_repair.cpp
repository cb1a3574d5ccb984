#include "utf8_repair.hpp"

namespace jitscope::tools {
namespace {

// Length of the well-formed sequence at p[0] (a byte >= 0x80), or minus the
// length of its maximal invalid subpart (the lead plus the continuation
// bytes still in range). Ranges per Unicode Table 3-7: no overlongs,
// surrogates or code points past U+10FFFF.
int sequence_length(const unsigned char* p, std::size_t avail) {
  const unsigned c = p[0];
  std::size_t need;
  unsigned lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;  // else overlong
    if (c == 0xED) hi = 0x9F;  // else a surrogate
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;  // else overlong
    if (c == 0xF4) hi = 0x8F;  // else past U+10FFFF
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

}  // namespace

std::uint64_t append_repaired_utf8(std::string_view in, std::string* out) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const std::size_t n = in.size();
  std::uint64_t replaced = 0;
  out->reserve(out->size() + n + 16);
  std::size_t i = 0;
  while (i < n) {
    std::size_t ascii = i;
    while (ascii < n && p[ascii] < 0x80) ++ascii;
    out->append(in.data() + i, ascii - i);
    i = ascii;
    if (i == n) break;
    const int len = sequence_length(p + i, n - i);
    if (len > 0) {
      out->append(in.data() + i, static_cast<std::size_t>(len));
      i += static_cast<std::size_t>(len);
    } else {
      out->append("\xEF\xBF\xBD");
      ++replaced;
      i += static_cast<std::size_t>(-len);
    }
  }
  return replaced;
}

}  // namespace jitscope::tools
