// jitscope-report end to end: the binary runs as a subprocess on traces made
// here, and its --format json is compared exactly with what
// report_support.cpp computes independently from the trace with
// nlohmann::json.
//
// Covered: a trace written with the SDK in this process (compile units on two
// threads, nested phases); the pass_pipeline sample's trace with its metrics
// file (when the sample is built); hand-written B/E and PyTorch-profiler-like
// traces (string pids/tids, flows, the object form, the unterminated array
// form, unmatched B/E); clang -ftime-trace of a small file (skipped when no
// clang++ was found at configure time); GPU attribution from
// gpu_trace_writer's trace (when built, i.e. with the CUPTI headers); every
// format and --section; stdin; units of two processes with the same compile
// ids (pid-keyed rows, a GPU pid mapped to its host).
// Elsewhere: errors and hostile numbers (report_errors_test.cpp), self time
// (report_self_time_test.cpp), repaired inputs, escapes, exact timestamps
// and merged traces (report_input_test.cpp).
// Not covered: traces larger than a few MB (bench/report runs 1 GB), a real
// GPU (the gpu label's tests), writing to a full disk.
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using namespace jitscope::testing::report;

// ---- traces with compile units ----

TEST(ReportTotals, SdkTraceWithUnitsOnTwoThreads) {
  jitscope::Config cfg = jitscope::testing::test_config("report_sdk");
  ASSERT_TRUE(jitscope::start(cfg));
  jitscope::set_model_name("reportnet");
  for (int g = 0; g < 3; ++g) {
    jitscope::CompileUnit unit({.frame = g == 2 ? "f0" : (g == 0 ? "f0" : "f1"), .graph = "fwd"});
    JITSCOPE_PHASE("compile_graph", {.column = "entire_compile_us"});
    {
      JITSCOPE_PHASE("parse", {.column = "parse_us"});
      JITSCOPE_SPAN("tokenize");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    std::thread worker([ref = unit.ref()] {
      jitscope::UnitScope scope(ref);
      for (int k = 0; k < 3; ++k) {
        JITSCOPE_SPAN("emit_kernel");
        JITSCOPE_SPAN("regalloc");
      }
    });
    worker.join();
    { JITSCOPE_SPAN("tokenize"); }  // the same name nested elsewhere
  }
  { JITSCOPE_SPAN("outside_units"); }
  jitscope::stop();

  const json events = load_events(cfg.output_path);
  const Totals t = compute(events);
  ASSERT_EQ(t.units.size(), 3u);  // 0/0, 1/0, 0/1
  EXPECT_TRUE(t.units.count("0/1"));
  const json rep = report_json({cfg.output_path, "--top", "7"});
  expect_matches(rep, t, 7);
  EXPECT_FALSE(rep["header"]["unterminated"].get<bool>());
  const json& session = rep["header"]["jitscope_session"];
  ASSERT_TRUE(session.is_object());
  EXPECT_FALSE(session["version"].get<std::string>().empty());
  EXPECT_FALSE(session["clock"].get<std::string>().empty());
  EXPECT_EQ(session["cupti"]["state"], "off");
  EXPECT_FALSE(rep["gpu"]["present"].get<bool>());
  // Units in compile-id order.
  std::vector<std::string> ids;
  for (const json& u : rep["units"]) ids.push_back(u["compile_id"]);
  EXPECT_EQ(ids, (std::vector<std::string>{"0/0", "0/1", "1/0"}));
}

#ifdef JITSCOPE_PASS_PIPELINE
TEST(ReportTotals, PassPipelineTraceAndMetrics) {
  const std::string trace = temp_path("report_pp"), metrics = temp_path("report_pp_metrics") + "l";
  const Result sample = run({JITSCOPE_PASS_PIPELINE, "--trace", trace, "--metrics", metrics});
  ASSERT_EQ(sample.code, 0) << sample.err;
  const json events = load_events(trace);
  const Totals t = compute(events);
  ASSERT_GE(t.units.size(), 6u);
  const json rep = report_json({trace, "--metrics", metrics, "--top", "12"});
  expect_matches(rep, t, 12);

  // The metrics join: each unit's record.
  std::map<std::string, json> records;
  std::ifstream in(metrics);
  unsigned long long runtime = 0;
  for (std::string line; std::getline(in, line);) {
    const json rec = json::parse(line);
    if (rec["compile_id"].is_null()) {
      ++runtime;
    } else if (!rec.contains("record")) {
      records[rec["compile_id"]] = rec;
    }
  }
  EXPECT_EQ(rep["header"]["metrics"]["runtime_records"].get<unsigned long long>(), runtime);
  bool saw_failure = false, saw_hit = false;
  for (const json& u : rep["units"]) {
    const std::string id = u["compile_id"];
    ASSERT_TRUE(records.count(id)) << id;
    const json& rec = records.at(id);
    const json& m = u["metrics"];
    ASSERT_TRUE(m.is_object()) << id;
    EXPECT_EQ(u["name"], rec["name"]) << id;
    EXPECT_EQ(m["duration_ns"].get<long long>(), rec["duration_us"].get<long long>() * 1000) << id;
    long long hits = 0, misses = 0;
    for (const auto& [cache, c] : rec["caches"].items()) {
      hits += c["hits"].get<long long>();
      misses += c["misses"].get<long long>();
      EXPECT_EQ(m["caches"][cache]["hits"], c["hits"]) << id << " " << cache;
    }
    EXPECT_EQ(m["cache_hits"].get<long long>(), hits) << id;
    EXPECT_EQ(m["cache_misses"].get<long long>(), misses) << id;
    saw_hit = saw_hit || hits > 0;
    if (rec.contains("fail_type")) {
      saw_failure = true;
      EXPECT_EQ(m["fail_type"], rec["fail_type"]) << id;
    } else {
      EXPECT_TRUE(m["fail_type"].is_null()) << id;
    }
    EXPECT_EQ(m["columns_ns"]["parse"].get<long long>(), rec["parse_us"].get<long long>() * 1000)
        << id;
  }
  EXPECT_TRUE(saw_failure);  // the sample fails one unit
  EXPECT_TRUE(saw_hit);      // and recompiles one with cached kernels

  // The table names the sections and the recognisable columns.
  const Result table = report({trace, "--metrics", metrics});
  ASSERT_EQ(table.code, 0) << table.err;
  for (const char* s :
       {"== Compile times (per span name) ==", "== Compile units ==", "compile_graph",
        "no GPU activity in this trace", "cache_hits", "mocknet__block0_fwd_0"}) {
    EXPECT_NE(table.out.find(s), std::string::npos) << s;
  }
}
#endif

// ---- B/E, string ids, the object and unterminated forms ----

const char* const kProfilerEvents = R"(
 {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":"Spans","tid":"PyTorch Profiler","ts":100.5,"dur":50.25},
 {"ph":"X","cat":"cpu_op","name":"aten::add","pid":"Spans","tid":"PyTorch Profiler","ts":110,"dur":10},
 {"ph":"s","id":1,"pid":"Spans","tid":"PyTorch Profiler","ts":110,"cat":"ac2g","name":"flow"},
 {"ph":"f","id":1,"pid":0,"tid":7,"ts":120,"cat":"ac2g","name":"flow","bp":"e"},
 {"ph":"X","cat":"kernel","name":"gemm [\"]}","pid":0,"tid":7,"ts":120,"dur":30,"args":{"device":0,"stream":7,"grid":[1,1,1]}},
 {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"main \"thread\""}},
 {"ph":"B","name":"step","pid":1,"tid":2,"ts":0},
 {"ph":"B","name":"fwd","pid":1,"tid":2,"ts":1},
 {"ph":"E","pid":1,"tid":2,"ts":4},
 {"ph":"B","name":"bwd","pid":1,"tid":2,"ts":5,"args":{"compile_id":"0/0"}},
 {"ph":"E","pid":1,"tid":2,"ts":9.5},
 {"ph":"E","pid":1,"tid":2,"ts":10},
 {"ph":"E","pid":1,"tid":2,"ts":11},
 {"ph":"i","name":"mark","pid":1,"tid":2,"ts":3,"s":"t"},
 {"ph":"B","name":"never_closed","pid":1,"tid":3,"ts":0})";

