// What jitscope-report computes from a trace (and a metrics file), before
// any formatting. Times are int64 ns; timestamps are the trace's own clock.
// Sums and differences of times saturate at the int64 limits (sat_add,
// sat_sub) instead of overflowing: hostile traces cannot cause UB.
#pragma once

#include "cache_lookups.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jitscope::report {

// a + b and a - b, clamped to [INT64_MIN, INT64_MAX].
inline std::int64_t sat_add(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}
inline std::int64_t sat_sub(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r;
  if (!__builtin_sub_overflow(a, b, &r)) return r;
  return b < 0 ? INT64_MAX : INT64_MIN;
}

// A pid or tid as the trace wrote it: a number or a string.
struct Id {
  bool is_string = false;
  std::int64_t number = 0;
  std::string text;
  std::string str() const { return is_string ? text : std::to_string(number); }
};

// One trial of a tuning session (jitscope::Autotune; autotune_sessions.hpp).
struct AutotuneTrialRow {
  std::uint32_t trial = 0;  // its index in the session, from 0
  std::string config;       // "block=128, warps=4"
  // Its compile steps and the wall time of the units named its compile;
  // its benchmark steps.
  std::int64_t compile_ns = 0, benchmark_ns = 0;
  std::optional<double> result;
  std::optional<std::string> failed;  // why, when it failed
  std::vector<std::string> units;     // compile ids of the units that were its compile
  std::uint64_t units_missing = 0;    // of them, not in the trace (no time counted)
  bool winner = false;
};

// One tuning session: its trials and what they cost. Times are work
// summed over trials (compiles on a pool overlap); wall time and time to
// the winner are the session's own clock time.
struct AutotuneRow {
  std::optional<Id> pid;  // the process (none: no pid)
  std::uint64_t tune = 0;
  std::string kernel;
  std::uint64_t trials = 0;  // all trials seen (those beyond the kept too)
  std::int64_t compile_ns = 0, benchmark_ns = 0;
  // Compile and benchmark of the trials that did not win (all, with no winner).
  std::int64_t waste_ns = 0;
  std::optional<std::int64_t> wall_ns;  // start to end (none: either missing)
  // Start to the end of the winner's last step or unit (none: no winner,
  // or no start).
  std::optional<std::int64_t> time_to_winner_ns;
  std::optional<std::uint32_t> winner;
  std::string winner_config;
  std::vector<AutotuneTrialRow> trial_rows;  // by index, at most kMaxTrials
  std::uint64_t trials_beyond = 0;           // trials not kept (their times still counted)
};

// A pid's text (Id::str), empty for none.
inline std::string pid_text(const std::optional<Id>& pid) {
  return pid ? pid->str() : std::string();
}
// An id that restarts in every process (a compile id, a tid) as a key with
// its pid's text: one unit or thread of the report's rows. A pid's text
// holds no '\n'.
inline std::string key_in_process(std::string_view pid, std::string_view id) {
  std::string k(pid);
  k.push_back('\n');
  k.append(id);
  return k;
}

struct SessionInfo {  // the jitscope_session metadata event
  std::string version, clock, cupti_state, cupti_reason, cupti_timestamps;
};

// A flight-recorder snapshot's jitscope_snapshot metadata event: what
// asked for it, and the unit an alarm named (its compile_id, in its pid).
struct SnapshotInfo {
  std::string trigger;
  std::string compile_id;  // "12/0", or empty when no unit triggered it
  std::optional<Id> pid;   // the process that wrote it
  std::optional<std::int64_t> spans_open, bytes_dropped_from_window;
};

