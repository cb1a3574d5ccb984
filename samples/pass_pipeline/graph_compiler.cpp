// The pretend compiler's work (see graph_compiler.hpp): its phase keys, its
// caches, one graph's compile unit and the kernels built for it on the
// workers, and the runtime phase outside any unit.
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

}  // namespace

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

}  // namespace pass_pipeline
