// The flusher thread (flusher.hpp): each cycle takes CUPTI's records, drains
// every ring into the trace writer, joins the GPU records, and writes the
// metrics lines; its last cycle writes the stats.
#include "flush/flusher.hpp"

#include "base/boundary.hpp"
#include "base/json_writer.hpp"
#include "base/log.hpp"
#include "base/trace_paths.hpp"
#include "compile/state.hpp"
#include "crash/crash_handler.hpp"
#include "crash/snapshot_signal.hpp"
#include "crash/unload_drain.hpp"
#include "flush/snapshot_request_files.hpp"
#include "format/gpu_trace.hpp"
#include "format/json/trace_format.hpp"
#include "format/trace_form.hpp"
#include "format/trace_writer.hpp"
#include "nvtx/nvtx.hpp"
#include "ring/thread_registry.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

extern char* program_invocation_short_name;

namespace jitscope::detail {
namespace {

// This machine's name, for the session metadata ("" if unknown).
std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return {};
  return name;
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

void write_crash_args(JsonWriter& w, const CrashInfo& crash) {
  w.begin_object();
  w.member("signal", crash_signal_name(crash.signo));
  w.member("signo", crash.signo);
  if (crash.signo != 0) w.member("si_code", crash.code);
  if (crash_has_address(crash)) {
    char hex[2 + 16 + 1];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(crash.address));
    w.member("address", std::string_view(hex));
  }
  if (crash.exception[0] != '\0') w.member("exception", std::string_view(crash.exception));
  w.member("tid", crash.tid);
  w.end_object();
}

void write_crash_stats(JsonWriter& w, const CrashInfo& crash) {
  w.key("crash");
  write_crash_args(w, crash);
}

}  // namespace

Flusher::Flusher(const Config& cfg, int fd, int metrics_fd, std::uint32_t word, ClockSource clock,
                 ClockPoint first, CuptiSessionState cupti)
    : config_(cfg),
      sink_(fd, cfg.output_path, cfg.rotate_bytes,
            writes_perfetto(cfg) ? FileSink::Framing::kPackets : FileSink::Framing::kTraceEvents),
      word_(word),
      clock_(clock),
      first_(first),
      capture_at_start_(nvtx_capture_totals()),
      cupti_(std::move(cupti)),
      gpu_counts_at_start_(cupti_counts()),
      start_unix_ns_(realtime_ns()),
      wake_seen_(flusher_wake_count()) {
  if (metrics_fd >= 0) {
    metrics_ = std::make_unique<FileSink>(metrics_fd, cfg.metrics_path, FileSink::Framing::kLines);
  }
  if (cfg.flight_recorder_bytes != 0) {
    // The Perfetto form's window goes by the writer's parts: its packets
    // lean on their sequence's state (set_window_parts).
    const auto window = static_cast<std::size_t>(cfg.flight_recorder_bytes);
    window_ = writes_perfetto(cfg) ? std::make_unique<WindowSink>(window, Framing::kPackets,
                                                                  WindowSink::Chunking::kByPart)
                                   : std::make_unique<WindowSink>(window, Framing::kTraceEvents);
    request_files_ = std::make_unique<SnapshotRequestFiles>(cfg.output_path, ::getpid());
  }
}

void Flusher::write_metrics(bool try_only) {
  if (!metrics_) return;
  if (try_only) {
    if (!try_for_a_moment([&] { return try_take_metrics_records(metrics_batch_); })) return;
  } else {
    take_metrics_records(metrics_batch_);
  }
  // Per-unit GPU metrics, known only once the last GPU record is in.
  if (metrics_batch_.empty() && gpu_lines_.empty()) return;
  std::string text;
  std::uint64_t lost = 0;
  for (const SharedRecord& record : metrics_batch_.records) {
    // Out of memory: that record is lost and counted, the rest written.
    if (!guarded("writing a compile record's line", [&] {
          text += record->to_json();
          text.push_back('\n');
        })) {
      ++lost;
    }
  }
  for (const std::vector<std::string>* lines : {&metrics_batch_.lines, &gpu_lines_}) {
    for (const std::string& line : *lines) {
      text += line;
      text.push_back('\n');
    }
  }
  metrics_->write(text);
  stats_.compile_records_written +=
      metrics_batch_.records.size() - lost + metrics_batch_.lines.size() + gpu_lines_.size();
  if (lost != 0) add_metrics_records_dropped(lost);
  metrics_batch_.clear();  // the records go now, not at the next batch
  gpu_lines_.clear();
}

