// Small JSON pieces the trace writer's files share (trace_writer.cpp,
// trace_captured.cpp, trace_limits.cpp).
#pragma once

#include "base/json_writer.hpp"
#include "ring/record.hpp"

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

// `,"pid":P,"tid":T`: where an event goes.
inline std::string tid_fields(int pid, int tid) {
  std::string out = ",\"pid\":";
  append_int(out, pid);
  out.append(",\"tid\":");
  append_int(out, tid);
  return out;
}

// The category of a slice, from its Begin's flags (a static string).
inline const char* span_category(std::uint8_t flags) noexcept {
  if ((flags & kFlagUnit) != 0) return "compile_unit";
  if ((flags & kFlagCompileEvent) != 0) return "compile_event";
  if ((flags & kFlagPhase) != 0) return "phase";
  return "jitscope";
}

// `"frame/attempt"` of a packed compile id, as a JSON string, at `d`
// (kCompileIdRoom bytes); returns the end.
inline constexpr std::size_t kCompileIdRoom = 2 + 10 + 1 + 10;
inline char* put_compile_id(char* d, std::uint64_t packed) noexcept {
  *d++ = '"';
  d = std::to_chars(d, d + 10, packed >> 32).ptr;
  *d++ = '/';
  d = std::to_chars(d, d + 10, packed & 0xffffffffu).ptr;
  *d++ = '"';
  return d;
}
inline void append_compile_id(std::string& out, std::uint64_t packed) {
  char text[kCompileIdRoom];
  out.append(text, static_cast<std::size_t>(put_compile_id(text, packed) - text));
}

// Opens a process-level metadata event and its args:
// {"ph":"M","name":<name>,"pid":<pid>,"tid":0,"args":{ — the caller writes
// the args and ends both objects.
inline void begin_process_metadata(JsonWriter& w, std::string_view name, std::int64_t pid) {
  w.begin_object();
  w.member("ph", "M");
  w.member("name", name);
  w.member("pid", pid);
  w.member("tid", 0);
  w.key("args");
  w.begin_object();
}

}  // namespace jitscope::detail
