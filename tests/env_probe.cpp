// A host program for config_test: records a few events, never starts a
// session itself, and exits with status 3 so tests can see that jitscope
// leaves the host's exit status alone.
#include <jitscope/jitscope.hpp>

#include <cstdio>

int main() {
  std::printf("active=%d\n", jitscope::active() ? 1 : 0);
  for (int i = 0; i < 100; ++i) {
    JITSCOPE_SPAN("probe_span");
    JITSCOPE_COUNTER("probe_counter", i);
  }
  return 3;
}
