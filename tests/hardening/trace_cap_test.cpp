// The trace's resource bounds (issue 7): a size cap on the whole trace
// (Config::max_trace_bytes, JITSCOPE_MAX_TRACE_SIZE) and rotation into
// numbered files (Config::rotate_bytes, JITSCOPE_ROTATE_SIZE).
//
// Every session here runs under OverflowPolicy::kBlock, so that no event is
// lost to a full ring and every count is exact: events_written +
// events_over_cap is all the events made, and the files hold exactly the
// events_written ones. Each file is parsed strictly (nlohmann::json, with its
// closing "]"), alone.
//
// Not covered: GPU activity under a cap (the session's CUPTI stats are the
// part of the trailer that may be trimmed; no GPU or fake CUPTI here), a
// crash in a capped or rotated session (crash tests), write errors other
// than an unopenable next file (stress tests' /dev/full), timing.
#include "base/json_writer.hpp"
#include "format/trace_writer.hpp"
#include "sink/file_sink.hpp"
#include "trace_support.hpp"

#include <jitscope/jitscope.h>

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

constexpr std::uint64_t k64K = std::uint64_t{64} << 10;

std::int64_t file_size(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::int64_t>(st.st_size) : -1;
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// `path` with ".n" before its ".json", spelled out here rather than taken
// from numbered_path (whose cases are tested on their own below).
std::string nth(const std::string& path, int n) {
  if (n == 0) return path;
  const std::string stem = path.substr(0, path.size() - 5);
  EXPECT_EQ(path.substr(path.size() - 5), ".json");
  return stem + "." + std::to_string(n) + ".json";
}

Config bounded_config(const std::string& stem) {
  Config cfg = test_config(stem);
  cfg.overflow = OverflowPolicy::kBlock;  // exact counts
  return cfg;
}

// `n` spans named "work" with {"i": i}, on the calling thread.
void make_spans(int n, int first = 0) {
  for (int i = first; i < first + n; ++i) {
    Span s("work", {{"i", i}});
  }
}

// A session with a cap, `spans` spans far past it: one file, at most the
// cap, whole, with the stats saying so; one line on stderr.
void check_capped_session(Config cfg, int spans) {
  const std::uint64_t cap = cfg.max_trace_bytes;
  ASSERT_NE(cap, 0u);
  SessionStats stats;
  std::string err;
  {
    StderrCapture capture;
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    make_spans(spans);
    stats = session.finish();
    err = capture.text();
  }
  const std::string text = read_file(cfg.output_path);
  EXPECT_LE(text.size(), cap);
  EXPECT_GT(text.size(), cap / 2) << "the cap should leave most of the room to events";
  ASSERT_GE(text.size(), 3u);
  EXPECT_EQ(text.substr(text.size() - 3), "\n]\n");
  const json trace = load_trace(cfg.output_path);  // strict: the "]" is there

  const auto xs = events_with_ph(trace, "X");
  EXPECT_EQ(stats.events_written, xs.size());
  EXPECT_GT(stats.events_over_cap, 0u);
  EXPECT_EQ(stats.events_written + stats.events_over_cap, static_cast<std::uint64_t>(spans));
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.trace_files, 1u);
  EXPECT_EQ(stats.bytes_written, text.size());
  EXPECT_FALSE(stats.write_failed);
  // The spans kept are the first ones, in order, none twice.
  for (std::size_t k = 0; k < xs.size(); ++k) EXPECT_EQ(xs[k]["args"]["i"], k) << k;

  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(&trace.back(), st) << "the stats close the trace";
  const json& args = (*st)["args"];
  EXPECT_EQ(args["events_written"], stats.events_written);
  ASSERT_TRUE(args.contains("trace_cap")) << args.dump();
  EXPECT_EQ(args["trace_cap"]["max_bytes"], cap);
  EXPECT_EQ(args["trace_cap"]["reached"], true);
  EXPECT_EQ(args["trace_cap"]["events_not_written"], stats.events_over_cap);
  EXPECT_TRUE(args["trace_cap"].contains("reached_ts"));
  EXPECT_FALSE(args.contains("trimmed_for_cap")) << "the stats fit whole";
  ASSERT_TRUE(args.contains("threads"));
  const json* session_meta = metadata(trace, "jitscope_session");
  ASSERT_NE(session_meta, nullptr);
  EXPECT_EQ((*session_meta)["args"]["max_trace_bytes"], cap);

  const auto lines = lines_starting(err, "jitscope:");
  ASSERT_EQ(lines.size(), 1u) << err;
  EXPECT_NE(lines[0].find("cap of " + std::to_string(cap) + " bytes"), std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find(cfg.output_path), std::string::npos) << lines[0];
}

