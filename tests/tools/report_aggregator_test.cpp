// jitscope-report's pieces in process, with bounds too small for a test to
// reach through the binary: SelfTime with runs of a few spans (sorted runs
// spilled to the temporary file and merged back) against a brute-force
// nesting and against itself in memory; the Aggregator's open-B bounds
// (per thread and over all threads), past which B's and their E's are
// counted, never paired with another.
// Not covered: a temporary file that cannot be written (the runs stay in
// memory; no portable way to fill the disk here).
#include <aggregator.hpp>
#include <event_decoder.hpp>
#include <self_time.hpp>
#include <trace_reader.hpp>

#include "trace_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using jitscope::report::Aggregator;
using jitscope::report::Report;
using jitscope::report::SelfTime;
using jitscope::report::SelfTimeSink;
using jitscope::report::TimedSpan;

struct Collect : SelfTimeSink {
  std::map<std::uint32_t, std::int64_t> self;  // by name
  // Each span's longest gap, by (thread, start, end): {gap start, length}.
  std::map<std::tuple<std::uint32_t, std::int64_t, std::int64_t>,
           std::pair<std::int64_t, std::int64_t>>
      gaps;
  // Each span's parent, by (thread, start, end): the parent's (start, end), or (-1, -1).
  std::map<std::tuple<std::uint32_t, std::int64_t, std::int64_t>,
           std::pair<std::int64_t, std::int64_t>>
      parents;
  std::map<std::uint32_t, std::uint32_t> parent_names;  // by name: its parent's (99: none)
  std::size_t calls = 0;
  void on_self(const TimedSpan& s, std::int64_t ns, const jitscope::report::Gap& longest,
               const TimedSpan* parent) override {
    self[s.name] += ns;
    gaps[{s.thread, s.start, s.end}] = {longest.start, longest.ns};
    parents[{s.thread, s.start, s.end}] =
        parent == nullptr ? std::pair<std::int64_t, std::int64_t>{-1, -1}
                          : std::pair<std::int64_t, std::int64_t>{parent->start, parent->end};
    parent_names[s.name] = parent == nullptr ? 99 : parent->name;
    ++calls;
  }
};

// A random proper nesting inside [start, end): children strictly inside,
// disjoint, none identical to its parent.
void nest(std::mt19937_64& rng, std::uint32_t thread, std::int64_t start, std::int64_t end,
          int depth, std::vector<TimedSpan>* out) {
  if (depth == 0 || end - start < 4) return;
  std::int64_t at = start + 1;
  const int children = static_cast<int>(rng() % 4);
  for (int c = 0; c < children && end - 1 - at >= 2; ++c) {
    const std::int64_t s = at + static_cast<std::int64_t>(rng() % 3);
    const std::int64_t room = end - 1 - s;
    if (room < 1) break;
    const std::int64_t e =
        s + 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(room));
    TimedSpan span;
    span.start = s;
    span.end = e;
    span.thread = thread;
    span.name = static_cast<std::uint32_t>(rng() % 5);
    out->push_back(span);
    nest(rng, thread, s, e, depth - 1, out);
    at = e;
  }
}

