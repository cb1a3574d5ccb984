// jitscope-ctl and the request files it writes (issue 39): the SDK takes its
// own request once and the shared one once per write; the tool, by pid,
// finds a server's output path in its environment, asks, and prints the
// snapshot's path; it says why when it cannot.
#include "subprocess.hpp"
#include "trace_support.hpp"

#include "base/trace_paths.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace jitscope::testing {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool appears(const std::string& path, int seconds = 20) {
  for (int i = 0; i < seconds * 200 && !exists(path); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return exists(path);
}

// As jitscope-ctl writes it: beside, then renamed (a new inode each time).
void write_request(const std::string& path, const std::string& reason) {
  const std::string temporary = path + ".tmp";
  std::ofstream(temporary) << reason;
  ASSERT_EQ(::rename(temporary.c_str(), path.c_str()), 0);
}

std::string trigger_of(const std::string& snapshot) {
  return (*metadata(load_trace(snapshot), "jitscope_snapshot"))["args"]["trigger"];
}

TEST(SnapshotRequestFiles, TheOwnRequestIsTakenOnceAndTheSharedOnceAWriteButNotOneFromBefore) {
  Config cfg = test_config("ctl_files");
  cfg.flight_recorder_bytes = 64 << 10;
  cfg.snapshot_min_interval = std::chrono::milliseconds(0);
  const std::string shared = detail::snapshot_request_path(cfg.output_path, 0);
  const std::string own = detail::snapshot_request_path(cfg.output_path, ::getpid());
  write_request(shared, "left from an earlier run");  // there before start: not a request
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  { Span s("before_the_request"); }
  write_request(own, "why not\n");
  const std::string first = detail::snapshot_path(cfg.output_path, ::getpid(), 1);
  ASSERT_TRUE(appears(first));
  EXPECT_FALSE(exists(own));  // taken
  write_request(shared, "");
  const std::string second = detail::snapshot_path(cfg.output_path, ::getpid(), 2);
  ASSERT_TRUE(appears(second));
  EXPECT_TRUE(exists(shared));                                  // every process's: stays
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // 20 cycles: not taken again
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 2u);
  EXPECT_EQ(trigger_of(first), "jitscope-ctl: why not");
  EXPECT_EQ(trigger_of(second), "jitscope-ctl");
  ::unlink(shared.c_str());
}

// A request file the process cannot remove (here: a folder by that name,
// then a plain file it finds at start) is not taken again every cycle.
TEST(SnapshotRequestFiles, OnlyAPlainFileIsARequestAndEachVersionOnce) {
  Config cfg = test_config("ctl_stuck");
  cfg.flight_recorder_bytes = 64 << 10;
  cfg.snapshot_min_interval = std::chrono::milliseconds(0);
  const std::string own = detail::snapshot_request_path(cfg.output_path, ::getpid());
  std::ofstream(own) << "from a process of this pid before";  // there at start: not a request
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));  // a dozen cycles
    EXPECT_EQ(session.finish().snapshots_written, 0u);
  }
  ::unlink(own.c_str());
  ASSERT_EQ(::mkdir(own.c_str(), 0755), 0);
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    EXPECT_EQ(session.finish().snapshots_written, 0u);
  }
  ::rmdir(own.c_str());
}

struct Ran {
  int code = -1;
  std::string out, err;
};

Ran ctl(const std::vector<std::string>& args, const std::string& stem) {
  std::vector<std::string> argv{JITSCOPE_CTL};
  argv.insert(argv.end(), args.begin(), args.end());
  Subprocess p = spawn(argv, temp_path(stem));
  Ran r;
  if (!p.wait(std::chrono::seconds(60))) return r;
  r.code = p.exit_code;
  r.out = p.out();
  r.err = p.err();
  p.remove_outputs();
  return r;
}

