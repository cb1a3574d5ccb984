// samples/mlir_gpu's MLIR lowering pipeline on K of its kernels (one
// PassManager run per kernel, as the sample lowers them; the second of two
// such rounds counted), in one of six
// modes, for callgrind to count the instructions inside run_pipeline
// (bench/adapters/adapter_bench.sh):
//   none      the pipeline alone
//   timing    and MLIR's own pass timing (PassManager::enableTiming, what
//             mlir-opt's --mlir-timing turns on)
//   jitscope  and jitscope::mlir's instrumentation, with a session on
//   attached  and jitscope::mlir's instrumentation with no session
//   session   a session on and no instrumentation: what a session's mere
//             presence moves in MLIR's own count (its allocations shift
//             the heap's state that MLIR's mallocs then meet)
//   sized     jitscope with Options::ir_size (each run's operations
//             counted before and after)
// A third argument: "no-locations" turns the adapter's location arg off;
// "single-thread" leaves out the parked second thread (see main).
// MLIR's multithreading is off, so that every pass runs on the thread
// callgrind counts. It prints the pass runs the adapter saw in the counted round.
#include <jitscope/jitscope.hpp>
#include <jitscope/mlir.hpp>

#include "kernel_catalog.hpp"
#include "mlir_lowering.hpp"

#include <mlir/Pass/PassManager.h>

#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using Modules = std::vector<mlir::OwningOpRef<mlir::ModuleOp>>;

// K kernels, the catalogue's in order and again past its end. False: one
// did not parse (said on stderr).
bool parse_kernels(mlir_gpu::MlirLowering& lowering, int count, Modules& out) {
  const std::vector<mlir_gpu::KernelSpec> catalogue =
      mlir_gpu::make_kernels(mlir_gpu::catalogue_size());
  for (int i = 0; i < count; ++i) {
    const mlir_gpu::KernelSpec& k = catalogue[static_cast<std::size_t>(i) % catalogue.size()];
    mlir_gpu::StepError error;
    out.push_back(lowering.parse(mlir_gpu::render_mlir(k), k.name + ".mlir", &error));
    if (error) {
      std::fprintf(stderr, "mlir_pipeline_driver: %s\n%s", error.error.c_str(), error.log.c_str());
      return false;
    }
  }
  return true;
}

bool run_all(mlir::PassManager& pm, Modules& modules) {
  bool ok = true;
  for (mlir::OwningOpRef<mlir::ModuleOp>& m : modules) ok = mlir::succeeded(pm.run(*m)) && ok;
  return ok;
}

// Not counted: the first run on the same number of kernels, so that what
// happens once (this thread's ring, symbol binding, names kept, the
// timers' tree) stays out of the count.
__attribute__((noipa)) bool warm_up(mlir::PassManager& pm, Modules& modules) {
  return run_all(pm, modules);
}

// The measured part: callgrind --toggle-collect='*run_pipeline*'.
// noipa: not folded into warm_up, its twin (GCC merges identical functions).
__attribute__((noipa)) bool run_pipeline(mlir::PassManager& pm, Modules& modules) {
  return run_all(pm, modules);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "none";
  const int kernels = argc > 2 ? std::atoi(argv[2]) : 12;
  if ((mode != "none" && mode != "timing" && mode != "jitscope" && mode != "attached" &&
       mode != "session" && mode != "sized") ||
      kernels < 1) {
    std::fprintf(stderr,
                 "usage: %s none|timing|jitscope|attached|session|sized [kernels] "
                 "[no-locations|single-thread]\n",
                 argv[0]);
    return 2;
  }
  jitscope::mlir::Options options;
  options.locations = !(argc > 3 && std::string_view(argv[3]) == "no-locations");
  options.ir_size = mode == "sized";  // jitscope with each run's operations counted

  // A second thread, parked, in every mode: glibc's malloc takes a cheaper
  // path while a process has one thread, which a session's flusher thread
  // ends. Hosts have threads (MLIR's own pool, with threading on), so the
  // modes are compared as they run there (docs/performance.md has both).
  std::promise<void> release;
  std::thread parked;
  if (!(argc > 3 && std::string_view(argv[3]) == "single-thread")) {
    parked = std::thread([done = release.get_future()]() mutable { done.wait(); });
  }
  mlir_gpu::MlirLowering lowering(/*threading=*/false);
  Modules first, second;
  if (!parse_kernels(lowering, kernels, first) || !parse_kernels(lowering, kernels, second)) {
    return 1;
  }
  const bool session = mode == "jitscope" || mode == "session" || mode == "sized";
  if (session) {
    jitscope::Config config;
    config.output_path = "mlir_pipeline_driver.pftrace";
    config.cupti = jitscope::CuptiMode::kOff;
    if (const jitscope::Status st = jitscope::start(config); !st) {
      std::fprintf(stderr, "mlir_pipeline_driver: %s\n", st.message().c_str());
      return 1;
    }
  }
  mlir::PassManager pm(&lowering.context(), mlir::ModuleOp::getOperationName());
  mlir_gpu::MlirLowering::add_pipeline(pm);
  if (mode == "timing") pm.enableTiming();  // its report goes to stderr when pm is destroyed
  jitscope::mlir::Instrumentation* adapter = nullptr;
  if (mode == "jitscope" || mode == "attached" || mode == "sized") {
    std::unique_ptr<jitscope::mlir::Instrumentation> made =
        jitscope::mlir::make_instrumentation(options);
    adapter = made.get();  // owned by pm from here
    pm.addInstrumentation(std::move(made));
  }
  bool ok = warm_up(pm, first);
  const jitscope::mlir::Counts before =
      adapter != nullptr ? adapter->counts() : jitscope::mlir::Counts{};
  ok = run_pipeline(pm, second) && ok;
  if (session) jitscope::stop();
  if (adapter != nullptr) {
    const jitscope::mlir::Counts after = adapter->counts();  // the counted round's
    std::printf("pass runs %llu, analysis runs %llu, pipelines %llu\n",
                static_cast<unsigned long long>(after.passes - before.passes),
                static_cast<unsigned long long>(after.analyses - before.analyses),
                static_cast<unsigned long long>(after.pipelines - before.pipelines));
  }
  release.set_value();
  if (parked.joinable()) parked.join();
  if (!ok) {
    std::fprintf(stderr, "mlir_pipeline_driver: the pipeline failed\n");
    return 1;
  }
  return 0;
}
