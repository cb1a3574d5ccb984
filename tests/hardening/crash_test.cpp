// Crash safety (crash_handler.hpp): a child (crash_child.cpp) crashes by each
// fatal signal mid-session. Its trace must load as strict JSON, hold every
// span ended before the crash, mark the spans open at the crash, and name the
// crash; the child must still die of its signal. Also: a host handler
// installed before or after the session runs too (a chaining one stays
// installed when the earlier one recovers); a crash the host survives leaves
// the next session's handlers in place; a sent signal the host ignores is no
// crash; two threads crashing at once; a rotated session; the opt-out;
// SIGKILL; a host closing descriptors; a stop while the flusher starts.
//
// Not covered: the flusher stuck past kCrashFlushTimeout (it would need a
// hung disk), a crash on the flusher itself (parked: reasoned, not made to
// happen), stack overflow on a thread with no alternate stack.
#include "sink/file_sink.hpp"
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include "flush/perfetto_wire.hpp"

#include <signal.h>

#include <unistd.h>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace jitscope::testing {
namespace {

constexpr int kEndedSpans = 1000;  // as crash_child.cpp

// The sanitizers' own fatal-signal handlers would turn the child's death into
// their report and exit code; the child is about the host's handlers only.
std::string without_sanitizer_handlers(const char* variable) {
  const char* current = std::getenv(variable);
  std::string value = current != nullptr ? current : "";
  if (!value.empty()) value += ":";
  return value +
         "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:"
         "detect_leaks=0";
}

struct Crash {
  Subprocess process;
  std::string trace_path;
  std::string marker_path;
  std::string text;  // the trace file
};

Crash run_child(const std::string& how, bool wait = true, bool perfetto = false) {
  Crash c;
  c.trace_path = temp_path("crash_" + how);
  if (perfetto) c.trace_path.replace(c.trace_path.size() - 5, 5, ".pftrace");
  c.marker_path = c.trace_path + ".marker";
  SpawnOptions options;
  options.env = {{"ASAN_OPTIONS", without_sanitizer_handlers("ASAN_OPTIONS")},
                 {"TSAN_OPTIONS", without_sanitizer_handlers("TSAN_OPTIONS")},
                 {"UBSAN_OPTIONS", without_sanitizer_handlers("UBSAN_OPTIONS")}};
  c.process =
      spawn({JITSCOPE_CRASH_CHILD, c.trace_path, how, c.marker_path}, c.trace_path, options);
  EXPECT_GT(c.process.pid, 0) << c.process.spawn_error;
  if (wait) {
    EXPECT_TRUE(c.process.wait(std::chrono::seconds(120)));
    EXPECT_FALSE(c.process.timed_out);
    c.text = read_file(c.trace_path);
  }
  return c;
}

// The files a child left, removed once its test passed (kept to look at otherwise).
// Waits for the child's "ready" (two flush intervals after its ended spans,
// at most a minute), then SIGKILLs it and reaps it.
bool kill_when_ready(Crash& c) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (c.process.out().find("ready") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (c.process.out().find("ready") == std::string::npos) {
    ADD_FAILURE() << "the child never said ready: " << c.process.err();
    return false;
  }
  return ::kill(c.process.pid, SIGKILL) == 0 && c.process.wait();
}

void remove_files(const Crash& c) {
  if (::testing::Test::HasFailure()) return;
  c.process.remove_outputs();
  for (std::uint64_t n = 0; n < 16; ++n) ::unlink(detail::numbered_path(c.trace_path, n).c_str());
  ::unlink((c.trace_path + ".first.json").c_str());
  ::unlink(c.marker_path.c_str());
}

std::size_t metadata_count(const nlohmann::json& trace, const std::string& name) {
  std::size_t n = 0;
  for (const auto& e : trace) n += e.value("ph", "") == "M" && e.value("name", "") == name;
  return n;
}

std::vector<nlohmann::json> crash_instants(const nlohmann::json& trace) {
  std::vector<nlohmann::json> crashes;
  for (const auto& e : events_with_ph(trace, "I")) {
    if (e["name"].get<std::string>().rfind("crash: ", 0) == 0) crashes.push_back(e);
  }
  return crashes;
}

long tid_named(const nlohmann::json& trace, const std::string& name) {
  for (const auto& [tid, n] : thread_names(trace)) {
    if (n == name) return tid;
  }
  return -1;
}

bool incomplete(const nlohmann::json& e) {
  return e.contains("args") && e["args"].value("incomplete", false);
}

// Every span ended before the crash, none of them marked incomplete.
void expect_ended_spans(const nlohmann::json& trace) {
  const auto ended = spans_named(trace, "ended");
  ASSERT_EQ(ended.size(), static_cast<std::size_t>(kEndedSpans));
  std::vector<bool> seen(kEndedSpans, false);
  for (const auto& e : ended) {
    EXPECT_FALSE(incomplete(e));
    const int i = e["args"]["i"].get<int>();
    ASSERT_GE(i, 0);
    ASSERT_LT(i, kEndedSpans);
    EXPECT_FALSE(seen[i]) << "span " << i << " twice";
    seen[i] = true;
  }
}

// The whole crash picture: a complete file, the ended spans, the open ones
// marked and ending at the crash, the crash instant and stats. `crashed_on`:
// the thread the crash is written on.
void expect_crash_trace(const nlohmann::json& trace, const Subprocess& process,
                        const std::string& signal_name,
                        const std::string& crashed_on = "crashing thread") {
  expect_ended_spans(trace);
  const long main_tid = tid_named(trace, "crashing thread");
  const long worker_tid = tid_named(trace, "worker");
  ASSERT_GT(main_tid, 0);
  ASSERT_GT(worker_tid, 0);

  const auto outer = spans_named(trace, "outer");
  const auto inner = spans_named(trace, "inner");
  const auto worker = spans_named(trace, "worker_open");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  ASSERT_EQ(worker.size(), 1u);
  EXPECT_TRUE(incomplete(outer[0]));
  EXPECT_TRUE(incomplete(inner[0]));
  EXPECT_TRUE(incomplete(worker[0]));
  EXPECT_EQ(inner[0]["args"]["step"], "lowering");
  EXPECT_EQ(outer[0]["tid"].get<long>(), main_tid);
  EXPECT_EQ(inner[0]["tid"].get<long>(), main_tid);
  EXPECT_EQ(worker[0]["tid"].get<long>(), worker_tid);

  const auto crashes = crash_instants(trace);
  ASSERT_EQ(crashes.size(), 1u);
  const nlohmann::json& crash = crashes[0];
  const long crash_tid = tid_named(trace, crashed_on);
  ASSERT_GT(crash_tid, 0) << crashed_on;
  EXPECT_EQ(crash["name"], "crash: " + signal_name);
  EXPECT_EQ(crash["tid"].get<long>(), crash_tid);
  EXPECT_EQ(crash["args"]["signal"], signal_name);
  // The open spans end where the crash is (ts and dur are each rounded to
  // the written microsecond decimals: 1 ns apart at most).
  const long long crash_ns = to_ns(crash["ts"]);
  for (const auto* open : {&outer[0], &inner[0], &worker[0]}) {
    EXPECT_LE(std::llabs(to_ns((*open)["ts"]) + to_ns((*open)["dur"]) - crash_ns), 1)
        << (*open)["name"];
  }
  EXPECT_GE(to_ns(inner[0]["ts"]), to_ns(outer[0]["ts"]));

  ASSERT_EQ(metadata_count(trace, "jitscope_stats"), 1u);
  const nlohmann::json* stats = metadata(trace, "jitscope_stats");
  EXPECT_EQ((*stats)["args"]["crash"]["signal"], signal_name);
  EXPECT_EQ((*stats)["args"]["crash"]["tid"].get<long>(), crash_tid);
  EXPECT_EQ((*stats)["args"]["spans_incomplete"].get<int>(), 3);
  // One line about it, naming the crashed thread.
  const std::string line = "jitscope: " + signal_name + " on thread " + std::to_string(crash_tid);
  const std::string err = process.err();
  EXPECT_NE(err.find(line), std::string::npos) << err;
  EXPECT_EQ(err.find("jitscope:"), err.rfind("jitscope:")) << err;
}

void expect_crash_trace(const Crash& c, const std::string& signal_name) {
  ASSERT_FALSE(c.text.empty());
  // The crash cycle closes the array: strict JSON with no repair.
  expect_crash_trace(nlohmann::json::parse(c.text), c.process, signal_name);
}

struct FatalSignal {
  const char* how;
  int signo;
  const char* name;
  // The crash's "address": nullptr none (a sent signal, an abort), "" any,
  // else exactly this.
  const char* address;
};

void PrintTo(const FatalSignal& s, std::ostream* os) { *os << s.name; }

class CrashBySignal : public ::testing::TestWithParam<FatalSignal> {};

TEST_P(CrashBySignal, TraceLoadsWithEndedAndOpenSpansAndTheSignalStillKills) {
  const FatalSignal& s = GetParam();
  const Crash c = run_child(s.how);
  EXPECT_EQ(c.process.exit_code, -1) << c.process.err();
  EXPECT_EQ(c.process.signal, s.signo) << c.process.err();
  expect_crash_trace(c, s.name);
  if (!c.text.empty()) {
    const nlohmann::json trace = nlohmann::json::parse(c.text);
    const auto crashes = crash_instants(trace);
    ASSERT_EQ(crashes.size(), 1u);
    const nlohmann::json& args = crashes[0]["args"];
    const nlohmann::json& stats = (*metadata(trace, "jitscope_stats"))["args"]["crash"];
    if (s.address == nullptr) {
      EXPECT_FALSE(args.contains("address")) << args;
      EXPECT_FALSE(stats.contains("address")) << stats;
    } else {
      ASSERT_TRUE(args.contains("address")) << args;
      EXPECT_EQ(stats.value("address", ""), args["address"]) << stats;
      if (*s.address != '\0') EXPECT_EQ(args["address"], s.address);
    }
  }
  remove_files(c);
}

INSTANTIATE_TEST_SUITE_P(
    EachFatalSignal, CrashBySignal,
    ::testing::Values(FatalSignal{"segv", SIGSEGV, "SIGSEGV", ""},
                      // NULL is a fault address like any other: "0x0", not left out.
                      FatalSignal{"segv_null", SIGSEGV, "SIGSEGV", "0x0"},
                      FatalSignal{"bus", SIGBUS, "SIGBUS", ""},
#if defined(__x86_64__) || defined(__i386__)  // crash_child's idiv and ud2
                      FatalSignal{"fpe", SIGFPE, "SIGFPE", ""},
                      FatalSignal{"ill", SIGILL, "SIGILL", ""},
#endif
                      FatalSignal{"abort", SIGABRT, "SIGABRT", nullptr},
                      FatalSignal{"sent_segv", SIGSEGV, "SIGSEGV", nullptr},
                      FatalSignal{"sent_bus", SIGBUS, "SIGBUS", nullptr}),
    [](const ::testing::TestParamInfo<FatalSignal>& info) { return std::string(info.param.how); });

// A flight recorder that crashes leaves its window as a snapshot: the
// events before the crash, the crash, and the spans it cut.
// A flight recorder's crash snapshot, in either form (as JSON events): its
// trigger, the spans that ended, and the ones the crash cut, each once and
// marked incomplete.
void expect_crash_snapshot(const nlohmann::json& trace) {
  const nlohmann::json* snap = metadata(trace, "jitscope_snapshot");
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ((*snap)["args"]["trigger"], "crash SIGSEGV");
  EXPECT_EQ(spans_named(trace, "ended").size(), static_cast<std::size_t>(kEndedSpans));
  for (const char* cut : {"outer", "inner", "worker_open"}) {
    const auto s = spans_named(trace, cut);
    ASSERT_EQ(s.size(), 1u) << cut;
    EXPECT_EQ(s[0]["args"]["incomplete"], true) << cut;
  }
}

TEST(Crash, AFlightRecorderLeavesItsWindowAsASnapshot) {
  const Crash c = run_child("flight-segv");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  EXPECT_TRUE(c.text.empty()) << "a flight recorder writes no trace file";
  const std::string snapshot = c.trace_path.substr(0, c.trace_path.size() - 5) + ".snapshot." +
                               std::to_string(c.process.pid) + ".1.json";
  expect_crash_snapshot(load_trace(snapshot));  // strict: whole, with its "]"
  EXPECT_NE(c.process.err().find("snapshot (crash SIGSEGV) written to"), std::string::npos)
      << c.process.err();
  ::unlink(snapshot.c_str());
  remove_files(c);
}

TEST(Crash, TerminateRecordsTheExceptionAndAbortsAsBefore) {
  const Crash c = run_child("terminate");
  EXPECT_EQ(c.process.signal, SIGABRT) << c.process.err();
  expect_crash_trace(c, "std::terminate");
  const nlohmann::json trace = nlohmann::json::parse(c.text);
  EXPECT_EQ((*metadata(trace, "jitscope_stats"))["args"]["crash"]["exception"],
            "std::runtime_error: boom");
  // The host's terminate handler (libstdc++'s) still ran after ours.
  EXPECT_NE(c.process.err().find("terminate called after throwing"), std::string::npos)
      << c.process.err();
  remove_files(c);
}

TEST(Crash, HostHandlerInstalledBeforeRunsAfterTheFlush) {
  const Crash c = run_child("host-before");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  expect_crash_trace(c, "SIGSEGV");
  EXPECT_EQ(read_file(c.marker_path), "host-before\n");
  remove_files(c);
}

TEST(Crash, HostHandlerInstalledAfterChainsToOurs) {
  const Crash c = run_child("host-after");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  expect_crash_trace(c, "SIGSEGV");
  EXPECT_EQ(read_file(c.marker_path), "host-after\n");
  remove_files(c);
}

// Host handlers on both sides: the later one chains to ours, ours calls the
// earlier one, which recovers. The later one must still be installed after:
// the host may fault again and expects its own handler then.
TEST(Crash, AChainingHostHandlerStaysInstalledWhenTheEarlierOneRecovers) {
  const Crash c = run_child("chain-survive");
  EXPECT_EQ(c.process.exit_code, 0) << c.process.err();
  EXPECT_EQ(read_file(c.marker_path), "host-after\nsurvived\nkept\n");
  expect_crash_trace(c, "SIGSEGV");
  remove_files(c);
}

// stop() wakes the flusher wherever it is: one called while the flusher
// still calibrates the clock (the process's first session) does not wait out
// the 60 s flush interval. (The bound is half the interval: the wake is
// lost or it is not.)
TEST(Crash, AStopWhileTheFlusherStartsIsNotSleptThrough) {
  const auto started = std::chrono::steady_clock::now();
  const Crash c = run_child("quick-stop");
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(c.process.exit_code, 0) << c.process.err();
  EXPECT_LT(took, std::chrono::seconds(30));
  const nlohmann::json trace = nlohmann::json::parse(c.text);
  EXPECT_EQ(spans_named(trace, "quick").size(), 1u);
  remove_files(c);
}

// A signal the host ignored before the session is sent: still ignored, and
// not a crash (the session goes on and ends as usual).
TEST(Crash, ASentSignalTheHostIgnoresIsNoCrash) {
  const Crash c = run_child("sent-ignored");
  EXPECT_EQ(c.process.exit_code, 0) << c.process.err();
  const nlohmann::json trace = nlohmann::json::parse(c.text);
  expect_ended_spans(trace);
  EXPECT_TRUE(crash_instants(trace).empty());
  for (const char* name : {"outer", "inner"}) {
    ASSERT_EQ(spans_named(trace, name).size(), 1u) << name;
    EXPECT_FALSE(incomplete(spans_named(trace, name)[0])) << name;
  }
  const nlohmann::json* stats = metadata(trace, "jitscope_stats");
  ASSERT_NE(stats, nullptr);
  EXPECT_FALSE((*stats)["args"].contains("crash"));
  EXPECT_EQ(c.process.err().find("jitscope:"), std::string::npos) << c.process.err();
  remove_files(c);
}

TEST(Crash, OptedOutTheCrashIsTheHostsAlone) {
  const Crash c = run_child("no-handler");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  // Only what the flusher wrote before: loads once the missing "]" is added.
  ASSERT_FALSE(c.text.empty());
  EXPECT_NE(c.text.back(), '\n');  // no closing "]\n": no crash cycle ran
  const nlohmann::json trace = load_trace(c.trace_path, /*allow_cut=*/true);
  expect_ended_spans(trace);
  EXPECT_TRUE(spans_named(trace, "outer").empty());
  EXPECT_EQ(metadata(trace, "jitscope_stats"), nullptr);
  EXPECT_EQ(c.process.err().find("jitscope:"), std::string::npos) << c.process.err();
  remove_files(c);
}

TEST(Crash, SigkillLosesOnlyTheLastIntervalAndTheTraceLoads) {
  Crash c = run_child("sigkill", /*wait=*/false);
  ASSERT_GT(c.process.pid, 0);
  ASSERT_TRUE(kill_when_ready(c));
  EXPECT_EQ(c.process.signal, SIGKILL);
  const nlohmann::json trace = load_trace(c.trace_path, /*allow_cut=*/true);
  expect_ended_spans(trace);
  EXPECT_EQ(metadata(trace, "jitscope_stats"), nullptr);
  EXPECT_NE(metadata(trace, "jitscope_session"), nullptr);
  remove_files(c);
}

TEST(Crash, ASecondSessionAfterACrashTheHostSurvivedCatchesTheNextOne) {
  const Crash c = run_child("survive");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  EXPECT_EQ(read_file(c.marker_path), "survived\nhost-before\n");
  // The first session wrote its crash and ended with it.
  const nlohmann::json first = load_trace(c.trace_path + ".first.json");
  ASSERT_EQ(spans_named(first, "before_survived").size(), 1u);
  EXPECT_TRUE(incomplete(spans_named(first, "before_survived")[0]));
  ASSERT_EQ(crash_instants(first).size(), 1u);
  EXPECT_EQ(crash_instants(first)[0]["name"], "crash: SIGSEGV");
  // The second session's handlers were in place again: its crash is written
  // too. (Both crash lines are on stderr: check the second trace alone.)
  ASSERT_FALSE(c.text.empty());
  const nlohmann::json second = nlohmann::json::parse(c.text);
  expect_ended_spans(second);
  ASSERT_EQ(crash_instants(second).size(), 1u);
  EXPECT_EQ(crash_instants(second)[0]["tid"].get<long>(), tid_named(second, "crashing thread"));
  EXPECT_EQ(spans_named(second, "before_survived").size(), 0u);
  for (const char* open : {"outer", "inner", "worker_open"}) {
    ASSERT_EQ(spans_named(second, open).size(), 1u) << open;
    EXPECT_TRUE(incomplete(spans_named(second, open)[0])) << open;
  }
  const std::string err = c.process.err();
  EXPECT_NE(err.find(".first.json"), std::string::npos) << err;
  EXPECT_NE(err.find(c.trace_path + "\n"), std::string::npos) << err;
  remove_files(c);
}

TEST(Crash, TwoThreadsCrashingAtOnceWriteOneCrash) {
  const Crash c = run_child("two-threads");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  ASSERT_FALSE(c.text.empty());
  const nlohmann::json trace = nlohmann::json::parse(c.text);
  const auto crashes = crash_instants(trace);
  ASSERT_EQ(crashes.size(), 1u);
  // Whichever claimed the crash first is the one written.
  const long crash_tid = crashes[0]["tid"].get<long>();
  const std::string on = thread_names(trace)[crash_tid];
  EXPECT_TRUE(on == "crashing thread" || on == "second crasher") << on;
  expect_crash_trace(trace, c.process, "SIGSEGV", on);
  remove_files(c);
}

TEST(Crash, ARotatedSessionEndsItsLastFileWithTheCrash) {
  const Crash c = run_child("rotate");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  // Every file loads alone; the spans are spread over them; the last holds
  // the crash and the stats.
  std::vector<nlohmann::json> parts;
  for (std::uint64_t n = 0; ::access(detail::numbered_path(c.trace_path, n).c_str(), F_OK) == 0;
       ++n) {
    parts.push_back(load_trace(detail::numbered_path(c.trace_path, n)));
  }
  ASSERT_GE(parts.size(), 2u);  // 1000 spans are over 64 KiB
  nlohmann::json all = nlohmann::json::array();
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    EXPECT_EQ(crash_instants(parts[i]).size(), last ? 1u : 0u) << "part " << i;
    EXPECT_EQ(metadata_count(parts[i], "jitscope_stats"), last ? 1u : 0u) << "part " << i;
    for (const auto& e : parts[i]) all.push_back(e);
  }
  expect_crash_trace(all, c.process, "SIGSEGV");
  remove_files(c);
}

