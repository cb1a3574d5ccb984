#include <jitscope/jitscope.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  jitscope::Config cfg;
  cfg.output_path = argv[1];
  if (!jitscope::start(cfg)) return 1;
  {
    JITSCOPE_SPAN("consumer");
    JITSCOPE_INSTANT("hello");
  }
  jitscope::SessionStats stats;
  if (!jitscope::stop(&stats)) return 1;
  std::printf("%llu\n", static_cast<unsigned long long>(stats.events_written));
  return stats.events_written == 2 ? 0 : 1;
}
