// A tool's input as a byte stream: a file or stdin ("-"), plain or gzip,
// read in pieces. TraceReader reads through it; so may anything else that
// wants .gz input for free.
//
// Quickstart
//   jitscope::tools::InputFile in;
//   std::string error;
//   if (!in.open("trace.json.gz", &error)) die(error);   // "<path>: cannot open: ..."
//   char buf[65536];
//   for (;;) {
//     const long n = in.read(buf, sizeof buf, &error);   // the JSON text, inflated
//     if (n < 0) die(error);                             // "corrupt gzip data ..." (no path)
//     if (n == 0) break;                                 // the end
//   }
//
// Gzip
// - Detected by its magic bytes (1f 8b) at the start, whatever the name: a
//   trace.json that is gzip'd is read as gzip, a trace.json.gz that is not
//   as plain text. stdin too.
// - Concatenated members (`cat a.gz b.gz`, pigz, bgzip) are one stream,
//   their texts one after another; empty members are fine. After a member,
//   anything but another member's magic is an error (gzip(1) only warns).
// - Errors: corrupt data (zlib's reason, a bad CRC-32 or length included)
//   and a cut-off stream (the compressed input ends before its member's
//   end: a cut download, a writer killed mid-file) end the read; there is no
//   partial member on success, so the trailer check always ran. What was
//   inflated before the error has already been handed out.
// - Memory: a fixed 256 KiB compressed-input buffer and zlib's inflate state
//   (about 44 KiB with its 32 KiB window); the inflated text goes straight
//   into the caller's buffer. Nothing grows with the file.
// - Built without zlib (JITSCOPE_TOOLS_HAVE_ZLIB 0: zlib1g-dev missing at
//   configure time), gzip input is one clear error instead.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

namespace jitscope::tools {

class InputFile {
 public:
  enum class Compression { kNone, kGzip };
  static constexpr std::uint64_t kUnknownSize = std::numeric_limits<std::uint64_t>::max();
  // Compressed bytes per read(2) in gzip mode (fewer when read() asks for
  // fewer: tests reading 1 byte at a time cross every boundary).
  static constexpr std::size_t kCompressedChunk = std::size_t{256} << 10;

  InputFile();
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // Opens `path` ("-" = stdin, never closed) and looks at its first two
  // bytes. A path must name a regular file (a link to one is fine): a FIFO,
  // a device or a socket is refused before it is opened, so that nothing
  // blocks or reads forever (a pipe is read as stdin). false with *error =
  // "<label>: cannot open: <reason>", "<label>: is a directory", "<label>:
  // is not a regular file (a FIFO); to read a pipe, give it as stdin: -"
  // or "<label>: byte 0: read error: <reason>".
  bool open(const std::string& path, std::string* error);
  // "<stdin>" for "-", else the path.
  const std::string& label() const noexcept { return label_; }
  Compression compression() const noexcept { return compression_; }
  // The size of the text read() will give, when known (a plain regular
  // file; growing files read on); kUnknownSize otherwise (stdin, a pipe, gzip).
  std::uint64_t size_hint() const noexcept { return size_hint_; }

  // Up to `n` (> 0) bytes of the text into `dst`: how many (> 0), 0 at its
  // end, -1 with *error = what went wrong, without the label or an offset
  // ("read error: ...", "corrupt gzip data at compressed byte C: <zlib's
  // reason>", "the gzip stream is cut off at compressed byte C (no end of
  // member M)", ...): the caller says where it was in the text.
  long read(char* dst, std::size_t n, std::string* error);

  // Bytes read from the file or stdin so far (compressed, for gzip).
  std::uint64_t file_bytes() const noexcept { return file_bytes_; }
  // Gzip members finished so far.
  std::uint64_t gzip_members() const noexcept { return members_; }

 private:
  long read_raw(char* dst, std::size_t n, std::string* error);
  long inflate_into(char* dst, std::size_t n, std::string* error);
  void close() noexcept;

  struct Gzip;  // zlib's state and the compressed-input buffer
  std::string label_;
  int fd_ = -1;
  bool owns_fd_ = false;
  Compression compression_ = Compression::kNone;
  std::uint64_t size_hint_ = kUnknownSize;
  unsigned char head_[2] = {0, 0};  // the first bytes, read to detect gzip
  std::size_t head_len_ = 0;
  std::size_t head_pos_ = 0;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t members_ = 0;
  std::unique_ptr<Gzip> gz_;
};

}  // namespace jitscope::tools