TEST(Crash, AHostClosingDescriptorsNeitherHangsTheSessionNorWritesIntoItsFiles) {
  Crash c = run_child("close-fds");
  EXPECT_EQ(c.process.exit_code, 0) << c.process.err();
  // The host's file took a number jitscope might have kept: nothing of ours in it.
  EXPECT_EQ(read_file(c.marker_path), "");
  const nlohmann::json trace = nlohmann::json::parse(c.text);
  expect_ended_spans(trace);
  ASSERT_EQ(spans_named(trace, "outer").size(), 1u);
  EXPECT_FALSE(incomplete(spans_named(trace, "outer")[0]));
  EXPECT_TRUE(crash_instants(trace).empty());
  EXPECT_EQ(metadata_count(trace, "jitscope_stats"), 1u);
  EXPECT_EQ(c.process.err().find("jitscope:"), std::string::npos) << c.process.err();
  remove_files(c);
}

// The Perfetto form (docs/perfetto-format.md), read back through the test
// decoder (tests/flush/perfetto_wire.hpp) into the JSON form's events, so
// the same checks apply.
// The child's .pftrace is also kept as tmp/crash.<how>.pftrace, where ctest's
// pftrace.crash_test.* checks run tests/perfetto/check_pftrace.py --cut on it
// (crash.cmake).
void keep_for_checker(const std::string& how, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  const std::string path =
      std::string(dir != nullptr ? dir : "/tmp") + "/crash." + how + ".pftrace";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  EXPECT_TRUE(out.good()) << path;
}

