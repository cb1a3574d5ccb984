// Spans, instants, counters and thread names through the whole pipeline:
// producer -> ring -> flusher -> JSON file -> nlohmann::json.
// Not covered here: the C API (c_api_test), environment variables
// (config_test), escaping details (json_writer_test), crash safety.
#include "quiet_ring.hpp"
#include "ring/producer.hpp"
#include "ring/thread_registry.hpp"
#include "sanitizers.hpp"
#include "trace_support.hpp"

#include <sys/file.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

namespace jitscope::testing {
namespace {

using nlohmann::json;

// Checks that the X events of every thread nest properly and returns, for
// each span, its parent's name ("" at the top).
std::multimap<std::string, std::string> check_nesting(const json& trace) {
  std::map<long, std::vector<const json*>> by_thread;
  const auto xs = events_with_ph(trace, "X");
  std::vector<json> storage(xs.begin(), xs.end());
  for (const auto& e : storage) by_thread[e["tid"].get<long>()].push_back(&e);
  std::multimap<std::string, std::string> parent_of;
  for (auto& [tid, events] : by_thread) {
    std::sort(events.begin(), events.end(), [](const json* a, const json* b) {
      const auto ta = to_ns((*a)["ts"]), tb = to_ns((*b)["ts"]);
      if (ta != tb) return ta < tb;
      return to_ns((*a)["dur"]) > to_ns((*b)["dur"]);  // parent first
    });
    std::vector<const json*> stack;
    for (const json* e : events) {
      const long long begin = to_ns((*e)["ts"]);
      const long long end = begin + to_ns((*e)["dur"]);
      while (!stack.empty() &&
             to_ns((*stack.back())["ts"]) + to_ns((*stack.back())["dur"]) <= begin) {
        stack.pop_back();
      }
      if (!stack.empty()) {
        const long long pend = to_ns((*stack.back())["ts"]) + to_ns((*stack.back())["dur"]);
        EXPECT_LE(end, pend) << "span " << (*e)["name"] << " overlaps its parent "
                             << (*stack.back())["name"] << " on tid " << tid;
      }
      parent_of.emplace((*e)["name"].get<std::string>(),
                        stack.empty() ? "" : (*stack.back())["name"].get<std::string>());
      stack.push_back(e);
    }
  }
  return parent_of;
}

TEST(Spans, ManyThreadsWithBlockWriteExactlyEverySpanAndNameEachThread) {
  constexpr int kThreads = 8;
  // A quarter under TSan (15 s there): still five rings' worth a thread.
  constexpr int kSpans = kTsan ? 5000 : 20000;
  Config cfg = test_config("block");
  cfg.overflow = OverflowPolicy::kBlock;
  cfg.ring_capacity = 1024;  // far smaller than one thread's output: producers must wait
  cfg.flush_interval = std::chrono::milliseconds(1);
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      set_thread_name("producer-" + std::to_string(t));
      for (int i = 0; i < kSpans; ++i) {
        JITSCOPE_SPAN("work");
      }
    });
  }
  for (auto& th : threads) th.join();
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(stats.events_written, static_cast<std::uint64_t>(kThreads) * kSpans);

  const json trace = load_trace(session.path());
  const auto work = spans_named(trace, "work");
  EXPECT_EQ(work.size(), static_cast<std::size_t>(kThreads) * kSpans);
  std::map<long, int> per_thread;
  for (const auto& e : work) ++per_thread[e["tid"].get<long>()];
  EXPECT_EQ(per_thread.size(), static_cast<std::size_t>(kThreads));
  const auto names = thread_names(trace);
  std::set<std::string> expected, seen;
  for (int t = 0; t < kThreads; ++t) expected.insert("producer-" + std::to_string(t));
  for (const auto& [tid, count] : per_thread) {
    EXPECT_EQ(count, kSpans) << "tid " << tid;
    ASSERT_TRUE(names.count(tid)) << "tid " << tid << " has no thread_name";
    seen.insert(names.at(tid));
  }
  EXPECT_EQ(seen, expected);
}

