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
// Cost: one std::string growth per call (member() writes comma, key and value in one).
// A Chrome-trace "X" event with nine members and a nested args object (~134 bytes out)
// takes ~2,600 instructions, measured 180-200 ns per event (~5 M events/s) on a shared 2-vCPU
// x86-64 VM at -O2; ~75 ns of that is std::string bookkeeping alone (11 appends). Printable
// ASCII is checked and copied 8 bytes at a time; numbers go through std::to_chars (no locale,
// no iostreams).
//
// Guarantees: every output is valid JSON text for any input bytes, provided the caller
// balances begin_*/end_* and puts key() only inside objects (the writer keeps one separator
// flag, not a structure stack, so it does not check that and has no nesting limit). Nothing
// throws except std::bad_alloc from std::string growth.
#pragma once

#include <bit>
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
// ns as microseconds with exactly three decimals: 1234567 -> "1234.567", 5 -> "0.005".
void append_us(std::string& out, std::uint64_t ns);
void append_int(std::string& out, std::int64_t v);
void append_uint(std::string& out, std::uint64_t v);
// Shortest round-trip form (with an exponent from 2^63 up in magnitude, so that no integer
// token exceeds 64 bits); NaN and infinities become null since JSON has no spelling for them.
void append_double(std::string& out, double v);

// The same texts into a caller's buffer, for a renderer that builds a whole
// hot event on the stack and appends it once: each std::string append is a
// capacity test and a call, and each growth by append_* zero-fills its room
// first (C++20 has no resize_and_overwrite).
inline constexpr std::size_t kJsonNumberRoom = 32;
// '"' + append_json_string_body's text + '"' at `d`, which needs
// 6 * s.size() + 2 bytes; returns the end.
char* put_json_string(char* d, std::string_view s) noexcept;
// append_us's text at `d`, which needs kJsonNumberRoom bytes; returns the end.
char* put_json_us(char* d, std::uint64_t ns) noexcept;

// Internal to JsonWriter. Formatting time is dominated by the fixed cost of each std::string
// append, so the writer hands a whole item (comma, key and value) to one call that grows
// `out` once.
struct JsonScalar {
  // kKey: no value; with a key, writes just `"key":` for a container or value to follow.
  enum class Kind : unsigned char { kString, kRaw, kInt, kUint, kDouble, kUs, kBool, kNull, kKey };
  Kind kind = Kind::kNull;
  std::string_view text;   // kString, kRaw
  std::uint64_t bits = 0;  // kInt (two's complement), kUint, kUs, kDouble (bit_cast), kBool

  static JsonScalar of(Kind k, std::uint64_t bits) { return {k, {}, bits}; }
  static JsonScalar of_text(Kind k, std::string_view text) { return {k, text, 0}; }
};
// Appends [","] ["key":] value (no value for kKey).
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
    pending_key_ = nullptr;
    append_json_item(*out_, need_comma_, &k, JsonScalar::of(Kind::kKey, 0u));
    need_comma_ = false;
  }

  void value(std::string_view s) { item(JsonScalar::of_text(Kind::kString, s)); }
  void value(const char* s) {
    if (s == nullptr) {
      null();
    } else {
      value(std::string_view(s));
    }
  }
  void value(std::nullptr_t) { null(); }
  void value(std::int64_t v) { item(JsonScalar::of(Kind::kInt, static_cast<std::uint64_t>(v))); }
  void value(std::uint64_t v) { item(JsonScalar::of(Kind::kUint, v)); }
  void value(int v) { value(static_cast<std::int64_t>(v)); }
  void value(unsigned v) { value(static_cast<std::uint64_t>(v)); }
  // Catches long long, unsigned long, short, ... which would otherwise be ambiguous between
  // the fixed overloads above.
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> &&
           !std::is_same_v<T, char>) void value(T v) {
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
  void value(double v) { item(JsonScalar::of(Kind::kDouble, std::bit_cast<std::uint64_t>(v))); }
  void value(bool v) { item(JsonScalar::of(Kind::kBool, v ? 1u : 0u)); }
  void null() { item(JsonScalar::of(Kind::kNull, 0u)); }
  // Number of microseconds, via append_us.
  void value_us(std::uint64_t ns) { item(JsonScalar::of(Kind::kUs, ns)); }
  // Already-valid JSON value, appended as is.
  void raw(std::string_view json) { item(JsonScalar::of_text(Kind::kRaw, json)); }

  // Same output as key(k) then value(v), in one append.
  template <class T>
  void member(std::string_view k, const T& v) {
    pending_key_ = &k;  // consumed by the item() that value(v) ends in, within this call
    value(v);
  }

  std::string& buffer() noexcept { return *out_; }

 private:
  using Kind = JsonScalar::Kind;

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
