// Stress, churn and resource bounds (issue 7): exact event counts from many
// busy threads under OverflowPolicy::kBlock, thousands of short-lived named
// threads, resident memory over tens of millions of spans, and an output
// that fails (/dev/full) in a child process and in this one.
//
// Traces of millions of spans are not written to disk: the session writes
// into a FIFO that a thread of this test reads, checking the array's shape
// line by line (the writer puts each event on its own line, after ",\n"),
// counting spans per thread, and parsing every other event strictly.
//
// Sizes: the full sizes below in optimized builds; under ThreadSanitizer or
// AddressSanitizer the counts are scaled down (kSanitized) to keep the suite
// in minutes. Every assertion stays exact; only N changes.
//
// Not covered: timing (no test here asserts a duration), kDrop's loss
// accounting under pressure (span_test), crashes (crash tests), trace size
// caps and rotation (trace_cap tests), GPU activity.
#include "ring/thread_registry.hpp"
#include "sanitizers.hpp"
#include "subprocess.hpp"
#include "trace_support.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

// Sanitized builds run the flusher 10-50x slower: the same tests at a tenth
// of the size (the RSS test at 3 million spans: about 40 s under TSan).
constexpr std::uint64_t kSpansPerThread = kSanitized ? 100'000 : 1'000'000;
constexpr int kChurnThreads = kSanitized ? 1'000 : 10'000;
constexpr int kChurnSpans = 100;
constexpr std::uint64_t kRssBaseSpans = 1'000'000;
constexpr std::uint64_t kRssSpans = kSanitized ? 3'000'000 : 50'000'000;

int os_tid() { return static_cast<int>(::syscall(SYS_gettid)); }

// Resident set size in KiB (VmRSS), -1 if /proc does not say. Read into a
// stack buffer: the sampling loop must not allocate, or ASan's quarantine of
// its freed buffers would count as growth. glibc's malloc first hands back
// the free memory its arenas keep (each may hold megabytes of freed chunks,
// more after a large free raises its trim threshold), so that what is
// measured is memory in use, not the allocator's cache. The sanitizers have
// their own allocators.
long rss_kib() {
#if defined(__GLIBC__)
  if (!kSanitized) ::malloc_trim(0);
#endif
  char text[8192];
  const int fd = ::open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  std::size_t n = 0;
  for (ssize_t got; n < sizeof text - 1 && (got = ::read(fd, text + n, sizeof text - 1 - n)) > 0;) {
    n += static_cast<std::size_t>(got);
  }
  ::close(fd);
  text[n] = '\0';
  const char* at = std::strstr(text, "\nVmRSS:");
  return at != nullptr ? std::strtol(at + 7, nullptr, 10) : -1;
}

