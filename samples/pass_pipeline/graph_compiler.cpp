// The pretend compiler's work (see graph_compiler.hpp): its phase keys, its
// caches, one graph's compile unit and the kernels built for it on the
// workers, the artifacts each unit keeps, and the runtime phase outside any
// unit.
#include "graph_compiler.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/step_log.hpp>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace pass_pipeline {
namespace {

using jitscope::DataLevel;

// ---- phase keys: registered once, their options checked at startup ----

const jitscope::PhaseKey kLoadCached{"load_cached_artifacts", {.column = "load_us"}};
const jitscope::PhaseKey kCompileGraph{"compile_graph", {.column = "entire_compile_us"}};
const jitscope::PhaseKey kParse{"parse", {.column = "parse_us"}};
const jitscope::PhaseKey kPasses{"passes", {.column = "passes_us"}};
const jitscope::PhaseKey kCodegen{"codegen", {.column = "codegen_us", .compile_event = true}};

jitscope::WaitCounter g_workers_wait{"codegen_workers"};

// Event data refused where this program expects it to be accepted.
std::atomic<int> g_refused{0};

// Whether the session has an artifacts folder (set by main before any unit).
bool g_keep_artifacts = false;

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

struct Kernel {
  std::string name;  // "k0"
  std::string key;   // kernel cache key
  std::vector<std::string> ops;
};

// ---- in-memory caches (main thread only) ----

std::map<std::string, int> g_graph_cache;             // graph hash -> kernels
std::map<std::string, std::uint64_t> g_kernel_cache;  // kernel key -> code hash

// One kernel's code, on a worker thread attached to the unit. `*source` is
// the generated code, filled before the failure so that it is kept too.
std::uint64_t emit_kernel(const Kernel& k, bool fail, std::string* source) {
  JITSCOPE_PHASE("emit_kernel");
  // Trace-level data on this worker's own phase.
  expect_ok(jitscope::event("emit_kernel").set(DataLevel::kTrace, "kernel", k.key), "kernel");
  std::string code = "__global__ void " + k.name + "(float* x) {\n";
  code += "  const int i = blockIdx.x * blockDim.x + threadIdx.x;\n";
  for (int unroll = 0; unroll < 8; ++unroll) {
    for (const std::string& op : k.ops) code += "  x[i] = " + op + "(x[i]);\n";
  }
  code += "}\n";
  const std::uint64_t h = churn(fnv1a(code), 20000);
  *source = code;
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

// The graph as parsed: one SSA-like line per op.
std::string parsed_ir(const Graph& g) {
  std::string ir = "graph " + g.frame + "(x: f32" + g.input.str() + ") {\n";
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    ir += "  %" + std::to_string(i + 1) + " = " + g.ops[i] + "(%" + std::to_string(i) + ")\n";
  }
  return ir + "}\n";
}

// The graph after the passes: its fused kernels, each with its cache key.
std::string optimized_ir(const Graph& g, const std::vector<Kernel>& kernels, std::int64_t removed) {
  std::string ir = "graph " + g.frame + "(x: f32" + g.input.str() +
                   ") after fold_constants, fuse, dce: " + std::to_string(kernels.size()) +
                   " kernels, " + std::to_string(removed) + " ops removed {\n";
  for (const Kernel& k : kernels) {
    ir += "  kernel " + k.name + " [key " + k.key + "] {";
    for (const std::string& op : k.ops) ir += " " + op + ";";
    ir += " }\n";
  }
  return ir + "}\n";
}

// Keeps one artifact of `unit` when the session has an artifacts folder.
void keep(jitscope::CompileUnit& unit, std::string_view kind, std::string_view content,
          std::string_view extension) {
  if (g_keep_artifacts) expect_ok(unit.artifact(kind, content, extension), "an artifact");
}

}  // namespace

void set_keep_artifacts(bool on) { g_keep_artifacts = on; }

void expect_ok(const jitscope::Status& st, const char* what) {
  if (st) return;
  g_refused.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "pass_pipeline: warning: %s was refused: %s\n", what, st.message().c_str());
}

int refused_count() { return g_refused.load(); }

void check_phase_keys() {
  for (const jitscope::PhaseKey* key :
       {&kLoadCached, &kCompileGraph, &kParse, &kPasses, &kCodegen}) {
    expect_ok(key->status(), "a phase key");
  }
}

