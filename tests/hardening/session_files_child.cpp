// A host whose trace file outlives an exec or a kill, for session_files_test.cpp.
//   session_files_child early-kill <trace>
//     starts a session (TSC clock, 60 s flush interval) and SIGKILLs itself
//     as soon as start() returns: before any flush, and before the flusher
//     can have calibrated the clock.
//   session_files_child exec-stopped | exec-running
//     runs under JITSCOPE_TRACE (the autostart session): ends kBeforeExec
//     spans "before_exec", then execv()s itself as "second", which ends
//     kAfterExec spans "after_exec" and exits 0. exec-stopped calls stop()
//     before the exec; exec-running waits until its spans are in the file
//     (the flusher wrote them) and execs with the session still running.
//     Each image also closes one compile unit (graph "before_exec" or
//     "after_exec"): its record goes to JITSCOPE_METRICS when that is set.
//   session_files_child parent
//     runs under JITSCOPE_TRACE: ends kParentSpans spans "in_parent" and a
//     unit, runs itself as "worker" (fork and exec, the environment
//     inherited), waits for it, lists it with note_child_process(pid) (no
//     path: the worker's own file) and exits 0. The worker ends
//     kWorkerSpans spans "in_worker" and a unit (graph "in_worker").
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace {

constexpr int kBeforeExec = 100;  // as session_files_test.cpp
constexpr int kAfterExec = 50;
constexpr int kParentSpans = 20;
constexpr int kWorkerSpans = 30;

int count_in_file(const char* path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

std::size_t file_size(const char* path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? static_cast<std::size_t>(in.tellg()) : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string how = argv[1];
  if (how == "early-kill" && argc == 3) {
    jitscope::Config cfg;
    cfg.output_path = argv[2];
    cfg.flush_interval = std::chrono::milliseconds(60'000);
    cfg.clock = jitscope::ClockChoice::kTsc;
    cfg.cupti = jitscope::CuptiMode::kOff;
    if (!jitscope::start(cfg)) return 3;
    ::kill(::getpid(), SIGKILL);
    return 4;  // not reached
  }
  if (how == "second") {
    for (int i = 0; i < kAfterExec; ++i) jitscope::Span span("after_exec");
    { jitscope::CompileUnit unit(jitscope::CompileUnitOptions{.graph = "after_exec"}); }
    return 0;  // the autostart session stops at exit
  }
  if (how == "worker") {
    for (int i = 0; i < kWorkerSpans; ++i) jitscope::Span span("in_worker");
    { jitscope::CompileUnit unit(jitscope::CompileUnitOptions{.graph = "in_worker"}); }
    return 0;
  }
  if (how == "parent") {
    if (!jitscope::active()) return 8;
    for (int i = 0; i < kParentSpans; ++i) jitscope::Span span("in_parent");
    { jitscope::CompileUnit unit(jitscope::CompileUnitOptions{.graph = "in_parent"}); }
    const pid_t pid = ::fork();
    if (pid == 0) {
      char self[] = "/proc/self/exe";
      char worker[] = "worker";
      char* const args[] = {argv[0], worker, nullptr};
      ::execv(self, args);
      ::_exit(7);
    }
    int status = 0;
    if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return 9;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 10;
    return jitscope::note_child_process(pid, {}, "w").ok() ? 0 : 11;
  }
  if (how != "exec-stopped" && how != "exec-running") return 2;
  const char* trace = std::getenv("JITSCOPE_TRACE");
  if (trace == nullptr) return 5;
  for (int i = 0; i < kBeforeExec; ++i) jitscope::Span span("before_exec");
  { jitscope::CompileUnit unit(jitscope::CompileUnitOptions{.graph = "before_exec"}); }
  if (how == "exec-stopped") {
    if (!jitscope::stop()) return 6;
  } else {
    // The flusher writes them within a few intervals; the deadline is only
    // against a hang (the test then finds them missing).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const std::string path = trace;
    if (path.size() > 8 && path.compare(path.size() - 8, 8, ".pftrace") == 0) {
      // Names are interned there: wait for the name, then for the file to
      // stop growing for 20 flush intervals (the spans are all drained).
      std::size_t size = 0, stable = 0;
      while (stable < 20 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const std::size_t now = file_size(trace);
        stable = now == size && count_in_file(trace, "before_exec") > 0 ? stable + 1 : 0;
        size = now;
      }
    }
    while (count_in_file(trace, "\"before_exec\"") < kBeforeExec &&
           path.find(".pftrace") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  char self[] = "/proc/self/exe";
  char second[] = "second";
  char* const args[] = {argv[0], second, nullptr};
  ::execv(self, args);
  return 7;  // exec failed
}