TEST(TraceCap, FileStaysUnderTheCapAndCountsWhatItLeftOut) {
  Config cfg = bounded_config("cap");
  cfg.max_trace_bytes = k64K;
  check_capped_session(cfg, 5000);
}

TEST(TraceCap, CapFromTheEnvironment) {
  const std::string path = temp_path("cap_env");
  ::setenv("JITSCOPE_TRACE", path.c_str(), 1);
  ::setenv("JITSCOPE_MAX_TRACE_SIZE", "64K", 1);
  Config cfg;
  const Status st = Config::from_env(&cfg);
  ::unsetenv("JITSCOPE_TRACE");
  ::unsetenv("JITSCOPE_MAX_TRACE_SIZE");
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(cfg.max_trace_bytes, k64K);
  EXPECT_EQ(cfg.rotate_bytes, 0u);
  cfg.flush_interval = std::chrono::milliseconds(5);
  cfg.cupti = CuptiMode::kOff;
  cfg.overflow = OverflowPolicy::kBlock;
  check_capped_session(cfg, 5000);
}

TEST(TraceCap, UnderTheCapNothingChangesButTheRecord) {
  Config cfg = bounded_config("cap_unreached");
  cfg.max_trace_bytes = std::uint64_t{1} << 20;
  StderrCapture capture;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  make_spans(100);
  const SessionStats stats = session.finish();
  EXPECT_TRUE(lines_starting(capture.text(), "jitscope:").empty());
  EXPECT_EQ(stats.events_written, 100u);
  EXPECT_EQ(stats.events_over_cap, 0u);
  const json trace = load_trace(cfg.output_path);
  const json& cap = (*metadata(trace, "jitscope_stats"))["args"]["trace_cap"];
  EXPECT_EQ(cap["reached"], false);
  EXPECT_EQ(cap["events_not_written"], 0);
}

// Spans still open at stop are events too: written as incomplete while
// there is room, counted over the cap once there is none.
TEST(TraceCap, SpansOpenAtStopCountInACappedSession) {
  Config cfg = bounded_config("cap_open");
  cfg.max_trace_bytes = k64K;
  constexpr int kOpen = 3, kClosedPerThread = 3000;
  SessionStats stats;
  {
    StderrCapture capture;
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    // A thread that ends with spans open (the C API: no objects left to end
    // them later); it retires, and its next drain closes them as incomplete,
    // before the cap is reached.
    std::thread first([] {
      for (int i = 0; i < kOpen; ++i) jitscope_span_begin("early_open");
    });
    first.join();
    std::vector<std::unique_ptr<Span>> open;
    for (int i = 0; i < kOpen; ++i) open.push_back(std::make_unique<Span>("open"));
    make_spans(kClosedPerThread);
    stats = session.finish();  // `open` still open: past the cap
    EXPECT_EQ(lines_starting(capture.text(), "jitscope:").size(), 1u);
  }
  const json trace = load_trace(cfg.output_path);
  const auto xs = events_with_ph(trace, "X");
  std::uint64_t incomplete = 0, early = 0, late = 0;
  for (const auto& e : xs) {
    if (e.contains("args") && e["args"].value("incomplete", false)) ++incomplete;
    if (e["name"] == "early_open") ++early;
    if (e["name"] == "open") ++late;
  }
  EXPECT_EQ(stats.events_written + stats.events_over_cap,
            static_cast<std::uint64_t>(2 * kOpen + kClosedPerThread));
  EXPECT_EQ(stats.events_written, xs.size());
  EXPECT_EQ(stats.spans_incomplete, incomplete);
  EXPECT_EQ(early, static_cast<std::uint64_t>(kOpen)) << "written before the cap";
  EXPECT_EQ(late, 0u) << "open at stop, past the cap: counted, not written";
  EXPECT_EQ(stats.spans_incomplete, static_cast<std::uint64_t>(kOpen));
  EXPECT_LE(file_size(cfg.output_path), static_cast<std::int64_t>(k64K));
  const json& args = (*metadata(trace, "jitscope_stats"))["args"];
  EXPECT_EQ(args["spans_incomplete"], incomplete);
  EXPECT_EQ(args["trace_cap"]["events_not_written"], stats.events_over_cap);
}

