// A trace file a session wrote survives what comes after it (issue 17):
// - a process that exec()s itself with JITSCOPE_TRACE inherited keeps the
//   spans it wrote before the exec: the new image's session writes a new
//   file beside the first (file_sink.hpp, open_output) and says so in one
//   line; a rerun (another process) still empties the file as before;
// - the metrics file (JITSCOPE_METRICS) of that process is kept the same
//   way: the new image writes its metrics beside it too, named in that line;
// - a session killed right after start() returned leaves a trace that loads
//   with its head (process_name, jitscope_session): start() writes the head
//   before it returns, not the flusher after its clock calibration;
// - a worker that inherits JITSCOPE_TRACE from a parent whose session
//   writes it writes its own file beside it (trace.worker-<pid>.json, and
//   its metrics likewise), silently, with the parent's spawn arrow.
#include "flush/perfetto_wire.hpp"
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>

namespace jitscope::testing {
namespace {

constexpr int kBeforeExec = 100;  // as session_files_child.cpp
constexpr int kAfterExec = 50;
constexpr int kParentSpans = 20;
constexpr int kWorkerSpans = 30;

// The file beside `path` (its extension after the last dot) that the
// exec'd image of `pid` writes first: trace.<pid>.1.json (file_sink.hpp,
// exec_path).
std::string exec_path(const std::string& path, int pid) {
  const std::size_t dot = path.rfind('.');
  return path.substr(0, dot) + "." + std::to_string(pid) + ".1" + path.substr(dot);
}

Subprocess run_child(const std::vector<std::string>& args, const std::string& stem,
                     const SpawnOptions& options = {}) {
  std::vector<std::string> all = {JITSCOPE_SESSION_FILES_CHILD};
  all.insert(all.end(), args.begin(), args.end());
  Subprocess p = spawn(all, stem, options);
  EXPECT_GT(p.pid, 0) << p.spawn_error;
  EXPECT_TRUE(p.wait(std::chrono::seconds(120)));
  EXPECT_FALSE(p.timed_out);
  return p;
}

SpawnOptions trace_env(const std::string& trace) {
  SpawnOptions options;
  options.env = {
      {"JITSCOPE_TRACE", trace}, {"JITSCOPE_CUPTI", "off"}, {"JITSCOPE_FLUSH_INTERVAL_MS", "5"}};
  options.drop_env_prefixes = {"JITSCOPE_"};  // none of the caller's settings
  return options;
}

// The events of a trace in either form, as the JSON form has them.
nlohmann::json load_any(const std::string& path, bool allow_cut = false) {
  if (path.size() < 8 || path.compare(path.size() - 8, 8, ".pftrace") != 0) {
    return load_trace(path, allow_cut);
  }
  pfwire::Reader reader;
  bool cut = false;
  reader.read(read_file(path), &cut);
  if (!allow_cut) EXPECT_FALSE(cut) << path;
  for (const std::string& e : reader.errors) ADD_FAILURE() << path << ": " << e;
  return reader.json_form();
}

// A trace path of the form asked for: "json", or "perfetto" (.pftrace).
std::string trace_path(const std::string& stem, const std::string& form) {
  std::string path = temp_path(stem + "_" + form);
  if (form != "json") path.replace(path.size() - 5, 5, ".pftrace");
  return path;
}

// The first image's spans are in `trace`, the second image's in the file
// the one `jitscope:` line names; both load (the first may be cut when the
// exec came with its session running). The same in both forms: the
// Perfetto form's head carries the session's owner too.
void expect_exec_keeps_first_spans(const std::string& how, const std::string& form,
                                   bool first_cut) {
  const std::string trace = trace_path("exec_" + how, form);
  const Subprocess p = run_child({how}, trace, trace_env(trace));
  ASSERT_EQ(p.exit_code, 0) << p.err();
  const std::string beside = exec_path(trace, p.pid);
  EXPECT_EQ(lines_starting(p.err(), "jitscope:").size(), 1u) << p.err();
  EXPECT_NE(p.err().find(beside), std::string::npos) << p.err();

  const nlohmann::json first = load_any(trace, /*allow_cut=*/first_cut);
  EXPECT_EQ(spans_named(first, "before_exec").size(), static_cast<std::size_t>(kBeforeExec));
  EXPECT_EQ(spans_named(first, "after_exec").size(), 0u);
  ASSERT_EQ(::access(beside.c_str(), F_OK), 0) << beside << " missing; stderr: " << p.err();
  const nlohmann::json second = load_any(beside);  // ended by the exit: whole
  EXPECT_EQ(spans_named(second, "after_exec").size(), static_cast<std::size_t>(kAfterExec));
  EXPECT_EQ(spans_named(second, "before_exec").size(), 0u);
  EXPECT_NE(metadata(second, "jitscope_stats"), nullptr);
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    ::unlink(trace.c_str());
    ::unlink(beside.c_str());
  }
}

class SessionFilesExec : public ::testing::TestWithParam<std::string> {};

TEST_P(SessionFilesExec, ExecOfItselfAfterStopKeepsTheFirstImagesTrace) {
  expect_exec_keeps_first_spans("exec-stopped", GetParam(), /*first_cut=*/false);
}

TEST_P(SessionFilesExec, ExecOfItselfWithTheSessionRunningKeepsTheFirstImagesTrace) {
  expect_exec_keeps_first_spans("exec-running", GetParam(), /*first_cut=*/true);
}

INSTANTIATE_TEST_SUITE_P(BothForms, SessionFilesExec, ::testing::Values("json", "perfetto"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "json" ? "Json" : "Perfetto";
                         });

// Compressed packets: the head stays plain, so the kept file is found too.
TEST(SessionFiles, ExecOfItselfKeepsACompressedPerfettoTrace) {
  const std::string trace = trace_path("exec_zstd", "perfetto");
  SpawnOptions options = trace_env(trace);
  options.env.emplace_back("JITSCOPE_COMPRESSION", "zstd");
  const Subprocess p = run_child({"exec-stopped"}, trace, options);
  ASSERT_EQ(p.exit_code, 0) << p.err();
  if (p.err().find("compression (zstd) is off") != std::string::npos) {
    GTEST_SKIP() << "no libzstd here: " << p.err();
  }
  const std::string beside = exec_path(trace, p.pid);
  EXPECT_EQ(lines_starting(p.err(), "jitscope:").size(), 1u) << p.err();
  EXPECT_NE(p.err().find(beside), std::string::npos) << p.err();
  const std::string first = read_file(trace);
  EXPECT_NE(first.find("jitscope session of pid " + std::to_string(p.pid)), std::string::npos)
      << "the first image's trace was emptied or lost its plain head";
  EXPECT_GT(read_file(beside).size(), 0u);
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    ::unlink(trace.c_str());
    ::unlink(beside.c_str());
  }
}