TEST(Spans, DropPolicyAccountsForEverySpanExactly) {
  const NoEarlyWake quiet;  // only the final drain: the ring must overflow
  constexpr int kThreads = 4;
  constexpr int kSpans = 5000;
  Config cfg = test_config("drop");
  cfg.overflow = OverflowPolicy::kDrop;
  cfg.ring_capacity = 64;
  cfg.flush_interval = std::chrono::milliseconds(60000);  // only the final drain
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < kSpans; ++i) {
        JITSCOPE_SPAN("maybe");
      }
    });
  }
  for (auto& th : threads) th.join();
  const SessionStats stats = session.finish();
  const json trace = load_trace(session.path());
  const auto written = spans_named(trace, "maybe").size();
  EXPECT_GT(stats.events_dropped, 0u) << "a 64-slot ring cannot hold 5000 spans";
  EXPECT_GT(written, 0u);
  EXPECT_EQ(written + stats.events_dropped, static_cast<std::uint64_t>(kThreads) * kSpans);

  // The trace itself carries the same numbers, per thread and in total.
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["events_dropped"].get<std::uint64_t>(), stats.events_dropped);
  std::uint64_t per_thread_dropped = 0;
  std::map<long, std::uint64_t> written_by_tid;
  for (const auto& e : spans_named(trace, "maybe")) ++written_by_tid[e["tid"].get<long>()];
  for (const auto& t : (*st)["args"]["threads"]) {
    per_thread_dropped += t["dropped"].get<std::uint64_t>();
    const long tid = t["tid"].get<long>();
    EXPECT_EQ(written_by_tid[tid] + t["dropped"].get<std::uint64_t>(),
              static_cast<std::uint64_t>(kSpans))
        << "tid " << tid;
  }
  EXPECT_EQ(per_thread_dropped, stats.events_dropped);
}

// A ring past half full wakes the flusher at once: bursts that together
// hold more than the ring, far apart but well inside the flush interval,
// lose nothing (before, the flusher slept out its interval and the ring
// overflowed).
TEST(Spans, AHalfFullRingWakesTheFlusherBeforeItsInterval) {
  constexpr int kBursts = 4;
  constexpr int kSpansPerBurst = 700;  // 1,400 records: a third of the ring
  Config cfg = test_config("early_wake");
  cfg.overflow = OverflowPolicy::kDrop;
  cfg.ring_capacity = 4096;
  cfg.flush_interval = std::chrono::milliseconds(60000);
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  for (int b = 0; b < kBursts; ++b) {
    if (b > 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
    for (int i = 0; i < kSpansPerBurst; ++i) {
      JITSCOPE_SPAN("burst");
    }
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  EXPECT_EQ(spans_named(load_trace(session.path()), "burst").size(),
            static_cast<std::size_t>(kBursts * kSpansPerBurst));
}

TEST(Spans, ThreadsThatExitBeforeStopLoseNothing) {
  constexpr int kThreads = 16;
  constexpr int kSpans = 1000;
  Config cfg = test_config("exit");
  cfg.flush_interval = std::chrono::milliseconds(60000);  // rings outlive their threads
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  for (int t = 0; t < kThreads; ++t) {
    std::thread([t] {
      set_thread_name("short-lived-" + std::to_string(t));
      for (int i = 0; i < kSpans; ++i) {
        JITSCOPE_SPAN("brief");
      }
      JITSCOPE_INSTANT("bye");
    }).join();
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.events_dropped, 0u);
  const json trace = load_trace(session.path());
  EXPECT_EQ(spans_named(trace, "brief").size(), static_cast<std::size_t>(kThreads * kSpans));
  EXPECT_EQ(events_with_ph(trace, "I").size(), static_cast<std::size_t>(kThreads));
  std::set<std::string> names;
  for (const auto& [tid, name] : thread_names(trace)) names.insert(name);
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(names.count("short-lived-" + std::to_string(t)));
}

void nest(int depth, int max_depth) {
  static const char* const kNames[] = {"level0", "level1", "level2", "level3", "level4"};
  Span s(kNames[depth] == nullptr ? "?" : std::string_view(kNames[depth]));
  if (depth + 1 < max_depth) {
    nest(depth + 1, max_depth);
    if (depth % 2 == 0) nest(depth + 1, max_depth);  // siblings too
  }
}

TEST(Spans, NestingIsPreservedOnEveryThread) {
  Config cfg = test_config("nesting");
  cfg.overflow = OverflowPolicy::kBlock;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 200; ++i) nest(0, 5);
    });
  }
  for (auto& th : threads) th.join();
  session.finish();
  const json trace = load_trace(session.path());
  const auto parents = check_nesting(trace);
  ASSERT_FALSE(parents.empty());
  for (const auto& [child, parent] : parents) {
    if (child == "level0") {
      EXPECT_EQ(parent, "");
    } else {
      const int level = child.back() - '0';
      EXPECT_EQ(parent, "level" + std::to_string(level - 1)) << child;
    }
  }
  // 1 + 2 + 2 + 4 + 4 spans per nest() call (siblings at even depths).
  EXPECT_EQ(spans_named(trace, "level0").size(), 600u);
  EXPECT_EQ(spans_named(trace, "level4").size(), 600u * 4);
}

