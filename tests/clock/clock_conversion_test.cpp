// ClockConversion::to_ns: its unsigned path for ticks at or after the base
// gives the signed 128-bit formula's value (the one for every tick), for
// any calibration; ticks before the base clamp at 0 as before.
#include "clock/clock.hpp"

#include <jitscope/detail/hot.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace jitscope::detail {
namespace {

// ns = base_ns + (ticks - base) * mult / 2^32, the delta signed, below 0 clamped.
std::uint64_t reference_ns(std::uint64_t base_ticks, std::uint64_t base_ns, std::uint64_t mult,
                           std::uint64_t ticks) {
  const Int128 delta = static_cast<Int128>(static_cast<std::int64_t>(ticks - base_ticks));
  const Int128 ns = static_cast<Int128>(base_ns) + ((delta * mult) >> 32);
  return ns < 0 ? 0 : static_cast<std::uint64_t>(ns);
}

TEST(ClockConversion, ToNsIsTheSignedFormulaOnEitherSideOfTheBase) {
  std::mt19937_64 rng(11);
  int checked = 0;
  for (int c = 0; c < 200; ++c) {
    // Points as a calibration takes them: a's ticks and ns, b later by a
    // window, at rates from 1 tick a ns down to a 10 GHz TSC, and odd ones.
    const std::uint64_t a_ticks = rng() >> (rng() % 64);
    const std::uint64_t a_ns = rng() >> (rng() % 64);
    const std::uint64_t dticks = 1 + (rng() >> (rng() % 63 + 1));
    const std::uint64_t dns = 1 + (rng() >> (rng() % 63 + 1));
    if (a_ticks > std::numeric_limits<std::uint64_t>::max() - dticks) continue;
    if (a_ns > std::numeric_limits<std::uint64_t>::max() - dns) continue;
    const ClockConversion conv =
        ClockConversion::from_points({a_ticks, a_ns, 0}, {a_ticks + dticks, a_ns + dns, 0});
    const std::uint64_t mult = conv.mult_q32();
    std::vector<std::uint64_t> ticks = {a_ticks,
                                        a_ticks + 1,
                                        a_ticks - 1,
                                        a_ticks + dticks,
                                        a_ticks + (std::uint64_t{1} << 63) - 1,
                                        a_ticks + (std::uint64_t{1} << 63),
                                        0,
                                        std::numeric_limits<std::uint64_t>::max()};
    for (int i = 0; i < 200; ++i) {
      ticks.push_back(a_ticks + (rng() >> (rng() % 64)));
      ticks.push_back(a_ticks - (rng() >> (rng() % 64)));
    }
    for (std::uint64_t t : ticks) {
      ASSERT_EQ(conv.to_ns(t), reference_ns(a_ticks, a_ns, mult, t))
          << "base " << a_ticks << " ns " << a_ns << " mult " << mult << " ticks " << t;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50'000);
}

TEST(ClockConversion, IdentityKeepsTicks) {
  const ClockConversion id = ClockConversion::identity();
  for (std::uint64_t t : {std::uint64_t{0}, std::uint64_t{12345}, ~std::uint64_t{0}}) {
    EXPECT_EQ(id.to_ns(t), t);
  }
}

#if defined(__x86_64__) || defined(__i386__)
// Before the process's calibration is fixed (the flusher's first 20 ms), a
// TSC duration uses an estimate from the first session's start to now. Once
// that window spans 10 ms the estimate is kept: a phase ending then
// pays one load, not a 16-read clock sample. Nothing in this binary
// calibrates, so the estimate is what answers here.
TEST(TickDeltaToNs, BeforeCalibrationTheEstimateIsGoodAndKept) {
  const ClockPoint first = sample_clock_point();
  note_tsc_session_start(first);
  const std::uint64_t until = first.ns + 12'000'000;
  while (monotonic_ns() < until) {
  }
  const ClockPoint now = sample_clock_point();
  const std::uint64_t ticks = now.ticks - first.ticks;
  const std::uint64_t ns = tick_delta_to_ns(kSessionTscBit, ticks);
  const std::uint64_t truth = now.ns - first.ns;
  EXPECT_NEAR(static_cast<double>(ns), static_cast<double>(truth),
              static_cast<double>(truth) * 0.01);
  // Kept: the same ticks give the same ns later (a fresh estimate from a
  // later sample differs in its last digits of a large count).
  const std::uint64_t big = ticks * 1000;
  const std::uint64_t a = tick_delta_to_ns(kSessionTscBit, big);
  const std::uint64_t until_later = monotonic_ns() + 2'000'000;
  while (monotonic_ns() < until_later) {
  }
  EXPECT_EQ(tick_delta_to_ns(kSessionTscBit, big), a);
}
#endif

}  // namespace
}  // namespace jitscope::detail
