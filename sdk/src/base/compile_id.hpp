// A compile id ("frame/attempt", CompileId in <jitscope/compile.hpp>) as the
// rings carry it: packed into 64 bits, frame << 32 | attempt. The one text
// form for every layer that prints one (compile records, the GPU join).
#pragma once

#include <cstdint>
#include <string>

namespace jitscope::detail {

constexpr std::uint64_t pack_compile_id(std::uint32_t frame, std::uint32_t attempt) noexcept {
  return static_cast<std::uint64_t>(frame) << 32 | attempt;
}

// "frame/attempt".
inline std::string compile_id_text(std::uint32_t frame, std::uint32_t attempt) {
  return std::to_string(frame) + "/" + std::to_string(attempt);
}
inline std::string compile_id_text(std::uint64_t packed) {
  return compile_id_text(static_cast<std::uint32_t>(packed >> 32),
                         static_cast<std::uint32_t>(packed));
}

}  // namespace jitscope::detail
