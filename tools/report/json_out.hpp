// A small JSON writer for the report's --format json: it places separators,
// escapes every string (quotes, backslashes, control characters; invalid
// UTF-8 becomes U+FFFD), and writes int64 numbers exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::report {

class JsonOut {
 public:
  explicit JsonOut(std::string& out) : out_(out) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  void key(std::string_view k);

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(std::int64_t v);
  void value(std::uint64_t v);
  void value(bool b);
  void null();

  template <typename T>
  void member(std::string_view k, const T& v) {
    key(k);
    value(v);
  }

  // Appends the quoted, escaped form of `s` to `out`.
  static void append_string(std::string& out, std::string_view s);

 private:
  void open(char c);
  void close(char c);
  void before_value();

  std::string& out_;
  bool need_comma_ = false;
  bool after_key_ = false;
};

}  // namespace jitscope::report
