// jitscope-ctl's way in (tools/ctl): files beside the output path that ask
// this process's flight recorder for a snapshot, with no signal and no
// ptrace, so that a shell in the process's container, or the host through
// /proc/<pid>/root, can ask. Names: base/trace_paths.hpp.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <ctime>
#include <optional>
#include <string>

namespace jitscope::detail {

class SnapshotRequestFiles {
 public:
  // `pid` as this process sees its own. A request file for every process
  // that is already there at start is not a request.
  SnapshotRequestFiles(const std::string& output_path, long pid);
  // A request that came since the last call, with its reason ("" if it
  // gave none), or nullopt. The flusher calls it once a cycle: two
  // lstat() calls when no request waits.
  std::optional<std::string> take();

 private:
  // A file as last taken (or found at start): taken again only once it
  // changes (its inode, device or time).
  struct Seen {
    ino_t ino = 0;
    dev_t dev = 0;
    struct timespec mtime {};
    bool is(const struct stat& st) const;
    void set(const struct stat& st);
  };
  static std::optional<std::string> take_one(const std::string& path, Seen& seen, bool remove);

  std::string own_;     // this process's: removed once taken
  std::string shared_;  // every process's: left for the others
  Seen own_seen_;
  Seen shared_seen_;
};

// At most this many bytes of a request's reason are kept, control
// characters made spaces: it goes into a `jitscope:` line and the trigger.
inline constexpr std::size_t kMaxRequestReason = 200;

}  // namespace jitscope::detail