// The thread states in the registry but the calling thread's, once the
// flusher has freed those of exited threads down to `want` (it polls; the
// deadline only guards against a hang and is far above any expected
// wait). The calling thread's state stays until the thread exits or
// records in a later session: it is there when an earlier test in this
// process recorded on it.
std::size_t registered_states(std::size_t want) {
  std::vector<detail::ThreadState*> states;
  std::size_t others = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (;;) {
    detail::ThreadRegistry::instance().snapshot(states);
    others = states.size() -
             static_cast<std::size_t>(std::count(states.begin(), states.end(), detail::t_state));
    if (others <= want || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return others;
}

// What a streamed trace held.
struct StreamedTrace {
  bool opened = false;              // the first line is "["
  bool closed = false;              // a "]" line ends the array, with nothing but space after it
  std::vector<std::string> errors;  // the first malformed lines, and why
  std::uint64_t events = 0;
  std::uint64_t spans = 0;  // "ph":"X" events
  std::map<long, std::uint64_t> spans_per_tid;
  // Every other event is parsed strictly; thread names are kept as (tid,
  // name), small, so that 10,000 of them do not weigh on the RSS checks.
  std::vector<std::pair<long, std::string>> thread_names;
  std::vector<json> others;

  const json* stats() const {
    for (const json& e : others) {
      if (e.value("ph", "") == "M" && e.value("name", "") == "jitscope_stats") return &e;
    }
    return nullptr;
  }
};

// Checks a trace line by line as it streams in. The writer's array form:
// "[", then one event per line, each but the last followed by ",", then "]".
class LineChecker {
 public:
  explicit LineChecker(StreamedTrace& out) : out_(out) {}

  void line(std::string_view text) {
    ++lines_;
    if (lines_ == 1) {
      if (text == "[") {
        out_.opened = true;
      } else {
        error("first line is not \"[\"", text);
      }
      return;
    }
    if (out_.closed) {
      if (!text.empty()) error("text after the closing \"]\"", text);
      return;
    }
    if (text == "]") {
      if (comma_) error("a comma before the closing \"]\"", text);
      out_.closed = true;
      return;
    }
    if (out_.events > 0 && !comma_) error("no comma after the previous event", text);
    comma_ = !text.empty() && text.back() == ',';
    if (comma_) text.remove_suffix(1);
    ++out_.events;
    constexpr std::string_view kSpan = R"({"ph":"X",)";
    if (text.substr(0, kSpan.size()) == kSpan) {
      span(text);
      return;
    }
    try {
      json e = json::parse(text);
      if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name") {
        out_.thread_names.emplace_back(e["tid"].get<long>(), e["args"]["name"].get<std::string>());
      } else {
        out_.others.push_back(std::move(e));
      }
    } catch (const std::exception& e) {
      error(std::string("not JSON: ") + e.what(), text);
    }
  }

 private:
  // Spans are counted from their text; one in 4096 is also parsed whole.
  void span(std::string_view text) {
    constexpr std::string_view kTid = R"(,"tid":)";
    // No string can hold `,"tid":`: a quote inside one is escaped.
    const std::size_t at = text.find(kTid);
    long tid = -1;
    if (text.back() != '}' || at == std::string_view::npos ||
        std::sscanf(std::string(text.substr(at + kTid.size(), 24)).c_str(), "%ld", &tid) != 1) {
      error("malformed span", text);
      return;
    }
    ++out_.spans;
    ++out_.spans_per_tid[tid];
    if (out_.spans % 4096 != 1) return;
    try {
      const json e = json::parse(text);
      if (e["tid"].get<long>() != tid || !e["name"].is_string() || !e["ts"].is_number() ||
          !e["dur"].is_number() || e["dur"].get<double>() < 0) {
        error("span fields", text);
      }
    } catch (const std::exception& e) {
      error(std::string("span not JSON: ") + e.what(), text);
    }
  }

  void error(std::string why, std::string_view text) {
    if (out_.errors.size() >= 5) return;
    out_.errors.push_back(why + " (line " + std::to_string(lines_) +
                          "): " + std::string(text.substr(0, 200)));
  }

  StreamedTrace& out_;
  std::uint64_t lines_ = 0;
  bool comma_ = false;  // the last event line ended with ","
};

// A FIFO for a session's output_path, read by a thread of this test: the
// trace is checked and counted as it streams, and never lands on disk.
// Declare it before the session, so that the session stops (closing the
// FIFO) before this is destroyed.
class FifoTrace {
 public:
  explicit FifoTrace(const std::string& stem) : path_(temp_path(stem)) {
    if (::mkfifo(path_.c_str(), 0600) != 0) return;
    // Open now, without waiting for a writer, so that the session's open
    // (O_WRONLY) finds a reader and does not block.
    fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  }
  FifoTrace(const FifoTrace&) = delete;
  FifoTrace& operator=(const FifoTrace&) = delete;
  ~FifoTrace() {
    finish();
    ::unlink(path_.c_str());
  }

  bool ok() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  // After start(): with the session's writer connected, reading may block
  // and end of file means the session closed the trace.
  void session_started(bool started) {
    if (!started || fd_ < 0) return;
    ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
    (void)::fcntl(fd_, F_SETPIPE_SZ, 1 << 20);  // fewer wake-ups; fine if refused
    reader_ = std::thread([this] { read_all(); });
  }

  // Waits for the end of the trace (stop() first).
  const StreamedTrace& finish() {
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    return trace_;
  }

 private:
  void read_all() {
    LineChecker checker(trace_);
    std::vector<char> buf(1 << 20);
    std::string carry;
    for (;;) {
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::string_view chunk(buf.data(), static_cast<std::size_t>(n));
      for (std::size_t nl; (nl = chunk.find('\n')) != std::string_view::npos;) {
        if (carry.empty()) {
          checker.line(chunk.substr(0, nl));
        } else {
          carry.append(chunk.substr(0, nl));
          checker.line(carry);
          carry.clear();
        }
        chunk.remove_prefix(nl + 1);
      }
      carry.append(chunk);
    }
    if (!carry.empty()) checker.line(carry);
  }

  std::string path_;
  int fd_ = -1;
  std::thread reader_;
  StreamedTrace trace_;
};

void expect_well_formed(const StreamedTrace& t) {
  EXPECT_TRUE(t.opened);
  EXPECT_TRUE(t.closed) << "the trace does not end with \"]\"";
  for (const std::string& e : t.errors) ADD_FAILURE() << e;
}

// Stops whatever session a failed assertion left running.
struct StopAtExit {
  ~StopAtExit() { (void)stop(); }
};

TEST(Stress, EightThreadsOfSpansUnderBlockLoseNothing) {
  constexpr int kThreads = 8;
  FifoTrace fifo("stress_8_threads");
  ASSERT_TRUE(fifo.ok()) << "mkfifo " << fifo.path();
  Config cfg = test_config("stress_8_threads");
  cfg.output_path = fifo.path();
  cfg.overflow = OverflowPolicy::kBlock;  // default ring: 65536 records a thread
  ScopedSession session(cfg);
  fifo.session_started(session.status().ok());
  ASSERT_TRUE(session.status().ok()) << session.status().message();

  std::vector<int> tids(kThreads, 0);
  {
    std::latch go(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
      threads.emplace_back([&, i] {
        tids[i] = os_tid();
        go.arrive_and_wait();  // all eight at once, so that the rings fill together
        for (std::uint64_t n = 0; n < kSpansPerThread; ++n) {
          JITSCOPE_SPAN("stress");
        }
      });
    }
    for (std::thread& t : threads) t.join();
  }
  // The exited threads are drained and freed while the session goes on.
  EXPECT_EQ(registered_states(0), 0u);
  const SessionStats stats = session.finish();
  const StreamedTrace& trace = fifo.finish();

  expect_well_formed(trace);
  const std::uint64_t total = kThreads * kSpansPerThread;
  EXPECT_EQ(trace.spans, total);
  EXPECT_EQ(trace.spans_per_tid.size(), static_cast<std::size_t>(kThreads));
  for (int tid : tids)
    EXPECT_EQ(trace.spans_per_tid.count(tid) ? trace.spans_per_tid.at(tid) : 0, kSpansPerThread)
        << "tid " << tid;
  EXPECT_EQ(stats.events_written, total);
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(stats.threads, static_cast<std::uint64_t>(kThreads));
  EXPECT_FALSE(stats.write_failed);

  // The trace's own totals say the same.
  const json* st = trace.stats();
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["events_written"], total);
  EXPECT_EQ((*st)["args"]["events_dropped"], 0);
  EXPECT_EQ((*st)["args"]["spans_incomplete"], 0);
  ASSERT_EQ((*st)["args"]["threads"].size(), static_cast<std::size_t>(kThreads));
  for (const json& t : (*st)["args"]["threads"]) {
    EXPECT_EQ(t["events"], kSpansPerThread) << t.dump();
    EXPECT_EQ(t["dropped"], 0) << t.dump();
  }
  for (const json& e : trace.others) {
    EXPECT_NE(e.value("name", ""), "jitscope.dropped_events") << "none dropped: " << e.dump();
  }
}

