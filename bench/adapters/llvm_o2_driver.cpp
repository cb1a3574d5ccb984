// LLVM's default<O2> pipeline on a module of N copies of a few functions,
// in one of six modes, for callgrind to count the instructions inside
// run_pipeline (bench/adapters/adapter_bench.sh):
//   none      LLVM's StandardInstrumentations only, as opt runs
//   timing    and LLVM's own pass timing (-time-passes)
//   jitscope  and jitscope::llvm's callbacks, with a session on
//   attached  and register_callbacks with no session (by default it
//             registers nothing)
//   anyway    and jitscope::llvm's callbacks with no session
//             (Options::attach_without_session)
//   sized     jitscope with Options::ir_size (each run's instructions
//             counted before and after)
// Further arguments: "analyses" registers the adapter with analysis spans
// (off by default); "cold" counts the process's first compile. By default
// it compiles twice, as a JIT does (a callbacks object, the registration
// and the pipeline each time), and callgrind counts the second (as the
// MLIR driver counts its second round): what a process does once (the
// thread's ring and pass-run stack, the pass names kept) stays out. It
// prints the runs of the counted compile (per-run figures divide by them).
#include <jitscope/jitscope.hpp>
#include <jitscope/llvm.hpp>

#include "adapters/o2_pipeline.hpp"

#include <llvm/IR/PassTimingInfo.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

namespace {

// A loop, a dead loop, a call graph: work for the loop, CGSCC and function
// passes. `i` renames each copy.
std::string functions(int i) {
  const std::string n = std::to_string(i);
  return "define i32 @sum" + n +
         "(i32 %n) {\n"
         "entry:\n  br label %loop\n"
         "loop:\n"
         "  %i = phi i32 [0, %entry], [%i.next, %loop]\n"
         "  %acc = phi i32 [0, %entry], [%acc.next, %loop]\n"
         "  %acc.next = add i32 %acc, %i\n"
         "  %i.next = add i32 %i, 1\n"
         "  %done = icmp sge i32 %i.next, %n\n"
         "  br i1 %done, label %exit, label %loop\n"
         "exit:\n  ret i32 %acc.next\n}\n"
         "define i32 @dead" +
         n +
         "(i32 %x) {\n"
         "entry:\n  br label %loop\n"
         "loop:\n"
         "  %i = phi i32 [0, %entry], [%m, %loop]\n"
         "  %m = add i32 %i, 1\n"
         "  %c = icmp slt i32 %m, 10\n"
         "  br i1 %c, label %loop, label %exit\n"
         "exit:\n  ret i32 %x\n}\n"
         "define i32 @caller" +
         n + "(i32 %x) {\n  %a = call i32 @sum" + n + "(i32 %x)\n  %b = call i32 @dead" + n +
         "(i32 %a)\n  ret i32 %b\n}\n";
}

// The measured part: callgrind --toggle-collect='*run_pipeline*'.
__attribute__((noinline)) void run_pipeline(jitscope::testing::O2Pipeline& o2) { o2.run(); }

// One compile as a JIT makes each: a callbacks object of its own,
// jitscope's callbacks registered on it, the pipeline built and run.
bool compile(const std::string& text, bool registers, const jitscope::llvm::Options& options,
             bool counted, jitscope::llvm::Counts* counts) {
  llvm::PassInstrumentationCallbacks pic;
  jitscope::llvm::Registration registration;
  if (registers) registration = jitscope::llvm::register_callbacks(pic, options);
  jitscope::testing::O2Pipeline o2(pic, text, /*standard=*/true);
  if (!o2.parsed) {
    std::fprintf(stderr, "llvm_o2_driver: %s\n", o2.error.c_str());
    return false;
  }
  if (counted) {
    run_pipeline(o2);
  } else {
    o2.run();
  }
  *counts = registration.counts();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "none";
  const int copies = argc > 2 ? std::atoi(argv[2]) : 20;
  jitscope::llvm::Options options;
  bool cold = false;
  for (int i = 3; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "analyses") {
      options.analyses = true;
    } else if (word == "cold") {
      cold = true;
    } else {
      std::fprintf(stderr, "llvm_o2_driver: unknown argument '%s' (analyses, cold)\n", argv[i]);
      return 2;
    }
  }
  if (mode != "none" && mode != "timing" && mode != "jitscope" && mode != "attached" &&
      mode != "anyway" && mode != "sized") {
    std::fprintf(
        stderr, "usage: %s none|timing|jitscope|attached|anyway|sized [copies] [analyses] [cold]\n",
        argv[0]);
    return 2;
  }
  options.attach_without_session = mode == "anyway";
  options.ir_size = mode == "sized";
  const bool session = mode == "jitscope" || mode == "sized";
  const bool registers = session || mode == "attached" || mode == "anyway";
  std::string text;
  for (int i = 0; i < copies; ++i) text += functions(i);
  if (mode == "timing") llvm::TimePassesIsEnabled = true;
  if (session) {
    jitscope::Config config;
    config.output_path = "llvm_o2_driver.pftrace";
    config.cupti = jitscope::CuptiMode::kOff;
    if (const jitscope::Status st = jitscope::start(config); !st) {
      std::fprintf(stderr, "llvm_o2_driver: %s\n", st.message().c_str());
      return 1;
    }
  }
  // The uncounted first compile, then the counted one.
  jitscope::llvm::Counts counts;
  if (!cold && !compile(text, registers, options, /*counted=*/false, &counts)) return 1;
  if (!compile(text, registers, options, /*counted=*/true, &counts)) return 1;
  if (session) jitscope::stop();
  if (registers) {
    std::printf("pass runs %llu, analysis runs %llu\n",
                static_cast<unsigned long long>(counts.passes),
                static_cast<unsigned long long>(counts.analyses));
  }
  return 0;
}
