// Snapshots asked for while threads record, for both forms' flight-recorder
// tests: `threads` threads record "load" spans {t, i} as fast as they can,
// and three snapshots are asked for 30 ms apart, each to path_of(k). Runs
// inside a flight-recorder session the caller started; the threads are
// joined before it returns. A test then reads each snapshot its way and
// hands the i it found per thread to expect_each_thread_whole.
//
// Every thread records a span after the request is announced and then
// holds until the request is made: the window keeps the newest events, so
// a thread the scheduler left waiting while the others filled the window
// would be absent from a snapshot rightly (CI saw one, 2026-12-01). Held,
// the newest span of each thread is among the last few made before the
// request. The threads go on as soon as it is made, while the flusher
// drains and writes.
#pragma once

#include "sanitizers.hpp"

#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing {

// The rings' size under load, in spans: a full ring must stay small against
// the window (eight full ones drain at once when the flusher falls behind).
// A quarter under TSan: the test's own reading of the snapshots (JSON, or
// packets decoded) was nine tenths of its 30 s there, and the window's
// rules are the same at any size.
inline constexpr std::size_t kLoadRingCapacity = kTsan ? 4096 : 16384;
inline constexpr std::uint64_t kLoadSizeDivisor = kTsan ? 4 : 1;

struct LoadSnapshots {
  std::vector<std::string> paths;
  std::vector<std::vector<std::int64_t>> made_at_request;  // per snapshot, per thread
};

// `life_span`: each thread records inside a "life" span, open throughout.
inline void snapshots_under_load(int threads, bool life_span,
                                 const std::function<std::string(int)>& path_of,
                                 LoadSnapshots& out) {
  std::atomic<bool> stop{false};
  const auto count = static_cast<std::size_t>(threads);
  std::vector<std::atomic<std::int64_t>> made(count);
  // Request k is announced as hold == k + 1; a thread acks it (acked[t] ==
  // k + 1) after a span begun once it saw it, and waits until released == k + 1.
  std::atomic<int> hold{0}, released{0};
  std::vector<std::atomic<int>> acked(count);
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t) {
    running.emplace_back([&, t] {
      std::optional<Span> life;
      if (life_span) life.emplace("life");
      auto& mine = acked[static_cast<std::size_t>(t)];
      for (std::int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        const int k = hold.load(std::memory_order_acquire);  // before the span it acks with
        { JITSCOPE_SPAN_ARGS("load", {"t", t}, {"i", i}); }
        made[static_cast<std::size_t>(t)].store(i + 1, std::memory_order_release);
        if (k == mine.load(std::memory_order_relaxed)) continue;
        mine.store(k, std::memory_order_release);
        // Held threads sleep after a few turns: on 2 cores their spinning
        // would hold back the thread still to ack, and the flusher.
        for (int spin = 0; released.load(std::memory_order_acquire) < k && !stop.load(); ++spin) {
          if (spin < 16) {
            std::this_thread::yield();
          } else {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
        }
      }
    });
  }
  // Every thread under way first (on a loaded machine one may start late).
  for (auto& m : made) {
    for (int i = 0; i < 2000 && m.load(std::memory_order_acquire) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  for (int k = 0; k < 3; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    hold.store(k + 1, std::memory_order_release);
    for (auto& a : acked) {
      for (int i = 0; i < 4000 && a.load(std::memory_order_acquire) != k + 1; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      EXPECT_EQ(a.load(), k + 1) << "a thread did not reach request " << k << " in 4 s";
    }
    out.made_at_request.emplace_back();
    for (auto& m : made) out.made_at_request.back().push_back(m.load(std::memory_order_acquire));
    out.paths.push_back(path_of(k));
    EXPECT_TRUE(snapshot(out.paths.back()).ok());
    released.store(k + 1, std::memory_order_release);
    for (int i = 0; i < 2000 && ::access(out.paths.back().c_str(), F_OK) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(::access(out.paths.back().c_str(), F_OK), 0) << out.paths.back();
  }
  stop.store(true);
  for (std::thread& t : running) t.join();
}

// `seen[t]`: thread t's "load" span numbers in one snapshot, in order. None
// is missing or repeated, and the newest reaches what was made when the
// snapshot was asked for.
inline void expect_each_thread_whole(const std::vector<std::vector<std::int64_t>>& seen,
                                     const std::vector<std::int64_t>& made_at_request) {
  for (std::size_t t = 0; t < seen.size(); ++t) {
    ASSERT_FALSE(seen[t].empty()) << "thread " << t << ", " << made_at_request[t] << " made";
    for (std::size_t j = 1; j < seen[t].size(); ++j) {
      ASSERT_EQ(seen[t][j], seen[t][j - 1] + 1) << "thread " << t << " at " << j;
    }
    EXPECT_GE(seen[t].back() + 1, made_at_request[t]) << "thread " << t;
  }
}

}  // namespace jitscope::testing
