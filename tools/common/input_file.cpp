#include "input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#if JITSCOPE_TOOLS_HAVE_ZLIB
#include <zlib.h>
#endif

namespace jitscope::tools {
namespace {

constexpr unsigned char kGzipMagic[2] = {0x1f, 0x8b};

// read(2) past EINTR.
long read_fd(int fd, char* dst, std::size_t n) {
  ssize_t got;
  do {
    got = ::read(fd, dst, n);
  } while (got < 0 && errno == EINTR);
  return static_cast<long>(got);
}

// "<label>: is a directory", or "<label>: is not a regular file (a FIFO) ...".
std::string not_regular(const std::string& label, mode_t mode) {
  if (S_ISDIR(mode)) return label + ": is a directory";
  const char* kind = S_ISFIFO(mode)   ? "a FIFO"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                     : S_ISSOCK(mode) ? "a socket"
                                      : "not a file";
  return label + ": is not a regular file (" + kind + "); to read a pipe, give it as stdin: -";
}

}  // namespace

#if JITSCOPE_TOOLS_HAVE_ZLIB
struct InputFile::Gzip {
  z_stream zs{};
  bool initialized = false;
  std::vector<unsigned char> in = std::vector<unsigned char>(kCompressedChunk);
  bool in_eof = false;           // the file has no more bytes
  bool between_members = false;  // a member ended: the next byte starts another, or the end
  std::string error;             // met after text that was handed out: said at the next call

  ~Gzip() {
    if (initialized) inflateEnd(&zs);
  }
};
#else
struct InputFile::Gzip {};
#endif

InputFile::InputFile() = default;
InputFile::~InputFile() { close(); }

void InputFile::close() noexcept {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  fd_ = -1;
  owns_fd_ = false;
  gz_.reset();
}

bool InputFile::open(const std::string& path, std::string* error) {
  close();
  compression_ = Compression::kNone;
  size_hint_ = kUnknownSize;
  head_len_ = head_pos_ = 0;
  file_bytes_ = 0;
  members_ = 0;
  const bool from_stdin = path == "-";
  label_ = from_stdin ? "<stdin>" : path;
  if (from_stdin) {
    fd_ = 0;
  } else {
    // Only a regular file, looked at before it is opened: opening a FIFO
    // waits for a writer (forever, if none comes: `--children` listing
    // one hung), and a device may never end. A pipe is read as stdin.
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      *error = not_regular(label_, st.st_mode);
      return false;
    }
    // O_NONBLOCK: should a FIFO take its place before the open, the open
    // returns at once, and the check below refuses it.
    do {
      fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) {
      const int err = errno;
      *error = label_ + ": cannot open: " + std::strerror(err);
      return false;
    }
    owns_fd_ = true;
    if (::fstat(fd_, &st) == 0 && !S_ISREG(st.st_mode)) {
      *error = not_regular(label_, st.st_mode);
      close();
      return false;
    }
    (void)::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
  }
  struct stat st {};
  if (::fstat(fd_, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      *error = label_ + ": is a directory";
      close();
      return false;
    }
    if (S_ISREG(st.st_mode)) size_hint_ = static_cast<std::uint64_t>(st.st_size);
  }
  // The first two bytes say gzip or not (a pipe may give them one at a time).
  while (head_len_ < sizeof head_) {
    const long got =
        read_fd(fd_, reinterpret_cast<char*>(head_) + head_len_, sizeof head_ - head_len_);
    if (got < 0) {
      const int err = errno;
      *error = label_ + ": byte 0: read error: " + std::strerror(err);
      close();
      return false;
    }
    if (got == 0) break;
    head_len_ += static_cast<std::size_t>(got);
    file_bytes_ += static_cast<std::uint64_t>(got);
  }
  if (head_len_ < 2 || std::memcmp(head_, kGzipMagic, 2) != 0) return true;

  compression_ = Compression::kGzip;
  size_hint_ = kUnknownSize;  // the text's size is not the file's
#if JITSCOPE_TOOLS_HAVE_ZLIB
  gz_ = std::make_unique<Gzip>();
  // 15 + 16: a 32 KiB window, gzip wrapping only (a zlib or raw stream is an error).
  if (inflateInit2(&gz_->zs, 15 + 16) != Z_OK) {
    *error = label_ + ": cannot start zlib's inflate (out of memory)";
    close();
    return false;
  }
  gz_->initialized = true;
  std::memcpy(gz_->in.data(), head_, head_len_);
  gz_->zs.next_in = gz_->in.data();
  gz_->zs.avail_in = static_cast<uInt>(head_len_);
  head_pos_ = head_len_;
  return true;
#else
  *error = label_ +
           ": gzip input (it starts with 1f 8b), but the tools were built without zlib "
           "(install zlib1g-dev and rebuild, or decompress it first: gzip -dc FILE)";
  close();
  return false;
#endif
}

