// DuplicateWarningChecker: new/seen results, exact LRU eviction, verbose,
// reset, the size bound, concurrent adds; and detail::log_unique on stderr.
// Not covered here: the out-of-memory path (add() then returns true), and
// log_unique during exit.
#include "trace_support.hpp"

#include <jitscope/dedup.hpp>

#include "base/log.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace jitscope {
namespace {

TEST(DuplicateWarningChecker, NewKeyIsTrueAndRepeatIsFalse) {
  DuplicateWarningChecker c;
  EXPECT_EQ(c.capacity(), kDefaultDuplicateWarningCapacity);
  EXPECT_TRUE(c.add("graph break: print"));
  EXPECT_FALSE(c.add("graph break: print"));
  EXPECT_FALSE(c.add(std::string("graph break: print")));  // by content, not pointer
  EXPECT_TRUE(c.add("graph break: input"));
  EXPECT_EQ(c.size(), 2u);
}

TEST(DuplicateWarningChecker, KeysAreWholeStringViews) {
  DuplicateWarningChecker c;
  const std::string text = "abcdef";
  EXPECT_TRUE(c.add(std::string_view(text).substr(0, 3)));  // "abc", not NUL-terminated
  EXPECT_FALSE(c.add("abc"));
  EXPECT_TRUE(c.add(std::string_view(text)));
  EXPECT_TRUE(c.add(std::string_view("a\0b", 3)));  // embedded NUL is part of the key
  EXPECT_FALSE(c.add(std::string_view("a\0b", 3)));
  EXPECT_TRUE(c.add(""));
  EXPECT_FALSE(c.add(""));
}

TEST(DuplicateWarningChecker, EvictsExactlyTheLeastRecentlyUsed) {
  DuplicateWarningChecker c(3);
  // Orders are listed least recently used first.
  EXPECT_TRUE(c.add("a"));
  EXPECT_TRUE(c.add("b"));
  EXPECT_TRUE(c.add("c"));   // a b c
  EXPECT_FALSE(c.add("a"));  // b c a
  EXPECT_TRUE(c.add("d"));   // c a d   (b evicted)
  EXPECT_EQ(c.size(), 3u);
  EXPECT_TRUE(c.add("b"));   // a d b   (c evicted)
  EXPECT_FALSE(c.add("a"));  // d b a
  EXPECT_TRUE(c.add("c"));   // b a c   (d evicted)
  EXPECT_TRUE(c.add("d"));   // a c d   (b evicted)
  EXPECT_FALSE(c.add("a"));  // c d a
  EXPECT_FALSE(c.add("c"));  // d a c
  EXPECT_FALSE(c.add("d"));  // a c d
  EXPECT_TRUE(c.add("b"));   // c d b   (a evicted)
  EXPECT_TRUE(c.add("a"));   // d b a   (c evicted)
  EXPECT_EQ(c.size(), 3u);
}

TEST(DuplicateWarningChecker, VerboseAlwaysSaysShowButStillTracksOrder) {
  DuplicateWarningChecker c(2, /*verbose=*/true);
  EXPECT_TRUE(c.add("a"));
  EXPECT_TRUE(c.add("a"));
  EXPECT_EQ(c.size(), 1u);
  EXPECT_TRUE(c.add("b"));
  EXPECT_TRUE(c.add("a"));  // touched: b is now the least recently used
  EXPECT_TRUE(c.add("c"));  // evicts b
  EXPECT_EQ(c.size(), 2u);
}

TEST(DuplicateWarningChecker, ResetForgetsEveryKey) {
  DuplicateWarningChecker c;
  EXPECT_TRUE(c.add("x"));
  EXPECT_TRUE(c.add("y"));
  c.reset();
  EXPECT_EQ(c.size(), 0u);
  EXPECT_TRUE(c.add("x"));
  EXPECT_FALSE(c.add("x"));
  EXPECT_EQ(c.size(), 1u);
}

TEST(DuplicateWarningChecker, CapacityZeroIsOne) {
  DuplicateWarningChecker c(0);
  EXPECT_EQ(c.capacity(), 1u);
  EXPECT_TRUE(c.add("a"));
  EXPECT_FALSE(c.add("a"));
  EXPECT_TRUE(c.add("b"));
  EXPECT_TRUE(c.add("a"));
  EXPECT_EQ(c.size(), 1u);
}

TEST(DuplicateWarningChecker, SizeIsBoundedAndKeepsTheNewestKeys) {
  DuplicateWarningChecker c;
  constexpr int kKeys = 10000;
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(c.add("key " + std::to_string(i)));
  EXPECT_EQ(c.size(), kDefaultDuplicateWarningCapacity);
  // Oldest kept key first, so each touch moves it behind the rest: no eviction.
  const int first_kept = kKeys - static_cast<int>(kDefaultDuplicateWarningCapacity);
  for (int i = first_kept; i < kKeys; ++i) {
    ASSERT_FALSE(c.add("key " + std::to_string(i))) << i;
  }
  EXPECT_TRUE(c.add("key " + std::to_string(first_kept - 1)));
  EXPECT_EQ(c.size(), kDefaultDuplicateWarningCapacity);
}

TEST(DuplicateWarningChecker, ConcurrentAddsShowEachDistinctKeyOnce) {
  constexpr int kThreads = 4;
  constexpr int kDistinct = 2000;  // below the capacity: nothing is evicted
  DuplicateWarningChecker c;
  std::atomic<int> shown{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Each thread walks every key from its own starting point, twice.
      for (int n = 0; n < 2 * kDistinct; ++n) {
        const int k = (n + t * kDistinct / kThreads) % kDistinct;
        if (c.add("warning " + std::to_string(k))) shown.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(shown.load(), kDistinct);
  EXPECT_EQ(c.size(), static_cast<std::size_t>(kDistinct));
}

// The checker is process-wide: each test uses messages no other test logs.
std::string unique_message(const char* what) {
  return std::string(what) + " (pid " + std::to_string(::getpid()) + ")";
}

TEST(LogUnique, SameMessageTwiceIsOneLine) {
  const std::string msg = unique_message("cuModuleLoad failed: once");
  testing::StderrCapture cap;
  detail::log_unique(msg);
  detail::log_unique(msg);
  const auto lines = jitscope::testing::lines_of(cap.text());
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "jitscope: " + msg);
}

TEST(LogUnique, DistinctMessagesAreTwoLines) {
  const std::string a = unique_message("distinct one");
  const std::string b = unique_message("distinct two");
  testing::StderrCapture cap;
  detail::log_unique(a);
  detail::log_unique(b);
  detail::log_unique(a);
  detail::log_unique(b);
  const auto lines = jitscope::testing::lines_of(cap.text());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "jitscope: " + a);
  EXPECT_EQ(lines[1], "jitscope: " + b);
}

}  // namespace
}  // namespace jitscope
