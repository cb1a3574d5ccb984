// A small JSON reader for the transcoder (transcode.hpp): it reads back the
// event text jitscope's own JsonWriter rendered, so it needs no more than
// RFC 8259 and keeps numbers as their text (an integer stays exact).
// Runs on the flusher only, for cold events.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail::pfw {

// A number token spelled as an integer: no fraction, no exponent.
inline bool is_integer_token(std::string_view token) noexcept {
  return token.find_first_of(".eE") == std::string_view::npos;
}

struct JsonMember;

struct JsonValue {
  enum class Type : unsigned char { kNull, kBool, kNumber, kString, kObject, kArray };
  Type type = Type::kNull;
  bool boolean = false;
  std::string_view number;  // the token, into the parsed text
  std::string string;       // unescaped
  // A struct of its own, not a std::pair: a pair's traits need JsonValue
  // complete, which it is not inside its own definition (clang refused it
  // with the library's precompiled header).
  std::vector<JsonMember> members;
  std::vector<JsonValue> items;

  const JsonValue* find(std::string_view key) const noexcept;
  bool is_integer() const noexcept { return type == Type::kNumber && is_integer_token(number); }
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

inline const JsonValue* JsonValue::find(std::string_view key) const noexcept {
  for (const JsonMember& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

// Parses one value at `pos` (white space and commas before it skipped);
// advances `pos` past it. false: malformed.
bool parse_json(std::string_view text, std::size_t& pos, JsonValue& out);
// The number token as int64 / uint64 / double (false: out of range).
bool number_as_int(std::string_view token, std::int64_t& out) noexcept;
bool number_as_uint(std::string_view token, std::uint64_t& out) noexcept;
double number_as_double(std::string_view token) noexcept;
// A JSON time in µs with up to three decimals ("1234.567") as ns, exactly.
bool us_to_ns(std::string_view token, std::uint64_t& out) noexcept;

}  // namespace jitscope::detail::pfw
