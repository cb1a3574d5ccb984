// Hot-path plumbing behind the public macros and classes. Internal: include
// <jitscope/jitscope.hpp> instead.
//
// The inline part is the guard (one relaxed load of g_session), the clock
// read and, for spans and their scalar args, the common case of recording:
// a record written straight into the thread's ring (begin_span, end_span_now,
// add_scalar_arg below). Every other case is one out-of-line call into the
// library (ring/producer.cpp), which keeps every guarantee: drops counted,
// the End's slot reserved at the Begin, NVTX ranges, dropped Begins, ends
// out of order, registration. Under JITSCOPE_DISABLE the public classes and
// macros reach the calls below only from discarded `if constexpr
// (kCompiledIn)` branches or from inline functions never used: declared,
// never referenced.
#pragma once

#include <jitscope/detail/unload_hook.h>
#include <jitscope/detail/export.hpp>
#include <jitscope/detail/hot_lane.hpp>
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
#define JITSCOPE_LAMBDA_ALWAYS_INLINE __attribute__((always_inline))
#define JITSCOPE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define JITSCOPE_ALWAYS_INLINE inline
#define JITSCOPE_LAMBDA_ALWAYS_INLINE
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

// What a span's begin left behind for its end and its args: two words, so
// that compilers keep it in two registers through the inline begin and end
// with nothing to pack or unpack (as four 32-bit fields GCC packed it
// through SSE registers and the stack; as one word, session | serial << 32,
// building and splitting it took 7 instructions a span, callgrind).
struct SpanToken {
  std::uint32_t session_word = 0;  // the session word at begin; 0: never began
  std::uint64_t serial_word = 0;

  // A serial names a span among those its thread has open, so that an end
  // out of order is known for what it is. A recorded span's is the ring
  // position after its Begin (never 0, never reused within the session, so
  // a stale token never matches a later span); a span whose Begin was
  // dropped has kUnrecordedBit and the count of dropped begins; 0: not
  // tracked (deeper than 256).
  static constexpr std::uint64_t kUnrecordedBit = std::uint64_t{1} << 63;

  constexpr SpanToken() = default;
  constexpr SpanToken(std::uint32_t session, std::uint64_t serial) noexcept
      : session_word(session), serial_word(serial) {}

