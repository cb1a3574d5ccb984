// A consumer built as LLVM and MLIR build their code: -fno-exceptions
// -fno-rtti (tests/CMakeLists.txt sets the flags). Every public header
// compiles so, and a session records through them; the test runs it and
// reads the trace it wrote.
#include <jitscope/jitscope.h>
#include <jitscope/compile.hpp>
#include <jitscope/dedup.hpp>
#include <jitscope/jitscope.hpp>
#include <jitscope/nvtx.hpp>
#include <jitscope/step_log.hpp>

#include <cstdio>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(__GXX_RTTI)
#error "this consumer must be built with -fno-exceptions -fno-rtti"
#endif

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  jitscope::Config cfg;
  cfg.output_path = argv[1];
  cfg.cupti = jitscope::CuptiMode::kOff;
  if (jitscope::Status st = jitscope::start(cfg); !st) {
    std::fprintf(stderr, "start: %s\n", st.message().c_str());
    return 1;
  }
  {
    JITSCOPE_SPAN("no_exceptions_span");
    jitscope::Span with_args("no_exceptions_args", {{"n", 1}});
    jitscope::Phase phase("no_exceptions_phase");
    JITSCOPE_INSTANT("no_exceptions_instant");
  }
  jitscope_span_begin("no_exceptions_c_span");
  jitscope_span_end();
  jitscope::SessionStats stats;
  if (jitscope::Status st = jitscope::stop(&stats); !st) return 1;
  std::printf("events_written=%llu\n", static_cast<unsigned long long>(stats.events_written));
  return stats.events_written >= 5 ? 0 : 1;
}