// A producer waiting for room wakes the flusher: with a one-minute interval
// and a 64-slot ring, 3,000 spans wait for it about 200 times. Without the
// wake each wait lasts until the next interval, and this test hangs until
// its timeout instead of passing in milliseconds.
TEST(Stress, AProducerWaitingForRoomWakesTheFlusher) {
  constexpr std::uint64_t kSpans = 3000;
  Config cfg = test_config("stress_block_wake");
  cfg.overflow = OverflowPolicy::kBlock;
  cfg.ring_capacity = kMinRingCapacity;
  cfg.flush_interval = std::chrono::milliseconds(60000);
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  for (std::uint64_t n = 0; n < kSpans; ++n) {
    JITSCOPE_SPAN("waits");
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_written, kSpans);
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_FALSE(stats.write_failed);
}

TEST(Stress, TenThousandNamedShortLivedThreads) {
  // Threads run in waves of kWave; each is a new OS thread that names
  // itself, makes its spans and exits before the next wave starts.
  constexpr int kWave = 50;
  FifoTrace fifo("stress_churn");
  ASSERT_TRUE(fifo.ok()) << "mkfifo " << fifo.path();
  Config cfg = test_config("stress_churn");
  cfg.output_path = fifo.path();
  cfg.overflow = OverflowPolicy::kBlock;
  // 8 KiB a thread: 100 spans (200 records) and the name fit without waiting.
  cfg.ring_capacity = 256;
  ScopedSession session(cfg);
  fifo.session_started(session.status().ok());
  ASSERT_TRUE(session.status().ok()) << session.status().message();

  std::vector<int> tids(kChurnThreads, 0);
  long rss_early = -1;
  for (int first = 0; first < kChurnThreads; first += kWave) {
    std::vector<std::thread> wave;
    for (int i = first; i < std::min(first + kWave, kChurnThreads); ++i) {
      wave.emplace_back([&tids, i] {
        tids[i] = os_tid();
        set_thread_name("churn-" + std::to_string(i));
        for (int s = 0; s < kChurnSpans; ++s) {
          JITSCOPE_SPAN("churn");
        }
      });
    }
    for (std::thread& t : wave) t.join();
    if (first + kWave == kChurnThreads / 10) {
      // Measured once the flusher has freed every exited thread's state.
      EXPECT_EQ(registered_states(0), 0u);
      rss_early = rss_kib();
    }
  }
  EXPECT_EQ(registered_states(0), 0u) << "exited threads are drained, then freed";
  const long rss_late = rss_kib();
  const SessionStats stats = session.finish();
  const StreamedTrace& trace = fifo.finish();

  expect_well_formed(trace);
  const std::uint64_t total = static_cast<std::uint64_t>(kChurnThreads) * kChurnSpans;
  EXPECT_EQ(trace.spans, total);
  // Linux hands out thread ids cyclically up to pid_max (at least 32768), so
  // none of ours repeats within 10,000; spans are compared per id anyway.
  std::map<long, std::uint64_t> expected_spans;
  for (int tid : tids) expected_spans[tid] += kChurnSpans;
  EXPECT_EQ(expected_spans.size(), static_cast<std::size_t>(kChurnThreads));
  EXPECT_TRUE(trace.spans_per_tid == expected_spans)
      << trace.spans_per_tid.size() << " tids with spans in the trace, " << expected_spans.size()
      << " threads";

  // One thread_name event per thread: its own id and its own name.
  std::multiset<std::pair<long, std::string>> expected_names, names;
  for (int i = 0; i < kChurnThreads; ++i) {
    expected_names.emplace(tids[i], "churn-" + std::to_string(i));
  }
  std::set<long> named_tids;
  for (const auto& n : trace.thread_names) {
    names.insert(n);
    named_tids.insert(n.first);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(kChurnThreads));
  EXPECT_EQ(named_tids.size(), static_cast<std::size_t>(kChurnThreads));
  EXPECT_TRUE(names == expected_names) << "thread_name events differ from the threads' names";

  EXPECT_EQ(stats.events_written, total);
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.spans_incomplete, 0u);
  EXPECT_EQ(stats.threads, static_cast<std::uint64_t>(kChurnThreads));
  const json* st = trace.stats();
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["events_written"], total);
  EXPECT_EQ((*st)["args"]["events_dropped"], 0);
  EXPECT_EQ((*st)["args"]["threads"].size(), static_cast<std::size_t>(kChurnThreads));

  // Exited threads are drained and freed: memory holds the live threads'
  // rings (none live at either measurement) and the writer's buffers, not
  // every thread ever seen. What does grow by design is the writer's
  // per-thread summary for the stats event (about 100 bytes a thread: under
  // 1 MiB for 9,000), and this test's own per-thread tallies (about 1 MiB).
  // 16 MiB of slack for those and the allocator's arenas; keeping each
  // exited thread's ring and state (over 8 KiB each) would add more than
  // 70 MiB. Not under the sanitizers: ASan's quarantine holds freed memory
  // by design, and TSan keeps its own state for every thread it has seen.
  ::testing::Test::RecordProperty("rss_after_tenth_kib", std::to_string(rss_early));
  ::testing::Test::RecordProperty("rss_after_all_kib", std::to_string(rss_late));
  std::printf("churn: VmRSS %ld KiB after %d threads, %ld KiB after %d\n", rss_early,
              kChurnThreads / 10, rss_late, kChurnThreads);
  if (!kSanitized) {
    ASSERT_GT(rss_early, 0);
    EXPECT_LE(rss_late - rss_early, 16 * 1024) << "memory grows with threads ever seen";
  }
}

