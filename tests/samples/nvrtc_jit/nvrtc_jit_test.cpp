// The nvrtc_jit sample end to end (ctest label: sample): runs the real
// binary as a subprocess and reads back what it wrote.
//
//   Compile.FreshCacheCompilesEveryKernel   16 kernels, 2 threads: one compile
//       unit per kernel, each with its nvrtc and nvjitlink phases nested in
//       it (same thread, same compile_id, inside in time); one metrics line
//       per kernel, each a disk-cache miss
//   Compile.SecondRunHitsTheCache           the same cache again: 16 hits, no
//       nvrtc or nvjitlink phase
//   Processes.TwoWorkerProcesses            --processes 2: two jitscope_child
//       events whose traces exist, parse, and together hold all 16 kernels'
//       nvrtc phases; the parent loads all 16 from the cache
//   Processes.FailingWorkerProcessFailsTheRun, .KilledWorkerProcessFailsTheRun
//       a worker that exits 1, or that the test kills (SIGKILL, by pid): one
//       line naming it, exit 1, no hang
//   Errors.*                                bad option values, a corrupt and a
//       truncated cache entry, an entry holding another kernel's key (a
//       hash collision), an unusable cache directory, a kernel that does
//       not compile
//
//   Gpu.LoadsAutotunesAndRunsTheWinners     (label gpu; exit 77 without a GPU)
//       8 kernels loaded inside their units, one winner per family (and its
//       tuning session's metrics record), and with CUPTI on, the winners'
//       kernel slices carrying compiled_by
//   Gpu.JitscopeCuptiOffIsHonoured          (label gpu) JITSCOPE_CUPTI=off: no
//       GPU activity in the trace
//
// The other tests pass on a GPU machine too (they accept either the one
// "skipped" line or a GPU summary) but leave the GPU's work to Gpu.*.
// --worker-timeout is not forced (it would need a worker that hangs).
// Durations are real, so only their nesting is checked, never values.
#include "samples/sample_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifndef JITSCOPE_NVRTC_JIT
#error "JITSCOPE_NVRTC_JIT must name the jitscope_nvrtc_jit binary"
#endif

namespace {

using namespace sample_support;  // NOLINT(google-build-using-namespace): test helpers

constexpr int kKernels = 16;
// make_kernels(16): round robin over gelu, reduce, matmul, silu (kernel_catalog.cpp).
const std::set<std::string> kKernelNames = {
    "gelu_v1_u1",     "gelu_v2_u1",    "gelu_v4_u1",     "gelu_v1_u2",
    "reduce_b256_i1", "reduce_b64_i1", "reduce_b512_i1", "reduce_b128_i1",
    "matmul_t16_r1",  "matmul_t8_r1",  "matmul_t32_r1",  "matmul_t16_r2",
    "silu_v1_u1",     "silu_v2_u1",    "silu_v4_u1",     "silu_v1_u2"};
constexpr const char* kSkippedLine = "load, autotune and run skipped";

fs::path test_dir(const std::string& name) { return sample_support::test_dir("nvrtc_jit_", name); }

Started start_sample(const fs::path& dir, const std::string& tag, std::vector<std::string> args,
                     const Env& env = {}) {
  return sample_support::start_sample(JITSCOPE_NVRTC_JIT, dir, tag, args, env);
}

SampleRun run_sample(const fs::path& dir, const std::string& tag, std::vector<std::string> args,
                     const Env& env = {}) {
  Started s = start_sample(dir, tag, std::move(args), env);
  return finish(s);
}

// The running children of `parent` (from /proc/<pid>/stat's ppid field).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_text(entry.path() / "stat");
    const std::size_t close = stat.rfind(')');  // the command name may hold spaces
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long long ppid = 0;
    if (fields >> state >> ppid && ppid == parent && state != 'Z') {
      out.push_back(static_cast<pid_t>(std::stoll(name)));
    }
  }
  return out;
}

// The metrics file's lines: the compile records, or (gpu) only the lines
// that CUPTI adds per unit at stop on a GPU machine ("record": "gpu"). On a
// GPU the autotuner's tuning sessions add lines of their own ("record":
// "autotune"), which are neither.
std::vector<json> load_metrics(const fs::path& path, bool gpu = false) {
  std::vector<json> out;
  for (json& j : read_json_lines(path)) {
    const std::string record = j.value("record", "");
    if (gpu ? record == "gpu" : !j.contains("record")) out.push_back(std::move(j));
  }
  return out;
}