void expect_profiler_report(const json& rep) {
  std::map<std::string, std::pair<long long, long long>> want = {{"step", {10000, 2500}},
                                                                 {"fwd", {3000, 3000}},
                                                                 {"bwd", {4500, 4500}},
                                                                 {"aten::mm", {50250, 40250}},
                                                                 {"aten::add", {10000, 10000}}};
  ASSERT_EQ(rep["phases"].size(), want.size());
  for (const json& row : rep["phases"]) {
    const auto& w = want.at(row["name"].get<std::string>());
    EXPECT_EQ(row["total_ns"].get<long long>(), w.first) << row["name"];
    EXPECT_EQ(row["self_ns"].get<long long>(), w.second) << row["name"];
  }
  ASSERT_EQ(rep["units"].size(), 1u);
  EXPECT_EQ(rep["units"][0]["compile_id"], "0/0");
  EXPECT_FALSE(rep["units"][0]["in_trace"].get<bool>());
  EXPECT_EQ(rep["units"][0]["phases"][0]["total_ns"].get<long long>(), 4500);
  EXPECT_EQ(rep["top_spans"][0]["name"], "aten::mm");
  EXPECT_EQ(rep["top_spans"][0]["pid"], "Spans");
  EXPECT_EQ(rep["top_spans"][0]["tid"], "PyTorch Profiler");
  // The kernel is GPU work: its own table, not the host's tables.
  ASSERT_EQ(rep["gpu"]["names"].size(), 1u);
  EXPECT_EQ(rep["gpu"]["names"][0]["name"], "gemm [\"]}");
  EXPECT_EQ(rep["gpu"]["names"][0]["kind"], "kernel");
  EXPECT_EQ(rep["gpu"]["names"][0]["total_ns"].get<long long>(), 30000);
  EXPECT_EQ(rep["top_spans"][1]["name"], "step");
  EXPECT_EQ(rep["top_spans"][1]["thread"], "main \"thread\"");
  EXPECT_EQ(rep["top_spans"][1]["pid"], 1);
  const json& h = rep["header"];
  EXPECT_EQ(h["events"].get<int>(), 15);
  EXPECT_EQ(h["spans"].get<int>(), 6);
  EXPECT_EQ(h["processes"].get<int>(), 3);  // "Spans", 0, 1
  EXPECT_EQ(h["threads"].get<int>(), 4);    // the PyTorch thread, stream 7, tids 2 and 3
  EXPECT_EQ(h["time_span"]["begin_ns"].get<long long>(), 0);
  EXPECT_EQ(h["time_span"]["end_ns"].get<long long>(), 150750);
  EXPECT_TRUE(h["jitscope_session"].is_null());
  const std::string warnings = h["warnings"].dump();
  EXPECT_NE(warnings.find("1 'E' events with no open 'B'"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("1 'B' events never closed"), std::string::npos) << warnings;
  EXPECT_TRUE(rep["gpu"]["present"].get<bool>());
  EXPECT_EQ(rep["gpu"]["kernels"].get<int>(), 1);
  EXPECT_EQ(rep["gpu"]["kernels_unattributed"].get<int>(), 1);
}

// Compile records the SDK's metrics queue dropped (jitscope_stats'
// compile_records_dropped) are said above the tables: the metrics file
// lacks that many units' records.
TEST(ReportTotals, DroppedCompileRecordsAreSaid) {
  const std::string path =
      trace_of({x_event("work", 0, 1000),
                R"({"ph":"M","name":"jitscope_stats","pid":1,"tid":0,"args":{"events_written":1,)"
                R"("events_dropped":0,"compile_records_dropped":7}})"},
               "report_records_dropped");
  const json rep = report_json({path});
  EXPECT_EQ(rep["header"]["compile_records_dropped"], 7);
  std::string warnings;
  for (const json& w : rep["header"]["warnings"]) warnings += w.get<std::string>() + "\n";
  EXPECT_NE(warnings.find("7 compile records dropped"), std::string::npos) << warnings;
  const Result text = report({path});
  EXPECT_NE(text.out.find("7 compile records dropped"), std::string::npos) << text.out;
}

// A merged trace holds a jitscope_session and a jitscope_stats per process:
// drops are summed over them (each process's last stats), the header's
// session is the first process's, the CUPTI states are counted per process,
// and processes without stats are counted in a warning. Before, the last
// process's won: a worker without CUPTI made the whole run say "cupti off",
// and its 0 hid the parent's drops.
TEST(ReportTotals, MergedTraceSumsDropsAndCountsSessionsPerProcess) {
  auto session = [](int pid, const char* cupti) {
    return std::string(R"({"ph":"M","name":"jitscope_session","pid":)") + std::to_string(pid) +
           R"(,"tid":0,"args":{"version":"0.5.0","clock":"tsc","cupti":{"state":")" + cupti +
           R"("}}})";
  };
  auto stats = [](int pid, int dropped) {
    return std::string(R"({"ph":"M","name":"jitscope_stats","pid":)") + std::to_string(pid) +
           R"(,"tid":0,"args":{"events_written":9,"events_dropped":)" + std::to_string(dropped) +
           "}}";
  };
  const std::string path = trace_of({x_event("work", 0, 1000), session(10, "on"), stats(10, 2),
                                     stats(10, 3),  // a later stats of pid 10: its last counts
                                     session(20, "off"), stats(20, 4), session(30, "off"),
                                     stats(30, 0), session(40, "off")},  // pid 40 wrote no stats
                                    "report_merged_sessions");
  const json rep = report_json({path});
  const json& h = rep["header"];
  EXPECT_EQ(h["events_dropped"], 3 + 4 + 0);
  EXPECT_EQ(h["jitscope_session"]["cupti"]["state"], "on");
  EXPECT_EQ(h["jitscope_sessions"], 4);
  EXPECT_EQ(h["cupti_states"], json::parse(R"({"on":1,"off":3})"));
  const std::string warnings = h["warnings"].dump();
  EXPECT_NE(warnings.find("1 of 4 processes wrote no jitscope_stats"), std::string::npos)
      << warnings;
  const Result text = report({path, "--section", "header"});
  EXPECT_NE(text.out.find("cupti by process  on 1, off 3"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("7 events dropped"), std::string::npos) << text.out;
}

