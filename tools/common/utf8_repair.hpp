// Invalid UTF-8 in a trace's bytes, replaced so that a strict parser
// (simdjson validates UTF-8) reads the event: each maximal invalid subpart
// becomes U+FFFD (Unicode ch. 3 and the WHATWG decoder's rule, as the SDK's
// JSON writer does): "\xE2\x82" -> one U+FFFD, "\xC0\x80" -> two, a lone
// "\xFF" -> one. Valid sequences and ASCII are copied as they are.
// Internal to tools/common (TraceReader calls it for an event that fails
// simdjson::validate_utf8, so valid input never pays for it).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::tools {

// Appends `in` to *out with its invalid subparts replaced; returns how many
// were replaced.
std::uint64_t append_repaired_utf8(std::string_view in, std::string* out);

}  // namespace jitscope::tools
