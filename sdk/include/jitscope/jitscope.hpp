// jitscope — nanosecond-cost tracing for GPU compilers and JITs.
//
// Quickstart
//   #include <jitscope/jitscope.hpp>
//
//   void compile(Kernel& k) {
//     JITSCOPE_SPAN("compile");                       // static name: the fast path
//     jitscope::Span lower("lower", {{"ops", k.ops}}); // RAII span with typed args
//     lower.arg("mode", "fast");                       // args while it is open
//     JITSCOPE_SPAN_DYN(k.name);                      // runtime-built name (copied)
//     JITSCOPE_INSTANT("cache_miss", {"key", k.hash});
//     JITSCOPE_COUNTER("queue_depth", queue.size());
//   }
//
//   Run with JITSCOPE_TRACE=trace.json, or start a session from code:
//     jitscope::Config cfg; cfg.output_path = "trace.json";
//     if (auto st = jitscope::start(cfg); !st) { /* st.message() says why */ }
//     ...
//     jitscope::stop();
//   Open the file in https://ui.perfetto.dev or chrome://tracing.
//
// Cost (bench/jitscope_bench, docs/performance.md): a static-name span with a
// session on is two clock reads and two 32-byte ring writes; with no session
// it is one relaxed load and a branch; compiled out (below) it is nothing.
//
// Compiled out: with JITSCOPE_DISABLE defined before the first jitscope
// include, every macro is `static_cast<void>(0)` (its arguments are not
// evaluated), the classes record nothing, and every call of every public
// header (the C API too) is an inline no-op: no jitscope library is needed
// and no session ever starts. start() returns an error saying so, stop() is
// ok, active() is false, queries are empty. The compiled-out API is in the
// inline namespace jitscope::disabled, so translation units with and without
// JITSCOPE_DISABLE may share a program; they must not pass jitscope types to
// each other (they are distinct types: a link error, not a silent mismatch).
//
// Macros (each is a statement):
//   JITSCOPE_SPAN("literal")                       span to the end of the scope
//   JITSCOPE_SPAN_ARGS("literal", {"k", v}, ...)   same, with typed args
//   JITSCOPE_SPAN_DYN(string_view_expr)            runtime name, copied
//   JITSCOPE_INSTANT("literal")                    instant event
//   JITSCOPE_INSTANT("literal", {"k", v}, ...)     instant with args
//   JITSCOPE_COUNTER("literal", number)            counter sample
//   JITSCOPE_THREAD_NAME(string_view_expr)         names the calling thread
//
// Names: a string literal (a const char array) is stored as a pointer; it
// stays valid when its shared object is dlclose()d during the session (the
// unload drains first, detail/unload_hook.h). Anything else (std::string,
// const char*, string_view, a writable char buffer) is copied into the
// ring. A const char array that is not a literal must outlive the session.
// Arg keys must be string literals; string arg values are always copied.
//
// Threads: spans on one thread nest (RAII gives this). An end() out of
// order also ends the spans opened inside it (counted in the stats). A Span
// moves, for hooks that begin it in one callback and end it in another
// (docs/api.md); it ends on the thread that began it. Nothing here throws,
// allocates after a thread's first event, locks, or does I/O.
#pragma once

#include <jitscope/detail/export.hpp>
#include <jitscope/detail/hot.hpp>
#include <jitscope/version.hpp>

#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

JITSCOPE_NAMESPACE_BEGIN

// What a full ring does with a new record.
enum class OverflowPolicy : std::uint8_t {
  kDrop,   // drop the newest record and count it (default: never slows the host)
  kBlock,  // the producing thread waits for the flusher (tests, exact traces)
};

// Which clock stamps events. kAuto: the TSC when it is invariant
// (constant_tsc + nonstop_tsc), else CLOCK_MONOTONIC.
enum class ClockChoice : std::uint8_t { kAuto, kTsc, kMonotonic };
// The CUPTI collector (GPU activity, docs/gpu-activity.md). kAuto: on when
// a CUDA driver is present. Off or unable to start: one `jitscope: CUPTI off:`
// line (not for kOff) and the rest of the session is unchanged.
enum class CuptiMode : std::uint8_t { kAuto, kOn, kOff };
// The trace's form (docs/perfetto-format.md). kAuto: by the output path's
// extension: ".pftrace" is Perfetto's protobuf, anything else JSON.
// kJson: Chrome Trace Event Format. kPerfetto: Perfetto's native protobuf
// TrackEvent trace (smaller, faster to write, opens in ui.perfetto.dev).
enum class TraceFormat : std::uint8_t { kAuto, kJson, kPerfetto };
// Compression of the Perfetto form (docs/perfetto-format.md, "Compressed
// packets"): the packets of each flush go into compressed packets, which
// Perfetto's UI and trace processor, jitscope-report and jitscope-merge
// read. kDeflate (zlib, which every Perfetto reads) or kZstd (smaller and
// faster; Perfetto builds since mid-2026). The codec is loaded at start()
// (libz.so.1 / libzstd.so.1); without it, one `jitscope:` line and the trace
// is written uncompressed. Ignored, with one line, for the JSON form.
enum class TraceCompression : std::uint8_t { kNone, kDeflate, kZstd };
inline constexpr std::size_t kDefaultCuptiBufferBytes = std::size_t{4} << 20;
inline constexpr std::size_t kDefaultCuptiBuffers = 8;

