// The plain TrackEvent packet and a plain BEGIN's parts: pf_plain_packet's
// and pf_plain_begin's (trace_perfetto.cpp) and the leaf path's
// (trace_leaf.cpp). In a header so that both inline them (calls otherwise:
// 25 instructions a span for the packet, 78 for the parts, callgrind).
#pragma once

#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"
#include "format/json/trace_format.hpp"
#include "format/trace_writer.hpp"

namespace jitscope::detail {

// The compile id's annotation key: one object, which the interner caches by address.
inline constexpr const char* kCompileIdKey = "compile_id";

// The commonest arg's annotation: {name_iid, an integer} from an int, uint
// or bool arg record, its name's id under 128. Writes at most
// kIntAnnotationBytes at `p` and returns the end; nullptr (nothing
// written, the name interned) for any other arg.
inline constexpr std::size_t kIntAnnotationBytes = 15;
JITSCOPE_ALWAYS_INLINE char* put_int_annotation(char* p, pfw::Interner& interner, const Record& r) {
  if (r.type != ValueType::kInt && r.type != ValueType::kUint && r.type != ValueType::kBool) {
    return nullptr;
  }
  namespace a = pf::annotation;
  const std::uint64_t iid =
      interner.intern_static(pfw::Interner::kAnnotation, r.name != nullptr ? r.name : "?");
  if (iid == 0 || iid >= 128) return nullptr;
  const bool uint = r.type == ValueType::kUint && r.value.u64 > std::uint64_t{INT64_MAX};
  const std::uint64_t v = r.type == ValueType::kBool ? (r.value.u64 != 0 ? 1 : 0) : r.value.u64;
  *p++ = static_cast<char>(pf::tag(pf::event::kDebugAnnotations, pf::kLengthDelimited));
  *p++ = static_cast<char>(3 + wire::varint_size(v));
  *p++ = static_cast<char>(pf::tag(a::kNameIid, pf::kVarint));
  *p++ = static_cast<char>(iid);
  *p++ = static_cast<char>(pf::tag(r.type == ValueType::kBool ? a::kBoolValue
                                   : uint                     ? a::kUintValue
                                                              : a::kIntValue,
                                   pf::kVarint));
  return wire::put_varint(p, v);
}

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

JITSCOPE_ALWAYS_INLINE bool TraceWriter::pf_plain_parts(ThreadDecodeState::PfSequence& q,
                                                        std::uint64_t begin_ns, std::uint8_t flags,
                                                        const char* name, const std::uint64_t* unit,
                                                        std::size_t args, PlainBegin& out) {
  if (q.part != part_ || q.id >= 128 || args > kPlainAnnotationBytes || begin_ns < q.last_ns ||
      q.interner.has_pending()) {
    return false;
  }
  out.unit = {};
  if (unit != nullptr) {
    const std::uint64_t key_iid =
        q.interner.intern_static(pfw::Interner::kAnnotation, kCompileIdKey);
    if (key_iid - 1 >= 127 || q.interner.has_pending()) return false;
    if (q.unit_key_iid != key_iid || q.unit_packed != *unit) {
      q.unit_annotation.clear();
      pf_fixed_args(q, q.unit_annotation, unit, false, false);  // the general path's bytes
      q.unit_key_iid = key_iid;
      q.unit_packed = *unit;
    }
    out.unit = q.unit_annotation;
    if (out.unit.size() + args > kPlainAnnotationBytes) return false;
  }
  out.cat_iid = q.interner.intern_static(pfw::Interner::kCategory, span_category(flags));
  out.name_iid = q.interner.intern_static(pfw::Interner::kName, name);
  // A new id is defined by the packet that first uses it: the general path.
  return out.cat_iid - 1 < 127 && out.name_iid - 1 < 127 && !q.interner.has_pending();
}

}  // namespace jitscope::detail
