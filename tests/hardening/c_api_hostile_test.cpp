// The C API under hostile input (issue 7): NULL for every pointer, with and
// without a session; ends with nothing open, more ends than begins, begins
// never ended, nesting past the recorded depth; names of arbitrary bytes
// (every byte value, invalid UTF-8, embedded NULs, a 1 MB name, names cut
// at the ring's limit, empty names); bad config values. The trace must load
// as strict JSON with exactly the expected events and counts.
// Not covered: the C++ API's own hostile strings (hostile_strings_test), the
// escaper's byte table (json_writer_test), the C API's normal use (c_api_test).
#include "ring/record.hpp"
#include "trace_support.hpp"
#include "utf8_reference.hpp"

#include <jitscope/jitscope.h>

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern "C" int jitscope_hostile_null_calls(int session_active);
extern "C" void jitscope_hostile_set_overflow(jitscope_config* cfg, int value);

namespace jitscope::testing {
namespace {

using nlohmann::json;

int os_tid() { return static_cast<int>(::syscall(SYS_gettid)); }

// A thread that runs what it is given, one call at a time, and lives until
// destroyed: spans can stay open on it across stop() and sessions.
class Worker {
 public:
  Worker() : thread_([this] { loop(); }) {
    run([this] { tid_ = os_tid(); });
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void run(std::function<void()> f) {
    std::unique_lock<std::mutex> lock(mutex_);
    task_ = std::move(f);
    cv_.notify_all();
    cv_.wait(lock, [this] { return !task_; });
  }
  int tid() const { return tid_; }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return quit_ || task_; });
      if (!task_) return;
      task_();
      task_ = nullptr;
      cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool quit_ = false;
  int tid_ = 0;
  std::thread thread_;
};

jitscope_config c_config(const std::string& path) {
  jitscope_config cfg;
  jitscope_config_init(&cfg);
  cfg.output_path = path.c_str();
  cfg.flush_interval_ms = 5;
  cfg.cupti = JITSCOPE_CUPTI_OFF;          // no "CUPTI off" line: stderr is checked
  cfg.overflow = JITSCOPE_OVERFLOW_BLOCK;  // exact counts: nothing dropped for room
  return cfg;
}

std::vector<json> spans_of(const json& trace, long tid) {
  std::vector<json> out;
  for (const json& e : events_with_ph(trace, "X")) {
    if (e["tid"].get<long>() == tid) out.push_back(e);
  }
  return out;
}

const json& stats_of(const json& trace) {
  const json* st = metadata(trace, "jitscope_stats");
  if (st == nullptr) throw std::runtime_error("no jitscope_stats event");
  return (*st)["args"];
}

// The per-thread entry of jitscope_stats for `tid`, or null.
json thread_stats(const json& trace, long tid) {
  for (const json& t : stats_of(trace)["threads"]) {
    if (t["tid"].get<long>() == tid) return t;
  }
  return nullptr;
}

TEST(CApiHostile, TheUtf8ReferenceFollowsTheKnownCases) {
  // tests/utf8_reference.hpp against the cases hostile_strings_test pins.
  const std::string f = "\xEF\xBF\xBD";
  EXPECT_EQ(replace_invalid_utf8("caf\xC3\xA9 \xF0\x9F\x9A\x80"), "caf\xC3\xA9 \xF0\x9F\x9A\x80");
  EXPECT_EQ(replace_invalid_utf8("\xC0\xAF"), f + f);
  EXPECT_EQ(replace_invalid_utf8("\xE2\x82"), f);
  EXPECT_EQ(replace_invalid_utf8("\xED\xA0\x80"), f + f + f);
  EXPECT_EQ(replace_invalid_utf8("\xF4\x90\x80\x80"), f + f + f + f);
  EXPECT_EQ(replace_invalid_utf8(std::string("a\0b", 3)), std::string("a\0b", 3));
}

TEST(CApiHostile, NullPointersWithoutASessionDoNothing) {
  ASSERT_EQ(jitscope_active(), 0);
  EXPECT_EQ(jitscope_hostile_null_calls(0), 0);
  jitscope_span_begin("no session");
  jitscope_span_end();
  jitscope_span_end();
  EXPECT_EQ(jitscope_stop(), 0);  // no session: nothing to stop
  EXPECT_STREQ(jitscope_last_error(), "");
  EXPECT_EQ(jitscope_note_child_process(4242, "/tmp/x.json", "x"), -1);
  EXPECT_NE(std::string(jitscope_last_error()).find("no active session"), std::string::npos)
      << jitscope_last_error();
  EXPECT_EQ(jitscope_note_task_sent(7), -1);
  EXPECT_NE(std::string(jitscope_last_error()).find("no active session"), std::string::npos)
      << jitscope_last_error();
  EXPECT_EQ(jitscope_note_task_received(-1, 7), -1);
  EXPECT_NE(std::string(jitscope_last_error()).find("must be a pid"), std::string::npos)
      << jitscope_last_error();

  // NULL config: from the environment, which names no trace here.
  ::unsetenv("JITSCOPE_TRACE");
  StderrCapture capture;
  EXPECT_EQ(jitscope_start(nullptr), -1);
  const std::string err = capture.text();
  EXPECT_NE(std::string(jitscope_last_error()).find("JITSCOPE_TRACE"), std::string::npos)
      << jitscope_last_error();
  EXPECT_EQ(jitscope_active(), 0);
  EXPECT_EQ(count_lines_starting(err, "jitscope: "), 1) << err;
}

TEST(CApiHostile, NullPointersInASessionRecordNothing) {
  const std::string path = temp_path("c_hostile_null");
  jitscope_config cfg = c_config(path);
  ASSERT_EQ(jitscope_start(&cfg), 0) << jitscope_last_error();
  EXPECT_STREQ(jitscope_last_error(), "");
  int result = -1;
  long tid = 0;
  std::thread([&] {
    tid = os_tid();
    result = jitscope_hostile_null_calls(1);
  }).join();
  EXPECT_EQ(result, 0);
  EXPECT_EQ(jitscope_hostile_null_calls(1), 0) << "and on the main thread";
  ASSERT_EQ(jitscope_stop(), 0) << jitscope_last_error();
  EXPECT_EQ(jitscope_hostile_null_calls(0), 0) << "and after stop";

  const json trace = load_trace(path);
  // The only slices: the spawn marks of the six valid child notes below.
  const std::vector<json> slices = events_with_ph(trace, "X");
  EXPECT_EQ(slices.size(), 6u);
  for (const json& x : slices) EXPECT_EQ(x.value("name", ""), "spawn") << x.dump();
  EXPECT_TRUE(events_with_ph(trace, "I").empty());
  EXPECT_TRUE(events_with_ph(trace, "C").empty());
  std::vector<json> children;
  for (const json& e : trace) {
    if (e.value("name", "") == "jitscope_child") children.push_back(e);
  }
  ASSERT_EQ(children.size(), 6u);  // three from each thread
  // A NULL path: trace.worker-4242.json beside the trace (its extension).
  const std::string worker = path.substr(0, path.rfind('.')) + ".worker-4242.json";
  std::map<std::string, int> seen;  // trace + " " + label
  for (const json& c : children) {
    EXPECT_EQ(c["args"]["pid"], 4242);
    ++seen[c["args"].value("trace", "") + " " + c["args"].value("label", "")];
  }
  EXPECT_EQ(seen, (std::map<std::string, int>{
                      {worker + " label", 2}, {worker + " ", 2}, {"/tmp/null-label.json ", 2}}));
  const json& st = stats_of(trace);
  EXPECT_EQ(st["unbalanced_ends"], 0);
  EXPECT_EQ(st["events_dropped"], 0);
}

TEST(CApiHostile, UnbalancedEndsAreCountedExactly) {
  const std::string path = temp_path("c_hostile_unbalanced");
  jitscope_config cfg = c_config(path);
  Worker early;  // will carry a state from a first session into the second
  ASSERT_EQ(jitscope_start(&cfg), 0) << jitscope_last_error();
  early.run([] {
    jitscope_span_begin("first session");
    jitscope_span_end();
  });
  ASSERT_EQ(jitscope_stop(), 0) << jitscope_last_error();

  ASSERT_EQ(jitscope_start(&cfg), 0) << jitscope_last_error();
  Worker a, b;
  a.run([] {
    for (int i = 0; i < 3; ++i) jitscope_span_end();  // before this thread's first event
    jitscope_span_begin("balanced");
    jitscope_span_end();
    jitscope_span_end();  // one more end than begins
    jitscope_span_end();  // and another
  });
  b.run([] {
    for (int i = 0; i < 4; ++i) jitscope_span_end();  // nothing else, ever
  });
  early.run([] {
    // Registered in the first session, nothing open: counted in this one.
    jitscope_span_end();
    jitscope_span_end();
  });
  ASSERT_EQ(jitscope_stop(), 0) << jitscope_last_error();

  const json trace = load_trace(path);
  const auto spans = spans_of(trace, a.tid());
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0]["name"], "balanced");
  EXPECT_EQ(events_with_ph(trace, "X").size(), 1u);
  const json& st = stats_of(trace);
  EXPECT_EQ(st["unbalanced_ends"], 3 + 2 + 4 + 2) << st.dump();
  EXPECT_EQ(st["events_dropped"], 0);
  const json ta = thread_stats(trace, a.tid());
  const json tb = thread_stats(trace, b.tid());
  const json te = thread_stats(trace, early.tid());
  ASSERT_FALSE(ta.is_null());
  EXPECT_EQ(ta.value("unbalanced_ends", 0), 5) << ta.dump();
  ASSERT_FALSE(tb.is_null()) << "a thread that only ended is still counted";
  EXPECT_EQ(tb.value("unbalanced_ends", 0), 4) << tb.dump();
  ASSERT_FALSE(te.is_null());
  EXPECT_EQ(te.value("unbalanced_ends", 0), 2) << te.dump();
}

