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
//
// With JITSCOPE_TRACE set, the session started at load is used instead of
// --trace (and --metrics is then ignored: JITSCOPE_METRICS sets it).
#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>
#include <jitscope/step_log.hpp>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

using jitscope::DataLevel;

// ---- phase keys: registered once, their options checked at startup ----

const jitscope::PhaseKey kLoadCached{"load_cached_artifacts", {.column = "load_us"}};
const jitscope::PhaseKey kCompileGraph{"compile_graph", {.column = "entire_compile_us"}};
const jitscope::PhaseKey kParse{"parse", {.column = "parse_us"}};
const jitscope::PhaseKey kPasses{"passes", {.column = "passes_us"}};
const jitscope::PhaseKey kCodegen{"codegen", {.column = "codegen_us", .compile_event = true}};

jitscope::WaitCounter g_workers_wait{"codegen_workers"};

// The training loop's epoch, reported by the recompile context hook.
std::atomic<int> g_epoch{0};
// Event data refused where this program expects it to be accepted.
std::atomic<int> g_refused{0};

void expect_ok(const jitscope::Status& st, const char* what) {
  if (st) return;
  g_refused.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "pass_pipeline: warning: %s was refused: %s\n", what, st.message().c_str());
}

// ---- small deterministic CPU work standing in for compiler work ----

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::uint64_t churn(std::uint64_t x, int rounds) {
  x |= 1;
  for (int i = 0; i < rounds; ++i) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
  return x;
}

std::string hex(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A fixed-seed generator (the graphs are the same on every run).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint32_t next(std::uint32_t bound) {
    s_ = s_ * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>((s_ >> 33) % bound);
  }

 private:
  std::uint64_t s_;
};

// ---- the mock IR ----

struct Shape {
  int rows = 8;
  int cols = 16;
  std::string str() const { return "[" + std::to_string(rows) + "," + std::to_string(cols) + "]"; }
};

struct Graph {
  std::string block;   // "block0": the outer graph name (GraphNameScope)
  bool forward = true;
  std::string frame;   // "block0.fwd": what is compiled (same frame: a recompile)
  Shape input;
  std::vector<std::string> ops;  // op kinds in program order
  int fail_kernel = -1;          // this kernel's codegen throws (-1: none)
};

struct Kernel {
  std::string name;              // "k0"
  std::string key;               // kernel cache key
  std::vector<std::string> ops;
};

// Graph i: block i/2, forward when i is even, 3 + i%3 matmul layers, each with
// optional constants (folded), 1-3 elementwise ops and an optional identity
// (dead code). Every layer becomes one fused kernel.
std::vector<Graph> make_graphs(int count) {
  static const char* const kElementwise[] = {"add", "relu", "mul", "gelu", "softmax"};
  Rng rng(0x5eed);
  std::vector<Graph> graphs;
  for (int i = 0; i < count; ++i) {
    Graph g;
    g.block = "block" + std::to_string(i / 2);
    g.forward = i % 2 == 0;
    g.frame = g.block + (g.forward ? ".fwd" : ".bwd");
    const int layers = 3 + i % 3;
    for (int l = 0; l < layers; ++l) {
      if (rng.next(2) == 0) g.ops.emplace_back("const");
      g.ops.emplace_back("matmul");
      const int elementwise = 1 + static_cast<int>(rng.next(3));
      for (int e = 0; e < elementwise; ++e) g.ops.emplace_back(kElementwise[rng.next(5)]);
      if (rng.next(3) == 0) g.ops.emplace_back("identity");
    }
    if (i == 3) g.fail_kernel = layers - 1;
    graphs.push_back(std::move(g));
  }
  return graphs;
}

// ---- in-memory caches (main thread only) ----

std::map<std::string, int> g_graph_cache;             // graph hash -> kernels
std::map<std::string, std::uint64_t> g_kernel_cache;  // kernel key -> code hash

// ---- a pool of codegen workers ----

class WorkerPool {
 public:
  explicit WorkerPool(int workers) {
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { loop(w); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }

  // Every worker runs job(its index) once.
  void start(std::function<void(int)> job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = std::move(job);
      pending_ = size();
      error_.clear();
      failed_ = false;
      ++generation_;
    }
    wake_.notify_all();
  }

