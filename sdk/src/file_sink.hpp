// The trace's and the metrics file's output: whole buffers to a file
// descriptor. The first error is reported once and turns the output off; the
// session goes on discarding.
#pragma once

#include "trace_writer.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

class FileSink final : public TraceSink {
 public:
  FileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSink() override { close(); }

  void write(std::string_view bytes) noexcept override;
  void close() noexcept;
  bool failed() const noexcept { return failed_; }
  std::uint64_t bytes() const noexcept { return bytes_; }
  // Closes without a word and without flushing (a forked child's copy).
  void abandon() noexcept;

 private:
  void fail(const char* why) noexcept;
  int fd_;
  std::string path_;
  std::uint64_t bytes_ = 0;
  bool failed_ = false;
};

}  // namespace jitscope::detail