TEST(JitscopeCtl, ByPidItAsksAServerAndPrintsTheSnapshotsPath) {
  const std::string trace = temp_path("ctl_server");
  const std::string stop = trace + ".stop";
  SpawnOptions options;
  options.drop_env_prefixes = {"JITSCOPE_"};
  options.env = {{"JITSCOPE_TRACE", trace},
                 {"JITSCOPE_FLIGHT", "1M"},
                 {"JITSCOPE_SNAPSHOT_MIN_INTERVAL_MS", "0"},
                 {"JITSCOPE_CUPTI", "off"}};
  Subprocess server = spawn({FLIGHT_SERVER_CHILD, stop}, trace + ".child", options);
  ASSERT_GT(server.pid, 0) << server.spawn_error;
  for (int i = 0; i < 4000 && server.out().find("ready") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_NE(server.out().find("ready"), std::string::npos) << server.err();

  const Ran listed = ctl({"list"}, "ctl_list");
  EXPECT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find(std::to_string(server.pid) + "\t1M\t" + trace), std::string::npos)
      << listed.out;

  const Ran asked =
      ctl({"snapshot", std::to_string(server.pid), "--reason", "from the test"}, "ctl_asked");
  EXPECT_EQ(asked.code, 0) << asked.err;
  // The path as seen here: through /proc/<pid>/root.
  const std::string path = detail::snapshot_path(trace, server.pid, 1);
  EXPECT_EQ(asked.out, "/proc/" + std::to_string(server.pid) + "/root" + path + "\n");
  ASSERT_TRUE(exists(path)) << asked.out << asked.err;
  EXPECT_EQ(trigger_of(path), "jitscope-ctl: from the test");
  EXPECT_FALSE(load_trace(path).empty());

  const Ran all = ctl({"snapshot", "--trace", trace}, "ctl_all");
  EXPECT_EQ(all.code, 0) << all.err;
  EXPECT_TRUE(appears(detail::snapshot_path(trace, server.pid, 2)));

  std::ofstream(stop) << "";
  ASSERT_TRUE(server.wait(std::chrono::seconds(60)));
  EXPECT_EQ(server.exit_code, 0) << server.err();
  EXPECT_NE(server.out().find("snapshots 2"), std::string::npos) << server.out();
  ::unlink(detail::snapshot_request_path(trace, 0).c_str());
  server.remove_outputs();
}

TEST(JitscopeCtl, SaysWhyItCannot) {
  // A process with no JITSCOPE_* variable (its /proc environ is its start's).
  SpawnOptions clean;
  clean.drop_env_prefixes = {"JITSCOPE_"};
  Subprocess plain = spawn({"/bin/sleep", "60"}, temp_path("ctl_plain"), clean);
  ASSERT_GT(plain.pid, 0) << plain.spawn_error;
  // posix_spawn returns inside the child's execve, before its new
  // environment is set up: /proc/<pid>/environ reads empty for a moment.
  const std::string environ_path = "/proc/" + std::to_string(plain.pid) + "/environ";
  for (int i = 0; i < 400 && Subprocess::slurp(environ_path).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const Ran self = ctl({"snapshot", std::to_string(plain.pid)}, "ctl_self");
  ::kill(plain.pid, SIGKILL);
  plain.wait();
  plain.remove_outputs();
  EXPECT_EQ(self.code, 1);
  EXPECT_NE(self.err.find("has no JITSCOPE_TRACE and JITSCOPE_FLIGHT in its environment"),
            std::string::npos)
      << self.err;
  const Ran gone = ctl({"snapshot", "2147483646"}, "ctl_gone");
  EXPECT_EQ(gone.code, 1);
  EXPECT_NE(gone.err.find("no process 2147483646"), std::string::npos) << gone.err;
  // Nobody takes it: said, and the request is not left behind.
  const std::string nobody = temp_path("ctl_nobody");
  const Ran untaken =
      ctl({"snapshot", "--trace", nobody, "--pid", "4242", "--wait", "0.2"}, "ctl_untaken");
  EXPECT_EQ(untaken.code, 1);
  EXPECT_NE(untaken.err.find("did not take the request within 0.2 s (removed)"), std::string::npos)
      << untaken.err;
  EXPECT_FALSE(exists(detail::snapshot_request_path(nobody, 4242)));
  // --wait 0: asked, not waited for; the request stays for the process.
  const Ran asked =
      ctl({"snapshot", "--trace", nobody, "--pid", "4243", "--wait", "0"}, "ctl_nowait");
  EXPECT_EQ(asked.code, 0) << asked.err;
  EXPECT_TRUE(exists(detail::snapshot_request_path(nobody, 4243)));
  ::unlink(detail::snapshot_request_path(nobody, 4243).c_str());
  const Ran bare = ctl({"snapshot"}, "ctl_bare");
  EXPECT_EQ(bare.code, 2);
  EXPECT_NE(bare.err.find("needs a pid or --trace"), std::string::npos) << bare.err;
}

}  // namespace
}  // namespace jitscope::testing
