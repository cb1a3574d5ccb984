// A full disk (issue 17 item 2): when a write fails part way, the trace and
// the metrics file keep whole events (whole lines) only, and the trace's
// closing stats and "]" follow when they still fit. Without root: a child
// process sets RLIMIT_FSIZE and ignores SIGXFSZ, so writes past the limit
// fail with EFBIG, as they would with ENOSPC.
// - A session (full_disk_child.cpp) whose trace and metrics both hit the
//   limit: the files are within it, every trace line is a whole event, every
//   metrics line a whole record, and one `jitscope:` line names each file.
// - FileSink alone, with exact bytes: the cut, the closing part after a
//   failure (fitting, partly fitting, not fitting), JSON lines, and a
//   failure in a rotated file.
// - The same for a Perfetto trace (.pftrace): the file ends with a whole
//   packet and decodes, and FileSink cuts packets back by their lengths.
// Not covered: a real ENOSPC (needs a filesystem of its own) and a close(2)
// that fails (NFS); /dev/full is stress_test's.
#include "base/proto_wire.hpp"
#include "flush/perfetto_wire.hpp"
#include "sink/file_sink.hpp"
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace jitscope::testing {
namespace {

bool is_object(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_object();
}

// The trace's own check, not a reader's: "[", then one whole event per line
// (each but the last followed by ","), then optionally "]" as the last line.
void expect_whole_trace_events(const std::string& text, const std::string& what) {
  SCOPED_TRACE(what);
  const std::vector<std::string> lines = lines_of(text);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "[");
  bool closed = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    std::string line = lines[i];
    ASSERT_FALSE(closed) << "line " << i << " after the closing bracket: " << line;
    if (line == "]") {
      closed = true;
      continue;
    }
    const bool last_event = i + 1 == lines.size() || lines[i + 1] == "]";
    if (!last_event) {
      ASSERT_FALSE(line.empty()) << "line " << i;
      EXPECT_EQ(line.back(), ',') << "line " << i << ": " << line;
      line.pop_back();
    }
    EXPECT_TRUE(is_object(line)) << "line " << i << " of " << lines.size()
                                 << " is not a whole event: " << line;
  }
  if (closed) EXPECT_EQ(text.substr(text.size() - 3), "\n]\n");
}

void expect_whole_lines(const std::string& text, const std::string& what) {
  SCOPED_TRACE(what);
  if (text.empty()) return;
  EXPECT_EQ(text.back(), '\n') << "the last line is cut: " << text.substr(text.rfind('\n') + 1);
  for (const std::string& line : lines_of(text)) {
    EXPECT_TRUE(is_object(line)) << "not a whole record: " << line;
  }
}

// Not a multiple of anything the writer uses.
constexpr std::size_t kLimit = 200'000 + 37;

// full_disk_child writing `trace` and `metrics` with files limited to
// kLimit bytes, waited for (two minutes at most).
Subprocess run_child(const std::string& stem, const std::string& trace,
                     const std::string& metrics) {
  SpawnOptions options;
  options.drop_env_prefixes = {"JITSCOPE_"};
  Subprocess p =
      spawn({JITSCOPE_FULL_DISK_CHILD, std::to_string(kLimit), trace, metrics}, stem, options);
  if (p.pid > 0) (void)p.wait(std::chrono::seconds(120));
  return p;
}

// The child ran and exited 0, and its trace `text` is within the limit,
// cut back by about one `piece` at most.
void expect_ran_within_limit(const Subprocess& p, const std::string& text, const char* piece) {
  ASSERT_GT(p.pid, 0) << p.spawn_error;
  ASSERT_FALSE(p.timed_out);
  EXPECT_EQ(p.exit_code, 0) << p.out() << p.err();
  EXPECT_LE(text.size(), kLimit);
  EXPECT_GT(text.size(), kLimit / 2) << "the file was cut back far more than one " << piece;
}