// `phase` lies inside `unit`: same thread, same compile_id, inside in time.
void expect_nested(const json& phase, const json& unit) {
  const double eps = 0.0015;  // µs with three decimals
  EXPECT_EQ(phase.at("pid"), unit.at("pid")) << phase.dump();
  EXPECT_EQ(phase.at("tid"), unit.at("tid")) << phase.dump() << "\nunit: " << unit.dump();
  EXPECT_EQ(str(args(phase), "compile_id"), str(args(unit), "compile_id")) << phase.dump();
  const double ts = phase.at("ts").get<double>(), dur = phase.at("dur").get<double>();
  const double uts = unit.at("ts").get<double>(), udur = unit.at("dur").get<double>();
  EXPECT_GE(ts + eps, uts) << phase.dump() << "\nstarts before its unit " << unit.dump();
  EXPECT_LE(ts + dur, uts + udur + eps) << phase.dump() << "\nends after its unit " << unit.dump();
}

// The phase slices named `name` inside a kernel's unit (by compile_id and thread).
std::vector<const json*> phases_of(const json& trace, const json& unit, const std::string& name) {
  std::vector<const json*> out;
  for (const json* p : slices(trace, "phase", name)) {
    if (str(args(*p), "compile_id") == str(args(unit), "compile_id") &&
        p->at("tid") == unit.at("tid")) {
      out.push_back(p);
    }
  }
  return out;
}

// Without a GPU: exactly the one "skipped" line, and no other line from the
// sample or jitscope. With one: no such line.
void expect_gpu_line_ok(const SampleRun& r) {
  const int skipped = count_lines_with(r.err, kSkippedLine);
  if (skipped == 0) {
    EXPECT_NE(r.out.find("winner"), std::string::npos) << "neither skipped nor autotuned\n"
                                                       << r.describe();
    return;
  }
  EXPECT_EQ(skipped, 1) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << "only the skipped line on stderr\n" << r.describe();
}

// ---- 16 kernels on 2 threads, then again from the cache ---------------------

class Compile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(test_dir("compile"));
    first_ = new SampleRun(run_sample(*dir_, "first",
                                      {"--kernels", std::to_string(kKernels), "--workers", "2",
                                       "--cache-dir", (*dir_ / "cache").string()}));
  }
  static void TearDownTestSuite() {
    delete first_;
    delete dir_;
  }
  static fs::path* dir_;
  static SampleRun* first_;
};
fs::path* Compile::dir_ = nullptr;
SampleRun* Compile::first_ = nullptr;

TEST_F(Compile, FreshCacheCompilesEveryKernel) {
  const SampleRun& r = *first_;
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  expect_gpu_line_ok(r);
  EXPECT_NE(r.out.find("cache:            0 hits, 16 misses"), std::string::npos) << r.out;

  const json trace = load_trace(r.trace);
  const std::map<std::string, const json*> units = units_by_kernel(trace);
  std::set<std::string> names;
  for (const auto& [kernel, unit] : units) names.insert(kernel);
  EXPECT_EQ(names, kKernelNames);
  EXPECT_EQ(slices(trace, "compile_unit").size(), static_cast<std::size_t>(kKernels));
  EXPECT_EQ(slices(trace, "phase", "nvrtc").size(), static_cast<std::size_t>(kKernels));
  EXPECT_EQ(slices(trace, "phase", "nvjitlink").size(), static_cast<std::size_t>(kKernels));
  std::set<std::string> compile_ids;
  for (const auto& [kernel, unit] : units) {
    SCOPED_TRACE(kernel);
    EXPECT_TRUE(compile_ids.insert(str(args(*unit), "compile_id")).second);
    EXPECT_EQ(str(args(*unit), "cache"), "miss");
    const auto nvrtc = phases_of(trace, *unit, "nvrtc");
    const auto link = phases_of(trace, *unit, "nvjitlink");
    ASSERT_EQ(nvrtc.size(), 1u);
    ASSERT_EQ(link.size(), 1u);
    expect_nested(*nvrtc[0], *unit);
    expect_nested(*link[0], *unit);
    EXPECT_LE(nvrtc[0]->at("ts").get<double>(), link[0]->at("ts").get<double>());
  }
  // The stages of the run, on the main thread.
  for (const char* stage : {"generate kernels", "compile", "release"}) {
    EXPECT_EQ(slices(trace, "jitscope", stage).size(), 1u) << stage;
  }

  const std::vector<json> lines = load_metrics(r.metrics);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kKernels))
      << "one line per kernel, no runtime line";
  std::set<std::string> metric_kernels;
  for (const json& line : lines) {
    SCOPED_TRACE(line.dump());
    EXPECT_EQ(line.value("is_runtime", true), false);
    metric_kernels.insert(str(line, "kernel"));
    const json* disk = disk_cache_counts(line);
    ASSERT_NE(disk, nullptr);
    EXPECT_EQ(disk->value("misses", -1), 1);
    EXPECT_EQ(disk->value("hits", -1), 0);
    EXPECT_EQ(str(line, "cache"), "miss");
    for (const char* field :
         {"source_bytes", "ltoir_bytes", "cubin_bytes", "nvrtc_time_us", "nvjitlink_time_us"}) {
      EXPECT_GT(line.value(field, 0), 0) << field;
    }
    EXPECT_FALSE(str(line, "family").empty());
    EXPECT_FALSE(str(line, "variant").empty());
    EXPECT_EQ(line.find("fail_type"), line.end());
    // Its source, LTO-IR and cubin as artifacts named by its compile id, the
    // same bytes as the record's sizes say.
    std::map<std::string, json> artifacts;
    for (const json& a : line.value("artifacts", json::array())) artifacts[str(a, "kind")] = a;
    const std::string id = str(line, "compile_id");
    const std::string folder = "/" + id.substr(0, id.find('/')) + "_" + id.substr(id.find('/') + 1);
    for (const auto& [kind, size_field] :
         {std::pair<std::string, std::string>{"source", "source_bytes"},
          {"ltoir", "ltoir_bytes"},
          {"cubin", "cubin_bytes"}}) {
      ASSERT_EQ(artifacts.count(kind), 1u) << kind;
      const std::string path = str(artifacts[kind], "path");
      EXPECT_NE(path.find(r.metrics.string() + ".artifacts" + folder + "/"), std::string::npos)
          << path;
      EXPECT_EQ(fs::file_size(path), line.value(size_field, 0u)) << path;
    }
  }
  EXPECT_EQ(metric_kernels, kKernelNames);
}

