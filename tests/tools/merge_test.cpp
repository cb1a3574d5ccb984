// jitscope-merge: the alignment and pid rules (merge_plan.hpp, as pure
// functions) and the tool end to end on traces written by the SDK in this
// process, by gpu_trace_writer (flows) and by hand (clang's object form,
// traces with no clock data, broken files).
// Not covered: traces from two real machines (the wall-clock rule is checked
// with a trace whose session metadata is moved by a known amount).
#include "merge_plan.hpp"
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;
using tools::merge::Alignment;
using tools::merge::InputScan;
using tools::merge::MergePlan;
using tools::merge::PlanOptions;

// ---- the rules ----

InputScan jitscope_scan(const std::string& path, const std::string& boot, std::int64_t unix_ns,
                        std::int64_t mono_ns) {
  InputScan s;
  s.path = path;
  s.has_session = true;
  s.host = "h-" + boot;
  s.boot_id = boot;
  s.start_unix_ns = unix_ns;
  s.start_monotonic_ns = mono_ns;
  s.session_pid = 100;
  s.pids = {"100"};
  return s;
}

TEST(MergePlan, TracesOfOneBootShareTheMonotonicClock) {
  // Different realtime offsets (the wall clock stepped between the starts)
  // must not move traces that share CLOCK_MONOTONIC.
  const std::vector<InputScan> scans = {jitscope_scan("a", "boot1", 1'000'000'000'000, 5'000),
                                        jitscope_scan("b", "boot1", 1'000'000'900'000, 6'000)};
  MergePlan plan;
  std::string error;
  ASSERT_TRUE(tools::merge::plan(scans, {}, &plan, &error)) << error;
  EXPECT_EQ(plan.reference, 0);
  EXPECT_EQ(plan.inputs[0].alignment, Alignment::kReference);
  EXPECT_EQ(plan.inputs[1].alignment, Alignment::kSameBoot);
  EXPECT_EQ(plan.inputs[0].shift_ns, 0);
  EXPECT_EQ(plan.inputs[1].shift_ns, 0);
}

TEST(MergePlan, OtherBootsMeetOnTheWallClock) {
  // b's monotonic clock reads 7 s less than a's at the same wall time.
  const std::vector<InputScan> scans = {
      jitscope_scan("a", "boot1", 1'700'000'010'000'000'000, 9'000'000'000),
      jitscope_scan("b", "boot2", 1'700'000'010'500'000'123, 2'500'000'000),
      jitscope_scan("c", "boot2", 1'700'000'020'000'000'000, 12'000'000'000)};
  MergePlan plan;
  std::string error;
  ASSERT_TRUE(tools::merge::plan(scans, {}, &plan, &error)) << error;
  EXPECT_EQ(plan.inputs[1].alignment, Alignment::kWallClock);
  EXPECT_EQ(plan.inputs[1].shift_ns, 7'000'000'123);
  // c shares b's boot: it moves with b, not by its own (later) offset.
  EXPECT_EQ(plan.inputs[2].alignment, Alignment::kWallClock);
  EXPECT_EQ(plan.inputs[2].shift_ns, 7'000'000'123);
}

TEST(MergePlan, ClangTracesArePlacedByBeginningOfTime) {
  InputScan clang_scan;
  clang_scan.path = "clang.json";
  clang_scan.beginning_of_time_ns = 1'700'000'000'250'000'000;
  clang_scan.pids = {"1"};
  const std::vector<InputScan> scans = {
      clang_scan, jitscope_scan("a", "boot1", 1'700'000'000'000'000'000, 40'000'000'000)};
  MergePlan plan;
  std::string error;
  ASSERT_TRUE(tools::merge::plan(scans, {}, &plan, &error)) << error;
  EXPECT_EQ(plan.reference, 1);  // a jitscope trace is the reference when there is one
  EXPECT_EQ(plan.inputs[0].alignment, Alignment::kBeginningOfTime);
  // clang ts 0 is 250 ms after a's session start, which a writes at 40 s.
  EXPECT_EQ(plan.inputs[0].shift_ns, 40'250'000'000);
}

TEST(MergePlan, AmongClangTracesTheEarliestIsTheReference) {
  InputScan late, early;
  late.path = "late.json";
  late.beginning_of_time_ns = 5'000'000;
  early.path = "early.json";
  early.beginning_of_time_ns = 2'000'000;
  MergePlan plan;
  std::string error;
  ASSERT_TRUE(tools::merge::plan({late, early}, {}, &plan, &error)) << error;
  EXPECT_EQ(plan.reference, 1);
  EXPECT_EQ(plan.inputs[0].shift_ns, 3'000'000);
  EXPECT_EQ(plan.inputs[1].shift_ns, 0);
}

TEST(MergePlan, ATraceWithNoClockIsRefusedUnlessTheUserVouches) {
  InputScan bare;
  bare.path = "bare.json";
  bare.pids = {"5"};
  const std::vector<InputScan> scans = {jitscope_scan("a", "boot1", 10, 5), bare};
  MergePlan plan;
  std::string error;
  EXPECT_FALSE(tools::merge::plan(scans, {}, &plan, &error));
  EXPECT_NE(error.find("bare.json: cannot place"), std::string::npos) << error;
  EXPECT_NE(error.find("--assume-same-clock"), std::string::npos) << error;

  error.clear();
  ASSERT_TRUE(tools::merge::plan(scans, PlanOptions{.assume_same_clock = true}, &plan, &error));
  EXPECT_EQ(plan.inputs[1].alignment, Alignment::kAssumed);
  EXPECT_EQ(plan.inputs[1].shift_ns, 0);
}

TEST(MergePlan, ABrokenSessionSaysWhatIsWrong) {
  InputScan broken;
  broken.path = "old.json";
  broken.session_problem = "its jitscope_session metadata lacks session_start_unix_ns";
  MergePlan plan;
  std::string error;
  EXPECT_FALSE(tools::merge::plan({broken}, {}, &plan, &error));
  EXPECT_NE(error.find("lacks session_start_unix_ns"), std::string::npos) << error;
}

TEST(MergePlan, HugePidsAreRenumberedWithoutOverflow) {
  InputScan a = jitscope_scan("a", "b1", 10, 5);
  InputScan b = jitscope_scan("b", "b1", 10, 5);
  a.pids = {"9223372036854775807", "7"};
  b.pids = {"9223372036854775807"};
  MergePlan plan;
  std::string error;
  ASSERT_TRUE(tools::merge::plan({a, b}, {}, &plan, &error)) << error;
  EXPECT_EQ(plan.inputs[0].pid_map.at("7"), 7);
  EXPECT_EQ(plan.inputs[0].pid_map.at("9223372036854775807"), 8);
  EXPECT_EQ(plan.inputs[1].pid_map.at("9223372036854775807"), 9);
}

TEST(MergePlan, AMergedTraceIsRefused) {
  InputScan m = jitscope_scan("merged.json", "b1", 10, 5);
  m.merged = true;
  MergePlan plan;
  std::string error;
  EXPECT_FALSE(tools::merge::plan({jitscope_scan("a", "b1", 10, 5), m}, {}, &plan, &error));
  EXPECT_NE(error.find("merged.json: already a merged trace"), std::string::npos) << error;
}

TEST(MergePlan, OnlyPidsThatCollideAreRenumbered) {
  InputScan a = jitscope_scan("a", "b1", 10, 5);
  InputScan b = jitscope_scan("b", "b1", 10, 5);
  a.pids = {"100", "10000100", "200"};
  b.pids = {"100", "10000100", "300", "\"Traces\""};
  MergePlan plan;
  std::string error;
  ASSERT_TRUE(tools::merge::plan({a, b}, {}, &plan, &error)) << error;
  EXPECT_EQ(plan.inputs[0].pid_map.at("200"), 200);
  EXPECT_EQ(plan.inputs[1].pid_map.at("300"), 300);
  std::set<std::int64_t> all;
  std::size_t n = 0;
  for (const auto& p : plan.inputs) {
    for (const auto& [token, pid] : p.pid_map) {
      all.insert(pid);
      ++n;
    }
  }
  EXPECT_EQ(all.size(), n) << "two processes share a pid in the merged trace";
  // Fresh pids are above every pid any input uses...
  EXPECT_GT(plan.inputs[1].pid_map.at("\"Traces\""), 10000100);
  // ...but a host pid and its GPU pid (10000000 * (device + 1) + host pid)
  // move together, the host above every host pid (300), so that the GPU
  // pid still names its host.
  EXPECT_EQ(plan.inputs[0].pid_map.at("100"), 301);
  EXPECT_EQ(plan.inputs[0].pid_map.at("10000100"), 10000301);
  EXPECT_EQ(plan.inputs[1].pid_map.at("100"), 302);
  EXPECT_EQ(plan.inputs[1].pid_map.at("10000100"), 10000302);
}

// ---- the tool ----

struct Result {
  int exit_code = -1;
  bool signaled = false;
  std::string err;
};

Result run_merge(const std::vector<std::string>& args) {
  std::vector<std::string> all = {JITSCOPE_MERGE_BIN};
  all.insert(all.end(), args.begin(), args.end());
  Subprocess p = spawn(all, temp_path("merge_run"));
  Result r;
  if (!p.wait(std::chrono::seconds(300))) return r;
  r.signaled = p.signal != 0 || p.timed_out;
  r.exit_code = p.exit_code;
  r.err = p.err();
  p.remove_outputs();
  return r;
}

// A jitscope trace: spans on the main thread and a named worker.
std::string write_session_trace(const std::string& stem, int spans) {
  Config cfg = test_config(stem);
  ScopedSession session(cfg);
  EXPECT_TRUE(session.status().ok());
  for (int i = 0; i < spans; ++i) {
    Span outer("outer", {{"i", i}});
    Span inner("inner");
  }
  std::thread([] {
    set_thread_name("worker");
    Span s("worker_step");
  }).join();
  return cfg.output_path;
}

void write_json(const std::string& path, const json& j) { std::ofstream(path) << j.dump(); }

std::vector<json> with_name(const json& trace, const std::string& ph, const std::string& name) {
  std::vector<json> out;
  for (const json& e : trace) {
    if (e.value("ph", "") == ph && e.value("name", "") == name) out.push_back(e);
  }
  return out;
}

std::map<long long, std::string> process_names(const json& trace) {
  std::map<long long, std::string> out;
  for (const json& e : with_name(trace, "M", "process_name")) out[e["pid"]] = e["args"]["name"];
  return out;
}

// (name, ts ns, dur ns) of every X event of `pid`.
std::multiset<std::tuple<std::string, long long, long long>> slices_of(const json& trace,
                                                                       long long pid) {
  std::multiset<std::tuple<std::string, long long, long long>> out;
  for (const json& e : trace) {
    if (e.value("ph", "") == "X" && e["pid"] == pid) {
      out.emplace(e["name"], to_ns(e["ts"]), to_ns(e["dur"]));
    }
  }
  return out;
}

long long session_pid(const json& trace) { return (*metadata(trace, "jitscope_session"))["pid"]; }

TEST(MergeTool, TwoSessionsOfOneProcessBecomeTwoLabelledProcesses) {
  const std::string a = write_session_trace("merge_a", 3);
  const std::string b = write_session_trace("merge_b", 5);
  const std::string out = temp_path("merged_ab");
  const Result r = run_merge({"-o", out, a, b});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json ta = load_trace(a), tb = load_trace(b), merged = load_trace(out);
  // Every input event, plus the merge's own metadata event.
  EXPECT_EQ(merged.size(), ta.size() + tb.size() + 1);
  ASSERT_EQ(with_name(merged, "M", "jitscope_merge").size(), 1u);
  const json inputs = with_name(merged, "M", "jitscope_merge")[0]["args"]["inputs"];
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1]["alignment"], "same boot (CLOCK_MONOTONIC)");

  // One process wrote both, so both inputs use one pid: apart now.
  ASSERT_EQ(session_pid(ta), session_pid(tb));
  const auto sessions = with_name(merged, "M", "jitscope_session");
  ASSERT_EQ(sessions.size(), 2u);
  const long long pa = sessions[0]["pid"], pb = sessions[1]["pid"];
  EXPECT_NE(pa, pb);
  // Same boot: every slice keeps its time exactly.
  EXPECT_EQ(slices_of(merged, pa), slices_of(ta, session_pid(ta)));
  EXPECT_EQ(slices_of(merged, pb), slices_of(tb, session_pid(tb)));
  EXPECT_EQ(slices_of(merged, pb).size(), 11u);  // 5 outer + 5 inner + worker_step

  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const auto names = process_names(merged);
  const std::string pid_text = std::to_string(session_pid(ta));
  const std::string program = "merge_tools_test";  // the program these tests are in
  EXPECT_EQ(names.at(pa),
            program + " [host " + std::string(host) + ", rank 0, pid " + pid_text + "]")
      << "(the process name jitscope gave the test binary)";
  EXPECT_EQ(names.at(pb),
            program + " [host " + std::string(host) + ", rank 1, pid " + pid_text + "]");
  EXPECT_NE(r.err.find("rank 1: " + b), std::string::npos) << r.err;
}

TEST(MergeTool, WallClockShiftIsExact) {
  const std::string a = write_session_trace("merge_wall_a", 2);
  // b: a copy of a that claims another boot, whose monotonic clock is
  // 5.000000123 s behind a's at the same wall time.
  json tb = load_trace(a);
  for (json& e : tb) {
    if (e.value("name", "") == "jitscope_session") {
      e["args"]["boot_id"] = "another-boot";
      e["args"]["session_start_unix_ns"] =
          e["args"]["session_start_unix_ns"].get<long long>() + 5'000'000'123;
    }
  }
  const std::string b = temp_path("merge_wall_b");
  write_json(b, tb);
  const std::string out = temp_path("merged_wall");
  const Result r = run_merge({"-o", out, a, b});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json merged = load_trace(out);
  const auto sessions = with_name(merged, "M", "jitscope_session");
  ASSERT_EQ(sessions.size(), 2u);
  auto shifted = slices_of(load_trace(a), session_pid(tb));
  std::multiset<std::tuple<std::string, long long, long long>> expect;
  for (const auto& [name, ts, dur] : shifted) expect.emplace(name, ts + 5'000'000'123, dur);
  EXPECT_EQ(slices_of(merged, sessions[1]["pid"]), expect);
  EXPECT_EQ(with_name(merged, "M", "jitscope_merge")[0]["args"]["inputs"][1]["shift_ns"],
            5'000'000'123);
}

TEST(MergeTool, ClangObjectFormIsPlacedByItsBeginningOfTime) {
  const std::string a = write_session_trace("merge_clang_a", 1);
  const json ta = load_trace(a);
  const json& session = (*metadata(ta, "jitscope_session"))["args"];
  const long long offset = session["session_start_unix_ns"].get<long long>() -
                           session["session_start_monotonic_ns"].get<long long>();
  // clang's epoch: 1.5 ms after a's session start on the wall clock (µs).
  const long long bot_us = session["session_start_unix_ns"].get<long long>() / 1000 + 1500;
  json clang = {
      {"traceEvents",
       json::array(
           {{{"ph", "X"}, {"name", "Frontend"}, {"ts", 10}, {"dur", 300}, {"pid", 77}, {"tid", 77}},
            {{"ph", "M"},
             {"name", "process_name"},
             {"pid", 77},
             {"tid", 0},
             {"args", {{"name", "clang-14"}}}}})},
      {"beginningOfTime", bot_us}};
  const std::string c = temp_path("merge_clang_c");
  write_json(c, clang);
  const std::string out = temp_path("merged_clang");
  const Result r = run_merge({"-o", out, a, c});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json merged = load_trace(out);
  const auto frontend = with_name(merged, "X", "Frontend");
  ASSERT_EQ(frontend.size(), 1u);
  EXPECT_EQ(to_ns(frontend[0]["ts"]), bot_us * 1000 + 10'000 - offset);
  EXPECT_EQ(to_ns(frontend[0]["dur"]), 300'000);
  EXPECT_EQ(process_names(merged).at(frontend[0]["pid"]), "clang-14 [rank 1, pid 77]");
}

TEST(MergeTool, RefusesATraceItCannotPlaceAndWritesNothing) {
  const std::string a = write_session_trace("merge_refuse_a", 1);
  const std::string bare = temp_path("merge_bare");
  write_json(
      bare,
      json::array({{{"ph", "X"}, {"name", "x"}, {"ts", 1}, {"dur", 2}, {"pid", 9}, {"tid", 9}}}));
  const std::string out = temp_path("merged_refused");
  std::filesystem::remove(out);
  Result r = run_merge({"-o", out, a, bare});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("jitscope-merge: error: " + bare + ": cannot place"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  r = run_merge({"--assume-same-clock", "-o", out, a, bare});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json merged = load_trace(out);
  const auto x = with_name(merged, "X", "x");
  ASSERT_EQ(x.size(), 1u);
  EXPECT_EQ(to_ns(x[0]["ts"]), 1000);
  // It had no process name: it gets one, labelled.
  EXPECT_EQ(process_names(merged).at(x[0]["pid"]),
            std::filesystem::path(bare).filename().string() + " [rank 1, pid 9]");
}

TEST(MergeTool, BrokenInputsAreErrorsNeverCrashes) {
  const std::string good = write_session_trace("merge_broken_good", 1);
  const std::string text = read_file(good);
  const std::map<std::string, std::string> broken = {
      {"empty", ""},
      {"garbage", "this is not json"},
      {"cut_object_form",
       "{\"traceEvents\":" + text.substr(0, text.find("\n{", text.size() / 2) + 10)},
      {"not_an_object", "[1, 2, 3]"},
      {"bad_event", "[{\"ph\":\"X\",\"pid\":{\"a\":1}}]"},
  };
  for (const auto& [name, content] : broken) {
    const std::string in = temp_path("merge_" + name);
    std::ofstream(in) << content;
    const std::string out = temp_path("merged_" + name);
    std::filesystem::remove(out);
    const Result r = run_merge({"-o", out, good, in});
    EXPECT_FALSE(r.signaled) << name;
    EXPECT_EQ(r.exit_code, 1) << name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("jitscope-merge: error: ", 0), 0u) << name << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << name << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << name;
  }
  // An array cut inside its last event (a full disk) is merged without it,
  // with one warning line.
  const std::string cut = temp_path("merge_cut_inside_event");
  std::ofstream(cut) << text.substr(0, text.find("\n{", text.size() / 2) + 10);
  const std::string cut_out = temp_path("merged_cut_inside_event");
  const Result r = run_merge({"-q", "-o", cut_out, good, cut});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.rfind("jitscope-merge: warning: " + cut + ": 1 event cut off", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(load_trace(cut_out).is_array());
  // Usage errors: the same file twice, an input as the output, no file.
  EXPECT_EQ(run_merge({"-o", temp_path("m2"), good, good}).exit_code, 1);
  EXPECT_EQ(run_merge({"-o", good, good}).exit_code, 1);
  EXPECT_EQ(run_merge({"-o", temp_path("m3"), "/nonexistent/trace.json"}).exit_code, 2);
  EXPECT_EQ(run_merge({good}).exit_code, 2);
}

TEST(MergeTool, AnUnterminatedTraceStillMerges) {
  const std::string good = write_session_trace("merge_cut_src", 2);
  std::string text = read_file(good);
  text.erase(text.rfind(']'));  // a writer that died after its last flush
  const std::string cut = temp_path("merge_cut");
  std::ofstream(cut) << text;
  const std::string out = temp_path("merged_cut");
  const Result r = run_merge({"-o", out, cut});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(load_trace(out).size(), load_trace(good).size() + 1);
}

TEST(MergeTool, ChildrenListedByTheParentJoinWithChildren) {
  const std::string child = write_session_trace("merge_child", 2);
  Config cfg = test_config("merge_parent");
  {
    ScopedSession session(cfg);
    Span s("dispatch");
    ASSERT_TRUE(note_child_process(4242, child, "w0").ok());
  }
  const std::string out = temp_path("merged_family");
  Result r = run_merge({"-o", out, cfg.output_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(with_name(load_trace(out), "M", "jitscope_session").size(), 1u);
  r = run_merge({"--children", "-o", out, cfg.output_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json merged = load_trace(out);
  EXPECT_EQ(with_name(merged, "M", "jitscope_session").size(), 2u);
  EXPECT_EQ(with_name(merged, "X", "worker_step").size(), 1u);
  // A listed child that left no trace (killed early) or an empty one is
  // skipped, with a warning naming it: the rest still merges.
  std::filesystem::remove(child);
  r = run_merge({"--children", "-o", out, cfg.output_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("jitscope-merge: warning: skipping " + child), std::string::npos) << r.err;
  EXPECT_EQ(with_name(load_trace(out), "M", "jitscope_session").size(), 1u);
  std::ofstream(child).close();  // empty
  r = run_merge({"--children", "-o", out, cfg.output_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("warning: skipping"), std::string::npos) << r.err;
}

TEST(MergeTool, WhiteSpaceAroundTokensDoesNotSplitProcessesOrFlows) {
  const std::string a = write_session_trace("merge_ws_a", 1);
  // An input written with spaces around its numbers: one process, one flow.
  const std::string ws = temp_path("merge_ws");
  std::ofstream(ws)
      << "[\n"
         R"({"ph":"X","name":"x","ts": 1 ,"dur":2,"pid": 100 ,"tid":1},)"
         "\n"
         R"({"ph":"s","name":"f","cat":"c","ts":1,"pid":100,"tid":1,"id": 5 },)"
         "\n"
         R"({"ph":"f","name":"f","cat":"c","ts":2,"pid":100 ,"tid":1,"id":5,"bp":"e"})"
         "\n]";
  const std::string out = temp_path("merged_ws");
  const Result r = run_merge({"--assume-same-clock", "-o", out, a, ws});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json merged = load_trace(out);
  std::set<long long> pids;
  std::set<long long> ids;
  for (const json& e : merged) {
    if (e.value("tid", 0) == 1 && e.contains("ts")) pids.insert(e["pid"].get<long long>());
    if (e.value("ph", "") == "s" || e.value("ph", "") == "f") ids.insert(e["id"].get<long long>());
  }
  EXPECT_EQ(pids.size(), 1u);
  EXPECT_EQ(ids.size(), 1u);
}

// A spawn arrow's ends (category jitscope.process, name spawn, an id in
// [2^52, 2^53)) keep their id across inputs, to join a parent to its
// worker; any other flow keeps to its input, whatever its id.
TEST(MergeTool, OnlySpawnArrowsJoinTwoInputs) {
  const std::string a = write_session_trace("merge_spawn_a", 1);
  const long long spawn = (1LL << 52) + 7;
  const auto input = [&](const std::string& stem, int pid, const char* ph) {
    const std::string path = temp_path(stem);
    std::ofstream(path) << "[\n"
                        << R"({"ph":"X","name":"x","ts":1,"dur":2,"pid":)" << pid << R"(,"tid":1},)"
                        << "\n"
                        << R"({"ph":")" << ph
                        << R"(","cat":"jitscope.process","name":"spawn","ts":1,"pid":)" << pid
                        << R"(,"tid":1,"id":)" << spawn << "},\n"
                        << R"({"ph":")" << ph << R"(","cat":"other","name":"spawn","ts":1,"pid":)"
                        << pid << R"(,"tid":1,"id":)" << spawn << "}\n]";
    return path;
  };
  const std::string parent = input("merge_spawn_parent", 100, "s");
  const std::string worker = input("merge_spawn_worker", 200, "f");
  const std::string out = temp_path("merged_spawn");
  const Result r = run_merge({"--assume-same-clock", "-o", out, a, parent, worker});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::set<long long>> ids;  // category -> ids seen
  for (const json& e : load_trace(out)) {
    const std::string ph = e.value("ph", "");
    if (ph == "s" || ph == "f") ids[e.value("cat", "")].insert(e["id"].get<long long>());
  }
  EXPECT_EQ(ids["jitscope.process"], std::set<long long>{spawn}) << "kept, one arrow";
  ASSERT_EQ(ids["other"].size(), 2u) << "renumbered per input";
  EXPECT_EQ(ids["other"].count(spawn), 0u);
}

TEST(MergeTool, RefusesInvalidJsonAMergedTraceAndAShiftPastInt64) {
  const std::string a = write_session_trace("merge_bad_a", 1);
  const std::string out = temp_path("merged_bad");
  std::filesystem::remove(out);
  // A value On Demand would skip unread: still refused, never copied.
  const std::string bad = temp_path("merge_tru");
  std::ofstream(bad)
      << R"([{"ph":"X","name":"x","ts":1,"dur":2,"pid":9,"tid":9,"args":{"ok":tru}}])";
  Result r = run_merge({"--assume-same-clock", "-o", out, a, bad});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string once = temp_path("merged_once");
  ASSERT_EQ(run_merge({"-o", once, a}).exit_code, 0);
  r = run_merge({"-o", out, a, once});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("already a merged trace"), std::string::npos) << r.err;

  // Another boot 5 s behind, with a ts that overflows int64 ns once shifted.
  json tb = load_trace(a);
  for (json& e : tb) {
    if (e.value("name", "") == "jitscope_session") {
      e["args"]["boot_id"] = "another-boot";
      e["args"]["session_start_unix_ns"] =
          e["args"]["session_start_unix_ns"].get<long long>() + 5'000'000'000;
    }
    if (e.value("ph", "") == "X") e["ts"] = 9223372036854000;  // µs: 9.223372036854e18 ns
  }
  const std::string b = temp_path("merge_far");
  write_json(b, tb);
  r = run_merge({"-o", out, a, b});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("ts out of range"), std::string::npos) << r.err;
  EXPECT_FALSE(r.signaled);
}

#ifdef JITSCOPE_GPU_TRACE_WRITER_BIN
// Flow arrows: each input's ids renumbered apart, every arrow whole.
TEST(MergeTool, FlowsNeverCrossBetweenInputs) {
  std::vector<std::string> traces;
  for (const char* stem : {"merge_gpu_a", "merge_gpu_b"}) {
    traces.push_back(temp_path(stem));
    ASSERT_EQ(
        std::system((std::string(JITSCOPE_GPU_TRACE_WRITER_BIN) + " " + traces.back()).c_str()), 0);
  }
  const std::string out = temp_path("merged_gpu");
  const Result r = run_merge({"-o", out, traces[0], traces[1]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json merged = load_trace(out);
  // Which input each merged pid came from.
  std::map<long long, int> input_of;
  const json inputs = with_name(merged, "M", "jitscope_merge")[0]["args"]["inputs"];
  for (int i = 0; i < 2; ++i) {
    for (const auto& [token, pid] : inputs[i]["pids"].items()) input_of[pid.get<long long>()] = i;
  }
  std::map<long long, std::vector<json>> by_id;
  std::set<long long> ids_per_input[2];
  std::size_t flows_in = 0;
  for (const std::string& t : traces) {
    for (const json& e : load_trace(t)) flows_in += e.value("ph", "") == "s" ? 1 : 0;
  }
  for (const json& e : merged) {
    const std::string ph = e.value("ph", "");
    if (ph != "s" && ph != "f") continue;
    by_id[e["id"]].push_back(e);
  }
  ASSERT_EQ(flows_in, 12u);
  ASSERT_EQ(by_id.size(), flows_in);
  for (const auto& [id, events] : by_id) {
    ASSERT_EQ(events.size(), 2u) << "flow " << id;
    EXPECT_EQ(events[0]["ph"], "s");
    EXPECT_EQ(events[1]["ph"], "f");
    const int from = input_of.at(events[0]["pid"]);
    EXPECT_EQ(from, input_of.at(events[1]["pid"])) << "flow " << id << " crosses inputs";
    ids_per_input[from].insert(id);
  }
  EXPECT_EQ(ids_per_input[0].size(), 6u);
  EXPECT_EQ(ids_per_input[1].size(), 6u);
}
#endif

#ifdef JITSCOPE_NVRTC_JIT_BIN
// The main sample's worker processes, merged: one trace with the parent and
// both children, each child's NVRTC and nvJitLink phases under its own pid,
// and every flow whole.
TEST(MergeTool, NvrtcJitWorkerProcessesMergeIntoOneTrace) {
  const std::string dir = temp_path("merge_nvrtc_jit") + ".d";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string trace = dir + "/jit.trace.json";
  const std::string cmd = std::string(JITSCOPE_NVRTC_JIT_BIN) +
                          " --kernels 6 --workers 1 --processes 2 --no-gpu -q" + " --cache-dir " +
                          dir + "/cache --trace " + trace + " --metrics " + dir +
                          "/jit.metrics.jsonl";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const std::string out = dir + "/merged.json";
  const Result r = run_merge({"--children", "-o", out, trace});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json merged = load_trace(out);

  const auto sessions = with_name(merged, "M", "jitscope_session");
  ASSERT_EQ(sessions.size(), 3u);  // the parent and its two workers
  std::set<long long> session_pids;
  for (const json& s : sessions) session_pids.insert(s["pid"].get<long long>());
  EXPECT_EQ(session_pids.size(), 3u);

  // Every kernel compiled once, in a worker: 6 nvrtc and 6 nvjitlink phases,
  // shared by the two worker pids (not the parent's: it compiles nothing).
  const long long parent = sessions[0]["pid"];
  for (const char* phase : {"nvrtc", "nvjitlink"}) {
    std::map<long long, int> per_pid;
    for (const json& e : with_name(merged, "X", phase)) ++per_pid[e["pid"].get<long long>()];
    EXPECT_EQ(per_pid.size(), 2u) << phase;
    EXPECT_EQ(per_pid.count(parent), 0u) << phase;
    int total = 0;
    for (const auto& [pid, n] : per_pid) {
      EXPECT_EQ(n, 3) << phase << " in pid " << pid;
      total += n;
    }
    EXPECT_EQ(total, 6) << phase;
  }
  const auto names = process_names(merged);
  for (long long pid : session_pids) {
    ASSERT_EQ(names.count(pid), 1u);
    EXPECT_NE(names.at(pid).find(", pid "), std::string::npos) << names.at(pid);
  }
  EXPECT_NE(names.at(sessions[1]["pid"]).find("nvrtc_jit worker"), std::string::npos);
  EXPECT_NE(names.at(sessions[1]["pid"]).find("rank 1"), std::string::npos);
  EXPECT_NE(names.at(sessions[2]["pid"]).find("rank 2"), std::string::npos);

  // Flows (the CUDA launch arrows, when a GPU ran, and the two spawn
  // arrows, parent to worker): each id one s, then one f. A spawn arrow's
  // ends come from two inputs: its id is kept, not renumbered per input.
  std::map<long long, std::string> phases_by_id;
  int spawn_arrows = 0;
  for (const json& e : merged) {
    const std::string ph = e.value("ph", "");
    if (ph == "s" || ph == "f") phases_by_id[e["id"].get<long long>()] += ph;
    if (ph == "f" && e.value("cat", "") == "jitscope.process") {
      ++spawn_arrows;
      EXPECT_NE(e["pid"], parent) << "the arrow ends in a worker";
    }
  }
  for (const auto& [id, phs] : phases_by_id) EXPECT_EQ(phs, "sf") << "flow " << id;
  EXPECT_EQ(spawn_arrows, 2);
}
#endif

}  // namespace
}  // namespace jitscope::testing
