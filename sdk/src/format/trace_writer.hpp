// Turns ring records into Chrome Trace Event Format JSON (array form). Runs on
// the flusher only. The file opens with "[" and every event after the first is
// preceded by ",\n", so a file cut off between events is still a valid trace
// (the array form allows the missing "]"); a clean stop writes the "]".
//
// Resource bounds (SessionInfo::max_trace_bytes, rotate_bytes), both checked
// once per event with one integer compare (commit()):
// - The cap bounds the whole trace, every rotated file and the closing stats
//   included. Room for the stats is kept back (a fixed part plus one entry
//   per thread); the first event that would go into that room puts the
//   writer in "capped" mode: that event and every later one is rendered,
//   cut off again, and counted (events_over_cap), one `jitscope:` line says
//   so, and the stats record it ("trace_cap"). Should the stats still not fit
//   (the session's extra stats are unbounded; threads first seen once the
//   trace was full need entries too), they are written without the extra
//   stats, then with as many per-thread entries as fit ("trimmed_for_cap",
//   "threads_omitted").
// - Rotation: once the file being written has reached rotate_bytes, the
//   next event boundary closes it with "]" and opens the next numbered file
//   (file_sink.hpp), which starts with the process name, the session
//   metadata ("part": n) and the latest of every process/thread name written
//   so far, so that each file loads alone. Events never span two files, so a
//   file may pass rotate_bytes by one event; the last one also holds the
//   closing stats. A captured async range's "b"/"e" pair counts as one event.
//
// Two forms (SessionInfo::perfetto): the JSON above, or Perfetto's protobuf
// (docs/perfetto-format.md). The protobuf form keeps the same bounds with
// packets for events: spans are written as a BEGIN when the flusher decodes
// their Begin record (with the args pushed with it) and an END at their End
// (trace_perfetto.cpp, encoded straight from the records); the cold events
// are rendered as JSON text as above and transcoded to packets
// (perfetto/transcode.hpp). Under a cap each written BEGIN keeps room for
// its END (kEndReserve), so an END is never cut. At a rotation the spans
// open on a thread are begun again in the next file (their BEGIN in the old
// file has no END there: like the JSON form, a file holds the spans that
// ended in it).
#pragma once

#include "clock/clock.hpp"
#include "cupti/gpu_activity.hpp"
#include "format/perfetto/transcode.hpp"
#include "nvtx/capture_totals.hpp"
#include "ring/thread_registry.hpp"
#include "sink/trace_sink.hpp"

#include <jitscope/detail/hot.hpp>
#include "ring/record.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace jitscope::detail {

class GpuTrace;
class JsonWriter;
class WindowSink;

// The flusher's per-thread decoding state, kept in ThreadState::consumer.
struct ThreadDecodeState final : ConsumerState {
  struct OpenSpan {
    std::uint64_t begin_ns = 0;
    const char* static_name = nullptr;
    std::string dynamic_name;
    std::string args;        // rendered `"k":v,...`
    std::uint64_t unit = 0;  // packed compile id, when in_unit
    bool in_unit = false;    // opened inside a compile unit (or is one)
    std::uint8_t flags = 0;  // the Begin's flags: what kind of slice
    bool truncated = false;
    std::uint64_t min_end_ns = 0;  // 1 ns past its last child or instant (see tie_floor_ns)
    // The protobuf form: `args` holds encoded debug annotations; those
    // before pf_begin_args went on the BEGIN.
    std::uint8_t pf_state = 0;  // kPf* below
    std::uint32_t pf_begin_args = 0;
    std::uint64_t pf_part = 0;  // the file its BEGIN is in
  };
  static constexpr std::uint8_t kPfNotBegun = 0;  // BEGIN not written yet
  static constexpr std::uint8_t kPfBegun = 1;     // BEGIN in file pf_part: its END will follow
  static constexpr std::uint8_t kPfOverCap = 2;   // BEGIN not written (cap): no END either
  static constexpr std::uint8_t kPfTruncatedOnBegin = 4;  // flag: jitscope_truncated on the BEGIN
  // The thread's sequence in the protobuf form.
  struct PfSequence {
    std::uint32_t id = 0;
    std::uint64_t track = 0;
    std::uint64_t last_ns = 0;   // clock 64's value: the last timestamp written
    std::uint64_t part = ~0ull;  // the file the sequence was started in
    bool begin_pending = false;  // the innermost span's BEGIN waits for its args
    pfw::Interner interner;
    // The compile_id annotation of the unit the last plain BEGIN in a unit
    // was in, encoded with the key's id then (unit_key_iid; 0: none): most
    // of a compiler's spans are in a unit, and its id changes per unit.
    std::uint64_t unit_packed = 0;
    std::uint64_t unit_key_iid = 0;
    std::string unit_annotation;
  };
  std::unique_ptr<PfSequence> pf;
  std::vector<Record> partial;  // a group split across pops
  std::vector<OpenSpan> stack;  // grows only; `depth` entries are live
  std::size_t depth = 0;
  // Ties. The clock can be coarser than the work between two events (on a
  // VM whose TSC reads take 10 ns, a child often begins, or ends, in the
  // same ns as its parent, and the next event at the very ns a span ended).
  // Viewers that add ts + dur in floating-point µs (Chrome DevTools) then
  // nest by rounding error. So the writer breaks ties by 1 ns in record
  // order: an event begins no earlier than tie_floor_ns (1 ns after the last
  // span ended on this thread), and a span (or a captured NVTX range) ends
  // at least 1 ns after its last child or instant. Only ties move, and only
  // by the events that fell in one tick of the clock, so a few ns; times
  // stay in record order and a child stays inside its parent.
  std::uint64_t tie_floor_ns = 0;
  // An instant whose args are still to come.
  std::uint32_t instant_args_left = 0;
  OpenSpan instant;
  std::string tid_fields;                 // `,"pid":P,"tid":T`
  std::string name_written;               // last thread_name event; empty: none yet
  std::size_t summary = ~std::size_t{0};  // index into TraceWriter's summaries