TEST(Spans, TypedArgsInstantsAndCountersRoundTrip) {
  Config cfg = test_config("args");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  {
    Span outer("outer", {{"i", -42}, {"u", std::uint64_t{18446744073709551615u}}});
    {
      Span inner("inner");
      inner.arg("d", 2.5);
      outer.arg("added_while_child_open", true);  // goes to outer, not inner
      inner.arg("s", std::string("text \"quoted\""));
    }
    outer.arg("after_child", "late");
    JITSCOPE_INSTANT("marker", {"k", 7}, {"name", std::string_view("v")});
    JITSCOPE_INSTANT("plain");
    JITSCOPE_COUNTER("depth", 3);
    counter(std::string("dyn_counter"), 0.25);
    instant(std::string("dyn_instant"));
  }
  session.finish();
  const json trace = load_trace(session.path());
  const auto outer = spans_named(trace, "outer");
  ASSERT_EQ(outer.size(), 1u);
  EXPECT_EQ(outer[0]["args"]["i"], -42);
  EXPECT_EQ(outer[0]["args"]["u"].get<std::uint64_t>(), 18446744073709551615u);
  EXPECT_EQ(outer[0]["args"]["added_while_child_open"], true);
  EXPECT_EQ(outer[0]["args"]["after_child"], "late");
  const auto inner = spans_named(trace, "inner");
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0]["args"]["d"], 2.5);
  EXPECT_EQ(inner[0]["args"]["s"], "text \"quoted\"");
  EXPECT_FALSE(inner[0]["args"].contains("added_while_child_open"));

  std::map<std::string, json> instants;
  for (const auto& e : events_with_ph(trace, "I")) instants[e["name"]] = e;
  ASSERT_EQ(instants.size(), 3u);
  EXPECT_EQ(instants["marker"]["s"], "t");
  EXPECT_EQ(instants["marker"]["args"]["k"], 7);
  EXPECT_EQ(instants["marker"]["args"]["name"], "v");
  EXPECT_TRUE(instants.count("plain"));
  EXPECT_TRUE(instants.count("dyn_instant"));

  std::map<std::string, double> counters;
  for (const auto& e : events_with_ph(trace, "C")) {
    counters[e["name"]] = e["args"]["value"].get<double>();
  }
  EXPECT_EQ(counters["depth"], 3.0);
  EXPECT_EQ(counters["dyn_counter"], 0.25);
}

