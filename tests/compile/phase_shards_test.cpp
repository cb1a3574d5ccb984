// Phase statistics are kept in per-thread shards (compile/state.hpp), so
// threads timing one key do not share a lock. What must not change: the
// totals are exact, the listed durations are in the order the runs ended
// (not shard order), and the list holds the first kMaxDurationsPerKey runs.
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace jitscope;
using namespace std::chrono_literals;

class PhaseShards : public ::testing::Test {
 protected:
  void SetUp() override { reset_compile_state(); }
};

const PhaseTimes* find(const std::vector<PhaseTimes>& all, const std::string& key) {
  for (const PhaseTimes& t : all) {
    if (t.key == key) return &t;
  }
  return nullptr;
}

// `runs` runs of `key` on each of `threads` threads at once.
void run_on_threads(const PhaseKey& key, int threads, int runs) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&key, runs] {
      for (int i = 0; i < runs; ++i) Phase p(key);
    });
  }
  for (std::thread& t : pool) t.join();
}

void busy_wait(std::chrono::nanoseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < until) {
  }
}

TEST_F(PhaseShards, TotalsFromManyThreadsAreExact) {
  static const PhaseKey kKey("shards.totals");
  constexpr int kThreads = 12;  // more threads than shards: some share one
  constexpr int kRuns = 2000;
  run_on_threads(kKey, kThreads, kRuns);
  const std::vector<PhaseTimes> all = phase_times();
  const PhaseTimes* t = find(all, "shards.totals");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->count, std::uint64_t{kThreads} * kRuns);
  ASSERT_EQ(t->durations_ns.size(), t->count);
  std::uint64_t sum = 0, max = 0;
  for (std::uint64_t ns : t->durations_ns) {
    sum += ns;
    max = std::max(max, ns);
  }
  EXPECT_EQ(sum, t->total_ns);
  EXPECT_EQ(max, t->max_ns);
  EXPECT_EQ(t->self_ns, t->total_ns);  // no column phase inside
}

// Thread B takes a shard before thread A, then A's runs end before B's: the
// listing is A's runs first. A listing in shard order would put B's first.
TEST_F(PhaseShards, DurationsAreListedInEndOrderAcrossThreads) {
  static const PhaseKey kWarm("shards.warm");
  static const PhaseKey kKey("shards.order");
  std::atomic<int> step{0};
  std::thread b([&] {
    { Phase warm(kWarm); }  // B's shard is taken now, before A's
    step.store(1);
    while (step.load() != 2) std::this_thread::yield();
    for (int i = 0; i < 5; ++i) Phase p(kKey);  // short runs, after A's
  });
  while (step.load() != 1) std::this_thread::yield();
  std::thread a([&] {
    for (int i = 0; i < 3; ++i) {
      Phase p(kKey);
      busy_wait(3ms);
    }
  });
  a.join();
  step.store(2);
  b.join();
  const std::vector<PhaseTimes> all = phase_times();
  const PhaseTimes* t = find(all, "shards.order");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->durations_ns.size(), 8u);
  // A's runs are at least 3 ms each and come first; B's (empty) runs last.
  for (std::size_t i = 0; i < 3; ++i) EXPECT_GE(t->durations_ns[i], 3'000'000u) << i;
}

// Runs that end before, during and after a TSC session are listed in the
// order they ended: the session's runs carry TSC ticks, the others
// CLOCK_MONOTONIC ns (on this machine kind, ticks are the larger numbers,
// so a sort on the raw values would list the runs outside the session first).
TEST_F(PhaseShards, RunsAroundATscSessionAreListedInEndOrder) {
  static const PhaseKey kKey("shards.clocks");
  const auto long_run = [] {
    Phase p(kKey);
    busy_wait(4ms);
  };
  long_run();
  long_run();
  Config cfg;
  cfg.output_path = "/dev/null";
  cfg.cupti = CuptiMode::kOff;
  cfg.crash_handler = false;
  cfg.clock = ClockChoice::kTsc;
  const Status st = start(cfg);
  if (!st.ok()) GTEST_SKIP() << "no TSC session here: " << st.message();
  for (int i = 0; i < 3; ++i) Phase p(kKey);  // short runs
  ASSERT_TRUE(stop().ok());
  long_run();
  const std::vector<PhaseTimes> all = phase_times();
  const PhaseTimes* t = find(all, "shards.clocks");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->durations_ns.size(), 6u);
  // Two long runs, the session's three, the last long one.
  for (std::size_t i : {0u, 1u, 5u}) EXPECT_GE(t->durations_ns[i], 4'000'000u) << i;
}

// Past kMaxDurationsPerKey runs, from several threads: the aggregates count
// every run, the list holds exactly the bound.
TEST_F(PhaseShards, TheListStopsAtTheBoundAcrossShards) {
  static const PhaseKey kKey("shards.bound");
  constexpr int kThreads = 4;
  constexpr int kRuns = 30000;  // 120000 runs in all, above 65536
  run_on_threads(kKey, kThreads, kRuns);
  const std::vector<PhaseTimes> all = phase_times();
  const PhaseTimes* t = find(all, "shards.bound");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->count, std::uint64_t{kThreads} * kRuns);
  EXPECT_EQ(t->durations_ns.size(), kMaxDurationsPerKey);
  const std::string table = compile_times();
  EXPECT_NE(table.find("(" + std::to_string(t->count - kMaxDurationsPerKey) + " more)"),
            std::string::npos);
}

TEST_F(PhaseShards, ResetClearsEveryShard) {
  static const PhaseKey kKey("shards.reset");
  std::thread([] {
    for (int i = 0; i < 10; ++i) Phase p(kKey);
  }).join();
  { Phase p(kKey); }
  ASSERT_NE(find(phase_times(), "shards.reset"), nullptr);
  reset_compile_state();
  EXPECT_EQ(find(phase_times(), "shards.reset"), nullptr);
  { Phase p(kKey); }
  const std::vector<PhaseTimes> all = phase_times();
  const PhaseTimes* t = find(all, "shards.reset");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->count, 1u);
  EXPECT_EQ(t->durations_ns.size(), 1u);
}

}  // namespace