void Flusher::close_metrics() {
  if (!metrics_) return;
  metrics_->close();
  if (metrics_->failed()) stats_.write_failed = true;
}

Flusher::~Flusher() = default;

void Flusher::start() {
  SessionInfo info;
  info.process_name = config_.process_name.empty() ? std::string(program_invocation_short_name)
                                                   : config_.process_name;
  info.pid = static_cast<int>(::getpid());
  info.clock = clock_;
  // For TSC, the flusher calibrates and then writes jitscope_clock; the
  // identity is known now and goes into the head.
  info.conversion = ClockConversion::identity();
  info.start_unix_ns = start_unix_ns_;
  info.start_monotonic_ns = first_.ns;
  info.host = host_name();
  info.boot_id = this_boot_id();
  info.ring_capacity = config_.ring_capacity;
  info.overflow = config_.overflow == OverflowPolicy::kBlock ? "block" : "drop";
  info.flush_interval_ms = static_cast<std::uint64_t>(config_.flush_interval.count());
  info.cupti_on = cupti_.on;
  info.cupti_reason = cupti_.reason;
  info.cupti_kinds = cupti_.kinds;
  info.gpu_clock = cupti_.clock;
  info.max_trace_bytes = config_.max_trace_bytes;
  info.rotate_bytes = config_.rotate_bytes;
  info.perfetto = writes_perfetto(config_);
  if (config_.compression != TraceCompression::kNone) {
    if (window_) {
      log_line(std::string("compression (") + CompressingSink::name(config_.compression) +
               ") is for trace files: the flight recorder's snapshots are written uncompressed");
    } else if (!info.perfetto) {
      log_line("compression is for the Perfetto form (.pftrace, JITSCOPE_FORMAT=perfetto); " +
               config_.output_path + " is JSON and is written uncompressed");
    } else {
      std::string why;
      compress_ = std::make_unique<CompressingSink>(sink_, config_.compression, why);
      if (compress_->ok()) {
        info.compression = CompressingSink::name(config_.compression);
      } else {
        log_line(std::string("trace compression (") + CompressingSink::name(config_.compression) +
                 ") is off: " + why + "; the trace is written uncompressed");
        compress_.reset();
      }
    }
  }
  writer_ = std::make_unique<TraceWriter>(window_     ? static_cast<TraceSink&>(*window_)
                                          : compress_ ? static_cast<TraceSink&>(*compress_)
                                                      : static_cast<TraceSink&>(sink_),
                                          info);
  // A flight recorder's head goes into each snapshot, never the window.
  if (window_) writer_->keep_names_for_snapshots();
  if (window_ && info.perfetto)
    writer_->set_window_parts(window_.get(), window_->part_bytes(), word_);
  // No flusher runs yet: the writer and the sink are this thread's until the
  // thread below starts (which orders these writes before its own).
  if (compress_) compress_->set_plain_head(true);
  writer_->begin_trace(/*clock_known=*/clock_ != ClockSource::kTsc);
  if (compress_) compress_->set_plain_head(false);
  flusher_starting();
  unload_flusher_running(true);
  try {
    thread_ = std::thread([this] { run(); });
    // Named for top, gdb and perf (15 bytes at most), before start returns;
    // only ever our own thread.
    (void)::pthread_setname_np(thread_.native_handle(), "jitscope-flush");
  } catch (...) {
    unload_flusher_running(false);
    throw;
  }
}