  // Blocks until the job is done everywhere; a worker's failure comes back
  // as a std::runtime_error thrown here. (Its message is carried, not the
  // exception object: an exception_ptr freed on another thread trips TSan,
  // whose view of libstdc++'s reference count is incomplete.)
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    if (failed_) {
      failed_ = false;
      throw std::runtime_error(std::exchange(error_, std::string()));
    }
  }

 private:
  void loop(int w) {
    JITSCOPE_THREAD_NAME("codegen-worker-" + std::to_string(w));
    std::uint64_t seen = 0;
    for (;;) {
      std::function<void(int)> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (generation_ == seen) return;  // stopping, nothing left to do
        seen = generation_;
        job = job_;
      }
      bool failed = false;
      std::string error;
      try {
        job(w);
      } catch (const std::exception& e) {
        failed = true;
        error = e.what();
      } catch (...) {
        failed = true;
        error = "unknown error in a codegen worker";
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (failed && !failed_) {
          failed_ = true;
          error_ = std::move(error);
        }
        --pending_;
      }
      done_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable done_;
  std::function<void(int)> job_;
  std::string error_;  // the first failure's message, while failed_
  bool failed_ = false;
  std::uint64_t generation_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// ---- the compiler ----

// One kernel's code, on a worker thread attached to the unit.
std::uint64_t emit_kernel(const Kernel& k, bool fail) {
  JITSCOPE_PHASE("emit_kernel");
  // Trace-level data on this worker's own phase.
  expect_ok(jitscope::event("emit_kernel").set(DataLevel::kTrace, "kernel", k.key), "kernel");
  std::string code = "__global__ void " + k.name + "(float* x) {\n";
  for (int unroll = 0; unroll < 8; ++unroll) {
    for (const std::string& op : k.ops) code += "  x[i] = " + op + "(x[i]);\n";
  }
  code += "}\n";
  const std::uint64_t h = churn(fnv1a(code), 20000);
  if (fail) {
    throw std::runtime_error("kernel " + k.name + " (" + k.key +
                             ") needs 320 registers per thread; the limit is 255");
  }
  // The outermost event on a worker is its attached unit: metric data goes
  // from here into the unit's record.
  expect_ok(jitscope::toplevel_event().increment(DataLevel::kMetric, "kernels_emitted"),
            "kernels_emitted");
  return h;
}

struct Outcome {
  bool failed = false;
};

// Compiles one graph as one compile unit.
Outcome compile(const Graph& g, WorkerPool& pool, std::string_view recompile_reason = {}) {
  jitscope::GraphNameScope block_scope(g.block);  // unit name: mocknet__block0_fwd_<nth>
  jitscope::CompileUnit unit({.frame = g.frame,
                              .graph = g.forward ? "fwd" : "bwd",
                              .is_forward = g.forward,
                              .recompile_reason = recompile_reason});
  jitscope::CompileProgress bar("compile " + unit.name(), 3);  // draws only if enabled
  Outcome out;
  try {
    jitscope::Phase compile_graph(kCompileGraph);
    // The outermost event on this thread is the unit: metric data is allowed.
    expect_ok(jitscope::toplevel_event().set(DataLevel::kMetric, "num_ops", g.ops.size()),
              "num_ops");
    expect_ok(unit.set("input_shape", g.input.str()), "input_shape");

    std::string graph_key;
    {
      jitscope::Phase parse(kParse);
      jitscope::StepLogger log("parse");
      std::string ir = "graph " + g.frame + "(x: f32" + g.input.str() + ") {\n";
      for (std::size_t i = 0; i < g.ops.size(); ++i) {
        ir += "  %" + std::to_string(i + 1) + " = " + g.ops[i] + "(%" + std::to_string(i) + ")\n";
        expect_ok(jitscope::toplevel_event().add_to_set(DataLevel::kMetric, "op_kinds", g.ops[i]),
                  "op_kinds");
      }
      ir += "}\n";
      graph_key = hex(churn(fnv1a(ir), 200000));
      log.log("parsed " + unit.name() + ": " + std::to_string(g.ops.size()) + " ops, hash " +
              graph_key.substr(0, 8));
    }
    if (g_graph_cache.count(graph_key) != 0) {
      unit.cache_hit(graph_key, "graph");  // (not reached in this sample's run)
      return out;
    }
    unit.cache_miss(graph_key, "graph");

    std::vector<Kernel> kernels;
    {
      jitscope::Phase passes(kPasses);
      jitscope::StepLogger log("passes");
      std::vector<std::string> ops = g.ops;
      std::int64_t removed = 0;
      {
        JITSCOPE_PHASE("pass:fold_constants");
        expect_ok(jitscope::event("passes").increment(DataLevel::kTrace, "passes_run"), "passes_run");
        const std::size_t before = ops.size();
        std::erase_if(ops, [](const std::string& op) { return op == "const"; });
        removed += static_cast<std::int64_t>(before - ops.size());
        (void)churn(fnv1a(g.frame), 100000);
      }
      {
        JITSCOPE_PHASE("pass:fuse");
        expect_ok(jitscope::event("passes").increment(DataLevel::kTrace, "passes_run"), "passes_run");
        for (const std::string& op : ops) {
          if (op == "matmul" || kernels.empty()) {
            Kernel k;
            k.name = "k" + std::to_string(kernels.size());
            // The entry kernel is specialized on the input shape; the others
            // are shape-generic (so a new input shape rebuilds only k0).
            k.key = g.frame + "/" + k.name + (kernels.empty() ? g.input.str() : "");
            kernels.push_back(std::move(k));
          }
          kernels.back().ops.push_back(op);
        }
        (void)churn(fnv1a(g.frame), 150000);
      }
      {
        JITSCOPE_PHASE("pass:dce");
        expect_ok(jitscope::event("passes").increment(DataLevel::kTrace, "passes_run"), "passes_run");
        for (Kernel& k : kernels) {
          const std::size_t before = k.ops.size();
          std::erase_if(k.ops, [](const std::string& op) { return op == "identity"; });
          removed += static_cast<std::int64_t>(before - k.ops.size());
        }
        (void)churn(fnv1a(g.frame), 50000);
      }
      expect_ok(jitscope::event("passes").set(DataLevel::kTrace, "ops_removed", removed),
                "ops_removed");
      log.log("passes: removed " + std::to_string(removed) + " ops, fused into " +
              std::to_string(kernels.size()) + " kernels");
    }

    {
      jitscope::Phase codegen(kCodegen);
      jitscope::StepLogger log("codegen");
      std::vector<std::size_t> to_build;  // indices into kernels
      for (std::size_t j = 0; j < kernels.size(); ++j) {
        if (g_kernel_cache.count(kernels[j].key) != 0) {
          unit.cache_hit(kernels[j].key, "kernel");
        } else {
          unit.cache_miss(kernels[j].key, "kernel");
          to_build.push_back(j);
        }
      }
      // Compile-event data: in the trace slice and in the record's compile_events.
      expect_ok(jitscope::event("codegen").set(DataLevel::kCompileEvent, "kernels", kernels.size()),
                "kernels");
      expect_ok(jitscope::event("codegen").set(DataLevel::kCompileEvent, "cached_kernels",
                                                kernels.size() - to_build.size()),
                "cached_kernels");
      log.log("codegen: " + std::to_string(to_build.size()) + " kernels to build on " +
              std::to_string(pool.size()) + " workers, " +
              std::to_string(kernels.size() - to_build.size()) + " cached");

      // Kernel to_build[n] goes to worker n % workers, in order.
      std::vector<std::uint64_t> code(kernels.size(), 0);
      const jitscope::CompileUnitRef ref = unit.ref();
      pool.start([&](int w) {
        if (static_cast<std::size_t>(w) >= to_build.size()) return;  // nothing: no slice
        jitscope::UnitScope scope(ref);  // this thread's events carry the unit's id
        for (std::size_t n = static_cast<std::size_t>(w); n < to_build.size();
             n += static_cast<std::size_t>(pool.size())) {
          const std::size_t j = to_build[n];
          code[j] = emit_kernel(kernels[j], static_cast<int>(j) == g.fail_kernel);
        }
      });
      {
        auto waiting = g_workers_wait.wait();  // the main thread's wait, in the record
        pool.wait();  // rethrows a worker's std::runtime_error here, in the codegen phase
      }
      for (std::size_t j : to_build) g_kernel_cache[kernels[j].key] = code[j];
    }
    g_graph_cache[graph_key] = static_cast<int>(kernels.size());
  } catch (const std::exception& e) {
    // Outside every phase, inside the unit: the record gets the type and what().
    unit.fail_with_current_exception();
    std::fprintf(stderr, "pass_pipeline: %s %s failed: %s\n", unit.id().display().c_str(),
                 unit.name().c_str(), e.what());
    out.failed = true;
  }
  return out;
}

// Runtime work outside any unit: its column goes to the runtime record.
void load_cached_artifacts() {
  jitscope::Phase load(kLoadCached);
  std::string index;
  for (int i = 0; i < 64; ++i) index += "artifact/" + std::to_string(i) + ".cubin\n";
  (void)churn(fnv1a(index), 200000);
}

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
  for (const jitscope::PhaseKey* key : {&kLoadCached, &kCompileGraph, &kParse, &kPasses, &kCodegen}) {
    expect_ok(key->status(), "a phase key");
  }

  if (jitscope::active()) {  // started at load from JITSCOPE_TRACE: its settings win
    const char* env_metrics = std::getenv("JITSCOPE_METRICS");
    metrics = env_metrics != nullptr ? env_metrics : "";
  } else if (!trace.empty()) {
    jitscope::Config cfg;
    cfg.output_path = trace;
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
  jitscope::register_recompile_context_hook([] { return "epoch=" + std::to_string(g_epoch.load()); });

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
  }
  if (tables) {
    std::printf("\n%s\n%s", jitscope::compile_times(jitscope::TableFormat::kText, true).c_str(),
                jitscope::cumulative_time_report().c_str());
  }
  if (g_refused.load() != 0) {
    std::fprintf(stderr, "pass_pipeline: %d event data call(s) were refused (see above)\n",
                 g_refused.load());
    return 3;
  }
  return stopped ? 0 : 1;
}
