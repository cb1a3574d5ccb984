// Worker processes: spawn, wait, kill on timeout (see worker_processes.hpp).
#include "worker_processes.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace nvrtc_jit {
namespace {

// The parent's environment without the variables that start a jitscope
// session at load: a worker inheriting JITSCOPE_TRACE would try to write
// the parent's trace (jitscope's file lock would refuse it, loudly). And
// JITSCOPE_PARENT_PID=<this process>: the arrow from the spawn, which
// note_child_process marks here, to the worker's first compile unit.
std::vector<std::string> worker_environment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view v(*e);
    bool drop = false;
    for (std::string_view name : {"JITSCOPE_TRACE=", "JITSCOPE_METRICS=", "JITSCOPE_COMPILE_TIMES=",
                                  "JITSCOPE_PARENT_PID=", "NVRTC_JIT_RUN="}) {
      drop |= v.substr(0, name.size()) == name;
    }
    if (!drop) env.emplace_back(v);
  }
  env.push_back("JITSCOPE_PARENT_PID=" + std::to_string(::getpid()));
  env.push_back(std::string(kRunIdVariable) + "=" + run_id());
  return env;
}

}  // namespace

const std::string& run_id() {
  static const std::string id = [] {
    std::random_device random;
    const std::uint64_t bits = (std::uint64_t{random()} << 32) ^ random();
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(bits));
    return std::string(text);
  }();
  return id;
}

namespace {

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) + " (" + (name != nullptr ? name : "?") +
           ")";
  }
  return "ended with wait status " + std::to_string(status);
}

}  // namespace

std::string worker_file(const std::string& path, int index) {
  const std::filesystem::path p(path);
  const std::string name =
      p.stem().string() + ".worker-" + std::to_string(index) + p.extension().string();
  return (p.parent_path() / name).string();
}

bool spawn_workers(int count, const std::vector<std::string>& args, const std::string& trace,
                   const std::string& metrics, std::vector<WorkerProcess>* workers) {
  std::vector<std::string> env = worker_environment();
  std::vector<char*> envp = pointers(env);
  bool all = true;
  for (int i = 0; i < count; ++i) {
    WorkerProcess w;
    w.index = i;
    w.trace = worker_file(trace, i);
    w.metrics = metrics.empty() ? std::string() : worker_file(metrics, i);
    w.label = "nvrtc_jit worker " + std::to_string(i);
    std::vector<std::string> argv = {"nvrtc_jit"};
    argv.insert(argv.end(), args.begin(), args.end());
    for (std::string a : {std::string("--worker-process"), std::to_string(i), std::string("--of"),
                          std::to_string(count), std::string("--trace"), w.trace,
                          std::string("--metrics"), w.metrics}) {
      argv.push_back(std::move(a));
    }
    std::vector<char*> argvp = pointers(argv);
    // /proc/self/exe: this very binary, wherever it was started from.
    const int rc =
        ::posix_spawn(&w.pid, "/proc/self/exe", nullptr, nullptr, argvp.data(), envp.data());
    if (rc != 0) {
      w.pid = -1;
      w.failure =
          std::string("could not be started: posix_spawn(/proc/self/exe): ") + std::strerror(rc);
      std::fprintf(stderr, "nvrtc_jit: %s %s\n", w.label.c_str(), w.failure.c_str());
      all = false;
    }
    workers->push_back(std::move(w));
  }
  return all;
}

bool wait_workers(std::vector<WorkerProcess>* workers, int timeout_s) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(timeout_s);
  std::size_t running = 0;
  for (const WorkerProcess& w : *workers) running += w.pid > 0 ? 1 : 0;
  std::vector<bool> done(workers->size(), false);
  bool killed = false;
  while (running > 0) {
    for (std::size_t i = 0; i < workers->size(); ++i) {
      WorkerProcess& w = (*workers)[i];
      if (w.pid <= 0 || done[i]) continue;
      int status = 0;
      const pid_t r = ::waitpid(w.pid, &status, killed ? 0 : WNOHANG);
      if (r == 0 || (r < 0 && errno == EINTR)) continue;  // still running, or ask again
      done[i] = true;
      --running;
      if (r < 0) {
        w.failure = std::string("could not be waited for: ") + std::strerror(errno);
      } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        w.ok = true;
        continue;
      } else {
        w.failure = describe(status);
      }
      if (killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
        w.failure = "ran past --worker-timeout " + std::to_string(timeout_s) + " s and was killed";
      }
      std::fprintf(stderr, "nvrtc_jit: %s (pid %d) %s\n", w.label.c_str(), static_cast<int>(w.pid),
                   w.failure.c_str());
    }
    if (running == 0) break;
    if (!killed && Clock::now() >= deadline) {
      for (std::size_t i = 0; i < workers->size(); ++i) {
        if ((*workers)[i].pid > 0 && !done[i]) ::kill((*workers)[i].pid, SIGKILL);
      }
      killed = true;  // from now on, wait for them without polling
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bool all = true;
  for (const WorkerProcess& w : *workers) all &= w.ok;
  return all;
}

}  // namespace nvrtc_jit
