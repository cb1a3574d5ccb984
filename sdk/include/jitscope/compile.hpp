// jitscope compile units: where a compiler's compile time goes, per compile.
//
// The model is PyTorch's compile instrumentation (dynamo_timed,
// CompileEventLogger, MetricsContext/CompilationMetrics, compile_times),
// rebuilt for compilers that are not PyTorch.
//
// Quickstart
//   #include <jitscope/compile.hpp>
//
//   jitscope::set_model_name("resnet");
//   void compile(Graph& g) {
//     jitscope::CompileUnit unit({.frame = g.signature, .graph = "fwd"});  // [0/0] resnet__fwd_0
//     JITSCOPE_PHASE("lower", {.column = "lower_time_us"});   // µs into the unit's record
//     {
//       JITSCOPE_PHASE("codegen", {.column = "codegen_time_us"});  // nested: no double count
//       unit.cache_miss(g.hash);
//       jitscope::toplevel_event().set(jitscope::DataLevel::kMetric, "kernels", 12);
//     }
//   }  // the unit closes: one JSON line in JITSCOPE_METRICS, kept in recent_compile_records()
//   std::puts(jitscope::compile_times(jitscope::TableFormat::kText, true).c_str());
//
// Semantics
// - Compile id "frame/attempt" (shown "[3/1]"): a unit whose `frame` key was
//   compiled before is a recompile of that frame (same frame id, next attempt).
// - Every span, instant and counter a thread records while a unit is open
//   (its own, or one attached with UnitScope) carries "compile_id" (spans and
//   instants in args; counters as a top-level field, since a counter's args
//   are its plotted series). The flusher adds it: the hot path pays nothing.
// - A phase appends its duration to its key's list (compile_times), and when
//   it has a metrics column (a name ending in "_us") adds its µs to that
//   column of the current unit's record; only the outermost column phase on
//   the unit's own thread adds to the record's duration_us (phases on threads
//   attached with UnitScope run in parallel with it: they fill their columns
//   only, so duration_us never exceeds the unit's wall time). Column phases
//   outside any unit charge the runtime record instead (is_runtime: true).
// - Phase bookkeeping runs whether or not a trace session is on; the trace
//   slices and the metrics file need a session (Config::metrics_path).
//
// Cost (bench/jitscope_bench: BM_Phase*, BM_CompileUnit; docs/performance.md):
// a phase is a span plus its key's update under a per-key spin lock, about
// 1.7x a plain span; a column phase adds its µs to a slot of the unit with no
// further lock (plain on the unit's thread, atomic on attached ones). With no
// session a phase still does its bookkeeping (two CLOCK_MONOTONIC reads). A
// compile unit allocates (its record, its name), about 2 µs open to close:
// open one per compilation, not per op.
//
// Macros:
//   JITSCOPE_PHASE("literal")                       phase to the end of the scope
//   JITSCOPE_PHASE("literal", {.column = "x_us", .compile_event = true})
// With JITSCOPE_DISABLE defined, JITSCOPE_PHASE is `static_cast<void>(0)`,
// every class here records nothing and every call is an inline no-op
// (detail/disabled_compile.hpp): data calls return ok, queries are empty,
// tables are empty strings.
//
// Errors: nothing here throws into the host. Misused event data returns a
// Status saying what is wrong (try_* forms ignore it silently).
#pragma once

#include <jitscope/jitscope.hpp>

#include <compare>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace jitscope::detail {
struct UnitState;
struct PhaseStats;
struct WaitStats;
// One open phase or unit on a thread's event stack (intrusive list through
// the RAII objects, so opening one never allocates).
struct EventFrame {
  EventFrame* below = nullptr;  // the frame it is nested in
  const char* name = nullptr;   // phase key or unit display name (stable)
  UnitState* unit = nullptr;    // set on unit frames
  PhaseStats* phase = nullptr;  // set on phase frames
  struct Data;                  // event data added while open (compile/event_data.cpp)
  Data* data = nullptr;         // allocated on first use
  SpanToken token;              // its trace slice (args go there)
  std::uint64_t begin_ticks = 0;
  std::uint32_t session = 0;  // session word at open; 0: no trace slice
  bool column_depth_counted = false;
  bool attached = false;          // a unit frame made by UnitScope on another thread
  std::uint32_t column_base = 0;  // the thread's column-phase depth at open
  bool open = false;
  const void* owner = nullptr;  // the thread whose event stack it is on
  // Exclusive columns: time of the column phases inside it, and the part of
  // this phase's time an outer phase that ended first already counted.
  std::uint64_t nested_column_ns = 0;
  std::uint64_t counted_by_outer_ns = 0;
};
struct LoadFrame;  // a LoadScope on its thread's list (compile/state.hpp)
}  // namespace jitscope::detail

