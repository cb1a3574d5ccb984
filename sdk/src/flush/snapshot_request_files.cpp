#include "flush/snapshot_request_files.hpp"

#include "base/trace_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace jitscope::detail {
namespace {

// The reason a request file holds: one line, printable, bounded.
std::string read_reason(int fd) {
  char text[kMaxRequestReason];
  const ssize_t n = ::read(fd, text, sizeof text);
  std::string out;
  for (ssize_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    out.push_back(c < 0x20 || c == 0x7f ? ' ' : static_cast<char>(c));
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

SnapshotRequestFiles::SnapshotRequestFiles(const std::string& output_path, long pid)
    : own_(snapshot_request_path(output_path, pid)),
      shared_(snapshot_request_path(output_path, 0)) {
  struct stat st {};
  if (::stat(shared_.c_str(), &st) == 0) {
    shared_mtime_ = st.st_mtim;
    shared_ino_ = st.st_ino;
  }
}

std::optional<std::string> SnapshotRequestFiles::take() {
  // O_NOFOLLOW: a link put there by someone else is not followed.
  int fd = ::open(own_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd >= 0) {
    std::string reason = read_reason(fd);
    ::close(fd);
    ::unlink(own_.c_str());
    return reason;
  }
  struct stat st {};
  if (::stat(shared_.c_str(), &st) != 0) return std::nullopt;
  if (same_time(st.st_mtim, shared_mtime_) && st.st_ino == shared_ino_) return std::nullopt;
  shared_mtime_ = st.st_mtim;
  shared_ino_ = st.st_ino;
  fd = ::open(shared_.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return std::string();
  std::string reason = read_reason(fd);
  ::close(fd);
  return reason;
}

}  // namespace jitscope::detail