TEST_F(Compile, SecondRunHitsTheCache) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  const SampleRun r = run_sample(*dir_, "second",
                                 {"--kernels", std::to_string(kKernels), "--workers", "2",
                                  "--cache-dir", (*dir_ / "cache").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  expect_gpu_line_ok(r);
  EXPECT_NE(r.out.find("cache:            16 hits, 0 misses"), std::string::npos) << r.out;

  const json trace = load_trace(r.trace);
  EXPECT_EQ(slices(trace, "compile_unit").size(), static_cast<std::size_t>(kKernels));
  EXPECT_EQ(slices(trace, "phase", "cache lookup").size(), static_cast<std::size_t>(kKernels));
  EXPECT_TRUE(slices(trace, "phase", "nvrtc").empty());
  EXPECT_TRUE(slices(trace, "phase", "nvjitlink").empty());
  EXPECT_TRUE(slices(trace, "phase", "cache store").empty());

  const std::vector<json> lines = load_metrics(r.metrics);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kKernels));
  int hits = 0, misses = 0;
  for (const json& line : lines) {
    const json* disk = disk_cache_counts(line);
    ASSERT_NE(disk, nullptr) << line.dump();
    hits += disk->value("hits", 0);
    misses += disk->value("misses", 0);
    EXPECT_EQ(line.find("nvrtc_time_us"), line.end()) << line.dump();
    EXPECT_GT(line.value("cubin_bytes", 0), 0) << line.dump();
  }
  EXPECT_EQ(hits, kKernels);
  EXPECT_EQ(misses, 0);
}

// The disk cache's lookups in a trace, by kernel and config.
std::map<std::string, CacheLookup> disk_lookups(const json& trace) {
  std::map<std::string, CacheLookup> out;
  for (CacheLookup& l : cache_lookups(trace, "disk_cache")) {
    out[str(l.parts, "kernel") + "/" + str(l.parts, "config")] = std::move(l);
  }
  return out;
}