TEST(Stress, RssStaysFlatFromOneToFiftyMillionSpans) {
  // Two producers with the default ring (65536 records = 2 MiB each), the
  // trace to /dev/null (so the disk is not the limit) under kBlock (so every
  // span is formatted: none is dropped).
  constexpr int kProducers = 2;
  Config cfg = test_config("stress_rss");
  cfg.output_path = "/dev/null";
  cfg.overflow = OverflowPolicy::kBlock;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();

  std::barrier sync(kProducers + 1);
  std::atomic<int> running{kProducers};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&] {
      for (std::uint64_t n = 0; n < kRssBaseSpans / kProducers; ++n) {
        JITSCOPE_SPAN("rss");
      }
      sync.arrive_and_wait();  // the base measurement
      sync.arrive_and_wait();
      for (std::uint64_t n = kRssBaseSpans / kProducers; n < kRssSpans / kProducers; ++n) {
        JITSCOPE_SPAN("rss");
      }
      running.fetch_sub(1);
    });
  }
  sync.arrive_and_wait();
  const long base = rss_kib();
  sync.arrive_and_wait();
  long peak = base;
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    peak = std::max(peak, rss_kib());
  }
  for (std::thread& t : threads) t.join();
  peak = std::max(peak, rss_kib());
  const SessionStats stats = session.finish();

  EXPECT_EQ(stats.events_written, kRssSpans);
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_FALSE(stats.write_failed);
  ASSERT_GT(base, 0);
  ::testing::Test::RecordProperty("rss_base_kib", std::to_string(base));
  ::testing::Test::RecordProperty("rss_peak_kib", std::to_string(peak));
  std::printf("rss: VmRSS %ld KiB after %llu spans, peak %ld KiB up to %llu (+%ld KiB)\n", base,
              static_cast<unsigned long long>(kRssBaseSpans), peak,
              static_cast<unsigned long long>(kRssSpans), peak - base);
  // The design's memory is ring bytes x live threads plus fixed buffers:
  // 2 x 2 MiB of rings, the writer's 1 MiB output buffer and 128 KiB
  // decode chunk. A million spans (2 million records, about 90 MB of JSON)
  // have touched all of it, so nothing may grow after: 8 MiB of slack for
  // the allocator and this test's own stack and stdio. A leak of one byte
  // a span would be 49 MB at full size (0.2 bytes a span shows). Under the
  // sanitizers, 2 million more spans only catch 4 bytes a span or more;
  // LeakSanitizer covers leaks there.
  EXPECT_LE(peak - base, 8 * 1024) << "resident memory grew with the number of spans";
}

