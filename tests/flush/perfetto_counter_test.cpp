// ProcessSequence::counter_static, the writer's counters' fast path in the
// Perfetto form: for every value it takes, it must append the very bytes
// counter() appends from the JSON form's spelling of the value (integers
// where that spelling is an integer, the double otherwise, NaN for none),
// and it must decline once the ids and tracks it kept may not be in the
// file. Not covered here: the flusher's unload cycle calling
// TraceWriter::forget_static_names (perfetto_writer_test's unload test
// drives the writer as that cycle does), and Perfetto's own reading of
// the packets (tests/perfetto/).
#include "base/json_writer.hpp"
#include "format/perfetto/transcode.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail::pfw {
namespace {

constexpr std::string_view kCategory = "jitscope";
constexpr std::int64_t kPid = 4242;
const char* const kName = "queue.depth";

std::string spelled(double v) {
  std::string text;
  append_double(text, v);
  return text;
}

// Values around every edge of the shortest form: trailing zeros from
// 10,000 up ("1e+05"), 2^53 and beyond, negative zero, non-finite values,
// fractions, and random bit patterns.
std::vector<double> edge_values() {
  std::vector<double> v = {0.0,
                           -0.0,
                           1.0,
                           -1.0,
                           9.0,
                           10.0,
                           9990.0,
                           -9990.0,
                           9999.0,
                           10000.0,
                           -10000.0,
                           10001.0,
                           12345.0,
                           100000.0,
                           123450.0,
                           1e15,
                           1e16,
                           1e17,
                           0x1p53,
                           0x1p53 - 1,
                           -0x1p53 + 1,
                           0x1p53 + 2,
                           0x1p63,
                           -0x1p63,
                           1e300,
                           0.5,
                           -2.5,
                           0.1,
                           1e-7,
                           5e-324,
                           2.2250738585072014e-308,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity()};
  for (double p = 1; p < 1e20; p *= 10) {
    v.insert(v.end(), {p, p - 1, p + 1, -p, p * 7, p * 1.5});
  }
  std::mt19937_64 rng(20261126);
  for (int i = 0; i < 2000; ++i) {
    v.push_back(static_cast<double>(static_cast<std::int64_t>(rng() >> (rng() % 64))));
    v.push_back(static_cast<double>(rng() % 1000000) / 100.0);
    v.push_back(std::bit_cast<double>(rng()));
  }
  return v;
}

TEST(PerfettoCounter, TheFastPathWritesTheBytesTheSpelledValueGives) {
  ProcessSequence spelled_seq;
  ProcessSequence fast_seq;
  spelled_seq.start_file(1);
  fast_seq.start_file(1);
  std::string expected;
  std::string got;
  // 200 other names first: the name's id takes two varint bytes.
  for (int k = 0; k < 200; ++k) {
    const std::string other = "other." + std::to_string(k);
    spelled_seq.counter(kPid, kCategory, other, 10, "1", expected);
    spelled_seq.settle(true);
    fast_seq.counter(kPid, kCategory, other, 10, "1", got);
    fast_seq.settle(true);
  }
  ASSERT_EQ(got, expected);
  std::size_t fast = 0;
  std::uint64_t ts = 1'000'000;
  for (const double v : edge_values()) {
    ts += 10;
    spelled_seq.counter(kPid, kCategory, kName, ts, spelled(v), expected);
    spelled_seq.settle(true);
    if (fast_seq.counter_static(kPid, kCategory, kName, ts, v, got)) {
      ++fast;
    } else {
      fast_seq.counter(kPid, kCategory, kName, ts, spelled(v), got, kName);
    }
    fast_seq.settle(true);
    ASSERT_EQ(got, expected) << "value " << spelled(v);
  }
  // Most samples take the fast path; whole numbers with a trailing zero
  // from 10,000 up and those from 2^53 up do not.
  EXPECT_GT(fast, edge_values().size() / 2);
}

TEST(PerfettoCounter, TheFastPathDeclinesWhereItsIdsMayNotBeInTheFile) {
  ProcessSequence seq;
  seq.start_file(1);
  std::string out;
  EXPECT_FALSE(seq.counter_static(kPid, kCategory, kName, 10, 1.0, out)) << "never seen";
  seq.counter(kPid, kCategory, kName, 10, "1", out, kName);
  seq.settle(true);
  EXPECT_TRUE(seq.counter_static(kPid, kCategory, kName, 20, 2.0, out));
  seq.settle(true);
  EXPECT_FALSE(seq.counter_static(kPid + 1, kCategory, kName, 30, 2.0, out)) << "another pid";
  const std::string other_category(kCategory);
  EXPECT_FALSE(seq.counter_static(kPid, other_category, kName, 30, 2.0, out))
      << "another category object";
  EXPECT_FALSE(seq.counter_static(kPid, kCategory, nullptr, 30, 2.0, out)) << "no static name";
  EXPECT_FALSE(seq.counter_static(kPid, kCategory, kName, 30, 100000.0, out)) << "\"1e+05\"";
  EXPECT_TRUE(seq.counter_static(kPid, kCategory, kName, 30, 120000.0, out)) << "\"120000\"";
  seq.settle(true);

  // A definition not yet in a packet goes with counter()'s.
  seq.interner.intern(Interner::kName, "fresh");
  EXPECT_FALSE(seq.counter_static(kPid, kCategory, kName, 35, 2.0, out));
  seq.counter(kPid, kCategory, kName, 35, "2", out, kName);
  seq.settle(true);
  EXPECT_TRUE(seq.counter_static(kPid, kCategory, kName, 36, 2.0, out));
  seq.settle(true);

  // A commit cut by the cap: the track and the ids may not be in the file.
  seq.settle(false);
  const std::size_t before = out.size();
  EXPECT_FALSE(seq.counter_static(kPid, kCategory, kName, 40, 2.0, out));
  EXPECT_EQ(out.size(), before) << "nothing appended when it declines";
  seq.counter(kPid, kCategory, kName, 40, "2", out, kName);
  seq.settle(true);
  EXPECT_TRUE(seq.counter_static(kPid, kCategory, kName, 50, 2.0, out));
  seq.settle(true);

  // A new file defines everything again.
  seq.start_file(60);
  EXPECT_FALSE(seq.counter_static(kPid, kCategory, kName, 70, 2.0, out));
  seq.counter(kPid, kCategory, kName, 70, "2", out, kName);
  seq.settle(true);
  EXPECT_TRUE(seq.counter_static(kPid, kCategory, kName, 80, 2.0, out));
  seq.settle(true);

  // An unloaded image's pointers may name other strings.
  seq.forget_static_names();
  EXPECT_FALSE(seq.counter_static(kPid, kCategory, kName, 90, 2.0, out));
}

}  // namespace
}  // namespace jitscope::detail::pfw
