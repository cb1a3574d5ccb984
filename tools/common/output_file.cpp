#include "output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace jitscope::tools {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kFlushAt = std::size_t{4} << 20;

// The file a chain of symbolic links ends at (the path itself when it is no
// link): renaming over a link would replace the link, not write its target.
// A dangling link yields the path it points to, which is then created.
bool follow_links(std::string path, std::string* target, std::string* error) {
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit on a chain
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) {
      *target = path;
      return true;
    }
    std::error_code ec;
    const fs::path to = fs::read_symlink(path, ec);
    if (ec) {
      *error = "cannot read the link " + path + ": " + ec.message();
      return false;
    }
    path = to.is_absolute() ? to.string() : (fs::path(path).parent_path() / to).string();
  }
  *error = path + ": " + std::strerror(ELOOP);
  return false;
}

}  // namespace

bool same_file(const std::string& output, const std::string& input) noexcept {
  struct stat out {};
  struct stat in {};
  if (::stat(output.c_str(), &out) != 0 || !S_ISREG(out.st_mode)) return false;
  const int rc = input == "-" ? ::fstat(0, &in) : ::stat(input.c_str(), &in);
  return rc == 0 && S_ISREG(in.st_mode) && in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

bool OutputFile::open(const std::string& path, std::string* error) {
  path_ = path;
  if (!follow_links(path, &target_, error)) return false;
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    *error = path + ": is a directory";
    return false;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // O_TRUNC: as a shell's `>` would; devices and FIFOs ignore it.
    fd_ = ::open(target_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) {
      *error = path + ": cannot open for writing: " + std::strerror(errno);
      return false;
    }
    return true;
  }
  // A new file of our own next to the output (mkostemp: never one planted
  // there), so that the rename stays on one file system.
  std::string pattern = target_ + ".tmp-XXXXXX";
  fd_ = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd_ < 0) {
    *error = path + ": cannot open for writing: " + std::strerror(errno) +
             " (a temporary file next to it)";
    return false;
  }
  tmp_ = pattern;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  (void)::fchmod(fd_, 0666 & ~mask);  // as an ordinary new file, not mkstemp's 0600
  return true;
}

bool OutputFile::write(std::string_view bytes, std::string* error) {
  buf_.append(bytes);
  return buf_.size() < kFlushAt || flush(error);
}

bool OutputFile::flush(std::string* error) {
  std::size_t done = 0;
  while (done < buf_.size()) {
    const ssize_t n = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *error = path_ + ": cannot write " + what_ + ": " + std::strerror(n < 0 ? errno : ENOSPC);
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  buf_.clear();
  return true;
}

bool OutputFile::commit(std::string* error) {
  if (!flush(error)) return false;
  if (tmp_.empty()) {  // in place: a device or FIFO has nothing to fsync
    const int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) *error = path_ + ": cannot write " + what_ + ": " + std::strerror(errno);
    return rc == 0;
  }
  if (::fsync(fd_) != 0 || ::close(fd_) != 0) {
    fd_ = -1;
    *error = path_ + ": cannot write " + what_ + ": " + std::strerror(errno);
    return false;
  }
  fd_ = -1;
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    *error = path_ + ": cannot put " + what_ + " in place (rename " + tmp_ +
             "): " + std::strerror(errno);
    return false;
  }
  tmp_.clear();
  return true;
}

}  // namespace jitscope::tools
