// Hot-path plumbing behind the public macros and classes. Internal: include
// <jitscope/jitscope.hpp> instead.
//
// The inline part is the guard (one relaxed load of g_session) and the clock
// read; recording is one out-of-line call into the library (ring/producer.cpp).
// Under JITSCOPE_DISABLE every use of the calls below sits in a discarded
// `if constexpr (kCompiledIn)` branch: declared, never referenced.
#pragma once

#include <jitscope/detail/unload_hook.h>
#include <jitscope/detail/export.hpp>
#include <jitscope/detail/value_type.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#if defined(__GNUC__)
#define JITSCOPE_ALWAYS_INLINE inline __attribute__((always_inline))
#define JITSCOPE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define JITSCOPE_ALWAYS_INLINE inline
#define JITSCOPE_UNLIKELY(x) (x)
#endif

JITSCOPE_NAMESPACE_BEGIN
struct Arg;
JITSCOPE_NAMESPACE_END

namespace jitscope::detail {

#if defined(JITSCOPE_DISABLE)
// In its own inline namespace (as the public API, export.hpp): the two
// values never share a mangled name in a program that mixes both kinds of
// translation unit.
inline namespace disabled {
inline constexpr bool kCompiledIn = false;
}  // namespace disabled
#else
inline constexpr bool kCompiledIn = true;
#endif

// The session word. 0: no session. Otherwise bit 0 says the clock is the TSC
// (1) or CLOCK_MONOTONIC (0), bit 1 that spans are also emitted as NVTX
// ranges, and the bits above are the session's generation, so one relaxed
// load answers "on?", "which clock?", "NVTX?" and "which session?".
extern JITSCOPE_API std::atomic<std::uint32_t> g_session;

inline constexpr std::uint32_t kSessionTscBit = 1;
inline constexpr std::uint32_t kSessionNvtxBit = 2;
inline constexpr unsigned kSessionGenerationShift = 2;

JITSCOPE_ALWAYS_INLINE std::uint32_t session_word() noexcept {
  // relaxed: a stale value only means one event more or less at the edges of
  // a session; the slow path (registration) re-checks with acquire.
  return g_session.load(std::memory_order_relaxed);
}

JITSCOPE_ALWAYS_INLINE std::uint64_t monotonic_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// Ticks of the session's clock: TSC ticks or monotonic ns.
JITSCOPE_ALWAYS_INLINE std::uint64_t read_clock(std::uint32_t session) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  if (session & kSessionTscBit) return __rdtsc();
#else
  (void)session;
#endif
  return monotonic_ns();
}

// The text in a writable char buffer: up to its first NUL, never past it.
template <std::size_t N>
std::string_view buffer_text(const char (&buffer)[N]) noexcept {
  const void* nul = std::memchr(buffer, '\0', N);
  return {buffer,
          nul != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nul) - buffer) : N};
}

// What a span's begin left behind for its end and its args.
struct SpanToken {
  std::uint32_t session = 0;  // session word at begin; 0: span never began
  // Which span this is among those the thread opened (0: not tracked, deeper
  // than 256), so that an end out of order is known for what it is.
  std::uint32_t serial = 0;
  // Its slot on the writer's open-span stack (< 256). Four bytes, as is
  // `recorded`: word-sized fields let a begin return the token in registers.
  std::uint32_t index = 0;
  std::uint32_t recorded = 0;  // 0: the begin was dropped (ring full / too deep)
};

JITSCOPE_API SpanToken begin_static(std::uint32_t session, std::uint64_t ts,
                                    const char* name) noexcept;
JITSCOPE_API SpanToken begin_dynamic(std::uint32_t session, std::uint64_t ts,
                                     std::string_view name) noexcept;
// Ends the span `token` began. Spans it contains that are still open end
// with it (an end out of order; counted, and marked in the trace); a span
// already ended that way ends nothing.
// By value: the token stays in registers (an address taken would keep it in
// memory, also on the no-session path).
JITSCOPE_API void end_span(SpanToken token, std::uint64_t ts) noexcept;
JITSCOPE_API void add_arg(const SpanToken& token, const Arg& arg) noexcept;
JITSCOPE_API void instant(std::uint32_t session, std::uint64_t ts, const char* name,
                          std::string_view dynamic_name, const Arg* args,
                          std::size_t arg_count) noexcept;
JITSCOPE_API void counter(std::uint32_t session, std::uint64_t ts, const char* name,
                          std::string_view dynamic_name, double value) noexcept;

}  // namespace jitscope::detail
