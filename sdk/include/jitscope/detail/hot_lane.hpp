// The per-thread state the inline hot path (hot.hpp) reads and writes: the
// producer side of the thread's ring and the End slots it keeps reserved. The
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
  std::uint64_t mask = 0;  // slots - 1 (a power of two)
  // How far it may write: the consumer's head as last read + capacity
  // (cap_end), less one slot per End record owed (a recorded span's Begin
  // reserves its End's slot here, and its End gives it back). So
  // cap_end - room_end is the number of Ends owed.
  std::uint64_t room_end = 0;
  std::uint64_t cap_end = 0;
  // The next slot to write. Only the producer writes it; the consumer
  // acquires it. Read back by the producer (relaxed) rather than kept twice:
  // a store per record less. Beside the producer's fields: the consumer
  // reads it once per drained chunk, so sharing the line costs one miss then.
  std::atomic<std::uint64_t> tail{0};

  // True when `count` more records fit, beside the Ends owed, by the cached
  // view (Ring::has_room rereads the consumer's index when this says no).
  bool fits(std::uint64_t count) const noexcept {
    return tail.load(std::memory_order_relaxed) + count <= room_end;
  }
  // End records owed: recorded spans not yet ended.
  std::uint64_t owed() const noexcept { return cap_end - room_end; }
  // A Begin reserves its End's slot; the End gives it back.
  void reserve_end() noexcept { --room_end; }
  void use_reserved_end() noexcept { ++room_end; }
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

struct alignas(64) HotThread {
  // The session word the inline path records under; 0 sends every event to
  // the out-of-line path: no session on this thread, or NVTX emission on
  // (the library pushes the ranges).
  std::uint32_t session = 0;
  RingProducer producer;
};

// The calling thread's HotThread; an idle one (session 0) before the thread
// registers and after it retires, so the inline path never tests for null.
// Initial-exec, as the library's own thread state: one fs-relative load.
extern JITSCOPE_API constinit thread_local HotThread* t_hot [[gnu::tls_model("initial-exec")]];

}  // namespace jitscope::detail