// Defaults, also used by Config::from_env when a variable is unset.
inline constexpr std::size_t kDefaultRingCapacity = 65536;  // records: 2 MiB/thread
inline constexpr std::size_t kMinRingCapacity = 64;
inline constexpr std::size_t kMaxRingCapacity = std::size_t{1} << 24;
inline constexpr std::chrono::milliseconds kDefaultFlushInterval{100};
// The smallest trace cap or rotation size: room for the metadata and the stats.
inline constexpr std::uint64_t kMinTraceBytes = std::uint64_t{64} << 10;
inline constexpr std::uint64_t kDefaultMaxArtifactBytes = std::uint64_t{256} << 20;

// Result of a cold-path call: ok, or a one-line reason.
class Status {
 public:
  Status() = default;
  static Status error(std::string message) noexcept {
    Status s;
    s.ok_ = false;
    s.message_ = std::move(message);
    return s;
  }
  // Never throws, also when copying the text fails (the message is then empty).
  static Status error(const char* message) noexcept {
    Status s;
    s.ok_ = false;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    try {
      s.message_ = message != nullptr ? message : "";
    } catch (...) {
      // Out of memory copying the text: the Status still says it failed.
    }
#else
    // -fno-exceptions (how LLVM and MLIR build): the host has chosen that
    // out of memory ends the process.
    s.message_ = message != nullptr ? message : "";
#endif
    return s;
  }
  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const std::string& message() const noexcept { return message_; }

 private:
  bool ok_ = true;
  std::string message_;
};

// What stop() prints to stderr about compile times (compile.hpp).
enum class CompileTimesReport : std::uint8_t {
  kOff,    // nothing (default)
  kTable,  // compile_times (aggregated) and the cumulative report, as text tables
  kCsv,    // the same as CSV
};

