// The flight recorder (Config::flight_recorder_bytes, JITSCOPE_FLIGHT; issue
// 39): the session keeps its newest events in a window in memory and writes
// no trace file; snapshot() writes the window as a whole trace that loads
// alone (head, names, the newest events, the spans open at the snapshot).
// Each snapshot is parsed strictly (nlohmann::json, with its closing "]").
// Sessions run under OverflowPolicy::kBlock: no event is lost to a ring.
#include "flight/snapshot_load.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.h>
#include <jitscope/compile.hpp>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The flusher writes a snapshot in its next cycle: waits for the file.
bool appears(const std::string& path) {
  for (int i = 0; i < 2000 && !exists(path); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return exists(path);
}

Config flight_config(const std::string& stem, std::uint64_t window = std::uint64_t{64} << 10) {
  Config cfg = test_config(stem);
  cfg.flight_recorder_bytes = window;
  cfg.overflow = OverflowPolicy::kBlock;
  cfg.snapshot_min_interval = std::chrono::milliseconds(0);
  return cfg;
}

std::string snapshot_file(const std::string& output, int n) {
  // trace.json -> trace.snapshot.<pid>.n.json, spelled out here.
  return output.substr(0, output.size() - 5) + ".snapshot." + std::to_string(::getpid()) + "." +
         std::to_string(n) + ".json";
}

// The numbers of the spans named "w<n>", in file order.
std::vector<int> span_numbers(const json& trace) {
  std::vector<int> out;
  for (const json& e : events_with_ph(trace, "X")) {
    const std::string name = e["name"];
    if (name.size() > 1 && name[0] == 'w') out.push_back(std::stoi(name.substr(1)));
  }
  return out;
}

// An alarm's snapshot: its trigger starts with `alarm` and names the unit's
// frame, and it holds the unit's whole slice (the unit's args name the frame).
void expect_alarm_snapshot(const json& trace, const std::string& alarm, const std::string& frame) {
  const std::string trigger = (*metadata(trace, "jitscope_snapshot"))["args"]["trigger"];
  EXPECT_EQ(trigger.rfind(alarm, 0), 0u) << trigger;
  EXPECT_NE(trigger.find("(frame " + frame + ")"), std::string::npos) << trigger;
  bool unit_in = false;
  for (const json& e : events_with_ph(trace, "X")) {
    unit_in = unit_in || (e.contains("args") && e["args"].value("frame", "") == frame);
  }
  EXPECT_TRUE(unit_in) << frame;
}

// A line of `text` that holds both `a` and `b`.
bool has_line_with(const std::string& text, const std::string& a, const std::string& b) {
  for (const std::string& line : lines_of(text)) {
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
  }
  return false;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(FlightRecorder, ASnapshotHoldsTheNewestSpansAndLoadsAloneWithItsNames) {
  const Config cfg = flight_config("flight_newest");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  set_thread_name("compiler-main");
  constexpr int kSpans = 20000;  // about 1.5 MB of JSON: far more than the window
  for (int i = 0; i < kSpans; ++i) {
    const std::string name = "w" + std::to_string(i);
    Span span{std::string_view(name)};
  }
  ASSERT_TRUE(snapshot().ok());
  const std::string path = snapshot_file(cfg.output_path, 1);
  ASSERT_TRUE(appears(path)) << path;
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 1u);
  EXPECT_FALSE(exists(cfg.output_path)) << "a flight recorder writes no trace file";

  const json trace = load_trace(path);  // strict: whole, with its "]"
  const std::vector<int> got = span_numbers(trace);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back(), kSpans - 1) << "the newest span is in";
  EXPECT_GT(got.front(), 0) << "the oldest spans are gone: the window is bounded";
  for (std::size_t i = 1; i < got.size(); ++i) ASSERT_EQ(got[i], got[i - 1] + 1) << i;
  // What the window held is about its size: it uses its room.
  EXPECT_GT(got.size(), 200u);
  // The head: the process, the session, and the thread's name although its
  // own event went with the oldest.
  ASSERT_NE(metadata(trace, "process_name"), nullptr);
  ASSERT_NE(metadata(trace, "jitscope_session"), nullptr);
  bool named = false;
  for (const auto& [tid, name] : thread_names(trace)) named = named || name == "compiler-main";
  EXPECT_TRUE(named);
  const json* snap = metadata(trace, "jitscope_snapshot");
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ((*snap)["args"]["trigger"], "api");
  EXPECT_EQ((*snap)["args"]["window_bytes"], cfg.flight_recorder_bytes);
  EXPECT_EQ((*snap)["args"]["spans_open"], 0);
  EXPECT_GT((*snap)["args"]["bytes_dropped_from_window"].get<std::uint64_t>(), 0u);
}