nlohmann::json perfetto_trace(const std::string& text, bool* cut) {
  pfwire::Reader reader;
  reader.read(text, cut);
  for (const std::string& e : reader.errors) ADD_FAILURE() << e;
  return reader.json_form();
}

TEST(CrashPerfetto, ASegfaultWritesTheWholeCrashPictureAsPackets) {
  Crash c = run_child("segv", /*wait=*/true, /*perfetto=*/true);
  ASSERT_FALSE(c.text.empty());
  keep_for_checker("segv", c.text);
  EXPECT_EQ(c.process.signal, SIGSEGV);
  bool cut = true;
  expect_crash_trace(perfetto_trace(c.text, &cut), c.process, "SIGSEGV");
  EXPECT_FALSE(cut) << "the crash cycle writes whole packets";
  remove_files(c);
}

TEST(CrashPerfetto, SigkillLosesOnlyTheLastIntervalAndThePacketsDecode) {
  Crash c = run_child("sigkill", /*wait=*/false, /*perfetto=*/true);
  ASSERT_GT(c.process.pid, 0);
  ASSERT_TRUE(kill_when_ready(c));
  EXPECT_EQ(c.process.signal, SIGKILL);
  bool cut = true;
  const std::string text = read_file(c.trace_path);
  keep_for_checker("sigkill", text);
  const nlohmann::json trace = perfetto_trace(text, &cut);
  EXPECT_FALSE(cut) << "packets are written whole";
  expect_ended_spans(trace);
  EXPECT_EQ(metadata(trace, "jitscope_stats"), nullptr);
  EXPECT_NE(metadata(trace, "jitscope_session"), nullptr);
  remove_files(c);
}

TEST(CrashPerfetto, AFlightRecorderLeavesItsWindowAsASnapshotThatDecodesAlone) {
  const Crash c = run_child("flight-segv", /*wait=*/true, /*perfetto=*/true);
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  EXPECT_TRUE(c.text.empty()) << "a flight recorder writes no trace file";
  const std::string snapshot = c.trace_path.substr(0, c.trace_path.size() - 8) + ".snapshot." +
                               std::to_string(c.process.pid) + ".1.pftrace";
  const std::string text = read_file(snapshot);
  ASSERT_FALSE(text.empty()) << snapshot;
  keep_for_checker("flight-segv", text);
  pfwire::Reader reader;
  bool cut = true;
  reader.read(text, &cut);
  EXPECT_FALSE(cut);
  for (const std::string& e : reader.errors) ADD_FAILURE() << e;
  for (const auto& [track, begins] : reader.open) {
    for (const nlohmann::json& b : begins) ADD_FAILURE() << "a BEGIN never ended: " << b.dump();
  }
  expect_crash_snapshot(reader.json_form());
  ::unlink(snapshot.c_str());
  remove_files(c);
}

}  // namespace
}  // namespace jitscope::testing
