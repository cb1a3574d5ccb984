#include "common/cache_dir.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

namespace sample_common {

bool prepare_cache_dir(const char* sample, std::atomic<bool>& warned, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && std::filesystem::is_directory(dir, ec)) return true;
  warn_cache_write_once(sample, warned,
                        "cannot create the cache directory " + dir + ": " +
                            (ec ? ec.message() : std::string("not a directory")));
  return false;
}

void warn_cache_write_once(const char* sample, std::atomic<bool>& warned, const std::string& why) {
  // relaxed: only which thread prints matters, and exchange picks exactly one.
  if (warned.exchange(true, std::memory_order_relaxed)) return;
  std::fprintf(stderr, "%s: %s: compiled kernels are not cached in this run\n", sample,
               why.c_str());
}

}  // namespace sample_common
