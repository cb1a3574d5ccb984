// jitscope-report --baseline: runs compared, end to end (the binary as a
// subprocess on traces built here), with exact expected deltas.
//
// Covered: per-name, per-unit (matched by name across different compile
// ids) and per-kernel rows; added and removed names and units; a phase made
// 2x slower flagged, one inside the baseline runs' spread not (and the same
// change flagged against one baseline run); faster; units from metrics
// files only; the order by size of change; --fail-if-slower's exit status
// (3 on a regression, 0 within the threshold or under --min-change-ms, 2
// for usage, 1 for bad input); the table, Markdown and CSV layouts; two
// real clang -ftime-trace files (-O0 against -O2) against totals computed
// here from their events.
// Not covered: percentiles beyond the exact range (report_distribution_test).
#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

// A trace file from events.
std::string trace(const std::vector<std::string>& events) {
  std::string t = "[";
  for (std::size_t i = 0; i < events.size(); ++i) t += (i ? ",\n" : "") + events[i];
  return write_temp("compare", t + "]");
}

// A compile-unit slice, or a span inside a unit.
std::string unit(const char* cid, const char* name, long long start, long long dur) {
  return std::string(R"({"ph":"X","cat":"compile_unit","name":"[)") + cid + "] " + name +
         R"(","pid":1,"tid":1,"ts":)" + us(start) + R"(,"dur":)" + us(dur) +
         R"(,"args":{"compile_id":")" + cid + R"("}})";
}
std::string in_unit(const char* cid, const char* name, long long start, long long dur) {
  return std::string(R"({"ph":"X","name":")") + name + R"(","pid":1,"tid":1,"ts":)" + us(start) +
         R"(,"dur":)" + us(dur) + R"(,"args":{"compile_id":")" + cid + R"("}})";
}
std::string kernel(const char* name, long long start, long long dur) {
  return std::string(R"({"ph":"X","cat":"kernel","name":")") + name +
         R"(","pid":10000001,"tid":7,"ts":)" + us(start) + R"(,"dur":)" + us(dur) +
         R"(,"args":{"device":0,"stream":7,"grid":[1,1,1],"block":[32,1,1]}})";
}
std::string gpu_copy(const char* name, long long start, long long dur) {  // no grid
  return std::string(R"({"ph":"X","cat":"cuda","name":")") + name +
         R"(","pid":10000001,"tid":7,"ts":)" + us(start) + R"(,"dur":)" + us(dur) +
         R"(,"args":{"device":0,"stream":7,"bytes":4096}})";
}

std::vector<std::string> order(const json& rep, const char* section) {
  std::vector<std::string> out;
  for (const json& r : rep[section]) out.push_back(r["name"]);
  return out;
}

json compare_json(std::vector<std::string> args) { return report_json(std::move(args)); }

