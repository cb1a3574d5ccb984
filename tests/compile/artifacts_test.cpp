// Compile artifacts (CompileUnit::artifact, issue 19): files named by
// compile id in the session's artifacts folder, listed in the unit's record,
// bounded by max_artifact_bytes, written at the call (they survive a crash).
#include "fnv1a_reference.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace jitscope::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

Config artifact_config(const std::string& stem) {
  Config cfg = test_config(stem);
  cfg.metrics_path = temp_path(stem + ".metrics");
  fs::remove_all(cfg.metrics_path + ".artifacts");
  return cfg;
}

TEST(Artifacts, NamedByCompileIdListedInTheRecordWithSizeAndHash) {
  reset_compile_state();
  const Config cfg = artifact_config("artifacts_named");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  const std::string ptx = ".version 7.8\n.target sm_90\n";
  const std::string bytes(
      "\x7f"
      "ELF\0\x01",
      6);
  {
    CompileUnit first({.frame = "saxpy"});
    EXPECT_TRUE(first.artifact("ptx", ptx, "ptx").ok());
    EXPECT_TRUE(first.artifact("ptx", ptx + "// again\n", "ptx").ok());  // same kind: ".1"
    EXPECT_TRUE(first.artifact("cubin", bytes, "cubin").ok());
    EXPECT_TRUE(first.artifact("mlir after/lower", "module {}").ok());  // '/', ' ' -> '_'
  }
  {
    CompileUnit again({.frame = "saxpy"});            // [0/1]
    EXPECT_TRUE(again.artifact("log", "", "").ok());  // empty content, no extension
  }
  const SessionStats stats = session.finish();

  const std::string dir = fs::absolute(cfg.metrics_path + ".artifacts").string();
  EXPECT_EQ(stats.artifacts_dir, dir);
  EXPECT_EQ(stats.artifacts_written, 5u);
  EXPECT_EQ(stats.artifact_bytes, ptx.size() * 2 + 9 + bytes.size() + 9);
  EXPECT_EQ(stats.artifacts_over_cap, 0u);

  const std::vector<json> records = read_json_lines(cfg.metrics_path);
  ASSERT_EQ(records.size(), 2u);
  const json& list = records[0]["artifacts"];
  ASSERT_EQ(list.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"ptx", dir + "/0_0/ptx.ptx"},
      {"ptx", dir + "/0_0/ptx.1.ptx"},
      {"cubin", dir + "/0_0/cubin.cubin"},
      {"mlir_after_lower", dir + "/0_0/mlir_after_lower.txt"}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(list[i]["kind"], expected[i].first);
    const std::string path = list[i]["path"];
    EXPECT_EQ(path, expected[i].second);
    const std::string content = read_file(path);
    EXPECT_EQ(list[i]["bytes"], content.size());
    EXPECT_EQ(list[i]["fnv1a"], reference_fnv1a(content)) << path;
  }
  EXPECT_EQ(read_file(dir + "/0_0/cubin.cubin"), bytes);
  ASSERT_EQ(records[1]["artifacts"].size(), 1u);
  EXPECT_EQ(records[1]["artifacts"][0]["path"], dir + "/0_1/log");
  EXPECT_TRUE(fs::exists(dir + "/0_1/log"));

  const json* js = nullptr;
  const json trace = load_trace(session.path());
  for (const json& e : trace) {
    if (e.value("name", "") == "jitscope_stats") js = &e;
  }
  ASSERT_NE(js, nullptr);
  EXPECT_EQ((*js)["args"]["artifacts"]["written"], 5);
}

TEST(Artifacts, PastTheBoundTheyAreCountedNotWrittenAndSaidOnce) {
  reset_compile_state();
  Config cfg = artifact_config("artifacts_bound");
  cfg.max_artifact_bytes = 100;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  StderrCapture err;
  std::vector<Status> results;
  {
    CompileUnit unit;
    results.push_back(unit.artifact("a", std::string(60, 'a')));
    results.push_back(unit.artifact("b", std::string(60, 'b')));  // 120 > 100
    results.push_back(unit.artifact("c", std::string(40, 'c')));  // 100: fits exactly
    results.push_back(unit.artifact("d", "d"));                   // 101
  }
  const SessionStats stats = session.finish();
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].ok());
  EXPECT_FALSE(results[1].ok());
  EXPECT_NE(results[1].message().find("max_artifact_bytes"), std::string::npos);
  EXPECT_TRUE(results[2].ok());
  EXPECT_FALSE(results[3].ok());
  EXPECT_EQ(stats.artifacts_written, 2u);
  EXPECT_EQ(stats.artifact_bytes, 100u);
  EXPECT_EQ(stats.artifacts_over_cap, 2u);
  EXPECT_EQ(err.text(),
            "jitscope: artifacts: the session's bound of 100 bytes (max_artifact_bytes) is "
            "reached; later artifacts are counted, not written\n");
  const std::string dir = cfg.metrics_path + ".artifacts/0_0/";
  EXPECT_TRUE(fs::exists(dir + "a.txt"));
  EXPECT_FALSE(fs::exists(dir + "b.txt"));
  EXPECT_TRUE(fs::exists(dir + "c.txt"));
  const std::vector<json> records = read_json_lines(cfg.metrics_path);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["artifacts"].size(), 2u);
}