// add_args (the compile layer's unit slices): a list lands whole on its
// span, even with a child open; a list the ring cannot hold is dropped
// whole, each arg counted, and its span still ends.
TEST(Spans, ArgListsLandOnTheirSpanOrAreCountedArgByArg) {
  Config cfg = test_config("arg_lists");
  cfg.overflow = OverflowPolicy::kDrop;
  cfg.ring_capacity = 64;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  {
    const detail::SpanToken outer =
        detail::begin_marked(s, detail::read_clock(s), "listed", {}, 0, 0);
    {
      Span inner("inner");
      const Arg list[3] = {Arg("i", -7), Arg("s", std::string_view("text")), Arg("b", true)};
      detail::add_args(outer, list, 3);
    }
    detail::end_span(outer, detail::read_clock(s));
  }
  // Each string is cut to the longest payload, half the ring: three of them
  // cannot fit in it, whatever its capacity.
  const std::string huge(std::size_t{1} << 20, 'x');
  {
    const detail::SpanToken big =
        detail::begin_marked(s, detail::read_clock(s), "too_big", {}, 0, 0);
    const Arg list[3] = {Arg("a", std::string_view(huge)), Arg("b", std::string_view(huge)),
                         Arg("c", std::string_view(huge))};
    detail::add_args(big, list, 3);
    detail::end_span(big, detail::read_clock(s));
  }
  session.finish();
  const json trace = load_trace(session.path());
  const auto listed = spans_named(trace, "listed");
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["args"]["i"], -7);
  EXPECT_EQ(listed[0]["args"]["s"], "text");
  EXPECT_EQ(listed[0]["args"]["b"], true);
  const auto inner = spans_named(trace, "inner");
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_FALSE(inner[0].contains("args") && inner[0]["args"].contains("i"));
  const auto big = spans_named(trace, "too_big");
  ASSERT_EQ(big.size(), 1u);
  EXPECT_FALSE(big[0].contains("args") && big[0]["args"].contains("a"));
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["args_dropped"].get<std::uint64_t>(), 3u);
}

// begin_marked's args (a compile unit's slice: unit_key, is_forward, frame)
// are written with its Begin, on that span and not on the one open around
// it. Past the eighth they are counted as dropped; with room for the span
// and not for its args together, the span is recorded, then each arg that
// fits alone (as add_arg after it would), the others counted.
TEST(Spans, ArgsWrittenWithABeginLandOnItOrAreCountedArgByArg) {
  Config cfg = test_config("begin_args");
  cfg.overflow = OverflowPolicy::kDrop;
  cfg.ring_capacity = 64;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  const std::uint32_t s = detail::session_word();
  {
    Span outer("around");
    const Arg list[3] = {Arg("i", -7), Arg("s", std::string_view("a string of some length")),
                         Arg("b", true)};
    const detail::SpanToken with =
        detail::begin_marked(s, detail::read_clock(s), nullptr, "with_args", 0, 0, list, 3);
    { Span child("child"); }
    detail::end_span(with, detail::read_clock(s));
  }
  {
    Arg ten[10] = {Arg("a0", 0), Arg("a1", 1), Arg("a2", 2), Arg("a3", 3), Arg("a4", 4),
                   Arg("a5", 5), Arg("a6", 6), Arg("a7", 7), Arg("a8", 8), Arg("a9", 9)};
    const detail::SpanToken many =
        detail::begin_marked(s, detail::read_clock(s), "ten_args", {}, 0, 0, ten, 10);
    detail::end_span(many, detail::read_clock(s));
  }
  // A string is cut to the longest payload, half the ring: two of them
  // cannot fit beside the span; the span alone can, and then one of them.
  const std::string huge(std::size_t{1} << 20, 'x');
  {
    const Arg list[2] = {Arg("a", std::string_view(huge)), Arg("b", std::string_view(huge))};
    const detail::SpanToken big =
        detail::begin_marked(s, detail::read_clock(s), "args_too_big", {}, 0, 0, list, 2);
    detail::end_span(big, detail::read_clock(s));
  }
  session.finish();
  const json trace = load_trace(session.path());
  const auto with = spans_named(trace, "with_args");
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0]["args"]["i"], -7);
  EXPECT_EQ(with[0]["args"]["s"], "a string of some length");
  EXPECT_EQ(with[0]["args"]["b"], true);
  for (const char* other : {"around", "child"}) {
    const auto o = spans_named(trace, other);
    ASSERT_EQ(o.size(), 1u) << other;
    EXPECT_FALSE(o[0].contains("args") && o[0]["args"].contains("i")) << other;
  }
  const auto many = spans_named(trace, "ten_args");
  ASSERT_EQ(many.size(), 1u);
  EXPECT_EQ(many[0]["args"].size(), 8u) << many[0];
  EXPECT_EQ(many[0]["args"]["a7"], 7);
  const auto big = spans_named(trace, "args_too_big");
  ASSERT_EQ(big.size(), 1u);
  ASSERT_TRUE(big[0].contains("args"));
  EXPECT_TRUE(big[0]["args"].contains("a")) << big[0]["args"].dump().substr(0, 200);
  EXPECT_FALSE(big[0]["args"].contains("b"));
  EXPECT_EQ(big[0]["args"]["jitscope_truncated"], true);
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["args_dropped"].get<std::uint64_t>(), 2u + 1u);
  EXPECT_EQ((*st)["args"]["strings_truncated"].get<std::uint64_t>(), 1u)
      << "the cut of the arg never written is not counted";
}