TEST(SelfTime, SpilledRunsGiveTheBruteForceNesting) {
  std::mt19937_64 rng(42);
  std::vector<TimedSpan> spans;
  for (std::uint32_t thread = 0; thread < 3; ++thread) {
    for (int root = 0; root < 20; ++root) {
      TimedSpan r;
      r.start = root * 10000;
      r.end = r.start + 9000;
      r.thread = thread;
      r.name = 5;
      spans.push_back(r);
      nest(rng, thread, r.start, r.end, 6, &spans);
    }
  }
  ASSERT_GT(spans.size(), 500u);
  // Brute force: a span's parent is the shortest other span of its thread
  // that holds it (the intervals are distinct).
  std::map<std::uint32_t, std::int64_t> want;
  std::map<const TimedSpan*, std::vector<const TimedSpan*>> children;
  std::map<std::tuple<std::uint32_t, std::int64_t, std::int64_t>,
           std::pair<std::int64_t, std::int64_t>>
      want_parents;
  for (const TimedSpan& s : spans) {
    want[s.name] += s.end - s.start;
    const TimedSpan* parent = nullptr;
    for (const TimedSpan& p : spans) {
      if (&p == &s || p.thread != s.thread || p.start > s.start || p.end < s.end) continue;
      if (parent == nullptr || p.end - p.start < parent->end - parent->start) parent = &p;
    }
    want_parents[{s.thread, s.start, s.end}] = {-1, -1};
    if (parent != nullptr) {
      want[parent->name] -= s.end - s.start;
      children[parent].push_back(&s);
      want_parents[{s.thread, s.start, s.end}] = {parent->start, parent->end};
    }
  }
  // Each span's longest stretch outside its children (the first of equals),
  // walking its children in start order.
  std::map<std::tuple<std::uint32_t, std::int64_t, std::int64_t>,
           std::pair<std::int64_t, std::int64_t>>
      want_gaps;
  for (const TimedSpan& s : spans) {
    std::vector<const TimedSpan*> in = children[&s];
    std::sort(in.begin(), in.end(), [](auto* a, auto* b) { return a->start < b->start; });
    std::pair<std::int64_t, std::int64_t> longest{0, 0};
    std::int64_t from = s.start;
    for (const TimedSpan* c : in) {
      if (c->start - from > longest.second) longest = {from, c->start - from};
      from = c->end;
    }
    if (s.end - from > longest.second) longest = {from, s.end - from};
    want_gaps[{s.thread, s.start, s.end}] = longest;
  }
  // Written in a random order, through runs of 7 spans and in one run.
  std::shuffle(spans.begin(), spans.end(), rng);
  for (std::size_t i = 0; i < spans.size(); ++i) spans[i].order = i;
  for (const std::size_t run : {std::size_t{7}, std::size_t{1} << 20}) {
    SCOPED_TRACE(run);
    SelfTime st(run);
    for (const TimedSpan& s : spans) st.add(s);
    Collect sink;
    st.finish([](std::uint32_t) { return false; }, sink);
    EXPECT_EQ(sink.calls, spans.size());
    EXPECT_EQ(sink.self, want);
    EXPECT_EQ(sink.gaps, want_gaps);
    EXPECT_EQ(sink.parents, want_parents);
    EXPECT_EQ(st.overlapping(), 0u);
    EXPECT_EQ(st.lost(), 0u);
    EXPECT_EQ(st.spilled_runs(), run == 7 ? spans.size() / 7 : 0u);
  }
}

TEST(SelfTime, IdenticalIntervalsFollowTheThreadsOrder) {
  // Three identical X slices written 0, 1, 2 inside a parent: with the
  // thread in end order the first-written is innermost (all the time), in
  // start order the last-written. Spilled runs of one span agree.
  for (const bool end_ordered : {true, false}) {
    for (const std::size_t run : {std::size_t{1}, std::size_t{100}}) {
      SelfTime st(run);
      for (std::uint32_t i = 0; i < 3; ++i) {
        TimedSpan s;
        s.start = 10;
        s.end = 20;
        s.order = i;
        s.name = i;
        s.from_x = 1;
        st.add(s);
      }
      TimedSpan parent;
      parent.start = 0;
      parent.end = 100;
      parent.order = end_ordered ? 3 : 0;
      parent.name = 9;
      parent.from_x = 1;
      st.add(parent);
      Collect sink;
      st.finish([&](std::uint32_t) { return end_ordered; }, sink);
      const std::uint32_t inner = end_ordered ? 0 : 2;
      for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(sink.self[i], i == inner ? 10 : 0) << i;
      EXPECT_EQ(sink.self[9], 90);
      // Parents: in start order each nests in the one written before it, in
      // end order in the one written after it.
      const std::map<std::uint32_t, std::uint32_t> parents =
          end_ordered ? std::map<std::uint32_t, std::uint32_t>{{0, 1}, {1, 2}, {2, 9}, {9, 99}}
                      : std::map<std::uint32_t, std::uint32_t>{{0, 9}, {1, 0}, {2, 1}, {9, 99}};
      EXPECT_EQ(sink.parent_names, parents);
    }
  }
}

Report aggregate(const std::string& trace, Aggregator::Options opt) {
  const std::string path = jitscope::testing::temp_path("aggregator_trace");
  std::ofstream(path) << trace;
  Aggregator agg(opt);
  jitscope::tools::TraceReader reader;
  jitscope::tools::EventDecoder decoder;
  jitscope::tools::DecodedEvent ev;
  std::string error;
  const bool ok = reader.read(
      path,
      [&](const jitscope::tools::RawEvent& raw) {
        if (!decoder.decode(raw, &ev, &error)) return false;
        agg.add(ev, decoder);
        return true;
      },
      nullptr, &error);
  EXPECT_TRUE(ok) << error;
  return agg.finish(path, reader.bytes_read(), reader.events(), reader.unterminated(),
                    decoder.fields_ignored(), nullptr, reader.repairs());
}

