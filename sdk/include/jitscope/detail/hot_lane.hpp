// The per-thread state the inline hot path (hot.hpp) reads and writes: the
// producer side of the thread's ring and its open-span bookkeeping. The
// library owns it (ring/thread_registry.hpp's ThreadState holds one); the
// header shows its layout so that a span's common case is inline code with
// no call. Internal: include <jitscope/jitscope.hpp> instead.
#pragma once

#include <jitscope/detail/export.hpp>
#include <jitscope/detail/record.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace jitscope::detail {

// The producer's side of a ring (ring/ring.hpp): where the next record goes
// and how far it may write without looking at the consumer's index.
//
// Positions count bytes, kRecordBytes per record, so a slot's address is the
// storage plus (position & mask): no shift by the record's size on each
// record (1 instruction per record, and the add folds into the stores'
// addressing; callgrind). Differences of positions are record counts times
// kRecordBytes.
// The slot at byte position `position` of a ring's storage.
inline Record& slot_at(Record* slots, std::uint64_t mask, std::uint64_t position) noexcept {
  return *reinterpret_cast<Record*>(reinterpret_cast<char*>(slots) + (position & mask));
}

struct RingProducer {
  Record* slots = nullptr;
  std::uint64_t mask = 0;      // (records in the storage - 1) * kRecordBytes
  std::uint64_t room_end = 0;  // the consumer's head as last read + the capacity
  // The next slot's position. Only the producer writes it; the consumer
  // acquires it. Read back by the producer (relaxed) rather than kept twice:
  // a store per record less. Beside the producer's fields: the consumer
  // reads it once per drained chunk, so sharing the line costs one miss then.
  std::atomic<std::uint64_t> tail{0};

  // The slot at `position`.
  Record& at(std::uint64_t position) const noexcept { return slot_at(slots, mask, position); }
  // True when `count` more records fit by the cached view (Ring::has_room
  // rereads the consumer's index when this says no).
  bool fits(std::uint64_t count) const noexcept {
    return tail.load(std::memory_order_relaxed) + count * kRecordBytes <= room_end;
  }
  // The i-th slot past the last committed one; write it, then commit().
  Record& slot(std::uint64_t i) const noexcept {
    return at(tail.load(std::memory_order_relaxed) + i * kRecordBytes);
  }
  // The slot at `tail` (the tail as loaded) for one record, and in `next`
  // the position to publish after it. `next` is made first, in a register of
  // its own, so the slot's address is the tail masked and offset in place,
  // the mask and the storage read by the `and` and the `add` themselves;
  // left to itself GCC keeps the tail for the add after the stores and
  // copies it for the `and` (1 instruction a record, callgrind).
  Record& slot_then(std::uint64_t tail, std::uint64_t& next) const noexcept {
    next = tail + kRecordBytes;
#if defined(__GNUC__)
    asm("" : "+r"(next));  // emits nothing: only pins `next` here
#endif
    return at(tail);
  }
  void commit(std::uint64_t count) noexcept {
    // release: the records written into the slots are visible to a consumer
    // that acquires this index.
    tail.store(tail.load(std::memory_order_relaxed) + count * kRecordBytes,
               std::memory_order_release);
  }
};

// Deepest recorded nesting; deeper spans are dropped and counted.
inline constexpr std::uint32_t kMaxRecordedDepth = 255;

// The open-span stack (HotThread::open_serial): the serial of the span open
// at depth d is entry d + 1; entry 0 (nothing open) and entry 257 (spans
// open past depth 256, which are never tracked) hold kNoSerial, a value no
// token has (serials are multiples of kRecordBytes; other tokens carry
// SpanToken's flag bits, or are 0). So an inline end compares the entry at
// the thread's depth with its token and needs no test of the depth first.
inline constexpr std::uint64_t kNoSerial = 1;
inline constexpr std::size_t kOpenSerials = 258;
inline constexpr std::uint64_t kParkedDepth = kOpenSerials - 1;
static_assert(kMaxRecordedDepth < kParkedDepth, "HotThread::begin_gate's closed entries");
constexpr std::array<std::uint64_t, kOpenSerials> empty_open_serials() noexcept {
  std::array<std::uint64_t, kOpenSerials> stack{};
  stack.front() = kNoSerial;
  stack.back() = kNoSerial;
  return stack;
}

