// The runs' sessions (see bench_support.hpp): a fresh session per run with
// its flusher's thread found, a teardown that checks nothing was lost, and
// the disabled twins' runs without a session.
#include "bench_support.hpp"

#if defined(JITSCOPE_BENCH_HAS_CUPTI)
#include "cupti/cupti.hpp"  // cupti_simulate_for_testing
#endif

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

namespace jitscope::bench {

std::atomic<bool> g_failed{false};          // main's exit status
std::unique_ptr<std::barrier<>> g_barrier;  // one per run, sized to its threads

namespace {

void StartBarrier(const benchmark::State& state) {
  g_barrier = std::make_unique<std::barrier<>>(state.threads());
}

// The session's flusher thread, found as the one thread start() added; 0 if
// that could not be told.
std::atomic<int> g_flusher_tid{0};

std::vector<int> TaskIds() {
  std::vector<int> ids;
  if (DIR* dir = ::opendir("/proc/self/task")) {
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] != '.') ids.push_back(std::atoi(e->d_name));
    }
    ::closedir(dir);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The collector the current run's session was started with.
CollectorSetup g_collector = CollectorSetup::kOff;

}  // namespace

bool FlusherIdle() {
  const int tid = g_flusher_tid.load(std::memory_order_relaxed);
  if (tid == 0) return true;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return true;
  char buf[512];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close = std::strrchr(buf, ')');  // "tid (comm) S ..."
  return close == nullptr || close[1] == '\0' || close[2] != 'R';
}

void StartSession(const benchmark::State& state, bool nvtx_emit, CollectorSetup collector) {
  (void)jitscope::stop();  // e.g. a JITSCOPE_TRACE session: each run has its own
  const std::vector<int> before = TaskIds();
  jitscope::Config cfg;
  cfg.nvtx_emit = nvtx_emit;
  cfg.output_path = "/dev/null";  // the writer's real work, no disk
  cfg.ring_capacity = kRingCapacity;
  cfg.flush_interval = kFlushInterval;
  cfg.overflow = jitscope::OverflowPolicy::kDrop;
  cfg.process_name = "jitscope_bench";
  g_collector = collector;
  cfg.cupti = jitscope::CuptiMode::kOff;
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
  if (collector == CollectorSetup::kSimulated) {
    cfg.cupti = jitscope::CuptiMode::kOn;
    jitscope::detail::cupti_simulate_for_testing(true);
  }
#endif
  if (!jitscope::start(cfg)) g_failed = true;  // the body sees no session and says so
#if defined(JITSCOPE_BENCH_HAS_CUPTI)
  jitscope::detail::cupti_simulate_for_testing(false);  // read by start() only
#endif
  std::vector<int> added;
  const std::vector<int> after = TaskIds();
  std::set_difference(after.begin(), after.end(), before.begin(), before.end(),
                      std::back_inserter(added));
  g_flusher_tid = added.size() == 1 ? added[0] : 0;
  StartBarrier(state);
}
// Every case runs without NVTX emission except BM_SpanNvtx*.
void SessionOn(const benchmark::State& state) { StartSession(state, false); }
void SessionOnNvtx(const benchmark::State& state) { StartSession(state, true); }

// Teardown of a case that traces: the session's own totals must show no loss.
void SessionOff(const benchmark::State&) {
  jitscope::SessionStats stats;
  if (jitscope::Status st = jitscope::stop(&stats); !st) {
    std::fprintf(stderr, "jitscope_bench: stop failed: %s\n", st.message().c_str());
    g_failed = true;
  }
  if (stats.events_dropped != 0) {
    std::fprintf(stderr, "jitscope_bench: %llu events dropped in a run\n",
                 static_cast<unsigned long long>(stats.events_dropped));
    g_failed = true;
  }
  if (stats.cupti_on != (g_collector == CollectorSetup::kSimulated)) {
    std::fprintf(stderr, "jitscope_bench: the CUPTI collector was %s, not %s\n",
                 stats.cupti_on ? "on" : "off", stats.cupti_on ? "off" : "on (simulated)");
    g_failed = true;
  }
  g_collector = CollectorSetup::kOff;
  g_flusher_tid = 0;
  g_barrier.reset();
}

// Setup/Teardown of a disabled twin: compiled in, no session.
void NoSession(const benchmark::State& state) {
  (void)jitscope::stop();
  StartBarrier(state);
}
void NoSessionEnd(const benchmark::State&) { g_barrier.reset(); }

}  // namespace jitscope::bench
