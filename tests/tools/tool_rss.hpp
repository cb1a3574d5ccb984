// Runs a tool as a subprocess and says how it ended, what it wrote and its
// peak resident set (ru_maxrss). Memory is deterministic enough to bound;
// time is not, and is never checked.
//
// Why a launcher: a child inherits the parent's high-water mark as its
// ru_maxrss at exec (posix_spawn's vfork: the shared image's peak; fork: the
// pages it copied), so a test that built a big file first would see its own
// peak. The tool is therefore started by this test binary again
// (/proc/self/exe, its static initializer below, before main), which forks
// it from its own small image, waits, and writes the tool's wait status and
// ru_maxrss to a file. A launcher killed at the timeout takes the tool along
// (PR_SET_PDEATHSIG).
#pragma once

#include "subprocess.hpp"
#include "trace_support.hpp"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing {

namespace rss_detail {

inline constexpr const char* kStatusFileVar = "JITSCOPE_TEST_TOOL_STATUS";

// In the launcher (the variable set): runs argv[1..] and exits with its
// status; returns at once in the test itself.
inline int launch_if_asked() {
  const char* status_file = std::getenv(kStatusFileVar);
  if (status_file == nullptr) return 0;
  std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  for (std::string a; std::getline(cmdline, a, '\0');) args.push_back(a);
  std::vector<char*> argv;
  for (std::size_t i = 1; i < args.size(); ++i) argv.push_back(args[i].data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  struct rusage usage {};
  while (pid > 0 && ::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (FILE* f = std::fopen(status_file, "w")) {
    std::fprintf(f, "%d %ld\n", status, usage.ru_maxrss);
    std::fclose(f);
  }
  ::_exit(0);
}

inline const int kLaunched = launch_if_asked();

}  // namespace rss_detail

struct ToolRun {
  int code = -1;   // exit status, when it exited
  int signal = 0;  // the signal that ended it
  bool timed_out = false;
  long max_rss_kb = 0;  // the tool's own peak
  std::string out, err;
};

// `while_running` is called between polls until the tool ends (a test may
// act on it meanwhile: open the other end of a FIFO); stdin reads `in`.
inline ToolRun run_tool(const std::vector<std::string>& args,
                        const std::function<void()>& while_running = {},
                        const std::string& in = "/dev/null",
                        std::chrono::seconds timeout = std::chrono::seconds(300)) {
  ToolRun r;
  const std::string status_file = temp_path("tool_status");
  SpawnOptions options;
  options.stdin_path = in;
  options.env.emplace_back(rss_detail::kStatusFileVar, status_file);
  std::vector<std::string> launcher{"/proc/self/exe"};
  launcher.insert(launcher.end(), args.begin(), args.end());
  Subprocess p = spawn(launcher, temp_path("tool_run"), options);
  if (p.pid <= 0) {
    r.err = p.spawn_error;
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(p.pid, &status, WNOHANG);
    if (w == p.pid) break;
    if (w < 0 && errno != EINTR) return r;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(p.pid, SIGKILL);
      while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.timed_out = true;
      break;
    }
    if (while_running) while_running();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  int tool_status = -1;
  if (std::ifstream f(status_file); f >> tool_status >> r.max_rss_kb) {
    if (WIFEXITED(tool_status)) r.code = WEXITSTATUS(tool_status);
    if (WIFSIGNALED(tool_status)) r.signal = WTERMSIG(tool_status);
  }
  std::remove(status_file.c_str());
  r.out = p.out();
  r.err = p.err();
  p.remove_outputs();
  return r;
}

}  // namespace jitscope::testing
