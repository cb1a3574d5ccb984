// The one way jitscope talks to the user at run time: a `jitscope: ...` line
// on stderr, written with one write(2) so lines from threads never interleave.
#pragma once

#include <atomic>
#include <cstddef>
#include <string_view>

namespace jitscope::detail {

// write(2) until done, retrying EINTR; gives up quietly on an error. Keeps errno.
void write_all(int fd, const char* data, std::size_t n) noexcept;
void log_line(std::string_view message) noexcept;
// Logs only the first time `flag` is seen false; later calls are silent.
void log_once(std::atomic<bool>& flag, std::string_view message) noexcept;
// Logs `message` only the first time this exact text is seen in the process
// (one DuplicateWarningChecker of kDefaultDuplicateWarningCapacity lines, so
// a message forgotten by its LRU may show again). Usable during exit.
void log_unique(std::string_view message) noexcept;
// Holds log_unique's lock across fork() (api/session.cpp): the last lock the
// fork handlers take, since it is taken under others.
void log_lock_for_fork() noexcept;
void log_unlock_after_fork() noexcept;

}  // namespace jitscope::detail
