// jitscope::mlir against the real MLIR 16 (libMLIR): a module of functions
// goes through builtin.module(func.func(canonicalize, cse, ...)) with the
// adapter added beside an independent recorder instrumentation, on a
// context with a 4-thread pool (the adaptor runs its pipelines there) and
// single-threaded. The written trace is compared with what MLIR reported to
// the recorder: pass runs, nesting per thread, the worker spans' parent and
// compile unit, the adaptor's wait for its workers, a failing pass, the
// host's own span-making instrumentation added before and after ours, and
// a second jitscope instrumentation on one pass manager. Not covered:
// dynamic pipelines (OpPassManager run from inside a pass), crash
// reproducers, and an adaptor on a pool thread that runs pipelines itself.
#include <jitscope/compile.hpp>
#include <jitscope/mlir.hpp>

#include "adapters/adapter_trace.hpp"
#include "trace_support.hpp"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/ThreadPool.h>
#include <llvm/Support/Threading.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Transforms/Passes.h>

#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

using jitscope::testing::count_lines_starting;
using jitscope::testing::overlaps;
using jitscope::testing::shape;
using jitscope::testing::spans_by_thread;
using jitscope::testing::TraceSpan;

constexpr int kFunctions = 24;

std::string module_text(bool with_bad) {
  std::string text;
  for (int i = 0; i < kFunctions; ++i) {
    const std::string name = with_bad && i == kFunctions / 2 ? "bad" : "f" + std::to_string(i);
    text += jitscope::testing::mlir_function_text("@" + name);
  }
  return text;
}

// Fails on the function named "bad", as a pass that finds an error does.
struct FailOnBadPass
    : public mlir::PassWrapper<FailOnBadPass, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FailOnBadPass)
  llvm::StringRef getArgument() const override { return "test-fail-on-bad"; }
  void runOnOperation() override {
    if (getOperation().getName() == "bad") signalPassFailure();
  }
};

// What MLIR itself reported, per thread (llvm::get_threadid()).
struct Recorded {
  std::map<std::uint64_t, std::vector<std::string>> shape;  // "name@depth" per run
  std::map<std::uint64_t, int> depth;
  std::map<std::string, int> runs_by_name;
  std::set<std::uint64_t> threads_running_passes;
  int runs = 0, failed = 0, analyses = 0, pipelines = 0;
};

// The independent instrumentation. The pass manager owns it; what it
// recorded outlives both in the shared Recorded.
struct Recorder : public mlir::PassInstrumentation {
  explicit Recorder(std::shared_ptr<Recorded> into) : r(std::move(into)) {}
  std::shared_ptr<Recorded> r;
  std::mutex mutex;

  void push(const std::string& name) {
    const std::uint64_t tid = llvm::get_threadid();
    r->shape[tid].push_back(name + "@" + std::to_string(r->depth[tid]++));
  }
  void pop() { --r->depth[llvm::get_threadid()]; }
  void runBeforePipeline(std::optional<mlir::OperationName>, const PipelineParentInfo&) override {
    std::lock_guard<std::mutex> lock(mutex);
    ++r->pipelines;
    push("pipeline");
  }
  void runAfterPipeline(std::optional<mlir::OperationName>, const PipelineParentInfo&) override {
    std::lock_guard<std::mutex> lock(mutex);
    pop();
  }
  void runBeforePass(mlir::Pass* pass, mlir::Operation*) override {
    std::lock_guard<std::mutex> lock(mutex);
    ++r->runs;
    ++r->runs_by_name[pass->getName().str()];
    r->threads_running_passes.insert(llvm::get_threadid());
    push(pass->getName().str());
  }
  void runAfterPass(mlir::Pass*, mlir::Operation*) override {
    std::lock_guard<std::mutex> lock(mutex);
    pop();
  }
  void runAfterPassFailed(mlir::Pass*, mlir::Operation*) override {
    std::lock_guard<std::mutex> lock(mutex);
    pop();
    ++r->failed;
  }
  void runBeforeAnalysis(llvm::StringRef, mlir::TypeID, mlir::Operation*) override {
    std::lock_guard<std::mutex> lock(mutex);
    ++r->analyses;
  }
};

// The host's own instrumentation: a jitscope span "user_pass" around each
// pass run, on a stack per thread, as a host would keep them.
struct UserSpans : public mlir::PassInstrumentation {
  std::mutex mutex;
  std::map<std::uint64_t, std::vector<jitscope::Span>> open;

