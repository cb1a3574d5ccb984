// jitscope_instr_probe: N operations of one form in a session, nothing else,
// for bench/instructions.sh to count instructions under callgrind as
// (Ir(2N) - Ir(N)) / N per thread: the caller's thread is the hot path, the
// flusher's thread what writing each event costs. Deterministic, so a
// hot-path change is judged in instructions, not in this VM's noisy time.
//
// usage: jitscope_instr_probe FORM N     FORM: span | args | off
#include <jitscope/jitscope.hpp>

#include <cstdio>
#include <cstdlib>
#include <string_view>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s span|args|off N\n", argv[0]);
    return 2;
  }
  const std::string_view form = argv[1];
  const long n = std::atol(argv[2]);
  if (form != "span" && form != "args" && form != "off") {
    std::fprintf(stderr, "unknown form %s\n", argv[1]);
    return 2;
  }
  jitscope::Config config;
  config.output_path = "/dev/null";
  config.cupti = jitscope::CuptiMode::kOff;
  config.crash_handler = false;
  config.ring_capacity = 1 << 20;
  config.overflow = jitscope::OverflowPolicy::kBlock;  // every event is written
  if (form != "off" && !jitscope::start(config).ok()) return 1;
  // One loop per form: nothing else in the loop counts against it.
  if (form == "args") {
    for (long i = 0; i < n; ++i) jitscope::Span span("x", {{"a", i}, {"b", 2 * i}});
  } else {
    for (long i = 0; i < n; ++i) JITSCOPE_SPAN("x");
  }
  if (form != "off" && !jitscope::stop().ok()) return 1;
  return 0;
}
