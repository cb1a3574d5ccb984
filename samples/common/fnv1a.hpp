// FNV-1a, 64 bits: the samples' cache keys and checksums (not a secure hash).
#pragma once

#include <cinttypes>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace sample_common {

// `h` continues an earlier hash: fnv1a(b, n, fnv1a(a, m)) hashes a then b.
inline std::uint64_t fnv1a(const char* data, std::size_t size,
                           std::uint64_t h = 14695981039346656037ull) {
  for (std::size_t i = 0; i < size; ++i) {
    h = (h ^ static_cast<unsigned char>(data[i])) * 1099511628211ull;
  }
  return h;
}

// 16 lowercase hex digits.
inline std::string hex16(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

}  // namespace sample_common