// A dynamic name with args: up to kMaxBeginArgs written with the Begin,
// more one by one after it; all of them land on the span, from a braced
// list or a list built at run time.
TEST(Spans, DynamicNameSpansWithArgsKeepEveryArgInBothWays) {
  Config cfg = test_config("dynamic_args");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  const std::string name = "pass_" + std::to_string(7);
  { Span s(name, {{"ir", "function"}, {"n", 3}, {"ok", true}}); }
  std::vector<Arg> many;
  constexpr char kKeys[10][3] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"};
  for (int i = 0; i < 10; ++i) many.emplace_back(kKeys[i], i);
  {
    Span s(std::string_view("ten"), std::span<const Arg>(many));
    { Span child("child"); }
  }
  { Span s(std::string_view("eight"), std::span<const Arg>(many.data(), 8)); }
  session.finish();
  const json trace = load_trace(session.path());
  const auto braced = spans_named(trace, name);
  ASSERT_EQ(braced.size(), 1u);
  EXPECT_EQ(braced[0]["args"], json({{"ir", "function"}, {"n", 3}, {"ok", true}}));
  for (const auto& [span_name, count] : {std::pair{"ten", 10}, std::pair{"eight", 8}}) {
    const auto s = spans_named(trace, span_name);
    ASSERT_EQ(s.size(), 1u) << span_name;
    EXPECT_EQ(s[0]["args"].size(), static_cast<std::size_t>(count)) << s[0];
    for (int i = 0; i < count; ++i) EXPECT_EQ(s[0]["args"][kKeys[i]], i) << span_name;
  }
  const auto child = spans_named(trace, "child");
  ASSERT_EQ(child.size(), 1u);
  EXPECT_FALSE(child[0].contains("args") && child[0]["args"].contains("a0"));
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["args_dropped"].get<std::uint64_t>(), 0u);
}

TEST(Spans, TimestampsAreMicrosecondsWithThreeDecimalsAndInsideTheSession) {
  Config cfg = test_config("ts");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  for (int i = 0; i < 100; ++i) {
    JITSCOPE_SPAN("tick");
  }
  session.finish();
  const std::string text = read_file(session.path());
  const json trace = json::parse(text);
  const json* meta = metadata(trace, "jitscope_session");
  ASSERT_NE(meta, nullptr);
  const auto start_ns = (*meta)["args"]["session_start_monotonic_ns"].get<long long>();
  EXPECT_FALSE((*meta)["args"]["clock"].get<std::string>().empty());
  EXPECT_GT((*meta)["args"]["session_start_unix_ns"].get<long long>(), 1600000000LL * 1000000000);
  EXPECT_EQ((*meta)["args"]["version"], JITSCOPE_VERSION_STRING);
  // Every ts in the text has exactly three decimals.
  std::size_t pos = 0, checked = 0;
  while ((pos = text.find("\"ts\":", pos)) != std::string::npos) {
    pos += 5;
    const std::size_t dot = text.find('.', pos);
    const std::size_t end = text.find_first_of(",}", pos);
    ASSERT_LT(dot, end);
    EXPECT_EQ(end - dot - 1, 3u) << text.substr(pos, end - pos);
    ++checked;
  }
  EXPECT_GE(checked, 100u);
  for (const auto& e : spans_named(trace, "tick")) {
    // Allow 1 ms of calibration error against CLOCK_MONOTONIC.
    EXPECT_GE(to_ns(e["ts"]), start_ns - 1000000);
  }
}

