#include "base/paths.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace jitscope::detail {

std::string absolute_path(std::string_view path) {
  std::string out(path);
  if (out.empty() || out.front() == '/') return out;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) != nullptr) out = std::string(cwd) + "/" + out;
  return out;
}

bool make_dirs(const std::string& dir) noexcept {
  if (dir.empty()) {
    errno = ENOENT;
    return false;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return true;
    errno = ENOTDIR;
    return false;
  }
  // Each parent in turn; a folder another process makes meanwhile is fine.
  char path[4096];
  if (dir.size() >= sizeof path) {
    errno = ENAMETOOLONG;
    return false;
  }
  for (std::size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    dir.copy(path, i);
    path[i] = '\0';
    if (::mkdir(path, 0755) != 0 && errno != EEXIST) return false;
  }
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace jitscope::detail
