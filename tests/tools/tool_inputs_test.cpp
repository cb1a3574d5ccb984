// tool_inputs_test (issue 36, item 20): neither tool blocks on or destroys
// its own input.
// - A FIFO given as a trace (jitscope-report), or listed as a child trace
//   (jitscope-merge --children), is refused with one line and never opened:
//   the test watches the FIFO while the tool runs (opening its write end
//   succeeds only while a reader has it open), so a tool that opens it is
//   caught, and unblocked, rather than hanging the test.
// - -o naming an input (the same path, another spelling, a hard link, a
//   symbolic link, the file stdin reads, a --metrics file) is refused by
//   jitscope-report, as by jitscope-merge (a hard link too), and the input
//   is left as it was.
// Not covered here: -o on a FIFO, a link or a directory (merge_output_test).
#include "tool_rss.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace jitscope::testing {
namespace {

namespace fs = std::filesystem;

// Runs a tool while watching `fifo`: true in *opened when the tool had it
// open for reading at some point (its writer end is then opened and closed
// at once, so the tool reads an empty input instead of waiting forever).
ToolRun run_watching(const std::vector<std::string>& args, const std::string& fifo, bool* opened) {
  *opened = false;
  return run_tool(args, [&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      *opened = true;
      ::close(fd);
    }
  });
}

TEST(ToolInputs, ReportRefusesAFifoWithoutOpeningIt) {
  const std::string fifo = temp_dir("inputs_fifo") + "/trace.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  bool opened = false;
  const ToolRun r = run_watching({JITSCOPE_REPORT_BIN, fifo}, fifo, &opened);
  EXPECT_FALSE(opened) << "jitscope-report opened the FIFO";
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "jitscope-report: error: " + fifo +
                       ": is not a regular file (a FIFO); to read a pipe, give it as stdin: -\n");
  // A --metrics FIFO alike.
  const ToolRun m =
      run_watching({JITSCOPE_REPORT_BIN, write_one_span_trace("inputs_fifo_t"), "--metrics", fifo},
                   fifo, &opened);
  EXPECT_FALSE(opened) << "jitscope-report opened the --metrics FIFO";
  EXPECT_EQ(m.code, 1);
  EXPECT_NE(m.err.find(fifo + ": is not a regular file (a FIFO)"), std::string::npos) << m.err;
}

TEST(ToolInputs, MergeSkipsAListedFifoWithoutOpeningIt) {
  const std::string fifo = temp_dir("inputs_child_fifo") + "/worker.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Config cfg = test_config("inputs_parent");
  {
    ScopedSession session(cfg);
    Span s("dispatch");
    ASSERT_TRUE(note_child_process(4242, fifo, "w0").ok());
  }
  const std::string out = temp_path("inputs_family");
  bool opened = false;
  const ToolRun r =
      run_watching({JITSCOPE_MERGE_BIN, "--children", "-o", out, cfg.output_path}, fifo, &opened);
  EXPECT_FALSE(opened) << "jitscope-merge opened the FIFO";
  EXPECT_FALSE(r.timed_out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("jitscope-merge: warning: skipping " + fifo + " (listed by " +
                       cfg.output_path + "): " + fifo + ": is not a regular file (a FIFO)"),
            std::string::npos)
      << r.err;
  // The FIFO is still one, and the parent merged alone.
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_NE(read_file(out).find("jitscope_merge"), std::string::npos);
}

TEST(ToolInputs, ReportNeverWritesOverItsInput) {
  const std::string dir = temp_dir("inputs_same");
  const std::string trace = dir + "/trace.json";
  fs::copy_file(write_one_span_trace("inputs_same_src"), trace);
  const std::string before = read_file(trace);
  const std::string hard = dir + "/hard.json", soft = dir + "/soft.json";
  ASSERT_EQ(::link(trace.c_str(), hard.c_str()), 0);
  ASSERT_EQ(::symlink("trace.json", soft.c_str()), 0);
  const std::string metrics = dir + "/metrics.jsonl";
  std::ofstream(metrics) << "";
  struct Case {
    std::vector<std::string> args;
    std::string in;  // stdin
    std::string named;
  };
  const std::vector<Case> cases{
      {{trace, "-o", trace}, "/dev/null", trace},
      {{trace, "-o", dir + "/../" + fs::path(dir).filename().string() + "/trace.json"},
       "/dev/null",
       trace},
      {{trace, "-o", hard}, "/dev/null", trace},
      {{trace, "--output", soft}, "/dev/null", trace},
      {{hard, "-o", soft}, "/dev/null", hard},
      {{"-", "-o", trace}, trace, "<stdin>"},
      {{trace, "--metrics", metrics, "-o", metrics}, "/dev/null", metrics},
      {{"--baseline", trace, write_one_span_trace("inputs_same_new"), "-o", trace},
       "/dev/null",
       trace},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args{JITSCOPE_REPORT_BIN};
    args.insert(args.end(), c.args.begin(), c.args.end());
    SCOPED_TRACE(::testing::PrintToString(args));
    const ToolRun r = run_tool(args, {}, c.in);
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "jitscope-report: error: " + c.named + " is both an input and the output\n");
    EXPECT_EQ(read_file(trace), before);
    EXPECT_TRUE(fs::is_symlink(soft));
    EXPECT_EQ(fs::hard_link_count(trace), 2u);
  }
  // Another file is written as ever.
  const ToolRun ok = run_tool({JITSCOPE_REPORT_BIN, trace, "-o", dir + "/report.txt"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(read_file(trace), before);
}

TEST(ToolInputs, MergeNeverWritesOverAnInputByAHardLink) {
  const std::string dir = temp_dir("inputs_merge_same");
  const std::string trace = dir + "/trace.json";
  fs::copy_file(write_one_span_trace("inputs_merge_src"), trace);
  const std::string before = read_file(trace);
  const std::string hard = dir + "/hard.json";
  ASSERT_EQ(::link(trace.c_str(), hard.c_str()), 0);
  const ToolRun r = run_tool({JITSCOPE_MERGE_BIN, "-o", hard, trace});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "jitscope-merge: error: " + trace + " is both an input and the output\n");
  EXPECT_EQ(read_file(trace), before);
  EXPECT_EQ(fs::hard_link_count(trace), 2u);
  // The same input given twice by two links is one input given twice.
  const ToolRun twice = run_tool({JITSCOPE_MERGE_BIN, "-o", dir + "/m.json", trace, hard});
  EXPECT_EQ(twice.code, 1);
  EXPECT_EQ(twice.err, "jitscope-merge: error: " + hard + " is given twice\n");
}

}  // namespace
}  // namespace jitscope::testing
