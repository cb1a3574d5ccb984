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

// The clock the inline path reads, after its gate: the TSC on x86, where the
// gate opens only for a session on the TSC (HotThread::session), so no test
// of the session's clock is needed there; CLOCK_MONOTONIC elsewhere, the
// only clock there. The out-of-line paths read the session's clock
// (read_clock).
JITSCOPE_ALWAYS_INLINE std::uint64_t inline_clock() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return monotonic_ns();
#endif
}
// Writes inline_clock() into `ts`. On x86 with GNU C, rdtsc's two halves
// are stored as they come (two 32-bit stores, little-endian), not joined
// first (a shift and an or: 1 instruction more per clock read, callgrind).
JITSCOPE_ALWAYS_INLINE void stamp_inline_clock(std::uint64_t& ts) noexcept {
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
  std::uint32_t low;
  std::uint32_t high;
  // volatile: each stamp is a read of the clock of its own, never merged
  // with or moved across another (as the __rdtsc builtin).
  asm volatile("rdtsc" : "=a"(low), "=d"(high));
  std::memcpy(reinterpret_cast<char*>(&ts), &low, sizeof low);
  std::memcpy(reinterpret_cast<char*>(&ts) + sizeof low, &high, sizeof high);
#else
  ts = inline_clock();
#endif
}
// True when `session`'s clock is inline_clock()'s.
constexpr bool runs_on_inline_clock(std::uint32_t session) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return (session & kSessionTscBit) != 0;
#else
  return (session & kSessionTscBit) == 0;
#endif
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
  // position after its Begin (never 0; each thread state's ring starts at
  // positions of its own, so a stale token from an earlier session or state
  // does not match a later span, within the bounds ring_start in
  // ring/thread_registry.hpp gives); a span whose Begin was dropped has
  // kUnrecordedBit and the count of dropped begins; one opened past depth
  // 256 (never tracked) has kUnrecordedBit, kUntrackedBit and an id of its
  // own (ThreadState::untracked_open); 0: none (the C API's end of the
  // innermost span). Positions stay below 2^61, clear of the flag bits.
  static constexpr std::uint64_t kUnrecordedBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kUntrackedBit = std::uint64_t{1} << 61;
  // Set in serial_word (not part of the serial) on a span whose end must go
  // through the library: one begun while the inline path's gate was closed
  // (NVTX emission, another clock, a dropped span open) or dropped itself.
  // The inline end compares serial_word with the stack's serial, which
  // never has it, so such an end never matches there: the inline end needs
  // no test of the session.
  static constexpr std::uint64_t kLibraryEndBit = std::uint64_t{1} << 62;

  constexpr SpanToken() = default;
  constexpr SpanToken(std::uint32_t session, std::uint64_t serial) noexcept
      : session_word(session), serial_word(serial) {}

  constexpr std::uint32_t session() const noexcept { return session_word; }
  constexpr std::uint64_t serial() const noexcept { return serial_word & ~kLibraryEndBit; }
  // False: the begin was dropped (ring full / too deep).
  constexpr bool recorded() const noexcept {
    return serial() != 0 && (serial_word & kUnrecordedBit) == 0;
  }
  // True for a span opened past depth 256; untracked_id() is its id.
  constexpr bool untracked() const noexcept {
    return (serial_word & (kUnrecordedBit | kUntrackedBit)) == (kUnrecordedBit | kUntrackedBit);
  }
  constexpr std::uint64_t untracked_id() const noexcept {
    return serial_word & (kUntrackedBit - 1);
  }
};

JITSCOPE_API SpanToken begin_static(std::uint32_t session, std::uint64_t ts,
                                    const char* name) noexcept;
JITSCOPE_API SpanToken begin_dynamic(std::uint32_t session, std::uint64_t ts,
                                     std::string_view name) noexcept;
// begin_dynamic with up to kMaxBeginArgs args written with the Begin: one
// room check, no lookup of the span per arg (what add_arg after it pays).
// No room for them together: the span, then each arg that fits alone (the
// others counted as dropped).
inline constexpr std::size_t kMaxBeginArgs = 8;
JITSCOPE_API SpanToken begin_dynamic_args(std::uint32_t session, std::uint64_t ts,
                                          std::string_view name, const Arg* args,
                                          std::size_t count) noexcept;
// The same with a name kept for the process (a literal, or stable_name's).
JITSCOPE_API SpanToken begin_static_args(std::uint32_t session, std::uint64_t ts, const char* name,
                                         const Arg* args, std::size_t count) noexcept;
