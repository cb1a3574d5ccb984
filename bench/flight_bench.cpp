// The flight recorder's budgets (issue 39, docs/performance.md): the
// flusher's CPU and the process's memory while 4 threads record spans at a
// paced rate into a window, and a snapshot of the full window: its time to
// a file and the longest span begin on the recording threads while it is
// written, against the same measure with no snapshot.
//
//   jitscope_flight_bench [--seconds S] [--rate SPANS_PER_S] [--window-mib M]
//                         [--form json|perfetto]   (default: perfetto)
//
// A plain program, not a Google Benchmark case: one long paced run, one
// table. The session is this process's own (no JITSCOPE_* variables).
#include <jitscope/jitscope.hpp>

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kThreads = 4;

std::int64_t rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// CPU seconds of the thread named `name` (/proc/self/task/*/comm).
double thread_cpu_s(const char* name) {
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) return -1;
  double out = -1;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + e->d_name;
    std::ifstream comm(task + "/comm");
    std::string c;
    std::getline(comm, c);
    if (c != name) continue;
    std::ifstream stat(task + "/stat");
    std::string text;
    std::getline(stat, text);
    // Fields after the ")" of comm: state is 3rd, utime 14th, stime 15th.
    const std::size_t close = text.rfind(')');
    std::vector<std::string> fields;
    std::size_t at = close + 2;
    while (at < text.size()) {
      const std::size_t sp = text.find(' ', at);
      fields.push_back(text.substr(at, sp - at));
      if (sp == std::string::npos) break;
      at = sp + 1;
    }
    if (fields.size() > 12) {
      const double ticks = std::atof(fields[11].c_str()) + std::atof(fields[12].c_str());
      out = ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
    }
  }
  ::closedir(d);
  return out;
}

long involuntary_switches() {
  struct rusage u {};
  return ::getrusage(RUSAGE_THREAD, &u) == 0 ? u.ru_nivcsw : -1;
}

void raise_to(std::atomic<std::int64_t>& max, std::int64_t v) {
  std::int64_t seen = max.load(std::memory_order_relaxed);
  while (v > seen && !max.compare_exchange_weak(seen, v)) {
  }
}

struct Producers {
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> made{0};
  // The longest span begin (ns) since the last reset, over all threads;
  // and over the batches during which the thread was not preempted (no
  // involuntary context switch): on 2 vCPUs a writing flusher takes one
  // core, and a preempted thread's begin measures the scheduler.
  std::atomic<std::int64_t> worst_begin_ns{0};
  std::atomic<std::int64_t> worst_unpreempted_ns{0};
  std::vector<std::thread> threads;