  void runBeforePass(mlir::Pass* pass, mlir::Operation*) override {
    std::lock_guard<std::mutex> lock(mutex);
    const llvm::StringRef name = pass->getName();
    open[llvm::get_threadid()].emplace_back(
        "user_pass", std::initializer_list<jitscope::Arg>{
                         {"user_of", std::string_view(name.data(), name.size())}});
  }
  void pop() {
    std::lock_guard<std::mutex> lock(mutex);
    auto& stack = open[llvm::get_threadid()];
    if (!stack.empty()) stack.pop_back();
  }
  void runAfterPass(mlir::Pass*, mlir::Operation*) override { pop(); }
  void runAfterPassFailed(mlir::Pass*, mlir::Operation*) override { pop(); }
};

enum class UserSpansAt { kNone, kBeforeOurs, kAfterOurs };

struct Setup {
  bool threaded = true;
  bool with_bad = false;
  bool in_unit = false;
  jitscope::mlir::Options options;
  UserSpansAt user_spans = UserSpansAt::kNone;
  bool second_jitscope = false;  // a second jitscope instrumentation, added after the first
};

struct TracedRun {
  std::shared_ptr<const Recorded> recorder;
  jitscope::mlir::Counts counts;
  jitscope::mlir::Counts second_counts;
  std::string stderr_text;  // what the run wrote to stderr (with second_jitscope)
  bool succeeded = false;
  nlohmann::json trace;
  jitscope::SessionStats stats;
  std::string compile_id;
  long main_tid = 0;
};

TracedRun traced_run(const Setup& setup) {
  TracedRun run;
  run.main_tid = static_cast<long>(llvm::get_threadid());
  llvm::ThreadPool pool(llvm::hardware_concurrency(4));
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  if (setup.threaded) context.setThreadPool(pool);
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(module_text(setup.with_bad), &context);
  EXPECT_TRUE(module);

  mlir::PassManager pm(&context);
  mlir::OpPassManager& functions = pm.nest<mlir::func::FuncOp>();
  functions.addPass(mlir::createCanonicalizerPass());
  functions.addPass(mlir::createCSEPass());
  functions.addPass(std::make_unique<FailOnBadPass>());
  auto recorded = std::make_shared<Recorded>();
  run.recorder = recorded;
  if (setup.user_spans == UserSpansAt::kBeforeOurs) {
    pm.addInstrumentation(std::make_unique<UserSpans>());
  }
  auto ours = jitscope::mlir::make_instrumentation(setup.options);
  jitscope::mlir::Instrumentation* instrumentation = ours.get();
  pm.addInstrumentation(std::move(ours));
  if (setup.user_spans == UserSpansAt::kAfterOurs) {
    pm.addInstrumentation(std::make_unique<UserSpans>());
  }
  jitscope::mlir::Instrumentation* second = nullptr;
  if (setup.second_jitscope) {
    auto again = jitscope::mlir::make_instrumentation(setup.options);
    second = again.get();
    pm.addInstrumentation(std::move(again));
  }
  pm.addInstrumentation(std::make_unique<Recorder>(recorded));

  jitscope::testing::ScopedSession session(jitscope::testing::test_config("mlir_adapter"));
  EXPECT_TRUE(session.status().ok()) << session.status().message();
  {
    std::optional<jitscope::testing::StderrCapture> err;
    if (setup.second_jitscope) err.emplace();
    if (setup.in_unit) {
      jitscope::CompileUnit unit({.frame = "mlir_module", .graph = "module"});
      run.compile_id = unit.id().str();
      run.succeeded = mlir::succeeded(pm.run(*module));
    } else {
      run.succeeded = mlir::succeeded(pm.run(*module));
    }
    if (err) run.stderr_text = err->text();
  }
  run.counts = instrumentation->counts();
  if (second != nullptr) run.second_counts = second->counts();
  run.stats = session.finish();
  run.trace = jitscope::testing::load_trace(session.path());
  return run;
}

nlohmann::json args_of(const nlohmann::json& e) {
  return e.value("args", nlohmann::json::object());
}
bool is_pass_span(const nlohmann::json& e) {
  const auto args = args_of(e);
  return args.contains("op") && e["name"] != "pipeline" && !args.contains("analysis");
}
bool is_pass_or_pipeline(const nlohmann::json& e) {
  return is_pass_span(e) || (e["name"] == "pipeline" && args_of(e).contains("parent_thread"));
}