struct Config {
  std::string output_path;  // required: the trace file (JSON, or .pftrace: see format)
  TraceFormat format = TraceFormat::kAuto;  // explicit wins over the path's extension
  TraceCompression compression = TraceCompression::kNone;  // the Perfetto form's packets
  std::string metrics_path;  // compile records as JSON lines (compile.hpp); empty: none
  std::size_t ring_capacity = kDefaultRingCapacity;  // 32-byte records per thread
  OverflowPolicy overflow = OverflowPolicy::kDrop;
  std::chrono::milliseconds flush_interval = kDefaultFlushInterval;
  std::string process_name;  // empty: the executable's name
  ClockChoice clock = ClockChoice::kAuto;
  CompileTimesReport compile_times = CompileTimesReport::kOff;
  // NVTX (nvtx.hpp); both are no-ops in a build without the CUDA toolkit.
  bool nvtx_emit = true;     // spans as NVTX ranges, when an NVTX tool listens
  bool nvtx_capture = true;  // other code's NVTX ranges into this trace
  // CUPTI: GPU kernels, copies, CUDA calls; a no-op in a build without CUPTI.
  CuptiMode cupti = CuptiMode::kAuto;
  // The activity buffer pool, allocated once per process at the first
  // session that collects: cupti_buffers x cupti_buffer_bytes, bounded.
  std::size_t cupti_buffer_bytes = kDefaultCuptiBufferBytes;  // [64 KiB, 64 MiB]
  std::size_t cupti_buffers = kDefaultCuptiBuffers;           // [2, 1024]
  // Crash safety (docs/robustness.md): on SIGSEGV, SIGABRT, SIGBUS, SIGFPE,
  // SIGILL and std::terminate, the flusher writes what the rings hold and the
  // spans still open (marked incomplete), then the host's own handler runs
  // and the signal ends the process as before. Off for hosts that use these
  // signals for control flow (JVMs, some wasm runtimes).
  bool crash_handler = true;
  // The trace's size bound in bytes, all rotated files together; 0: none.
  // Past it events are counted, not written; the file still ends with its
  // stats. At least kMinTraceBytes.
  std::uint64_t max_trace_bytes = 0;
  // Start a new numbered file (trace.1.json, trace.2.json, ...) once one
  // reaches this many bytes; each is a whole trace. 0: one file.
  std::uint64_t rotate_bytes = 0;
  // Flight recorder (docs/flight-recorder.md): 0, off; else the session
  // keeps its newest events in a window of this many bytes in memory (at
  // least kMinTraceBytes) instead of writing a trace file, and snapshot()
  // writes the window as a whole trace. output_path then names the
  // snapshots: trace.json -> trace.snapshot.1.json, .2, ... The metrics
  // file is written as usual. The JSON form; not with max_trace_bytes or
  // rotate_bytes.
  std::uint64_t flight_recorder_bytes = 0;
  // Snapshots kept on disk: past it the oldest is removed. At least 1.
  std::uint32_t max_snapshots = 8;
  // The least time between two snapshots: a request sooner is refused
  // (snapshot() says so). 0: none.
  std::chrono::milliseconds snapshot_min_interval{1000};
  // A signal that asks the flight recorder for a snapshot, with no change
  // to the code (`kill -USR2 <pid>`): SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH or
  // SIGURG; 0, none. Not taken (one line) if the process already handles
  // or ignores it.
  int snapshot_signal = 0;
  // Compile-unit alarms: a unit of at least this much wall time (0: off),
  // or a failed unit, gives one `jitscope:` line naming it, and with the
  // flight recorder on asks for a snapshot (taken once the unit has ended).
  std::chrono::milliseconds snapshot_slow_unit{0};
  bool snapshot_failed_unit = false;
  // A cache-miss storm: this many cache misses (CompileUnit::cache_miss,
  // any layer, any unit) within snapshot_miss_storm_window give one line
  // naming the unit of the last, and with the flight recorder on a
  // snapshot; the next storm needs as many new misses. 0: off.
  std::uint32_t snapshot_miss_storm = 0;
  std::chrono::milliseconds snapshot_miss_storm_window{10000};
  // After mark_ready(), each compile unit that opens gives one line (the
  // unit, its frame, the phase or unit it opened in); with this and the
  // flight recorder on, a snapshot taken when that unit ends.
  bool snapshot_after_ready = true;
  // Compile artifacts (CompileUnit::artifact): the folder they go in, made
  // at start. Empty: "<metrics_path>.artifacts" beside the metrics file, or
  // none without a metrics file.
  std::string artifacts_dir;
  // Their bound in bytes, all of the session's together; past it an
  // artifact is counted, not written. 0: artifacts off.
  std::uint64_t max_artifact_bytes = kDefaultMaxArtifactBytes;
  // The pid of the process that spawned this one and lists it with
  // note_child_process: the parent's "spawn" then has an arrow to this
  // session's first compile unit. 0: JITSCOPE_PARENT_PID's, which the
  // parent puts in its workers' environment; unset, none.
  std::int64_t parent_pid = 0;

  // Fills `out` from the JITSCOPE_* variables (docs/configuration.md). Unset
  // variables keep the defaults; a bad value is an error naming the variable.
  // Requires JITSCOPE_TRACE unless `require_trace` is false.
  JITSCOPE_API static Status from_env(Config* out, bool require_trace = true) noexcept;
  // Checks ranges; start() calls it too.
  JITSCOPE_API Status validate() const noexcept;
};

// Totals of a finished session, from stop().
struct SessionStats {
  std::string output_path;
  std::string metrics_path;            // empty: no metrics file
  std::uint64_t events_written = 0;    // X + I + C events in the file(s), not those over the cap
  std::uint64_t events_dropped = 0;    // lost to full rings (kDrop), all threads
  std::uint64_t spans_incomplete = 0;  // spans still open at stop, written as such
  // Spans ended while spans opened inside them were open (those ended with
  // them, marked "jitscope_ended_with_outer").
  std::uint64_t spans_ended_out_of_order = 0;
  std::uint64_t threads = 0;  // threads that recorded anything
  std::uint64_t bytes_written = 0;
  std::uint64_t compile_records_written = 0;  // lines in the metrics file
  std::uint64_t compile_records_dropped = 0;  // not in it: the queue was full (said once)
  std::uint64_t nvtx_captured = 0;            // NVTX ranges, marks and async ranges written
  std::uint64_t nvtx_unmatched = 0;           // NVTX pops and range ends with nothing to close
  bool nvtx_emitted = false;                  // spans went to an NVTX tool as ranges
  bool cupti_on = false;                      // the CUPTI collector ran this session
  std::string cupti_off_reason;               // why not, when it did not
  std::uint64_t gpu_events = 0;               // kernels, copies and sets on GPU tracks
  std::uint64_t gpu_unattributed = 0;         // of those, with no CUDA call seen for them
  std::uint64_t gpu_flows = 0;                // launch -> GPU arrows
  bool write_failed = false;                  // an I/O error stopped the output early
  std::uint64_t events_over_cap = 0;          // events not written: max_trace_bytes reached
  std::uint64_t trace_files = 0;              // files written (more than 1 with rotate_bytes)
  std::string artifacts_dir;                  // empty: artifacts off
  std::uint64_t artifacts_written = 0;        // files written by CompileUnit::artifact
  std::uint64_t artifact_bytes = 0;           // their bytes
  std::uint64_t artifacts_over_cap = 0;       // not written: max_artifact_bytes reached
  std::uint64_t snapshots_written = 0;        // flight recorder: files snapshot() wrote
  std::uint64_t snapshots_refused = 0;        // refused: sooner than snapshot_min_interval
};