TEST(ReportCompare, ExactDeltasAddedAndRemovedNamesAndUnits) {
  // Baseline: units fwd (0/0: A twice 1 ms, B 0.5 ms) and bwd (1/0: C 0.3 ms).
  // New: fwd again, as 5/0 (A twice 2 ms: 2x slower, B the same) and opt
  // (6/0: D 0.4 ms); bwd and C are gone.
  const std::string base = trace({
      in_unit("0/0", "A", 1 * kMs, 1 * kMs),
      in_unit("0/0", "A", 3 * kMs, 1 * kMs),
      in_unit("0/0", "B", 5 * kMs, kMs / 2),
      unit("0/0", "fwd", 0, 10 * kMs),
      in_unit("1/0", "C", 21 * kMs, 300000),
      unit("1/0", "bwd", 20 * kMs, 3 * kMs),
  });
  const std::string next = trace({
      in_unit("5/0", "A", 1 * kMs, 2 * kMs),
      in_unit("5/0", "A", 4 * kMs, 2 * kMs),
      in_unit("5/0", "B", 7 * kMs, kMs / 2),
      unit("5/0", "fwd", 0, 12 * kMs),
      in_unit("6/0", "D", 21 * kMs, 400000),
      unit("6/0", "opt", 20 * kMs, 4 * kMs),
  });
  const json rep = compare_json({"--baseline", base, next});
  const json& c = rep["comparison"];
  EXPECT_EQ(c["baseline"], json::array({base}));
  EXPECT_EQ(c["new"], json::array({next}));
  EXPECT_EQ(c["slower"], 2);  // A, fwd
  EXPECT_EQ(c["faster"], 0);
  EXPECT_EQ(c["added"], 2);    // D, opt
  EXPECT_EQ(c["removed"], 2);  // C, bwd
  EXPECT_EQ(c["failing"], 0);

  // Sorted by the size of the change: A +2 ms, D +0.4 ms, C -0.3 ms, B 0.
  EXPECT_EQ(order(rep, "names"), (std::vector<std::string>{"A", "D", "C", "B"}));
  auto names = rows(rep, "names");
  const json& a = names["A"];
  EXPECT_EQ(a["change"], "slower");
  EXPECT_EQ(a["baseline"]["count"], 2);
  EXPECT_EQ(a["baseline"]["total_ns"], 2 * kMs);
  EXPECT_EQ(a["baseline"]["mean_ns"], 1 * kMs);
  EXPECT_EQ(a["baseline"]["p50_ns"], 1 * kMs);
  EXPECT_EQ(a["baseline"]["p90_ns"], 1 * kMs);
  EXPECT_EQ(a["new"]["total_ns"], 4 * kMs);
  EXPECT_EQ(a["delta"]["count"], 0);
  EXPECT_EQ(a["delta"]["total_ns"], 2 * kMs);
  EXPECT_EQ(a["delta"]["total_pct"], 100.0);
  EXPECT_EQ(a["delta"]["mean_ns"], 1 * kMs);
  EXPECT_EQ(a["delta"]["p50_ns"], 1 * kMs);
  EXPECT_EQ(a["delta"]["p90_ns"], 1 * kMs);
  EXPECT_EQ(names["B"]["change"], "unchanged");
  EXPECT_EQ(names["B"]["delta"]["total_ns"], 0);
  EXPECT_EQ(names["C"]["change"], "removed");
  EXPECT_TRUE(names["C"]["new"].is_null());
  EXPECT_EQ(names["C"]["delta"]["total_ns"], -300000);
  EXPECT_EQ(names["D"]["change"], "added");
  EXPECT_TRUE(names["D"]["baseline"].is_null());
  EXPECT_TRUE(names["D"]["delta"]["total_pct"].is_null());
  EXPECT_EQ(names["D"]["delta"]["total_ns"], 400000);

  // Units by name: fwd is 0/0 in one run and 5/0 in the other.
  EXPECT_EQ(order(rep, "units"), (std::vector<std::string>{"opt", "bwd", "fwd"}));
  auto units = rows(rep, "units");
  EXPECT_EQ(units["fwd"]["change"], "slower");  // +2 ms, +20%
  EXPECT_EQ(units["fwd"]["baseline"]["total_ns"], 10 * kMs);
  EXPECT_EQ(units["fwd"]["new"]["total_ns"], 12 * kMs);
  EXPECT_EQ(units["fwd"]["delta"]["total_ns"], 2 * kMs);
  EXPECT_EQ(units["fwd"]["delta"]["total_pct"], 20.0);
  EXPECT_EQ(units["bwd"]["change"], "removed");
  EXPECT_EQ(units["bwd"]["delta"]["total_ns"], -3 * kMs);
  EXPECT_EQ(units["opt"]["change"], "added");
  EXPECT_EQ(units["opt"]["new"]["total_ns"], 4 * kMs);
  EXPECT_TRUE(rep["kernels"].empty());

  // The same fwd change under --threshold 25 is within it.
  const json loose = compare_json({"--baseline", base, next, "--threshold", "25"});
  EXPECT_EQ(rows(loose, "units")["fwd"]["change"], "unchanged");
  EXPECT_EQ(rows(loose, "names")["A"]["change"], "slower");
}

