// A worker process for report_critical_path_test: one compile unit in a
// session of its own, which waits for a unit of its parent process.
//   critical_path_worker <trace> <parent pid> <parent unit's compile id "F/A"> <ms>
// Prints "<pid> <its unit's compile id>" (what a pool's worker hands back
// with its result), then exits 0.
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 5) return 2;
  jitscope::Config cfg;
  cfg.output_path = argv[1];
  if (!jitscope::start(cfg)) return 3;
  const long long parent = std::atoll(argv[2]);
  unsigned frame = 0, attempt = 0;
  if (std::sscanf(argv[3], "%u/%u", &frame, &attempt) != 2) return 2;
  jitscope::CompileId id;
  {
    jitscope::CompileUnit unit({.frame = "remote", .graph = "remote"});
    if (!unit.waits_for({.frame = frame, .attempt = attempt}, parent).ok()) return 4;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(argv[4])));
    id = unit.id();
  }
  jitscope::stop();
  std::printf("%d %s\n", static_cast<int>(::getpid()), id.str().c_str());
  return 0;
}
