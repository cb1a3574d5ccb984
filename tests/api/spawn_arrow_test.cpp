// The arrow from a parent's spawn of a worker to the worker's first compile
// unit (base/spawn_flow.hpp): the parent's note_child_process starts it, a
// session with a parent pid (Config::parent_pid or JITSCOPE_PARENT_PID)
// ends it, in both forms. One process plays both roles: a note for its own
// pid, then a session whose parent is itself, so the two ids must agree.
// Not covered here: two real processes and merge (nvrtc_jit's Processes
// test, merge_test, viewer_merged_spawn_flows). The task arrows
// (note_task_sent / note_task_received) the same way, at the end.
#include "../flush/perfetto_wire.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>
#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

constexpr std::uint64_t kSpawnLow = std::uint64_t{1} << 52;

std::vector<json> with(const json& trace, std::string_view ph, std::string_view name) {
  std::vector<json> out;
  for (const json& e : trace) {
    if (e.value("ph", "") == ph && e.value("name", "") == name &&
        e.value("cat", "") == "jitscope.process") {
      out.push_back(e);
    }
  }
  return out;
}

// Two units in a session: the first gets the arrow's end, the second not.
void compile_two_units() {
  for (int i = 0; i < 2; ++i) {
    CompileUnit unit(CompileUnitOptions{.frame = "spawn.unit"});
    Phase p("spawn.phase");
  }
}

// The parent's trace: its spawn slice and flow start; returns the flow id.
std::uint64_t parent_arrow(const json& parent) {
  const auto spawn = with(parent, "X", "spawn");
  const auto starts = with(parent, "s", "spawn");
  EXPECT_EQ(spawn.size(), 1u);
  EXPECT_EQ(starts.size(), 1u);
  if (spawn.size() != 1 || starts.size() != 1) return 0;
  EXPECT_EQ(spawn[0]["dur"], 0);
  EXPECT_EQ(spawn[0]["args"]["child_pid"], static_cast<int>(::getpid()));
  EXPECT_EQ(spawn[0]["args"]["label"], "worker 0");
  EXPECT_EQ(starts[0]["ts"], spawn[0]["ts"]);  // bound to the slice: same time and thread
  EXPECT_EQ(starts[0]["tid"], spawn[0]["tid"]);
  const auto id = starts[0]["id"].get<std::uint64_t>();
  EXPECT_GE(id, kSpawnLow);
  EXPECT_LT(id, 2 * kSpawnLow);
  return id;
}

TEST(SpawnArrow, JoinsTheParentsNoteToTheWorkersFirstUnit) {
  Config parent_cfg = test_config("spawn_parent");
  {
    ScopedSession parent(parent_cfg);
    ASSERT_TRUE(parent.status().ok());
    ASSERT_TRUE(note_child_process(::getpid(), "/tmp/worker.json", "worker 0").ok());
    compile_two_units();  // no parent pid: no arrow's end here
  }
  const json parent = load_trace(parent_cfg.output_path);
  EXPECT_TRUE(with(parent, "X", "spawned").empty());
  const std::uint64_t id = parent_arrow(parent);

  Config worker_cfg = test_config("spawn_worker");
  worker_cfg.parent_pid = ::getpid();
  {
    ScopedSession worker(worker_cfg);
    ASSERT_TRUE(worker.status().ok());
    compile_two_units();
  }
  const json worker = load_trace(worker_cfg.output_path);
  const auto spawned = with(worker, "X", "spawned");
  const auto ends = with(worker, "f", "spawn");
  ASSERT_EQ(spawned.size(), 1u) << "the first unit only";
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(spawned[0]["args"]["parent_pid"], static_cast<int>(::getpid()));
  EXPECT_EQ(ends[0]["id"].get<std::uint64_t>(), id) << "both processes compute one id";
  EXPECT_EQ(ends[0]["bp"], "e");
  EXPECT_EQ(ends[0]["ts"], spawned[0]["ts"]);
  // Inside the first unit's slice.
  const json* unit = nullptr;
  for (const json& e : worker) {
    if (e.value("ph", "") == "X" && e.value("cat", "") == "compile_unit" && unit == nullptr) {
      unit = &e;
    }
  }
  ASSERT_NE(unit, nullptr);
  const double ts = spawned[0]["ts"].get<double>();
  EXPECT_GE(ts, (*unit)["ts"].get<double>());
  EXPECT_LE(ts, (*unit)["ts"].get<double>() + (*unit)["dur"].get<double>());
  ::unlink(parent_cfg.output_path.c_str());
  ::unlink(worker_cfg.output_path.c_str());
}