// `name`, NUL-terminated and kept for the process, for begin_static_args:
// the same pointer for the same text. A lock and a lookup: callers keep a
// cache in front of it (adapter_stack.hpp's kept_name). nullptr past 16,384
// names or 4 MiB, for an empty name or one holding a NUL: the caller copies
// it as a dynamic name.
JITSCOPE_API const char* stable_name(std::string_view name) noexcept;
// Ends the span `token` began. Spans it contains that are still open end
// with it (an end out of order; counted, and marked in the trace); a span
// already ended that way ends nothing.
// By value: the token stays in registers (an address taken would keep it in
// memory, also on the no-session path).
JITSCOPE_API void end_span(SpanToken token, std::uint64_t ts) noexcept;
// end_span at the session's clock's time now: the inline end's way out,
// one call with nothing to compute before it.
JITSCOPE_API void end_span_timed(SpanToken token) noexcept;
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
// The tag of Span's constructor that takes a span begun by a detail call
// (the adapters' begin_static_args).
struct AdoptToken {};
inline constexpr AdoptToken kAdoptToken{};

// The inline paths. Each writes what the out-of-line call would, in the one
// case that needs no decision: the thread's HotThread is open for `session`
// (so no Begin dropped while spans are open, no NVTX, and the session's
// clock is inline_clock()), and the ring has room by the producer's cached
// view. Anything else calls the library, with the time read by read_clock.
// The inline paths read the clock after their gate, a few instructions
// later than the caller could: the gate is what says which clock to read.

// A span with a static name and `args` scalar args, written in one commit,
// when the ring has room for its Begin, its args, its End and the Ends the
// open spans are owed (all recorded while the gate is open: one per open
// span), as the library's begin reserves. False: nothing written,
// the caller takes the out-of-line path. Else the caller writes each arg
// with put_scalar_arg and ends with commit_batch. The cursor's fields are
// copies: the record stores cannot alias them, so nothing is reloaded.
struct SpanBatch {
  Record* slots;
  std::uint64_t mask;
  std::uint64_t tail;  // the Begin's position
  std::atomic<std::uint64_t>* published;
  // The span's index among the recorded open spans (its depth, as the gate
  // is open) in record_word's place for an index (kIndexFromDepthX8).
  std::uint64_t index_bits;

  Record& at(std::uint64_t position) const noexcept { return slot_at(slots, mask, position); }
};
// A depth_x8 at the depth limit (HotThread).
inline constexpr std::uint64_t kMaxRecordedDepthX8 = std::uint64_t{kMaxRecordedDepth} * 8;
// A depth_x8 (below kMaxRecordedDepthX8) times this is the depth in
// record_word's place for an index: one shift, where the index itself took
// a shift each way (1 instruction an arg, callgrind).
inline constexpr std::uint64_t kIndexFromDepthX8 = std::uint64_t{1} << 21;
static_assert(record_word(RecordKind{}, ValueType{}, 0, 1) == kIndexFromDepthX8 * 8);
static_assert(kMaxRecordedDepthX8 * kIndexFromDepthX8 < (std::uint64_t{1} << 32),
              "the index stays in its byte, clear of name_len");
