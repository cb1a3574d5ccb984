// The field numbers and enum values of Perfetto's trace schema
// (shared/perfetto/perfetto_trace.proto) that jitscope's protobuf form uses
// (docs/perfetto-format.md). One list for the SDK's writer and the tools'
// reader, so the two cannot disagree; the conformance test decodes the
// writer's files against the schema itself.
#pragma once

#include <cstdint>

namespace jitscope::detail::pf {

// Protobuf wire types.
enum WireType : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// A field's tag as written: (field number << 3) | wire type.
constexpr std::uint32_t tag(std::uint32_t field, WireType type) noexcept {
  return (field << 3) | type;
}

namespace trace {  // message Trace
inline constexpr std::uint32_t kPacket = 1;
}

namespace packet {  // message TracePacket
inline constexpr std::uint32_t kClockSnapshot = 6;
inline constexpr std::uint32_t kTimestamp = 8;
inline constexpr std::uint32_t kTrustedPacketSequenceId = 10;
inline constexpr std::uint32_t kTrackEvent = 11;
inline constexpr std::uint32_t kInternedData = 12;
inline constexpr std::uint32_t kSequenceFlags = 13;
inline constexpr std::uint32_t kPreviousPacketDropped = 42;
// A serialized Trace (packets with their Trace.packet framing), compressed:
// deflate (zlib stream) in compressed_packets, zstd (one frame) in
// zstd_compressed_packets. Perfetto asks each such packet to stay < 512 KB.
inline constexpr std::uint32_t kCompressedPackets = 50;
inline constexpr std::uint32_t kZstdCompressedPackets = 133;
inline constexpr std::uint32_t kTimestampClockId = 58;
inline constexpr std::uint32_t kTracePacketDefaults = 59;
inline constexpr std::uint32_t kTrackDescriptor = 60;
inline constexpr std::uint32_t kFirstPacketOnSequence = 87;
// sequence_flags values
inline constexpr std::uint32_t kSeqIncrementalStateCleared = 1;
inline constexpr std::uint32_t kSeqNeedsIncrementalState = 2;
}  // namespace packet

namespace defaults {  // message TracePacketDefaults / TrackEventDefaults
inline constexpr std::uint32_t kTimestampClockId = 58;
inline constexpr std::uint32_t kTrackEventDefaults = 11;
inline constexpr std::uint32_t kTrackUuid = 11;  // in TrackEventDefaults
}  // namespace defaults

namespace clock {  // message ClockSnapshot and ClockSnapshot.Clock
inline constexpr std::uint32_t kClocks = 1;
inline constexpr std::uint32_t kPrimaryTraceClock = 2;
inline constexpr std::uint32_t kClockId = 1;
inline constexpr std::uint32_t kTimestamp = 2;
inline constexpr std::uint32_t kIsIncremental = 3;
inline constexpr std::uint32_t kUnitMultiplierNs = 4;
// BuiltinClock values
inline constexpr std::uint32_t kRealtime = 1;
inline constexpr std::uint32_t kMonotonic = 3;
inline constexpr std::uint32_t kBoottime = 6;
// The sequence-scoped incremental clock of each thread's sequence (64..127
// are scoped to their sequence).
inline constexpr std::uint32_t kThreadIncremental = 64;
}  // namespace clock

namespace track {  // message TrackDescriptor, ProcessDescriptor, ThreadDescriptor
inline constexpr std::uint32_t kUuid = 1;
inline constexpr std::uint32_t kName = 2;
inline constexpr std::uint32_t kProcess = 3;
inline constexpr std::uint32_t kThread = 4;
inline constexpr std::uint32_t kParentUuid = 5;
inline constexpr std::uint32_t kCounter = 8;
inline constexpr std::uint32_t kProcessPid = 1;
inline constexpr std::uint32_t kProcessName = 6;
inline constexpr std::uint32_t kThreadPid = 1;
inline constexpr std::uint32_t kThreadTid = 2;
inline constexpr std::uint32_t kThreadName = 5;
}  // namespace track

namespace event {  // message TrackEvent
inline constexpr std::uint32_t kCategoryIids = 3;
inline constexpr std::uint32_t kDebugAnnotations = 4;
inline constexpr std::uint32_t kType = 9;
inline constexpr std::uint32_t kNameIid = 10;
inline constexpr std::uint32_t kTrackUuid = 11;
inline constexpr std::uint32_t kCategories = 22;
inline constexpr std::uint32_t kName = 23;
inline constexpr std::uint32_t kCounterValue = 30;
inline constexpr std::uint32_t kDoubleCounterValue = 44;
inline constexpr std::uint32_t kFlowIds = 47;             // fixed64
inline constexpr std::uint32_t kTerminatingFlowIds = 48;  // fixed64
// Read by the tools only (older writers): uint64 varints.
inline constexpr std::uint32_t kFlowIdsOld = 36;
inline constexpr std::uint32_t kTerminatingFlowIdsOld = 42;
// TrackEvent.Type values
inline constexpr std::uint32_t kSliceBegin = 1;
inline constexpr std::uint32_t kSliceEnd = 2;
inline constexpr std::uint32_t kInstant = 3;
inline constexpr std::uint32_t kCounter = 4;
}  // namespace event

namespace annotation {  // message DebugAnnotation
inline constexpr std::uint32_t kNameIid = 1;
inline constexpr std::uint32_t kBoolValue = 2;
inline constexpr std::uint32_t kUintValue = 3;
inline constexpr std::uint32_t kIntValue = 4;
inline constexpr std::uint32_t kDoubleValue = 5;  // fixed64
inline constexpr std::uint32_t kStringValue = 6;
inline constexpr std::uint32_t kPointerValue = 7;     // read by the tools only
inline constexpr std::uint32_t kLegacyJsonValue = 9;  // read by the tools only
inline constexpr std::uint32_t kStringValueIid = 17;  // read by the tools only
inline constexpr std::uint32_t kName = 10;
inline constexpr std::uint32_t kDictEntries = 11;
inline constexpr std::uint32_t kArrayValues = 12;
}  // namespace annotation

namespace interned {  // message InternedData; EventName, EventCategory, DebugAnnotationName
inline constexpr std::uint32_t kEventCategories = 1;
inline constexpr std::uint32_t kEventNames = 2;
inline constexpr std::uint32_t kDebugAnnotationNames = 3;
inline constexpr std::uint32_t kDebugAnnotationStringValues = 29;  // read by the tools only
inline constexpr std::uint32_t kIid = 1;
inline constexpr std::uint32_t kName = 2;  // InternedString's `str` too
}  // namespace interned

// The category of the instants that carry the JSON form's metadata ("M")
// events other than process and thread names.
inline constexpr char kMetadataCategory[] = "__metadata";

}  // namespace jitscope::detail::pf
