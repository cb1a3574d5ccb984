// start() and stop(): the composition root. start() opens the outputs,
// picks the clock, begins NVTX and CUPTI for the session, makes its Flusher
// and publishes the session word; stop() undoes it in reverse. Also the
// fork handlers, which hold every SDK lock across fork() and clear the
// child's copy of the session, and the JITSCOPE_TRACE autostart.
#include "api/c_handles.hpp"
#include "api/copies.hpp"
#include "base/boundary.hpp"
#include "base/compile_id.hpp"
#include "base/env_variables.hpp"
#include "base/immortal.hpp"
#include "base/json_writer.hpp"
#include "base/log.hpp"
#include "base/paths.hpp"
#include "base/spawn_flow.hpp"
#include "clock/clock.hpp"
#include "compile/artifacts.hpp"
#include "compile/autotune_ledger.hpp"
#include "compile/state.hpp"
#include "crash/crash_handler.hpp"
#include "crash/snapshot_signal.hpp"
#include "cupti/cupti.hpp"
#include "flush/flusher.hpp"
#include "format/json/trace_format.hpp"
#include "format/spawn_arrow.hpp"
#include "nvtx/nvtx.hpp"
#include "ring/session_params.hpp"
#include "ring/stable_names.hpp"
#include "ring/thread_registry.hpp"
#include "sink/file_sink.hpp"

