// The critical path through compile units (issue 40): which units the run's
// wall time waited for. Constructed units on 3 threads of one process and a
// thread of another, with waits (CompileUnit::waits_for's "unit_waits"
// instants) whose answers are worked out by hand in each test's comment,
// not by the code under test; then real sessions of two processes
// (critical_path_worker) merged, the expected figures computed here from
// the units' own times in the report.
#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing::report {
namespace {

// CompileUnit::waits_for's instant: unit `unit` of `pid` waited for `on`
// (of on_pid; 0: no on_pid arg, the same process).
std::string wait(int pid, int tid, long long at, const std::string& unit, const std::string& on,
                 int on_pid = 0) {
  return R"({"ph":"i","s":"t","name":"unit_waits","pid":)" + std::to_string(pid) + R"(,"tid":)" +
         std::to_string(tid) + R"(,"ts":)" + us(at) + R"(,"args":{"unit":")" + unit +
         R"(","on":")" + on + "\"" +
         (on_pid != 0 ? ",\"on_pid\":" + std::to_string(on_pid) : std::string()) + "}}";
}

// Process 1: parse 0/0 (0-10 ms, thread 1); kA 1/0 (12-30, thread 2); kB
// 2/0 (11-25) then kC 4/0 (26-kc_end, thread 3); link 3/0 (link_start-60,
// thread 1), which waits for kA, kB, process 2's remote and `more`.
// Process 2: remote 0/0 (15-45 ms, thread 7), which waits for process 1's
// parse.
std::vector<std::string> pool(long long kc_end, long long link_start,
                              const std::vector<std::string>& more = {}) {
  std::vector<std::string> ev = {
      unit_event("0/0", "parse", 0, 10 * kMs, 1),
      unit_event("1/0", "kA", 12 * kMs, 18 * kMs, 2),
      unit_event("2/0", "kB", 11 * kMs, 14 * kMs, 3),
      unit_event("4/0", "kC", 26 * kMs, kc_end - 26 * kMs, 3),
      in_pid(unit_event("0/0", "remote", 15 * kMs, 30 * kMs, 7), 2),
      wait(2, 7, 15 * kMs, "0/0", "0/0", 1),
      unit_event("3/0", "link", link_start, 60 * kMs - link_start, 1),
      wait(1, 1, link_start, "3/0", "1/0"),
      wait(1, 1, link_start, "3/0", "2/0"),
      wait(1, 1, link_start, "3/0", "0/0", 2),
  };
  ev.insert(ev.end(), more.begin(), more.end());
  return ev;
}

struct Step {
  int pid;
  std::string compile_id, next;
  long long on_path, wait_before;
};

void expect_path(const json& cp, const std::vector<Step>& want) {
  ASSERT_TRUE(cp.is_object()) << cp.dump();
  ASSERT_EQ(cp["steps"].size(), want.size()) << cp.dump(1);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const json& s = cp["steps"][i];
    EXPECT_EQ(s["pid"], want[i].pid) << i << ": " << s.dump();
    EXPECT_EQ(s["compile_id"], want[i].compile_id) << i << ": " << s.dump();
    EXPECT_EQ(s["next"], want[i].next) << i << ": " << s.dump();
    EXPECT_EQ(s["on_path_ns"], want[i].on_path) << i << ": " << s.dump();
    EXPECT_EQ(s["wait_before_ns"], want[i].wait_before) << i << ": " << s.dump();
  }
  EXPECT_EQ(cp["steps_total"], want.size());
}

// kC ends at 40 (link does not wait for it), link runs 50-60. Link waited
// last for remote (ended 45; kA 30, kB 25; parse, before it on its thread,
// 10); remote for parse (10). Path: parse 10 on the path, 5 waited,
// remote 30, 5 waited, link 10: 50 ms of units and 10 of waits in a wall
// of 60. Work: thread 1 20, thread 2 18, thread 3 14 + 14, process 2's 30:
// 96 ms.
TEST(ReportCriticalPath, FollowsWaitsAcrossThreadsAndProcesses) {
  const json rep = report_json({trace_of(pool(40 * kMs, 50 * kMs), "cp_pool")});
  const json& cp = rep["critical_path"];
  expect_path(cp, {{1, "0/0", "waited_for", 10 * kMs, 0},
                   {2, "0/0", "waited_for", 30 * kMs, 5 * kMs},
                   {1, "3/0", "last", 10 * kMs, 5 * kMs}});
  EXPECT_EQ(cp["wall_ns"], 60 * kMs);
  EXPECT_EQ(cp["path_ns"], 50 * kMs);
  EXPECT_EQ(cp["waits_ns"], 10 * kMs);
  EXPECT_EQ(cp["work_ns"], 96 * kMs);
  EXPECT_EQ(cp["units"], 6);
  EXPECT_EQ(cp["threads"], 4);
  EXPECT_EQ(cp["processes"], 2);
  EXPECT_EQ(cp["steps_waited"], 2);
  EXPECT_EQ(cp["waits"], 4);
  EXPECT_EQ(cp["waits_unmatched"], 0);
}