TEST(MlirAdapter, OnePassSpanPerPassRunMlirReports) {
  for (bool threaded : {true, false}) {
    SCOPED_TRACE(threaded ? "threaded" : "single-threaded");
    const TracedRun run = traced_run({.threaded = threaded});
    ASSERT_TRUE(run.succeeded);
    const Recorded& rec = *run.recorder;
    ASSERT_EQ(rec.runs, 1 + 3 * kFunctions);  // the adaptor, then 3 passes per function
    std::map<std::string, int> spans_by_name;
    int spans = 0, analyses = 0, pipelines = 0;
    for (const auto& e : jitscope::testing::events_with_ph(run.trace, "X")) {
      if (is_pass_span(e)) {
        ++spans_by_name[e["name"].get<std::string>()];
        ++spans;
      }
      if (args_of(e).value("analysis", false)) ++analyses;
      if (e["name"] == "pipeline") ++pipelines;
    }
    EXPECT_EQ(spans, rec.runs);
    EXPECT_EQ(spans_by_name, rec.runs_by_name);
    EXPECT_EQ(run.counts.passes, static_cast<std::uint64_t>(rec.runs));
    ASSERT_GT(rec.analyses, 0);  // cse asks for dominance
    EXPECT_EQ(analyses, rec.analyses);
    EXPECT_EQ(run.counts.analyses, static_cast<std::uint64_t>(rec.analyses));
    EXPECT_EQ(pipelines, rec.pipelines);
    EXPECT_EQ(run.counts.unmatched, 0u);
    EXPECT_EQ(run.stats.spans_incomplete, 0u);
    EXPECT_EQ(run.stats.spans_ended_out_of_order, 0u);
  }
}

TEST(MlirAdapter, SpansNestPerThreadAsMlirRanThem) {
  for (bool threaded : {true, false}) {
    SCOPED_TRACE(threaded ? "threaded" : "single-threaded");
    const TracedRun run = traced_run({.threaded = threaded, .options = {.analyses = false}});
    ASSERT_TRUE(run.succeeded);
    const auto threads = spans_by_thread(run.trace, is_pass_or_pipeline);
    std::set<std::uint64_t> traced_threads;
    for (const auto& [tid, spans] : threads) {
      traced_threads.insert(static_cast<std::uint64_t>(tid));
      EXPECT_EQ(overlaps(spans), std::vector<std::string>{}) << "tid " << tid;
      // The same runs, in the same order, at the same depth, on the same thread.
      EXPECT_EQ(shape(spans), run.recorder->shape.at(static_cast<std::uint64_t>(tid)))
          << "tid " << tid;
    }
    EXPECT_EQ(traced_threads, run.recorder->threads_running_passes);
    if (!threaded) {
      EXPECT_EQ(threads.size(), 1u);
    }
  }
}

TEST(MlirAdapter, WorkerSpansAreTiedToTheirParent) {
  for (bool in_unit : {true, false}) {
    SCOPED_TRACE(in_unit ? "in a compile unit" : "no unit");
    const TracedRun run = traced_run({.threaded = true, .in_unit = in_unit});
    ASSERT_TRUE(run.succeeded);
    const auto threads = spans_by_thread(run.trace, is_pass_or_pipeline);
    ASSERT_TRUE(threads.count(run.main_tid));
    // The adaptor on the host's thread: the parent of every pipeline.
    const TraceSpan* adaptor = nullptr;
    for (const TraceSpan& s : threads.at(run.main_tid)) {
      if (s.depth == 0) adaptor = &s;
    }
    ASSERT_NE(adaptor, nullptr);
    int worker_pipelines = 0, worker_passes = 0;
    for (const auto& [tid, spans] : threads) {
      if (tid == run.main_tid) continue;
      for (const TraceSpan& s : spans) {
        if (in_unit) {
          EXPECT_EQ(s.args.value("compile_id", ""), run.compile_id) << s.name;
        } else {
          EXPECT_FALSE(s.args.contains("compile_id")) << s.name;
        }
        if (s.name != "pipeline") {
          ++worker_passes;
          EXPECT_GT(s.depth, 0) << s.name << ": a worker's pass outside any pipeline";
          continue;
        }
        ++worker_pipelines;
        EXPECT_EQ(s.depth, 0);
        EXPECT_EQ(s.args.value("threaded", false), true);
        EXPECT_EQ(s.args.value("parent_thread", 0L), run.main_tid);
        EXPECT_EQ(s.args.value("parent_pass", ""), adaptor->name);
        EXPECT_EQ(s.args.value("op", ""), "func.func");
        EXPECT_LE(adaptor->begin_ns, s.begin_ns);
        EXPECT_GE(adaptor->end_ns, s.end_ns);
      }
    }
    EXPECT_GT(worker_pipelines, 0) << "no pipeline ran on a worker thread";
    EXPECT_EQ(worker_passes, 3 * worker_pipelines);
    EXPECT_EQ(run.counts.attached, in_unit ? static_cast<std::uint64_t>(worker_pipelines) : 0u);
  }
}