TEST(FlightRecorder, SpansOpenAtTheSnapshotAreInItMarkedIncompleteAndStayOpen) {
  const Config cfg = flight_config("flight_open");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  const std::string first = snapshot_file(cfg.output_path, 1);
  const std::string second = snapshot_file(cfg.output_path, 2);
  {
    Span outer("outer");
    {
      Span inner("inner");
      { Span done("w1"); }
      ASSERT_TRUE(snapshot().ok());
      ASSERT_TRUE(appears(first));
    }
  }
  ASSERT_TRUE(snapshot().ok());
  ASSERT_TRUE(appears(second));
  session.finish();

  const json open = load_trace(first);
  const auto outer = spans_named(open, "outer");
  const auto inner = spans_named(open, "inner");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(outer[0]["args"]["incomplete"], true);
  EXPECT_EQ(inner[0]["args"]["incomplete"], true);
  // Nested as they were: the inner inside the outer, the outer ending last.
  EXPECT_GE(to_ns(inner[0]["ts"]), to_ns(outer[0]["ts"]));
  EXPECT_LT(to_ns(inner[0]["ts"]) + to_ns(inner[0]["dur"]),
            to_ns(outer[0]["ts"]) + to_ns(outer[0]["dur"]));
  EXPECT_EQ((*metadata(open, "jitscope_snapshot"))["args"]["spans_open"], 2);
  EXPECT_EQ(spans_named(open, "w1").size(), 1u);

  // They stayed open: ended later by the code, whole in the next snapshot.
  const json closed = load_trace(second);
  const auto outer2 = spans_named(closed, "outer");
  ASSERT_EQ(outer2.size(), 1u);
  EXPECT_FALSE(outer2[0].contains("args") && outer2[0]["args"].contains("incomplete"));
  EXPECT_EQ(to_ns(outer2[0]["ts"]), to_ns(outer[0]["ts"]));
}

TEST(FlightRecorder, CompileRecordsStillGoToTheMetricsFile) {
  Config cfg = flight_config("flight_metrics");
  cfg.metrics_path = temp_path("flight_metrics_records");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  { CompileUnit unit({.frame = "served_kernel"}); }
  session.finish();
  const std::string metrics = read_file(cfg.metrics_path);
  EXPECT_NE(metrics.find("\"served_kernel\""), std::string::npos) << metrics;
  EXPECT_FALSE(exists(cfg.output_path));
}

TEST(FlightRecorder, OnlyTheNewestNumberedSnapshotsAreKept) {
  Config cfg = flight_config("flight_kept");
  cfg.max_snapshots = 2;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  for (int n = 1; n <= 3; ++n) {
    { Span span("w" + std::to_string(n)); }
    ASSERT_TRUE(snapshot().ok());
    ASSERT_TRUE(appears(snapshot_file(cfg.output_path, n))) << n;
  }
  // The third's removal of the first comes with the third's write.
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 3u);
  EXPECT_FALSE(exists(snapshot_file(cfg.output_path, 1)));
  EXPECT_TRUE(exists(snapshot_file(cfg.output_path, 2)));
  EXPECT_TRUE(exists(snapshot_file(cfg.output_path, 3)));
  // A path given is the caller's: written there, never removed.
  EXPECT_EQ(span_numbers(load_trace(snapshot_file(cfg.output_path, 3))).back(), 3);
}

