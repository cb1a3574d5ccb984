// The compile records' way to the metrics file (compile/record.cpp): a
// burst of units between two flusher cycles keeps every record (the queue
// wakes the flusher; it used to drop past 65,536 lines, saying one line and
// counting nothing), and records past the queue's byte bound are counted
// as dropped in SessionStats and the trace's jitscope_stats.
// Not covered: the record's fields (compile_unit_test), a full disk under
// the metrics file (full_disk_test).
#include "compile/state.hpp"
#include "trace_support.hpp"

#include <jitscope/compile.hpp>

#include <chrono>
#include <fstream>
#include <thread>

namespace jitscope::testing {
namespace {

std::size_t lines_in(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.empty() ? 0 : 1;
  return n;
}

// The flusher sleeps its whole interval (a minute) unless something wakes it:
// only the queue's own wake-ups drain it while the units close.
Config slow_flusher_config(const std::string& stem) {
  Config cfg = test_config(stem);
  cfg.metrics_path = temp_path(stem + ".metrics");
  cfg.flush_interval = std::chrono::milliseconds(60'000);
  return cfg;
}

TEST(MetricsQueue, ABurstOfUnitsBetweenTwoFlushesKeepsEveryRecord) {
  reset_compile_state();
  const Config cfg = slow_flusher_config("metrics_burst");
  constexpr int kThreads = 2;
  constexpr int kUnitsPerThread = 50'000;  // 100,000: past the old 65,536-line queue
  SessionStats stats;
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([] {
        for (int i = 0; i < kUnitsPerThread; ++i) CompileUnit unit({.frame = "burst"});
      });
    }
    for (std::thread& t : threads) t.join();
    stats = session.finish();
  }
  constexpr std::size_t kUnits = std::size_t{kThreads} * kUnitsPerThread;
  EXPECT_EQ(stats.compile_records_dropped, 0u);
  EXPECT_EQ(stats.compile_records_written, kUnits);
  EXPECT_EQ(lines_in(cfg.metrics_path), kUnits);
  ::unlink(cfg.metrics_path.c_str());
}

// Past the byte bound (64 MiB waiting), records are dropped and counted,
// never lost silently: lines written + dropped = records made, in the
// session's stats and the trace's.
TEST(MetricsQueue, RecordsPastTheBoundAreCountedWhereTheOtherDropsAre) {
  reset_compile_state();
  const Config cfg = slow_flusher_config("metrics_bound");
  constexpr std::size_t kRecords = 1100;  // 64 KiB each: ~69 MiB, fewer than a wake's 4,096
  SessionStats stats;
  StderrCapture err;
  {
    ScopedSession session(cfg);
    ASSERT_TRUE(session.status().ok()) << session.status().message();
    CompileRecord big;
    big.name = "big";
    big.unit_key = "big";
    Field padding;
    padding.value = FieldValue(std::string(64 << 10, 'x'));
    big.fields.emplace("padding", padding);
    for (std::size_t i = 0; i < kRecords; ++i) detail::finish_record(big);
    stats = session.finish();
  }
  EXPECT_GT(stats.compile_records_dropped, 0u);
  EXPECT_EQ(stats.compile_records_written + stats.compile_records_dropped, kRecords);
  EXPECT_EQ(lines_in(cfg.metrics_path), stats.compile_records_written);
  const nlohmann::json trace = load_trace(cfg.output_path);
  const nlohmann::json* meta = metadata(trace, "jitscope_stats");
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ((*meta)["args"]["compile_records_dropped"], stats.compile_records_dropped);
  EXPECT_NE(err.text().find("compile_records_dropped"), std::string::npos) << err.text();
  ::unlink(cfg.metrics_path.c_str());
}

}  // namespace
}  // namespace jitscope::testing
