// The session: start/stop, the flusher thread, the output file, the
// JITSCOPE_TRACE autostart and fork handling.
#include "immortal.hpp"
#include "clock.hpp"
#include "compile_state.hpp"
#include "crash_handler.hpp"
#include "cupti.hpp"
#include "file_sink.hpp"
#include "gpu_trace.hpp"
#include "json_writer.hpp"
#include "log.hpp"
#include "nvtx.hpp"
#include "session_params.hpp"
#include "thread_registry.hpp"
#include "trace_writer.hpp"

#include <jitscope/jitscope.hpp>

#include <fcntl.h>
#include <sys/syscall.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

extern char* program_invocation_short_name;

namespace jitscope::detail {

std::atomic<std::uint32_t> g_session{0};

SessionParams& session_params() noexcept {
  static SessionParams params;
  return params;
}

namespace {

// This machine's name, for the session metadata ("" if unknown).
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
}

// The kernel's id for this boot: two traces with the same one share
// CLOCK_MONOTONIC. "" where /proc does not say.
std::string boot_id() {
  const int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char text[64] = {};
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  std::string id(text, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  return id;
}

// How long a crash cycle keeps trying a lock a host thread may hold: a thread
// other than the crashed one lets go within it; the crashed one never does.
// Three such locks stay well inside kCrashFlushTimeout.
constexpr std::chrono::milliseconds kCrashLockPatience{200};

template <class TryTake>
bool try_for_a_moment(TryTake&& try_take) {
  const auto deadline = std::chrono::steady_clock::now() + kCrashLockPatience;
  while (!try_take()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class Session {
 public:
  Session(const Config& cfg, int fd, int metrics_fd, std::uint32_t word, ClockSource clock,
          ClockPoint first, CuptiSessionState cupti)
      : config_(cfg),
        sink_(fd, cfg.output_path, cfg.rotate_bytes),
        word_(word),
        clock_(clock),
        first_(first),
        capture_at_start_(nvtx_capture_totals()),
        cupti_(std::move(cupti)),
        gpu_counts_at_start_(cupti_counts()) {
    if (metrics_fd >= 0) metrics_ = std::make_unique<FileSink>(metrics_fd, cfg.metrics_path);
  }

  // Compile records waiting for the metrics file, one line each. Called by
  // the flusher, and by stop() once the flusher is gone.
  // try_only: in a crash cycle, skip the lines if their queue is locked.
  void write_metrics(bool try_only = false) {
    if (!metrics_) return;
    if (try_only) {
      if (!try_for_a_moment([&] { return try_take_metrics_lines(metrics_batch_); })) return;
    } else {
      take_metrics_lines(metrics_batch_);
    }
    // Per-unit GPU metrics, known only once the last GPU record is in.
    metrics_batch_.insert(metrics_batch_.end(), std::make_move_iterator(gpu_lines_.begin()),
                          std::make_move_iterator(gpu_lines_.end()));
    gpu_lines_.clear();
    if (metrics_batch_.empty()) return;
    std::string text;
    for (const std::string& line : metrics_batch_) {
      text += line;
      text.push_back('\n');
    }
    metrics_->write(text);
    stats_.compile_records_written += metrics_batch_.size();
  }
  void close_metrics() {
    if (!metrics_) return;
    metrics_->close();
    if (metrics_->failed()) stats_.write_failed = true;
  }

  void start_flusher() {
    flusher_starting();
    thread_ = std::thread([this] { run(); });
  }

  // A metadata event for the flusher's next cycle (note_child_process).
  void add_metadata(std::string event) {
    std::lock_guard<std::mutex> lock(mutex_);
    metadata_.push_back(std::move(event));
  }

  // In a forked child: close the inherited descriptors, write nothing.
  void close_files_in_child() noexcept {
    sink_.abandon();
    if (metrics_) metrics_->abandon();
  }

  // Signals the flusher, waits for its final drain.
  void stop_and_join() {
    // release: the flusher's final cycle sees everything before the stop.
    stop_requested_.store(true, std::memory_order_release);
    wake_flusher();
    try {
      if (!thread_.joinable()) return;
      if (wait_for_flusher_end()) {
        // It faulted writing a crash the host then survived, and is parked
        // in the signal handler for good: joining would hang the host.
        thread_.detach();
        log_line("the flusher faulted while writing a crash; the session ends without its stats");
        return;
      }
      thread_.join();
    } catch (...) {
      thread_.detach();  // a joinable std::thread must not be destroyed
    }
  }

  SessionStats stats() const { return stats_; }
  const Config& config() const noexcept { return config_; }

 private:
  void run() noexcept {
    mark_flusher_thread();
    crash_set_flusher_tid(static_cast<int>(::syscall(SYS_gettid)));
    const CrashInfo* crash = nullptr;
    lost_at_start_ = g_events_lost.load(std::memory_order_relaxed);
    try {
      SessionInfo info;
      info.process_name = config_.process_name.empty() ? std::string(program_invocation_short_name)
                                                       : config_.process_name;
      info.pid = static_cast<int>(::getpid());
      info.clock = clock_;
      // The TSC calibration is fixed once per process, over at least 20 ms
      // from the first session's start; the flusher waits for it, never a producer.
      info.conversion = clock_ == ClockSource::kTsc ? tsc_conversion(first_, 20'000'000)
                                                    : ClockConversion::identity();
      info.start_unix_ns = start_unix_ns_;
      info.start_monotonic_ns = first_.ns;
      info.host = host_name();
      info.boot_id = boot_id();
      info.ring_capacity = config_.ring_capacity;
      info.overflow = config_.overflow == OverflowPolicy::kBlock ? "block" : "drop";
      info.flush_interval_ms = static_cast<std::uint64_t>(config_.flush_interval.count());
      info.cupti_on = cupti_.on;
      info.cupti_reason = cupti_.reason;
      info.cupti_kinds = cupti_.kinds;
      info.gpu_clock = cupti_.clock;
      info.max_trace_bytes = config_.max_trace_bytes;
      info.rotate_bytes = config_.rotate_bytes;
      TraceWriter writer(sink_, info);
      // Incomplete GPU records wait about half a second for their other half.
      const auto interval = static_cast<std::uint64_t>(config_.flush_interval.count());
      GpuTrace gpu(info.pid, cupti_.clock, info.start_monotonic_ns,
                   static_cast<std::uint32_t>(std::max<std::uint64_t>(2, (500 + interval - 1) / interval)));
      if (cupti_.on) writer.set_gpu(&gpu);
      gpu_ = &gpu;
      writer.begin_trace();
      std::vector<ThreadState*> threads;
      for (;;) {
        sleep_until_woken();
        if (config_.crash_handler) crash = crash_requested();
        const bool last = stop_requested_.load(std::memory_order_acquire) || crash != nullptr;
        drain_all(writer, threads, /*final=*/last, crash);
        if (last) break;
      }
      // A crash during stop()'s final cycle: the events are all in, the
      // crash is still worth its instant and stats.
      if (crash == nullptr && config_.crash_handler) crash = crash_requested();
      if (crash != nullptr) {
        // The host is going down: nothing after this cycle would be written,
        // and a producer blocked on a full ring (kBlock) must not wait for us.
        g_session.store(0, std::memory_order_relaxed);
        write_crash_event(writer, *crash);
      }
      const CaptureTotals captured =
          writer.with_captured(nvtx_capture_totals() - capture_at_start_);
      const GpuCollectorCounts gpu_counts = cupti_counts() - gpu_counts_at_start_;
      writer.end_trace(captured, [&](JsonWriter& w) {
        gpu.write_stats(w, cupti_, gpu_counts);
        if (crash != nullptr) write_crash_stats(w, *crash);
      });
      if (crash != nullptr) {
        log_line(std::string(crash_signal_name(crash->signo)) + " on thread " +
                 std::to_string(crash->tid) + ": the trace up to the crash is in " +
                 config_.output_path);
        // The bytes are the kernel's once write(2) returned: the process may go.
        crash_flush_done();
      }
      gpu_ = nullptr;
      stats_.cupti_on = cupti_.on;
      stats_.cupti_off_reason = cupti_.reason;
      stats_.gpu_events = gpu.totals().gpu_events;
      stats_.gpu_unattributed = gpu.totals().unattributed;
      stats_.gpu_flows = gpu.totals().flows;
      sink_.close();
      stats_.nvtx_captured = captured.ranges + captured.marks + captured.async_ranges;
      stats_.nvtx_unmatched = captured.unbalanced_pops + captured.unknown_ends;
      stats_.nvtx_emitted = (word_ & kSessionNvtxBit) != 0;
      stats_.output_path = config_.output_path;
      stats_.metrics_path = config_.metrics_path;
      stats_.events_written = writer.events_written();
      stats_.spans_incomplete = writer.spans_incomplete();
      stats_.events_dropped = writer.events_dropped();
      stats_.threads = writer.summaries().size();
      stats_.bytes_written = sink_.bytes();  // all its files
      stats_.events_over_cap = writer.events_over_cap();
      stats_.trace_files = sink_.files();
      stats_.write_failed = sink_.failed();
    } catch (...) {
      gpu_ = nullptr;
      // Out of memory on the flusher: end the session for the producers too,
      // so that none waits (kBlock) on a flusher that is gone.
      g_session.store(0, std::memory_order_relaxed);  // relaxed: producers only need to see it
      set_metrics_output(false);
      log_line("flusher ran out of memory; the trace is cut short");
      stats_.write_failed = true;
    }
    // Whatever happened, a crashing thread waiting for this flusher goes on.
    crash_disarm();
    crash_flush_done();
    flusher_returned();
  }

  // Sleeps one flush interval, or until stop() or a crash wakes it. A wake
  // between two sleeps is not lost: wake_seen_ was read before the flags.
  void sleep_until_woken() noexcept {
    flusher_sleep(wake_seen_, config_.flush_interval);
    wake_seen_ = flusher_wake_count();
  }

  // An instant on the crashed thread's track, at the crash, named for it.
  void write_crash_event(TraceWriter& writer, const CrashInfo& crash) {
    std::string event;
    JsonWriter w(event);
    w.begin_object();
    w.member("ph", "I");
    w.member("s", "t");
    w.member("cat", "jitscope");
    w.member("name", std::string("crash: ") + crash_signal_name(crash.signo));
    w.key("ts");
    w.value_us(crash.monotonic_ns);
    w.member("pid", static_cast<std::int64_t>(::getpid()));
    w.member("tid", crash.tid);
    w.key("args");
    write_crash_args(w, crash);
    w.end_object();
    writer.append_event(event);
  }

  static void write_crash_stats(JsonWriter& w, const CrashInfo& crash) {
    w.key("crash");
    write_crash_args(w, crash);
  }

  static void write_crash_args(JsonWriter& w, const CrashInfo& crash) {
    w.begin_object();
    w.member("signal", crash_signal_name(crash.signo));
    w.member("signo", crash.signo);
    if (crash.signo != 0) w.member("si_code", crash.code);
    if (crash.address != 0) {
      char hex[2 + 16 + 1];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(crash.address));
      w.member("address", std::string_view(hex));
    }
    if (crash.exception[0] != '\0') w.member("exception", std::string_view(crash.exception));
    w.member("tid", crash.tid);
    w.end_object();
  }

  // One cycle. In a crash cycle (crash_handler.hpp) every lock a host thread
  // may hold is only tried, and CUPTI is not asked for anything.
  void drain_all(TraceWriter& writer, std::vector<ThreadState*>& threads, bool final,
                 const CrashInfo* crash) {
    // CUPTI's records first, then the rings: a call's kGpuCall record is
    // pushed at its API entry, before CUPTI can have a record of it, so every
    // record taken here finds its call in the drain below.
    if (cupti_.on && crash == nullptr) {
      cupti_flush(/*forced=*/final);
      take_gpu_activities(gpu_batch_);
    }
    ThreadRegistry& registry = ThreadRegistry::instance();
    writer.set_crash_cycle(crash != nullptr);
    if (crash == nullptr) {
      registry.snapshot(threads);
    } else if (!try_for_a_moment([&] { return registry.try_snapshot(threads); })) {
      threads.clear();  // a thread crashed registering: the rings are out of reach
    }
    const std::uint64_t end_ns = crash != nullptr ? crash->monotonic_ns : monotonic_ns();
    for (ThreadState* t : threads) {
      // acquire: pairs with the retiring thread's release; read before
      // draining so that nothing pushed before retirement is missed.
      const bool retired = t->retired.load(std::memory_order_acquire);
      // A crash cycle frees nothing: remove() locks, and the process is ending.
      const bool free_it = retired && crash == nullptr;
      if (t->session != word_) {
        // An earlier session's thread state: not ours to write; discard it.
        if (free_it) registry.remove(t);
        continue;
      }
      writer.drain(*t);
      if (final || retired) writer.close_open_spans(*t, end_ns);
      writer.settle(*t);
      if (free_it) registry.remove(t);
    }
    if (cupti_.on) {
      gpu_->add(gpu_batch_);
      gpu_->write(writer, final);
      if (final) gpu_->unit_metric_lines(gpu_lines_);
    }
    {
      std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
      if (crash == nullptr) {
        lock.lock();
      } else {
        (void)try_for_a_moment([&] { return lock.try_lock(); });
      }
      if (lock.owns_lock()) metadata_batch_.swap(metadata_);
    }
    for (const std::string& event : metadata_batch_) writer.append_event(event);
    metadata_batch_.clear();
    // Events lost before any ring are counted process-wide.
    writer.note_lost(g_events_lost.load(std::memory_order_relaxed) - lost_at_start_);
    writer.write_dropped_counter();
    writer.flush();
    write_metrics(/*try_only=*/crash != nullptr);
  }

  Config config_;
  FileSink sink_;
  std::unique_ptr<FileSink> metrics_;
  std::vector<std::string> metrics_batch_;
  std::uint32_t word_;
  ClockSource clock_;
  ClockPoint first_;
  CaptureTotals capture_at_start_;
  CuptiSessionState cupti_;
  GpuCollectorCounts gpu_counts_at_start_;
  GpuTrace* gpu_ = nullptr;  // the flusher's, while it runs
  std::vector<GpuActivity> gpu_batch_;
  std::vector<std::string> gpu_lines_;  // per-unit GPU metrics for the metrics file
  std::uint64_t lost_at_start_ = 0;
  std::uint64_t start_unix_ns_ = realtime_ns();
  std::mutex mutex_;  // guards metadata_
  std::atomic<bool> stop_requested_{false};
  // The flusher's: the wake count at its last look. First read here, before
  // the session is armed or its flusher exists, so that a stop() or a crash
  // while the flusher calibrates the clock is not slept through.
  std::uint32_t wake_seen_ = flusher_wake_count();
  std::vector<std::string> metadata_;        // guarded by mutex_
  std::vector<std::string> metadata_batch_;  // the flusher's
  std::thread thread_;
  SessionStats stats_;
};

struct ControlMutexTag;
std::mutex& control_mutex() noexcept { return immortal<std::mutex, ControlMutexTag>(); }
Session* g_current = nullptr;  // guarded by control_mutex()
std::uint32_t g_generation = 0;

// open_output (file_sink.hpp) opens and locks the output files.

void fork_prepare() noexcept {
  control_mutex().lock();
  ThreadRegistry::instance().lock_for_fork();
  nvtx_lock_for_fork();
  cupti_lock_for_fork();
}
void fork_parent() noexcept {
  cupti_unlock_after_fork(/*child=*/false);
  nvtx_unlock_after_fork();
  ThreadRegistry::instance().unlock_after_fork();
  control_mutex().unlock();
}
void fork_child() noexcept {
  // The child has no flusher and must never write the parent's file: drop
  // the session (its memory is abandoned) and every inherited thread state.
  g_session.store(0, std::memory_order_relaxed);
  // Its files' descriptors (and their locks) stay the parent's alone.
  if (g_current != nullptr) g_current->close_files_in_child();
  g_current = nullptr;
  set_metrics_output(false);  // no flusher here: queued records would only pile up
  ThreadRegistry::instance().forget_all_in_child();
  crash_forget_in_child();
  cupti_unlock_after_fork(/*child=*/true);
  nvtx_unlock_after_fork();
  ThreadRegistry::instance().unlock_after_fork();
  control_mutex().unlock();
}

void print_compile_times(CompileTimesReport report) {
  if (report == CompileTimesReport::kOff) return;
  const TableFormat f = report == CompileTimesReport::kCsv ? TableFormat::kCsv : TableFormat::kText;
  const std::string text = compile_times(f, /*aggregate=*/true) + "\n" + cumulative_time_report(f);
  write_all(STDERR_FILENO, text.data(), text.size());
}

ClockSource pick_clock(ClockChoice choice) noexcept {
  switch (choice) {
    case ClockChoice::kTsc: return ClockSource::kTsc;
    case ClockChoice::kMonotonic: return ClockSource::kMonotonic;
    case ClockChoice::kAuto: break;
  }
  static const bool invariant = tsc_is_invariant();
  return invariant ? ClockSource::kTsc : ClockSource::kMonotonic;
}

// JITSCOPE_TRACE: a session from load to exit with no code change.
struct AutoSession {
  AutoSession() {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    if (std::getenv("JITSCOPE_TRACE") == nullptr) {
      // These only act through the session: say so rather than do nothing.
      for (const char* v : {"JITSCOPE_METRICS", "JITSCOPE_COMPILE_TIMES"}) {
        if (std::getenv(v) != nullptr) {
          log_line(std::string(v) + " is set but JITSCOPE_TRACE is not: no session, so it has no effect");
        }
      }
      return;
    }
    Config cfg;
    if (Status st = Config::from_env(&cfg); !st) {
      log_line("no session started: " + st.message());
      return;
    }
    (void)start(cfg);  // start() reports its own failure
  }
  ~AutoSession() { (void)stop(); }
};
AutoSession g_auto_session;

}  // namespace
}  // namespace jitscope::detail

namespace jitscope {

Status start(const Config& config) noexcept {
  using namespace detail;
  Status result;
  // Before the lock: this may load an NVTX tool, whose init may do anything.
  if (config.nvtx_emit) nvtx_emit_prepare();
  try {
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current != nullptr) {
      result = Status::error("a session is already active");
    } else if (Status st = config.validate(); !st) {
      result = st;
    } else {
      std::string why;
      if (config.crash_handler) install_crash_handlers();
      const int fd = open_output(config.output_path, "", why);
      int metrics_fd = -1;
      if (fd >= 0 && !config.metrics_path.empty()) {
        metrics_fd = open_output(config.metrics_path, "metrics file ", why);
        if (metrics_fd < 0) {
          result = Status::error(why);
          ::close(fd);
        }
      }
      if (fd < 0) {
        result = Status::error(why);
      } else if (!result) {
        // the metrics file failed; reported below
      } else {
        const ClockSource clock = pick_clock(config.clock);
        nvtx_capture_begin_session(config);
        g_generation = (g_generation + 1) & (0xffffffffu >> kSessionGenerationShift);
        if (g_generation == 0) g_generation = 1;
        const std::uint32_t word = (g_generation << kSessionGenerationShift) |
                                   (clock == ClockSource::kTsc ? kSessionTscBit : 0u) |
                                   (nvtx_emit_begin_session(config) ? kSessionNvtxBit : 0u);
        const ClockPoint first = sample_clock_point();
        if (clock == ClockSource::kTsc) note_tsc_session_start(first);
        // Under this lock: CUPTI calls back into the collector only, whose
        // callbacks never take it.
        CuptiSessionState cupti = cupti_begin_session(config);
        std::unique_ptr<Session> session;
        try {
          session = std::make_unique<Session>(config, fd, metrics_fd, word, clock, first, cupti);
          ThreadRegistry::instance().reap_retired();  // no flusher runs now
          SessionParams& params = session_params();
          params.ring_capacity.store(config.ring_capacity, std::memory_order_relaxed);
          params.overflow.store(config.overflow, std::memory_order_relaxed);
          if (config.crash_handler) crash_arm();  // before the flusher can finish
          session->start_flusher();
        } catch (...) {
          crash_disarm();
          if (cupti.on) cupti_end_session();
          throw;
        }
        set_metrics_output(metrics_fd >= 0);  // only once a flusher will take the lines
        g_current = session.release();
        // release: a thread that sees this word also sees the params above.
        g_session.store(word, std::memory_order_release);
      }
    }
  } catch (...) {
    result = Status::error("could not start the session (out of memory or threads)");
  }
  if (!result) log_line(result.message());
  return result;
}

Status note_child_process(int pid, std::string_view trace_path, std::string_view label) noexcept {
  using namespace detail;
  if (pid <= 0) return Status::error("note_child_process: pid must be positive");
  try {
    std::string event;
    JsonWriter w(event);
    w.begin_object();
    w.member("ph", "M");
    w.member("name", "jitscope_child");
    w.member("pid", static_cast<std::int64_t>(::getpid()));
    w.member("tid", 0);
    w.key("args");
    w.begin_object();
    w.member("pid", static_cast<std::int64_t>(pid));
    // Absolute, so that a reader finds it whatever its own folder: a
    // relative path means the caller's working directory here.
    std::string path(trace_path);
    if (!path.empty() && path.front() != '/') {
      char cwd[4096];
      if (::getcwd(cwd, sizeof cwd) != nullptr) path = std::string(cwd) + "/" + path;
    }
    w.member("trace", std::string_view(path));
    w.member("label", label);
    w.end_object();
    w.end_object();
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current == nullptr) return Status::error("note_child_process: no active session");
    g_current->add_metadata(std::move(event));
  } catch (...) {
    return Status::error("note_child_process: out of memory");
  }
  return {};
}

Status stop(SessionStats* stats) noexcept {
  using namespace detail;
  try {
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current == nullptr) return {};
    // Runtime overheads since the last compile are a record of their own.
    flush_runtime_record();
    // release: pairs with nothing in particular; producers only need to see
    // 0 eventually, and those that still push are drained or discarded.
    g_session.store(0, std::memory_order_release);
    std::unique_ptr<Session> session(g_current);
    g_current = nullptr;
    session->stop_and_join();  // its final cycle flushed CUPTI
    cupti_end_session();
    session->write_metrics();  // records that closed during the final drain
    set_metrics_output(false);
    session->close_metrics();
    ThreadRegistry::instance().reap_retired();  // threads that exited since the last drain
    print_compile_times(session->config().compile_times);
    const SessionStats s = session->stats();
    if (stats != nullptr) *stats = s;
    if (s.write_failed) return Status::error("the trace output failed; see the jitscope: line above");
    return {};
  } catch (...) {
    return Status::error("stop failed (out of memory)");
  }
}

}  // namespace jitscope