TEST(Artifacts, OffWithoutAFolderOrWithABoundOfZeroQuietly) {
  reset_compile_state();
  StderrCapture err;
  {
    CompileUnit unit;  // no session
    const Status st = unit.artifact("ptx", "x");
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("artifacts are off"), std::string::npos) << st.message();
  }
  {
    ScopedSession session(test_config("artifacts_no_metrics"));  // no metrics, no folder
    CompileUnit unit;
    EXPECT_FALSE(unit.artifact("ptx", "x").ok());
  }
  {
    Config cfg = artifact_config("artifacts_zero");
    cfg.max_artifact_bytes = 0;
    ScopedSession session(cfg);
    CompileUnit unit;
    EXPECT_FALSE(unit.artifact("ptx", "x").ok());
    unit.close();
    EXPECT_EQ(session.finish().artifacts_dir, "");
    EXPECT_FALSE(fs::exists(cfg.metrics_path + ".artifacts"));
  }
  EXPECT_EQ(err.text(), "");
}

// A session with a metrics file but no artifact leaves no folder behind (it
// used to make an empty <metrics>.artifacts/ on every run); the first
// artifact makes it.
TEST(Artifacts, TheFolderIsMadeByTheFirstArtifactNotByTheSession) {
  reset_compile_state();
  Config cfg = artifact_config("artifacts_lazy");
  const std::string folder = cfg.metrics_path + ".artifacts";
  fs::remove_all(folder);
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    { CompileUnit unit; }
    EXPECT_FALSE(fs::exists(folder)) << "made at start";
    const SessionStats stats = session.finish();
    EXPECT_EQ(stats.artifacts_written, 0u);
  }
  EXPECT_FALSE(fs::exists(folder)) << "an empty artifacts folder was left behind";
  {
    ScopedSession session(cfg);
    CompileUnit unit;
    ASSERT_TRUE(unit.artifact("ptx", ".version 8.0", "ptx").ok());
    EXPECT_TRUE(fs::exists(folder));
  }
  fs::remove_all(folder);
}

TEST(Artifacts, AnExplicitFolderAndTheEnvironmentChooseWhere) {
  reset_compile_state();
  const std::string dir = temp_path("artifacts_explicit_dir") + "/nested/deeper";
  fs::remove_all(temp_path("artifacts_explicit_dir"));
  ::setenv("JITSCOPE_TRACE", temp_path("artifacts_env.json").c_str(), 1);
  ::setenv("JITSCOPE_ARTIFACTS", dir.c_str(), 1);
  ::setenv("JITSCOPE_MAX_ARTIFACT_SIZE", "2K", 1);
  Config cfg;
  const Status st = Config::from_env(&cfg);
  ::setenv("JITSCOPE_MAX_ARTIFACT_SIZE", "lots", 1);
  Config bad;
  const Status refused = Config::from_env(&bad);
  for (const char* v : {"JITSCOPE_TRACE", "JITSCOPE_ARTIFACTS", "JITSCOPE_MAX_ARTIFACT_SIZE"}) {
    ::unsetenv(v);
  }
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(cfg.artifacts_dir, dir);
  EXPECT_EQ(cfg.max_artifact_bytes, 2048u);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("JITSCOPE_MAX_ARTIFACT_SIZE='lots'"), std::string::npos);

  cfg.cupti = CuptiMode::kOff;
  ScopedSession session(cfg);  // no metrics file: the explicit folder is enough
  ASSERT_TRUE(session.status().ok());
  {
    CompileUnit unit;
    EXPECT_TRUE(unit.artifact("source", "__global__ void k() {}", "cu").ok());
  }
  EXPECT_EQ(session.finish().artifacts_dir, dir);
  EXPECT_EQ(read_file(dir + "/0_0/source.cu"), "__global__ void k() {}");
}

TEST(Artifacts, AnArtifactIsOnDiskBeforeTheHostCrashes) {
  reset_compile_state();  // the child's unit is 0/0 (compile ids count per process)
  const Config cfg = artifact_config("artifacts_crash");
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!start(cfg).ok()) ::_exit(3);
    CompileUnit unit;
    if (!unit.artifact("ptx", "before the crash", "ptx").ok()) ::_exit(4);
    std::abort();  // the unit never closes: no record, but the file is there
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exit " << WEXITSTATUS(status);
  EXPECT_EQ(read_file(cfg.metrics_path + ".artifacts/0_0/ptx.ptx"), "before the crash");
}

}  // namespace
}  // namespace jitscope::testing