TEST(CApiHostile, DeepAndNeverEndedSpans) {
  const std::string path = temp_path("c_hostile_deep");
  jitscope_config cfg = c_config(path);
  ASSERT_EQ(jitscope_start(&cfg), 0) << jitscope_last_error();
  Worker deep;
  deep.run([] {
    // 255 levels are recorded; the 45 below them are dropped and counted.
    for (int i = 0; i < 300; ++i) jitscope_span_begin("deep");
    for (int i = 0; i < 305; ++i) jitscope_span_end();  // 5 more than begun
    // Open at stop: written by stop() as incomplete.
    jitscope_span_begin("open static");
    const std::string name = "open \xFF copy";
    jitscope_span_begin_copy(name.data(), name.size());
  });
  long exited_tid = 0;
  std::thread([&] {
    // Open when the thread exits: written, incomplete, once it is drained.
    exited_tid = os_tid();
    jitscope_span_begin("open at exit");
  }).join();
  ASSERT_EQ(jitscope_stop(), 0) << jitscope_last_error();

  const json trace = load_trace(path);
  const auto spans = spans_of(trace, deep.tid());
  ASSERT_EQ(spans.size(), 255u + 2u);
  for (std::size_t i = 0; i < 255; ++i) {
    EXPECT_EQ(spans[i]["name"], "deep");
    EXPECT_FALSE(spans[i].contains("args")) << spans[i].dump();
  }
  // Inner first, as stop() unwinds the stack.
  EXPECT_EQ(spans[255]["name"], "open \xEF\xBF\xBD copy");
  EXPECT_EQ(spans[256]["name"], "open static");
  for (std::size_t i = 255; i < 257; ++i) EXPECT_EQ(spans[i]["args"]["incomplete"], true);
  const auto exited = spans_of(trace, exited_tid);
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_EQ(exited[0]["name"], "open at exit");
  EXPECT_EQ(exited[0]["args"]["incomplete"], true);
  const json& st = stats_of(trace);
  EXPECT_EQ(st["spans_incomplete"], 3);
  EXPECT_EQ(st["events_dropped"], 45);
  EXPECT_EQ(st["unbalanced_ends"], 5);
  EXPECT_EQ(events_with_ph(trace, "X").size(), 255u + 3u);
}

