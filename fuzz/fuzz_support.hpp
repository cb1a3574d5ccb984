// What the fuzz targets share: a failed check that libFuzzer reports, inputs
// handed to path-taking readers through memfd files, the JSON writer's
// escaping rules written out a second, independent way, and splitting an
// input into parts at a separator line.
#pragma once

#include "utf8_reference.hpp"  // tests/: shared with the test suite

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::fuzz {

// A violated property: print it and abort(), which libFuzzer reports as a
// crash and saves the input for.
[[noreturn]] inline void fail(const char* file, int line, const char* what,
                              std::string_view detail) {
  std::fprintf(stderr, "FUZZ CHECK FAILED at %s:%d: %s\n", file, line, what);
  if (!detail.empty()) {
    std::fprintf(stderr, "  detail (%zu bytes): %.*s\n", detail.size(),
                 static_cast<int>(detail.size() > 2000 ? 2000 : detail.size()), detail.data());
  }
  std::abort();
}
#define FUZZ_CHECK(cond, detail) \
  ((cond) ? static_cast<void>(0) : ::jitscope::fuzz::fail(__FILE__, __LINE__, #cond, (detail)))

// An anonymous in-memory file (memfd_create: nothing on disk, gone when
// closed) that path-taking readers open as /proc/self/fd/N. One per process,
// reused for every input.
class MemFile {
 public:
  explicit MemFile(const char* name) {
    fd_ = ::memfd_create(name, MFD_CLOEXEC);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the file's contents with `bytes`.
  void set(std::string_view bytes) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n =
          ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
  const std::string& path() const noexcept { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

using jitscope::testing::replace_invalid_utf8;

// The JSON string literal the writer promises for `s` (json_writer.hpp):
// '"', '\\' and the short escapes \b \f \n \r \t, other bytes < 0x20 as
// \u00xx (lower-case hex), 0x7F and everything else as is, after invalid
// UTF-8 became U+FFFD.
inline std::string expected_json_string(std::string_view s) {
  const std::string clean = replace_invalid_utf8(s);
  std::string out = "\"";
  for (char ch : clean) {
    const unsigned c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(ch);
        }
    }
  }
  out.push_back('"');
  return out;
}

// `input` cut at each occurrence of `separator` (at most max_parts parts;
// the last part keeps any further separators).
inline std::vector<std::string_view> split(std::string_view input, std::string_view separator,
                                           std::size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    const std::size_t at = input.find(separator);
    if (at == std::string_view::npos) break;
    parts.push_back(input.substr(0, at));
    input.remove_prefix(at + separator.size());
  }
  parts.push_back(input);
  return parts;
}

}  // namespace jitscope::fuzz
