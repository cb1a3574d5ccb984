// NVTX both ways, internal side (public: <jitscope/nvtx.hpp>).
//   Emission (emit.cpp): spans, phases, compile units and instants of a
//   session also become NVTX ranges/marks in the "jitscope" domain, so Nsight
//   Systems shows them.
//   Capture (capture_*.cpp, capture_state.hpp): jitscope is an NVTX tool in-process; ranges,
//   marks and names that other code emits go into the trace.
// Without the CUDA toolkit both are stubs (off.cpp).
#pragma once

#include "nvtx/capture_totals.hpp"

#include <jitscope/jitscope.hpp>

#include <cstdint>
#include <string_view>

namespace jitscope::detail {

// ---- emission ----
// Creates the "jitscope" domain once per process, which initializes
// jitscope's NVTX copy (loading its tool). start() calls it before taking
// its own lock: a tool's init may do anything, fork included.
void nvtx_emit_prepare() noexcept;
void nvtx_emit_lock_for_fork() noexcept;
void nvtx_emit_unlock_after_fork() noexcept;
// At start(): whether this session emits. True only when the config asks for
// it, NVTX is compiled in, and some tool other than jitscope's own capture
// listens to jitscope's NVTX calls (without one, a push would be a no-op).
bool nvtx_emit_begin_session(const Config& config) noexcept;
// An image is being unloaded: names registered by address are forgotten
// (the address may come back holding another name).
void nvtx_emit_forget_static_names() noexcept;
// While it emits, the session's spans reach NVTX through the ring layer's
// SpanMirror (ring/span_mirror.hpp), which this installs.

// ---- capture ----
// At start(): turns capture on or off for the session (per the config) and
// says once if another tool owns NVTX_INJECTION64_PATH.
void nvtx_capture_begin_session(const Config& config) noexcept;
// Process-wide totals so far (not ranges, marks, async ranges: the writer
// counts those); a session reports the difference.
CaptureTotals nvtx_capture_totals() noexcept;
// True if jitscope's capture was attached to the NVTX instance whose export
// table function is `get_export_table` (emission uses it to spot itself).
bool nvtx_capture_attached_to(const void* get_export_table) noexcept;
// How many NVTX instances (one per library that uses NVTX) jitscope captures.
std::size_t nvtx_capture_instances() noexcept;
// fork(): every NVTX-side lock (emitter, names, open async ranges, attached
// copies) held across it, so the child never inherits one mid-update.
void nvtx_lock_for_fork() noexcept;
void nvtx_unlock_after_fork() noexcept;
// Set while jitscope's own emission calls NVTX: capture ignores those calls.
extern constinit thread_local bool t_nvtx_emitting;

}  // namespace jitscope::detail