TEST(CApiHostile, NamesOfArbitraryBytes) {
  // Static names (stored by pointer: they outlive the session).
  static char every_nonzero_byte[256];
  for (int b = 1; b < 256; ++b) every_nonzero_byte[b - 1] = static_cast<char>(b);
  every_nonzero_byte[255] = '\0';
  static const char kStaticInvalid[] = "static \xC0\xAF \xED\xA0\x80 \xF8";
  static const char kStaticValid[] = "static caf\xC3\xA9 \xF0\x9F\x9A\x80";
  static const char kEmpty[] = "";

  struct Expected {
    std::string name;
    bool truncated = false;
  };
  std::vector<Expected> expected;
  std::vector<std::string> valid_names;  // for the exact round trip check

  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes.push_back(static_cast<char>(b));
  std::string one_mb;  // valid UTF-8, 1,000,000 bytes
  while (one_mb.size() < 1'000'000) one_mb += "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x9A\x80";  // 10 bytes
  ASSERT_EQ(one_mb.size(), 1'000'000u);
  const std::size_t max_name = (kDefaultRingCapacity / 2) * detail::kRecordBytes;  // 1 MiB
  const std::string two_mib_ascii(2 * max_name, 'x');
  std::string euros;  // cut at 1 MiB, in the middle of a three-byte character
  while (euros.size() < 2 * max_name) euros += "\xE2\x82\xAC";
  const std::vector<std::string> copied = {
      all_bytes,
      std::string("a\0b\0", 4),
      std::string(1, '\0'),
      "\xFF\xFE",
      "lone \x80 continuation",
      "overlong \xC0\xAF",
      "truncated \xE2\x82",
      "surrogate \xED\xA0\x80",
      "too big \xF4\x90\x80\x80",
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80",
      "quote \" backslash \\ newline \n tab \t",
      one_mb,
  };

  const std::string path = temp_path("c_hostile_names");
  jitscope_config cfg = c_config(path);
  ASSERT_EQ(jitscope_start(&cfg), 0) << jitscope_last_error();
  const std::string thread_name = "worker \xFF caf\xC3\xA9";
  Worker w;
  w.run([&] {
    jitscope_thread_name(thread_name.c_str());
    for (int b = 0; b < 256; ++b) {  // every byte value alone
      const char c = static_cast<char>(b);
      jitscope_span_begin_copy(&c, 1);
      jitscope_span_end();
      expected.push_back({replace_invalid_utf8(std::string_view(&c, 1))});
    }
    for (const std::string& name : copied) {
      jitscope_span_begin_copy(name.data(), name.size());
      jitscope_span_end();
      expected.push_back({replace_invalid_utf8(name)});
      if (replace_invalid_utf8(name) == name) valid_names.push_back(name);
    }
    // Empty names: a zero length with any pointer, and an empty literal.
    jitscope_span_begin_copy("ignored", 0);
    jitscope_span_end();
    jitscope_span_begin_copy(kEmpty, 0);
    jitscope_span_end();
    jitscope_span_begin(kEmpty);
    jitscope_span_end();
    for (int i = 0; i < 3; ++i) expected.push_back({""});
    // Longer than half the ring: cut to fit, flagged.
    jitscope_span_begin_copy(two_mib_ascii.data(), two_mib_ascii.size());
    jitscope_span_end();
    expected.push_back({two_mib_ascii.substr(0, max_name), true});
    jitscope_span_begin_copy(euros.data(), euros.size());
    jitscope_span_end();
    expected.push_back({replace_invalid_utf8(std::string_view(euros).substr(0, max_name)), true});
    // Static names.
    for (const char* name :
         {static_cast<const char*>(every_nonzero_byte), kStaticInvalid, kStaticValid}) {
      jitscope_span_begin(name);
      jitscope_span_end();
      expected.push_back({replace_invalid_utf8(name)});
      jitscope_instant(name);
      jitscope_counter(name, 7.5);
    }
  });
  ASSERT_EQ(jitscope_stop(), 0) << jitscope_last_error();

  const json trace = load_trace(path);  // strict: throws on malformed JSON or UTF-8
  const auto spans = spans_of(trace, w.tid());
  ASSERT_EQ(spans.size(), expected.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const std::string got = spans[i]["name"].get<std::string>();
    EXPECT_TRUE(got == expected[i].name)
        << "span " << i << ": got " << got.size() << " bytes, expected " << expected[i].name.size()
        << ": " << json(got.substr(0, 80)).dump();
    const bool flagged =
        spans[i].contains("args") && spans[i]["args"].value("jitscope_truncated", false);
    EXPECT_EQ(flagged, expected[i].truncated) << "span " << i;
  }
  // Valid UTF-8 comes back byte for byte, the 1 MB name included.
  for (const std::string& name : valid_names) {
    EXPECT_TRUE(std::any_of(spans.begin(), spans.end(),
                            [&](const json& s) { return s["name"].get<std::string>() == name; }))
        << "not found: " << json(name.substr(0, 80)).dump();
  }
  EXPECT_GE(valid_names.size(), 4u);  // all_bytes is not; a\0b\0, \0, café, one_mb are

  const std::vector<std::string> static_expected = {
      replace_invalid_utf8(every_nonzero_byte), replace_invalid_utf8(kStaticInvalid), kStaticValid};
  std::vector<std::string> instants, counters;
  for (const json& e : events_with_ph(trace, "I")) instants.push_back(e["name"]);
  for (const json& e : events_with_ph(trace, "C")) {
    if (e["tid"].get<long>() == w.tid()) counters.push_back(e["name"]);
  }
  EXPECT_EQ(instants, static_expected);
  EXPECT_EQ(counters, static_expected);
  EXPECT_EQ(thread_names(trace)[w.tid()], replace_invalid_utf8(thread_name));

  const json& st = stats_of(trace);
  EXPECT_EQ(st["events_dropped"], 0);
  EXPECT_EQ(st["strings_truncated"], 2);
  EXPECT_EQ(st["unbalanced_ends"], 0);
  EXPECT_EQ(st["spans_incomplete"], 0);
  EXPECT_EQ(st["decode_errors"], 0);
  if (!HasFailure()) ::unlink(path.c_str());  // 3 MB; kept when it helps to look
}