// A name that needs escaping: each control byte is 6 bytes in JSON.
std::string long_name(int t, std::size_t control_bytes) {
  return "worker " + std::to_string(t) + " " + std::string(control_bytes, '\x01');
}

// Many threads with long names, all known before the cap is reached: the
// room kept for the stats grows with them, and the stats fit whole.
TEST(TraceCap, RoomForTheStatsGrowsWithTheThreads) {
  Config cfg = bounded_config("cap_threads");
  cfg.max_trace_bytes = k64K;
  constexpr int kThreads = 24, kPerThread = 400;
  SessionStats stats;
  {
    StderrCapture capture;
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t, &go] {
        set_thread_name(long_name(t, 100));
        { Span first("first", {{"t", t}}); }
        while (!go.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        for (int i = 0; i < kPerThread; ++i) Span s("work", {{"t", t}, {"i", i}});
      });
    }
    // Every thread drained once (its name is in the file) before the flood.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    for (;;) {
      const std::string text = read_file(cfg.output_path);
      std::size_t names = 0;
      for (std::size_t at = 0; (at = text.find("\"thread_name\"", at)) != std::string::npos; ++at) {
        ++names;
      }
      if (names >= static_cast<std::size_t>(kThreads)) break;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << names << " thread names";
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    go = true;
    for (auto& th : threads) th.join();
    stats = session.finish();
    EXPECT_EQ(lines_starting(capture.text(), "jitscope:").size(), 1u);
  }
  EXPECT_LE(file_size(cfg.output_path), static_cast<std::int64_t>(k64K));
  const json trace = load_trace(cfg.output_path);
  EXPECT_GT(stats.events_over_cap, 0u);
  EXPECT_EQ(stats.events_written + stats.events_over_cap,
            static_cast<std::uint64_t>(kThreads * (kPerThread + 1)));
  EXPECT_EQ(stats.events_written, events_with_ph(trace, "X").size());
  EXPECT_EQ(thread_names(trace).size(), static_cast<std::size_t>(kThreads));
  const json& args = (*metadata(trace, "jitscope_stats"))["args"];
  EXPECT_FALSE(args.contains("trimmed_for_cap"));
  EXPECT_EQ(args["threads"].size(), stats.threads);
}

