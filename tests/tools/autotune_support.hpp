// A real tuning session, and the figures its trace's instants hold, for the
// tests of the autotune section (report_autotune_test) and of the metrics
// record (autotune_record_test): the expected figures are read from the
// instants with nlohmann, not by the code under test.
#pragma once

#include "report_support.hpp"
#include "trace_support.hpp"

#include <jitscope/autotune.hpp>
#include <jitscope/compile.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::testing::report {

// The instants a trace holds for its tuning session: per trial, its
// steps' sums and its last step's end; and the session's start, end and
// winner.
struct Written {
  std::map<int, long long> compile, benchmark;
  std::map<int, long long> last_end;
  long long start = -1, end = -1;
  int winner = -1, trials = 0;
};

inline Written read_written(const json& events) {
  Written w;
  for (const json& e : events) {
    const std::string ph = e.value("ph", "");
    if (!e.contains("name") || (ph != "i" && ph != "I")) continue;
    const std::string name = e["name"];
    const json args = e.value("args", json::object());
    const long long ts = ns_of(e["ts"]);
    if (name == "autotune_start") w.start = ts;
    if (name == "autotune_end") w.end = ts;
    if (name == "autotune_trial") ++w.trials;
    if (name == "autotune_winner") w.winner = args["trial"];
    if (name != "autotune_step") continue;
    const int trial = args["trial"];
    (args["step"] == "compile" ? w.compile : w.benchmark)[trial] += args["ns"].get<long long>();
    w.last_end[trial] = std::max(w.last_end[trial], ts);
  }
  return w;
}

// A real session under `cfg`: three trials benchmarked on this thread;
// trials 0 and 1 compiled here, trial 2 as a compile unit on another thread
// (as a pool would, before the benchmarks); trial 1 wins. The compile id of
// trial 2's unit goes to `*unit_id` when given.
inline void run_tuning(const Config& cfg, CompileId* unit_id = nullptr) {
  reset_compile_state();
  ScopedSession session(cfg);
  ASSERT_TRUE(session.status().ok()) << session.status().message();
  const auto busy = [](int us) { std::this_thread::sleep_for(std::chrono::microseconds(us)); };
  Autotune tune("gemm");
  std::vector<AutotuneTrial> trials;
  for (int block : {64, 128, 256}) {
    trials.push_back(tune.trial({{"block", block}, {"fast_math", block > 64}}));
  }
  for (int i = 0; i < 2; ++i) {
    auto c = trials[i].compile();
    busy(300 * (i + 1));
  }
  CompileId id;
  std::thread([&] {
    CompileUnit unit({.frame = "gemm_256"});
    busy(500);
    id = unit.id();
  }).join();
  trials[2].compiled_by(id);
  if (unit_id != nullptr) *unit_id = id;
  for (int i = 0; i < 3; ++i) {
    {
      auto b = trials[i].benchmark();
      busy(200);
    }
    trials[i].result(10.0 - i);
  }
  tune.winner(trials[1]);
}

}  // namespace jitscope::testing::report
