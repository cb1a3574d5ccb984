#include "file_sink.hpp"

#include "log.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitscope::detail {

void FileSink::write(std::string_view bytes) noexcept {
  if (failed_) return;
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail(n < 0 ? std::strerror(errno) : "write returned 0");
      return;
    }
    off += static_cast<std::size_t>(n);
  }
  bytes_ += bytes.size();
}

void FileSink::close() noexcept {
  if (fd_ < 0) return;
  if (::close(fd_) != 0 && !failed_) fail(std::strerror(errno));
  fd_ = -1;
}

void FileSink::abandon() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  failed_ = true;
}

void FileSink::fail(const char* why) noexcept {
  failed_ = true;
  try {
    log_line("writing " + path_ + " failed: " + why + "; the rest of this trace is lost");
  } catch (...) {
    log_line("writing the trace failed; the rest of this trace is lost");
  }
}

}  // namespace jitscope::detail