  // The tie rule's other half: the innermost open span ends after `ns`.
  void end_innermost_after(std::uint64_t ns) noexcept {
    if (depth > 0) stack[depth - 1].min_end_ns = std::max(stack[depth - 1].min_end_ns, ns + 1);
  }
  // Both halves for a span (off the stack already) that ended at `end_ns`:
  // the next event begins after it, its parent ends after it.
  void span_ended(std::uint64_t end_ns) noexcept {
    tie_floor_ns = end_ns + 1;
    end_innermost_after(end_ns);
  }

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
  // The protobuf form (docs/perfetto-format.md) instead of JSON.
  bool perfetto = false;
  std::string compression;  // the Perfetto form's codec ("deflate", "zstd"); empty: none
};

struct ThreadSummary {
  int tid = 0;
  std::string name;
  std::uint64_t events = 0;
  std::uint64_t dropped = 0;
  std::uint64_t args_dropped = 0;
  std::uint64_t unbalanced_ends = 0;
  std::uint64_t out_of_order_ends = 0;
  std::uint64_t truncated = 0;
  std::size_t reserved = 0;  // bytes kept back for its entry in the stats (under a cap)
};

class TraceWriter {
 public:
  TraceWriter(TraceSink& sink, const SessionInfo& info);

  // "[" and the head: process_name and jitscope_session, and jitscope_clock
  // if `clock_known` (else set_conversion writes it). Runs in start(), on
  // the controlling thread, before the flusher exists.
  void begin_trace(bool clock_known = true);
  // The TSC calibration, once the flusher has it: decoding uses it from now
  // on, and its jitscope_clock event follows the head (and is in every later
  // file's head).
  void set_conversion(const ClockConversion& conversion);
  const SessionInfo& info() const noexcept { return info_; }
  // Writes every complete record group `t` holds now.
  void drain(ThreadState& t);
  // Spans still open on `t`, ending at `end_ns`, with {"incomplete": true}.
  void close_open_spans(ThreadState& t, std::uint64_t end_ns);
  // Flight recorder (format/snapshot.cpp). From now on every process and
  // thread name written is kept for a snapshot's head.
  void keep_names_for_snapshots() noexcept { keep_names_ = true; }
  // The Perfetto form's window (call before begin_trace): written in parts
  // of `part_bytes`, each a chunk of `window`. A part starts every sequence
  // again (sequence 1 with a file's first packet, each thread's at its next
  // packet) and hands the window, as the chunk's preamble, the spans open
  // then begun again on their sequences: so the chunks from any one on
  // decode alone, and a snapshot begins each span once. Spans are looked up
  // on the threads of `session` in `threads` (set_part_threads: the
  // flusher's list of the cycle, an entry set to null once freed).
  void set_window_parts(WindowSink* window, std::size_t part_bytes, std::uint32_t session) noexcept;
  void set_part_threads(const std::vector<ThreadState*>* threads) noexcept {
    part_threads_ = threads;
  }
  // A snapshot's head: the head a file of this session starts with (names
  // included), then `snapshot_event` (a metadata event); in the JSON form
  // after "[", in the Perfetto form without the file's first packet (the
  // window's oldest part has it: WindowSink::views_after).
  void append_snapshot_head(std::string& out, std::string_view snapshot_event);
  // The spans open on `t` now, ending at `end_ns` and marked incomplete;
  // they stay open. JSON: X events, each preceded by ",\n". Perfetto: END
  // packets of the spans begun in the window. Returns how many.
  std::size_t append_open_spans(std::string& out, ThreadState& t, std::uint64_t end_ns);
  // The bytes that end a snapshot after its open spans.
  std::string_view snapshot_tail() const noexcept { return pf_ ? std::string_view() : "\n]\n"; }
  // The spans `t` has open keep copies of their static names from now on
  // (an image is being unloaded; call after drain()).
  void detach_static_names(ThreadState& t);
  // Static names' pointers may name other strings from now on (an image is
  // being unloaded; once per unload, after the drain, whatever the threads):
  // what the writer keeps by them for every thread (its counters' tracks,
  // ProcessSequence::counter_static) is forgotten.
  void forget_static_names() noexcept { seq1_.forget_static_names(); }
  // Copies `t`'s counters into its summary (call before freeing it).
  void settle(ThreadState& t);
  // Events lost before reaching a ring (see g_events_lost); part of the total.
  void note_lost(std::uint64_t lost) noexcept { lost_ = lost; }
  // Spans ended while spans inside them were open, all threads.
  std::uint64_t out_of_order_ends() const noexcept;
  // All events lost so far: settled per-thread drops plus note_lost's.
  std::uint64_t events_dropped() const noexcept;
  // A process-level counter of events_dropped(), written when it changed.
  void write_dropped_counter();
  // Writes the dropped counter, the jitscope_stats event and the closing "]"
  // into the file being written, whatever the cap (whose room was kept for
  // it) and without rotating, through TraceSink::write_closing. `extra_stats` adds members to the
  // stats args; under a cap they may be left out. Later calls do nothing.
  void end_trace(const CaptureTotals& nvtx = {},
                 const std::function<void(JsonWriter&)>& extra_stats = {});
  // In a crash cycle the writer only tries the locks a host thread may hold
  // (a captured category then keeps its number instead of its name).
  void set_crash_cycle(bool on) noexcept { crash_cycle_ = on; }
  // kGpuCall records go to `gpu` (none: they are skipped).
  void set_gpu(GpuTrace* gpu) noexcept { gpu_ = gpu; }
  // A whole event object, counted in events_written (or events_over_cap).
  void append_event(std::string_view event, const pfw::Hints& hints = {});
  // A whole event object that is not a slice (flows, metadata): not counted
  // (under a cap, counted in the stats' trace_cap.metadata_not_written).
  void append_metadata(std::string_view event);
  // A process_name or thread_name metadata event (repeated at the head of
  // every rotated file that follows).
  void write_name_metadata(std::string_view what, std::int64_t pid, std::int64_t tid,
                           std::string_view name);
  // True if a jitscope thread with this OS thread id has written here.
  bool knows_tid(int tid) const noexcept;
  void flush() noexcept;  // hands buffered events to the sink