long InputFile::read(char* dst, std::size_t n, std::string* error) {
  if (n == 0) return 0;
  if (compression_ == Compression::kGzip) return inflate_into(dst, n, error);
  return read_raw(dst, n, error);
}

// The file's bytes as they are: first the two read by open().
long InputFile::read_raw(char* dst, std::size_t n, std::string* error) {
  std::size_t copied = 0;
  if (head_pos_ < head_len_) {
    copied = std::min(n, head_len_ - head_pos_);
    std::memcpy(dst, head_ + head_pos_, copied);
    head_pos_ += copied;
    if (copied == n) return static_cast<long>(copied);
  }
  const long got = read_fd(fd_, dst + copied, n - copied);
  if (got < 0) {
    const int err = errno;
    *error = std::string("read error: ") + std::strerror(err);
    return -1;
  }
  file_bytes_ += static_cast<std::uint64_t>(got);
  return static_cast<long>(copied) + got;
}

#if JITSCOPE_TOOLS_HAVE_ZLIB
// Inflates into dst until it is full, the last member ends, or an error.
long InputFile::inflate_into(char* dst, std::size_t n, std::string* error) {
  Gzip& g = *gz_;
  if (!g.error.empty()) {  // met after the text the last call handed out
    *error = g.error;
    return -1;
  }
  z_stream& zs = g.zs;
  // avail_out is a uInt: a huge request is served in part (a short read).
  const std::size_t want = std::min<std::size_t>(n, std::size_t{1} << 30);
  zs.next_out = reinterpret_cast<Bytef*>(dst);
  zs.avail_out = static_cast<uInt>(want);
  auto produced = [&] { return static_cast<long>(want - zs.avail_out); };
  auto at = [&] { return std::to_string(file_bytes_ - zs.avail_in); };
  // An error after some text: that text first, the error at the next call,
  // so that the caller's offset is where the text stopped.
  auto fail = [&](std::string what) -> long {
    if (produced() == 0) {
      *error = std::move(what);
      return -1;
    }
    g.error = std::move(what);
    return produced();
  };
  while (zs.avail_out > 0) {
    if (zs.avail_in == 0 && !g.in_eof) {
      // As many compressed bytes as asked for, up to the buffer: tiny
      // requests (the tests' 1-byte chunks) cross every boundary.
      const std::size_t ask = std::min(g.in.size(), want);
      std::string why;
      const long got = read_raw(reinterpret_cast<char*>(g.in.data()), ask, &why);
      if (got < 0) return fail(why);
      if (got == 0) g.in_eof = true;
      zs.next_in = g.in.data();
      zs.avail_in = static_cast<uInt>(got);
    }
    if (g.between_members) {
      if (zs.avail_in == 0) {
        if (g.in_eof) return produced();  // the end, after a whole member
        continue;
      }
      // gzip(1) warns and ignores trailing garbage; here it is an error
      // (zlib checks the second magic byte and the rest of the header).
      if (zs.next_in[0] != kGzipMagic[0]) {
        return fail("data after gzip member " + std::to_string(members_) +
                    " is not gzip (compressed byte " + at() + ")");
      }
      inflateReset(&zs);
      g.between_members = false;
    }
    const int ret = inflate(&zs, Z_NO_FLUSH);
    switch (ret) {
      case Z_OK: break;
      case Z_STREAM_END:
        ++members_;
        g.between_members = true;
        break;
      case Z_BUF_ERROR:  // no progress possible
        if (zs.avail_in == 0 && g.in_eof) {
          return fail("the gzip stream is cut off at compressed byte " + at() + " (member " +
                      std::to_string(members_ + 1) + " has no end)");
        }
        if (zs.avail_in > 0) {
          return fail("corrupt gzip data at compressed byte " + at() +
                      ": inflate made no progress");
        }
        break;  // needs input: read more
      case Z_MEM_ERROR: return fail("out of memory in zlib's inflate");
      default:  // Z_DATA_ERROR (a bad block, CRC-32 or length), Z_NEED_DICT, Z_STREAM_ERROR
        return fail("corrupt gzip data at compressed byte " + at() + ": " +
                    (zs.msg != nullptr ? zs.msg : "inflate error " + std::to_string(ret)));
    }
  }
  return produced();
}
#else
long InputFile::inflate_into(char*, std::size_t, std::string* error) {
  *error = "gzip input, but the tools were built without zlib";
  return -1;
}
#endif

}  // namespace jitscope::tools
