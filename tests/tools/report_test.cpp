// jitscope-report end to end: the binary runs as a subprocess on traces made
// here, and its --format json is compared exactly with what this test
// computes independently from the trace with nlohmann::json.
//
// Covered: a trace written with the SDK in this process (compile units on two
// threads, nested phases); the pass_pipeline sample's trace with its metrics
// file (when the sample is built); hand-written B/E and PyTorch-profiler-like
// traces (string pids/tids, flows, the object form, the unterminated array
// form, unmatched B/E); clang -ftime-trace (skipped when no clang++ was
// found at configure time); GPU attribution from gpu_trace_writer's trace
// (when built, i.e. with the CUPTI headers); every format and --section;
// stdin; units of two processes with the same compile ids (pid-keyed rows,
// a GPU pid mapped to its host); many late spans under deep nesting (fast,
// exact) and exact self times across the 16384-span reorder window; times
// whose end overflows int64 ns (skipped, warned; sums saturate); --output
// through a temp file and rename;
// malformed inputs, unreadable paths, bad metrics lines and bad usage:
// one error line, exit 1 (2 for usage), never a signal, never a hang.
// Not covered: traces larger than a few MB (bench/report runs 1 GB), a real
// GPU (the gpu label's tests), writing to a full disk.
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

using jitscope::testing::read_file;
using jitscope::testing::temp_path;
using nlohmann::json;

// ---- running a program ----

struct Result {
  int code = -1;
  bool signaled = false;
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
};

// Runs argv[0] with stdout/stderr captured and stdin from `in`; kills it
// after `timeout` (a hang is a failure, never a stuck test).
Result run(const std::vector<std::string>& args, const std::string& in = "/dev/null",
           std::chrono::seconds timeout = std::chrono::seconds(120)) {
  Result r;
  jitscope::testing::SpawnOptions options;
  options.stdin_path = in;
  jitscope::testing::Subprocess p =
      jitscope::testing::spawn(args, temp_path("report_run"), options);
  if (p.pid <= 0) {
    ADD_FAILURE() << p.spawn_error;
    return r;
  }
  p.wait(timeout);
  r.timed_out = p.timed_out;
  r.signaled = p.signal != 0;
  r.signal = p.signal;
  r.code = p.exit_code;
  r.out = p.out();
  r.err = p.err();
  p.remove_outputs();
  return r;
}

Result report(std::vector<std::string> args, const std::string& in = "/dev/null") {
  args.insert(args.begin(), JITSCOPE_REPORT);
  return run(args, in);
}

// Runs the report with --format json; the parsed output.
json report_json(std::vector<std::string> args) {
  args.push_back("--format");
  args.push_back("json");
  const Result r = report(args);
  EXPECT_FALSE(r.signaled) << "signal " << r.signal;
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "report output is not JSON: " << e.what() << "\n" << r.out.substr(0, 500);
    return json::object();
  }
}