// Writes the clock that the inline path reads (InlineStamp) or a time read
// before (GivenStamp, for the library's lean path on the other clock).
struct InlineStamp {
  JITSCOPE_ALWAYS_INLINE void operator()(std::uint64_t& ts) const noexcept {
    stamp_inline_clock(ts);
  }
};
struct GivenStamp {
  std::uint64_t ts;
  JITSCOPE_ALWAYS_INLINE void operator()(std::uint64_t& out) const noexcept { out = ts; }
};
// The inline paths behind a gate: HotThread::session with inline_clock(),
// or HotThread::other_clock_session with a time the library read.
// `begin_word` is the Begin's record word: a dynamic name's flag and length
// where its bytes take the args' slots (begin_dynamic_batch).
template <std::uint32_t HotThread::*kGate = &HotThread::session, class Stamp = InlineStamp>
JITSCOPE_ALWAYS_INLINE bool begin_span_batch(
    std::uint32_t session, const char* name, std::uint64_t args, SpanToken& token, SpanBatch& batch,
    Stamp stamp = {},
    std::uint64_t begin_word = record_word(RecordKind::kBegin, ValueType::kNone, 0, 0)) noexcept {
  HotThread& h = *t_hot;
  const std::uint64_t d8 = h.depth_x8;  // all recorded when the gate is open
  if constexpr (kGate == &HotThread::session) {
    if (h.begin_gate_at(d8) != session) [[unlikely]]  // the depth limit with it
      return false;
  } else if (h.*kGate != session || d8 >= kMaxRecordedDepthX8) [[unlikely]] {
    return false;
  }
  RingProducer& r = h.producer;
  const std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
  // d8 * 4: the Ends owed, kRecordBytes each.
  if (tail + d8 * 4 + (2 + args) * kRecordBytes > r.room_end) [[unlikely]]
    return false;
  batch = {r.slots, r.mask, tail, &r.tail, d8 * kIndexFromDepthX8};
  const std::uint64_t serial = tail + kRecordBytes;  // the position after the Begin
  // Before the stack's stores, which could alias the ring's fields as far as
  // the compiler knows: the `and` and the `add` read the mask and the
  // storage themselves (2 instructions a span, callgrind).
  Record& rec = batch.at(tail);
  h.serial_at(d8 + 8) = serial;
  h.depth_x8 += 8;
  stamp(rec.ts);
  rec.name = name;
  // A Begin's index is not read: the flusher keeps the depth itself.
  set_record_word(rec, begin_word);
  token = {session, serial};
  return true;
}
// The i-th arg (from 0) after the batch's Begin.
JITSCOPE_ALWAYS_INLINE void put_scalar_arg(const SpanBatch& batch, std::uint64_t i, const char* key,
                                           ValueType type, std::uint64_t bits) noexcept {
  Record& rec = batch.at(batch.tail + (1 + i) * kRecordBytes);
  rec.name = key;
  rec.value.u64 = bits;
  set_record_word(rec, record_word(RecordKind::kArg, type, 0, 0) | batch.index_bits);
}
// A string arg of at most kInlineStringBytes: its bytes in the record's
// `ts` word (kFlagInlineString) and its length as the value, as the
// library's write_arg puts one; no payload slot.
JITSCOPE_ALWAYS_INLINE void put_short_string_arg(const SpanBatch& batch, std::uint64_t i,
                                                 const char* key, std::uint64_t bytes,
                                                 std::uint64_t length) noexcept {
  Record& rec = batch.at(batch.tail + (1 + i) * kRecordBytes);
  rec.ts = bytes;
  rec.name = key;
  rec.value.u64 = length;
  set_record_word(rec, record_word(RecordKind::kArg, ValueType::kString, kFlagInlineString, 0) |
                           batch.index_bits);
}
// The first `n` (at most kInlineStringBytes) bytes at `p` as one word, in
// memory order, with fixed-size loads (a literal's fold to a constant).
JITSCOPE_ALWAYS_INLINE std::uint64_t short_string_bits(const char* p, std::size_t n) noexcept {
  static_assert(kInlineStringBytes == 8 && std::endian::native == std::endian::little);
  if (n >= 4) {
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);  // overlaps `lo` for n < 8: the same bytes
    return std::uint64_t{lo} | std::uint64_t{hi} << (8 * (n - 4));
  }
  std::uint64_t bits = 0;
  for (std::size_t k = 0; k < n; ++k) {
    bits |= std::uint64_t{static_cast<unsigned char>(p[k])} << (8 * k);
  }
  return bits;
}
// short_string_bits of a text known when compiling (a literal).
consteval std::uint64_t text_bits(std::string_view text) noexcept {
  std::uint64_t bits = 0;
  for (std::size_t k = 0; k < text.size() && k < kInlineStringBytes; ++k) {
    bits |= std::uint64_t{static_cast<unsigned char>(text[k])} << (8 * k);
  }
  return bits;
}
// Publishes the Begin and its `args` args together.
JITSCOPE_ALWAYS_INLINE void commit_batch(const SpanBatch& batch, std::uint64_t args) noexcept {
  batch.published->store(batch.tail + (1 + args) * kRecordBytes, std::memory_order_release);
}

