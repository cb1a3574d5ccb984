// jitscope-report on compiler passes and their pipelines, end to end (the
// binary on traces built here in the adapters' shapes): which spans are
// passes (the LLVM adapter's "ir" arg, the MLIR adapter's "pass", never an
// analysis or a span with other args), each pipeline's runs and time (the
// outermost passes inside the span that ran them, in a phase, directly in
// a unit's slice, or outside every span), and the compare gate per pass
// and per pipeline: a slowed pass fails naming it, jitter within the
// threshold passes, and work moved into a new pass fails its pipeline.
// Not covered: the adapters writing these args on real pipelines
// (llvm_adapter_test, mlir_adapter_test).
#include "report_support.hpp"

#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace jitscope::testing::report;

const std::string kLlvmFunction = R"("ir":"function","ir_name":"f")";
const std::string kLlvmModule = R"("ir":"module","ir_name":"m")";

std::map<std::string, json> by_name(const json& rows) {
  std::map<std::string, json> out;
  for (const json& r : rows) out[r["name"].get<std::string>()] = r;
  return out;
}

// A B/E pair on pid 1 with args on its B.
std::vector<std::string> be_pair(const std::string& cid, const std::string& name, long long start,
                                 long long dur, int tid, const std::string& args) {
  const std::string where = R"(,"pid":1,"tid":)" + std::to_string(tid);
  return {R"({"ph":"B","name":")" + name + "\"" + where + R"(,"ts":)" + us(start) +
              R"(,"args":{"compile_id":")" + cid + "\"," + args + "}}",
          R"({"ph":"E","name":")" + name + "\"" + where + R"(,"ts":)" + us(start + dur) + "}"};
}