// Threads first seen once the trace is full need stats entries the cap kept
// no room for: the stats list the threads that fit and count the others,
// and the file stays under the cap.
TEST(TraceCap, ThreadsSeenOnlyAfterTheCapShortenTheStatsNotTheBound) {
  Config cfg = bounded_config("cap_late_threads");
  cfg.max_trace_bytes = k64K;
  constexpr int kLate = 40, kSpans = 3000;
  SessionStats stats;
  {
    StderrCapture capture;
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    make_spans(kSpans);  // far past the cap
    std::vector<std::thread> threads;
    for (int t = 0; t < kLate; ++t) {
      threads.emplace_back([t] {
        set_thread_name(long_name(t, 200));
        Span s("late", {{"t", t}});
      });
    }
    for (auto& th : threads) th.join();
    stats = session.finish();
    EXPECT_EQ(lines_starting(capture.text(), "jitscope:").size(), 1u);
  }
  EXPECT_LE(file_size(cfg.output_path), static_cast<std::int64_t>(k64K));
  const json trace = load_trace(cfg.output_path);
  EXPECT_EQ(stats.events_written + stats.events_over_cap,
            static_cast<std::uint64_t>(kSpans + kLate));
  EXPECT_EQ(stats.events_written, events_with_ph(trace, "X").size());
  const json& args = (*metadata(trace, "jitscope_stats"))["args"];
  ASSERT_TRUE(args.contains("trimmed_for_cap")) << args.dump();
  EXPECT_NE(std::find(args["trimmed_for_cap"].begin(), args["trimmed_for_cap"].end(), "threads"),
            args["trimmed_for_cap"].end());
  EXPECT_EQ(args["threads"].size() + args["threads_omitted"].get<std::size_t>(), stats.threads);
  EXPECT_GE(args["threads"].size(), 1u) << "the first threads, in order, as many as fit";
  EXPECT_EQ(args["trace_cap"]["events_not_written"], stats.events_over_cap);
}

// The writer alone, into memory: what the session cannot easily make.
class StringSink final : public detail::TraceSink {
 public:
  void write(std::string_view bytes) noexcept override { text.append(bytes); }
  std::string text;
};

detail::SessionInfo writer_info(std::uint64_t cap) {
  detail::SessionInfo info;
  info.process_name = "writer";
  info.pid = 1;
  info.conversion = detail::ClockConversion::identity();
  info.overflow = "block";
  info.max_trace_bytes = cap;
  return info;
}

std::string event_text(int i) {
  return R"({"ph":"i","s":"p","name":"e","ts":)" + std::to_string(i) + R"(,"pid":1,"tid":0})";
}

TEST(TraceCapWriter, MetadataPastTheCapIsCountedApart) {
  StringSink sink;
  detail::TraceWriter writer(sink, writer_info(k64K));
  writer.begin_trace();
  constexpr int kEvents = 2000;
  {
    StderrCapture capture;  // the one line
    for (int i = 0; i < kEvents; ++i) writer.append_event(event_text(i));
    for (int i = 0; i < 5; ++i) writer.append_metadata(event_text(i));
    writer.end_trace();
  }
  EXPECT_TRUE(writer.capped());
  EXPECT_LE(sink.text.size(), k64K);
  EXPECT_EQ(writer.events_written() + writer.events_over_cap(),
            static_cast<std::uint64_t>(kEvents));
  const json trace = json::parse(sink.text);
  EXPECT_EQ(events_with_ph(trace, "i").size(), writer.events_written());
  const json& cap = (*metadata(trace, "jitscope_stats"))["args"]["trace_cap"];
  EXPECT_EQ(cap["events_not_written"], writer.events_over_cap());
  EXPECT_EQ(cap["metadata_not_written"], 5);
}

// Extra stats too big for the room kept: the stats go without them, still
// under the cap, and say so.
TEST(TraceCapWriter, StatsTooBigForTheRoomLeaveOutTheExtraStats) {
  StringSink sink;
  detail::TraceWriter writer(sink, writer_info(k64K));
  writer.begin_trace();
  {
    StderrCapture capture;
    for (int i = 0; i < 2000; ++i) writer.append_event(event_text(i));
  }
  writer.end_trace({}, [](detail::JsonWriter& w) {
    w.key("huge");
    w.begin_array();
    for (int i = 0; i < 1000; ++i) w.value(std::string_view("0123456789abcdef"));
    w.end_array();
  });
  EXPECT_LE(sink.text.size(), k64K);
  const json trace = json::parse(sink.text);
  const json& args = (*metadata(trace, "jitscope_stats"))["args"];
  EXPECT_FALSE(args.contains("huge"));
  EXPECT_EQ(args["trimmed_for_cap"], json::array({"extra_stats"}));
  EXPECT_TRUE(args.contains("threads"));
}