#include <jitscope/jitscope.hpp>

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace jitscope::detail {

// The session word (<jitscope/detail/hot.hpp>), beside start() and stop(),
// which write it. Every program that records an event reads it, and so
// links this object from the static library, JITSCOPE_TRACE's autostart
// below included.
std::atomic<std::uint32_t> g_session{0};

namespace {

struct ControlMutexTag;
std::mutex& control_mutex() noexcept { return immortal<std::mutex, ControlMutexTag>(); }
Flusher* g_current = nullptr;     // guarded by control_mutex()
bool g_current_from_env = false;  // guarded by control_mutex(): JITSCOPE_TRACE started it
std::string g_artifacts_dir;      // guarded by control_mutex(): the session's, "" if off
std::uint32_t g_generation = 0;
// guarded by control_mutex(): the session's Config::parent_pid (0: none).
std::int64_t g_parent_pid = 0;

// Config::parent_pid, or when it is 0 JITSCOPE_PARENT_PID: the parent puts
// the variable in its workers' environment, whatever way they configure
// their session. A bad value costs the arrow only (one line), not the session.
std::int64_t parent_pid_of(const Config& config) {
  if (config.parent_pid != 0) return config.parent_pid;
  const char* v = std::getenv("JITSCOPE_PARENT_PID");
  if (v == nullptr) return 0;
  std::int64_t pid = 0;
  if (!parse_parent_pid(v, pid)) {
    log_line(std::string("JITSCOPE_PARENT_PID='") + v +
             "' is not a pid: no arrow from the parent's spawn to this session's first unit");
    return 0;
  }
  return pid;
}

// control_mutex() without waiting out a start or a stop (which hold it
// while files open or the last cycle runs); other holders are brief.
bool lock_briefly(std::unique_lock<std::mutex>& lock) noexcept {
  for (int i = 0; i < 1000 && !lock.try_lock(); ++i) std::this_thread::yield();
  return lock.owns_lock();
}

// Alarm lines a session says: past it, one line says the rest are not
// (the compiling thread writes them, and stderr may be a full pipe).
constexpr std::uint32_t kMaxAlarmLines = 100;
std::atomic<std::uint32_t> g_alarm_lines{0};

// A compile unit that tripped a Config alarm (compile/record.cpp), on the
// thread that closed it: one line naming it, and with a flight recorder a
// snapshot, under the same interval as any (refused quietly).
void on_unit_alarm(const CompileRecord& r, UnitAlarm alarm, std::string_view opened_in) noexcept {
  // A compile while serving is said at its open; its end only asks for the
  // snapshot that holds it.
  const bool say = alarm != UnitAlarm::kServingEnd;
  const std::uint32_t said = say ? g_alarm_lines.fetch_add(1, std::memory_order_relaxed) : 0;
  if (said == kMaxAlarmLines) {
    log_line(
        "more compile-unit alarms are not said this session (each still asks the flight "
        "recorder for a snapshot)");
  }
  guarded("raising a compile unit's alarm", [&] {
    std::string what = alarm == UnitAlarm::kSlow     ? "slow compile unit "
                       : alarm == UnitAlarm::kFailed ? "failed compile unit "
                       : alarm == UnitAlarm::kMissStorm
                           ? "cache-miss storm: " + std::string(opened_in) + ", in unit "
                           : "compile while serving: unit ";
    what += r.compile_id.display() + " " + r.name;
    if (!r.frame.empty()) what += " (frame " + r.frame + ")";
    if (alarm == UnitAlarm::kSlow || alarm == UnitAlarm::kServingEnd) {
      what += ": " + std::to_string((r.end_time_us - r.start_time_us) / 1000) + " ms";
    } else if (alarm == UnitAlarm::kFailed) {
      what += ": " + r.fail_type + (r.fail_reason.empty() ? "" : ": " + r.fail_reason);
    } else if (alarm == UnitAlarm::kServingBegin) {
      what += " opened after mark_ready()";
      if (!opened_in.empty()) what += " in " + std::string(opened_in);
    }
    if (say && said < kMaxAlarmLines) log_line(what);
    if (alarm == UnitAlarm::kServingBegin) return;  // the snapshot comes at its end
    std::unique_lock<std::mutex> lock(control_mutex(), std::defer_lock);
    if (lock_briefly(lock) && g_current != nullptr && g_current->flight_recorder() &&
        (alarm != UnitAlarm::kServingEnd || g_current->config().snapshot_after_ready)) {
      (void)g_current->request_snapshot({}, what,
                                        compile_id_text(r.compile_id.frame, r.compile_id.attempt));
    }
  });
}

// The worker's end of its parent's spawn arrow, on the thread of the
// session's first compile unit (compile/unit.cpp calls it once).
void note_spawn_arrival() noexcept {
  if (session_word() == 0) return;  // stopping: not worth waiting for the lock
  guarded("recording the end of the parent's spawn arrow", [] {
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current == nullptr || g_parent_pid <= 0) return;
    // The word read under the lock: the clock of the session the mark goes to.
    g_current->add_spawn_mark(spawn_mark(SpawnEnd::kArrival, session_word(), g_parent_pid,
                                         ::getpid(), std::string_view()));
  });
}
// Set by the autostart around its start() call, on the loading thread.
thread_local bool t_starting_from_env = false;

// The refusal names both sessions: which one runs, and what was asked for.
std::string already_active(const Config& active, const Config& asked) {
  std::string m =
      "a session is already active (trace " + active.output_path +
      (g_current_from_env ? ", started at load by JITSCOPE_TRACE" : ", started by start()") +
      "); not starting the one asked for (trace " + asked.output_path +
      "): stop() the active one first";
  if (g_current_from_env) m += ", or unset JITSCOPE_TRACE";
  return m;
}

// The fork handlers hold every lock a child could need, so that none is
// held by a thread that the child does not have. The order, outermost
// first (a lock is only ever taken under locks above it, never below):
//   start/stop's control lock (held while the flusher is joined: it comes
//     first, and nothing below waits for the flusher);
//   the C API's handle tables, then each live C object's lock (a C call
//     holds its object's lock while it calls into everything below);
//   the TSC calibration (a new flusher may hold it for its first 20 ms);
//   the thread registry, NVTX's locks, CUPTI's locks;
//   the compile layer's (compile/fork.cpp lists them);
//   log_unique's (taken under several of the above);
//   the kept names' (stable_name: a leaf, taken under nothing).
// The flusher keeps to the same order. docs/robustness.md has the list.
void fork_prepare() noexcept {
  control_mutex().lock();
  c_handles_lock_for_fork();
  clock_lock_for_fork();
  ThreadRegistry::instance().lock_for_fork();
  nvtx_lock_for_fork();
  cupti_lock_for_fork();
  compile_lock_for_fork();
  log_lock_for_fork();
  stable_names_lock_for_fork();
}
void fork_parent() noexcept {
  stable_names_unlock_after_fork();
  log_unlock_after_fork();
  compile_unlock_after_fork();
  cupti_unlock_after_fork(/*child=*/false);
  nvtx_unlock_after_fork();
  ThreadRegistry::instance().unlock_after_fork();
  clock_unlock_after_fork();
  c_handles_unlock_after_fork();
  control_mutex().unlock();
}
void fork_child() noexcept {
  // The child has no flusher and must never write the parent's file: drop
  // the session (its memory is abandoned) and every inherited thread state.
  g_session.store(0, std::memory_order_relaxed);
  // Its files' descriptors (and their locks) stay the parent's alone.
  if (g_current != nullptr) g_current->close_files_in_child();
  g_current = nullptr;
  g_parent_pid = 0;
  set_first_unit_hook(nullptr);
  // No session here: the signal and the alarms are the parent's.
  remove_snapshot_signal();
  set_unit_alarms(0, false, nullptr);
  miss_storm_forget_in_child();
  ThreadRegistry::instance().forget_all_in_child();
  crash_forget_in_child();
  stable_names_unlock_after_fork();
  log_unlock_after_fork();
  compile_unlock_after_fork();
  ledger_forget_in_child();   // the parent's tuning sessions end in the parent
  set_metrics_output(false);  // no flusher here: queued records would only pile up
  set_metrics_wake(nullptr);
  cupti_unlock_after_fork(/*child=*/true);
  nvtx_unlock_after_fork();
  ThreadRegistry::instance().unlock_after_fork();
  clock_unlock_after_fork();
  c_handles_unlock_after_fork();
  control_mutex().unlock();
}

// One line for both files that an exec'd image of this process keeps.
void say_kept_after_exec(const Config& asked, const Config& written) {
  std::string line = asked.output_path + " holds the trace this process (pid " +
                     std::to_string(::getpid()) + ") wrote before it exec'd; kept";
  const bool metrics_moved = written.metrics_path != asked.metrics_path;
  if (metrics_moved) line += ", with its metrics file " + asked.metrics_path;
  line += ", and this session writes " + written.output_path;
  if (metrics_moved) line += " and " + written.metrics_path;
  log_line(line);
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

// In this file, not one of its own: a static library's consumer links the
// objects it references, and start() is what pulls this one in.
// JITSCOPE_TRACE: a session from load to exit with no code change.
struct AutoSession {
  AutoSession() {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    // The copy loaded last sees the ones before it: one line per extra copy.
    guarded("looking for other copies of jitscope", [] { say_other_copies(); });
    if (std::getenv("JITSCOPE_TRACE") == nullptr) {
      // A typo of JITSCOPE_TRACE itself starts nothing: name it, with the
      // name it is closest to, rather than do nothing.
      guarded("checking the JITSCOPE_* environment", [] {
        if (std::string unknown = unknown_variables(); !unknown.empty()) {
          log_line(unknown + " (no session: JITSCOPE_TRACE is not set)");
        }
      });
      // These only act through the session: say so rather than do nothing.
      for (const char* v : {"JITSCOPE_METRICS", "JITSCOPE_COMPILE_TIMES"}) {
        if (std::getenv(v) != nullptr) {
          log_line(std::string(v) +
                   " is set but JITSCOPE_TRACE is not: no session, so it has no effect");
        }
      }
      return;
    }
    Config cfg;
    if (Status st = Config::from_env(&cfg); !st) {
      log_line("no session started: " + st.message());
      return;
    }
    t_starting_from_env = true;
    (void)start(cfg);  // start() reports its own failure
    t_starting_from_env = false;
  }
  ~AutoSession() { (void)stop(); }
};
AutoSession g_auto_session;

}  // namespace
}  // namespace jitscope::detail

