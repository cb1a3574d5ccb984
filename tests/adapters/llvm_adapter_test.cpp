// jitscope::llvm against the real LLVM 16 (libLLVM): a module goes through
// PassBuilder's default<O2> pipeline with the adapter registered beside an
// independent recorder of the same callbacks, and the written trace is
// compared with what LLVM reported to that recorder: the number and names of
// pass runs, their nesting per thread, invalidated and skipped passes,
// analyses, compile ids; with the host's own span-producing callbacks
// registered before and after the adapter; and a second registration on
// the same callbacks object. Not covered: machine-function passes (LLVM 16's new-PM codegen
// pipeline is not used by its own tools) and several threads (LLVM's pass managers run one pipeline
// per thread; the per-thread stacks are the MLIR test's subject).
#include <jitscope/compile.hpp>
#include <jitscope/llvm.hpp>

#include "adapters/adapter_trace.hpp"
#include "adapters/o2_pipeline.hpp"
#include "trace_support.hpp"

#include <llvm/Passes/PassBuilder.h>

#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using jitscope::testing::count_lines_starting;
using jitscope::testing::is_llvm_pass_span;
using jitscope::testing::overlaps;
using jitscope::testing::shape;
using jitscope::testing::spans_by_thread;

// Two loops (one dead, for loop-deletion's invalidation), a call graph for
// the CGSCC passes, and an optnone function whose optional passes LLVM skips.
constexpr const char* kModule = R"(
define i32 @sum(i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%i.next, %loop]
  %acc = phi i32 [0, %entry], [%acc.next, %loop]
  %acc.next = add i32 %acc, %i
  %i.next = add i32 %i, 1
  %done = icmp sge i32 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i32 %acc.next
}
define i32 @dead_loop(i32 %x) {
entry:
  br label %loop
loop:
  %i = phi i32 [0, %entry], [%n, %loop]
  %n = add i32 %i, 1
  %c = icmp slt i32 %n, 10
  br i1 %c, label %loop, label %exit
exit:
  ret i32 %x
}
define i32 @caller(i32 %x) {
  %a = call i32 @sum(i32 %x)
  %b = call i32 @dead_loop(i32 %a)
  ret i32 %b
}
define i32 @untouched(i32 %x) noinline optnone {
  %y = add i32 %x, 0
  ret i32 %y
}
)";

// What LLVM itself reported, through callbacks registered beside ours.
struct Recorded {
  std::vector<std::string> shape;  // "name@depth" per pass run, in order
  std::map<std::string, int> runs_by_name;
  int runs = 0, invalidated = 0, skipped = 0, analyses = 0;
};

void record_independently(llvm::PassInstrumentationCallbacks& pic, Recorded& r) {
  auto depth = std::make_shared<int>(0);
  pic.registerBeforeNonSkippedPassCallback([&r, depth](llvm::StringRef p, llvm::Any) {
    r.shape.push_back(p.str() + "@" + std::to_string((*depth)++));
    ++r.runs_by_name[p.str()];
    ++r.runs;
  });
  pic.registerAfterPassCallback(
      [depth](llvm::StringRef, llvm::Any, const llvm::PreservedAnalyses&) { --*depth; });
  pic.registerAfterPassInvalidatedCallback(
      [&r, depth](llvm::StringRef, const llvm::PreservedAnalyses&) {
        --*depth;
        ++r.invalidated;
      });
  pic.registerBeforeSkippedPassCallback([&r](llvm::StringRef, llvm::Any) { ++r.skipped; });
  pic.registerBeforeAnalysisCallback([&r](llvm::StringRef, llvm::Any) { ++r.analyses; });
}

// Parses kModule and runs default<O2> on it with `pic`, as opt does: with
// LLVM's StandardInstrumentations beside ours (its optnone handling is what
// skips passes). `pic` must not run another pipeline afterwards.
void run_o2(llvm::PassInstrumentationCallbacks& pic) {
  jitscope::testing::O2Pipeline o2(pic, kModule, /*standard=*/true);
  ASSERT_TRUE(o2.parsed) << o2.error;
  o2.run();
}

