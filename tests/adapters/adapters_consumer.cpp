// A consumer of both adapters built as LLVM and MLIR build their code:
// -fno-exceptions -fno-rtti (tests/adapters/CMakeLists.txt). It runs a small
// LLVM and a small MLIR pipeline through the adapters, and the same through
// adapters compiled out (JITSCOPE_DISABLE) in the same session, then reads
// the trace: the enabled runs' functions appear in pass spans, the disabled
// runs' functions nowhere.
#include <jitscope/jitscope.hpp>

#include "adapters/pipelines.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS) || defined(__GXX_RTTI)
#error "this consumer must be built with -fno-exceptions -fno-rtti"
#endif

namespace consumer = jitscope_adapter_consumer;

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  jitscope::Config cfg;
  cfg.output_path = argv[1];
  cfg.cupti = jitscope::CuptiMode::kOff;
  if (jitscope::Status st = jitscope::start(cfg); !st) {
    std::fprintf(stderr, "start: %s\n", st.message().c_str());
    return 1;
  }
  const bool ran = consumer::run_llvm_pipeline("llvm_enabled_fn") &&
                   consumer::run_mlir_pipeline("mlir_enabled_fn") &&
                   consumer::run_llvm_pipeline_disabled("llvm_disabled_fn") &&
                   consumer::run_mlir_pipeline_disabled("mlir_disabled_fn");
  if (jitscope::Status st = jitscope::stop(); !st || !ran) {
    std::fprintf(stderr, "a pipeline failed or stop failed\n");
    return 1;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  const std::string trace = text.str();
  int bad = 0;
  for (const char* expected : {"\"name\":\"InstCombinePass\"", "\"ir_name\":\"llvm_enabled_fn\"",
                               "\"name\":\"Canonicalizer\"", "\"ir_name\":\"mlir_enabled_fn\""}) {
    if (trace.find(expected) == std::string::npos) {
      std::fprintf(stderr, "missing from the trace: %s\n", expected);
      ++bad;
    }
  }
  for (const char* unexpected : {"llvm_disabled_fn", "mlir_disabled_fn"}) {
    if (trace.find(unexpected) != std::string::npos) {
      std::fprintf(stderr, "compiled out, yet in the trace: %s\n", unexpected);
      ++bad;
    }
  }
  return bad == 0 ? 0 : 1;
}