TEST(FlightRecorder, NumberedSnapshotsGoOnAfterThoseOfThisPidAlreadyThere) {
  // As an image this one exec'd from would have left them.
  const Config cfg = flight_config("flight_after");
  for (int n = 1; n <= 2; ++n) {
    std::FILE* f = std::fopen(snapshot_file(cfg.output_path, n).c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("kept", f);
    std::fclose(f);
  }
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  { Span span("w9"); }
  ASSERT_TRUE(snapshot().ok());
  ASSERT_TRUE(appears(snapshot_file(cfg.output_path, 3)));
  session.finish();
  EXPECT_EQ(read_file(snapshot_file(cfg.output_path, 1)), "kept");
  EXPECT_EQ(read_file(snapshot_file(cfg.output_path, 2)), "kept");
  EXPECT_EQ(span_numbers(load_trace(snapshot_file(cfg.output_path, 3))), std::vector<int>{9});
}

TEST(FlightRecorder, AnExplicitPathAndTheCApiWriteThere) {
  const Config cfg = flight_config("flight_path");
  const std::string path = temp_path("flight_path_given");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  { Span span("w7"); }
  ASSERT_EQ(jitscope_snapshot(path.c_str()), 0) << jitscope_last_error();
  ASSERT_TRUE(appears(path));
  session.finish();
  EXPECT_EQ(span_numbers(load_trace(path)), std::vector<int>{7});
  EXPECT_FALSE(exists(snapshot_file(cfg.output_path, 1)));
}

TEST(FlightRecorder, ASnapshotAskedForAtStopIsWritten) {
  const Config cfg = flight_config("flight_at_stop");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  Span open("left_open");
  ASSERT_TRUE(snapshot().ok());
  const SessionStats stats = session.finish();  // may come before the flusher's cycle
  open.end();
  EXPECT_EQ(stats.snapshots_written, 1u);
  const json trace = load_trace(snapshot_file(cfg.output_path, 1));
  ASSERT_EQ(spans_named(trace, "left_open").size(), 1u);
}

TEST(FlightRecorder, RefusedWithoutAFlightSessionAndSoonerThanTheInterval) {
  EXPECT_FALSE(snapshot().ok());  // no session
  {
    ScopedSession plain(test_config("flight_plain"));
    ASSERT_TRUE(plain.status().ok());
    const Status st = snapshot();
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("JITSCOPE_FLIGHT"), std::string::npos) << st.message();
  }
  Config cfg = flight_config("flight_interval");
  cfg.snapshot_min_interval = std::chrono::hours(1);
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  EXPECT_TRUE(snapshot().ok());
  const Status again = snapshot();
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("snapshot_min_interval"), std::string::npos) << again.message();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 1u);
  EXPECT_EQ(stats.snapshots_refused, 1u);
}

TEST(FlightRecorder, ConfigsItCannotServeAreRefusedAtStart) {
  Config capped = flight_config("flight_capped");
  capped.max_trace_bytes = std::uint64_t{1} << 20;
  EXPECT_NE(start(capped).message().find("max_trace_bytes"), std::string::npos);
  Config tiny = flight_config("flight_tiny", 1000);
  EXPECT_NE(start(tiny).message().find("flight_recorder_bytes"), std::string::npos);
  EXPECT_FALSE(active());
}

TEST(FlightRecorder, TheSnapshotSignalAsksForOneAndIsTheHostsAgainAfterStop) {
  Config cfg = flight_config("flight_signal");
  cfg.snapshot_signal = SIGUSR2;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  { Span span("w5"); }
  ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);
  const std::string path = snapshot_file(cfg.output_path, 1);
  ASSERT_TRUE(appears(path));
  session.finish();
  const json trace = load_trace(path);
  EXPECT_EQ((*metadata(trace, "jitscope_snapshot"))["args"]["trigger"], "signal SIGUSR2");
  EXPECT_EQ(span_numbers(trace), std::vector<int>{5});
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGUSR2, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
}

