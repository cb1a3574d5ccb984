// The 64-bit FNV-1a hash that artifact records carry ("fnv1a"), written out
// here from its definition (offset basis 14695981039346656037, prime
// 1099511628211), apart from the SDK's code, for the tests to check against.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace jitscope::testing {

// 16 lowercase hex digits, as in the metrics record.
inline std::string reference_fnv1a(std::string_view s) {
  unsigned long long h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", h);
  return hex;
}

}  // namespace jitscope::testing