TEST(Spans, DynamicNamesAreCopiedAtCallTime) {
  Config cfg = test_config("dyn");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  for (int i = 0; i < 50; ++i) {
    std::string name = "kernel_" + std::to_string(i);
    JITSCOPE_SPAN_DYN(name);
    name.assign(name.size(), 'X');  // the trace must keep the original
  }
  session.finish();
  const json trace = load_trace(session.path());
  std::set<std::string> names;
  for (const auto& e : events_with_ph(trace, "X")) names.insert(e["name"]);
  EXPECT_EQ(names.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_TRUE(names.count("kernel_" + std::to_string(i)));
}

TEST(Spans, SpansOpenAtStopAreWrittenAsIncomplete) {
  Config cfg = test_config("incomplete");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  Span open_span("still_running");
  { JITSCOPE_SPAN("finished"); }
  const SessionStats stats = session.finish();
  open_span.end();  // after stop: ignored
  EXPECT_EQ(stats.spans_incomplete, 1u);
  const json trace = load_trace(session.path());
  const auto open = spans_named(trace, "still_running");
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0]["args"]["incomplete"], true);
  ASSERT_EQ(spans_named(trace, "finished").size(), 1u);
  EXPECT_FALSE(spans_named(trace, "finished")[0].contains("args"));
}

TEST(Spans, WithoutASessionNothingIsRecordedAndNothingBreaks) {
  ASSERT_FALSE(active());
  {
    JITSCOPE_SPAN("ignored");
    Span s(std::string("ignored too"));
    s.arg("k", 1);
    EXPECT_FALSE(s.recording());
    JITSCOPE_INSTANT("nope");
    JITSCOPE_COUNTER("nope", 1);
  }
  // A span begun before the session must not close one begun inside it.
  Span before("before_session");
  Config cfg = test_config("late");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  { JITSCOPE_SPAN("inside"); }
  before.end();
  session.finish();
  const json trace = load_trace(session.path());
  const auto xs = events_with_ph(trace, "X");
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0]["name"], "inside");
}

TEST(Spans, ASecondSessionStartsCleanAndAnActiveOneRefusesToStartAgain) {
  Config first = test_config("first");
  ASSERT_TRUE(start(first).ok());
  Config clash = test_config("clash");
  ::testing::internal::CaptureStderr();
  const Status st = start(clash);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(st.ok());
  const std::string message = "a session is already active (trace " + first.output_path +
                              ", started by start()); not starting the one asked for (trace " +
                              clash.output_path + "): stop() the active one first";
  EXPECT_EQ(st.message(), message);
  EXPECT_EQ(err, "jitscope: " + message + "\n");
  Span across("across_sessions");
  { JITSCOPE_SPAN("one"); }
  ASSERT_TRUE(stop().ok());

  Config second = test_config("second");
  ASSERT_TRUE(start(second).ok());
  { JITSCOPE_SPAN("two"); }
  across.end();  // began in the first session: must not end anything here
  { JITSCOPE_SPAN("three"); }
  ASSERT_TRUE(stop().ok());
  const json t1 = load_trace(first.output_path);
  const json t2 = load_trace(second.output_path);
  EXPECT_EQ(spans_named(t1, "one").size(), 1u);
  EXPECT_EQ(spans_named(t1, "across_sessions").size(), 1u);  // incomplete at stop
  EXPECT_EQ(events_with_ph(t2, "X").size(), 2u);
  EXPECT_EQ(spans_named(t2, "two").size(), 1u);
  EXPECT_EQ(spans_named(t2, "three").size(), 1u);
}

