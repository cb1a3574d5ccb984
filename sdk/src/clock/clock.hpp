// One time base for the process: the TSC when it is invariant (constant_tsc
// and nonstop_tsc), CLOCK_MONOTONIC otherwise. Producers store raw ticks
// (detail::read_clock); only the flusher converts them, with one calibration
// fixed for the life of the process so that nesting survives conversion.
#pragma once

#include <cstdint>
#include <string_view>

namespace jitscope::detail {

// 128-bit intermediates keep tick scaling exact; __extension__ keeps -Wpedantic quiet.
__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

enum class ClockSource : std::uint8_t { kTsc, kMonotonic };

std::string_view clock_source_name(ClockSource source) noexcept;

// True when /proc/cpuinfo (or cpuid on x86) says the TSC is invariant.
bool tsc_is_invariant() noexcept;

// A TSC tick and the CLOCK_MONOTONIC ns read at the same moment, taken as the
// tightest of a few bracketed reads.
struct ClockPoint {
  std::uint64_t ticks;
  std::uint64_t ns;
  std::uint64_t uncertainty_ticks;  // width of the bracket it came from
};
ClockPoint sample_clock_point() noexcept;

// Ticks -> CLOCK_MONOTONIC ns. For the TSC: ns = base_ns + (ticks - base) * ns_per_tick
// in 32.32 fixed point, exact and monotonic in ticks.
class ClockConversion {
 public:
  static ClockConversion identity() noexcept;  // CLOCK_MONOTONIC ticks are ns
  static ClockConversion from_points(const ClockPoint& a, const ClockPoint& b) noexcept;

  std::uint64_t to_ns(std::uint64_t ticks) const noexcept {
    if (mult_ == kIdentity) return ticks;
    // Ticks at or after the base (all a session's records): the same value
    // by an unsigned 64x64 multiply, where the signed 128-bit one takes
    // three (10 instructions a time, callgrind).
    if (const std::uint64_t ahead = ticks - base_ticks_; static_cast<std::int64_t>(ahead) >= 0)
        [[likely]] {
      return base_ns_ + static_cast<std::uint64_t>((static_cast<Uint128>(ahead) * mult_) >> 32);
    }
    const Int128 delta = static_cast<Int128>(static_cast<std::int64_t>(ticks - base_ticks_));
    const Int128 ns = static_cast<Int128>(base_ns_) + ((delta * mult_) >> 32);
    return ns < 0 ? 0 : static_cast<std::uint64_t>(ns);
  }
  double ns_per_tick() const noexcept { return static_cast<double>(mult_) / 4294967296.0; }
  bool is_identity() const noexcept { return mult_ == kIdentity; }
  std::uint64_t mult_q32() const noexcept { return mult_; }  // ns per tick, 32.32
  std::uint64_t window_ns() const noexcept { return window_ns_; }
  // Relative error bound of ns_per_tick from the two brackets.
  double relative_uncertainty() const noexcept { return relative_uncertainty_; }

 private:
  static constexpr std::uint64_t kIdentity = 0;
  std::uint64_t base_ticks_ = 0;
  std::uint64_t base_ns_ = 0;
  std::uint64_t mult_ = kIdentity;
  std::uint64_t window_ns_ = 0;
  double relative_uncertainty_ = 0;
};

// The process's TSC calibration: the first call takes a point, waits until
// `min_window_ns` have passed since `first` (sleeping if needed) and fixes the
// conversion; later calls return the same one. Thread-safe.
const ClockConversion& tsc_conversion(const ClockPoint& first,
                                      std::uint64_t min_window_ns) noexcept;
// Holds the calibration's lock across fork() (api/session.cpp): a flusher
// calibrating at the fork (up to `min_window_ns`) finishes first.
void clock_lock_for_fork() noexcept;
void clock_unlock_after_fork() noexcept;

// Nanoseconds in `ticks` of a session's clock, for producers that need a
// duration now (phase times). Monotonic sessions: ticks are ns. TSC: the
// process calibration once fixed; before that (the first 20 ms after the
// first session started) an estimate from that start to now, kept once it
// spans 10 ms.
std::uint64_t tick_delta_to_ns(std::uint32_t session_word, std::uint64_t ticks) noexcept;
// start() records the first TSC session's start point for that estimate.
void note_tsc_session_start(const ClockPoint& first) noexcept;

// CLOCK_REALTIME now, in ns since the Unix epoch.
std::uint64_t realtime_ns() noexcept;
// start() anchors the session's clock to the wall clock (one reading of
// each, back to back); unix_ns_at() then turns that session's readings into
// Unix time with arithmetic, where a unit's record would read
// CLOCK_REALTIME twice. The wall clock's later steps are not followed (as
// in the trace).
void note_session_wall_clock(std::uint32_t session_word) noexcept;
// Unix ns of `ticks`, a reading of session `session_word`'s clock; not
// that session's anchor (none, or a later one): CLOCK_REALTIME now.
std::uint64_t unix_ns_at(std::uint32_t session_word, std::uint64_t ticks) noexcept;

}  // namespace jitscope::detail