TEST(ReportTotals, ProfilerLikeObjectForm) {
  const std::string path = write_temp(
      "report_profiler",
      std::string("{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0}],\n\"traceEvents\":[") +
          kProfilerEvents + "],\n\"traceName\":\"x\"}\n");
  const json rep = report_json({path, "--top", "3"});
  expect_profiler_report(rep);
  EXPECT_FALSE(rep["header"]["unterminated"].get<bool>());
  // The same totals as the independent computation.
  expect_matches(rep, compute(json::parse(read_file(path))["traceEvents"]), 3);
}

TEST(ReportTotals, UnterminatedArrayFormFromStdin) {
  const std::string path = write_temp("report_cut", std::string("[") + kProfilerEvents + ",\n");
  Result r = report({"-", "--format", "json", "--top", "3"}, path);
  ASSERT_EQ(r.code, 0) << r.err;
  const json rep = json::parse(r.out);
  expect_profiler_report(rep);
  EXPECT_TRUE(rep["header"]["unterminated"].get<bool>());
  EXPECT_EQ(rep["header"]["input"], "<stdin>");
}

// ---- clang -ftime-trace ----

TEST(ReportClang, TimeTraceOfASmallFile) {
  const std::string clang = JITSCOPE_TEST_CLANGXX;
  if (clang.empty()) GTEST_SKIP() << "no clang++ found at configure time";
  const std::string dir = temp_path("report_clang");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  std::ofstream(dir + "/small.cpp")
      << "#include <map>\n#include <string>\n"
         "template <int N> struct F { static constexpr int v = N * F<N - 1>::v; };\n"
         "template <> struct F<0> { static constexpr int v = 1; };\n"
         "int f(const std::map<std::string, int>& m) { return F<8>::v + (int)m.size(); }\n";
  const Result cc = run({clang, "-ftime-trace", "-ftime-trace-granularity=0", "-c",
                         dir + "/small.cpp", "-o", dir + "/small.o"});
  ASSERT_EQ(cc.code, 0) << cc.err;
  const std::string trace = dir + "/small.json";
  ASSERT_TRUE(std::ifstream(trace).good()) << "clang wrote no " << trace;

  const json rep = report_json({trace, "--top", "5"});
  std::set<std::string> names;
  for (const json& row : rep["compile_times"]) names.insert(row["name"]);
  for (const char* phase :
       {"Frontend", "Backend", "ExecuteCompiler", "Total ExecuteCompiler", "Source"}) {
    EXPECT_TRUE(names.count(phase)) << phase;
  }
  // Exactly the totals of an independent read.
  expect_matches(rep, compute(json::parse(read_file(trace))["traceEvents"]), 5);
  EXPECT_TRUE(rep["units"].empty());

  const Result table = report({trace});
  EXPECT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("Total ExecuteCompiler"), std::string::npos);
}

