// jitscope-ctl: asks a running flight recorder for a snapshot, with no code
// change, no signal and no ptrace (docs/flight-recorder.md).
//
//   jitscope-ctl snapshot <pid> [--reason TEXT] [--wait SECONDS]
//   jitscope-ctl snapshot --trace PATH [--pid N] [--reason TEXT]
//   jitscope-ctl list
//
// The request is a file beside the process's output path
// (base/trace_paths.hpp) that its flusher looks for each cycle. By pid, the
// path comes from the process's JITSCOPE_TRACE, read in /proc/<pid>/environ
// and reached through /proc/<pid>/root, so it works from inside the
// process's container and from the host alike; the pid in the file's name
// is the one the process sees (the last of NSpid).
#include "base/trace_paths.hpp"

#include <CLI/CLI.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using jitscope::detail::snapshot_request_path;
using jitscope::detail::tagged_path;

std::optional<std::string> read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::map<std::string, std::string> environment_of(long pid) {
  std::map<std::string, std::string> vars;
  const std::optional<std::string> text = read_whole("/proc/" + std::to_string(pid) + "/environ");
  if (!text) return vars;
  std::size_t at = 0;
  while (at < text->size()) {
    std::size_t end = text->find('\0', at);
    if (end == std::string::npos) end = text->size();
    const std::string entry = text->substr(at, end - at);
    if (const std::size_t eq = entry.find('='); eq != std::string::npos) {
      vars[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
    at = end + 1;
  }
  return vars;
}

// The pid the process sees for itself: the last field of NSpid.
long pid_inside(long pid) {
  const std::optional<std::string> status = read_whole("/proc/" + std::to_string(pid) + "/status");
  if (!status) return pid;
  std::istringstream lines(*status);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("NSpid:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    long inner = pid;
    for (long v = 0; fields >> v;) inner = v;
    return inner;
  }
  return pid;
}

// The numbers of the snapshots of `pid` beside `trace`, by file name.
std::vector<std::uint64_t> snapshot_numbers(const std::string& trace, long pid) {
  const std::string marked = tagged_path(trace, "snapshot." + std::to_string(pid) + ".\x01");
  const std::size_t cut = marked.find('\x01');
  const std::size_t slash = marked.rfind('/', cut);
  const std::string dir = slash == std::string::npos ? "." : marked.substr(0, slash);
  const std::string head = marked.substr(slash == std::string::npos ? 0 : slash + 1,
                                         cut - (slash == std::string::npos ? 0 : slash + 1));
  const std::string tail = marked.substr(cut + 1);
  std::vector<std::uint64_t> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= head.size() + tail.size() || name.rfind(head, 0) != 0 ||
        name.compare(name.size() - tail.size(), tail.size(), tail) != 0) {
      continue;
    }
    const std::string digits = name.substr(head.size(), name.size() - head.size() - tail.size());
    if (digits.find_first_not_of("0123456789") == std::string::npos) {
      out.push_back(std::stoull(digits));
    }
  }
  ::closedir(d);
  return out;
}

// The newest number in `now` that was not in `before` (0: none): a session
// numbers from the first free one, so a new file may take a low number.
std::uint64_t newly_made(const std::vector<std::uint64_t>& before,
                         const std::vector<std::uint64_t>& now) {
  std::uint64_t n = 0;
  for (std::uint64_t v : now) {
    if (std::find(before.begin(), before.end(), v) == before.end()) n = std::max(n, v);
  }
  return n;
}

// Written beside its name and renamed into place: the flusher never reads half a reason.
bool write_request(const std::string& path, const std::string& reason) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  bool ok =
      fd >= 0 && ::write(fd, reason.data(), reason.size()) == static_cast<ssize_t>(reason.size());
  const int error = errno;
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(temporary.c_str(), path.c_str()) == 0;
  if (!ok) {
    std::cerr << "jitscope-ctl: cannot write " << path << ": "
              << std::strerror(errno != 0 ? errno : error) << "\n";
    ::unlink(temporary.c_str());
  }
  return ok;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Asks one process and waits for its snapshot: 0 written, 1 not.