TEST(SpawnArrow, TheWorkerTakesItsParentFromTheEnvironment) {
  ASSERT_EQ(::setenv("JITSCOPE_PARENT_PID", std::to_string(::getpid()).c_str(), 1), 0);
  Config cfg = test_config("spawn_env");  // parent_pid 0: the variable's
  {
    ScopedSession session(cfg);
    EXPECT_TRUE(session.status().ok()) << session.status().message();
    compile_two_units();
  }
  ::unsetenv("JITSCOPE_PARENT_PID");
  const json trace = load_trace(cfg.output_path);
  ASSERT_EQ(with(trace, "X", "spawned").size(), 1u);
  EXPECT_EQ(with(trace, "X", "spawned")[0]["args"]["parent_pid"], static_cast<int>(::getpid()));

  // A bad value costs the arrow, not the session.
  ASSERT_EQ(::setenv("JITSCOPE_PARENT_PID", "12x", 1), 0);
  Config bad = test_config("spawn_env_bad");
  ::testing::internal::CaptureStderr();
  {
    ScopedSession session(bad);
    EXPECT_TRUE(session.status().ok());
    compile_two_units();
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("JITSCOPE_PARENT_PID");
  EXPECT_NE(err.find("jitscope: JITSCOPE_PARENT_PID='12x' is not a pid"), std::string::npos) << err;
  EXPECT_TRUE(with(load_trace(bad.output_path), "X", "spawned").empty());

  // Config::from_env is strict about it, as about every variable.
  ASSERT_EQ(::setenv("JITSCOPE_PARENT_PID", "0", 1), 0);
  Config from_env;
  const Status st = Config::from_env(&from_env, /*require_trace=*/false);
  ::unsetenv("JITSCOPE_PARENT_PID");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("JITSCOPE_PARENT_PID"), std::string::npos) << st.message();
  ::unlink(cfg.output_path.c_str());
  ::unlink(bad.output_path.c_str());
}

// A .pftrace the test leaves for ctest's pftrace.spawn_arrow_test.*
// conformance checks: <TEST_TMPDIR_FOR_JITSCOPE or /tmp>/spawn_arrow.<name>.pftrace.
std::string kept_pftrace(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  return std::string(dir != nullptr ? dir : "/tmp") + "/spawn_arrow." + name + ".pftrace";
}

// The protobuf form: the spawn slice carries flow_ids, the worker's first
// unit's marker terminating_flow_ids, the same id. The files are kept for
// ctest's pftrace.spawn_arrow_test.* conformance checks, which let a spawn
// arrow's id end in another file.
TEST(SpawnArrow, BothEndsInTheProtobufForm) {
  Config parent_cfg = test_config("spawn_pf_parent");
  parent_cfg.output_path = kept_pftrace("parent");
  {
    ScopedSession parent(parent_cfg);
    ASSERT_TRUE(parent.status().ok());
    ASSERT_TRUE(note_child_process(::getpid(), "/tmp/worker.pftrace", "worker 0").ok());
  }
  Config worker_cfg = test_config("spawn_pf_worker");
  worker_cfg.output_path = kept_pftrace("worker");
  worker_cfg.parent_pid = ::getpid();
  {
    ScopedSession worker(worker_cfg);
    ASSERT_TRUE(worker.status().ok());
    compile_two_units();
  }
  pfwire::Reader parent, worker;
  parent.read(read_file(parent_cfg.output_path));
  worker.read(read_file(worker_cfg.output_path));
  EXPECT_TRUE(parent.errors.empty()) << parent.errors.front();
  EXPECT_TRUE(worker.errors.empty()) << worker.errors.front();
  ASSERT_EQ(parent.flow_out.size(), 1u);
  EXPECT_TRUE(parent.flow_in.empty());
  ASSERT_EQ(worker.flow_in.size(), 1u);
  EXPECT_TRUE(worker.flow_out.empty());
  EXPECT_EQ(*parent.flow_out.begin(), *worker.flow_in.begin());
  EXPECT_GE(*parent.flow_out.begin(), kSpawnLow);
  int spawn = 0, spawned = 0;
  for (const json& e : parent.events)
    spawn += e.value("name", "") == "spawn" && e.contains("flow_out");
  for (const json& e : worker.events) {
    spawned += e.value("name", "") == "spawned" && e.contains("flow_in");
  }
  EXPECT_EQ(spawn, 1);
  EXPECT_EQ(spawned, 1);
}

// ---- task arrows ----

constexpr std::uint64_t kTaskLow = kSpawnLow | (kSpawnLow >> 1);