namespace jitscope {

Status start(const Config& config) noexcept {
  using namespace detail;
  // Before the lock: this may load an NVTX tool, whose init may do anything.
  if (config.nvtx_emit) nvtx_emit_prepare();
  const Status status = guarded_status("starting the session", [&] {
    Status result;
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current != nullptr) {
      result = Status::error(already_active(g_current->config(), config));
    } else if (Status st = config.validate(); !st) {
      result = st;
    } else {
      // Before anything is begun: what may throw here leaves nothing half made.
      std::int64_t parent_pid = parent_pid_of(config);
      std::string why;
      if (config.crash_handler) install_crash_handlers();
      // The trace may go to a new file beside the one asked for, after an
      // exec of this process (open_output); its metrics file then follows it.
      Config session_config = config;
      // Every output is claimed before any is emptied: a start refused for
      // one file (a metrics path that cannot open) leaves the others as
      // they were, and removes what it created.
      OutputFile trace, metrics;
      // A flight recorder writes no trace file: output_path names its
      // snapshots, each written whole when asked for.
      const bool flight = config.flight_recorder_bytes != 0;
      bool claimed =
          flight || claim_output(config.output_path, "", why, trace, /*keep_exec_trace=*/true);
      // A worker of a process whose session writes this path: its own files
      // beside the parent's, and the parent's arrow (file_sink.hpp).
      const bool as_worker = claimed && trace.parent_session_pid > 0;
      const bool after_exec = claimed && !flight && !as_worker && trace.path != config.output_path;
      if (claimed && !config.metrics_path.empty()) {
        claimed =
            claim_output(as_worker ? detail::worker_trace_path(config.metrics_path, ::getpid())
                                   : config.metrics_path,
                         "metrics file ", why, metrics,
                         /*keep_exec_trace=*/true, /*beside=*/after_exec);
      }
      if (as_worker) parent_pid = trace.parent_session_pid;
      if (claimed) {
        claimed = (flight || commit_output(trace, why)) &&
                  (metrics.fd < 0 || commit_output(metrics, why));
      }
      if (!claimed) {
        result = Status::error(why);  // both released as they go, what they created removed
      } else {
        // A flight recorder's snapshots go where the path named at start,
        // whatever the working directory is when one is taken.
        session_config.output_path = flight ? absolute_path(config.output_path) : trace.path;
        if (metrics.fd >= 0) session_config.metrics_path = metrics.path;
        const int fd = trace.take();
        const int metrics_fd = metrics.take();
        if (after_exec) say_kept_after_exec(config, session_config);
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
        std::unique_ptr<Flusher> session;
        try {
          session =
              std::make_unique<Flusher>(session_config, fd, metrics_fd, word, clock, first, cupti);
          ThreadRegistry::instance().reap_retired();  // no flusher runs now
          SessionParams& params = session_params();
          params.ring_capacity.store(config.ring_capacity, std::memory_order_relaxed);
          params.overflow.store(config.overflow, std::memory_order_relaxed);
          params.wake_flusher.store(&wake_flusher, std::memory_order_relaxed);
          if (config.crash_handler) crash_arm();  // before the flusher can finish
          session->start();
        } catch (...) {
          crash_disarm();
          if (cupti.on) cupti_end_session();
          throw;
        }
        note_session_wall_clock(word);        // a start that failed above leaves the last one
        set_metrics_output(metrics_fd >= 0);  // only once a flusher will take the lines
        set_metrics_wake(metrics_fd >= 0 ? &wake_flusher : nullptr);
        // Beside the metrics file by default, which an exec may have moved.
        g_artifacts_dir = begin_artifacts(!config.artifacts_dir.empty() ? config.artifacts_dir
                                          : session_config.metrics_path.empty()
                                              ? std::string()
                                              : session_config.metrics_path + ".artifacts",
                                          config.max_artifact_bytes);
        if (config.flight_recorder_bytes != 0 && config.snapshot_signal != 0) {
          const char* refused = "";
          if (!install_snapshot_signal(config.snapshot_signal, refused)) {
            // The session runs either way: a line that cannot be made is not said.
            guarded("saying the snapshot signal was not taken", [&] {
              log_line("snapshot signal " + signal_name(config.snapshot_signal) +
                       " not taken: " + refused + "; snapshot() still works");
            });
          }
        }
        // Always: mark_ready() may come at any time.
        g_alarm_lines.store(0, std::memory_order_relaxed);
        set_unit_alarms(static_cast<std::uint64_t>(config.snapshot_slow_unit.count()) * 1000,
                        config.snapshot_failed_unit, &on_unit_alarm);
        set_miss_storm(
            config.snapshot_miss_storm,
            static_cast<std::uint64_t>(config.snapshot_miss_storm_window.count()) * 1000);
        g_current = session.release();
        g_current_from_env = t_starting_from_env;
        g_parent_pid = parent_pid;
        // release: a thread that sees this word also sees the params above.
        g_session.store(word, std::memory_order_release);
        // After the word: a unit opened before it is not recorded, so must
        // not take the hook.
        set_first_unit_hook(parent_pid > 0 ? &note_spawn_arrival : nullptr);
      }
    }
    return result;
  });
  if (!status) log_line(status.message());
  return status;
}