struct alignas(64) HotThread {
  // The session word the inline path records under; 0 sends every event to
  // the out-of-line path: no session on this thread, NVTX emission on (the
  // library pushes the ranges), spans whose Begin was dropped still open, or
  // a session on a clock other than the inline path's (hot.hpp's
  // inline_clock: on x86, a session on CLOCK_MONOTONIC). Written only by
  // open_gate, with begin_gate.
  std::uint32_t session = 0;
  // The session word while the inline path's gate would be open but the
  // session's clock is another (CLOCK_MONOTONIC on x86); else 0. Behind it
  // the library does the inline path's work with the time it read
  // (producer.cpp's lean paths), not its own general one.
  std::uint32_t other_clock_session = 0;
  // Open spans, recorded or not, up to 256 (kParkedDepth while more are
  // open: the library keeps their count, ThreadState::depth()), times 8:
  // the byte offset of the innermost's open_serial entry, and a quarter of
  // the ring room their Ends take, so that both are one addressing mode away
  // (callgrind).
  std::uint64_t depth_x8 = 0;
  RingProducer producer;
  // Begins dropped so far: the serials of spans not recorded (SpanToken).
  std::uint64_t dropped_begins = 0;
  // Serials (SpanToken::serial) of the open spans, see kNoSerial.
  std::array<std::uint64_t, kOpenSerials> open_serial = empty_open_serials();
  // The inline begin's gate by depth (a depth_x8 is its entry's byte
  // offset): `session` below gate_depths (at most kMaxRecordedDepth, the
  // depth limit), 0 from it on (the parked depth too). One compare is then both the gate and the
  // depth limit, where a test of each took 4 instructions a span (callgrind). Entries of 8 bytes,
  // each read as the 32-bit session word it holds (a 64-bit compare made GCC widen the session
  // word: 2 instructions more).
  struct DepthGate {
    std::uint32_t session = 0;
    std::uint32_t unused = 0;
  };
  std::array<DepthGate, kOpenSerials> begin_gate{};
  // Only the depths the thread has used hold `session`: entries from
  // gate_depths on hold 0, so a span begun there goes to the library once,
  // which widens the gate (widen_gate). A dropped span closes the gate and
  // its end reopens it, and each rewrote all 255 entries (about 1,000
  // instructions) when the gate was filled whole.
  static constexpr std::uint32_t kGateDepthsStep = 16;
  std::uint32_t gate_depths = kGateDepthsStep;

  // Opens the inline path for `word` (0 closes it).
  void open_gate(std::uint32_t word) noexcept {
    if (word == session) return;
    session = word;
    for (std::uint32_t d = 0; d < gate_depths; ++d) begin_gate[d].session = word;
  }
  // Opens the gate's entries up to past `depth` (a depth, not a depth_x8),
  // when it is open: the library's begin, so that the next spans there go
  // inline.
  void widen_gate(std::uint64_t depth) noexcept {
    if (depth < gate_depths || session == 0) return;
    const std::uint64_t to = depth < kMaxRecordedDepth - kGateDepthsStep
                                 ? depth + kGateDepthsStep
                                 : std::uint64_t{kMaxRecordedDepth};
    for (std::uint64_t d = gate_depths; d < to; ++d) begin_gate[d].session = session;
    gate_depths = static_cast<std::uint32_t>(to);
  }
  // The inline begin's gate at `depth_x8`: a session word, 0 when closed.
  std::uint32_t begin_gate_at(std::uint64_t depth_x8) const noexcept {
    return reinterpret_cast<const DepthGate*>(reinterpret_cast<const char*>(begin_gate.data()) +
                                              depth_x8)
        ->session;
  }

  // The entry of the span open at `depth`.
  std::uint64_t& serial_of(std::uint64_t depth) noexcept { return open_serial[depth + 1]; }
  std::uint64_t serial_of(std::uint64_t depth) const noexcept { return open_serial[depth + 1]; }
  // The entry `offset_x8` bytes into the stack (a depth_x8: the innermost's).
  std::uint64_t serial_at(std::uint64_t offset_x8) const noexcept {
    return *reinterpret_cast<const std::uint64_t*>(
        reinterpret_cast<const char*>(open_serial.data()) + offset_x8);
  }
  std::uint64_t& serial_at(std::uint64_t offset_x8) noexcept {
    return *reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(open_serial.data()) +
                                             offset_x8);
  }
};

// The calling thread's HotThread; an idle one (session 0) before the thread
// registers and after it retires, so the inline path never tests for null.
// Initial-exec, as the library's own thread state: one fs-relative load.
extern JITSCOPE_API constinit thread_local HotThread* t_hot [[gnu::tls_model("initial-exec")]];

}  // namespace jitscope::detail
