// jitscope-report and jitscope-merge on what real traces hold (issue 17):
// inputs the reader repairs with one warning line per kind (an array cut
// inside its last event, a UTF-8 BOM, a trailing ',' before ']', invalid
// UTF-8 replaced by U+FFFD), accepted alike by both tools, and merge's
// output for them strict JSON; control characters in names escaped in the
// table and Markdown formats; µs epoch timestamps shown to the ns; more
// than 65536 open B's on one thread, each E closing its own B; GPU
// attribution and first-launch latency after merging two traces whose
// processes have the same pid.
// Not covered here: the reader's own view of the repairs at every chunk
// size (trace_reader_repair_test.cpp), the open-B bound itself (2^20 per
// thread: report_aggregator_test.cpp runs a small bound in process).
#include "report_support.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

const std::string kFffd = "\xEF\xBF\xBD";

std::vector<std::string> warnings(const json& rep) {
  std::vector<std::string> out;
  for (const json& w : rep["header"]["warnings"]) out.push_back(w);
  return out;
}

Result merge(const std::vector<std::string>& inputs, const std::string& output) {
  std::vector<std::string> args = {JITSCOPE_MERGE, "-q", "--assume-same-clock", "-o", output};
  args.insert(args.end(), inputs.begin(), inputs.end());
  return run(args);
}

// The merge of `input` alone: exit 0, the warnings on stderr, strict JSON
// out (nlohmann refuses a BOM, a trailing ',' and invalid UTF-8) that the
// report reads without a warning.
json merge_alone(const std::string& input, const std::vector<std::string>& want_warnings) {
  const std::string out = temp_path("input_merged");
  const Result m = merge({input}, out);
  EXPECT_EQ(m.code, 0) << m.err;
  std::string want_err;
  for (const std::string& w : want_warnings)
    want_err += "jitscope-merge: warning: " + input + ": " + w + "\n";
  EXPECT_EQ(m.err, want_err);
  json merged;
  try {
    merged = json::parse(read_file(out));
  } catch (const std::exception& e) {
    ADD_FAILURE() << "the merge is not JSON: " << e.what();
  }
  EXPECT_TRUE(warnings(report_json({out})).empty());
  return merged;
}

// ---- what the reader repairs ----

const std::string kTwoEvents = R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1},
{"ph":"X","name":"b","pid":1,"tid":1,"ts":2,"dur":1})";

TEST(ReportInput, ArrayCutInsideItsLastEvent) {
  // ENOSPC cuts the file inside an event: what came before it is the trace.
  const std::string cut = kTwoEvents + ",\n{\"ph\":\"X\",\"name\":\"c\",\"pi";
  const std::string path = write_temp("input_cut", cut);
  const json rep = report_json({path});
  EXPECT_EQ(rep["header"]["events"].get<int>(), 2);
  EXPECT_EQ(rep["header"]["spans"].get<int>(), 2);
  EXPECT_TRUE(rep["header"]["unterminated"].get<bool>());
  const std::size_t at = kTwoEvents.size() + 2;
  EXPECT_EQ(warnings(rep),
            std::vector<std::string>{"1 event cut off by the end of the input (its " +
                                     std::to_string(cut.size() - at) + " bytes from byte " +
                                     std::to_string(at) + " dropped)"});
  const json merged = merge_alone(path, warnings(rep));
  ASSERT_TRUE(merged.is_array());
  EXPECT_EQ(merged.size(), 4u);  // jitscope_merge, a process name, a, b
  // The object form must still be complete.
  const std::string object = write_temp("input_cut_object", "{\"traceEvents\":" + cut);
  expect_error(report({object}), 1, "input ends inside an event that starts at byte",
               "cut object form");
}

