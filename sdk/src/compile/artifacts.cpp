#include "compile/artifacts.hpp"

#include "base/boundary.hpp"
#include "base/immortal.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace jitscope::detail {
namespace {

struct ArtifactState {
  std::mutex mutex;  // guards dir and on; held for a copy, never across I/O
  std::string dir;
  bool on = false;
  std::uint64_t max_bytes = 0;
  // relaxed: totals; `reserved` only has to be exact in sum, which the
  // atomic read-modify-writes give.
  std::atomic<std::uint64_t> reserved{0};
  std::atomic<std::uint64_t> written{0};
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> over_cap{0};
  std::atomic<bool> said_over_cap{false};
};

// Immortal: units may close (and record) during exit.
ArtifactState& state() noexcept { return immortal<ArtifactState>(); }

// A file-name part: [A-Za-z0-9._-] kept, other bytes '_', at most 64 bytes,
// never "", "." or "..".
std::string file_part(std::string_view text, std::string_view fallback) {
  std::string out;
  for (char c : text.substr(0, 64)) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    out.push_back(keep ? c : '_');
  }
  if (out.empty() || out == "." || out == "..") out = fallback;
  return out;
}

std::string fnv1a_hex(std::string_view content) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : content) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char hex[17];
  for (int i = 15; i >= 0; --i, h >>= 4) hex[i] = "0123456789abcdef"[h & 0xf];
  hex[16] = '\0';
  return hex;
}

// The whole content, or false with errno set (the file is then removed).
bool write_file(const std::string& path, std::string_view content) noexcept {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(path.c_str());
      errno = err;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return ::close(fd) == 0 || errno == EINTR;
}

// Takes `n` bytes of the bound; false (nothing taken) past it.
bool reserve(ArtifactState& s, std::uint64_t max_bytes, std::uint64_t n) noexcept {
  std::uint64_t used = s.reserved.load(std::memory_order_relaxed);
  do {
    if (n > max_bytes || used > max_bytes - n) return false;
  } while (!s.reserved.compare_exchange_weak(used, used + n, std::memory_order_relaxed));
  return true;
}

}  // namespace

std::string begin_artifacts(const std::string& dir, std::uint64_t max_bytes) noexcept {
  ArtifactState& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.on = false;
    s.max_bytes = max_bytes;
  }
  s.reserved.store(0, std::memory_order_relaxed);
  s.written.store(0, std::memory_order_relaxed);
  s.bytes.store(0, std::memory_order_relaxed);
  s.over_cap.store(0, std::memory_order_relaxed);
  s.said_over_cap.store(false, std::memory_order_relaxed);
  std::string made;
  if (dir.empty() || max_bytes == 0) return made;
  // Failing (out of memory), artifacts stay off. The folder is made with
  // the first artifact (record_artifact), not here: a run that saves none
  // leaves no empty folder behind.
  guarded("naming the artifacts folder", [&] {
    std::string absolute = absolute_path(dir);
    made = absolute;
    std::lock_guard<std::mutex> lock(s.mutex);
    s.dir = std::move(absolute);
    s.on = true;
  });
  return made;
}

ArtifactTotals artifact_totals() noexcept {
  const ArtifactState& s = state();
  return {s.written.load(std::memory_order_relaxed), s.bytes.load(std::memory_order_relaxed),
          s.over_cap.load(std::memory_order_relaxed)};
}

ArtifactTotals end_artifacts() noexcept {
  ArtifactState& s = state();
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    s.on = false;
  }
  return artifact_totals();
}

Status record_artifact(UnitState& unit, std::string_view kind, std::string_view content,
                       std::string_view extension) noexcept {
  ArtifactState& s = state();
  return guarded_status("recording an artifact", [&]() -> Status {
    std::string dir;
    std::uint64_t max_bytes = 0;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (!s.on) {
        return Status::error(
            "artifacts are off: no session, or no artifacts folder (set Config::metrics_path "
            "or artifacts_dir, JITSCOPE_METRICS or JITSCOPE_ARTIFACTS)");
      }
      dir = s.dir;
      max_bytes = s.max_bytes;
    }
    if (!reserve(s, max_bytes, content.size())) {
      s.over_cap.fetch_add(1, std::memory_order_relaxed);
      if (!s.said_over_cap.exchange(true, std::memory_order_relaxed)) {
        log_line("artifacts: the session's bound of " + std::to_string(max_bytes) +
                 " bytes (max_artifact_bytes) is reached; later artifacts are counted, not "
                 "written");
      }
      return Status::error("artifact '" + std::string(kind) + "' (" +
                           std::to_string(content.size()) +
                           " bytes) is over the session's max_artifact_bytes");
    }
    const std::string id = std::to_string(unit.id.frame) + "_" + std::to_string(unit.id.attempt);
    const std::string folder = dir + "/" + id;
    ArtifactEntry entry;
    entry.kind = file_part(kind, "artifact");
    entry.bytes = content.size();
    entry.fnv1a = fnv1a_hex(content);
    const std::string ext = extension.empty() ? std::string() : "." + file_part(extension, "txt");
    {
      // The name is taken under the unit's lock, so that two threads
      // recording one kind never write one file.
      std::lock_guard<std::mutex> lock(unit.mutex);
      if (unit.closed) {  // first: a closed unit's record is shared, never touched
        s.reserved.fetch_sub(content.size(), std::memory_order_relaxed);
        return Status::error("the compile unit has already closed");
      }
      const auto same = std::count_if(unit.record.artifacts.begin(), unit.record.artifacts.end(),
                                      [&](const ArtifactEntry& a) { return a.kind == entry.kind; });
      entry.path = folder + "/" + entry.kind + (same > 0 ? "." + std::to_string(same) : "") + ext;
      unit.record.artifacts.push_back(entry);
    }
    if (!make_dirs(folder) || !write_file(entry.path, content)) {
      const int err = errno;
      s.reserved.fetch_sub(content.size(), std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(unit.mutex);
        auto& list = unit.record.artifacts;
        // A closed unit's record is shared as it is (finish_record) and
        // never touched: it keeps the entry, as the record written did.
        if (!unit.closed)
          list.erase(std::remove_if(list.begin(), list.end(),
                                    [&](const ArtifactEntry& a) { return a.path == entry.path; }),
                     list.end());
      }
      std::string why = "artifacts: writing " + entry.path + " failed: " + std::strerror(err);
      log_unique(why);
      return Status::error(std::move(why));
    }
    s.written.fetch_add(1, std::memory_order_relaxed);
    s.bytes.fetch_add(content.size(), std::memory_order_relaxed);
    return Status();
  });
}

void lock_artifacts_for_fork() noexcept { state().mutex.lock(); }
void unlock_artifacts_after_fork() noexcept { state().mutex.unlock(); }

}  // namespace jitscope::detail