// Without a cap the same extra stats are written whole.
TEST(TraceCapWriter, WithoutACapNothingIsTrimmed) {
  StringSink sink;
  detail::TraceWriter writer(sink, writer_info(0));
  writer.begin_trace();
  for (int i = 0; i < 2000; ++i) writer.append_event(event_text(i));
  writer.end_trace({}, [](detail::JsonWriter& w) { w.member("extra", 1); });
  const json trace = json::parse(sink.text);
  EXPECT_EQ(writer.events_written(), 2000u);
  const json& args = (*metadata(trace, "jitscope_stats"))["args"];
  EXPECT_EQ(args["extra"], 1);
  EXPECT_FALSE(args.contains("trace_cap"));
  EXPECT_FALSE(args.contains("trimmed_for_cap"));
  EXPECT_FALSE(args.contains("trace_files"));
}

// A trace in rotated files: [path, path.1, ...] as they exist.
std::vector<std::string> rotated_files(const std::string& path) {
  std::vector<std::string> files;
  for (int n = 0; exists(nth(path, n)); ++n) files.push_back(nth(path, n));
  return files;
}

struct RotatedTrace {
  std::vector<json> files;
  std::uint64_t bytes = 0;
};

// Loads every file alone and checks its head: process_name, the session
// with "part", thread names for all the threads with events in it; the
// stats in the last one only.
RotatedTrace load_rotated(const std::string& path, std::uint64_t rotate_bytes) {
  RotatedTrace out;
  const auto files = rotated_files(path);
  for (std::size_t n = 0; n < files.size(); ++n) {
    SCOPED_TRACE(files[n]);
    const std::string text = read_file(files[n]);
    out.bytes += text.size();
    EXPECT_EQ(text.substr(0, 2), "[\n");
    EXPECT_EQ(text.substr(text.size() - 3), "\n]\n");
    json trace;
    try {
      trace = load_trace(files[n]);  // strict: a whole array each
    } catch (const std::exception& e) {
      ADD_FAILURE() << "does not load alone: " << e.what();
      continue;
    }
    EXPECT_NE(metadata(trace, "process_name"), nullptr);
    const json* session = metadata(trace, "jitscope_session");
    EXPECT_NE(session, nullptr);
    if (session != nullptr) {
      EXPECT_EQ((*session)["args"]["part"], n);
      EXPECT_EQ((*session)["args"]["rotate_bytes"], rotate_bytes);
    }
    const auto names = thread_names(trace);
    for (const auto& e : events_with_ph(trace, "X")) {
      EXPECT_EQ(names.count(e["tid"].get<long>()), 1u) << "no thread_name for " << e.dump();
    }
    const bool last = n + 1 == files.size();
    EXPECT_EQ(metadata(trace, "jitscope_stats") != nullptr, last);
    if (!last) {
      // Closed at the first event boundary at or past the size: by at most
      // one event (a span here is well under 1 KiB).
      EXPECT_GE(text.size(), rotate_bytes);
      EXPECT_LE(text.size(), rotate_bytes + 1024);
    }
    out.files.push_back(std::move(trace));
  }
  return out;
}

