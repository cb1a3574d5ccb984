// An output file a tool writes without damaging what is at its path
// (docs/tools.md, "never damage what they write to"):
// - a regular file, or a path with nothing there yet: written to a new
//   temporary file next to it and renamed over it by commit(), so a reader
//   never sees a half-written output and a failed run leaves the old file;
// - a device or a FIFO (/dev/null, a pipe to a viewer): written in place,
//   never replaced (a rename would replace the node and cut off its reader);
// - a symbolic link: followed to the file it ends at, which gets the output
//   as above; the link stays;
// - a directory: refused.
// Neither tool may write over its own input: same_file() says whether an
// output path is an input file, however either is named.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace jitscope::tools {

class OutputFile {
 public:
  // `what` names the output in messages: "<path>: cannot write <what>: ...".
  explicit OutputFile(std::string what = "the output") : what_(std::move(what)) {}
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // An uncommitted temporary file is removed.
  ~OutputFile();

  // false with `*error` set: nothing was created.
  bool open(const std::string& path, std::string* error);
  // Buffered; written out past 4 MiB and at commit().
  bool write(std::string_view bytes, std::string* error);
  // Writes what is buffered and puts the file in place (fsync and rename
  // for a temporary). false: the old file at the path is untouched.
  bool commit(std::string* error);

 private:
  bool flush(std::string* error);

  std::string what_;
  std::string path_;    // as given
  std::string target_;  // path_ past its links
  std::string tmp_;     // the temporary, while there is one
  std::string buf_;
  int fd_ = -1;
};

// Whether writing `output` would replace the regular file `input` is ("-":
// the file stdin reads, if it is one): the same device and inode, so another
// spelling, a hard link or a symbolic link to it count. False when either
// does not exist or is not a regular file (a device or FIFO output is
// written in place, and non-regular inputs are refused: input_file.hpp).
bool same_file(const std::string& output, const std::string& input) noexcept;

}  // namespace jitscope::tools