// One more NVRTC option: part of every key, so each kernel misses, and its
// key differs from the first run's for it in `options` alone (what the
// report's caches section then names: docs/caches.md).
TEST_F(Compile, AnotherNvrtcOptionMissesEveryKernelOnItsOptionsAlone) {
  ASSERT_EQ(first_->exit_code, 0) << first_->describe();
  // A copy of the first run's cache: the other tests' runs read the original.
  const fs::path cache = *dir_ / "cache_lineinfo";
  fs::remove_all(cache);
  fs::copy(*dir_ / "cache", cache, fs::copy_options::recursive);
  const SampleRun r = run_sample(*dir_, "lineinfo",
                                 {"--kernels", std::to_string(kKernels), "--workers", "2",
                                  "--cache-dir", cache.string(), "--nvrtc-option=-lineinfo"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.out.find("cache:            0 hits, 16 misses"), std::string::npos) << r.out;
  const auto before = disk_lookups(load_trace(first_->trace));
  const auto after = disk_lookups(load_trace(r.trace));
  ASSERT_EQ(before.size(), static_cast<std::size_t>(kKernels));
  ASSERT_EQ(after.size(), before.size());
  for (const auto& [kernel, now] : after) {
    SCOPED_TRACE(kernel);
    ASSERT_EQ(before.count(kernel), 1u);
    const json& was = before.at(kernel).parts;
    EXPECT_FALSE(now.hit);
    for (const auto& [part, value] : now.parts.items()) {
      if (part == "options") continue;
      EXPECT_EQ(value, was.value(part, json())) << part;
    }
    EXPECT_EQ(now.parts.size(), was.size());
    EXPECT_EQ(str(was, "options").find("-lineinfo"), std::string::npos);
    EXPECT_NE(str(now.parts, "options").find(" -lineinfo"), std::string::npos);
  }
}

// ---- worker processes ---------------------------------------------------------

TEST(Processes, TwoWorkerProcesses) {
  const fs::path dir = test_dir("processes");
  const SampleRun r = run_sample(dir, "parent",
                                 {"--kernels", std::to_string(kKernels), "--workers", "1",
                                  "--processes", "2", "--cache-dir", (dir / "cache").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  expect_gpu_line_ok(r);
  EXPECT_NE(r.out.find("compiled by:      2 worker processes"), std::string::npos) << r.out;

  const json trace = load_trace(r.trace);
  long long parent_pid = -1;
  std::vector<const json*> children;
  for (const json& e : trace) {
    if (str(e, "ph") != "M") continue;
    // The host's pid: with a GPU, CUPTI's "GPU 0 (pid N)" process is named too.
    if (str(e, "name") == "jitscope_session") parent_pid = e.at("pid").get<long long>();
    if (str(e, "name") == "jitscope_child") children.push_back(&e);
  }
  ASSERT_GT(parent_pid, 0);
  ASSERT_EQ(children.size(), 2u) << "jitscope_child events";
  EXPECT_TRUE(slices(trace, "phase", "nvrtc").empty()) << "the parent compiles nothing itself";
  EXPECT_EQ(slices(trace, "jitscope", "compile (2 processes)").size(), 1u);

  // The spawn arrows' starts, by child pid: a "spawn" slice and its "s".
  std::map<long long, std::uint64_t> arrow_of;
  for (const json& e : trace) {
    if (str(e, "ph") != "X" || str(e, "name") != "spawn") continue;
    for (const json& s : trace) {
      if (str(s, "ph") == "s" && str(s, "cat") == "jitscope.process" && s["ts"] == e["ts"]) {
        arrow_of[args(e).at("child_pid").get<long long>()] = s.at("id").get<std::uint64_t>();
      }
    }
  }
  EXPECT_EQ(arrow_of.size(), 2u) << "one spawn arrow per worker";

  std::set<long long> pids = {parent_pid};
  std::set<std::string> compiled;  // kernels with an nvrtc phase in a worker's trace
  // Kernel -> "<worker pid> <its unit's compile id>": who stored its cubin.
  std::map<std::string, std::string> stored_by;
  int worker_lines = 0;
  for (const json* child : children) {
    const json& a = args(*child);
    SCOPED_TRACE(child->dump());
    EXPECT_EQ(child->at("pid").get<long long>(), parent_pid);
    const long long pid = a.at("pid").get<long long>();
    EXPECT_TRUE(pids.insert(pid).second) << "pid " << pid << " is not distinct";
    const fs::path path = str(a, "trace");
    ASSERT_TRUE(path.is_absolute()) << path;
    ASSERT_TRUE(fs::exists(path)) << path;
    const json worker = load_trace(path);
    bool named = false;
    for (const json& e : worker) {
      if (str(e, "ph") == "M" && str(e, "name") == "process_name") {
        EXPECT_EQ(e.at("pid").get<long long>(), pid);
        EXPECT_EQ(str(args(e), "name"), str(a, "label"));
        named = true;
      }
    }
    EXPECT_TRUE(named);
    // Its end of the arrow (JITSCOPE_PARENT_PID from the parent), by the same id.
    int arrow_ends = 0;
    for (const json& e : worker) {
      if (str(e, "ph") != "f" || str(e, "cat") != "jitscope.process") continue;
      ++arrow_ends;
      EXPECT_EQ(e.at("id").get<std::uint64_t>(), arrow_of[pid]);
    }
    EXPECT_EQ(arrow_ends, 1);
    const std::map<std::string, const json*> units = units_by_kernel(worker);
    for (const auto& [kernel, unit] : units) {
      const auto nvrtc = phases_of(worker, *unit, "nvrtc");
      ASSERT_EQ(nvrtc.size(), 1u) << kernel;
      expect_nested(*nvrtc[0], *unit);
      EXPECT_TRUE(compiled.insert(kernel).second) << kernel << " compiled by both workers";
      stored_by[kernel] = std::to_string(pid) + " " + str(args(*unit), "compile_id");
    }
    EXPECT_EQ(units.size(), static_cast<std::size_t>(kKernels / 2)) << "an even shard";
    // Its files are named after the parent's: parent.trace.worker-<i>.json and
    // parent.metrics.worker-<i>.jsonl, side by side.
    const std::string trace_name = path.filename().string();
    ASSERT_EQ(trace_name.rfind("parent.trace.worker-", 0), 0u) << trace_name;
    const std::string index = trace_name.substr(20, trace_name.size() - 20 - 5);
    const fs::path metrics = dir / ("parent.metrics.worker-" + index + ".jsonl");
    ASSERT_TRUE(fs::exists(metrics)) << metrics;
    for (const json& line : load_metrics(metrics)) {
      ++worker_lines;
      const json* disk = disk_cache_counts(line);
      ASSERT_NE(disk, nullptr);
      EXPECT_EQ(disk->value("misses", 0), 1) << line.dump();
    }
  }
  EXPECT_EQ(compiled, kKernelNames);
  EXPECT_EQ(worker_lines, kKernels);

  // The parent loaded every cubin back from the cache: one unit and one hit each.
  const std::vector<json> lines = load_metrics(r.metrics);
  ASSERT_EQ(lines.size(), static_cast<std::size_t>(kKernels));
  std::set<std::string> loaded;
  for (const json& line : lines) {
    const json* disk = disk_cache_counts(line);
    ASSERT_NE(disk, nullptr) << line.dump();
    EXPECT_EQ(disk->value("hits", 0), 1) << line.dump();
    loaded.insert(str(line, "kernel"));
  }
  EXPECT_EQ(loaded, kKernelNames);
  EXPECT_NE(r.out.find("16 hits, 0 misses"), std::string::npos) << r.out;

  // Each parent unit waited for the worker's unit that stored its cubin
  // (the cache entry names it): one unit_waits instant each, for the
  // report's critical path.
  std::map<std::string, std::string> kernel_of;  // parent compile id -> kernel
  for (const auto& [kernel, unit] : units_by_kernel(trace)) {
    kernel_of[str(args(*unit), "compile_id")] = kernel;
  }
  std::map<std::string, std::string> waited;  // kernel -> "<pid> <compile id>"
  for (const json& e : trace) {
    if (str(e, "name") != "unit_waits") continue;
    const json& a = args(e);
    ASSERT_TRUE(kernel_of.count(str(a, "unit"))) << e.dump();
    EXPECT_TRUE(waited
                    .emplace(kernel_of[str(a, "unit")],
                             std::to_string(a.at("on_pid").get<long long>()) + " " + str(a, "on"))
                    .second)
        << "a second wait: " << e.dump();
  }
  EXPECT_EQ(waited, stored_by);

  // Again on the same cache: the workers hit and store nothing, and the
  // entries name the first run, whose workers' pids may come again (a
  // container's do): the parent waits for none of them.
  const SampleRun again = run_sample(dir, "again",
                                     {"--kernels", std::to_string(kKernels), "--workers", "1",
                                      "--processes", "2", "--cache-dir", (dir / "cache").string()});
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  for (const json& e : load_trace(again.trace)) {
    EXPECT_NE(str(e, "name"), "unit_waits") << "a wait on an earlier run's unit: " << e.dump();
  }
}

TEST(Processes, FailingWorkerProcessFailsTheRun) {
  const fs::path dir = test_dir("processes_failing");
  // Kernel 1 (reduce_b256_i1) belongs to worker 1 (index % 2).
  const SampleRun r =
      run_sample(dir, "parent",
                 {"--kernels", "4", "--workers", "1", "--processes", "2", "--cache-dir",
                  (dir / "cache").string(), "--inject-compile-error", "reduce_b256_i1"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "nvrtc_jit worker 1 (pid "), 1) << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "exited with status 1"), 1) << r.describe();
  EXPECT_NE(r.err.find("static assertion failed"), std::string::npos) << "NVRTC's log\n"
                                                                      << r.describe();
  // Both workers are still listed, and the parent's trace is whole.
  int children = 0;
  for (const json& e : load_trace(r.trace)) {
    children += str(e, "ph") == "M" && str(e, "name") == "jitscope_child";
  }
  EXPECT_EQ(children, 2);
}

TEST(Processes, KilledWorkerProcessFailsTheRun) {
  const fs::path dir = test_dir("processes_killed");
  // 12 kernels per single-threaded worker: most of a second of work, time to kill one.
  Started s = start_sample(dir, "parent",
                           {"--kernels", "24", "--workers", "1", "--processes", "2", "--cache-dir",
                            (dir / "cache").string()});
  ASSERT_GT(s.pid, 0) << s.run.err;
  pid_t victim = -1;
  for (int i = 0; i < 5000 && victim < 0; ++i) {  // up to ~10 s for the workers to appear
    const std::vector<pid_t> children = children_of(s.pid);
    if (!children.empty()) victim = children.front();
    if (victim < 0) usleep(2000);
  }
  const bool killed = victim > 0 && kill(victim, SIGKILL) == 0;
  const SampleRun r = finish(s);
  if (!killed) GTEST_SKIP() << "no worker process to kill (they finished first?)\n" << r.describe();
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "(pid " + std::to_string(victim) + ") was killed by signal 9"),
            1)
      << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "a compile worker process failed"), 1) << r.describe();
}

