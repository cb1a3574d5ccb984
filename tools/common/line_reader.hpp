// The lines of an InputFile (a file or stdin, plain or gzip), one at a
// time: what a JSON-lines input (the report's --metrics file) reads through,
// so that `metrics.jsonl.gz` works as the trace's `.json.gz` does.
//
// Quickstart
//   jitscope::tools::InputFile in;
//   if (!in.open(path, &error)) die(error);
//   jitscope::tools::LineReader lines(in);
//   std::string line;
//   while (lines.next(&line, &error)) { /* line, without its '\n' */ }
//   if (!error.empty()) die(in.label() + ": " + error);   // "read error: ...", gzip errors
//
// Lines end at '\n' (a '\r' before it stays in the line, as std::getline
// leaves it); the last line may have no '\n'; an empty input has no lines.
// Memory: a 64 KiB buffer plus the longest line.
#pragma once

#include "input_file.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace jitscope::tools {

class LineReader {
 public:
  explicit LineReader(InputFile& in) : in_(in) {}

  // The next line into *line: true; false at the end of the input (*error
  // cleared) or on a read error (*error = InputFile::read's reason).
  bool next(std::string* line, std::string* error);

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{64} << 10;
  InputFile& in_;
  std::vector<char> buf_ = std::vector<char>(kBufferBytes);
  std::size_t pos_ = 0, end_ = 0;
  bool eof_ = false;
};

}  // namespace jitscope::tools