TEST(MlirAdapter, FailingPassIsMarked) {
  for (bool threaded : {true, false}) {
    SCOPED_TRACE(threaded ? "threaded" : "single-threaded");
    const TracedRun run = traced_run({.threaded = threaded, .with_bad = true, .in_unit = true});
    ASSERT_FALSE(run.succeeded);
    ASSERT_EQ(run.recorder->failed, 2);  // the pass on @bad, then its adaptor
    EXPECT_EQ(run.counts.failed, 2u);
    const auto threads = spans_by_thread(run.trace, is_pass_or_pipeline);
    int failed_pass = 0, failed_pipeline = 0, failed_adaptor = 0, failed_other = 0;
    for (const auto& [tid, spans] : threads) {
      EXPECT_EQ(overlaps(spans), std::vector<std::string>{}) << "tid " << tid;
      for (std::size_t i = 0; i < spans.size(); ++i) {
        const TraceSpan& s = spans[i];
        if (!s.args.value("failed", false)) continue;
        if (s.args.value("ir_name", "") == "bad" &&
            s.args.value("pass", "") == "test-fail-on-bad") {
          ++failed_pass;
        } else if (s.name == "pipeline") {
          ++failed_pipeline;
          // It contains the failed pass: the pipeline it ended.
          bool contains_failed_pass = false;
          for (const TraceSpan& inner : spans) {
            contains_failed_pass |= inner.args.value("ir_name", "") == "bad" &&
                                    inner.args.value("failed", false) &&
                                    inner.begin_ns >= s.begin_ns && inner.end_ns <= s.end_ns;
          }
          EXPECT_TRUE(contains_failed_pass);
        } else if (tid == run.main_tid && s.depth == 0) {
          ++failed_adaptor;
        } else {
          ++failed_other;
        }
      }
      // Pipelines never nest on a worker: none was left open by the failure.
      if (threaded && tid != run.main_tid) {
        for (const TraceSpan& s : spans) {
          if (s.name == "pipeline") {
            EXPECT_EQ(s.depth, 0);
          }
        }
      }
    }
    EXPECT_EQ(failed_pass, 1);
    EXPECT_EQ(failed_pipeline, 1);
    EXPECT_EQ(failed_adaptor, 1);
    EXPECT_EQ(failed_other, 0);
    EXPECT_EQ(run.stats.spans_incomplete, 0u);
    EXPECT_EQ(run.stats.spans_ended_out_of_order, 0u);
    EXPECT_EQ(run.counts.unmatched, 0u);
  }
}

TEST(MlirAdapter, ColumnIsTheHostsWallTimeNotTheWorkersSum) {
  const TracedRun run =
      traced_run({.threaded = true, .in_unit = true, .options = {.column = "mlir_passes_us"}});
  ASSERT_TRUE(run.succeeded);
  const std::vector<jitscope::CompileRecord> records = jitscope::recent_compile_records();
  ASSERT_FALSE(records.empty());
  const jitscope::CompileRecord& record = records.back();
  ASSERT_EQ(record.compile_id.str(), run.compile_id);
  ASSERT_TRUE(record.columns.count("mlir_passes_us"));
  const std::uint64_t column_us = record.columns.at("mlir_passes_us");
  // The phase is on the host's thread only, around the adaptor.
  const auto threads = spans_by_thread(run.trace, [](const nlohmann::json& e) {
    return is_pass_or_pipeline(e) || e["name"] == "mlir_passes";
  });
  const TraceSpan* phase = nullptr;
  const TraceSpan* adaptor = nullptr;
  for (const auto& [tid, spans] : threads) {
    for (const TraceSpan& s : spans) {
      if (s.name == "mlir_passes") {
        EXPECT_EQ(tid, run.main_tid);
        EXPECT_EQ(phase, nullptr) << "more than one mlir_passes phase";
        phase = &s;
      } else if (tid == run.main_tid && s.depth == 1) {
        adaptor = &s;
      }
    }
  }
  ASSERT_NE(phase, nullptr);
  ASSERT_NE(adaptor, nullptr);  // inside the phase (depth 1)
  // The column is the phase's time (to a µs): wall time, though four
  // workers ran pipelines inside it.
  const double phase_us = static_cast<double>(phase->end_ns - phase->begin_ns) / 1000.0;
  EXPECT_NEAR(static_cast<double>(column_us), phase_us, 2.0);
}