// The metrics file follows the trace: the first image's record stays in
// it, the second image's goes to the file beside it.
TEST(SessionFiles, ExecOfItselfKeepsTheFirstImagesMetrics) {
  const std::string trace = temp_path("exec_metrics");
  const std::string metrics = trace + ".metrics.jsonl";
  SpawnOptions options = trace_env(trace);
  options.env.emplace_back("JITSCOPE_METRICS", metrics);
  const Subprocess p = run_child({"exec-stopped"}, trace, options);
  ASSERT_EQ(p.exit_code, 0) << p.err();
  const std::string beside = exec_path(metrics, p.pid);
  EXPECT_EQ(lines_starting(p.err(), "jitscope:").size(), 1u) << p.err();
  EXPECT_NE(p.err().find(exec_path(trace, p.pid)), std::string::npos) << p.err();
  EXPECT_NE(p.err().find(beside), std::string::npos) << p.err();

  const std::string first = read_file(metrics);
  EXPECT_NE(first.find("before_exec"), std::string::npos) << "the first image's record is gone";
  EXPECT_EQ(first.find("after_exec"), std::string::npos) << first;
  ASSERT_EQ(::access(beside.c_str(), F_OK), 0) << beside << " missing; stderr: " << p.err();
  const std::string second = read_file(beside);
  EXPECT_NE(second.find("after_exec"), std::string::npos) << second;
  EXPECT_EQ(second.find("before_exec"), std::string::npos) << second;
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    for (const std::string& f : {trace, exec_path(trace, p.pid), metrics, beside}) {
      ::unlink(f.c_str());
    }
  }
}

// Another process on the same path (a rerun) empties the file as before.
TEST(SessionFiles, ARerunStillOverwritesTheTrace) {
  const std::string trace = temp_path("rerun");
  const Subprocess first = run_child({"exec-stopped"}, trace, trace_env(trace));
  ASSERT_EQ(first.exit_code, 0) << first.err();
  const Subprocess second = run_child({"exec-stopped"}, trace + ".2", trace_env(trace));
  ASSERT_EQ(second.exit_code, 0) << second.err();
  // The second run's first image wrote `trace` again, emptied first.
  const nlohmann::json again = load_trace(trace);
  EXPECT_EQ(spans_named(again, "before_exec").size(), static_cast<std::size_t>(kBeforeExec));
  const nlohmann::json* session = metadata(again, "jitscope_session");
  ASSERT_NE(session, nullptr);
  EXPECT_EQ((*session)["pid"], second.pid);
  if (!::testing::Test::HasFailure()) {
    for (const Subprocess* p : {&first, &second}) {
      p->remove_outputs();
      ::unlink(exec_path(trace, p->pid).c_str());
    }
    ::unlink(trace.c_str());
  }
}

std::string worker_path(const std::string& path, int pid) {
  const std::size_t dot = path.rfind('.');
  return path.substr(0, dot) + ".worker-" + std::to_string(pid) + path.substr(dot);
}

