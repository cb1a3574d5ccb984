// Gzip for the tools' tests, written with zlib in the test (not through
// the code under test): one member in memory, or a big stream to a file
// through a fixed buffer.
#pragma once

#include <zlib.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::testing {

// `text` as one gzip member (deflate in a gzip wrapper, as gzip(1) writes it).
inline std::string gzip_member(std::string_view text, int level = 6) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int ret = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (ret != Z_STREAM_END) throw std::runtime_error("deflate");
  return out;
}

// A gzip file written as a stream: memory is zlib's state and 1 MiB.
class GzipFileWriter {
 public:
  GzipFileWriter(const std::string& path, int level) : f_(std::fopen(path.c_str(), "wb")) {
    if (f_ == nullptr ||
        deflateInit2(&zs_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw std::runtime_error("cannot write " + path);
    }
  }
  ~GzipFileWriter() {
    if (f_ != nullptr) finish();
  }
  void write(std::string_view text) { pump(text, Z_NO_FLUSH); }
  void finish() {
    pump({}, Z_FINISH);
    deflateEnd(&zs_);
    std::fclose(f_);
    f_ = nullptr;
  }
  unsigned long long compressed_bytes() const { return written_; }

 private:
  void pump(std::string_view text, int flush) {
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    zs_.avail_in = static_cast<uInt>(text.size());
    for (;;) {
      zs_.next_out = reinterpret_cast<Bytef*>(buf_.data());
      zs_.avail_out = static_cast<uInt>(buf_.size());
      const int ret = deflate(&zs_, flush);
      const std::size_t n = buf_.size() - zs_.avail_out;
      if (std::fwrite(buf_.data(), 1, n, f_) != n) throw std::runtime_error("fwrite");
      written_ += n;
      if (ret == Z_STREAM_END) return;
      if (ret != Z_OK && ret != Z_BUF_ERROR) throw std::runtime_error("deflate");
      if (flush == Z_NO_FLUSH && zs_.avail_in == 0 && zs_.avail_out != 0) return;
    }
  }
  std::FILE* f_;
  z_stream zs_{};
  std::vector<char> buf_ = std::vector<char>(std::size_t{1} << 20);
  unsigned long long written_ = 0;
};

}  // namespace jitscope::testing
