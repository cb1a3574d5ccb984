#include "format/perfetto/json_value.hpp"

#include <charconv>
#include <cmath>

namespace jitscope::detail::pfw {
namespace {

struct Reader {
  std::string_view s;
  std::size_t i;
  int depth = 0;

  void space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  }
  bool literal(std::string_view word) {
    if (s.substr(i, word.size()) != word) return false;
    i += word.size();
    return true;
  }
  static void put_utf8(std::string& out, std::uint32_t c) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  bool hex4(std::uint32_t& v) {
    if (i + 4 > s.size()) return false;
    v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s[i++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  bool string(std::string& out) {
    if (i >= s.size() || s[i] != '"') return false;
    ++i;
    out.clear();
    while (i < s.size()) {
      const std::size_t run = s.find_first_of("\"\\", i);
      if (run == std::string_view::npos) return false;
      out.append(s.data() + i, run - i);
      i = run;
      if (s[i] == '"') {
        ++i;
        return true;
      }
      if (++i >= s.size()) return false;
      const char e = s[i++];
      switch (e) {
        case '"': out.push_back('"'); break;
        case '\\': out.push_back('\\'); break;
        case '/': out.push_back('/'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'u': {
          std::uint32_t c = 0;
          if (!hex4(c)) return false;
          if (c >= 0xD800 && c < 0xDC00 && s.substr(i, 2) == "\\u") {
            i += 2;
            std::uint32_t lo = 0;
            if (!hex4(lo) || lo < 0xDC00 || lo > 0xDFFF) return false;
            c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
          } else if (c >= 0xD800 && c < 0xE000) {
            c = 0xFFFD;  // a lone surrogate
          }
          put_utf8(out, c);
          break;
        }
        default: return false;
      }
    }
    return false;
  }
  bool value(JsonValue& v) {
    space();
    if (i >= s.size() || ++depth > 256) return false;
    bool ok = true;
    const char c = s[i];
    if (c == '{') {
      v.type = JsonValue::Type::kObject;
      ++i;
      space();
      if (i < s.size() && s[i] == '}') {
        ++i;
      } else {
        for (;;) {
          space();
          v.members.emplace_back();
          if (!string(v.members.back().key)) return false;
          space();
          if (i >= s.size() || s[i++] != ':') return false;
          if (!value(v.members.back().value)) return false;
          space();
          if (i < s.size() && s[i] == ',') {
            ++i;
            continue;
          }
          if (i < s.size() && s[i] == '}') {
            ++i;
            break;
          }
          return false;
        }
      }
    } else if (c == '[') {
      v.type = JsonValue::Type::kArray;
      ++i;
      space();
      if (i < s.size() && s[i] == ']') {
        ++i;
      } else {
        for (;;) {
          v.items.emplace_back();
          if (!value(v.items.back())) return false;
          space();
          if (i < s.size() && s[i] == ',') {
            ++i;
            continue;
          }
          if (i < s.size() && s[i] == ']') {
            ++i;
            break;
          }
          return false;
        }
      }
    } else if (c == '"') {
      v.type = JsonValue::Type::kString;
      ok = string(v.string);
    } else if (literal("true")) {
      v.type = JsonValue::Type::kBool;
      v.boolean = true;
    } else if (literal("false")) {
      v.type = JsonValue::Type::kBool;
    } else if (literal("null")) {
      v.type = JsonValue::Type::kNull;
    } else {
      const std::size_t start = i;
      while (i < s.size() && (std::string_view("+-.eE").find(s[i]) != std::string_view::npos ||
                              (s[i] >= '0' && s[i] <= '9'))) {
        ++i;
      }
      if (i == start) return false;
      v.type = JsonValue::Type::kNumber;
      v.number = s.substr(start, i - start);
    }
    --depth;
    return ok;
  }
};

}  // namespace

bool parse_json(std::string_view text, std::size_t& pos, JsonValue& out) {
  while (pos < text.size() && (text[pos] == ',' || text[pos] == ' ' || text[pos] == '\n' ||
                               text[pos] == '\r' || text[pos] == '\t')) {
    ++pos;
  }
  Reader r{text, pos};
  out = JsonValue{};
  if (!r.value(out)) return false;
  pos = r.i;
  return true;
}

bool number_as_int(std::string_view t, std::int64_t& out) noexcept {
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && end == t.data() + t.size();
}

bool number_as_uint(std::string_view t, std::uint64_t& out) noexcept {
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && end == t.data() + t.size();
}

double number_as_double(std::string_view t) noexcept {
  double v = 0;
  std::from_chars(t.data(), t.data() + t.size(), v);
  return v;
}

bool us_to_ns(std::string_view t, std::uint64_t& out) noexcept {
  const std::size_t dot = t.find('.');
  std::uint64_t whole = 0;
  if (!number_as_uint(t.substr(0, dot), whole)) {
    const double v = number_as_double(t);  // an exponent or a sign: not ours
    if (!(v >= 0) || !std::isfinite(v)) return false;
    out = static_cast<std::uint64_t>(std::llround(v * 1000.0));
    return true;
  }
  std::uint64_t frac = 0;
  if (dot != std::string_view::npos) {
    std::string_view f = t.substr(dot + 1);
    if (f.size() > 3 || f.empty()) {
      out = static_cast<std::uint64_t>(std::llround(number_as_double(t) * 1000.0));
      return true;
    }
    if (!number_as_uint(f, frac)) return false;
    for (std::size_t k = f.size(); k < 3; ++k) frac *= 10;
  }
  out = whole * 1000 + frac;
  return true;
}

}  // namespace jitscope::detail::pfw