// ---- error paths ----------------------------------------------------------------

TEST(Errors, BadOptionValuesExitWithAMessage) {
  const fs::path dir = test_dir("bad_options");
  const BadOptions cases = {{{"--kernels", "0"}, "--kernels"},
                            {{"--kernels", "many"}, "--kernels"},
                            {{"--workers", "0"}, "--workers"},
                            {{"--arch", "sm_1"}, "--arch"},
                            {{"--processes", "1"}, "--processes"},
                            {{"--processes", "2", "--no-cache"}, "--no-cache"},
                            {{"--inject-compile-error", "no_such_kernel"}, "no_such_kernel"},
                            {{"--no-such-option"}, "--no-such-option"}};
  expect_each_rejected(
      cases, [&](const std::vector<std::string>& argv) { return run_sample(dir, "bad", argv); });
}

TEST(Errors, CorruptCacheEntriesAreMisses) {
  const fs::path dir = test_dir("corrupt");
  const std::vector<std::string> argv = {"--kernels", "2",           "--workers",
                                         "2",         "--cache-dir", (dir / "cache").string()};
  const SampleRun fill = run_sample(dir, "fill", argv);
  ASSERT_EQ(fill.exit_code, 0) << fill.describe();
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir / "cache")) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 2u) << "one entry per kernel, no temporary file left";
  std::ofstream(entries[0], std::ios::binary | std::ios::trunc) << "garbage, not an entry\n";
  fs::resize_file(entries[1], fs::file_size(entries[1]) - 100);  // a torn write

  const SampleRun r = run_sample(dir, "corrupt", argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "is corrupt"), 2) << r.describe();
  EXPECT_NE(r.out.find("0 hits, 2 misses"), std::string::npos) << r.out;
  for (const json& line : load_metrics(r.metrics)) {
    const json* disk = disk_cache_counts(line);
    ASSERT_NE(disk, nullptr) << line.dump();
    EXPECT_EQ(disk->value("misses", 0), 1) << line.dump();
  }
  // Recompiled and rewritten: the next run hits.
  const SampleRun again = run_sample(dir, "again", argv);
  ASSERT_EQ(again.exit_code, 0) << again.describe();
  EXPECT_NE(again.out.find("2 hits, 0 misses"), std::string::npos) << again.describe();
  EXPECT_EQ(count_lines_with(again.err, "is corrupt"), 0) << again.describe();
}

