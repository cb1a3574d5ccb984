// Distribution: exact durations up to kExactSamples, then a log-bucketed
// histogram (distribution.hpp states the method and its error).
#include "distribution.hpp"

#include "report_data.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace jitscope::report {

std::size_t Distribution::bucket_of(std::uint64_t ns) {
  constexpr std::uint64_t sub = std::uint64_t{1} << kSubBits;
  if (ns < sub) return static_cast<std::size_t>(ns);
  // ns in [2^e, 2^(e+1)), e >= kSubBits: its top kSubBits + 1 bits pick the bucket.
  const int e = std::bit_width(ns) - 1;
  const int shift = e - kSubBits;
  const std::uint64_t mantissa = ns >> shift;  // in [sub, 2 * sub)
  return static_cast<std::size_t>((static_cast<std::uint64_t>(shift + 1) << kSubBits) +
                                  (mantissa - sub));
}

std::uint64_t Distribution::bucket_low(std::size_t bucket) {
  constexpr std::uint64_t sub = std::uint64_t{1} << kSubBits;
  if (bucket < sub) return bucket;
  const std::uint64_t shift = (bucket >> kSubBits) - 1;
  return (sub + (bucket & (sub - 1))) << shift;
}

std::uint64_t Distribution::bucket_high(std::size_t bucket) {
  constexpr std::uint64_t sub = std::uint64_t{1} << kSubBits;
  if (bucket < sub) return bucket;
  const std::uint64_t shift = (bucket >> kSubBits) - 1;
  return bucket_low(bucket) + ((std::uint64_t{1} << shift) - 1);
}

void Distribution::bucket_add(std::uint64_t ns, std::uint64_t n) {
  const std::size_t b = bucket_of(ns);
  if (b >= buckets_.size()) buckets_.resize(b + 1, 0);
  buckets_[b] += n;
}

void Distribution::add(std::int64_t ns) {
  ns = std::max<std::int64_t>(ns, 0);
  if (count_ == 0) {
    min_ = max_ = ns;
  } else {
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
  }
  ++count_;
  total_ = sat_add(total_, ns);
  const double x = static_cast<double>(ns);
  const double d = x - mean_;
  mean_ += d / static_cast<double>(count_);
  m2_ += d * (x - mean_);
  if (count_ <= kExactSamples) {
    exact_.push_back(ns);
    return;
  }
  if (!exact_.empty()) {  // the first duration past the bound: all to the histogram
    for (std::int64_t v : exact_) bucket_add(static_cast<std::uint64_t>(v), 1);
    exact_.clear();
    exact_.shrink_to_fit();
  }
  bucket_add(static_cast<std::uint64_t>(ns), 1);
}

std::int64_t Distribution::percentile(double p) const {
  if (count_ == 0) return 0;
  // Nearest rank: the ceil(p/100 * n)-th smallest, 1-based, at least the first.
  const double exact_rank = std::ceil(p / 100.0 * static_cast<double>(count_));
  const std::uint64_t rank =
      std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::max(exact_rank, 1.0)), 1, count_);
  if (buckets_.empty()) {
    std::vector<std::int64_t> v = exact_;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(rank - 1), v.end());
    return v[rank - 1];
  }
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      const std::uint64_t lo = bucket_low(b), hi = bucket_high(b);
      const auto mid = static_cast<std::int64_t>(lo + (hi - lo) / 2);
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

std::size_t Distribution::log_bin_of(std::uint64_t ns) {
  if (ns < 4) return static_cast<std::size_t>(ns);
  const int e = std::bit_width(ns) - 1;               // ns in [2^e, 2^(e+1)), e >= 2
  const std::uint64_t quarter = (ns >> (e - 2)) & 3;  // which quarter of the octave
  // add() keeps durations in int64, so e <= 62: at most 4 + 60 * 4 + 3 = 247
  // (kLogBins = 248); e = 63 would give 251.
  return 4 + static_cast<std::size_t>(e - 2) * 4 + quarter;
}

LogBin Distribution::log_bin_range(std::size_t bin) {
  LogBin b;
  if (bin < 4) {
    b.low_ns = b.high_ns = static_cast<std::int64_t>(bin);
    return b;
  }
  const std::size_t e = (bin - 4) / 4 + 2, quarter = (bin - 4) % 4;
  const std::uint64_t low = (4 + quarter) << (e - 2);
  const std::uint64_t high = low + ((std::uint64_t{1} << (e - 2)) - 1);
  // Durations are int64: the top bin's high end is clamped to INT64_MAX.
  b.low_ns = static_cast<std::int64_t>(std::min<std::uint64_t>(low, INT64_MAX));
  b.high_ns = static_cast<std::int64_t>(std::min<std::uint64_t>(high, INT64_MAX));
  return b;
}

std::vector<LogBin> Distribution::log_bins() const {
  std::vector<std::uint64_t> counts(kLogBins, 0);
  if (buckets_.empty()) {
    for (std::int64_t v : exact_) ++counts[log_bin_of(static_cast<std::uint64_t>(v))];
  } else {
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      if (buckets_[b] != 0) counts[log_bin_of(bucket_low(b))] += buckets_[b];
    }
  }
  std::vector<LogBin> out;
  std::size_t first = kLogBins, last = 0;
  for (std::size_t i = 0; i < kLogBins; ++i) {
    if (counts[i] == 0) continue;
    first = std::min(first, i);
    last = i;
  }
  for (std::size_t i = first; i <= last && first < kLogBins; ++i) {
    LogBin b = log_bin_range(i);
    b.count = counts[i];
    out.push_back(b);
  }
  return out;
}

Summary Distribution::summary() const {
  Summary s;
  s.count = count_;
  s.total_ns = total_;
  if (count_ == 0) return s;
  s.mean_ns = total_ / static_cast<std::int64_t>(count_);
  s.min_ns = min_;
  s.max_ns = max_;
  s.p50_ns = percentile(50);
  s.p90_ns = percentile(90);
  s.p99_ns = percentile(99);
  s.stddev_ns = count_ < 2 ? 0
                           : static_cast<std::int64_t>(
                                 std::llround(std::sqrt(m2_ / static_cast<double>(count_ - 1))));
  s.exact = buckets_.empty();
  return s;
}

}  // namespace jitscope::report
