// Producer entry points used inside the library only (the compile layer);
// the public hot path is in <jitscope/detail/hot.hpp>.
#pragma once

#include <jitscope/detail/hot.hpp>

#include <cstdint>
#include <string_view>

namespace jitscope::detail {

// A span begin with record flags (kFlagUnit, kFlagPhase, kFlagCompileEvent)
// and a value (the packed compile id of a unit). `name` is a stable static
// name, or nullptr and `dynamic_name` is copied.
SpanToken begin_marked(std::uint32_t session, std::uint64_t ts, const char* name,
                       std::string_view dynamic_name, std::uint8_t flags,
                       std::uint64_t value) noexcept;

// Appends pre-rendered JSON members (`"k":v,...`, from JsonWriter) to the
// open span's args. False (and counted as a dropped arg) if they cannot go in whole.
bool add_json_members(const SpanToken& token, std::string_view members) noexcept;

}  // namespace jitscope::detail