  // Events in the files: slices, instants, counters, captured NVTX ranges
  // and marks, append_event's. Past the cap they go to events_over_cap instead.
  std::uint64_t events_written() const noexcept { return events_; }
  std::uint64_t events_over_cap() const noexcept { return over_cap_; }
  bool capped() const noexcept { return capped_; }
  std::uint64_t trace_files() const noexcept { return part_ + 1; }
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
  static constexpr std::size_t kFlushThreshold = 1 << 20;  // bytes buffered before the sink
  // Under a cap, the room kept for the trailer: the dropped counter, the stats
  // without their per-thread list (under 1.5 KiB with every number at 20
  // digits) and "]", with room to spare for the session's extra stats.
  static constexpr std::uint64_t kTrailerReserve = 4096;
  // Per thread, its stats entry with every number at 20 digits, plus its name.
  static constexpr std::uint64_t kThreadEntryReserve = 256;
  static constexpr std::string_view kCloseFile = "\n]\n";
  // The protobuf form: room kept for the END of each written BEGIN, under a
  // cap. A lean END (no late args) is 57-61 bytes as a rule and about 66 at
  // most (jitscope_truncated and incomplete named inline, an absolute
  // timestamp on clock 3); 80 leaves room.
  static constexpr std::uint64_t kEndReserve = 80;
  std::string_view close_file() const noexcept { return pf_ ? std::string_view() : kCloseFile; }