// ---- GPU attribution ----

#ifdef JITSCOPE_GPU_TRACE_WRITER
TEST(ReportGpu, KernelsPerUnitAndFirstLaunchLatency) {
  const std::string trace = temp_path("report_gpu");
  const Result w = run({JITSCOPE_GPU_TRACE_WRITER, trace});
  ASSERT_EQ(w.code, 0) << w.err;
  const json events = load_events(trace);
  struct Gpu {
    unsigned long long kernels = 0;
    long long total = 0, first = std::numeric_limits<long long>::max();
    std::set<std::string> names;
  };
  std::map<std::string, Gpu> want;
  std::map<std::string, long long> unit_end;
  unsigned long long kernels = 0, copies = 0;
  for (const json& e : events) {
    if (e.value("ph", "") != "X") continue;
    const json args = e.value("args", json::object());
    if (e.value("cat", "") == "compile_unit" && !args.value("attached", false)) {
      unit_end[args["compile_id"]] = ns_of(e["ts"]) + ns_of(e["dur"]);
    }
    if (!args.contains("device") || !args.contains("stream")) continue;
    if (!args.contains("grid")) {
      ++copies;
      continue;
    }
    ++kernels;
    Gpu& g = want[args["compiled_by_id"]];
    ++g.kernels;
    g.total += ns_of(e["dur"]);
    g.first = std::min(g.first, ns_of(e["ts"]));
    g.names.insert(e["name"]);
  }
  ASSERT_EQ(want.size(), 1u);
  ASSERT_EQ(want.begin()->second.kernels, 5u);  // the writer's 3 + 2 launches

  const json rep = report_json({trace});
  const json& g = rep["gpu"];
  EXPECT_TRUE(g["present"].get<bool>());
  EXPECT_EQ(g["kernels"].get<unsigned long long>(), kernels);
  EXPECT_EQ(g["memcpys"].get<unsigned long long>(), copies);
  EXPECT_EQ(g["kernels_unattributed"].get<unsigned long long>(), 0u);
  ASSERT_EQ(g["units"].size(), want.size());
  for (const json& u : g["units"]) {
    const std::string id = u["compile_id"];
    const Gpu& w2 = want.at(id);
    EXPECT_EQ(u["name"], "gpunet__fwd_0");
    EXPECT_EQ(u["kernels"].get<unsigned long long>(), w2.kernels);
    EXPECT_EQ(u["distinct_kernels"].get<unsigned long long>(), w2.names.size());
    EXPECT_EQ(u["gpu_total_ns"].get<long long>(), w2.total);
    EXPECT_EQ(u["gpu_mean_ns"].get<long long>(), w2.total / static_cast<long long>(w2.kernels));
    EXPECT_EQ(u["first_launch_ns"].get<long long>(), w2.first);
    EXPECT_EQ(u["first_launch_latency_ns"].get<long long>(), w2.first - unit_end.at(id));
    EXPECT_GT(u["first_launch_latency_ns"].get<long long>(), 0);
  }
  const Result table = report({trace, "--section", "gpu"});
  EXPECT_NE(table.out.find("gpunet__fwd_0"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("no GPU activity"), std::string::npos) << table.out;
}
#endif

// ---- formats and sections ----

TEST(ReportFormats, EveryFormatAndSectionSelection) {
  const std::string path = write_temp("report_fmt", std::string("[") + kProfilerEvents + "]");
  const Result table = report({path});
  ASSERT_EQ(table.code, 0) << table.err;
  for (const char* s :
       {"jitscope-report\n", "== Compile times (per span name) ==", "== Cumulative time per phase",
        "== Compile units ==", "== Slowest spans ==", "== GPU attribution", "50.2 µs"}) {
    EXPECT_NE(table.out.find(s), std::string::npos) << s << "\n" << table.out;
  }
  const Result csv = report({path, "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  for (const char* s :
       {"# header\nfield,value\n",
        "# "
        "compile_times\nname,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,p90_ns,p99_ns,stddev_ns\n",
        "aten::mm,1,50250,50250,50250,50250,50250,50250,50250,0\n", "# phases\n", "# unit_walls\n",
        "\nunits,total_ns,mean_ns,min_ns,p50_ns,p90_ns,p99_ns,max_ns,stddev_ns\n", "# units\n",
        "# unit_phases\n", "# top_spans\n", "# gpu\n", "\"gemm [\"\"]}\""}) {
    EXPECT_NE(csv.out.find(s), std::string::npos) << s << "\n" << csv.out;
  }
  const Result md = report({path, "--format", "markdown"});
  ASSERT_EQ(md.code, 0) << md.err;
  for (const char* s : {"# jitscope-report\n", "## Compile times (per span name)\n",
                        "| name | count | total |", "| --- | ---: |"}) {
    EXPECT_NE(md.out.find(s), std::string::npos) << s << "\n" << md.out;
  }
  const json some = report_json({path, "--section", "phases,gpu", "-s", "header"});
  std::set<std::string> keys;
  for (const auto& [k, v] : some.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"header", "phases", "gpu"}));
  const json hyphens = report_json({path, "--section", "top-spans,compile-times"});
  keys.clear();
  for (const auto& [k, v] : hyphens.items()) keys.insert(k);
  // compile_times is three keys: the names, the pipelines of passes, and
  // the passes' IR growth.
  EXPECT_EQ(keys, (std::set<std::string>{"top_spans", "compile_times", "pipelines", "ir_growth"}));
  const json all = report_json({path});
  keys.clear();
  for (const auto& [k, v] : all.items()) keys.insert(k);
  // The units section is four keys: unit_walls (the spread), waterfalls
  // (which units kept their spans), units (the rows) and failed_passes.
  // The autotune section is two: the sessions, and how many were not kept.
  EXPECT_EQ(keys, (std::set<std::string>{"header", "compile_times", "pipelines", "ir_growth",
                                         "phases", "unit_walls", "waterfalls", "units",
                                         "failed_passes", "top_spans", "gpu", "caches", "autotune",
                                         "autotune_events_not_kept", "critical_path"}));
  EXPECT_TRUE(all["critical_path"].is_null());  // no compile unit in this trace
  EXPECT_TRUE(all["caches"].empty());           // no cache_lookup in this trace
  EXPECT_TRUE(all["autotune"].empty());         // no tuning session either
  EXPECT_EQ(all["autotune_events_not_kept"], 0);
  const json caches = report_json({path, "--section", "caches"});
  EXPECT_EQ(caches.size(), 1u);
  EXPECT_TRUE(caches.contains("caches"));

  const std::string out = temp_path("report_output");
  const Result to_file = report({path, "--output", out, "-f", "json"});
  EXPECT_EQ(to_file.code, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(json::parse(read_file(out)), all);

  const json top0 = report_json({path, "--top", "0"});
  EXPECT_TRUE(top0["top_spans"].empty());

  // The heap's page size changes nothing of the report.
  const Result small_pages = report({path, "--no-huge-pages"});
  ASSERT_EQ(small_pages.code, 0) << small_pages.err;
  EXPECT_EQ(small_pages.out, table.out);
}

TEST(ReportFormats, NoGpuActivityIsSaid) {
  const std::string path =
      write_temp("report_nogpu", R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}])");
  const Result r = report({path, "--section", "gpu"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("no GPU activity in this trace"), std::string::npos) << r.out;
  const json rep = report_json({path, "--section", "gpu"});
  EXPECT_FALSE(rep["gpu"]["present"].get<bool>());
}