TEST(TraceRotation, NumberedFilesEachWholeWithTheirNames) {
  Config cfg = bounded_config("rotate");
  cfg.rotate_bytes = k64K;
  constexpr int kThreads = 4, kPerThread = 2000;
  SessionStats stats;
  {
    StderrCapture capture;
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([t] {
        set_thread_name("worker-" + std::to_string(t));
        for (int i = 0; i < kPerThread; ++i) Span s("work", {{"t", t}, {"i", i}});
      });
    }
    for (auto& th : threads) th.join();
    stats = session.finish();
    EXPECT_TRUE(lines_starting(capture.text(), "jitscope:").empty()) << capture.text();
  }
  const RotatedTrace rt = load_rotated(cfg.output_path, cfg.rotate_bytes);
  ASSERT_GE(rt.files.size(), 3u);
  EXPECT_EQ(stats.trace_files, rt.files.size());
  EXPECT_EQ(stats.bytes_written, rt.bytes);
  EXPECT_EQ(stats.events_over_cap, 0u);
  EXPECT_FALSE(exists(nth(cfg.output_path, static_cast<int>(rt.files.size()))));

  std::set<std::pair<int, int>> seen;
  std::uint64_t xs = 0;
  for (const json& f : rt.files) {
    const auto names = thread_names(f);
    for (const auto& e : events_with_ph(f, "X")) {
      ++xs;
      const int t = e["args"]["t"].get<int>();
      EXPECT_TRUE(seen.emplace(t, e["args"]["i"].get<int>()).second) << "twice: " << e.dump();
      EXPECT_EQ(names.at(e["tid"].get<long>()), "worker-" + std::to_string(t));
    }
  }
  EXPECT_EQ(xs, static_cast<std::uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kThreads * kPerThread));
  EXPECT_EQ(stats.events_written, xs);
  const json& args = (*metadata(rt.files.back(), "jitscope_stats"))["args"];
  EXPECT_EQ(args["trace_files"], rt.files.size());
  EXPECT_EQ(args["events_written"], xs);
  EXPECT_FALSE(args.contains("trace_cap"));
}

TEST(TraceRotation, StaleNumberedFilesOfAnEarlierRunAreRemoved) {
  Config cfg = bounded_config("stale");
  cfg.rotate_bytes = k64K;
  for (int n = 1; n <= 3; ++n) std::ofstream(nth(cfg.output_path, n)) << "[stale run " << n;
  // A numbered file that another live session holds is left alone, and so
  // is everything after it.
  std::ofstream(nth(cfg.output_path, 5)) << "[stale";
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    make_spans(10);
    const SessionStats stats = session.finish();
    EXPECT_EQ(stats.trace_files, 1u);
  }
  for (int n = 1; n <= 3; ++n) EXPECT_FALSE(exists(nth(cfg.output_path, n))) << n;
  EXPECT_TRUE(exists(nth(cfg.output_path, 5))) << "past the first gap: not this name's run";
  ::unlink(nth(cfg.output_path, 5).c_str());
  const json trace = load_trace(cfg.output_path);
  EXPECT_EQ(events_with_ph(trace, "X").size(), 10u);
}

TEST(TraceRotation, ANumberedFileHeldByALiveSessionIsKept) {
  Config cfg = bounded_config("stale_locked");
  cfg.rotate_bytes = k64K;
  const std::string held = nth(cfg.output_path, 1);
  std::ofstream(held) << "[live";
  const int fd = ::open(held.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    make_spans(10);
    session.finish();
  }
  EXPECT_EQ(read_file(held), "[live");
  ::close(fd);
  ::unlink(held.c_str());
}

TEST(TraceRotation, WithACapTheTotalOverFilesStaysUnderIt) {
  Config cfg = bounded_config("rotate_cap");
  cfg.rotate_bytes = k64K;
  cfg.max_trace_bytes = 4 * k64K;
  constexpr int kSpans = 20000;
  SessionStats stats;
  std::string err;
  {
    StderrCapture capture;
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    make_spans(kSpans);
    stats = session.finish();
    err = capture.text();
  }
  const RotatedTrace rt = load_rotated(cfg.output_path, cfg.rotate_bytes);
  ASSERT_GE(rt.files.size(), 3u);
  EXPECT_LE(rt.bytes, cfg.max_trace_bytes);
  EXPECT_EQ(stats.bytes_written, rt.bytes);
  EXPECT_EQ(stats.trace_files, rt.files.size());
  std::uint64_t xs = 0;
  for (const json& f : rt.files) xs += events_with_ph(f, "X").size();
  EXPECT_EQ(stats.events_written, xs);
  EXPECT_GT(stats.events_over_cap, 0u);
  EXPECT_EQ(stats.events_written + stats.events_over_cap, static_cast<std::uint64_t>(kSpans));
  const json& args = (*metadata(rt.files.back(), "jitscope_stats"))["args"];
  EXPECT_EQ(args["trace_cap"]["reached"], true);
  EXPECT_EQ(args["trace_cap"]["events_not_written"], stats.events_over_cap);
  EXPECT_EQ(args["trace_files"], rt.files.size());
  const auto lines = lines_starting(err, "jitscope:");
  ASSERT_EQ(lines.size(), 1u) << err;
  EXPECT_NE(lines[0].find("all its files"), std::string::npos) << lines[0];
}