// Two sessions never write one file: the second is refused and the file
// (here locked by a stand-in for another session) keeps its bytes.
TEST(Spans, AnOutputFileAnotherSessionWritesIsRefusedAndLeftAlone) {
  const Config cfg = test_config("locked_output");
  const int fd = ::open(cfg.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "kept", 4), 4);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  StderrCapture err;
  const Status st = start(cfg);
  const std::string said = err.text();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is being written by another jitscope session"), std::string::npos)
      << st.message();
  EXPECT_NE(said.find("jitscope: " + cfg.output_path + " is being written"), std::string::npos)
      << said;
  EXPECT_FALSE(active());
  EXPECT_EQ(read_file(cfg.output_path), "kept");
  ::close(fd);  // the other session ends: the path is free again
  ScopedSession s(cfg);
  EXPECT_TRUE(s.status().ok()) << s.status().message();
  s.finish();
  EXPECT_NO_THROW(load_trace(cfg.output_path));
}

TEST(Spans, NestingDeeperThanTheLimitIsCountedNotCorrupted) {
  Config cfg = test_config("deep");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  constexpr int kDepth = 300;
  std::vector<std::unique_ptr<Span>> stack;
  for (int i = 0; i < kDepth; ++i) stack.push_back(std::make_unique<Span>("deep"));
  while (!stack.empty()) stack.pop_back();  // LIFO ends
  { JITSCOPE_SPAN("after"); }
  const SessionStats stats = session.finish();
  const json trace = load_trace(session.path());
  const auto deep = spans_named(trace, "deep").size();
  EXPECT_EQ(deep, 255u);
  EXPECT_EQ(deep + stats.events_dropped, static_cast<std::uint64_t>(kDepth));
  EXPECT_EQ(spans_named(trace, "after").size(), 1u);
  check_nesting(trace);
}

TEST(Spans, ThreadNameSetBeforeTheSessionIsUsed) {
  std::thread([] {
    set_thread_name("named-early");
    Config cfg = test_config("early_name");
    ASSERT_TRUE(start(cfg).ok());
    { JITSCOPE_SPAN("x"); }
    ASSERT_TRUE(stop().ok());
    const json trace = load_trace(cfg.output_path);
    std::set<std::string> names;
    for (const auto& [tid, name] : thread_names(trace)) names.insert(name);
    EXPECT_TRUE(names.count("named-early"));
  }).join();
}

TEST(Spans, RingsOfThreadsThatExitAfterStopAreFreedByTheNextStop) {
  std::atomic<bool> recorded{false}, stopped{false};
  Config cfg = test_config("reap");
  ASSERT_TRUE(start(cfg).ok());
  std::thread late([&] {
    { JITSCOPE_SPAN("before_stop"); }
    recorded = true;
    while (!stopped.load()) std::this_thread::yield();
  });
  while (!recorded.load()) std::this_thread::yield();
  ASSERT_TRUE(stop().ok());  // reaps what retired so far; `late` is still alive
  stopped = true;
  late.join();  // retires its state after the session is gone
  std::vector<detail::ThreadState*> states;
  detail::ThreadRegistry::instance().snapshot(states);
  std::size_t retired = 0;
  for (auto* s : states) retired += s->retired.load();
  EXPECT_EQ(retired, 1u);
  ASSERT_TRUE(start(test_config("reap2")).ok());  // start() frees it
  detail::ThreadRegistry::instance().snapshot(states);
  for (auto* s : states) EXPECT_FALSE(s->retired.load());
  ASSERT_TRUE(stop().ok());
}

}  // namespace
}  // namespace jitscope::testing
