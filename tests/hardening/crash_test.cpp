// Crash safety (crash_handler.hpp): a child (crash_child.cpp) crashes by each
// fatal signal mid-session. Its trace must load as strict JSON, hold every
// span ended before the crash, mark the spans open at the crash, and name the
// crash; the child must still die of its signal. Also: a host handler
// installed before or after the session runs too; the opt-out; SIGKILL.
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
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

Crash run_child(const std::string& how, bool wait = true) {
  Crash c;
  c.trace_path = temp_path("crash_" + how);
  c.marker_path = c.trace_path + ".marker";
  SpawnOptions options;
  options.env = {{"ASAN_OPTIONS", without_sanitizer_handlers("ASAN_OPTIONS")},
                 {"TSAN_OPTIONS", without_sanitizer_handlers("TSAN_OPTIONS")},
                 {"UBSAN_OPTIONS", without_sanitizer_handlers("UBSAN_OPTIONS")}};
  c.process = spawn({JITSCOPE_CRASH_CHILD, c.trace_path, how, c.marker_path}, c.trace_path,
                    options);
  EXPECT_GT(c.process.pid, 0) << c.process.spawn_error;
  if (wait) {
    EXPECT_TRUE(c.process.wait(std::chrono::seconds(120)));
    EXPECT_FALSE(c.process.timed_out);
    c.text = read_file(c.trace_path);
  }
  return c;
}

std::vector<nlohmann::json> slices_named(const nlohmann::json& trace, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& e : events_with_ph(trace, "X")) {
    if (e["name"] == name) out.push_back(e);
  }
  return out;
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
  const auto ended = slices_named(trace, "ended");
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
// marked and ending at the crash, the crash instant and stats.
void expect_crash_trace(const Crash& c, const std::string& signal_name) {
  ASSERT_FALSE(c.text.empty());
  // The crash cycle closes the array: strict JSON with no repair.
  const nlohmann::json trace = nlohmann::json::parse(c.text);
  expect_ended_spans(trace);
  const long main_tid = tid_named(trace, "crashing thread");
  const long worker_tid = tid_named(trace, "worker");
  ASSERT_GT(main_tid, 0);
  ASSERT_GT(worker_tid, 0);

  const auto outer = slices_named(trace, "outer");
  const auto inner = slices_named(trace, "inner");
  const auto worker = slices_named(trace, "worker_open");
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

  std::vector<nlohmann::json> crashes;
  for (const auto& e : events_with_ph(trace, "I")) {
    if (e["name"].get<std::string>().rfind("crash: ", 0) == 0) crashes.push_back(e);
  }
  ASSERT_EQ(crashes.size(), 1u);
  const nlohmann::json& crash = crashes[0];
  EXPECT_EQ(crash["name"], "crash: " + signal_name);
  EXPECT_EQ(crash["tid"].get<long>(), main_tid);
  EXPECT_EQ(crash["args"]["signal"], signal_name);
  // The open spans end where the crash is (ts and dur are each rounded to
  // the written microsecond decimals: 1 ns apart at most).
  const long long crash_ns = to_ns(crash["ts"]);
  for (const auto* open : {&outer[0], &inner[0], &worker[0]}) {
    EXPECT_LE(std::llabs(to_ns((*open)["ts"]) + to_ns((*open)["dur"]) - crash_ns), 1)
        << (*open)["name"];
  }
  EXPECT_GE(to_ns(inner[0]["ts"]), to_ns(outer[0]["ts"]));

  const nlohmann::json* stats = metadata(trace, "jitscope_stats");
  ASSERT_NE(stats, nullptr);
  EXPECT_EQ((*stats)["args"]["crash"]["signal"], signal_name);
  EXPECT_EQ((*stats)["args"]["crash"]["tid"].get<long>(), main_tid);
  EXPECT_EQ((*stats)["args"]["spans_incomplete"].get<int>(), 3);
  EXPECT_NE(c.process.err().find("jitscope: " + signal_name + " on thread"), std::string::npos)
      << c.process.err();
}

struct FatalSignal {
  const char* how;
  int signo;
  const char* name;
};

void PrintTo(const FatalSignal& s, std::ostream* os) { *os << s.name; }

class CrashBySignal : public ::testing::TestWithParam<FatalSignal> {};

TEST_P(CrashBySignal, TraceLoadsWithEndedAndOpenSpansAndTheSignalStillKills) {
  const FatalSignal& s = GetParam();
  const Crash c = run_child(s.how);
  EXPECT_EQ(c.process.exit_code, -1) << c.process.err();
  EXPECT_EQ(c.process.signal, s.signo) << c.process.err();
  expect_crash_trace(c, s.name);
}

INSTANTIATE_TEST_SUITE_P(
    EachFatalSignal, CrashBySignal,
    ::testing::Values(FatalSignal{"segv", SIGSEGV, "SIGSEGV"}, FatalSignal{"bus", SIGBUS, "SIGBUS"},
                      FatalSignal{"fpe", SIGFPE, "SIGFPE"}, FatalSignal{"ill", SIGILL, "SIGILL"},
                      FatalSignal{"abort", SIGABRT, "SIGABRT"},
                      FatalSignal{"sent_segv", SIGSEGV, "SIGSEGV"},
                      FatalSignal{"sent_bus", SIGBUS, "SIGBUS"}),
    [](const ::testing::TestParamInfo<FatalSignal>& info) { return std::string(info.param.how); });

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
}

TEST(Crash, HostHandlerInstalledBeforeRunsAfterTheFlush) {
  const Crash c = run_child("host-before");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  expect_crash_trace(c, "SIGSEGV");
  EXPECT_EQ(read_file(c.marker_path), "host-before\n");
}

TEST(Crash, HostHandlerInstalledAfterChainsToOurs) {
  const Crash c = run_child("host-after");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  expect_crash_trace(c, "SIGSEGV");
  EXPECT_EQ(read_file(c.marker_path), "host-after\n");
}

TEST(Crash, OptedOutTheCrashIsTheHostsAlone) {
  const Crash c = run_child("no-handler");
  EXPECT_EQ(c.process.signal, SIGSEGV) << c.process.err();
  // Only what the flusher wrote before: loads once the missing "]" is added.
  ASSERT_FALSE(c.text.empty());
  EXPECT_NE(c.text.back(), '\n');  // no closing "]\n": no crash cycle ran
  const nlohmann::json trace = load_trace(c.trace_path, /*allow_cut=*/true);
  expect_ended_spans(trace);
  EXPECT_TRUE(slices_named(trace, "outer").empty());
  EXPECT_EQ(metadata(trace, "jitscope_stats"), nullptr);
  EXPECT_EQ(c.process.err().find("jitscope:"), std::string::npos) << c.process.err();
}

TEST(Crash, SigkillLosesOnlyTheLastIntervalAndTheTraceLoads) {
  Crash c = run_child("sigkill", /*wait=*/false);
  ASSERT_GT(c.process.pid, 0);
  // "ready" comes two flush intervals after the ended spans.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (c.process.out().find("ready") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_NE(c.process.out().find("ready"), std::string::npos) << c.process.err();
  ASSERT_EQ(::kill(c.process.pid, SIGKILL), 0);
  ASSERT_TRUE(c.process.wait());
  EXPECT_EQ(c.process.signal, SIGKILL);
  const nlohmann::json trace = load_trace(c.trace_path, /*allow_cut=*/true);
  expect_ended_spans(trace);
  EXPECT_EQ(metadata(trace, "jitscope_stats"), nullptr);
  EXPECT_NE(metadata(trace, "jitscope_session"), nullptr);
}

}  // namespace
}  // namespace jitscope::testing
