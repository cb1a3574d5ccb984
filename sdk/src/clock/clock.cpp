#include "clock/clock.hpp"

#include "base/immortal.hpp"

#include <algorithm>
#include <atomic>

#include <jitscope/detail/hot.hpp>

#include <time.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

namespace jitscope::detail {

std::string_view clock_source_name(ClockSource source) noexcept {
  return source == ClockSource::kTsc ? "tsc" : "monotonic";
}

bool tsc_is_invariant() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  std::FILE* f = std::fopen("/proc/cpuinfo", "re");
  if (f == nullptr) return false;
  char line[4096];
  bool constant = false;
  bool nonstop = false;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "flags", 5) != 0) continue;
    // Flags are space-separated words; match whole words only.
    constant = std::strstr(line, " constant_tsc") != nullptr;
    nonstop = std::strstr(line, " nonstop_tsc") != nullptr;
    break;  // the first CPU speaks for all
  }
  std::fclose(f);
  return constant && nonstop;
#else
  return false;
#endif
}

ClockPoint sample_clock_point() noexcept {
  ClockPoint best{0, 0, ~std::uint64_t{0}};
#if defined(__x86_64__) || defined(__i386__)
  for (int i = 0; i < 16; ++i) {
    const std::uint64_t t0 = __rdtsc();
    const std::uint64_t ns = monotonic_ns();
    const std::uint64_t t1 = __rdtsc();
    if (t1 >= t0 && t1 - t0 < best.uncertainty_ticks) {
      best = {t0 + (t1 - t0) / 2, ns, t1 - t0};
    }
  }
#else
  const std::uint64_t ns = monotonic_ns();
  best = {ns, ns, 0};
#endif
  return best;
}

ClockConversion ClockConversion::identity() noexcept { return ClockConversion{}; }

ClockConversion ClockConversion::from_points(const ClockPoint& a, const ClockPoint& b) noexcept {
  ClockConversion c;
  if (b.ticks <= a.ticks || b.ns <= a.ns) {
    // A clock that did not advance cannot be calibrated; 1 ns/tick keeps
    // order intact, and the metadata shows the odd ratio.
    c.mult_ = std::uint64_t{1} << 32;
    c.base_ticks_ = a.ticks;
    c.base_ns_ = a.ns;
    return c;
  }
  const std::uint64_t dticks = b.ticks - a.ticks;
  const std::uint64_t dns = b.ns - a.ns;
  const Uint128 scaled = (static_cast<Uint128>(dns) << 32) / dticks;
  c.mult_ = scaled == 0 ? 1 : static_cast<std::uint64_t>(scaled);
  c.base_ticks_ = a.ticks;
  c.base_ns_ = a.ns;
  c.window_ns_ = dns;
  c.relative_uncertainty_ =
      static_cast<double>(a.uncertainty_ticks + b.uncertainty_ticks) / static_cast<double>(dticks);
  return c;
}

namespace {
// relaxed everywhere below: each is one independent word; a reader that sees
// 0 falls back to the estimate, which is also correct, only coarser.
std::atomic<std::uint64_t> g_tsc_mult_q32{0};
std::atomic<std::uint64_t> g_first_ticks{0};
std::atomic<std::uint64_t> g_first_ns{0};
// The estimate, kept once its window is long enough to be good to about
// 10^-5 (two samples bracketed to tens of ns): a phase ending before the
// calibration then pays one load, not a clock sample (16 clock reads) per
// end. The calibration itself waits 20 ms.
std::atomic<std::uint64_t> g_tsc_estimate_q32{0};
constexpr std::uint64_t kEstimateWindowNs = 10'000'000;

// ns per tick (Q32) from the first TSC session's start to now; 0: none yet.
std::uint64_t estimated_mult_q32() noexcept {
  if (const std::uint64_t kept = g_tsc_estimate_q32.load(std::memory_order_relaxed)) return kept;
  const std::uint64_t t0 = g_first_ticks.load(std::memory_order_relaxed);
  const std::uint64_t n0 = g_first_ns.load(std::memory_order_relaxed);
  const ClockPoint now = sample_clock_point();
  if (t0 == 0 || n0 == 0 || now.ticks <= t0 || now.ns <= n0) return 0;
  const auto mult =
      static_cast<std::uint64_t>((static_cast<Uint128>(now.ns - n0) << 32) / (now.ticks - t0));
  if (now.ns - n0 >= kEstimateWindowNs) g_tsc_estimate_q32.store(mult, std::memory_order_relaxed);
  return mult;
}
}  // namespace

