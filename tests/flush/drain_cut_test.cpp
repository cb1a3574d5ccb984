// The trace does not depend on where the flusher's drains cut the ring's
// records. Drained one record at a time, every group is decoded alone (a
// dynamic name's bytes come in later drains) and no Begin is ever seen with
// its End, so no span takes the leaf path (TraceWriter::write_leaf); drained
// whole, most do. Both must give the same events, in the same order, with
// the same counts, in both forms, under a cap, with rotation, and with spans
// left open at the end: the same bytes in each thread's packets or JSON
// lines, and the same events decoded. The streams are random: nesting (past
// the recorded depth too), leaves, args on inner and outer spans, units,
// instants with args, counters, captured NVTX ranges, dynamic and long
// names, enough names for ids past one byte, ties and times that go back.
#include "flush/perfetto_wire.hpp"
#include "flush/record_support.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace jitscope::detail {
namespace {

using nlohmann::json;

const char* const kNames[] = {"parse", "optimize", "a", "q\"uote",
                              "a static name long enough to pass the stack's sixty-four bytes "
                              "of a JSON span's name"};
const char* const kKeys[] = {"n", "size", "k3"};

// 300 more static names: their ids pass 127 (one varint byte).
const std::vector<std::string>& many_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (int i = 0; i < 300; ++i) out.push_back("name " + std::to_string(i));
    return out;
  }();
  return names;
}

struct Shape {
  bool many_names = false;
  std::size_t max_depth = 12;
};

std::vector<Record> random_stream(std::uint32_t seed, std::size_t records, Shape shape = {}) {
  std::mt19937 rng(seed);
  Records r;
  std::uint64_t t = 5'000'000'000'000;
  std::size_t depth = 0;
  auto pick = [&](auto& array) { return array[rng() % std::size(array)]; };
  auto name = [&] {
    return shape.many_names && rng() % 2 == 0 ? many_names()[rng() % 300].c_str() : pick(kNames);
  };
  auto index = [](std::size_t d) {
    return static_cast<std::uint8_t>(std::min<std::size_t>(d, 255));
  };
  while (r.r.size() < records) {
    const unsigned roll = rng() % 100;
    t += roll < 90 ? rng() % 50 : 0;  // ties
    if (roll >= 97) t -= 7;           // a clock that went back
    if (shape.max_depth > 12 && rng() % 3 == 0 && depth < shape.max_depth) {
      r.begin(t, name(), index(depth));  // deep: more begins than ends
      ++depth;
    } else if (roll < 35 && depth < shape.max_depth) {
      const unsigned kind = rng() % 20;
      const std::uint8_t flags = kind == 0   ? kFlagUnit
                                 : kind == 1 ? kFlagPhase
                                 : kind == 2 ? kFlagTruncated
                                             : 0;
      r.begin(t, name(), index(depth), flags, (std::uint64_t{rng() % 3} << 32) | (rng() % 2));
      ++depth;
    } else if (roll < 70 && depth > 0) {
      r.end(t);
      --depth;
    } else if (roll < 80 && depth > 0) {
      r.arg_int(index(rng() % 2 == 0 ? depth - 1 : rng() % depth), pick(kKeys),
                static_cast<std::int64_t>(rng()) - (1 << 30));
    } else if (roll < 83 && depth > 0) {
      r.arg_string(index(depth - 1), "s", "text \"with\" quotes");
    } else if (roll < 87) {
      const std::uint8_t args = static_cast<std::uint8_t>(rng() % 3);
      r.instant(t, name(), args);
      for (std::uint8_t i = 0; i < args; ++i) r.arg_int(i, pick(kKeys), i);
    } else if (roll < 90) {
      r.counter(t, pick(kNames), static_cast<double>(rng() % 1000) / 8);
    } else if (roll < 93 && depth < shape.max_depth) {
      r.begin_dyn(t, "dynamic " + std::to_string(rng() % 5), index(depth));
      ++depth;
    } else if (roll < 95) {  // an NVTX range captured as it ended: it may end after `t`
      r.captured(CapturedKind::kRange, t - rng() % 40, t + rng() % 40, name());
    }
  }
  return r.r;
}

// The packets of a protobuf file on the threads' sequences (the process's,
// 1, holds the head, whose values are the writer's clock), whole.
std::vector<std::string_view> thread_packets(std::string_view file) {
  using testing::pfwire::Field;
  std::vector<std::string_view> out;
  std::vector<Field> packets, fields;
  EXPECT_TRUE(testing::pfwire::fields_of(file, packets));
  for (const Field& packet : packets) {
    EXPECT_TRUE(testing::pfwire::fields_of(packet.bytes, fields));
    for (const Field& f : fields) {
      if (f.number == pf::packet::kTrustedPacketSequenceId && f.value >= 2)
        out.push_back(packet.bytes);
    }
  }
  return out;
}