struct Header {
  std::string input;
  std::uint64_t bytes = 0;
  std::uint64_t events = 0;
  bool unterminated = false;
  bool has_time = false;
  std::int64_t begin_ns = 0, end_ns = 0;  // earliest ts, latest ts + dur (metadata excluded)
  std::uint64_t processes = 0, threads = 0;
  std::uint64_t spans = 0;                                          // X slices and B/E pairs
  std::vector<std::pair<std::string, std::uint64_t>> phase_counts;  // "X" -> n, by ph
  // The first jitscope_session (a merged trace's reference process), how
  // many processes wrote one, and the processes per CUPTI state ("unknown"
  // for a session without one); the text forms show the last two only when
  // there are several sessions (a merged trace: workers often run without CUPTI).
  std::optional<SessionInfo> session;
  std::uint64_t sessions = 0;
  std::vector<std::pair<std::string, std::uint64_t>> cupti_states;  // by first seen
  std::optional<SnapshotInfo> snapshot;  // the trace is a flight-recorder snapshot
  // jitscope_stats.events_dropped, summed over the processes (each's last)
  std::optional<std::int64_t> events_dropped;
  // jitscope_stats.compile_records_dropped (written only when not 0), likewise
  std::optional<std::int64_t> compile_records_dropped;
  std::vector<std::string> warnings;
};

// One bin of a duration histogram: the count of durations in [low_ns, high_ns].
struct LogBin {
  std::int64_t low_ns = 0, high_ns = 0;
  std::uint64_t count = 0;
};

// What a slice on a GPU's stream track is: a kernel (it has a grid), a set
// (named Memset...) or a copy; a call: what CUPTI records on a host thread
// (a CUDA runtime or driver call, a sync, a driver JIT step, its own
// overhead); kNone for host spans.
enum class GpuWork : std::uint8_t { kNone, kKernel, kCopy, kSet, kCall };
const char* gpu_work_name(GpuWork w) noexcept;

// One span name: the compile-times and phases tables (host spans), or one
// name of GPU work (GpuSection::names).
struct NameRow {
  std::string name;
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, min_ns = 0, max_ns = 0, self_ns = 0;
  // Nearest-rank percentiles and the sample standard deviation of its
  // durations (distribution.hpp: exact up to 256 spans, then within 0.39%).
  std::int64_t p50_ns = 0, p90_ns = 0, p99_ns = 0, stddev_ns = 0;
  GpuWork gpu = GpuWork::kNone;
  // Its durations in log-spaced bins (Distribution::log_bins), from the
  // first non-empty bin to the last: the HTML report's histograms.
  std::vector<LogBin> histogram;
  bool pass = false;  // a compiler pass (aggregator_passes.cpp says which spans are)
  std::int64_t mean_ns() const {
    return count == 0 ? 0 : total_ns / static_cast<std::int64_t>(count);
  }
};

// A pass's IR growth over its runs that carry the adapters' sizes
// ("ir_size_before" and "ir_size_after", Options::ir_size: LLVM
// instructions, MLIR operations).
struct IrGrowthRow {
  std::string pass;
  std::uint64_t runs = 0;              // runs with both sizes
  std::int64_t before = 0, after = 0;  // summed over them
  std::int64_t total_ns = 0;           // their time
  // The run that grew the IR most (or shrank it least): its growth and size before.
  std::int64_t largest = 0, largest_before = 0;
  std::int64_t growth() const { return after - before; }
};

struct PhaseRow {  // a span name inside one compile unit
  std::string name;
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, self_ns = 0;
};

struct CacheRow {
  std::string cache;
  std::int64_t hits = 0, misses = 0;
};

// A file the unit's compile produced (the record's "artifacts", docs/compile-units.md).
struct Artifact {
  std::string kind, path;  // path: absolute, as the SDK wrote it
  std::int64_t bytes = 0;
  std::string fnv1a;
};

// One field of a unit's metrics record, its value as compact JSON. `user`:
// not a field jitscope writes (the user's context, e.g. "input_shape").
struct RecordField {
  std::string key, json;
  bool user = false;
};

