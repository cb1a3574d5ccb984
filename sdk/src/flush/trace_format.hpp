// Small JSON pieces the trace writer's files share (trace_writer.cpp,
// trace_captured.cpp, trace_limits.cpp).
#pragma once

#include "base/json_writer.hpp"

#include <cstdint>
#include <string>

namespace jitscope::detail {

// `,"pid":P,"tid":T`: where an event goes.
inline std::string tid_fields(int pid, int tid) {
  std::string out = ",\"pid\":";
  append_int(out, pid);
  out.append(",\"tid\":");
  append_int(out, tid);
  return out;
}

// `"frame/attempt"` of a packed compile id, as a JSON string.
inline void append_compile_id(std::string& out, std::uint64_t packed) {
  out.push_back('"');
  append_uint(out, packed >> 32);
  out.push_back('/');
  append_uint(out, packed & 0xffffffffu);
  out.push_back('"');
}

}  // namespace jitscope::detail
