#include "format/perfetto/tracks.hpp"

#include "base/perfetto_fields.hpp"
#include "base/proto_wire.hpp"

namespace jitscope::detail::pfw {
namespace {

using wire::append_varint_field;
using wire::begin_nested;
using wire::end_nested;

constexpr std::uint32_t varint(std::uint32_t field) { return pf::tag(field, pf::kVarint); }
constexpr std::uint32_t nested(std::uint32_t field) { return pf::tag(field, pf::kLengthDelimited); }

void append_clock(std::string& out, std::uint32_t id, std::uint64_t ns, bool incremental) {
  const std::size_t at = begin_nested(out, nested(pf::clock::kClocks));
  append_varint_field(out, varint(pf::clock::kClockId), id);
  append_varint_field(out, varint(pf::clock::kTimestamp), ns);
  if (incremental) append_varint_field(out, varint(pf::clock::kIsIncremental), 1);
  end_nested(out, at);
}

}  // namespace

std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
  std::uint64_t z = h * 0x9e3779b97f4a7c15ull + v + 0x632be59bd9b4e019ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t mix(std::uint64_t h, std::string_view s) noexcept {
  std::uint64_t f = 0xcbf29ce484222325ull;  // FNV-1a of the bytes, then mixed in
  for (unsigned char c : s) f = (f ^ c) * 0x100000001b3ull;
  return mix(mix(h, s.size()), f);
}

void append_file_start(std::string& out, std::uint64_t monotonic_ns, std::uint64_t boottime_ns,
                       std::uint64_t realtime_ns) {
  const std::size_t packet = begin_nested(out, nested(pf::trace::kPacket));
  append_varint_field(out, varint(pf::packet::kTrustedPacketSequenceId), kProcessSequence);
  append_varint_field(out, varint(pf::packet::kSequenceFlags),
                      pf::packet::kSeqIncrementalStateCleared);
  append_varint_field(out, varint(pf::packet::kFirstPacketOnSequence), 1);
  const std::size_t defaults = begin_nested(out, nested(pf::packet::kTracePacketDefaults));
  append_varint_field(out, varint(pf::defaults::kTimestampClockId), pf::clock::kMonotonic);
  end_nested(out, defaults);
  const std::size_t snapshot = begin_nested(out, nested(pf::packet::kClockSnapshot));
  append_clock(out, pf::clock::kMonotonic, monotonic_ns, false);
  append_clock(out, pf::clock::kBoottime, boottime_ns, false);
  append_clock(out, pf::clock::kRealtime, realtime_ns, false);
  append_varint_field(out, varint(pf::clock::kPrimaryTraceClock), pf::clock::kMonotonic);
  end_nested(out, snapshot);
  end_nested(out, packet);
}

void append_sequence_start(std::string& out, std::uint32_t sequence, std::uint64_t track_uuid,
                           std::uint64_t start_ns) {
  const std::size_t packet = begin_nested(out, nested(pf::trace::kPacket));
  append_varint_field(out, varint(pf::packet::kTrustedPacketSequenceId), sequence);
  append_varint_field(out, varint(pf::packet::kSequenceFlags),
                      pf::packet::kSeqIncrementalStateCleared);
  append_varint_field(out, varint(pf::packet::kFirstPacketOnSequence), 1);
  const std::size_t defaults = begin_nested(out, nested(pf::packet::kTracePacketDefaults));
  append_varint_field(out, varint(pf::defaults::kTimestampClockId), pf::clock::kThreadIncremental);
  const std::size_t te = begin_nested(out, nested(pf::defaults::kTrackEventDefaults));
  append_varint_field(out, varint(pf::defaults::kTrackUuid), track_uuid);
  end_nested(out, te);
  end_nested(out, defaults);
  const std::size_t snapshot = begin_nested(out, nested(pf::packet::kClockSnapshot));
  append_clock(out, pf::clock::kThreadIncremental, start_ns, true);
  append_clock(out, pf::clock::kMonotonic, start_ns, false);
  end_nested(out, snapshot);
  end_nested(out, packet);
}

}  // namespace jitscope::detail::pfw