Status note_child_process(int pid, std::string_view trace_path, std::string_view label) noexcept {
  using namespace detail;
  if (pid <= 0) return Status::error("note_child_process: pid must be positive");
  return guarded_status("note_child_process", [&] {
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current == nullptr) return Status::error("note_child_process: no active session");
    // No path: the file a worker writes when it inherits this session's
    // trace path (file_sink.hpp). A relative path means the caller's
    // working directory here.
    const std::string path = absolute_path(
        trace_path.empty() ? detail::worker_trace_path(g_current->config().output_path, pid)
                           : std::string(trace_path));
    std::string event;
    JsonWriter w(event);
    begin_process_metadata(w, "jitscope_child", ::getpid());
    w.member("pid", static_cast<std::int64_t>(pid));
    w.member("trace", std::string_view(path));
    w.member("label", label);
    w.end_object();
    w.end_object();
    // The parent's end of the arrow to the worker's first compile unit.
    SpawnMark mark = spawn_mark(SpawnEnd::kSpawn, session_word(), ::getpid(), pid, label);
    g_current->add_metadata(std::move(event));
    g_current->add_spawn_mark(std::move(mark));
    return Status();
  });
}

namespace {

Status note_task_end(const char* what, detail::SpawnEnd end, std::int64_t sender_pid,
                     std::uint64_t task) noexcept {
  using namespace detail;
  return guarded_status(what, [&] {
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current == nullptr) return Status::error(std::string(what) + ": no active session");
    g_current->add_spawn_mark(task_mark(end, session_word(), sender_pid, task));
    return Status();
  });
}

}  // namespace

