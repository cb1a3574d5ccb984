// A flight recorder's memory stays flat however long it runs (issue 39):
// 10^8 spans through a 256 KiB window, the process's resident memory read
// a tenth of the way in and at the end. A byte kept per span would be
// 90 MB by then; the bound is 2 MiB (allocator and page-cache noise). Under
// a sanitizer the run is 10^6 spans and the memory is not checked: ASan's
// quarantine holds freed blocks (the resident size grew 54 to 180 MB) and
// TSan's shadow grows with the addresses touched.
#include "sanitizers.hpp"
#include "trace_support.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>

namespace jitscope::testing {
namespace {

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

TEST(FlightMemory, ResidentMemoryIsFlatOverAHundredMillionSpans) {
  constexpr std::uint64_t kSpans = kSanitized ? 1'000'000 : 100'000'000;
  Config cfg = test_config("flight_memory");
  cfg.flight_recorder_bytes = std::uint64_t{256} << 10;
  cfg.overflow = OverflowPolicy::kBlock;  // every span goes through the window
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  std::uint64_t at_tenth = 0;
  for (std::uint64_t i = 0; i < kSpans; ++i) {
    JITSCOPE_SPAN("flat");
    if (i == kSpans / 10) at_tenth = resident_bytes();
  }
  const std::uint64_t at_end = resident_bytes();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_GE(stats.events_written, kSpans);
  if (kSanitized) return;
  EXPECT_LE(at_end, at_tenth + (std::uint64_t{2} << 20))
      << "resident memory grew from " << at_tenth << " to " << at_end << " bytes over "
      << kSpans - kSpans / 10 << " spans";
  std::printf("events written %llu; resident: %llu bytes at a tenth, %llu at the end\n",
              static_cast<unsigned long long>(stats.events_written),
              static_cast<unsigned long long>(at_tenth), static_cast<unsigned long long>(at_end));
}

}  // namespace
}  // namespace jitscope::testing
