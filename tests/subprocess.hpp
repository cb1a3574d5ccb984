// Test helper: runs a program with its stdout and stderr in files, and says
// how it ended (exit code, signal, or killed at a timeout: a hang is a
// failure, never a stuck test).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace jitscope::testing {

struct SpawnOptions {
  // Added to this process's environment, replacing a variable of that name.
  std::vector<std::pair<std::string, std::string>> env;
  // Variables left out when their name starts with one of these.
  std::vector<std::string> drop_env_prefixes;
  std::string stdin_path = "/dev/null";
  std::string cwd;  // empty: this process's
};

struct Subprocess {
  pid_t pid = -1;
  std::string spawn_error;  // why it did not start
  std::string out_path, err_path;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;

  // Waits for it, killing it (SIGKILL) after `timeout`; false if it never
  // started or waitpid failed.
  bool wait(std::chrono::seconds timeout = std::chrono::seconds(600)) {
    if (pid <= 0) return false;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    for (;;) {
      const pid_t w = ::waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (w < 0 && errno != EINTR) return false;
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (WIFEXITED(status)) exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) signal = WTERMSIG(status);
    return true;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::string out() const { return slurp(out_path); }
  std::string err() const { return slurp(err_path); }
  void remove_outputs() const {
    ::unlink(out_path.c_str());
    ::unlink(err_path.c_str());
  }
};

// Starts args[0] (a path); stdout and stderr go to `output_stem`.out/.err.
inline Subprocess spawn(const std::vector<std::string>& args, const std::string& output_stem,
                        const SpawnOptions& options = {}) {
  Subprocess p;
  p.out_path = output_stem + ".out";
  p.err_path = output_stem + ".err";
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    bool keep = true;
    for (const auto& [name, value] : options.env) keep = keep && entry.rfind(name + "=", 0) != 0;
    for (const std::string& prefix : options.drop_env_prefixes) {
      keep = keep && entry.rfind(prefix, 0) != 0;
    }
    if (keep) env_strings.push_back(entry);
  }
  for (const auto& [name, value] : options.env) env_strings.push_back(name + "=" + value);
  std::vector<char*> argv, envp;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, options.stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, p.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_addopen(&actions, 2, p.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  const int rc = ::posix_spawn(&p.pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    p.pid = -1;
    p.spawn_error = "cannot run " + args[0] + ": " + std::strerror(rc);
  }
  return p;
}

}  // namespace jitscope::testing