TEST(MlirAdapter, NoSessionRecordsNothing) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(module_text(true), &context);
  ASSERT_TRUE(module);
  mlir::PassManager pm(&context);
  pm.nest<mlir::func::FuncOp>().addPass(std::make_unique<FailOnBadPass>());
  auto ours = jitscope::mlir::make_instrumentation();
  jitscope::mlir::Instrumentation* instrumentation = ours.get();
  pm.addInstrumentation(std::move(ours));
  ASSERT_FALSE(jitscope::active());
  EXPECT_TRUE(mlir::failed(pm.run(*module)));
  const jitscope::mlir::Counts c = instrumentation->counts();
  EXPECT_EQ(c.passes + c.failed + c.analyses + c.pipelines + c.attached + c.unmatched + c.dropped,
            0u);
}

TEST(MlirAdapter, AdaptorsWaitForItsWorkersIsASpanOfItsOwn) {
  for (bool threaded : {true, false}) {
    SCOPED_TRACE(threaded ? "threaded" : "single-threaded");
    const TracedRun run = traced_run({.threaded = threaded, .options = {.analyses = false}});
    ASSERT_TRUE(run.succeeded);
    const auto threads = spans_by_thread(run.trace, [](const nlohmann::json& e) {
      return is_pass_or_pipeline(e) || e["name"] == "wait for workers";
    });
    ASSERT_TRUE(threads.count(run.main_tid));
    std::vector<const TraceSpan*> waits;
    const TraceSpan* adaptor = nullptr;
    long long first_worker_ns = LLONG_MAX, last_worker_ns = 0;
    int worker_pipelines = 0;
    for (const auto& [tid, spans] : threads) {
      for (const TraceSpan& s : spans) {
        if (s.name == "wait for workers") {
          EXPECT_EQ(tid, run.main_tid) << "a wait on a worker";
          waits.push_back(&s);
        } else if (tid == run.main_tid && s.depth == 0) {
          adaptor = &s;
        } else if (tid != run.main_tid && s.name == "pipeline") {
          ++worker_pipelines;
          first_worker_ns = std::min(first_worker_ns, s.begin_ns);
          last_worker_ns = std::max(last_worker_ns, s.end_ns);
        }
      }
    }
    if (!threaded) {
      EXPECT_TRUE(waits.empty()) << "a wait with no workers";
      continue;
    }
    ASSERT_NE(adaptor, nullptr);
    ASSERT_GT(worker_pipelines, 0);
    ASSERT_EQ(waits.size(), 1u);
    const TraceSpan& wait = *waits.front();
    EXPECT_TRUE(wait.args.value("wait", false));
    EXPECT_EQ(wait.args.value("pipelines", 0), worker_pipelines);
    // Directly inside the adaptor, on the host's thread: the adaptor's self
    // time (its span less its children there) no longer counts it.
    EXPECT_EQ(wait.depth, 1);
    EXPECT_GE(wait.begin_ns, adaptor->begin_ns);
    EXPECT_LE(wait.end_ns, adaptor->end_ns);
    long long children_ns = 0;
    for (const TraceSpan& s : threads.at(run.main_tid)) {
      if (s.depth == 1) children_ns += s.end_ns - s.begin_ns;
    }
    EXPECT_EQ(children_ns, wait.end_ns - wait.begin_ns);
    // It spans the workers' pipelines, from the first begin to the last end
    // (to the trace's rounding, and the clock reads beside each span's).
    constexpr long long kSlackNs = 2000;
    EXPECT_LE(wait.begin_ns, first_worker_ns + kSlackNs);
    EXPECT_GE(wait.end_ns, last_worker_ns - kSlackNs);
    EXPECT_EQ(run.stats.spans_ended_out_of_order, 0u);
  }
}