TEST(FullDisk, ASessionLeavesWholeEventsAndWholeLinesWithinTheLimit) {
  const std::string stem = temp_path("full_disk");
  const std::string trace = stem + ".trace.json";
  const std::string metrics = stem + ".metrics.jsonl";
  Subprocess p = run_child(stem, trace, metrics);
  const std::string text = read_file(trace);
  ASSERT_NO_FATAL_FAILURE(expect_ran_within_limit(p, text, "event"));
  expect_whole_trace_events(text, trace);
  const nlohmann::json loaded = load_trace(trace, /*allow_cut=*/true);
  EXPECT_GT(events_with_ph(loaded, "X").size(), 100u);

  const std::string lines = read_file(metrics);
  EXPECT_LE(lines.size(), kLimit);
  EXPECT_GT(lines.size(), kLimit / 2);
  expect_whole_lines(lines, metrics);

  // One line for each file, with the reason and the path.
  const std::vector<std::string> said = lines_starting(p.err(), "jitscope:");
  ASSERT_EQ(said.size(), 2u) << p.err();
  for (const std::string& path : {trace, metrics}) {
    int naming = 0;
    for (const std::string& line : said) {
      if (line.find(path + " ") == std::string::npos) continue;
      ++naming;
      EXPECT_NE(line.find("File too large"), std::string::npos) << line;
    }
    EXPECT_EQ(naming, 1) << path << "\n" << p.err();
  }
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    ::unlink(trace.c_str());
    ::unlink(metrics.c_str());
  }
}

