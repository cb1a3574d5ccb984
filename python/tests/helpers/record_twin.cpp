// The C++ side of test_records.py: the same compile-unit calls as the test
// makes from Python, written to the metrics file given, so that the two
// records can be compared field by field.
//
//   record_twin <trace> <metrics>
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: record_twin <trace> <metrics>\n");
    return 2;
  }
  jitscope::Config config;
  config.output_path = argv[1];
  config.metrics_path = argv[2];
  config.cupti = jitscope::CuptiMode::kOff;
  if (!jitscope::start(config)) return 1;
  {
    jitscope::CompileUnit unit({.frame = "twin", .graph = "g", .key = "twin_key"});
    { jitscope::Phase lower("lower", jitscope::PhaseOptions{.column = "lower_us"}); }
    { jitscope::Phase event("codegen", jitscope::PhaseOptions{.compile_event = true}); }
    unit.cache_hit("a", "L1");
    unit.cache_miss("b", "disk");
    unit.cache_lookup("ptx", {{"source", "s1"}, {"options", "-O3"}, {"n", "4"}},
                      jitscope::CacheOutcome::kMiss);
    (void)unit.set("n", 3);
    (void)unit.set("ratio", 0.5);
    (void)unit.set("flag", true);
    (void)unit.set("arch", "sm_90");
    (void)unit.increment("kernels", 2);
    unit.fail("ValueError", "bad shape");
  }
  return jitscope::stop() ? 0 : 1;
}
