// The pass_pipeline sample end to end: runs the real binary once with its
// defaults (6 graphs, 2 codegen workers), --trace and --metrics, and checks
// its metrics file and trace against the design in
// samples/pass_pipeline/main.cpp: 6 first compiles [0/0]..[5/0] with 3, 4, 5,
// 3, 4, 5 kernels, [3/0] failing on its last kernel, a recompile [0/1] of
// graph 0 that finds 2 of its 3 kernels cached, and one runtime record;
// each unit's artifacts (graph dumps, kernel sources, log) on disk as listed.
//
// Not covered: the progress bar (needs a terminal), the tables printed
// without a session (ctest pass_pipeline_tables), what Chrome DevTools makes
// of the trace (ctest viewer_pass_pipeline), the SDK's own edge cases
// (compile_unit_test). Durations are real, so only relations between them
// are checked, never values.
#include "fnv1a_reference.hpp"
#include "trace_support.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>

#ifndef JITSCOPE_PASS_PIPELINE
#error "JITSCOPE_PASS_PIPELINE must name the jitscope_pass_pipeline binary"
#endif

namespace jitscope::testing {
namespace {

using nlohmann::json;

constexpr int kGraphs = 6;
constexpr int kKernels[kGraphs] = {3, 4, 5, 3, 4, 5};  // 3 + i % 3 layers, one kernel each
constexpr const char* kFailedId = "3/0";
constexpr const char* kRecompileId = "0/1";
constexpr const char* kRecompileReason = "input shape changed: [8,16] -> [16,16]";

struct SampleRun {
  int exit_code = -1;
  std::string stdout_text;
  std::string stderr_text;
  std::vector<json> lines;  // metrics file, in order
  json trace;
  std::string parse_error;  // why the outputs did not parse, if they did not
  std::string metrics_path;
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// The sample runs once for the whole file.
const SampleRun& sample_run() {
  static const SampleRun run = [] {
    SampleRun r;
    const std::string trace = temp_path("pass_pipeline_trace");
    const std::string metrics = temp_path("pass_pipeline_metrics") + "l";
    r.metrics_path = metrics;
    const std::string out = temp_path("pass_pipeline_stdout");
    const std::string err = temp_path("pass_pipeline_stderr");
    const std::string cmd = shell_quote(JITSCOPE_PASS_PIPELINE) + " --trace " + shell_quote(trace) +
                            " --metrics " + shell_quote(metrics) + " >" + shell_quote(out) + " 2>" +
                            shell_quote(err);
    const int status = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.stdout_text = read_file(out);
    r.stderr_text = read_file(err);
    try {  // a throw here would rerun the sample on the next call: report it instead
      std::istringstream in(read_file(metrics));
      for (std::string line; std::getline(in, line);) r.lines.push_back(json::parse(line));
      r.trace = load_trace(trace);
    } catch (const std::exception& e) {
      r.parse_error = e.what();
    }
    return r;
  }();
  return run;
}

std::vector<json> units() {
  std::vector<json> out;
  for (const json& l : sample_run().lines) {
    if (!l.at("is_runtime").get<bool>()) out.push_back(l);
  }
  return out;
}

json unit_with_id(const std::string& id) {
  for (const json& u : units()) {
    if (u.at("compile_id") == id) return u;
  }
  ADD_FAILURE() << "no record with compile_id " << id;
  return json::object();
}

std::string first_compile_id(int graph) { return std::to_string(graph) + "/0"; }

TEST(PassPipeline, ExitsZeroAndSaysWhatItWrote) {
  const SampleRun& r = sample_run();
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  ASSERT_EQ(r.parse_error, "") << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("graphs compiled:  5\n"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("recompiles:       1\n"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("failures:         1\n"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("records written:  8\n"), std::string::npos) << r.stdout_text;
  // 7 units x (2 graph dumps + log) + 25 kernels built (24 + 1 on the recompile)
  EXPECT_NE(r.stdout_text.find("artifacts:        46 files, "), std::string::npos) << r.stdout_text;
  EXPECT_EQ(r.stderr_text.find("refused"), std::string::npos) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("Step 21: "), std::string::npos) << r.stderr_text;
}

TEST(PassPipeline, OneMetricsLinePerUnitAndOneRuntimeLine) {
  const SampleRun& r = sample_run();
  ASSERT_EQ(r.lines.size(), 8u);  // 6 graphs + 1 recompile + 1 runtime
  int runtime = 0;
  for (const json& l : r.lines) runtime += l.at("is_runtime").get<bool>() ? 1 : 0;
  EXPECT_EQ(runtime, 1);
  EXPECT_EQ(units().size(), 7u);
}

TEST(PassPipeline, RuntimeRecordHoldsTheStartupPhase) {
  const SampleRun& r = sample_run();
  ASSERT_FALSE(r.lines.empty());
  const json& rt = r.lines.front();  // written when the first unit opens
  ASSERT_TRUE(rt.at("is_runtime").get<bool>());
  EXPECT_TRUE(rt.at("compile_id").is_null());
  EXPECT_EQ(rt.at("name"), "runtime");
  ASSERT_TRUE(rt.contains("load_us"));
  EXPECT_EQ(rt.at("duration_us"), rt.at("load_us"));
  EXPECT_FALSE(rt.contains("entire_compile_us"));
}

TEST(PassPipeline, CompileIdsAreUniqueFrameSlashAttempt) {
  const std::regex form(R"(^(\d+)/(\d+)$)");
  std::set<std::string> seen;
  std::vector<std::string> order;
  for (const json& u : units()) {
    const std::string id = u.at("compile_id").get<std::string>();
    std::smatch m;
    ASSERT_TRUE(std::regex_match(id, m, form)) << id;
    EXPECT_EQ(std::stoul(m[1]), u.at("frame_id").get<unsigned long>()) << id;
    EXPECT_EQ(std::stoul(m[2]), u.at("attempt").get<unsigned long>()) << id;
    EXPECT_TRUE(seen.insert(id).second) << "duplicate compile id " << id;
    order.push_back(id);
  }
  const std::vector<std::string> want = {"0/0", "1/0", "2/0", "3/0", "4/0", "5/0", "0/1"};
  EXPECT_EQ(order, want);
  for (int i = 0; i < kGraphs; ++i) {
    const json u = unit_with_id(first_compile_id(i));
    const std::string name = "mocknet__block" + std::to_string(i / 2) +
                             (i % 2 == 0 ? "_fwd_" : "_bwd_") + std::to_string(i);
    EXPECT_EQ(u.value("name", ""), name);
    EXPECT_EQ(u.value("is_forward", true), i % 2 == 0) << name;
    EXPECT_FALSE(u.contains("recompile_reason")) << name;
    EXPECT_FALSE(u.contains("recompile_user_contexts")) << name;
  }
}

TEST(PassPipeline, RecompileIsTheNextAttemptOfTheSameFrame) {
  const json first = unit_with_id(first_compile_id(0));
  const json again = unit_with_id(kRecompileId);
  EXPECT_EQ(again.value("frame_id", -1), first.value("frame_id", -2));
  EXPECT_EQ(again.value("attempt", -1), 1);
  EXPECT_EQ(again.value("name", ""), "mocknet__block0_fwd_6");
  EXPECT_EQ(again.value("recompile_reason", ""), kRecompileReason);
  EXPECT_EQ(again.value("recompile_user_contexts", json::array()), json::array({"epoch=3"}));
  EXPECT_EQ(first.value("input_shape", ""), "[8,16]");
  EXPECT_EQ(again.value("input_shape", ""), "[16,16]");
  EXPECT_FALSE(again.contains("fail_type"));
}

TEST(PassPipeline, OneUnitFailsWithTheWorkersException) {
  int failed = 0;
  for (const json& u : units()) {
    if (!u.contains("fail_type")) continue;
    ++failed;
    EXPECT_EQ(u.at("compile_id"), kFailedId);
    EXPECT_EQ(u.at("fail_type"), "std::runtime_error");
    EXPECT_NE(u.value("fail_reason", "").find("needs 320 registers"), std::string::npos)
        << u.dump();
  }
  EXPECT_EQ(failed, 1);
}

TEST(PassPipeline, ColumnsNestAndTheOutermostIsTheDuration) {
  for (const json& u : units()) {
    const std::string id = u.at("compile_id");
    for (const char* c : {"entire_compile_us", "parse_us", "passes_us", "codegen_us"}) {
      ASSERT_TRUE(u.contains(c)) << id << " lacks " << c;
    }
    const auto entire = u.at("entire_compile_us").get<std::uint64_t>();
    EXPECT_GT(entire, 0u) << id;
    EXPECT_LE(u.at("parse_us").get<std::uint64_t>() + u.at("passes_us").get<std::uint64_t>() +
                  u.at("codegen_us").get<std::uint64_t>(),
              entire)
        << id;
    if (!u.contains("fail_type")) EXPECT_EQ(u.at("duration_us").get<std::uint64_t>(), entire) << id;
    EXPECT_FALSE(u.contains("load_us")) << id;  // the runtime phase ran outside every unit
  }
}

TEST(PassPipeline, CachesMissFirstAndHitOnTheRecompile) {
  for (int i = 0; i < kGraphs; ++i) {
    const json u = unit_with_id(first_compile_id(i));
    const json& caches = u.at("caches");
    EXPECT_EQ(caches.at("graph").at("hits"), 0) << i;
    EXPECT_EQ(caches.at("graph").at("misses"), 1) << i;
    EXPECT_EQ(caches.at("kernel").at("hits"), 0) << i;
    EXPECT_EQ(caches.at("kernel").at("misses"), kKernels[i]) << i;
  }
  const json again = unit_with_id(kRecompileId);
  const json& caches = again.at("caches");
  EXPECT_EQ(caches.at("graph").at("hits"), 0);
  EXPECT_EQ(caches.at("graph").at("misses"), 1);  // a new shape: a new graph hash
  EXPECT_EQ(caches.at("kernel").at("hits"), 2);
  EXPECT_EQ(caches.at("kernel").at("misses"), 1);
  EXPECT_EQ(caches.at("kernel").at("hit_keys"), json::array({"block0.fwd/k1", "block0.fwd/k2"}));
  EXPECT_EQ(caches.at("kernel").at("miss_keys"), json::array({"block0.fwd/k0[16,16]"}));
}

TEST(PassPipeline, EventDataReachesTheRecordAtEachLevel) {
  for (const json& u : units()) {
    const std::string id = u.at("compile_id");
    const bool recompile = id == kRecompileId;
    const int graph = std::stoi(id);
    const int kernels = kKernels[graph];
    const int built = recompile ? 1 : kernels;
    // kMetric from the main thread (toplevel_event is the unit).
    ASSERT_TRUE(u.contains("num_ops")) << id;
    EXPECT_GT(u.at("num_ops").get<int>(), kernels) << id;
    ASSERT_TRUE(u.at("op_kinds").is_array()) << id;
    const json& kinds = u.at("op_kinds");
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), json("matmul")), kinds.end()) << id;
    // kMetric from the workers (their toplevel_event is the attached unit);
    // the failed unit's last kernel threw before counting itself.
    EXPECT_EQ(u.value("kernels_emitted", -1), id == kFailedId ? built - 1 : built) << id;
    // kTrace stays out of the record.
    EXPECT_FALSE(u.contains("ops_removed")) << id;
    EXPECT_FALSE(u.contains("passes_run")) << id;
    // kCompileEvent: in the compile event, not at the top of the record.
    ASSERT_EQ(u.at("compile_events").size(), 1u) << id;
    const json& ev = u.at("compile_events").at(0);
    EXPECT_EQ(ev.at("name"), "codegen") << id;
    EXPECT_EQ(ev.value("kernels", -1), kernels) << id;
    EXPECT_EQ(ev.value("cached_kernels", -1), kernels - built) << id;
    EXPECT_EQ(ev.value("duration_us", std::uint64_t{0}), u.at("codegen_us").get<std::uint64_t>())
        << id;
    EXPECT_FALSE(u.contains("kernels")) << id;
    EXPECT_EQ(u.at("waits").at("codegen_workers").at("count"), 1) << id;
  }
  EXPECT_EQ(unit_with_id(kRecompileId).at("num_ops"), unit_with_id("0/0").at("num_ops"));
}

// The artifact kinds each unit keeps, in the order recorded.
std::vector<std::string> expected_artifact_kinds(const std::string& id) {
  std::vector<std::string> kinds = {"graph_parsed", "graph_optimized"};
  const int built = id == kRecompileId ? 1 : kKernels[std::stoi(id)];  // the failed one's too
  for (int k = 0; k < built; ++k) kinds.push_back("kernel_k" + std::to_string(k));
  kinds.push_back("log");
  return kinds;
}

TEST(PassPipeline, ArtifactsListedInEachRecordAreOnDiskWithTheirSizeAndHash) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::absolute(sample_run().metrics_path + ".artifacts");
  ASSERT_FALSE(sample_run().lines.empty());
  EXPECT_FALSE(sample_run().lines.front().contains("artifacts"));  // the runtime record
  int files = 0;
  for (const json& u : units()) {
    const std::string id = u.at("compile_id");
    ASSERT_TRUE(u.contains("artifacts")) << id;
    const json& list = u.at("artifacts");
    std::vector<std::string> kinds;
    std::map<std::string, std::string> content;  // by kind
    for (const json& a : list) {
      const std::string kind = a.at("kind");
      kinds.push_back(kind);
      const fs::path path = a.at("path").get<std::string>();
      EXPECT_TRUE(path.is_absolute()) << path;
      const std::string ext = kind.rfind("graph_", 0) == 0 ? ".ir" : kind == "log" ? ".txt" : ".cu";
      std::string dir = id;
      dir[dir.find('/')] = '_';
      EXPECT_EQ(path, folder / dir / (kind + ext)) << id;
      ASSERT_TRUE(fs::is_regular_file(path)) << path;
      const std::string bytes = read_file(path);
      EXPECT_EQ(fs::file_size(path), a.at("bytes").get<std::uintmax_t>()) << path;
      EXPECT_EQ(bytes.size(), a.at("bytes").get<std::size_t>()) << path;
      EXPECT_EQ(a.at("fnv1a"), reference_fnv1a(bytes)) << path;
      content[kind] = bytes;
      ++files;
    }
    EXPECT_EQ(kinds, expected_artifact_kinds(id)) << id;
    // What each one holds.
    const int graph = std::stoi(id);
    const std::string frame =
        "block" + std::to_string(graph / 2) + (graph % 2 == 0 ? ".fwd" : ".bwd");
    const std::string shape = id == kRecompileId ? "[16,16]" : "[8,16]";
    EXPECT_EQ(
        content["graph_parsed"].rfind("graph " + frame + "(x: f32" + shape + ") {\n  %1 = ", 0), 0u)
        << id << ": " << content["graph_parsed"];
    EXPECT_EQ(std::count(content["graph_parsed"].begin(), content["graph_parsed"].end(), '\n'),
              u.at("num_ops").get<long>() + 2)
        << id;  // header, one line per op, closing brace
    EXPECT_NE(content["graph_optimized"].find("after fold_constants, fuse, dce"), std::string::npos)
        << id;
    int kernel_lines = 0;
    for (std::size_t at = 0;
         (at = content["graph_optimized"].find("\n  kernel k", at)) != std::string::npos; ++at) {
      ++kernel_lines;
    }
    EXPECT_EQ(kernel_lines, kKernels[graph]) << id << ": " << content["graph_optimized"];
    EXPECT_NE(content["kernel_k0"].find("__global__ void k0(float* x) {"), std::string::npos) << id;
    const std::string& log = content["log"];
    EXPECT_EQ(log.rfind("[" + id + "] " + u.at("name").get<std::string>() + "\n", 0), 0u) << log;
    if (id == kFailedId) {
      EXPECT_NE(log.find("\nerror: kernel k2 "), std::string::npos) << log;
      EXPECT_NE(log.find("needs 320 registers"), std::string::npos) << log;
    } else {
      EXPECT_EQ(log.find("error:"), std::string::npos) << log;
      EXPECT_NE(log.find("codegen: k0 built, code hash "), std::string::npos) << log;
    }
    if (id == kRecompileId) {
      EXPECT_NE(log.find("codegen: k1 from the kernel cache"), std::string::npos) << log;
    }
  }
  EXPECT_EQ(files, 46);
}

