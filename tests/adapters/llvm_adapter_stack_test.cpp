// jitscope::llvm's per-thread stacks of open runs (detail/pass_run_stack.hpp),
// driven through LLVM's own PassInstrumentation as a pass manager calls it,
// in the orders a real pipeline rarely shows: two pass managers' runs
// interleaved on one thread (the stack found last is another's), an end
// that skips runs still open inside it, nesting deeper than the stack's
// first room, runs left open when their thread exits, and an end with no
// begin. Each trace is checked against the nesting the calls made. And
// Options::ir_size: a run's instruction counts against the instructions the
// test itself added between its before and after callbacks.
#include <jitscope/llvm.hpp>

#include "adapters/adapter_trace.hpp"
#include "trace_support.hpp"

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>

#include <algorithm>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using jitscope::testing::is_llvm_pass_span;
using jitscope::testing::overlaps;
using jitscope::testing::spans_by_thread;
using jitscope::testing::TraceSpan;

// A pass type per N: its name is LLVM's type name of Pass<N>.
template <int N>
struct Pass : llvm::PassInfoMixin<Pass<N>> {};

template <int N>
std::string name_of() {
  return Pass<N>::name().str();
}

// A module with one function, and the callbacks of two pass managers.
struct Fixture {
  llvm::LLVMContext context;
  llvm::Module module{"stack_test", context};
  llvm::Function* function =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
                             llvm::Function::ExternalLinkage, "f", module);
  llvm::PassInstrumentationCallbacks pic_a, pic_b;
  llvm::PassInstrumentation a{&pic_a}, b{&pic_b};
  llvm::PreservedAnalyses all = llvm::PreservedAnalyses::all();

  template <int N>
  void begin(const llvm::PassInstrumentation& pi) {
    EXPECT_TRUE(pi.runBeforePass(Pass<N>{}, *function));
  }
  template <int N>
  void end(const llvm::PassInstrumentation& pi) {
    pi.runAfterPass(Pass<N>{}, *function, all);
  }
};

// The one thread's pass spans, nesting checked.
std::vector<TraceSpan> pass_spans(const jitscope::testing::ScopedSession& session) {
  const auto by_thread =
      spans_by_thread(jitscope::testing::load_trace(session.path()), is_llvm_pass_span);
  EXPECT_EQ(by_thread.size(), 1u);
  if (by_thread.empty()) return {};
  const std::vector<TraceSpan>& spans = by_thread.begin()->second;
  const std::vector<std::string> bad = overlaps(spans);
  EXPECT_TRUE(bad.empty()) << bad.front();
  return spans;
}

TEST(LlvmAdapterStack, TwoPassManagersInterleavedOnOneThreadEachEndTheirOwn) {
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_stack_two"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  Fixture f;
  const jitscope::llvm::Registration ra = jitscope::llvm::register_callbacks(f.pic_a);
  const jitscope::llvm::Registration rb = jitscope::llvm::register_callbacks(f.pic_b);
  // A's run holds B's, which holds A's again: each callback finds the
  // other's stack as the one used last.
  f.begin<1>(f.a);
  f.begin<2>(f.b);
  f.begin<3>(f.a);
  f.end<3>(f.a);
  f.end<2>(f.b);
  f.end<1>(f.a);
  EXPECT_EQ(ra.counts().passes, 2u);
  EXPECT_EQ(rb.counts().passes, 1u);
  EXPECT_EQ(ra.counts().unmatched + rb.counts().unmatched, 0u);
  session.finish();
  const std::vector<TraceSpan> spans = pass_spans(session);
  ASSERT_EQ(spans.size(), 3u);
  const std::string names[] = {name_of<1>(), name_of<2>(), name_of<3>()};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(spans[i].name, names[i]);
    EXPECT_EQ(spans[i].depth, i) << names[i];
    EXPECT_FALSE(spans[i].args.value("jitscope_ended_with_outer", false)) << names[i];
    EXPECT_EQ(spans[i].args.value("ir_name", ""), "f");
  }
}

TEST(LlvmAdapterStack, AnEndThatSkipsRunsOpenInsideItEndsThemWithIt) {
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_stack_skip"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  Fixture f;
  const jitscope::llvm::Registration r = jitscope::llvm::register_callbacks(f.pic_a);
  f.begin<1>(f.a);
  f.begin<2>(f.a);
  f.begin<3>(f.a);
  f.end<1>(f.a);    // 2 and 3 never see their end
  f.begin<4>(f.a);  // the stack is empty again: 4 is outermost
  f.end<4>(f.a);
  f.end<3>(f.a);  // already ended with 1: nothing begun matches
  EXPECT_EQ(r.counts().passes, 4u);
  EXPECT_EQ(r.counts().unmatched, 1u);
  session.finish();
  const std::vector<TraceSpan> spans = pass_spans(session);
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].name, name_of<1>());
  EXPECT_FALSE(spans[0].args.value("jitscope_ended_with_outer", false));
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(spans[i].depth, i);
    EXPECT_TRUE(spans[i].args.value("jitscope_ended_with_outer", false)) << spans[i].name;
    EXPECT_LE(spans[i].end_ns, spans[0].end_ns);
  }
  EXPECT_EQ(spans[3].name, name_of<4>());
  EXPECT_EQ(spans[3].depth, 0);
  EXPECT_GE(spans[3].begin_ns, spans[0].end_ns);
}

// Twenty runs deep: the stack grows past its first room (8) while runs are
// open, and each end still finds its own.
template <int N>
void nest(Fixture& f) {
  if constexpr (N <= 20) {
    f.begin<N>(f.a);
    nest<N + 1>(f);
    f.end<N>(f.a);
  }
}

