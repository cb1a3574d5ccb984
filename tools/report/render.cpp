// render(): the Report in the format asked for, and human_ns, the one
// time format of the terminal and Markdown. The formats themselves are in
// render_text_formats.cpp and render_json.cpp, the tables in render_tables.cpp.
#include "render.hpp"

#include "render_internal.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace jitscope::report {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(std::int64_t part, std::int64_t whole) {
  if (whole <= 0) return "-";
  return fixed(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + "%";
}

std::string us_text(std::int64_t ns) {
  // The magnitude as unsigned: -INT64_MIN does not fit in int64.
  const std::uint64_t mag =
      ns < 0 ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%llu.%03llu", ns < 0 ? "-" : "",
                static_cast<unsigned long long>(mag / 1000),
                static_cast<unsigned long long>(mag % 1000));
  return buf;
}

std::string visible(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {  // C0 and DEL: ESC, CR, BEL... as \xNN
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {  // C1 (U+0080..U+009F): CSI too
      const auto c1 = static_cast<unsigned char>(s[++i]);
      out += "\\u00";
      out.push_back(kHex[c1 >> 4]);
      out.push_back(kHex[c1 & 0xf]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string human_ns(std::int64_t ns) {
  const bool neg = ns < 0;
  const double v = std::fabs(static_cast<double>(ns));
  std::string s;
  auto sig3 = [](double x) {  // three significant digits, x in [1, 1000)
    return x >= 100 ? fixed(x, 0) : x >= 10 ? fixed(x, 1) : fixed(x, 2);
  };
  if (v < 1e3) {
    s = std::to_string(static_cast<std::int64_t>(v)) + " ns";
  } else if (v < 999.5e3) {
    s = sig3(v / 1e3) + " µs";
  } else if (v < 999.5e6) {
    s = sig3(v / 1e6) + " ms";
  } else if (v < 999.5e9) {
    s = sig3(v / 1e9) + " s";
  } else {
    s = fixed(v / 1e9, 0) + " s";
  }
  return neg ? "-" + s : s;
}

void render(const Report& r, Format format, const Sections& sections, const Writer& write) {
  Emitter em(write);
  switch (format) {
    case Format::kJson: write_json(r, sections, em); return;
    case Format::kCsv: write_csv(build(r, sections, false), em); return;
    case Format::kMarkdown: write_markdown(build(r, sections, true), em); return;
    case Format::kTable: write_text(build(r, sections, true), em); return;
    case Format::kHtml: {
      std::error_code ec;
      const std::filesystem::path cwd = std::filesystem::current_path(ec);
      write_html(r, sections, nullptr, nullptr, HtmlOptions{ec ? std::string() : cwd.string()}, em);
      return;
    }
  }
}

}  // namespace jitscope::report