std::string be(char ph, const std::string& name, int tid, int ts) {
  return std::string(R"({"ph":")") + ph + R"(","name":")" + name + R"(","pid":1,"tid":)" +
         std::to_string(tid) + R"(,"ts":)" + std::to_string(ts) + "}";
}

TEST(AggregatorBegins, PastTheBoundBeginsAndTheirEndsAreCountedNeverMisPaired) {
  // Thread 1: b0..b4 open at 0..4 µs, closed at 5..9 with a bound of 3:
  // b3 and b4 are past it, and so the first two E's close them (ignored);
  // b2 [2, 7], b1 [1, 8], b0 [0, 9] keep their own E's. Thread 2 opens
  // c0..c2 while thread 1 holds 3: c2 is past the bound of 5 in all, and
  // its E (the first on thread 2) closes it, not c1.
  Aggregator::Options opt;
  opt.max_open_begins = 3;
  opt.max_open_begins_total = 5;
  std::string t = "[";
  for (int i = 0; i < 5; ++i) t += be('B', "b" + std::to_string(i), 1, i) + ",";
  for (int i = 0; i < 3; ++i) t += be('B', "c" + std::to_string(i), 2, 20 + i) + ",";
  for (int i = 0; i < 3; ++i) t += be('E', "", 2, 30 + i) + ",";
  for (int i = 0; i < 5; ++i) t += be('E', "", 1, 5 + i) + (i < 4 ? "," : "]");
  const Report r = aggregate(t, opt);
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> got;  // total, self
  for (const auto& n : r.names) got[n.name] = {n.total_ns, n.self_ns};
  const std::map<std::string, std::pair<std::int64_t, std::int64_t>> want = {
      {"b0", {9000, 2000}},
      {"b1", {7000, 2000}},
      {"b2", {5000, 5000}},
      {"c0", {12000, 2000}},
      {"c1", {10000, 10000}}};
  EXPECT_EQ(got, want);
  ASSERT_EQ(r.header.warnings.size(), 1u);
  EXPECT_EQ(r.header.warnings[0],
            "3 'B' events beyond 3 open on one thread or 5 on all (ignored, with their 'E')");
}

TEST(AggregatorTopSpans, UnitSlicesKeepTheirNamesAmongTheSlowest) {
  // 40 units on one thread, X slices and B/E pairs alternating, each with a
  // phase inside; walls in a shuffled order so that the slowest come late
  // and displace others. A unit slice's name is not interned unless it goes
  // into the slowest spans: those keep their whole names in both forms.
  std::vector<int> walls(40);
  for (int i = 0; i < 40; ++i) walls[static_cast<std::size_t>(i)] = 100 + 37 * ((i * 17) % 40);
  std::string t = "[";
  int ts = 0;
  std::vector<std::pair<int, std::string>> want;  // (wall, name)
  for (int i = 0; i < 40; ++i) {
    const int wall = walls[static_cast<std::size_t>(i)];
    const std::string cid = std::to_string(i) + "/0";
    const std::string name = "[" + cid + "] net__k" + std::to_string(i) + "_" + std::to_string(i);
    const std::string args = R"(,"args":{"compile_id":")" + cid + R"("}})";
    const std::string where = R"(,"pid":1,"tid":1,"ts":)";
    t +=
        R"({"ph":"X","name":"lower")" + where + std::to_string(ts + 1) + R"(,"dur":1)" + args + ",";
    if (i % 2 == 0) {
      t += R"({"ph":"X","cat":"compile_unit","name":")" + name + R"(")" + where +
           std::to_string(ts) + R"(,"dur":)" + std::to_string(wall) + args + ",";
    } else {
      t += R"({"ph":"B","cat":"compile_unit","name":")" + name + R"(")" + where +
           std::to_string(ts) + args + ",";
      t += R"({"ph":"E")" + where + std::to_string(ts + wall) + "},";
    }
    want.emplace_back(wall, name);
    ts += wall + 10;
  }
  t.back() = ']';
  Aggregator::Options opt;
  opt.top_n = 5;
  const Report r = aggregate(t, opt);
  std::sort(want.begin(), want.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  ASSERT_EQ(r.top.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.top[i].name, want[i].second) << i;
    EXPECT_EQ(r.top[i].dur_ns, want[i].first * 1000LL) << i;
  }
  // The names table has the phase only, and every unit its name.
  ASSERT_EQ(r.names.size(), 1u);
  EXPECT_EQ(r.names[0].name, "lower");
  ASSERT_EQ(r.units.size(), 40u);
  for (const auto& u : r.units) EXPECT_EQ(u.name.rfind("net__k", 0), 0u) << u.name;
}

}  // namespace