void Flusher::add_metadata(std::string event) {
  std::lock_guard<std::mutex> lock(mutex_);
  metadata_.push_back(std::move(event));
}

void Flusher::add_spawn_mark(SpawnMark mark) {
  std::lock_guard<std::mutex> lock(mutex_);
  spawn_marks_.push_back(std::move(mark));
}

void Flusher::close_files_in_child() noexcept {
  sink_.abandon();
  if (metrics_) metrics_->abandon();
}

void Flusher::stop_and_join() {
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

void Flusher::run() noexcept {
  mark_flusher_thread();
  const int own_tid = static_cast<int>(::syscall(SYS_gettid));
  crash_set_flusher_tid(own_tid);
  const CrashInfo* crash = nullptr;
  lost_at_start_ = g_events_lost.load(std::memory_order_relaxed);
  try {
    TraceWriter& writer = *writer_;
    if (clock_ == ClockSource::kTsc) {
      // The TSC calibration is fixed once per process, over at least 20 ms
      // from the first session's start; the flusher waits for it, never a
      // producer. Nothing is decoded before it is known.
      writer.set_conversion(tsc_conversion(first_, 20'000'000));
    }
    const SessionInfo& info = writer.info();
    // Incomplete GPU records wait about half a second for their other half.
    const auto interval = static_cast<std::uint64_t>(config_.flush_interval.count());
    GpuTrace gpu(
        info.pid, cupti_.clock, info.start_monotonic_ns,
        std::max<std::uint64_t>(interval, 1) * 1'000'000,
        static_cast<std::uint32_t>(std::max<std::uint64_t>(2, (500 + interval - 1) / interval)));
    gpu.set_flusher_tid(own_tid);
    if (cupti_.on) writer.set_gpu(&gpu);
    gpu_ = &gpu;
    std::vector<ThreadState*> threads;
    writer.set_part_threads(&threads);
    struct Forget {  // the list ends with this scope
      TraceWriter& w;
      ~Forget() { w.set_part_threads(nullptr); }
    } forget{writer};
    for (;;) {
      sleep_until_woken();
      if (config_.crash_handler) crash = crash_requested();
      const bool last = stop_requested_.load(std::memory_order_acquire) || crash != nullptr;
      // Read before the drain: it then takes every event recorded before
      // the request (unload_drain.hpp).
      const std::uint64_t unload = unload_pending();
      // Snapshot requests are taken before the drain: it then writes every
      // event recorded before each request into the window.
      std::vector<SnapshotRequest> asked;
      if (window_ && crash == nullptr) {
        if (take_snapshot_signal()) {
          const Status st = request_snapshot({}, "signal " + signal_name(config_.snapshot_signal));
          if (!st) log_unique(st.message());
        }
        if (std::optional<std::string> reason = request_files_->take()) {
          const Status st =
              request_snapshot({}, reason->empty() ? "jitscope-ctl" : "jitscope-ctl: " + *reason);
          if (!st) log_unique(st.message());
        }
        // relaxed: a request that comes after this read waits for the next cycle.
        if (snapshot_pending_.load(std::memory_order_relaxed)) take_snapshot_requests(asked);
      }
      std::string open_spans;
      const std::size_t open =
          drain_all(writer, threads, /*final=*/last, crash, /*detach_names=*/unload != 0,
                    asked.empty() ? nullptr : &open_spans);
      if (unload != 0) unload_answer(unload);
      if (window_ && crash == nullptr) {
        // At stop, also those asked for during the final cycle (their open
        // spans were just ended, as incomplete, into the window).
        if (last) take_snapshot_requests(asked);
        if (!asked.empty()) write_snapshots(writer, asked, open_spans, open);
      }
      if (last) break;
    }
    // A crash during stop()'s final cycle: the events are all in, the
    // crash is still worth its instant and stats.
    if (crash == nullptr && config_.crash_handler) crash = crash_requested();
    if (crash != nullptr) {
      // The host is going down: nothing after this cycle would be written,
      // and a producer blocked on a full ring (kBlock) must not wait for us.
      g_session.store(0, std::memory_order_relaxed);
      if (compress_) compress_->set_crash_cycle(true);  // a crash after the last cycle
      write_crash_event(writer, *crash);
      // A JIT that dies leaves its last seconds: the window, with the
      // crash's instant and the spans it cut (ended incomplete above).
      // Not through the requests: a crashed host thread may hold their lock.
      if (window_) {
        writer.flush();
        write_snapshot(
            writer,
            {{}, std::string("crash ") + crash_signal_name(crash->signo), realtime_ns(), {}}, {},
            0);
      }
    }
    const CaptureTotals captured = writer.with_captured(nvtx_capture_totals() - capture_at_start_);
    const GpuCollectorCounts gpu_counts = cupti_counts() - gpu_counts_at_start_;
    if (!window_) {  // a flight recorder's window ends with the session, unwritten
      writer.end_trace(captured, [&](JsonWriter& w) {
        gpu.write_stats(w, cupti_, gpu_counts);
        if (crash != nullptr) write_crash_stats(w, *crash);
      });
    }
    if (crash != nullptr) {
      if (!window_) {  // a flight recorder's snapshot has said where
        log_line(std::string(crash_signal_name(crash->signo)) + " on thread " +
                 std::to_string(crash->tid) + ": the trace up to the crash is in " +
                 config_.output_path);
      }
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
    stats_.snapshots_written = snapshots_written_;
    {
      // A crashed host thread may hold it (request_snapshot): only tried then.
      std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
      if (crash == nullptr) {
        lock.lock();
      } else {
        (void)lock.try_lock();
      }
      if (lock.owns_lock()) stats_.snapshots_refused = snapshots_refused_;
    }
    stats_.spans_incomplete = writer.spans_incomplete();
    stats_.spans_ended_out_of_order = writer.out_of_order_ends();
    stats_.events_dropped = writer.events_dropped();
    stats_.threads = writer.summaries().size();
    stats_.bytes_written = sink_.bytes();  // all its files
    stats_.events_over_cap = writer.events_over_cap();
    stats_.trace_files = window_ ? 0 : sink_.files();  // a flight recorder's are snapshots
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
  // Whatever happened, a crashing thread waiting for this flusher goes on,
  // and so does a thread unloading an image.
  unload_flusher_running(false);
  crash_disarm();
  crash_flush_done();
  flusher_returned();
}

// Sleeps one flush interval, or until stop() or a crash wakes it. A wake
// between two sleeps is not lost: wake_seen_ was read before the flags.
void Flusher::sleep_until_woken() noexcept {
  flusher_sleep(wake_seen_, config_.flush_interval);
  wake_seen_ = flusher_wake_count();
}

// An instant on the crashed thread's track, at the crash, named for it.
void Flusher::write_crash_event(TraceWriter& writer, const CrashInfo& crash) {
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

// One cycle. In a crash cycle (crash_handler.hpp) every lock a host thread
// may hold is only tried, and CUPTI is not asked for anything.
std::size_t Flusher::drain_all(TraceWriter& writer, std::vector<ThreadState*>& threads, bool final,
                               const CrashInfo* crash, bool detach_names, std::string* open_spans) {
  std::size_t open = 0;
  // CUPTI's records first, then the rings: a call's kGpuCall record is
  // pushed at its API entry, before CUPTI can have a record of it, so every
  // record taken here finds its call in the drain below.
  if (cupti_.on && crash == nullptr) {
    cupti_flush(/*forced=*/final);
    take_gpu_activities(gpu_batch_);
  }
  ThreadRegistry& registry = ThreadRegistry::instance();
  writer.set_crash_cycle(crash != nullptr);
  if (compress_) compress_->set_crash_cycle(crash != nullptr);
  if (crash == nullptr) {
    registry.snapshot(threads);
  } else if (!try_for_a_moment([&] { return registry.try_snapshot(threads); })) {
    threads.clear();  // a thread crashed registering: the rings are out of reach
  }
  const std::uint64_t end_ns = crash != nullptr ? crash->monotonic_ns : monotonic_ns();
  // An entry is set to null once its thread is freed: the writer looks at
  // every thread's open spans when the window starts a part.
  for (ThreadState*& t : threads) {
    // acquire: pairs with the retiring thread's release; read before
    // draining so that nothing pushed before retirement is missed.
    const bool retired = t->retired.load(std::memory_order_acquire);
    // A crash cycle frees nothing: remove() locks, and the process is ending.
    const bool free_it = retired && crash == nullptr;
    if (t->session != word_) {
      // An earlier session's thread state: not ours to write; discard it.
      if (free_it) {
        registry.remove(t);
        t = nullptr;
      }
      continue;
    }
    writer.drain(*t);
    if (final || retired) {
      writer.close_open_spans(*t, end_ns);
    } else if (open_spans != nullptr) {
      open += writer.append_open_spans(*open_spans, *t, end_ns);
    }
    writer.settle(*t);
    if (detach_names && !free_it) writer.detach_static_names(*t);
    if (free_it) {
      registry.remove(t);
      t = nullptr;
    }
  }
  // Also with no thread left to detach: the counters' cache is the writer's.
  if (detach_names) writer.forget_static_names();
  if (cupti_.on) {
    gpu_->add(gpu_batch_);
    gpu_->write(writer, final, end_ns);
    if (final) gpu_->unit_metric_lines(gpu_lines_);
  }
  {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    if (crash == nullptr) {
      lock.lock();
    } else {
      (void)try_for_a_moment([&] { return lock.try_lock(); });
    }
    if (lock.owns_lock()) {
      metadata_batch_.swap(metadata_);
      spawn_batch_.swap(spawn_marks_);
    }
  }
  for (const std::string& event : metadata_batch_) writer.append_event(event);
  metadata_batch_.clear();
  for (const SpawnMark& mark : spawn_batch_) {
    pfw::Hints hints;
    const std::string events =
        spawn_arrow_events(mark, writer.info().conversion.to_ns(mark.ticks), hints);
    writer.append_event(events, hints);
  }
  spawn_batch_.clear();
  // Events lost before any ring are counted process-wide.
  writer.note_lost(g_events_lost.load(std::memory_order_relaxed) - lost_at_start_);
  writer.write_dropped_counter();
  writer.flush();
  write_metrics(/*try_only=*/crash != nullptr);
  return open;
}

Status Flusher::request_snapshot(std::string path, std::string trigger, std::string unit) {
  if (!window_) {
    return Status::error(
        "snapshot: this session writes a trace file, not a flight recorder's window "
        "(Config::flight_recorder_bytes, JITSCOPE_FLIGHT)");
  }
  const auto now = static_cast<std::int64_t>(monotonic_ns());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t least = config_.snapshot_min_interval.count() * 1'000'000;
    if (last_snapshot_ns_ >= 0 && now - last_snapshot_ns_ < least) {
      ++snapshots_refused_;
      return Status::error("snapshot: refused, " +
                           std::to_string((now - last_snapshot_ns_) / 1'000'000) +
                           " ms after the last one (snapshot_min_interval: " +
                           std::to_string(config_.snapshot_min_interval.count()) + " ms)");
    }
    if (snapshot_requests_.size() >= kMaxWaitingSnapshots) {
      ++snapshots_refused_;
      return Status::error("snapshot: refused, " + std::to_string(kMaxWaitingSnapshots) +
                           " already wait for the flusher");
    }
    last_snapshot_ns_ = now;
    snapshot_requests_.push_back(
        {std::move(path), std::move(trigger), realtime_ns(), std::move(unit)});
  }
  snapshot_pending_.store(true, std::memory_order_relaxed);
  wake_flusher();
  return {};
}

void Flusher::take_snapshot_requests(std::vector<SnapshotRequest>& out) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (SnapshotRequest& r : snapshot_requests_) out.push_back(std::move(r));
  snapshot_requests_.clear();
  snapshot_pending_.store(false, std::memory_order_relaxed);
}

void Flusher::write_snapshots(TraceWriter& writer, std::vector<SnapshotRequest>& asked,
                              const std::string& open_spans, std::size_t open) {
  // Numbered requests of one cycle would be the same file: one is written,
  // its trigger naming the others.
  SnapshotRequest* numbered = nullptr;
  std::size_t merged = 0;
  for (SnapshotRequest& r : asked) {
    if (!r.path.empty()) {
      write_snapshot(writer, r, open_spans, open);
    } else if (numbered == nullptr) {
      numbered = &r;
    } else {
      ++merged;
    }
  }
  if (numbered != nullptr) {
    if (merged != 0) numbered->trigger += " (and " + std::to_string(merged) + " more)";
    write_snapshot(writer, *numbered, open_spans, open);
  }
}

void Flusher::write_snapshot(TraceWriter& writer, const SnapshotRequest& r,
                             const std::string& open_spans, std::size_t open) {
  {
    // Out of memory or a failed write: this snapshot is lost, said once.
    guarded("writing a flight-recorder snapshot", [&] {
      const bool numbered = r.path.empty();
      const long pid = writer.info().pid;
      if (numbered && snapshot_number_ == 0) {
        // An image this one exec'd from (same pid) may have written some:
        // go on after them.
        while (snapshot_number_ < 100000 &&
               ::access(snapshot_path(config_.output_path, pid, snapshot_number_ + 1).c_str(),
                        F_OK) == 0) {
          ++snapshot_number_;
        }
      }
      const std::string path =
          numbered ? snapshot_path(config_.output_path, pid, snapshot_number_ + 1) : r.path;
      std::string head;
      {
        JsonWriter w(head);
        begin_process_metadata(w, "jitscope_snapshot", writer.info().pid);
        w.member("trigger", std::string_view(r.trigger));
        if (!r.unit.empty()) w.member("compile_id", std::string_view(r.unit));
        w.member("requested_unix_ns", r.unix_ns);
        w.member("written_unix_ns", realtime_ns());
        w.member("window_bytes", static_cast<std::uint64_t>(window_->capacity()));
        w.member("window_held_bytes", static_cast<std::uint64_t>(window_->held()));
        w.member("bytes_dropped_from_window", window_->bytes_dropped());
        w.member("spans_open", static_cast<std::uint64_t>(open));
        w.end_object();
        w.end_object();
      }
      // Written from the window's own chunks: no copy of the window.
      std::string start;
      writer.append_snapshot_head(start, head);
      std::vector<std::string_view> parts;
      window_->views_after(start, parts);
      parts.emplace_back(open_spans);
      parts.emplace_back(writer.snapshot_tail());
      std::string why;
      if (!write_whole_file(path, parts, why)) {
        log_line("flight recorder: the snapshot (" + r.trigger + ") was not written: " + why);
        return;
      }
      ++snapshots_written_;
      log_line("flight recorder: snapshot (" + r.trigger + ") written to " + path);
      if (!numbered) return;
      ++snapshot_number_;
      snapshot_files_.push_back(path);
      while (snapshot_files_.size() > config_.max_snapshots) {
        ::unlink(snapshot_files_.front().c_str());
        snapshot_files_.pop_front();
      }
    });
  }
}

}  // namespace jitscope::detail
