// File-system paths the SDK stores or creates.
#pragma once

#include <string>
#include <string_view>

namespace jitscope::detail {

// `path` made absolute against the current directory (unchanged if it is
// already absolute, empty, or the directory cannot be read), so that a
// reader finds it whatever its own working directory. Throws only
// std::bad_alloc.
std::string absolute_path(std::string_view path);

// Makes `dir` and its missing parents (mode 0755). True if it exists as a
// folder afterwards; otherwise false with errno set.
bool make_dirs(const std::string& dir) noexcept;

}  // namespace jitscope::detail