Status note_task_sent(std::uint64_t task) noexcept {
  return note_task_end("note_task_sent", detail::SpawnEnd::kTaskSent, ::getpid(), task);
}

Status note_task_received(std::int64_t sender_pid, std::uint64_t task) noexcept {
  if (sender_pid <= 0 || sender_pid > detail::kMaxPid)
    return Status::error("note_task_received: sender_pid must be a pid");
  return note_task_end("note_task_received", detail::SpawnEnd::kTaskStart, sender_pid, task);
}

std::string worker_trace_path(std::string_view trace_path, int pid) noexcept {
  try {
    return detail::worker_trace_path(std::string(trace_path), pid);
  } catch (...) {
    return {};
  }
}

Status snapshot(std::string_view path) noexcept {
  using namespace detail;
  return guarded_status("taking a snapshot", [&] {
    std::unique_lock<std::mutex> lock(control_mutex(), std::defer_lock);
    if (!lock_briefly(lock)) {
      return Status::error("snapshot: a session is starting or stopping; not taken");
    }
    if (g_current == nullptr) return Status::error("snapshot: no active session");
    return g_current->request_snapshot(std::string(path), "api");
  });
}

void mark_ready() noexcept { detail::set_serving(true); }

Status stop(SessionStats* stats) noexcept {
  using namespace detail;
  return guarded_status("stopping the session", [&] {
    std::lock_guard<std::mutex> lock(control_mutex());
    if (g_current == nullptr) return Status();
    // Runtime overheads since the last compile are a record of their own.
    flush_runtime_record();
    // release: pairs with nothing in particular; producers only need to see
    // 0 eventually, and those that still push are drained or discarded.
    g_session.store(0, std::memory_order_release);
    std::unique_ptr<Flusher> session(g_current);
    g_current = nullptr;
    remove_snapshot_signal();  // the host's signal again before the last cycle
    set_unit_alarms(0, false, nullptr);
    set_miss_storm(0, 0);
    set_serving(false);  // the next session warms up again
    set_first_unit_hook(nullptr);
    g_parent_pid = 0;
    session->stop_and_join();  // its final cycle flushed CUPTI
    cupti_end_session();
    session->write_metrics();  // records that closed during the final drain
    set_metrics_wake(nullptr);
    const std::uint64_t records_dropped = metrics_records_dropped();
    set_metrics_output(false);
    session->close_metrics();
    const ArtifactTotals artifacts = end_artifacts();
    ThreadRegistry::instance().reap_retired();  // threads that exited since the last drain
    print_compile_times(session->config().compile_times);
    SessionStats s = session->stats();
    s.artifacts_dir = std::move(g_artifacts_dir);
    g_artifacts_dir.clear();
    s.artifacts_written = artifacts.written;
    s.artifact_bytes = artifacts.bytes;
    s.artifacts_over_cap = artifacts.over_cap;
    s.compile_records_dropped = records_dropped;
    if (stats != nullptr) *stats = s;
    if (s.spans_ended_out_of_order != 0) {
      log_line(std::to_string(s.spans_ended_out_of_order) +
               " span(s) were ended while spans opened inside them were still open; those "
               "ended with them, marked jitscope_ended_with_outer");
    }
    if (s.write_failed)
      return Status::error("the trace output failed; see the jitscope: line above");
    return Status();
  });
}

}  // namespace jitscope
