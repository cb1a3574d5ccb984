// The on-disk cache of compiled kernels: PTX and cubin per kernel.
//
// Key: the text of everything that decides the output (the MLIR source, the
// MLIR pipeline, LLVM's version, target and level, nvJitLink's version and
// options); the file name carries its 64-bit FNV-1a hash, and the entry
// keeps the whole key text, compared on every hit, so a hash collision is a
// miss and never the wrong cubin. Entries are written to a temporary file
// and renamed into place, so a reader sees a whole entry or none. A corrupt
// entry is a miss with one stderr line; an unwritable directory is reported
// once and the run goes on uncached.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir_gpu {

struct CachedKernel {
  std::string ptx;
  std::vector<char> cubin;
};

class DiskCache {
 public:
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  // Creates the directory; false (said once) when it cannot.
  bool prepare();

  static std::string key_hash(const std::string& key_text);  // 16 hex digits

  // True on a hit (*out filled); a missing entry is a quiet miss, a bad one a said one.
  bool load(const std::string& kernel, const std::string& key_text, CachedKernel* out) const;
  // False when it could not be written (the first failure is said).
  bool store(const std::string& kernel, const std::string& key_text, const CachedKernel& entry);

 private:
  std::string entry_path(const std::string& kernel, const std::string& hash) const;
  void warn_write_once(const std::string& why);

  std::string dir_;
  std::atomic<bool> write_warned_{false};
  std::atomic<std::uint64_t> temp_counter_{0};
};

// FNV-1a of `size` bytes as 16 hex digits: the hashes in records and keys.
std::string fnv1a_hex(const char* data, std::size_t size);

}  // namespace mlir_gpu