struct UnitMetrics {  // the unit's lines in the metrics file
  bool has_record = false;
  std::string name;
  // The unit's stable identity (docs/compile-units.md): the caller's key,
  // else its frame's name, else its name without the "_<n>" counter; and
  // the frame's name when the caller gave one. Empty when the record has none.
  std::string unit_key, frame;
  std::optional<std::int64_t> duration_ns;                       // duration_us
  std::vector<std::pair<std::string, std::int64_t>> columns_ns;  // "parse" (parse_us) -> ns
  std::vector<CacheRow> caches;
  std::int64_t cache_hits = 0, cache_misses = 0;
  std::string fail_type, fail_reason, recompile_reason;
  bool has_gpu = false;
  std::vector<std::pair<std::string, std::int64_t>>
      gpu;  // the "gpu" object of a "record":"gpu" line
  std::vector<Artifact> artifacts;
  // The compile record's other fields in their order: all but those the
  // members above hold as they were (compile_id, name, fail_type,
  // fail_reason and recompile_reason when strings, duration_us, the columns
  // in columns_ns, artifacts), so nothing is kept twice. A value whose
  // compact JSON is over kMaxFieldJson bytes is kept as a JSON string of its
  // first kMaxFieldJson bytes and "…" (records can carry 1024 compile events).
  // unit_key and frame (strings) are not repeated here either.
  std::vector<RecordField> fields;
  static constexpr std::size_t kMaxFieldJson = 1024;
};

// A thread a unit ran on (its pid is the unit's).
struct UnitLane {
  Id tid;
  std::string thread;  // its thread_name, or empty
};

// A span inside a unit (a phase), placed for the unit's waterfall.
struct UnitSpan {
  std::string name;
  std::int64_t offset_ns = 0;  // from the unit's start_ns (without a unit slice: its first span)
  std::int64_t dur_ns = 0;
  std::uint32_t lane = 0;  // index into UnitRow::lanes
};

// How a unit ended: kFailed (its metrics record has a fail_type), kCrashed
// (its slice is marked incomplete and its process wrote a crash instant),
// kIncomplete (its slice is marked incomplete, no crash: still open at
// stop()), else kOk.
enum class UnitStatus { kOk, kFailed, kCrashed, kIncomplete };
const char* unit_status_name(UnitStatus s);  // "ok", "failed", "crashed", "incomplete"

struct UnitRow {
  std::optional<Id> pid;   // the process it compiled in (none: no pid, or metrics only)
  std::string compile_id;  // "0/0"
  std::string name;        // the unit slice's name without "[0/0] ", or the record's name
  // Its stable identity and frame: the slice's args "unit_key" and "frame",
  // else its record's; empty when neither has them (older traces).
  std::string unit_key, frame;
  UnitStatus status = UnitStatus::kOk;
  // kFailed: the record's fail_type and fail_reason; kCrashed: "crash" and
  // the crash ("SIGSEGV at 0x0 on thread 4242"); else empty.
  std::string fail_type, fail_reason;
  bool in_trace = false;                  // a unit slice was seen
  std::int64_t start_ns = 0, end_ns = 0;  // over all its slices (attached threads too)
  std::int64_t wall_ns = 0;               // its own (not attached) slice, else end - start
  std::int64_t compile_end_ns = 0;        // end of its own slice, else end_ns
  // Its slices' self time: their time not inside another span on the same
  // thread (the time outside its phases).
  std::int64_t self_ns = 0;
  // The longest stretch of its slices outside every span on their thread:
  // from gap_start_ns (a trace time), gap_ns long (0: none).
  std::int64_t gap_start_ns = 0, gap_ns = 0;
  // Of self_ns, the time child processes it spawned ran (their compile
  // units, in a merged trace) inside its gaps: explained by them. Its
  // unexplained time is self_ns - in_children_ns, and the gap above what
  // they left of its 16 longest.
  std::int64_t in_children_ns = 0;
  std::int64_t unexplained_ns() const { return self_ns - in_children_ns; }
  std::uint64_t slices = 0, threads = 0;
  std::vector<PhaseRow> phases;  // spans carrying its compile_id, by total desc
  // Shared, not inline: most rows of a big trace have none, and a
  // UnitMetrics is a third of a row.
  std::shared_ptr<const UnitMetrics> metrics;
  // The thread of its own slice (else of its first unit slice): the
  // timeline's lane. Empty for a unit without a slice.
  std::optional<UnitLane> thread;
  std::vector<UnitLane> lanes;  // the threads of `spans`, in first-seen order
  // Its kMaxSpans longest spans (by start), of spans_total: bounded per unit.
  std::vector<UnitSpan> spans;
  std::uint64_t spans_total = 0;
  // Its spans were let go: not among the Report::waterfall_limit slowest
  // units (Aggregator::Options::waterfall_units).
  bool waterfall_dropped = false;
  static constexpr std::size_t kMaxSpans = 128;
};

