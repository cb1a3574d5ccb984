// The LLVM adapter's span args against what LLVM handed its callbacks: a
// callback registered beside the adapter writes down, for every pass run
// and analysis, the IR unit's kind, its name and an SCC's size, read here
// with LLVM's own accessors; the trace must hold exactly those args. The
// module's function names take each way an arg is written: inside its
// record (up to 8 bytes), in the slots after it (up to 128), and through
// the library's general path (longer), with a quote and UTF-8 among them.
#include <jitscope/llvm.hpp>

#include "adapters/adapter_trace.hpp"
#include "adapters/o2_pipeline.hpp"

#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopInfo.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct RunArgs {
  std::string pass, ir, ir_name;
  std::uint64_t functions = 0;
  bool analysis = false;
  auto tie() const { return std::tie(pass, ir, ir_name, functions, analysis); }
  bool operator<(const RunArgs& o) const { return tie() < o.tie(); }
  bool operator==(const RunArgs& o) const { return tie() == o.tie(); }
};

std::ostream& operator<<(std::ostream& os, const RunArgs& r) {
  return os << r.pass << " " << r.ir << " '" << r.ir_name << "' " << r.functions
            << (r.analysis ? " analysis" : "");
}

RunArgs args_llvm_gave(llvm::StringRef pass, const llvm::Any& ir, bool analysis) {
  RunArgs r;
  r.pass = pass.str();
  r.analysis = analysis;
  if (const auto* f = llvm::any_cast<const llvm::Function*>(&ir)) {
    r.ir = "function";
    r.ir_name = (*f)->getName().str();
  } else if (const auto* m = llvm::any_cast<const llvm::Module*>(&ir)) {
    r.ir = "module";
    r.ir_name = (*m)->getModuleIdentifier();
  } else if (const auto* l = llvm::any_cast<const llvm::Loop*>(&ir)) {
    r.ir = "loop";
    r.ir_name = (*l)->getHeader()->getName().str();
  } else if (const auto* c = llvm::any_cast<const llvm::LazyCallGraph::SCC*>(&ir)) {
    r.ir = "cgscc";
    r.functions = static_cast<std::uint64_t>((*c)->size());
    r.ir_name = (*c)->begin()->getFunction().getName().str();
  } else {
    r.ir = "unknown";
  }
  return r;
}

// Functions named 1, 9, 22, 128, 129 and 200 bytes long, each with a loop,
// calling one another (SCCs for the CGSCC passes).
std::string module_text(std::vector<std::string>& names) {
  names = {"f",
           "q\"uote \xC3\xBC",
           std::string(22, 'm'),
           std::string(128, 'x'),
           std::string(129, 'y'),
           std::string(200, 'z')};
  const auto quoted = [](const std::string& n) {
    std::string q = "@\"";
    for (const char c : n) {
      if (c == '"' || static_cast<unsigned char>(c) >= 0x80) {
        static const char* kHex = "0123456789ABCDEF";
        q += '\\';
        q += kHex[static_cast<unsigned char>(c) >> 4];
        q += kHex[static_cast<unsigned char>(c) & 15];
      } else {
        q += c;
      }
    }
    return q + "\"";
  };
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += "define i32 " + quoted(names[i]) + "(i32 %n) {\nentry:\n  br label %loop\nloop:\n" +
            "  %i = phi i32 [0, %entry], [%i.next, %loop]\n"
            "  %acc = phi i32 [0, %entry], [%acc.next, %loop]\n"
            "  %acc.next = add i32 %acc, %i\n  %i.next = add i32 %i, 1\n"
            "  %done = icmp sge i32 %i.next, %n\n  br i1 %done, label %exit, label %loop\n"
            "exit:\n";
    if (i == 0) {
      text += "  ret i32 %acc.next\n}\n";
    } else {
      text += "  %r = call i32 " + quoted(names[i - 1]) + "(i32 %acc.next)\n  ret i32 %r\n}\n";
    }
  }
  return text;
}

// Runs default<O2> over module_text's functions in a session of `cfg`, and
// expects the trace's pass and analysis spans to carry exactly the args
// LLVM handed a callback registered beside the adapter.
void expect_args_as_llvm_gave(const jitscope::Config& cfg) {
  jitscope::testing::ScopedSession session(cfg);
  if (!session.status().ok()) GTEST_SKIP() << "no session here: " << session.status().message();
  std::vector<RunArgs> expected;
  llvm::PassInstrumentationCallbacks pic;
  pic.registerBeforeNonSkippedPassCallback(
      [&](llvm::StringRef p, llvm::Any ir) { expected.push_back(args_llvm_gave(p, ir, false)); });
  pic.registerBeforeAnalysisCallback(
      [&](llvm::StringRef p, llvm::Any ir) { expected.push_back(args_llvm_gave(p, ir, true)); });
  const jitscope::llvm::Registration reg =
      jitscope::llvm::register_callbacks(pic, {.analyses = true});
  ASSERT_TRUE(reg.registered());
  std::vector<std::string> names;
  {
    jitscope::testing::O2Pipeline o2(pic, module_text(names), /*standard=*/false);
    ASSERT_TRUE(o2.parsed) << o2.error;
    o2.run();
  }
  const jitscope::SessionStats stats = session.finish();
  const nlohmann::json trace = jitscope::testing::load_trace(session.path());

  std::vector<RunArgs> written;
  for (const auto& e : jitscope::testing::events_with_ph(trace, "X")) {
    const auto args = e.value("args", nlohmann::json::object());
    if (!args.contains("ir")) continue;
    written.push_back({e["name"].get<std::string>(), args["ir"].get<std::string>(),
                       args.value("ir_name", std::string()),
                       args.value("functions", std::uint64_t{0}), args.value("analysis", false)});
  }
  ASSERT_GT(expected.size(), 500u);  // default<O2> really ran, with its analyses
  std::sort(expected.begin(), expected.end());
  std::sort(written.begin(), written.end());
  EXPECT_EQ(written, expected);
  // Each of the names was an IR unit's name in some run, whole.
  for (const std::string& n : names) {
    EXPECT_TRUE(std::any_of(written.begin(), written.end(),
                            [&](const RunArgs& r) { return r.ir == "function" && r.ir_name == n; }))
        << n.size() << " bytes";
  }
  EXPECT_EQ(reg.counts().dropped, 0u);
  EXPECT_EQ(stats.events_dropped, 0u);
}

TEST(LlvmAdapterArgs, EveryRunsArgsAreWhatLlvmGaveItsCallbacks) {
  expect_args_as_llvm_gave(jitscope::testing::args_config("llvm_adapter_args"));
}

// Through a ring small enough that names' slots wrap at its end.
TEST(LlvmAdapterArgs, NamesWrittenAcrossTheRingsEndArriveWhole) {
  expect_args_as_llvm_gave(jitscope::testing::args_config("llvm_adapter_args_wrap", true));
}

}  // namespace