TEST(Errors, EntryHoldingAnotherKeyIsAMiss) {
  // A whole, valid entry under another kernel's file name: what a hash
  // collision looks like. The stored key text is compared, so it is a miss.
  const fs::path dir = test_dir("collision");
  const std::vector<std::string> argv = {"--kernels", "2",           "--workers",
                                         "1",         "--cache-dir", (dir / "cache").string()};
  const SampleRun fill = run_sample(dir, "fill", argv);
  ASSERT_EQ(fill.exit_code, 0) << fill.describe();
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir / "cache")) entries.push_back(e.path());
  ASSERT_EQ(entries.size(), 2u);
  fs::copy_file(entries[1], entries[0], fs::copy_options::overwrite_existing);

  const SampleRun r = run_sample(dir, "collision", argv);
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "holds another key"), 1) << r.describe();
  EXPECT_NE(r.out.find("1 hits, 1 misses"), std::string::npos) << r.out;
  // The miss is the kernel whose file was overwritten, and it was rebuilt.
  const std::string victim = entries[0].filename().string();
  for (const json& line : load_metrics(r.metrics)) {
    const bool is_victim = victim.rfind(str(line, "kernel") + "-", 0) == 0;
    EXPECT_EQ(str(line, "cache"), is_victim ? "miss" : "hit") << line.dump();
    EXPECT_EQ(line.contains("nvrtc_time_us"), is_victim) << line.dump();
  }
}

