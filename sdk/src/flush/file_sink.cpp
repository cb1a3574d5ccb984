#include "flush/file_sink.hpp"

#include "base/log.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace jitscope::detail {

int open_output(const std::string& path, const char* what, std::string& why) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    why = std::string("cannot open ") + what + path + ": " + std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {  // not /dev/null, pipes, ttys
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      why = errno == EWOULDBLOCK
                ? path +
                      " is being written by another jitscope session (in this process or "
                      "another); give each its own path"
                : "cannot lock " + path + ": " + std::strerror(errno);
      ::close(fd);
      return -1;
    }
    if (::ftruncate(fd, 0) != 0) {
      why = "cannot empty " + path + ": " + std::strerror(errno);
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

std::string numbered_path(const std::string& path, std::uint64_t n) {
  if (n == 0) return path;
  const std::size_t slash = path.rfind('/');
  const std::size_t base = slash == std::string::npos ? 0 : slash + 1;
  std::size_t dot = path.rfind('.');
  // Only a dot inside the last component, and not its first character
  // (".trace" has no extension), starts an extension.
  if (dot == std::string::npos || dot <= base) dot = path.size();
  std::string out = path.substr(0, dot);
  out.push_back('.');
  out.append(std::to_string(n));
  out.append(path, dot, std::string::npos);
  return out;
}

namespace {

// Removes path.1, path.2, ... of an earlier run, stopping at the first
// number that is missing, is not a regular file, or is locked by a live
// session (whose file it is then; rotating into it will say so).
void remove_stale_numbered(const std::string& path) {
  for (std::uint64_t n = 1;; ++n) {
    const std::string stale = numbered_path(path, n);
    const int fd = ::open(stale.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    struct stat st {};
    const bool removable =
        ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    const bool removed = removable && ::unlink(stale.c_str()) == 0;
    if (removable && !removed) {
      log_line("cannot remove " + stale + " of an earlier run: " + std::strerror(errno));
    }
    ::close(fd);  // drops the lock
    if (!removed) return;
  }
}

}  // namespace

FileSink::FileSink(int fd, std::string path, std::uint64_t rotate_bytes)
    : fd_(fd), path_(std::move(path)) {
  if (rotate_bytes == 0 || fd_ < 0) return;
  struct stat st {};
  try {
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
      log_line("trace rotation is off: " + path_ +
               " is not a regular file (JITSCOPE_ROTATE_SIZE / rotate_bytes ignored)");
      return;
    }
    remove_stale_numbered(path_);
    rotating_ = true;
  } catch (...) {  // out of memory: one file, as without rotation
    log_line("trace rotation is off: out of memory");
  }
}

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

bool FileSink::next_file() noexcept {
  if (failed_ || !rotating_ || fd_ < 0) return false;
  if (first_fd_ < 0 && files_ == 1) {
    first_fd_ = fd_;  // keeps its lock: the names that follow are this session's
  } else if (::close(fd_) != 0) {
    fd_ = -1;
    fail(std::strerror(errno));
    return false;
  }
  fd_ = -1;
  try {
    current_ = numbered_path(path_, files_);
    std::string why;
    fd_ = open_output(current_, "", why);
    if (fd_ < 0) {
      failed_ = true;
      log_line(why + "; the rest of this trace is lost");
      return false;
    }
  } catch (...) {
    fail("out of memory");
    return false;
  }
  ++files_;
  return true;
}

void FileSink::close() noexcept {
  if (fd_ >= 0) {
    if (::close(fd_) != 0 && !failed_) fail(std::strerror(errno));
    fd_ = -1;
  }
  if (first_fd_ >= 0) {
    if (::close(first_fd_) != 0 && !failed_) {
      current_.clear();  // the error is the first file's
      fail(std::strerror(errno));
    }
    first_fd_ = -1;
  }
}

void FileSink::abandon() noexcept {
  if (fd_ >= 0) ::close(fd_);
  if (first_fd_ >= 0) ::close(first_fd_);
  fd_ = -1;
  first_fd_ = -1;
  failed_ = true;
}

void FileSink::fail(const char* why) noexcept {
  failed_ = true;
  try {
    const std::string& file = current_.empty() ? path_ : current_;
    log_line("writing " + file + " failed: " + why + "; the rest of this trace is lost");
  } catch (...) {
    log_line("writing the trace failed; the rest of this trace is lost");
  }
}

}  // namespace jitscope::detail
