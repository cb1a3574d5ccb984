// Producer entry points used inside the library only (the compile layer);
// the public hot path is in <jitscope/detail/hot.hpp>.
#pragma once

#include "ring/record.hpp"

#include <jitscope/detail/hot.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace jitscope::detail {

// A span begin with record flags (kFlagUnit, kFlagPhase, kFlagCompileEvent)
// and a value (the packed compile id of a unit). `name` is a stable static
// name, or nullptr and `dynamic_name` is copied. `args` (at most 8; more are
// counted as dropped) are written with the Begin, in its room check: what
// add_args right after it would record, without its lookup of the span.
// No room for them together: the span, then each arg that fits alone (the
// others counted as dropped).
SpanToken begin_marked(std::uint32_t session, std::uint64_t ts, const char* name,
                       std::string_view dynamic_name, std::uint8_t flags, std::uint64_t value,
                       const Arg* args = nullptr, std::size_t arg_count = 0) noexcept;

// Adds `count` args (at most 8) to the open span `token` in one write: one
// lookup of the span and one room check (add_arg's per arg). All or none:
// a list that does not fit is dropped whole, each arg counted in
// args_dropped, as are args past the eighth.
void add_args(SpanToken token, const Arg* args, std::size_t count) noexcept;

// Whether a ring past half full wakes the flusher at once (on by default).
// For tests that count the drops of a ring nothing drains before stop.
void set_wake_at_half(bool on) noexcept;

// The name of this thread's open span `below` levels under its innermost
// (0: the innermost), read back from the span's Begin record in this
// thread's own ring: into `out`, if the span was recorded and its record
// has not been written over since (a ring's worth of records later). A
// rare path (the compile-while-serving line); throws only std::bad_alloc.
bool open_span_name(std::uint32_t session, std::uint64_t below, std::string& out);

// Appends pre-rendered JSON members (`"k":v,...`, from JsonWriter) to the
// open span's args. False (and counted as a dropped arg) if they cannot go in whole.
bool add_json_members(const SpanToken& token, std::string_view members) noexcept;

// An event another library emitted (NVTX capture), written whole at its end.
struct CapturedEvent {
  CapturedKind kind = CapturedKind::kRange;
  std::uint64_t start_ts = 0;  // ticks of the session's clock
  std::uint64_t end_ts = 0;
  const char* name = nullptr;     // stable (interned) name, or nullptr:
  std::string_view dynamic_name;  // copied into the ring
  const void* domain = nullptr;   // CapturedDomain*
  ValueType payload_type = ValueType::kNone;
  std::uint64_t payload = 0;  // value bits
  std::uint32_t category = 0;
  std::uint64_t id = 0;
  std::int32_t tid = 0;
  // kAsyncRange with payload_type kNone: the last args_len bytes of
  // dynamic_name are JSON members ("k":v,...), the slice's args; carried
  // in CapturedExtra::payload. Dropped (the name kept) when they do not fit.
  std::size_t args_len = 0;
};
// Records `e` on the calling thread's ring. False if it was dropped (full
// ring, counted) or there is no session `session`.
bool emit_captured(std::uint32_t session, const CapturedEvent& e) noexcept;

// A CUDA call the CUPTI collector correlates (RecordKind::kGpuCall), from
// its API callback on the calling thread: `compiled_by` is the collector's
// GpuUnitTag* and `kernel_name` its interned kernel name (both opaque here,
// nullptr: none), `role` its GpuCallRole. Never waits for room, whatever
// the overflow policy: false if dropped (counted) or no session `session`.
bool emit_gpu_call(std::uint32_t session, std::uint32_t correlation, const void* compiled_by,
                   const void* kernel_name, std::uint8_t role) noexcept;

}  // namespace jitscope::detail
