// jitscope-merge -o and jitscope-report -o (both through
// tools/common/output_file.hpp) on what is not a plain new file: a FIFO is
// written in place and stays a FIFO (its reader gets the merge), a symbolic
// link is followed and stays a link, a directory is refused with one line
// and left as it was. (A device is the FIFO's case; -o /dev/null is not run here: as
// root, a tool that renames over its output would replace the machine's
// /dev/null.)
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace jitscope::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool merged_trace(const std::string& text) {
  const json trace = json::parse(text, nullptr, false);
  if (trace.is_discarded() || !trace.is_array()) return false;
  for (const json& e : trace) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "jitscope_merge") return true;
  }
  return false;
}

mode_t lstat_type(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

// Where a link points; empty when `path` is no link.
std::string link_target(const std::string& path) {
  std::error_code ec;
  const fs::path to = fs::read_symlink(path, ec);
  return ec ? std::string() : to.string();
}

std::set<std::string> listing(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

TEST(MergeOutput, AFifoIsWrittenInPlaceAndItsReaderGetsTheMerge) {
  const std::string input = write_one_span_trace("merge_out_fifo_in");
  const std::string dir = temp_dir("merge_out_fifo");
  const std::string fifo = dir + "/pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Open before the merge, without blocking: the merge's open then finds a
  // reader, and a merge that never opens the FIFO cannot hang the test (poll
  // reports nothing until a writer has come and gone).
  const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  Subprocess p = spawn({JITSCOPE_MERGE_BIN, "-q", "-o", fifo, input}, temp_path("merge_out_fifo"));
  ASSERT_GT(p.pid, 0) << p.spawn_error;
  std::string got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 50) > 0) {
      char buf[65536];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) got.append(buf, static_cast<std::size_t>(n));
      if (n == 0) break;  // the writer closed it: the whole merge is in
      continue;
    }
    siginfo_t info{};
    // Still waitable afterwards (WNOWAIT): Subprocess::wait reaps it.
    if (::waitid(P_PID, static_cast<id_t>(p.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == p.pid) {
      break;  // exited without ever writing to the FIFO
    }
  }
  ::close(fd);
  ASSERT_TRUE(p.wait(std::chrono::seconds(60)));
  EXPECT_EQ(p.exit_code, 0) << p.err();
  EXPECT_EQ(lstat_type(fifo), static_cast<mode_t>(S_IFIFO)) << "the FIFO was replaced";
  EXPECT_TRUE(merged_trace(got)) << "the reader got " << got.size() << " bytes";
  EXPECT_EQ(listing(dir), std::set<std::string>{"pipe"}) << "a temporary file was left";
  p.remove_outputs();
  fs::remove_all(dir);
}

TEST(MergeOutput, ASymlinkIsFollowedAndStaysALink) {
  const std::string input = write_one_span_trace("merge_out_link_in");
  const std::string dir = temp_dir("merge_out_link");
  { std::ofstream(dir + "/real.json") << "old"; }
  ASSERT_EQ(::symlink("real.json", (dir + "/link").c_str()), 0);
  // A dangling link: the merge creates the file it names.
  ASSERT_EQ(::symlink("new.json", (dir + "/dangling").c_str()), 0);
  for (const std::string name : {"link", "dangling"}) {
    Subprocess p =
        spawn({JITSCOPE_MERGE_BIN, "-q", "-o", dir + "/" + name, input}, temp_path("merge_out"));
    ASSERT_TRUE(p.wait(std::chrono::seconds(120)));
    EXPECT_EQ(p.exit_code, 0) << name << ": " << p.err();
    p.remove_outputs();
  }
  EXPECT_EQ(lstat_type(dir + "/link"), static_cast<mode_t>(S_IFLNK)) << "the link was replaced";
  EXPECT_EQ(link_target(dir + "/link"), "real.json");
  EXPECT_TRUE(merged_trace(read_file(dir + "/real.json")));
  EXPECT_EQ(lstat_type(dir + "/dangling"), static_cast<mode_t>(S_IFLNK));
  EXPECT_EQ(link_target(dir + "/dangling"), "new.json");
  EXPECT_TRUE(merged_trace(read_file(dir + "/new.json")));
  EXPECT_EQ(listing(dir), (std::set<std::string>{"dangling", "link", "new.json", "real.json"}));
  fs::remove_all(dir);
}

TEST(MergeOutput, ADirectoryIsRefusedWithOneLineAndLeftAsItWas) {
  const std::string input = write_one_span_trace("merge_out_dir_in");
  const std::string dir = temp_dir("merge_out_dir");
  { std::ofstream(dir + "/keep") << "kept"; }
  for (const std::string out : {dir + "/", dir}) {
    Subprocess p = spawn({JITSCOPE_MERGE_BIN, "-q", "-o", out, input}, temp_path("merge_out"));
    ASSERT_TRUE(p.wait(std::chrono::seconds(120)));
    EXPECT_EQ(p.exit_code, 1) << p.err();
    EXPECT_EQ(p.err(), "jitscope-merge: error: " + out + ": is a directory\n");
    p.remove_outputs();
    EXPECT_EQ(lstat_type(dir), static_cast<mode_t>(S_IFDIR));
    EXPECT_EQ(listing(dir), std::set<std::string>{"keep"});
    EXPECT_EQ(read_file(dir + "/keep"), "kept");
  }
  fs::remove_all(dir);
}

TEST(ReportOutput, ASymlinkIsFollowedAndStaysALink) {
  const std::string input = write_one_span_trace("report_out_link_in");
  const std::string dir = temp_dir("report_out_link");
  { std::ofstream(dir + "/real.txt") << "old"; }
  ASSERT_EQ(::symlink("real.txt", (dir + "/link").c_str()), 0);
  Subprocess p = spawn({JITSCOPE_REPORT_BIN, input, "--format", "json", "-o", dir + "/link"},
                       temp_path("report_out"));
  ASSERT_TRUE(p.wait(std::chrono::seconds(120)));
  EXPECT_EQ(p.exit_code, 0) << p.err();
  p.remove_outputs();
  EXPECT_EQ(lstat_type(dir + "/link"), static_cast<mode_t>(S_IFLNK)) << "the link was replaced";
  EXPECT_EQ(link_target(dir + "/link"), "real.txt");
  const json report = json::parse(read_file(dir + "/real.txt"), nullptr, false);
  EXPECT_TRUE(report.is_object()) << "the link's target holds the report";
  EXPECT_EQ(listing(dir), (std::set<std::string>{"link", "real.txt"}));
  fs::remove_all(dir);
}

TEST(ReportOutput, ADirectoryIsRefusedWithOneLineAndLeftAsItWas) {
  const std::string input = write_one_span_trace("report_out_dir_in");
  const std::string dir = temp_dir("report_out_dir");
  { std::ofstream(dir + "/keep") << "kept"; }
  Subprocess p = spawn({JITSCOPE_REPORT_BIN, input, "-o", dir}, temp_path("report_out"));
  ASSERT_TRUE(p.wait(std::chrono::seconds(120)));
  EXPECT_EQ(p.exit_code, 1) << p.err();
  EXPECT_EQ(p.err(), "jitscope-report: error: " + dir + ": is a directory\n");
  p.remove_outputs();
  EXPECT_EQ(lstat_type(dir), static_cast<mode_t>(S_IFDIR));
  EXPECT_EQ(listing(dir), std::set<std::string>{"keep"});
  fs::remove_all(dir);
}

}  // namespace
}  // namespace jitscope::testing