TEST(MlirAdapter, HostSpansAroundPassesNestWhateverTheOrderAdded) {
  for (UserSpansAt at : {UserSpansAt::kBeforeOurs, UserSpansAt::kAfterOurs}) {
    SCOPED_TRACE(at == UserSpansAt::kBeforeOurs ? "host's added first" : "host's added after");
    const TracedRun run = traced_run({.threaded = true, .user_spans = at});
    ASSERT_TRUE(run.succeeded);
    EXPECT_EQ(run.stats.spans_ended_out_of_order, 0u);
    EXPECT_EQ(run.stats.spans_incomplete, 0u);
    const auto threads = spans_by_thread(run.trace, [](const nlohmann::json& e) {
      return is_pass_or_pipeline(e) || e["name"] == "user_pass";
    });
    int user = 0, passes = 0;
    for (const auto& [tid, spans] : threads) {
      EXPECT_EQ(overlaps(spans), std::vector<std::string>{}) << "tid " << tid;
      for (std::size_t i = 0; i < spans.size(); ++i) {
        const TraceSpan& s = spans[i];
        EXPECT_FALSE(s.args.value("jitscope_ended_with_outer", false)) << s.name;
        if (s.name == "user_pass") {
          ++user;
          continue;
        }
        if (s.name == "pipeline") continue;
        ++passes;
        // Its pair, the host's span of the same pass, directly around it
        // (added first) or directly inside it (added after).
        const TraceSpan* pair = nullptr;
        if (at == UserSpansAt::kBeforeOurs && i > 0) pair = &spans[i - 1];
        if (at == UserSpansAt::kAfterOurs && i + 1 < spans.size()) pair = &spans[i + 1];
        ASSERT_NE(pair, nullptr) << s.name;
        EXPECT_EQ(pair->name, "user_pass");
        EXPECT_EQ(pair->args.value("user_of", ""), s.name);
        EXPECT_EQ(pair->depth, at == UserSpansAt::kBeforeOurs ? s.depth - 1 : s.depth + 1);
      }
    }
    EXPECT_EQ(passes, run.recorder->runs);
    EXPECT_EQ(user, passes);
  }
}

TEST(MlirAdapter, SecondInstrumentationOnOnePassManagerRecordsNothing) {
  const TracedRun run = traced_run({.threaded = true, .second_jitscope = true});
  ASSERT_TRUE(run.succeeded);
  const Recorded& rec = *run.recorder;
  int spans = 0, pipelines = 0;
  for (const auto& e : jitscope::testing::events_with_ph(run.trace, "X")) {
    if (is_pass_span(e)) ++spans;
    if (e["name"] == "pipeline") ++pipelines;
  }
  EXPECT_EQ(spans, rec.runs);  // one instrumentation's spans, not two
  EXPECT_EQ(pipelines, rec.pipelines);
  EXPECT_EQ(run.counts.passes, static_cast<std::uint64_t>(rec.runs));
  const jitscope::mlir::Counts& c = run.second_counts;
  EXPECT_EQ(c.passes + c.failed + c.analyses + c.pipelines + c.attached + c.unmatched + c.dropped,
            0u);
  EXPECT_EQ(count_lines_starting(run.stderr_text, "jitscope:"), 1) << run.stderr_text;
  EXPECT_NE(run.stderr_text.find("records nothing"), std::string::npos) << run.stderr_text;
  EXPECT_EQ(run.stats.spans_ended_out_of_order, 0u);
  EXPECT_EQ(run.stats.spans_incomplete, 0u);
}