// One run of spans P, Q and R with these durations (ms, may be fractional).
std::string run_of(double p, double q, double r) {
  auto ns = [](double ms) { return static_cast<long long>(ms * kMs); };
  return trace(
      {x_event("P", 0, ns(p)), x_event("Q", 200 * kMs, ns(q)), x_event("R", 300 * kMs, ns(r))});
}

TEST(ReportCompare, FlagsOnlyChangesOutsideTheBaselineSpread) {
  // P: baseline 100, 130, 105 ms; new 125, 120 (median 122.5): +17% on the
  // baseline median but inside its spread, not flagged. Q: 10, 10.5, 9.5 ->
  // 20, 21: 2x slower, flagged. R: 50, 52, 51 -> 20, 20: faster.
  const std::vector<std::string> base = {run_of(100, 10, 50), run_of(130, 10.5, 52),
                                         run_of(105, 9.5, 51)};
  const std::vector<std::string> next = {run_of(125, 20, 20), run_of(120, 21, 20)};
  const json rep = compare_json(
      {"--baseline", base[0], "--baseline", base[1], "--baseline", base[2], next[0], next[1]});
  auto names = rows(rep, "names");
  const json& p = names["P"];
  EXPECT_EQ(p["change"], "unchanged");
  EXPECT_EQ(p["baseline"]["total_ns"], 105 * kMs);  // the median run
  EXPECT_EQ(p["baseline"]["total_min_ns"], 100 * kMs);
  EXPECT_EQ(p["baseline"]["total_max_ns"], 130 * kMs);
  EXPECT_EQ(p["baseline"]["run_totals_ns"], json::array({100 * kMs, 130 * kMs, 105 * kMs}));
  EXPECT_EQ(p["new"]["total_ns"], 122500000);  // the mean of the middle two
  EXPECT_EQ(p["new"]["total_min_ns"], 120 * kMs);
  EXPECT_EQ(p["new"]["total_max_ns"], 125 * kMs);
  EXPECT_EQ(p["delta"]["total_ns"], 17500000);
  const json& q = names["Q"];
  EXPECT_EQ(q["change"], "slower");
  EXPECT_EQ(q["baseline"]["total_ns"], 10 * kMs);
  EXPECT_EQ(q["new"]["total_ns"], 20500000);
  EXPECT_EQ(q["delta"]["total_ns"], 10500000);
  EXPECT_DOUBLE_EQ(q["delta"]["total_pct"].get<double>(), 105.0);
  EXPECT_EQ(names["R"]["change"], "faster");
  EXPECT_EQ(names["R"]["delta"]["total_ns"], -31 * kMs);
  EXPECT_EQ(rep["comparison"]["slower"], 1);
  EXPECT_EQ(rep["comparison"]["faster"], 1);
  // Order: R -31 ms, P +17.5 ms, Q +10.5 ms.
  EXPECT_EQ(order(rep, "names"), (std::vector<std::string>{"R", "P", "Q"}));

  // Against the first baseline run alone, P's +22.5% is a change.
  const json one = compare_json({"--baseline", base[0], next[0], next[1]});
  EXPECT_EQ(rows(one, "names")["P"]["change"], "slower");
  EXPECT_EQ(rows(one, "names")["P"]["delta"]["total_ns"], 22500000);
}