struct TracedRun {
  Recorded recorded;
  jitscope::llvm::Counts counts;
  nlohmann::json trace;
  jitscope::SessionStats stats;
  std::string compile_id;  // the unit's, when run in one
};

TracedRun traced_o2(const jitscope::llvm::Options& options, bool in_unit = false) {
  TracedRun run;
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_adapter"));
  EXPECT_TRUE(session.status().ok()) << session.status().message();
  llvm::PassInstrumentationCallbacks pic;
  record_independently(pic, run.recorded);
  jitscope::llvm::Registration reg = jitscope::llvm::register_callbacks(pic, options);
  EXPECT_TRUE(reg.registered());
  if (in_unit) {
    jitscope::CompileUnit unit({.frame = "llvm_o2", .graph = "o2"});
    run.compile_id = unit.id().str();
    run_o2(pic);
  } else {
    run_o2(pic);
  }
  run.counts = reg.counts();
  run.stats = session.finish();
  run.trace = jitscope::testing::load_trace(session.path());
  return run;
}

TEST(LlvmAdapter, OnePassSpanPerPassRunLlvmReports) {
  const TracedRun run = traced_o2({});
  ASSERT_GT(run.recorded.runs, 100);  // default<O2> really ran
  std::map<std::string, int> spans_by_name;
  int spans = 0;
  for (const auto& e : jitscope::testing::events_with_ph(run.trace, "X")) {
    if (!is_llvm_pass_span(e)) continue;
    ++spans_by_name[e["name"].get<std::string>()];
    ++spans;
  }
  EXPECT_EQ(spans, run.recorded.runs);
  EXPECT_EQ(spans_by_name, run.recorded.runs_by_name);
  EXPECT_EQ(run.counts.passes, static_cast<std::uint64_t>(run.recorded.runs));
  EXPECT_EQ(run.counts.unmatched, 0u);
  EXPECT_EQ(run.stats.spans_incomplete, 0u);
  EXPECT_EQ(run.stats.spans_ended_out_of_order, 0u);
}

TEST(LlvmAdapter, SpansNestAsLlvmRanThePasses) {
  const TracedRun run = traced_o2({});
  const auto threads = spans_by_thread(run.trace, is_llvm_pass_span);
  ASSERT_EQ(threads.size(), 1u);  // one pipeline, one thread
  const auto& spans = threads.begin()->second;
  EXPECT_EQ(overlaps(spans), std::vector<std::string>{});
  // The same runs in the same order at the same depth as LLVM's own calls.
  EXPECT_EQ(shape(spans), run.recorded.shape);
  // Every kind of IR unit appears, named.
  std::map<std::string, std::string> ir_name_by_kind;
  for (const auto& s : spans) ir_name_by_kind[s.args["ir"]] = s.args.value("ir_name", "");
  for (const char* kind : {"module", "cgscc", "function", "loop"}) {
    EXPECT_TRUE(ir_name_by_kind.count(kind)) << kind;
  }
  EXPECT_FALSE(ir_name_by_kind["function"].empty());
  EXPECT_FALSE(ir_name_by_kind["loop"].empty());
}

