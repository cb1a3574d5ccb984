// The on-disk kernel cache (see disk_cache.hpp for the contract).
//
// Entry layout: a text header, then the PTX and the cubin bytes.
//   mlir_gpu cache entry 1
//   key <hash> <key bytes>
//   <key text>
//   ptx <ptx bytes> cubin <cubin bytes> sum <FNV-1a of both>
//   <ptx><cubin>
#include "disk_cache.hpp"

#include "common/cache_dir.hpp"
#include "common/fnv1a.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace mlir_gpu {
namespace {

constexpr const char* kMagic = "mlir_gpu cache entry 1\n";

using sample_common::fnv1a;
using sample_common::hex16;

std::string sum_of(const std::string& ptx, const std::vector<char>& cubin) {
  return hex16(fnv1a(cubin.data(), cubin.size(), fnv1a(ptx.data(), ptx.size())));
}

// Why `text` is not a valid entry for `key_text`; empty if it is (*out filled).
std::string parse_entry(const std::string& text, const std::string& key_text, CachedKernel* out) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line + "\n" != kMagic) return "no entry header";
  char hash[17] = {};
  unsigned long long key_bytes = 0;
  if (!std::getline(in, line) || std::sscanf(line.c_str(), "key %16s %llu", hash, &key_bytes) != 2)
    return "bad key line";
  std::size_t pos = static_cast<std::size_t>(in.tellg());
  if (key_bytes != key_text.size() || text.compare(pos, key_bytes, key_text) != 0)
    return "collision";
  pos += key_bytes;
  if (pos >= text.size() || text[pos] != '\n') return "truncated key";
  const std::size_t eol = text.find('\n', pos + 1);
  if (eol == std::string::npos) return "no size line";
  unsigned long long ptx_bytes = 0, cubin_bytes = 0;
  char sum[17] = {};
  if (std::sscanf(text.c_str() + pos + 1, "ptx %llu cubin %llu sum %16s", &ptx_bytes, &cubin_bytes,
                  sum) != 3)
    return "bad size line";
  pos = eol + 1;
  if (text.size() - pos != ptx_bytes + cubin_bytes) return "truncated body";
  out->ptx.assign(text, pos, ptx_bytes);
  out->cubin.assign(text.begin() + static_cast<std::ptrdiff_t>(pos + ptx_bytes), text.end());
  if (sum_of(out->ptx, out->cubin) != sum) return "checksum mismatch";
  if (out->cubin.size() < 4 || std::memcmp(out->cubin.data(),
                                           "\x7f"
                                           "ELF",
                                           4) != 0)
    return "the cubin is not ELF";
  return {};
}

}  // namespace

std::string fnv1a_hex(const char* data, std::size_t size) { return hex16(fnv1a(data, size)); }

std::string DiskCache::key_hash(const std::string& key_text) {
  return fnv1a_hex(key_text.data(), key_text.size());
}

bool DiskCache::prepare() {
  return sample_common::prepare_cache_dir("mlir_gpu", write_warned_, dir_);
}

std::string DiskCache::entry_path(const std::string& kernel, const std::string& hash) const {
  return dir_ + "/" + kernel + "-" + hash + ".entry";
}

bool DiskCache::load(const std::string& kernel, const std::string& key_text,
                     CachedKernel* out) const {
  const std::string path = entry_path(kernel, key_hash(key_text));
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;  // not cached (yet)
  std::ostringstream text;
  text << in.rdbuf();
  const std::string why = parse_entry(text.str(), key_text, out);
  if (why.empty()) return true;
  std::fprintf(
      stderr, "mlir_gpu: cache entry %s is %s: recompiling\n", path.c_str(),
      why == "collision" ? "another key's (a hash collision)" : ("corrupt (" + why + ")").c_str());
  *out = CachedKernel{};
  return false;
}

bool DiskCache::store(const std::string& kernel, const std::string& key_text,
                      const CachedKernel& entry) {
  const std::string hash = key_hash(key_text);
  const std::string path = entry_path(kernel, hash);
  // Unique per process and store: concurrent writers never share a temp file.
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." +
                           std::to_string(temp_counter_.fetch_add(1, std::memory_order_relaxed));
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << kMagic << "key " << hash << " " << key_text.size() << "\n"
        << key_text << "\nptx " << entry.ptx.size() << " cubin " << entry.cubin.size() << " sum "
        << sum_of(entry.ptx, entry.cubin) << "\n"
        << entry.ptx;
    out.write(entry.cubin.data(), static_cast<std::streamsize>(entry.cubin.size()));
    out.close();
    if (!out) {
      warn_write_once("cannot write " + temp);
      std::remove(temp.c_str());
      return false;
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    warn_write_once("cannot rename " + temp + " to " + path + ": " + std::strerror(errno));
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

void DiskCache::warn_write_once(const std::string& why) {
  sample_common::warn_cache_write_once("mlir_gpu", write_warned_, why);
}

}  // namespace mlir_gpu