  constexpr std::uint32_t session() const noexcept { return session_word; }
  constexpr std::uint64_t serial() const noexcept { return serial_word; }
  // False: the begin was dropped (ring full / too deep).
  constexpr bool recorded() const noexcept {
    return serial_word != 0 && (serial_word & kUnrecordedBit) == 0;
  }
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
// The token by value, as end_span's: a Span's token never has its address taken.
JITSCOPE_API void add_arg(SpanToken token, const Arg& arg) noexcept;
// add_arg for an integer, floating-point or bool arg, `bits` its value's bits.
JITSCOPE_API void add_arg_bits(SpanToken token, const char* key, ValueType type,
                               std::uint64_t bits) noexcept;
JITSCOPE_API void instant(std::uint32_t session, std::uint64_t ts, const char* name,
                          std::string_view dynamic_name, const Arg* args,
                          std::size_t arg_count) noexcept;
JITSCOPE_API void counter(std::uint32_t session, std::uint64_t ts, const char* name,
                          std::string_view dynamic_name, double value) noexcept;

// The tag of Span's constructor whose args are made only with a session on.
struct LazyArgs {};
inline constexpr LazyArgs kLazyArgs{};

// The inline paths. Each writes what the out-of-line call would, in the one
// case that needs no decision: the thread's HotThread is open for `session`
// (so no Begin dropped while spans are open, no NVTX), and the ring has room
// by the producer's cached view. Anything else calls the library.

// A span with a static name and `args` scalar args, written in one commit,
// when the ring has room for its Begin, its args, its End and the Ends the
// open spans are owed (all recorded while the gate is open: `depth` of
// them), as the library's begin reserves. False: nothing written,
// the caller takes the out-of-line path. Else the caller writes each arg
// with put_scalar_arg and ends with commit_batch. The cursor's fields are
// copies: the record stores cannot alias them, so nothing is reloaded.
struct SpanBatch {
  Record* slots;
  std::uint64_t mask;
  std::uint64_t tail;  // the Begin's position
  std::atomic<std::uint64_t>* published;
  // The span's index among the recorded open spans: its depth, as the gate
  // is open.
  std::uint8_t index;
};
JITSCOPE_ALWAYS_INLINE bool begin_span_batch(std::uint32_t session, std::uint64_t ts,
                                             const char* name, std::uint64_t args, SpanToken& token,
                                             SpanBatch& batch) noexcept {
  HotThread& h = *t_hot;
  if (h.session != session) [[unlikely]]
    return false;
  const std::uint64_t d = h.depth;  // all recorded: the gate is open
  RingProducer& r = h.producer;
  const std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
  if (d >= kMaxRecordedDepth || tail + d + 2 + args > r.room_end) [[unlikely]]
    return false;
  batch = {r.slots, r.mask, tail, &r.tail, static_cast<std::uint8_t>(d)};
  h.open_serial[d] = tail + 1;
  h.depth = d + 1;
  Record& rec = batch.slots[tail & batch.mask];
  rec.ts = ts;
  rec.name = name;
  // A Begin's index is not read: the flusher keeps the depth itself.
  set_record_word(rec, record_word(RecordKind::kBegin, ValueType::kNone, 0, 0));
  token = {session, tail + 1};
  return true;
}
// The i-th arg (from 0) after the batch's Begin.
JITSCOPE_ALWAYS_INLINE void put_scalar_arg(const SpanBatch& batch, std::uint64_t i, const char* key,
                                           ValueType type, std::uint64_t bits) noexcept {
  Record& rec = batch.slots[(batch.tail + 1 + i) & batch.mask];
  rec.name = key;
  rec.value.u64 = bits;
  set_record_word(rec, record_word(RecordKind::kArg, type, 0, batch.index));
}
// Publishes the Begin and its `args` args together.
JITSCOPE_ALWAYS_INLINE void commit_batch(const SpanBatch& batch, std::uint64_t args) noexcept {
  batch.published->store(batch.tail + 1 + args, std::memory_order_release);
}

// A span with a static name: a batch without args.
JITSCOPE_ALWAYS_INLINE SpanToken begin_span(std::uint32_t session, std::uint64_t ts,
                                            const char* name) noexcept {
  SpanToken token;
  SpanBatch batch;
  if (begin_span_batch(session, ts, name, 0, token, batch)) [[likely]] {
    commit_batch(batch, 0);
    return token;
  }
  return begin_static(session, ts, name);
}

// The end of the innermost span, when `token` is it; its slot was reserved.
JITSCOPE_ALWAYS_INLINE void end_span_now(SpanToken token, std::uint64_t ts) noexcept {
  HotThread& h = *t_hot;
  const std::uint64_t top = h.depth - 1;  // wraps at depth 0: fails the next test
  if (h.session != token.session() || top >= kMaxRecordedDepth ||
      h.open_serial[top] != token.serial()) [[unlikely]] {
    end_span(token, ts);
    return;
  }
  h.depth = top;
  RingProducer& r = h.producer;
  const std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
  Record& rec = r.slots[tail & r.mask];
  rec.ts = ts;  // only the time and the kind of an End are read
  set_record_word(rec, record_word(RecordKind::kEnd, ValueType::kNone, 0, 0));
  r.tail.store(tail + 1, std::memory_order_release);
}

// An integer, floating-point or bool arg (`bits` its value's bits) on the
// open span `token`, when it is the innermost (an arg on an outer span finds
// its span out of line). False: the caller calls add_arg.
JITSCOPE_ALWAYS_INLINE bool add_scalar_arg(SpanToken token, const char* key, ValueType type,
                                           std::uint64_t bits) noexcept {
  HotThread& h = *t_hot;
  const std::uint64_t top = h.depth - 1;  // wraps at depth 0: fails the next test
  if (h.session != token.session() || top >= kMaxRecordedDepth ||
      h.open_serial[top] != token.serial()) [[unlikely]]
    return false;
  RingProducer& r = h.producer;
  const std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
  if (tail + top + 2 > r.room_end) [[unlikely]]  // the arg and the open spans' Ends
    return false;
  Record& rec = r.slots[tail & r.mask];
  rec.name = key;  // an arg's time is not read
  rec.value.u64 = bits;
  // The gate is open: every open span is recorded, so its depth is its index.
  set_record_word(rec, record_word(RecordKind::kArg, type, 0, static_cast<std::uint8_t>(top)));
  r.tail.store(tail + 1, std::memory_order_release);
  return true;
}

}  // namespace jitscope::detail
