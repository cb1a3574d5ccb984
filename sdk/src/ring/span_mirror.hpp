// A second tracer that mirrors a session's spans, marks and thread names as
// they are recorded (NVTX emission, nvtx/emit.cpp, so Nsight Systems shows
// them). The ring layer calls through this table and knows nothing of NVTX:
// the mirroring module installs it before it sets kSessionNvtxBit in a
// session word, and the producer calls it only while that bit is set.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

namespace jitscope::detail {

struct SpanMirror {
  // A span begins; `flags` and `value` are its Begin record's (kFlagUnit:
  // value is the packed compile id).
  void (*push)(const char* name, std::string_view dynamic_name, std::uint8_t flags,
               std::uint64_t value) noexcept;
  void (*pop)() noexcept;
  void (*mark)(const char* name, std::string_view dynamic_name) noexcept;
  void (*thread_name)(std::string_view name) noexcept;
};

// Set once, before the first session word with kSessionNvtxBit is
// published; never cleared (the table is static). Relaxed loads suffice: a
// producer acts on the NVTX bit only through a ThreadState registered for
// that session word, and registration loads the word with acquire, pairing
// with start()'s release store, which comes after this table was stored. So
// every push, pop, mark and thread name of an NVTX session sees the table,
// and pushes and pops stay balanced.
inline std::atomic<const SpanMirror*> g_span_mirror{nullptr};

inline const SpanMirror* span_mirror() noexcept {
  return g_span_mirror.load(std::memory_order_relaxed);  // relaxed: see g_span_mirror
}

}  // namespace jitscope::detail