JITSCOPE_NAMESPACE_BEGIN

// "frame/attempt": compile `frame` for the `attempt`-th time (0: first).
struct JITSCOPE_API CompileId {
  std::uint32_t frame = 0;
  std::uint32_t attempt = 0;
  std::string str() const;      // "3/1"
  std::string display() const;  // "[3/1]"
  friend bool operator==(const CompileId&, const CompileId&) = default;
};

// A value of event data or of a metrics field.
class FieldValue {
 public:
  enum class Type : std::uint8_t { kInt, kDouble, kBool, kString };
  FieldValue(bool v) : v_(v) {}
  template <std::signed_integral T>
  FieldValue(T v) : v_(static_cast<std::int64_t>(v)) {}
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool>) FieldValue(T v) : v_(static_cast<std::int64_t>(v)) {}
  template <std::floating_point T>
  FieldValue(T v) : v_(static_cast<double>(v)) {}
  FieldValue(std::string_view v) : v_(std::string(v)) {}
  FieldValue(const char* v) : v_(std::string(v != nullptr ? v : "")) {}
  FieldValue(std::string v) : v_(std::move(v)) {}

  Type type() const noexcept { return static_cast<Type>(v_.index()); }
  std::int64_t as_int() const noexcept { return std::get<0>(v_); }
  double as_double() const noexcept { return std::get<1>(v_); }
  bool as_bool() const noexcept { return std::get<2>(v_); }
  const std::string& as_string() const noexcept { return std::get<3>(v_); }
  // Sets are written sorted: by type (int, double, bool, string), then value.
  friend auto operator<=>(const FieldValue&, const FieldValue&) = default;
  friend bool operator==(const FieldValue&, const FieldValue&) = default;

 private:
  std::variant<std::int64_t, double, bool, std::string> v_;
};

// A field: one value (set/increment) or a set of values (add_to_set).
struct Field {
  bool is_set = false;
  FieldValue value = std::int64_t{0};
  std::set<FieldValue> members;
};
using Fields = std::map<std::string, Field, std::less<>>;

// A cache's traffic inside one unit, set by the compiler.
struct CacheCounts {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::set<std::string> hit_keys;
  std::set<std::string> miss_keys;
};

struct WaitTotals {
  std::uint64_t count = 0;
  std::uint64_t total_us = 0;
};

// A phase opened as a compile event, as listed in its unit's record.
struct CompileEvent {
  std::string name;
  std::uint64_t start_time_us = 0;  // Unix epoch µs
  std::uint64_t duration_us = 0;
  Fields fields;  // data added at kCompileEvent or kMetric level
};

// A file recorded for a unit (CompileUnit::artifact), as listed in its record.
struct ArtifactEntry {
  std::string kind;  // "ptx", "llvm_ir", "log", ...
  std::string path;  // absolute
  std::uint64_t bytes = 0;
  std::string fnv1a;  // 64-bit FNV-1a of the content, 16 hex digits
};

// One line of the metrics file (JSON lines; fields in docs/compile-units.md).
struct JITSCOPE_API CompileRecord {
  bool is_runtime = false;  // phases outside any unit (no compile id unless given)
  bool has_compile_id = false;
  CompileId compile_id;
  std::string name;  // model__graphs_nth
  // What the unit compiles, the same from run to run and in any compile
  // order: CompileUnitOptions::key, else the frame, else the name without
  // its _nth (model__graphs). The compare gate matches units by it, and
  // recompiles of one frame share it.
  std::string unit_key;
  std::string frame;  // CompileUnitOptions::frame ("" if none given)
  bool is_forward = true;
  std::uint64_t start_time_us = 0;  // Unix epoch µs
  std::uint64_t end_time_us = 0;
  std::uint64_t duration_us = 0;                 // outermost column phases (the compile time)
  std::map<std::string, std::uint64_t> columns;  // "*_us" phase columns
  std::string recompile_reason;
  std::vector<std::string> recompile_user_contexts;  // from the hooks, 256 chars each
  bool failed = false;
  std::string fail_type;
  std::string fail_reason;
  std::map<std::string, CacheCounts> caches;
  std::map<std::string, WaitTotals> waits;
  std::vector<CompileEvent> compile_events;
  std::uint64_t compile_events_dropped = 0;  // beyond kMaxCompileEventsPerRecord
  std::vector<ArtifactEntry> artifacts;      // in the order recorded
  Fields fields;                             // added at the kMetric level