TEST(Errors, UnusableCacheDirectoryRunsUncached) {
  const fs::path dir = test_dir("unusable_cache");
  std::ofstream(dir / "a_file") << "not a directory\n";  // root can't write under a file either
  const SampleRun r = run_sample(
      dir, "run", {"--kernels", "2", "--cache-dir", (dir / "a_file" / "cache").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "nvrtc_jit: cannot create the cache directory"), 1)
      << r.describe();
  EXPECT_EQ(count_lines_with(r.err, "not cached"), 1) << "said once\n" << r.describe();
  const std::vector<json> lines = load_metrics(r.metrics);
  EXPECT_EQ(lines.size(), 2u);
  for (const json& line : lines) {
    const json* disk = disk_cache_counts(line);
    ASSERT_NE(disk, nullptr) << line.dump();
    EXPECT_EQ(disk->value("misses", 0), 1) << line.dump();
  }
}

TEST(Errors, KernelThatDoesNotCompileFailsTheRunNotTheProcess) {
  const fs::path dir = test_dir("compile_error");
  const SampleRun r = run_sample(dir, "run",
                                 {"--kernels", "3", "--workers", "2", "--no-cache",
                                  "--inject-compile-error", "reduce_b256_i1"});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.err.find("kernel reduce_b256_i1 failed: nvrtcCompileProgram failed"),
            std::string::npos)
      << r.describe();
  EXPECT_NE(r.err.find("static assertion failed"), std::string::npos) << "NVRTC's log\n"
                                                                      << r.describe();
  EXPECT_NE(r.err.find("1 of 3 kernels failed: reduce_b256_i1"), std::string::npos) << r.describe();
  const std::vector<json> lines = load_metrics(r.metrics);
  ASSERT_EQ(lines.size(), 3u);
  int failed = 0;
  for (const json& line : lines) {
    if (str(line, "kernel") == "reduce_b256_i1") {
      EXPECT_EQ(str(line, "fail_type"), "nvrtc") << line.dump();
      ++failed;
    } else {
      EXPECT_EQ(line.find("fail_type"), line.end()) << line.dump();
      EXPECT_GT(line.value("cubin_bytes", 0), 0) << line.dump();
    }
  }
  EXPECT_EQ(failed, 1);
  EXPECT_NO_THROW(load_trace(r.trace));
}

// ---- the GPU half (ctest nvrtc_jit_gpu, label gpu) ----------------------------
// Skipped (exit 77) when the sample says it has no driver or device, unless
// JSTEST_GPU_REQUIRE=1 (as in tests/gpu).

// The sample run on the GPU, or nothing when it has none (then, under
// ctest's entry, the process exits 77 here).
std::optional<SampleRun> run_on_gpu(const fs::path& dir, std::vector<std::string> sample_args,
                                    const Env& env = {}) {
  SampleRun r = run_sample(dir, "gpu", sample_args, env);
  // A GPU that cannot run the default sm_90 cubins is still a GPU: build for
  // the arch the sample names ("... pass --arch sm_80") and run again.
  if (const std::size_t at = r.err.find("pass --arch "); at != std::string::npos) {
    std::string arch = r.err.substr(at + 12);
    arch = arch.substr(0, arch.find_first_not_of("smabcdef_0123456789"));
    if (arch.empty()) {
      ADD_FAILURE() << "no arch in the sample's advice\n" << r.describe();
      return r;
    }
    sample_args.insert(sample_args.end(), {"--arch", arch});
    r = run_sample(dir, "gpu", sample_args, env);
  }
  if (count_lines_with(r.err, kSkippedLine) > 0 && !require_gpu()) {
    // ctest's entry asks for exit 77 (reported as Skipped); run by hand, a gtest skip.
    if (std::getenv("NVRTC_JIT_TEST_SKIP_EXIT") != nullptr) {
      std::printf("SKIP: %s", r.err.c_str());
      std::fflush(stdout);
      std::_Exit(77);
    }
    std::printf("skipped: %s", r.err.c_str());
    return std::nullopt;
  }
  return r;
}