// Options::ir_size through default<O2>: the module-level runs (depth 0)
// follow one another, so each one's after is the next one's before, the
// first's before and the last's after are the module's instructions before
// and after the pipeline (counted here block by block), and every run
// inside carries both. The same trace with the option off has none.
TEST(LlvmAdapter, IrSizesChainAcrossTheModulesRuns) {
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_ir_size"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  llvm::PassInstrumentationCallbacks pic;
  const jitscope::llvm::Registration reg =
      jitscope::llvm::register_callbacks(pic, {.ir_size = true});
  jitscope::testing::O2Pipeline o2(pic, kModule, /*standard=*/true);
  ASSERT_TRUE(o2.parsed) << o2.error;
  const auto instructions = [&o2] {
    std::int64_t n = 0;
    for (const llvm::Function& f : *o2.module) {
      for (const llvm::BasicBlock& b : f) n += std::distance(b.begin(), b.end());
    }
    return n;
  };
  const std::int64_t before = instructions();
  o2.run();
  const std::int64_t after = instructions();
  ASSERT_NE(before, after);  // O2 changed the module (the dead loop goes)
  session.finish();
  const auto threads =
      spans_by_thread(jitscope::testing::load_trace(session.path()), is_llvm_pass_span);
  ASSERT_EQ(threads.size(), 1u);
  std::vector<const jitscope::testing::TraceSpan*> top;
  for (const auto& s : threads.begin()->second) {
    EXPECT_TRUE(s.args.contains("ir_size_before")) << s.name;
    // A run that invalidated its unit (a deleted loop) has no after count.
    EXPECT_EQ(s.args.contains("ir_size_after"), !s.args.value("ir_invalidated", false)) << s.name;
    if (s.depth == 0) top.push_back(&s);
  }
  ASSERT_GT(top.size(), 2u);
  EXPECT_EQ(top.front()->args["ir_size_before"].get<std::int64_t>(), before);
  EXPECT_EQ(top.back()->args["ir_size_after"].get<std::int64_t>(), after);
  for (std::size_t i = 1; i < top.size(); ++i) {
    EXPECT_EQ(top[i]->args["ir_size_before"], top[i - 1]->args["ir_size_after"]) << top[i]->name;
  }
  EXPECT_EQ(reg.counts().passes, static_cast<std::uint64_t>(threads.begin()->second.size()));
}

TEST(LlvmAdapter, InvalidatedPassesEndTheirSpans) {
  const TracedRun run = traced_o2({});
  ASSERT_GT(run.recorded.invalidated, 0);  // loop-deletion deleted @dead_loop's loop
  int marked = 0;
  for (const auto& e : jitscope::testing::events_with_ph(run.trace, "X")) {
    if (is_llvm_pass_span(e) && e["args"].value("ir_invalidated", false)) ++marked;
  }
  EXPECT_EQ(marked, run.recorded.invalidated);
  EXPECT_EQ(run.counts.invalidated, static_cast<std::uint64_t>(run.recorded.invalidated));
  EXPECT_EQ(run.stats.spans_ended_out_of_order, 0u);  // ended where LLVM said, not by an outer
}

TEST(LlvmAdapter, SkippedPassesAreCountedAndMarked) {
  const TracedRun run = traced_o2({});
  ASSERT_GT(run.recorded.skipped, 0);  // @untouched is optnone
  int instants = 0;
  for (const auto& e : jitscope::testing::events_with_ph(run.trace, "I")) {
    if (e["name"] != "llvm_pass_skipped") continue;
    ++instants;
    EXPECT_FALSE(e["args"].value("pass", "").empty());
  }
  EXPECT_EQ(instants, run.recorded.skipped);
  EXPECT_EQ(run.counts.skipped, static_cast<std::uint64_t>(run.recorded.skipped));
}

TEST(LlvmAdapter, AnalysesOnlyWhenAskedFor) {
  const auto count_analyses = [](const nlohmann::json& trace) {
    int n = 0;
    for (const auto& e : jitscope::testing::events_with_ph(trace, "X")) {
      if (e.value("args", nlohmann::json::object()).value("analysis", false)) ++n;
    }
    return n;
  };
  const TracedRun plain = traced_o2({});
  EXPECT_EQ(count_analyses(plain.trace), 0);
  EXPECT_EQ(plain.counts.analyses, 0u);

  const TracedRun with = traced_o2({.analyses = true});
  ASSERT_GT(with.recorded.analyses, 0);
  EXPECT_EQ(count_analyses(with.trace), with.recorded.analyses);
  EXPECT_EQ(with.counts.analyses, static_cast<std::uint64_t>(with.recorded.analyses));
  // Analyses nest inside the passes that asked for them.
  const auto threads = spans_by_thread(with.trace, [](const nlohmann::json& e) {
    return e.value("args", nlohmann::json::object()).contains("ir");
  });
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(overlaps(threads.begin()->second), std::vector<std::string>{});
}

