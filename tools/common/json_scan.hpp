// The byte scanner behind TraceReader: finds where a JSON object, array or
// string that starts at some byte ends, resumable across buffer boundaries.
// It tracks strings (with escapes) and bracket nesting up to
// TraceReader::kMaxDepth, and checks that brackets match; it does not
// validate anything else (a JSON parser does that on the value it delimits).
// A backslash escapes the next byte wherever it is (outside a string it is
// not JSON anyway): the 64-byte block path and the byte loop agree on every
// input, so the chunk size never changes where an event ends.
// Internal to tools/common (the report's decoder uses it for raw args too).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace jitscope::tools {

// JSON's white space (space, tab, CR, LF).
constexpr bool is_json_ws(char c) noexcept {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// `s` without the JSON white space at either end: a scalar token as a parser
// hands it out ("7 " from `"pid": 7 }`) is a key and a splice, so 7 and 7
// must be one.
constexpr std::string_view trim_json_ws(std::string_view s) noexcept {
  while (!s.empty() && is_json_ws(s.back())) s.remove_suffix(1);
  while (!s.empty() && is_json_ws(s.front())) s.remove_prefix(1);
  return s;
}

class JsonScanState {
 public:
  static constexpr int kMaxDepth = 256;
  enum class Result {
    kComplete,    // *p is one past the value's last byte
    kNeedMore,    // ran out of bytes inside the value: call again with more
    kTooDeep,     // *p is the bracket that went past kMaxDepth
    kMismatched,  // *p is a closing bracket that does not match
  };

  void reset() noexcept {
    depth_ = 0;
    in_string_ = false;
    escape_ = false;
    started_ = false;
  }

  // Scans [*p, end); the first byte of the first call is the value's first
  // byte ('{', '[' or '"'). Bytes up to end + 64 must be readable (the
  // reader's buffer has kJsonPadding after its data); they are never used.
  Result advance(const char*& p, const char* end) noexcept;

  // The length of the object/array/string at [begin, end), or 0 when it does
  // not end inside the range or is malformed.
  static std::size_t match(const char* begin, const char* end) noexcept;

 private:
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
  bool started_ = false;
  char stack_[kMaxDepth];
};

}  // namespace jitscope::tools