TEST(TraceRotation, NonRegularOutputSaysSoOnceAndWritesOneStream) {
  Config cfg = bounded_config("devnull");
  cfg.output_path = "/dev/null";
  cfg.rotate_bytes = k64K;
  const bool had_numbered = exists("/dev/null.1");
  StderrCapture capture;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  make_spans(5000);  // far past rotate_bytes
  const SessionStats stats = session.finish();
  const auto lines = lines_starting(capture.text(), "jitscope:");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("rotation is off"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("/dev/null"), std::string::npos) << lines[0];
  EXPECT_EQ(stats.events_written, 5000u);
  EXPECT_EQ(stats.trace_files, 1u);
  EXPECT_FALSE(stats.write_failed);
  EXPECT_GT(stats.bytes_written, 2 * k64K);
  if (!had_numbered) EXPECT_FALSE(exists("/dev/null.1"));
}

// The next file cannot be opened (a folder has its name): one line, the
// rest is discarded, the files so far stay whole.
TEST(TraceRotation, AnUnopenableNextFileEndsTheOutputWithOneLine) {
  Config cfg = bounded_config("rotate_blocked");
  cfg.rotate_bytes = k64K;
  const std::string blocker = nth(cfg.output_path, 1);
  ASSERT_EQ(::mkdir(blocker.c_str(), 0755), 0);
  SessionStats stats;
  Status st;
  std::string err;
  {
    StderrCapture capture;
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok());
    make_spans(5000);
    st = stop(&stats);
    err = capture.text();
  }
  ::rmdir(blocker.c_str());
  EXPECT_FALSE(st.ok());
  EXPECT_TRUE(stats.write_failed);
  EXPECT_EQ(stats.trace_files, 1u);
  const auto lines = lines_starting(err, "jitscope:");
  ASSERT_EQ(lines.size(), 1u) << err;
  EXPECT_NE(lines[0].find(blocker), std::string::npos) << lines[0];
  const json trace = load_trace(cfg.output_path);  // closed whole before the next
  EXPECT_GT(events_with_ph(trace, "X").size(), 0u);
  EXPECT_EQ(stats.bytes_written, read_file(cfg.output_path).size());
}

TEST(TraceRotation, NumberedPathNames) {
  using detail::numbered_path;
  EXPECT_EQ(numbered_path("trace.json", 0), "trace.json");
  EXPECT_EQ(numbered_path("trace.json", 1), "trace.1.json");
  EXPECT_EQ(numbered_path("/a/b/trace.json", 12), "/a/b/trace.12.json");
  EXPECT_EQ(numbered_path("trace", 2), "trace.2");
  EXPECT_EQ(numbered_path("out.d/trace", 1), "out.d/trace.1");
  EXPECT_EQ(numbered_path("a.b.c.json", 3), "a.b.c.3.json");
  EXPECT_EQ(numbered_path(".trace", 1), ".trace.1");
  EXPECT_EQ(numbered_path("dir/.trace", 1), "dir/.trace.1");
  EXPECT_EQ(numbered_path("dir/.trace.json", 1), "dir/.trace.1.json");
}

}  // namespace
}  // namespace jitscope::testing