  void handle(ThreadState& t, const Record* group, std::size_t slots);
  // handle()'s Begin and End of a span, also taken straight from drain().
  // These two and write_span are defined inline in trace_writer.cpp, and
  // called only there.
  void open_span(ThreadDecodeState& d, const Record& r, const char* payload);
  void close_innermost(ThreadDecodeState& d, const Record& r);
  [[gnu::noinline]] void handle_other(ThreadState& t, ThreadDecodeState& d, const Record* group);
  // True if written (false: over the cap): the span's end settled by the
  // tie rule, then pf_end or json_span.
  bool write_span(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s, std::uint64_t end_ns,
                  bool incomplete);
  // Flattened: the hot renderer; in a translation unit this small GCC
  // otherwise calls string::push_back out of line (seen: 30 more
  // instructions per span, callgrind).
  [[gnu::flatten]] bool json_span(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s,
                                  std::uint64_t end_ns, bool incomplete);
  void write_instant(ThreadDecodeState& d);
  void write_thread_name(ThreadDecodeState& d, std::string_view name);
  // A thread_name metadata event; `where` is `,"pid":P,"tid":T`.
  void write_thread_name_event(std::int64_t pid, std::int64_t tid, std::string_view where,
                               std::string_view name);
  // The name event just rendered after mark_, for the head of later files.
  [[gnu::cold]] void remember_name(std::string_view what, std::int64_t pid, std::int64_t tid);
  void write_captured(ThreadDecodeState& d, const Record& r, const CapturedExtra& x,
                      std::string_view dynamic_name);
  // `"key":value` of an arg record, after a comma if `out` is not empty.
  void render_arg(std::string& out, const Record& r, const char* payload);
  // What `,"args":{...}` of a slice or instant holds, if anything: its
  // compile id, its args (rendered), jitscope_truncated, incomplete.
  struct ArgsText {
    bool in_unit = false;
    std::uint64_t unit = 0;
    std::string_view args;
    bool truncated = false;
    bool incomplete = false;
    static ArgsText of(const ThreadDecodeState::OpenSpan& s, bool incomplete) noexcept {
      return {s.in_unit, s.unit, s.args, s.truncated, incomplete};
    }
    bool any() const noexcept { return in_unit || !args.empty() || truncated || incomplete; }
  };
  void write_args(const ArgsText& a);
  // write_args's text at `p`, which needs a.args.size() + kFixedArgsRoom bytes.
  static constexpr std::size_t kFixedArgsRoom = 128;
  static char* put_args(char* p, const ArgsText& a) noexcept;
  // A slice's X event (after event_prefix), of category `cat`, on d's thread.
  void write_x_event(std::string_view cat, std::string_view name, std::uint64_t begin_ns,
                     std::uint64_t end_ns, const ThreadDecodeState& d, const ArgsText& a);
  // A span with a static name whose End follows its Begin and the scalar
  // args pushed with it (the commonest group: `records` of them from the
  // Begin) written straight from its records, the same bytes that handle()
  // of each writes (trace_leaf.cpp). false: nothing written, nor any state
  // changed but what handle() of the Begin does first (the pending BEGIN of
  // its parent) and ids it interned that are new (pending definitions,
  // made in the order handle() then makes them); the caller handles the
  // records.
  [[gnu::flatten]] bool write_leaf(ThreadDecodeState& d, const Record* b, std::size_t records);
  bool pf_leaf(ThreadDecodeState& d, const Record* b, std::size_t records);
  std::string leaf_args_;  // a leaf's args, rendered or encoded
  // The hot pair, once per event: a flag test here, one compare in commit().
  // Starts an event: remembers where (mark_) and writes the separator;
  // rotates first when the file is full.
  JITSCOPE_ALWAYS_INLINE void event_prefix() {
    if (rotate_pending_) [[unlikely]]
      rotate();
    mark_ = buf_.size();
    if (!pf_) buf_.append(",\n", 2);
  }
  // commit() for an event rendered as JSON after event_prefix: in the
  // protobuf form it is transcoded to packets first.
  bool cold_commit(bool counted, const pfw::Hints& hints = {});
  // commit() for an END whose BEGIN is written: never cut (its room was kept).
  JITSCOPE_ALWAYS_INLINE void commit_forced() {
    if (buf_.size() >= check_at_) [[unlikely]]
      commit_slow(true, /*forced=*/true);
  }
  // Ends the event begun by event_prefix. false: over the cap, the event is
  // gone again and counted (in over_cap_ if `counted`, else other_over_cap_).
  // The slow path also flushes a full buffer and notices a full file.
  JITSCOPE_ALWAYS_INLINE bool commit(bool counted) {
    if (buf_.size() < check_at_) [[likely]]
      return true;
    return commit_slow(counted);
  }
  // The bounds' code is marked cold: rare by design, and kept from taking
  // the compiler's inlining budget for this file away from the renderers
  // (seen: without it GCC stopped inlining string appends into write_span).
  // `forced`: never cut (an END whose BEGIN is written: its room was kept).
  [[gnu::cold]] bool commit_slow(bool counted, bool forced = false);
  // cap_limit_ from the cap and the room kept (trailer, threads, ENDs).
  void set_cap_limit() noexcept;
  // Keeps (or frees) room for an END under a cap.
  void pf_reserve(bool keep) noexcept {
    if (info_.max_trace_bytes == 0) return;
    open_end_bytes_ = keep ? open_end_bytes_ + kEndReserve : open_end_bytes_ - kEndReserve;
    set_cap_limit();
  }
  // The protobuf form (trace_perfetto.cpp).
  void pf_prepare(ThreadDecodeState& d, int tid);
  void pf_flush_begin(ThreadDecodeState& d);
  bool pf_end(ThreadDecodeState& d, ThreadDecodeState::OpenSpan& s, std::uint64_t end_ns,
              bool incomplete);
  void pf_instant(ThreadDecodeState& d);
  // A counter record's sample, on sequence 1 as the transcoder writes a "C"
  // event: its static name, or nullptr and its dynamic name.
  void pf_counter(ThreadDecodeState& d, std::uint64_t ts_ns, std::string_view dynamic_name,
                  const char* static_name, double value);
  // An arg record's debug annotation, appended to `out` (a span's args).
  void pf_arg(ThreadDecodeState& d, std::string& out, const Record& r, const char* payload);
  // Starts d's sequence in this file if it is not yet: its first packet and
  // the BEGINs of its spans still open; `ts` is the event's time.
  void pf_start(ThreadDecodeState& d, std::uint64_t ts);
  // A span begun in an earlier file or part, begun again: its BEGIN, same
  // time and BEGIN args, on its sequence in this one.
  void pf_begin_again(ThreadDecodeState::PfSequence& q, const ThreadDecodeState::OpenSpan& s);
  // d's sequence started again at `start_ns` (pf_start, a part's
  // preamble), into buf_: its first packet, the ids inside args already
  // encoded defined again.
  void pf_restart_sequence(ThreadDecodeState& d, std::uint64_t start_ns);
  // The span whose END pf_end is writing, if it is d's: popped already
  // (d.stack[d.depth]), so not among d's open spans.
  const ThreadDecodeState::OpenSpan* popped_span(const ThreadDecodeState& d) const noexcept {
    return ending_ != nullptr && d.depth < d.stack.size() && ending_ == &d.stack[d.depth] ? ending_
                                                                                          : nullptr;
  }
  // A TrackEvent packet on d's sequence at `ts`.
  void pf_packet(ThreadDecodeState::PfSequence& q, std::uint64_t ts, std::uint32_t type,
                 std::string_view category, const char* static_name, std::string_view name,
                 std::string_view annotations, std::string_view more_annotations,
                 bool intern = true);
  // The common BEGIN and END (short annotations, no definitions, one-byte ids,
  // the sequence started in this file): written without pf_packet's
  // general sizing, the same bytes. false: nothing written, take the
  // general path.
  bool pf_plain_begin(ThreadDecodeState::PfSequence& q, const ThreadDecodeState::OpenSpan& s);
  bool pf_plain_end(ThreadDecodeState::PfSequence& q, const ThreadDecodeState::OpenSpan& s,
                    std::uint64_t end_ns, bool incomplete);
  // The END's packet(s) in every other case.
  void pf_general_end(ThreadDecodeState& d, const ThreadDecodeState::OpenSpan& s,
                      std::uint64_t end_ns, bool incomplete);
  // `fixed` (the compile id) and `annotations` (the args) together take at
  // most kPlainAnnotationBytes.
  void pf_plain_packet(ThreadDecodeState::PfSequence& q, std::uint64_t ts, std::uint32_t type,
                       std::uint64_t cat_iid, std::uint64_t name_iid, std::string_view fixed,
                       std::string_view annotations);
  // pf_plain_packet's bytes at `p` (kPlainPacketBytes room); returns the end.
  static constexpr std::size_t kPlainPacketBytes = 32 + 64;
  static char* put_plain_packet(char* p, ThreadDecodeState::PfSequence& q, std::uint64_t ts,
                                std::uint32_t type, std::uint64_t cat_iid, std::uint64_t name_iid,
                                std::string_view fixed, std::string_view annotations) noexcept;
  // What a plain BEGIN carries besides its time and args.
  struct PlainBegin {
    std::uint64_t cat_iid = 0, name_iid = 0;
    std::string_view unit;  // its unit's compile_id annotation (cached per sequence), or empty
  };
  // The parts of a plain BEGIN at `begin_ns` of static `name` (category of
  // `flags`), in `unit` if not null, with `args` bytes of args encoded;
  // false: the general path writes it (the sequence not started in this
  // file or past one-byte ids, a definition waiting, time behind the
  // sequence's, too long, or an id new: interned here in pf_fixed_args'
  // and pf_packet's order, so the general path defines them alike).
  bool pf_plain_parts(ThreadDecodeState::PfSequence& q, std::uint64_t begin_ns, std::uint8_t flags,
                      const char* name, const std::uint64_t* unit, std::size_t args,
                      PlainBegin& out);
  static constexpr std::size_t kPlainAnnotationBytes = kPlainPacketBytes - 32;
  // compile_id (of `unit`, if not null) and jitscope_truncated / incomplete
  // as annotations.
  void pf_fixed_args(ThreadDecodeState::PfSequence& q, std::string& out, const std::uint64_t* unit,
                     bool truncated, bool incomplete, bool intern = true);
  // pf_fixed_args's `unit` for a span.
  static const std::uint64_t* unit_of(const ThreadDecodeState::OpenSpan& s) noexcept {
    return s.in_unit ? &s.unit : nullptr;
  }
  // After the commit of an event on d's sequence: its definitions kept or cut.
  void pf_settle(ThreadDecodeState& d, bool committed) {
    d.pf->interner.settle(committed);
    if (!committed && pf_restarted_) pf_settle_cut(d);
  }
  // The event that started the sequence in this file was cut.
  [[gnu::cold]] void pf_settle_cut(ThreadDecodeState& d);
  bool pf_restarted_ = false;  // pf_start began the sequence in this event
  // The head of a file in the protobuf form, into `out`, with `seq` as its
  // process sequence.
  void append_pf_head(std::string& out, std::uint64_t part, pfw::ProcessSequence& seq);
  void update_check() noexcept;  // check_at_ from the limits and base_
  [[gnu::cold]] void enter_capped() noexcept;
  [[gnu::cold]] void rotate();
  // The window's next part (set_window_parts), in place of rotate().
  [[gnu::cold]] void next_window_part();
  // The first packet of a file on sequence 1 (clock snapshot, state
  // cleared), `seq` started again.
  void append_pf_file_start(std::string& out, pfw::ProcessSequence& seq);
  // d's spans begun in the window, begun again on its sequence at the
  // start of a part, into `out`.
  void append_begun_again(std::string& out, ThreadDecodeState& d);
  // A snapshot's END of an open span (append_open_spans), into buf_.
  void pf_snapshot_end(ThreadDecodeState::PfSequence& q, const ThreadDecodeState::OpenSpan& s,
                       std::uint64_t end_ns);
  // Parts: the file's (rotate_bytes) or the window's.
  bool in_parts() const noexcept { return rotating_ || window_parts_ != nullptr; }
  std::uint64_t part_limit() const noexcept {
    return window_parts_ != nullptr ? part_bytes_ : info_.rotate_bytes;
  }
  // process_name, jitscope_session, jitscope_clock once known and the
  // remembered names, comma-separated.
  [[gnu::cold]] void append_header(std::string& out, std::uint64_t part);
  // The process_name metadata event.
  void append_process_name(std::string& out);
  // The jitscope_clock event: how ticks became CLOCK_MONOTONIC ns.
  void append_clock(std::string& out);
  void append_dropped_counter(std::string& out, std::uint64_t total);
  // ",\n" + the jitscope_stats event, without the extra stats if null and
  // with the first `threads` thread entries only.
  [[gnu::cold]] void append_stats(std::string& out, const CaptureTotals& nvtx,
                                  const std::function<void(JsonWriter&)>* extra_stats,
                                  std::size_t threads);
  // Keeps the cap's room for `s`'s entry in the stats up to date.
  [[gnu::cold]] void reserve_for(ThreadSummary& s);
  std::uint64_t total() const noexcept { return base_ + buf_.size(); }
  ThreadDecodeState& prepare(ThreadState& t);
  // `t`'s decoding state, made on first use. Inline: once per record group.
  static ThreadDecodeState& decode_state(ThreadState& t) {
    if (t.consumer == nullptr) [[unlikely]]
      t.consumer = std::make_unique<ThreadDecodeState>();
    return static_cast<ThreadDecodeState&>(*t.consumer);
  }

