// The MLIR adapter's span args against what MLIR handed its callbacks: an
// instrumentation added beside the adapter writes down, for every pass run,
// analysis and pipeline, the pass's name and argument, the op's name and
// sym_name (read with MLIR's own accessors) and the location the test gave
// that function in the source; the trace must hold exactly those args. The
// functions' names and locations take each way a string arg is written:
// inside its record (up to 8 bytes), in the slots after it (up to 128),
// and through the library's general path (longer), with a quote and UTF-8
// among them; the locations take each form the adapter reads (a file
// location, one inside a name, a call site or a fusion, a name alone, none,
// a path too long for its buffer).
#include <jitscope/mlir.hpp>

#include "adapters/adapter_trace.hpp"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/SymbolTable.h>
#include <mlir/Parser/Parser.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Transforms/Passes.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace {

// One span's args, as the trace holds them ("-": the arg is absent).
struct RunArgs {
  std::string name, pass = "-", op, ir_name = "-", location = "-";
  bool analysis = false;
  auto tie() const { return std::tie(name, pass, op, ir_name, location, analysis); }
  bool operator<(const RunArgs& o) const { return tie() < o.tie(); }
  bool operator==(const RunArgs& o) const { return tie() == o.tie(); }
};
std::ostream& operator<<(std::ostream& os, const RunArgs& r) {
  return os << r.name << " pass '" << r.pass << "' op " << r.op << " ir_name '" << r.ir_name
            << "' location '" << r.location << "'" << (r.analysis ? " analysis" : "");
}

// A pipeline span's args.
struct PipelineArgs {
  std::string op, parent_pass;
  std::uint64_t parent_thread = 0;
  bool threaded = true;
  auto tie() const { return std::tie(op, parent_pass, parent_thread, threaded); }
  bool operator<(const PipelineArgs& o) const { return tie() < o.tie(); }
  bool operator==(const PipelineArgs& o) const { return tie() == o.tie(); }
};
std::ostream& operator<<(std::ostream& os, const PipelineArgs& p) {
  return os << "pipeline " << p.op << " of '" << p.parent_pass << "' on " << p.parent_thread
            << (p.threaded ? " threaded" : "");
}

// The functions: a name and the location written after it in the source,
// with the "location" arg the adapter must write for it.
struct Function {
  std::string name, loc, expected;
};

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) >= 0x80) {
      static const char* kHex = "0123456789ABCDEF";
      q += '\\';
      q += kHex[static_cast<unsigned char>(c) >> 4];
      q += kHex[static_cast<unsigned char>(c) & 15];
    } else {
      q += c;
    }
  }
  return q + "\"";
}

std::vector<Function> functions() {
  const std::string path100 = "src/" + std::string(93, 'p') + ".py";  // 100 bytes
  const std::string path126 = "src/" + std::string(119, 'q') + ".py";
  const std::string path240 = "src/" + std::string(233, 'r') + ".py";
  const auto file = [](const std::string& path, int line, int col) {
    return std::make_pair(
        "loc(" + quoted(path) + ":" + std::to_string(line) + ":" + std::to_string(col) + ")",
        path + ":" + std::to_string(line) + ":" + std::to_string(col));
  };
  std::vector<Function> out;
  const auto add = [&](std::string name, std::pair<std::string, std::string> loc) {
    out.push_back({std::move(name), std::move(loc.first), std::move(loc.second)});
  };
  add("f", file("a.py", 1, 2));                                // all inside records
  add("q\"uote \xC3\xBC", file("kernels/attn.py", 4096, 17));  // 9 bytes, 20 bytes
  add(std::string(22, 'm'), file(path100, 123456, 7));         // a location of 111
  add(std::string(128, 'x'), file(path126, 1, 1));             // 128 inline; 130 not
  // A path too long for the adapter's buffer: the path alone.
  add(std::string(129, 'y'), {file(path240, 5, 5).first, path240});
  add("named", {"loc(\"fn\"(\"gen.py\":40:7))", "gen.py:40:7"});  // inside a NameLoc
  add("called", {"loc(callsite(\"inner.py\":3:4 at \"outer.py\":5:6))", "inner.py:3:4"});
  add("fused", {"loc(fused[\"f1.py\":1:1, \"f2.py\":2:2])", "f1.py:1:1"});
  add(std::string(200, 'z'), {"loc(\"just_a_name\")", "just_a_name"});  // a name alone
  add("nowhere", {"loc(unknown)", "-"});
  return out;
}

std::string module_text(const std::vector<Function>& fns) {
  std::string text;
  for (const Function& f : fns) {
    text += jitscope::testing::mlir_function_text("@" + quoted(f.name), f.loc);
  }
  return text;
}

std::string view_str(llvm::StringRef s) { return s.str(); }

// Writes down what MLIR handed it, with MLIR's accessors; the location is
// the one the test wrote for that function (by its name), else none.
struct ArgsRecorder : public mlir::PassInstrumentation {
  ArgsRecorder(std::vector<RunArgs>* runs, std::vector<PipelineArgs>* pipelines,
               const std::map<std::string, std::string>* locations)
      : runs(runs), pipelines(pipelines), locations(locations) {}
  std::vector<RunArgs>* runs;
  std::vector<PipelineArgs>* pipelines;
  const std::map<std::string, std::string>* locations;