// Starts a session. Fails (no session, one `jitscope:` line on stderr) if one
// is already active, the config is invalid, or the output can't be opened.
JITSCOPE_API Status start(const Config& config) noexcept;
// Stops the active session: drains every ring, closes the file. Spans still
// open are written with args {"incomplete": true}. A no-op without a session.
JITSCOPE_API Status stop(SessionStats* stats = nullptr) noexcept;

// Flight recorder (Config::flight_recorder_bytes): writes the window, the
// newest events, as a whole trace to `path` (empty: the next of
// trace.snapshot.1.json, .2, ... beside the session's output_path). Never
// blocks: the flusher writes it in its next cycle (stop() writes any still
// asked for) and says where in one `jitscope:` line. An error without a
// session, outside flight-recorder mode, or sooner than
// snapshot_min_interval after the last one.
JITSCOPE_API Status snapshot(std::string_view path = {}) noexcept;

// Warm-up is over: every compile unit opened from now on, until stop(), is
// a compile while serving (Config::snapshot_after_ready). For a JIT server
// that compiles its known shapes first; a compile after this one is an
// alarm.
JITSCOPE_API void mark_ready() noexcept;

inline bool active() noexcept {
  if constexpr (!detail::kCompiledIn) return false;
  return detail::session_word() != 0;
}

// Lists a worker process in the active session's trace, as a metadata event
// {"ph":"M","name":"jitscope_child","args":{"pid":..,"trace":..,"label":..}}
// written by the flusher's next cycle, so that jitscope-merge --children can
// find the worker's own trace. For processes that run their own session
// (e.g. a subprocess compile pool); a relative trace path is stored made
// absolute against the current directory. Also marks the spawn, a "spawn"
// slice on the calling thread, where an arrow starts that ends at the
// worker's first compile unit when the worker's session knows its parent:
// put JITSCOPE_PARENT_PID=<this pid> in the worker's environment (or set its
// Config::parent_pid); merge --children then draws it. An empty trace path
// names the file a worker writes when it inherits this session's trace path
// (JITSCOPE_TRACE): a session whose trace file is being written by a
// session of one of its ancestor processes writes trace.worker-<pid>.json
// beside it instead (the metrics file too) and takes that ancestor as its
// parent, with no line and no JITSCOPE_PARENT_PID needed. Cold:
// it locks and allocates. An error without a session or for pid <= 0.
JITSCOPE_API Status note_child_process(int pid, std::string_view trace_path,
                                       std::string_view label = {}) noexcept;

// An arrow from the span that hands work to another process (a process
// pool's task) to where that process starts it: the sender calls
// note_task_sent(task) as it hands the work over, the worker
// note_task_received(sender_pid, task) as it starts it; `task` is any
// number both know (a counter the sender passes along with the work). Each
// end is a zero-length slice on the calling thread ("task sent", "task")
// with a flow whose id both compute from the machine's boot id, the
// sender's pid and `task`; jitscope-merge --children joins the two traces.
// Cold: it locks and allocates. An error without a session.
JITSCOPE_API Status note_task_sent(std::uint64_t task) noexcept;
JITSCOPE_API Status note_task_received(std::int64_t sender_pid, std::uint64_t task) noexcept;

// The file a worker process `pid` writes when it inherits `trace_path`
// (above): "worker-<pid>" before the extension (trace.json ->
// trace.worker-4711.json), as rotation numbers files. "" if out of memory.
JITSCOPE_API std::string worker_trace_path(std::string_view trace_path, int pid) noexcept;