// A GPU trace's host tables hold host time only: kernels, copies and sets
// (slices on a GPU's stream tracks) have the GPU work table, and a host span
// named like a kernel (an autotuner's "gelu_v1" around its launches) keeps
// its own row. Before, the GPU work merged into compile_times, phases (self
// shares of host plus GPU time) and the slowest spans, as on the H200.
TEST(ReportGpu, HostTablesLeaveGpuWorkToItsOwnTable) {
  const std::string path = write_temp("report_gpu_work", R"([
{"ph":"X","name":"[0/0] net__a_0","cat":"compile_unit","ts":0,"dur":100,"pid":1,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"lower","ts":10,"dur":60,"pid":1,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"gelu_v1","ts":200,"dur":40,"pid":1,"tid":1},
{"ph":"X","name":"gelu_v1","ts":205,"dur":500,"pid":10000001,"tid":7,"args":{"device":0,"stream":7,"grid":[1,1,1],"compiled_by_id":"0/0"}},
{"ph":"X","name":"gelu_v1","ts":710,"dur":300,"pid":10000001,"tid":7,"args":{"device":0,"stream":7,"grid":[1,1,1],"compiled_by_id":"0/0"}},
{"ph":"X","name":"Memcpy HtoD","ts":1100,"dur":900,"pid":10000001,"tid":7,"args":{"device":0,"stream":7,"bytes":4096}},
{"ph":"X","name":"Memset","ts":2100,"dur":7,"pid":10000001,"tid":7,"args":{"device":0,"stream":7,"bytes":64}}
])");
  const json rep = report_json({path, "--top", "10"});
  std::map<std::string, json> host;
  for (const json& row : rep["compile_times"]) host[row["name"]] = row;
  ASSERT_EQ(host.size(), 2u) << rep["compile_times"].dump();
  EXPECT_EQ(host.at("gelu_v1")["count"].get<int>(), 1);
  EXPECT_EQ(host.at("gelu_v1")["total_ns"].get<long long>(), 40000);
  EXPECT_EQ(host.count("lower"), 1u);
  long long self_sum = 0;
  for (const json& row : rep["phases"]) self_sum += row["self_ns"].get<long long>();
  EXPECT_EQ(rep["phases"].size(), 2u) << rep["phases"].dump();
  EXPECT_EQ(self_sum, 100000);  // lower 60 µs + gelu_v1 40 µs; the unit's own 40 µs is its row
  for (const json& s : rep["top_spans"]) EXPECT_NE(s["pid"], 10000001) << s.dump();

  std::map<std::string, json> gpu;
  for (const json& row : rep["gpu"]["names"]) gpu[row["name"]] = row;
  ASSERT_EQ(gpu.size(), 3u) << rep["gpu"]["names"].dump();
  EXPECT_EQ(gpu.at("gelu_v1")["kind"], "kernel");
  EXPECT_EQ(gpu.at("gelu_v1")["count"].get<int>(), 2);
  EXPECT_EQ(gpu.at("gelu_v1")["total_ns"].get<long long>(), 800000);
  EXPECT_EQ(gpu.at("Memcpy HtoD")["kind"], "copy");
  EXPECT_EQ(gpu.at("Memset")["kind"], "set");
  EXPECT_EQ(rep["gpu"]["names"][0]["name"], "Memcpy HtoD");  // by total, desc

  const Result table = report({path, "--section", "compile_times,gpu"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("== GPU work and CUDA calls per name"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("Memcpy HtoD"), table.out.rfind("Memcpy HtoD")) << table.out;
  EXPECT_GT(table.out.find("Memcpy HtoD"), table.out.find("== GPU work and CUDA calls"))
      << table.out;
  const Result csv = report({path, "--format", "csv", "--section", "gpu"});
  EXPECT_NE(csv.out.find("# gpu_work\nname,kind,count,total_ns,mean_ns,min_ns,max_ns,p50_ns,"
                         "p90_ns,p99_ns\nMemcpy HtoD,copy,1,900000,"),
            std::string::npos)
      << csv.out;
}

// The CUDA calls CUPTI records on host threads (cat "cuda" with their
// correlation id; "cupti" for its overhead) are CUDA's time, not the
// compiler's: on an H200 with Triton, cudaDeviceGetStreamPriorityRange (128
// ms of torch's CUDA start) and 35 other calls filled the compile-times
// table. They are rows of the GPU table, kind "call"; a phase that made
// them keeps their time in its self time; a user span of category "cuda"
// without a correlation stays a host span.
TEST(ReportGpu, CudaCallsOnHostThreadsAreRowsBesideTheGpuWork) {
  const std::string path = write_temp("report_cuda_calls", R"([
{"ph":"X","name":"[0/0] net__a_0","cat":"compile_unit","ts":0,"dur":1000,"pid":1,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"cubin","cat":"phase","ts":100,"dur":600,"pid":1,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"cuModuleLoadData","cat":"cuda","ts":200,"dur":400,"pid":1,"tid":1,"args":{"correlation":7,"compile_id":"0/0","compile_unit":"[0/0] net__a_0"}},
{"ph":"X","name":"cudaDeviceGetStreamPriorityRange","cat":"cuda","ts":2000,"dur":5000,"pid":1,"tid":1,"args":{"correlation":1}},
{"ph":"X","name":"CUPTI overhead: buffer request","cat":"cupti","ts":8000,"dur":300,"pid":1,"tid":2},
{"ph":"X","name":"my_cuda_span","cat":"cuda","ts":9000,"dur":50,"pid":1,"tid":1}
])");
  const json rep = report_json({path, "--top", "10"});
  std::map<std::string, json> host;
  for (const json& row : rep["compile_times"]) host[row["name"]] = row;
  EXPECT_EQ(host.size(), 2u) << rep["compile_times"].dump();
  EXPECT_EQ(host.count("cubin"), 1u);
  EXPECT_EQ(host.count("my_cuda_span"), 1u) << "no correlation: the user's own span";
  std::map<std::string, json> phases;
  for (const json& row : rep["phases"]) phases[row["name"]] = row;
  ASSERT_EQ(phases.size(), 2u) << rep["phases"].dump();
  EXPECT_EQ(phases.at("cubin")["self_ns"].get<long long>(), 600000) << "the load stays in its time";
  EXPECT_EQ(phases.count("my_cuda_span"), 1u);
  std::set<std::string> top;
  for (const json& s : rep["top_spans"]) top.insert(s["name"].get<std::string>());
  EXPECT_EQ(top, (std::set<std::string>{"[0/0] net__a_0", "cubin", "my_cuda_span"}))
      << rep["top_spans"].dump();
  std::map<std::string, json> calls;
  for (const json& row : rep["gpu"]["names"]) calls[row["name"]] = row;
  ASSERT_EQ(calls.size(), 3u) << rep["gpu"]["names"].dump();
  for (const auto& [name, row] : calls) EXPECT_EQ(row["kind"], "call") << name;
  EXPECT_EQ(calls.at("cuModuleLoadData")["total_ns"].get<long long>(), 400000);
  EXPECT_FALSE(rep["gpu"]["present"].get<bool>()) << "calls are not GPU work";

  const Result table = report({path, "--section", "gpu"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("no GPU activity"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("cudaDeviceGetStreamPriorityRange"), std::string::npos) << table.out;
}

// ---- compile units of several processes (a jitscope-merge output) ----

TEST(ReportUnits, KeyedByPidAndCompileId) {
  // Both processes have a unit 0/0; the GPU slice (pid 10000000 * (device
  // + 1) + host pid) names 0/0 of host pid 2.
  const std::string path = write_temp("report_multi", R"([
{"ph":"X","name":"[0/0] net__a_0","cat":"compile_unit","ts":0,"dur":10,"pid":1,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"parse","ts":1,"dur":4,"pid":1,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"[0/0] net__b_0","cat":"compile_unit","ts":100,"dur":30,"pid":2,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"parse","ts":101,"dur":7,"pid":2,"tid":1,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"parse","ts":110,"dur":2,"pid":2,"tid":2,"args":{"compile_id":"0/0"}},
{"ph":"X","name":"kern","ts":140,"dur":5,"pid":10000002,"tid":7,"args":{"device":0,"stream":7,"grid":[1,1,1],"compiled_by_id":"0/0","compiled_by":"[0/0] net__b_0"}}
])");
  const json rep = report_json({path});
  ASSERT_EQ(rep["units"].size(), 2u) << rep["units"].dump();
  const json& a = rep["units"][0];
  const json& b = rep["units"][1];
  EXPECT_EQ(a["pid"], 1);
  EXPECT_EQ(a["compile_id"], "0/0");
  EXPECT_EQ(a["name"], "net__a_0");
  EXPECT_EQ(a["wall_ns"].get<long long>(), 10000);
  EXPECT_EQ(a["threads"].get<int>(), 1);
  ASSERT_EQ(a["phases"].size(), 1u);
  EXPECT_EQ(a["phases"][0]["count"].get<int>(), 1);
  EXPECT_EQ(a["phases"][0]["total_ns"].get<long long>(), 4000);
  EXPECT_EQ(b["pid"], 2);
  EXPECT_EQ(b["compile_id"], "0/0");
  EXPECT_EQ(b["name"], "net__b_0");
  EXPECT_EQ(b["wall_ns"].get<long long>(), 30000);
  EXPECT_EQ(b["start_ns"].get<long long>(), 100000);
  EXPECT_EQ(b["threads"].get<int>(), 2);
  ASSERT_EQ(b["phases"].size(), 1u);
  EXPECT_EQ(b["phases"][0]["count"].get<int>(), 2);
  EXPECT_EQ(b["phases"][0]["total_ns"].get<long long>(), 9000);
  EXPECT_EQ(b["phases"][0]["self_ns"].get<long long>(), 9000);
  ASSERT_EQ(rep["gpu"]["units"].size(), 1u);
  const json& g = rep["gpu"]["units"][0];
  EXPECT_EQ(g["pid"], 2);
  EXPECT_EQ(g["kernels"].get<int>(), 1);
  EXPECT_EQ(g["first_launch_latency_ns"].get<long long>(), 140000 - 130000);

  // The tables get a pid column (only when units come from several processes).
  const Result csv = report({path, "--format", "csv", "--section", "units"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("pid,compile_id,name,wall_ns,slices,threads\n1,0/"
                         "0,net__a_0,10000,1,1\n2,0/0,net__b_0,30000,1,2\n"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("pid,compile_id,phase,count,total_ns,self_ns\n1,0/"
                         "0,parse,1,4000,4000\n2,0/0,parse,2,9000,9000\n"),
            std::string::npos)
      << csv.out;
  const Result table = report({path, "--section", "units,gpu"});
  EXPECT_NE(table.out.find("pid  compile_id"), std::string::npos) << table.out;
  const std::string one = write_temp("report_one_process", R"([
{"ph":"X","name":"[0/0] net__a_0","cat":"compile_unit","ts":0,"dur":10,"pid":1,"tid":1,"args":{"compile_id":"0/0"}}])");
  const Result single = report({one, "--format", "csv", "--section", "units"});
  EXPECT_NE(single.out.find("compile_id,name,wall_ns,slices,threads\n0/0,"), std::string::npos)
      << single.out;
  EXPECT_EQ(single.out.find("pid"), std::string::npos) << single.out;
  EXPECT_EQ(report_json({one})["units"][0]["pid"], 1);
}

}  // namespace
