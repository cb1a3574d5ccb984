// Which form a trace is in, from its first bytes: Chrome JSON or Perfetto's
// protobuf (docs/perfetto-format.md). TraceReader::read decides with it and
// reads either (trace_reader.hpp); perfetto_reader.cpp frames the protobuf
// form's packets for PerfettoDecoder (perfetto_decoder.hpp).
//
// The rule: a Trace's first byte is the packet tag 0x0a; JSON starts with
// whitespace, a BOM, '[' or '{'. 0x0a is also a JSON newline, so after it:
// if the first byte that is not JSON whitespace is '[' or '{', JSON (in
// protobuf those would be tags of wire type 3, groups, which Perfetto's
// schema never uses); else protobuf if a packet length follows and then a
// field tag (field number > 0, wire type 0, 1, 2 or 5), or an empty packet.
// Anything else, or input that ends before the rule decides (only
// whitespace, a trace cut inside its first packet's tag), is JSON, so the
// JSON reader's error says what it is ("empty input", "not a trace").
#pragma once

#include <string_view>

namespace jitscope::tools {

enum class TraceForm { kJson, kProtobuf, kUndecided };

// kUndecided: `head` is a 0x0a and whitespace so far; at the end of the
// input that is JSON.
TraceForm detect_trace_form(std::string_view head) noexcept;

}  // namespace jitscope::tools