  // The JSON object written as one metrics line (no newline).
  std::string to_json() const;
};

inline constexpr std::size_t kRecentRecordCapacity = 64;
inline constexpr std::size_t kMaxCompileEventsPerRecord = 1024;
inline constexpr std::size_t kRecompileContextMaxChars = 256;

// ---- names -------------------------------------------------------------

// The model name in unit names (default "model"), process-wide.
JITSCOPE_API void set_model_name(std::string_view name) noexcept;
JITSCOPE_API std::string model_name();

// Pushes a graph name on this thread's graph-name stack while in scope; units
// opened inside are named model__<stack joined by '_'>_<nth>.
class JITSCOPE_API GraphNameScope {
 public:
  explicit GraphNameScope(std::string_view graph) noexcept;
  ~GraphNameScope();
  GraphNameScope(const GraphNameScope&) = delete;
  GraphNameScope& operator=(const GraphNameScope&) = delete;
};

// ---- compile units ------------------------------------------------------

// One part of a cache key, by name ("source_hash", "options", "target",
// "versions"): what jitscope-report compares to say why a lookup missed.
struct CacheKeyPart {
  std::string_view name;
  std::string_view value;
};
enum class CacheOutcome : std::uint8_t { kHit, kMiss };

struct CompileUnitOptions {
  // What is compiled (a function, a kernel family). Compiling the same frame
  // again is a recompile: same frame id, next attempt. Empty: a new frame.
  std::string_view frame = {};
  // This unit's graph name, on the graph-name stack while the unit is open.
  std::string_view graph = "graph";
  bool is_forward = true;
  // Why this compile happens again (a guard failed, a shape changed...).
  std::string_view recompile_reason = {};
  // A stable name for what is compiled, where the frame is not one (a
  // kernel's signature and specialization, a cache key): the record's and
  // the slice's unit_key, which the compare gate matches runs by. Empty:
  // the frame, else the unit's name without its counter.
  std::string_view key = {};
};

class CompileUnitRef;
class LoadScope;
JITSCOPE_API CompileUnitRef current_compile_unit() noexcept;

// A copyable handle to an open unit, for work done on other threads.
class CompileUnitRef {
 public:
  CompileUnitRef() = default;
  bool valid() const noexcept { return state_ != nullptr; }

 private:
  friend class CompileUnit;
  friend class UnitScope;
  friend class LoadScope;
  friend JITSCOPE_API CompileUnitRef current_compile_unit() noexcept;
  std::shared_ptr<detail::UnitState> state_;
};

// RAII: one compilation. Opens a trace slice "[3/1] model__fwd_0", makes the
// unit current on this thread, and on close writes its record. It must close
// on the thread that opened it (as RAII on the stack does).
class JITSCOPE_API CompileUnit {
 public:
  explicit CompileUnit(const CompileUnitOptions& options = {}) noexcept {
    if constexpr (detail::kCompiledIn) open(options);
  }
  ~CompileUnit() { close(); }
  CompileUnit(const CompileUnit&) = delete;
  CompileUnit& operator=(const CompileUnit&) = delete;

  CompileId id() const noexcept;
  const std::string& name() const noexcept;
  bool is_recompile() const noexcept { return id().attempt > 0; }

  // Marks the compile failed (fail_type/fail_reason in the record). A unit
  // left by an exception is marked failed on its own; call
  // fail_with_current_exception() in a catch block to record its type and what().
  void fail(std::string_view type, std::string_view reason) noexcept;
  void fail_with_current_exception() noexcept;

