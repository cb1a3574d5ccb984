#include "json_out.hpp"

#include <cstdio>

namespace jitscope::report {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not one.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  std::size_t n;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
  }
  return n;
}

}  // namespace

void JsonOut::append_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(s, i);
      if (n == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD
        ++i;
      } else {
        out.append(s.data() + i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
  out.push_back('"');
}

void JsonOut::before_value() {
  if (after_key_) {
    after_key_ = false;
  } else if (need_comma_) {
    out_.push_back(',');
  }
  need_comma_ = true;
}

void JsonOut::open(char c) {
  before_value();
  out_.push_back(c);
  need_comma_ = false;
}

void JsonOut::close(char c) {
  out_.push_back(c);
  need_comma_ = true;
}

void JsonOut::key(std::string_view k) {
  if (need_comma_) out_.push_back(',');
  append_string(out_, k);
  out_.push_back(':');
  after_key_ = true;
  need_comma_ = true;
}

void JsonOut::value(std::string_view s) {
  before_value();
  append_string(out_, s);
}

void JsonOut::value(std::int64_t v) {
  before_value();
  out_ += std::to_string(v);
}

void JsonOut::value(std::uint64_t v) {
  before_value();
  out_ += std::to_string(v);
}

void JsonOut::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
}

void JsonOut::null() {
  before_value();
  out_ += "null";
}

}  // namespace jitscope::report
