// jitscope internal JSON writer: the only way trace output is turned into text.
//
// Quickstart:
//   std::string out;
//   jitscope::detail::JsonWriter w(out);
//   w.begin_object();
//   w.member("name", event_name);   // any bytes; escaped, invalid UTF-8 -> U+FFFD
//   w.member("ph", "X");
//   w.key("ts");  w.value_us(ts_ns); // ns in, µs with three decimals out
//   w.member("tid", tid);
//   w.end_object();                  // {"name":"...","ph":"X","ts":1234.567,"tid":7}
//
// Cost: a six-member trace event ({"name","ph","ts","dur","pid","tid"}) formats in roughly
// 40-50 ns on one x86-64 core (-O2), i.e. > 20 M events/s. Plain printable ASCII is copied
// in bulk, 8 bytes per step; valid multi-byte UTF-8 is validated and copied; numbers go
// through std::to_chars (no locale, no iostreams).
//
// Guarantees: every output is valid JSON text for any input bytes, provided the caller
// balances begin_*/end_* and puts key() only inside objects (the writer keeps one separator
// flag, not a structure stack, so it does not check that and has no nesting limit). Nothing
// throws except std::bad_alloc from std::string growth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace jitscope::detail {

// Appends the escaped body of a JSON string (no surrounding quotes). '"', '\\' and bytes
// < 0x20 are escaped (short forms where JSON has them, else \u00XX); 0x7F passes through.
// Invalid UTF-8 becomes U+FFFD, one per maximal invalid subpart (Unicode ch. 3, the WHATWG
// decoder's rule): "\xE2\x82" -> one U+FFFD, "\xC0\x80" -> two.
void append_json_string_body(std::string& out, std::string_view s);
// Appends '"' + body + '"'.
void append_json_string(std::string& out, std::string_view s);
// Appends pre + body + post in as few appends as possible; pre and post are copied as is.
// Lets the writer emit `,"key":` as one append instead of four.
void append_json_string_parts(std::string& out, std::string_view pre, std::string_view s,
                              std::string_view post);
// ns as microseconds with exactly three decimals: 1234567 -> "1234.567", 5 -> "0.005".
void append_us(std::string& out, std::uint64_t ns);
void append_int(std::string& out, std::int64_t v);
void append_uint(std::string& out, std::uint64_t v);
// Shortest round-trip form; NaN and infinities become null since JSON has no spelling
// for them.
void append_double(std::string& out, double v);

// Streaming writer that places ',' and ':' for nested objects and arrays.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) noexcept : out_(&out) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  // Escaped; the next value follows it without a comma.
  void key(std::string_view k) {
    append_json_string_parts(*out_, need_comma_ ? ",\"" : "\"", k, "\":");
    need_comma_ = false;
  }

  void value(std::string_view s) {
    append_json_string_parts(*out_, need_comma_ ? ",\"" : "\"", s, "\"");
    need_comma_ = true;
  }
  void value(const char* s) {
    if (s == nullptr) {
      null();
    } else {
      value(std::string_view(s));
    }
  }
  void value(std::nullptr_t) { null(); }
  void value(std::int64_t v) {
    separate();
    append_int(*out_, v);
  }
  void value(std::uint64_t v) {
    separate();
    append_uint(*out_, v);
  }
  void value(int v) { value(static_cast<std::int64_t>(v)); }
  void value(unsigned v) { value(static_cast<std::uint64_t>(v)); }
  // Catches long long, unsigned long, short, ... which would otherwise be ambiguous between
  // the fixed overloads above.
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
  void value(T v) {
    if constexpr (std::is_signed_v<T>) {
      value(static_cast<std::int64_t>(v));
    } else {
      value(static_cast<std::uint64_t>(v));
    }
  }
  // A lone char is more likely a bug than a wish for its code as a number.
  void value(char) = delete;
  // Stops other pointers from silently converting to bool.
  template <class T>
  void value(const T*) = delete;
  void value(double v) {
    separate();
    append_double(*out_, v);
  }
  void value(bool v) {
    separate();
    out_->append(v ? std::string_view("true") : std::string_view("false"));
  }
  void null() {
    separate();
    out_->append("null", 4);
  }
  // Number of microseconds, via append_us.
  void value_us(std::uint64_t ns) {
    separate();
    append_us(*out_, ns);
  }
  // Already-valid JSON value, appended as is.
  void raw(std::string_view json) {
    separate();
    out_->append(json);
  }

  template <class T>
  void member(std::string_view k, const T& v) {
    key(k);
    value(v);
  }

  std::string& buffer() noexcept { return *out_; }

 private:
  void separate() {
    if (need_comma_) out_->push_back(',');
    need_comma_ = true;
  }
  void open(char c) {
    separate();
    out_->push_back(c);
    need_comma_ = false;
  }
  void close(char c) {
    out_->push_back(c);
    need_comma_ = true;
  }

  std::string* out_;
  // One flag is enough: a value or a closed container always wants a comma before the next
  // item; an opened container or a key never does. So depth is unbounded and costs nothing.
  bool need_comma_ = false;
};

}  // namespace jitscope::detail
