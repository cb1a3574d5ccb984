// The per-thread state the inline hot path (hot.hpp) reads and writes: the
// producer side of the thread's ring and its open-span bookkeeping. The
// library owns it (ring/thread_registry.hpp's ThreadState holds one); the
// header shows its layout so that a span's common case is inline code with
// no call. Internal: include <jitscope/jitscope.hpp> instead.
#pragma once

#include <jitscope/detail/export.hpp>
#include <jitscope/detail/record.hpp>

#include <atomic>
#include <cstdint>

namespace jitscope::detail {

// The producer's side of a ring (ring/ring.hpp): where the next record goes
// and how far it may write without looking at the consumer's index.
struct RingProducer {
  Record* slots = nullptr;
  std::uint64_t mask = 0;      // slots - 1 (a power of two)
  std::uint64_t room_end = 0;  // the consumer's head as last read + capacity
  // The next slot to write. Only the producer writes it; the consumer
  // acquires it. Read back by the producer (relaxed) rather than kept twice:
  // a store per record less. Beside the producer's fields: the consumer
  // reads it once per drained chunk, so sharing the line costs one miss then.
  std::atomic<std::uint64_t> tail{0};

  // True when `count` more records fit by the cached view (Ring::has_room
  // rereads the consumer's index when this says no).
  bool fits(std::uint64_t count) const noexcept {
    return tail.load(std::memory_order_relaxed) + count <= room_end;
  }
  // The i-th slot past the last committed one; write it, then commit().
  Record& slot(std::uint64_t i) const noexcept {
    return slots[(tail.load(std::memory_order_relaxed) + i) & mask];
  }
  void commit(std::uint64_t count) noexcept {
    // release: the records written into the slots are visible to a consumer
    // that acquires this index.
    tail.store(tail.load(std::memory_order_relaxed) + count, std::memory_order_release);
  }
};

// Deepest recorded nesting; deeper spans are dropped and counted.
inline constexpr std::uint32_t kMaxRecordedDepth = 255;

struct alignas(64) HotThread {
  // The session word the inline path records under; 0 sends every event to
  // the out-of-line path: no session on this thread, NVTX emission on (the
  // library pushes the ranges), spans whose Begin was dropped still open, or
  // a session on a clock other than the inline path's (hot.hpp's
  // inline_clock: on x86, a session on CLOCK_MONOTONIC).
  std::uint32_t session = 0;
  // Logical open spans, recorded or not. 64 bits: an index as it is, with
  // no zero-extension before each use (callgrind).
  std::uint64_t depth = 0;
  RingProducer producer;
  // Begins dropped so far: the serials of spans not recorded (SpanToken).
  std::uint64_t dropped_begins = 0;
  // Serials (SpanToken::serial) of the spans open at each depth < 256.
  std::uint64_t open_serial[256] = {};
};

// The calling thread's HotThread; an idle one (session 0) before the thread
// registers and after it retires, so the inline path never tests for null.
// Initial-exec, as the library's own thread state: one fs-relative load.
extern JITSCOPE_API constinit thread_local HotThread* t_hot [[gnu::tls_model("initial-exec")]];

}  // namespace jitscope::detail