  TraceSink& sink_;
  SessionInfo info_;
  bool clock_known_ = false;  // jitscope_clock is written (in the head of later files too)
  std::string buf_;
  std::vector<ThreadSummary> summaries_;
  std::string scratch_;    // captured events' args
  std::string big_event_;  // an X event too long for the stack (write_x_event)
  std::uint64_t events_ = 0;
  std::uint64_t incomplete_ = 0;
  std::uint64_t decode_errors_ = 0;
  std::uint64_t captured_ranges_ = 0, captured_marks_ = 0, captured_async_ = 0;
  std::uint64_t last_dropped_ = 0;
  std::uint64_t lost_ = 0;
  GpuTrace* gpu_ = nullptr;
  // Bounds. Bytes: base_ handed to the sink so far (all files), file_base_
  // at the start of the file being written; buf_ holds the rest.
  std::size_t mark_ = 0;      // buf_'s size before the current event's separator
  std::size_t check_at_ = 0;  // commit() takes the slow path once buf_ is this big
  std::uint64_t base_ = 0;
  std::uint64_t file_base_ = 0;
  std::uint64_t reserve_ = 0;    // kept back for the trailer, under a cap
  std::uint64_t cap_limit_ = 0;  // max_trace_bytes - reserve_: events end at or below it
  std::uint64_t part_ = 0;       // the file being written: 0, 1, ...
  std::uint64_t over_cap_ = 0, other_over_cap_ = 0;
  std::uint64_t capped_at_ns_ = 0;
  bool rotating_ = false;
  bool keep_names_ = false;      // names_ kept without rotation: flight-recorder snapshots
  bool rotate_pending_ = false;  // the file is full: the next event starts a new one
  bool capped_ = false;
  bool ended_ = false;
  bool crash_cycle_ = false;
  std::string head_;                    // the next file's head, built aside
  WindowSink* window_parts_ = nullptr;  // set_window_parts
  std::size_t part_bytes_ = 0;
  std::uint32_t part_session_ = 0;
  const std::vector<ThreadState*>* part_threads_ = nullptr;
  const ThreadDecodeState::OpenSpan* ending_ = nullptr;  // pf_end's span, popped: popped_span
  // The protobuf form.
  bool pf_ = false;
  pfw::ProcessSequence seq1_;
  std::uint32_t next_sequence_ = 2;
  std::uint64_t open_end_bytes_ = 0;            // kEndReserve per written BEGIN, under a cap
  std::string pf_json_;                         // a cold event's JSON, being transcoded
  std::string pf_args_;                         // a hot event's fixed annotations
  std::string pf_big_;                          // a hot packet too big for the stack
  std::string pf_number_;                       // a counter's value as JSON spells it
  std::string pf_inline_cat_, pf_inline_name_;  // names written inline, repaired
  // The latest name event per (what, pid, tid), when rotating.
  std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::string> names_;
};

// Slots a record's group occupies: the record and its payload.
std::size_t group_slots(const Record& r) noexcept;

}  // namespace jitscope::detail