TEST(LlvmAdapter, SpansCarryTheCompileUnitsId) {
  const TracedRun run = traced_o2({}, /*in_unit=*/true);
  int spans = 0;
  for (const auto& e : jitscope::testing::events_with_ph(run.trace, "X")) {
    if (!is_llvm_pass_span(e)) continue;
    ++spans;
    EXPECT_EQ(e["args"].value("compile_id", ""), run.compile_id) << e.dump();
  }
  EXPECT_EQ(spans, run.recorded.runs);
}

TEST(LlvmAdapter, ColumnChargesTheUnitWithTheWallTimeInPasses) {
  const TracedRun run = traced_o2({.column = "llvm_passes_us"}, /*in_unit=*/true);
  const std::vector<jitscope::CompileRecord> records = jitscope::recent_compile_records();
  ASSERT_FALSE(records.empty());
  const jitscope::CompileRecord& record = records.back();
  ASSERT_EQ(record.compile_id.str(), run.compile_id);
  ASSERT_TRUE(record.columns.count("llvm_passes_us"));
  const std::uint64_t column_us = record.columns.at("llvm_passes_us");
  // One "llvm_passes" phase around each outermost pass span, and the column
  // is their total: the outermost spans' time, nothing counted twice.
  const auto threads = spans_by_thread(run.trace, [](const nlohmann::json& e) {
    return is_llvm_pass_span(e) || e["name"] == "llvm_passes";
  });
  ASSERT_EQ(threads.size(), 1u);
  long long phases_ns = 0;
  int phases = 0, outermost = 0;
  for (const auto& s : threads.begin()->second) {
    if (s.name == "llvm_passes") {
      EXPECT_EQ(s.depth, 0);  // never nested: nothing counted twice
      phases_ns += s.end_ns - s.begin_ns;
      ++phases;
    } else if (s.depth == 1) {
      ++outermost;
    } else {
      EXPECT_GT(s.depth, 1) << s.name << " outside the column phases";
    }
  }
  EXPECT_GT(outermost, 10);
  EXPECT_EQ(phases, outermost);  // one phase per outermost pass run
  // The column is the phases' time, to a µs each (rounding).
  const double phases_us = static_cast<double>(phases_ns) / 1000.0;
  EXPECT_NEAR(static_cast<double>(column_us), phases_us, phases + 1.0);
  EXPECT_LE(column_us, record.end_time_us - record.start_time_us);
}

TEST(LlvmAdapter, NoSessionRecordsNothing) {
  llvm::PassInstrumentationCallbacks pic;
  Recorded recorded;
  record_independently(pic, recorded);
  ASSERT_FALSE(jitscope::active());
  // Attached anyway (the default registers nothing with no session).
  jitscope::llvm::Registration reg =
      jitscope::llvm::register_callbacks(pic, {.attach_without_session = true});
  EXPECT_TRUE(reg.registered());
  run_o2(pic);
  EXPECT_GT(recorded.runs, 100);
  const jitscope::llvm::Counts c = reg.counts();
  EXPECT_EQ(c.passes + c.skipped + c.analyses + c.unmatched + c.dropped, 0u);
}

// Registered with no session, the default registers nothing (LLVM would
// call every callback for every pass): a session started later records no
// pass of these callbacks until register_callbacks is called again.
TEST(LlvmAdapter, WithoutASessionTheDefaultRegistersNothingUntilCalledAgain) {
  ASSERT_FALSE(jitscope::active());
  llvm::PassInstrumentationCallbacks pic;
  Recorded recorded;
  record_independently(pic, recorded);
  const jitscope::llvm::Registration before = jitscope::llvm::register_callbacks(pic);
  EXPECT_FALSE(before.registered());
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_late"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  run_o2(pic);
  const int runs_unregistered = recorded.runs;
  const jitscope::llvm::Registration after = jitscope::llvm::register_callbacks(pic);
  EXPECT_TRUE(after.registered());
  run_o2(pic);
  session.finish();
  const nlohmann::json trace = jitscope::testing::load_trace(session.path());
  std::uint64_t pass_spans = 0;
  for (const auto& [tid, spans] : spans_by_thread(trace, is_llvm_pass_span))
    pass_spans += spans.size();
  EXPECT_GT(runs_unregistered, 100);
  // Only the second pipeline's runs: one span per pass run LLVM reported.
  EXPECT_EQ(after.counts().passes, static_cast<std::uint64_t>(recorded.runs - runs_unregistered));
  EXPECT_EQ(pass_spans, after.counts().passes);
}

