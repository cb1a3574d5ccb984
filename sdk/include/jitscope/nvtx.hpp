// NVTX both ways: jitscope's spans in Nsight Systems, and other libraries'
// NVTX ranges in jitscope's trace.
//
// Emission (Config::nvtx_emit, JITSCOPE_NVTX): while a session runs, every
// span, phase and compile unit is also an NVTX range in the "jitscope"
// domain, and every instant an NVTX mark. Static names are registered with
// NVTX once per name; a compile unit's range is named "[frame/attempt] name",
// and every range inside a unit carries the unit's compile id twice: as its
// NVTX category (named "[3/1] name") and as a uint64 payload
// (frame << 32 | attempt). Names set with set_thread_name go to
// nvtxNameOsThreadA. Emission switches itself off when nothing listens
// (no NVTX tool, or only jitscope's own capture): then a span costs what it
// costs without NVTX.
//
// Capture (Config::nvtx_capture): jitscope is an NVTX tool in-process.
// Ranges other code emits land in the trace on the thread that made them,
// with the NVTX domain as the category ("nvtx" for the default domain):
//   push/pop           -> a slice ("X"), written when it pops
//   start/end          -> an async slice ("b"/"e"), also when it ends on another thread
//   marks              -> instants
//   payload, category  -> args "payload" and "category" (the category's name when named)
//   nvtxNameOsThread   -> the thread's name in the trace
// Two ways to attach it (docs/nvtx.md):
//   * NVTX_INJECTION64_PATH=<libdir>/libjitscope_nvtx.so: every library's
//     NVTX calls, in a program linked with jitscope or not (then JITSCOPE_TRACE
//     starts the session).
//   * Static: linking jitscope defines NVTX's static-injection hook, so NVTX
//     calls compiled into the same binary (executable or shared library) are
//     captured with no variable set. Other shared libraries keep their own
//     NVTX copy and need the variable.
// If NVTX_INJECTION64_PATH names another tool (Nsight Systems sets it), that
// tool owns NVTX: capture stays off and says so once; emission still works.
#pragma once

#include <jitscope/detail/export.hpp>

#include <cstddef>
#include <cstdint>

JITSCOPE_NAMESPACE_BEGIN

struct NvtxStatus {
  bool compiled_in = false;            // built with the CUDA toolkit's NVTX headers
  bool emitting = false;               // the active session emits NVTX ranges
  std::size_t captured_instances = 0;  // NVTX copies (one per library) jitscope captures
};

// Where NVTX stands now. Cheap; takes a lock.
JITSCOPE_API NvtxStatus nvtx_status() noexcept;

JITSCOPE_NAMESPACE_END

#if defined(JITSCOPE_DISABLE)
// Compiled out: nothing is compiled in, nothing emits, nothing is captured.
JITSCOPE_NAMESPACE_BEGIN
inline NvtxStatus nvtx_status() noexcept { return {}; }
JITSCOPE_NAMESPACE_END
#else
extern "C" {
// The injection library's hand-off: attaches jitscope's capture to the NVTX
// instance whose export table `get_export_table` gives. Returns 1 on success.
// Idempotent per instance. Not for direct use. Exported from the static
// library too (the injection library finds it by name in the process).
#if defined(_WIN32)
JITSCOPE_API
#else
__attribute__((visibility("default")))
#endif
int jitscope_nvtx_attach(const void* (*get_export_table)(std::uint32_t)) noexcept;
}
#endif
