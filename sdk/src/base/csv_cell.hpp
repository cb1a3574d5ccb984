// One CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line
// break, with quotes doubled. Shared by the SDK's compile-times tables and
// jitscope-report's CSV output.
#pragma once

#include <string>
#include <string_view>

namespace jitscope::detail {

inline std::string csv_cell(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace jitscope::detail
