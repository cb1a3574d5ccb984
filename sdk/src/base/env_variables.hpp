// The JITSCOPE_* environment variables jitscope reads, and the check that
// names the ones it does not know: config reads them into a Config, and
// the autostart (api/session.cpp) names a typo even when no session starts
// (JITSCOPE_TRAC=x.json would otherwise do nothing, silently).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace jitscope::detail {

struct KnownVariable {
  const char* name;
  const char* meaning;
};

// Also the list docs/configuration.md documents; keep them in step.
std::span<const KnownVariable> known_variables() noexcept;

// The known name nearest to `name` by edit distance (typos, a missing or
// extra suffix: JITSCOPE_TRAC and JITSCOPE_TRACEFILE give JITSCOPE_TRACE).
std::string_view closest_known_variable(std::string_view name) noexcept;

// "" when every JITSCOPE_* variable in the environment is known; else one
// message naming each unknown one with the closest known name. May throw
// (allocation): callers are guarded.
std::string unknown_variables();

}  // namespace jitscope::detail