// Copies the last `n` (at most kRecordBytes) bytes of a name into its slot
// with fixed-size moves, two overlapping ones a size class: a call to
// memcpy with a variable length took 27 instructions for 24 bytes
// (callgrind). Reads stay within the n bytes; the slot's bytes past them are
// not read.
JITSCOPE_ALWAYS_INLINE void copy_last_slot(char* dst, const char* src, std::size_t n) noexcept {
  if (n >= 16) {
    std::memcpy(dst, src, 16);
    std::memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else if (n != 0) {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

// Copies `len` bytes into the slots from ring position `at`, slot by slot:
// the payload may wrap at the ring's end.
JITSCOPE_ALWAYS_INLINE void put_payload(const SpanBatch& batch, std::uint64_t at, const char* src,
                                        std::size_t len) noexcept {
  for (; len > kRecordBytes; len -= kRecordBytes, src += kRecordBytes, at += kRecordBytes) {
    std::memcpy(static_cast<void*>(&batch.at(at)), src, kRecordBytes);
  }
  copy_last_slot(reinterpret_cast<char*>(&batch.at(at)), src, len);
}

// Dynamic names up to this long take the inline path: their bytes fill the
// slots after the Begin, as the library writes them. Longer ones (and any
// above the ring's payload limit, which is at least 1 KiB) go through the
// library, which clamps and counts them.
inline constexpr std::size_t kInlineNameBytes = 4 * kRecordBytes;
// A span with a dynamic name of up to kInlineNameBytes, in one commit with
// its name. False: nothing written, the caller takes the library's path.
template <std::uint32_t HotThread::*kGate = &HotThread::session, class Stamp = InlineStamp>
JITSCOPE_ALWAYS_INLINE bool begin_dynamic_batch(std::uint32_t session, std::string_view name,
                                                SpanToken& token, Stamp stamp = {}) noexcept {
  const std::size_t len = name.size();
  if (len > kInlineNameBytes) [[unlikely]]
    return false;
  const std::uint64_t slots = (len + kRecordBytes - 1) / kRecordBytes;
  SpanBatch batch;
  if (!begin_span_batch<kGate>(session, nullptr, slots, token, batch, stamp,
                               record_word(RecordKind::kBegin, ValueType::kNone, kFlagDynamicName,
                                           0, static_cast<std::uint32_t>(len)))) [[unlikely]] {
    return false;
  }
  put_payload(batch, batch.tail + kRecordBytes, name.data(), len);
  commit_batch(batch, slots);
  return true;
}

// The slots a string arg of `len` bytes takes after a Begin: its bytes in
// its record up to kInlineStringBytes, in the slots after it beyond (as the
// library's write_arg puts them).
constexpr std::uint64_t string_arg_slots(std::size_t len) noexcept {
  return 1 + (len > kInlineStringBytes ? payload_slots(len) : 0);
}
// A string arg of up to kInlineNameBytes (the caller checks) in the batch,
// `at` slots after its Begin; returns the slots it took (string_arg_slots).
JITSCOPE_ALWAYS_INLINE std::uint64_t put_string_arg(const SpanBatch& batch, std::uint64_t at,
                                                    const char* key,
                                                    std::string_view text) noexcept {
  const std::size_t len = text.size();
  if (len <= kInlineStringBytes) {
    put_short_string_arg(batch, at, key, short_string_bits(text.data(), len), len);
    return 1;
  }
  put_scalar_arg(batch, at, key, ValueType::kString, len);  // the length as its value
  put_payload(batch, batch.tail + (2 + at) * kRecordBytes, text.data(), len);
  return string_arg_slots(len);
}

// A span with a static name: a batch without args.
JITSCOPE_ALWAYS_INLINE SpanToken begin_span(std::uint32_t session, const char* name) noexcept {
  SpanToken token;
  SpanBatch batch;
  if (begin_span_batch(session, name, 0, token, batch)) [[likely]] {
    commit_batch(batch, 0);
    return token;
  }
  return begin_static(session, read_clock(session), name);
}

// Writes the End of the innermost span, whose slot its Begin reserved. The
// depth is updated after the record's stores, which may alias it as far as
// the compiler knows: one read-modify-write then, where a store of the depth
// loaded before took 2 instructions (callgrind; the begin's likewise, after
// the stack's store).
template <class Stamp>
JITSCOPE_ALWAYS_INLINE void end_innermost(HotThread& h, Stamp stamp) noexcept {
  RingProducer& r = h.producer;
  std::uint64_t next;
  Record& rec = r.slot_then(r.tail.load(std::memory_order_relaxed), next);
  stamp(rec.ts);  // only the time and the kind of an End are read
  set_record_word(rec, record_word(RecordKind::kEnd, ValueType::kNone, 0, 0));
  h.depth_x8 -= 8;
  r.tail.store(next, std::memory_order_release);
}

// The end of the innermost span, when `token` is it; its slot was reserved.
// The serial's match is the whole test: serials are positions, which no two
// thread states' rings share (ring_start), and a span whose end needs the
// library carries kLibraryEndBit, which no serial on the stack has. So a
// match means this thread's state, this session, the gate open (a span
// begun inline with a dropped span opened after it is not the innermost),
// and the clock inline_clock().
JITSCOPE_ALWAYS_INLINE void end_span_now(SpanToken token) noexcept {
  HotThread& h = *t_hot;
  const std::uint64_t d8 = h.depth_x8;
  if (h.serial_at(d8) != token.serial_word) [[unlikely]] {  // kNoSerial at depth 0
    end_span_timed(token);
    return;
  }
  end_innermost(h, InlineStamp{});
}
// end_span_now's test and its inline end apart, for a caller that takes
// another path when the test fails (the LLVM adapter's: a host span open
// inside its run). A token that never began (serial 0) is never innermost.
JITSCOPE_ALWAYS_INLINE bool is_innermost(SpanToken token) noexcept {
  const HotThread& h = *t_hot;
  return h.serial_at(h.depth_x8) == token.serial_word;
}
JITSCOPE_ALWAYS_INLINE void end_innermost_now() noexcept { end_innermost(*t_hot, InlineStamp{}); }

// One record with a static name and no End of its own (an instant without
// args, a counter), when the gate is open for `session` and the ring has
// room for it beside the Ends owed (one per open span: all recorded while
// the gate is open). False: nothing written, the caller takes the library's
// path. The value is stored only `kWithValue` (an instant's is not read).
template <bool kWithValue>
JITSCOPE_ALWAYS_INLINE bool put_single(std::uint32_t session, const char* name, std::uint64_t word,
                                       std::uint64_t value) noexcept {
  HotThread& h = *t_hot;
  if (h.session != session) [[unlikely]]
    return false;
  RingProducer& r = h.producer;
  const std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
  if (tail + h.depth_x8 * 4 + kRecordBytes > r.room_end) [[unlikely]]
    return false;
  std::uint64_t next;
  Record& rec = r.slot_then(tail, next);
  stamp_inline_clock(rec.ts);
  rec.name = name;
  if constexpr (kWithValue) rec.value.u64 = value;
  set_record_word(rec, word);
  r.tail.store(next, std::memory_order_release);
  return true;
}

// JITSCOPE_INSTANT with a static name and no args.
JITSCOPE_ALWAYS_INLINE void instant_static(std::uint32_t session, const char* name) noexcept {
  constexpr std::uint64_t kWord = record_word(RecordKind::kInstant, ValueType::kNone, 0, 0);
  if (!put_single<false>(session, name, kWord, 0)) [[unlikely]]
    instant(session, read_clock(session), name, {}, nullptr, 0);
}

// JITSCOPE_COUNTER with a static name.
JITSCOPE_ALWAYS_INLINE void counter_static(std::uint32_t session, const char* name,
                                           double value) noexcept {
  constexpr std::uint64_t kWord = record_word(RecordKind::kCounter, ValueType::kDouble, 0, 0);
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if (!put_single<true>(session, name, kWord, bits)) [[unlikely]]
    counter(session, read_clock(session), name, {}, value);
}

// An integer, floating-point or bool arg (`bits` its value's bits) on the
// open span `token`, when it is the innermost (an arg on an outer span finds
// its span out of line). False: the caller calls add_arg. `serial` is what
// the stack's entry must be: the token's serial_word inline (a span that
// ends through the library takes its args there too), its serial() behind
// the other clock's gate.
template <std::uint32_t HotThread::*kGate = &HotThread::session>
JITSCOPE_ALWAYS_INLINE bool add_scalar_arg(SpanToken token, std::uint64_t serial, const char* key,
                                           ValueType type, std::uint64_t bits) noexcept {
  HotThread& h = *t_hot;
  const std::uint64_t d8 = h.depth_x8;
  if (h.*kGate != token.session() || h.serial_at(d8) != serial) [[unlikely]]
    return false;
  RingProducer& r = h.producer;
  const std::uint64_t tail = r.tail.load(std::memory_order_relaxed);
  // The arg and the open spans' Ends (its own among them).
  if (tail + d8 * 4 + kRecordBytes > r.room_end) [[unlikely]]
    return false;
  std::uint64_t next;
  Record& rec = r.slot_then(tail, next);
  rec.name = key;  // an arg's time is not read
  rec.value.u64 = bits;
  // The gate is open: every open span is recorded, so its depth is its
  // index. A match means d8 is from 8 up to kMaxRecordedDepthX8 (the
  // sentinels at 0 and the parked depth match no token; no span at depth
  // 255 is recorded while the gate is open).
  set_record_word(rec, record_word(RecordKind::kArg, type, 0, 0) | (d8 - 8) * kIndexFromDepthX8);
  r.tail.store(next, std::memory_order_release);
  return true;
}

}  // namespace jitscope::detail
