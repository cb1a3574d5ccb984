// jitscope-report's self times (tools/report/self_time.hpp): exact whatever
// order the file has its spans in. Covered: many spans written after a deep
// nest (fast, exact); a parent written after its whole tree of more than
// 16384 spans (the old reorder window's limit); end order, a shuffled order
// and B/E pairs with identical intervals, with exact expected self times;
// a real clang -ftime-trace with -ftime-trace-granularity=0 (skipped when no
// clang++ was found at configure time): self times add up to the root.
// Not covered here: a trace big enough to spill sorted runs to the
// temporary file (report_aggregator_test.cpp runs that in process with tiny
// runs).
#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

TEST(ReportSelfTime, ManyLateSpansUnderDeepNestingAreFastAndExact) {
  // D nested spans in start order, then M 1 ns spans inside the outermost
  // only, written last: with the old reorder window each late span walked
  // the whole open stack (quadratic). Sorted, it is one more nesting.
  const long long D = 50000, M = 50000, big = 1000000000;
  std::string content = "[";
  content += x_event("outer", 0, big);
  for (long long i = 1; i < D; ++i) content += ",\n" + x_event("nest", M + i, big - 2 * i - M);
  for (long long j = 0; j < M; ++j) content += ",\n" + x_event("late", j, 1);
  content += "]";
  const std::string path = write_temp("report_late", content);
  const auto t0 = std::chrono::steady_clock::now();
  const Result r =
      run({JITSCOPE_REPORT, path, "--format", "json"}, "/dev/null", std::chrono::seconds(60));
  ASSERT_FALSE(r.timed_out) << "the report took over 60 s";
  ASSERT_EQ(r.code, 0) << r.err;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const json rep = json::parse(r.out);
  expect_matches(rep, compute(json::parse(content)), 10);
  EXPECT_TRUE(rep["header"]["warnings"].empty()) << rep["header"].dump();
  RecordProperty("seconds", std::to_string(secs));
}

TEST(ReportSelfTime, ExactWhenTheParentComesAfterItsWholeTree) {
  // Thread 1, written in end order (children first, as jitscope and clang
  // do): N > 16384 children with a grandchild each, then their parent.
  // The old 16384-span reorder window released the children before the
  // parent came and took the parent's whole duration as its self time.
  // Thread 2: the same with fewer spans than that window.
  const long long N = 20000, n2 = 100;
  std::string content = "[";
  bool first = true;
  auto add = [&](const std::string& e) {
    content += (first ? "" : ",\n") + e;
    first = false;
  };
  for (int tid : {1, 2}) {
    const long long n = tid == 1 ? N : n2;
    for (long long i = 0; i < n; ++i) {
      add(x_event(tid == 1 ? "grand" : "grand2", i * 10 + 1, 2, tid));
      add(x_event(tid == 1 ? "child" : "child2", i * 10, 5, tid));
    }
    add(x_event(tid == 1 ? "parent" : "parent2", 0, n * 10, tid));
  }
  content += "]";
  const std::string path = write_temp("report_window", content);
  const json rep = report_json({path});
  std::map<std::string, long long> self;
  for (const json& row : rep["phases"]) self[row["name"]] = row["self_ns"].get<long long>();
  EXPECT_EQ(self["grand"], N * 2);
  EXPECT_EQ(self["child"], N * 3);
  EXPECT_EQ(self["parent"], N * 5);
  EXPECT_EQ(self["grand2"], n2 * 2);
  EXPECT_EQ(self["child2"], n2 * 3);
  EXPECT_EQ(self["parent2"], n2 * 5);
  EXPECT_TRUE(rep["header"]["warnings"].empty()) << rep["header"].dump();
}

// A deterministic shuffle (splitmix64; std::shuffle's algorithm is the
// library's own), so the file is the same on every machine.
void shuffle(std::vector<std::string>& v, std::uint64_t seed) {
  for (std::size_t i = v.size(); i > 1; --i) {
    seed += 0x9e3779b97f4a7c15ull;
    std::uint64_t z = seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::swap(v[i - 1], v[z % i]);
  }
}

