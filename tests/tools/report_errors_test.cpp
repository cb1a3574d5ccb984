// jitscope-report on what it must refuse or survive: times whose end
// overflows int64 ns (skipped, warned; sums saturate); --output through a
// temporary file and rename; malformed inputs, unreadable paths, bad metrics
// lines and bad usage: one error line, exit 1 (2 for usage), never a
// signal, never a hang.
// Not covered: a full disk under --output other than /dev/full.
#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

// ---- hostile numbers: no signed overflow ----

TEST(ReportOverflow, EndsBeyondInt64AreSkippedAndWarned) {
  const std::string warning =
      "events whose end (ts + dur, or E - B) does not fit in int64 ns (ignored)";
  const std::string x = write_temp("report_ovf_x", R"([
{"ph":"X","name":"x","ts":9000000000000000,"dur":9000000000000000,"pid":1,"tid":1},
{"ph":"X","name":"ok","ts":1,"dur":2,"pid":1,"tid":1}])");
  json rep = report_json({x});
  EXPECT_EQ(rep["header"]["spans"].get<int>(), 1);
  ASSERT_EQ(rep["compile_times"].size(), 1u);
  EXPECT_EQ(rep["compile_times"][0]["name"], "ok");
  EXPECT_EQ(rep["header"]["time_span"]["begin_ns"].get<long long>(), 1000);
  EXPECT_EQ(rep["header"]["time_span"]["end_ns"].get<long long>(), 3000);
  ASSERT_EQ(rep["header"]["warnings"].size(), 1u);
  EXPECT_EQ(rep["header"]["warnings"][0], "1 " + warning);

  const std::string be = write_temp("report_ovf_be", R"([
{"ph":"B","name":"b","ts":-9000000000000000,"pid":1,"tid":1},
{"ph":"E","ts":9000000000000000,"pid":1,"tid":1}])");
  rep = report_json({be});
  EXPECT_EQ(rep["header"]["spans"].get<int>(), 0);
  EXPECT_TRUE(rep["compile_times"].empty());
  // The header's duration saturates instead of overflowing.
  EXPECT_EQ(rep["header"]["time_span"]["duration_ns"].get<long long>(),
            std::numeric_limits<long long>::max());
  ASSERT_EQ(rep["header"]["warnings"].size(), 1u);
  EXPECT_EQ(rep["header"]["warnings"][0], "1 " + warning);
  for (const std::string& f : {x, be}) {
    for (const char* fmt : {"table", "csv", "markdown"}) {
      const Result r = report({f, "--format", fmt});
      EXPECT_EQ(r.code, 0) << fmt << ": " << r.err;
    }
  }

  // Sums saturate: two spans of 9e18 ns.
  const std::string sum = write_temp("report_ovf_sum", R"([
{"ph":"X","name":"s","ts":0,"dur":9000000000000000,"pid":1,"tid":1},
{"ph":"X","name":"s","ts":0,"dur":9000000000000000,"pid":1,"tid":2}])");
  rep = report_json({sum});
  EXPECT_EQ(rep["compile_times"][0]["total_ns"].get<long long>(),
            std::numeric_limits<long long>::max());

  // Metrics: µs that do not fit in int64 ns.
  const std::string trace = write_temp("report_ovf_mtrace", "[]");
  for (const char* line : {R"({"compile_id":"0/0","duration_us":9223372036854775807})",
                           R"({"compile_id":"0/0","duration_us":1e300})"}) {
    const std::string m = write_temp("report_ovf_metrics", std::string(line) + "\n");
    expect_error(report({trace, "--metrics", m}), 1,
                 m + ": line 1: \"duration_us\" is not a number", line);
  }
  const std::string m = write_temp(
      "report_ovf_metrics_ok",
      R"({"compile_id":"0/0","duration_us":5,"parse_us":1e300,"x_us":9223372036854775807})"
      "\n"
      R"({"compile_id":null,"duration_us":9223372036854775})"
      "\n"
      R"({"compile_id":null,"duration_us":9223372036854775})"
      "\n");
  rep = report_json({trace, "--metrics", m});
  EXPECT_TRUE(rep["units"][0]["metrics"]["columns_ns"].empty());
  EXPECT_EQ(rep["header"]["metrics"]["runtime_duration_ns"].get<long long>(),
            std::numeric_limits<long long>::max());
}

// ---- --output: a temporary file renamed over the target ----