TEST(ReportPasses, PassesAndThePipelinesThatRanThem) {
  std::vector<std::string> ev;
  // Unit 0/0 on tid 1, 0-100 ms: an LLVM pipeline in phase "optimize",
  // an MLIR one in phase "lower", and a user span with an "op" arg.
  ev.push_back(unit_event("0/0", "net__fwd_0", 0, 100 * kMs, 1));
  ev.push_back(unit_span("0/0", "optimize", 10 * kMs, 50 * kMs));
  ev.push_back(unit_span("0/0", "PassManager<llvm::Module>", 11 * kMs, 48 * kMs, 1, kLlvmModule));
  ev.push_back(unit_span("0/0", "ModuleToFunctionPassAdaptor", 12 * kMs, 38 * kMs, 1, kLlvmModule));
  ev.push_back(
      unit_span("0/0", "PassManager<llvm::Function>", 13 * kMs, 17 * kMs, 1, kLlvmFunction));
  ev.push_back(unit_span("0/0", "InstCombinePass", 14 * kMs, 6 * kMs, 1, kLlvmFunction));
  ev.push_back(unit_span("0/0", "DominatorTreeAnalysis", 15 * kMs, kMs, 1,
                         kLlvmFunction + R"(,"analysis":true)"));
  ev.push_back(unit_span("0/0", "SROAPass", 21 * kMs, 8 * kMs, 1, kLlvmFunction));
  ev.push_back(
      unit_span("0/0", "PassManager<llvm::Function>", 31 * kMs, 18 * kMs, 1, kLlvmFunction));
  ev.push_back(unit_span("0/0", "InstCombinePass", 32 * kMs, 8 * kMs, 1, kLlvmFunction));
  ev.push_back(unit_span("0/0", "lower", 60 * kMs, 30 * kMs));
  ev.push_back(unit_span("0/0", "Canonicalizer", 61 * kMs, 9 * kMs, 1,
                         R"("pass":"canonicalize","op":"builtin.module")"));
  ev.push_back(unit_span("0/0", "mlir::detail::OpToOpPassAdaptor", 71 * kMs, 18 * kMs, 1,
                         R"("pass":"","op":"builtin.module")"));
  ev.push_back(unit_span("0/0", "pipeline", 72 * kMs, 16 * kMs, 1,
                         R"("op":"func.func","parent_pass":"mlir::detail::OpToOpPassAdaptor")"));
  for (const std::string& e :
       be_pair("0/0", "CSE", 73 * kMs, 7 * kMs, 1, R"("pass":"cse","op":"func.func")"))
    ev.push_back(e);
  ev.push_back(unit_span("0/0", "emit", 91 * kMs, 4 * kMs, 1, R"("op":"matmul")"));
  // Unit 2/0 on tid 4: a second run of "optimize", 20 ms of passes.
  ev.push_back(unit_event("2/0", "net__bwd_2", 400 * kMs, 30 * kMs, 4));
  ev.push_back(unit_span("2/0", "optimize", 402 * kMs, 25 * kMs, 4));
  ev.push_back(unit_span("2/0", "PassManager<llvm::Module>", 403 * kMs, 20 * kMs, 4, kLlvmModule));
  // A pass outside every span (tid 2), and one directly in unit 1/0 (tid 3).
  ev.push_back(R"({"ph":"X","name":"InstCombinePass","pid":1,"tid":2,"ts":200000,"dur":3000,)"
               R"("args":{"ir":"function"}})");
  ev.push_back(unit_event("1/0", "net__opt_1", 300 * kMs, 20 * kMs, 3));
  ev.push_back(unit_span("1/0", "GVNPass", 305 * kMs, 7 * kMs, 3, kLlvmFunction));
  const std::string trace = trace_of(ev, "passes");

  const json rep = report_json({trace, "-s", "compile_times"});
  auto names = by_name(rep["compile_times"]);
  for (const char* pass : {"PassManager<llvm::Module>", "ModuleToFunctionPassAdaptor",
                           "PassManager<llvm::Function>", "InstCombinePass", "SROAPass",
                           "Canonicalizer", "mlir::detail::OpToOpPassAdaptor", "CSE", "GVNPass"}) {
    ASSERT_TRUE(names.count(pass)) << pass << " " << rep["compile_times"].dump();
    EXPECT_EQ(names[pass].value("pass", false), true) << pass;
  }
  for (const char* other : {"optimize", "lower", "pipeline", "DominatorTreeAnalysis", "emit"}) {
    ASSERT_TRUE(names.count(other)) << other;
    EXPECT_FALSE(names[other].contains("pass")) << other;
  }

  // Each pipeline: the outermost passes inside the span that ran them.
  auto pipelines = by_name(rep["pipelines"]);
  ASSERT_EQ(pipelines.size(), 5u) << rep["pipelines"].dump();
  const long long optimize_0 = 48 * kMs, optimize_2 = 20 * kMs;  // its PassManager<Module>s
  EXPECT_EQ(pipelines["optimize"]["count"], 2);
  EXPECT_EQ(pipelines["optimize"]["total_ns"], optimize_0 + optimize_2);
  EXPECT_EQ(pipelines["optimize"]["min_ns"], optimize_2);
  EXPECT_EQ(pipelines["optimize"]["max_ns"], optimize_0);
  // Canonicalizer and the adaptor; CSE is inside the adaptor, in MLIR's
  // nested pipeline (a span "pipeline"), which is a pipeline of its own.
  EXPECT_EQ(pipelines["lower"]["count"], 1);
  EXPECT_EQ(pipelines["lower"]["total_ns"], 9 * kMs + 18 * kMs);
  EXPECT_EQ(pipelines["pipeline"]["count"], 1);
  EXPECT_EQ(pipelines["pipeline"]["total_ns"], 7 * kMs);
  EXPECT_EQ(pipelines["(compile unit)"]["total_ns"], 7 * kMs);
  EXPECT_EQ(pipelines["(no enclosing span)"]["total_ns"], 3 * kMs);
  // By total, largest first.
  EXPECT_EQ(rep["pipelines"][0]["name"], "optimize");

  // The text form's table.
  const Result text = report({trace, "-s", "compile_times"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Pass pipelines"), std::string::npos) << text.out;
  const Result csv = report({trace, "-s", "compile_times", "-f", "csv"});
  EXPECT_NE(csv.out.find("\nlower,1,27000000,27000000,"), std::string::npos) << csv.out;

  // A trace without passes has no pipelines, and no such table.
  const std::string plain = trace_of({unit_span("0/0", "optimize", 0, kMs)}, "passes_none");
  EXPECT_TRUE(report_json({plain, "-s", "compile_times"})["pipelines"].empty());
  EXPECT_EQ(report({plain}).out.find("Pass pipelines"), std::string::npos);
}

// The ir_growth table (the adapters' Options::ir_size) on scripted runs:
// sizes on X slices and on B/E pairs (before on the B, after on the E, as
// the Perfetto form carries an arg added late), a run without an after (an
// invalidated unit), an analysis and a non-pass span with sizes (neither
// counted), and values that are not counts. Each figure is summed here.
TEST(ReportPasses, IrGrowthPerPassFromTheRunsSizes) {
  struct Run {
    const char* pass;
    long long before, after, start_ms, dur_ms;
  };
  const std::vector<Run> runs = {
      {"InstCombinePass", 40, 31, 1, 2}, {"InstCombinePass", 31, 30, 4, 1},
      {"LoopUnrollPass", 30, 95, 6, 3},  {"LoopUnrollPass", 12, 44, 10, 2},
      {"SROAPass", 50, 50, 13, 1},       {"InstCombinePass", 95, 60, 15, 2},
  };
  std::vector<std::string> ev;
  ev.push_back(unit_event("0/0", "net__fwd_0", 0, 100 * kMs, 1));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    const std::string sizes = kLlvmFunction + R"(,"ir_size_before":)" + std::to_string(r.before);
    const std::string after = R"("ir_size_after":)" + std::to_string(r.after);
    if (i % 2 == 0) {  // an X slice with both
      ev.push_back(
          unit_span("0/0", r.pass, r.start_ms * kMs, r.dur_ms * kMs, 1, sizes + "," + after));
    } else {  // a B/E pair: before on the B, after on the E
      std::vector<std::string> pair =
          be_pair("0/0", r.pass, r.start_ms * kMs, r.dur_ms * kMs, 1, sizes);
      pair[1].insert(pair[1].size() - 1, R"(,"args":{)" + after + "}");
      ev.insert(ev.end(), pair.begin(), pair.end());
    }
  }
  // Not counted: no after (an invalidated loop), an analysis, a span that is
  // not a pass, and sizes that are not counts.
  ev.push_back(unit_span("0/0", "LoopDeletionPass", 20 * kMs, kMs, 1,
                         kLlvmFunction + R"(,"ir_size_before":9,"ir_invalidated":true)"));
  ev.push_back(
      unit_span("0/0", "DominatorTreeAnalysis", 22 * kMs, kMs, 1,
                kLlvmFunction + R"(,"analysis":true,"ir_size_before":1,"ir_size_after":9)"));
  ev.push_back(
      unit_span("0/0", "emit", 24 * kMs, kMs, 1, R"("ir_size_before":1,"ir_size_after":9)"));
  for (const char* bad :
       {R"("ir_size_before":-3,"ir_size_after":4)", R"("ir_size_before":3.5,"ir_size_after":4)",
        R"("ir_size_before":"3","ir_size_after":4)"}) {
    ev.push_back(unit_span("0/0", "GVNPass", 26 * kMs, kMs, 1, kLlvmFunction + "," + bad));
  }
  const std::string trace = trace_of(ev, "ir_growth");

  struct Want {
    long long runs = 0, before = 0, after = 0, ns = 0, largest = 0, largest_from = 0;
  };
  std::map<std::string, Want> want;
  for (const Run& r : runs) {
    Want& w = want[r.pass];
    if (w.runs == 0 || r.after - r.before > w.largest) {
      w.largest = r.after - r.before;
      w.largest_from = r.before;
    }
    ++w.runs;
    w.before += r.before;
    w.after += r.after;
    w.ns += r.dur_ms * kMs;
  }
  const json rep = report_json({trace, "-s", "compile_times"});
  const json& rows = rep["ir_growth"];
  ASSERT_EQ(rows.size(), want.size()) << rows.dump();
  long long last_growth = LLONG_MAX;
  for (const json& row : rows) {
    const std::string pass = row["pass"];
    ASSERT_TRUE(want.count(pass)) << pass;
    const Want& w = want[pass];
    EXPECT_EQ(row["runs"], w.runs) << pass;
    EXPECT_EQ(row["before"], w.before) << pass;
    EXPECT_EQ(row["after"], w.after) << pass;
    EXPECT_EQ(row["growth"], w.after - w.before) << pass;
    EXPECT_EQ(row["largest"], w.largest) << pass;
    EXPECT_EQ(row["largest_from"], w.largest_from) << pass;
    EXPECT_EQ(row["total_ns"], w.ns) << pass;
    EXPECT_LE(row["growth"].get<long long>(), last_growth) << "by growth, largest first";
    last_growth = row["growth"];
  }
  EXPECT_EQ(rows[0]["pass"], "LoopUnrollPass");

  const Result text = report({trace, "-s", "compile_times"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("IR growth per pass"), std::string::npos) << text.out;
  const Result csv = report({trace, "-s", "compile_times", "-f", "csv"});
  // LoopUnrollPass: 42 -> 139, +97 (231.0 %), largest +65 from 30, 5 ms.
  EXPECT_NE(csv.out.find("\nLoopUnrollPass,2,42,139,97,231.0%,65,30,5000000"), std::string::npos)
      << csv.out;

  // A trace whose passes carry no sizes has no rows and no table.
  const std::string plain =
      trace_of({unit_span("0/0", "SROAPass", 0, kMs, 1, kLlvmFunction)}, "ir_growth_none");
  EXPECT_TRUE(report_json({plain, "-s", "compile_times"})["ir_growth"].empty());
  EXPECT_EQ(report({plain}).out.find("IR growth"), std::string::npos);
}

TEST(ReportPasses, IdenticalIntervalsAndArgsOnTheEnd) {
  // Whole-µs times make a phase as long as its only pass, and a pass as
  // long as its one child: written in end order (children first), the
  // later-written of two identical slices is the parent. Thread 1: phase
  // "llvm_opt" [0, 100] is exactly its GVNPass, inside "compile" [0, 200].
  // Thread 2: "llvm_opt" [0, 100] holds GVNPass [10, 60] that is exactly
  // its child "verify". Thread 3: the same as thread 1 as B/E pairs whose
  // args come on the E (allowed in Chrome's format).
  const std::string pass_args = R"("args":{"ir":"function"})";
  const std::vector<std::string> ev = {
      R"({"ph":"X","name":"GVNPass","pid":1,"tid":1,"ts":0,"dur":100,)" + pass_args + "}",
      R"({"ph":"X","name":"llvm_opt","pid":1,"tid":1,"ts":0,"dur":100})",
      R"({"ph":"X","name":"compile","pid":1,"tid":1,"ts":0,"dur":200})",
      R"({"ph":"X","name":"verify","pid":1,"tid":2,"ts":10,"dur":50})",
      R"({"ph":"X","name":"GVNPass","pid":1,"tid":2,"ts":10,"dur":50,)" + pass_args + "}",
      R"({"ph":"X","name":"llvm_opt","pid":1,"tid":2,"ts":0,"dur":100})",
      R"({"ph":"B","name":"compile","pid":1,"tid":3,"ts":0})",
      R"({"ph":"B","name":"llvm_opt","pid":1,"tid":3,"ts":0})",
      R"({"ph":"B","name":"GVNPass","pid":1,"tid":3,"ts":0})",
      R"({"ph":"E","pid":1,"tid":3,"ts":100,)" + pass_args + "}",
      R"({"ph":"E","pid":1,"tid":3,"ts":100})",
      R"({"ph":"E","pid":1,"tid":3,"ts":200})"};
  const json rep = report_json({trace_of(ev, "passes_identical"), "-s", "compile_times"});
  auto pipelines = by_name(rep["pipelines"]);
  ASSERT_EQ(pipelines.size(), 1u) << rep["pipelines"].dump();
  EXPECT_EQ(pipelines["llvm_opt"]["count"], 3);
  EXPECT_EQ(pipelines["llvm_opt"]["total_ns"], 100000 + 50000 + 100000);
  auto names = by_name(rep["compile_times"]);
  EXPECT_EQ(names["GVNPass"].value("pass", false), true);
  EXPECT_FALSE(names["verify"].contains("pass"));
  // Self times as before: the phase is all its pass's on threads 1 and 3.
  auto phases = by_name(report_json({trace_of(ev, "passes_identical"), "-s", "phases"})["phases"]);
  EXPECT_EQ(phases["llvm_opt"]["self_ns"], 0 + 50000 + 0);
  EXPECT_EQ(phases["GVNPass"]["self_ns"], 100000 + 0 + 100000);
}

// ---- the gate per pass and per pipeline ----

struct PassRun {
  std::string name;
  long long ns;
};

// One run: unit "fwd" with phase "optimize" holding a PassManager<Module>
// that runs `passes` one after the other; each pass's time scaled by a
// jitter factor drawn from `rng` within +-jitter.
std::string run_of(const std::vector<PassRun>& passes, std::mt19937_64& rng, double jitter) {
  std::uniform_real_distribution<double> scale(1 - jitter, 1 + jitter);
  std::vector<std::string> ev;
  long long t = 2 * kMs;
  const long long pm_start = t;
  for (const PassRun& p : passes) {
    const auto ns = static_cast<long long>(static_cast<double>(p.ns) * scale(rng));
    t += 10000;
    ev.push_back(unit_span("0/0", p.name, t, ns, 1, kLlvmFunction));
    t += ns;
  }
  t += 10000;
  ev.push_back(
      unit_span("0/0", "PassManager<llvm::Module>", pm_start, t - pm_start, 1, kLlvmModule));
  ev.push_back(unit_span("0/0", "optimize", kMs, t + 10000 - kMs));
  ev.push_back(
      unit_event("0/0", "net__fwd_0", 0, t + 2 * kMs, 1, R"("unit_key":"fwd","frame":"fwd")"));
  return trace_of(ev, "passes_gate");
}

const std::vector<PassRun> kPipeline = {{"SROAPass", 20 * kMs},
                                        {"InstCombinePass", 40 * kMs},
                                        {"GVNPass", 30 * kMs},
                                        {"SimplifyCFGPass", 10 * kMs}};

// --baseline for each of `base`, then `next`, then `more`.
std::vector<std::string> gate_args(const std::vector<std::string>& base,
                                   const std::vector<std::string>& next,
                                   const std::vector<std::string>& more) {
  std::vector<std::string> args;
  for (const std::string& b : base) args.insert(args.end(), {"--baseline", b});
  args.insert(args.end(), next.begin(), next.end());
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Three runs of `before` as the baseline against three of `after`, jittered
// by +-jitter, gated on self time at 5%.
Result gate(const std::vector<PassRun>& before, const std::vector<PassRun>& after,
            std::uint64_t seed, double jitter) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> base, next;
  for (int i = 0; i < 3; ++i) base.push_back(run_of(before, rng, jitter));
  for (int i = 0; i < 3; ++i) next.push_back(run_of(after, rng, jitter));
  return report(
      gate_args(base, next, {"--gate-on", "self", "--fail-if-slower", "5", "-f", "json"}));
}

std::vector<std::string> failing(const json& rows) {
  std::vector<std::string> out;
  for (const json& r : rows) {
    if (r["fails"].get<bool>()) out.push_back(r["name"]);
  }
  return out;
}

TEST(ReportPassGate, ASlowedPassFailsByName) {
  std::vector<PassRun> slowed = kPipeline;
  slowed[2].ns = 36 * kMs;  // GVNPass +20%
  const Result r = gate(kPipeline, slowed, 7, 0.01);
  ASSERT_EQ(r.code, 3) << r.err;
  const json rep = json::parse(r.out);
  EXPECT_EQ(failing(rep["passes"]), std::vector<std::string>{"GVNPass"}) << rep["passes"].dump();
  // The pipeline holds the pass's 6 ms too: judged on its total.
  EXPECT_EQ(failing(rep["pipelines"]), std::vector<std::string>{"optimize"});
  auto passes = by_name(rep["passes"]);
  ASSERT_EQ(passes.size(), 5u) << rep["passes"].dump();  // the four and the PassManager
  EXPECT_EQ(passes["GVNPass"]["change"], "slower");
  for (const char* same : {"SROAPass", "InstCombinePass", "SimplifyCFGPass"})
    EXPECT_EQ(passes[same]["change"], "unchanged") << same;
  // Passes are no longer among the plain span names.
  auto names = by_name(rep["names"]);
  EXPECT_EQ(names.count("GVNPass"), 0u) << rep["names"].dump();
  EXPECT_EQ(names.count("optimize"), 1u);
  // The verdict names both (about 6 ms each), and no other pass.
  EXPECT_NE(r.err.find("pass \"GVNPass\" +"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pipeline \"optimize\" +"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\"InstCombinePass\""), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("jitscope-report: regression: 2 of the compared names, passes, "
                        "pipelines, units and kernels are slower than --fail-if-slower 5% (self "
                        "time; ",
                        0),
            0u)
      << r.err;

  // The tables have a section each.
  std::mt19937_64 rng(7);
  const Result text = report(gate_args({run_of(kPipeline, rng, 0.01)}, {run_of(slowed, rng, 0.01)},
                                       {"--gate-on", "self"}));
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("Compiler passes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Pass pipelines"), std::string::npos) << text.out;
}

TEST(ReportPassGate, JitterWithinTheThresholdPasses) {
  // Ten A/A comparisons: every pass within +-2% in every run, gated at 5%.
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const Result r = gate(kPipeline, kPipeline, seed, 0.02);
    EXPECT_EQ(r.code, 0) << "seed " << seed << ": " << r.err;
    const json rep = json::parse(r.out);
    EXPECT_EQ(rep["comparison"]["failing"], 0) << seed;
    EXPECT_EQ(rep["passes"].size(), 5u) << seed;
    EXPECT_EQ(rep["pipelines"].size(), 1u) << seed;
  }
}

TEST(ReportPassGate, WorkMovedIntoANewPassFailsItsPipeline) {
  // The new build adds LICMPass (25 ms): an added pass fails no gate, and
  // no old pass got slower, but the pipeline's time grew by 25%.
  std::vector<PassRun> more = kPipeline;
  more.push_back({"LICMPass", 25 * kMs});
  const Result r = gate(kPipeline, more, 3, 0.01);
  ASSERT_EQ(r.code, 3) << r.err;
  const json rep = json::parse(r.out);
  EXPECT_TRUE(failing(rep["passes"]).empty()) << rep["passes"].dump();
  EXPECT_EQ(by_name(rep["passes"])["LICMPass"]["change"], "added");
  EXPECT_EQ(failing(rep["pipelines"]), std::vector<std::string>{"optimize"});
  EXPECT_NE(r.err.find(": pipeline \"optimize\" +"), std::string::npos) << r.err;
}

}  // namespace
