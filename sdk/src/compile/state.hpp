// Internal state of the compile layer (compile.hpp): phase statistics, unit
// state, the per-thread event stack, field operations and the record sinks.
#pragma once

#include <jitscope/compile.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace jitscope::detail {

class JsonWriter;

// A lock for a few instructions of work (one phase's statistics): cheaper
// than a mutex when uncontended, which is the common case.
class SpinLock {
 public:
  void lock() noexcept {
    // acquire: the holder's writes before unlock() are visible after this.
    while (locked_.exchange(true, std::memory_order_acquire)) {
      // relaxed: only a hint of when to retry the exchange above.
      for (unsigned spin = 0; locked_.load(std::memory_order_relaxed); ++spin) {
        if (spin < 64) {
#if defined(__x86_64__) || defined(__i386__)
          _mm_pause();
#endif
        } else {
          std::this_thread::yield();  // the holder may be descheduled on our core
        }
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }  // pairs with lock()

 private:
  std::atomic<bool> locked_{false};
};

// One run of a phase, listed for compile_times(): when it ended, for the
// order across shards, and how long it took. The end is in its session's
// clock: TSC ticks (kTscEnd set) or CLOCK_MONOTONIC ns; phase_times() puts
// both on CLOCK_MONOTONIC before sorting, as runs of one key can end
// before, during and after a TSC session.
struct PhaseRun {
  static constexpr std::uint64_t kTscEnd = std::uint64_t{1} << 63;  // ticks never reach it
  std::uint64_t end = 0;
  std::uint64_t ns = 0;
};

// A share of one phase key's statistics. Each thread ends its runs into one
// shard (CompileThread::phase_shard), so threads timing the same key do not
// wait on one lock or bounce one cache line; queries add the shards up.
struct alignas(64) PhaseShard {
  SpinLock lock;
  // Guarded by `lock`.
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t max_ns = 0;
  std::uint64_t outermost_ns = 0;  // runs that were outermost column phases
  std::uint64_t self_ns = 0;       // total less the column phases inside its runs
  std::vector<PhaseRun> runs;      // its first kMaxDurationsPerKey runs
};
inline constexpr std::uint32_t kPhaseShards = 8;

struct PhaseStats {
  std::string key;     // also the trace slice's static name: never changes or moves
  std::string column;  // "*_us" or empty
  bool compile_event = false;
  std::uint8_t record_flags = 0;  // kFlagPhase, kFlagCompileEvent
  bool exclusive = false;         // the column gets self time (PhaseOptions::exclusive)
  // Runs listed in all shards, counted kListedChunk at a time (a shared
  // write once per chunk, not per run): past kMaxDurationsPerKey no shard
  // lists more. Each shard can hold up to a chunk the count does not show
  // yet, and shards can pass the check together, so the lists hold at most
  // kMaxDurationsPerKey + 2 * kPhaseShards * kListedChunk runs (81,920) and
  // phase_times() keeps the first kMaxDurationsPerKey of them by end. Those
  // are the key's first runs but for one race at the bound: a thread
  // preempted between its run's end and the check may miss listing it.
  std::atomic<std::uint64_t> listed_runs{0};
  PhaseShard shards[kPhaseShards];
};
inline constexpr std::uint64_t kListedChunk = 1024;

// The registry of phase keys: entries are never freed (their names are
// static names in the rings), so a PhaseStats* is valid for the process.
PhaseStats* find_or_add_phase(std::string_view key, const PhaseOptions& options, Status* status);

struct WaitStats {
  std::string name;
  std::string waiting_track;  // "<name>.waiting"
  std::string total_track;    // "<name>.wait_total_us"
  // relaxed: independent totals; readers want a recent value, not an order.
  std::atomic<std::int64_t> waiting{0};
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::uint64_t> total_ns{0};
};

// A unit's "[frame/attempt] name", the name of its trace slice: in the
// unit itself when it fits (most do: no allocation of its own), else on
// the heap. Never moves (the unit does not), so c_str() stays good.
class UnitDisplay {
 public:
  UnitDisplay() noexcept = default;
  UnitDisplay(const UnitDisplay&) = delete;
  UnitDisplay& operator=(const UnitDisplay&) = delete;
  // Sets it to "[frame/attempt] name"; throws std::bad_alloc for a long one.
  void assign(const CompileId& id, std::string_view name);
  std::string_view view() const noexcept { return {data_, size_}; }
  const char* c_str() const noexcept { return data_; }
  std::size_t name_at() const noexcept { return name_at_; }  // where `name` starts

 private:
  static constexpr std::size_t kInline = 48;
  char inline_[kInline] = {};
  std::unique_ptr<char[]> heap_;
  const char* data_ = inline_;
  std::size_t size_ = 0;
  std::size_t name_at_ = 0;
};

struct UnitState {
  // Every live unit is on one list (linked by CompileUnit::open, unlinked by
  // the destructor), so that the fork handlers can hold each unit's mutex
  // across fork() (fork.cpp). Throws std::bad_alloc (its record's block).
  UnitState();
  ~UnitState();
  UnitState(const UnitState&) = delete;
  UnitState& operator=(const UnitState&) = delete;

  // Column phases charge these without a lock (the hot case: many phases per
  // unit); close() adds them to the record. The unit's own thread uses plain
  // slots only it touches (it also closes the unit); attached threads use
  // atomic ones. More distinct column phases than slots: the mutex path.
  // Few enough that the unit (with its shared_ptr block) stays under 1 KiB,
  // in malloc's per-thread cache: with 32 and 32 it took the slow path.
  static constexpr std::size_t kColumnSlots = 16;
  // The owner's slots are used in order and counted, so they need no
  // zeroing (a `rep stos` of the whole array was a tenth of a Python unit's
  // open, perf); the first `owner_used` are set.
  struct OwnerSlot {
    const PhaseStats* phase;
    std::uint64_t us;
  };
  std::uint32_t owner_used = 0;
  OwnerSlot owner_slots[kColumnSlots];
  std::uint64_t owner_duration_us = 0;  // outermost column phases: owner thread only
  // Attached threads claim theirs by a CAS on a null phase: zeroed, and
  // fewer (attached threads time fewer distinct columns).
  static constexpr std::size_t kSharedColumnSlots = 8;
  struct SharedSlot {
    std::atomic<const PhaseStats*> phase{nullptr};  // set once
    std::atomic<std::uint64_t> us{0};
  };
  SharedSlot shared_slots[kSharedColumnSlots];

  std::mutex mutex;
  // The record, in a block of its own: at close the block moves to the
  // recent ring and the metrics queue as it is (no copy of the record),
  // and the unit lets go of it. Guarded by mutex until `closed`; after
  // that nothing reads or writes `record` through the unit (every writer
  // checks `closed` first, under mutex): the block may be gone.
  std::shared_ptr<CompileRecord> record_block;
  CompileRecord& record;
  bool closed = false;       // guarded by mutex: the record has been written
  bool after_ready = false;  // opened after mark_ready(): its owner thread only
  CompileId id;
  UnitDisplay display;
  // CompileUnit::name(): the unit lets go of its record at close, so the
  // name is copied out of `display` at the first call (under `mutex`), and
  // never changed after. Few callers ask; every unit paid for the copy.
  std::string name;
  std::uint64_t packed_id = 0;
  std::weak_ptr<UnitState> self;   // for current_compile_unit()
  UnitState* live_prev = nullptr;  // the live-unit list, guarded by the unit registry's mutex
  UnitState* live_next = nullptr;
};

struct EventFrame::Data {
  Fields trace;  // every level: the slice's args at its end
  Fields event;  // kCompileEvent and kMetric: the compile event entry
};

// One LoadScope on its thread's list (newest first). On the heap: a scope
// destroyed on another thread only marks it ended; its own thread unlinks
// and frees it at its next lookup.
struct LoadFrame {
  LoadFrame* below = nullptr;       // the scope made before it on the thread
  std::shared_ptr<UnitState> unit;  // the unit loads are credited to
  const void* owner = nullptr;      // the thread whose list it is on (its CompileThread)
  // release/acquire: the other thread's last touch of the frame; the owner
  // frees it after seeing it.
  std::atomic<bool> ended{false};
};

// The calling thread's event stack and phase depth. Pointers and counts
// only, so it needs no TLS destructor and no initializer call.
struct CompileThread {
  EventFrame* top = nullptr;
  std::uint32_t column_depth = 0;            // open phases that have a column
  std::uint32_t phase_shard = kPhaseShards;  // PhaseStats::shards index; kPhaseShards: not yet
  LoadFrame* load_top = nullptr;             // the newest LoadScope's frame
};
// Initial-exec, as the ring's thread state (ring/thread_registry.hpp): one
// fs-relative load, where the shared library's default model called
// __tls_get_addr on each access (2 % of a Python unit + phase, perf).
extern constinit thread_local CompileThread t_compile [[gnu::tls_model("initial-exec")]];

// Links `frame` on top of this thread's stack; the frame remembers the thread.
void push_frame(EventFrame& frame) noexcept;
// True if `frame` is on this thread's stack (pushed here); otherwise says
// once that `what` was refused, and false: a frame is only ever unlinked
// by its own thread.
bool on_owning_thread(const EventFrame& frame, std::string_view what) noexcept;
// An object whose end was refused on another thread: its frame stays
// linked on the thread that opened it, so it is never freed. Kept on a list
// for the process's life (reachable: a leak checker sees it is on purpose).
void keep_refused(const void* object) noexcept;
// Unlinks `frame` wherever it is (normally the top).
void pop_frame(EventFrame& frame) noexcept;
EventFrame* outermost_frame() noexcept;
// Ends the phase of `f`, open on this thread: its span, its times, its
// share of its unit's record (Phase::end after the owning-thread check).
void end_phase(EventFrame& f) noexcept;
// Ends the phases opened inside the unit of `unit_frame` (this thread's)
// that are still open, innermost first, marked jitscope_ended_with_unit:
// a unit that closes takes its phases' time into its record, and their
// handles' later end does nothing.
void end_phases_inside(const EventFrame& unit_frame) noexcept;
// Ends a unit frame (a unit's own or an attachment's) on its owning thread,
// now or at `end_ticks` (read from the frame's session clock).
void leave_unit(EventFrame& frame) noexcept;
void leave_unit(EventFrame& frame, std::uint64_t end_ticks) noexcept;
// The innermost unit frame on this thread and its unit, or nullptr.
EventFrame* current_unit_frame() noexcept;
UnitState* current_unit_state() noexcept;
// The unit this thread's CUDA module loads are credited to: the innermost
// LoadScope's, else current_unit_state().
UnitState* loading_unit_state() noexcept;

// ---- fields (event_data.cpp) ----
enum class FieldOp : std::uint8_t { kSet, kIncrement, kAddToSet };
// Applies one operation; an error message if refused (nothing changed then).
std::string apply_field(Fields& fields, FieldOp op, std::string_view key, const FieldValue& value,
                        bool overwrite);
// Same, on a record at the metric level: "*_us" keys are columns, keys the
// SDK writes itself are refused.
bool is_reserved_record_key(std::string_view key) noexcept;
std::string apply_metric(CompileRecord& record, FieldOp op, std::string_view key,
                         const FieldValue& value, bool overwrite);
// Writes each field as a member of the object `w` is in; sets sorted.
void write_fields(JsonWriter& w, const Fields& fields);
// `"k":v,...` for a slice's args (empty if no fields).
std::string render_members(const Fields& fields);
// Writes the frame's trace-level data into its slice's args.
void flush_frame_data(EventFrame& frame) noexcept;
// The guarded() `what` of event(), toplevel_event() and Phase::event() when
// the text saying why no event was found does not fit in memory (the ref's
// later Status then has an empty message).
inline constexpr std::string_view kExplainingLookup = "explaining why no event was found";

// Adds a column phase's µs to the unit's slots (`attached`: from a thread
// other than the unit's own); false if the slots are all taken by other
// phases (then charge the record under the mutex).
bool charge_unit_column(UnitState& unit, const PhaseStats& phase, std::uint64_t column_us,
                        std::uint64_t duration_us, bool attached) noexcept;
// Moves the slots into unit.record; on the unit's own thread, with unit.mutex held, at close.
void merge_unit_columns(UnitState& unit);

// ---- records (record.cpp) ----
// Adds a phase's µs to `column`, and `duration_us` (0 unless it was an
// outermost column phase) to the record's duration.
void charge_column(CompileRecord& record, const std::string& column, std::uint64_t column_us,
                   std::uint64_t duration_us);
void add_compile_event(CompileRecord& record, CompileEvent event);
void add_wait(CompileRecord& record, const std::string& name, std::uint64_t us);
// The runtime record, under its lock, for something that took `span_us` up
// to now; created on first use (starting `span_us` ago).
template <class F>
void with_runtime_record(std::uint64_t span_us, F&& f);
std::mutex& runtime_mutex() noexcept;
CompileRecord& runtime_record_locked(std::uint64_t span_us) noexcept;  // requires runtime_mutex()
// A finished record: to the metrics file (when a session writes one) and the
// in-memory ring of recent records. The copying form is for tests; a unit's
// record is shared in its own block (UnitState::record_block), never copied.
using SharedRecord = std::shared_ptr<const CompileRecord>;
void finish_record(SharedRecord record) noexcept;
void finish_record(CompileRecord&& record) noexcept;
void finish_record(const CompileRecord& record) noexcept;
// A record's bytes in memory, about: what the metrics queue's bound counts.
std::size_t approx_bytes(const CompileRecord& record) noexcept;
// Writes the runtime record if anything was charged to it, and starts anew.
void flush_runtime_record() noexcept;

// Called once, by the first compile unit opened after it is set, on that
// unit's thread just after the unit's slice begins: a worker session's end
// of its parent's spawn arrow (api/session.cpp). Set when such a session
// starts, cleared (nullptr) when it stops.
using FirstUnitHook = void (*)() noexcept;
void set_first_unit_hook(FirstUnitHook hook) noexcept;

// The session's metrics output: records wait here for the flusher, which
// writes their JSON lines; lines made whole already (an autotuning
// session's record) wait beside them, under the same bound.
void set_metrics_output(bool on) noexcept;
struct MetricsBatch {
  std::vector<SharedRecord> records;
  std::vector<std::string> lines;  // JSON objects, no newline
  bool empty() const noexcept { return records.empty() && lines.empty(); }
  void clear() noexcept {
    records.clear();
    lines.clear();
  }
};
void take_metrics_records(MetricsBatch& out);
// The same without waiting: false if the queue is locked (a crash cycle).
bool try_take_metrics_records(MetricsBatch& out);
// A whole line for the metrics file (when the session writes one; else
// dropped, as a record is), counted and bounded as records are.
void finish_metrics_line(std::string line) noexcept;
// Whether a session writes a metrics file now (a line made now would go there).
bool metrics_output_on() noexcept;
// Called (outside any lock) each time a few thousand records wait: the
// session's flusher wake, so that a burst of units is written before the
// queue's bound. nullptr: none.
void set_metrics_wake(void (*wake)()) noexcept;
// Alarms on compile units (api/session.cpp sets them from the session's
// Config): a closed unit of at least `slow_us` of wall time (0: off), or
// failed; and, once mark_ready() said warm-up is over, a unit opened
// (kServingBegin, at its open; `opened_in` names the span, phase or unit
// it was opened in, or is empty) and that unit closed (kServingEnd). The hook
// runs on the unit's thread, outside any lock, after its record is made.
// nullptr: none. kMissStorm (see note_cache_miss) comes with a record that
// holds the unit's id and name only, and `opened_in` says the storm.
enum class UnitAlarm : std::uint8_t { kSlow, kFailed, kServingBegin, kServingEnd, kMissStorm };
using UnitAlarmHook = void (*)(const CompileRecord& record, UnitAlarm alarm,
                               std::string_view opened_in) noexcept;
void set_unit_alarms(std::uint64_t slow_us, bool failed, UnitAlarmHook hook) noexcept;
void raise_unit_alarm(const CompileRecord& record, UnitAlarm alarm,
                      std::string_view opened_in) noexcept;
// Whether the closed unit's record trips kSlow or kFailed (its own
// snapshot then holds the unit: a kServingEnd would be a second one).
bool closing_alarm_due(const CompileRecord& record) noexcept;
// A miss storm: `count` cache misses (any layer, any unit) within
// `window_us`; 0, off. note_cache_miss() counts one miss; when it
// completes a storm it returns the storm (misses 0: none), and a new storm
// then needs `count` new misses.
struct MissStormHit {
  std::uint32_t misses = 0;
  std::uint64_t span_us = 0;  // from the first of them to the last
};
void set_miss_storm(std::uint32_t count, std::uint64_t window_us) noexcept;
MissStormHit note_cache_miss() noexcept;
// In a fork child: off, its mutex new (a thread the child lacks may have
// held it across fork()).
void miss_storm_forget_in_child() noexcept;
// mark_ready()'s state: on until stop().
void set_serving(bool on) noexcept;
bool serving() noexcept;
// Records the metrics queue could not hold since set_metrics_output(true),
// and those the flusher could not write (add_metrics_records_dropped).
std::uint64_t metrics_records_dropped() noexcept;
void add_metrics_records_dropped(std::uint64_t n) noexcept;

std::uint64_t unix_us_now() noexcept;

template <class F>
void with_runtime_record(std::uint64_t span_us, F&& f) {
  std::lock_guard<std::mutex> lock(runtime_mutex());
  f(runtime_record_locked(span_us));
}

// ---- fork() (fork.cpp) ----
// Takes every lock of the compile layer, in the order fork.cpp documents, so
// that fork() happens while no thread holds one; the child inherits them
// held by its own (only) thread, and both sides release them after.
void compile_lock_for_fork() noexcept;
void compile_unlock_after_fork() noexcept;
// Each file's part of it, in that order.
void lock_phases_for_fork() noexcept;  // phase.cpp: the registry, then every phase's spin lock
void unlock_phases_after_fork() noexcept;
void lock_waits_for_fork() noexcept;  // wait_counter.cpp
void unlock_waits_after_fork() noexcept;
void lock_units_for_fork() noexcept;  // unit.cpp: the registry, then every live unit's mutex
void unlock_units_after_fork() noexcept;
void lock_runtime_for_fork() noexcept;  // record.cpp: the runtime record
void unlock_runtime_after_fork() noexcept;
void lock_step_log_for_fork() noexcept;  // step_log.cpp: the sink, then the progress bar
void unlock_step_log_after_fork() noexcept;
void lock_record_sinks_for_fork() noexcept;  // record.cpp: recent records, metrics queue
void unlock_record_sinks_after_fork() noexcept;

// Forgets phase times (keys stay registered).
void reset_phase_times() noexcept;
void reset_units() noexcept;
void reset_records() noexcept;

}  // namespace jitscope::detail