  // Cache traffic for the record: <cache>_hits / _misses and the keys.
  void cache_hit(std::string_view key, std::string_view cache = "cache") noexcept;
  void cache_miss(std::string_view key, std::string_view cache = "cache") noexcept;
  // A lookup in cache layer `layer` ("fx_graph", "ptx", "disk") with its key
  // in named parts, and whether it hit. The record counts it as cache_hit /
  // cache_miss do (the key: the parts as name=value, ';'-joined); the trace
  // gets an instant "cache_lookup" on this thread (args layer, hit, unit and
  // key_parts: the parts as a JSON object) from which jitscope-report
  // explains each miss by the parts that differ from the nearest earlier key
  // of the layer (docs/caches.md). Parts keep their order; the report takes
  // a name given twice at its last value.
  void cache_lookup(std::string_view layer, std::initializer_list<CacheKeyPart> key,
                    CacheOutcome outcome) noexcept {
    cache_lookup(layer, key.begin(), key.size(), outcome);
  }
  void cache_lookup(std::string_view layer, const CacheKeyPart* key, std::size_t parts,
                    CacheOutcome outcome) noexcept;

  // This unit needed unit `on`'s result and waited for it: a link step for
  // the compiles it links, a pool's caller for the unit a worker compiled.
  // jitscope-report's critical path follows these waits, besides the units
  // that ran before on the same thread (docs/critical-path.md). `pid`: the
  // process that compiled `on`, for a worker's unit in a merged trace (0:
  // this process). Call it while this unit is open, once per unit waited
  // for, e.g. as each wait ends. The trace gets an instant "unit_waits" on
  // this thread (args unit, on, on_pid). An error without a session, when
  // this unit is not open, for this unit itself, or for a negative pid; the
  // unit named is not checked (it may be another process's): the report
  // counts a wait on a unit not in the trace. Cold: one instant.
  Status waits_for(CompileId on, std::int64_t pid = 0) noexcept;

  // Writes `content` (text or bytes) now, as a file of the session's
  // artifacts folder (Config::artifacts_dir): <compile id>/<kind>.<extension>
  // ("3_1/ptx.ptx"; a kind recorded again gets ".1", ".2" ...), and lists it
  // in the record. Written at the call, so it survives a crash of the host.
  // An error without a session, with artifacts off, past the session's
  // max_artifact_bytes (counted, said once) or when the write fails. Kind
  // and extension keep [A-Za-z0-9._-]; other bytes become '_'. Cold: I/O on
  // the calling thread.
  Status artifact(std::string_view kind, std::string_view content,
                  std::string_view extension = "txt") noexcept;

  // Metric-level data straight on this unit's record. Keys ending in "_us"
  // are columns: integers only, increment adds µs; phases' µs in the same
  // column are added to it when the unit closes.
  Status set(std::string_view key, const FieldValue& value, bool overwrite = false) noexcept;
  Status increment(std::string_view key, std::int64_t by = 1) noexcept;
  Status add_to_set(std::string_view key, const FieldValue& value) noexcept;

  CompileUnitRef ref() const noexcept;
  // Opened and not yet closed.
  bool is_open() const noexcept { return frame_.open; }
  // Closes now (idempotent); the destructor calls it. On the thread that
  // opened it (elsewhere: refused, said once, the unit stays open).
  void close() noexcept;

 private:
  void open(const CompileUnitOptions& options) noexcept;
  std::shared_ptr<detail::UnitState> state_;
  detail::EventFrame frame_;
  int uncaught_at_open_ = 0;
  bool graph_pushed_ = false;
};

// RAII: makes a unit opened on another thread current on this one (its id on
// this thread's events, its record charged by this thread's phases). Attach
// only while the unit is open; later work is not in its record.
class JITSCOPE_API UnitScope {
 public:
  explicit UnitScope(const CompileUnitRef& unit) noexcept;
  ~UnitScope();
  UnitScope(const UnitScope&) = delete;
  UnitScope& operator=(const UnitScope&) = delete;

 private:
  friend class ThreadAttachment;
  std::shared_ptr<detail::UnitState> state_;
  detail::EventFrame frame_;
};

// RAII: the CUDA modules and libraries this thread loads while it lives are
// credited to `unit`, open or closed: their kernels' GPU slices carry
// `compiled_by` = that unit, for every later launch (docs/gpu-activity.md).
// For a JIT that compiles in a unit and loads the binary later (at first
// launch, from its cache, on another thread). Nothing else changes: this
// thread's spans carry no compile_id. Without it a load is credited to the
// unit open on the thread, if any. It wins over every unit open on the
// thread, also one opened inside it; the newest scope wins, and scopes may
// end in any order. Destroyed on another thread than its own, it is said
// once, and ends at its own thread's next load.
class JITSCOPE_API LoadScope {
 public:
  explicit LoadScope(const CompileUnitRef& unit) noexcept;
  ~LoadScope();
  LoadScope(const LoadScope&) = delete;
  LoadScope& operator=(const LoadScope&) = delete;
  // False when made with an invalid ref, or out of memory: loads are then
  // credited as without it.
  bool active() const noexcept { return frame_ != nullptr; }