// Slices on a track of their own, for work that is suspended and resumed on
// a thread other work shares (asyncio tasks, C++ coroutines): a Span open
// across a suspension would end, or be ended by, the spans of whatever runs
// meanwhile. Take async_begin() when the work begins and call async_slice()
// when it ends, on any thread: one slice from then to now on track `track`
// (e.g. the task's address; below 2^53 as written). Slices of one track
// nest by time. In the trace: a nestable async pair ("b"/"e", category
// "jitscope.async", id = track) in the JSON form, a slice on the process's
// track of that id in the Perfetto form. The slice carries the compile id
// of the unit current on the thread at the begin ("compile_id", as spans in
// a unit do). A begin from another session (or none) records nothing.
// Cold: it copies the name into the ring.
struct AsyncBegin {
  std::uint32_t session = 0;  // 0: no session at the begin
  std::uint64_t ticks = 0;
  bool in_unit = false;  // a unit was current: its id below
  std::uint32_t unit_frame = 0, unit_attempt = 0;
};
JITSCOPE_API AsyncBegin async_begin() noexcept;
// Names the calling thread in the trace (not the OS name). Callable any time;
// the name sticks for later sessions. The string is copied.
JITSCOPE_API void set_thread_name(std::string_view name) noexcept;

// A typed arg: integer, floating point, bool or string (copied).
struct Arg {
  const char* key;
  detail::ValueType type = detail::ValueType::kNone;
  union {
    std::int64_t i64;
    std::uint64_t u64;
    double f64;
    bool b;
  };
  std::string_view str;

  template <std::size_t N>
  Arg(const char (&k)[N], bool v) noexcept : key(k), type(detail::ValueType::kBool), b(v) {}
  template <std::size_t N, std::signed_integral T>
  Arg(const char (&k)[N], T v) noexcept : key(k), type(detail::ValueType::kInt), i64(v) {}
  template <std::size_t N, std::unsigned_integral T>
  requires(!std::same_as<T, bool>) Arg(const char (&k)[N], T v)
  noexcept : key(k), type(detail::ValueType::kUint), u64(v) {}
  template <std::size_t N, std::floating_point T>
  Arg(const char (&k)[N], T v) noexcept
      : key(k), type(detail::ValueType::kDouble), f64(static_cast<double>(v)) {}
  template <std::size_t N>
  Arg(const char (&k)[N], std::string_view v) noexcept
      : key(k), type(detail::ValueType::kString), u64(0), str(v) {}
  template <std::size_t N>
  Arg(const char (&k)[N], const char* v) noexcept
      : key(k), type(detail::ValueType::kString), u64(0), str(v ? v : "") {}
  template <std::size_t N>
  Arg(const char (&k)[N], const std::string& v) noexcept
      : key(k), type(detail::ValueType::kString), u64(0), str(v) {}
  // A key is stored by pointer, so it must be a string literal; a writable
  // buffer could change or be freed before the flusher reads it.
  template <std::size_t N, class T>
  Arg(char (&k)[N], const T& v) = delete;
};

// The slice of async_begin() above, with `args` (keys: string literals, as
// Span's). False when nothing was recorded (no session, another session
// than the begin's, a full ring: counted as dropped). Args that do not fit
// the ring's bound beside the name are left out, the name kept.
JITSCOPE_API bool async_slice(std::uint64_t track, std::string_view name, AsyncBegin begun,
                              std::span<const Arg> args = {}) noexcept;