// ---- an output that fails: /dev/full ----

struct ChildResult {
  int exit_code = -1;  // -1: a signal ended it, or it did not start
  std::string err;     // its stderr
};

// Runs jitscope_devfull_child with its trace to /dev/full.
ChildResult run_devfull_child(int code, const char* how) {
  ChildResult r;
  SpawnOptions options;
  options.drop_env_prefixes = {"JITSCOPE_"};
  options.env = {{"JITSCOPE_TRACE", "/dev/full"},
                 // auto would say "CUPTI off" on a machine without a GPU
                 {"JITSCOPE_CUPTI", "off"},
                 {"JITSCOPE_OVERFLOW", "block"},
                 {"JITSCOPE_RING_CAPACITY", "1024"},
                 {"JITSCOPE_FLUSH_INTERVAL_MS", "1"}};
  Subprocess p = spawn({JITSCOPE_DEVFULL_CHILD, std::to_string(code), how},
                       temp_path("devfull_child"), options);
  if (p.pid <= 0) {
    r.err = p.spawn_error;
    return r;
  }
  p.wait(std::chrono::seconds(120));
  r.exit_code = p.exit_code;
  r.err = p.err();
  p.remove_outputs();
  return r;
}

void expect_one_jitscope_line(const std::string& err) {
  const std::vector<std::string> lines = lines_of(err);
  ASSERT_EQ(lines.size(), 1u) << "stderr:\n" << err;
  EXPECT_EQ(lines[0].rfind("jitscope: ", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("/dev/full"), std::string::npos) << "names the output: " << lines[0];
}

TEST(Stress, DevFullChildSaysOneLineAndKeepsItsExitStatus) {
  for (const int code : {3, 0}) {
    for (const char* how : {"return", "exit"}) {
      SCOPED_TRACE(std::string("exit code ") + std::to_string(code) + " by " + how);
      const ChildResult r = run_devfull_child(code, how);
      EXPECT_EQ(r.exit_code, code) << r.err;
      expect_one_jitscope_line(r.err);
    }
  }
}

TEST(Stress, DevFullStopReturnsAnErrorAndWriteFailed) {
  StopAtExit stop_at_exit;
  Config cfg = test_config("stress_devfull");
  cfg.output_path = "/dev/full";
  cfg.overflow = OverflowPolicy::kBlock;
  cfg.ring_capacity = 1024;  // the producers wait on the flusher after the failure
  std::string err;
  Status stopped;
  SessionStats stats;
  {
    StderrCapture capture;
    const Status started = start(cfg);
    if (started.ok()) {
      std::thread other([] {
        for (int i = 0; i < 100'000; ++i) {
          JITSCOPE_SPAN("devfull");
        }
      });
      for (int i = 0; i < 100'000; ++i) {
        JITSCOPE_SPAN("devfull");
      }
      other.join();
      stopped = stop(&stats);
    }
    err = capture.text();
    ASSERT_TRUE(started.ok()) << started.message();
  }
  EXPECT_FALSE(stopped.ok());
  EXPECT_FALSE(stopped.message().empty());
  EXPECT_TRUE(stats.write_failed);
  expect_one_jitscope_line(err);
}

}  // namespace
}  // namespace jitscope::testing
