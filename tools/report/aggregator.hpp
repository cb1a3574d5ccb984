// Folds decoded trace events into a Report: per-name totals, self times,
// compile units, the slowest spans, GPU attribution, the header.
//
// Memory is bounded by what is distinct (names, each with a bounded
// Distribution of its durations for percentiles, threads, processes, compile
// units, the top-N heap, the open B/E stacks) plus one self-time run
// (self_time.hpp: spans past it wait in a temporary file), never by the
// number of events: 47 MiB peak RSS for a 1 GiB jitscope trace, as for a
// 256 MiB one. What is distinct costs about 0.7 KB per span name and 2 KB
// per compile unit (a trace of 1 M distinct names: 685 MiB;
// docs/performance.md): a trace that names every span differently takes
// memory in proportion.
//
// What counts as a span: an "X" event with ts (dur missing = 0), and a
// "B"/"E" pair on one (pid, tid), matched as a stack. The stack holds up to
// max_open_begins B's per thread (2^20) and max_open_begins_total in all
// (2^22, 32 bytes each: 128 MiB); a B past either bound is counted and
// warned about, and so is the E that closes it: an E never closes another
// B than its own. Compile-unit slices
// (cat "compile_unit" with a compile_id) go to the units table, not the
// name tables, but still nest other spans for self time. GPU-side slices
// (args device and stream: kernels, copies, sets) are spans of their stream's
// thread and feed the GPU table; they are not phases of a unit.
//
// Units are keyed by (pid, compile_id): compile ids restart in every
// process. A GPU slice (on jitscope's fake pid 10000000 * (device + 1) +
// host pid) counts for its host process's units (compiled_by_id, compile_id).
// An event whose end does not fit in int64 ns (ts + dur, E - B) is skipped
// and counted in a warning; sums of times saturate at INT64_MAX.
// Cost: O(1) expected per event (hash lookups) plus O(log n) per span for
// self time (a sort).
//
// The parts: aggregator.cpp (intake, header), aggregator_spans.cpp (names,
// self time, slowest spans), aggregator_units.cpp (units and the metrics
// join), aggregator_gpu.cpp (GPU attribution); their shared state is in
// aggregator_state.hpp.
#pragma once

#include "autotune_sessions.hpp"
#include "cache_lookups.hpp"
#include "critical_path.hpp"
#include "report_data.hpp"
#include "self_time.hpp"

#include <event_decoder.hpp>
#include <trace_reader.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jitscope::report {

struct MetricsFile;

class Aggregator final : private SelfTimeSink {
 public:
  struct Options {
    std::size_t top_n = 10;
    std::size_t self_time_run_spans = SelfTime::kDefaultRunSpans;  // spans sorted in memory
    std::size_t max_open_begins = std::size_t{1} << 20;            // per thread
    std::size_t max_open_begins_total = std::size_t{1} << 22;      // all threads
    // Units whose waterfall spans (UnitRow::spans) are kept: the slowest
    // by their own slice's wall time. 0: none (the text formats show no
    // waterfall). Each holds up to UnitRow::kMaxSpans spans, so a report
    // of millions of units keeps its memory per unit flat.
    std::size_t waterfall_units = kDefaultWaterfallUnits;
  };
  static constexpr std::size_t kDefaultWaterfallUnits = 1000;
  explicit Aggregator(Options opt);
  ~Aggregator();

  // `decoder` is the one that produced `ev` (for args read on demand).
  void add(const tools::DecodedEvent& ev, tools::EventDecoder& decoder);

  // Closes everything and builds the report. `repairs`: what the reader
  // accepted that strict JSON would not (header warnings).
  Report finish(const std::string& input, std::uint64_t bytes, std::uint64_t events,
                bool unterminated, std::uint64_t fields_ignored, const MetricsFile* metrics,
                const tools::InputRepairs& repairs = {});

