// A compiler that crashes inside a compile unit, for report_failures_test.cpp.
//   report_crash_child <trace> <metrics> segv|terminate
// Compiles unit "fwd" to the end, then opens unit "bwd" > "lower" >
// "InstCombine" on the thread "compiler" and crashes there: a real access
// fault (segv) or an uncaught exception (terminate: "pass exploded").
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <sys/mman.h>

#include <stdexcept>
#include <string>

namespace {

[[gnu::noinline]] void fault_segv() {
  // A real access fault (SEGV_ACCERR, with its address), not a raise().
  void* page = ::mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  *static_cast<volatile int*>(page) = 1;
}

[[noreturn, gnu::noinline]] void throw_uncaught() { throw std::runtime_error("pass exploded"); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const std::string how = argv[3];
  jitscope::Config cfg;
  cfg.output_path = argv[1];
  cfg.metrics_path = argv[2];
  if (!jitscope::start(cfg)) return 3;
  jitscope::set_thread_name("compiler");
  {
    jitscope::CompileUnit fwd({.frame = "fwd", .graph = "fwd"});
    jitscope::Span lower("lower");
  }
  jitscope::CompileUnit bwd({.frame = "bwd", .graph = "bwd"});
  jitscope::Span lower("lower");
  jitscope::Span pass("InstCombine");
  if (how == "segv") fault_segv();
  if (how == "terminate") throw_uncaught();  // uncaught: std::terminate
  return 4;                                  // not reached
}
