#include "utf8_repair.hpp"

#include "base/utf8.hpp"  // sdk/src: the writer's own rule

namespace jitscope::tools {

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
    const int len = detail::utf8_step(p + i, n - i);
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
