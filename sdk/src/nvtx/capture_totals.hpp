// What the NVTX capture adds to a session's stats. The writer counts the
// ranges and marks it writes; the capture counts the rest (nvtx/nvtx.hpp).
#pragma once

#include <cstdint>

namespace jitscope::detail {

// Totals of the NVTX capture over a session (nvtx/nvtx.hpp), for the stats event.
// The first three are counted by the writer, the rest by the capture.
struct CaptureTotals {
  std::uint64_t ranges = 0;  // push/pop ranges written
  std::uint64_t marks = 0;
  std::uint64_t async_ranges = 0;  // start/end ranges written
  std::uint64_t thread_names = 0;
  std::uint64_t unbalanced_pops = 0;  // a pop with nothing of its domain open
  std::uint64_t unknown_ends = 0;     // an end of an id never started (or already ended)
  std::uint64_t dropped = 0;          // too many open ranges, or across sessions
};

inline CaptureTotals operator-(const CaptureTotals& a, const CaptureTotals& b) noexcept {
  CaptureTotals d;
  d.thread_names = a.thread_names - b.thread_names;
  d.unbalanced_pops = a.unbalanced_pops - b.unbalanced_pops;
  d.unknown_ends = a.unknown_ends - b.unknown_ends;
  d.dropped = a.dropped - b.dropped;
  return d;
}

}  // namespace jitscope::detail
