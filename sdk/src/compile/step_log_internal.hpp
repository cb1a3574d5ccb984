// Test hooks and helpers of step_log.cpp (not part of the public API).
#pragma once

namespace jitscope::detail {

// Points progress bars constructed afterwards at `fd` (default 2, stderr).
void set_progress_fd(int fd) noexcept;
// The JITSCOPE_PROGRESS rule: null or "0" is off, "1" is on; anything else
// is off and logs one line saying so.
bool parse_progress_env(const char* value) noexcept;

}  // namespace jitscope::detail
