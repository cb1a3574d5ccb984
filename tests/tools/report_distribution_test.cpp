// Percentiles and standard deviations of jitscope-report, checked against
// an independent computation on values the test generates: sorted, the
// nearest rank ceil(p/100 * n) picked, the two-pass sample deviation.
//
// Covered: Distribution in process (exact up to kExactSamples durations; the
// histogram beyond within its stated 1/256 relative error, over a wide
// log-normal spread; every bucket's range holds what it is given and is no
// wider than 1/128 of its lower bound); the report's compile_times p50, p90,
// p99 and stddev through the binary (a name under the exact bound: equal; a
// name of 5000 spans: within the bound); the units' wall-time summary.
// Not covered: traces of 1 GiB (bench/report measures memory there).
#include <distribution.hpp>

#include "report_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

using jitscope::report::Distribution;
using namespace jitscope::testing::report;

// The nearest-rank percentile of v, computed here: sort, take rank ceil(p n / 100).
long long nearest_rank(std::vector<long long> v, double p) {
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

long long sample_stddev(const std::vector<long long>& v) {
  if (v.size() < 2) return 0;
  long double mean = 0;
  for (long long x : v) mean += x;
  mean /= v.size();
  long double ss = 0;
  for (long long x : v) ss += (x - mean) * (x - mean);
  return std::llround(std::sqrt(static_cast<double>(ss / (v.size() - 1))));
}

// |got - want| within the histogram's bound: half a bucket, 1/256 of the value.
void expect_within_bound(long long got, long long want, const std::string& what) {
  EXPECT_LE(std::llabs(got - want), want / 256 + 1) << what << ": got " << got << ", want " << want;
}

std::vector<long long> lognormal(std::size_t n, unsigned seed, double mu, double sigma) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> d(mu, sigma);
  std::vector<long long> v(n);
  for (long long& x : v) x = static_cast<long long>(d(rng));
  return v;
}

TEST(ReportDistribution, ExactUpToTheBound) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{100},
                        Distribution::kExactSamples}) {
    const std::vector<long long> v = lognormal(n, static_cast<unsigned>(n), 12, 2);
    Distribution d;
    for (long long x : v) d.add(x);
    const auto s = d.summary();
    EXPECT_TRUE(s.exact) << n;
    for (double p : {1.0, 50.0, 90.0, 99.0, 100.0})
      EXPECT_EQ(d.percentile(p), nearest_rank(v, p)) << "n " << n << " p" << p;
    EXPECT_EQ(s.p50_ns, nearest_rank(v, 50));
    EXPECT_EQ(s.p90_ns, nearest_rank(v, 90));
    EXPECT_EQ(s.p99_ns, nearest_rank(v, 99));
    EXPECT_EQ(s.min_ns, *std::min_element(v.begin(), v.end()));
    EXPECT_EQ(s.max_ns, *std::max_element(v.begin(), v.end()));
    EXPECT_NEAR(static_cast<double>(s.stddev_ns), static_cast<double>(sample_stddev(v)), 1.0) << n;
  }
}

TEST(ReportDistribution, HistogramWithinItsStatedError) {
  // 200000 durations from about 100 ns to minutes (sigma 3 around 160 µs).
  const std::vector<long long> v = lognormal(200000, 7, 12, 3);
  Distribution d;
  long long total = 0;
  for (long long x : v) {
    d.add(x);
    total += x;
  }
  const auto s = d.summary();
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(s.count, v.size());
  EXPECT_EQ(s.total_ns, total);  // count, total, min, max stay exact
  EXPECT_EQ(s.min_ns, *std::min_element(v.begin(), v.end()));
  EXPECT_EQ(s.max_ns, *std::max_element(v.begin(), v.end()));
  for (double p : {0.1, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 100.0})
    expect_within_bound(d.percentile(p), nearest_rank(v, p), "p" + std::to_string(p));
  // Welford in double against a two-pass long double: 1 ns in 10^9s.
  EXPECT_NEAR(static_cast<double>(s.stddev_ns), static_cast<double>(sample_stddev(v)),
              1e-9 * static_cast<double>(sample_stddev(v)) + 1);
}

TEST(ReportDistribution, BucketsHoldTheirValuesAndAreNarrow) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    const std::size_t b = Distribution::bucket_of(v);
    ASSERT_LT(b, Distribution::kMaxBuckets);
    const std::uint64_t lo = Distribution::bucket_low(b), hi = Distribution::bucket_high(b);
    ASSERT_LE(lo, v);
    ASSERT_GE(hi, v);
    ASSERT_LE(hi - lo, lo / 128) << v;  // width <= lower bound / 2^kSubBits
  }
}

TEST(ReportDistribution, CompileTimesPercentilesThroughTheReport) {
  // "few": 9 spans (exact); "many": 5000 (the histogram); both from the test's own values.
  const std::vector<long long> few = lognormal(9, 1, 13, 1);
  const std::vector<long long> many = lognormal(5000, 2, 11, 2);
  std::string t = "[";
  long long at = 0;
  auto add = [&](const char* name, const std::vector<long long>& durs) {
    for (long long d : durs) {
      t += (t.size() > 1 ? ",\n" : "") + x_event(name, at, d);
      at += d + 1000;
    }
  };
  add("few", few);
  add("many", many);
  // Units with walls 1..5 ms: p50 3 ms.
  const long long walls[] = {4000000, 1000000, 5000000, 2000000, 3000000};
  for (int i = 0; i < 5; ++i) {
    const std::string cid = std::to_string(i) + "/0";
    t += ",\n{\"ph\":\"X\",\"cat\":\"compile_unit\",\"name\":\"[" + cid +
         "] u\",\"pid\":1,\"tid\":2,\"ts\":" + us(at) + ",\"dur\":" + us(walls[i]) +
         ",\"args\":{\"compile_id\":\"" + cid + "\"}}";
    at += walls[i] + 1000;
  }
  const json rep = report_json({write_temp("distribution", t + "]")});
  ASSERT_EQ(rep["compile_times"].size(), 2u);
  for (const json& row : rep["compile_times"]) {
    const bool is_few = row["name"] == "few";
    const std::vector<long long>& v = is_few ? few : many;
    const std::string name = row["name"];
    EXPECT_EQ(row["count"].get<std::size_t>(), v.size());
    EXPECT_NEAR(row["stddev_ns"].get<double>(), static_cast<double>(sample_stddev(v)), 1.0) << name;
    using Key = std::pair<const char*, double>;
    for (const auto& [key, p] : {Key{"p50_ns", 50.0}, Key{"p90_ns", 90.0}, Key{"p99_ns", 99.0}}) {
      const long long got = row[key].get<long long>(), want = nearest_rank(v, p);
      if (is_few) {
        EXPECT_EQ(got, want) << name << " " << key;
      } else {
        expect_within_bound(got, want, name + " " + key);
      }
    }
  }
  const json& w = rep["unit_walls"];
  EXPECT_EQ(w["count"], 5);
  EXPECT_EQ(w["total_ns"], 15000000);
  EXPECT_EQ(w["mean_ns"], 3000000);
  EXPECT_EQ(w["min_ns"], 1000000);
  EXPECT_EQ(w["max_ns"], 5000000);
  EXPECT_EQ(w["p50_ns"], 3000000);
  EXPECT_EQ(w["p90_ns"], 5000000);
  EXPECT_EQ(w["p99_ns"], 5000000);
  EXPECT_EQ(w["stddev_ns"], 1581139);  // sqrt(2.5) ms
}

}  // namespace