  RunArgs of(mlir::Operation* op) const {
    RunArgs r;
    r.op = view_str(op->getName().getStringRef());
    if (op->hasAttr(mlir::SymbolTable::getSymbolAttrName())) {
      r.ir_name = view_str(mlir::SymbolTable::getSymbolName(op).getValue());
      const auto at = locations->find(r.ir_name);
      if (at != locations->end()) r.location = at->second;
    }
    return r;
  }
  void runBeforePass(mlir::Pass* pass, mlir::Operation* op) override {
    RunArgs r = of(op);
    r.name = view_str(pass->getName());
    r.pass = view_str(pass->getArgument());
    runs->push_back(r);
  }
  void runBeforeAnalysis(llvm::StringRef name, mlir::TypeID, mlir::Operation* op) override {
    RunArgs r = of(op);
    r.name = view_str(name);
    r.analysis = true;
    runs->push_back(r);
  }
  void runBeforePipeline(std::optional<mlir::OperationName> name,
                         const PipelineParentInfo& parent) override {
    pipelines->push_back({name ? view_str(name->getStringRef()) : "any",
                          parent.parentPass ? view_str(parent.parentPass->getName()) : "-",
                          parent.parentThreadID, parent.parentThreadID != llvm::get_threadid()});
  }
};

// The two lists hold the same runs (in any order); else the runs only one
// of them holds, a few of each.
template <class Run>
void expect_same_runs(std::vector<Run> written, std::vector<Run> expected) {
  std::sort(written.begin(), written.end());
  std::sort(expected.begin(), expected.end());
  if (written == expected) return;
  std::vector<Run> only_written, only_expected;
  std::set_difference(written.begin(), written.end(), expected.begin(), expected.end(),
                      std::back_inserter(only_written));
  std::set_difference(expected.begin(), expected.end(), written.begin(), written.end(),
                      std::back_inserter(only_expected));
  ADD_FAILURE() << written.size() << " runs written, " << expected.size() << " expected";
  for (std::size_t i = 0; i < only_written.size() && i < 5; ++i) {
    ADD_FAILURE() << "written, not expected: " << only_written[i];
  }
  for (std::size_t i = 0; i < only_expected.size() && i < 5; ++i) {
    ADD_FAILURE() << "expected, not written: " << only_expected[i];
  }
}

// Runs canonicalize and cse on each function (the module's own location
// is unknown: its runs have none), three times, in a session of `cfg`, and
// expects the spans to carry exactly the args MLIR handed the recorder.
void expect_args_as_mlir_gave(const jitscope::Config& cfg) {
  const std::vector<Function> fns = functions();
  std::map<std::string, std::string> locations;
  for (const Function& f : fns) locations[f.name] = f.expected;
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  const std::string text = module_text(fns);
  mlir::ParserConfig config(&context);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, config);
  ASSERT_TRUE(module);
  module->getOperation()->setLoc(mlir::UnknownLoc::get(&context));

  jitscope::testing::ScopedSession session(cfg);
  if (!session.status().ok()) GTEST_SKIP() << "no session here: " << session.status().message();
  std::vector<RunArgs> expected;
  std::vector<PipelineArgs> expected_pipelines;
  jitscope::mlir::Counts counts;
  {
    mlir::PassManager pm(&context);
    mlir::OpPassManager& nested = pm.nest<mlir::func::FuncOp>();
    nested.addPass(mlir::createCanonicalizerPass());
    nested.addPass(mlir::createCSEPass());
    auto ours = jitscope::mlir::make_instrumentation();
    jitscope::mlir::Instrumentation* instrumentation = ours.get();
    pm.addInstrumentation(std::move(ours));
    pm.addInstrumentation(
        std::make_unique<ArgsRecorder>(&expected, &expected_pipelines, &locations));
    for (int round = 0; round < 3; ++round) ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
    counts = instrumentation->counts();
  }
  const jitscope::SessionStats stats = session.finish();
  const nlohmann::json trace = jitscope::testing::load_trace(session.path());

  std::vector<RunArgs> written;
  std::vector<PipelineArgs> written_pipelines;
  for (const auto& e : jitscope::testing::events_with_ph(trace, "X")) {
    const auto args = e.value("args", nlohmann::json::object());
    if (e["name"] == "pipeline") {
      written_pipelines.push_back({args.value("op", "?"), args.value("parent_pass", "-"),
                                   args.value("parent_thread", std::uint64_t{0}),
                                   args.value("threaded", true)});
      continue;
    }
    if (!args.contains("op")) continue;
    written.push_back({e["name"].get<std::string>(), args.value("pass", "-"),
                       args["op"].get<std::string>(), args.value("ir_name", "-"),
                       args.value("location", "-"), args.value("analysis", false)});
  }
  // Three rounds of: the adaptor on the module, two passes on each function,
  // and the analyses cse asked for.
  ASSERT_GE(expected.size(), 3 * (1 + 2 * fns.size()));
  expect_same_runs(written, expected);
  ASSERT_EQ(written_pipelines.size(), 3 * fns.size());
  expect_same_runs(written_pipelines, expected_pipelines);
  // Each function's name and location was some run's, whole.
  for (const Function& f : fns) {
    EXPECT_TRUE(std::any_of(
        written.begin(), written.end(),
        [&](const RunArgs& r) { return r.ir_name == f.name && r.location == f.expected; }))
        << f.name.size() << " bytes, " << f.expected;
  }
  EXPECT_EQ(counts.dropped, 0u);
  EXPECT_EQ(stats.events_dropped, 0u);
}

TEST(MlirAdapterArgs, EveryRunsArgsAreWhatMlirGaveItsCallbacks) {
  expect_args_as_mlir_gave(jitscope::testing::args_config("mlir_adapter_args"));
}

// Through a ring small enough that args' slots wrap at its end.
TEST(MlirAdapterArgs, ArgsWrittenAcrossTheRingsEndArriveWhole) {
  expect_args_as_mlir_gave(jitscope::testing::args_config("mlir_adapter_args_wrap", true));
}

}  // namespace
