// The plain TrackEvent packet: pf_plain_packet's (trace_perfetto.cpp) and
// the leaf path's two (trace_leaf.cpp). In a header so that both inline it
// (a call each packet otherwise: 25 instructions a span, callgrind).
#pragma once

#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"
#include "flush/trace_writer.hpp"

namespace jitscope::detail {

// Field order as pf_packet's: timestamp, sequence id, the TrackEvent
// {type, category, name, annotations}, flags. Every value but the time
// delta is one byte, and so is every length: a BEGIN's annotations (its
// compile id, cached, and its args, encoded as they were decoded) take at
// most kPlainAnnotationBytes, which keeps the packet under 128 bytes.
JITSCOPE_ALWAYS_INLINE char* TraceWriter::put_plain_packet(
    char* const start, ThreadDecodeState::PfSequence& q, std::uint64_t ts, std::uint32_t type,
    std::uint64_t cat_iid, std::uint64_t name_iid, std::string_view fixed,
    std::string_view annotations) noexcept {
  const bool named = type != pf::event::kSliceEnd;
  char* p = start + 2;  // after the packet's tag and length (under 128)
  *p++ = static_cast<char>(pf::tag(pf::packet::kTimestamp, pf::kVarint));
  p = wire::put_varint(p, ts - q.last_ns);
  *p++ = static_cast<char>(pf::tag(pf::packet::kTrustedPacketSequenceId, pf::kVarint));
  *p++ = static_cast<char>(q.id);
  *p++ = static_cast<char>(pf::tag(pf::packet::kTrackEvent, pf::kLengthDelimited));
  *p++ = static_cast<char>((named ? 6 : 2) + fixed.size() + annotations.size());
  *p++ = static_cast<char>(pf::tag(pf::event::kType, pf::kVarint));
  *p++ = static_cast<char>(type);
  if (named) {
    *p++ = static_cast<char>(pf::tag(pf::event::kCategoryIids, pf::kVarint));
    *p++ = static_cast<char>(cat_iid);
    *p++ = static_cast<char>(pf::tag(pf::event::kNameIid, pf::kVarint));
    *p++ = static_cast<char>(name_iid);
  }
  p = wire::put_bytes(p, fixed);
  p = wire::put_bytes(p, annotations);
  *p++ = static_cast<char>(pf::tag(pf::packet::kSequenceFlags, pf::kVarint));
  *p++ = static_cast<char>(pf::packet::kSeqNeedsIncrementalState);
  start[0] = static_cast<char>(pf::tag(pf::trace::kPacket, pf::kLengthDelimited));
  start[1] = static_cast<char>(p - start - 2);
  q.last_ns = ts;
  return p;
}

}  // namespace jitscope::detail
