// The event decoder's fast path: a strict parser for the events trace
// writers write most (jitscope's own, Chrome's, PyTorch's): one object of
// scalars and an "args" object of scalars, with no white space, no escapes
// and only ASCII text. It reads what EventDecoder::decode reads, into the
// same DecodedEvent, and says no (false) to anything else: other shapes,
// a field of an unexpected type, anything simdjson would reject. The caller
// then decodes the event with simdjson, whose result is the reference
// (flat_event_test holds the two to the same fields on every event both
// read). Internal to tools/common.
#pragma once

#include "event_decoder.hpp"

namespace jitscope::tools {

// false: not decoded (*out partly written; the caller starts it over).
bool decode_flat(const RawEvent& raw, DecodedEvent* out) noexcept;

}  // namespace jitscope::tools
