// The flight recorder in the Perfetto form (issue 39): the window keeps
// packets in parts that each start their sequences again, so a snapshot
// decodes alone from whichever part is its oldest, and a span open across
// parts is begun once (in the oldest part's preamble) and ended once.
// Snapshots are read back with the test's own decoder (perfetto_wire.hpp),
// which rebuilds the events and checks interning, clocks and pairing; the
// files named kept_snapshot() are also checked by check_pftrace.py
// --snapshot (tests/CMakeLists.txt).
#include "flight/snapshot_load.hpp"
#include "flush/perfetto_wire.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing {
namespace {

using nlohmann::json;

std::string tmp_dir() {
  const char* dir = std::getenv("TEST_TMPDIR_FOR_JITSCOPE");
  return dir != nullptr ? dir : "/tmp";
}

// A snapshot path the conformance check knows (fixed: no pid in it).
std::string kept_snapshot(const std::string& name) {
  const std::string path = tmp_dir() + "/flight_perfetto." + name + ".pftrace";
  ::unlink(path.c_str());  // appears() waits for this run's
  return path;
}

Config flight_config(const std::string& stem, std::uint64_t window = std::uint64_t{64} << 10) {
  Config cfg = test_config(stem);
  cfg.output_path = tmp_dir() + "/" + stem + "." + std::to_string(::getpid()) + ".pftrace";
  cfg.flight_recorder_bytes = window;
  cfg.overflow = OverflowPolicy::kBlock;
  cfg.snapshot_min_interval = std::chrono::milliseconds(0);
  return cfg;
}

bool appears(const std::string& path) {
  for (int i = 0; i < 2000 && ::access(path.c_str(), F_OK) != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return ::access(path.c_str(), F_OK) == 0;
}

// The snapshot decoded, with every problem the decoder saw and every BEGIN
// it was left with (each must have had its END).
struct Decoded {
  pfwire::Reader reader;
  std::vector<json> x(const std::string& name) const {
    std::vector<json> out;
    for (const json& e : reader.of("X")) {
      if (e.value("name", "") == name) out.push_back(e);
    }
    return out;
  }
  const json* metadata(const std::string& name) const {
    for (const json& e : reader.events) {
      if (e["ph"] == "M" && e.value("name", "") == name) return &e;
    }
    return nullptr;
  }
};

void decode(const std::string& path, Decoded& d) {
  const std::string bytes = read_file(path);
  ASSERT_FALSE(bytes.empty()) << path;
  bool cut = true;
  d.reader.read(bytes, &cut);
  EXPECT_FALSE(cut) << path;
  EXPECT_TRUE(d.reader.errors.empty()) << path << ": " << d.reader.errors.front();
  for (const auto& [track, begins] : d.reader.open) {
    for (const json& b : begins) ADD_FAILURE() << path << ": a BEGIN never ended: " << b.dump();
  }
}

TEST(FlightPerfetto, ASnapshotDecodesAloneAndBeginsASpanOpenAcrossPartsOnce) {
  const Config cfg = flight_config("flight_pf_newest");
  const std::string path = kept_snapshot("newest");
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  set_thread_name("compiler-main");
  constexpr int kSpans = 20000;  // about 900 KB of packets: the window's 64 KiB many times over
  std::string unit_id;
  {
    CompileUnit unit({.frame = "long_kernel"});  // open across every part
    unit_id = unit.id().str();
    Span outer("outer", {{"k", std::int64_t{1}}});
    for (int i = 0; i < kSpans; ++i) {
      const std::string name = "w" + std::to_string(i);
      Span span{std::string_view(name), {{"n", std::int64_t{i}}}};
    }
    {
      Span inner("inner");
      // Its name's definition is pending at the snapshot (no packet of this
      // thread follows it): the END carries it.
      outer.arg("late", std::int64_t{7});
      ASSERT_TRUE(snapshot(path).ok());
      ASSERT_TRUE(appears(path));
    }
  }
  const SessionStats stats = session.finish();
  EXPECT_EQ(stats.snapshots_written, 1u);
  EXPECT_EQ(::access(cfg.output_path.c_str(), F_OK), -1) << "a flight recorder writes no trace";

  Decoded d;
  decode(path, d);
  // The newest spans, in order, none twice; the oldest gone.
  std::vector<int> got;
  for (const json& e : d.reader.of("X")) {
    const std::string name = e.value("name", "");
    if (name.size() > 1 && name[0] == 'w') {
      got.push_back(std::stoi(name.substr(1)));
      EXPECT_EQ(e["args"]["n"], got.back());
    }
  }
  ASSERT_GT(got.size(), 200u) << "the window uses its room";
  EXPECT_EQ(got.back(), kSpans - 1);
  EXPECT_GT(got.front(), 0) << "the window is bounded";
  for (std::size_t i = 1; i < got.size(); ++i) ASSERT_EQ(got[i], got[i - 1] + 1) << i;
  // Open since long before the oldest part: begun once (again, in its
  // preamble, with the args it had), ended once at the snapshot.
  for (const char* name : {"outer", "inner"}) {
    const auto spans = d.x(name);
    ASSERT_EQ(spans.size(), 1u) << name;
    EXPECT_EQ(spans[0]["args"]["incomplete"], true) << name;
  }
  const json outer = d.x("outer")[0];
  EXPECT_EQ(outer["args"]["k"], 1);
  EXPECT_EQ(outer["args"]["late"], 7) << "an arg added later, its name defined in the END";
  std::vector<json> units;
  for (const json& e : d.reader.of("X")) {
    if (e.contains("args") && e["args"].value("frame", "") == "long_kernel") units.push_back(e);
  }
  ASSERT_EQ(units.size(), 1u);
  EXPECT_EQ(units[0]["args"]["incomplete"], true);
  EXPECT_EQ(units[0]["name"].get<std::string>().rfind("[" + unit_id + "]", 0), 0u);
  EXPECT_LE(units[0]["ts_ns"].get<std::uint64_t>(), outer["ts_ns"].get<std::uint64_t>());
  EXPECT_EQ(outer["args"]["compile_id"], unit_id) << "in its unit";
  // The head: names whose own events went with the oldest parts.
  bool named = false;
  for (const auto& [uuid, track] : d.reader.tracks) named = named || track.name == "compiler-main";
  EXPECT_TRUE(named);
  const json* snap = d.metadata("jitscope_snapshot");
  ASSERT_NE(snap, nullptr);
  EXPECT_EQ((*snap)["args"]["trigger"], "api");
  EXPECT_EQ((*snap)["args"]["spans_open"], 3);
  EXPECT_GT((*snap)["args"]["bytes_dropped_from_window"].get<std::uint64_t>(), 0u);
  EXPECT_NE(d.metadata("jitscope_session"), nullptr);
}

TEST(FlightPerfetto, SnapshotsUnderLoadFromEightThreadsLoseAndRepeatNoEvent) {
  constexpr int kThreads = 8;
  // Eight full rings of 512 KiB drain into about 1.5 MiB of packets: well
  // inside the window (a bigger one only makes the decoding here slower).
  Config cfg = flight_config("flight_pf_load", (std::uint64_t{4} << 20) / kLoadSizeDivisor);
  cfg.ring_capacity = kLoadRingCapacity;
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  LoadSnapshots run;
  // "life": open on every thread across every part.
  snapshots_under_load(
      kThreads, /*life_span=*/true, [](int k) { return kept_snapshot("load" + std::to_string(k)); },
      run);
  session.finish();
  for (std::size_t k = 0; k < run.paths.size(); ++k) {
    SCOPED_TRACE(run.paths[k]);
    Decoded d;
    decode(run.paths[k], d);
    std::vector<std::vector<std::int64_t>> seen(kThreads);
    for (const json& e : d.x("load")) {
      // A span open at the snapshot may not have its args yet: not counted.
      if (!e.contains("args") || !e["args"].contains("i")) continue;
      seen[e["args"]["t"].get<int>()].push_back(e["args"]["i"].get<std::int64_t>());
    }
    expect_each_thread_whole(seen, run.made_at_request[k]);
    EXPECT_EQ(d.x("life").size(), static_cast<std::size_t>(kThreads)) << "one per thread, once";
  }
}

TEST(FlightPerfetto, ASlowUnitsAlarmSnapshotHoldsTheUnit) {
  Config cfg = flight_config("flight_pf_slow");
  cfg.snapshot_slow_unit = std::chrono::milliseconds(30);
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  for (int i = 0; i < 3000; ++i) {
    CompileUnit unit({.frame = "fast_kernel"});
    JITSCOPE_PHASE("lower");
  }
  {
    CompileUnit unit({.frame = "slow_kernel"});
    JITSCOPE_PHASE("lower");
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  const std::string out = cfg.output_path;
  const std::string path =
      out.substr(0, out.size() - 8) + ".snapshot." + std::to_string(::getpid()) + ".1.pftrace";
  ASSERT_TRUE(appears(path)) << path;
  session.finish();
  Decoded d;
  decode(path, d);
  const json* snap = d.metadata("jitscope_snapshot");
  ASSERT_NE(snap, nullptr);
  EXPECT_NE((*snap)["args"]["trigger"].get<std::string>().find("slow compile unit ["),
            std::string::npos);
  bool slow = false;
  for (const json& e : d.reader.of("X")) {
    slow = slow || (e.contains("args") && e["args"].value("frame", "") == "slow_kernel");
  }
  EXPECT_TRUE(slow) << "the slow unit's slice is in its snapshot";
}

}  // namespace
}  // namespace jitscope::testing