  void run(double rate) {
    const double per_thread = rate / kThreads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([this, per_thread, t] {
        jitscope::set_thread_name("producer " + std::to_string(t));
        const auto start = Clock::now();
        std::uint64_t n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          // Paced per millisecond: the spans due by now, then a sleep.
          const double due_s = std::chrono::duration<double>(Clock::now() - start).count();
          const auto due = static_cast<std::uint64_t>(due_s * per_thread);
          std::int64_t worst = 0;
          const long switches = involuntary_switches();
          for (; n < due; ++n) {
            const auto t0 = Clock::now();
            JITSCOPE_SPAN_ARGS("flight.bench", {"i", static_cast<std::int64_t>(n)});
            const std::int64_t ns =
                std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
            worst = std::max(worst, ns);
          }
          raise_to(worst_begin_ns, worst);
          if (involuntary_switches() == switches) raise_to(worst_unpreempted_ns, worst);
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        made.fetch_add(n, std::memory_order_relaxed);
      });
    }
  }
  void join() {
    stop.store(true);
    for (std::thread& t : threads) t.join();
  }
};

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10;
  double rate = 1e6;
  std::uint64_t window_mib = 64;
  std::string form = "perfetto";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--form") == 0) form = argv[i + 1];
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--rate") == 0) rate = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--window-mib") == 0)
      window_mib = std::strtoull(argv[i + 1], nullptr, 10);
  }
  char dir_template[] = "/tmp/jitscope_flight_bench.XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) return 1;
  jitscope::Config cfg;
  if (form != "json" && form != "perfetto") {
    std::fprintf(stderr, "flight_bench: --form is json or perfetto, not %s\n", form.c_str());
    return 2;
  }
  const std::string ext = form == "json" ? ".json" : ".pftrace";
  cfg.output_path = std::string(dir) + "/trace" + ext;
  cfg.flight_recorder_bytes = window_mib << 20;
  cfg.snapshot_min_interval = std::chrono::milliseconds(0);
  cfg.cupti = jitscope::CuptiMode::kOff;
  const std::int64_t rss_before = rss_kib();
  if (const jitscope::Status st = jitscope::start(cfg); !st) {
    std::fprintf(stderr, "flight_bench: %s\n", st.message().c_str());
    return 1;
  }
  Producers producers;
  producers.run(rate);

  // Steady state: the flusher's CPU, and RSS once a second.
  const double cpu0 = thread_cpu_s("jitscope-flush");
  const auto t0 = Clock::now();
  std::vector<std::int64_t> rss;
  while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    rss.push_back(rss_kib());
  }
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = thread_cpu_s("jitscope-flush") - cpu0;

  // The same 2 s measured with no snapshot, then with one.
  producers.worst_begin_ns.store(0);
  producers.worst_unpreempted_ns.store(0);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const std::int64_t worst_quiet = producers.worst_begin_ns.exchange(0);
  const std::int64_t worst_quiet_own = producers.worst_unpreempted_ns.exchange(0);
  const std::string snap = std::string(dir) + "/snap" + ext;
  const auto s0 = Clock::now();
  (void)jitscope::snapshot(snap);
  while (!exists(snap) && Clock::now() - s0 < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const double snap_s = std::chrono::duration<double>(Clock::now() - s0).count();
  std::this_thread::sleep_for(std::chrono::seconds(2) - (Clock::now() - s0));
  const std::int64_t worst_snap = producers.worst_begin_ns.load();
  const std::int64_t worst_snap_own = producers.worst_unpreempted_ns.load();

  producers.join();
  jitscope::SessionStats stats;
  (void)jitscope::stop(&stats);
  std::ifstream f(snap, std::ios::ate | std::ios::binary);
  const auto snap_bytes = static_cast<std::uint64_t>(f.tellg());

  // Growth over the second half of the run, per minute.
  const std::size_t half = rss.size() / 2;
  const double half_s = static_cast<double>(rss.size() - half);
  const double growth_per_min =
      rss.size() >= 4 ? static_cast<double>(rss.back() - rss[half]) / half_s * 60.0 : 0;
  const auto [lo, hi] = std::minmax_element(rss.begin() + static_cast<long>(half), rss.end());
  std::printf("window                      %llu MiB, %s form\n",
              static_cast<unsigned long long>(window_mib), form.c_str());
  std::printf("spans made                  %llu (%.0f/s asked, %d threads), %llu dropped\n",
              static_cast<unsigned long long>(producers.made.load()), rate, kThreads,
              static_cast<unsigned long long>(stats.events_dropped));
  std::printf("flusher CPU                 %.2f s of %.1f s: %.1f %% of one core\n", cpu, wall,
              100.0 * cpu / wall);
  std::printf(
      "RSS                         %lld KiB before start; second half %lld to %lld KiB, "
      "%+.0f KiB/min\n",
      static_cast<long long>(rss_before), static_cast<long long>(*lo), static_cast<long long>(*hi),
      growth_per_min);
  std::printf("snapshot                    %.3f s to a file of %.1f MiB\n", snap_s,
              static_cast<double>(snap_bytes) / (1 << 20));
  std::printf(
      "longest span begin          %.3f ms in 2 s with a snapshot, %.3f ms in 2 s "
      "without\n",
      static_cast<double>(worst_snap) / 1e6, static_cast<double>(worst_quiet) / 1e6);
  std::printf("  in batches not preempted  %.3f ms with a snapshot, %.3f ms without\n",
              static_cast<double>(worst_snap_own) / 1e6,
              static_cast<double>(worst_quiet_own) / 1e6);
  std::string cleanup = std::string("rm -rf ") + dir;
  return std::system(cleanup.c_str()) == 0 ? 0 : 1;
}
