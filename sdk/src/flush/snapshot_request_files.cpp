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

bool SnapshotRequestFiles::Seen::is(const struct stat& st) const {
  return st.st_ino == ino && st.st_dev == dev && same_time(st.st_mtim, mtime);
}

void SnapshotRequestFiles::Seen::set(const struct stat& st) {
  ino = st.st_ino;
  dev = st.st_dev;
  mtime = st.st_mtim;
}

SnapshotRequestFiles::SnapshotRequestFiles(const std::string& output_path, long pid)
    : own_(snapshot_request_path(output_path, pid)),
      shared_(snapshot_request_path(output_path, 0)) {
  // Files there before the session (an earlier run's, or a process of the
  // same pid before a restart) are not requests.
  struct stat st {};
  if (::lstat(shared_.c_str(), &st) == 0) shared_seen_.set(st);
  if (::lstat(own_.c_str(), &st) == 0) own_seen_.set(st);
}

std::optional<std::string> SnapshotRequestFiles::take_one(const std::string& path, Seen& seen,
                                                          bool remove) {
  // lstat, then O_NOFOLLOW: a link put there is not followed; only a plain
  // file is a request, once per change (a file that cannot be removed is
  // not taken again and again).
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || seen.is(st)) {
    return std::nullopt;
  }
  seen.set(st);
  std::string reason;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd >= 0) {
    struct stat opened {};
    if (::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode)) reason = read_reason(fd);
    ::close(fd);
  }
  if (remove) (void)::unlink(path.c_str());  // failing, `seen` keeps it from coming back
  return reason;
}

std::optional<std::string> SnapshotRequestFiles::take() {
  if (std::optional<std::string> reason = take_one(own_, own_seen_, /*remove=*/true)) {
    return reason;
  }
  return take_one(shared_, shared_seen_, /*remove=*/false);
}

}  // namespace jitscope::detail
