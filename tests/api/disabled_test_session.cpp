// The enabled half of disabled_test: see disabled_test_session.hpp.
#include "disabled_test_session.hpp"

#include "trace_support.hpp"

#include <jitscope/compile.hpp>

namespace jitscope::testing::enabled {

std::string temp_file(const std::string& stem) { return temp_path(stem); }

std::string start_session(const std::string& stem) {
  const Config cfg = test_config(stem);
  const Status st = start(cfg);
  EXPECT_TRUE(st.ok()) << st.message();
  return st.ok() ? cfg.output_path : std::string();
}

bool session_active() { return active(); }

std::uint64_t stop_session() {
  SessionStats stats;
  const Status st = stop(&stats);
  EXPECT_TRUE(st.ok()) << st.message();
  return stats.events_written;
}

std::size_t count_events(const std::string& path, const std::string& ph) {
  return events_with_ph(load_trace(path), ph).size();
}

std::size_t compile_records() { return recent_compile_records().size(); }
std::size_t phase_keys() { return phase_times().size(); }

}  // namespace jitscope::testing::enabled