namespace {

// Units 0/0, 1/0, ... on one thread, each slice `walls_us[i]` long with one
// phase span inside it, written as the SDK writes them (the phase first). A
// wall of 0: the phase only, no unit slice (lost, or open at a crash).
std::string units_trace(const std::vector<int>& walls_us) {
  std::string t = "[";
  int ts = 0;
  for (std::size_t i = 0; i < walls_us.size(); ++i) {
    const std::string cid = R"("args":{"compile_id":")" + std::to_string(i) + R"(/0"}})";
    if (i > 0) t += ",";
    t += R"({"ph":"X","name":"phase","pid":1,"tid":1,"ts":)" + std::to_string(ts + 1) +
         R"(,"dur":1,)" + cid;
    if (walls_us[i] > 0) {
      t += R"(,{"ph":"X","cat":"compile_unit","name":"[)" + std::to_string(i) +
           R"(/0] u","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" +
           std::to_string(walls_us[i]) + "," + cid;
    }
    ts += walls_us[i] + 10;
  }
  return t + "]";
}

}  // namespace

// A report of millions of units keeps waterfalls for the slowest
// Options::waterfall_units only, whatever the order the units end in; the
// others keep their phase totals and span count, marked waterfall_dropped.
TEST(AggregatorWaterfalls, OnlyTheSlowestUnitsKeepTheirSpans) {
  const std::vector<int> walls = {300, 100, 500, 200, 400};  // 2/0 and 4/0 are the slowest
  Aggregator::Options opt;
  opt.waterfall_units = 2;
  const Report r = aggregate(units_trace(walls), opt);
  ASSERT_EQ(r.units.size(), walls.size());
  EXPECT_EQ(r.waterfall_limit, 2u);
  EXPECT_EQ(r.waterfalls_dropped, 3u);
  for (const auto& u : r.units) {
    SCOPED_TRACE(u.compile_id);
    const bool kept = u.compile_id == "2/0" || u.compile_id == "4/0";
    EXPECT_EQ(u.waterfall_dropped, !kept);
    EXPECT_EQ(u.spans.size(), kept ? 1u : 0u);
    EXPECT_EQ(u.spans_total, 1u);
    ASSERT_EQ(u.phases.size(), 1u);  // the phase table is every unit's
    EXPECT_EQ(u.phases[0].count, 1u);
  }
  opt.waterfall_units = 0;  // the text formats: no waterfall at all
  const Report none = aggregate(units_trace(walls), opt);
  EXPECT_EQ(none.waterfalls_dropped, walls.size());
  for (const auto& u : none.units) EXPECT_TRUE(u.spans.empty() && u.waterfall_dropped);
}

// Units whose own slice never comes hold their spans unweighed only up to a
// bound, the oldest letting go first: they never keep a later, slower unit
// from its waterfall.
TEST(AggregatorWaterfalls, UnitsWithoutTheirSliceNeverCrowdOutTheSlowest) {
  std::vector<int> walls(200, 0);  // 200 units with phases and no slice
  walls.push_back(100);
  walls.push_back(500);  // 201/0: the slowest
  Aggregator::Options opt;
  opt.waterfall_units = 1;
  const Report r = aggregate(units_trace(walls), opt);
  ASSERT_EQ(r.units.size(), walls.size());
  const auto& slowest = r.units.back();
  ASSERT_EQ(slowest.compile_id, "201/0");
  EXPECT_FALSE(slowest.waterfall_dropped);
  EXPECT_EQ(slowest.spans.size(), 1u);
  EXPECT_TRUE(r.units[200].waterfall_dropped);  // displaced by 201/0
  std::size_t held = 0;
  for (std::size_t i = 0; i < 200; ++i) held += r.units[i].spans.empty() ? 0 : 1;
  EXPECT_LE(held, 4u * opt.waterfall_units + 64);  // the bound on units held unweighed
  EXPECT_GT(held, 0u);                             // the newest of them still hold theirs
  EXPECT_EQ(r.waterfalls_dropped, walls.size() - 1 - held);
}
