// Turns ring records into Chrome Trace Event Format JSON (array form). Runs on
// the flusher only. The file opens with "[" and every event after the first is
// preceded by ",\n", so a file cut off between events is still a valid trace
// (the array form allows the missing "]"); a clean stop writes the "]".
#pragma once

#include "clock.hpp"
#include "gpu_activity.hpp"

#include <jitscope/detail/record.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace jitscope::detail {

struct ThreadState;
class GpuTrace;
class JsonWriter;

// Totals of the NVTX capture over a session (nvtx.hpp), for the stats event.
// The first three are counted by the writer, the rest by the capture.
struct CaptureTotals {
  std::uint64_t ranges = 0;          // push/pop ranges written
  std::uint64_t marks = 0;
  std::uint64_t async_ranges = 0;    // start/end ranges written
  std::uint64_t thread_names = 0;
  std::uint64_t unbalanced_pops = 0;  // a pop with nothing of its domain open
  std::uint64_t unknown_ends = 0;    // an end of an id never started (or already ended)
  std::uint64_t dropped = 0;         // too many open ranges, or across sessions
};

// Where the JSON goes. write() gets whole events only.
class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void write(std::string_view bytes) noexcept = 0;
};

// The flusher's per-thread decoding state, owned by ThreadState::decode.
struct ThreadDecodeState {
  struct OpenSpan {
    std::uint64_t begin_ns = 0;
    const char* static_name = nullptr;
    std::string dynamic_name;
    std::string args;  // rendered `"k":v,...`
    std::uint64_t unit = 0;  // packed compile id, when in_unit
    bool in_unit = false;    // opened inside a compile unit (or is one)
    std::uint8_t flags = 0;  // the Begin's flags: what kind of slice
    bool truncated = false;
  };
  std::vector<Record> partial;     // a group split across pops
  std::vector<OpenSpan> stack;     // grows only; `depth` entries are live
  std::size_t depth = 0;
  // An instant whose args are still to come.
  std::uint32_t instant_args_left = 0;
  OpenSpan instant;
  std::string tid_fields;          // `,"pid":P,"tid":T`
  std::string name_written;        // last thread_name event; empty: none yet
  std::size_t summary = ~std::size_t{0};  // index into TraceWriter's summaries

  // The compile unit the thread is in now: that of its innermost open span.
  const OpenSpan* innermost() const noexcept { return depth > 0 ? &stack[depth - 1] : nullptr; }
};

struct SessionInfo {
  std::string process_name;
  int pid = 0;
  ClockSource clock = ClockSource::kMonotonic;
  ClockConversion conversion;
  std::uint64_t start_unix_ns = 0;
  std::uint64_t start_monotonic_ns = 0;
  // Which machine and boot: traces with the same boot_id share CLOCK_MONOTONIC
  // (jitscope-merge lines them up without a shift).
  std::string host;
  std::string boot_id;
  std::size_t ring_capacity = 0;
  std::string_view overflow;
  std::uint64_t flush_interval_ms = 0;
  // The CUPTI collector this session (jitscope_session metadata).
  bool cupti_on = false;
  std::string cupti_reason;
  std::vector<std::string> cupti_kinds;
  GpuClock gpu_clock;
  // Config::max_trace_bytes and rotate_bytes (0: off).
  std::uint64_t max_trace_bytes = 0;
  std::uint64_t rotate_bytes = 0;
};

struct ThreadSummary {
  int tid = 0;
  std::string name;
  std::uint64_t events = 0;
  std::uint64_t dropped = 0;
  std::uint64_t args_dropped = 0;
  std::uint64_t unbalanced_ends = 0;
  std::uint64_t truncated = 0;
};

class TraceWriter {
 public:
  TraceWriter(TraceSink& sink, const SessionInfo& info);

  void begin_trace();
  // Writes every complete record group `t` holds now.
  void drain(ThreadState& t);
  // Spans still open on `t`, ending at `end_ns`, with {"incomplete": true}.
  void close_open_spans(ThreadState& t, std::uint64_t end_ns);
  // Copies `t`'s counters into its summary (call before freeing it).
  void settle(ThreadState& t);
  // Events lost before reaching a ring (see g_events_lost); part of the total.
  void note_lost(std::uint64_t lost) noexcept { lost_ = lost; }
  // All events lost so far: settled per-thread drops plus note_lost's.
  std::uint64_t events_dropped() const noexcept;
  // A process-level counter of events_dropped(), written when it changed.
  void write_dropped_counter();
  // `extra_stats` adds members to the jitscope_stats args.
  void end_trace(const CaptureTotals& nvtx = {},
                 const std::function<void(JsonWriter&)>& extra_stats = {});
  // kGpuCall records go to `gpu` (none: they are skipped).
  void set_gpu(GpuTrace* gpu) noexcept { gpu_ = gpu; }
  // A whole event object, counted in events_written.
  void append_event(std::string_view event);
  // A whole event object that is not a slice (flows, metadata): not counted.
  void append_metadata(std::string_view event);
  // A process_name or thread_name metadata event.
  void write_name_metadata(std::string_view what, std::int64_t pid, std::int64_t tid,
                           std::string_view name);
  // True if a jitscope thread with this OS thread id has written here.
  bool knows_tid(int tid) const noexcept;
  void flush() noexcept;  // hands buffered events to the sink

  std::uint64_t events_written() const noexcept { return events_; }
  std::uint64_t spans_incomplete() const noexcept { return incomplete_; }
  std::uint64_t decode_errors() const noexcept { return decode_errors_; }
  // `capture` with the ranges, marks and async ranges this writer wrote.
  CaptureTotals with_captured(CaptureTotals capture) const noexcept {
    capture.ranges = captured_ranges_;
    capture.marks = captured_marks_;
    capture.async_ranges = captured_async_;
    return capture;
  }
  const std::vector<ThreadSummary>& summaries() const noexcept { return summaries_; }
  std::uint64_t now_ns_for(std::uint64_t ticks) const noexcept {
    return info_.conversion.to_ns(ticks);
  }

 private:
  void handle(ThreadState& t, const Record* group, std::size_t slots);
  void write_span(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s, std::uint64_t end_ns,
                  bool incomplete);
  void write_instant(ThreadDecodeState& d);
  void write_thread_name(ThreadDecodeState& d, std::string_view name);
  // A thread_name metadata event; `where` is `,"pid":P,"tid":T`.
  void write_thread_name_event(std::string_view where, std::string_view name);
  void write_captured(ThreadDecodeState& d, const Record& r, const CapturedExtra& x,
                      std::string_view dynamic_name);
  void render_arg(std::string& out, const Record& r, const char* payload);
  void write_args(const ThreadDecodeState::OpenSpan& s, bool incomplete);
  void event_prefix();
  void maybe_flush() noexcept;
  ThreadDecodeState& prepare(ThreadState& t);

  TraceSink& sink_;
  SessionInfo info_;
  std::string buf_;
  std::vector<Record> chunk_;
  std::vector<ThreadSummary> summaries_;
  std::string scratch_;  // captured events' args
  std::uint64_t events_ = 0;
  std::uint64_t incomplete_ = 0;
  std::uint64_t decode_errors_ = 0;
  std::uint64_t captured_ranges_ = 0, captured_marks_ = 0, captured_async_ = 0;
  std::uint64_t last_dropped_ = 0;
  std::uint64_t lost_ = 0;
  bool first_event_ = true;
  GpuTrace* gpu_ = nullptr;
};

// Slots a record's group occupies: the record and its payload.
std::size_t group_slots(const Record& r) noexcept;

}  // namespace jitscope::detail