 private:
  struct NameStats;
  struct PipelineStats;
  struct Placed {  // a span of a unit's waterfall (UnitStats::longest)
    std::int64_t start, dur;
    std::uint32_t name, thread;
  };
  struct PhaseAgg;
  struct UnitStats;
  struct ThreadState;
  struct TopEntry;
  struct CrashNote;
  struct FailedSpan;
  struct SvHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept;
  };
  using Index = std::unordered_map<std::string, std::uint32_t, SvHash, std::equal_to<>>;
  // A direct-mapped cache of thread ids by (pid, tid) when both are numbers
  // (the usual case), and of process ids by a number pid, in front of the
  // key-string indexes (which stay the authority: a miss or a collision
  // only costs the key path). Events alternate between host threads and GPU
  // streams, so the one-entry last-thread cache below misses half the time.
  struct NumberSlot {
    std::int64_t pid = 0, tid = 0;
    std::uint32_t id = UINT32_MAX;  // empty
  };
  static std::size_t number_slot(std::int64_t pid, std::int64_t tid, int bits) noexcept;

  // GPU work's names have their own entries: a host span and a kernel of the
  // same name never share a row.
  // A name index with a direct-mapped cache of recent names by hash in
  // front (the index stays the authority): a span's name is looked up per
  // span, and the map's lookup divides by its prime bucket count.
  struct NameIndex {
    Index map;
    static constexpr int kCacheBits = 8;
    std::uint32_t cache[1u << kCacheBits];
    NameIndex() { std::fill(std::begin(cache), std::end(cache), UINT32_MAX); }
  };
  std::uint32_t name_id(std::string_view name) { return name_in(names_index_, name); }
  std::uint32_t gpu_name_id(std::string_view name) { return name_in(gpu_names_index_, name); }
  std::uint32_t name_in(NameIndex& index, std::string_view name);
  // A compile unit by (pid, compile id): compile ids restart in every process.
  std::uint32_t unit_id(bool has_pid, const Id& pid, std::string_view compile_id);
  std::uint32_t unit_id(std::uint32_t thread, std::string_view compile_id);  // the thread's pid
  std::uint32_t thread_id(const tools::DecodedEvent& ev);
  std::uint32_t note_process(const tools::DecodedEvent& ev);  // its index in process_names_
  // Where a span ran: a host thread, a GPU stream, or a host thread in a
  // CUDA call CUPTI recorded (kept out of the host tables, as GPU work is).
  enum class Side : std::uint8_t { kHost, kGpu, kCudaCall };
  // `order`: when the span was written (a B/E pair: at its B); `from_x`: an X slice.
  // Returns the name's id.
  std::uint32_t span(std::uint32_t thread, std::string_view name, std::string_view cat,
                     std::int64_t start, std::int64_t dur, std::string_view compile_id,
                     bool attached, Side side, std::uint64_t order, bool from_x);
  void begin(std::uint32_t thread, const tools::DecodedEvent& ev, tools::EventDecoder& decoder);
  void end(std::uint32_t thread, const tools::DecodedEvent& ev, tools::EventDecoder& decoder);
  void gpu_slice(const tools::DecodedEvent& ev, std::uint32_t name);  // `name`: ev.name's id
  // A compile-unit slice's args: unit_key, frame, incomplete.
  void unit_slice_args(std::uint32_t unit, const tools::DecodedEvent& ev);
  // A span's marks: "failed" (a failed pass) and "incomplete" (open at a
  // crash or stop). `begin_reason`: a B/E pair whose B was marked failed,
  // and the reason its B gave (else null).
  void span_marks(std::uint32_t thread, std::uint32_t name, std::int64_t start, std::int64_t dur,
                  std::string_view compile_id, const tools::DecodedEvent& ev,
                  tools::EventDecoder& decoder, const std::string* begin_reason);
  void crash_instant(const tools::DecodedEvent& ev, tools::EventDecoder& decoder);
  // CompileUnit::cache_lookup's instant (aggregator_caches.cpp).
  void cache_lookup(const tools::DecodedEvent& ev, tools::EventDecoder& decoder);
  // `process`: note_process's index, or kNone for an event without a pid.
  void metadata(const tools::DecodedEvent& ev, tools::EventDecoder& decoder, std::uint32_t process);
  void on_self(const TimedSpan& span, std::int64_t self_ns, const Gap& longest,
               const TimedSpan* parent) override;
  // Compiler passes and their pipelines (aggregator_passes.cpp): whether a
  // span name is a pass, from its first span with args; each outermost
  // pass run's time to the run of the pipeline its parent span is, which
  // ends with that span.
  void classify_pass(std::uint32_t name, const tools::DecodedEvent& ev,
                     tools::EventDecoder& decoder);
  void pipeline_step(const TimedSpan& span, const TimedSpan* parent);
  void end_pipeline_run(std::uint32_t name, std::int64_t ns);
  void pipeline_rows(Report& r);
  // A pass run's IR sizes (its args, or `before` from its B when >= 0).
  void ir_sizes(std::uint32_t name, std::int64_t dur, const tools::DecodedEvent& ev,
                tools::EventDecoder& decoder, std::int64_t before);
  void ir_growth_rows(Report& r) const;
  // Child processes (aggregator_children.cpp): a unit slice's gaps, a
  // parent's "spawn" slice, and after the self times the children's time
  // in their parents' gaps.
  void on_gap(const TimedSpan& span, const Gap& gap) override;
  void spawn_note(std::uint32_t thread, const tools::DecodedEvent& ev,
                  tools::EventDecoder& decoder);
  void credit_children();
  // finish(), table by table. `unit_pids` collects the pids of the units and
  // GPU rows (a pid column when there is more than one).
  void name_rows(Report& r) const;
  void unit_rows(Report& r, const MetricsFile* metrics, std::set<std::string>& unit_pids);
  // The unit's thread, lanes and waterfall spans into `row`.
  void place_spans(const UnitStats& u, UnitRow& row) const;
  // A span of unit `unit` for its waterfall, if the unit may still keep one.
  void keep_waterfall_span(std::uint32_t unit, std::int64_t start, std::int64_t dur,
                           std::uint32_t name, std::uint32_t thread);
  // The unit's own slice ended after `wall_ns`: it keeps its waterfall if it
  // is among the opt_.waterfall_units slowest so far; the one it displaces
  // (or itself) lets its spans go.
  void settle_waterfall(std::uint32_t unit, std::int64_t wall_ns);
  void drop_waterfall(std::uint32_t unit);
  void top_rows(Report& r);
  void gpu_rows(Report& r, std::set<std::string>& unit_pids) const;
  // The failed passes: the "failed" spans and each crashed thread's innermost open span.
  void failed_rows(Report& r) const;
  void autotune_rows(Report& r) const;
  const CrashNote* crash_of(bool has_pid, const Id& pid) const;

  Options opt_;
  NameIndex names_index_, gpu_names_index_;
  std::vector<NameStats> names_;
  Index units_index_;
  // A deque: no doubling copies of a unit's state (most of the report's
  // memory per unit), and references stay valid as units are added.
  std::deque<UnitStats> units_;
  Index threads_index_;
  std::array<NumberSlot, 256> threads_by_number_{};
  std::vector<ThreadState> threads_;
  Index processes_index_;
  std::array<NumberSlot, 64> processes_by_number_{};  // tid unused (0)
  std::vector<std::string> process_names_;
  std::string key_;       // scratch for thread/process keys
  std::string unit_key_;  // scratch for (pid, compile id) keys
  std::uint32_t last_thread_ = UINT32_MAX;
  std::string last_thread_key_;

  std::vector<TopEntry> top_;  // min-heap of the slowest spans
  // Min-heap of (own wall ns, unit) of the units keeping their waterfalls.
  std::vector<std::pair<std::int64_t, std::uint32_t>> waterfalls_;
  // Units holding spans before their own slice ended, oldest first (stale
  // entries: settled or dropped since), and how many of them are live.
  std::deque<std::uint32_t> unsettled_;
  std::uint64_t unsettled_with_spans_ = 0;
  std::uint64_t waterfalls_dropped_ = 0;
  // Dropped units' waterfall heaps, emptied, for the next units to fill.
  std::vector<std::vector<Placed>> spare_waterfalls_;
  static constexpr std::size_t kSpareWaterfalls = 64;
  std::uint64_t seq_ = 0;
  std::uint64_t order_ = 0;  // X slices and B's as written: ties in self time
  SelfTime self_;
  std::size_t open_begins_ = 0;  // on all threads' stacks

  Header header_;
  // Per process: its jitscope_session's CUPTI state and its last
  // jitscope_stats' drop counts, which finish() sums.
  struct ProcessStats {
    bool has_session = false;
    std::string cupti_state;
    std::optional<std::int64_t> events_dropped, compile_records_dropped;
  };
  std::vector<ProcessStats> process_stats_;  // by note_process's index, grown as needed
  ProcessStats pidless_stats_;               // those of events without a pid
  std::vector<std::uint32_t>
      session_processes_;  // in the order their sessions came (kNone: pidless)
  ProcessStats& process_stats(std::uint32_t process);
  std::uint64_t ph_small_[128] = {};                          // one-letter ph values
  std::unordered_map<std::string, std::uint64_t> ph_counts_;  // the others
  std::uint64_t spans_without_ts_ = 0, unmatched_ends_ = 0;
  std::uint64_t begins_beyond_ = 0;  // past the open-B bounds (their E's too)
  std::uint64_t end_overflow_ = 0;   // events whose end does not fit in int64 ns (skipped)
  GpuSection gpu_;
  CacheLookups caches_;
  UnitWaits waits_;  // CompileUnit::waits_for, for the critical path
  AutotuneSessions autotune_;
  std::vector<CrashNote> crashes_;                              // the first crash of each process
  std::unordered_map<std::string, std::uint32_t> crash_index_;  // its pid key -> crashes_
  std::vector<FailedSpan> failed_;  // the first Report::kMaxFailedPasses
  struct SpawnNote {                // a parent's "spawn" slice (note_child_process)
    std::uint32_t thread;
    std::int64_t ts;
    std::string child_pid;  // its args' child_pid, as text (Id::str)
  };
  // The pipelines by their span's name id (kUnitPipeline: a unit slice,
  // kNone: no span around the passes), and the runs still open: their
  // span's order -> (name id, time in passes so far).
  static constexpr std::uint32_t kUnitPipeline = 0xfffffffe;  // kNone - 1
  std::map<std::uint32_t, PipelineStats> pipelines_;
  std::map<std::uint32_t, IrGrowthRow> ir_growth_;  // by pass name (its `pass` unset)
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::int64_t>> pipeline_runs_;
  std::vector<SpawnNote> spawns_;  // at most kMaxSpawns (the others counted)
  static constexpr std::size_t kMaxSpawns = 1'000'000;
  std::uint64_t spawns_beyond_ = 0;
  std::unordered_set<std::uint32_t> spawn_threads_;  // the threads of spawns_
  std::uint64_t failed_total_ = 0;
};

}  // namespace jitscope::report
