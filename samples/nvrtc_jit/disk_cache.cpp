// The on-disk cubin cache (see disk_cache.hpp for the contract).
//
// Entry layout: a text header, then the cubin bytes.
//   nvrtc_jit cache entry 1
//   key <hash> <key bytes>
//   <key text>
//   cubin <cubin bytes> <cubin FNV-1a> ltoir <ltoir bytes>[ by <pid> <compile id> <run>]
//   <cubin>
// The " by" part (the unit that stored it, and its run) is optional:
// entries without it are read as before.
#include "disk_cache.hpp"

#include "common/cache_dir.hpp"
#include "common/fnv1a.hpp"
#include "toolchain.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace nvrtc_jit {
namespace {

constexpr const char* kMagic = "nvrtc_jit cache entry 1\n";
constexpr std::size_t kMaxEntryBytes = std::size_t{256} << 20;  // a cubin here is ~10 KiB

using sample_common::fnv1a;
using sample_common::hex16;

// Reads a whole file; errno-style error in *err (0: ok).
bool read_file(const std::string& path, std::string* out, int* err) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *err = errno;
    ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > kMaxEntryBytes) {
    *err = S_ISREG(st.st_mode) ? EFBIG : EISDIR;
    ::close(fd);
    return false;
  }
  out->resize(static_cast<std::size_t>(st.st_size));
  std::size_t done = 0;
  while (done < out->size()) {
    const ssize_t n = ::read(fd, out->data() + done, out->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  out->resize(done);  // a file that shrank while read: the checks below refuse it
  *err = 0;
  return true;
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Takes one '\n'-terminated line from `text` at `*pos`.
bool next_line(const std::string& text, std::size_t* pos, std::string* line) {
  const std::size_t end = text.find('\n', *pos);
  if (end == std::string::npos) return false;
  line->assign(text, *pos, end - *pos);
  *pos = end + 1;
  return true;
}

// Why `text` is not a valid entry for `key_text`; empty if it is (and *out is filled).
std::string parse_entry(const std::string& text, const std::string& key_text, CachedCubin* out) {
  const std::size_t magic_size = std::strlen(kMagic);
  if (text.compare(0, magic_size, kMagic) != 0) return "no entry header";
  std::size_t pos = magic_size;
  std::string line;
  char hash[17] = {};
  unsigned long long key_bytes = 0;
  if (!next_line(text, &pos, &line) ||
      std::sscanf(line.c_str(), "key %16s %llu", hash, &key_bytes) != 2) {
    return "bad key line";
  }
  if (key_bytes > text.size() - pos) return "truncated key";
  if (text.compare(pos, key_bytes, key_text) != 0 || key_bytes != key_text.size()) {
    return "collision";
  }
  pos += key_bytes;
  if (pos >= text.size() || text[pos] != '\n') return "truncated key";
  ++pos;
  unsigned long long cubin_bytes = 0, ltoir_bytes = 0;
  long long producer_pid = 0;
  char sum[17] = {}, producer_id[24] = {}, run[17] = {};
  if (!next_line(text, &pos, &line)) return "bad cubin line";
  const int fields = std::sscanf(line.c_str(), "cubin %llu %16s ltoir %llu by %lld %23s %16s",
                                 &cubin_bytes, sum, &ltoir_bytes, &producer_pid, producer_id, run);
  if (fields != 3 && fields != 6) return "bad cubin line";
  if (cubin_bytes != text.size() - pos) {
    return "the cubin is " + std::to_string(text.size() - pos) + " bytes, the header says " +
           std::to_string(cubin_bytes);
  }
  if (cubin_bytes < 4 || text.compare(pos, 4,
                                      "\x7f"
                                      "ELF") != 0)
    return "the cubin is not ELF";
  if (hex16(fnv1a(text.data() + pos, cubin_bytes)) != sum) return "the cubin's checksum is wrong";
  out->cubin.assign(text.begin() + static_cast<std::ptrdiff_t>(pos), text.end());
  out->ltoir_bytes = ltoir_bytes;
  if (fields == 6 && producer_pid > 0) out->producer = {producer_pid, producer_id, run};
  return {};
}

}  // namespace

bool DiskCache::prepare() {
  return sample_common::prepare_cache_dir("nvrtc_jit", write_warned_, dir_);
}

std::string DiskCache::key_text(const Toolchain& tc, const std::string& kernel_name,
                                const std::string& source) {
  std::string key = "nvrtc " + tc.nvrtc_version + "\nnvjitlink " + tc.nvjitlink_version +
                    "\narch " + tc.arch + "\nnvrtc options";
  for (const std::string& o : tc.nvrtc_options) key += " " + o;
  key += "\nnvjitlink options";
  for (const std::string& o : tc.link_options) key += " " + o;
  key += "\nkernel " + kernel_name + "\nsource " + std::to_string(source.size()) + "\n" + source;
  return key;
}

std::string DiskCache::key_hash(const std::string& key_text) {
  return hex16(fnv1a(key_text.data(), key_text.size()));
}

std::string DiskCache::entry_path(const std::string& kernel_name, const std::string& hash) const {
  return dir_ + "/" + kernel_name + "-" + hash + ".entry";
}

DiskCache::Lookup DiskCache::load(const std::string& kernel_name, const std::string& key_text,
                                  CachedCubin* out) const {
  const std::string path = entry_path(kernel_name, key_hash(key_text));
  std::string text;
  int err = 0;
  if (!read_file(path, &text, &err)) {
    if (err == ENOENT || err == ENOTDIR) return Lookup::kMiss;  // not cached (yet)
    std::fprintf(stderr, "nvrtc_jit: cache entry %s is unreadable (%s): recompiling\n",
                 path.c_str(), std::strerror(err));
    return Lookup::kBad;
  }
  const std::string why = parse_entry(text, key_text, out);
  if (why.empty()) return Lookup::kHit;
  if (why == "collision") {
    std::fprintf(stderr,
                 "nvrtc_jit: cache entry %s holds another key (a hash collision): recompiling\n",
                 path.c_str());
  } else {
    std::fprintf(stderr, "nvrtc_jit: cache entry %s is corrupt (%s): recompiling\n", path.c_str(),
                 why.c_str());
  }
  out->cubin.clear();
  return Lookup::kBad;
}

bool DiskCache::store(const std::string& kernel_name, const std::string& key_text,
                      const std::vector<char>& cubin, std::uint64_t ltoir_bytes,
                      const CubinProducer& producer) {
  const std::string hash = key_hash(key_text);
  const std::string path = entry_path(kernel_name, hash);
  const std::string header =
      std::string(kMagic) + "key " + hash + " " + std::to_string(key_text.size()) + "\n" +
      key_text + "\ncubin " + std::to_string(cubin.size()) + " " +
      hex16(fnv1a(cubin.data(), cubin.size())) + " ltoir " + std::to_string(ltoir_bytes) +
      (producer.pid > 0 && !producer.compile_id.empty() && !producer.run.empty()
           ? " by " + std::to_string(producer.pid) + " " + producer.compile_id + " " + producer.run
           : std::string()) +
      "\n";
  // Unique per process and store: concurrent writers never share a temp file.
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                           std::to_string(temp_counter_.fetch_add(1, std::memory_order_relaxed));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    warn_write_once("cannot write " + temp + ": " + std::strerror(errno));
    return false;
  }
  const bool written =
      write_all(fd, header.data(), header.size()) && write_all(fd, cubin.data(), cubin.size());
  const int write_errno = errno;
  if (::close(fd) != 0 || !written) {
    warn_write_once("cannot write " + temp + ": " + std::strerror(written ? errno : write_errno));
    ::unlink(temp.c_str());
    return false;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    warn_write_once("cannot rename " + temp + " to " + path + ": " + std::strerror(errno));
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

void DiskCache::warn_write_once(const std::string& why) {
  sample_common::warn_cache_write_once("nvrtc_jit", write_warned_, why);
}

}  // namespace nvrtc_jit
