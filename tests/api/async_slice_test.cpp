// jitscope::async_begin/async_slice: work that is suspended and resumed on a
// thread other work shares (asyncio tasks, coroutines) gets slices on a
// track of its own, with their args, and the thread's own spans stay whole
// around them.
#include "../flush/perfetto_wire.hpp"
#include "sanitizers.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

// Two "tasks" on this thread, interleaved: each begins, lets the other run,
// then ends, inside a thread span that stays open throughout.
SessionStats record_interleaved(const Config& cfg) {
  ScopedSession session(cfg);
  EXPECT_TRUE(session.status().ok()) << session.status().message();
  {
    Span thread_span("thread_span");
    const AsyncBegin a = async_begin();
    const AsyncBegin b = async_begin();
    const AsyncBegin a_inner = async_begin();
    { Span between("between"); }
    const std::string text = "text";
    const Arg args[] = {{"n", 3}, {"ok", true}, {"x", 0.5}, {"s", text}};
    EXPECT_TRUE(async_slice(1, "a_inner", a_inner, args));
    EXPECT_TRUE(async_slice(2, "b", b));  // ends before a: out of order for a stack
    EXPECT_TRUE(async_slice(1, "a", a));
  }
  EXPECT_FALSE(async_slice(1, "begun without a session", AsyncBegin{}));
  return session.finish();
}

