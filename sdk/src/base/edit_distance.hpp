// The Levenshtein distance of two short names, for "did you mean" lines
// (unknown JITSCOPE_* variables; the Python package's unknown config names).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace jitscope::detail {

// One row at a time; names past 64 bytes are compared by their first 64
// (a name that long is far from every known one anyway).
inline std::size_t edit_distance(std::string_view a, std::string_view b) noexcept {
  constexpr std::size_t kMax = 64;
  a = a.substr(0, kMax);
  b = b.substr(0, kMax);
  std::size_t row[kMax + 1];
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace jitscope::detail