TEST(ReportInput, BomTrailingCommaAndInvalidUtf8AreRepairedWithOneWarningEach) {
  struct Case {
    std::string what, content;
    std::vector<std::string> warnings;
    std::vector<std::string> names;
  };
  const std::string bad_names = R"([{"ph":"X","name":"caf)"
                                "\xFF"
                                R"(","pid":1,"tid":1,"ts":0,"dur":1},
{"ph":"X","name":"b)"
                                "\xC0\x80"
                                R"(","pid":1,"tid":1,"ts":2,"dur":1},
{"ph":"X","name":"e)"
                                "\xE2\x82"
                                R"(","pid":1,"tid":1,"ts":4,"dur":1}])";
  const std::vector<Case> cases = {
      {"bom",
       "\xEF\xBB\xBF" + kTwoEvents + "]",
       {"1 UTF-8 byte order mark at the start of the input (skipped)"},
       {"a", "b"}},
      {"trailing comma",
       kTwoEvents + ",\n]",
       {"1 trailing ',' before the closing ']' of the events (ignored)"},
       {"a", "b"}},
      {"trailing comma, object form",
       "{\"traceEvents\":" + kTwoEvents + ",]}",
       {"1 trailing ',' before the closing ']' of the events (ignored)"},
       {"a", "b"}},
      // One line for all of them, with the counts: 4 subparts in 3 events.
      {"invalid utf-8",
       bad_names,
       {"4 invalid UTF-8 sequences in 3 events (replaced by U+FFFD)"},
       {"caf" + kFffd, "b" + kFffd + kFffd, "e" + kFffd}},
      {"all at once",
       "\xEF\xBB\xBF" + bad_names.substr(0, bad_names.size() - 1) + ",]",
       {"1 UTF-8 byte order mark at the start of the input (skipped)",
        "1 trailing ',' before the closing ']' of the events (ignored)",
        "4 invalid UTF-8 sequences in 3 events (replaced by U+FFFD)"},
       {"caf" + kFffd, "b" + kFffd + kFffd, "e" + kFffd}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string path = write_temp("input_repaired", c.content);
    const json rep = report_json({path});
    EXPECT_EQ(warnings(rep), c.warnings);
    std::vector<std::string> names;
    for (const json& row : rep["top_spans"]) names.push_back(row["name"]);
    std::sort(names.begin(), names.end());
    std::vector<std::string> want = c.names;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(names, want);
    // The table says the same, one line each.
    const Result table = report({path, "--section", "header"});
    ASSERT_EQ(table.code, 0) << table.err;
    for (const std::string& w : c.warnings) {
      EXPECT_NE(table.out.find(w + "\n"), std::string::npos) << table.out;
    }
    std::size_t lines = 0;
    for (std::size_t at = 0; (at = table.out.find("\n  warning ", at)) != std::string::npos; ++at)
      ++lines;
    EXPECT_EQ(lines, c.warnings.size()) << table.out;
    // jitscope-merge reads it too, says the same, and writes strict JSON
    // holding the replaced names.
    const json merged = merge_alone(path, c.warnings);
    std::vector<std::string> merged_names;
    for (const json& e : merged) {
      if (e.value("ph", "") == "X") merged_names.push_back(e["name"]);
    }
    std::sort(merged_names.begin(), merged_names.end());
    EXPECT_EQ(merged_names, want);
  }
}

// ---- what the text formats show ----

TEST(ReportInput, ControlCharactersInNamesAreEscapedInTableAndMarkdown) {
  // ESC [31m (red), BEL, CR, DEL and the C1 CSI (U+009B), in a span name
  // and a thread name: shown as escapes, never sent to the terminal.
  const std::string path = write_temp("input_controls", R"([
{"ph":"M","name":"thread_name","pid":1,"tid":1,"args":{"name":"t\u001b]0;title\u0007"}},
{"ph":"X","name":"a\u001b[31mred\u0007\r\u007f\u009bx","pid":1,"tid":1,"ts":0,"dur":1}])");
  const std::string shown = "a\\x1b[31mred\\x07\\x0d\\x7f\\u009bx";
  for (const char* format : {"table", "markdown"}) {
    SCOPED_TRACE(format);
    const Result r = report({path, "--format", format});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(shown), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("t\\x1b]0;title\\x07"), std::string::npos) << r.out;
    for (const char* raw : {"\x1b", "\x07", "\r", "\x7f", "\xC2\x9B"}) {
      EXPECT_EQ(r.out.find(raw), std::string::npos) << "raw byte in " << format;
    }
  }
  // CSV quotes its cells and keeps the bytes; JSON escapes them its own way.
  const Result csv = report({path, "--format", "csv", "--section", "compile_times"});
  EXPECT_NE(csv.out.find("\"a\x1b[31mred\x07\r\x7f\xC2\x9Bx\""), std::string::npos) << csv.out;
  const json rep = report_json({path});
  EXPECT_EQ(rep["compile_times"][0]["name"], "a\x1b[31mred\x07\r\x7f\xC2\x9Bx");
}

TEST(ReportInput, EpochMicrosecondTimestampsAreShownToTheNanosecond) {
  // 1712195495406752.797 µs does not fit a double to the ns (it printed
  // ...752.750).
  const std::string path = write_temp("input_epoch", R"([
{"ph":"X","name":"late","pid":1,"tid":1,"ts":1712195495406752.797,"dur":1.5}])");
  for (const char* format : {"table", "markdown"}) {
    SCOPED_TRACE(format);
    const Result r = report({path, "--format", format});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("(ts 1712195495406752.797 to 1712195495406754.297 µs)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("1712195495406752.797 µs"), std::string::npos) << r.out;
  }
  const json rep = report_json({path});
  EXPECT_EQ(rep["top_spans"][0]["ts_ns"].get<long long>(), 1712195495406752797LL);
  EXPECT_EQ(rep["header"]["time_span"]["end_ns"].get<long long>(), 1712195495406754297LL);
  const Result csv = report({path, "--format", "csv", "--section", "top_spans"});
  EXPECT_NE(csv.out.find(",1712195495406752797\n"), std::string::npos) << csv.out;
}

// ---- B/E ----