std::string write_temp(const std::string& stem, const std::string& content) {
  const std::string path = temp_path(stem);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// ---- the independent totals ----

// Time in ns from a ts/dur number: three decimals at most in these traces,
// and small enough that the double is exact to well under 1 ns.
long long ns_of(const json& v) {
  if (v.is_string()) return std::llround(std::stod(v.get<std::string>()) * 1000.0);
  return std::llround(v.get<double>() * 1000.0);
}

struct Totals {
  struct Name {
    unsigned long long count = 0;
    long long total = 0, min = 0, max = 0, self = 0;
  };
  struct Phase {
    unsigned long long count = 0;
    long long total = 0, self = 0;
  };
  struct Unit {
    long long wall = -1, start = 0, end = 0, own_end = -1;
    unsigned long long slices = 0;
    std::set<std::string> threads;
    std::map<std::string, Phase> phases;
  };
  struct Span {
    long long start, end;
    std::size_t seq;
    std::string name;  // empty: a compile-unit slice (nests others, no row)
    std::string phase_unit;
  };
  std::map<std::string, Name> names;
  std::map<std::string, Unit> units;
  std::vector<std::tuple<long long, long long, std::size_t, std::string, std::string>>
      top;  // -dur, ts, seq, name, unit
  unsigned long long events = 0, spans = 0;
};

std::string thread_key(const json& e) {
  return e.value("pid", json()).dump() + "/" + e.value("tid", json()).dump();
}

Totals compute(const json& events) {
  Totals t;
  std::map<std::string, std::vector<Totals::Span>> by_thread;
  std::map<std::string, std::vector<json>> open_b;
  std::size_t seq = 0;
  auto add_span = [&](const json& e, const std::string& name, const std::string& cat,
                      long long start, long long dur, const json& args) {
    ++t.spans;
    const std::string cid =
        args.is_object() && args.contains("compile_id") && args["compile_id"].is_string()
            ? args["compile_id"].get<std::string>()
            : "";
    const bool unit_slice = cat == "compile_unit" && !cid.empty();
    const bool gpu = args.is_object() && args.contains("device") && args.contains("stream");
    const std::string tk = thread_key(e);
    const std::size_t s = seq++;
    if (unit_slice) {
      Totals::Unit& u = t.units[cid];
      if (u.slices == 0) {
        u.start = start;
        u.end = start + dur;
      }
      ++u.slices;
      u.start = std::min(u.start, start);
      u.end = std::max(u.end, start + dur);
      u.threads.insert(tk);
      if (!args.value("attached", false) && dur > u.wall) {
        u.wall = dur;
        u.own_end = start + dur;
      }
    } else {
      Totals::Name& n = t.names[name];
      if (n.count == 0) n.min = n.max = dur;
      ++n.count;
      n.total += dur;
      n.min = std::min(n.min, dur);
      n.max = std::max(n.max, dur);
      if (!cid.empty() && !gpu) {
        Totals::Unit& u = t.units[cid];
        ++u.phases[name].count;
        u.phases[name].total += dur;
        u.threads.insert(tk);
      }
    }
    t.top.emplace_back(-dur, start, s, name, cid);
    by_thread[tk].push_back(
        {start, start + dur, s, unit_slice ? "" : name, (unit_slice || gpu) ? "" : cid});
  };
  for (const json& e : events) {
    ++t.events;
    const std::string ph = e.value("ph", "");
    if (ph == "X" && e.contains("ts")) {
      add_span(e, e.value("name", ""), e.value("cat", ""), ns_of(e["ts"]),
               e.contains("dur") ? ns_of(e["dur"]) : 0, e.value("args", json()));
    } else if (ph == "B") {
      open_b[thread_key(e)].push_back(e);
    } else if (ph == "E") {
      auto& stack = open_b[thread_key(e)];
      if (stack.empty()) continue;
      const json b = stack.back();
      stack.pop_back();
      json args = b.value("args", json());
      if (!(args.is_object() && args.contains("compile_id"))) args = e.value("args", json());
      add_span(b, b.value("name", ""), b.value("cat", ""), ns_of(b["ts"]),
               ns_of(e["ts"]) - ns_of(b["ts"]), args);
    }
  }
  // Self times: each thread's spans in start order (parent first on equal
  // starts, then arrival order), as a stack.
  for (auto& [tk, spans] : by_thread) {
    std::sort(spans.begin(), spans.end(), [](const Totals::Span& a, const Totals::Span& b) {
      return std::tie(a.start, b.end, a.seq) < std::tie(b.start, a.end, b.seq);
    });
    struct Open {
      const Totals::Span* s;
      long long children;
    };
    std::vector<Open> stack;
    auto close = [&] {
      const Open o = stack.back();
      stack.pop_back();
      const long long self = std::max(0LL, (o.s->end - o.s->start) - o.children);
      if (o.s->name.empty()) return;
      t.names[o.s->name].self += self;
      if (!o.s->phase_unit.empty()) t.units[o.s->phase_unit].phases[o.s->name].self += self;
    };
    for (const Totals::Span& s : spans) {
      while (!stack.empty()) {
        if (stack.back().s->end <= s.start) {
          close();
        } else if (s.end <= stack.back().s->end) {
          stack.back().children += s.end - s.start;
          break;
        } else {
          close();
        }
      }
      stack.push_back({&s, 0});
    }
    while (!stack.empty()) close();
  }
  std::sort(t.top.begin(), t.top.end());
  return t;
}

// The report's JSON against the totals, exactly.
void expect_matches(const json& rep, const Totals& t, std::size_t top_n) {
  ASSERT_TRUE(rep.contains("compile_times")) << rep.dump().substr(0, 300);
  EXPECT_EQ(rep["header"]["events"].get<unsigned long long>(), t.events);
  EXPECT_EQ(rep["header"]["spans"].get<unsigned long long>(), t.spans);

  // compile_times: every name, in total-descending order, exact ns.
  ASSERT_EQ(rep["compile_times"].size(), t.names.size());
  long long prev_total = std::numeric_limits<long long>::max();
  for (const json& row : rep["compile_times"]) {
    const std::string name = row["name"];
    ASSERT_TRUE(t.names.count(name)) << name;
    const Totals::Name& n = t.names.at(name);
    EXPECT_EQ(row["count"].get<unsigned long long>(), n.count) << name;
    EXPECT_EQ(row["total_ns"].get<long long>(), n.total) << name;
    EXPECT_EQ(row["min_ns"].get<long long>(), n.min) << name;
    EXPECT_EQ(row["max_ns"].get<long long>(), n.max) << name;
    EXPECT_EQ(row["mean_ns"].get<long long>(), n.total / static_cast<long long>(n.count)) << name;
    EXPECT_LE(row["total_ns"].get<long long>(), prev_total);
    prev_total = row["total_ns"].get<long long>();
  }
  ASSERT_EQ(rep["phases"].size(), t.names.size());
  for (const json& row : rep["phases"]) {
    const Totals::Name& n = t.names.at(row["name"].get<std::string>());
    EXPECT_EQ(row["count"].get<unsigned long long>(), n.count) << row["name"];
    EXPECT_EQ(row["total_ns"].get<long long>(), n.total) << row["name"];
    EXPECT_EQ(row["self_ns"].get<long long>(), n.self) << row["name"];
  }

  // units: wall time, slices, threads, and per phase count/total/self.
  std::map<std::string, const json*> units;
  for (const json& u : rep["units"]) units[u["compile_id"].get<std::string>()] = &u;
  ASSERT_EQ(units.size(), t.units.size());
  for (const auto& [id, u] : t.units) {
    ASSERT_TRUE(units.count(id)) << id;
    const json& ru = *units.at(id);
    if (u.slices > 0) {
      EXPECT_TRUE(ru["in_trace"].get<bool>()) << id;
      EXPECT_EQ(ru["wall_ns"].get<long long>(), u.wall >= 0 ? u.wall : u.end - u.start) << id;
      EXPECT_EQ(ru["start_ns"].get<long long>(), u.start) << id;
      EXPECT_EQ(ru["end_ns"].get<long long>(), u.end) << id;
    } else {
      EXPECT_FALSE(ru["in_trace"].get<bool>()) << id;
      EXPECT_TRUE(ru["wall_ns"].is_null()) << id;
    }
    EXPECT_EQ(ru["slices"].get<unsigned long long>(), u.slices) << id;
    EXPECT_EQ(ru["threads"].get<unsigned long long>(), u.threads.size()) << id;
    ASSERT_EQ(ru["phases"].size(), u.phases.size()) << id;
    for (const json& p : ru["phases"]) {
      const std::string name = p["name"];
      ASSERT_TRUE(u.phases.count(name)) << id << " " << name;
      EXPECT_EQ(p["count"].get<unsigned long long>(), u.phases.at(name).count) << id << " " << name;
      EXPECT_EQ(p["total_ns"].get<long long>(), u.phases.at(name).total) << id << " " << name;
      EXPECT_EQ(p["self_ns"].get<long long>(), u.phases.at(name).self) << id << " " << name;
    }
  }

  // the slowest spans, slowest first
  const std::size_t n = std::min(top_n, t.top.size());
  ASSERT_EQ(rep["top_spans"].size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& [neg_dur, ts, seq, name, cid] = t.top[i];
    const json& row = rep["top_spans"][i];
    EXPECT_EQ(row["dur_ns"].get<long long>(), -neg_dur) << i;
    EXPECT_EQ(row["ts_ns"].get<long long>(), ts) << i;
    if (!name.empty()) {
      EXPECT_EQ(row["name"].get<std::string>(), name) << i;
    }
    EXPECT_EQ(row["compile_id"].is_null() ? std::string() : row["compile_id"].get<std::string>(),
              cid)
        << i;
  }
}

json load_events(const std::string& path) {
  json t = jitscope::testing::load_trace(path, /*allow_cut=*/true);
  return t.is_object() ? t["traceEvents"] : t;
}

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
  std::map<std::string, std::pair<long long, long long>> want = {
      {"step", {10000, 2500}},      {"fwd", {3000, 3000}},         {"bwd", {4500, 4500}},
      {"aten::mm", {50250, 40250}}, {"aten::add", {10000, 10000}}, {"gemm [\"]}", {30000, 30000}}};
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
  EXPECT_EQ(rep["top_spans"][2]["name"], "step");
  EXPECT_EQ(rep["top_spans"][2]["thread"], "main \"thread\"");
  EXPECT_EQ(rep["top_spans"][2]["pid"], 1);
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
       {"# header\nfield,value\n", "# compile_times\nname,count,total_ns,mean_ns,min_ns,max_ns\n",
        "aten::mm,1,50250,50250,50250,50250\n", "# phases\n", "# units\n", "# unit_phases\n",
        "# top_spans\n", "# gpu\n", "\"gemm [\"\"]}\""}) {
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
  EXPECT_EQ(keys, (std::set<std::string>{"top_spans", "compile_times"}));
  const json all = report_json({path});
  keys.clear();
  for (const auto& [k, v] : all.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"header", "compile_times", "phases", "units", "top_spans",
                                         "gpu"}));

  const std::string out = temp_path("report_output");
  const Result to_file = report({path, "--output", out, "-f", "json"});
  EXPECT_EQ(to_file.code, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  EXPECT_EQ(json::parse(read_file(out)), all);

  const json top0 = report_json({path, "--top", "0"});
  EXPECT_TRUE(top0["top_spans"].empty());
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

// ---- self time: late spans, the reorder window ----

// ns as a ts/dur token in µs, exact.
std::string us(long long ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", ns / 1000, ns % 1000);
  return buf;
}

std::string x_event(const char* name, long long start, long long dur, int tid = 1) {
  return std::string(R"({"ph":"X","name":")") + name + R"(","pid":1,"tid":)" + std::to_string(tid) +
         R"(,"ts":)" + us(start) + R"(,"dur":)" + us(dur) + "}";
}

TEST(ReportSelfTime, ManyLateSpansUnderDeepNestingAreFastAndExact) {
  // D nested spans in start order (the open stack grows to D - 16384), then
  // M late 1 ns spans inside the outermost only: before, each late span
  // walked the whole open stack (quadratic). Here the approximation for a
  // late span (self = its duration, charged to the innermost open span
  // containing it) is also the exact answer, so compute() must match.
  const long long D = 50000, M = 50000, big = 1000000000;
  std::string content = "[";
  content += x_event("outer", 0, big);
  for (long long i = 1; i < D; ++i) content += ",\n" + x_event("nest", M + i, big - 2 * i - M);
  for (long long j = 0; j < M; ++j) content += ",\n" + x_event("late", j, 1);
  content += "]";
  const std::string path = write_temp("report_late", content);
  const auto t0 = std::chrono::steady_clock::now();
  const Result r =
      run({JITSCOPE_REPORT, path, "--format", "json"}, "/dev/null", std::chrono::seconds(60));
  ASSERT_FALSE(r.timed_out) << "the report took over 60 s";
  ASSERT_EQ(r.code, 0) << r.err;
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const json rep = json::parse(r.out);
  expect_matches(rep, compute(json::parse(content)), 10);
  EXPECT_EQ(
      rep["header"]["warnings"][0],
      std::to_string(M) + " spans arrived too far out of order for exact self times (approximated)")
      << rep["header"].dump();
  RecordProperty("seconds", std::to_string(secs));
}

TEST(ReportSelfTime, ExactAcrossTheReorderWindow) {
  // Thread 1, written in end order (children first, as jitscope does):
  // N > 16384 children with a grandchild each, then their parent. Every
  // child and grandchild is released in order: exact. The parent comes
  // more than the window late: its self time is its whole duration (the
  // documented approximation), one late span. Thread 2: the same with
  // fewer spans than the window: all exact.
  const long long N = 20000, n2 = 100;
  std::string content = "[";
  bool first = true;
  auto add = [&](const std::string& e) {
    content += (first ? "" : ",\n") + e;
    first = false;
  };
  for (int tid : {1, 2}) {
    const long long n = tid == 1 ? N : n2;
    for (long long i = 0; i < n; ++i) {
      add(x_event(tid == 1 ? "grand" : "grand2", i * 10 + 1, 2, tid));
      add(x_event(tid == 1 ? "child" : "child2", i * 10, 5, tid));
    }
    add(x_event(tid == 1 ? "parent" : "parent2", 0, n * 10, tid));
  }
  content += "]";
  const std::string path = write_temp("report_window", content);
  const json rep = report_json({path});
  std::map<std::string, long long> self;
  for (const json& row : rep["phases"]) self[row["name"]] = row["self_ns"].get<long long>();
  EXPECT_EQ(self["grand"], N * 2);
  EXPECT_EQ(self["child"], N * 3);
  EXPECT_EQ(self["parent"], N * 10);  // late: its whole duration (exact would be N * 5)
  EXPECT_EQ(self["grand2"], n2 * 2);
  EXPECT_EQ(self["child2"], n2 * 3);
  EXPECT_EQ(self["parent2"], n2 * 5);  // within the window: exact
  ASSERT_EQ(rep["header"]["warnings"].size(), 1u) << rep["header"].dump();
  EXPECT_EQ(rep["header"]["warnings"][0],
            "1 spans arrived too far out of order for exact self times (approximated)");
}

// ---- hostile numbers: no signed overflow ----

void expect_error(const Result& r, int code, const std::string& fragment, const std::string& what);

TEST(ReportOverflow, EndsBeyondInt64AreSkippedAndWarned) {
  const std::string warning =
      "events whose end (ts + dur, or E - B) does not fit in int64 ns (ignored)";
  const std::string x = write_temp("report_ovf_x", R"([
{"ph":"X","name":"x","ts":9000000000000000,"dur":9000000000000000,"pid":1,"tid":1},
{"ph":"X","name":"ok","ts":1,"dur":2,"pid":1,"tid":1}])");
  json rep = report_json({x});
  EXPECT_EQ(rep["header"]["spans"].get<int>(), 1);
  ASSERT_EQ(rep["compile_times"].size(), 1u);
  EXPECT_EQ(rep["compile_times"][0]["name"], "ok");
  EXPECT_EQ(rep["header"]["time_span"]["begin_ns"].get<long long>(), 1000);
  EXPECT_EQ(rep["header"]["time_span"]["end_ns"].get<long long>(), 3000);
  ASSERT_EQ(rep["header"]["warnings"].size(), 1u);
  EXPECT_EQ(rep["header"]["warnings"][0], "1 " + warning);

  const std::string be = write_temp("report_ovf_be", R"([
{"ph":"B","name":"b","ts":-9000000000000000,"pid":1,"tid":1},
{"ph":"E","ts":9000000000000000,"pid":1,"tid":1}])");
  rep = report_json({be});
  EXPECT_EQ(rep["header"]["spans"].get<int>(), 0);
  EXPECT_TRUE(rep["compile_times"].empty());
  // The header's duration saturates instead of overflowing.
  EXPECT_EQ(rep["header"]["time_span"]["duration_ns"].get<long long>(),
            std::numeric_limits<long long>::max());
  ASSERT_EQ(rep["header"]["warnings"].size(), 1u);
  EXPECT_EQ(rep["header"]["warnings"][0], "1 " + warning);
  for (const std::string& f : {x, be}) {
    for (const char* fmt : {"table", "csv", "markdown"}) {
      const Result r = report({f, "--format", fmt});
      EXPECT_EQ(r.code, 0) << fmt << ": " << r.err;
    }
  }

  // Sums saturate: two spans of 9e18 ns.
  const std::string sum = write_temp("report_ovf_sum", R"([
{"ph":"X","name":"s","ts":0,"dur":9000000000000000,"pid":1,"tid":1},
{"ph":"X","name":"s","ts":0,"dur":9000000000000000,"pid":1,"tid":2}])");
  rep = report_json({sum});
  EXPECT_EQ(rep["compile_times"][0]["total_ns"].get<long long>(),
            std::numeric_limits<long long>::max());

  // Metrics: µs that do not fit in int64 ns.
  const std::string trace = write_temp("report_ovf_mtrace", "[]");
  for (const char* line : {R"({"compile_id":"0/0","duration_us":9223372036854775807})",
                           R"({"compile_id":"0/0","duration_us":1e300})"}) {
    const std::string m = write_temp("report_ovf_metrics", std::string(line) + "\n");
    expect_error(report({trace, "--metrics", m}), 1,
                 m + ": line 1: \"duration_us\" is not a number", line);
  }
  const std::string m = write_temp(
      "report_ovf_metrics_ok",
      R"({"compile_id":"0/0","duration_us":5,"parse_us":1e300,"x_us":9223372036854775807})"
      "\n"
      R"({"compile_id":null,"duration_us":9223372036854775})"
      "\n"
      R"({"compile_id":null,"duration_us":9223372036854775})"
      "\n");
  rep = report_json({trace, "--metrics", m});
  EXPECT_TRUE(rep["units"][0]["metrics"]["columns_ns"].empty());
  EXPECT_EQ(rep["header"]["metrics"]["runtime_duration_ns"].get<long long>(),
            std::numeric_limits<long long>::max());
}

