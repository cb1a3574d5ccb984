// A trace file a session wrote survives what comes after it (issue 17):
// - a process that exec()s itself with JITSCOPE_TRACE inherited keeps the
//   spans it wrote before the exec: the new image's session writes a new
//   file beside the first (file_sink.hpp, open_output) and says so in one
//   line; a rerun (another process) still empties the file as before;
// - the metrics file (JITSCOPE_METRICS) of that process is kept the same
//   way: the new image writes its metrics beside it too, named in that line;
// - a session killed right after start() returned leaves a trace that loads
//   with its head (process_name, jitscope_session): start() writes the head
//   before it returns, not the flusher after its clock calibration.
#include "flush/perfetto_wire.hpp"
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

namespace jitscope::testing {
namespace {

constexpr int kBeforeExec = 100;  // as session_files_child.cpp
constexpr int kAfterExec = 50;

std::size_t slices_named(const nlohmann::json& trace, const std::string& name) {
  std::size_t n = 0;
  for (const auto& e : events_with_ph(trace, "X")) n += e.value("name", "") == name ? 1 : 0;
  return n;
}

// The file beside `path` (its extension after the last dot) that the
// exec'd image of `pid` writes first: trace.<pid>.1.json (file_sink.hpp,
// exec_path).
std::string exec_path(const std::string& path, int pid) {
  const std::size_t dot = path.rfind('.');
  return path.substr(0, dot) + "." + std::to_string(pid) + ".1" + path.substr(dot);
}

std::size_t jitscope_lines(const std::string& err) {
  std::size_t n = 0;
  for (std::size_t at = err.find("jitscope:"); at != std::string::npos;
       at = err.find("jitscope:", at + 1)) {
    ++n;
  }
  return n;
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
  EXPECT_EQ(jitscope_lines(p.err()), 1u) << p.err();
  EXPECT_NE(p.err().find(beside), std::string::npos) << p.err();

  const nlohmann::json first = load_any(trace, /*allow_cut=*/first_cut);
  EXPECT_EQ(slices_named(first, "before_exec"), static_cast<std::size_t>(kBeforeExec));
  EXPECT_EQ(slices_named(first, "after_exec"), 0u);
  ASSERT_EQ(::access(beside.c_str(), F_OK), 0) << beside << " missing; stderr: " << p.err();
  const nlohmann::json second = load_any(beside);  // ended by the exit: whole
  EXPECT_EQ(slices_named(second, "after_exec"), static_cast<std::size_t>(kAfterExec));
  EXPECT_EQ(slices_named(second, "before_exec"), 0u);
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
  EXPECT_EQ(jitscope_lines(p.err()), 1u) << p.err();
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
  EXPECT_EQ(jitscope_lines(p.err()), 1u) << p.err();
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
  EXPECT_EQ(slices_named(again, "before_exec"), static_cast<std::size_t>(kBeforeExec));
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
  EXPECT_EQ(jitscope_lines(p.err()), 0u) << p.err();
  if (!::testing::Test::HasFailure()) {
    p.remove_outputs();
    ::unlink(trace.c_str());
  }
}

}  // namespace
}  // namespace jitscope::testing
