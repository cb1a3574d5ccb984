// A stand-in for a JIT server in flight-recorder mode, for ctl_test: its
// session starts at load from the JITSCOPE_* variables, with no code; it records a span every
// millisecond, says "ready" on stdout once recording, and stops when the
// file argv[1] appears (or after 60 s).
#include <jitscope/jitscope.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  struct stat st {};
  for (int i = 0; ::stat(argv[1], &st) != 0 && std::chrono::steady_clock::now() < deadline; ++i) {
    {
      jitscope::Span tick("tick", {{"i", i}});
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (i == 0) {
      std::printf("ready\n");
      std::fflush(stdout);
    }
  }
  jitscope::SessionStats stats;
  if (!jitscope::stop(&stats)) return 5;
  std::printf("snapshots %llu\n", static_cast<unsigned long long>(stats.snapshots_written));
  return 0;
}
