// The flusher: one background thread per session that drains every thread's
// ring, joins CUPTI's records to them, and writes the trace and the metrics
// file. start() and stop() (api/session.cpp) make and end it; nothing else
// in the SDK blocks on it.
//
// Threads: the constructor, start(), add_metadata(), stop_and_join() and
// the metrics calls run on the controlling thread (under start/stop's lock);
// everything private runs on the flusher thread.
#pragma once

#include "clock/clock.hpp"
#include "compile/state.hpp"
#include "cupti/cupti.hpp"
#include "flush/snapshot_request_files.hpp"
#include "format/spawn_arrow.hpp"
#include "nvtx/capture_totals.hpp"
#include "sink/compressing_sink.hpp"
#include "sink/file_sink.hpp"
#include "sink/window_sink.hpp"

#include <jitscope/jitscope.hpp>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace jitscope::detail {

class GpuTrace;
class JsonWriter;
class TraceWriter;
struct CrashInfo;
struct ThreadState;

class Flusher {
 public:
  // Takes the opened trace (`fd`) and metrics file (`metrics_fd`, -1: none).
  Flusher(const Config& cfg, int fd, int metrics_fd, std::uint32_t word, ClockSource clock,
          ClockPoint first, CuptiSessionState cupti);

  ~Flusher();

  // Writes the trace's head (process_name, jitscope_session) on the calling
  // thread, so that a file that exists always loads, even if the process is
  // killed before its flusher's first cycle; then starts the flusher.
  void start();
  // Signals the flusher, waits for its final drain.
  void stop_and_join();

  // Compile records waiting for the metrics file, one line each. Called by
  // the flusher, and by stop() once the flusher is gone.
  // try_only: in a crash cycle, skip the lines if their queue is locked.
  void write_metrics(bool try_only = false);
  void close_metrics();

  // A metadata event for the flusher's next cycle (note_child_process).
  void add_metadata(std::string event);
  // An end of a spawn arrow for the flusher's next cycle.
  void add_spawn_mark(SpawnMark mark);
  // In a forked child: close the inherited descriptors, write nothing.
  void close_files_in_child() noexcept;
  // Flight recorder: a snapshot for the flusher's next cycle (snapshot()).
  // `path` empty: the next numbered one. Refused outside flight-recorder
  // mode and sooner than snapshot_min_interval after the last one taken.
  // `unit`: the compile id ("12/0") of the unit an alarm names, written
  // as the snapshot's `compile_id` (jitscope-report shows it first).
  Status request_snapshot(std::string path, std::string trigger, std::string unit = {});
  bool flight_recorder() const noexcept { return window_ != nullptr; }

  SessionStats stats() const { return stats_; }
  const Config& config() const noexcept { return config_; }

 private:
  void run() noexcept;
  void sleep_until_woken() noexcept;
  void write_crash_event(TraceWriter& writer, const CrashInfo& crash);
  // detach_names: an image is being unloaded; the spans left open keep
  // copies of their static names (unload_drain.hpp).
  // open_spans: also renders the spans open on each thread into it (a
  // snapshot is asked for); returns how many.
  std::size_t drain_all(TraceWriter& writer, std::vector<ThreadState*>& threads, bool final,
                        const CrashInfo* crash, bool detach_names = false,
                        std::string* open_spans = nullptr);
  struct SnapshotRequest {
    std::string path;  // empty: the next numbered one
    std::string trigger;
    std::uint64_t unix_ns = 0;
    std::string unit;  // the alarm's unit's compile id, or empty
  };
  static constexpr std::size_t kMaxWaitingSnapshots = 16;
  void take_snapshot_requests(std::vector<SnapshotRequest>& out);
  void write_snapshots(TraceWriter& writer, std::vector<SnapshotRequest>& asked,
                       const std::string& open_spans, std::size_t open);
  void write_snapshot(TraceWriter& writer, const SnapshotRequest& r, const std::string& open_spans,
                      std::size_t open);

  Config config_;
  FileSink sink_;
  std::unique_ptr<FileSink> metrics_;
  MetricsBatch metrics_batch_;
  // Between the writer and sink_ when the Perfetto form is compressed.
  std::unique_ptr<CompressingSink> compress_;
  std::uint32_t word_;
  ClockSource clock_;
  ClockPoint first_;
  CaptureTotals capture_at_start_;
  CuptiSessionState cupti_;
  GpuCollectorCounts gpu_counts_at_start_;
  GpuTrace* gpu_ = nullptr;  // the flusher's, while it runs
  // Made and begun by start(), then the flusher's alone.
  std::unique_ptr<TraceWriter> writer_;
  std::vector<GpuActivity> gpu_batch_;
  std::vector<std::string> gpu_lines_;  // per-unit GPU metrics for the metrics file
  std::uint64_t lost_at_start_ = 0;
  std::uint64_t start_unix_ns_;
  std::mutex mutex_;  // guards metadata_
  std::atomic<bool> stop_requested_{false};
  // The flusher's: the wake count at its last look. First read in the
  // constructor, before the session is armed or its flusher exists, so that
  // a stop() or a crash while the flusher calibrates the clock is not slept through.
  std::uint32_t wake_seen_;
  std::vector<std::string> metadata_;        // guarded by mutex_
  std::vector<std::string> metadata_batch_;  // the flusher's
  std::vector<SpawnMark> spawn_marks_;       // guarded by mutex_
  std::vector<SpawnMark> spawn_batch_;       // the flusher's
  // Flight recorder: the window the writer writes to instead of the file.
  std::unique_ptr<WindowSink> window_;
  std::unique_ptr<SnapshotRequestFiles> request_files_;  // with the window: jitscope-ctl's
  std::vector<SnapshotRequest> snapshot_requests_;       // guarded by mutex_
  std::int64_t last_snapshot_ns_ = -1;                   // guarded by mutex_: CLOCK_MONOTONIC
  std::uint64_t snapshots_refused_ = 0;                  // guarded by mutex_
  // relaxed: read by the flusher each cycle, to render open spans only then.
  std::atomic<bool> snapshot_pending_{false};
  std::deque<std::string> snapshot_files_;  // the flusher's: numbered ones, oldest first
  std::uint64_t snapshot_number_ = 0;       // the flusher's
  std::uint64_t snapshots_written_ = 0;     // the flusher's
  std::thread thread_;
  SessionStats stats_;
};

}  // namespace jitscope::detail
