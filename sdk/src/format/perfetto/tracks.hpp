// Track uuids and the packets that start a file or a sequence in the
// Perfetto form (docs/perfetto-format.md). Runs on the flusher only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail::pfw {

inline constexpr std::uint32_t kProcessSequence = 1;

// Stable uuids, the same in every file of a session: a mix of what names
// the track (splitmix64 steps; a collision would need 2^32 tracks).
std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept;
std::uint64_t mix(std::uint64_t h, std::string_view s) noexcept;
inline std::uint64_t process_track(std::int64_t pid) noexcept {
  return mix(1, static_cast<std::uint64_t>(pid));
}
inline std::uint64_t thread_track(std::int64_t pid, std::int64_t tid) noexcept {
  return mix(mix(2, static_cast<std::uint64_t>(pid)), static_cast<std::uint64_t>(tid));
}

// The first packet of a file: sequence 1's defaults (absolute MONOTONIC
// timestamps), its incremental state cleared, and the ClockSnapshot of one
// instant (MONOTONIC primary, BOOTTIME, REALTIME).
void append_file_start(std::string& out, std::uint64_t monotonic_ns, std::uint64_t boottime_ns,
                       std::uint64_t realtime_ns);
// The first packet of a thread's sequence in a file: its defaults (its
// track, clock 64) and the ClockSnapshot that starts clock 64 at `start_ns`.
void append_sequence_start(std::string& out, std::uint32_t sequence, std::uint64_t track_uuid,
                           std::uint64_t start_ns);

}  // namespace jitscope::detail::pfw