// A pass (any span) that failed: one the adapters marked "failed": true
// (MLIR's runAfterPassFailed), or the innermost span still open on the
// thread that crashed (marked "incomplete" in a process with a crash).
struct FailedPass {
  std::string name;
  bool crashed = false;  // the crash's span, else a "failed" one
  std::optional<Id> pid;
  Id tid;
  std::string thread;      // its thread_name, or empty
  std::string compile_id;  // of the unit it ran in, or empty
  std::string unit;        // that unit's name
  std::int64_t ts_ns = 0, dur_ns = 0;
  // Why: the crash; else the span's own "fail_reason"/"reason" arg, else
  // the op it ran on (MLIR's "op" and "ir_name"), and its unit's failure.
  std::string reason;
};

struct SpanRow {  // one of the slowest spans
  std::string name;
  std::int64_t ts_ns = 0, dur_ns = 0;
  Id pid, tid;
  std::string thread;  // its thread_name, or empty
  std::string compile_id;
};

struct GpuUnitRow {
  std::optional<Id> pid;  // the host process of the unit (a GPU pid maps to its host pid)
  std::string compile_id, name;
  std::uint64_t kernels = 0;           // launches of kernels it built (compiled_by_id)
  std::uint64_t distinct_kernels = 0;  // distinct kernel names among them
  std::int64_t gpu_ns = 0;
  std::int64_t mean_ns() const {
    return kernels == 0 ? 0 : gpu_ns / static_cast<std::int64_t>(kernels);
  }
  std::optional<std::int64_t> first_launch_ns;  // earliest start of a kernel it built
  std::optional<std::int64_t> latency_ns;       // first_launch - end of its compile slice
  std::uint64_t launched_inside = 0;            // kernels launched while it was open (compile_id)
};

struct GpuSection {
  std::uint64_t kernels = 0, kernels_unattributed = 0;  // unattributed: no compiled_by_id
  std::int64_t kernel_ns = 0;
  std::uint64_t memcpys = 0, memsets = 0;  // GPU-side copies and sets (by name)
  std::vector<GpuUnitRow> units;
  // GPU work by name, by total desc: kept out of the host tables
  // (Report::names), whose totals and self shares are host time.
  std::vector<NameRow> names;
  bool present() const { return kernels + memcpys + memsets > 0; }
};

// The spread of the units' wall times (their metrics duration when a unit
// has no slice in the trace): the line above the units table.
struct UnitWallSummary {
  std::uint64_t count = 0;
  std::int64_t total_ns = 0, mean_ns = 0, min_ns = 0, max_ns = 0;
  std::int64_t p50_ns = 0, p90_ns = 0, p99_ns = 0, stddev_ns = 0;
};

// How the next unit on the critical path (critical_path.hpp) depends on a
// step: it waited for it (CompileUnit::waits_for), or it ran after it on its
// thread; kLast for the unit that ended last.
enum class PathLink : std::uint8_t { kWaitedFor, kSameThread, kLast };
const char* path_link_name(PathLink l) noexcept;  // "waited_for", "same_thread", "last"

