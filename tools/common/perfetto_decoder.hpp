// Perfetto's protobuf TrackEvent trace, one TracePacket at a time, turned
// into the events of the Chrome JSON form (docs/perfetto-format.md, "Events"),
// as the JSON text jitscope's JSON writer would have written for them. The
// tools read both forms through TraceReader (trace_reader.hpp), which frames
// the packets and hands them here; tests and fuzzers may call it directly.
//
// Quickstart
//   jitscope::tools::PerfettoDecoder d([&](const jitscope::tools::RawEvent& e) {
//     /* e.json: {"ph":"X","cat":"jitscope","name":"parse","ts":1.000,...} */
//     return true;
//   });
//   std::string error;
//   for (each packet's bytes p at file offset o)
//     if (!d.packet(p, o, &error)) fail(error);  // "byte N: <what>", no path
//   d.finish();                                  // counts the slices left open
//
// Output::kFields hands each event over as its fields (RawEvent::fields:
// the DecodedEvent that EventDecoder would read off the JSON text, args
// aside) with its args as `{"args":{...}}` text, so that the report neither
// writes nor parses the rest. The args' members that EventDecoder reads on
// every event (compile_id, failed, ...) are noted as they are written and
// handed over too (RawEvent::args_read), where their text needs no
// unescaping; else EventDecoder parses that text. An event with a time of
// 10^18 ns or more (not plain in the text), or whose text could pass
// max_bytes, comes as its JSON text. perfetto_fields_test,
// perfetto_args_read_test and fuzz_perfetto hold the two outputs to the
// same decoded events and errors.
//
// Both outputs copy an event's args text from the last event whose
// annotations had the same bytes on a sequence whose strings have not
// changed since (a compile unit's spans carry the same compile_id), where
// that text is short (256 bytes) and named no unknown iid. One difference is left: the event buffer
// is smaller with kFields (its args alone), so a trace within a few hundred
// bytes of max_memory may be read with kFields and refused with kJson; and
// largest_event() is then the largest args text.
//
// Mapping (what docs/tools.md lists for users)
// - SLICE_BEGIN/SLICE_END on a track: one "X" written at the END (nested
//   slices end inner-first, as the JSON writer writes them), ts of the BEGIN,
//   dur = END - BEGIN, args of the BEGIN then of the END.
// - INSTANT: "I" with "s":"t" (thread tracks) or "s":"p" (process tracks), the
//   JSON writer's spelling; category "__metadata": an "M" event with the name
//   and args (jitscope_session, jitscope_stats, ...), tid 0 on a process.
// - COUNTER: "C" named by the event or else its counter track, args {"value":V}.
// - Process / thread descriptors: process_name / thread_name "M" events when
//   a name is first given or changes.
// - A track without process or thread (an NVTX domain on a thread) takes
//   the pid and tid of its nearest ancestor that has them; its events without
//   a category take the track's name as "cat".
// - flow_ids: an "s" at the event, terminating_flow_ids: an "f" with "bp":"e";
//   the JSON writer's launch arrow shape ("cat":"gpu","name":"launch","id":N).
// - Debug annotations: args (ints, uints, doubles, bools, strings, interned
//   string values, pointers as "0x..." strings, dicts and arrays nested).
//
// Sequences: interned names and categories, trace_packet_defaults and the
// sequence-scoped clocks (64..127, incremental or not, unit_multiplier_ns)
// belong to the packet's trusted_packet_sequence_id and are dropped by
// SEQ_INCREMENTAL_STATE_CLEARED; a packet that sets SEQ_NEEDS_INCREMENTAL_STATE
// on a sequence never cleared is skipped and counted (Perfetto does the same).
// Timestamps on other clocks are converted to the trace's clock through the
// latest absolute ClockSnapshot (primary_trace_clock; BOOTTIME if none);
// a clock the snapshot lacks is taken as the trace's clock.
//
// Bounds (a hostile file is an error, never unbounded memory or work):
// - memory: everything the decoder keeps (sequences, tracks, interned
//   strings, open slices, with the room they hold) and the buffers of the
//   packet being decoded (its inflated bytes, the event being written, the
//   caller's read buffer: set_buffer_bytes) at most max_memory in all
//   (TraceReader::kMaxMemoryBytes, 512 MiB), counted in bytes as they grow:
//   "byte N: reading this trace takes more than 512 MiB of memory (...)".
//   Counts are not bounded: the SDK writes a sequence per thread, and a
//   long-running compiler's threads come and go (70,000 threads as the SDK
//   writes them take 782 bytes each, their sequences, names and tracks:
//   some 650,000 threads fit). A track keeps the room of its deepest nesting only while
//   it is that deep; an ended slice keeps up to 256 bytes of strings for
//   the next BEGIN.
// - interned strings, open slices' strings and each event at most
//   max_bytes (the reader's max_event_bytes); annotations nested 64 deep.
//   Interned arg names and string values count as the JSON strings they are
//   kept as (escaped: up to 6 bytes a byte).
// - inflating: a compressed packet to at most max_bytes; all of them
//   together to 64 MiB plus 1024 bytes per byte of input read so far
//   (deflate's own limit is 1032:1; a zstd frame of runs passes 30000:1,
//   and every inflated byte is decoding time).
#pragma once

#include "trace_reader.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace jitscope::tools {

class PerfettoDecoder {
 public:
  // How events are handed over: as JSON text, or as their fields with
  // their args alone as text (RawEvent::fields, for EventDecoder).
  enum class Output { kJson, kFields };
  explicit PerfettoDecoder(std::function<bool(const RawEvent&)> on_event,
                           std::size_t max_bytes = TraceReader::kMaxEventBytes,
                           std::size_t max_memory = TraceReader::kMaxMemoryBytes,
                           Output output = Output::kJson);
  ~PerfettoDecoder();
  PerfettoDecoder(const PerfettoDecoder&) = delete;
  PerfettoDecoder& operator=(const PerfettoDecoder&) = delete;

  // One TracePacket's bytes, at byte `offset` of the input. false: either
  // the packet is malformed (*error = "byte N: <what>", N in the input) or
  // on_event returned false (*error left as the callback set it; stopped()).
  bool packet(std::string_view bytes, std::uint64_t offset, std::string* error);
  // The end of the input: slices begun and never ended are counted (their
  // JSON form, cut before their X was written, lacks them too).
  void finish();

  // Bytes the caller holds to hand packets over (its read buffer), counted
  // against max_memory from the next packet on.
  void set_buffer_bytes(std::size_t bytes) noexcept;
  // Bytes in use now by the count above (the buffer's included).
  std::size_t memory() const noexcept;

  bool stopped() const noexcept;
  std::uint64_t events() const noexcept;       // handed to on_event
  std::size_t largest_event() const noexcept;  // bytes
  // The counts a read adds to InputRepairs (trace_reader.hpp).
  const PerfettoSkips& skips() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace jitscope::tools