// kC now ends at 48 and link waits for it too: kC (48) is the last link
// waited for; kC ran after kB on thread 3 (kB ended 25, kC started 26), and
// kB waited for nothing. Path: kB 14 (11 waited from the first start), kC
// 22 (1 waited), link 10 (2 waited): 46 + 14 = 60.
TEST(ReportCriticalPath, RunsAfterEachOtherOnAThreadAreOnePath) {
  const json rep = report_json(
      {trace_of(pool(48 * kMs, 50 * kMs, {wait(1, 1, 50 * kMs, "3/0", "4/0")}), "cp_thread")});
  const json& cp = rep["critical_path"];
  expect_path(cp, {{1, "2/0", "same_thread", 14 * kMs, 11 * kMs},
                   {1, "4/0", "waited_for", 22 * kMs, 1 * kMs},
                   {1, "3/0", "last", 10 * kMs, 2 * kMs}});
  EXPECT_EQ(cp["path_ns"], 46 * kMs);
  EXPECT_EQ(cp["waits_ns"], 14 * kMs);
  EXPECT_EQ(cp["steps_waited"], 1);
}

// A unit "prep" (5/0) ran on link's thread from 20 to 48 ms: link waited for
// remote (45) but could not start before prep ended (48), so the path goes
// through prep, and from prep to parse before it on thread 1. Path: parse
// 10, prep 28 (10 waited), link 10 (2 waited): 48 + 12 = 60.
TEST(ReportCriticalPath, TheLaterOfAWaitAndTheThreadsUnitBeforeWins) {
  const json rep = report_json({trace_of(
      pool(40 * kMs, 50 * kMs, {unit_event("5/0", "prep", 20 * kMs, 28 * kMs, 1)}), "cp_later")});
  const json& cp = rep["critical_path"];
  expect_path(cp, {{1, "0/0", "same_thread", 10 * kMs, 0},
                   {1, "5/0", "same_thread", 28 * kMs, 10 * kMs},
                   {1, "3/0", "last", 10 * kMs, 2 * kMs}});
  EXPECT_EQ(cp["path_ns"], 48 * kMs);
  EXPECT_EQ(cp["waits_ns"], 12 * kMs);
  EXPECT_EQ(cp["steps_waited"], 0);
}

// Link starts at 42, before remote ends (45): it blocked on remote inside
// itself. Its time on the path starts at remote's end: 15 ms, no wait.
TEST(ReportCriticalPath, AWaitThatEndsInsideTheWaiterCountsFromItsEnd) {
  const json rep = report_json({trace_of(pool(40 * kMs, 42 * kMs), "cp_inside")});
  const json& cp = rep["critical_path"];
  expect_path(cp, {{1, "0/0", "waited_for", 10 * kMs, 0},
                   {2, "0/0", "waited_for", 30 * kMs, 5 * kMs},
                   {1, "3/0", "last", 15 * kMs, 0}});
  EXPECT_EQ(cp["path_ns"], 55 * kMs);
  EXPECT_EQ(cp["waits_ns"], 5 * kMs);
}