// A JSON file's lines, but the stats' (the writer's clock).
std::vector<std::string_view> json_lines(std::string_view file) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0; at < file.size();) {
    const std::size_t end = std::min(file.find('\n', at), file.size());
    const std::string_view line = file.substr(at, end - at);
    if (line.find("\"jitscope_stats\"") == std::string_view::npos) out.push_back(line);
    at = end + 1;
  }
  return out;
}

void expect_same_traces(const std::vector<Record>& records, Options o, const std::string& what) {
  SCOPED_TRACE(what);
  o.batch = 1;
  const WrittenTrace apart = write_trace(records, o);
  o.batch = records.size();
  const WrittenTrace whole = write_trace(records, o);
  EXPECT_EQ(whole.files.size(), apart.files.size());
  EXPECT_EQ(whole.events, apart.events);
  EXPECT_EQ(whole.over_cap, apart.over_cap);
  EXPECT_EQ(whole.incomplete, apart.incomplete);
  EXPECT_EQ(whole.decode_errors, apart.decode_errors);
  const std::vector<json> a = events_of(apart, o.perfetto), b = events_of(whole, o.perfetto);
  ASSERT_EQ(b.size(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(b[i], a[i]) << "event " << i;
  for (std::size_t f = 0; f < std::min(whole.files.size(), apart.files.size()); ++f) {
    const auto x = o.perfetto ? thread_packets(apart.files[f]) : json_lines(apart.files[f]);
    const auto y = o.perfetto ? thread_packets(whole.files[f]) : json_lines(whole.files[f]);
    ASSERT_EQ(y.size(), x.size()) << "file " << f;
    for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(y[i], x[i]) << "file " << f << ", " << i;
  }
}

// The test is one thread, so the tsan build leaves it out (ONE_THREAD in
// tests/CMakeLists.txt): every build that runs it runs all the streams.
constexpr std::uint32_t kSeeds = 12;

TEST(DrainCut, WholeDrainsWriteWhatOneRecordAtATimeWrites) {
  for (std::uint32_t seed = 1; seed <= kSeeds; ++seed) {
    Shape shape;
    shape.many_names = seed % 3 == 1;
    shape.max_depth = seed % 4 == 3 ? 300 : 12;
    const std::vector<Record> records = random_stream(seed, 1500, shape);
    for (const bool perfetto : {false, true}) {
      Options o;
      o.perfetto = perfetto;
      o.close_at = 6'000'000'000'000;
      const std::string form = perfetto ? " perfetto" : " json";
      expect_same_traces(records, o, "seed " + std::to_string(seed) + form);
      Options capped = o;
      capped.max_bytes = 8 * 1024 + (seed % 4) * 4096;  // the head, the stats, a few events
      expect_same_traces(records, capped, "capped, seed " + std::to_string(seed) + form);
      Options rotated = o;
      rotated.rotate = 4096;
      expect_same_traces(records, rotated, "rotated, seed " + std::to_string(seed) + form);
    }
  }
}

// A string arg's bytes fill the slots after its record; where they spell
// an End (its kind at the kind's offset, no flags), they must still be
// read as the arg's text, not taken for the span's End by the leaf path.
TEST(DrainCut, AStringArgsBytesAreNeverTakenForItsSpansEnd) {
  std::string text(sizeof(Record), 'x');
  text[offsetof(Record, kind)] = static_cast<char>(RecordKind::kEnd);
  text[offsetof(Record, flags)] = 0;
  Records r;
  const std::uint64_t t = 5'000'000'000'000;
  r.begin(t, "parent", 0);
  r.begin(t + 10, "leaf", 1);
  r.arg_string(1, "s", text);
  r.end(t + 20);
  r.end(t + 30);
  for (const bool perfetto : {false, true}) {
    Options o;
    o.perfetto = perfetto;
    expect_same_traces(r.r, o, perfetto ? "perfetto" : "json");
    std::vector<json> spans;
    for (const json& e : events_of(write_trace(r.r, o), perfetto)) {
      if (e["ph"] == "X") spans.push_back(e);
    }
    ASSERT_EQ(spans.size(), 2u);
    EXPECT_EQ(spans[0]["name"], "leaf");
    EXPECT_EQ(spans[0]["args"]["s"], text);
  }
}

}  // namespace
}  // namespace jitscope::detail