 private:
  detail::LoadFrame* frame_ = nullptr;
};

// current_compile_unit(): the unit current on this thread (invalid if none).
JITSCOPE_API bool current_compile_id(CompileId* out) noexcept;

// ---- phases ------------------------------------------------------------

class EventRef;
JITSCOPE_API EventRef event(std::string_view name) noexcept;
JITSCOPE_API EventRef toplevel_event() noexcept;

struct PhaseOptions {
  // A metrics column ending in "_us" that this phase's µs add to; empty: none.
  std::string_view column = {};
  // Also a compile event: trace category "compile_event", listed with its
  // data in the unit record's compile_events.
  bool compile_event = false;
  // The column gets the phase's self time: its duration less that of the
  // column phases opened inside it on this thread. For nested phases that
  // share a column (a pass manager's adaptors around its passes), so that
  // the column sums to wall time instead of counting nesting levels twice.
  // duration_us and compile_times still see the whole duration.
  bool exclusive = false;
};

// A phase's identity, registered once (a namespace-scope or function-local
// static). Its name must not change; it lives for the rest of the process.
class JITSCOPE_API PhaseKey {
 public:
  explicit PhaseKey(std::string_view key, const PhaseOptions& options = {}) noexcept;
  // Ok, or why the options were refused (e.g. a column not ending in "_us",
  // in which case the phase runs without a column).
  const Status& status() const noexcept { return status_; }
  detail::PhaseStats* stats() const noexcept { return stats_; }

 private:
  detail::PhaseStats* stats_ = nullptr;
  Status status_;
};

// RAII: a timed phase (dynamo_timed). A phase or unit ends on the thread
// that opened it (an end elsewhere is refused with one `jitscope:` line);
// ending one before those opened inside it is allowed (each keeps its own
// duration and unit). For a phase begun and ended in separate callbacks,
// see begin_phase().
class JITSCOPE_API Phase {
 public:
  explicit Phase(const PhaseKey& key) noexcept {
    if constexpr (detail::kCompiledIn) open(key.stats(), nullptr, 0);
  }
  Phase(const PhaseKey& key, std::initializer_list<Arg> args) noexcept {
    if constexpr (detail::kCompiledIn) open(key.stats(), args.begin(), args.size());
  }
  // Looks the key up by name (a lock and a map lookup): prefer a PhaseKey.
  explicit Phase(std::string_view key, const PhaseOptions& options = {}) noexcept;
  ~Phase() { end(); }
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

  void end() noexcept;
  // Begun and not yet ended (by end(), or with its unit). On the thread that
  // began it: another thread may be ending it right now.
  bool is_open() const noexcept { return frame_.open; }
  // This phase as an event, for data (the same as event(<its key>) while it
  // is the innermost phase of that name).
  EventRef event() noexcept;

 private:
  friend class PhaseHandle;
  void open(detail::PhaseStats* stats, const Arg* args, std::size_t count) noexcept;
  detail::EventFrame frame_;
};

// ---- begun in one callback, ended in another --------------------------------
//
// For hooks shaped as before/after callbacks (a pass manager's
// instrumentation, a JIT's compile-start and compile-done events): the
// handles are move-only values to keep in per-thread state. Each ends on
// the thread that began it, in any order; dropping a handle ends it. An
// end on another thread is refused with one `jitscope:` line: the phase
// stays open and the handle keeps it, so that an end on its own thread
// still ends it. A handle dropped on another thread leaves the phase open
// where it began (its memory is kept: never freed under the thread that
// still links it). A phase still open when its unit closes ends with the
// unit (marked jitscope_ended_with_unit); its handle's end then does
// nothing. Cost: a phase plus one allocation.

class JITSCOPE_API PhaseHandle {
 public:
  PhaseHandle() = default;
  PhaseHandle(PhaseHandle&& other) noexcept : phase_(other.phase_) { other.phase_ = nullptr; }
  PhaseHandle& operator=(PhaseHandle&& other) noexcept {
    if (this != &other) {
      end_or_keep();
      phase_ = other.phase_;
      other.phase_ = nullptr;
    }
    return *this;
  }
  PhaseHandle(const PhaseHandle&) = delete;
  PhaseHandle& operator=(const PhaseHandle&) = delete;
  // The check inline: an empty handle (an adapter's frame without a
  // column) costs no call.
  ~PhaseHandle() {
    if (phase_ != nullptr) end_or_keep();
  }