// ---- --output: a temporary file renamed over the target ----

TEST(ReportOutput, WrittenToATempFileAndRenamed) {
  const std::string trace =
      write_temp("report_out_trace", R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}])");
  const std::string dir = temp_path("report_out_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const std::string out = dir + "/report.json";
  std::ofstream(out) << "old content that is longer than nothing";
  const Result r = report({trace, "--output", out, "-f", "json", "-s", "compile_times"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(read_file(out))["compile_times"][0]["name"], "a");
  // Nothing else is left in the folder.
  const Result ls = run({"/bin/ls", "-A", dir});
  EXPECT_EQ(ls.out, "report.json\n");
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
  // A device is written in place; a failed write is an error that leaves no temp file.
  EXPECT_EQ(report({trace, "--output", "/dev/null"}).code, 0);
  struct stat full {};
  if (::stat("/dev/full", &full) == 0) {
    expect_error(report({trace, "--output", "/dev/full"}), 1, "/dev/full: cannot write the report",
                 "/dev/full");
  }
}

// ---- errors: one line, exit 1 (2 for usage), never a signal ----

void expect_error(const Result& r, int code, const std::string& fragment, const std::string& what) {
  EXPECT_FALSE(r.signaled) << what << ": killed by signal " << r.signal;
  EXPECT_FALSE(r.timed_out) << what;
  EXPECT_EQ(r.code, code) << what << ": " << r.err;
  EXPECT_EQ(r.err.rfind("jitscope-report: error: ", 0), 0u) << what << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << what << ": " << r.err;
  EXPECT_EQ(r.out, "") << what;
}

TEST(ReportErrors, MalformedAndUnreadableInputs) {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary.push_back(static_cast<char>((i * 7919 + 13) & 0xff));
  binary[0] = '\x89';
  struct Case {
    std::string content, fragment;
  };
  const std::vector<Case> cases = {
      {"", "byte 0: empty input: not a trace"},
      {"garbage", "byte 0: not a trace: expected '[' or '{', found 'g'"},
      {"[{\"ph\":\"X\",\"name\":\"a\"},\n{\"ph\":\"X\",\"na",
       "byte 37: input ends inside an event that starts at byte 24"},
      {"{\"otherData\":{}}", "no \"traceEvents\" array"},
      {"{\"traceEvents\":[{\"ph\":\"X\"}]", "input ends inside the top-level object"},
      {std::string(100000, '['), "byte 1: an event is not a JSON object (found '[')"},
      {"[{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}]",
       "nesting deeper than 256 levels"},
      {binary, "not a trace"},
      {"[{\"ph\":\"X\",}]", "byte 1: event is not valid JSON"},
      {"[{\"ph\":\"X\",\"name\":\"\xff\"}]", "byte 1: event is not valid JSON"},
      {"[{}]trailing", "garbage after the end of the trace"},
  };
  for (const Case& c : cases) {
    const std::string path = write_temp("report_bad", c.content);
    const Result r = report({path});
    expect_error(r, 1, c.fragment, c.content.substr(0, 30));
    EXPECT_EQ(r.err.rfind("jitscope-report: error: " + path + ": ", 0), 0u) << r.err;
  }
  const std::string dir = temp_path("report_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  expect_error(report({dir}), 1, dir + ": is a directory", "a directory");
  expect_error(report({dir + "/missing.json"}), 1,
               "missing.json: cannot open: No such file or directory", "a missing file");
  // An output that cannot be written.
  const std::string good = write_temp("report_good", "[]");
  expect_error(report({good, "--output", dir + "/no/such/dir/out.txt"}), 1,
               "cannot open for writing", "output");
}

TEST(ReportErrors, BadMetricsLines) {
  const std::string trace =
      write_temp("report_mtrace", R"([{"ph":"X","name":"a","pid":1,"tid":1,"ts":0,"dur":1}])");
  struct Case {
    std::string metrics, fragment;
  };
  const std::vector<Case> cases = {
      {"{\"compile_id\":\"0/0\",\"duration_us\":5}\nnot json\n", ": line 2: not valid JSON"},
      {"[1,2]\n", ": line 1: not a JSON object"},
      {"{\"name\":\"x\"}\n", ": line 1: no \"compile_id\""},
      {"\n\n{\"compile_id\":5}\n", ": line 3: \"compile_id\" is not a non-empty string or null"},
      {"{\"compile_id\":\"0/0\",\"duration_us\":\"x\"}\n",
       ": line 1: \"duration_us\" is not a number"},
      {"{\"compile_id\":\"0/0\",\"record\":\"gpu\",\"gpu\":3}\n",
       ": line 1: \"gpu\" is not an object"},
      {"{\"compile_id\":\"0/0\"", ": line 1: not valid JSON"},
  };
  for (const Case& c : cases) {
    const std::string m = write_temp("report_metrics", c.metrics);
    expect_error(report({trace, "--metrics", m}), 1, m + c.fragment, c.metrics);
  }
  expect_error(report({trace, "--metrics", trace + ".missing"}), 1, "cannot open",
               "missing metrics");

  // A good metrics file joins a unit the trace does not have.
  const std::string m =
      write_temp("report_metrics_ok",
                 "{\"compile_id\":\"7/0\",\"name\":\"net__g_0\",\"duration_us\":12,"
                 "\"caches\":{\"k\":{\"hits\":2,\"misses\":1}}}\n"
                 "{\"compile_id\":null,\"name\":\"runtime\",\"duration_us\":3}\n"
                 "{\"compile_id\":\"7/"
                 "0\",\"name\":\"net__g_0\",\"record\":\"gpu\",\"gpu\":{\"kernels\":4}}\n");
  const json rep = report_json({trace, "--metrics", m});
  ASSERT_EQ(rep["units"].size(), 1u);
  const json& u = rep["units"][0];
  EXPECT_EQ(u["compile_id"], "7/0");
  EXPECT_EQ(u["name"], "net__g_0");
  EXPECT_FALSE(u["in_trace"].get<bool>());
  EXPECT_EQ(u["metrics"]["duration_ns"].get<long long>(), 12000);
  EXPECT_EQ(u["metrics"]["cache_hits"].get<long long>(), 2);
  EXPECT_EQ(u["metrics"]["gpu"]["kernels"].get<long long>(), 4);
  EXPECT_EQ(rep["header"]["metrics"]["runtime_records"].get<int>(), 1);
  EXPECT_EQ(rep["header"]["metrics"]["runtime_duration_ns"].get<long long>(), 3000);
}

TEST(ReportErrors, Usage) {
  const Result none = report({});
  EXPECT_FALSE(none.signaled);
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_EQ(none.err.rfind("jitscope-report: error: ", 0), 0u) << none.err;
  const std::string good = write_temp("report_usage", "[]");
  for (const std::vector<std::string>& args : {std::vector<std::string>{good, "--format", "xml"},
                                               {good, "--top", "-1"},
                                               {good, "--section", "bogus"},
                                               {good, "--bogus"},
                                               {good, "extra"}}) {
    const Result r = report(args);
    EXPECT_FALSE(r.signaled);
    EXPECT_EQ(r.code, 2) << args[1] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("jitscope-report: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  const Result help = report({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--metrics"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--section"), std::string::npos) << help.out;
}

}  // namespace