// The "location" arg is written from the location's fields, never printed:
// each function's own file:line:col, the file location inside a NameLoc,
// and none for an unknown location.
TEST(MlirAdapter, LocationsAreTheOpsFileLineAndColumn) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  // Each function is 7 lines; the tail ones have explicit locations.
  const std::string text = module_text(false) +
                           "func.func @named() {\n  return\n} loc(\"fn\"(\"gen.py\":40:7))\n"
                           "func.func @nowhere() {\n  return\n} loc(unknown)\n";
  llvm::SourceMgr sources;  // named, so that the locations name a file
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(text, "kernels.mlir"), llvm::SMLoc());
  mlir::ParserConfig config(&context);
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(sources, config);
  ASSERT_TRUE(module);
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("mlir_locations"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  {
    mlir::PassManager pm(&context);
    pm.nest<mlir::func::FuncOp>().addPass(mlir::createCanonicalizerPass());
    pm.addInstrumentation(jitscope::mlir::make_instrumentation({.analyses = false}));
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  }
  session.finish();
  const nlohmann::json trace = jitscope::testing::load_trace(session.path());
  std::map<std::string, std::string> where;  // function -> its span's location ("-": none)
  for (const auto& e : jitscope::testing::events_with_ph(trace, "X")) {
    const auto args = args_of(e);
    if (!is_pass_span(e) || args.value("op", "") != "func.func") continue;
    where[args.value("ir_name", "")] = args.value("location", "-");
  }
  ASSERT_EQ(where.size(), static_cast<std::size_t>(kFunctions) + 2);
  for (int i = 0; i < kFunctions; ++i) {
    EXPECT_EQ(where["f" + std::to_string(i)], "kernels.mlir:" + std::to_string(7 * i + 1) + ":1");
  }
  EXPECT_EQ(where["named"], "gen.py:40:7");
  EXPECT_EQ(where["nowhere"], "-");
}

// Options::ir_size: each pass run's operations before and after, against
// the counts of the module written here. A function of 5 ops (two
// constants, two adds, a return) of which canonicalize erases the unused
// add and the constant only it used: the function goes from 6 operations
// (itself included) to 4, the module from 7 to 5; a second canonicalize on
// the module changes nothing. Without the option no span has them.
TEST(MlirAdapter, IrSizeIsTheOperationsBeforeAndAfterEachRun) {
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  constexpr const char* kText =
      "func.func @f(%a: i32) -> i32 {\n"
      "  %c1 = arith.constant 1 : i32\n"
      "  %c2 = arith.constant 2 : i32\n"
      "  %dead = arith.addi %c1, %c2 : i32\n"
      "  %r = arith.addi %a, %c1 : i32\n"
      "  return %r : i32\n"
      "}\n";
  for (const bool sized : {true, false}) {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(kText, &context);
    ASSERT_TRUE(module);
    jitscope::testing::ScopedSession session(jitscope::testing::test_config("mlir_ir_size"));
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    {
      mlir::PassManager pm(&context);
      pm.nest<mlir::func::FuncOp>().addPass(mlir::createCanonicalizerPass());
      pm.addPass(mlir::createCanonicalizerPass());
      pm.addInstrumentation(
          jitscope::mlir::make_instrumentation({.analyses = false, .ir_size = sized}));
      ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    }
    session.finish();
    const nlohmann::json trace = jitscope::testing::load_trace(session.path());
    std::vector<std::string> sizes;  // "op before->after" per pass run, in begin order
    const auto threads = spans_by_thread(trace, is_pass_span);
    ASSERT_EQ(threads.size(), 1u);
    for (const TraceSpan& s : threads.begin()->second) {
      sizes.push_back(s.args.value("op", "") + " " +
                      std::to_string(s.args.value("ir_size_before", -1)) + "->" +
                      std::to_string(s.args.value("ir_size_after", -1)));
    }
    if (sized) {
      EXPECT_EQ(sizes, (std::vector<std::string>{"builtin.module 7->5", "func.func 6->4",
                                                 "builtin.module 5->5"}));
    } else {
      EXPECT_EQ(sizes, (std::vector<std::string>{"builtin.module -1->-1", "func.func -1->-1",
                                                 "builtin.module -1->-1"}));
    }
  }
}

TEST(MlirAdapter, PassManagersInTurnEachRecordTheirOwn) {
  // Pass managers made and freed in turn on one thread (their passes may
  // come back at the same addresses): none is taken for a second instrumentation.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(module_text(false), &context);
  ASSERT_TRUE(module);
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("mlir_in_turn"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  jitscope::testing::StderrCapture err;
  for (int i = 0; i < 4; ++i) {
    mlir::PassManager pm(&context);
    pm.nest<mlir::func::FuncOp>().addPass(mlir::createCanonicalizerPass());
    auto ours = jitscope::mlir::make_instrumentation({.analyses = false});
    jitscope::mlir::Instrumentation* instrumentation = ours.get();
    pm.addInstrumentation(std::move(ours));
    ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    EXPECT_EQ(instrumentation->counts().passes, 1u + kFunctions) << i;
  }
  const std::string said = err.text();
  EXPECT_EQ(count_lines_starting(said, "jitscope:"), 0) << said;
}

}  // namespace