// 1,000 signals in a burst: one snapshot (the rest coalesce in the flag or
// are refused by the interval), and the process goes on.
TEST(FlightRecorder, ASignalStormGivesAtMostTheRateLimitedSnapshots) {
  Config cfg = flight_config("flight_signal_storm");
  cfg.snapshot_signal = SIGUSR2;
  cfg.snapshot_min_interval = std::chrono::milliseconds(60000);
  StderrCapture err;  // the refusals' lines
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  std::atomic<bool> stop{false};
  std::thread recorder([&] {
    for (int i = 0; !stop.load(); ++i) {
      JITSCOPE_SPAN_ARGS("during_storm", {"i", i});
    }
  });
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(::kill(::getpid(), SIGUSR2), 0);
  ASSERT_TRUE(appears(snapshot_file(cfg.output_path, 1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // 10 cycles more
  stop.store(true);
  recorder.join();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 1u);
  EXPECT_FALSE(exists(snapshot_file(cfg.output_path, 2)));
  EXPECT_FALSE(load_trace(snapshot_file(cfg.output_path, 1)).empty());
}

// Snapshots taken while 8 threads record: in each, every thread's spans are
// a run with no gap and no repeat, ending no earlier than what the thread
// had made when the snapshot was asked for.
TEST(FlightRecorder, SnapshotsUnderLoadFromEightThreadsLoseAndRepeatNoEvent) {
  constexpr int kThreads = 8;
  Config cfg = flight_config("flight_load", (std::uint64_t{16} << 20) / kLoadSizeDivisor);
  // Rings of 512 KiB: eight full ones drain into 4 MiB or so of JSON, well
  // inside the window. With the default 2 MiB, eight full rings (kBlock, a
  // flusher behind on a loaded machine) made more than the window, and the
  // ring drained first was pushed out whole: CI saw a thread with 16,384
  // spans made, a full ring, and none in the snapshot.
  cfg.ring_capacity = kLoadRingCapacity;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  LoadSnapshots run;
  snapshots_under_load(
      kThreads, /*life_span=*/false,
      [&](int k) { return snapshot_file(cfg.output_path, 0) + "." + std::to_string(k) + ".json"; },
      run);
  session.finish();
  for (std::size_t k = 0; k < run.paths.size(); ++k) {
    SCOPED_TRACE(run.paths[k]);
    std::vector<std::vector<std::int64_t>> seen(kThreads);
    const json trace = load_trace(run.paths[k]);
    for (const json& e : events_with_ph(trace, "X")) {
      // A span open at the snapshot may not have its args yet (its thread
      // waits for room to write them, kBlock): it is marked, not counted.
      if (e.value("name", "") != "load" || !e["args"].contains("i")) continue;
      seen[e["args"]["t"].get<int>()].push_back(e["args"]["i"].get<std::int64_t>());
    }
    expect_each_thread_whole(seen, run.made_at_request[k]);
  }
}

void host_usr1(int) {}

TEST(FlightRecorder, TheSignalIsNotKeptByAForkedChildNorTakenBackFromALaterHostHandler) {
  Config cfg = flight_config("flight_signal_fork");
  cfg.snapshot_signal = SIGUSR2;
  struct sigaction before {};
  ASSERT_EQ(::sigaction(SIGUSR2, nullptr, &before), 0);
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // No session in the child: its signal is as before the session.
      struct sigaction now {};
      ::sigaction(SIGUSR2, nullptr, &now);
      ::_exit(now.sa_handler == SIG_DFL ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    // The host takes the signal while the session runs: stop leaves it.
    struct sigaction host {};
    host.sa_handler = host_usr1;
    ::sigemptyset(&host.sa_mask);
    ASSERT_EQ(::sigaction(SIGUSR2, &host, nullptr), 0);
  }
  struct sigaction after {};
  ASSERT_EQ(::sigaction(SIGUSR2, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, &host_usr1);
  ::sigaction(SIGUSR2, &before, nullptr);
}

TEST(FlightRecorder, ASignalTheHostHandlesStaysTheHosts) {
  struct sigaction host {
  }, before{};
  host.sa_handler = host_usr1;
  ::sigemptyset(&host.sa_mask);
  ASSERT_EQ(::sigaction(SIGUSR1, &host, &before), 0);
  Config cfg = flight_config("flight_host_signal");
  cfg.snapshot_signal = SIGUSR1;
  StderrCapture err;
  {
    ScopedSession session(cfg);
    EXPECT_TRUE(session.status().ok()) << session.status().message();
    struct sigaction now {};
    ASSERT_EQ(::sigaction(SIGUSR1, nullptr, &now), 0);
    EXPECT_EQ(now.sa_handler, &host_usr1);
  }
  EXPECT_NE(err.text().find("snapshot signal SIGUSR1 not taken"), std::string::npos) << err.text();
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGUSR1, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, &host_usr1);
  ::sigaction(SIGUSR1, &before, nullptr);
}

TEST(FlightRecorder, ASlowOrFailedUnitGivesALineNamingItAndASnapshotHoldingIt) {
  Config cfg = flight_config("flight_alarms");
  cfg.snapshot_slow_unit = std::chrono::milliseconds(30);
  cfg.snapshot_failed_unit = true;
  StderrCapture err;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  { CompileUnit fast({.frame = "fast_kernel"}); }
  {
    CompileUnit slow({.frame = "slow_kernel"});
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  const std::string first = snapshot_file(cfg.output_path, 1);
  ASSERT_TRUE(appears(first));
  {
    CompileUnit bad({.frame = "bad_kernel"});
    bad.fail("PtxasError", "register spill");
  }
  const std::string second = snapshot_file(cfg.output_path, 2);
  ASSERT_TRUE(appears(second));
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 2u);
  const std::string text = err.text();
  // Compile ids are the process's: other tests' units came first.
  EXPECT_TRUE(has_line_with(text, "jitscope: slow compile unit [", "(frame slow_kernel): "))
      << text;
  EXPECT_TRUE(has_line_with(text, "jitscope: failed compile unit [",
                            "(frame bad_kernel): PtxasError: register spill"))
      << text;
  EXPECT_EQ(text.find("fast_kernel"), std::string::npos) << text;
  // Each snapshot names its unit and holds its slice.
  expect_alarm_snapshot(load_trace(first), "slow compile unit [", "slow_kernel");
  expect_alarm_snapshot(load_trace(second), "failed compile unit [", "bad_kernel");
}

TEST(FlightRecorder, ACompileAfterMarkReadyIsSaidAtItsOpenAndSnapshottedAtItsEnd) {
  const Config cfg = flight_config("flight_serving");
  StderrCapture err;
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    { CompileUnit warm({.frame = "warm_kernel"}); }  // warm-up: no alarm
    mark_ready();
    {
      static const PhaseKey kDispatch("dispatch_request");
      Phase dispatch(kDispatch);
      CompileUnit late({.frame = "late_kernel"});
      // Said at its open, before it ends.
      EXPECT_NE(err.text().find("opened after mark_ready() in dispatch_request"), std::string::npos)
          << err.text();
    }
    const std::string path = snapshot_file(cfg.output_path, 1);
    ASSERT_TRUE(appears(path));
    expect_alarm_snapshot(load_trace(path), "compile while serving: unit [", "late_kernel");
    session.finish();
  }
  const std::string text = err.text();
  EXPECT_EQ(text.find("warm_kernel"), std::string::npos) << text;
  EXPECT_NE(text.find("jitscope: compile while serving: unit ["), std::string::npos) << text;
  // stop() ends serving: the next session warms up again.
  ScopedSession next(flight_config("flight_serving_next"));
  ASSERT_TRUE(next.status().ok());
  { CompileUnit again({.frame = "next_warm_kernel"}); }
  next.finish();
  EXPECT_EQ(err.text().find("next_warm_kernel"), std::string::npos) << err.text();
}

// The line names the span the unit was opened in, a plain one too (static
// name, or made at run time), read back from the thread's own ring; a unit
// right inside a phase names the phase.
TEST(FlightRecorder, ACompileWhileServingNamesThePlainSpanItWasOpenedIn) {
  StderrCapture err;
  ScopedSession session(flight_config("flight_serving_span"));
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  mark_ready();
  {
    static const PhaseKey kDispatch("dispatch_request");
    Phase dispatch(kDispatch);
    { CompileUnit in_phase({.frame = "launched_in_phase"}); }
    JITSCOPE_SPAN("pick_kernel");
    { CompileUnit by_span({.frame = "launched_by_span"}); }
    const std::string request = "request " + std::to_string(42);
    Span dynamic{std::string_view(request)};
    { CompileUnit by_dynamic({.frame = "launched_by_dynamic"}); }
  }
  session.finish();
  const std::string text = err.text();
  EXPECT_TRUE(has_line_with(text, "(frame launched_in_phase) opened after mark_ready() in ",
                            "in dispatch_request"))
      << text;
  EXPECT_TRUE(has_line_with(text, "(frame launched_by_span) opened after mark_ready() in ",
                            "in pick_kernel"))
      << text;
  EXPECT_TRUE(has_line_with(text, "(frame launched_by_dynamic) opened after mark_ready() in ",
                            "in request 42"))
      << text;
}

TEST(FlightRecorder, ASlowCompileWhileServingIsOneSnapshotNotTwo) {
  Config cfg = flight_config("flight_serving_slow");
  cfg.snapshot_slow_unit = std::chrono::milliseconds(20);
  StderrCapture err;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  mark_ready();
  {
    CompileUnit late({.frame = "late_and_slow"});
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  const std::string path = snapshot_file(cfg.output_path, 1);
  ASSERT_TRUE(appears(path));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // 10 cycles: no second one
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 1u);
  const json trace = load_trace(path);
  expect_alarm_snapshot(trace, "slow compile unit [", "late_and_slow");
  const std::string trigger = (*metadata(trace, "jitscope_snapshot"))["args"]["trigger"];
  EXPECT_EQ(trigger.find("more)"), std::string::npos) << trigger;  // not two requests merged
  const std::string text = err.text();
  EXPECT_TRUE(has_line_with(text, "compile while serving: unit [", "(frame late_and_slow)"))
      << text;
  EXPECT_TRUE(has_line_with(text, "slow compile unit [", "(frame late_and_slow)")) << text;
}

TEST(FlightRecorder, ACacheMissStormGivesOneLineAndASnapshotNamingTheUnitOfItsLastMiss) {
  Config cfg = flight_config("flight_storm");
  cfg.snapshot_miss_storm = 5;
  cfg.snapshot_miss_storm_window = std::chrono::seconds(60);
  StderrCapture err;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  for (int i = 0; i < 4; ++i) {
    const std::string frame = "calm_" + std::to_string(i);
    CompileUnit u({.frame = frame});
    u.cache_miss("k" + std::to_string(i), "kernels");
    u.cache_hit("h" + std::to_string(i), "kernels");  // hits are not counted
  }
  {
    CompileUnit u({.frame = "storm_kernel"});
    u.cache_miss("k4", "kernels");
  }
  const std::string path = snapshot_file(cfg.output_path, 1);
  ASSERT_TRUE(appears(path));
  // The next storm needs five new misses: four are not one.
  for (int i = 0; i < 4; ++i) {
    CompileUnit u({.frame = "after_storm"});
    u.cache_miss("a" + std::to_string(i), "kernels");
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 1u);
  const std::string text = err.text();
  // One storm, at the fifth miss (its key), none before or after.
  EXPECT_EQ(count_of(text, "jitscope: cache-miss storm"), 1u) << text;
  EXPECT_TRUE(has_line_with(text, "jitscope: cache-miss storm: 5 cache misses in ",
                            "the last in cache 'kernels' (key 'k4'), in unit ["))
      << text;
  EXPECT_TRUE(has_line_with(text, "cache-miss storm", "(frame storm_kernel)")) << text;
  expect_alarm_snapshot(load_trace(path), "cache-miss storm: 5 cache misses", "storm_kernel");
}

TEST(FlightRecorder, MissesFurtherApartThanTheWindowAreNoStormAndAPlainSessionSaysOne) {
  Config cfg = test_config("plain_storm");
  cfg.snapshot_miss_storm = 3;
  cfg.snapshot_miss_storm_window = std::chrono::milliseconds(40);
  StderrCapture err;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  // Any three of these span at least 60 ms: a slow machine only spreads them more.
  for (int i = 0; i < 4; ++i) {
    CompileUnit u({.frame = "spread"});
    u.cache_miss("s" + std::to_string(i), "disk");
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  {
    CompileUnit u({.frame = "burst"});
    for (int i = 0; i < 3; ++i) u.cache_miss("b" + std::to_string(i), "disk");
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 0u);  // no flight recorder: the line only
  const std::string text = err.text();
  EXPECT_EQ(count_of(text, "jitscope: cache-miss storm"), 1u) << text;  // the burst's only
  EXPECT_TRUE(has_line_with(text, "cache-miss storm: 3 cache misses in ", "(frame burst)")) << text;
}

TEST(FlightRecorder, TheVariablesSetIt) {
  ::setenv("JITSCOPE_TRACE", "/tmp/flight_env.json", 1);
  ::setenv("JITSCOPE_FLIGHT", "2M", 1);
  ::setenv("JITSCOPE_MAX_SNAPSHOTS", "3", 1);
  ::setenv("JITSCOPE_SNAPSHOT_MIN_INTERVAL_MS", "250", 1);
  ::setenv("JITSCOPE_SNAPSHOT_SIGNAL", "USR2", 1);
  ::setenv("JITSCOPE_SNAPSHOT_SLOW_UNIT", "2s", 1);
  ::setenv("JITSCOPE_SNAPSHOT_FAILED_UNIT", "1", 1);
  ::setenv("JITSCOPE_SNAPSHOT_MISS_STORM", "20/1500ms", 1);
  Config cfg;
  const Status st = Config::from_env(&cfg);
  ::setenv("JITSCOPE_SNAPSHOT_MISS_STORM", "7", 1);
  Config storm_only;
  const Status storm_st = Config::from_env(&storm_only);
  std::vector<std::string> refused_storms;
  for (const char* v : {"x/1s", "5/0s", "5/", "100001/1s", "5/2d"}) {
    ::setenv("JITSCOPE_SNAPSHOT_MISS_STORM", v, 1);
    Config c;
    refused_storms.push_back(Config::from_env(&c).message());
  }
  ::unsetenv("JITSCOPE_SNAPSHOT_MISS_STORM");
  ::setenv("JITSCOPE_SNAPSHOT_SIGNAL", "SIGKILL", 1);
  Config refused;
  const Status bad = Config::from_env(&refused);
  ::unsetenv("JITSCOPE_SNAPSHOT_SIGNAL");
  ::unsetenv("JITSCOPE_TRACE");
  ::unsetenv("JITSCOPE_FLIGHT");
  ::unsetenv("JITSCOPE_MAX_SNAPSHOTS");
  ::unsetenv("JITSCOPE_SNAPSHOT_MIN_INTERVAL_MS");
  ::unsetenv("JITSCOPE_SNAPSHOT_SLOW_UNIT");
  ::unsetenv("JITSCOPE_SNAPSHOT_FAILED_UNIT");
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(cfg.snapshot_slow_unit, std::chrono::milliseconds(2000));
  EXPECT_TRUE(cfg.snapshot_failed_unit);
  EXPECT_EQ(cfg.snapshot_miss_storm, 20u);
  EXPECT_EQ(cfg.snapshot_miss_storm_window, std::chrono::milliseconds(1500));
  ASSERT_TRUE(storm_st.ok()) << storm_st.message();
  EXPECT_EQ(storm_only.snapshot_miss_storm, 7u);
  EXPECT_EQ(storm_only.snapshot_miss_storm_window, std::chrono::seconds(10));
  for (const std::string& m : refused_storms) {
    EXPECT_NE(m.find("JITSCOPE_SNAPSHOT_MISS_STORM="), std::string::npos) << m;
  }
  EXPECT_EQ(cfg.flight_recorder_bytes, std::uint64_t{2} << 20);
  EXPECT_EQ(cfg.max_snapshots, 3u);
  EXPECT_EQ(cfg.snapshot_min_interval, std::chrono::milliseconds(250));
  EXPECT_EQ(cfg.snapshot_signal, SIGUSR2);
  EXPECT_NE(bad.message().find("JITSCOPE_SNAPSHOT_SIGNAL=SIGKILL"), std::string::npos)
      << bad.message();
}

}  // namespace
}  // namespace jitscope::testing
