// A compile id ("frame/attempt", CompileId in <jitscope/compile.hpp>) as the
// rings carry it: packed into 64 bits, frame << 32 | attempt. The one text
// form for every layer that prints one (compile records, the GPU join).
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace jitscope::detail {

constexpr std::uint64_t pack_compile_id(std::uint32_t frame, std::uint32_t attempt) noexcept {
  return static_cast<std::uint64_t>(frame) << 32 | attempt;
}

// The most digits append_decimal writes (a 64-bit value).
inline constexpr std::size_t kMaxDecimalDigits = 20;

// Appends the decimal digits of `n`.
inline void append_decimal(std::string& out, std::uint64_t n) {
  char digits[kMaxDecimalDigits];
  const auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
  out.append(digits, static_cast<std::size_t>(end - digits));
}

// Appends "frame/attempt".
inline void append_compile_id(std::string& out, std::uint32_t frame, std::uint32_t attempt) {
  append_decimal(out, frame);
  out += '/';
  append_decimal(out, attempt);
}

// "frame/attempt".
inline std::string compile_id_text(std::uint32_t frame, std::uint32_t attempt) {
  std::string out;
  append_compile_id(out, frame, attempt);
  return out;
}
inline std::string compile_id_text(std::uint64_t packed) {
  return compile_id_text(static_cast<std::uint32_t>(packed >> 32),
                         static_cast<std::uint32_t>(packed));
}

}  // namespace jitscope::detail
