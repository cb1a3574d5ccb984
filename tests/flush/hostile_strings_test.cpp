// Hostile bytes as span names, instant names, counter names, thread names and
// string args, through ring -> flusher -> file -> a real JSON parser.
// Not covered: the escaper's full byte-level table (json_writer_test).
#include "trace_support.hpp"

#include <thread>

namespace jitscope::testing {
namespace {

using nlohmann::json;

struct Hostile {
  std::string input;
  std::string expected;  // what a JSON parser must read back
};

const std::string kFffd = "\xEF\xBF\xBD";

std::vector<Hostile> hostile_table() {
  std::vector<Hostile> t = {
      {"plain", "plain"},
      {"quote \" inside", "quote \" inside"},
      {"back\\slash", "back\\slash"},
      {"new\nline\ttab\rcr", "new\nline\ttab\rcr"},
      {std::string("nul\0inside", 10), std::string("nul\0inside", 10)},
      {"\x01\x02\x1f\x7f", "\x01\x02\x1f\x7f"},
      {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80", "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80"},
      {"lone \x80 continuation", "lone " + kFffd + " continuation"},
      {"overlong \xC0\xAF", "overlong " + kFffd + kFffd},
      {"truncated \xE2\x82", "truncated " + kFffd},
      {"surrogate \xED\xA0\x80", "surrogate " + kFffd + kFffd + kFffd},
      {"too big \xF4\x90\x80\x80", "too big " + kFffd + kFffd + kFffd + kFffd},
      {"\xFF\xFE", kFffd + kFffd},
      {"", ""},
  };
  std::string all;
  for (int c = 0; c < 0x20; ++c) all.push_back(static_cast<char>(c));
  t.push_back({all, all});
  return t;
}

TEST(HostileStrings, EveryKindOfNameAndStringArgRoundTrips) {
  const auto table = hostile_table();
  Config cfg = test_config("hostile");
  cfg.overflow = OverflowPolicy::kBlock;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  for (std::size_t i = 0; i < table.size(); ++i) {
    Span s(table[i].input);
    s.arg("index", static_cast<std::int64_t>(i));
    s.arg("value", table[i].input);
    instant(table[i].input, {{"index", static_cast<std::int64_t>(i)}});
    counter(table[i].input, static_cast<double>(i));
  }
  std::thread([&] {
    set_thread_name(table[7].input);
    { JITSCOPE_SPAN("named"); }
  }).join();
  session.finish();

  const json trace = load_trace(session.path());  // throws if anything is malformed
  std::map<std::int64_t, json> spans, instants;
  for (const auto& e : events_with_ph(trace, "X")) {
    if (e.contains("args")) spans[e["args"]["index"].get<std::int64_t>()] = e;
  }
  for (const auto& e : events_with_ph(trace, "I")) {
    instants[e["args"]["index"].get<std::int64_t>()] = e;
  }
  std::map<double, json> counters;
  for (const auto& e : events_with_ph(trace, "C")) {
    counters[e["args"]["value"].get<double>()] = e;
  }
  ASSERT_EQ(spans.size(), table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto idx = static_cast<std::int64_t>(i);
    EXPECT_EQ(spans[idx]["name"].get<std::string>(), table[i].expected) << "row " << i;
    EXPECT_EQ(spans[idx]["args"]["value"].get<std::string>(), table[i].expected) << "row " << i;
    EXPECT_EQ(instants[idx]["name"].get<std::string>(), table[i].expected) << "row " << i;
    EXPECT_EQ(counters[static_cast<double>(i)]["name"].get<std::string>(), table[i].expected)
        << "row " << i;
  }
  bool found = false;
  for (const auto& [tid, name] : thread_names(trace)) found = found || name == table[7].expected;
  EXPECT_TRUE(found);
}

TEST(HostileStrings, OneMegabyteNamesAndArgsRoundTrip) {
  // Valid UTF-8 with every escape-worthy ASCII byte mixed in.
  std::string big;
  big.reserve(1000000);
  const std::string piece = "ab\"\\\n\x01 \xC3\xA9\xE2\x82\xAC\xF0\x9F\x9A\x80";
  while (big.size() + piece.size() <= 1000000) big += piece;
  while (big.size() < 1000000) big.push_back('z');
  ASSERT_EQ(big.size(), 1000000u);

  Config cfg = test_config("big");
  cfg.overflow = OverflowPolicy::kBlock;  // default 65536-slot ring fits 1 MB strings
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  {
    Span s(big);
    s.arg("payload", big);
  }
  const SessionStats stats = session.finish();
  const json trace = load_trace(session.path());
  const auto xs = events_with_ph(trace, "X");
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_TRUE(xs[0]["name"].get<std::string>() == big);
  EXPECT_TRUE(xs[0]["args"]["payload"].get<std::string>() == big);
  EXPECT_FALSE(xs[0]["args"].contains("jitscope_truncated"));
  EXPECT_GT(stats.bytes_written, 2000000u);
}

TEST(HostileStrings, StringsLongerThanHalfTheRingAreTruncatedAndMarked) {
  Config cfg = test_config("truncate");
  cfg.ring_capacity = 1024;  // 16 KiB of payload at most per string
  cfg.overflow = OverflowPolicy::kBlock;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok());
  const std::string big(100000, 'x');
  { Span s(big); }
  session.finish();
  const json trace = load_trace(session.path());
  const auto xs = events_with_ph(trace, "X");
  ASSERT_EQ(xs.size(), 1u);
  EXPECT_EQ(xs[0]["name"].get<std::string>(), std::string(512 * 32, 'x'));
  EXPECT_EQ(xs[0]["args"]["jitscope_truncated"], true);
  const json* st = metadata(trace, "jitscope_stats");
  ASSERT_NE(st, nullptr);
  EXPECT_EQ((*st)["args"]["strings_truncated"], 1);
}

}  // namespace
}  // namespace jitscope::testing