TEST(ReportInput, MoreThan65536OpenBeginsOnOneThreadEachEndClosesItsOwn) {
  // N nested B's at ts 0..N-1 µs, then N E's at N..2N-1: span i is
  // [i, 2N-1-i]. Spans 0..65535 are "a", the rest "b". Each span's self
  // time is 2 µs, the innermost's 1 µs.
  const long long N = 70000, kSplit = 65536;
  std::string content = "[";
  for (long long i = 0; i < N; ++i) {
    content += R"({"ph":"B","name":")" + std::string(i < kSplit ? "a" : "b") +
               R"(","pid":1,"tid":1,"ts":)" + std::to_string(i) + "},\n";
  }
  for (long long i = 0; i < N; ++i) {
    content += R"({"ph":"E","pid":1,"tid":1,"ts":)" + std::to_string(N + i) + "}";
    content += i + 1 < N ? ",\n" : "]";
  }
  const std::string path = write_temp("input_deep_be", content);
  const json rep = report_json({path});
  long long total_a = 0, total_b = 0;
  for (long long i = 0; i < N; ++i) (i < kSplit ? total_a : total_b) += (2 * N - 1 - 2 * i) * 1000;
  std::map<std::string, json> rows;
  for (const json& row : rep["phases"]) rows[row["name"]] = row;
  ASSERT_EQ(rows.size(), 2u) << rep["phases"].dump();
  EXPECT_EQ(rows["a"]["count"].get<long long>(), kSplit);
  EXPECT_EQ(rows["a"]["total_ns"].get<long long>(), total_a);
  EXPECT_EQ(rows["a"]["self_ns"].get<long long>(), kSplit * 2000);
  EXPECT_EQ(rows["b"]["count"].get<long long>(), N - kSplit);
  EXPECT_EQ(rows["b"]["total_ns"].get<long long>(), total_b);
  EXPECT_EQ(rows["b"]["self_ns"].get<long long>(), (N - kSplit - 1) * 2000 + 1000);
  EXPECT_EQ(rep["header"]["spans"].get<long long>(), N);
  EXPECT_TRUE(warnings(rep).empty()) << rep["header"].dump();
}

// ---- a merged trace ----

TEST(ReportInput, GpuAttributionSurvivesMergingTracesWithTheSamePid) {
  // Two sessions of pid 4242 (two runs, or two machines), each compiling a
  // unit 0/0 and launching its kernel on device 0 (jitscope's GPU pid:
  // 10000000 + 4242). The merge renumbers the shared pids; each GPU pid
  // must still name its own host.
  auto trace = [](const std::string& unit, long long t0) {
    const std::string u = "[0/0] " + unit;
    return "[" +
           std::string(
               R"({"ph":"M","name":"process_name","pid":4242,"tid":0,"args":{"name":"compiler"}},)") +
           R"j({"ph":"M","name":"process_name","pid":10004242,"tid":0,"args":{"name":"GPU 0 (pid 4242)"}},)j" +
           R"({"ph":"X","name":")" + u + R"(","cat":"compile_unit","pid":4242,"tid":1,"ts":)" +
           std::to_string(t0) + R"(,"dur":10,"args":{"compile_id":"0/0"}},)" +
           R"({"ph":"X","name":"kern","pid":10004242,"tid":7,"ts":)" + std::to_string(t0 + 25) +
           R"(,"dur":5,"args":{"device":0,"stream":7,"grid":[1,1,1],"compiled_by_id":"0/0","compiled_by":")" +
           u + R"("}}])";
  };
  const std::string a = write_temp("input_same_pid_a", trace("net__a_0", 100));
  const std::string b = write_temp("input_same_pid_b", trace("net__b_0", 1000));
  const std::string out = temp_path("input_same_pid_merged");
  const Result m = merge({a, b}, out);
  ASSERT_EQ(m.code, 0) << m.err;
  const json rep = report_json({out});
  ASSERT_EQ(rep["units"].size(), 2u) << rep["units"].dump();
  ASSERT_EQ(rep["gpu"]["units"].size(), 2u) << rep["gpu"].dump();
  std::map<std::string, std::pair<json, json>> by_name;  // unit name -> (unit row, GPU row)
  for (const json& u : rep["units"]) by_name[u["name"]].first = u;
  for (const json& g : rep["gpu"]["units"]) by_name[g["name"]].second = g;
  ASSERT_EQ(by_name.size(), 2u);
  for (const auto& [name, rows] : by_name) {
    SCOPED_TRACE(name);
    const auto& [unit, gpu] = rows;
    ASSERT_TRUE(unit.is_object() && gpu.is_object());
    EXPECT_EQ(gpu["pid"], unit["pid"]);
    EXPECT_NE(unit["pid"], 4242);  // shared: renumbered
    EXPECT_TRUE(unit["in_trace"].get<bool>());
    EXPECT_EQ(gpu["kernels"].get<int>(), 1);
    EXPECT_EQ(gpu["launched_inside"].get<int>(), 0);
    EXPECT_EQ(gpu["first_launch_latency_ns"].get<long long>(), 15000);
  }
  EXPECT_EQ(rep["gpu"]["kernels_unattributed"].get<int>(), 0);
}

}  // namespace
