// What the test NVTX tool (recorder_tool.cpp) records, and its dump line:
// written by the tool, read back by nvtx_emit_test. Nine tab-separated fields
//   kind  domain  tid  msg_type  category  payload_type  payload  id  text
// with '\\', '\t' and '\n' in domain and text escaped as \\, \t and \n.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nvtx_recorder {

struct Event {
  std::string kind;
  std::string domain;
  long tid = 0;
  int msg_type = 0;
  std::uint32_t category = 0;
  int payload_type = 0;
  std::uint64_t payload = 0;
  std::uint64_t id = 0;
  std::string text;
};

inline void escape_into(std::string& out, const std::string& s) {
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      default: out.push_back(c);
    }
  }
}

inline std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[++i];
      out.push_back(c == 't' ? '\t' : c == 'n' ? '\n' : c);
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

// Appends `e` as one dump line.
inline void append_line(std::string& out, const Event& e) {
  out += e.kind;
  out += '\t';
  escape_into(out, e.domain);
  out += '\t' + std::to_string(e.tid) + '\t' + std::to_string(e.msg_type) + '\t' +
         std::to_string(e.category) + '\t' + std::to_string(e.payload_type) + '\t' +
         std::to_string(e.payload) + '\t' + std::to_string(e.id) + '\t';
  escape_into(out, e.text);
  out += '\n';
}

// One dump line (without its '\n') back into an Event.
inline Event parse_line(const std::string& line) {
  std::vector<std::string> f;
  std::size_t at = 0;
  for (int i = 0; i < 8; ++i) {
    const std::size_t tab = line.find('\t', at);
    f.push_back(line.substr(at, tab - at));
    at = tab + 1;
  }
  f.push_back(line.substr(at));
  Event e;
  e.kind = f[0];
  e.domain = unescape(f[1]);
  e.tid = std::stol(f[2]);
  e.msg_type = std::stoi(f[3]);
  e.category = static_cast<std::uint32_t>(std::stoul(f[4]));
  e.payload_type = std::stoi(f[5]);
  e.payload = std::stoull(f[6]);
  e.id = std::stoull(f[7]);
  e.text = unescape(f[8]);
  return e;
}

}  // namespace nvtx_recorder
