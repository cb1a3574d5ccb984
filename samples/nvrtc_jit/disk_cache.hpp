// The on-disk cubin cache, shared by threads and processes.
//
// Key: the text of everything that decides the cubin (the source, every
// NVRTC and nvJitLink option, the architecture, both libraries' versions);
// the file name carries its 64-bit FNV-1a hash, and the entry stores the
// whole key text, compared on every hit, so a hash collision is a miss and
// never the wrong cubin. Entries are written to a temporary file and renamed
// into place, so a reader in another process sees a whole entry or none.
// A corrupt or unreadable entry is a miss with one stderr line; a cache
// directory that cannot be written is reported once, and the run goes on.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace nvrtc_jit {

struct Toolchain;

// The compile unit that stored an entry: its process, its compile id
// ("frame/attempt") and the run it was part of (worker_processes.hpp's
// run_id). A unit of the same run that reads the entry waited for that one
// (jitscope::CompileUnit::waits_for: the critical path).
struct CubinProducer {
  long long pid = 0;  // 0: not known (an entry without it, or stored untraced)
  std::string compile_id;
  std::string run;
};

struct CachedCubin {
  std::vector<char> cubin;
  std::uint64_t ltoir_bytes = 0;  // the LTO-IR it was linked from (for the record)
  CubinProducer producer;
};

class DiskCache {
 public:
  // `dir` should be absolute (worker processes get the same path).
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}

  const std::string& dir() const { return dir_; }

  // Creates the directory. On failure: one stderr line, false; lookups then
  // miss and stores do nothing (the run goes on uncached).
  bool prepare();

  static std::string key_text(const Toolchain& tc, const std::string& kernel_name,
                              const std::string& source);
  static std::string key_hash(const std::string& key_text);  // 16 hex digits

  enum class Lookup { kHit, kMiss, kBad };  // kBad: corrupt, unreadable or a collision (said once)
  Lookup load(const std::string& kernel_name, const std::string& key_text, CachedCubin* out) const;
  // Atomic (temporary file + rename). False on failure; the first failure
  // in this process prints one line.
  bool store(const std::string& kernel_name, const std::string& key_text,
             const std::vector<char>& cubin, std::uint64_t ltoir_bytes,
             const CubinProducer& producer = {});

  std::string entry_path(const std::string& kernel_name, const std::string& hash) const;

 private:
  void warn_write_once(const std::string& why);

  std::string dir_;
  std::atomic<bool> write_warned_{false};
  std::atomic<std::uint64_t> temp_counter_{0};
};

}  // namespace nvrtc_jit
