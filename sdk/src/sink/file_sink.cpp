#include "sink/file_sink.hpp"

#include "base/immortal.hpp"
#include "base/log.hpp"
#include "base/proto_wire.hpp"
#include "base/trace_paths.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

namespace jitscope::detail {
namespace {

// The trace files this image opened: an exec'd image starts with none, so a
// file of this pid that is not among them was written before the exec.
struct ImageFiles {
  std::mutex mutex;
  std::vector<std::pair<dev_t, ino_t>> ids;
};
ImageFiles& image_files() noexcept { return immortal<ImageFiles>(); }

bool opened_by_this_image(const struct stat& st) {
  ImageFiles& files = image_files();
  std::lock_guard<std::mutex> lock(files.mutex);
  for (const auto& [dev, ino] : files.ids) {
    if (dev == st.st_dev && ino == st.st_ino) return true;
  }
  return false;
}

void note_opened_by_this_image(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || opened_by_this_image(st)) return;
  ImageFiles& files = image_files();
  std::lock_guard<std::mutex> lock(files.mutex);
  files.ids.emplace_back(st.st_dev, st.st_ino);
}

constexpr std::string_view kOwnerLead = "jitscope session of pid ";

// The pid in the head of the trace at `path` (the file `st`) when a session
// of this boot wrote it, else 0: its jitscope_session event, which start()
// writes before it returns, carries session_owner_tag(), in both forms (the
// Perfetto form writes that head uncompressed, and keeps string args as
// their bytes). The tag names the pid and the boot id, text no event
// before it could hold by chance.
long head_owner_pid(const std::string& path, const struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;               // unreadable: no owner
  std::string head(64 * 1024, '\0');  // past any process name
  struct stat rs {};
  ssize_t n = -1;
  if (::fstat(fd, &rs) == 0 && rs.st_dev == st.st_dev && rs.st_ino == st.st_ino) {
    n = ::pread(fd, head.data(), head.size(), 0);
  }
  ::close(fd);
  if (n <= 0) return 0;
  head.resize(static_cast<std::size_t>(n));
  const std::size_t at = head.find(kOwnerLead);
  if (at == std::string::npos) return 0;
  long pid = 0;
  std::size_t i = at + kOwnerLead.size();
  while (i < head.size() && head[i] >= '0' && head[i] <= '9' && pid < 0x7fffffff) {
    pid = pid * 10 + (head[i++] - '0');
  }
  const std::string tag = session_owner_tag(pid, this_boot_id());
  return pid > 0 && head.compare(at, tag.size(), tag) == 0 ? pid : 0;
}

bool written_by_this_pid(const std::string& path, const struct stat& st) {
  return head_owner_pid(path, st) == static_cast<long>(::getpid());
}

// Whether `pid` is this process's parent, or the parent's parent, ... (a
// shell or a fork server may stand between a worker and its parent).
bool is_ancestor(long pid) {
  long at = static_cast<long>(::getppid());
  for (int depth = 0; depth < 32 && at > 1; ++depth) {
    if (at == pid) return true;
    char name[48];
    std::snprintf(name, sizeof name, "/proc/%ld/stat", at);
    const int fd = ::open(name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char text[512] = {};
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    // "pid (comm) state ppid ...": comm may hold spaces and ')'.
    const char* close_paren = n > 0 ? std::strrchr(text, ')') : nullptr;
    long ppid = 0;
    if (close_paren == nullptr || std::sscanf(close_paren + 1, " %*c %ld", &ppid) != 1)
      return false;
    at = ppid;
  }
  return false;
}

// Creates a new file for the session beside `path`, never one that exists.
int open_beside(const std::string& path, std::string& why, std::string& opened) {
  const long pid = static_cast<long>(::getpid());
  for (std::uint64_t n = 1; n <= 1000; ++n) {
    const std::string next = exec_path(path, pid, n);
    const int fd = ::open(next.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      why = "cannot open " + next + ": " + std::strerror(errno);
      return -1;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // new: only a racing session holds it
      ::close(fd);
      continue;
    }
    opened = next;
    return fd;
  }
  why = "cannot open a new file beside " + path + ": 1000 of them exist";
  return -1;
}

}  // namespace

namespace {

// Opens `path` for writing, created if missing; `created` says whether this
// call made it, so that a start that fails can take it away again.
int open_or_create(const std::string& path, bool& created) {
  for (int tries = 0; tries < 4; ++tries) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      created = true;
      return fd;
    }
    if (errno != EEXIST) return -1;
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd >= 0 || errno != ENOENT) {
      created = false;
      return fd;
    }
    // Removed between the two opens: try again.
  }
  return -1;
}

}  // namespace

