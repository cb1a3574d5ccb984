// note_child_process (C++ and C) and the session metadata that lets
// jitscope-merge line traces up: host and boot_id in jitscope_session.
// Not covered: merging itself (tests/tools, jitscope-merge).
#include "trace_support.hpp"

#include <jitscope/jitscope.h>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace jitscope::testing {
namespace {

std::vector<nlohmann::json> children_of(const nlohmann::json& trace) {
  std::vector<nlohmann::json> out;
  for (const auto& e : trace) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "jitscope_child") out.push_back(e);
  }
  return out;
}

TEST(ChildProcess, WithoutASessionIsAnError) {
  const Status st = note_child_process(1234, "/tmp/child.json", "w0");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no active session"), std::string::npos) << st.message();
}

TEST(ChildProcess, ListsEachChildOnceWithItsTraceAndLabel) {
  Config cfg = test_config("child_process");
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    EXPECT_FALSE(note_child_process(0, "x.json").ok());
    EXPECT_FALSE(note_child_process(-5, "x.json").ok());
    ASSERT_TRUE(note_child_process(4242, "/tmp/w0.json", "worker \"0\"\n").ok());
    ASSERT_TRUE(note_child_process(4343, "/tmp/w1.json").ok());
    ASSERT_EQ(jitscope_note_child_process(4444, nullptr, "x"), 0);  // the worker's own file
    ASSERT_EQ(jitscope_note_child_process(4545, "rel/w2.json", nullptr), 0);
    EXPECT_STREQ(jitscope_last_error(), "");
  }
  const nlohmann::json trace = load_trace(cfg.output_path);
  const auto children = children_of(trace);
  ASSERT_EQ(children.size(), 4u);
  EXPECT_EQ(children[0]["pid"], static_cast<int>(::getpid()));
  EXPECT_EQ(children[0]["args"]["pid"], 4242);
  EXPECT_EQ(children[0]["args"]["trace"], "/tmp/w0.json");
  EXPECT_EQ(children[0]["args"]["label"], "worker \"0\"\n");
  EXPECT_EQ(children[1]["args"]["pid"], 4343);
  EXPECT_EQ(children[1]["args"]["label"], "");
  EXPECT_EQ(children[2]["args"]["pid"], 4444);
  EXPECT_EQ(children[2]["args"]["trace"], worker_trace_path(cfg.output_path, 4444));
  EXPECT_EQ(worker_trace_path("/d/trace.json", 4444), "/d/trace.worker-4444.json");
  EXPECT_EQ(children[3]["args"]["pid"], 4545);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(children[3]["args"]["trace"], std::string(cwd) + "/rel/w2.json");  // made absolute
  // Each note is two written events, its jitscope_child and the start of its
  // spawn arrow (spawn_arrow_test.cpp); the session recorded nothing else.
  EXPECT_EQ((*metadata(trace, "jitscope_stats"))["args"]["events_written"], 8);
}

TEST(ChildProcess, ANoteGoesToTheSessionItWasMadeIn) {
  Config first = test_config("child_first");
  {
    ScopedSession session(first);
    ASSERT_TRUE(note_child_process(11, "a.json").ok());
  }
  Config second = test_config("child_second");
  { ScopedSession session(second); }
  EXPECT_EQ(children_of(load_trace(first.output_path)).size(), 1u);
  EXPECT_EQ(children_of(load_trace(second.output_path)).size(), 0u);
}

TEST(SessionMetadata, NamesTheHostAndTheBoot) {
  Config cfg = test_config("session_host");
  { ScopedSession session(cfg); }
  const nlohmann::json trace = load_trace(cfg.output_path);
  const nlohmann::json* session = metadata(trace, "jitscope_session");
  ASSERT_NE(session, nullptr);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  EXPECT_EQ((*session)["args"]["host"], std::string(host));
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string boot;
  std::getline(in, boot);
  ASSERT_EQ(boot.size(), 36u);  // a UUID
  EXPECT_EQ((*session)["args"]["boot_id"], boot);
}

}  // namespace
}  // namespace jitscope::testing