TEST(AsyncSlice, InterleavedWorkGetsATrackPerIdAndLeavesTheThreadsSpansWhole) {
  const Config cfg = test_config("async_slice");
  const SessionStats stats = record_interleaved(cfg);
  EXPECT_EQ(stats.spans_ended_out_of_order, 0u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(stats.nvtx_captured, 0u);  // not NVTX's
  const json trace = load_trace(cfg.output_path);
  std::map<std::string, std::vector<json>> pairs;  // name -> its b and e
  for (const json& e : trace) {
    const std::string ph = e.value("ph", "");
    if (ph == "b" || ph == "e") {
      EXPECT_EQ(e.value("cat", ""), "jitscope.async");
      pairs[e.value("name", "")].push_back(e);
    }
  }
  ASSERT_EQ(pairs.size(), 3u);
  for (const auto& [name, ends] : pairs) {
    ASSERT_EQ(ends.size(), 2u) << name;
    EXPECT_EQ(ends[0]["ph"], "b");
    EXPECT_EQ(ends[1]["ph"], "e");
    EXPECT_EQ(ends[0]["id"], ends[1]["id"]);
    EXPECT_LE(ends[0]["ts"].get<double>(), ends[1]["ts"].get<double>());
  }
  EXPECT_EQ(pairs["a_inner"][0]["args"],
            json::parse(R"({"n":3,"ok":true,"x":0.5,"s":"text"})"));  // on the begin
  EXPECT_FALSE(pairs["a"][0].contains("args"));
  EXPECT_EQ(pairs["a"][0]["id"], 1);
  EXPECT_EQ(pairs["a_inner"][0]["id"], 1);
  EXPECT_EQ(pairs["b"][0]["id"], 2);
  // a_inner nests in a on track 1.
  EXPECT_LE(pairs["a"][0]["ts"].get<double>(), pairs["a_inner"][0]["ts"].get<double>());
  EXPECT_GE(pairs["a"][1]["ts"].get<double>(), pairs["a_inner"][1]["ts"].get<double>());
  // The thread's spans are whole: nothing ended early, nothing incomplete.
  const auto thread_spans = spans_named(trace, "thread_span");
  ASSERT_EQ(thread_spans.size(), 1u);
  EXPECT_FALSE(thread_spans[0].contains("args") && thread_spans[0]["args"].contains("incomplete"));
  EXPECT_EQ(spans_named(trace, "between").size(), 1u);
}

TEST(AsyncSlice, ThePerfettoFormPutsEachIdOnItsOwnTrack) {
  Config cfg = test_config("async_slice_pf");
  cfg.output_path.replace(cfg.output_path.size() - 5, 5, ".pftrace");
  (void)record_interleaved(cfg);
  pfwire::Reader reader;
  bool cut = false;
  reader.read(read_file(cfg.output_path), &cut);
  EXPECT_FALSE(cut);
  for (const std::string& e : reader.errors) ADD_FAILURE() << e;
  std::map<std::string, std::uint64_t> track_of;
  for (const json& e : reader.events) {
    const std::string name = e.value("name", "");
    if (name == "a" || name == "a_inner" || name == "b") track_of[name] = e.value("track", 0ull);
    if (name == "a_inner") EXPECT_EQ(e["args"]["s"], "text") << e.dump();
  }
  ASSERT_EQ(track_of.size(), 3u);
  EXPECT_EQ(track_of["a"], track_of["a_inner"]);
  EXPECT_NE(track_of["a"], track_of["b"]);
}

TEST(AsyncSlice, ABeginFromAnotherSessionRecordsNothing) {
  AsyncBegin stale;
  {
    ScopedSession first(test_config("async_slice_first"));
    stale = async_begin();
    EXPECT_NE(stale.session, 0u);
  }
  const Config cfg = test_config("async_slice_second");
  {
    ScopedSession second(cfg);
    EXPECT_FALSE(async_slice(1, "stale", stale));
  }
  for (const json& e : load_trace(cfg.output_path)) EXPECT_NE(e.value("name", ""), "stale");
}

// A slice begun while a compile unit is current carries its compile id,
// with its args; one begun outside any unit carries none, even when it ends
// inside one (another task's unit, on a shared thread).
TEST(AsyncSlice, CarriesTheCompileIdOfTheUnitAtItsBegin) {
  const Config cfg = test_config("async_slice_unit");
  std::string id;
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    const AsyncBegin outside = async_begin();
    CompileUnit unit(CompileUnitOptions{.frame = "async.unit"});
    id = unit.id().str();
    const AsyncBegin inside = async_begin();
    const Arg args[] = {{"n", 7}};
    EXPECT_TRUE(async_slice(1, "inside", inside, args));
    EXPECT_TRUE(async_slice(2, "inside_no_args", async_begin()));
    EXPECT_TRUE(async_slice(3, "outside", outside));
  }
  std::map<std::string, json> begins;
  for (const json& e : load_trace(cfg.output_path)) {
    if (e.value("ph", "") == "b") begins[e.value("name", "")] = e;
  }
  ASSERT_EQ(begins.size(), 3u);
  EXPECT_EQ(begins["inside"]["args"], json::parse(R"({"compile_id":")" + id + R"(","n":7})"));
  EXPECT_EQ(begins["inside_no_args"]["args"]["compile_id"], id);
  EXPECT_FALSE(begins["outside"].contains("args")) << begins["outside"].dump();
}

// A forked child's thread writes its own tid, not the one its parent's
// thread had when it wrote a slice before the fork.
TEST(AsyncSlice, AForkedChildWritesItsOwnThreadId) {
  // The child starts a session, a new thread after fork(), which
  // ThreadSanitizer does not support in a child of a threaded process.
  if (jitscope::testing::kTsan) GTEST_SKIP() << "a session in a forked child, under TSan";
  {
    ScopedSession parent(test_config("async_slice_fork_parent"));
    ASSERT_TRUE(parent.status().ok());
    EXPECT_TRUE(async_slice(1, "parent", async_begin()));
  }
  const Config child_cfg = test_config("async_slice_fork_child");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    bool ok = start(child_cfg).ok();
    ok = ok && async_slice(1, "child", async_begin());
    ok = ok && stop().ok();
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int begins = 0;
  for (const json& e : load_trace(child_cfg.output_path)) {
    if (e.value("ph", "") != "b") continue;
    ++begins;
    EXPECT_EQ(e["tid"], static_cast<int>(child)) << e.dump();
  }
  EXPECT_EQ(begins, 1);
}

}  // namespace
}  // namespace jitscope::testing