// One unit on the critical path. Its time on the path runs from the end of
// the step before it (or its own start, if later) to its end; its wait
// before is the time from the step before's end (the units' first start,
// for the first step) to its start, when it started after.
struct CriticalPathStep {
  std::optional<Id> pid;
  std::string compile_id, name;
  std::string unit_key;  // what it compiles (UnitRow::unit_key): the same kernel in two processes
  std::optional<UnitLane> thread;
  std::int64_t start_ns = 0, end_ns = 0;  // its own slice
  std::int64_t on_path_ns = 0, wait_before_ns = 0;
  PathLink next = PathLink::kLast;  // how the next step depends on it
};

// The chain of units the run's wall time waited for: from the unit that
// ended last, back through the unit each one waited for or ran after on its
// thread, whichever ended latest (docs/critical-path.md). path_ns +
// waits_ns == wall_ns; work_ns is the time threads spent inside units,
// summed over threads and processes.
struct CriticalPath {
  std::uint64_t units = 0, threads = 0, processes = 0;  // units with a slice, their threads
  std::int64_t begin_ns = 0, end_ns = 0, wall_ns = 0;   // the units' first start to last end
  std::int64_t path_ns = 0, waits_ns = 0, work_ns = 0;
  std::uint64_t steps_total = 0, steps_waited = 0;  // steps, of them reached by a wait
  std::vector<CriticalPathStep> steps;              // by time; the longest kMaxSteps
  std::uint64_t waits = 0;                          // unit_waits instants read
  // Of them, not followed: the unit named, or the waiting one, has no
  // slice in the trace (or on_pid is not a pid, or an id is longer than
  // UnitWaits::kMaxIdBytes).
  std::uint64_t waits_unmatched = 0;
  std::uint64_t waits_beyond = 0;  // not kept (past kMaxWaits): not followed
  bool present() const { return units > 0; }
  static constexpr std::size_t kMaxSteps = 1000;
  static constexpr std::size_t kMaxWaits = std::size_t{1} << 20;
};

struct Report {
  Header header;
  std::vector<NameRow> names;  // host span names, by total desc (GPU work: gpu.names)
  // The pipelines that ran compiler passes, by the name of the span that ran
  // them (aggregator_passes.cpp), by total desc: count = runs, total = the
  // time in their outermost passes, self = total.
  std::vector<NameRow> pipelines;
  // Passes whose runs carried IR sizes, by growth desc (then name).
  std::vector<IrGrowthRow> ir_growth;
  // By compile id, then pid (units are keyed by (pid, compile_id)); in a
  // snapshot, the unit its trigger names first.
  std::vector<UnitRow> units;
  UnitWallSummary unit_walls;
  // Units keep their waterfall spans up to this many (the slowest); the
  // others' were let go (UnitRow::waterfall_dropped), counted here.
  std::uint64_t waterfall_limit = 0;
  std::uint64_t waterfalls_dropped = 0;
  bool multi_process_units =
      false;                 // units (or GPU units) from more than one pid: show a pid column
  std::vector<SpanRow> top;  // slowest first
  GpuSection gpu;
  // Failed passes by start; at most kMaxFailedPasses kept of failed_passes_total.
  std::vector<FailedPass> failed_passes;
  std::uint64_t failed_passes_total = 0;
  static constexpr std::size_t kMaxFailedPasses = 10000;
  // Cache lookups by layer, with their miss reasons (cache_lookups.hpp).
  std::vector<CacheLayerRow> caches;
  // Tuning sessions, longest first (autotune_sessions.hpp), and the events
  // of sessions past the kept number (counted only).
  CriticalPath critical_path;
  std::vector<AutotuneRow> autotune;
  std::uint64_t autotune_events_beyond = 0;
  std::uint64_t runtime_records = 0;     // metrics lines with compile_id null
  std::int64_t runtime_duration_ns = 0;  // their duration_us, summed
  std::uint64_t autotune_records = 0;    // metrics lines of tuning sessions
  bool has_metrics = false;
};

}  // namespace jitscope::report
