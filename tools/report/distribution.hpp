// Percentiles and spread of a stream of durations in bounded memory: the
// report keeps one Distribution per span name, and a 1 GiB trace must not
// keep every duration.
//
//   Distribution d;
//   for (std::int64_t ns : durations) d.add(ns);
//   const Summary s = d.summary();   // count, total, mean, min, max, p50, p90, p99, stddev
//
// Method: the first kExactSamples durations are kept as they are, and while
// there are no more percentiles are exact (nearest rank: the value at rank
// ceil(p/100 * n) of the sorted durations). The next one moves them all to
// a log-bucketed histogram (HDR-style: durations under 2^kSubBits ns have a
// bucket each; above, each power of two is cut into 2^kSubBits equal
// buckets), and a percentile is then the middle of the bucket that holds
// its rank, clamped to the exact min and max: at most 1/2^(kSubBits+1) =
// 0.39% from the exact nearest-rank value (half a bucket, whose width is at
// most 1/2^kSubBits of its lower bound). count, total, mean, min and max
// stay exact; stddev is Welford's running variance in double (sample
// standard deviation, n - 1; 0 below two durations).
// Memory: at most kExactSamples * 8 bytes (2 KiB), then 8 bytes per bucket
// up to the longest duration's (35 KiB below 1000 s, kMaxBuckets * 8 =
// 58 KiB at most) per distribution, whatever the count.
// Cost: O(1) per add; summary() sorts at most kExactSamples values or walks
// the buckets once.
#pragma once

#include "report_data.hpp"

#include <cstdint>
#include <vector>

namespace jitscope::report {

struct Summary {
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0;
  std::int64_t p50_ns = 0, p90_ns = 0, p99_ns = 0, stddev_ns = 0;
  bool exact = true;  // percentiles exact (no more than kExactSamples durations)
};

class Distribution {
 public:
  static constexpr std::size_t kExactSamples = 256;
  static constexpr int kSubBits = 7;  // 128 buckets per power of two
  static constexpr std::size_t kMaxBuckets = (64 - kSubBits + 1) << kSubBits;

  void add(std::int64_t ns);  // negative durations count as 0
  std::uint64_t count() const { return count_; }
  // The nearest-rank percentile, p in (0, 100]; 0 when empty.
  std::int64_t percentile(double p) const;
  Summary summary() const;
  bool exact() const { return buckets_.empty(); }

  // The durations in log-spaced bins, four per power of two (0..3 ns one
  // bin each), from the first non-empty bin to the last, empty ones
  // between included. Derived from what add() keeps (the exact durations,
  // else the buckets: each bucket lies inside one of these bins, since a
  // bin is 32 buckets of its octave), so no extra memory per name; at most
  // kLogBins bins. The counts sum to count().
  std::vector<LogBin> log_bins() const;
  static constexpr std::size_t kLogBins = 248;  // 4 + 61 octaves x 4
  static std::size_t log_bin_of(std::uint64_t ns);
  static LogBin log_bin_range(std::size_t bin);  // count 0

  // The histogram's bucket of a duration and that bucket's [low, high]
  // range (public for the tests of the error bound).
  static std::size_t bucket_of(std::uint64_t ns);
  static std::uint64_t bucket_low(std::size_t bucket);
  static std::uint64_t bucket_high(std::size_t bucket);  // inclusive

 private:
  void bucket_add(std::uint64_t ns, std::uint64_t n);

  std::uint64_t count_ = 0;
  std::int64_t total_ = 0, min_ = 0, max_ = 0;
  double mean_ = 0, m2_ = 0;            // Welford
  std::vector<std::int64_t> exact_;     // while count_ <= kExactSamples
  std::vector<std::uint64_t> buckets_;  // after: counts by bucket_of, grown as needed
};

}  // namespace jitscope::report