// Runs `body` in a child whose files cannot grow past `limit` bytes; the
// child's gtest assertions do not reach this process, so `body` returns
// false on a failed check.
void run_limited(std::size_t limit, const std::function<bool()>& body) {
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit rl = {limit, limit};
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(2);
    ::_exit(body() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "a check in the child failed";
}

// A sink on a fresh file at `path`; -1 fd if it cannot be opened.
int open_for_test(const std::string& path) {
  std::string why;
  return detail::open_output(path, "", why);
}

const std::string kHead = "[\n{\"ph\":\"M\",\"name\":\"a\"}";
const std::string kSecond = ",\n{\"ph\":\"M\",\"name\":\"b\"}";
const std::string kBig = ",\n{\"ph\":\"M\",\"name\":\"" + std::string(300, 'c') + "\"}";
const std::string kStats = ",\n{\"ph\":\"M\",\"name\":\"jitscope_stats\"}\n]\n";

TEST(FullDisk, AFailedWriteIsCutBackToTheLastWholeEvent) {
  const std::string path = temp_path("sink_cut");
  const std::size_t limit = kHead.size() + kSecond.size() + 100;  // inside kBig
  run_limited(limit, [&] {
    detail::FileSink sink(open_for_test(path), path);
    sink.write(kHead);
    sink.write(kSecond + kBig + kSecond);
    return sink.failed() && sink.bytes() == kHead.size() + kSecond.size();
  });
  EXPECT_EQ(read_file(path), kHead + kSecond);
  ::unlink(path.c_str());
}

TEST(FullDisk, TheClosingPartFollowsWhenItFitsAfterTheCut) {
  const std::string path = temp_path("sink_closing");
  const std::size_t limit = kHead.size() + kSecond.size() + 100;  // kStats fits, kBig not
  run_limited(limit, [&] {
    detail::FileSink sink(open_for_test(path), path);
    sink.write(kHead + kSecond + kBig);
    sink.write(kSecond);  // discarded: the output failed
    sink.write_closing(kStats);
    return sink.failed() && sink.bytes() == kHead.size() + kSecond.size() + kStats.size();
  });
  const std::string text = read_file(path);
  EXPECT_EQ(text, kHead + kSecond + kStats);
  EXPECT_TRUE(nlohmann::json::accept(text)) << text;
  ::unlink(path.c_str());
}

TEST(FullDisk, AClosingPartThatDoesNotFitIsCutBackToWholeEvents) {
  const std::string path = temp_path("sink_no_closing");
  const std::string counter = ",\n{\"ph\":\"C\",\"name\":\"jitscope.dropped_events\"}";
  // Room for the counter after the cut, not for the stats after it.
  const std::size_t limit = kHead.size() + counter.size() + 10;
  run_limited(limit, [&] {
    detail::FileSink sink(open_for_test(path), path);
    sink.write(kHead + kBig);
    sink.write_closing(counter + kStats);
    return sink.failed() && sink.bytes() == kHead.size() + counter.size();
  });
  EXPECT_EQ(read_file(path), kHead + counter);
  ::unlink(path.c_str());
}

TEST(FullDisk, AClosingPartThatFailsFirstIsCutBackToo) {
  const std::string path = temp_path("sink_closing_fails");
  const std::size_t limit = kHead.size() + kSecond.size() + 12;  // inside the stats
  run_limited(limit, [&] {
    detail::FileSink sink(open_for_test(path), path);
    sink.write(kHead + kSecond);
    sink.write_closing(kStats);
    return sink.failed() && sink.bytes() == kHead.size() + kSecond.size();
  });
  EXPECT_EQ(read_file(path), kHead + kSecond);
  ::unlink(path.c_str());
}

TEST(FullDisk, MetricsLinesAreCutBackToTheLastWholeLine) {
  const std::string path = temp_path("sink_lines");
  const std::string line = "{\"name\":\"unit\",\"duration_us\":12}\n";
  run_limited(2 * line.size() + 5, [&] {
    detail::FileSink sink(open_for_test(path), path, detail::FileSink::Framing::kLines);
    sink.write(line);
    sink.write(line + line + line);
    return sink.failed() && sink.bytes() == 2 * line.size();
  });
  EXPECT_EQ(read_file(path), line + line);
  ::unlink(path.c_str());
}

TEST(FullDisk, AFailureInARotatedFileLeavesTheEarlierFilesWhole) {
  const std::string path = temp_path("sink_rotated");
  const std::string next = detail::numbered_path(path, 1);
  const std::string closing = "\n]\n";
  run_limited(kHead.size() + kSecond.size() + 50, [&] {
    detail::FileSink sink(open_for_test(path), path, 64 * 1024);
    sink.write(kHead + kSecond + closing);
    if (!sink.next_file()) return false;
    sink.write(kHead + kSecond + kBig);
    return sink.failed();
  });
  EXPECT_EQ(read_file(path), kHead + kSecond + closing);
  EXPECT_EQ(read_file(next), kHead + kSecond);
  ::unlink(path.c_str());
  ::unlink(next.c_str());
}

// The child's trace in the Perfetto form, with the same limit: the file
// ends with a whole packet (a write cut part way is cut back by the packets'
// lengths, not by JSON's separators) and decodes. It is kept as
// tmp/full_disk.pftrace for ctest's pftrace.full_disk_test check
// (full_disk.cmake).
TEST(FullDisk, AProtobufTraceEndsWithAWholePacketWithinTheLimit) {
  const std::string stem = temp_path("full_disk_pf");
  const std::string trace = stem + ".trace.pftrace";
  const std::string metrics = stem + ".metrics.jsonl";
  Subprocess p = run_child(stem, trace, metrics);
  const std::string text = read_file(trace);
  ASSERT_NO_FATAL_FAILURE(expect_ran_within_limit(p, text, "packet"));
  EXPECT_EQ(detail::wire::whole_fields_end(text, text.size()), text.size())
      << "the file does not end with a whole packet";
  pfwire::Reader reader;
  bool cut = true;
  reader.read(text, &cut);
  EXPECT_FALSE(cut);
  for (const std::string& e : reader.errors) ADD_FAILURE() << e;
  EXPECT_GT(events_with_ph(reader.json_form(), "X").size(), 100u);

  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  std::ofstream keep(std::string(dir != nullptr ? dir : "/tmp") + "/full_disk.pftrace",
                     std::ios::binary | std::ios::trunc);
  keep.write(text.data(), static_cast<std::streamsize>(text.size()));
  EXPECT_TRUE(keep.good());
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    ::unlink(trace.c_str());
    ::unlink(metrics.c_str());
  }
}

// A packet of `body_size` bytes: Trace.packet's tag, its length, the body.
std::string packet(std::size_t body_size, char fill) {
  std::string out(1, '\x0a');
  detail::wire::append_varint(out, body_size);
  return out + std::string(body_size, fill);
}

TEST(FullDisk, PacketsAreCutBackByTheirLengths) {
  const std::string path = temp_path("sink_packets");
  // `small`'s last ',' and `big`'s tag ('\n') make JSON's ",\n" separator,
  // which must not decide where a packet ends.
  const std::string head = packet(5, 'a');
  const std::string small = packet(3, ',');
  const std::string big = packet(300, '\n');
  const std::string stats = packet(20, 's');
  const std::size_t limit = head.size() + small.size() + 100;  // inside `big`
  run_limited(limit, [&] {
    detail::FileSink sink(open_for_test(path), path, 0, detail::FileSink::Framing::kPackets);
    sink.write(head);
    sink.write(small + big + small);
    sink.write_closing(stats);  // fits after the cut
    return sink.failed() && sink.bytes() == head.size() + small.size() + stats.size();
  });
  EXPECT_EQ(read_file(path), head + small + stats);
  ::unlink(path.c_str());
}

}  // namespace
}  // namespace jitscope::testing