TEST(LlvmAdapterStack, RunsNestDeeperThanTheStacksFirstRoom) {
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_stack_deep"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  Fixture f;
  const jitscope::llvm::Registration r = jitscope::llvm::register_callbacks(f.pic_a);
  nest<1>(f);
  nest<1>(f);
  EXPECT_EQ(r.counts().passes, 40u);
  EXPECT_EQ(r.counts().unmatched + r.counts().dropped, 0u);
  session.finish();
  const std::vector<TraceSpan> spans = pass_spans(session);
  ASSERT_EQ(spans.size(), 40u);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].depth, static_cast<int>(i % 20)) << spans[i].name;
    EXPECT_FALSE(spans[i].args.value("jitscope_ended_with_outer", false)) << spans[i].name;
  }
}

TEST(LlvmAdapterStack, RunsLeftOpenWhenTheirThreadExitsEndThere) {
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_stack_exit"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  Fixture f;
  const jitscope::llvm::Registration r = jitscope::llvm::register_callbacks(f.pic_a);
  std::thread([&f] {
    f.begin<1>(f.a);
    f.begin<2>(f.a);  // the thread ends inside both
  }).join();
  // This thread's own stack is another: its runs are unaffected.
  f.begin<3>(f.a);
  f.end<3>(f.a);
  EXPECT_EQ(r.counts().passes, 3u);
  session.finish();
  const auto by_thread =
      spans_by_thread(jitscope::testing::load_trace(session.path()), is_llvm_pass_span);
  ASSERT_EQ(by_thread.size(), 2u);
  std::vector<std::string> names;
  for (const auto& [tid, spans] : by_thread) {
    for (const TraceSpan& s : spans) names.push_back(s.name + "@" + std::to_string(s.depth));
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{name_of<1>() + "@0", name_of<2>() + "@1",
                                             name_of<3>() + "@0"}));
}

// Options::ir_size on runs driven by hand: the function gains three
// instructions inside one run and loses one inside the next; the module's
// run counts every function's. The counts are what the test built. On
// both clocks: on the monotonic one every span takes the library's path,
// where the inline end's test never matches.
void sized_runs(jitscope::ClockChoice clock) {
  jitscope::Config config = jitscope::testing::test_config("llvm_stack_size");
  config.clock = clock;
  jitscope::testing::ScopedSession session(config);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  Fixture f;
  const jitscope::llvm::Registration r =
      jitscope::llvm::register_callbacks(f.pic_a, {.ir_size = true});
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(f.context, "entry", f.function);
  llvm::IRBuilder<> build(entry);
  build.CreateRetVoid();
  build.SetInsertPoint(entry->getTerminator());
  // A second function of 2 instructions, for the module's count.
  llvm::Function* g = llvm::Function::Create(f.function->getFunctionType(),
                                             llvm::Function::ExternalLinkage, "g", f.module);
  llvm::IRBuilder<> gb(llvm::BasicBlock::Create(f.context, "entry", g));
  gb.CreateAlloca(gb.getInt32Ty());
  gb.CreateRetVoid();

  f.begin<1>(f.a);  // f: 1 instruction (its ret)
  llvm::AllocaInst* slot = build.CreateAlloca(build.getInt32Ty());
  llvm::Value* loaded = build.CreateLoad(build.getInt32Ty(), slot);
  llvm::Value* sum = build.CreateAdd(loaded, loaded);
  f.end<1>(f.a);  // f: 4
  f.begin<2>(f.a);
  llvm::cast<llvm::Instruction>(sum)->eraseFromParent();
  f.end<2>(f.a);  // f: 3
  EXPECT_TRUE(f.a.runBeforePass(Pass<3>{}, f.module));
  f.a.runAfterPass(Pass<3>{}, f.module, f.all);  // the module: 3 + 2

  EXPECT_EQ(r.counts().passes, 3u);
  session.finish();
  const std::vector<TraceSpan> spans = pass_spans(session);
  ASSERT_EQ(spans.size(), 3u);
  using Sizes = std::pair<std::int64_t, std::int64_t>;
  const auto sizes = [](const TraceSpan& s) {
    return Sizes(s.args.value("ir_size_before", std::int64_t{-1}),
                 s.args.value("ir_size_after", std::int64_t{-1}));
  };
  EXPECT_EQ(sizes(spans[0]), Sizes(1, 4));
  EXPECT_EQ(sizes(spans[1]), Sizes(4, 3));
  EXPECT_EQ(sizes(spans[2]), Sizes(5, 5));
  EXPECT_EQ(spans[2].args.value("ir", ""), "module");
}

TEST(LlvmAdapterStack, IrSizeIsTheInstructionsBeforeAndAfterEachRun) {
  for (const auto clock : {jitscope::ClockChoice::kAuto, jitscope::ClockChoice::kMonotonic}) {
    SCOPED_TRACE(clock == jitscope::ClockChoice::kAuto ? "auto clock" : "monotonic clock");
    sized_runs(clock);
  }
}

// Without Options::ir_size the spans carry no size.
TEST(LlvmAdapterStack, IrSizeIsOffByDefault) {
  jitscope::testing::ScopedSession session(jitscope::testing::test_config("llvm_stack_nosize"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  Fixture f;
  const jitscope::llvm::Registration r = jitscope::llvm::register_callbacks(f.pic_a);
  f.begin<1>(f.a);
  f.end<1>(f.a);
  session.finish();
  const std::vector<TraceSpan> spans = pass_spans(session);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_FALSE(spans[0].args.contains("ir_size_before"));
  EXPECT_FALSE(spans[0].args.contains("ir_size_after"));
}

}  // namespace
