// jitscope-report and jitscope-merge on gzip'd traces (issue 19 item 5),
// run as subprocesses, gzip made here with zlib. Each gzip'd trace is
// written over the plain one at the same path, so the outputs (which name
// their inputs) must be byte-identical: the report in every format, from a
// file and from stdin, of one member or several; the merge of gzip'd
// inputs (and of gzip'd and plain ones together) and its stderr; a gzip'd
// --metrics file (and one on stdin) as the plain one; a gzip'd
// trace cut inside its last event as the plain cut one (same warning, same
// report, same merge); a cut-off and a corrupt gzip stream as one error
// line with exit 1 from both tools, and no merge output left behind.
// Not covered here: the reader at every chunk size, each kind of
// corruption, bounded memory (trace_reader_gzip_test.cpp).
#include "gzip_support.hpp"
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using jitscope::testing::gzip_member;
using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

void put(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// A jitscope trace with compile units on two threads: its path. With
// `metrics_path`, the session writes its metrics file there too.
std::string sdk_trace(const std::string& stem, int units, const std::string& metrics_path = "") {
  jitscope::Config cfg = jitscope::testing::test_config(stem);
  cfg.metrics_path = metrics_path;
  EXPECT_TRUE(jitscope::start(cfg));
  for (int g = 0; g < units; ++g) {
    jitscope::CompileUnit unit({.frame = g % 2 == 0 ? "f0" : "f1", .graph = "fwd"});
    JITSCOPE_PHASE("compile_graph", {.column = "entire_compile_us"});
    {
      JITSCOPE_PHASE("parse", {.column = "parse_us"});
      JITSCOPE_SPAN("tokenize");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    std::thread worker([ref = unit.ref()] {
      jitscope::UnitScope scope(ref);
      for (int k = 0; k < 3; ++k) {
        JITSCOPE_SPAN("emit_kernel");
      }
    });
    worker.join();
  }
  jitscope::stop();
  return cfg.output_path;
}

Result merge(const std::vector<std::string>& inputs, const std::string& output) {
  std::vector<std::string> args = {JITSCOPE_MERGE, "-o", output};
  args.insert(args.end(), inputs.begin(), inputs.end());
  return run(args);
}

void expect_same(const Result& got, const Result& want, const std::string& what) {
  EXPECT_EQ(got.code, want.code) << what << ": " << got.err;
  EXPECT_EQ(got.err, want.err) << what;
  EXPECT_EQ(got.out, want.out) << what;
}

TEST(GzipInput, ReportIsByteIdenticalInEveryFormat) {
  const std::string path = sdk_trace("gzip_report", 4);
  const std::string plain = read_file(path);
  const std::vector<std::string> formats = {"table", "csv", "json", "markdown"};
  std::vector<Result> want;
  for (const std::string& f : formats) {
    want.push_back(report({path, "--format", f}));
    ASSERT_EQ(want.back().code, 0) << want.back().err;
  }
  const Result want_stdin = report({"-", "--format", "json"}, path);
  // One member, then three (`cat a.gz b.gz c.gz`), over the plain file.
  const std::size_t third = plain.size() / 3;
  const std::vector<std::pair<std::string, std::string>> gzips = {
      {"one member", gzip_member(plain)},
      {"three members", gzip_member(plain.substr(0, third)) +
                            gzip_member(plain.substr(third, third), 1) +
                            gzip_member(plain.substr(2 * third), 9)},
  };
  for (const auto& [what, gz] : gzips) {
    put(path, gz);
    ASSERT_NE(read_file(path), plain);
    for (std::size_t i = 0; i < formats.size(); ++i)
      expect_same(report({path, "--format", formats[i]}), want[i], what + ", " + formats[i]);
    expect_same(report({"-", "--format", "json"}, path), want_stdin, what + ", stdin");
  }
}

// --metrics reads through the traces' input path: a gzip'd metrics file
// (one member, or several) and a metrics file on stdin give the report of
// the plain file; a cut-off gzip'd one is one error line naming it.
TEST(GzipInput, MetricsFileGzipOrStdinAsThePlainOne) {
  const std::string metrics = temp_path("gzip_metrics.jsonl");
  const std::string path = sdk_trace("gzip_metrics", 4, metrics);
  const std::string plain = read_file(metrics);
  ASSERT_NE(plain.find("\"compile_id\""), std::string::npos) << plain;
  const Result want = report({path, "--metrics", metrics, "--format", "json"});
  ASSERT_EQ(want.code, 0) << want.err;
  ASSERT_NE(want.out.find("\"has_record\":true"), std::string::npos) << want.out;
  expect_same(report({path, "--metrics", "-", "--format", "json"}, metrics), want, "stdin");
  const std::size_t half = plain.size() / 2;
  const std::vector<std::pair<std::string, std::string>> gzips = {
      {"one member", gzip_member(plain)},
      {"two members", gzip_member(plain.substr(0, half)) + gzip_member(plain.substr(half), 1)},
  };
  for (const auto& [what, gz] : gzips) {
    put(metrics, gz);
    expect_same(report({path, "--metrics", metrics, "--format", "json"}), want, what);
    expect_same(report({path, "--metrics", "-", "--format", "json"}, metrics), want,
                what + ", stdin");
  }
  const std::string gz = gzip_member(plain);
  put(metrics, gz.substr(0, gz.size() / 2));
  expect_error(report({path, "--metrics", metrics}), 1,
               metrics + ": the gzip stream is cut off at compressed byte " +
                   std::to_string(gz.size() / 2) + " (member 1 has no end)",
               "cut off");
  // stdin is read once: a trace and a metrics file cannot both be '-'.
  expect_error(report({"-", "--metrics", "-"}, path), 2, "'-' (stdin) can be one input only",
               "both on stdin");
}

TEST(GzipInput, MergeOfGzipInputsIsTheMergeOfThePlainOnes) {
  const std::string a = sdk_trace("gzip_merge_a", 2);
  const std::string b = sdk_trace("gzip_merge_b", 3);
  const std::string plain_a = read_file(a), plain_b = read_file(b);
  const std::string out_plain = temp_path("gzip_merged_plain");
  const Result want = merge({a, b}, out_plain);
  ASSERT_EQ(want.code, 0) << want.err;
  const std::string merged = read_file(out_plain);

  put(a, gzip_member(plain_a));  // one gzip'd, one plain
  const std::string out_mixed = temp_path("gzip_merged_mixed");
  const Result mixed = merge({a, b}, out_mixed);
  put(b, gzip_member(plain_b.substr(0, 100)) + gzip_member(plain_b.substr(100)));  // both
  const std::string out_gz = temp_path("gzip_merged_gz");
  const Result gz = merge({a, b}, out_gz);
  struct Run {
    std::string what;
    const Result& r;
    std::string out;
  };
  for (const auto& [what, r, out] : {Run{"mixed", mixed, out_mixed}, Run{"gzip", gz, out_gz}}) {
    EXPECT_EQ(r.code, 0) << what << ": " << r.err;
    // stderr's summary names the output: the rest must match.
    std::string err = r.err;
    const std::size_t at = err.find(out);
    ASSERT_NE(at, std::string::npos) << err;
    err.replace(at, out.size(), out_plain);
    EXPECT_EQ(err, want.err) << what;
    EXPECT_EQ(read_file(out), merged) << what;  // plain JSON, the same bytes
  }
}

TEST(GzipInput, CutInsideItsLastEventAsThePlainCutTrace) {
  const std::string path = sdk_trace("gzip_cut", 2);
  std::string text = read_file(path);
  // Cut in the middle of the last event (a full disk).
  const std::size_t last = text.rfind("\n{");
  ASSERT_NE(last, std::string::npos);
  text.resize(last + 20);
  put(path, text);
  const Result want_report = report({path, "--format", "json"});
  ASSERT_EQ(want_report.code, 0) << want_report.err;
  const json rep = json::parse(want_report.out);
  ASSERT_EQ(rep["header"]["warnings"].size(), 1u);
  EXPECT_NE(rep["header"]["warnings"][0].get<std::string>().find("1 event cut off"),
            std::string::npos);
  const std::string out_plain = temp_path("gzip_cut_merged");
  const Result want_merge = run({JITSCOPE_MERGE, "-q", "-o", out_plain, path});
  ASSERT_EQ(want_merge.code, 0) << want_merge.err;
  EXPECT_NE(want_merge.err.find("1 event cut off"), std::string::npos) << want_merge.err;

  put(path, gzip_member(text));
  expect_same(report({path, "--format", "json"}), want_report, "report");
  const std::string out_gz = temp_path("gzip_cut_merged_gz");
  expect_same(run({JITSCOPE_MERGE, "-q", "-o", out_gz, path}), want_merge, "merge");
  EXPECT_EQ(read_file(out_gz), read_file(out_plain));
}

TEST(GzipInput, CutOffOrCorruptGzipIsOneErrorLine) {
  const std::string path = sdk_trace("gzip_bad", 1);
  const std::string text = read_file(path);
  const std::string gz = gzip_member(text);
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] = static_cast<char>(bad_crc[gz.size() - 8] ^ 1);
  const struct {
    std::string what, bytes, error;
  } cases[] = {
      {"cut off", gz.substr(0, gz.size() / 2),
       ": the gzip stream is cut off at compressed byte " + std::to_string(gz.size() / 2) +
           " (member 1 has no end)"},
      {"bad CRC-32", bad_crc,
       ": byte " + std::to_string(text.size()) + ": corrupt gzip data at compressed byte " +
           std::to_string(gz.size() - 4) + ": incorrect data check"},
  };
  for (const auto& c : cases) {
    put(path, c.bytes);
    expect_error(report({path}), 1, path + ": byte ", c.what);
    expect_error(report({path}), 1, c.error, c.what);
    expect_error(report({"-"}, path), 1, "<stdin>: byte ", c.what + " (stdin)");
    // merge: the same line, exit 1, no output file.
    const std::string out = temp_path("gzip_bad_merged");
    const Result m = run({JITSCOPE_MERGE, "-q", "--assume-same-clock", "-o", out, path});
    EXPECT_EQ(m.code, 1) << c.what << ": " << m.err;
    EXPECT_EQ(m.err.rfind("jitscope-merge: error: " + path + ": byte ", 0), 0u) << m.err;
    EXPECT_NE(m.err.find(c.error + "\n"), std::string::npos) << m.err;
    EXPECT_EQ(std::count(m.err.begin(), m.err.end(), '\n'), 1) << m.err;
    EXPECT_FALSE(exists(out)) << c.what;
  }
}

}  // namespace