TEST(ReportOutput, WrittenToATempFileAndRenamed) {
  const std::string trace =
      write_temp("report_out_trace", R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}])");
  const std::string dir = temp_path("report_out_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const std::string out = dir + "/report.json";
  std::ofstream(out) << "old content that is longer than nothing";
  const Result r = report({trace, "--output", out, "-f", "json", "-s", "compile_times"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(read_file(out))["compile_times"][0]["name"], "a");
  // Nothing else is left in the folder.
  const Result ls = run({"/bin/ls", "-A", dir});
  EXPECT_EQ(ls.out, "report.json\n");
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  // A device is written in place; a failed write is an error that leaves no temp file.
  EXPECT_EQ(report({trace, "--output", "/dev/null"}).code, 0);
  struct stat full {};
  if (::stat("/dev/full", &full) == 0) {
    expect_error(report({trace, "--output", "/dev/full"}), 1, "/dev/full: cannot write the report",
                 "/dev/full");
  }
}

// ---- errors: one line, exit 1 (2 for usage), never a signal ----

TEST(ReportErrors, MalformedAndUnreadableInputs) {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary.push_back(static_cast<char>((i * 7919 + 13) & 0xff));
  binary[0] = '\x89';
  struct Case {
    std::string content, fragment;
  };
  const std::vector<Case> cases = {
      {"", "byte 0: empty input: not a trace"},
      {"garbage", "byte 0: not a trace: expected '[' or '{', found 'g'"},
      {"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\"},\n{\"ph\":\"X\",\"na",
       "byte 52: input ends inside an event that starts at byte 39"},
      {"{\"otherData\":{}}", "no \"traceEvents\" array"},
      {"{\"traceEvents\":[{\"ph\":\"X\"}]", "input ends inside the top-level object"},
      {std::string(100000, '['), "byte 1: an event is not a JSON object (found '[')"},
      {"[{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}]",
       "nesting deeper than 256 levels"},
      {binary, "not a trace"},
      {"[{\"ph\":\"X\",}]", "byte 1: event is not valid JSON"},
      {"[{\"ph\":\"X\",\"name\":\"a\"\xff}]", "byte 1: event is not valid JSON"},
      {"[{}]trailing", "garbage after the end of the trace"},
  };
  for (const Case& c : cases) {
    const std::string path = write_temp("report_bad", c.content);
    const Result r = report({path});
    expect_error(r, 1, c.fragment, c.content.substr(0, 30));
    EXPECT_EQ(r.err.rfind("jitscope-report: error: " + path + ": ", 0), 0u) << r.err;
  }
  const std::string dir = temp_path("report_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  expect_error(report({dir}), 1, dir + ": is a directory", "a directory");
  expect_error(report({dir + "/missing.json"}), 1,
               "missing.json: cannot open: No such file or directory", "a missing file");
  // An output that cannot be written.
  const std::string good = write_temp("report_good", "[]");
  expect_error(report({good, "--output", dir + "/no/such/dir/out.txt"}), 1,
               "cannot open for writing", "output");
}

TEST(ReportErrors, BadMetricsLines) {
  const std::string trace =
      write_temp("report_mtrace", R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}])");
  struct Case {
    std::string metrics, fragment;
  };
  const std::vector<Case> cases = {
      {"{\"compile_id\":\"0/0\",\"duration_us\":5}\nnot json\n", ": line 2: not valid JSON"},
      {"[1,2]\n", ": line 1: not a JSON object"},
      {"{\"name\":\"x\"}\n", ": line 1: no \"compile_id\""},
      {"\n\n{\"compile_id\":5}\n", ": line 3: \"compile_id\" is not a non-empty string or null"},
      {"{\"compile_id\":\"0/0\",\"duration_us\":\"x\"}\n",
       ": line 1: \"duration_us\" is not a number"},
      {"{\"compile_id\":\"0/0\",\"record\":\"gpu\",\"gpu\":3}\n",
       ": line 1: \"gpu\" is not an object"},
      {"{\"compile_id\":\"0/0\"", ": line 1: not valid JSON"},
  };
  for (const Case& c : cases) {
    const std::string m = write_temp("report_metrics", c.metrics);
    expect_error(report({trace, "--metrics", m}), 1, m + c.fragment, c.metrics);
  }
  expect_error(report({trace, "--metrics", trace + ".missing"}), 1, "cannot open",
               "missing metrics");

  // A good metrics file joins a unit the trace does not have.
  const std::string m =
      write_temp("report_metrics_ok",
                 "{\"compile_id\":\"7/0\",\"name\":\"net__g_0\",\"duration_us\":12,"
                 "\"caches\":{\"k\":{\"hits\":2,\"misses\":1}}}\n"
                 "{\"compile_id\":null,\"name\":\"runtime\",\"duration_us\":3}\n"
                 "{\"compile_id\":\"7/"
                 "0\",\"name\":\"net__g_0\",\"record\":\"gpu\",\"gpu\":{\"kernels\":4}}\n");
  const json rep = report_json({trace, "--metrics", m});
  ASSERT_EQ(rep["units"].size(), 1u);
  const json& u = rep["units"][0];
  EXPECT_EQ(u["compile_id"], "7/0");
  EXPECT_EQ(u["name"], "net__g_0");
  EXPECT_FALSE(u["in_trace"].get<bool>());
  EXPECT_EQ(u["metrics"]["duration_ns"].get<long long>(), 12000);
  EXPECT_EQ(u["metrics"]["cache_hits"].get<long long>(), 2);
  EXPECT_EQ(u["metrics"]["gpu"]["kernels"].get<long long>(), 4);
  EXPECT_EQ(rep["header"]["metrics"]["runtime_records"].get<int>(), 1);
  EXPECT_EQ(rep["header"]["metrics"]["runtime_duration_ns"].get<long long>(), 3000);
}

TEST(ReportErrors, Usage) {
  const Result none = report({});
  EXPECT_FALSE(none.signaled);
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_EQ(none.err.rfind("jitscope-report: error: ", 0), 0u) << none.err;
  const std::string good = write_temp("report_usage", "[]");
  for (const std::vector<std::string>& args : {std::vector<std::string>{good, "--format", "xml"},
                                               {good, "--top", "-1"},
                                               {good, "--section", "bogus"},
                                               {good, "--bogus"},
                                               {good, "extra"}}) {
    const Result r = report(args);
    EXPECT_FALSE(r.signaled);
    EXPECT_EQ(r.code, 2) << args[1] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("jitscope-report: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const Result help = report({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--metrics"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--section"), std::string::npos) << help.out;
}

}  // namespace