// Without the waits, link's thread decides: link after parse on thread 1
// (parse 10, 40 waited, link 10): the path says the wall waited on nothing
// but those two and a gap. A wait naming a unit of a process not in the
// trace, or a compile id not there, is counted and not followed.
TEST(ReportCriticalPath, WithoutWaitsTheThreadDecidesAndUnknownUnitsAreCounted) {
  std::vector<std::string> ev = pool(40 * kMs, 50 * kMs);
  std::erase_if(ev, [](const std::string& e) { return e.find("unit_waits") != std::string::npos; });
  ev.push_back(wait(1, 1, 50 * kMs, "3/0", "0/0", 99));
  ev.push_back(wait(1, 1, 50 * kMs, "3/0", "7/0"));
  ev.push_back(wait(1, 1, 50 * kMs, "9/0", "0/0"));
  ev.push_back(R"({"ph":"i","s":"t","name":"unit_waits","pid":1,"tid":1,"ts":50000,)"
               R"("args":{"unit":"3/0","on":"0/0","on_pid":-2}})");
  // An id longer than any the SDK writes is not kept (memory stays bounded
  // in bytes), though a unit of that id is in the trace.
  const std::string long_id = std::string(40, '7') + "/0";
  ev.push_back(unit_event(long_id, "long", 55 * kMs, kMs, 9));
  ev.push_back(wait(1, 1, 50 * kMs, "3/0", long_id));
  const json rep = report_json({trace_of(ev, "cp_nowaits")});
  const json& cp = rep["critical_path"];
  expect_path(cp, {{1, "0/0", "same_thread", 10 * kMs, 0}, {1, "3/0", "last", 10 * kMs, 40 * kMs}});
  EXPECT_EQ(cp["waits"], 5);
  EXPECT_EQ(cp["waits_unmatched"], 5);
  EXPECT_EQ(cp["steps_waited"], 0);
}

// 1,200 units back to back on one thread, unit i 1 ms long but every
// 100th 5 ms: all are on the path, and the 1,000 kept are the 12 long
// ones and 988 of the short, in time order.
TEST(ReportCriticalPath, ALongPathKeepsItsLongestSteps) {
  std::vector<std::string> ev;
  long long at = 0;
  for (int i = 0; i < 1200; ++i) {
    const long long dur = (i % 100 == 0 ? 5 : 1) * kMs;
    ev.push_back(unit_event(std::to_string(i) + "/0", "u" + std::to_string(i), at, dur, 1));
    at += dur;
  }
  const json rep = report_json({trace_of(ev, "cp_long")});
  const json& cp = rep["critical_path"];
  EXPECT_EQ(cp["steps_total"], 1200);
  ASSERT_EQ(cp["steps"].size(), 1000);
  int long_ones = 0;
  long long last_start = -1;
  for (const json& s : cp["steps"]) {
    if (s["on_path_ns"] == 5 * kMs) ++long_ones;
    EXPECT_GT(s["start_ns"].get<long long>(), last_start);
    last_start = s["start_ns"].get<long long>();
  }
  EXPECT_EQ(long_ones, 12);
  EXPECT_EQ(cp["path_ns"], at);
  EXPECT_EQ(cp["waits_ns"], 0);
  EXPECT_EQ(cp["work_ns"], at);
}

// Unit 7/0 runs 0-100 ms on thread 1 and holds 6/0 (10-20) and 5/0
// (30-100), which ends with it: the path is 7/0 alone (its thread was busy
// all along), though the inner one comes first by compile id.
TEST(ReportCriticalPath, OfUnitsEndingTogetherTheOuterIsTaken) {
  const json nested = report_json({trace_of(
      {
          unit_event("6/0", "inner_a", 10 * kMs, 10 * kMs, 1),
          unit_event("5/0", "inner_b", 30 * kMs, 70 * kMs, 1),
          unit_event("7/0", "outer", 0, 100 * kMs, 1),
      },
      "cp_tie")});
  expect_path(nested["critical_path"], {{1, "7/0", "last", 100 * kMs, 0}});
  EXPECT_EQ(nested["critical_path"]["waits_ns"], 0);
}

// 9/0 (thread 4, 205-220) waited for 8/0 (thread 2, 200-210) and for 10/0
// (thread 3, 200-300), which ended after it: not what held it up. 11/0
// (230-320) ran after 9/0 on thread 4. Path: 8/0, 9/0, 11/0. And 12/0
// (thread 5, 400-420) and 13/0 (thread 6, 410-420) wait for each other
// and end together: the walk takes 12/0 (the earlier start) last, 13/0
// before it, and stops (12/0 is on the path already).
TEST(ReportCriticalPath, LaterUnitsAndCyclesAreNotFollowed) {
  const json later = report_json({trace_of(
      {
          unit_event("8/0", "a", 200 * kMs, 10 * kMs, 2),
          unit_event("9/0", "b", 205 * kMs, 15 * kMs, 4),
          unit_event("10/0", "late", 200 * kMs, 100 * kMs, 3),
          unit_event("11/0", "c", 230 * kMs, 90 * kMs, 4),
          wait(1, 4, 206 * kMs, "9/0", "8/0"),
          wait(1, 4, 206 * kMs, "9/0", "10/0"),
      },
      "cp_later_unit")});
  expect_path(later["critical_path"], {{1, "8/0", "waited_for", 10 * kMs, 0},
                                       {1, "9/0", "same_thread", 10 * kMs, 0},
                                       {1, "11/0", "last", 90 * kMs, 10 * kMs}});
  const json cycle = report_json({trace_of(
      {
          unit_event("12/0", "x", 400 * kMs, 20 * kMs, 5),
          unit_event("13/0", "y", 410 * kMs, 10 * kMs, 6),
          wait(1, 5, 401 * kMs, "12/0", "13/0"),
          wait(1, 6, 411 * kMs, "13/0", "12/0"),
      },
      "cp_cycle")});
  expect_path(cycle["critical_path"],
              {{1, "13/0", "waited_for", 10 * kMs, 10 * kMs}, {1, "12/0", "last", 0, 0}});
}