Outcome compile(const Graph& g, WorkerPool& pool, std::string_view recompile_reason) {
  jitscope::GraphNameScope block_scope(g.block);  // unit name: mocknet__block0_fwd_<nth>
  jitscope::CompileUnit unit({.frame = g.frame,
                              .graph = g.forward ? "fwd" : "bwd",
                              .is_forward = g.forward,
                              .recompile_reason = recompile_reason});
  jitscope::CompileProgress bar("compile " + unit.name(), 3);  // draws only if enabled
  Outcome out;
  // What the unit keeps as artifacts, recorded once it is compiled or has
  // failed: the graph before and after the passes, each kernel's generated
  // source (the failing one's too), and the compiler's log.
  std::string parsed;
  std::string optimized;
  std::vector<Kernel> kernels;
  std::vector<std::string> sources;  // per kernel; "" when taken from the cache
  std::string compile_log = unit.id().display() + " " + unit.name() + "\n";
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
      parsed = parsed_ir(g);
      for (const std::string& op : g.ops) {
        expect_ok(jitscope::toplevel_event().add_to_set(DataLevel::kMetric, "op_kinds", op),
                  "op_kinds");
      }
      graph_key = hex(churn(fnv1a(parsed), 200000));
      log.log("parsed " + unit.name() + ": " + std::to_string(g.ops.size()) + " ops, hash " +
              graph_key.substr(0, 8));
      compile_log +=
          "parse: " + std::to_string(g.ops.size()) + " ops, graph hash " + graph_key + "\n";
    }
    if (g_graph_cache.count(graph_key) != 0) {
      unit.cache_hit(graph_key, "graph");  // (not reached in this sample's run)
      return out;
    }
    unit.cache_miss(graph_key, "graph");

    {
      jitscope::Phase passes(kPasses);
      jitscope::StepLogger log("passes");
      std::vector<std::string> ops = g.ops;
      std::int64_t removed = 0;
      {
        JITSCOPE_PHASE("pass:fold_constants");
        expect_ok(jitscope::event("passes").increment(DataLevel::kTrace, "passes_run"),
                  "passes_run");
        const std::size_t before = ops.size();
        std::erase_if(ops, [](const std::string& op) { return op == "const"; });
        removed += static_cast<std::int64_t>(before - ops.size());
        (void)churn(fnv1a(g.frame), 100000);
      }
      {
        JITSCOPE_PHASE("pass:fuse");
        expect_ok(jitscope::event("passes").increment(DataLevel::kTrace, "passes_run"),
                  "passes_run");
        for (const std::string& op : ops) {
          if (op == "matmul" || kernels.empty()) {
            Kernel k;
            k.name = "k";  // not "k" + ...: GCC 12's false -Wrestrict at -O2
            k.name += std::to_string(kernels.size());
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
        expect_ok(jitscope::event("passes").increment(DataLevel::kTrace, "passes_run"),
                  "passes_run");
        for (Kernel& k : kernels) {
          const std::size_t before = k.ops.size();
          std::erase_if(k.ops, [](const std::string& op) { return op == "identity"; });
          removed += static_cast<std::int64_t>(before - k.ops.size());
        }
        (void)churn(fnv1a(g.frame), 50000);
      }
      expect_ok(jitscope::event("passes").set(DataLevel::kTrace, "ops_removed", removed),
                "ops_removed");
      const std::string what = "removed " + std::to_string(removed) + " ops, fused into " +
                               std::to_string(kernels.size()) + " kernels";
      log.log("passes: " + what);
      compile_log += "passes: " + what + "\n";
      optimized = optimized_ir(g, kernels, removed);
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
      sources.assign(kernels.size(), std::string());
      const jitscope::CompileUnitRef ref = unit.ref();
      pool.start([&](int w) {
        if (static_cast<std::size_t>(w) >= to_build.size()) return;  // nothing: no slice
        jitscope::UnitScope scope(ref);  // this thread's events carry the unit's id
        for (std::size_t n = static_cast<std::size_t>(w); n < to_build.size();
             n += static_cast<std::size_t>(pool.size())) {
          const std::size_t j = to_build[n];
          code[j] = emit_kernel(kernels[j], static_cast<int>(j) == g.fail_kernel, &sources[j]);
        }
      });
      {
        auto waiting = g_workers_wait.wait();  // the main thread's wait, in the record
        pool.wait();  // rethrows a worker's std::runtime_error here, in the codegen phase
      }
      for (std::size_t j : to_build) g_kernel_cache[kernels[j].key] = code[j];
      for (std::size_t j = 0; j < kernels.size(); ++j) {
        compile_log +=
            "codegen: " + kernels[j].name + " " +
            (sources[j].empty() ? "from the kernel cache" : "built, code hash " + hex(code[j])) +
            "\n";
      }
    }
    g_graph_cache[graph_key] = static_cast<int>(kernels.size());
  } catch (const std::exception& e) {
    // Outside every phase, inside the unit: the record gets the type and what().
    unit.fail_with_current_exception();
    std::fprintf(stderr, "pass_pipeline: %s %s failed: %s\n", unit.id().display().c_str(),
                 unit.name().c_str(), e.what());
    out.failed = true;
    compile_log += std::string("error: ") + e.what() + "\n";
  }
  keep(unit, "graph_parsed", parsed, "ir");
  if (!optimized.empty()) keep(unit, "graph_optimized", optimized, "ir");
  for (std::size_t j = 0; j < sources.size(); ++j) {
    if (!sources[j].empty()) keep(unit, "kernel_" + kernels[j].name, sources[j], "cu");
  }
  keep(unit, "log", compile_log, "txt");
  return out;
}

// Runtime work outside any unit: its column goes to the runtime record.
void load_cached_artifacts() {
  jitscope::Phase load(kLoadCached);
  std::string index;
  for (int i = 0; i < 64; ++i) index += "artifact/" + std::to_string(i) + ".cubin\n";
  (void)churn(fnv1a(index), 200000);
}

}  // namespace pass_pipeline