TEST(ReportSelfTime, ExactInAnyFileOrderWithIdenticalIntervals) {
  // K units of: child [50i, 50i+40] µs holding a pass manager "twin"
  // [50i+10, 50i+30] that holds a pass "grand" with the very same interval
  // (clang writes PassManager<Function> and InstCombinePass so, the pass
  // first); a root [0, 50K] over all. Thread 1 in end order (pass, twin,
  // child, ..., root: clang's and jitscope's order): of the identical
  // pair, the later-written (twin) is the parent. Thread 2: the same spans
  // shuffled, twin before grand (start order: the earlier-written is the
  // parent). Thread 3: B/E pairs with identical times nest as their B's
  // came. Exact self times in ns:
  //   grand 20 µs each, twin 0, child 40 - 20 µs each, root 50K - 40K µs.
  const long long K = 20000, us1 = 1000;
  std::vector<std::string> t1, t2;
  for (int tid : {1, 2}) {
    auto& out = tid == 1 ? t1 : t2;
    const std::string n = std::to_string(tid);
    for (long long i = 0; i < K; ++i) {
      out.push_back(x_event(("grand" + n).c_str(), (50 * i + 10) * us1, 20 * us1, tid));
      out.push_back(x_event(("twin" + n).c_str(), (50 * i + 10) * us1, 20 * us1, tid));
      out.push_back(x_event(("child" + n).c_str(), 50 * i * us1, 40 * us1, tid));
    }
    out.push_back(x_event(("root" + n).c_str(), 0, 50 * K * us1, tid));
  }
  shuffle(t2, 17);
  // Thread 2's identical pairs: the twin (the parent) written first.
  std::map<std::string, std::size_t> grand_at;
  for (std::size_t i = 0; i < t2.size(); ++i) {
    const json e = json::parse(t2[i]);
    const std::string ts = e["ts"].dump();
    if (e["name"] == "grand2") {
      grand_at[ts] = i;
    } else if (e["name"] == "twin2" && grand_at.count(ts) && grand_at[ts] < i) {
      std::swap(t2[grand_at[ts]], t2[i]);
    }
  }
  std::string content = "[";
  for (const auto* part : {&t1, &t2}) {
    for (const std::string& e : *part) content += e + ",\n";
  }
  content += R"({"ph":"B","name":"outer3","pid":1,"tid":3,"ts":0},
{"ph":"B","name":"inner3","pid":1,"tid":3,"ts":0},
{"ph":"E","pid":1,"tid":3,"ts":5},
{"ph":"E","pid":1,"tid":3,"ts":5}])";
  const std::string path = write_temp("report_any_order", content);
  const json rep = report_json({path});
  std::map<std::string, long long> self;
  for (const json& row : rep["phases"]) self[row["name"]] = row["self_ns"].get<long long>();
  for (const char* n : {"1", "2"}) {
    EXPECT_EQ(self[std::string("grand") + n], K * 20 * us1) << n;
    EXPECT_EQ(self[std::string("twin") + n], 0) << n;
    EXPECT_EQ(self[std::string("child") + n], K * 20 * us1) << n;
    EXPECT_EQ(self[std::string("root") + n], K * 10 * us1) << n;
  }
  EXPECT_EQ(self["outer3"], 0);
  EXPECT_EQ(self["inner3"], 5 * us1);
  EXPECT_TRUE(rep["header"]["warnings"].empty()) << rep["header"].dump();
  expect_matches(rep, compute(json::parse(content)), 10);
}

TEST(ReportSelfTime, ClangTimeTraceSelfTimesAddUpToTheRoot) {
  // A real clang -ftime-trace with -ftime-trace-granularity=0: every scope
  // written, in end order (ExecuteCompiler, the root, last), with many
  // identical intervals (microsecond times), more spans than the old
  // 16384-span reorder window. Whatever clang's timings, self times of the
  // main thread's spans add up to the root's total, and none exceeds its
  // span's total. (clang's "Total <name>" slices are on threads of their
  // own: each its own root.)
  const std::string clang = JITSCOPE_TEST_CLANGXX;
  if (clang.empty()) GTEST_SKIP() << "no clang++ found at configure time";
  const std::string dir = temp_path("report_clang_big");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  std::ofstream(dir + "/big.cpp")
      << "#include <algorithm>\n#include <functional>\n#include <map>\n#include <memory>\n"
         "#include <sstream>\n#include <string>\n#include <unordered_map>\n#include <vector>\n"
         "int g(const std::unordered_map<std::string, std::vector<int>>& m) {\n"
         "  std::map<std::string, std::shared_ptr<int>> x;\n"
         "  std::function<int(int)> fn = [](int a) { return a + 1; };\n"
         "  std::ostringstream os;\n"
         "  for (auto& [k, v] : m) { os << k << v.size(); x[k] = std::make_shared<int>(fn(1)); }\n"
         "  std::vector<std::string> keys;\n"
         "  for (auto& [k, v] : x) keys.push_back(k);\n"
         "  std::sort(keys.begin(), keys.end());\n"
         "  return (int)os.str().size() + (int)keys.size();\n"
         "}\n";
  const Result cc = run({clang, "-std=c++17", "-O1", "-ftime-trace", "-ftime-trace-granularity=0",
                         "-c", dir + "/big.cpp", "-o", dir + "/big.o"});
  ASSERT_EQ(cc.code, 0) << cc.err;
  const std::string trace = dir + "/big.json";
  const json events = json::parse(read_file(trace))["traceEvents"];
  json root;
  for (const json& e : events) {
    if (e.value("name", "") == "ExecuteCompiler") root = e;
  }
  ASSERT_TRUE(root.is_object()) << "no ExecuteCompiler slice";
  std::size_t main_spans = 0;
  for (const json& e : events) {
    if (e.value("ph", "") != "X" || e["tid"] != root["tid"]) continue;
    ++main_spans;
    ASSERT_FALSE(e["name"].get<std::string>().rfind("Total ", 0) == 0) << e.dump();
  }
  ASSERT_GT(main_spans, 16384u) << "too small a trace to test the order";

  const json rep = report_json({trace});
  long long root_total = -1, self_sum = 0;
  for (const json& row : rep["phases"]) {
    const std::string name = row["name"];
    const long long total = row["total_ns"], self = row["self_ns"];
    EXPECT_GE(self, 0) << name;
    EXPECT_LE(self, total) << name;
    if (name.rfind("Total ", 0) == 0) {
      EXPECT_EQ(self, total) << name;  // alone on its thread
      continue;
    }
    self_sum += self;
    if (name == "ExecuteCompiler") root_total = total;
  }
  EXPECT_EQ(root_total, ns_of(root["dur"]));
  EXPECT_EQ(self_sum, root_total);
  EXPECT_TRUE(rep["header"]["warnings"].empty()) << rep["header"].dump();
  // Name by name, the independent computation's exact self times.
  expect_matches(rep, compute(events), 10);
}

}  // namespace