// 3,000 zero-length units at one time on one thread, then one unit after
// them: the path is the last unit and every zero-length one before it
// (each ran before the next on the thread), found without rescanning them.
TEST(ReportCriticalPath, ZeroLengthUnitsAtOneTime) {
  std::vector<std::string> ev;
  for (int i = 0; i < 3000; ++i) ev.push_back(unit_event(std::to_string(i) + "/0", "z", kMs, 0, 1));
  ev.push_back(unit_event("3000/0", "after", 2 * kMs, kMs, 1));
  const json rep = report_json({trace_of(ev, "cp_zero")});
  const json& cp = rep["critical_path"];
  EXPECT_EQ(cp["steps_total"], 3001);
  EXPECT_EQ(cp["path_ns"], kMs);
  EXPECT_EQ(cp["waits_ns"], kMs);  // the units' first start is 1 ms: 1 ms before "after"
  EXPECT_EQ(cp["wall_ns"], 2 * kMs);
}

// The table: the totals' line and a row per step, times in ns in CSV.
TEST(ReportCriticalPath, TheTableSaysTheTotalsAndTheSteps) {
  const std::string trace = trace_of(pool(40 * kMs, 50 * kMs), "cp_table");
  const Result csv = report({trace, "--section", "critical_path", "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_NE(csv.out.find("# critical_path"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("2,0/0,remote,7,15000000,30000000,50.0%,5000000,waited_for"),
            std::string::npos)
      << csv.out;
  EXPECT_NE(csv.out.find("1,3/0,link,1,50000000,10000000,16.7%,5000000,last"), std::string::npos)
      << csv.out;
  const Result text = report({trace, "--section", "critical_path"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("units on the path 50.0 ms (83.3%), waits between them 10.0 ms (16.7%); "
                          "work in units 96.0 ms on 4 threads in 2 processes (1.60× the wall)"),
            std::string::npos)
      << text.out;
  // No units: the table says so, and JSON's is null.
  const std::string no_units = trace_of({x_event("work", 0, kMs)}, "cp_none");
  const json none = report_json({no_units});
  EXPECT_TRUE(none["critical_path"].is_null()) << none.dump();
  const Result said = report({no_units, "--section", "critical_path"});
  EXPECT_NE(said.out.find("no compile unit with a slice in the trace"), std::string::npos)
      << said.out;
}

// Real sessions: the parent parses (unit 0/0), then compiles on two threads
// (kA; kB then kC) while a worker process compiles "remote" for 150 ms
// after waiting for the parse; link waits for kA, kC and remote. remote is
// far the longest, so the path is parse, remote, link; the figures come
// from the units' own times in the same report.
TEST(ReportCriticalPath, RealSessionsOfTwoProcessesMerged) {
  reset_compile_state();
  const std::string parent_trace = temp_path("cp_parent") + ".json";
  const std::string worker_trace = temp_path("cp_worker") + ".json";
  const auto sleep_ms = [](int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); };
  std::string worker_out;
  {
    ScopedSession session(trace_config(parent_trace, TraceFormat::kJson));
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    CompileId parse_id, a_id, c_id;
    {
      CompileUnit parse({.frame = "parse", .graph = "parse"});
      sleep_ms(5);
      parse_id = parse.id();
      EXPECT_FALSE(parse.waits_for(parse_id).ok()) << "itself";
      parse.close();
      EXPECT_FALSE(parse.waits_for({.frame = 99, .attempt = 0}).ok()) << "closed";
    }
    std::thread t2([&] {
      CompileUnit a({.frame = "kA", .graph = "kA"});
      sleep_ms(10);
      a_id = a.id();
    });
    std::thread t3([&] {
      {
        CompileUnit b({.frame = "kB", .graph = "kB"});
        sleep_ms(5);
      }
      CompileUnit c({.frame = "kC", .graph = "kC"});
      sleep_ms(5);
      c_id = c.id();
    });
    const Result worker = run({JITSCOPE_CRITICAL_PATH_WORKER, worker_trace,
                               std::to_string(::getpid()), parse_id.str(), "150"});
    t2.join();
    t3.join();
    ASSERT_EQ(worker.code, 0) << worker.err;
    worker_out = worker.out;
    int worker_pid = 0;
    char remote_id[32] = {};
    ASSERT_EQ(std::sscanf(worker_out.c_str(), "%d %31s", &worker_pid, remote_id), 2) << worker_out;
    unsigned rf = 0, ra = 0;
    ASSERT_EQ(std::sscanf(remote_id, "%u/%u", &rf, &ra), 2);
    CompileUnit link({.frame = "link", .graph = "link"});
    EXPECT_TRUE(link.waits_for(a_id).ok());
    EXPECT_TRUE(link.waits_for(c_id).ok());
    EXPECT_TRUE(link.waits_for({.frame = rf, .attempt = ra}, worker_pid).ok());
    EXPECT_FALSE(link.waits_for(a_id, -1).ok());
    EXPECT_FALSE(link.waits_for(link.id(), ::getpid()).ok()) << "itself, named by its pid";
    sleep_ms(5);
  }
  const std::string merged = temp_path("cp_merged") + ".json";
  const Result m = run({JITSCOPE_MERGE, "-o", merged, parent_trace, worker_trace});
  ASSERT_EQ(m.code, 0) << m.err;
  const json rep = report_json({merged});
  const json& cp = rep["critical_path"];
  ASSERT_TRUE(cp.is_object()) << rep.dump();
  // The units' own slices, by graph ("model__link_4" -> "link").
  const auto graph = [](const std::string& name) {
    const std::size_t from = name.find("__") + 2;
    return name.substr(from, name.rfind('_') - from);
  };
  std::map<std::string, std::pair<long long, long long>> own;
  for (const json& u : rep["units"]) {
    const long long end = u["compile_end_ns"];
    own[graph(u["name"])] = {end - u["wall_ns"].get<long long>(), end};
  }
  ASSERT_EQ(own.size(), 6u) << rep["units"].dump();
  const auto [parse_s, parse_e] = own["parse"];
  const auto [remote_s, remote_e] = own["remote"];
  const auto [link_s, link_e] = own["link"];
  ASSERT_EQ(cp["steps"].size(), 3u) << cp.dump(1);
  EXPECT_EQ(graph(cp["steps"][0]["name"]), "parse");
  EXPECT_EQ(graph(cp["steps"][1]["name"]), "remote");
  EXPECT_EQ(graph(cp["steps"][2]["name"]), "link");
  EXPECT_NE(cp["steps"][0]["pid"], cp["steps"][1]["pid"]);
  EXPECT_EQ(cp["steps"][0]["pid"], cp["steps"][2]["pid"]);
  EXPECT_EQ(cp["steps"][0]["on_path_ns"], parse_e - parse_s);
  EXPECT_EQ(cp["steps"][1]["on_path_ns"], remote_e - std::max(remote_s, parse_e));
  EXPECT_EQ(cp["steps"][1]["wait_before_ns"], std::max(0LL, remote_s - parse_e));
  EXPECT_EQ(cp["steps"][2]["on_path_ns"], link_e - std::max(link_s, remote_e));
  EXPECT_EQ(cp["steps"][2]["wait_before_ns"], std::max(0LL, link_s - remote_e));
  EXPECT_EQ(cp["steps_waited"], 2);
  EXPECT_EQ(cp["waits"], 4);  // the worker's one, link's three
  EXPECT_EQ(cp["waits_unmatched"], 0);
  long long work = 0, first = parse_s;
  for (const auto& [name, se] : own) {
    work += se.second - se.first;
    first = std::min(first, se.first);
  }
  EXPECT_EQ(cp["work_ns"], work);  // no unit nests another on its thread
  EXPECT_EQ(cp["wall_ns"], link_e - first);
  EXPECT_EQ(cp["path_ns"].get<long long>() + cp["waits_ns"].get<long long>(), link_e - first);
}

}  // namespace
}  // namespace jitscope::testing::report