int ask_and_wait(const std::string& trace, long pid_seen, const std::string& reason,
                 double wait_s) {
  const std::string request = snapshot_request_path(trace, pid_seen);
  const std::vector<std::uint64_t> before = snapshot_numbers(trace, pid_seen);
  if (!write_request(request, reason)) return 1;
  if (wait_s == 0) {  // asked; the process takes it in its next cycle
    std::cout << "asked: " << request << "\n";
    return 0;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  bool taken = false;
  while (std::chrono::steady_clock::now() < deadline) {
    taken = taken || !exists(request);
    if (const std::uint64_t n = newly_made(before, snapshot_numbers(trace, pid_seen))) {
      std::cout << jitscope::detail::snapshot_path(trace, pid_seen, n) << "\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!taken && exists(request)) {
    ::unlink(request.c_str());
    std::cerr << "jitscope-ctl: the process did not take the request within " << wait_s
              << " s (removed): is it running a flight recorder (JITSCOPE_FLIGHT) that writes "
              << trace << "?\n";
  } else {
    std::cerr << "jitscope-ctl: the request was taken, but no snapshot appeared within " << wait_s
              << " s: the process refused it (snapshot_min_interval) or could not write it; "
                 "its stderr says which\n";
  }
  return 1;
}

// The path a process writes to, seen from here: its JITSCOPE_TRACE, made
// absolute against its working directory, under its root. (The session made
// a relative path absolute at its start: a process that changed directory
// since is asked with --trace and the absolute path.)
std::optional<std::string> trace_of(long pid, std::string& why) {
  const std::map<std::string, std::string> env = environment_of(pid);
  const std::string proc = "/proc/" + std::to_string(pid);
  if (env.empty() && !exists(proc)) {
    why = "no process " + std::to_string(pid);
    return std::nullopt;
  }
  if (env.empty()) {
    why = "cannot read " + proc + "/environ (another user's process?)";
    return std::nullopt;
  }
  const auto trace = env.find("JITSCOPE_TRACE");
  if (trace == env.end() || env.find("JITSCOPE_FLIGHT") == env.end()) {
    why = "pid " + std::to_string(pid) +
          " has no JITSCOPE_TRACE and JITSCOPE_FLIGHT in its environment (a session started "
          "in code?): give its output path with --trace";
    return std::nullopt;
  }
  std::string path = trace->second;
  if (path.empty() || path[0] != '/') {
    char cwd[4096] = {};
    const ssize_t n = ::readlink((proc + "/cwd").c_str(), cwd, sizeof cwd - 1);
    if (n <= 0) {
      why = "cannot read " + proc + "/cwd for the relative path " + path;
      return std::nullopt;
    }
    path = std::string(cwd, static_cast<std::size_t>(n)) + "/" + path;
  }
  return proc + "/root" + path;
}

int list_recorders() {
  DIR* d = ::opendir("/proc");
  if (d == nullptr) {
    std::cerr << "jitscope-ctl: cannot read /proc\n";
    return 1;
  }
  int found = 0;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::map<std::string, std::string> env = environment_of(std::stol(name));
    const auto flight = env.find("JITSCOPE_FLIGHT");
    const auto trace = env.find("JITSCOPE_TRACE");
    if (flight == env.end() || trace == env.end()) continue;
    std::cout << name << "\t" << flight->second << "\t" << trace->second << "\n";
    ++found;
  }
  ::closedir(d);
  if (found == 0) {
    std::cerr << "jitscope-ctl: no process of this user has JITSCOPE_FLIGHT and JITSCOPE_TRACE "
                 "set (a session started in code is not listed)\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "jitscope-ctl: asks a running flight recorder for a snapshot (docs/flight-recorder.md)"};
  app.require_subcommand(1);
  CLI::App* snap = app.add_subcommand(
      "snapshot", "ask for a snapshot; prints its path once written (by pid, or with --pid)");
  long pid = 0;
  long pid_seen = 0;
  std::string trace;
  std::string reason;
  double wait_s = 10;
  snap->add_option("pid", pid, "the process, as this shell sees it (reads its JITSCOPE_TRACE)");
  snap->add_option("--trace", trace,
                   "the output path the process was started with (its snapshots' names); "
                   "without a pid, asks every flight recorder writing there");
  snap->add_option("--pid", pid_seen,
                   "with --trace: the process's pid as it sees itself (inside its container)");
  snap->add_option("--reason", reason, "said in the snapshot's trigger")
      ->check([](const std::string& s) {
        return s.size() <= 200 ? std::string() : std::string("at most 200 bytes");
      });
  snap->add_option("--wait", wait_s,
                   "seconds to wait for the snapshot (default 10; 0: ask and return)")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_subcommand("list", "the processes with JITSCOPE_FLIGHT and JITSCOPE_TRACE set");
  CLI11_PARSE(app, argc, argv);

  if (app.got_subcommand("list")) return list_recorders();
  if (pid != 0) {
    if (!trace.empty()) {
      std::cerr << "jitscope-ctl: give a pid or --trace, not both\n";
      return 2;
    }
    std::string why;
    const std::optional<std::string> path = trace_of(pid, why);
    if (!path) {
      std::cerr << "jitscope-ctl: " << why << "\n";
      return 1;
    }
    return ask_and_wait(*path, pid_inside(pid), reason, wait_s);
  }
  if (trace.empty()) {
    std::cerr << "jitscope-ctl: snapshot needs a pid or --trace PATH\n";
    return 2;
  }
  if (pid_seen != 0) return ask_and_wait(trace, pid_seen, reason, wait_s);
  // Every process writing there: each takes the file once, by its time.
  if (!write_request(snapshot_request_path(trace, 0), reason)) return 1;
  std::cout << "asked every flight recorder writing " << trace << "\n";
  return 0;
}