TEST(ReportCompare, FailIfSlowerExitStatus) {
  const std::string base = trace({x_event("A", 0, 10 * kMs), x_event("tiny", 20 * kMs, 10000)});
  const std::string slow = trace({x_event("A", 0, 20 * kMs), x_event("tiny", 30 * kMs, 10000)});
  const std::string tiny_slow =
      trace({x_event("A", 0, 10 * kMs), x_event("tiny", 30 * kMs, 20000)});

  // A 2x slower: fails --fail-if-slower 50, with the report still written.
  Result r = report({"--baseline", base, slow, "--fail-if-slower", "50", "-f", "json"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("jitscope-report: regression: 1 of the compared"), std::string::npos)
      << r.err;
  const json rep = json::parse(r.out);
  EXPECT_EQ(rep["comparison"]["failing"], 1);
  EXPECT_EQ(rep["comparison"]["fail_if_slower_pct"], 50.0);
  EXPECT_TRUE(rows(rep, "names")["A"]["fails"].get<bool>());
  EXPECT_FALSE(rows(rep, "names")["tiny"]["fails"].get<bool>());

  // +100% passes --fail-if-slower 150.
  r = report({"--baseline", base, slow, "--fail-if-slower", "150"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // tiny 2x slower by 10 µs: under the default --min-change-ms 1, passes;
  // with --min-change-ms 0.005 it fails.
  r = report({"--baseline", base, tiny_slow, "--fail-if-slower", "10"});
  EXPECT_EQ(r.code, 0) << r.err;
  r = report({"--baseline", base, tiny_slow, "--fail-if-slower", "10", "--min-change-ms", "0.005"});
  EXPECT_EQ(r.code, 3) << r.err;
  // Within the spread of several baselines: passes.
  const std::string base2 = trace({x_event("A", 0, 22 * kMs), x_event("tiny", 20 * kMs, 10000)});
  r = report({"--baseline", base, "--baseline", base2, slow, "--fail-if-slower", "0"});
  EXPECT_EQ(r.code, 0) << r.err;
  // Identical runs pass even at 0% and 0 ms.
  r = report({"--baseline", base, base, "--fail-if-slower", "0", "--min-change-ms", "0"});
  EXPECT_EQ(r.code, 0) << r.err;

  // Usage (2) and input (1) errors stay distinct from a regression (3).
  expect_error(report({base, "--fail-if-slower", "5"}), 2, "needs --baseline", "no baseline");
  expect_error(report({base, slow}), 2, "one TRACE", "two traces, no baseline");
  expect_error(report({"--baseline", base, "/nonexistent/x.json", "--fail-if-slower", "5"}), 1,
               "/nonexistent/x.json", "missing new trace");
  expect_error(report({"--baseline", base, slow, "--metrics", base, "--metrics", base}), 2,
               "more --metrics", "metrics per trace");
}

TEST(ReportCompare, UnitsFromMetricsFilesAndKernels) {
  // No unit slices: the units come from the metrics records, by name.
  // A copy is GPU work too; a host span named as a kernel stays a host name.
  const std::string base = trace(
      {kernel("gemm", 0, 10000), kernel("gemm", 20000, 10000), kernel("old_kernel", 40000, 5000),
       gpu_copy("Memcpy HtoD", 50000, 2000), x_event("A", 0, kMs), x_event("gemm", 2 * kMs, kMs)});
  const std::string next = trace(
      {kernel("gemm", 0, 30000), kernel("gemm", 40000, 30000), kernel("new_kernel", 80000, 5000),
       gpu_copy("Memcpy HtoD", 90000, 22000), x_event("A", 0, kMs), x_event("gemm", 2 * kMs, kMs)});
  const std::string base_m =
      write_temp("compare_metrics",
                 "{\"compile_id\":\"0/0\",\"name\":\"fwd\",\"duration_us\":1000}\n"
                 "{\"compile_id\":\"1/0\",\"name\":\"gone\",\"duration_us\":7}\n");
  const std::string next_m =
      write_temp("compare_metrics",
                 "{\"compile_id\":\"3/0\",\"name\":\"fwd\",\"duration_us\":2500}\n"
                 "{\"compile_id\":\"4/0\",\"name\":\"fwd\",\"duration_us\":500}\n");
  const json rep = compare_json({"--baseline", base, "--baseline-metrics", base_m, next,
                                 "--metrics", next_m, "--min-change-ms", "0.01"});
  auto units = rows(rep, "units");
  ASSERT_EQ(units.size(), 2u) << rep["units"].dump();
  // fwd: one unit of 1 ms, then two (a recompile) of 2.5 and 0.5 ms.
  EXPECT_EQ(units["fwd"]["change"], "slower");
  EXPECT_EQ(units["fwd"]["baseline"]["count"], 1);
  EXPECT_EQ(units["fwd"]["new"]["count"], 2);
  EXPECT_EQ(units["fwd"]["new"]["total_ns"], 3 * kMs);
  EXPECT_EQ(units["fwd"]["new"]["mean_ns"], 1500000);
  EXPECT_EQ(units["fwd"]["new"]["p50_ns"], 500000);  // nearest rank of {0.5, 2.5}
  EXPECT_EQ(units["fwd"]["new"]["p90_ns"], 2500000);
  EXPECT_EQ(units["fwd"]["delta"]["total_ns"], 2 * kMs);
  EXPECT_EQ(units["gone"]["change"], "removed");
  // GPU work (kernels and copies) has its own section, not the names'.
  auto kernels = rows(rep, "kernels");
  ASSERT_EQ(kernels.size(), 4u) << rep["kernels"].dump();
  EXPECT_EQ(kernels["Memcpy HtoD"]["change"], "slower");
  EXPECT_EQ(kernels["Memcpy HtoD"]["delta"]["total_ns"], 20000);
  EXPECT_EQ(kernels["gemm"]["change"], "slower");
  EXPECT_EQ(kernels["gemm"]["baseline"]["total_ns"], 20000);
  EXPECT_EQ(kernels["gemm"]["new"]["total_ns"], 60000);
  EXPECT_EQ(kernels["gemm"]["delta"]["mean_ns"], 20000);
  EXPECT_EQ(kernels["old_kernel"]["change"], "removed");
  EXPECT_EQ(kernels["new_kernel"]["change"], "added");
  auto names = rows(rep, "names");
  EXPECT_EQ(names.size(), 2u) << rep["names"].dump();
  EXPECT_EQ(names["A"]["change"], "unchanged");
  EXPECT_EQ(names["gemm"]["change"], "unchanged");  // the host span, not the kernels
  EXPECT_EQ(names["gemm"]["new"]["count"], 1);
}

TEST(ReportCompare, TableMarkdownAndCsvLayouts) {
  const std::string base = trace({x_event("A", 0, 10 * kMs), x_event("gone", 20 * kMs, kMs)});
  const std::string next = trace({x_event("A", 0, 20 * kMs), x_event("new", 20 * kMs, kMs)});
  Result r = report({"--baseline", base, next, "-f", "csv", "-s", "compile_times"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> lines = jitscope::testing::lines_of(r.out);
  ASSERT_GE(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0], "# names");
  EXPECT_EQ(lines[1].rfind("name,change,fails,base_count,new_count,base_total_ns,new_total_ns,"
                           "delta_total_ns,delta_pct,",
                           0),
            0u)
      << lines[1];
  EXPECT_EQ(lines[2],
            "A,slower,false,1,1,10000000,20000000,10000000,100.0,10000000,20000000,10000000,"
            "10000000,20000000,10000000,10000000,20000000,10000000,10000000,10000000,20000000,"
            "20000000");
  EXPECT_EQ(lines[3].rfind("gone,removed,false,1,0,1000000,0,-1000000,-100.0,", 0), 0u) << lines[3];
  EXPECT_EQ(lines[4].rfind("new,added,false,0,1,0,1000000,1000000,,", 0), 0u) << lines[4];

  r = report({"--baseline", base, next});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("jitscope-report comparison"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== Span names"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("10.0 ms → 20.0 ms"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+100.0%"), std::string::npos) << r.out;

  r = report({"--baseline", base, next, "-f", "markdown"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("| A | slower | 1 | 10.0 ms → 20.0 ms | +10.0 ms | +100.0% |"),
            std::string::npos)
      << r.out;
}

TEST(ReportCompare, TwoRealClangTimeTraces) {
  // The same source at -O0 and -O2: different passes run, so names are
  // added (and maybe removed); every row's totals are the events' own.
  const std::string clang = JITSCOPE_TEST_CLANGXX;
  if (clang.empty()) GTEST_SKIP() << "no clang++ found at configure time";
  const std::string dir = temp_path("report_compare_clang");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  std::ofstream(dir + "/x.cpp") << "#include <map>\n#include <string>\n#include <vector>\n"
                                   "int f(const std::vector<std::string>& v) {\n"
                                   "  std::map<std::string, int> m;\n"
                                   "  for (const auto& s : v) m[s] += (int)s.size();\n"
                                   "  int n = 0;\n  for (auto& [k, x] : m) n += x;\n"
                                   "  return n;\n}\n";
  std::string traces[2];
  const char* levels[2] = {"-O0", "-O2"};
  for (int i = 0; i < 2; ++i) {
    const std::string obj = dir + "/x" + std::to_string(i) + ".o";
    const Result cc = run({clang, "-std=c++17", levels[i], "-ftime-trace",
                           "-ftime-trace-granularity=0", "-c", dir + "/x.cpp", "-o", obj});
    ASSERT_EQ(cc.code, 0) << cc.err;
    traces[i] = dir + "/x" + std::to_string(i) + ".json";  // clang's: next to the object
  }
  const Totals t0 = compute(json::parse(read_file(traces[0]))["traceEvents"]);
  const Totals t1 = compute(json::parse(read_file(traces[1]))["traceEvents"]);
  const json rep = compare_json({"--baseline", traces[0], traces[1]});
  auto names = rows(rep, "names");
  std::set<std::string> all;
  for (const auto& [n, v] : t0.names) all.insert(n);
  for (const auto& [n, v] : t1.names) all.insert(n);
  ASSERT_EQ(names.size(), all.size());
  std::size_t added = 0, removed = 0;
  for (const std::string& n : all) {
    const json& row = names.at(n);
    const bool in0 = t0.names.count(n) > 0, in1 = t1.names.count(n) > 0;
    const long long b = in0 ? t0.names.at(n).total : 0, x = in1 ? t1.names.at(n).total : 0;
    if (in0) EXPECT_EQ(row["baseline"]["total_ns"].get<long long>(), b) << n;
    if (in1) EXPECT_EQ(row["new"]["total_ns"].get<long long>(), x) << n;
    if (in0) EXPECT_EQ(row["baseline"]["count"].get<unsigned long long>(), t0.names.at(n).count);
    EXPECT_EQ(row["delta"]["total_ns"].get<long long>(), x - b) << n;
    if (!in0) {
      EXPECT_EQ(row["change"], "added") << n;
      ++added;
    }
    if (!in1) {
      EXPECT_EQ(row["change"], "removed") << n;
      ++removed;
    }
  }
  EXPECT_GT(added, 0u) << "-O2 runs passes -O0 does not";
  EXPECT_EQ(rep["comparison"]["added"].get<std::size_t>(), added);
  EXPECT_EQ(rep["comparison"]["removed"].get<std::size_t>(), removed);
  EXPECT_TRUE(rep["units"].empty());
  // Sorted by |delta total|.
  long long prev = -1;
  for (const json& row : rep["names"]) {
    const long long d = std::llabs(row["delta"]["total_ns"].get<long long>());
    if (prev >= 0) EXPECT_LE(d, prev) << row["name"];
    prev = d;
  }
  // A trace against itself: nothing changed, and the gate passes at 0%.
  const Result same = report({"--baseline", traces[1], traces[1], "--fail-if-slower", "0",
                              "--min-change-ms", "0", "-f", "json"});
  EXPECT_EQ(same.code, 0) << same.err;
  const json s = json::parse(same.out);
  EXPECT_EQ(s["comparison"]["slower"], 0);
  EXPECT_EQ(s["comparison"]["faster"], 0);
  EXPECT_EQ(s["comparison"]["added"], 0);
  for (const json& row : s["names"]) EXPECT_EQ(row["delta"]["total_ns"], 0) << row["name"];
}

}  // namespace