std::size_t lines_in(const std::string& path) {
  const std::string text = read_file(path);
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The id of the trace's one spawn-arrow end: its "s" ("f") event in the
// JSON form, its slice's flow_out (flow_in) in the Perfetto form's reading.
std::uint64_t spawn_flow_id(const nlohmann::json& trace, bool start) {
  std::vector<std::uint64_t> ids;
  for (const nlohmann::json& e : trace) {
    const std::string ph = e.value("ph", "");
    if (ph == (start ? "s" : "f")) ids.push_back(e.value("id", std::uint64_t{0}));
    const char* key = start ? "flow_out" : "flow_in";
    if (ph == "X" && e.contains(key)) ids.push_back(e[key].get<std::uint64_t>());
  }
  EXPECT_EQ(ids.size(), 1u) << (start ? "start" : "end");
  return ids.empty() ? 0 : ids[0];
}

TEST_P(SessionFilesExec, AWorkerInheritingTheTraceWritesItsOwnFileBesideIt) {
  const std::string trace = trace_path("worker_parent", GetParam());
  const std::string metrics = temp_path("worker_parent_metrics") + "l";
  SpawnOptions options = trace_env(trace);
  options.env.emplace_back("JITSCOPE_METRICS", metrics);
  const Subprocess p = run_child({"parent"}, trace, options);
  ASSERT_EQ(p.exit_code, 0) << p.err();
  EXPECT_EQ(p.err().find("jitscope:"), std::string::npos) << p.err();  // none, anywhere

  const nlohmann::json parent = load_any(trace);
  EXPECT_EQ(spans_named(parent, "in_parent").size(), static_cast<std::size_t>(kParentSpans));
  EXPECT_EQ(spans_named(parent, "in_worker").size(), 0u);
  std::vector<nlohmann::json> children;
  for (const nlohmann::json& e : parent) {
    if (e.value("name", "") == "jitscope_child") children.push_back(e);
  }
  ASSERT_EQ(children.size(), 1u);
  const int worker_pid = children[0]["args"].value("pid", 0);
  ASSERT_GT(worker_pid, 0);
  EXPECT_NE(worker_pid, p.pid);
  const std::string beside = worker_path(trace, worker_pid);
  EXPECT_EQ(children[0]["args"].value("trace", ""), beside);
  EXPECT_EQ(children[0]["args"].value("label", ""), "w");

  ASSERT_EQ(::access(beside.c_str(), F_OK), 0) << beside << " missing; stderr: " << p.err();
  const nlohmann::json worker = load_any(beside);
  EXPECT_EQ(spans_named(worker, "in_worker").size(), static_cast<std::size_t>(kWorkerSpans));
  EXPECT_EQ(spans_named(worker, "in_parent").size(), 0u);
  // The parent's spawn arrow ends at the worker's first unit: the worker
  // took its parent from the file's head, with no JITSCOPE_PARENT_PID.
  EXPECT_EQ(spans_named(worker, "spawned").size(), 1u);
  EXPECT_EQ(spawn_flow_id(parent, true), spawn_flow_id(worker, false));
  // One record per process, each in its own metrics file.
  const std::string worker_metrics = worker_path(metrics, worker_pid);
  EXPECT_EQ(lines_in(metrics), 1u);
  EXPECT_EQ(lines_in(worker_metrics), 1u);
  EXPECT_NE(read_file(worker_metrics).find("in_worker"), std::string::npos);
  EXPECT_EQ(read_file(metrics).find("in_worker"), std::string::npos);
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    for (const std::string& f : {trace, beside, metrics, worker_metrics}) ::unlink(f.c_str());
  }
}

TEST(SessionFiles, SigkillRightAfterStartLeavesATraceWithItsHead) {
  const std::string trace = temp_path("early_kill");
  SpawnOptions options;
  options.drop_env_prefixes = {"JITSCOPE_"};
  const Subprocess p = run_child({"early-kill", trace}, trace, options);
  ASSERT_EQ(p.signal, SIGKILL) << "exit " << p.exit_code << ": " << p.err();
  const std::string text = read_file(trace);
  ASSERT_FALSE(text.empty()) << "a 0-byte trace";
  const nlohmann::json loaded = load_trace(trace, /*allow_cut=*/true);
  const nlohmann::json* name = metadata(loaded, "process_name");
  ASSERT_NE(name, nullptr) << text;
  EXPECT_EQ((*name)["pid"], p.pid);
  const nlohmann::json* session = metadata(loaded, "jitscope_session");
  ASSERT_NE(session, nullptr) << text;
  EXPECT_EQ((*session)["args"]["clock"], "tsc");
  EXPECT_EQ(metadata(loaded, "jitscope_stats"), nullptr);
  EXPECT_EQ(p.err().find("jitscope:"), std::string::npos) << p.err();  // none, anywhere
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    ::unlink(trace.c_str());
  }
}

}  // namespace
}  // namespace jitscope::testing