struct Slice {
  std::string name;
  std::string cat;
  long tid = 0;
  long long begin = 0;
  long long end = 0;
  const json* event = nullptr;
};

TEST(PassPipeline, EveryPhaseInAUnitCarriesItsCompileIdOnEveryThread) {
  const json& trace = sample_run().trace;
  std::vector<Slice> slices;
  for (const json& e : trace) {
    if (e.value("ph", "") != "X") continue;
    Slice s{e.at("name").get<std::string>(),
            e.at("cat").get<std::string>(),
            e.at("tid").get<long>(),
            to_ns(e.at("ts")),
            0,
            &e};
    s.end = s.begin + to_ns(e.at("dur"));
    slices.push_back(s);
  }
  const std::map<long, std::string> names = thread_names(trace);
  // The unit slice on the same thread that encloses `s` (innermost), if any.
  auto enclosing_unit = [&](const Slice& s) -> const Slice* {
    const Slice* best = nullptr;
    for (const Slice& u : slices) {
      if (u.cat != "compile_unit" || u.tid != s.tid || &u == &s) continue;
      if (u.begin <= s.begin && s.end <= u.end && (best == nullptr || u.begin >= best->begin)) {
        best = &u;
      }
    }
    return best;
  };
  int in_unit_main = 0, in_unit_workers = 0, outside = 0, unit_slices = 0, attached = 0;
  for (const Slice& s : slices) {
    const json& args = s.event->value("args", json::object());
    if (s.cat == "compile_unit") {
      ++unit_slices;
      ASSERT_TRUE(args.contains("compile_id")) << s.name;
      const std::string id = args.at("compile_id");
      EXPECT_EQ(s.name.rfind("[" + id + "] mocknet__", 0), 0u) << s.name;
      if (names.at(s.tid) != "main") {
        EXPECT_EQ(args.value("attached", false), true) << s.name;
        ++attached;
      }
      continue;
    }
    if (s.cat != "phase" && s.cat != "compile_event") continue;
    const Slice* unit = enclosing_unit(s);
    if (unit == nullptr) {
      ++outside;
      EXPECT_EQ(s.name, "load_cached_artifacts");
      EXPECT_FALSE(args.contains("compile_id")) << s.name;
      continue;
    }
    const json& unit_args = unit->event->at("args");
    ASSERT_TRUE(args.contains("compile_id")) << s.name << " on " << names.at(s.tid);
    EXPECT_EQ(args.at("compile_id"), unit_args.at("compile_id"))
        << s.name << " on " << names.at(s.tid) << " inside " << unit->name;
    (names.at(s.tid) == "main" ? in_unit_main : in_unit_workers)++;
  }
  EXPECT_EQ(unit_slices, 20);      // 7 on main + 13 attached on the workers
  EXPECT_EQ(attached, 13);         // each worker with a kernel to build, per unit
  EXPECT_EQ(in_unit_main, 7 * 7);  // compile_graph, parse, passes, 3 passes, codegen
  EXPECT_EQ(in_unit_workers, 25);  // emit_kernel: 24 kernels + 1 rebuilt on the recompile
  EXPECT_EQ(outside, 1);

  // Step instants and wait-counter samples carry the id too.
  int steps = 0, counters = 0;
  for (const json& e : trace) {
    if (e.value("ph", "") == "I" && e.value("name", "") == "step") {
      ++steps;
      EXPECT_TRUE(e.at("args").contains("compile_id")) << e.dump();
    } else if (e.value("ph", "") == "C") {
      ++counters;
      EXPECT_TRUE(e.contains("compile_id")) << e.dump();
    }
  }
  EXPECT_EQ(steps, 21);     // parse, passes, codegen for 7 units
  EXPECT_EQ(counters, 28);  // 2 tracks x (wait start + end) x 7 units
}

}  // namespace
}  // namespace jitscope::testing