// A span: begins in the constructor, ends in end() or the destructor.
class Span {
 public:
  // Static name: a string literal, stored by pointer (the fast path).
  template <std::size_t N>
  JITSCOPE_ALWAYS_INLINE explicit Span(const char (&name)[N]) noexcept {
    begin_static(name);
  }
  template <std::size_t N>
  JITSCOPE_ALWAYS_INLINE Span(const char (&name)[N], std::initializer_list<Arg> args) noexcept {
    if constexpr (detail::kCompiledIn) {
      // Read before the session's (atomic) load, which the compiler does
      // not move them across: here their stores are seen, so the reads
      // fold away, and with them the list (built on every pass otherwise).
      const BatchArgs batch(args);
      const std::uint32_t s = detail::session_word();
      if (s != 0) begin_with_args(s, name, args, batch);
    }
  }
  // The args made by `make_args(begin)` calling begin({...}), only with a
  // session on (JITSCOPE_SPAN_ARGS: args cost nothing without one). Not
  // noexcept: an arg expression that throws reaches the caller, as it did
  // when the caller built the list, and nothing is recorded (the span
  // begins only once its list is whole).
  template <std::size_t N, class MakeArgs>
  JITSCOPE_ALWAYS_INLINE Span(detail::LazyArgs, const char (&name)[N], MakeArgs&& make_args) {
    if constexpr (detail::kCompiledIn) {
      const std::uint32_t s = detail::session_word();
      if (s != 0) {
        make_args([&](std::initializer_list<Arg> args) JITSCOPE_LAMBDA_ALWAYS_INLINE {
          begin_with_args(s, name, args, BatchArgs(args));
        });
      }
    }
  }
  // A writable char buffer (a `char name[48]` member) may change or be
  // freed before the flusher reads it: its text is copied, as a dynamic name.
  template <std::size_t N>
  explicit Span(char (&name)[N]) noexcept : Span(detail::buffer_text(name)) {}
  template <std::size_t N>
  Span(char (&name)[N], std::initializer_list<Arg> args) noexcept
      : Span(detail::buffer_text(name), args) {}
  // Dynamic name: copied into the ring.
  JITSCOPE_ALWAYS_INLINE explicit Span(std::string_view name) noexcept {
    if constexpr (detail::kCompiledIn) {
      const std::uint32_t s = detail::session_word();
      if (JITSCOPE_UNLIKELY(s != 0)) {
        if (!detail::begin_dynamic_batch(s, name, token_)) [[unlikely]] {
          token_ = detail::begin_dynamic(s, detail::read_clock(s), name);
        }
      }
    }
  }
  // Dynamic name and args, written together (one room check); past
  // kMaxBeginArgs args, one by one after the Begin. The span form takes a
  // list built at run time (keys still literals).
  Span(std::string_view name, std::initializer_list<Arg> args) noexcept
      : Span(name, std::span<const Arg>(args.begin(), args.size())) {}
  Span(std::string_view name, std::span<const Arg> args) noexcept {
    if constexpr (detail::kCompiledIn) {
      const std::uint32_t s = detail::session_word();
      if (JITSCOPE_UNLIKELY(s != 0)) {
        if (args.size() <= detail::kMaxBeginArgs) {
          token_ =
              detail::begin_dynamic_args(s, detail::read_clock(s), name, args.data(), args.size());
        } else {
          token_ = detail::begin_dynamic(s, detail::read_clock(s), name);
          for (const Arg& a : args) arg(a);
        }
      }
    }
  }
  // A span a detail call began (the adapters'): this Span ends it.
  Span(detail::AdoptToken, detail::SpanToken token) noexcept : token_(token) {}
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  // Movable, for hooks that begin a span in one callback and end it in
  // another (a pass manager's before/after pass): keep it in a per-thread
  // stack or map, end() it by handle. It must end on the thread that began
  // it; ends out of order are fine (see "Threads" above).
  Span(Span&& other) noexcept : token_(other.token_) { other.token_ = {}; }
  Span& operator=(Span&& other) noexcept {
    if (this != &other) {
      end();
      token_ = other.token_;
      other.token_ = {};
    }
    return *this;
  }
  JITSCOPE_ALWAYS_INLINE ~Span() { end(); }

  // Adds an arg while the span is open; ignored once it has ended.
  JITSCOPE_ALWAYS_INLINE void arg(const Arg& a) noexcept {
    if constexpr (detail::kCompiledIn) {
      if (token_.session() == 0 || !token_.recorded()) return;
      add_arg_to(token_, a);
    }
  }
  template <std::size_t N, class T>
  void arg(const char (&key)[N], const T& value) noexcept {
    arg(Arg(key, value));
  }
  // Ends the span now (idempotent).
  JITSCOPE_ALWAYS_INLINE void end() noexcept {
    if constexpr (detail::kCompiledIn) {
      if (token_.session() != 0) {
        detail::end_span_now(token_);
        token_ = {};
      }
    }
  }
  bool recording() const noexcept { return token_.session() != 0 && token_.recorded(); }
  // Internal (the adapters'): the open span's token, which this Span then
  // no longer ends, for an end at a time read earlier (detail::end_span).
  detail::SpanToken release(detail::AdoptToken) noexcept {
    const detail::SpanToken token = token_;
    token_ = {};
    return token;
  }