void note_tsc_session_start(const ClockPoint& first) noexcept {
  std::uint64_t expected = 0;
  if (g_first_ticks.compare_exchange_strong(expected, first.ticks, std::memory_order_relaxed)) {
    g_first_ns.store(first.ns, std::memory_order_relaxed);
  }
}

std::uint64_t tick_delta_to_ns(std::uint32_t session_word, std::uint64_t ticks) noexcept {
  if ((session_word & 1u) == 0) return ticks;  // CLOCK_MONOTONIC: already ns
  std::uint64_t mult = g_tsc_mult_q32.load(std::memory_order_relaxed);
  if (mult == 0) [[unlikely]] {
    mult = estimated_mult_q32();
    if (mult == 0) return ticks;  // no estimate yet
  }
  return static_cast<std::uint64_t>((static_cast<Uint128>(ticks) * mult) >> 32);
}

namespace {
// A mutex, not a once_flag: fork() can hold a mutex (clock_lock_for_fork),
// while a call_once in flight at a fork would never finish in the child.
struct Calibration {
  std::mutex mutex;
  bool done = false;  // guarded by mutex; `conversion` never changes after
  ClockConversion conversion;
};
Calibration& calibration() noexcept { return immortal<Calibration>(); }
}  // namespace

const ClockConversion& tsc_conversion(const ClockPoint& first,
                                      std::uint64_t min_window_ns) noexcept {
  Calibration& c = calibration();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.done) {
    const std::uint64_t now = monotonic_ns();
    if (now < first.ns + min_window_ns) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(first.ns + min_window_ns - now));
    }
    c.conversion = ClockConversion::from_points(first, sample_clock_point());
    g_tsc_mult_q32.store(c.conversion.mult_q32(), std::memory_order_relaxed);
    c.done = true;
  }
  return c.conversion;
}

void clock_lock_for_fork() noexcept { calibration().mutex.lock(); }
void clock_unlock_after_fork() noexcept { calibration().mutex.unlock(); }

namespace {
// The wall clock at the running session's start, as a seqlock: `word` is 0
// while it changes, else the session it belongs to.
std::atomic<std::uint32_t> g_wall_word{0};
std::atomic<std::uint64_t> g_wall_ticks{0};
std::atomic<std::uint64_t> g_wall_unix_ns{0};
}  // namespace

void note_session_wall_clock(std::uint32_t session_word) noexcept {
  // The pair read back to back: the anchor's error is one clock read.
  const std::uint64_t ticks = read_clock(session_word);
  const std::uint64_t unix_ns = realtime_ns();
  // A seqlock without fences (ThreadSanitizer does not model them): the
  // fields are stored with release after the word's 0, so a reader whose
  // acquire load sees a new field then sees the 0 (or the new word) on its
  // second look, and drops what it read.
  g_wall_word.store(0, std::memory_order_relaxed);
  g_wall_ticks.store(ticks, std::memory_order_release);
  g_wall_unix_ns.store(unix_ns, std::memory_order_release);
  g_wall_word.store(session_word, std::memory_order_release);
}

std::uint64_t unix_ns_at(std::uint32_t session_word, std::uint64_t ticks) noexcept {
  if (session_word != 0 && g_wall_word.load(std::memory_order_acquire) == session_word) {
    const std::uint64_t base = g_wall_ticks.load(std::memory_order_acquire);
    const std::uint64_t unix_ns = g_wall_unix_ns.load(std::memory_order_acquire);
    if (g_wall_word.load(std::memory_order_relaxed) == session_word) {
      return ticks >= base
                 ? unix_ns + tick_delta_to_ns(session_word, ticks - base)
                 : unix_ns - std::min(unix_ns, tick_delta_to_ns(session_word, base - ticks));
    }
  }
  return realtime_ns();  // no session, or another one's reading: the clock itself
}

std::uint64_t realtime_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace jitscope::detail
