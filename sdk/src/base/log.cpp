#include "base/log.hpp"
#include "base/immortal.hpp"

#include <jitscope/dedup.hpp>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>

namespace jitscope::detail {

void write_all(int fd, const char* data, std::size_t n) noexcept {
  const int saved = errno;
  std::size_t off = 0;
  while (off < n) {
    const ssize_t w = ::write(fd, data + off, n - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += static_cast<std::size_t>(w);
  }
  errno = saved;
}

void log_line(std::string_view message) noexcept {
  // A fixed buffer: logging must work when memory is short.
  char line[1024];
  constexpr std::string_view kPrefix = "jitscope: ";
  std::size_t n = 0;
  std::memcpy(line, kPrefix.data(), kPrefix.size());
  n += kPrefix.size();
  const std::size_t room = sizeof(line) - n - 1;
  const std::size_t len = std::min(message.size(), room);
  std::memcpy(line + n, message.data(), len);
  n += len;
  line[n++] = '\n';
  write_all(STDERR_FILENO, line, n);
}

void log_once(std::atomic<bool>& flag, std::string_view message) noexcept {
  // acq_rel not needed: only "exactly one caller logs" matters.
  if (!flag.exchange(true, std::memory_order_relaxed)) log_line(message);
}

namespace {

// The checker has its own lock, which only its public class could hand out;
// this one, around every use of it here, is what fork() holds instead.
struct UniqueLines {
  std::mutex fork_guard;
  DuplicateWarningChecker lines;
};
UniqueLines& unique_lines() noexcept { return immortal<UniqueLines>(); }

}  // namespace

void log_unique(std::string_view message) noexcept {
  UniqueLines& u = unique_lines();
  bool fresh = false;
  {
    std::lock_guard<std::mutex> lock(u.fork_guard);
    fresh = u.lines.add(message);
  }
  if (fresh) log_line(message);
}

void log_lock_for_fork() noexcept { unique_lines().fork_guard.lock(); }
void log_unlock_after_fork() noexcept { unique_lines().fork_guard.unlock(); }

}  // namespace jitscope::detail