namespace {

bool claim(const std::string& path, const char* what, std::string& why, OutputFile& out,
           bool keep_exec_trace, bool beside, bool as_worker_ok) {
  release_output(out);
  out.path = path;
  out.must_empty = out.noted = false;
  out.parent_session_pid = 0;
  // A trace whose head names a session of an ancestor process (a worker
  // that inherited JITSCOPE_TRACE, or that asked for its parent's path),
  // whether that session still holds it or not: this session writes its own
  // file beside it, as that ancestor's worker, and empties nothing.
  const auto ancestor_writing = [&](const struct stat& st) -> long {
    if (!keep_exec_trace || beside || !as_worker_ok || st.st_size == 0) return 0;
    const long holder = head_owner_pid(path, st);
    return holder > 0 && holder != static_cast<long>(::getpid()) && is_ancestor(holder) ? holder
                                                                                        : 0;
  };
  const auto claim_as_worker = [&](long holder) {
    out.created = false;
    release_output(out);
    if (!claim(worker_trace_path(path, ::getpid()), what, why, out, keep_exec_trace, false,
               /*as_worker_ok=*/false)) {
      return false;
    }
    out.parent_session_pid = holder;
    return true;
  };
  for (int tries = 0;; ++tries) {
    out.fd = open_or_create(path, out.created);
    if (out.fd < 0) {
      why = std::string("cannot open ") + what + path + ": " + std::strerror(errno);
      return false;
    }
    struct stat st {};
    if (::fstat(out.fd, &st) != 0 || !S_ISREG(st.st_mode)) return true;  // /dev/null, pipes, ttys
    if (::flock(out.fd, LOCK_EX | LOCK_NB) != 0) {
      const int lock_error = errno;
      if (const long holder = lock_error == EWOULDBLOCK ? ancestor_writing(st) : 0; holder > 0) {
        return claim_as_worker(holder);
      }
      why = lock_error == EWOULDBLOCK
                ? path +
                      " is being written by another jitscope session (in this process or "
                      "another); give each its own path"
                : "cannot lock " + path + ": " + std::strerror(lock_error);
      // Not ours to remove, even if just created: the holder may have made it.
      out.created = false;
      release_output(out);
      return false;
    }
    // Locked, but maybe a file a refused start removed before its lock went
    // (release_output): then the path names another file, or none, and this
    // one would be written unseen. Open the path again.
    struct stat now {};
    if (::stat(path.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
      out.created = false;
      release_output(out);
      if (tries < 4) continue;
      why = "cannot open " + std::string(what) + path + ": it was replaced while being opened";
      return false;
    }
    if (const long holder = ancestor_writing(st); holder > 0) return claim_as_worker(holder);
    // The locked descriptor closed at exec (O_CLOEXEC): the lock cannot tell
    // an exec'd image from a rerun, the pid in the trace's head can.
    const bool keep =
        keep_exec_trace &&
        (beside || (st.st_size > 0 && !opened_by_this_image(st) && written_by_this_pid(path, st)));
    if (keep) {
      ::close(out.fd);
      out.fd = open_beside(path, why, out.path);
      out.created = out.fd >= 0;  // open_beside makes a new file or none
      if (out.fd < 0) return false;
      out.noted = !beside;
      return true;
    }
    out.must_empty = st.st_size > 0;
    out.noted = keep_exec_trace;
    return true;
  }
}

}  // namespace

bool claim_output(const std::string& path, const char* what, std::string& why, OutputFile& out,
                  bool keep_exec_trace, bool beside) {
  return claim(path, what, why, out, keep_exec_trace, beside, /*as_worker_ok=*/true);
}

bool commit_output(OutputFile& out, std::string& why) {
  if (out.must_empty && ::ftruncate(out.fd, 0) != 0) {
    why = "cannot empty " + out.path + ": " + std::strerror(errno);
    return false;
  }
  out.must_empty = false;
  if (out.noted) note_opened_by_this_image(out.fd);
  return true;
}

void release_output(OutputFile& out) noexcept {
  if (out.fd < 0) return;
  // Unlinked before the lock goes with the descriptor: a session that
  // opened the path meanwhile finds it gone once it holds the lock.
  if (out.created) (void)::unlink(out.path.c_str());
  ::close(out.fd);
  out.fd = -1;
  out.created = false;
}

int OutputFile::take() noexcept {
  const int taken = fd;
  fd = -1;
  created = false;
  return taken;
}

int open_output(const std::string& path, const char* what, std::string& why, std::string* opened,
                bool beside) {
  OutputFile out;  // released (and removed if it made the file) unless taken
  if (!claim_output(path, what, why, out, opened != nullptr, beside)) return -1;
  if (!commit_output(out, why)) return -1;
  if (opened != nullptr) *opened = out.path;
  return out.take();
}

std::string session_owner_tag(long pid, std::string_view boot_id) {
  std::string tag(kOwnerLead);
  tag += std::to_string(pid);
  tag += " in boot ";
  tag.append(boot_id);
  return tag;
}

std::string this_boot_id() {
  const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char text[64] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  std::string id(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

std::string numbered_path(const std::string& path, std::uint64_t n) {
  if (n == 0) return path;
  return tagged_path(path, std::to_string(n));
}

bool write_whole_file(const std::string& path, const std::vector<std::string_view>& parts,
                      std::string& why) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    why = temporary + ": " + std::strerror(errno);
    return false;
  }
  int error = 0;
  for (std::string_view part : parts) {
    while (error == 0 && !part.empty()) {
      const ssize_t n = ::write(fd, part.data(), part.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error = n < 0 ? errno : EIO;
        break;
      }
      part.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    why = path + ": " + std::strerror(error);
    ::unlink(temporary.c_str());
    return false;
  }
  return true;
}

std::string exec_path(const std::string& path, long pid, std::uint64_t n) {
  return tagged_path(path, std::to_string(pid) + "." + std::to_string(n));
}

std::string worker_trace_path(const std::string& path, long pid) {
  return tagged_path(path, "worker-" + std::to_string(pid));
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

FileSink::FileSink(int fd, std::string path, std::uint64_t rotate_bytes, Framing framing)
    : fd_(fd), path_(std::move(path)), framing_(framing) {
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
  int cut_error = 0;
  if (const int error = write_whole(bytes, cut_error); error != 0) fail_writing(error, cut_error);
}

void FileSink::write_closing(std::string_view bytes) noexcept {
  if (!failed_) {
    write(bytes);
    return;
  }
  // The file ends with a whole event; the closing part may fit where the
  // event that failed did not. Failing again says nothing more.
  if (fd_ < 0 || closing_tried_ || !ends_whole_) return;
  closing_tried_ = true;
  int cut_error = 0;
  (void)write_whole(bytes, cut_error);
}

int FileSink::write_whole(std::string_view bytes, int& cut_error) noexcept {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) {
      off += static_cast<std::size_t>(n);
      continue;
    }
    const int error = n < 0 ? errno : -1;
    // Back to the end of the last whole piece: its bytes were written, and
    // this buffer began where the file ended. Not seekable (a pipe, a
    // device): nothing to cut, the reader sees what came.
    const std::size_t keep = last_whole(bytes, off, framing_);
    if (keep < off) {
      const off_t end = ::lseek(fd_, 0, SEEK_CUR);
      const off_t to = end - static_cast<off_t>(off - keep);
      if (end >= 0 && ::ftruncate(fd_, to) == 0 && ::lseek(fd_, to, SEEK_SET) == to) {
        off = keep;
      } else {
        if (end >= 0) cut_error = errno;
        ends_whole_ = false;  // nothing more goes after the partial event
      }
    }
    bytes_ += off;
    return error;
  }
  bytes_ += bytes.size();
  return 0;
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
  const bool trace = framing_ != Framing::kLines;
  try {
    const std::string& file = current_.empty() ? path_ : current_;
    log_line("writing " + file + " failed: " + why +
             (trace ? "; the rest of this trace is lost" : "; the rest of the metrics is lost"));
  } catch (...) {
    log_line(trace ? "writing the trace failed; the rest of this trace is lost"
                   : "writing the metrics file failed; the rest of the metrics is lost");
  }
}

void FileSink::fail_writing(int error, int cut_error) noexcept {
  const char* piece = framing_ == Framing::kLines     ? "line"
                      : framing_ == Framing::kPackets ? "packet"
                                                      : "event";
  char why[512];
  // Each strerror() copied out before the next call.
  const std::string_view first = error < 0 ? "write returned 0" : std::strerror(error);
  int n = std::snprintf(why, sizeof why, "%.*s", static_cast<int>(first.size()), first.data());
  if (cut_error != 0 && n >= 0 && static_cast<std::size_t>(n) < sizeof why) {
    std::snprintf(why + n, sizeof why - n, ", and cutting it back to its last whole %s failed: %s",
                  piece, std::strerror(cut_error));
  } else if (n >= 0 && static_cast<std::size_t>(n) < sizeof why) {
    struct stat st {};
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      std::snprintf(why + n, sizeof why - n, "; it ends with its last whole %s", piece);
    }
  }
  fail(why);
}

}  // namespace jitscope::detail
