// A host program for config_test: records a few events, never starts a
// session itself, and exits with status 3 so tests can see that jitscope
// leaves the host's exit status alone.
#include <jitscope/jitscope.hpp>

#include <cstdio>
#include <cstdlib>

namespace {
// Runs after main returns: glibc has destroyed the main thread's
// thread_locals by then, but the session is still on.
void record_at_exit() {
  for (int i = 0; i < 10; ++i) {
    JITSCOPE_SPAN("exit_span");
  }
}
}  // namespace

int main() {
  std::atexit(record_at_exit);
  std::printf("active=%d\n", jitscope::active() ? 1 : 0);
  // A second session asked for from code while JITSCOPE_TRACE's runs.
  if (const char* second = std::getenv("PROBE_SECOND_START")) {
    jitscope::Config cfg;
    cfg.output_path = second;
    std::printf("second: %s\n", jitscope::start(cfg).message().c_str());
  }
  for (int i = 0; i < 100; ++i) {
    JITSCOPE_SPAN("probe_span");
    JITSCOPE_COUNTER("probe_counter", i);
  }
  return 3;
}