// Attached before the session (Options::attach_without_session), the
// callbacks record the pipelines run once it is on.
TEST(LlvmAdapter, AttachedWithoutASessionRecordsOnceOneStarts) {
  ASSERT_FALSE(jitscope::active());
  llvm::PassInstrumentationCallbacks pic;
  Recorded recorded;
  record_independently(pic, recorded);
  const jitscope::llvm::Registration reg =
      jitscope::llvm::register_callbacks(pic, {.attach_without_session = true});
  ASSERT_TRUE(reg.registered());
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_early"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  run_o2(pic);
  session.finish();
  EXPECT_GT(recorded.runs, 100);
  EXPECT_EQ(reg.counts().passes, static_cast<std::uint64_t>(recorded.runs));
}

// What the adapter learns from a cut run, per process (whether callbacks
// get the tail, whether its line was written), as a fresh process has it
// for the test's scope, and put back after it.
struct FreshTailState {
  using State = jitscope::llvm::CallbackState;
  FreshTailState()
      : needed(State::tail_needed().exchange(false)), said(State::tail_said().exchange(false)) {}
  ~FreshTailState() {
    State::tail_needed().store(needed);
    State::tail_said().store(said);
  }
  FreshTailState(const FreshTailState&) = delete;
  FreshTailState& operator=(const FreshTailState&) = delete;
  const bool needed, said;
};

// The host's own callbacks, making a jitscope span "user_pass" around each
// pass run, kept on their own stack as a host would.
void register_user_spans(llvm::PassInstrumentationCallbacks& pic, bool to_front) {
  auto open = std::make_shared<std::vector<jitscope::Span>>();
  pic.registerBeforeNonSkippedPassCallback([open](llvm::StringRef p, llvm::Any) {
    open->emplace_back("user_pass", std::initializer_list<jitscope::Arg>{
                                        {"user_of", std::string_view(p.data(), p.size())}});
  });
  pic.registerAfterPassCallback(
      [open](llvm::StringRef, llvm::Any, const llvm::PreservedAnalyses&) { open->pop_back(); },
      to_front);
  pic.registerAfterPassInvalidatedCallback(
      [open](llvm::StringRef, const llvm::PreservedAnalyses&) { open->pop_back(); }, to_front);
}

