// jitscope pass_pipeline: a pretend graph compiler, CPU only, that uses every
// compile-unit feature of compile.hpp and step_log.hpp, so its trace, its
// metrics file and its tables show what each one looks like.
//
//   jitscope_pass_pipeline [--trace PATH] [--metrics PATH] [--graphs N]
//                          [--workers N] [--compile-times] [--progress] [--help]
//
// What it does (deterministic: a fixed seed, fixed failures):
// - "load_cached_artifacts" {.column = "load_us"} once at startup, outside any
//   unit: it lands in the runtime record (is_runtime: true).
// - N graphs of model "mocknet", in pairs block<k>.fwd / block<k>.bwd, each
//   compiled as one CompileUnit under GraphNameScope("block<k>"):
//     [unit] compile_graph  entire_compile_us   (outermost column: duration_us)
//              parse        parse_us
//              passes       passes_us   > pass:fold_constants, pass:fuse, pass:dce
//              codegen      codegen_us, compile event; waits for the worker
//                           pool ("codegen_workers" wait counter), whose
//                           threads attach to the unit with UnitScope and run
//                           one "emit_kernel" phase per kernel.
// - Graph 3 (when there are at least 4) fails: a worker's kernel needs too many
//   registers, the std::runtime_error comes back to the main thread and the
//   unit records it with fail_with_current_exception().
// - Then graph 0 is compiled again with a new input shape: a recompile of the
//   same frame ([0/1]) with a recompile_reason and "epoch=3" from a recompile
//   context hook; its shape-generic kernels are hits in the kernel cache.
// - With --metrics, each unit keeps artifacts (CompileUnit::artifact) in
//   <metrics>.artifacts/<frame>_<attempt>/: graph_parsed.ir,
//   graph_optimized.ir, kernel_k<n>.cu per kernel it built (the failing one
//   too) and log.txt (the failed unit's ends with the error).
//
// With JITSCOPE_TRACE set, the session started at load is used instead of
// --trace (and --metrics is then ignored: JITSCOPE_METRICS sets it).
//
// Files: mock_graph (the graphs), worker_pool (the codegen threads),
// graph_compiler (each graph as one compile unit); this file parses the
// flags, runs the program and prints what the session recorded.
#include "graph_compiler.hpp"
#include "mock_graph.hpp"
#include "worker_pool.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>
#include <jitscope/step_log.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using pass_pipeline::check_phase_keys;
using pass_pipeline::compile;
using pass_pipeline::Graph;
using pass_pipeline::load_cached_artifacts;
using pass_pipeline::make_graphs;
using pass_pipeline::refused_count;
using pass_pipeline::WorkerPool;

// The training loop's epoch, reported by the recompile context hook.
std::atomic<int> g_epoch{0};