// The sender hands tasks 7 and 8 over inside "submit"; the worker starts 8
// then 7 inside "run" (this process plays both, as above). Each task's two
// ends carry one id, in the task half of the process arrows' range.
TEST(TaskArrow, JoinsWhereATaskIsSentToWhereItStarts) {
  EXPECT_FALSE(note_task_sent(7).ok()) << "no session: an error";
  EXPECT_FALSE(note_task_received(::getpid(), 7).ok());
  Config sender_cfg = test_config("task_sender");
  {
    ScopedSession sender(sender_cfg);
    ASSERT_TRUE(sender.status().ok());
    JITSCOPE_SPAN("submit");
    ASSERT_TRUE(note_task_sent(7).ok());
    ASSERT_TRUE(note_task_sent(8).ok());
  }
  Config worker_cfg = test_config("task_worker");
  {
    ScopedSession worker(worker_cfg);
    ASSERT_TRUE(worker.status().ok());
    EXPECT_FALSE(note_task_received(0, 8).ok()) << "not a pid";
    for (std::uint64_t task : {8, 7}) {
      JITSCOPE_SPAN("run");
      ASSERT_TRUE(note_task_received(::getpid(), task).ok());
    }
  }
  const json sender = load_trace(sender_cfg.output_path);
  const json worker = load_trace(worker_cfg.output_path);
  const auto sent = with(sender, "X", "task sent");
  const auto starts = with(sender, "s", "task");
  const auto started = with(worker, "X", "task");
  const auto ends = with(worker, "f", "task");
  ASSERT_EQ(sent.size(), 2u);
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(started.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  std::map<std::uint64_t, std::uint64_t> id_of_task;
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(starts[i]["ts"], sent[i]["ts"]);  // bound to its slice
    const auto id = starts[i]["id"].get<std::uint64_t>();
    EXPECT_GE(id, kTaskLow);
    EXPECT_LT(id, 2 * kSpawnLow);
    id_of_task[sent[i]["args"]["task"].get<std::uint64_t>()] = id;
  }
  ASSERT_EQ(id_of_task.size(), 2u);
  EXPECT_NE(id_of_task[7], id_of_task[8]);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(started[i]["args"]["sender_pid"], static_cast<int>(::getpid()));
    const auto task = started[i]["args"]["task"].get<std::uint64_t>();
    EXPECT_EQ(task, i == 0 ? 8u : 7u);
    EXPECT_EQ(ends[i]["id"].get<std::uint64_t>(), id_of_task[task]) << "task " << task;
    EXPECT_EQ(ends[i]["bp"], "e");
    EXPECT_EQ(ends[i]["ts"], started[i]["ts"]);
  }
  // Each inside the span open on its thread.
  for (const auto& [trace, slices, span] :
       {std::tuple{&sender, &sent, "submit"}, std::tuple{&worker, &started, "run"}}) {
    const auto around = spans_named(*trace, span);
    ASSERT_FALSE(around.empty());
    for (const json& e : *slices) {
      const double ts = e["ts"].get<double>();
      bool inside = false;
      for (const json& a : around) {
        inside |=
            ts >= a["ts"].get<double>() && ts <= a["ts"].get<double>() + a["dur"].get<double>();
      }
      EXPECT_TRUE(inside) << e.dump();
    }
  }
  ::unlink(sender_cfg.output_path.c_str());
  ::unlink(worker_cfg.output_path.c_str());
}

// The protobuf form: flow_ids on the sender's slice, terminating_flow_ids
// on the worker's, one id (files kept for ctest's conformance checks).
TEST(TaskArrow, BothEndsInTheProtobufForm) {
  Config sender_cfg = test_config("task_pf_sender");
  sender_cfg.output_path = kept_pftrace("task_sender");
  {
    ScopedSession sender(sender_cfg);
    ASSERT_TRUE(sender.status().ok());
    ASSERT_TRUE(note_task_sent(41).ok());
  }
  Config worker_cfg = test_config("task_pf_worker");
  worker_cfg.output_path = kept_pftrace("task_worker");
  {
    ScopedSession worker(worker_cfg);
    ASSERT_TRUE(worker.status().ok());
    ASSERT_TRUE(note_task_received(::getpid(), 41).ok());
  }
  pfwire::Reader sender, worker;
  sender.read(read_file(sender_cfg.output_path));
  worker.read(read_file(worker_cfg.output_path));
  EXPECT_TRUE(sender.errors.empty()) << sender.errors.front();
  EXPECT_TRUE(worker.errors.empty()) << worker.errors.front();
  ASSERT_EQ(sender.flow_out.size(), 1u);
  ASSERT_EQ(worker.flow_in.size(), 1u);
  EXPECT_EQ(*sender.flow_out.begin(), *worker.flow_in.begin());
  EXPECT_GE(*sender.flow_out.begin(), kTaskLow);
}

}  // namespace
}  // namespace jitscope::testing