 private:
  JITSCOPE_ALWAYS_INLINE void begin_static(const char* name) noexcept {
    if constexpr (detail::kCompiledIn) {
      const std::uint32_t s = detail::session_word();
      // No "unlikely" on the inline forms' test: the inline path then falls
      // through, where it was laid out apart and jumped back (1 instruction
      // a span, callgrind); with no session the count is the same. The
      // dynamic-name forms, whose session path is a call, keep the hint.
      if (s != 0) token_ = detail::begin_span(s, name);
    }
  }
  // A scalar arg's value bits (not for strings).
  static JITSCOPE_ALWAYS_INLINE std::uint64_t scalar_bits(const Arg& a) noexcept {
    if (a.type == detail::ValueType::kBool) return a.b ? 1 : 0;
    std::uint64_t bits;
    std::memcpy(&bits, &a.u64, sizeof bits);  // the union's bytes: i64, u64, f64 alike
    return bits;
  }
  // Up to 8 args, all scalar or strings of at most kInlineStringBytes (the
  // common case), read into locals: their key, type and bits (a short
  // string's bytes, with its length). Read later, after a call or a store
  // into the ring (either could change the list, as far as the compiler
  // knows), they would be read again from the stack.
  struct BatchArgs {
    static constexpr std::size_t kMax = 8;
    struct Scalar {
      const char* key;
      detail::ValueType type;
      std::uint64_t bits;
      std::uint64_t length;  // a short string's
    } at[kMax];
    std::size_t n;         // the args read: all of them when `scalar`
    bool scalar;           // false: the args go one by one through the library
    bool strings = false;  // a short string among them
    JITSCOPE_ALWAYS_INLINE explicit BatchArgs(std::initializer_list<Arg> args) noexcept
        : n(args.size() < kMax ? args.size() : kMax), scalar(args.size() <= kMax) {
#pragma GCC unroll 8
      for (std::size_t i = 0; i < n; ++i) {
        const Arg& a = args.begin()[i];
        if (a.type == detail::ValueType::kString) {
          const std::size_t length = a.str.size();
          scalar = scalar && length <= detail::kInlineStringBytes;
          strings = true;
          at[i] = {a.key, a.type,
                   length <= detail::kInlineStringBytes
                       ? detail::short_string_bits(a.str.data(), length)
                       : 0,
                   length};
        } else {
          at[i] = {a.key, a.type, scalar_bits(a), 0};
        }
      }
    }
  };
  // With a batch of scalar args the Begin and its args are written inline,
  // together; otherwise the Begin and each arg through the library.
  JITSCOPE_ALWAYS_INLINE void begin_with_args(std::uint32_t s, const char* name,
                                              std::initializer_list<Arg> args,
                                              const BatchArgs& scalars) noexcept {
    const std::size_t n = scalars.n;
    const bool scalar = scalars.scalar;
    if (!scalar) [[unlikely]] {
      token_ = begin_then_args(s, detail::read_clock(s), name, args);
      return;
    }
    detail::SpanBatch batch;
    if (detail::begin_span_batch(s, name, n, token_, batch)) [[likely]] {
#pragma GCC unroll 8
      for (std::size_t i = 0; i < n; ++i) {
        const BatchArgs::Scalar& a = scalars.at[i];
        if (a.type == detail::ValueType::kString) {
          detail::put_short_string_arg(batch, i, a.key, a.bits, a.length);
        } else {
          detail::put_scalar_arg(batch, i, a.key, a.type, a.bits);
        }
      }
      detail::commit_batch(batch, n);
      return;
    }
    if (scalars.strings) {  // the library writes strings from the list
      token_ = begin_then_args(s, detail::read_clock(s), name, args);
      return;
    }
    // Through the library, with the values (not the list: its address
    // given to a call would keep the list in memory, built on every pass).
    // A local token, stored once: calls given the member kept it in memory
    // on the inline path too (4 instructions a span, callgrind).
    const detail::SpanToken token = detail::begin_static(s, detail::read_clock(s), name);
    if (token.recorded()) {
#pragma GCC unroll 8
      for (std::size_t i = 0; i < n; ++i) {
        const BatchArgs::Scalar& a = scalars.at[i];
        detail::add_arg_bits(token, a.key, a.type, a.bits);
      }
    }
    token_ = token;
  }
  // The Begin and then each arg, through the library. Static, returning the
  // token: a member function called here would take the Span's address, and
  // its token would then live in memory on the inline path too.
  static detail::SpanToken begin_then_args(std::uint32_t s, std::uint64_t ts, const char* name,
                                           std::initializer_list<Arg> args) noexcept {
    // Up to kMaxBeginArgs (a string longer than kInlineStringBytes among
    // them, or a batch that did not fit): written with the Begin, one room
    // check; more: each after it.
    if (args.size() <= detail::kMaxBeginArgs) {
      return detail::begin_static_args(s, ts, name, args.begin(), args.size());
    }
    const detail::SpanToken token = detail::begin_static(s, ts, name);
    if (token.recorded()) {
      for (const Arg& a : args) add_arg_to(token, a);
    }
    return token;
  }
  // An arg on the recorded span `token`: inline when it is a scalar on the
  // innermost span, else through the library.
  static JITSCOPE_ALWAYS_INLINE void add_arg_to(detail::SpanToken token, const Arg& a) noexcept {
    if (a.type != detail::ValueType::kString &&
        detail::add_scalar_arg(token, token.serial_word, a.key, a.type, scalar_bits(a))) {
      return;
    }
    detail::add_arg(token, a);
  }
  detail::SpanToken token_;
};