int usage(const char* argv0, FILE* to) {
  std::fprintf(to,
               "usage: %s [--trace PATH] [--metrics PATH] [--graphs N] [--workers N]\n"
               "          [--compile-times] [--progress] [--help]\n"
               "  --trace PATH     write a Chrome trace (starts a jitscope session)\n"
               "  --metrics PATH   write compile records as JSON lines (needs --trace)\n"
               "  --graphs N       graphs to compile (default 6)\n"
               "  --workers N      codegen worker threads (default 2)\n"
               "  --compile-times  print the compile-times tables at the end\n"
               "  --progress       draw a progress bar (when stderr is a terminal)\n",
               argv0);
  return to == stdout ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace;
  std::string metrics;
  int graphs = 6;
  int workers = 2;
  bool tables = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--trace") == 0 && has_value) {
      trace = argv[++i];
    } else if (std::strcmp(argv[i], "--metrics") == 0 && has_value) {
      metrics = argv[++i];
    } else if (std::strcmp(argv[i], "--graphs") == 0 && has_value) {
      graphs = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--workers") == 0 && has_value) {
      workers = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--compile-times") == 0) {
      tables = true;
    } else if (std::strcmp(argv[i], "--progress") == 0) {
      jitscope::set_progress_enabled(true);
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      return usage(argv[0], stdout);
    } else {
      return usage(argv[0], stderr);
    }
  }
  if (graphs < 1 || graphs > 1000 || workers < 1 || workers > 256) {
    std::fprintf(stderr, "pass_pipeline: --graphs must be in [1, 1000], --workers in [1, 256]\n");
    return 2;
  }
  if (!metrics.empty() && trace.empty()) {
    std::fprintf(stderr, "pass_pipeline: --metrics needs --trace (the session writes both)\n");
    return 2;
  }
  check_phase_keys();

  bool artifacts = !metrics.empty();  // beside the metrics file
  if (jitscope::active()) {           // started at load from JITSCOPE_TRACE: its settings win
    const char* env_metrics = std::getenv("JITSCOPE_METRICS");
    const char* env_artifacts = std::getenv("JITSCOPE_ARTIFACTS");
    metrics = env_metrics != nullptr ? env_metrics : "";
    artifacts = !metrics.empty() || (env_artifacts != nullptr && *env_artifacts != '\0');
  } else if (!trace.empty()) {
    jitscope::Config cfg;
    cfg.output_path = trace;
    // The JITSCOPE_* knobs (docs/configuration.md: JITSCOPE_COMPRESSION, ...)
    // apply (JITSCOPE_TRACE names the file instead of the path above); the
    // fields set below are this program's own.
    if (const jitscope::Status st = jitscope::Config::from_env(&cfg, /*require_trace=*/false);
        !st) {
      std::fprintf(stderr, "pass_pipeline: %s; the defaults apply\n", st.message().c_str());
    }
    cfg.metrics_path = metrics;
    cfg.overflow = jitscope::OverflowPolicy::kBlock;  // a sample wants every event
    if (const jitscope::Status st = jitscope::start(cfg); !st) {
      std::fprintf(stderr, "pass_pipeline: cannot start the trace session: %s\n",
                   st.message().c_str());
      return 1;
    }
  }

  JITSCOPE_THREAD_NAME("main");
  jitscope::set_model_name("mocknet");
  jitscope::register_recompile_context_hook(
      [] { return "epoch=" + std::to_string(g_epoch.load()); });

  pass_pipeline::set_keep_artifacts(artifacts && jitscope::active());
  load_cached_artifacts();

  const std::vector<Graph> program = make_graphs(graphs);
  int compiled = 0;
  int failures = 0;
  int recompiles = 0;
  {
    WorkerPool pool(workers);
    for (const Graph& g : program) {
      if (compile(g, pool).failed) {
        ++failures;
      } else {
        ++compiled;
      }
    }
    // Epoch 3: the batch grows, graph 0's input shape changes: a recompile.
    g_epoch = 3;
    Graph bigger = program[0];
    const std::string reason = "input shape changed: " + bigger.input.str() + " -> [16,16]";
    bigger.input.rows = 16;
    ++recompiles;
    if (compile(bigger, pool, reason).failed) ++failures;
  }

  jitscope::SessionStats stats;
  const jitscope::Status stopped = jitscope::stop(&stats);

  std::printf("pass_pipeline: model %s, %d graphs on %d codegen workers\n",
              jitscope::model_name().c_str(), graphs, workers);
  for (const jitscope::CompileRecord& r : jitscope::recent_compile_records()) {
    if (r.is_runtime) {
      std::printf("  %-8s %-28s %8llu us\n", "runtime", r.name.c_str(),
                  static_cast<unsigned long long>(r.duration_us));
      continue;
    }
    std::string note = r.failed ? "FAILED " + r.fail_type : "ok";
    if (!r.recompile_reason.empty()) note += " (recompile: " + r.recompile_reason + ")";
    std::printf("  %-8s %-28s %8llu us  %s\n", r.compile_id.display().c_str(), r.name.c_str(),
                static_cast<unsigned long long>(r.duration_us), note.c_str());
  }
  std::printf("graphs compiled:  %d\n", compiled);
  std::printf("recompiles:       %d\n", recompiles);
  std::printf("failures:         %d\n", failures);
  if (stats.output_path.empty()) {
    std::printf("no trace was recorded (pass --trace PATH)\n");
  } else {
    std::printf("records written:  %llu%s\n",
                static_cast<unsigned long long>(stats.compile_records_written),
                metrics.empty() ? " (no metrics file: pass --metrics PATH)" : "");
    std::printf("trace:            %s\n", stats.output_path.c_str());
    if (!metrics.empty()) std::printf("metrics:          %s\n", metrics.c_str());
    if (!stats.artifacts_dir.empty()) {
      std::printf("artifacts:        %llu files, %llu bytes in %s\n",
                  static_cast<unsigned long long>(stats.artifacts_written),
                  static_cast<unsigned long long>(stats.artifact_bytes),
                  stats.artifacts_dir.c_str());
    }
  }
  if (tables) {
    std::printf("\n%s\n%s", jitscope::compile_times(jitscope::TableFormat::kText, true).c_str(),
                jitscope::cumulative_time_report().c_str());
  }
  if (refused_count() != 0) {
    std::fprintf(stderr, "pass_pipeline: %d event data call(s) were refused (see above)\n",
                 refused_count());
    return 3;
  }
  return stopped ? 0 : 1;
}