  // Ends the phase (idempotent). On the thread that began it; on another,
  // refused (one line) and the handle stays open.
  void end() noexcept;
  bool open() const noexcept { return phase_ != nullptr; }
  // The phase as an event, for data (see Phase::event).
  EventRef event() noexcept;

 private:
  friend JITSCOPE_API PhaseHandle begin_phase(const PhaseKey&, std::initializer_list<Arg>) noexcept;
  friend JITSCOPE_API PhaseHandle begin_phase(std::string_view, const PhaseOptions&) noexcept;
  // Owns `phase` if it opened; frees it otherwise.
  void adopt(Phase* phase) noexcept;
  // end(), and when refused, lets the phase go open (the handle is going).
  void end_or_keep() noexcept;
  Phase* phase_ = nullptr;
};

// Begins a phase that ends with its handle. Not open (open() false) only
// when out of memory or the key is unusable.
JITSCOPE_API PhaseHandle begin_phase(const PhaseKey& key,
                                     std::initializer_list<Arg> args = {}) noexcept;
// Looks the key up by name (a lock and a map lookup): prefer a PhaseKey.
JITSCOPE_API PhaseHandle begin_phase(std::string_view key,
                                     const PhaseOptions& options = {}) noexcept;

// Makes a unit current on the calling thread until detach() (UnitScope
// without the scope): for pass-manager worker threads that pick up work of
// a unit opened elsewhere.
class JITSCOPE_API ThreadAttachment {
 public:
  ThreadAttachment() = default;
  ThreadAttachment(ThreadAttachment&& other) noexcept : scope_(other.scope_) {
    other.scope_ = nullptr;
  }
  ThreadAttachment& operator=(ThreadAttachment&& other) noexcept {
    if (this != &other) {
      detach_or_keep();
      scope_ = other.scope_;
      other.scope_ = nullptr;
    }
    return *this;
  }
  ThreadAttachment(const ThreadAttachment&) = delete;
  ThreadAttachment& operator=(const ThreadAttachment&) = delete;
  ~ThreadAttachment() {
    if (scope_ != nullptr) detach_or_keep();  // see ~PhaseHandle
  }

  // Ends the attachment (idempotent). On the thread that attached; on
  // another, refused (one line) and it stays attached.
  void detach() noexcept;
  bool attached() const noexcept { return scope_ != nullptr; }

 private:
  friend JITSCOPE_API ThreadAttachment attach_thread(const CompileUnitRef&) noexcept;
  // Owns `scope` if it attached; frees it otherwise.
  void adopt(UnitScope* scope) noexcept;
  void detach_or_keep() noexcept;  // as PhaseHandle::end_or_keep
  UnitScope* scope_ = nullptr;
};

// Attaches the calling thread to `unit` (an invalid ref: nothing attached).
JITSCOPE_API ThreadAttachment attach_thread(const CompileUnitRef& unit) noexcept;

// ---- event data on open phases and units (CompileEventLogger) -----------

enum class DataLevel : std::uint8_t {
  kTrace,         // args of the event's trace slice
  kCompileEvent,  // + the compile event entry (the event must be a compile event)
  kMetric,        // + the unit's record (the event must be the outermost one, in a unit)
};

// An open phase or unit on this thread, found by name or as the outermost.
// Every operation returns an error Status on misuse, saying what is wrong;
// the try_ forms do nothing instead. Use it on the thread that got it, while
// the event is open (an ended event is refused, never touched).
class JITSCOPE_API EventRef {
 public:
  Status set(DataLevel level, std::string_view key, const FieldValue& value,
             bool overwrite = false) const noexcept;
  Status increment(DataLevel level, std::string_view key, std::int64_t by = 1) const noexcept;
  Status add_to_set(DataLevel level, std::string_view key, const FieldValue& value) const noexcept;
  void try_set(DataLevel level, std::string_view key, const FieldValue& value,
               bool overwrite = false) const noexcept;
  void try_increment(DataLevel level, std::string_view key, std::int64_t by = 1) const noexcept;
  void try_add_to_set(DataLevel level, std::string_view key,
                      const FieldValue& value) const noexcept;

  bool found() const noexcept { return frame_ != nullptr; }
  const std::string& lookup_error() const noexcept { return error_; }