// Instant event on the calling thread.
template <std::size_t N>
inline void instant(const char (&name)[N], std::initializer_list<Arg> args = {}) noexcept {
  if constexpr (detail::kCompiledIn) {
    const std::uint32_t s = detail::session_word();
    if (s != 0) {
      if (args.size() == 0) {
        detail::instant_static(s, name);  // inline, when it can
      } else {
        detail::instant(s, detail::read_clock(s), name, {}, args.begin(), args.size());
      }
    }
  }
}
inline void instant(std::string_view name, std::initializer_list<Arg> args = {}) noexcept {
  if constexpr (detail::kCompiledIn) {
    const std::uint32_t s = detail::session_word();
    if (JITSCOPE_UNLIKELY(s != 0))
      detail::instant(s, detail::read_clock(s), nullptr, name, args.begin(), args.size());
  }
}
// A writable char buffer: its text is copied (see Span).
template <std::size_t N>
inline void instant(char (&name)[N], std::initializer_list<Arg> args = {}) noexcept {
  instant(detail::buffer_text(name), args);
}

// Counter sample: one track per name, in the process.
template <std::size_t N>
inline void counter(const char (&name)[N], double value) noexcept {
  if constexpr (detail::kCompiledIn) {
    const std::uint32_t s = detail::session_word();
    if (s != 0) detail::counter_static(s, name, value);  // inline, when it can
  }
}
inline void counter(std::string_view name, double value) noexcept {
  if constexpr (detail::kCompiledIn) {
    const std::uint32_t s = detail::session_word();
    if (JITSCOPE_UNLIKELY(s != 0)) detail::counter(s, detail::read_clock(s), nullptr, name, value);
  }
}
template <std::size_t N>
inline void counter(char (&name)[N], double value) noexcept {
  counter(detail::buffer_text(name), value);
}

JITSCOPE_NAMESPACE_END

#if defined(JITSCOPE_DISABLE)
#include <jitscope/detail/disabled_jitscope.hpp>
#endif

#define JITSCOPE_CONCAT_IMPL(a, b) a##b
#define JITSCOPE_CONCAT(a, b) JITSCOPE_CONCAT_IMPL(a, b)
#define JITSCOPE_UNIQUE(prefix) JITSCOPE_CONCAT(prefix, __LINE__)

#if defined(JITSCOPE_DISABLE)
#define JITSCOPE_SPAN(name) static_cast<void>(0)
#define JITSCOPE_SPAN_ARGS(name, ...) static_cast<void>(0)
#define JITSCOPE_SPAN_DYN(name) static_cast<void>(0)
#define JITSCOPE_INSTANT(name, ...) static_cast<void>(0)
#define JITSCOPE_COUNTER(name, value) static_cast<void>(0)
#define JITSCOPE_THREAD_NAME(name) static_cast<void>(0)
#else
// `"" name ""` only compiles for a string literal: the static path is safe.
#define JITSCOPE_SPAN(name) ::jitscope::Span JITSCOPE_UNIQUE(jitscope_span_)("" name "")
// Args are built only when a session is on, so the off path stays one load
// and a branch (the list lives until the end of the declaration).
#define JITSCOPE_ARGS_IF_ACTIVE(...)                                            \
  (::jitscope::active() ? ::std::initializer_list<::jitscope::Arg>{__VA_ARGS__} \
                        : ::std::initializer_list<::jitscope::Arg>{})
// The args are evaluated only with a session on: the lambda hands them to
// the span's begin, which runs it only then. Inside a function, as a span is
// scoped (the lambda captures by reference); not with co_await in an arg.
#define JITSCOPE_SPAN_ARGS(name, ...)               \
  ::jitscope::Span JITSCOPE_UNIQUE(jitscope_span_)( \
      ::jitscope::detail::kLazyArgs, "" name "",    \
      [&](auto&& jitscope_begin_with_args_) { jitscope_begin_with_args_({__VA_ARGS__}); })
// Braces: with parentheses, JITSCOPE_SPAN_DYN(var) would declare a function.
#define JITSCOPE_SPAN_DYN(name) \
  ::jitscope::Span JITSCOPE_UNIQUE(jitscope_span_) { ::std::string_view(name) }
#define JITSCOPE_INSTANT(name, ...) \
  ::jitscope::instant("" name "" __VA_OPT__(, JITSCOPE_ARGS_IF_ACTIVE(__VA_ARGS__)))
#define JITSCOPE_COUNTER(name, value) ::jitscope::counter("" name "", static_cast<double>(value))
#define JITSCOPE_THREAD_NAME(name) ::jitscope::set_thread_name(::std::string_view(name))
#endif
