// Where a whole piece of a trace's output ends: a JSON event, a metrics
// line, a Perfetto packet. The sinks cut at these ends only: FileSink cuts
// a failed write back to one, WindowSink drops the oldest pieces whole.
#pragma once

#include "base/proto_wire.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace jitscope::detail {

enum class Framing : std::uint8_t {
  // Chrome JSON (format/trace_writer.hpp): an event ends where a separator
  // begins, ",\n" before the next event or "\n]" closing the array. Every
  // raw newline is part of one: JSON strings escape theirs.
  kTraceEvents,
  kLines,    // JSON lines (the metrics file): a record ends with its '\n'
  kPackets,  // a Perfetto Trace: each write begins at a packet's tag
};

// The end of the last whole piece in the first `limit` bytes of `bytes`
// (which begins at the end of one, or at the start of the output); 0 if
// no piece ends there.
inline std::size_t last_whole(std::string_view bytes, std::size_t limit, Framing framing) noexcept {
  if (framing == Framing::kLines) {
    const std::size_t nl = bytes.substr(0, limit).rfind('\n');
    return nl == std::string_view::npos ? 0 : nl + 1;
  }
  if (framing == Framing::kPackets) return wire::whole_fields_end(bytes, limit);
  // A separator that begins at or before `limit`: the event before it is whole.
  if (bytes.size() < 2) return 0;
  for (std::size_t at = std::min(limit, bytes.size() - 2); at > 0; --at) {
    const char c = bytes[at];
    const char next = bytes[at + 1];
    if ((c == ',' && next == '\n') || (c == '\n' && next == ']')) return at;
  }
  return 0;
}

// The end of the first whole piece of `bytes` (which begins at the end of
// one); bytes.size() if no other piece follows it in `bytes`.
inline std::size_t first_whole(std::string_view bytes, Framing framing) noexcept {
  if (framing == Framing::kLines) {
    const std::size_t nl = bytes.find('\n');
    return nl == std::string_view::npos ? bytes.size() : nl + 1;
  }
  if (framing == Framing::kPackets) {
    const std::size_t end = wire::field_end(bytes, 0);
    return end == 0 ? bytes.size() : end;
  }
  // The next separator after the one this piece may begin with.
  for (std::size_t at = 1; at + 1 < bytes.size(); ++at) {
    const char c = bytes[at];
    const char next = bytes[at + 1];
    if ((c == ',' && next == '\n') || (c == '\n' && next == ']')) return at;
  }
  return bytes.size();
}

}  // namespace jitscope::detail