// The pass spans and the host's "user_pass" spans per thread, after
// checking that the session cut none and left none open.
std::map<long, std::vector<jitscope::testing::TraceSpan>> nested_host_and_pass_spans(
    const jitscope::SessionStats& stats, const nlohmann::json& trace) {
  EXPECT_EQ(stats.spans_ended_out_of_order, 0u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  return spans_by_thread(trace, [](const nlohmann::json& e) {
    return is_llvm_pass_span(e) || e["name"] == "user_pass";
  });
}

TEST(LlvmAdapter, HostSpansAroundPassesNestWhateverTheRegistrationOrder) {
  struct Case {
    const char* what;
    bool user_first;
    bool to_front;
  };
  for (const Case c : {Case{"host callbacks before the attach", true, false},
                       Case{"host callbacks before the attach, ToFront", true, true},
                       Case{"host callbacks after the attach, ToFront", false, true},
                       Case{"host callbacks after the attach", false, false}}) {
    SCOPED_TRACE(c.what);
    // The last case needs jitscope's after-callbacks at the back of the
    // lists: asked for (the default's way is the next test's).
    const FreshTailState fresh;
    jitscope::llvm::Options options;
    options.tail_from_first_pass = !c.user_first && !c.to_front;
    Recorded recorded;
    jitscope::SessionStats stats;
    nlohmann::json trace;
    {
      jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_order"));
      ASSERT_TRUE(session.status().ok()) << session.status().message();
      llvm::PassInstrumentationCallbacks pic;
      record_independently(pic, recorded);
      if (c.user_first) register_user_spans(pic, c.to_front);
      jitscope::llvm::register_callbacks(pic, options);
      if (!c.user_first) register_user_spans(pic, c.to_front);
      run_o2(pic);
      stats = session.finish();
      trace = jitscope::testing::load_trace(session.path());
    }
    const auto threads = nested_host_and_pass_spans(stats, trace);
    ASSERT_EQ(threads.size(), 1u);
    const auto& spans = threads.begin()->second;
    EXPECT_EQ(overlaps(spans), std::vector<std::string>{});
    for (const auto& s : spans) {
      EXPECT_FALSE(s.args.value("jitscope_ended_with_outer", false)) << s.name;
    }
    // Each pass run is a pair: the host's span and jitscope's, one directly
    // inside the other (the outer is whichever began first), at twice LLVM's depth.
    std::vector<std::string> expected;
    for (const std::string& run : recorded.shape) {
      const auto at = run.rfind('@');
      const int depth = std::stoi(run.substr(at + 1));
      const std::string pass = run.substr(0, at) + "@";
      const std::string outer = c.user_first ? "user_pass@" : pass;
      const std::string inner = c.user_first ? pass : "user_pass@";
      expected.push_back(outer + std::to_string(2 * depth));
      expected.push_back(inner + std::to_string(2 * depth + 1));
    }
    EXPECT_EQ(shape(spans), expected);
  }
}

// By default jitscope adds no after-callbacks at the back of LLVM's lists
// (LLVM would call them on every pass run): the host's span-making
// callbacks, registered after jitscope's without ToFront, have their spans
// end with jitscope's (marked), and one line says so and names the option.
// Callbacks registered after that in the process have them, and the host's
// spans nest whole.
TEST(LlvmAdapter, ALateHostSpanEndsWithTheRunUntilTheProcessLearnsToWaitForIt) {
  const FreshTailState fresh;
  jitscope::testing::StderrCapture err;
  for (const bool learned : {false, true}) {
    SCOPED_TRACE(learned ? "callbacks registered after one needed the tail" : "the first");
    jitscope::SessionStats stats;
    nlohmann::json trace;
    {
      jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_late_host"));
      ASSERT_TRUE(session.status().ok()) << session.status().message();
      llvm::PassInstrumentationCallbacks pic;
      jitscope::llvm::register_callbacks(pic);
      register_user_spans(pic, /*to_front=*/false);
      run_o2(pic);
      stats = session.finish();
      trace = jitscope::testing::load_trace(session.path());
    }
    EXPECT_EQ(stats.spans_incomplete, 0u);
    const auto threads = spans_by_thread(trace, [](const nlohmann::json& e) {
      return is_llvm_pass_span(e) || e["name"] == "user_pass";
    });
    ASSERT_EQ(threads.size(), 1u);
    const auto& spans = threads.begin()->second;
    EXPECT_EQ(overlaps(spans), std::vector<std::string>{});
    std::uint64_t host = 0, marked = 0;
    for (const auto& s : spans) {
      if (s.name != "user_pass") continue;
      ++host;
      marked += s.args.value("jitscope_ended_with_outer", false) ? 1 : 0;
    }
    EXPECT_GT(host, 100u);
    EXPECT_EQ(marked, learned ? 0u : host);
    EXPECT_EQ(stats.spans_ended_out_of_order, marked);
  }
  const std::string said = err.text();
  EXPECT_EQ(count_lines_starting(said, "jitscope: jitscope::llvm: a span the host"), 1) << said;
  EXPECT_NE(said.find("Options::tail_from_first_pass"), std::string::npos) << said;
}

// Four threads run their pipelines through one callbacks object, the host's
// span-making callbacks registered after the attach without ToFront. With
// Options::tail_from_first_pass, on every thread the host's spans nest
// whole inside jitscope's, and the after-callbacks jitscope adds when the
// first pass runs are added once, while other threads may already be
// running passes (the ThreadSanitizer run's subject). By default, each ends
// with jitscope's span (marked), the threads noting it for later callbacks
// at once.
void threads_share_one_callbacks_object(bool from_first_pass) {
  const FreshTailState fresh;
  constexpr int kThreads = 4;
  jitscope::SessionStats stats;
  nlohmann::json trace;
  jitscope::llvm::Counts counts;
  {
    jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_threads"));
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    llvm::PassInstrumentationCallbacks pic;
    jitscope::llvm::Options options;
    options.tail_from_first_pass = from_first_pass;
    const jitscope::llvm::Registration reg = jitscope::llvm::register_callbacks(pic, options);
    // The host's spans, on a stack per thread.
    static thread_local std::vector<jitscope::Span> open;
    pic.registerBeforeNonSkippedPassCallback(
        [](llvm::StringRef, llvm::Any) { open.emplace_back("user_pass"); });
    pic.registerAfterPassCallback(
        [](llvm::StringRef, llvm::Any, const llvm::PreservedAnalyses&) { open.pop_back(); });
    pic.registerAfterPassInvalidatedCallback(
        [](llvm::StringRef, const llvm::PreservedAnalyses&) { open.pop_back(); });
    // Each thread's pipeline on its own module, made here one at a time.
    std::vector<std::unique_ptr<jitscope::testing::O2Pipeline>> pipelines;
    for (int i = 0; i < kThreads; ++i) {
      pipelines.push_back(std::make_unique<jitscope::testing::O2Pipeline>(pic, kModule, false));
      ASSERT_TRUE(pipelines.back()->parsed) << pipelines.back()->error;
    }
    std::vector<std::thread> threads;
    for (auto& p : pipelines) {
      threads.emplace_back([&p] {
        p->run();
        // Freed here: LeakSanitizer reports each thread's buffer of this
        // thread_local stack as leaked at exit otherwise.
        std::vector<jitscope::Span>().swap(open);
      });
    }
    for (std::thread& t : threads) t.join();
    counts = reg.counts();
    stats = session.finish();
    trace = jitscope::testing::load_trace(session.path());
  }
  EXPECT_EQ(stats.spans_incomplete, 0u);
  const auto threads = spans_by_thread(trace, [](const nlohmann::json& e) {
    return is_llvm_pass_span(e) || e["name"] == "user_pass";
  });
  ASSERT_EQ(threads.size(), static_cast<std::size_t>(kThreads));
  std::uint64_t marked = 0;
  std::uint64_t pass_spans = 0;
  for (const auto& [tid, spans] : threads) {
    SCOPED_TRACE("thread " + std::to_string(tid));
    EXPECT_EQ(overlaps(spans), std::vector<std::string>{});
    // In begin order: each pass span, then the host's span directly inside it.
    ASSERT_EQ(spans.size() % 2, 0u);
    for (std::size_t i = 0; i < spans.size(); i += 2) {
      EXPECT_NE(spans[i].name, "user_pass");
      EXPECT_EQ(spans[i + 1].name, "user_pass");
      EXPECT_EQ(spans[i + 1].depth, spans[i].depth + 1);
      marked += spans[i + 1].args.value("jitscope_ended_with_outer", false) ? 1 : 0;
    }
    pass_spans += spans.size() / 2;
  }
  EXPECT_EQ(pass_spans, counts.passes);
  EXPECT_GT(counts.passes, static_cast<std::uint64_t>(kThreads) * 100);
  EXPECT_EQ(stats.spans_ended_out_of_order, marked);
  EXPECT_EQ(marked, from_first_pass ? 0u : pass_spans);
  EXPECT_EQ(jitscope::llvm::CallbackState::tail_needed().load(), !from_first_pass);
}

TEST(LlvmAdapter, ThreadsSharingOneCallbacksObjectNestWithTheHostsSpans) {
  threads_share_one_callbacks_object(/*from_first_pass=*/true);
}

TEST(LlvmAdapter, ThreadsSharingOneCallbacksObjectByDefaultCutTheHostsSpans) {
  threads_share_one_callbacks_object(/*from_first_pass=*/false);
}

TEST(LlvmAdapter, SecondRegistrationOnTheSameCallbacksIsANoOp) {
  Recorded recorded;
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_twice"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  llvm::PassInstrumentationCallbacks pic;
  record_independently(pic, recorded);
  const jitscope::llvm::Registration first = jitscope::llvm::register_callbacks(pic);
  jitscope::testing::StderrCapture err;
  const jitscope::llvm::Registration second =
      jitscope::llvm::register_callbacks(pic, {.analyses = true});
  const jitscope::llvm::Registration third = jitscope::llvm::register_callbacks(pic);
  const std::string said = err.text();
  EXPECT_EQ(count_lines_starting(said, "jitscope:"), 1) << said;
  EXPECT_NE(said.find("registers nothing"), std::string::npos) << said;
  EXPECT_TRUE(second.registered());
  run_o2(pic);
  const jitscope::SessionStats stats = session.finish();
  const nlohmann::json trace = jitscope::testing::load_trace(session.path());
  int spans = 0, analyses = 0;
  for (const auto& e : jitscope::testing::events_with_ph(trace, "X")) {
    if (is_llvm_pass_span(e)) ++spans;
    if (e.value("args", nlohmann::json::object()).value("analysis", false)) ++analyses;
  }
  EXPECT_EQ(spans, recorded.runs);  // one attach's spans, not two or three
  EXPECT_EQ(analyses, 0);           // the second call's options were not applied
  EXPECT_EQ(first.counts().passes, static_cast<std::uint64_t>(recorded.runs));
  EXPECT_EQ(second.counts().passes, first.counts().passes);  // the first's registration
  EXPECT_EQ(third.counts().passes, first.counts().passes);
  EXPECT_EQ(stats.spans_ended_out_of_order, 0u);
}

TEST(LlvmAdapter, ANewCallbacksObjectAtAFreedOnesAddressRegisters) {
  // The same storage each time: the address of the object before, whose
  // callbacks (and attachment) went with it.
  std::optional<llvm::PassInstrumentationCallbacks> pic;
  jitscope::testing::StderrCapture err;
  for (int i = 0; i < 3; ++i) {
    pic.emplace();
    const jitscope::llvm::Registration reg =
        jitscope::llvm::register_callbacks(*pic, {.attach_without_session = true});
    EXPECT_TRUE(reg.registered()) << i;
    pic.reset();
  }
  const std::string said = err.text();
  EXPECT_EQ(count_lines_starting(said, "jitscope:"), 0) << said;
}

// Callbacks attached while a session was on stay attached after it stops:
// register_callbacks on them again, with no session, gives back the first
// registration ("Once"), not an empty one. Last in the file: its second
// registration says the once-per-process line that
// SecondRegistrationOnTheSameCallbacksIsANoOp checks, when the file's tests
// run in one process.
TEST(LlvmAdapter, AfterTheSessionStopsTheFirstRegistrationIsStillReturned) {
  llvm::PassInstrumentationCallbacks pic;
  jitscope::llvm::Registration first;
  {
    jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_stopped"));
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    first = jitscope::llvm::register_callbacks(pic);
    ASSERT_TRUE(first.registered());
    run_o2(pic);
    session.finish();
  }
  ASSERT_FALSE(jitscope::active());
  const jitscope::llvm::Registration again = jitscope::llvm::register_callbacks(pic);
  EXPECT_TRUE(again.registered());
  EXPECT_GT(again.counts().passes, 100u);
  EXPECT_EQ(again.counts().passes, first.counts().passes);
}

}  // namespace