 private:
  friend JITSCOPE_API EventRef event(std::string_view name) noexcept;
  friend JITSCOPE_API EventRef toplevel_event() noexcept;
  friend class Phase;
  friend class PhaseHandle;
  detail::EventFrame* frame_ = nullptr;
  std::string error_;
};

// event(name): the innermost open phase or unit named `name` on this thread.
// toplevel_event(): the outermost open phase or unit on this thread.

// ---- wait counters --------------------------------------------------------

// How many waits and how long in total (e.g. for a compile worker). Each
// wait ends as two counter tracks, "<name>.waiting" (waiters now) and
// "<name>.wait_total_us"; its µs go into the current unit's record.
class JITSCOPE_API WaitCounter {
 public:
  explicit WaitCounter(std::string_view name) noexcept;  // same name: same counter

  class JITSCOPE_API Guard {
   public:
    ~Guard() { end(); }
    Guard(Guard&& other) noexcept : stats_(other.stats_), begin_ns_(other.begin_ns_) {
      other.stats_ = nullptr;
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    Guard& operator=(Guard&&) = delete;
    void end() noexcept;

   private:
    friend class WaitCounter;
    Guard(detail::WaitStats* stats, std::uint64_t begin_ns) noexcept
        : stats_(stats), begin_ns_(begin_ns) {}
    detail::WaitStats* stats_;
    std::uint64_t begin_ns_;
  };
  // Starts a wait; it ends when the guard does.
  [[nodiscard]] Guard wait() noexcept;

  std::uint64_t count() const noexcept;
  std::uint64_t total_ns() const noexcept;

 private:
  detail::WaitStats* stats_ = nullptr;
};

// ---- recompile context -------------------------------------------------

// Called on every recompile (attempt > 0); each result goes into the record's
// recompile_user_contexts, cut to 256 bytes (never inside a UTF-8 character). A hook that throws
// adds
// "<hook failed: ...>".
JITSCOPE_API void register_recompile_context_hook(std::function<std::string()> hook) noexcept;
JITSCOPE_API void clear_recompile_context_hooks() noexcept;

// ---- queries and tables ----------------------------------------------------

// The last kRecentRecordCapacity unit records, oldest first.
JITSCOPE_API std::vector<CompileRecord> recent_compile_records();
// The runtime record accumulated since it was last written (is_runtime).
JITSCOPE_API CompileRecord runtime_record();

struct PhaseTimes {
  std::string key;
  std::string column;                       // empty: none
  std::vector<std::uint64_t> durations_ns;  // in end order; the first kMaxDurationsPerKey
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t max_ns = 0;
  std::uint64_t outermost_ns = 0;  // runs that were outermost column phases (duration_us)
  bool exclusive = false;          // its column gets self_ns (PhaseOptions::exclusive)
  std::uint64_t self_ns = 0;       // total less the column phases inside its runs
};
inline constexpr std::size_t kMaxDurationsPerKey = 1 << 16;
// Every phase key with at least one run, in first-run order.
JITSCOPE_API std::vector<PhaseTimes> phase_times();

enum class TableFormat : std::uint8_t { kText, kCsv };
// compile_times: per key, every duration in seconds or (aggregate) count,
// total, mean and max.
JITSCOPE_API std::string compile_times(TableFormat format = TableFormat::kText,
                                       bool aggregate = false);
// Total seconds per column phase (self time for exclusive ones), and the
// total of outermost column phases.
JITSCOPE_API std::string cumulative_time_report(TableFormat format = TableFormat::kText);

// Forgets phase times, frames, the graph counter, recent records and the
// runtime record (PyTorch's reset_frame_count). Not while units are open.
JITSCOPE_API void reset_compile_state() noexcept;

JITSCOPE_NAMESPACE_END

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_compile.hpp>
#endif

#if defined(JITSCOPE_DISABLE)
#define JITSCOPE_PHASE(key, ...) static_cast<void>(0)
#else
#define JITSCOPE_PHASE(key, ...)                                                         \
  static const ::jitscope::PhaseKey JITSCOPE_UNIQUE(jitscope_phase_key_){                \
      ::std::string_view("" key "") __VA_OPT__(, ::jitscope::PhaseOptions __VA_ARGS__)}; \
  ::jitscope::Phase JITSCOPE_UNIQUE(jitscope_phase_) { JITSCOPE_UNIQUE(jitscope_phase_key_) }
#endif