TEST(CApiHostile, BadConfigValuesStartNoSession) {
  const std::string path = temp_path("c_hostile_config");
  struct Case {
    const char* what;
    std::function<void(jitscope_config&)> spoil;
    const char* message;  // part of jitscope_last_error()
  };
  const std::vector<Case> cases = {
      {"overflow 7", [](jitscope_config& c) { jitscope_hostile_set_overflow(&c, 7); }, "overflow"},
      {"overflow -1", [](jitscope_config& c) { jitscope_hostile_set_overflow(&c, -1); },
       "overflow"},
      {"cupti 7", [](jitscope_config& c) { c.cupti = 7; }, "cupti"},
      {"cupti -1", [](jitscope_config& c) { c.cupti = -1; }, "cupti"},
      {"crash_handler 7", [](jitscope_config& c) { c.crash_handler = 7; }, "crash_handler"},
      {"crash_handler -1", [](jitscope_config& c) { c.crash_handler = -1; }, "crash_handler"},
      {"max_trace_bytes 5", [](jitscope_config& c) { c.max_trace_bytes = 5; }, "max_trace_bytes"},
      {"max_trace_bytes 64K-1", [](jitscope_config& c) { c.max_trace_bytes = 65535; },
       "max_trace_bytes"},
      {"rotate_bytes 100", [](jitscope_config& c) { c.rotate_bytes = 100; }, "rotate_bytes"},
      {"ring_capacity 0", [](jitscope_config& c) { c.ring_capacity = 0; }, "ring_capacity"},
      {"ring_capacity 2^40", [](jitscope_config& c) { c.ring_capacity = std::size_t{1} << 40; },
       "ring_capacity"},
      {"flush_interval_ms 0", [](jitscope_config& c) { c.flush_interval_ms = 0; },
       "flush_interval"},
      {"flush_interval_ms max", [](jitscope_config& c) { c.flush_interval_ms = ~0u; },
       "flush_interval"},
      {"output_path NULL", [](jitscope_config& c) { c.output_path = nullptr; }, "output path"},
      {"output_path empty", [](jitscope_config& c) { c.output_path = ""; }, "output path"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    jitscope_config cfg = c_config(path);
    c.spoil(cfg);
    StderrCapture capture;
    const int rc = jitscope_start(&cfg);
    const std::string err = capture.text();
    const std::string why = jitscope_last_error();
    EXPECT_EQ(rc, -1);
    EXPECT_EQ(jitscope_active(), 0);
    EXPECT_NE(why.find(c.message), std::string::npos) << why;
    EXPECT_EQ(count_lines_starting(err, "jitscope: "), 1) << "one line on stderr:\n" << err;
    EXPECT_NE(::access(path.c_str(), F_OK), 0) << "the output was created";
    if (rc == 0) (void)jitscope_stop();
  }
  // The same config, unspoiled, starts.
  jitscope_config cfg = c_config(path);
  ASSERT_EQ(jitscope_start(&cfg), 0) << jitscope_last_error();
  EXPECT_STREQ(jitscope_last_error(), "");
  EXPECT_EQ(jitscope_stop(), 0);
  EXPECT_NO_THROW(load_trace(path));
}

}  // namespace
}  // namespace jitscope::testing