TEST(Gpu, LoadsAutotunesAndRunsTheWinners) {
  const fs::path dir = test_dir("gpu");
  const std::optional<SampleRun> ran = run_on_gpu(
      dir,
      {"--kernels", "8", "--workers", "2", "--reps", "5", "--cache-dir", (dir / "cache").string()});
  if (!ran) GTEST_SKIP() << "no GPU";
  const SampleRun& r = *ran;
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(count_lines_with(r.out, "  winner "), 4) << "one winner per family\n" << r.describe();

  const json trace = load_trace(r.trace);
  const std::map<std::string, const json*> units = units_by_kernel(trace);
  ASSERT_EQ(units.size(), 8u);
  for (const auto& [kernel, unit] : units) {
    const auto load = phases_of(trace, *unit, "load");
    ASSERT_EQ(load.size(), 1u) << kernel << ": the load happens inside its compile unit";
    expect_nested(*load[0], *unit);
  }
  EXPECT_EQ(slices(trace, "jitscope", "autotune").size(), 1u);
  EXPECT_EQ(slices(trace, "jitscope", "run winners").size(), 1u);
  std::vector<std::string> winners;
  for (const char* family : {"gelu", "matmul", "reduce", "silu"}) {
    const auto tune = slices(trace, "jitscope", std::string("autotune ") + family);
    ASSERT_EQ(tune.size(), 1u) << family;
    const std::string winner = str(args(*tune[0]), "winner");
    EXPECT_NE(units.find(winner), units.end()) << family << " winner '" << winner << "'";
    winners.push_back(winner);
  }
  // One metrics record per tuning session: a winner each, and every trial's
  // compile a unit of the pool (its id in units, no compile step).
  std::set<std::string> tuned;
  for (const json& rec : read_json_lines(r.metrics)) {
    if (rec.value("record", "") != "autotune") continue;
    tuned.insert(str(rec, "kernel"));
    EXPECT_FALSE(rec.at("winner").is_null()) << rec.dump();
    EXPECT_EQ(rec.at("compile_steps_ns"), 0) << rec.dump();
    for (const json& row : rec.at("trial_rows")) {
      EXPECT_EQ(row.value("units", json::array()).size(), 1u) << row.dump();
    }
  }
  EXPECT_EQ(tuned, (std::set<std::string>{"gelu", "matmul", "reduce", "silu"}));

  // With CUPTI on, every winner's launches carry the unit that built it,
  // and every kernel's unit has its GPU line in the metrics file.
  if (const std::string state = cupti_state(trace); state != "on") {
    std::printf("note: CUPTI is %s: kernel attribution not checked\n", state.c_str());
    return;
  }
  for (const std::string& winner : winners) {
    const auto unit = units.find(winner);
    if (unit == units.end()) continue;
    int attributed = 0;
    for (const json* k : slices(trace, "cuda")) {
      if (str(*k, "name").find(winner) != std::string::npos &&
          str(args(*k), "compiled_by") == str(*unit->second, "name")) {
        ++attributed;
      }
    }
    EXPECT_GT(attributed, 0) << winner << ": no kernel slice with compiled_by \""
                             << str(*unit->second, "name") << "\"";
  }
  std::map<std::string, long long> compiled_launches;  // compile_id -> launches of its kernel
  for (const json& line : load_metrics(r.metrics, /*gpu=*/true)) {
    compiled_launches[str(line, "compile_id")] =
        line.value("gpu", json::object()).value("compiled_kernels", 0LL);
  }
  for (const auto& [kernel, unit] : units) {
    EXPECT_GT(compiled_launches[str(args(*unit), "compile_id")], 0)
        << kernel << ": no \"record\": \"gpu\" line with compiled_kernels";
  }
}

// JITSCOPE_CUPTI=off is the user's to give on a GPU machine too: the
// sample's own setting (off without a GPU) does not override it. Before,
// the sample set auto whenever it had a GPU, and the variable was ignored.
TEST(Gpu, JitscopeCuptiOffIsHonoured) {
  const fs::path dir = test_dir("gpu_cupti_off");
  const std::optional<SampleRun> ran =
      run_on_gpu(dir, {"--kernels", "4", "--workers", "2", "--reps", "1", "--no-cache"},
                 {{"JITSCOPE_CUPTI", "off"}});
  if (!ran) GTEST_SKIP() << "no GPU";
  ASSERT_EQ(ran->exit_code, 0) << ran->describe();
  const json trace = load_trace(ran->trace);
  EXPECT_EQ(cupti_state(trace), "off");
  // Off because it was asked (auto says "off" too where CUPTI cannot load).
  EXPECT_EQ(cupti_state(trace, "reason"), "turned off (Config::cupti / JITSCOPE_CUPTI=off)");
  EXPECT_TRUE(slices(trace, "cuda").empty()) << "no GPU activity with CUPTI off";
}

}  // namespace
